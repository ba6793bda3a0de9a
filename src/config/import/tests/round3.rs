//! Tests of the red team's third round on the import (issue 30): `docker`
//! only for `oci` packages whose identifier is an image reference, the
//! URL's host found as the `url` crate reads it, Windows host paths and
//! publisher-written choices in docker options, cut and escaped echoed
//! keys, a size bound message without earlier values' lengths.

use serde_json::json;

use super::*;

fn package(p: Value) -> Imported {
    let text = json!({"name": "io.x/srv", "packages": [p]}).to_string();
    import_config(ImportFormat::Registry, &text, "server.json")
}

#[test]
fn docker_runs_only_oci_packages() {
    let args = json!([{"type": "positional", "value": "--privileged"},
        {"type": "named", "name": "-v", "value": "/:/host"},
        {"type": "positional", "value": "alpine"}]);
    for registry in ["npm", "pypi", "nuget"] {
        let imported = package(json!({"registryType": registry, "runtimeHint": "docker",
            "identifier": "run", "transport": {"type": "stdio"}, "packageArguments": args}));
        assert!(imported.servers.is_empty(), "{registry}");
        let errors = errors(&imported);
        assert_eq!(errors.len(), 1, "{registry}: {errors:?}");
        assert_eq!(errors[0].0, Some("packages[0].runtimeHint"), "{registry}");
    }
    // The same hint for an oci package is its default runtime.
    let imported = package(json!({"registryType": "oci", "runtimeHint": "docker",
        "identifier": "ghcr.io/x/img:1.0@sha256:abc"}));
    assert_eq!(imported.servers.len(), 1, "{:?}", imported.diagnostics);
    let args = &imported.servers[0].config["args"];
    assert_eq!(
        args,
        &json!(["run", "-i", "--rm", "ghcr.io/x/img:1.0@sha256:abc"])
    );
}

#[test]
fn an_oci_identifier_must_be_an_image_reference() {
    for bad in [
        "-H",
        "--privileged",
        "run --privileged",
        "Img",
        "img\t",
        ".img",
        "img//x",
        "img:",
        "a@b@c",
        "${input:x}",
        "{x}",
        "img\u{a0}",
    ] {
        let imported = package(json!({"registryType": "oci", "identifier": bad}));
        assert!(imported.servers.is_empty(), "{bad:?}");
        let errors = errors(&imported);
        assert_eq!(errors.len(), 1, "{bad:?}: {errors:?}");
        assert_eq!(errors[0].0, Some("packages[0].identifier"), "{bad:?}");
    }
    let long = "a".repeat(256);
    assert!(!crate::config::import::registry::image_reference(&long));
    for good in [
        "alpine",
        "docker.io/library/alpine:3.20",
        "localhost:5000/a_b-c.d/e:v1",
    ] {
        assert!(
            crate::config::import::registry::image_reference(good),
            "{good}"
        );
    }
}

#[test]
fn a_secret_variable_is_found_in_the_host_the_url_crate_reads() {
    let inputs = json!([{"type": "promptString", "id": "tok", "password": true}]);
    let resolve = |url: &str, host: &str| {
        let text = json!({"inputs": inputs, "servers": {"r": {"type": "http", "url": url}}});
        let imported = import_config(ImportFormat::VsCode, &text.to_string(), "f");
        let secret = ["input:tok".to_owned()];
        let vals = values(&[("input:tok", "HostSecretABC"), ("env:H", host)]);
        resolve_server(&imported.servers[0], &vals, &secret)
    };
    for url in [
        "https:/${input:tok}.x/mcp",
        "https:///${input:tok}.x/mcp",
        "https:/\\${input:tok}.x/mcp",
        "https:${input:tok}.x/mcp",
        "HTTPS://${input:tok}.x/mcp",
        "https://u:${input:tok}@h.x/mcp",
        "https://${input:tok}@h.x/mcp",
        "https://h.x:${input:tok}/mcp",
        "${input:tok}",
        "https://[${input:tok}]/mcp",
        "foo:${input:tok}",
        "https:${env:H}${input:tok}.x/mcp",
    ] {
        let err = resolve(url, "//").unwrap_err();
        assert!(
            err.contains("field \"url\": secret variable ${input:tok}"),
            "{url}: {err}"
        );
        assert!(!err.contains("HostSecretABC"), "{err}");
    }
    for url in [
        "https://h.x/mcp/${input:tok}?k=${input:tok}#${input:tok}",
        "https://h.x\\${input:tok}",
        "https://${env:H}/${input:tok}",
    ] {
        let ok = resolve(url, "h.x").unwrap();
        assert_eq!(ok.secrets, ["HostSecretABC"], "{url}");
    }
}

