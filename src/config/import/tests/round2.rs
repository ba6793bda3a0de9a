//! Tests of the red team's second round on the import (issue 30): a
//! registry `docker` entry checked again once resolved and with the
//! defaults its file gives, the resolved size bound, secrets kept out of a
//! URL's host.

use serde_json::json;

use super::*;

fn oci(runtime_arguments: Value) -> Imported {
    let p = json!({"registryType": "oci", "identifier": "img:1", "transport": {"type": "stdio"},
        "runtimeArguments": runtime_arguments});
    let text = json!({"name": "io.x/srv", "packages": [p]}).to_string();
    import_config(ImportFormat::Registry, &text, "server.json")
}

#[test]
fn docker_defaults_written_in_the_file_are_checked_at_import() {
    for args in [
        json!([{"type": "positional", "valueHint": "flags", "default": "--privileged"}]),
        json!([{"type": "named", "name": "-v", "default": "/:/host"}]),
        json!([{"type": "positional", "value": "-v"},
            {"type": "positional", "value": "{d}:/h", "variables": {"d": {"default": "/"}}}]),
        json!([{"type": "named", "name": "--mount", "value": "type=bind,src={p},dst=/h",
            "variables": {"p": {"default": "/"}}}]),
        json!([{"type": "named", "name": "--mount", "value": "type=bind,SOURCE=/etc,dst=/e"}]),
        json!([{"type": "named", "name": "--network", "value": "name=host"}]),
    ] {
        let imported = oci(args.clone());
        assert!(imported.servers.is_empty(), "{args}");
        let field = Some("packages[0].runtimeArguments");
        assert_eq!(errors(&imported).len(), 1, "{args}");
        assert_eq!(errors(&imported)[0].0, field, "{args}");
    }
    // An input without a default is still the user's to give.
    let imported = oci(
        json!([{"type": "named", "name": "-v", "value": "{dir}:/project",
        "variables": {"dir": {"description": "the folder"}}}]),
    );
    assert_eq!(imported.servers.len(), 1, "{:?}", imported.diagnostics);
    assert_eq!(imported.servers[0].docker_options, Some(5));
}

#[test]
fn a_resolved_docker_entry_is_checked_again() {
    let imported = oci(json!([
        {"type": "named", "name": "-v", "value": "{dir}:/project", "variables": {"dir": {}}},
        {"type": "positional", "valueHint": "flags"}
    ]));
    let server = &imported.servers[0];
    let args = |flags: &str| values(&[("input:dir", "/home/me/p"), ("input:flags", flags)]);
    let resolved = resolve_server(server, &args("--read-only"), &[]).unwrap();
    assert_eq!(
        resolved.config["args"],
        json!([
            "run",
            "-i",
            "--rm",
            "-v",
            "/home/me/p:/project",
            "--read-only",
            "img:1"
        ])
    );
    for bad in [
        "--privileged",
        "--network=host",
        "-v/:/host",
        "--mount=type=bind,Source=/,dst=/h",
    ] {
        let err = resolve_server(server, &args(bad), &[]).unwrap_err();
        assert!(
            err.starts_with("server \"srv\": field \"args\": docker option"),
            "{err}"
        );
        assert!(!err.contains("/:/") && !err.contains("Source"), "{err}");
    }
    // Past the image, the container's own arguments are not docker's.
    let p = json!({"registryType": "oci", "identifier": "img", "packageArguments":
        [{"type": "positional", "valueHint": "a"}]});
    let text = json!({"name": "io.x/s", "packages": [p]}).to_string();
    let imported = import_config(ImportFormat::Registry, &text, "f");
    let resolved = resolve_server(&imported.servers[0], &values(&[("input:a", "-v/:/x")]), &[]);
    assert!(resolved.is_ok(), "{resolved:?}");
}

