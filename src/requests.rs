//! Requests a server sends to the client (MCP 2025-11-25 "Client Features"):
//! `elicitation/create`, `sampling/createMessage` and `roots/list`, answered
//! by handlers the app registers in JS.
//!
//! A capability is declared in `initialize` only when its handler is
//! registered (for `roots`: a `roots` handler or the host's own roots,
//! [`host_roots`], declared with `listChanged: true`; `sampling.tools`
//! only when the `sampling` handler supports tools, [`sampling`];
//! `elicitation.url` only when the `elicitation` handler takes URL mode or
//! AHP clients answer chat elicitations, [`url_elicitation`]). Without a
//! handler the host answers the way the spec and rmcp do for an undeclared
//! capability: elicitation is declined (a mode not declared gets `-32602`),
//! sampling gets `-32601` (method not found), roots/list returns an empty
//! list. Roots are checked and percent-encoded on the way out ([`roots`]).

pub mod host_roots;
pub mod roots;
pub mod sampling;
pub mod url_elicitation;

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, ElicitationCapability, FormElicitationCapability, UrlElicitationCapability,
};
use serde::Serialize;
use serde_json::{json, Map, Value};

/// Which server-initiated request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerRequestKind {
    /// `elicitation/create` (form mode; URL mode too when the handler takes
    /// it, [`RequestHandler::elicitation_url`]).
    Elicitation,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

impl ServerRequestKind {
    /// Every kind, in the order the JS `handlers` option documents them.
    pub const ALL: [Self; 3] = [Self::Elicitation, Self::Sampling, Self::Roots];

    /// The MCP method name.
    pub fn method(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation/create",
            Self::Sampling => "sampling/createMessage",
            Self::Roots => "roots/list",
        }
    }

    /// The handler name the app registers in JS (`handlers: {elicitation,
    /// sampling, roots}`): always the first segment of [`Self::method`], which
    /// is how `index.js` routes a request's `method` to its handler.
    pub fn name(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation",
            Self::Sampling => "sampling",
            Self::Roots => "roots",
        }
    }

    /// The kind of handler name `name` (see [`Self::name`]); `None` for any
    /// other string.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One server-initiated request as the app's handler receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerRequest {
    /// Customization id of the server that sent it.
    pub server_id: String,
    /// Which request.
    pub kind: ServerRequestKind,
    /// The MCP request's `params`.
    pub params: Value,
    /// The AHP chat input request published for it too (an elicitation
    /// of an AHP tool call: see `crate::chat::input`), if any; an AHP
    /// client may answer it first.
    pub chat_input: Option<ChatInputRef>,
    /// For a URL-mode elicitation: the URL's origin (`scheme://host[:port]`,
    /// [`url_elicitation::UrlElicitation::origin`]), to show beside the URL
    /// (JS `context.origin`).
    pub origin: Option<String>,
}

impl HandlerRequest {
    /// A request that is not published to AHP.
    pub fn new(server_id: impl Into<String>, kind: ServerRequestKind, params: Value) -> Self {
        Self {
            server_id: server_id.into(),
            kind,
            params,
            chat_input: None,
            origin: None,
        }
    }
}

/// Where an elicitation was published the AHP way: the AHP tool call it
/// belongs to and the id of its chat input request (JS
/// `context.chatInput`: `{chat, turnId, toolCallId, requestId}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatInputRef {
    /// Chat channel URI.
    pub chat: String,
    /// The turn of the tool call.
    pub turn_id: String,
    /// The AHP tool call id.
    pub tool_call_id: String,
    /// The `ChatInputRequest.id` (the key of `chat/inputCompleted`).
    pub request_id: String,
}

/// The app's answers to server-initiated requests.
pub trait RequestHandler: Send + Sync + 'static {
    /// Whether a handler for `kind` is registered (decides the declared capabilities).
    fn handles(&self, kind: ServerRequestKind) -> bool;
    /// Answers one request: the MCP result object, or an error message
    /// (sent as JSON-RPC `-32603`). The host drops the future when the
    /// request is withdrawn (the server cancelled it, its tool call ended,
    /// or an AHP client answered it first); an implementation tells the app
    /// then (the JS handler's `context.signal` aborts) and any later answer
    /// is ignored.
    fn request(&self, request: HandlerRequest) -> BoxFuture<'static, Result<Value, String>>;

    /// Whether the `sampling` handler takes SEP-1577 `tools` / `toolChoice`
    /// and `tool_use` / `tool_result` content (JS `handlers.sampling:
    /// {handler, tools: true}`): then `sampling: {tools: {}}` is declared
    /// (see [`sampling`]). `false` by default.
    fn sampling_tools(&self) -> bool {
        false
    }

    /// Whether the `elicitation` handler takes URL mode too (SEP-1036, JS
    /// `handlers.elicitation: {handler, url: true}`): then `elicitation:
    /// {form: {}, url: {}}` is declared and URL-mode requests (and the
    /// `-32042` elicitations of a `tools/call`) reach it with
    /// [`HandlerRequest::origin`] (see [`url_elicitation`]). `false` by
    /// default.
    fn elicitation_url(&self) -> bool {
        false
    }

    /// The host's own roots, when this handler answers `roots/list` from
    /// them ([`host_roots::WithHostRoots`]); `None` by default.
    fn host_roots(&self) -> Option<&host_roots::HostRoots> {
        None
    }
}

/// Client capabilities for `initialize`: exactly the registered handlers;
/// `sampling` with `tools: {}` when the handler supports tools (SEP-1577);
/// `roots` with `listChanged: true` (the host sends
/// `notifications/roots/list_changed` on every change of its roots, MCP
/// 2025-11-25 "Client Features › Roots › Capabilities").
pub fn client_capabilities(handler: Option<&dyn RequestHandler>) -> ClientCapabilities {
    client_capabilities_with(handler, false)
}

