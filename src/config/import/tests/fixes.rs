//! Tests of the red team's findings on the import (issue 30): secret
//! values wherever they are put, values never echoed, literal formats,
//! per-use defaults, registry runtimes and names, and the small rules.

use serde_json::json;

use super::*;

const CANARY: &str = "canary-5ecr3t-value";

fn text_import(format: ImportFormat, text: &str) -> Imported {
    import_config(format, text, "f")
}

/// (code, severity, field) of every diagnostic.
fn kinds(imported: &Imported) -> Vec<(&'static str, Severity, Option<&str>)> {
    imported
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.severity, d.field.as_deref()))
        .collect()
}

fn assert_silent(imported: &Imported, canary: &str) {
    let all = serde_json::to_string(&imported.diagnostics).unwrap();
    assert!(!all.contains(canary), "{all}");
}

#[test]
fn secret_values_are_listed_wherever_they_went() {
    let text = json!({"inputs": [{"type": "promptString", "id": "key", "password": true}],
        "servers": {"a": {"command": "node", "args": ["--key=${input:key}", "${env:PLAIN}"]}}})
    .to_string();
    let imported = text_import(ImportFormat::VsCode, &text);
    let secret: Vec<String> = imported
        .variables
        .iter()
        .filter(|v| v.secret)
        .map(|v| v.id.clone())
        .collect();
    assert_eq!(secret, ["input:key"]);
    let vals = values(&[("input:key", CANARY), ("env:PLAIN", "plain-value")]);
    let resolved = resolve_server(&imported.servers[0], &vals, &secret).unwrap();
    assert_eq!(resolved.config["args"][0], format!("--key={CANARY}"));
    assert_eq!(
        resolved.secrets,
        [CANARY],
        "only the secret variable's value"
    );
}

#[test]
fn resolution_errors_never_hold_a_value() {
    let text = r#"{"mcpServers": {"a": {"command": "${CMD}", "args": []}}}"#;
    let imported = text_import(ImportFormat::ClaudeCode, text);
    let bad = format!("bin/{CANARY}");
    let err = resolve_server(&imported.servers[0], &values(&[("env:CMD", &bad)]), &[]).unwrap_err();
    assert!(err.contains("field \"command\""), "{err}");
    assert!(!err.contains(CANARY), "{err}");
    for command in [".", "./", "a/b"] {
        let config = json!({"type": "stdio", "command": command.replace('b', CANARY)});
        let err = crate::config::validate_literal_entry_value("a", &config).unwrap_err();
        assert!(!err.contains(CANARY) && err.contains("command"), "{err}");
    }
}

#[test]
fn literal_formats_pass_dollar_brace_verbatim_with_a_warning() {
    let text = r#"{"mcpServers": {"a": {"command": "node", "args": ["${X}", "$${Y}"]}}}"#;
    let imported = text_import(ImportFormat::ClaudeDesktop, text);
    assert_eq!(imported.servers.len(), 1, "{:?}", imported.diagnostics);
    assert!(imported.servers[0].resolved);
    assert_eq!(imported.servers[0].config["args"], json!(["${X}", "$${Y}"]));
    assert_eq!(
        kinds(&imported),
        [
            ("invalid_entry", Severity::Warning, Some("args[0]")),
            ("invalid_entry", Severity::Warning, Some("args[1]"))
        ]
    );
    let toml = "[mcp_servers.a]\ncommand = \"node\"\nargs = [\"${X}\"]\nenv_vars = [\"T\"]\n";
    let imported = text_import(ImportFormat::Codex, toml);
    assert_eq!(imported.servers[0].config["args"], json!(["${X}"]));
    let vals = values(&[("env:T", "t-value")]);
    let resolved = resolve_server(&imported.servers[0], &vals, &[]).unwrap();
    assert_eq!(resolved.config["args"], json!(["${X}"]), "verbatim");
    // Literal text that would be taken for the entry's own placeholder.
    let toml = "[mcp_servers.a]\ncommand = \"node\"\nargs = [\"${env:T}\"]\nenv_vars = [\"T\"]\n";
    let imported = text_import(ImportFormat::Codex, toml);
    assert!(imported.servers.is_empty());
    assert_eq!(kinds(&imported), [("invalid_entry", Severity::Error, None)]);
    assert!(imported.diagnostics[0]
        .message
        .contains("field \"args[0]\""));
}

