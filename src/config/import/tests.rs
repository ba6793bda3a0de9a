//! Tests of the import on sample files copied from each project's own
//! documentation (`tests/fixtures/import/`, sources in its `SOURCES.md`),
//! malformed input, unknown fields and variable resolution.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::*;

fn sample(file: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/import/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn import(format: ImportFormat, file: &str) -> Imported {
    import_config(format, &sample(file), file)
}

/// (name, config) of every server.
fn configs(imported: &Imported) -> Vec<(String, Value)> {
    let row = |s: &ImportedServer| (s.name.clone(), s.config.clone());
    imported.servers.iter().map(row).collect()
}

/// (code, severity, server, field) of every diagnostic.
fn diagnostics(imported: &Imported) -> Vec<(&'static str, Severity, Option<&str>, Option<&str>)> {
    imported
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code.as_str(),
                d.severity,
                d.server.as_deref(),
                d.field.as_deref(),
            )
        })
        .collect()
}

fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
#[test]
fn vscode_input_variables_become_secret_inputs_and_resolve() {
    let imported = import(ImportFormat::VsCode, "vscode-perplexity.json");
    assert!(
        imported.diagnostics.is_empty(),
        "{:?}",
        imported.diagnostics
    );
    let config = json!({"type": "stdio", "command": "npx", "args": ["-y", "server-perplexity-ask"],
        "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}});
    assert_eq!(configs(&imported), [("perplexity".to_owned(), config)]);
    let [variable] = &imported.variables[..] else {
        panic!("{:?}", imported.variables)
    };
    assert_eq!(
        (
            variable.id.as_str(),
            variable.kind,
            variable.secret,
            variable.required
        ),
        ("input:perplexity-key", VariableKind::Input, true, true)
    );
    assert_eq!(variable.description.as_deref(), Some("Perplexity API Key"));
    let server = &imported.servers[0];
    assert_eq!((server.line, server.column), (11, 9));
    let secret = ["input:perplexity-key".to_owned()];
    let resolved = resolve_server(
        server,
        &values(&[("input:perplexity-key", "pplx-123")]),
        &secret,
    )
    .unwrap();
    assert_eq!(resolved.config["env"]["PERPLEXITY_API_KEY"], "pplx-123");
    assert_eq!(resolved.secrets, ["pplx-123"]);
    let err = resolve_server(server, &BTreeMap::new(), &secret).unwrap_err();
    assert_eq!(
        err,
        "server \"perplexity\": variable ${input:perplexity-key} has no value"
    );
}

// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (JSONC: comments, trailing comma)
#[test]
fn vscode_samples_map_transports_oauth_and_report_the_sandbox() {
    let imported = import(ImportFormat::VsCode, "vscode-servers.jsonc");
    assert_eq!(
        configs(&imported),
        [
            (
                "memory".to_owned(),
                json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]})
            ),
            (
                "context7".to_owned(),
                json!({"type": "streamable-http", "url": "https://mcp.context7.com/mcp"})
            ),
            (
                "slack".to_owned(),
                json!({"type": "streamable-http", "url": "https://mcp.slack.com/mcp"})
            ),
            (
                "myServer".to_owned(),
                json!({"type": "stdio", "command": "npx", "args": ["-y", "@example/mcp-server"]})
            ),
        ]
    );
    assert_eq!(
        imported.servers[2].oauth_client_id.as_deref(),
        Some("example-client-id")
    );
    let warning = Severity::Warning;
    assert_eq!(
        diagnostics(&imported),
        [
            (
                "not_supported",
                warning,
                Some("myServer"),
                Some("sandboxEnabled")
            ),
            ("not_supported", warning, Some("myServer"), Some("sandbox")),
        ]
    );
    let d = &imported.diagnostics[0];
    assert_eq!(
        (d.line, d.column, d.file.as_str()),
        (28, 13, "vscode-servers.jsonc")
    );
    assert_eq!(d.message, "server \"myServer\": field \"sandboxEnabled\": not supported by this host (no sandbox for stdio servers here); ignored");
}