/// [`client_capabilities`], with elicitation also declared when
/// `chat_elicitation` is set (JS option `chatElicitation`): then AHP
/// clients answer the elicitations of AHP tool calls even without an
/// `elicitation` handler, and any other elicitation is declined. Form mode
/// is always declared with elicitation; URL mode (`url: {}`, SEP-1036)
/// when `chat_elicitation` is set (an AHP `ChatInputRequest` has its
/// `url`) or the handler takes it ([`RequestHandler::elicitation_url`]).
pub fn client_capabilities_with(
    handler: Option<&dyn RequestHandler>,
    chat_elicitation: bool,
) -> ClientCapabilities {
    let has = |k| handler.is_some_and(|h| h.handles(k));
    let mut caps = Map::new();
    if chat_elicitation || has(ServerRequestKind::Elicitation) {
        let mut elicitation =
            ElicitationCapability::new().with_form(FormElicitationCapability::new());
        let url_handler =
            has(ServerRequestKind::Elicitation) && handler.is_some_and(|h| h.elicitation_url());
        if chat_elicitation || url_handler {
            elicitation = elicitation.with_url(UrlElicitationCapability::new());
        }
        let value = serde_json::to_value(elicitation).unwrap_or_else(|_| json!({ "form": {} }));
        caps.insert("elicitation".into(), value);
    }
    if has(ServerRequestKind::Sampling) {
        let tools = handler.is_some_and(|h| h.sampling_tools());
        let sampling = if tools {
            json!({ "tools": {} })
        } else {
            json!({})
        };
        caps.insert("sampling".into(), sampling);
    }
    if has(ServerRequestKind::Roots) {
        caps.insert("roots".into(), json!({ "listChanged": true }));
    }
    serde_json::from_value(Value::Object(caps)).unwrap_or_default()
}

/// SEP-1034: for an accepted form elicitation, every property of the
/// requested schema that has a `default` and is missing from `content` gets
/// that default. Present values are never changed.
pub fn apply_elicitation_defaults(requested_schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = requested_schema
        .get("properties")
        .and_then(Value::as_object)
    else {
        return;
    };
    for (name, schema) in properties {
        if let Some(default) = schema.get("default") {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_only_missing_fields() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "email": {"type": "string"}
        }});
        let mut content = json!({"age": 7}).as_object().cloned().unwrap_or_default();
        apply_elicitation_defaults(&schema, &mut content);
        assert_eq!(Value::Object(content), json!({"name": "Ada", "age": 7}));
    }

    struct Only(ServerRequestKind);
    impl RequestHandler for Only {
        fn handles(&self, kind: ServerRequestKind) -> bool {
            kind == self.0
        }
        fn sampling_tools(&self) -> bool {
            true
        }
        fn elicitation_url(&self) -> bool {
            true
        }
        fn request(&self, _: HandlerRequest) -> BoxFuture<'static, Result<Value, String>> {
            Box::pin(async { Ok(Value::Null) })
        }
    }

    #[test]
    fn handler_names_are_the_first_method_segment() {
        for kind in ServerRequestKind::ALL {
            assert_eq!(kind.method().split('/').next(), Some(kind.name()));
            assert_eq!(ServerRequestKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(ServerRequestKind::from_name("elicitation/create"), None);
        assert_eq!(ServerRequestKind::from_name(""), None);
    }

    #[test]
    fn capabilities_follow_registered_handlers() {
        let none = serde_json::to_value(client_capabilities(None)).unwrap_or_default();
        assert_eq!(none, json!({}));
        let elicit = serde_json::to_value(client_capabilities(Some(&Only(
            ServerRequestKind::Elicitation,
        ))))
        .unwrap_or_default();
        assert_eq!(elicit, json!({"elicitation": {"form": {}, "url": {}}}));
        let roots =
            serde_json::to_value(client_capabilities(Some(&Only(ServerRequestKind::Roots))))
                .unwrap_or_default();
        assert_eq!(roots, json!({"roots": {"listChanged": true}}));
        let sampling = Only(ServerRequestKind::Sampling);
        let caps = serde_json::to_value(client_capabilities(Some(&sampling))).unwrap_or_default();
        assert_eq!(caps, json!({"sampling": {"tools": {}}}));
    }

    #[test]
    fn chat_elicitation_declares_form_and_url_elicitation_without_a_handler() {
        let caps = serde_json::to_value(client_capabilities_with(None, true)).unwrap_or_default();
        assert_eq!(caps, json!({"elicitation": {"form": {}, "url": {}}}));
        let roots = Only(ServerRequestKind::Roots);
        let caps =
            serde_json::to_value(client_capabilities_with(Some(&roots), true)).unwrap_or_default();
        assert_eq!(
            caps,
            json!({"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": true}})
        );
    }

    #[test]
    fn url_elicitation_needs_a_url_handler() {
        struct FormOnly;
        impl RequestHandler for FormOnly {
            fn handles(&self, kind: ServerRequestKind) -> bool {
                kind == ServerRequestKind::Elicitation
            }
            fn request(&self, _: HandlerRequest) -> BoxFuture<'static, Result<Value, String>> {
                Box::pin(async { Ok(Value::Null) })
            }
        }
        let caps = serde_json::to_value(client_capabilities(Some(&FormOnly))).unwrap_or_default();
        assert_eq!(caps, json!({"elicitation": {"form": {}}}));
        // A URL flag without an elicitation handler declares nothing.
        let sampling = Only(ServerRequestKind::Sampling);
        let caps = serde_json::to_value(client_capabilities(Some(&sampling))).unwrap_or_default();
        assert_eq!(caps.get("elicitation"), None);
    }
}
