//! `tools/list` results handed on as the server's raw JSON, not through
//! rmcp's typed model.
//!
//! The host sends the requests it reads itself (list pages, reads) as
//! rmcp's `CustomRequest` and reads each result as raw JSON
//! (`mcp::request`). For a `tools/list` result, rmcp's decode is work the
//! host undoes: the line is buffered into serde's `Content` tree, matched
//! against the untagged `ServerResult`'s variants (nine before
//! `ListToolsResult`), each `Tool` built, and the host then encodes the
//! whole result back to JSON. So the transport notes the id of each
//! `tools/list` `CustomRequest` it writes ([`ListIds`], at most
//! [`MAX_PENDING_LIST_IDS`]); a response to one of them, the line being
//! exactly `{"jsonrpc":"2.0","id":…,"result":{…}}` (members in any order),
//! is handed on as the text of its `result`, carried in rmcp's
//! `CustomResult` (`transport::raw_text`: the line checked in one pass
//! without building a tree, with the nesting bound of rmcp's decode), and
//! the catalogue reads each tool from that text.
//! Anything else, an error response included, takes rmcp's decode
//! ([`super::fast::decode`]).
//!
//! The raw result carries every member the server sent, as a `tools/list`
//! line that mentions `execution` already did (`raw_tools`): the catalogue
//! keeps only the members of a tool definition (`catalogue::server_tools`),
//! and it already reads a result rmcp could not type (rmcp hands any such
//! result on raw, as its last variant). A typed `ListToolsRequest` (none is
//! sent by the host) would be awaited as a typed result, so only the host's
//! `CustomRequest`s are noted.

use std::collections::VecDeque;

use rmcp::model::{
    ClientRequest, CustomResult, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleClient, TxJsonRpcMessage};
use serde::de::IgnoredAny;

use crate::limits::{LIST_PROBE_MAX_BYTES, MAX_PENDING_LIST_IDS};
use crate::transport::raw_text;
use crate::transport::raw_tools::ResultOnly;

/// The method whose results are read raw.
const TOOLS_LIST: &str = "tools/list";

/// Ids of the `tools/list` requests written and not yet answered, oldest
/// first; at most [`MAX_PENDING_LIST_IDS`] (a request never answered is
/// forgotten once that many newer ones were noted; its answer, if it comes,
/// then takes rmcp's decode, which gives the host the same result).
#[derive(Debug, Default)]
pub struct ListIds {
    ids: VecDeque<RequestId>,
}

impl ListIds {
    /// Notes `item`'s id when it is a `tools/list` `CustomRequest`.
    pub fn note(&mut self, item: &TxJsonRpcMessage<RoleClient>) {
        let JsonRpcMessage::Request(request) = item else {
            return;
        };
        let ClientRequest::CustomRequest(custom) = &request.request else {
            return;
        };
        if custom.method != TOOLS_LIST {
            return;
        }
        if self.ids.len() >= MAX_PENDING_LIST_IDS {
            self.ids.pop_front();
        }
        self.ids.push_back(request.id.clone());
    }

