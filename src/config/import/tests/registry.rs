//! Tests of the MCP Registry `server.json` import on the registry's own
//! documentation samples (see `super` for the helpers).

use serde_json::json;

use super::*;

// https://github.com/modelcontextprotocol/registry/blob/main/docs/reference/server-json/generic-server-json.md
#[test]
fn registry_packages_become_launch_commands_with_inputs() {
    let imported = import(ImportFormat::Registry, "registry-brave-search.json");
    let config = json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search@1.0.2"],
        "env": {"BRAVE_API_KEY": "${input:BRAVE_API_KEY}"}});
    assert_eq!(configs(&imported), [("brave-search".to_owned(), config)]);
    let fields: Vec<Option<&str>> = imported
        .diagnostics
        .iter()
        .map(|d| d.field.as_deref())
        .collect();
    assert_eq!(fields, [Some("registryBaseUrl")], "named, not dropped");
    let v = &imported.variables[0];
    assert_eq!(
        (v.secret, v.required, v.description.as_deref()),
        (true, true, Some("Brave Search API Key"))
    );
    let imported = import(ImportFormat::Registry, "registry-weather.json");
    assert_eq!(imported.servers[0].config["command"], "uvx");
    assert_eq!(
        imported.servers[0].config["args"],
        json!(["weather-mcp-server==0.5.0"])
    );
    let units = imported
        .variables
        .iter()
        .find(|v| v.name == "WEATHER_UNITS")
        .unwrap();
    assert_eq!(
        (units.required, units.default.as_deref()),
        (false, Some("celsius"))
    );
}

#[test]
fn registry_oci_and_remotes() {
    let imported = import(ImportFormat::Registry, "registry-filesystem.json");
    let names: Vec<&str> = imported.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["filesystem-npm", "filesystem-oci"]);
    assert_eq!(
        imported.servers[0].config["args"],
        json!([
            "-y",
            "@modelcontextprotocol/server-filesystem@1.0.2",
            "${input:target_dir}"
        ])
    );
    let oci = &imported.servers[1].config;
    assert_eq!(oci["command"], "docker");
    assert_eq!(
        oci["args"],
        json!([
            "run",
            "-i",
            "--rm",
            "--mount",
            "type=bind,src=${input:source_path},dst=${input:target_path}",
            "-e",
            "LOG_LEVEL",
            "docker.io/mcp/filesystem:1.0.2",
            "/project"
        ])
    );
    let imported = import(ImportFormat::Registry, "registry-hybrid.json");
    let names: Vec<&str> = imported.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["hybrid-mcp-npm", "hybrid-mcp-remote", "hybrid-mcp-remote-2"]
    );
    assert_eq!(
        imported.servers[0].config["args"],
        json!([
            "-y",
            "@example/hybrid-mcp-server@1.5.0",
            "--mode",
            "${input:mode}"
        ])
    );
    let remote = &imported.servers[1].config;
    assert_eq!(
        remote["headers"],
        json!({"X-API-Key": "${input:X-API-Key}", "X-Region": "${input:X-Region}"})
    );
    assert_eq!(
        imported.servers[2].config,
        json!({"type": "sse", "url": "https://mcp.anonymous.modelcontextprotocol.io/sse"})
    );
    let key = imported
        .variables
        .iter()
        .find(|v| v.name == "X-API-Key")
        .unwrap();
    assert!(key.secret && key.required);
    assert_eq!(
        diagnostics(&imported),
        [
            (
                "not_supported",
                Severity::Warning,
                Some("hybrid-mcp-npm"),
                Some("registryBaseUrl")
            ),
            (
                "invalid_entry",
                Severity::Warning,
                Some("hybrid-mcp-remote-2"),
                Some("remotes[1]")
            ),
        ]
    );
}

// https://github.com/modelcontextprotocol/registry/blob/main/docs/reference/server-json/generic-server-json.md
// ("Constant (fixed) arguments needed to start the MCP server"): `dnx
// Knapcode.SampleMcpServer@0.4.0-beta -- mcp start`, as the page says.
#[test]
fn registry_nuget_fixed_arguments_follow_a_double_dash() {
    let text = r#"{
      "$schema": "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
      "name": "io.github.joelverhagen/knapcode-samplemcpserver",
      "description": "Sample NuGet MCP server for a random number and random weather",
      "version": "0.4.0-beta",
      "packages": [
        {
          "registryType": "nuget",
          "registryBaseUrl": "https://api.nuget.org",
          "identifier": "Knapcode.SampleMcpServer",
          "version": "0.4.0-beta",
          "transport": {
            "type": "stdio"
          },
          "packageArguments": [
            {
              "type": "positional",
              "value": "mcp"
            },
            {
              "type": "positional",
              "value": "start"
            }
          ]
        }
      ]
    }"#;
    let imported = import_config(ImportFormat::Registry, text, "server.json");
    let config = json!({"type": "stdio", "command": "dnx",
        "args": ["Knapcode.SampleMcpServer@0.4.0-beta", "--", "mcp", "start"]});
    assert_eq!(
        configs(&imported),
        [("knapcode-samplemcpserver".to_owned(), config)]
    );
}

