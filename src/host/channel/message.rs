//! JSON-RPC 2.0 messages on an `mcp://` channel: checking what an AHP
//! client sends ([`parse`]) and building what goes back ([`result`],
//! [`error`], [`host_error`]). Pure.
//!
//! Every message carries the top-level `channel` (the channel URI); a
//! response carries the client's own `id`, unchanged (string or number).

use serde_json::{json, Map, Value};

use crate::apps::policy::Kind;
use crate::error::{ErrorCode, HostError};

/// JSON-RPC "Invalid Request" (malformed, over a bound).
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC "Method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC "Invalid params".
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC "Internal error".
pub const INTERNAL_ERROR: i64 = -32603;
/// Server error: the server is not ready (unknown or stale channel too).
pub const SERVER_NOT_READY: i64 = -32000;
/// Server error: the request took longer than its time bound.
pub const TIMED_OUT: i64 = -32001;

/// A well-formed message of a client.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// The `channel` URI it was sent on.
    pub channel: String,
    /// The request's `id` (a string or a number); `None`: a notification.
    pub id: Option<Value>,
    /// The method.
    pub method: String,
    /// The `params` object, if any.
    pub params: Option<Value>,
}

impl Incoming {
    /// Request or notification.
    #[must_use]
    pub fn kind(&self) -> Kind {
        if self.id.is_some() {
            Kind::Request
        } else {
            Kind::Notification
        }
    }
}

/// What [`parse`] makes of a message that is not a well-formed request or
/// notification.
#[derive(Debug, Clone, PartialEq)]
pub enum Bad {
    /// Malformed: answered with -32600 `invalid_argument`, with the
    /// message's `id` when it has a usable one, else `null` (JSON-RPC 2.0 §5).
    Malformed {
        /// The id to answer with.
        id: Value,
        /// What is wrong.
        why: String,
    },
    /// A response (`result` or `error`, no `method`): nothing on the
    /// channel is waiting for one, so it is dropped (and logged).
    Response,
}

/// The usable `id` of `message`: a string or a number; `Err` with `null`
/// for any other present value; `Ok(None)` when absent.
pub fn usable_id(message: &Map<String, Value>) -> Result<Option<Value>, Value> {
    match message.get("id") {
        None => Ok(None),
        Some(id @ (Value::String(_) | Value::Number(_))) => Ok(Some(id.clone())),
        Some(_) => Err(Value::Null),
    }
}

/// Checks the JSON-RPC shape of `message` (sent on `channel`):
/// `jsonrpc: "2.0"`, a string `method`, an `id` that is a string or a
/// number when present, `params` an object when present (MCP).
///
/// # Errors
/// [`Bad`].
pub fn parse(channel: &str, message: &Map<String, Value>) -> Result<Incoming, Bad> {
    let id = usable_id(message);
    let malformed = |why: &str| Bad::Malformed {
        id: id.clone().ok().flatten().unwrap_or(Value::Null),
        why: why.to_owned(),
    };
    if !message.contains_key("method")
        && (message.contains_key("result") || message.contains_key("error"))
    {
        return Err(Bad::Response);
    }
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(malformed("jsonrpc must be \"2.0\""));
    }
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Err(malformed("method must be a string"));
    };
    let Ok(id) = id.clone() else {
        return Err(malformed("id must be a string or a number"));
    };
    let params = message.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return Err(malformed("params must be an object"));
    }
    Ok(Incoming {
        channel: channel.to_owned(),
        id,
        method: method.to_owned(),
        params: params.cloned(),
    })
}

/// A result response to request `id` on `channel`.
#[must_use]
pub fn result(channel: &str, id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result, "channel": channel })
}

/// An error response to request `id` on `channel`.
#[must_use]
pub fn error(channel: &str, id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error, "channel": channel })
}

