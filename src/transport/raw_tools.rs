//! Keeping the `tools/list` members rmcp's typed `Tool` drops.
//!
//! rmcp 3.11 decodes a response into the untagged `ServerResult`, and a
//! `tools/list` result becomes a `ListToolsResult` of `Tool`s that keep only
//! the members rmcp knows: the MCP 2025-11-25 `execution` member
//! (`{"taskSupport": "forbidden" | "optional" | "required"}`, "Tools ›
//! Tool" and "Tasks › Tool-Level Negotiation") is gone after the decode,
//! and the catalogue needs it (a task-required tool is kept out of the
//! model catalogue).
//!
//! - stdio: the transport sees each line, so a `tools/list` response whose
//!   line mentions `"execution"` is handed on as rmcp's `CustomResult` of
//!   the raw `result` ([`keep_raw_result`]): the host reads list results as
//!   raw JSON, so every member reaches the catalogue as the server sent it.
//! - Streamable HTTP: rmcp decodes POST answers inside its client. For an
//!   SSE event, the raw text passes the host's `Watched` client first, which
//!   notes each tool's `execution` by the response's id ([`executions`]);
//!   the request that gets the response puts them back
//!   ([`restore_executions`]). A JSON (non-SSE) POST body is decoded by rmcp
//!   before the host sees it: its `execution` members are lost.

use rmcp::model::{CustomResult, JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerResult};
use serde_json::Value;

use crate::limits::MAX_EXECUTION_MEMBER_BYTES;

/// The member rmcp's `Tool` drops that the host keeps.
const EXECUTION: &str = "execution";

/// `message` decoded from `line`, with a `tools/list` result whose line
/// mentions `"execution"` replaced by the raw `result` (a `CustomResult`);
/// any other message unchanged.
pub fn keep_raw_result(line: &[u8], message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    let JsonRpcMessage::Response(mut response) = message else {
        return message;
    };
    let listed = matches!(response.result, ServerResult::ListToolsResult(_));
    if listed && memchr::memmem::find(line, b"\"execution\"").is_some() {
        if let Ok(raw) = serde_json::from_slice::<RawResponse>(line) {
            response.result = ServerResult::CustomResult(CustomResult(raw.result));
        }
    }
    JsonRpcMessage::Response(response)
}

/// The `execution` member of each tool of a `tools/list` result in the
/// JSON text `data`, by the response's id: `None` when `data` is no such
/// result or no tool has one. Reads only `id` and `result.tools[].name` /
/// `execution`; a member over [`MAX_EXECUTION_MEMBER_BYTES`] is left out.
pub fn executions(data: &str) -> Option<(RequestId, Vec<(String, Value)>)> {
    if !data.contains("\"execution\"") || !data.contains("\"tools\"") {
        return None;
    }
    let listed: ListedMessage = serde_json::from_str(data).ok()?;
    let found: Vec<(String, Value)> = listed
        .result
        .tools
        .into_iter()
        .filter_map(|t| {
            let execution = t.execution?;
            let bytes = serde_json::to_string(&execution).map_or(usize::MAX, |s| s.len());
            (bytes <= MAX_EXECUTION_MEMBER_BYTES).then_some((t.name, execution))
        })
        .collect();
    (!found.is_empty()).then_some((listed.id, found))
}

/// Puts `found` (tool name, `execution`) back into the tools of the raw
/// `tools/list` result `result` that have no `execution` member.
pub fn restore_executions(result: &mut Value, found: &[(String, Value)]) {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        if tool.contains_key(EXECUTION) {
            continue;
        }
        let name = tool.get("name").and_then(Value::as_str);
        if let Some((_, execution)) = found.iter().find(|(n, _)| Some(n.as_str()) == name) {
            tool.insert(EXECUTION.to_owned(), execution.clone());
        }
    }
}

/// A JSON-RPC response with a `result` and no other member: the shape
/// both raw readers of `tools/list` answers take (stdio's
/// `stdio::list_results`, Streamable HTTP's `stream_watch::raw_lists`);
/// anything else (an error, an extra member) goes to rmcp's decode.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultOnly<R> {
    /// `"2.0"` (checked by its type; no reader needs its value).
    #[allow(dead_code)]
    pub jsonrpc: rmcp::model::JsonRpcVersion2_0,
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result, typed as the reader needs it.
    pub result: R,
}

/// A response's raw `result`.
#[derive(serde::Deserialize)]
struct RawResponse {
    result: Value,
}

/// The parts of a `tools/list` response [`executions`] reads.
#[derive(serde::Deserialize)]
struct ListedMessage {
    id: RequestId,
    result: ListedResult,
}

/// `result.tools`.
#[derive(serde::Deserialize)]
struct ListedResult {
    tools: Vec<ListedTool>,
}

/// `name` and the raw `execution` of one tool.
#[derive(serde::Deserialize)]
struct ListedTool {
    name: String,
    execution: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LISTED: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"b","inputSchema":{"type":"object"}}]}}"#;

    #[test]
    fn rmcp_drops_execution_and_the_raw_result_keeps_it() {
        let typed: ServerJsonRpcMessage = serde_json::from_str(LISTED).unwrap();
        let before = serde_json::to_value(&typed).unwrap();
        assert_eq!(before["result"]["tools"][0].get("execution"), None);
        let kept = keep_raw_result(LISTED.as_bytes(), typed);
        let after = serde_json::to_value(&kept).unwrap();
        assert_eq!(
            after["result"]["tools"][0]["execution"]["taskSupport"],
            "required"
        );
    }

    #[test]
    fn sse_text_executions_are_found_by_id_and_restored_by_name() {
        let (id, found) = executions(LISTED).unwrap();
        assert_eq!(id, RequestId::Number(3));
        let mut result = json!({"tools": [{"name": "b"}, {"name": "a"}]});
        restore_executions(&mut result, &found);
        assert_eq!(
            result["tools"][1]["execution"],
            json!({"taskSupport": "required"})
        );
        assert_eq!(result["tools"][0].get("execution"), None);
        assert!(executions(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#).is_none());
    }
}
