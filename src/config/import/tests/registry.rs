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
    assert_eq!(names, ["hybrid-mcp-npm", "hybrid-mcp-remote"]);
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
                Severity::Error,
                Some("hybrid-mcp-remote"),
                Some("remotes[1].type")
            )
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