#[test]
fn docker_choices_written_in_the_file_are_checked_at_import() {
    let oci = |args: Value| {
        package(json!({"registryType": "oci", "identifier": "img", "runtimeArguments": args}))
    };
    for args in [
        json!([{"type": "positional", "value": "-v"},
            {"type": "positional", "valueHint": "dir", "choices": ["cache:/c", "/:/host"]}]),
        json!([{"type": "named", "name": "-v", "value": "{d}",
            "variables": {"d": {"choices": ["/:/host"]}}}]),
        json!([{"type": "positional", "valueHint": "flags", "choices": ["--read-only", "--privileged"]}]),
    ] {
        let imported = oci(args.clone());
        assert!(imported.servers.is_empty(), "{args}");
        let errors = errors(&imported);
        assert_eq!(errors.len(), 1, "{args}: {errors:?}");
        assert_eq!(errors[0].0, Some("packages[0].runtimeArguments"), "{args}");
    }
    let imported = oci(json!([{"type": "named", "name": "-v", "value": "{d}:/data",
        "variables": {"d": {"choices": ["cache", "other"]}}}]));
    assert_eq!(imported.servers.len(), 1, "{:?}", imported.diagnostics);
}

#[test]
fn echoed_keys_are_cut_and_escaped_in_every_format() {
    let key = format!("x\u{1b}[2J\u{202e}evil\n{}TAIL", "k".repeat(100));
    let files = [
        (
            ImportFormat::VsCode,
            json!({"servers": {"s": {"command": "x", &key: 1}}}),
        ),
        (
            ImportFormat::ClaudeCode,
            json!({"mcpServers": {"s": {"command": "x", &key: 1}}}),
        ),
        (
            ImportFormat::ClaudeDesktop,
            json!({"mcpServers": {"s": {"command": "x", &key: 1}}}),
        ),
        (
            ImportFormat::Cursor,
            json!({"mcpServers": {"s": {"command": "x", &key: 1}}}),
        ),
        (ImportFormat::Registry, json!({"name": "io.x/s", &key: 1})),
    ];
    let mut texts: Vec<(ImportFormat, String)> =
        files.into_iter().map(|(f, v)| (f, v.to_string())).collect();
    let toml_key = key.replace('\u{1b}', "\\u001b").replace('\n', "\\n");
    let toml = format!("[mcp_servers.s]\ncommand = \"x\"\n\"{toml_key}\" = 1\n");
    texts.push((ImportFormat::Codex, toml));
    for (format, text) in texts {
        let imported = import_config(format, &text, "f");
        let d = imported
            .diagnostics
            .iter()
            .find(|d| d.message.contains("evil"));
        let d = d.unwrap_or_else(|| panic!("{format:?}: {:?}", imported.diagnostics));
        let field = d.field.as_deref().unwrap();
        for shown in [field, d.message.as_str()] {
            assert!(!shown.contains("TAIL"), "{format:?}: {shown}");
            let bad = |c: char| c.is_control() || c == '\u{202e}';
            assert!(!shown.chars().any(bad), "{format:?}: {shown:?}");
        }
        assert!(field.starts_with("x\\u{1b}[2J\\u{202e}evil"), "{field}");
        assert!(
            field.ends_with('…') && field.chars().count() == 65,
            "{field}"
        );
    }
}
