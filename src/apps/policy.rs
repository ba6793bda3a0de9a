//! What an `mcp://` channel serves (AHP "MCP Servers › MCP Apps", the
//! `mcp://` channel; `ahp-digest.md` §5): pure decisions, no I/O.
//!
//! The served methods are the union of what the channel's
//! `mcpApp.capabilities` advertise (the table of
//! [`super::capabilities`]'s module doc):
//!
//! | capability | App → host | how the host serves it |
//! | --- | --- | --- |
//! | `serverTools` | `tools/list`, `tools/call` | forwarded to the server |
//! | `serverResources` | `resources/list`, `resources/templates/list`, `resources/read` | forwarded |
//! | `logging` | `logging/setLevel` (request), `notifications/message` (notification) | forwarded; a host `log` record |
//! | `sampling` | `sampling/createMessage` | answered by the app's `sampling` handler |
//! | any | `resources/read` of a `ui://` URI | the UI resource gate ([`super::ui_resource`]) |
//! | any | `notifications/cancelled` | cancels one of the channel's own requests |
//!
//! Server → App notifications forwarded: `notifications/tools/list_changed`
//! when `serverTools.listChanged` is `true`, `notifications/resources/list_changed`
//! when `serverResources.listChanged` is `true` ([`forwards`]).
//!
//! Never carried, whatever the capabilities: the MCP handshake
//! (`initialize`, `notifications/initialized`, `server/discover`: the
//! host's own connection is already set up) and the methods whose state AHP
//! mirrors (tool-execution lifecycle: `tasks/*`, `notifications/tasks/*`,
//! `notifications/progress`; the client's roots:
//! `notifications/roots/list_changed`); clients use AHP actions for those.
//! A channel without capabilities (its server does not host Apps) serves
//! nothing.

use ahp_types::state::AhpMcpUiHostCapabilities;
use serde_json::{Map, Value};

use super::capabilities::UI_SCHEME;

/// Whether a channel message expects an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A JSON-RPC request (it has an `id`): answered exactly once.
    Request,
    /// A JSON-RPC notification (no `id`): never answered.
    Notification,
}

/// How the host serves a message the channel accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Sent to the server on its live connection; its answer comes back.
    Forward,
    /// `resources/read` of a `ui://` URI: read, then checked by the UI
    /// resource gate ([`super::ui_resource`]).
    ReadUi,
    /// `sampling/createMessage`: answered by the app's `sampling` handler.
    Sample,
    /// `notifications/message`: becomes a host `log` record (MCP defines no
    /// client → server `notifications/message`).
    Log,
    /// `notifications/cancelled`: cancels one of the channel's requests.
    Cancel,
}

/// Why a method is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The handshake: the host's connection is already initialized.
    Handshake,
    /// State AHP mirrors (tool-execution lifecycle, roots).
    Mirrored,
    /// Not in the union the channel's capabilities advertise.
    NotServed,
}

/// A refused method: the method, why, and what the channel serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The refused method.
    pub method: String,
    /// Why.
    pub why: Refused,
    /// The methods the channel serves ([`served_methods`]).
    pub served: Vec<&'static str>,
}

impl Refusal {
    /// "Method not found" text naming the method, why, and the served
    /// methods (JSON-RPC -32601 on the channel).
    #[must_use]
    pub fn message(&self) -> String {
        let why = match self.why {
            Refused::Handshake => {
                "is never carried on an mcp:// channel (the host's connection to the server is \
                 already initialized)"
            }
            Refused::Mirrored => {
                "is never carried on an mcp:// channel (AHP mirrors that state: use AHP actions)"
            }
            Refused::NotServed => "is not served on this mcp:// channel",
        };
        let served = if self.served.is_empty() {
            "nothing (the server does not host MCP Apps)".to_owned()
        } else {
            self.served.join(", ")
        };
        format!(
            "Method not found: {:?} {why}; it serves {served}",
            self.method
        )
    }
}

/// One row of the table: method, kind, the capability it needs and its route.
struct Row {
    method: &'static str,
    kind: Kind,
    needs: fn(&AhpMcpUiHostCapabilities) -> bool,
    route: Route,
}