#[test]
fn the_resolved_entry_is_bounded() {
    let refs = vec!["${A}${A}${A}${A}${A}${A}${A}${A}"; 1000];
    let text = json!({"mcpServers": {"a": {"command": "node", "args": refs}}}).to_string();
    let imported = import_config(ImportFormat::ClaudeCode, &text, "f");
    let server = &imported.servers[0];
    let entry = |s| entry_of(s);
    let long = "p".repeat(1000);
    let vals = values(&[("env:A", &long)]);
    let err = resolve_entry(entry(server), &vals, &[], 1_000_000).unwrap_err();
    assert!(
        err.contains("more text than limits.maxConfigFileBytes"),
        "{err}"
    );
    // The bytes left (what earlier servers' values took) are not told.
    let other = resolve_entry(entry(server), &vals, &[], 999_321).unwrap_err();
    assert_eq!(err, other);
    assert!(
        !err.contains("1000000") && !other.contains("999321"),
        "{err}"
    );
    let resolved = resolve_entry(entry(server), &vals, &[], 9_000_000).unwrap();
    assert_eq!(resolved.bytes, 8_000_000 + "node".len() + "stdio".len());
}

#[test]
fn a_secret_variable_in_the_url_host_is_refused() {
    let inputs = json!([{"type": "promptString", "id": "tok", "password": true}]);
    let resolve = |url: &str| {
        let text = json!({"inputs": inputs, "servers": {"r": {"type": "http", "url": url}}});
        let imported = import_config(ImportFormat::VsCode, &text.to_string(), "f");
        let secret = ["input:tok".to_owned()];
        resolve_server(
            &imported.servers[0],
            &values(&[("input:tok", "HostSecretABC")]),
            &secret,
        )
    };
    for url in [
        "https://${input:tok}.invalid/mcp",
        "https://h.invalid:${input:tok}/mcp",
        "${input:tok}://h.invalid/mcp",
        "https://a${input:tok}",
    ] {
        let err = resolve(url).unwrap_err();
        assert!(
            err.contains("field \"url\": secret variable ${input:tok}"),
            "{err}"
        );
        assert!(!err.contains("HostSecretABC"), "{err}");
    }
    let ok = resolve("https://h.invalid/mcp/${input:tok}?k=${input:tok}").unwrap();
    assert_eq!(ok.secrets, ["HostSecretABC"]);
}

fn entry_of(s: &ImportedServer) -> ImportedEntry<'_> {
    ImportedEntry {
        name: &s.name,
        config: &s.config,
        variables: &s.variables,
        docker_options: None,
    }
}