#[test]
fn each_claude_code_use_keeps_its_own_default() {
    let text = r#"{"mcpServers": {"a": {"command": "node", "args": ["${A:-x}", "${A:-y}"], "env": {"E": "${A}"}}}}"#;
    let imported = text_import(ImportFormat::ClaudeCode, text);
    let [variable] = &imported.variables[..] else {
        panic!("{:?}", imported.variables)
    };
    assert_eq!(
        (variable.required, variable.default.as_deref()),
        (true, None)
    );
    let server = &imported.servers[0];
    let err = resolve_server(server, &BTreeMap::new(), &[]).unwrap_err();
    assert!(err.contains("${env:A} has no value"), "{err}");
    let text = r#"{"mcpServers": {"a": {"command": "node", "args": ["${A:-x}", "${A:-y}"]}}}"#;
    let imported = text_import(ImportFormat::ClaudeCode, text);
    assert!(!imported.variables[0].required);
    let server = &imported.servers[0];
    let resolved = resolve_server(server, &BTreeMap::new(), &[]).unwrap();
    assert_eq!(resolved.config["args"], json!(["x", "y"]));
    let resolved = resolve_server(server, &values(&[("env:A", "v")]), &[]).unwrap();
    assert_eq!(resolved.config["args"], json!(["v", "v"]));
}

#[test]
fn vscode_inputs_odd_fields_are_named() {
    let text = json!({"inputs": [
        {"type": "promptString", "id": "k", "password": "yes", "colour": 1},
        {"type": "promptString", "id": "k"}
    ], "servers": {"a": {"command": "node", "env": {"K": "${input:k}"}}}})
    .to_string();
    let imported = text_import(ImportFormat::VsCode, &text);
    assert_eq!(
        kinds(&imported),
        [
            ("invalid_entry", Severity::Warning, Some("inputs[0].colour")),
            (
                "invalid_entry",
                Severity::Warning,
                Some("inputs[0].password")
            ),
            ("invalid_entry", Severity::Warning, Some("inputs[1].id")),
        ]
    );
    assert!(
        imported.variables[0].secret,
        "a non-boolean password is taken as true"
    );
}

#[test]
fn control_characters_env_names_and_client_ids_are_refused_by_field() {
    let text =
        json!({"mcpServers": {"a": {"command": "node", "args": [format!("x\u{1}{CANARY}")]}}})
            .to_string();
    let imported = text_import(ImportFormat::ClaudeDesktop, &text);
    assert_eq!(
        kinds(&imported),
        [("invalid_entry", Severity::Error, Some("args[0]"))]
    );
    assert_silent(&imported, CANARY);
    let toml = "[mcp_servers.a]\ncommand = \"node\"\nenv_vars = [\"A=B\"]\n";
    let imported = text_import(ImportFormat::Codex, toml);
    assert_eq!(
        kinds(&imported),
        [("invalid_entry", Severity::Error, Some("env_vars[0]"))]
    );
    let toml = "[mcp_servers.a]\nurl = \"https://x.example/mcp\"\nbearer_token_env_var = \"1 X\"\n";
    let imported = text_import(ImportFormat::Codex, toml);
    let field = Some("bearer_token_env_var");
    assert_eq!(
        kinds(&imported),
        [("invalid_entry", Severity::Error, field)]
    );
    let text =
        r#"{"mcpServers": {"a": {"url": "https://x.example/mcp", "auth": {"CLIENT_ID": 7}}}}"#;
    let imported = text_import(ImportFormat::Cursor, text);
    let field = Some("auth.CLIENT_ID");
    assert_eq!(
        kinds(&imported),
        [("invalid_entry", Severity::Error, field)]
    );
}

#[test]
fn reserved_and_hop_by_hop_headers_are_refused_as_for_add_server() {
    for name in [
        "Connection",
        "Keep-Alive",
        "TE",
        "Upgrade",
        "Proxy-Authorization",
        "Mcp-Name",
        "Mcp-Method",
        "Mcp-Param-Region",
        "Mcp-Session-Id",
        "Host",
    ] {
        let text = json!({"servers": {"a": {"type": "http", "url": "https://x.example/mcp",
            "headers": {name: CANARY}}}})
        .to_string();
        let imported = text_import(ImportFormat::VsCode, &text);
        assert!(imported.servers.is_empty(), "{name}");
        assert_silent(&imported, CANARY);
    }
    // A cookie is a credential like `Authorization` (a server behind a
    // single sign-on proxy): taken, and a secret like every header value.
    let text = json!({"servers": {"a": {"type": "http", "url": "https://x.example/mcp",
        "headers": {"Cookie": CANARY}}}})
    .to_string();
    let imported = text_import(ImportFormat::VsCode, &text);
    assert_eq!(imported.servers.len(), 1);
    assert_silent(&imported, CANARY);
}