#[test]
fn a_package_identifier_that_reads_as_an_option_costs_only_its_entry() {
    let text = r#"{
      "name": "io.example/injected",
      "version": "1.0.0",
      "packages": [
        {"registryType": "npm", "identifier": "--registry=https://evil.example", "version": "1.0.0", "transport": {"type": "stdio"}},
        {"registryType": "pypi", "identifier": "safe-server", "version": "2.0.0", "transport": {"type": "stdio"}}
      ]
    }"#;
    let imported = import_config(ImportFormat::Registry, text, "server.json");
    let commands: Vec<Value> = imported
        .servers
        .iter()
        .map(|s| s.config["command"].clone())
        .collect();
    assert_eq!(commands, [json!("uvx")], "the npm entry is left out");
    let d = &imported.diagnostics[0];
    assert_eq!(
        (d.code.as_str(), d.field.as_deref()),
        ("invalid_entry", Some("packages[0].identifier"))
    );
    assert!(
        d.message.contains("not starting with \"-\""),
        "{}",
        d.message
    );
    assert!(
        !d.message.contains("evil"),
        "the value is not echoed: {}",
        d.message
    );
}

fn registry(value: &serde_json::Value) -> Imported {
    import_config(ImportFormat::Registry, &value.to_string(), "server.json")
}

fn rows(imported: &Imported) -> Vec<(&'static str, Severity, Option<&str>)> {
    imported
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.severity, d.field.as_deref()))
        .collect()
}

#[test]
fn registry_runtime_hints_and_docker_options_are_checked() {
    let npm = |extra: serde_json::Value| {
        let mut p = json!({"registryType": "npm", "identifier": "srv", "version": "1.0.0"});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        registry(&json!({"name": "io.x/srv", "packages": [p]}))
    };
    let imported = npm(json!({"runtimeHint": "curl-evil-sh"}));
    assert!(imported.servers.is_empty());
    let field = Some("packages[0].runtimeHint");
    assert_eq!(rows(&imported), [("invalid_entry", Severity::Error, field)]);
    assert!(!imported.diagnostics[0].message.contains("curl-evil"));
    let oci = |args: serde_json::Value| {
        let p = json!({"registryType": "oci", "identifier": "img", "runtimeArguments": args});
        registry(&json!({"name": "io.x/srv", "packages": [p]}))
    };
    let imported = oci(json!([{"type": "positional", "value": "--privileged"}]));
    let field = Some("packages[0].runtimeArguments");
    assert_eq!(rows(&imported), [("invalid_entry", Severity::Error, field)]);
    let imported = oci(json!([{"type": "named", "name": "--network", "value": "host"}]));
    assert_eq!(rows(&imported), [("invalid_entry", Severity::Error, field)]);
    let imported = oci(json!([{"type": "named", "name": "--memory", "value": "1g"}]));
    assert_eq!(imported.servers.len(), 1, "{:?}", imported.diagnostics);
}

#[test]
fn registry_wrong_types_are_named() {
    let imported =
        registry(&json!({"name": "a/b", "packages": {"registryType": "npm"}, "remotes": "x"}));
    assert_eq!(
        rows(&imported),
        [
            ("invalid_entry", Severity::Error, Some("packages")),
            ("invalid_entry", Severity::Error, Some("remotes"))
        ]
    );
    let p = json!({"registryType": "npm", "identifier": "srv", "transport": "stdio"});
    let imported = registry(&json!({"name": "a/b", "packages": [p]}));
    let field = Some("packages[0].transport");
    assert_eq!(rows(&imported), [("invalid_entry", Severity::Error, field)]);
    let r = json!({"type": "streamable-http", "url": "https://x.example/mcp", "transport": 1});
    let imported = registry(&json!({"name": "a/b", "remotes": [r, 7]}));
    let fields: Vec<_> = rows(&imported).into_iter().map(|r| r.2).collect();
    assert_eq!(fields, [Some("transport"), Some("remotes[1]")]);
}

#[test]
fn registry_unmatched_references_and_names() {
    let r = json!({"type": "streamable-http", "url": "https://x.example/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer {token}"}]});
    let imported = registry(&json!({"name": "io.x/my server!", "remotes": [r.clone(), r]}));
    let names: Vec<&str> = imported.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["my-server-remote", "my-server-remote-2"]);
    let fields: Vec<_> = rows(&imported).into_iter().map(|r| (r.1, r.2)).collect();
    assert_eq!(
        fields,
        [
            (Severity::Warning, Some("name")),
            (Severity::Warning, Some("remotes[0].headers[0].value")),
            (Severity::Warning, Some("remotes[1].headers[0].value")),
            (Severity::Warning, Some("remotes[1]")),
        ]
    );
    assert_eq!(
        imported.servers[0].config["headers"]["Authorization"],
        "Bearer {token}"
    );
}