fn tools(c: &AhpMcpUiHostCapabilities) -> bool {
    c.server_tools.is_some()
}
fn resources(c: &AhpMcpUiHostCapabilities) -> bool {
    c.server_resources.is_some()
}
fn logging(c: &AhpMcpUiHostCapabilities) -> bool {
    c.logging.is_some()
}
fn sampling(c: &AhpMcpUiHostCapabilities) -> bool {
    c.sampling.is_some()
}
fn any(_: &AhpMcpUiHostCapabilities) -> bool {
    true
}

const fn row(
    method: &'static str,
    kind: Kind,
    needs: fn(&AhpMcpUiHostCapabilities) -> bool,
    route: Route,
) -> Row {
    Row {
        method,
        kind,
        needs,
        route,
    }
}

/// The served surface, in the order [`served_methods`] names it.
const TABLE: [Row; 9] = [
    row("tools/list", Kind::Request, tools, Route::Forward),
    row("tools/call", Kind::Request, tools, Route::Forward),
    row("resources/list", Kind::Request, resources, Route::Forward),
    row(
        "resources/templates/list",
        Kind::Request,
        resources,
        Route::Forward,
    ),
    row("resources/read", Kind::Request, resources, Route::Forward),
    row("logging/setLevel", Kind::Request, logging, Route::Forward),
    row(
        "notifications/message",
        Kind::Notification,
        logging,
        Route::Log,
    ),
    row(
        "sampling/createMessage",
        Kind::Request,
        sampling,
        Route::Sample,
    ),
    row(
        "notifications/cancelled",
        Kind::Notification,
        any,
        Route::Cancel,
    ),
];

/// The handshake methods, never carried.
const HANDSHAKE: [&str; 3] = ["initialize", "notifications/initialized", "server/discover"];

/// Whether AHP mirrors the state `method` is about (never carried).
fn mirrored(method: &str) -> bool {
    method.starts_with("tasks/")
        || method.starts_with("notifications/tasks/")
        || method == "notifications/progress"
        || method == "notifications/roots/list_changed"
}

/// The methods a channel with `capabilities` serves (empty without
/// capabilities). `resources/read` of a `ui://` URI is served whenever
/// there are capabilities; it is named `resources/read (ui://)` when
/// `serverResources` is not advertised.
#[must_use]
pub fn served_methods(capabilities: Option<&AhpMcpUiHostCapabilities>) -> Vec<&'static str> {
    let Some(c) = capabilities else {
        return Vec::new();
    };
    let mut served: Vec<&'static str> = TABLE
        .iter()
        .filter(|r| (r.needs)(c))
        .map(|r| r.method)
        .collect();
    if !resources(c) {
        served.push("resources/read (ui://)");
    }
    served
}

/// How a channel with `capabilities` serves `method` sent as `kind` with
/// `params`.
///
/// # Errors
/// The [`Refusal`] (JSON-RPC -32601 on the channel, `data.code`
/// `not_supported`): a handshake or mirrored method, a method outside the
/// advertised union (or sent as the wrong kind), anything on a channel
/// without capabilities.
pub fn route(
    capabilities: Option<&AhpMcpUiHostCapabilities>,
    method: &str,
    kind: Kind,
    params: Option<&Value>,
) -> Result<Route, Refusal> {
    let refuse = |why| Refusal {
        method: method.to_owned(),
        why,
        served: served_methods(capabilities),
    };
    if HANDSHAKE.contains(&method) {
        return Err(refuse(Refused::Handshake));
    }
    if mirrored(method) {
        return Err(refuse(Refused::Mirrored));
    }
    let Some(c) = capabilities else {
        return Err(refuse(Refused::NotServed));
    };
    if method == "resources/read" && kind == Kind::Request && reads_ui(params) {
        return Ok(Route::ReadUi);
    }
    TABLE
        .iter()
        .find(|r| r.method == method && r.kind == kind && (r.needs)(c))
        .map(|r| r.route)
        .ok_or_else(|| refuse(Refused::NotServed))
}