    /// `line` (one framed message) as a response with the raw `result`,
    /// when it answers a noted request (whose id is then forgotten); `None`
    /// for any other line or shape.
    pub fn answered(&mut self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        if self.ids.is_empty() {
            return None;
        }
        // A short line: the id first, without reading the result (most
        // lines answer something else while a listing waits). A long one
        // (a listing's page, as a rule) is read once, in full.
        if line.len() < LIST_PROBE_MAX_BYTES {
            let probe: ResultOnly<IgnoredAny> = serde_json::from_slice(line).ok()?;
            self.ids.iter().position(|id| *id == probe.id)?;
        }
        let (id, text) = raw_text::read_answer(line)?;
        let at = self.ids.iter().position(|noted| *noted == id)?;
        self.ids.remove(at);
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id,
            result: ServerResult::CustomResult(CustomResult(raw_text::carry(text))),
        }))
    }

    /// How many ids are noted (tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        ClientJsonRpcMessage, CustomRequest, JsonRpcRequest, JsonRpcVersion2_0, NumberOrString,
    };
    use serde_json::{json, Value};

    fn request(id: i64, method: &str) -> ClientJsonRpcMessage {
        JsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(id),
            request: ClientRequest::CustomRequest(CustomRequest::new(method, Some(json!({})))),
        })
    }

    fn raw_result(message: ServerJsonRpcMessage) -> Value {
        match message {
            JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CustomResult(CustomResult(v)),
                ..
            }) => {
                let text = raw_text::carried(v).expect("a carried text");
                serde_json::from_str(&text).expect("JSON")
            }
            other => panic!("not a raw result: {other:?}"),
        }
    }

    const LIST: &str = r#"{"tools":[{"name":"a","title":"A","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"annotations":{"readOnlyHint":true},"_meta":{"k":[1,2]}}],"nextCursor":"c"}"#;

    #[test]
    fn a_noted_list_is_answered_raw_once_and_as_rmcps_typed_decode_encodes_it() {
        let mut ids = ListIds::default();
        ids.note(&request(7, "tools/list"));
        let line = format!(r#"{{"id":7,"result":{LIST},"jsonrpc":"2.0"}}"#);
        let raw = raw_result(ids.answered(line.as_bytes()).expect("answered raw"));
        assert_eq!(raw, serde_json::from_str::<Value>(LIST).unwrap());
        let typed: ServerJsonRpcMessage = serde_json::from_str(&line).unwrap();
        let JsonRpcMessage::Response(typed) = typed else {
            panic!("not a response")
        };
        assert!(matches!(typed.result, ServerResult::ListToolsResult(_)));
        assert_eq!(serde_json::to_value(&typed.result).unwrap(), raw);
        assert_eq!(ids.len(), 0);
        assert!(
            ids.answered(line.as_bytes()).is_none(),
            "forgotten once answered"
        );
    }

    #[test]
    fn other_methods_ids_and_shapes_take_rmcps_decode() {
        let mut ids = ListIds::default();
        ids.note(&request(1, "prompts/list"));
        assert_eq!(ids.len(), 0, "only tools/list is noted");
        ids.note(&request(2, "tools/list"));
        let lines = [
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{LIST}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"2","result":{LIST}}}"#),
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{LIST},"extra":1}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{LIST},"result":{LIST}}}"#),
            r#"{"jsonrpc":"1.0","id":2,"result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"result":[]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned(),
        ];
        for line in &lines {
            assert!(ids.answered(line.as_bytes()).is_none(), "{line}");
        }
        assert_eq!(ids.len(), 1, "still waiting for id 2");
    }

    #[test]
    fn long_lines_are_read_once_and_still_only_answer_a_noted_id() {
        let mut ids = ListIds::default();
        ids.note(&request(4, "tools/list"));
        let tools: Vec<Value> = (0..400)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        let result = json!({"tools": tools}).to_string();
        assert!(
            result.len() >= LIST_PROBE_MAX_BYTES,
            "the long path is taken"
        );
        for other in [r#""5""#, "5"] {
            let line = format!(r#"{{"result":{result},"jsonrpc":"2.0","id":{other}}}"#);
            assert!(ids.answered(line.as_bytes()).is_none(), "id {other}");
        }
        let error = format!(
            r#"{{"jsonrpc":"2.0","id":4,"error":{{"code":1,"message":"{}"}}}}"#,
            "x".repeat(LIST_PROBE_MAX_BYTES)
        );
        assert!(
            ids.answered(error.as_bytes()).is_none(),
            "a long error answer"
        );
        assert_eq!(ids.len(), 1);
        let line = format!(r#"{{"result":{result},"jsonrpc":"2.0","id":4}}"#);
        let raw = raw_result(ids.answered(line.as_bytes()).expect("answered raw"));
        assert_eq!(raw, serde_json::from_str::<Value>(&result).unwrap());
        assert_eq!(ids.len(), 0);
    }

    #[test]
    fn the_nesting_bound_is_the_full_decodes() {
        let mut ids = ListIds::default();
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for n in [125, 126, 127, 128] {
            ids.note(&request(1, "tools/list"));
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[],"_meta":{{"d":{}}}}}}}"#,
                deep(n)
            );
            let full = serde_json::from_str::<ServerJsonRpcMessage>(&line).is_ok();
            assert_eq!(ids.answered(line.as_bytes()).is_some(), full, "depth {n}");
            ids = ListIds::default();
        }
    }

    #[test]
    fn the_ids_are_bounded_oldest_first() {
        let mut ids = ListIds::default();
        let over = i64::try_from(MAX_PENDING_LIST_IDS).unwrap() + 1;
        for id in 0..over {
            ids.note(&request(id, "tools/list"));
        }
        assert_eq!(ids.len(), MAX_PENDING_LIST_IDS);
        let answer = |id: i64| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}}}"#);
        assert!(
            ids.answered(answer(0).as_bytes()).is_none(),
            "the oldest went"
        );
        assert!(ids.answered(answer(over - 1).as_bytes()).is_some());
    }
}
