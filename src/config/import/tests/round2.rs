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

/// The error diagnostics' fields and messages.
fn errors(imported: &Imported) -> Vec<(Option<&str>, &str)> {
    let errors = imported.diagnostics.iter();
    let errors = errors.filter(|d| d.severity == Severity::Error);
    errors
        .map(|d| (d.field.as_deref(), d.message.as_str()))
        .collect()
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
    assert!(err.contains("more than 1000000 bytes"), "{err}");
    assert!(err.contains("limits.maxConfigFileBytes"), "{err}");
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
