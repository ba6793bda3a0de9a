//! `tools/list` answers on a Streamable HTTP POST's SSE stream, read raw.
//!
//! rmcp decodes every SSE event into its typed `ServerJsonRpcMessage`: a
//! `tools/list` result goes through serde's `Content` tree and the untagged
//! `ServerResult` (nine variants tried before `ListToolsResult`), each
//! `Tool` is built, and the host then encodes the whole result back into
//! JSON (`mcp::request::send_on`). For a thousand tools that is most of the
//! listing's client time. So when the POST carried a `tools/list` request,
//! the [`super::Watched`] client reads the event that answers it (exactly
//! `{"jsonrpc":"2.0","id":…,"result":{…}}`, the request's own id) once,
//! keeping its result's text ([`RawLists::stash`], read by
//! `transport::raw_text::read_answer` without building a tree), and hands
//! rmcp a small stand-in ([`stand_in`]) in its place; the request path
//! takes the text back by its id ([`RawLists::take`]). As on stdio
//! (`transport::stdio::list_results`) the text keeps every member the
//! server sent (`execution` included), and the nesting bound is rmcp's.
//!
//! At most [`MAX_STASHED_LISTS`] results wait to be taken; when that many
//! wait (requests given up after their answer arrived), an answer is left
//! to rmcp's decode as before, so a stand-in always has its result.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use rmcp::model::RequestId;
use serde_json::Value;

use crate::limits::MAX_STASHED_LISTS;

/// The `_meta` member of a stand-in result: a result carrying it whose raw
/// result is not stashed is refused (see [`is_stand_in`]), never read as an
/// empty listing.
pub const STAND_IN_META: &str = "ahp-mcp-host/rawResult";

/// The SEP-2243 annotation whose listings rmcp reads itself.
const X_MCP_HEADER: &str = "\"x-mcp-header\"";

/// Raw `tools/list` results waiting for their request, oldest first.
#[derive(Debug, Default)]
pub struct RawLists {
    stashed: Mutex<VecDeque<(RequestId, String)>>,
}

impl RawLists {
    /// When `data` (an SSE event's text) answers request `id` with an
    /// object result and there is room, keeps that result's text and
    /// returns the stand-in text to give rmcp instead; `None` otherwise
    /// (the event goes to rmcp unchanged). rmcp never sees the listing, so
    /// it drops none of its tools: its names need no note.
    pub fn stash(&self, id: &RequestId, data: &str) -> Option<String> {
        let mut stashed = self.lock();
        // rmcp must see a listing with `x-mcp-header` annotations itself
        // (SEP-2243, 2026-07-28: it drops invalid ones and keeps the
        // schemas its `tools/call` takes `Mcp-Param-*` headers from).
        if stashed.len() >= MAX_STASHED_LISTS || data.contains(X_MCP_HEADER) {
            return None;
        }
        let (answered, text) = crate::transport::raw_text::read_answer(data.as_bytes())?;
        if answered != *id {
            return None;
        }
        stashed.push_back((answered, text));
        Some(stand_in(id))
    }

    /// The result text stashed for request `id`, taken once.
    pub fn take(&self, id: &RequestId) -> Option<String> {
        let mut stashed = self.lock();
        let at = stashed.iter().position(|(noted, _)| noted == id)?;
        stashed.remove(at).map(|(_, result)| result)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(RequestId, String)>> {
        self.stashed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The event text rmcp gets instead of a stashed answer to `id`.
fn stand_in(id: &RequestId) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"_meta": {STAND_IN_META: true}}})
        .to_string()
}

/// Whether `result` (what the request got from rmcp) is a stand-in.
/// A server's own listing with that `_meta` member (and tools) is not one.
pub fn is_stand_in(result: &Value) -> bool {
    let no_tools = result
        .get("tools")
        .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty));
    no_tools
        && result.pointer(&format!("/_meta/{}", STAND_IN_META.replace('/', "~1")))
            == Some(&Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ServerJsonRpcMessage, ServerResult};
    use serde_json::json;

    const LIST: &str = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"c"}"#;

    #[test]
    fn an_answer_to_the_request_is_stashed_once_and_rmcp_gets_a_stand_in() {
        let raw = RawLists::default();
        let id = RequestId::Number(9);
        let data = format!(r#"{{"result":{LIST},"jsonrpc":"2.0","id":9}}"#);
        let text = raw.stash(&id, &data).expect("stashed");
        // rmcp decodes the stand-in; what the request gets from it is recognized.
        let typed: ServerJsonRpcMessage = serde_json::from_str(&text).unwrap();
        let ServerJsonRpcMessage::Response(response) = typed else {
            panic!("not a response: {text}")
        };
        assert_eq!(response.id, id);
        let result = match response.result {
            ServerResult::CustomResult(c) => c.0,
            typed => serde_json::to_value(typed).unwrap(),
        };
        assert!(is_stand_in(&result), "{result}");
        assert!(!is_stand_in(&json!({"tools": []})));
        let spoof = json!({"tools": [{"name": "t"}], "_meta": {STAND_IN_META: true}});
        assert!(
            !is_stand_in(&spoof),
            "a server's listing carrying the member"
        );
        let taken = raw.take(&id).expect("taken");
        assert_eq!(taken, LIST, "the server's text");
        let taken: Value = serde_json::from_str(&taken).unwrap();
        assert_eq!(taken["tools"][0]["execution"]["taskSupport"], "optional");
        assert!(raw.take(&id).is_none(), "once");
    }

    #[test]
    fn other_answers_and_shapes_go_to_rmcp_unchanged() {
        let raw = RawLists::default();
        let id = RequestId::Number(9);
        let lines = [
            format!(r#"{{"jsonrpc":"2.0","id":8,"result":{LIST}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"9","result":{LIST}}}"#),
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":9,"result":{LIST},"extra":1}}"#),
            r#"{"jsonrpc":"2.0","id":9,"result":[]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[}"#.to_owned(),
            // SEP-2243 annotations: rmcp reads this listing itself.
            r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[{"name":"g","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}}]}}"#.to_owned(),
        ];
        for line in &lines {
            assert!(raw.stash(&id, line).is_none(), "{line}");
        }
        assert!(raw.take(&id).is_none());
    }

    #[test]
    fn at_most_the_bound_waits_and_then_rmcp_decodes() {
        let raw = RawLists::default();
        let answer = |n: i64| format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"tools":[]}}}}"#);
        let bound = i64::try_from(MAX_STASHED_LISTS).unwrap();
        for n in 0..bound {
            assert!(raw.stash(&RequestId::Number(n), &answer(n)).is_some());
        }
        let over = RequestId::Number(bound);
        assert!(
            raw.stash(&over, &answer(bound)).is_none(),
            "full: left to rmcp"
        );
        assert!(raw.take(&RequestId::Number(0)).is_some());
        assert!(raw.stash(&over, &answer(bound)).is_some(), "room again");
    }
}
