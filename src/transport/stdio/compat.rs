//! rmcp's leniency towards notifications it does not know (as in its
//! `AsyncRwTransport`, rmcp 3.11 `transport/async_rw.rs`): a line that does
//! not decode but is a notification outside MCP (an LSP message, say) or a
//! `notifications/…` method MCP does not define is skipped without an
//! answer.

use serde_json::Value;

/// Whether rmcp skips the undecodable `line` (UTF-8 JSON text, `\r` and
/// byte order mark removed) as a non-standard notification.
pub(super) fn ignored_notification(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let Some(method) = value.get("method").and_then(Value::as_str) else {
        return false;
    };
    let is_notification = value.get("id").is_none();
    (is_notification && !is_standard_method(method))
        || (method.starts_with("notifications/") && !is_standard_notification(method))
}

/// A request or notification method of MCP (2026-07-28), as rmcp lists them.
fn is_standard_method(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "server/discover"
            | "prompts/get"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "resources/templates/list"
            | "subscriptions/listen"
            | "tools/call"
            | "tools/list"
            | "completion/complete"
            | "elicitation/create"
            | "logging/setLevel"
            | "roots/list"
            | "sampling/createMessage"
    ) || is_standard_notification(method)
}

/// A notification method of MCP, as rmcp lists them.
fn is_standard_notification(method: &str) -> bool {
    matches!(
        method,
        "notifications/cancelled"
            | "notifications/initialized"
            | "notifications/message"
            | "notifications/progress"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
            | "notifications/roots/list_changed"
            | "notifications/subscriptions/acknowledged"
            | "notifications/tools/list_changed"
    )
}
