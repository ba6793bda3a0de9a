//! AHP execution-phase actions of an MCP tool call (AHP 1.0 "Chat channel ›
//! Tool calls", "Tool-call-level authentication"), built from what the MCP
//! call did.
//!
//! The agent harness owns the chat and dispatches `chat/toolCallStart` /
//! `chat/toolCallReady` (with contributor `{kind: "mcp", customizationId}`).
//! When a call is made with `chat`, `turnId` and `toolCallId`, the host emits
//! on that chat channel:
//!
//! - `chat/toolCallContentChanged` for each `notifications/progress`
//!   (content: one text block `"<progress>/<total> <message>"`; the raw
//!   numbers in `_meta.progress`);
//! - `chat/toolCallAuthRequired` (plus `session/inputNeededSet` of kind
//!   `toolAuthentication` on the session) when the server answers 403
//!   `insufficient_scope` mid-call, and `chat/toolCallAuthResolved` (plus
//!   `session/inputNeededRemoved`) once `authenticate` supplied a token;
//! - `chat/toolCallComplete` with the MCP result mapped by [`map_result`],
//!   or a failed result for a protocol error, timeout or cancellation.

use ahp_types::actions::StateAction;
use base64::Engine;
use serde_json::{json, Map, Value};

use crate::error::HostError;

/// Where a tool call runs: its chat, turn and id, and the MCP server that
/// contributes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatContext {
    /// Chat channel URI (envelopes of this call are stamped with it).
    pub chat: String,
    /// The chat's active turn.
    pub turn_id: String,
    /// The tool call's id in that turn.
    pub tool_call_id: String,
    /// The MCP server's customization id (`ToolCallContributor.customizationId`).
    pub customization_id: String,
}

impl ChatContext {
    /// The `session/inputNeeded` entry id of this call's auth wait.
    pub fn input_id(&self) -> String {
        format!(
            "toolAuthentication:{}:{}:{}",
            self.chat, self.turn_id, self.tool_call_id
        )
    }
}

fn action(value: Value) -> StateAction {
    serde_json::from_value(value).expect("tool-call action JSON matches ahp-types")
}