// https://code.claude.com/docs/en/mcp
#[test]
fn claude_code_expands_env_with_defaults_through_variables() {
    let imported = import(ImportFormat::ClaudeCode, "claude-code-shared.json");
    assert_eq!(
        configs(&imported),
        [(
            "shared-server".to_owned(),
            json!({"type": "streamable-http", "url": "https://example.com/mcp"})
        )]
    );
    let imported = import(ImportFormat::ClaudeCode, "claude-code-api-server.json");
    assert!(
        imported.diagnostics.is_empty(),
        "{:?}",
        imported.diagnostics
    );
    // Each use keeps its own default, in its placeholder.
    let config = json!({"type": "streamable-http", "url": "${env:API_BASE_URL:-https://api.example.com}/mcp", "headers": {"Authorization": "Bearer ${env:API_KEY}"}});
    assert_eq!(configs(&imported), [("api-server".to_owned(), config)]);
    let vars: Vec<(&str, bool, bool, Option<&str>)> = imported
        .variables
        .iter()
        .map(|v| (v.id.as_str(), v.secret, v.required, v.default.as_deref()))
        .collect();
    assert_eq!(
        vars,
        [
            ("env:API_BASE_URL", false, false, None),
            ("env:API_KEY", true, true, None)
        ]
    );
    let values = values(&[
        ("env:API_BASE_URL", "https://api.example.com"),
        ("env:API_KEY", "k-1"),
    ]);
    let secret = ["env:API_KEY".to_owned()];
    let resolved = resolve_server(&imported.servers[0], &values, &secret).unwrap();
    assert_eq!(resolved.config["url"], "https://api.example.com/mcp");
    assert_eq!(resolved.config["headers"]["Authorization"], "Bearer k-1");
    assert_eq!(resolved.secrets, ["k-1"]);
    // Without a value, the use's own default.
    let only_key = super::tests::values(&[("env:API_KEY", "k-1")]);
    let resolved = resolve_server(&imported.servers[0], &only_key, &secret).unwrap();
    assert_eq!(resolved.config["url"], "https://api.example.com/mcp");
}

// https://modelcontextprotocol.io/quickstart/user
#[test]
fn claude_desktop_is_stdio_with_literal_values() {
    let imported = import(
        ImportFormat::ClaudeDesktop,
        "claude-desktop-filesystem.json",
    );
    assert!(
        imported.diagnostics.is_empty(),
        "{:?}",
        imported.diagnostics
    );
    let args = json!([
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/username/Desktop",
        "/Users/username/Downloads"
    ]);
    assert_eq!(
        configs(&imported),
        [(
            "filesystem".to_owned(),
            json!({"type": "stdio", "command": "npx", "args": args})
        )]
    );
    let text = r#"{"mcpServers": {"web": {"type": "http", "url": "https://x.example/mcp"}}, "globalShortcut": "Ctrl+Space"}"#;
    let imported = import_config(ImportFormat::ClaudeDesktop, text, "d.json");
    let error = Severity::Error;
    assert_eq!(
        diagnostics(&imported)[..2],
        [
            (
                "invalid_entry",
                Severity::Warning,
                Some("web"),
                Some("type")
            ),
            ("invalid_entry", Severity::Warning, Some("web"), Some("url")),
        ]
    );
    assert_eq!(
        diagnostics(&imported)[2],
        ("invalid_entry", error, Some("web"), Some("command"))
    );
}

// https://cursor.com/docs/context/mcp
#[test]
fn cursor_samples_and_its_variables() {
    let imported = import(ImportFormat::Cursor, "cursor-stdio.json");
    assert_eq!(
        configs(&imported),
        [(
            "server-name".to_owned(),
            json!({"type": "stdio", "command": "npx", "args": ["-y", "mcp-server"], "env": {"API_KEY": "value"}})
        )]
    );
    let imported = import(ImportFormat::Cursor, "cursor-remote.json");
    assert_eq!(
        configs(&imported),
        [(
            "server-name".to_owned(),
            json!({"type": "streamable-http", "url": "http://localhost:3000/mcp", "headers": {"API_KEY": "value"}})
        )]
    );
    let text = r#"{"mcpServers": {"gh": {"command": "${userHome}/bin/gh-mcp", "env": {"T": "${env:GH_TOKEN}"}, "envFile": ".env"},
        "bad": {"command": "x", "args": ["${input:nope}"]}}}"#;
    let imported = import_config(ImportFormat::Cursor, text, "c.json");
    let ids: Vec<&str> = imported.variables.iter().map(|v| v.id.as_str()).collect();
    assert_eq!(ids, ["userHome", "env:GH_TOKEN"]);
    assert_eq!(
        diagnostics(&imported),
        [
            (
                "not_supported",
                Severity::Warning,
                Some("gh"),
                Some("envFile")
            ),
            (
                "invalid_entry",
                Severity::Error,
                Some("bad"),
                Some("args[0]")
            ),
        ]
    );
    assert!(imported.diagnostics[1]
        .message
        .contains("${input:nope} is not a variable this host can ask the app for"));
}

