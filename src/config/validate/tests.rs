//! Unit tests of both validation stages.

use serde_json::json;

use super::*;
use crate::config::model::{HttpTransport, ServerConfig, TextPosition};

const SCHEMA: &str = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";

fn one(entry: Value) -> Result<ServerConfig, String> {
    validate_entry_value("s", &entry)
}

fn file_err(text: &str) -> String {
    parse_mcp_json(text, "/p/mcp.json").unwrap_err()
}

#[test]
fn parses_the_seed_example() {
    let text = format!(
        r#"{{
  "$schema": "{SCHEMA}",
  "mcpServers": {{
    "local-tools": {{ "type": "stdio", "command": "./bin/server", "args": ["--data", "${{PLUGIN_DATA}}"] }},
    "remote-tools": {{ "type": "streamable-http", "url": "https://tools.example.com/mcp" }}
  }}
}}"#
    );
    let cfg = parse_mcp_json(&text, "mcp.json").unwrap();
    assert_eq!(cfg.servers.len(), 2);
    let ServerConfig::Stdio(s) = cfg.servers[0].config.clone().unwrap() else {
        panic!()
    };
    assert_eq!(s.command, "./bin/server");
    assert_eq!(s.args, vec!["--data", "${PLUGIN_DATA}"]);
    let ServerConfig::StreamableHttp(h) = cfg.servers[1].config.clone().unwrap() else {
        panic!()
    };
    assert_eq!(h.url.as_str(), "https://tools.example.com/mcp");
}

#[test]
fn file_errors_carry_label_line_and_column() {
    let text = "{\n  \"mcpServers\": {},\n  \"servers\": {}\n}";
    assert_eq!(
        file_err(text),
        "/p/mcp.json:3:3: unknown top-level field \"servers\" (allowed: $schema, mcpServers)"
    );
    assert_eq!(
        file_err("{}"),
        "/p/mcp.json:1:1: \"mcpServers\" is required"
    );
}

#[test]
fn strict_json_only() {
    assert!(file_err("{\"mcpServers\": {},}")
        .starts_with("/p/mcp.json:1:18: invalid JSON: Trailing commas"));
    assert!(file_err("// c\n{\"mcpServers\": {}}").contains("Comments are not allowed"));
    assert!(file_err("{mcpServers: {}}").starts_with("/p/mcp.json:1:2: invalid JSON"));
    assert!(file_err("{'mcpServers': {}}").contains("invalid JSON"));
    assert!(file_err("").starts_with("/p/mcp.json:1:1: invalid JSON"));
    assert!(file_err("{\"mcpServers\": {\"a\": 0x1}}").contains("invalid JSON"));
    assert!(file_err("{\"mcpServers\": {}} {}").contains("invalid JSON"));
}

#[test]
fn raw_control_character_in_string_is_invalid_json() {
    let err = file_err("{\"mcpServers\": {\"a\": {\"type\": \"x\ty\"}}}");
    assert!(
        err.starts_with("/p/mcp.json:1:33: invalid JSON: unescaped control"),
        "{err}"
    );
}

#[test]
fn bom_is_ignored() {
    assert!(parse_mcp_json("\u{feff}{\"mcpServers\": {}}", "f").is_ok());
}

#[test]
fn schema_rules() {
    assert!(parse_mcp_json(
        &format!("{{\"$schema\": \"{SCHEMA}\", \"mcpServers\": {{}}}}"),
        "f"
    )
    .is_ok());
    let err = file_err("{\"$schema\": \"https://x/0.9.json\", \"mcpServers\": {}}");
    assert!(
        err.starts_with("/p/mcp.json:1:13: unsupported \"$schema\""),
        "{err}"
    );
    let err = file_err("{\"$schema\": 1, \"mcpServers\": {}}");
    assert_eq!(
        err,
        "/p/mcp.json:1:13: \"$schema\" must be a string, got number"
    );
}

