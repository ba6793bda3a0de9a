//! Multi round-trip requests (MRTR; SEP-2322, MCP 2026-07-28 "Server
//! Features › Input Required"): a `tools/call`, `prompts/get` or
//! `resources/read` may be answered with `resultType: "input_required"`,
//! carrying `inputRequests` (elicitation, sampling, roots requests keyed by
//! the server) and/or an opaque `requestState`. The client answers each
//! input request through the same handlers as 2025-era server requests
//! (the connection's [`HostClient`]) and sends the request again with
//! `inputResponses` and the `requestState` untouched, at most
//! [`MAX_INPUT_REQUIRED_ROUNDS`] times.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{InputRequest, InputRequiredResult, NumberOrString, ServerRequest};
use rmcp::service::{Peer, RequestContext, RoleClient, Service};
use serde_json::{Map, Value};

use super::client::HostClient;
use crate::chat::input_publisher::{ChatCallInputs, MrtrChatCall};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{
    MAX_INPUT_REQUIRED_ROUNDS, MAX_STATE_ONLY_ROUND_PAUSE_MS, STATE_ONLY_ROUND_PAUSE_MS,
};

/// Whether `result` is an MRTR `input_required` result.
pub fn is_input_required(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("input_required")
}

/// A final result as the app sees it: MCP 2026-07-28's `resultType:
/// "complete"` marker (the default, for the MRTR loop only) is left out, so
/// results read the same in both eras.
pub fn finished(mut result: Value) -> Value {
    if let Some(object) = result.as_object_mut() {
        if object.get("resultType").and_then(Value::as_str) == Some("complete") {
            object.shift_remove("resultType");
        }
    }
    result
}

/// The rounds of one request.
#[derive(Debug, Default)]
pub struct Rounds {
    done: usize,
    state_only: usize,
}

impl Rounds {
    /// Answers an `input_required` `result` of `context` (`"tools/call \"x\"
    /// on s"`): runs every input request through `handler` (concurrently)
    /// and returns the members to set on the next request's params:
    /// `inputResponses` (when there were requests) and `requestState` (as
    /// sent). A result with only `requestState` waits a short, growing pause
    /// first (50 ms doubling to 250 ms).
    ///
    /// # Errors
    ///
    /// `limit_exceeded` after [`MAX_INPUT_REQUIRED_ROUNDS`] rounds;
    /// `protocol_error` for a malformed `input_required` result (no
    /// `inputRequests` and no `requestState`, or an input request that is
    /// not elicitation, sampling or roots) or a handler that failed (the
    /// error names the method).
    ///
    /// With `chat` (the request runs as that AHP tool call) a form
    /// elicitation among the input requests is also published to AHP
    /// clients ([`crate::chat::input_publisher`]): its request context carries a
    /// [`MrtrChatCall`].
    pub async fn answer(
        &mut self,
        context: &str,
        result: Value,
        (handler, peer): (&HostClient, &Peer<RoleClient>),
        chat: Option<&Arc<ChatCallInputs>>,
    ) -> HostResult<Map<String, Value>> {
        self.done += 1;
        if self.done > MAX_INPUT_REQUIRED_ROUNDS {
            return Err(HostError::new(
                ErrorCode::LimitExceeded,
                format!("{context}: more than {MAX_INPUT_REQUIRED_ROUNDS} input_required rounds"),
            ));
        }
        let result: InputRequiredResult = serde_json::from_value(result).map_err(|e| {
            HostError::new(
                ErrorCode::ProtocolError,
                format!("{context}: invalid input_required result: {e}"),
            )
        })?;
        let requests = result.input_requests.unwrap_or_default();
        let mut next = Map::new();
        if requests.is_empty() {
            let pause = STATE_ONLY_ROUND_PAUSE_MS.saturating_mul(1 << self.state_only.min(3));
            tokio::time::sleep(Duration::from_millis(
                pause.min(MAX_STATE_ONLY_ROUND_PAUSE_MS),
            ))
            .await;
            self.state_only += 1;
        } else {
            self.state_only = 0;
            let answers = futures::future::try_join_all(
                requests
                    .into_iter()
                    .map(|(key, request)| fulfil(context, (handler, peer), key, request, chat)),
            )
            .await?;
            next.insert(
                "inputResponses".to_owned(),
                Value::Object(answers.into_iter().collect()),
            );
        }
        if let Some(state) = result.request_state {
            next.insert("requestState".to_owned(), Value::String(state));
        }
        Ok(next)
    }
}

/// One input request, answered by the connection's handler (also a task's
/// input request, [`super::task`]).
pub(super) async fn fulfil(
    context: &str,
    (handler, peer): (&HostClient, &Peer<RoleClient>),
    key: String,
    request: InputRequest,
    chat: Option<&Arc<ChatCallInputs>>,
) -> HostResult<(String, Value)> {
    let (method, request) = match request {
        InputRequest::Elicitation(r) => ("elicitation/create", ServerRequest::ElicitRequest(r)),
        InputRequest::CreateMessage(r) => (
            "sampling/createMessage",
            ServerRequest::CreateMessageRequest(r),
        ),
        InputRequest::ListRoots(r) => ("roots/list", ServerRequest::ListRootsRequest(r)),
        _ => {
            return Err(HostError::new(
                ErrorCode::ProtocolError,
                format!("{context}: input request {key:?} is not elicitation, sampling or roots"),
            ))
        }
    };
    let id = NumberOrString::String(Arc::from(key.as_str()));
    let mut ctx = RequestContext::new(id, peer.clone());
    if let Some(call) = chat {
        ctx.extensions.insert(MrtrChatCall(call.clone()));
    }
    let answer = handler.handle_request(request, ctx).await.map_err(|e| {
        HostError::new(
            ErrorCode::ProtocolError,
            format!(
                "{context}: {method} for input request {key:?} failed: {}",
                e.message
            ),
        )
    })?;
    let value = serde_json::to_value(answer)
        .map_err(|e| HostError::new(ErrorCode::Internal, format!("{context}: {method}: {e}")))?;
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complete_marker_is_left_out_of_the_final_result() {
        let done = finished(serde_json::json!({"content": [], "resultType": "complete", "z": 1}));
        assert_eq!(done, serde_json::json!({"content": [], "z": 1}));
        let keys: Vec<&String> = done
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["content", "z"], "order kept");
        let other = serde_json::json!({"resultType": "task"});
        assert_eq!(finished(other.clone()), other);
    }

    #[test]
    fn only_result_type_input_required_is_mrtr() {
        assert!(is_input_required(
            &serde_json::json!({"resultType": "input_required"})
        ));
        assert!(!is_input_required(
            &serde_json::json!({"resultType": "complete"})
        ));
        assert!(!is_input_required(&serde_json::json!({"content": []})));
    }
}
