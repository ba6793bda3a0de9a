//! MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension) as an
//! AHP host serves them (AHP "MCP Servers › MCP Apps"): the extension the
//! host declares to servers when the AHP client declared `mcpApps`.
//!
//! The host opts in with the JS option `mcpApps: true` (the AHP client sent
//! `capabilities.mcpApps` in its `initialize`). Without it the host
//! declares nothing, publishes no `mcpApp` or `channel`, and an App tool
//! call is an ordinary tool call.

pub mod capabilities;
pub mod channels;
pub mod policy;
pub mod ui_resource;

use rmcp::model::ClientCapabilities;
use serde_json::{json, Map, Value};

/// The MCP Apps extension identifier (SEP-1865, SEP-1724 `extensions` key).
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an App's HTML View (`text/html;profile=mcp-app`).
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Adds `extensions["io.modelcontextprotocol/ui"] = {mimeTypes:
/// ["text/html;profile=mcp-app"]}` to the client capabilities the host
/// declares: in `initialize` (2025 era) and on every request (2026-07-28,
/// rmcp sends the same capabilities per request).
pub fn declare_ui_extension(capabilities: &mut ClientCapabilities) {
    let settings: Map<String, Value> = match json!({ "mimeTypes": [APP_MIME_TYPE] }) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(EXTENSION_ID.to_owned(), settings);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_declares_the_app_mime_type() {
        let mut caps = ClientCapabilities::default();
        declare_ui_extension(&mut caps);
        let json = serde_json::to_value(&caps).unwrap();
        assert_eq!(
            json["extensions"][EXTENSION_ID]["mimeTypes"],
            json!([APP_MIME_TYPE])
        );
    }
}