#[test]
fn top_level_shape_rules() {
    assert_eq!(
        file_err("[]"),
        "/p/mcp.json:1:1: top-level value must be an object, got array"
    );
    assert_eq!(
        file_err("{\"mcpServers\": []}"),
        "/p/mcp.json:1:16: \"mcpServers\" must be an object, got array"
    );
    assert!(
        file_err("{\"mcpServers\": {}, \"mcpServers\": {}}").contains("duplicate top-level field")
    );
    let err = file_err("{\"mcpServers\": {\"a\": 1, \"a\": 2}}");
    assert_eq!(
        err,
        "/p/mcp.json:1:25: duplicate server name \"a\" in \"mcpServers\""
    );
}

#[test]
fn range_uses_utf16_and_crlf() {
    // "😀" is 2 UTF-16 code units, "é" is 1.
    let text = "{\"$schema\": \"\",\r\n \"mcpServers\": {\"😀é\": {\"type\": \"x\"}}}";
    let text = text.replace("\"$schema\": \"\",", &format!("\"$schema\": \"{SCHEMA}\","));
    let cfg = parse_mcp_json(&text, "f").unwrap();
    let r = cfg.servers[0].range.clone().unwrap();
    assert_eq!(
        r.start,
        TextPosition {
            line: 1,
            character: 16
        }
    );
    // key "😀é" = 1 + 2 + 1 + 1 = 5 units, then `: {"type": "x"}` = 15.
    assert_eq!(
        r.end,
        TextPosition {
            line: 1,
            character: 16 + 5 + 15
        }
    );
}

#[test]
fn duplicate_field_inside_entry_is_entry_level() {
    let text = r#"{"mcpServers": {"a": {"type": "stdio", "command": "x", "command": "y"}, "b": {"type": "stdio", "command": "z", "env": {"K": "1", "K": "2"}}, "c": {"type": "stdio", "command": "ok"}}}"#;
    let cfg = parse_mcp_json(text, "f").unwrap();
    assert_eq!(
        cfg.servers[0].config,
        Err("server \"a\": duplicate field \"command\"".into())
    );
    assert_eq!(
        cfg.servers[1].config,
        Err("server \"b\": field \"env\": duplicate key \"K\"".into())
    );
    assert!(cfg.servers[2].config.is_ok());
}

#[test]
fn type_rules() {
    assert_eq!(
        one(json!([])),
        Err("server \"s\": entry must be an object, got array".into())
    );
    assert_eq!(
        one(json!({})),
        Err(
            "server \"s\": field \"type\" is required (supported: stdio, streamable-http, sse)"
                .into()
        )
    );
    assert!(one(json!({"type": 1}))
        .unwrap_err()
        .contains("field \"type\": must be a string"));
    let ServerConfig::StreamableHttp(sse) =
        one(json!({"type": "sse", "url": "https://a/sse"})).unwrap_or_else(|e| panic!("{e}"))
    else {
        panic!("not an HTTP entry")
    };
    assert_eq!(sse.transport, HttpTransport::Sse);
    assert_eq!(
        one(json!({"type": "sse"})),
        Err("server \"s\": field \"url\" is required for type \"sse\"".into())
    );
    assert!(one(json!({"type": "sse", "url": "http://example.com/sse"}))
        .unwrap_err()
        .contains("must use https"));
    assert!(
        one(json!({"type": "sse", "url": "https://a", "command": "x"}))
            .unwrap_err()
            .contains("\"command\"")
    );
    assert!(one(json!({"type": "SSE", "url": "https://a"}))
        .unwrap_err()
        .contains("did you mean \"sse\"?"));
    assert_eq!(
        one(json!({"type": "ws"})),
        Err("server \"s\": field \"type\": unknown transport \"ws\" (supported: stdio, streamable-http, sse)".into())
    );
    assert_eq!(
        one(json!({"type": "http", "url": "https://a"})),
        Err("server \"s\": field \"type\": unknown transport \"http\" (supported: stdio, streamable-http, sse); did you mean \"streamable-http\"? (VS Code and Claude Code call it \"http\")".into())
    );
    assert!(one(json!({"type": "Streamable_HTTP"}))
        .unwrap_err()
        .contains("did you mean \"streamable-http\"?"));
}

