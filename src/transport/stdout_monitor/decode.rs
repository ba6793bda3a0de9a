//! Whether rmcp's stdio codec can decode a stdout line, and if not, what was
//! wrong and which requests it answered.
//!
//! The verdict is rmcp's own decode: `serde_json::from_slice` into
//! [`ServerJsonRpcMessage`] after the codec's framing (a leading UTF-8 byte
//! order mark and a trailing `\r` dropped), so a line is reported exactly
//! when the codec drops it. The description only names the problem (JSON-RPC
//! 2.0 §4, §5, §5.1; MCP messages are never batched).

use std::borrow::Cow;

use serde_json::{Map, Value};

/// A line rmcp's codec cannot decode.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Undecodable {
    /// The ids of the responses it carries (a response's `id`, or those of
    /// a batch's responses); none for a request or notification of the
    /// server, or when no id can be found.
    pub ids: Vec<Value>,
    /// What was wrong, e.g. "not valid UTF-8 (byte 0xB0 at offset 62)".
    pub what: String,
}

/// UTF-8 byte order mark (RFC 8259 §8.1), dropped by rmcp's codec.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `None` when rmcp decodes `line` (without its `\n`); otherwise what was
/// wrong with it.
#[cfg(test)]
pub(super) fn check(line: &[u8]) -> Option<Undecodable> {
    let line = framed(line);
    let err = serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(line).err()?;
    Some(explain(line, &err))
}

/// A line as rmcp's codec decodes it: without a trailing `\r` and a
/// leading UTF-8 byte order mark.
pub(crate) fn framed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(BOM).unwrap_or(line)
}

/// What was wrong with `line` (as [`framed`] returns it), which rmcp could
/// not decode (`err`), and which requests it answered (for a line that is
/// not JSON, its top-level `id` wherever it is: [`top_level_id`]).
pub(super) fn explain(line: &[u8], err: &serde_json::Error) -> Undecodable {
    let (text, bad_utf8) = match std::str::from_utf8(line) {
        Ok(text) => (Cow::Borrowed(text), None),
        Err(e) => (String::from_utf8_lossy(line), Some(e.valid_up_to())),
    };
    let parsed = serde_json::from_str::<Value>(&text);
    let ids = match &parsed {
        Ok(value) => response_ids(value),
        Err(_) => top_level_id(text.as_bytes()).into_iter().collect(),
    };
    let what = match (bad_utf8, &parsed) {
        (Some(at), _) => format!(
            "not valid UTF-8 (byte 0x{:02X} at offset {at})",
            line.get(at).copied().unwrap_or_default()
        ),
        (None, Err(e)) => format!("not JSON ({e})"),
        (None, Ok(value)) => shape_problem(value)
            .unwrap_or_else(|| format!("not a JSON-RPC message the host can decode ({err})")),
    };
    Undecodable { ids, what }
}

/// The ids of the responses in `value`: its own `id` (a message without
/// `method`), or those of a batch's members.
fn response_ids(value: &Value) -> Vec<Value> {
    let id = |m: &Map<String, Value>| {
        m.get("id")
            .filter(|id| !m.contains_key("method") && (id.is_number() || id.is_string()))
            .cloned()
    };
    match value {
        Value::Object(m) => id(m).into_iter().collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_object)
            .filter_map(id)
            .collect(),
        _ => Vec::new(),
    }
}