/// `chat/toolCallContentChanged` for one progress notification.
pub fn progress_action(
    ctx: &ChatContext,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> StateAction {
    let amount = match total {
        Some(t) => format!("{}/{}", num(progress), num(t)),
        None => num(progress),
    };
    let text = match message {
        Some(m) if !m.is_empty() => format!("{amount} {m}"),
        _ => amount,
    };
    action(json!({
        "type": "chat/toolCallContentChanged",
        "turnId": ctx.turn_id,
        "toolCallId": ctx.tool_call_id,
        "content": [{ "type": "text", "text": text }],
        "_meta": { "progress": { "progress": progress, "total": total, "message": message } },
    }))
}

fn num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// `chat/toolCallAuthRequired` with `auth` (an AHP `McpAuthRequirement`
/// object: `{reason, resource, requiredScopes?, description?}`; no token).
pub fn auth_required_action(ctx: &ChatContext, auth: &Value) -> StateAction {
    action(
        json!({ "type": "chat/toolCallAuthRequired", "turnId": ctx.turn_id, "toolCallId": ctx.tool_call_id, "auth": auth }),
    )
}

/// `chat/toolCallAuthResolved`.
pub fn auth_resolved_action(ctx: &ChatContext) -> StateAction {
    action(
        json!({ "type": "chat/toolCallAuthResolved", "turnId": ctx.turn_id, "toolCallId": ctx.tool_call_id }),
    )
}

/// `session/inputNeededSet` of kind `toolAuthentication` for the blocked call.
/// `tool_name` and `display_name` describe the call; `auth` as in
/// [`auth_required_action`].
pub fn input_needed_set_action(
    ctx: &ChatContext,
    tool_name: &str,
    display_name: &str,
    invocation_message: &str,
    auth: &Value,
) -> StateAction {
    action(json!({
        "type": "session/inputNeededSet",
        "request": {
            "kind": "toolAuthentication",
            "id": ctx.input_id(),
            "chat": ctx.chat,
            "turnId": ctx.turn_id,
            "toolCall": {
                "status": "auth-required",
                "toolCallId": ctx.tool_call_id,
                "toolName": tool_name,
                "displayName": display_name,
                "contributor": { "kind": "mcp", "customizationId": ctx.customization_id },
                "invocationMessage": invocation_message,
                "confirmed": "not-needed",
                "auth": auth,
            },
        },
    }))
}

/// `session/inputNeededRemoved` for the call's auth wait.
pub fn input_needed_removed_action(ctx: &ChatContext) -> StateAction {
    action(json!({ "type": "session/inputNeededRemoved", "id": ctx.input_id() }))
}

/// `chat/toolCallComplete` for an outcome: a `CallToolResult` (mapped by
/// [`map_result`]) or a host error (failed result with `error: {code,
/// message, data?}`).
pub fn complete_action(
    ctx: &ChatContext,
    display_name: &str,
    outcome: &Result<Value, HostError>,
) -> StateAction {
    let result = match outcome {
        Ok(r) => map_result(display_name, r),
        Err(e) => failed_result(display_name, e),
    };
    action(
        json!({ "type": "chat/toolCallComplete", "turnId": ctx.turn_id, "toolCallId": ctx.tool_call_id, "result": result }),
    )
}

/// A failed AHP `ToolCallResult` for a host error.
pub fn failed_result(display_name: &str, e: &HostError) -> Value {
    let verb = match e.code {
        crate::error::ErrorCode::Cancelled => "Cancelled",
        crate::error::ErrorCode::Timeout => "Timed out:",
        _ => "Failed:",
    };
    let mut error = json!({ "code": e.code.as_str(), "message": e.message });
    if let Some(data) = &e.data {
        error["data"] = data.clone();
    }
    json!({ "success": false, "pastTenseMessage": format!("{verb} {display_name}"), "error": error })
}

/// Maps an MCP `CallToolResult` (MCP 2025-11-25 "Tools › Tool result") to
/// an AHP `ToolCallResult`:
///
/// | MCP | AHP |
/// | --- | --- |
/// | `text` block | `text` |
/// | `image` / `audio` block | `embeddedResource` `{data, contentType: mimeType}` |
/// | `resource` block (embedded) | `embeddedResource`; text resources are base64-encoded, `contentType` defaults to `text/plain` / `application/octet-stream` |
/// | `resource_link` block | `resource` `{uri, contentType?, sizeHint?}` |
/// | other blocks | kept verbatim (AHP preserves unknown content) |
/// | `structuredContent` (object) | `structuredContent` |
/// | `isError: true` | `success: false`, `error: {code: "tool_error", message: <text blocks>}` |
pub fn map_result(display_name: &str, result: &Value) -> Value {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let content: Vec<Value> = blocks.iter().map(map_block).collect();
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut out = Map::new();
    out.insert("success".to_owned(), json!(!is_error));
    let past = if is_error {
        format!("Failed: {display_name}")
    } else {
        format!("Called {display_name}")
    };
    out.insert("pastTenseMessage".to_owned(), json!(past));
    if !content.is_empty() {
        out.insert("content".to_owned(), Value::Array(content));
    }
    if let Some(Value::Object(s)) = result.get("structuredContent") {
        out.insert("structuredContent".to_owned(), Value::Object(s.clone()));
    }
    if is_error {
        let text: Vec<&str> = blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let message = if text.is_empty() {
            "the tool reported an error".to_owned()
        } else {
            text.join("\n")
        };
        out.insert(
            "error".to_owned(),
            json!({ "code": "tool_error", "message": message }),
        );
    }
    Value::Object(out)
}

fn map_block(block: &Value) -> Value {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let s = |k: &str| block.get(k).and_then(Value::as_str);
    match kind {
        "text" => json!({ "type": "text", "text": s("text").unwrap_or("") }),
        "image" | "audio" => {
            json!({ "type": "embeddedResource", "data": s("data").unwrap_or(""), "contentType": s("mimeType").unwrap_or("application/octet-stream") })
        }
        "resource" => {
            let r = block.get("resource").cloned().unwrap_or(Value::Null);
            let mime = r.get("mimeType").and_then(Value::as_str);
            match (
                r.get("blob").and_then(Value::as_str),
                r.get("text").and_then(Value::as_str),
            ) {
                (Some(blob), _) => {
                    json!({ "type": "embeddedResource", "data": blob, "contentType": mime.unwrap_or("application/octet-stream") })
                }
                (None, Some(text)) => json!({
                    "type": "embeddedResource",
                    "data": base64::engine::general_purpose::STANDARD.encode(text),
                    "contentType": mime.unwrap_or("text/plain"),
                }),
                _ => block.clone(),
            }
        }
        "resource_link" => {
            let mut m = Map::new();
            m.insert("type".to_owned(), json!("resource"));
            m.insert("uri".to_owned(), json!(s("uri").unwrap_or("")));
            if let Some(mime) = s("mimeType") {
                m.insert("contentType".to_owned(), json!(mime));
            }
            if let Some(size) = block.get("size").and_then(Value::as_i64) {
                m.insert("sizeHint".to_owned(), json!(size));
            }
            Value::Object(m)
        }
        _ => block.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_every_content_kind() {
        let r = json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AAA=", "mimeType": "image/png"},
                {"type": "audio", "data": "BBB=", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///r.txt", "mimeType": "text/plain", "text": "abc"}},
                {"type": "resource_link", "uri": "file:///l.txt", "name": "l", "mimeType": "text/plain", "size": 3},
            ],
            "structuredContent": {"ok": true},
        });
        let m = map_result("echo", &r);
        assert_eq!(m["success"], true);
        assert_eq!(
            m["content"][1],
            json!({"type": "embeddedResource", "data": "AAA=", "contentType": "image/png"})
        );
        assert_eq!(m["content"][3]["data"], "YWJj");
        assert_eq!(
            m["content"][4],
            json!({"type": "resource", "uri": "file:///l.txt", "contentType": "text/plain", "sizeHint": 3})
        );
        assert_eq!(m["structuredContent"], json!({"ok": true}));
        // The reducer's types accept it.
        let _: ahp_types::state::ToolCallResult = serde_json::from_value(m).unwrap();
    }

    #[test]
    fn is_error_becomes_failed_result() {
        let m = map_result(
            "t",
            &json!({"content": [{"type": "text", "text": "it broke"}], "isError": true}),
        );
        assert_eq!(m["success"], false);
        assert_eq!(
            m["error"],
            json!({"code": "tool_error", "message": "it broke"})
        );
    }

    #[test]
    fn progress_text() {
        let ctx = ChatContext {
            chat: "c".into(),
            turn_id: "t".into(),
            tool_call_id: "x".into(),
            customization_id: "s".into(),
        };
        let v =
            serde_json::to_value(progress_action(&ctx, 2.0, Some(5.0), Some("step 2"))).unwrap();
        assert_eq!(v["content"][0]["text"], "2/5 step 2");
    }
}