#[test]
fn unknown_field_is_named() {
    let err = one(json!({"type": "stdio", "command": "x", "url": "https://a"})).unwrap_err();
    assert!(
        err.starts_with("server \"s\": field \"url\": unknown field for type \"stdio\""),
        "{err}"
    );
    let err =
        one(json!({"type": "streamable-http", "url": "https://a", "command": "x"})).unwrap_err();
    assert!(err.contains("field \"command\": unknown field"), "{err}");
}

#[test]
fn stdio_full_entry() {
    let cfg = one(json!({
        "type": "stdio", "command": "node", "args": ["${PLUGIN_ROOT}/a.js"],
        "env": {"A": "${PLUGIN_DATA}"}, "cwd": "${PLUGIN_ROOT}/w"
    }))
    .unwrap();
    let ServerConfig::Stdio(s) = cfg else {
        panic!()
    };
    assert_eq!(s.env.get("A").map(String::as_str), Some("${PLUGIN_DATA}"));
    assert_eq!(s.cwd.as_deref(), Some("${PLUGIN_ROOT}/w"));
}

#[test]
fn command_rules() {
    let cmd = |c: &str| one(json!({"type": "stdio", "command": c}));
    assert!(cmd("node").is_ok());
    assert!(cmd("my server").is_ok(), "whitespace stays one token");
    assert!(cmd("./bin/server").is_ok());
    assert!(cmd("/usr/bin/env").is_ok());
    assert!(cmd("")
        .unwrap_err()
        .contains("field \"command\": must not be empty"));
    assert!(cmd("bin/x")
        .unwrap_err()
        .contains("relative command must start with ./"));
    assert!(cmd("../x")
        .unwrap_err()
        .contains("relative command must start with ./"));
    assert!(cmd("${PLUGIN_ROOT}/x")
        .unwrap_err()
        .contains("not expanded in \"command\""));
    assert!(cmd("./").unwrap_err().contains("does not name a file"));
    assert!(cmd("..")
        .unwrap_err()
        .contains("does not name an executable"));
    assert!(cmd("a\0b").unwrap_err().contains("NUL"));
    assert!(one(json!({"type": "stdio"}))
        .unwrap_err()
        .contains("field \"command\" is required"));
    assert!(one(json!({"type": "stdio", "command": 3}))
        .unwrap_err()
        .contains("must be a string, got number"));
}

#[test]
fn args_env_cwd_rules() {
    let with = |k: &str, v: Value| one(json!({"type": "stdio", "command": "x", k: v}));
    assert!(with("args", json!("a"))
        .unwrap_err()
        .contains("field \"args\": must be an array of strings"));
    assert!(with("args", json!(["a", 1]))
        .unwrap_err()
        .contains("field \"args[1]\": must be a string"));
    assert!(with("args", json!(["a", "${HOME}"]))
        .unwrap_err()
        .contains("field \"args[1]\": unknown variable ${HOME}"));
    assert!(with("args", json!(["$HOME"])).is_ok());
    assert!(with("env", json!([]))
        .unwrap_err()
        .contains("field \"env\": must be an object"));
    assert!(with("env", json!({"A": 1}))
        .unwrap_err()
        .contains("field \"env.A\": must be a string"));
    assert!(with("env", json!({"": "v"}))
        .unwrap_err()
        .contains("variable name \"\" must not be empty"));
    assert!(with("env", json!({"A=B": "v"}))
        .unwrap_err()
        .contains("must not contain \"=\""));
    assert!(with("env", json!({"A": "${X"}))
        .unwrap_err()
        .contains("field \"env.A\": unterminated"));
    assert!(with("cwd", json!(1))
        .unwrap_err()
        .contains("field \"cwd\": must be a string"));
    assert!(with("cwd", json!(""))
        .unwrap_err()
        .contains("field \"cwd\": must not be empty"));
    assert!(with("cwd", json!("${TMP}"))
        .unwrap_err()
        .contains("field \"cwd\": unknown variable"));
}