#[test]
fn a_variable_put_into_a_stdio_env_value_is_secret_wherever_else_it_goes() {
    let secret_ids = |imported: &Imported| -> Vec<String> {
        let vars = imported.variables.iter().filter(|v| v.secret);
        vars.map(|v| v.id.clone()).collect()
    };
    let text = json!({"mcpServers": {"a": {"command": "n", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "b": {"command": "n", "args": ["--token", "${GITHUB_TOKEN}"]}}});
    let imported = import_config(ImportFormat::ClaudeCode, &text.to_string(), "f");
    let secret = secret_ids(&imported);
    assert_eq!(secret, ["env:GITHUB_TOKEN"]);
    let vals = values(&[("env:GITHUB_TOKEN", "ghp_realtoken123")]);
    let b = resolve_server(&imported.servers[1], &vals, &secret).unwrap();
    assert_eq!(
        b.secrets,
        ["ghp_realtoken123"],
        "its value in args is kept secret"
    );
    let text = json!({"servers": {"v": {"command": "n", "env": {"T": "${env:T}"}}}});
    let imported = import_config(ImportFormat::VsCode, &text.to_string(), "f");
    assert_eq!(secret_ids(&imported), ["env:T"]);
    let p = json!({"registryType": "npm", "identifier": "p",
        "environmentVariables": [{"name": "TOKEN", "description": "t"}]});
    let text = json!({"name": "io.x/r", "packages": [p]}).to_string();
    let imported = import_config(ImportFormat::Registry, &text, "f");
    assert_eq!(secret_ids(&imported), ["input:TOKEN"]);
}

#[test]
fn unusable_server_names_and_long_texts_are_refused_without_being_echoed() {
    let long = "x".repeat(300);
    let mut servers = serde_json::Map::new();
    for name in [
        "ok",
        ".",
        "..",
        "a\u{0}b",
        "a\u{202e}b",
        "a\u{7}b",
        long.as_str(),
    ] {
        servers.insert(name.to_owned(), json!({"command": "n"}));
    }
    let text = json!({ "servers": servers }).to_string();
    let imported = import_config(ImportFormat::VsCode, &text, "f");
    let names: Vec<&str> = imported.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    assert_eq!(errors(&imported).len(), 6, "{:?}", imported.diagnostics);
    for d in &imported.diagnostics {
        assert!(d.message.starts_with("the server name "), "{}", d.message);
        assert_eq!(d.server, None);
        assert!(!d.message.contains("xxx") && !d.message.contains('\u{202e}'));
    }
    // A type the file gives is echoed cut.
    let p = json!({"registryType": "z".repeat(500), "identifier": "p"});
    let text = json!({"name": "io.x/r", "packages": [p]}).to_string();
    let imported = import_config(ImportFormat::Registry, &text, "f");
    let message = &imported.diagnostics[0].message;
    assert!(
        message.contains(&format!("\"{}\"…", "z".repeat(64))),
        "{message}"
    );
    assert!(!message.contains(&"z".repeat(65)), "{message}");
}

#[test]
fn registry_inputs_of_the_wrong_type_are_named_and_secret_stays_secret() {
    let npm = |args: Value| {
        let p = json!({"registryType": "npm", "identifier": "p", "packageArguments": args});
        let text = json!({"name": "io.x/r", "packages": [p]}).to_string();
        import_config(ImportFormat::Registry, &text, "f")
    };
    let warnings = |imported: &Imported| -> Vec<String> {
        let all = imported.diagnostics.iter();
        let all = all.filter(|d| d.severity == Severity::Warning);
        let why = |m: &str| m.rsplit("\": ").next().unwrap_or("").to_owned();
        all.map(|d| format!("{}: {}", d.field.as_deref().unwrap_or(""), why(&d.message)))
            .collect()
    };
    let imported = npm(json!([
        {"type": "positional", "valueHint": "tok", "isSecret": "true"},
        {"type": "positional", "valueHint": "n", "isSecret": 1, "default": 5, "choices": "a,b"},
        {"type": "named", "name": "--tok", "isRequired": "true", "bogus": 1},
    ]));
    let secret: Vec<(&str, bool)> = imported
        .variables
        .iter()
        .map(|v| (v.id.as_str(), v.secret))
        .collect();
    assert_eq!(
        secret,
        [("input:tok", true), ("input:n", true), ("input:tok", true)][..2]
    );
    assert_eq!(
        imported.servers[0].config["args"],
        json!([
            "-y",
            "p",
            "${input:tok}",
            "${input:n}",
            "--tok",
            "${input:tok}"
        ])
    );
    let p = "packages[0].packageArguments";
    assert_eq!(
        warnings(&imported),
        [
            format!("{p}[0].isSecret: must be a boolean: taken as true"),
            format!("{p}[1].isSecret: must be a boolean: taken as true"),
            format!("{p}[1].default: must be a string: ignored"),
            format!("{p}[1].choices: must be an array of strings: ignored"),
            format!("{p}[2].isRequired: must be a boolean: taken as true"),
            format!("{p}[2].bogus: is not a field of an input: ignored"),
        ]
    );
    for bad in [json!("nmed"), json!(7)] {
        let imported = npm(json!([{"type": bad, "name": "--x", "value": "y"}]));
        assert!(imported.servers.is_empty());
        assert_eq!(
            errors(&imported)[0].0,
            Some("packages[0].packageArguments[0].type")
        );
    }
    // A name that would end the placeholder, or give it a default.
    for hint in ["a}b", "a:-b", "${x}"] {
        let imported = npm(json!([{"type": "positional", "valueHint": hint}]));
        assert!(imported.servers.is_empty(), "{hint}");
        let (field, message) = errors(&imported)[0];
        assert_eq!(field, Some("packages[0].packageArguments[0]"));
        assert!(!message.contains(hint), "{message}");
    }
    let imported = npm(json!([{"type": "positional", "value": "{a:-b}",
        "variables": {"a:-b": {"default": "x"}}}]));
    assert!(imported.servers.is_empty());
}
