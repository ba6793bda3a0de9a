//! Which servers can host MCP Apps, and the `mcpApp.capabilities` the host
//! advertises for them (AHP `AhpMcpUiHostCapabilities`, the server-derived
//! subset of the MCP Apps `HostCapabilities`, SEP-1865).
//!
//! A server hosts Apps when it declares the `io.modelcontextprotocol/ui`
//! extension in its capabilities, or when one of its tools links a `ui://`
//! resource from `_meta.ui.resourceUri` (servers built with the ext-apps
//! helpers do the second without the first). Each capability is advertised
//! only when the host really serves it on the `mcp://` channel:
//!
//! | capability | when | served methods |
//! | --- | --- | --- |
//! | `serverTools` (`listChanged` when the server declares it) | the server declares `tools` | `tools/list`, `tools/call` |
//! | `serverResources` (same) | the server declares `resources` | `resources/list`, `resources/templates/list`, `resources/read` |
//! | `logging: {}` | the server declares `logging` | `logging/setLevel`; the App's `notifications/message` (host log) |
//! | `sampling: {}` | the app registered a `sampling` handler | `sampling/createMessage` (answered by that handler) |
//!
//! A connection without stored capabilities (see
//! [`crate::supervisor`]'s capability rule) counts as declaring `tools` and
//! `resources` without `listChanged`, and not `logging`.

use ahp_types::state::AhpMcpUiHostCapabilities;
use rmcp::model::ServerCapabilities;
use serde_json::{json, Map, Value};

use super::EXTENSION_ID;
use crate::catalogue::{ServerTool, ServerTools};
use crate::json::json_len;

/// The scheme of an App's UI resource URI (`ui://…`).
pub const UI_SCHEME: &str = "ui://";

/// `_meta.ui` of a tool that links a UI resource: the object, when it has a
/// string `resourceUri` starting with `ui://`.
#[must_use]
pub fn tool_ui_meta(tool: &ServerTool) -> Option<&Map<String, Value>> {
    let ui = tool.ui_meta()?;
    let uri = ui.get("resourceUri")?.as_str()?;
    uri.starts_with(UI_SCHEME).then_some(ui)
}

/// What an App tool call carries on its AHP tool-call actions (AHP "MCP
/// Apps › Identifying an App tool call").
#[derive(Debug, Clone, PartialEq)]
pub enum CallUi {
    /// Not an App tool: the actions carry no `_meta.ui`.
    None,
    /// The tool's `_meta.ui`, verbatim.
    Ui(Map<String, Value>),
    /// The tool's `_meta.ui` is this many bytes of JSON, more than the
    /// bound: it is left off.
    TooLarge(usize),
}

/// The `_meta.ui` an AHP tool call of `tool` carries: the tool's, verbatim,
/// when it links a `ui://` resource ([`tool_ui_meta`]) and its JSON is at
/// most `max_bytes` (`limits.maxAppUiMetaBytes`).
#[must_use]
pub fn call_ui(tool: &ServerTool, max_bytes: usize) -> CallUi {
    let Some(ui) = tool_ui_meta(tool) else {
        return CallUi::None;
    };
    match json_len(ui) {
        n if n > max_bytes => CallUi::TooLarge(n),
        _ => CallUi::Ui(ui.clone()),
    }
}

/// Whether a tool of `tools` links `uri` from `_meta.ui.resourceUri`.
#[must_use]
pub fn links_ui_resource(tools: &ServerTools, uri: &str) -> bool {
    tools.tools.iter().any(|t| {
        tool_ui_meta(t)
            .and_then(|ui| ui.get("resourceUri"))
            .and_then(Value::as_str)
            == Some(uri)
    })
}

/// Whether the server can host Apps: it declares the extension, or a tool
/// links a `ui://` resource.
#[must_use]
pub fn hosts_apps(declared: Option<&ServerCapabilities>, tools: Option<&ServerTools>) -> bool {
    let declares = declared
        .and_then(|c| c.extensions.as_ref())
        .is_some_and(|e| e.contains_key(EXTENSION_ID));
    declares || tools.is_some_and(|t| t.tools.iter().any(|t| tool_ui_meta(t).is_some()))
}