#[test]
fn url_rules() {
    let url = |u: &str| one(json!({"type": "streamable-http", "url": u}));
    assert!(url("https://example.com/mcp").is_ok());
    assert!(url("http://localhost:3000/mcp").is_ok());
    assert!(url("http://LOCALHOST/mcp").is_ok());
    assert!(url("http://127.0.0.1/mcp").is_ok());
    assert!(url("http://127.9.8.7/mcp").is_ok());
    assert!(url("http://[::1]:8080/mcp").is_ok());
    assert!(
        url("https://example.com/${X}").is_ok(),
        "${{}} is literal in url"
    );
    let err = url("http://example.com/mcp").unwrap_err();
    assert_eq!(
        err,
        "server \"s\": field \"url\": must use https (http is allowed only for loopback hosts)"
    );
    assert!(url("http://128.0.0.1/").is_err());
    assert!(url("http://localhost.evil.com/").is_err());
    assert!(url("ftp://example.com/")
        .unwrap_err()
        .contains("got scheme \"ftp\""));
    assert!(url("not a url")
        .unwrap_err()
        .contains("field \"url\": invalid URL"));
    assert_eq!(
        url("${MCP_URL}").unwrap_err(),
        "server \"s\": field \"url\": invalid URL: relative URL without a base \
         (${MCP_URL} is not expanded: Agent Plugins expands variables only in args, env values and cwd)"
    );
    let err = url("https://user:hunter2@example.com/").unwrap_err();
    assert!(
        err.contains("must not contain credentials") && !err.contains("hunter2"),
        "{err}"
    );
    assert!(url("https://user@example.com/").is_err());
    assert!(one(json!({"type": "streamable-http"}))
        .unwrap_err()
        .contains("field \"url\" is required"));
}

#[test]
fn header_rules_never_echo_values() {
    let h = |v: Value| one(json!({"type": "streamable-http", "url": "https://a", "headers": v}));
    let ok = h(json!({"Authorization": "Bearer ${TOKEN}", "X-A": "a\tb"})).unwrap();
    let ServerConfig::StreamableHttp(cfg) = ok else {
        panic!()
    };
    assert_eq!(cfg.headers["Authorization"], "Bearer ${TOKEN}");
    for bad in ["s3cret\r\nX: y", "s3cret\n", "s3cret\0"] {
        let err = h(json!({ "X-Key": bad })).unwrap_err();
        assert!(
            err.contains("field \"headers.X-Key\": value must not contain CR, LF, NUL"),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }
    assert!(h(json!({"Bad Name": "v"}))
        .unwrap_err()
        .contains("invalid header name \"Bad Name\""));
    assert!(h(json!({"Mcp-Session-Id": "v"}))
        .unwrap_err()
        .contains("set by the MCP transport"));
    assert!(h(json!({"content-type": "v"}))
        .unwrap_err()
        .contains("field \"headers.content-type\""));
    for name in [
        "Expect",
        "HTTP2-Settings",
        "Content-Encoding",
        "accept-encoding",
    ] {
        let err = h(json!({ name: "v" })).unwrap_err();
        assert!(err.contains("set by the MCP transport"), "{name}: {err}");
    }
    let err = h(json!({"Proxy-Authenticate": "v"})).unwrap_err();
    assert!(err.contains("is not sent to an MCP server"), "{err}");
    assert!(h(json!({"": "v"}))
        .unwrap_err()
        .contains("invalid header name"));
    assert!(h(json!({"X": 1}))
        .unwrap_err()
        .contains("field \"headers.X\": must be a string"));
    assert!(h(json!([]))
        .unwrap_err()
        .contains("field \"headers\": must be an object"));
    assert!(h(json!({"X-A": "1", "x-a": "2"}))
        .unwrap_err()
        .contains("case-insensitive"));
}

#[test]
fn empty_server_name_is_invalid() {
    assert!(validate_entry_value("", &json!({"type": "stdio", "command": "x"})).is_err());
}
