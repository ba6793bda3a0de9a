//! The OAuth settings an import carries beside the client id (issue 31
//! item 5): Claude Code's `oauth.{callbackPort, authServerMetadataUrl,
//! scopes}`, Codex's `scopes`, `oauth_resource` and `oauth.callback_port`.

use serde_json::json;

use super::*;

#[test]
fn claude_code_oauth_settings_are_imported() {
    let text = json!({"mcpServers": {
        "remote": {
            "type": "http",
            "url": "https://mcp.example.test/mcp",
            "oauth": {
                "clientId": "app",
                "callbackPort": 8123,
                "authServerMetadataUrl": "https://as.example.test/.well-known/oauth-authorization-server",
                "scopes": "read write",
                "somethingElse": true,
            },
        },
    }})
    .to_string();
    let imported = import_config(ImportFormat::ClaudeCode, &text, ".mcp.json");
    let server = &imported.servers[0];
    assert_eq!(server.oauth_client_id.as_deref(), Some("app"));
    assert_eq!(
        server.oauth,
        ImportedOAuth {
            scopes: vec!["read".into(), "write".into()],
            auth_server_metadata_url: Some(
                "https://as.example.test/.well-known/oauth-authorization-server".into()
            ),
            callback_port: Some(8123),
            resource: None,
        }
    );
    let fields: Vec<_> = imported
        .diagnostics
        .iter()
        .map(|d| d.field.as_deref())
        .collect();
    assert_eq!(fields, [Some("oauth.somethingElse")]);
    let shown = serde_json::to_value(server).unwrap();
    assert_eq!(
        shown["oauth"],
        json!({"scopes": ["read", "write"], "authServerMetadataUrl": "https://as.example.test/.well-known/oauth-authorization-server", "callbackPort": 8123})
    );
}

#[test]
fn codex_scopes_resource_and_callback_port_are_imported() {
    let text = r#"
[mcp_servers.remote]
url = "https://mcp.example.test/mcp"
scopes = ["read", "write"]
oauth_resource = "https://mcp.example.test/"

[mcp_servers.remote.oauth]
client_id = "codex-app"
callback_port = 5555
"#;
    let imported = import_config(ImportFormat::Codex, text, "config.toml");
    assert_eq!(imported.diagnostics.len(), 0, "{:?}", imported.diagnostics);
    let server = &imported.servers[0];
    assert_eq!(server.oauth_client_id.as_deref(), Some("codex-app"));
    assert_eq!(server.oauth.scopes, ["read", "write"]);
    assert_eq!(
        server.oauth.resource.as_deref(),
        Some("https://mcp.example.test/")
    );
    assert_eq!(server.oauth.callback_port, Some(5555));
}

#[test]
fn a_server_without_settings_has_no_oauth_member_and_wrong_types_are_named() {
    let plain = json!({"mcpServers": {"s": {"type": "http", "url": "https://m.example.test/mcp"}}});
    let imported = import_config(ImportFormat::ClaudeCode, &plain.to_string(), ".mcp.json");
    let shown = serde_json::to_value(&imported.servers[0]).unwrap();
    assert!(shown.get("oauth").is_none(), "{shown}");
    for (oauth, field) in [
        (json!({"callbackPort": 70000}), "oauth.callbackPort"),
        (json!({"callbackPort": "8080"}), "oauth.callbackPort"),
        (json!({"scopes": [1]}), "oauth.scopes[0]"),
        (
            json!({"authServerMetadataUrl": 5}),
            "oauth.authServerMetadataUrl",
        ),
    ] {
        let text = json!({"mcpServers": {"s": {"type": "http", "url": "https://m.example.test/mcp", "oauth": oauth}}});
        let imported = import_config(ImportFormat::ClaudeCode, &text.to_string(), ".mcp.json");
        assert!(imported.servers.is_empty(), "{field}");
        let named: Vec<_> = imported
            .diagnostics
            .iter()
            .map(|d| d.field.as_deref())
            .collect();
        assert_eq!(named, [Some(field)], "{field}");
    }
}