// https://github.com/openai/codex/blob/main/docs/config.md ("MCP integration")
#[test]
fn codex_tables_map_env_references_tool_filters_and_the_tool_timeout() {
    let imported = import(ImportFormat::Codex, "codex-config.toml");
    let stdio = json!({"type": "stdio", "command": "npx", "args": ["-y", "mcp-server"],
        "env": {"API_KEY": "value", "API_KEY2": "${env:API_KEY2}"}, "cwd": "/Users/<user>/code/my-server"});
    let http = json!({"type": "streamable-http", "url": "https://mcp.figma.com/mcp", "headers": {
        "HEADER_NAME": "HEADER_VALUE", "HEADER_NAME2": "${env:ENV_VAR2}", "Authorization": "Bearer ${env:ENV_VAR}"}});
    assert_eq!(
        configs(&imported),
        [
            ("server_name".to_owned(), stdio),
            ("figma".to_owned(), http)
        ]
    );
    let figma = &imported.servers[1];
    assert_eq!(
        (figma.enabled, figma.startup_timeout_ms),
        (false, Some(20_000))
    );
    // Codex's tool filter and per-tool timeout map to this host's
    // includeTools / excludeTools and both call limits.
    assert_eq!(
        (&figma.include_tools, &figma.exclude_tools),
        (
            &Some(vec!["search".to_owned(), "summarize".to_owned()]),
            &vec!["search".to_owned()]
        )
    );
    assert_eq!(
        (figma.call_timeout_ms, figma.call_max_total_ms),
        (Some(30_000), Some(30_000))
    );
    let server_name = &imported.servers[0];
    assert_eq!(
        (&server_name.include_tools, server_name.call_timeout_ms),
        (&None, None)
    );
    assert!(
        imported.diagnostics.is_empty(),
        "{:?}",
        imported.diagnostics
    );
    let secret: Vec<(&str, bool)> = imported
        .variables
        .iter()
        .map(|v| (v.id.as_str(), v.secret))
        .collect();
    assert_eq!(
        secret,
        [
            ("env:API_KEY2", true),
            ("env:ENV_VAR2", true),
            ("env:ENV_VAR", true)
        ]
    );
}

#[test]
fn codex_refuses_unknown_keys_and_literal_tokens_per_entry() {
    let text = "[mcp_servers.a]\ncommand = \"a\"\ncolour = \"blue\"\n\n[mcp_servers.b]\nurl = \"https://b.example/mcp\"\nbearer_token = \"sk-123\"\n\n[mcp_servers.c]\ncommand = \"c\"\n";
    let imported = import_config(ImportFormat::Codex, text, "config.toml");
    assert_eq!(
        configs(&imported),
        [("c".to_owned(), json!({"type": "stdio", "command": "c"}))]
    );
    let error = Severity::Error;
    assert_eq!(
        diagnostics(&imported),
        [
            ("invalid_entry", error, Some("a"), Some("colour")),
            ("invalid_entry", error, Some("b"), Some("bearer_token")),
        ]
    );
    assert_eq!(
        (imported.diagnostics[0].line, imported.diagnostics[0].column),
        (3, 1)
    );
    assert!(!format!("{:?}", imported.diagnostics).contains("sk-123"));
}

#[test]
fn codex_tool_lists_are_arrays_of_names_and_the_timeout_a_number() {
    let text = "[mcp_servers.a]\ncommand = \"a\"\nenabled_tools = \"search\"\n\n[mcp_servers.b]\ncommand = \"b\"\ndisabled_tools = [\"ok\", \"\"]\n\n[mcp_servers.c]\ncommand = \"c\"\ntool_timeout_sec = \"1\"\n\n[mcp_servers.d]\ncommand = \"d\"\ntool_timeout_sec = 1.5\nenabled_tools = []\n";
    let imported = import_config(ImportFormat::Codex, text, "config.toml");
    let error = Severity::Error;
    assert_eq!(
        diagnostics(&imported),
        [
            ("invalid_entry", error, Some("a"), Some("enabled_tools")),
            ("invalid_entry", error, Some("b"), Some("disabled_tools[1]")),
            ("invalid_entry", error, Some("c"), Some("tool_timeout_sec")),
        ]
    );
    let d = &imported.servers[0];
    assert_eq!(d.name, "d");
    assert_eq!(
        (d.call_timeout_ms, &d.include_tools),
        (Some(1_500), &Some(vec![]))
    );
}

#[test]
fn codex_keys_left_aside_are_named_not_dropped() {
    let text = "[mcp_servers.a]\ncommand = \"a\"\nenv_vars = [\"X\", { name = \"Y\", source = \"remote\" }]\nstartup_timeout_ms = 5000\nstartup_timeout_sec = 9\n";
    let imported = import_config(ImportFormat::Codex, text, "config.toml");
    let (_, config) = &configs(&imported)[0];
    assert_eq!(config["env"], json!({"X": "${env:X}", "Y": "${env:Y}"}));
    assert_eq!(imported.servers[0].startup_timeout_ms, Some(5000));
    let warning = Severity::Warning;
    assert_eq!(
        diagnostics(&imported),
        [
            (
                "not_supported",
                warning,
                Some("a"),
                Some("env_vars[1].source")
            ),
            (
                "not_supported",
                warning,
                Some("a"),
                Some("startup_timeout_sec")
            ),
        ]
    );
    assert_eq!(
        (imported.diagnostics[1].line, imported.diagnostics[1].column),
        (5, 23)
    );
}

