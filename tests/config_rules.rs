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
    ("ok-bare-spaces", "stdio"),
    ("ok-absolute", "stdio"),
];

/// Invalid entries: (name, JSON of the entry, substrings the message must contain).
const INVALID: &[(&str, &str, &[&str])] = &[
    ("not-object", r#""stdio""#, &["entry must be an object, got string"]),
    ("missing-type", r#"{"command": "x"}"#, &["field \"type\" is required", "stdio, streamable-http"]),
    ("type-not-string", r#"{"type": 1}"#, &["field \"type\": must be a string, got number"]),
    ("unknown-type", r#"{"type": "websocket", "url": "wss://a"}"#, &["field \"type\": unknown transport \"websocket\"", "supported: stdio, streamable-http"]),
    ("legacy-sse", r#"{"type": "sse", "url": "https://a.example/sse"}"#, &["field \"type\"", "legacy HTTP+SSE", "not supported by this host", "use \"streamable-http\""]),
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
        ServerConfig::StreamableHttp(_) => "streamable-http",
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

// ---------------------------------------------------------------------------
// Launch
// ---------------------------------------------------------------------------

struct Plugin {
    tmp: tempfile::TempDir,
    vars: PluginVars,
}

/// `<tmp>/root/bin/server` (executable), `<tmp>/data`, `<tmp>/outside/tool`.
fn plugin() -> Plugin {
    plugin_at("root")
}

fn plugin_at(root_name: &str) -> Plugin {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(root_name);
    let data = tmp.path().join("data");
    for dir in [
        root.join("bin"),
        root.join("work"),
        data.clone(),
        tmp.path().join("outside"),
    ] {
        std::fs::create_dir_all(dir).unwrap();
    }
    for file in [root.join("bin/server"), tmp.path().join("outside/tool")] {
        std::fs::write(&file, "#!/bin/sh\nexit 0\n").unwrap();
        make_executable(&file);
    }
    Plugin {
        vars: PluginVars {
            plugin_root: root,
            plugin_data: data,
        },
        tmp,
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}

fn stdio(command: &str) -> StdioConfig {
    StdioConfig {
        command: command.into(),
        args: vec![],
        env: BTreeMap::new(),
        cwd: None,
    }
}

fn resolve(cfg: &StdioConfig, p: &Plugin) -> Result<LaunchSpec, ahp_mcp_host::error::HostError> {
    resolve_stdio(cfg, &p.vars, &host_base_env(), EnvPolicy::AllowList)
}

fn env_value<'a>(spec: &'a LaunchSpec, name: &str) -> Option<&'a OsStr> {
    spec.env
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

#[test]
fn dot_command_resolves_inside_root() {
    let p = plugin();
    let spec = resolve(&stdio("./bin/server"), &p).unwrap();
    let expected = p
        .vars
        .plugin_root
        .join("bin/server")
        .canonicalize()
        .unwrap();
    assert_eq!(spec.program, expected);
}

#[test]
fn dot_command_escaping_with_dotdot_is_refused() {
    let p = plugin();
    let err = resolve(&stdio("./../outside/tool"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandOutsideRoot);
    assert!(err.message.contains("./../outside/tool"), "{}", err.message);
    let err = resolve(&stdio("./bin/../../outside/tool"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandOutsideRoot);
}

#[cfg(unix)]
#[test]
fn dot_command_escaping_through_symlink_is_refused() {
    let p = plugin();
    let link = p.vars.plugin_root.join("bin/linked");
    std::os::unix::fs::symlink(p.tmp.path().join("outside/tool"), &link).unwrap();
    let err = resolve(&stdio("./bin/linked"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandOutsideRoot);
    // A symlinked directory pointing outside is refused as well.
    std::os::unix::fs::symlink(p.tmp.path().join("outside"), p.vars.plugin_root.join("ext"))
        .unwrap();
    assert_eq!(
        resolve(&stdio("./ext/tool"), &p).unwrap_err().code,
        ErrorCode::CommandOutsideRoot
    );
    // A symlink that stays inside the root is fine.
    std::os::unix::fs::symlink(
        p.vars.plugin_root.join("bin/server"),
        p.vars.plugin_root.join("s"),
    )
    .unwrap();
    assert!(resolve(&stdio("./s"), &p).is_ok());
}

#[test]
fn missing_dot_command_is_not_found() {
    let p = plugin();
    let err = resolve(&stdio("./bin/nope"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandNotFound);
    assert!(err.message.contains("./bin/nope"), "{}", err.message);
}

#[cfg(unix)]
#[test]
fn bare_command_resolves_through_host_path() {
    let p = plugin();
    let spec = resolve(&stdio("sh"), &p).unwrap();
    assert!(
        spec.program.is_absolute() && spec.program.is_file(),
        "{:?}",
        spec.program
    );
    assert_eq!(spec.program.file_name(), Some(OsStr::new("sh")));
}

#[cfg(unix)]
#[test]
fn configured_path_does_not_affect_bare_resolution() {
    let p = plugin();
    let mut cfg = stdio("server");
    // The plugin points PATH at its own bin/: resolution must ignore it.
    cfg.env.insert(
        "PATH".into(),
        p.vars.plugin_root.join("bin").to_string_lossy().into(),
    );
    let err = resolve(&cfg, &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandNotFound);
    assert!(err.message.contains("\"server\""), "{}", err.message);
    // …but the child still receives the configured PATH.
    let mut cfg = stdio("sh");
    cfg.env.insert("PATH".into(), "/nowhere".into());
    let spec = resolve(&cfg, &p).unwrap();
    assert_eq!(env_value(&spec, "PATH"), Some(OsStr::new("/nowhere")));
}

#[test]
fn bare_command_not_found() {
    let p = plugin();
    let err = resolve(&stdio("definitely-not-a-real-command-4f1c"), &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandNotFound);
    assert!(err.message.contains("definitely-not-a-real-command-4f1c"));
}

#[test]
fn absolute_command_must_exist() {
    let p = plugin();
    let abs = p.tmp.path().join("outside/tool");
    assert_eq!(
        resolve(&stdio(abs.to_str().unwrap()), &p).unwrap().program,
        abs
    );
    let missing = p.tmp.path().join("outside/missing");
    assert_eq!(
        resolve(&stdio(missing.to_str().unwrap()), &p)
            .unwrap_err()
            .code,
        ErrorCode::CommandNotFound
    );
}

#[test]
fn plugin_variables_cannot_be_spoofed() {
    let p = plugin();
    let mut cfg = stdio("./bin/server");
    cfg.env.insert("PLUGIN_ROOT".into(), "/evil/root".into());
    cfg.env.insert("PLUGIN_DATA".into(), "/evil/data".into());
    let base = vec![(OsString::from("PLUGIN_DATA"), OsString::from("/ambient"))];
    for policy in [EnvPolicy::Inherit, EnvPolicy::AllowList] {
        let spec = resolve_stdio(&cfg, &p.vars, &base, policy).unwrap();
        assert_eq!(
            env_value(&spec, "PLUGIN_ROOT"),
            Some(p.vars.plugin_root.as_os_str())
        );
        assert_eq!(
            env_value(&spec, "PLUGIN_DATA"),
            Some(p.vars.plugin_data.as_os_str())
        );
        let count = |n: &str| spec.env.iter().filter(|(k, _)| k == n).count();
        assert_eq!((count("PLUGIN_ROOT"), count("PLUGIN_DATA")), (1, 1));
        let last: Vec<&OsString> = spec.env.iter().rev().take(2).map(|(k, _)| k).collect();
        assert_eq!(last, ["PLUGIN_DATA", "PLUGIN_ROOT"]);
    }
}

#[test]
fn allow_list_drops_ambient_secrets_inherit_keeps_them() {
    let p = plugin();
    let base: Vec<(OsString, OsString)> = [
        ("HOME", "/home/u"),
        ("OPENAI_API_KEY", "sk-x"),
        ("LC_ALL", "C"),
    ]
    .iter()
    .map(|(k, v)| (k.into(), v.into()))
    .collect();
    let spec = resolve_stdio(&stdio("./bin/server"), &p.vars, &base, EnvPolicy::AllowList).unwrap();
    assert_eq!(env_value(&spec, "OPENAI_API_KEY"), None);
    assert_eq!(env_value(&spec, "HOME"), Some(OsStr::new("/home/u")));
    assert_eq!(env_value(&spec, "LC_ALL"), Some(OsStr::new("C")));
    let spec = resolve_stdio(&stdio("./bin/server"), &p.vars, &base, EnvPolicy::Inherit).unwrap();
    assert_eq!(env_value(&spec, "OPENAI_API_KEY"), Some(OsStr::new("sk-x")));
}

#[test]
fn args_env_cwd_are_expanded_command_is_not() {
    let p = plugin();
    let mut cfg = stdio("./bin/server");
    cfg.args = vec![
        "--root=${PLUGIN_ROOT}".into(),
        "${PLUGIN_DATA}/db".into(),
        "$HOME".into(),
    ];
    cfg.env.insert("DB".into(), "${PLUGIN_DATA}/db".into());
    cfg.cwd = Some("${PLUGIN_ROOT}/work".into());
    let spec = resolve(&cfg, &p).unwrap();
    let root = p.vars.plugin_root.to_str().unwrap();
    let data = p.vars.plugin_data.to_str().unwrap();
    assert_eq!(
        spec.args,
        [
            format!("--root={root}"),
            format!("{data}/db"),
            "$HOME".into()
        ]
    );
    assert_eq!(
        env_value(&spec, "DB"),
        Some(OsStr::new(&format!("{data}/db")))
    );
    assert_eq!(spec.cwd, PathBuf::from(format!("{root}/work")));
}

#[cfg(unix)]
#[test]
fn expansion_is_single_pass() {
    // The plugin root's own path contains the text "${PLUGIN_DATA}".
    let p = plugin_at("${PLUGIN_DATA}");
    let mut cfg = stdio("./bin/server");
    cfg.args = vec!["${PLUGIN_ROOT}".into()];
    let spec = resolve(&cfg, &p).unwrap();
    assert_eq!(spec.args, [p.vars.plugin_root.to_str().unwrap()]);
    assert!(spec.args[0].ends_with("/${PLUGIN_DATA}"));
}

#[test]
fn cwd_defaults_to_plugin_root() {
    let p = plugin();
    let spec = resolve(&stdio("./bin/server"), &p).unwrap();
    assert_eq!(spec.cwd, p.vars.plugin_root);
}

#[test]
fn relative_cwd_resolves_against_root_and_missing_cwd_fails() {
    let p = plugin();
    let mut cfg = stdio("./bin/server");
    cfg.cwd = Some("work".into());
    assert_eq!(
        resolve(&cfg, &p).unwrap().cwd,
        p.vars.plugin_root.join("work")
    );
    cfg.cwd = Some("${PLUGIN_DATA}/not-created".into());
    let err = resolve(&cfg, &p).unwrap_err();
    assert_eq!(err.code, ErrorCode::SpawnFailed);
    assert!(err.message.contains("not-created"), "{}", err.message);
}

#[test]
fn plugin_data_dir_is_created_sanitized_and_survives() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("plugin-data");
    let dir = ensure_plugin_data_dir(&base, "acme.tools").unwrap();
    assert_eq!(dir, base.join("acme.tools"));
    assert!(dir.is_dir());
    std::fs::write(dir.join("state.db"), "keep").unwrap();
    assert_eq!(ensure_plugin_data_dir(&base, "acme.tools").unwrap(), dir);
    assert_eq!(
        std::fs::read_to_string(dir.join("state.db")).unwrap(),
        "keep"
    );

    let slash = ensure_plugin_data_dir(&base, "acme/tools").unwrap();
    let colon = ensure_plugin_data_dir(&base, "acme:tools").unwrap();
    assert_eq!(
        slash.parent(),
        Some(base.as_path()),
        "no nested directory from '/'"
    );
    assert_ne!(slash, colon);
    assert!(slash
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("acme_tools-"));
    let up = ensure_plugin_data_dir(&base, "..").unwrap();
    assert_eq!(
        up.parent(),
        Some(base.as_path()),
        "'..' stays inside data_dir"
    );
}