/// The `mcpApp.capabilities` of a server that hosts Apps (`None` when it
/// does not; see the module doc for each member). `sampling` says whether
/// the app registered a `sampling` handler.
#[must_use]
pub fn host_capabilities(
    declared: Option<&ServerCapabilities>,
    tools: Option<&ServerTools>,
    sampling: bool,
) -> Option<AhpMcpUiHostCapabilities> {
    if !hosts_apps(declared, tools) {
        return None;
    }
    let list = |declared: bool, list_changed: Option<bool>| {
        declared.then(|| match list_changed {
            Some(true) => json!({ "listChanged": true }),
            _ => json!({}),
        })
    };
    let (tools, resources, logging) = match declared {
        Some(c) => (
            list(
                c.tools.is_some(),
                c.tools.as_ref().and_then(|t| t.list_changed),
            ),
            list(
                c.resources.is_some(),
                c.resources.as_ref().and_then(|r| r.list_changed),
            ),
            c.logging.is_some(),
        ),
        None => (Some(json!({})), Some(json!({})), false),
    };
    Some(AhpMcpUiHostCapabilities {
        server_tools: tools,
        server_resources: resources,
        logging: logging.then(Map::new),
        sampling: sampling.then(|| json!({})),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;

    fn tools(raw: Vec<Value>) -> ServerTools {
        ServerTools::build("s", raw, &Limits::default()).unwrap()
    }

    fn app_tool() -> Value {
        json!({"name": "show", "inputSchema": {"type": "object"},
               "_meta": {"ui": {"resourceUri": "ui://show/view.html"}}})
    }

    fn declared(v: Value) -> ServerCapabilities {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_tool_linking_a_ui_resource_makes_an_app_server() {
        let plain = tools(vec![
            json!({"name": "t", "inputSchema": {"type": "object"}}),
        ]);
        let caps = declared(json!({"tools": {}}));
        assert!(!hosts_apps(Some(&caps), Some(&plain)));
        assert!(host_capabilities(Some(&caps), Some(&plain), true).is_none());
        let app = tools(vec![app_tool()]);
        assert!(hosts_apps(Some(&caps), Some(&app)));
        assert!(links_ui_resource(&app, "ui://show/view.html"));
        assert!(!links_ui_resource(&app, "ui://other"));
    }

    #[test]
    fn a_call_carries_the_ui_object_verbatim_within_its_bound() {
        let t = tools(vec![
            app_tool(),
            json!({"name": "p", "inputSchema": {"type": "object"}}),
        ]);
        let ui = json!({"resourceUri": "ui://show/view.html"});
        let n = json_len(&ui);
        let CallUi::Ui(kept) = call_ui(&t.tools[0], n) else {
            panic!("kept at exactly the bound");
        };
        assert_eq!(Value::Object(kept), ui);
        assert_eq!(call_ui(&t.tools[0], n - 1), CallUi::TooLarge(n));
        assert_eq!(call_ui(&t.tools[1], n), CallUi::None);
    }

    #[test]
    fn a_non_ui_resource_uri_is_not_an_app() {
        let t = tools(vec![json!({"name": "t", "inputSchema": {"type": "object"},
                                  "_meta": {"ui": {"resourceUri": "https://x/y"}}})]);
        assert!(!hosts_apps(None, Some(&t)));
    }

    #[test]
    fn the_declared_extension_makes_an_app_server() {
        let caps = declared(json!({"extensions": {EXTENSION_ID: {}}}));
        let advertised = host_capabilities(Some(&caps), None, false).unwrap();
        assert_eq!(serde_json::to_value(advertised).unwrap(), json!({}));
    }

    #[test]
    fn capabilities_follow_what_the_server_declares() {
        let app = tools(vec![app_tool()]);
        let caps = declared(json!({"tools": {"listChanged": true}, "resources": {},
                                   "logging": {}}));
        let advertised = host_capabilities(Some(&caps), Some(&app), false).unwrap();
        assert_eq!(
            serde_json::to_value(advertised).unwrap(),
            json!({"serverTools": {"listChanged": true}, "serverResources": {}, "logging": {}})
        );
        let caps = declared(json!({"tools": {}, "resources": {"listChanged": true}}));
        let advertised = host_capabilities(Some(&caps), Some(&app), true).unwrap();
        assert_eq!(
            serde_json::to_value(advertised).unwrap(),
            json!({"serverTools": {}, "serverResources": {"listChanged": true}, "sampling": {}})
        );
    }

    #[test]
    fn no_stored_capabilities_counts_as_tools_and_resources() {
        let app = tools(vec![app_tool()]);
        let advertised = host_capabilities(None, Some(&app), false).unwrap();
        assert_eq!(
            serde_json::to_value(advertised).unwrap(),
            json!({"serverTools": {}, "serverResources": {}})
        );
    }
}
