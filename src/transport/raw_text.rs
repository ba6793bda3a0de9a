//! A `tools/list` answer read as text: the response is checked for its
//! shape and nesting ([`read_answer`]) without building a tree, and its
//! `result` is handed on as the text the server sent. The catalogue reads
//! each entry of that text one level deep and parses only what changed
//! (`catalogue::server_tools`), so a re-list of a thousand unchanged or
//! relabeled tools never builds their trees (issue 28).
//!
//! On stdio the text travels through rmcp's service loop inside the
//! `CustomResult` rmcp hands the request ([`carry`], [`carried`]): a result
//! with one `_meta` member holding the carrier key and nothing else. The
//! key ends in 128 random bits drawn once per process ([`carrier_key`]), so
//! a server cannot write a result that passes for a carried text and skip
//! [`read_answer`]'s checks.

use std::collections::hash_map::RandomState;
use std::sync::OnceLock;

use rmcp::model::RequestId;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::limits::MAX_MESSAGE_DEPTH;
use crate::transport::raw_tools::ResultOnly;
use crate::transport::stdout_monitor::framer::max_depth;

/// The `_meta` member of a result that carries a listing's text:
/// `ahp-mcp-host/rawText/` and 32 hex digits drawn once per process (from
/// the OS's randomness, through the standard library's hash keys).
pub fn carrier_key() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let draw = || RandomState::new().build_hasher().finish();
        format!("ahp-mcp-host/rawText/{:016x}{:016x}", draw(), draw())
    })
}

/// `message` (one JSON-RPC message's text) as the id it answers and its
/// result's text, when it is exactly `{"jsonrpc":"2.0","id":…,"result":{…}}`
/// (members in any order), valid JSON, and nested less deeply than a full
/// decode allows (serde_json's recursion limit, [`MAX_MESSAGE_DEPTH`]);
/// `None` otherwise (rmcp's decode then takes it, and refuses what it
/// refuses). A lone surrogate escape in the result (which a full decode
/// refuses and the transports then repair) is read as U+FFFD
/// ([`super::lone_surrogates`]).
pub fn read_answer(message: &[u8]) -> Option<(RequestId, String)> {
    let answer: ResultOnly<&RawValue> = serde_json::from_slice(message).ok()?;
    let result = answer.result.get();
    if !result.starts_with('{') || max_depth(message) >= MAX_MESSAGE_DEPTH {
        return None;
    }
    let text = super::lone_surrogates::replace_str(result).unwrap_or_else(|| result.to_owned());
    Some((answer.id, text))
}

/// The `CustomResult` value that carries `text` (a result's JSON text).
pub fn carry(text: String) -> Value {
    let mut meta = Map::with_capacity(1);
    meta.insert(carrier_key().to_owned(), Value::String(text));
    let mut result = Map::with_capacity(1);
    result.insert("_meta".to_owned(), Value::Object(meta));
    Value::Object(result)
}

/// The text `result` carries ([`carry`]); `Err(result)` for any other value.
///
/// # Errors
/// `result` itself when it carries no text.
pub fn carried(result: Value) -> Result<String, Value> {
    let Value::Object(mut members) = result else {
        return Err(result);
    };
    let carries = members.len() == 1
        && members
            .get("_meta")
            .and_then(Value::as_object)
            .is_some_and(|m| m.len() == 1 && m.get(carrier_key()).is_some_and(Value::is_string));
    if !carries {
        return Err(Value::Object(members));
    }
    match members.remove("_meta") {
        Some(Value::Object(mut meta)) => match meta.remove(carrier_key()) {
            Some(Value::String(text)) => Ok(text),
            _ => Err(Value::Null),
        },
        _ => Err(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_carried_text_comes_back_and_nothing_else_is_taken_for_one() {
        let text = r#"{"tools":[{"name":"a"}]}"#.to_owned();
        assert_eq!(carried(carry(text.clone())).ok(), Some(text));
        let key = carrier_key();
        assert!(
            key.starts_with("ahp-mcp-host/rawText/") && key.len() == 21 + 32,
            "{key}"
        );
        let others = [
            json!({"tools": []}),
            json!({"_meta": {key: 1}}),
            json!({"_meta": {key: "x", "other": 1}}),
            json!({"_meta": {key: "x"}, "tools": []}),
            // What a server could send without knowing the key.
            json!({"_meta": {"ahp-mcp-host/rawText": "{}"}}),
            json!("x"),
        ];
        for other in others {
            assert_eq!(carried(other.clone()), Err(other));
        }
    }

    #[test]
    fn an_answer_is_read_only_in_its_exact_shape() {
        let ok = br#"{"result":{"tools":[]},"jsonrpc":"2.0","id":7}"#;
        assert_eq!(
            read_answer(ok),
            Some((RequestId::Number(7), r#"{"tools":[]}"#.to_owned()))
        );
        let cut = br#"{"jsonrpc":"2.0","id":7,"result":{"d":"ab\ud83d","p":"\ud83d\ude00"}}"#;
        let (_, text) = read_answer(cut).expect("read");
        assert_eq!(text, r#"{"d":"ab\ufffd","p":"\ud83d\ude00"}"#);
        let refused: [&[u8]; 5] = [
            br#"{"jsonrpc":"2.0","id":7,"result":[]}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{},"extra":1}"#,
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
            br#"{"jsonrpc":"1.0","id":7,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[}"#,
        ];
        for line in refused {
            assert!(
                read_answer(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
