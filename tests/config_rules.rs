//! Table tests for `mcp.json` validation and stdio launch resolution
//! (Agent Plugins "MCP runtime", seed 002: *Validate in two stages*,
//! *Launch stdio servers*, *Connect remote servers*).

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use ahp_mcp_host::config::launch::{
    ensure_plugin_data_dir, host_base_env, resolve_stdio, EnvPolicy, LaunchSpec,
};
use ahp_mcp_host::config::{
    parse_mcp_json, validate_entry_value, PluginVars, ServerConfig, StdioConfig, TextPosition,
    SUPPORTED_SCHEMAS,
};
use ahp_mcp_host::error::ErrorCode;

// ---------------------------------------------------------------------------
// Stage 2: one file, valid and invalid siblings
// ---------------------------------------------------------------------------

/// Valid entries: (name, transport).
const VALID: &[(&str, &str)] = &[
    ("ok-stdio", "stdio"),
    ("ok-http", "streamable-http"),
    ("ok-loopback", "streamable-http"),
    ("ok-ipv6-loopback", "streamable-http"),
    ("ok-localhost", "streamable-http"),
    ("ok-sse", "sse"),
    ("ok-bare-spaces", "stdio"),
    ("ok-absolute", "stdio"),
];

/// Invalid entries: (name, JSON of the entry, substrings the message must contain).
const INVALID: &[(&str, &str, &[&str])] = &[
    ("not-object", r#""stdio""#, &["entry must be an object, got string"]),
    ("missing-type", r#"{"command": "x"}"#, &["field \"type\" is required", "stdio, streamable-http"]),
    ("type-not-string", r#"{"type": 1}"#, &["field \"type\": must be a string, got number"]),
    ("unknown-type", r#"{"type": "websocket", "url": "wss://a"}"#, &["field \"type\": unknown transport \"websocket\"", "supported: stdio, streamable-http"]),
    ("sse-not-https", r#"{"type": "sse", "url": "http://a.example/sse"}"#, &["field \"url\": must use https"]),
    ("sse-unknown-field", r#"{"type": "sse", "url": "https://a.example/sse", "command": "x"}"#, &["field \"command\": unknown field for type \"sse\"", "allowed: type, url, headers"]),
    ("unknown-field", r#"{"type": "stdio", "command": "x", "timeout": 5}"#, &["field \"timeout\": unknown field for type \"stdio\"", "allowed: type, command, args, env, cwd"]),
    ("http-unknown-field", r#"{"type": "streamable-http", "url": "https://a", "env": {}}"#, &["field \"env\": unknown field for type \"streamable-http\"", "allowed: type, url, headers"]),
    ("duplicate-field", r#"{"type": "stdio", "command": "x", "command": "y"}"#, &["duplicate field \"command\""]),
    ("missing-command", r#"{"type": "stdio", "args": []}"#, &["field \"command\" is required"]),
    ("empty-command", r#"{"type": "stdio", "command": ""}"#, &["field \"command\": must not be empty"]),
    ("command-not-string", r#"{"type": "stdio", "command": ["node", "x.js"]}"#, &["field \"command\": must be a string, got array"]),
    ("command-with-variable", r#"{"type": "stdio", "command": "${PLUGIN_ROOT}/bin/x"}"#, &["field \"command\"", "not expanded in \"command\""]),
    ("relative-command", r#"{"type": "stdio", "command": "bin/server"}"#, &["field \"command\"", "relative command must start with ./"]),
    ("parent-command", r#"{"type": "stdio", "command": "../server"}"#, &["field \"command\"", "relative command must start with ./"]),
    ("args-not-array", r#"{"type": "stdio", "command": "x", "args": "--flag"}"#, &["field \"args\": must be an array of strings, got string"]),
    ("args-item-not-string", r#"{"type": "stdio", "command": "x", "args": ["a", true]}"#, &["field \"args[1]\": must be a string, got boolean"]),
    ("env-not-object", r#"{"type": "stdio", "command": "x", "env": ["A=1"]}"#, &["field \"env\": must be an object of strings, got array"]),
    ("env-value-not-string", r#"{"type": "stdio", "command": "x", "env": {"PORT": 8080}}"#, &["field \"env.PORT\": must be a string, got number"]),
    ("env-name-equals", r#"{"type": "stdio", "command": "x", "env": {"A=B": "1"}}"#, &["field \"env\"", "\"A=B\" must not contain \"=\""]),
    ("env-name-empty", r#"{"type": "stdio", "command": "x", "env": {"": "1"}}"#, &["field \"env\"", "must not be empty"]),
    ("env-value-nul", r#"{"type": "stdio", "command": "x", "env": {"A": "a\u0000b"}}"#, &["field \"env.A\": must not contain NUL"]),
    ("cwd-not-string", r#"{"type": "stdio", "command": "x", "cwd": 1}"#, &["field \"cwd\": must be a string, got number"]),
    ("unknown-variable", r#"{"type": "stdio", "command": "x", "args": ["--home", "${HOME}"]}"#, &["field \"args[1]\": unknown variable ${HOME} (only ${PLUGIN_ROOT} and ${PLUGIN_DATA} are expanded)"]),
    ("unknown-variable-env", r#"{"type": "stdio", "command": "x", "env": {"TOKEN": "${GITHUB_TOKEN}"}}"#, &["field \"env.TOKEN\": unknown variable ${GITHUB_TOKEN}"]),
    ("unknown-variable-cwd", r#"{"type": "stdio", "command": "x", "cwd": "${PLUGIN_ROOT}/${SUBDIR}"}"#, &["field \"cwd\": unknown variable ${SUBDIR}"]),
    ("unterminated-variable", r#"{"type": "stdio", "command": "x", "args": ["${PLUGIN_ROOT"]}"#, &["field \"args[0]\": unterminated variable reference"]),
    ("missing-url", r#"{"type": "streamable-http", "headers": {}}"#, &["field \"url\" is required"]),
    ("url-not-string", r#"{"type": "streamable-http", "url": {"href": "https://a"}}"#, &["field \"url\": must be a string, got object"]),
    ("url-unparsable", r#"{"type": "streamable-http", "url": "tools.example.com/mcp"}"#, &["field \"url\": invalid URL"]),
    ("url-bad-scheme", r#"{"type": "streamable-http", "url": "ftp://tools.example.com/mcp"}"#, &["field \"url\": must use https", "got scheme \"ftp\""]),
    ("url-http-remote", r#"{"type": "streamable-http", "url": "http://tools.example.com/mcp"}"#, &["field \"url\": must use https (http is allowed only for loopback hosts)"]),
    ("url-http-private-ip", r#"{"type": "streamable-http", "url": "http://10.0.0.1/mcp"}"#, &["field \"url\": must use https"]),
    ("url-credentials", r#"{"type": "streamable-http", "url": "https://bob:s3cr3t@tools.example.com/mcp"}"#, &["field \"url\": must not contain credentials"]),
    ("headers-not-object", r#"{"type": "streamable-http", "url": "https://a", "headers": ["X: y"]}"#, &["field \"headers\": must be an object of strings, got array"]),
    ("header-crlf", r#"{"type": "streamable-http", "url": "https://a", "headers": {"X-Token": "s3cr3t\r\nX-Injected: 1"}}"#, &["field \"headers.X-Token\": value must not contain CR, LF, NUL"]),
    ("header-lf", r#"{"type": "streamable-http", "url": "https://a", "headers": {"X-Token": "s3cr3t\n"}}"#, &["field \"headers.X-Token\": value must not contain"]),
    ("header-nul", r#"{"type": "streamable-http", "url": "https://a", "headers": {"X-Token": "s3cr3t\u0000"}}"#, &["field \"headers.X-Token\": value must not contain"]),
    ("header-bad-name", r#"{"type": "streamable-http", "url": "https://a", "headers": {"X Token": "v"}}"#, &["field \"headers\": invalid header name \"X Token\""]),
    ("header-value-not-string", r#"{"type": "streamable-http", "url": "https://a", "headers": {"X-Retries": 3}}"#, &["field \"headers.X-Retries\": must be a string, got number"]),
];

/// The entry's `type`, from the validated variant.
fn transport_name(config: &ServerConfig) -> &'static str {
    match config {
        ServerConfig::Stdio(_) => "stdio",
        ServerConfig::StreamableHttp(http) => http.transport.type_name(),
    }
}

fn valid_entries_json() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "ok-stdio",
            r#"{"type": "stdio", "command": "./bin/server", "args": ["--data", "${PLUGIN_DATA}", "$HOME"], "env": {"ROOT": "${PLUGIN_ROOT}"}, "cwd": "${PLUGIN_DATA}"}"#,
        ),
        (
            "ok-http",
            r#"{"type": "streamable-http", "url": "https://tools.example.com/mcp", "headers": {"Authorization": "Bearer s3cr3t", "X-Literal": "${NOT_EXPANDED}"}}"#,
        ),
        (
            "ok-loopback",
            r#"{"type": "streamable-http", "url": "http://127.0.0.1:8080/mcp"}"#,
        ),
        (
            "ok-ipv6-loopback",
            r#"{"type": "streamable-http", "url": "http://[::1]:8080/mcp"}"#,
        ),
        (
            "ok-localhost",
            r#"{"type": "streamable-http", "url": "http://localhost:3000/mcp"}"#,
        ),
        (
            "ok-sse",
            r#"{"type": "sse", "url": "https://tools.example.com/sse", "headers": {"X-Key": "s3cr3t"}}"#,
        ),
        (
            "ok-bare-spaces",
            r#"{"type": "stdio", "command": "my server"}"#,
        ),
        (
            "ok-absolute",
            r#"{"type": "stdio", "command": "/usr/bin/env", "args": []}"#,
        ),
    ]
}

/// One `mcp.json` holding every valid and invalid entry, interleaved.
fn mixed_file() -> String {
    let valid = valid_entries_json();
    let mut members = Vec::new();
    for (i, (name, entry, _)) in INVALID.iter().enumerate() {
        if let Some((vname, ventry)) = valid.get(i) {
            members.push(format!("    \"{vname}\": {ventry}"));
        }
        members.push(format!("    \"{name}\": {entry}"));
    }
    format!(
        "{{\n  \"$schema\": \"{}\",\n  \"mcpServers\": {{\n{}\n  }}\n}}\n",
        SUPPORTED_SCHEMAS[0],
        members.join(",\n")
    )
}

#[test]
fn invalid_entries_fail_alone_and_name_server_and_field() {
    let text = mixed_file();
    let cfg = parse_mcp_json(&text, "/p/mcp.json").expect("file-level validation passes");
    assert_eq!(cfg.servers.len(), VALID.len() + INVALID.len());

    for (name, transport) in VALID {
        let entry = cfg.servers.iter().find(|e| e.name == *name).expect(name);
        let config = entry
            .config
            .as_ref()
            .unwrap_or_else(|e| panic!("{name} should be valid: {e}"));
        assert_eq!(transport_name(config), *transport, "{name}");
    }
    for (name, _, needles) in INVALID {
        let entry = cfg.servers.iter().find(|e| e.name == *name).expect(name);
        let err = entry.config.as_ref().expect_err(name);
        let prefix = format!("server \"{name}\": ");
        assert!(err.starts_with(&prefix), "{name}: {err}");
        for needle in *needles {
            assert!(err.contains(needle), "{name}: {err:?} lacks {needle:?}");
        }
        assert!(
            !err.contains("s3cr3t"),
            "{name}: message leaks a secret: {err}"
        );
        assert!(entry.range.is_some(), "{name} has a range");
    }
}

#[test]
fn entries_keep_file_order() {
    let cfg = parse_mcp_json(&mixed_file(), "f").unwrap();
    let names: Vec<&str> = cfg.servers.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        &names[..4],
        &["ok-stdio", "not-object", "ok-http", "missing-type"]
    );
}

#[test]
fn validate_entry_value_agrees_with_file_validation() {
    let cfg = parse_mcp_json(&mixed_file(), "f").unwrap();
    let raw: serde_json::Value = serde_json::from_str(&mixed_file()).unwrap();
    for entry in &cfg.servers {
        if entry.name == "duplicate-field" {
            continue; // serde_json keeps only the last duplicate
        }
        let value = &raw["mcpServers"][&entry.name];
        assert_eq!(
            validate_entry_value(&entry.name, value),
            entry.config,
            "{}",
            entry.name
        );
    }
}

#[test]
fn valid_stdio_entry_keeps_variables_unexpanded() {
    let cfg = parse_mcp_json(&mixed_file(), "f").unwrap();
    let Ok(ServerConfig::Stdio(s)) = &cfg.servers[0].config else {
        panic!("ok-stdio")
    };
    assert_eq!(s.command, "./bin/server");
    assert_eq!(s.args, ["--data", "${PLUGIN_DATA}", "$HOME"]);
    assert_eq!(s.env["ROOT"], "${PLUGIN_ROOT}");
    assert_eq!(s.cwd.as_deref(), Some("${PLUGIN_DATA}"));
    let Ok(ServerConfig::StreamableHttp(h)) = &cfg.servers[2].config else {
        panic!("ok-http")
    };
    assert_eq!(h.headers["X-Literal"], "${NOT_EXPANDED}");
}

#[test]
fn entry_range_is_zero_based_utf16() {
    // Line 1 holds "ü" (1 UTF-16 unit) and "𝄞" (2 units) before the entry key.
    let text = "{\"mcpServers\": {\n  \"ü𝄞\": {\"type\": \"x\"}, \"next\": {\"type\": \"stdio\", \"command\": \"a\"}\n}}";
    let cfg = parse_mcp_json(text, "f").unwrap();
    let first = cfg.servers[0].range.clone().unwrap();
    assert_eq!(
        first.start,
        TextPosition {
            line: 1,
            character: 2
        }
    );
    // `"ü𝄞"` is 5 units, `: {"type": "x"}` is 15.
    assert_eq!(
        first.end,
        TextPosition {
            line: 1,
            character: 22
        }
    );
    let second = cfg.servers[1].range.clone().unwrap();
    assert_eq!(
        second.start,
        TextPosition {
            line: 1,
            character: 24
        }
    );
    assert!(cfg.servers[0].config.is_err() && cfg.servers[1].config.is_ok());
}

// ---------------------------------------------------------------------------
// Stage 1: file-level failures
// ---------------------------------------------------------------------------

#[test]
fn file_level_failures_name_file_line_and_column() {
    let schema = SUPPORTED_SCHEMAS[0];
    let cases: Vec<(String, &str, &str)> = vec![
        ("{\"mcpServers\": {".into(), "/p/mcp.json:1:", "invalid JSON"),
        ("{\"mcpServers\": {}}}".into(), "/p/mcp.json:1:19: ", "invalid JSON"),
        ("{\n  \"mcpServers\": {},\n}".into(), "/p/mcp.json:2:19: ", "invalid JSON: Trailing commas are not allowed"),
        ("{\"mcpServers\": {\"a\": {\"type\": \"stdio\", \"command\": \"x\",}}}".into(), "/p/mcp.json:1:54: ", "Trailing commas"),
        ("{\n  // note\n  \"mcpServers\": {}\n}".into(), "/p/mcp.json:2:3: ", "Comments are not allowed"),
        (String::new(), "/p/mcp.json:1:1: ", "invalid JSON"),
        ("[]".into(), "/p/mcp.json:1:1: ", "top-level value must be an object"),
        ("{\"$schema\": \"https://agent-plugins.org/schemas/2.0.0/mcp.schema.json\", \"mcpServers\": {}}".into(), "/p/mcp.json:1:13: ", "unsupported \"$schema\""),
        ("{\"$schema\": null, \"mcpServers\": {}}".into(), "/p/mcp.json:1:13: ", "\"$schema\" must be a string"),
        (format!("{{\n  \"$schema\": \"{schema}\"\n}}"), "/p/mcp.json:1:1: ", "\"mcpServers\" is required"),
        ("{\"mcpServers\": []}".into(), "/p/mcp.json:1:16: ", "\"mcpServers\" must be an object, got array"),
        ("{\"mcpServers\": \"stdio\"}".into(), "/p/mcp.json:1:16: ", "\"mcpServers\" must be an object, got string"),
        (format!("{{\n  \"$schema\": \"{schema}\",\n    \"servers\": {{}}\n}}"), "/p/mcp.json:3:5: ", "unknown top-level field \"servers\" (allowed: $schema, mcpServers)"),
        ("{\"mcpServers\": {}, \"version\": 1}".into(), "/p/mcp.json:1:20: ", "unknown top-level field \"version\""),
        ("{\"mcpServers\": {\"a\": {}, \"a\": {}}}".into(), "/p/mcp.json:1:26: ", "duplicate server name \"a\""),
    ];
    for (text, prefix, needle) in &cases {
        let err = parse_mcp_json(text, "/p/mcp.json").expect_err(text);
        assert!(
            err.starts_with(prefix),
            "{text:?}: {err:?} should start with {prefix:?}"
        );
        assert!(err.contains(needle), "{text:?}: {err:?} lacks {needle:?}");
    }
}

#[test]
fn file_level_column_counts_utf16() {
    let err = parse_mcp_json("{\"é𝄞\": 1}", "f").unwrap_err();
    // The unknown key starts at character 1 (0-based) → column 2.
    assert!(err.starts_with("f:1:2: unknown top-level field"), "{err}");
    let err = parse_mcp_json("{\"mcpServers\": {\"é𝄞\": 1,}}", "f").unwrap_err();
    // `{"mcpServers": {"é𝄞": 1` is 24 units; the comma is at 0-based 24.
    assert!(
        err.starts_with("f:1:25: invalid JSON: Trailing commas"),
        "{err}"
    );
}

#[test]
fn minimal_valid_files() {
    assert_eq!(
        parse_mcp_json("{\"mcpServers\": {}}", "f").unwrap().servers,
        vec![]
    );
    let with_schema = format!(
        "{{\"$schema\": \"{}\", \"mcpServers\": {{}}}}",
        SUPPORTED_SCHEMAS[0]
    );
    assert!(parse_mcp_json(&with_schema, "f").is_ok());
}

// Launch: stdio launch resolution inside a plugin.
#[path = "config_rules/plugin_commands.rs"]
mod plugin_commands;
