//! The AHP `ToolCallResult` of a finished MCP tool call (AHP 1.0 "Chat
//! channel › Tool calls", `chat/toolCallComplete.result`), from the MCP
//! `CallToolResult` (MCP 2025-11-25 "Tools › Tool result") or from a host
//! error.

use ahp_types::common::StringOrMarkdown;
use ahp_types::state::{
    ToolCallResult, ToolResultContent, ToolResultEmbeddedResourceContent,
    ToolResultResourceContent, ToolResultTextContent,
};
use base64::Engine;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{ErrorCode, HostError};

/// `contentType` of binary content without a `mimeType`.
const OCTET_STREAM: &str = "application/octet-stream";
/// `contentType` of an embedded text resource without a `mimeType`.
const TEXT_PLAIN: &str = "text/plain";

/// A failed AHP `ToolCallResult` for a host error: `success: false`,
/// `pastTenseMessage` `"Cancelled <name>"` (code `cancelled`), `"Timed out:
/// <name>"` (code `timeout`) or `"Failed: <name>"`, and `error: {code,
/// message, data?}` with the error's stable `code` string.
pub fn failed_result(display_name: &str, e: &HostError) -> ToolCallResult {
    let verb = match e.code {
        ErrorCode::Cancelled => "Cancelled",
        ErrorCode::Timeout => "Timed out:",
        _ => "Failed:",
    };
    // `{code, data?, message}`: the order this result has always been published in.
    let mut error = Map::new();
    error.insert("code".to_owned(), Value::from(e.code.as_str()));
    if let Some(data) = e.detail.data() {
        error.insert("data".to_owned(), data);
    }
    error.insert("message".to_owned(), Value::from(e.message.clone()));
    ToolCallResult {
        success: false,
        past_tense_message: StringOrMarkdown::Plain(format!("{verb} {display_name}")),
        content: None,
        structured_content: None,
        error: Some(Value::Object(error)),
    }
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
///
/// `pastTenseMessage` is `"Called <name>"`, or `"Failed: <name>"` for
/// `isError`. A result without content blocks gets no `content`.
pub fn map_result(display_name: &str, result: &Value) -> ToolCallResult {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let content: Vec<ToolResultContent> = blocks.iter().map(map_block).collect();
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let past = if is_error {
        format!("Failed: {display_name}")
    } else {
        format!("Called {display_name}")
    };
    let structured_content = match result.get("structuredContent") {
        Some(Value::Object(s)) => Some(s.clone()),
        _ => None,
    };
    ToolCallResult {
        success: !is_error,
        past_tense_message: StringOrMarkdown::Plain(past),
        content: (!content.is_empty()).then_some(content),
        structured_content,
        error: is_error.then(|| tool_error(blocks)),
    }
}

/// `{code: "tool_error", message}`: the text blocks joined by newlines.
fn tool_error(blocks: &[Value]) -> Value {
    let text: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let message = if text.is_empty() {
        "the tool reported an error".to_owned()
    } else {
        text.join("\n")
    };
    let mut error = Map::new();
    error.insert("code".to_owned(), Value::from("tool_error"));
    error.insert("message".to_owned(), Value::from(message));
    Value::Object(error)
}

fn map_block(block: &Value) -> ToolResultContent {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let s = |k: &str| block.get(k).and_then(Value::as_str);
    match kind {
        "text" => ToolResultContent::Text(ToolResultTextContent {
            text: s("text").unwrap_or("").to_owned(),
        }),
        "image" | "audio" => embedded(
            s("data").unwrap_or("").to_owned(),
            s("mimeType").unwrap_or(OCTET_STREAM),
        ),
        "resource" => embedded_resource(block),
        "resource_link" => ToolResultContent::Resource(ToolResultResourceContent {
            uri: s("uri").unwrap_or("").to_owned(),
            size_hint: block.get("size").and_then(Value::as_i64),
            content_type: s("mimeType").map(str::to_owned),
            nonce: None,
        }),
        _ => verbatim(block),
    }
}

/// An MCP embedded `resource` block: its `blob`, or its `text` base64-encoded.
/// A resource with neither is kept verbatim.
fn embedded_resource(block: &Value) -> ToolResultContent {
    let r = block.get("resource").unwrap_or(&Value::Null);
    let field = |k: &str| r.get(k).and_then(Value::as_str);
    let mime = field("mimeType");
    match (field("blob"), field("text")) {
        (Some(blob), _) => embedded(blob.to_owned(), mime.unwrap_or(OCTET_STREAM)),
        (None, Some(text)) => embedded(
            base64::engine::general_purpose::STANDARD.encode(text),
            mime.unwrap_or(TEXT_PLAIN),
        ),
        _ => verbatim(block),
    }
}

fn embedded(data: String, content_type: &str) -> ToolResultContent {
    ToolResultContent::EmbeddedResource(ToolResultEmbeddedResourceContent {
        data,
        content_type: content_type.to_owned(),
    })
}

/// A block with no MCP → AHP mapping: read as AHP content (a block whose
/// `type` AHP knows is read as that type, as a reducer would), otherwise
/// preserved as raw JSON (`ToolResultContent::Unknown`).
fn verbatim(block: &Value) -> ToolResultContent {
    ToolResultContent::deserialize(block)
        .unwrap_or_else(|_| ToolResultContent::Unknown(block.clone()))
}