/// A host-made error response: `rpc_code`, `e`'s message, `data` `{code:
/// <the stable host code>, …}` with the members of `e`'s detail (e.g. a
/// timeout's `kind` and `ms`) and `extra`.
#[must_use]
pub fn host_error(
    channel: &str,
    id: &Value,
    rpc_code: i64,
    e: &HostError,
    extra: Map<String, Value>,
) -> Value {
    let mut data = Map::new();
    data.insert("code".to_owned(), json!(e.code.as_str()));
    if let Some(Value::Object(detail)) = e.detail.data() {
        for (k, v) in detail {
            data.entry(k).or_insert(v);
        }
    }
    data.extend(extra);
    error(channel, id, rpc_code, &e.message, Some(Value::Object(data)))
}

/// The JSON-RPC code of a host error that arose while serving a request
/// (the refusals before it is served name their own): `timeout` -32001,
/// `not_supported` -32601, `invalid_argument` and `not_found` -32602 (an
/// unknown UI resource, as SEP-2164), `protocol_error`, `limit_exceeded`
/// (a result over its bound) and `internal` -32603, anything else
/// (`server_not_ready`, `server_exited`, `auth_required`, `disposed`, …) -32000.
#[must_use]
pub fn rpc_code(code: ErrorCode) -> i64 {
    match code {
        ErrorCode::Timeout => TIMED_OUT,
        ErrorCode::NotSupported => METHOD_NOT_FOUND,
        ErrorCode::InvalidArgument | ErrorCode::NotFound => INVALID_PARAMS,
        ErrorCode::ProtocolError | ErrorCode::LimitExceeded | ErrorCode::Internal => INTERNAL_ERROR,
        _ => SERVER_NOT_READY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorDetail, TimeoutKind};

    fn msg(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn requests_and_notifications_keep_their_ids() {
        let r = parse(
            "mcp:/c",
            &msg(json!({"jsonrpc": "2.0", "id": "a", "method": "m"})),
        );
        let r = r.unwrap();
        assert_eq!((r.kind(), r.id), (Kind::Request, Some(json!("a"))));
        let n = parse(
            "mcp:/c",
            &msg(json!({"jsonrpc": "2.0", "id": 7, "method": "m",
                                            "params": {"x": 1}})),
        )
        .unwrap();
        assert_eq!(n.id, Some(json!(7)));
        assert_eq!(n.params, Some(json!({"x": 1})));
        let n = parse("mcp:/c", &msg(json!({"jsonrpc": "2.0", "method": "m"}))).unwrap();
        assert_eq!(n.kind(), Kind::Notification);
    }

    #[test]
    fn malformed_messages_are_answered_with_their_id_or_null() {
        let bad = |v: Value| parse("c", &msg(v)).unwrap_err();
        let id = |b: Bad| match b {
            Bad::Malformed { id, .. } => id,
            Bad::Response => panic!("a response"),
        };
        assert_eq!(
            id(bad(json!({"jsonrpc": "1.0", "id": 3, "method": "m"}))),
            json!(3)
        );
        assert_eq!(id(bad(json!({"jsonrpc": "2.0", "id": "x"}))), json!("x"));
        assert_eq!(
            id(bad(json!({"jsonrpc": "2.0", "id": true, "method": "m"}))),
            Value::Null
        );
        assert_eq!(
            id(bad(json!({"jsonrpc": "2.0", "id": null, "method": "m"}))),
            Value::Null
        );
        assert_eq!(
            id(bad(
                json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]})
            )),
            json!(1)
        );
        assert_eq!(
            bad(json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            Bad::Response
        );
    }

    #[test]
    fn host_errors_carry_the_stable_code_and_the_detail() {
        let e =
            HostError::new(ErrorCode::Timeout, "t timed out").with_detail(ErrorDetail::Timeout {
                kind: TimeoutKind::Total,
                ms: 5,
            });
        let r = host_error("mcp:/c", &json!(1), TIMED_OUT, &e, Map::new());
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": 1, "channel": "mcp:/c", "error": {
                "code": -32001, "message": "t timed out",
                "data": {"code": "timeout", "kind": "total", "ms": 5}}})
        );
        assert_eq!(rpc_code(ErrorCode::ServerExited), SERVER_NOT_READY);
        assert_eq!(rpc_code(ErrorCode::LimitExceeded), INTERNAL_ERROR);
    }
}