#[test]
fn malformed_files_name_line_and_column() {
    let cases = [
        (
            ImportFormat::ClaudeCode,
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}",
            3,
            25,
        ),
        (
            ImportFormat::Cursor,
            "{\"mcpServers\": {\"a\": {\"command\": \"x\"}, \"a\": {}}}",
            1,
            40,
        ),
        (
            ImportFormat::Codex,
            "[mcp_servers.a]\ncommand = \"x\"\nargs = [\"y\"\n",
            3,
            12,
        ),
        (ImportFormat::VsCode, "{\"servers\": []}", 1, 13),
    ];
    for (format, text, line, column) in cases {
        let imported = import_config(format, text, "f");
        assert!(imported.servers.is_empty(), "{format:?}");
        let [d] = &imported.diagnostics[..] else {
            panic!("{format:?}: {:?}", imported.diagnostics)
        };
        assert_eq!(
            (d.code.as_str(), d.severity, d.line, d.column),
            ("invalid_config", Severity::Error, line, column),
            "{format:?}: {}",
            d.message
        );
    }
}

#[test]
fn an_unknown_field_is_named_and_a_broken_sibling_costs_only_itself() {
    let text = r#"{"mcpServers": {
        "one": {"command": "node", "colour": "blue"},
        "two": {"command": 5},
        "three": {"type": "sse", "url": "https://x.example/sse"},
        "four": {"url": "https://x.example/mcp"}
    }}"#;
    let imported = import_config(ImportFormat::ClaudeCode, text, "p/.mcp.json");
    let names: Vec<&str> = imported.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["one", "three", "four"]);
    assert_eq!(
        imported.servers[1].config,
        json!({"type": "sse", "url": "https://x.example/sse"})
    );
    assert_eq!(
        diagnostics(&imported),
        [
            (
                "invalid_entry",
                Severity::Warning,
                Some("one"),
                Some("colour")
            ),
            (
                "invalid_entry",
                Severity::Error,
                Some("two"),
                Some("command")
            ),
        ]
    );
    assert_eq!(
        imported.diagnostics[0].message,
        "server \"one\": field \"colour\": unknown field for Claude Code .mcp.json; ignored"
    );
    assert_eq!(
        (imported.diagnostics[0].line, imported.diagnostics[0].column),
        (2, 36)
    );
}

#[test]
fn resolution_is_single_pass_and_never_reads_the_environment() {
    let text = r#"{"mcpServers": {"a": {"command": "node", "args": ["${X}", "${HOME}"]}}}"#;
    let imported = import_config(ImportFormat::ClaudeCode, text, "f");
    let server = &imported.servers[0];
    let err = resolve_server(server, &values(&[("env:X", "v")]), &[]).unwrap_err();
    assert!(err.contains("${env:HOME} has no value"), "{err}");
    let resolved =
        resolve_server(server, &values(&[("env:X", "v"), ("env:HOME", "/h")]), &[]).unwrap();
    assert_eq!(resolved.config["args"], json!(["v", "/h"]));
    // A value is never scanned again: its `${…}` (even a plugin variable)
    // reaches the server verbatim, here and at launch (a literal entry).
    let resolved = resolve_server(
        server,
        &values(&[("env:X", "${env:HOME}"), ("env:HOME", "${PLUGIN_DATA}")]),
        &[],
    )
    .unwrap();
    assert_eq!(
        resolved.config["args"],
        json!(["${env:HOME}", "${PLUGIN_DATA}"])
    );
    let valid = crate::config::validate_literal_entry_value("a", &resolved.config);
    assert!(
        matches!(valid, Ok(crate::config::ServerConfig::Stdio(ref c)) if c.literal),
        "{valid:?}"
    );
    // A control character in a value is refused, naming the variable.
    let err = resolve_server(
        server,
        &values(&[("env:X", "a\u{1}b"), ("env:HOME", "/h")]),
        &[],
    )
    .unwrap_err();
    assert_eq!(
        err,
        "server \"a\": the value of variable ${env:X} holds a control character"
    );
}

/// The error diagnostics' fields and messages (the red-team rounds' tests).
fn errors(imported: &Imported) -> Vec<(Option<&str>, &str)> {
    let errors = imported.diagnostics.iter();
    let errors = errors.filter(|d| d.severity == Severity::Error);
    errors
        .map(|d| (d.field.as_deref(), d.message.as_str()))
        .collect()
}

mod fixes;
mod registry;
mod round2;
mod round3;