/// Whether `params.uri` is a `ui://` URI.
fn reads_ui(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("uri"))
        .and_then(Value::as_str)
        .is_some_and(|uri| uri.starts_with(UI_SCHEME))
}

/// Whether server notification `method` is forwarded to a channel with
/// `capabilities`: `notifications/tools/list_changed` when `serverTools`
/// has `listChanged: true`, `notifications/resources/list_changed` when
/// `serverResources` has; nothing else.
#[must_use]
pub fn forwards(capabilities: Option<&AhpMcpUiHostCapabilities>, method: &str) -> bool {
    let Some(c) = capabilities else {
        return false;
    };
    let capability = match method {
        "notifications/tools/list_changed" => &c.server_tools,
        "notifications/resources/list_changed" => &c.server_resources,
        _ => return false,
    };
    capability
        .as_ref()
        .and_then(|v| v.get("listChanged"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// Whether an App may call the tool with AHP/MCP definition `definition`
/// (MCP Apps `McpUiToolMeta.visibility`): yes unless `_meta.ui.visibility`
/// is given and lacks `"app"` (absent means `["model", "app"]`).
#[must_use]
pub fn callable_by_app(definition: &Map<String, Value>) -> bool {
    let visibility = definition
        .get("_meta")
        .and_then(|m| m.get("ui"))
        .and_then(|u| u.get("visibility"))
        .and_then(Value::as_array);
    visibility.is_none_or(|v| v.iter().any(|x| x == "app"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(v: Value) -> AhpMcpUiHostCapabilities {
        serde_json::from_value(v).unwrap()
    }

    fn routed(c: &AhpMcpUiHostCapabilities, method: &str, kind: Kind) -> Result<Route, Refused> {
        route(Some(c), method, kind, None).map_err(|r| r.why)
    }

    #[test]
    fn each_capability_serves_its_methods_only() {
        let tools = caps(json!({"serverTools": {}}));
        assert_eq!(
            routed(&tools, "tools/call", Kind::Request),
            Ok(Route::Forward)
        );
        assert_eq!(
            routed(&tools, "tools/list", Kind::Request),
            Ok(Route::Forward)
        );
        for other in [
            "resources/list",
            "resources/read",
            "logging/setLevel",
            "sampling/createMessage",
            "prompts/get",
            "ping",
            "resources/subscribe",
        ] {
            assert_eq!(
                routed(&tools, other, Kind::Request),
                Err(Refused::NotServed),
                "{other}"
            );
        }
        let all = caps(
            json!({"serverTools": {}, "serverResources": {}, "logging": {},
                              "sampling": {}}),
        );
        for method in [
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "logging/setLevel",
        ] {
            assert_eq!(routed(&all, method, Kind::Request), Ok(Route::Forward));
        }
        assert_eq!(
            routed(&all, "sampling/createMessage", Kind::Request),
            Ok(Route::Sample)
        );
        assert_eq!(
            routed(&all, "notifications/message", Kind::Notification),
            Ok(Route::Log)
        );
        assert_eq!(
            routed(&tools, "notifications/message", Kind::Notification),
            Err(Refused::NotServed)
        );
    }

    #[test]
    fn the_kind_must_match() {
        let all = caps(json!({"serverTools": {}, "logging": {}}));
        assert_eq!(
            routed(&all, "tools/call", Kind::Notification),
            Err(Refused::NotServed)
        );
        assert_eq!(
            routed(&all, "notifications/message", Kind::Request),
            Err(Refused::NotServed)
        );
        assert_eq!(
            routed(&all, "notifications/cancelled", Kind::Notification),
            Ok(Route::Cancel)
        );
    }

    #[test]
    fn the_handshake_and_mirrored_state_are_never_carried() {
        let all = caps(
            json!({"serverTools": {}, "serverResources": {}, "logging": {},
                              "sampling": {}}),
        );
        for method in ["initialize", "server/discover"] {
            assert_eq!(routed(&all, method, Kind::Request), Err(Refused::Handshake));
        }
        assert_eq!(
            routed(&all, "notifications/initialized", Kind::Notification),
            Err(Refused::Handshake)
        );
        for method in ["tasks/list", "tasks/get", "tasks/cancel", "tasks/result"] {
            assert_eq!(routed(&all, method, Kind::Request), Err(Refused::Mirrored));
        }
        for method in [
            "notifications/progress",
            "notifications/tasks/status",
            "notifications/roots/list_changed",
        ] {
            assert_eq!(
                routed(&all, method, Kind::Notification),
                Err(Refused::Mirrored)
            );
        }
    }

    #[test]
    fn a_channel_without_capabilities_serves_nothing() {
        for (method, kind) in [
            ("tools/list", Kind::Request),
            ("resources/read", Kind::Request),
            ("notifications/cancelled", Kind::Notification),
        ] {
            let params = json!({"uri": "ui://x/y.html"});
            let refusal = route(None, method, kind, Some(&params)).unwrap_err();
            assert_eq!(refusal.why, Refused::NotServed);
            assert!(refusal.served.is_empty());
        }
        let message = route(None, "tools/list", Kind::Request, None)
            .unwrap_err()
            .message();
        assert!(message.contains("\"tools/list\""), "{message}");
        assert!(message.contains("serves nothing"), "{message}");
    }

    #[test]
    fn a_ui_read_is_served_with_any_capabilities() {
        let tools = caps(json!({"serverTools": {}}));
        let ui = json!({"uri": "ui://show/view.html"});
        let other = json!({"uri": "file:///x"});
        let read =
            |params: &Value| route(Some(&tools), "resources/read", Kind::Request, Some(params));
        assert_eq!(read(&ui), Ok(Route::ReadUi));
        assert_eq!(read(&other).map_err(|r| r.why), Err(Refused::NotServed));
        let resources = caps(json!({"serverResources": {}}));
        let read = route(Some(&resources), "resources/read", Kind::Request, Some(&ui));
        assert_eq!(read, Ok(Route::ReadUi));
        let empty = caps(json!({}));
        let read = route(Some(&empty), "resources/read", Kind::Request, Some(&ui));
        assert_eq!(read, Ok(Route::ReadUi));
    }

    #[test]
    fn the_refusal_names_the_served_methods() {
        let c = caps(json!({"serverTools": {}, "logging": {}}));
        assert_eq!(
            served_methods(Some(&c)),
            [
                "tools/list",
                "tools/call",
                "logging/setLevel",
                "notifications/message",
                "notifications/cancelled",
                "resources/read (ui://)"
            ]
        );
        let message = route(Some(&c), "tasks/list", Kind::Request, None)
            .unwrap_err()
            .message();
        assert!(
            message.starts_with("Method not found: \"tasks/list\""),
            "{message}"
        );
        assert!(message.contains("tools/list, tools/call"), "{message}");
    }

    #[test]
    fn list_changes_are_forwarded_only_with_list_changed_true() {
        let on = caps(json!({"serverTools": {"listChanged": true},
                             "serverResources": {"listChanged": true}}));
        let off = caps(json!({"serverTools": {}, "serverResources": {"listChanged": false}}));
        for method in [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
        ] {
            assert!(forwards(Some(&on), method), "{method}");
            assert!(!forwards(Some(&off), method), "{method}");
            assert!(!forwards(None, method), "{method}");
        }
        assert!(!forwards(Some(&on), "notifications/prompts/list_changed"));
        assert!(!forwards(Some(&on), "notifications/message"));
    }

    #[test]
    fn apps_may_call_tools_whose_visibility_has_app_or_is_absent() {
        let def = |v: Value| v.as_object().cloned().unwrap();
        assert!(callable_by_app(&def(json!({}))));
        assert!(callable_by_app(&def(
            json!({"_meta": {"ui": {"resourceUri": "ui://a"}}})
        )));
        assert!(callable_by_app(&def(
            json!({"_meta": {"ui": {"visibility": ["app"]}}})
        )));
        assert!(callable_by_app(&def(
            json!({"_meta": {"ui": {"visibility": ["model", "app"]}}})
        )));
        assert!(!callable_by_app(&def(
            json!({"_meta": {"ui": {"visibility": ["model"]}}})
        )));
        assert!(!callable_by_app(&def(
            json!({"_meta": {"ui": {"visibility": []}}})
        )));
    }
}