/// What makes the JSON `value` no JSON-RPC message, when it is one of the
/// common shapes: a batch, a wrong `jsonrpc`, a response with both or
/// neither of `result` and `error`, a malformed error object.
fn shape_problem(value: &Value) -> Option<String> {
    let m = match value {
        Value::Object(m) => m,
        Value::Array(_) => {
            return Some("a batch (JSON array); MCP messages are never batched".to_owned())
        }
        _ => return Some("not a JSON object".to_owned()),
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some("`jsonrpc` is not \"2.0\"".to_owned());
    }
    if let Some(method) = m.get("method") {
        let what = if m.contains_key("id") {
            "request"
        } else {
            "notification"
        };
        return Some(match method.as_str() {
            Some(name) => format!(
                "a {what} `{}` of the server with invalid params",
                excerpt(name)
            ),
            None => format!("a {what} whose `method` is not a string"),
        });
    }
    let error = match (m.get("result"), m.get("error")) {
        (Some(_), Some(_)) => return Some("a response with both `result` and `error`".to_owned()),
        (None, None) => return Some("a response with neither `result` nor `error`".to_owned()),
        (_, error) => error,
    };
    let id_ok = m
        .get("id")
        .is_some_and(|id| id.is_number() || id.is_string());
    let Some(error) = error else {
        return (!id_ok).then(|| "a response without a string or number `id`".to_owned());
    };
    let Some(error) = error.as_object() else {
        return Some("an error response whose `error` is not an object".to_owned());
    };
    if !error.get("code").is_some_and(|c| c.is_i64()) {
        return Some("an error response whose `code` is not an integer".to_owned());
    }
    if !error.get("message").is_some_and(Value::is_string) {
        return Some("an error response whose `message` is not a string".to_owned());
    }
    None
}

/// At most 60 characters of a server-chosen name.
fn excerpt(text: &str) -> String {
    text.chars().take(60).collect()
}

/// The top-level `id` of a JSON-RPC response from the first and last bytes
/// of its line: `{"jsonrpc":"2.0","id":…` (id first) or `…,"id":…}` (id
/// last, as the TypeScript SDK writes responses). `None` for a line that
/// names a `method` in its first bytes (a request of the server: its id is
/// not one of the host's).
pub(super) fn message_id(head: &[u8], tail: &[u8]) -> Option<Value> {
    fn value_at(text: &str) -> Option<Value> {
        let rest = text.trim_start();
        let end = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.find('"').map(|i| i + 2)?
        } else {
            rest.find(|c: char| !(c.is_ascii_digit() || c == '-'))
                .unwrap_or(rest.len())
        };
        serde_json::from_str(&rest[..end])
            .ok()
            .filter(|v: &Value| v.is_number() || v.is_string())
    }
    let head = String::from_utf8_lossy(head);
    if head.contains("\"method\":") {
        return None;
    }
    let tail = String::from_utf8_lossy(tail);
    if let Some(i) = tail.rfind("\"id\":") {
        let after = &tail[i + 5..];
        let v = value_at(after)?;
        let rest = after.trim_start().get(v.to_string().len()..).unwrap_or("");
        if rest.trim() == "}" {
            return Some(v);
        }
    }
    let start = head
        .strip_prefix("{\"jsonrpc\":\"2.0\",\"id\":")
        .or_else(|| head.strip_prefix("{\"id\":"))?;
    value_at(start)
}

/// The `id` member of the top-level object of a line that is not JSON (cut
/// short, a bad escape, a stray byte), found wherever it is: `{"id":…`
/// first, `…,"id":…}` last as the TypeScript SDK writes responses, or in
/// the middle. The line is scanned as JSON text (strings and escapes
/// followed, nesting counted) up to its end; `None` when no such member
/// has a number or string value, or when the object has a top-level
/// `method` (a request of the server: its id is not one of the host's).
pub(super) fn top_level_id(line: &[u8]) -> Option<Value> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut string_start, mut key) = (0, None::<&[u8]>);
    let (mut id, mut method) = (None, false);
    for (i, &b) in line.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    key = (depth == 1).then(|| &line[string_start..i]);
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => (in_string, string_start) = (true, i + 1),
            b':' if depth == 1 => match key.take() {
                Some(b"id") => id = id.or_else(|| scalar_at(&line[i + 1..])),
                Some(b"method") => method = true,
                _ => {}
            },
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'{' | b'[' => (depth, key) = (depth + 1, None),
            b'}' | b']' => (depth, key) = (depth.saturating_sub(1), None),
            _ => key = None,
        }
    }
    id.filter(|_| !method)
}

/// The number or string JSON value at the start of `text` (after
/// whitespace), whatever follows it.
fn scalar_at(text: &[u8]) -> Option<Value> {
    let mut values = serde_json::Deserializer::from_slice(text).into_iter::<Value>();
    values
        .next()?
        .ok()
        .filter(|v| v.is_number() || v.is_string())
}
