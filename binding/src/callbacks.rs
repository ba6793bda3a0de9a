//! The app's JavaScript callbacks seen from Rust: the handlers for
//! server-initiated requests ([`JsRequests`], with the withdrawal notice
//! when a request is dropped before JS answered) and the credential store
//! ([`JsSecrets`]) and the dynamic headers provider ([`JsHeaders`]).

use std::sync::Arc;

use std::collections::BTreeMap;

use ahp_mcp_host::config::{HeaderProvider, HeaderReason};
use ahp_mcp_host::requests::{HandlerRequest, RequestHandler, ServerRequestKind};
use ahp_mcp_host::SecretStore;
use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::{JsSink, RequestFn};

/// Server-initiated requests answered by the JS handlers of `McpHost`.
pub(super) struct JsRequests {
    pub(super) tsfn: Arc<RequestFn>,
    pub(super) handled: Vec<ServerRequestKind>,
    /// The `sampling` handler takes SEP-1577 tools (JS `{handler, tools: true}`).
    pub(super) sampling_tools: bool,
    /// The `elicitation` handler takes URL mode (JS `{handler, url: true}`).
    pub(super) elicitation_url: bool,
    /// Where a withdrawal goes (`requestWithdrawn`, see [`Withdrawal`]);
    /// gives each request its id.
    pub(super) sink: Arc<JsSink>,
}

impl RequestHandler for JsRequests {
    fn handles(&self, kind: ServerRequestKind) -> bool {
        self.handled.contains(&kind)
    }

    fn sampling_tools(&self) -> bool {
        self.sampling_tools && self.handles(ServerRequestKind::Sampling)
    }

    fn elicitation_url(&self) -> bool {
        self.elicitation_url && self.handles(ServerRequestKind::Elicitation)
    }

    /// Sends `{serverId, method, params, requestId, chatInput?, origin?}` to JS; when
    /// the future is dropped before JS answered, JS gets a `requestWithdrawn`
    /// item (its handler's `context.signal` aborts).
    fn request(
        &self,
        request: HandlerRequest,
    ) -> BoxFuture<'static, std::result::Result<Value, String>> {
        let tsfn = self.tsfn.clone();
        let id = self.sink.next_request();
        let mut payload = json!({
            "serverId": request.server_id,
            "method": request.kind.method(),
            "params": request.params,
            "requestId": id,
        });
        if let Some(chat_input) = &request.chat_input {
            payload["chatInput"] = json!(chat_input);
        }
        if let Some(origin) = &request.origin {
            payload["origin"] = json!(origin);
        }
        let withdrawal = Withdrawal::armed(self.sink.clone(), id);
        Box::pin(async move {
            // The whole guard moves into the future (not only its field).
            let mut withdrawal = withdrawal;
            let answer = async {
                let pending = tsfn
                    .call_async_catch(payload.to_string())
                    .await
                    .map_err(|e| e.reason.clone())?;
                pending.await.map_err(|e| e.reason.clone())
            }
            .await;
            withdrawal.armed = false;
            serde_json::from_str(&answer?).map_err(|e| format!("handler result is not JSON: {e}"))
        })
    }
}

/// Tells JS that request `id` was withdrawn, when dropped while `armed`
/// (the request's future was dropped before the JS handler answered).
pub(super) struct Withdrawal {
    sink: Arc<JsSink>,
    id: u64,
    pub(super) armed: bool,
}

impl Withdrawal {
    /// The withdrawal of request `id`, armed.
    pub(super) fn armed(sink: Arc<JsSink>, id: u64) -> Self {
        Self {
            sink,
            id,
            armed: true,
        }
    }
}

impl Drop for Withdrawal {
    fn drop(&mut self) {
        if self.armed {
            let item = json!({ "event": "requestWithdrawn", "payload": { "requestId": self.id } });
            self.sink.push(item.to_string());
        }
    }
}

/// The app's credential store (`credentials: {get, set, delete}` in JS).
pub(super) struct JsSecrets {
    pub(super) tsfn: Arc<RequestFn>,
}

/// Calls JS callback `tsfn` with `payload` and parses its JSON answer
/// (`what` names it in the error of an answer that is not JSON).
pub(super) async fn ask<T: serde::de::DeserializeOwned>(
    tsfn: Arc<RequestFn>,
    payload: Value,
    what: &str,
) -> std::result::Result<T, String> {
    let pending = tsfn
        .call_async_catch(payload.to_string())
        .await
        .map_err(|e| e.reason.clone())?;
    let answer = pending.await.map_err(|e| e.reason.clone())?;
    serde_json::from_str(&answer).map_err(|e| format!("{what} answer is not JSON: {e}"))
}

impl JsSecrets {
    fn op(&self, payload: Value) -> BoxFuture<'static, std::result::Result<Value, String>> {
        Box::pin(ask(self.tsfn.clone(), payload, "credential store"))
    }
}

impl SecretStore for JsSecrets {
    fn get(&self, key: String) -> BoxFuture<'static, std::result::Result<Option<String>, String>> {
        let call = self.op(json!({ "op": "get", "key": key }));
        Box::pin(async move {
            match call.await?.get("value") {
                Some(Value::String(s)) => Ok(Some(s.clone())),
                _ => Ok(None),
            }
        })
    }
    fn set(
        &self,
        key: String,
        value: String,
    ) -> BoxFuture<'static, std::result::Result<(), String>> {
        let call = self.op(json!({ "op": "set", "key": key, "value": value }));
        Box::pin(async move { call.await.map(|_| ()) })
    }
    fn delete(&self, key: String) -> BoxFuture<'static, std::result::Result<(), String>> {
        let call = self.op(json!({ "op": "delete", "key": key }));
        Box::pin(async move { call.await.map(|_| ()) })
    }
}

/// The app's dynamic headers provider (`headers` in JS): `{serverId, url,
/// reason}` in, a JSON object of strings (or `null`) out; `index.js` checks
/// the shape.
pub(super) struct JsHeaders {
    pub(super) tsfn: Arc<RequestFn>,
}

impl HeaderProvider for JsHeaders {
    fn headers(
        &self,
        server_id: String,
        url: String,
        reason: HeaderReason,
    ) -> BoxFuture<'static, std::result::Result<Option<BTreeMap<String, String>>, String>> {
        let payload = json!({ "serverId": server_id, "url": url, "reason": reason.as_str() });
        Box::pin(ask(self.tsfn.clone(), payload, "headers"))
    }
}
