//! Serving one admitted channel request: forwarded to the server through
//! the one request path ([`Session::request`]: bounded send, MRTR, error
//! mapping, the response cache), read through the UI resource gate, or
//! answered by the app's `sampling` handler; bounded by
//! `channelRequestTimeoutMs` and by the client's `notifications/cancelled`;
//! answered exactly once (not at all once the client cancelled it).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::calls::Registration;
use super::message::{self, Incoming};
use crate::apps::channels::RequestSlot;
use crate::apps::policy::Route;
use crate::apps::ui_resource::check_contents;
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult};
use crate::events::HostEvent;
use crate::json::check_bounds;
use crate::mcp::request::server_error_message;
use crate::mcp::{Sending, Session};
use crate::requests::{HandlerRequest, ServerRequestKind};
use crate::supervisor::HostShared;

/// One admitted request and what it holds while in flight.
pub(super) struct Job {
    pub(super) shared: Arc<HostShared>,
    pub(super) conn: Arc<Session>,
    pub(super) server_id: String,
    pub(super) incoming: Incoming,
    pub(super) id: Value,
    pub(super) route: Route,
    /// The channel's in-flight slot, freed when the job ends.
    pub(super) _slot: RequestSlot,
    /// The client's cancellation of this request.
    pub(super) call: Registration,
}

impl Job {
    /// Serves the request and sends its response as a `channelMessage`
    /// (none once the client cancelled it or the host was disposed).
    pub(super) async fn run(self) {
        let abort = CancellationToken::new();
        let ms = self.shared.limits().channel_request_timeout_ms;
        let limit = Duration::from_millis(ms);
        let work = self.work(&abort, limit);
        tokio::pin!(work);
        let outcome = tokio::select! {
            outcome = &mut work => Some(outcome),
            () = tokio::time::sleep(limit) => {
                abort.cancel();
                let _ = (&mut work).await;
                let what = format!(
                    "{} timed out after {ms} ms (channelRequestTimeoutMs)",
                    self.context()
                );
                Some(Err(HostError::new(ErrorCode::Timeout, what)))
            }
            () = self.call.cancelled() => {
                abort.cancel();
                let _ = (&mut work).await;
                None
            }
            () = self.shared.disposed().cancelled() => None,
        };
        if let Some(outcome) = outcome {
            let answer = self.answer(outcome);
            self.shared
                .publisher()
                .sink()
                .send(HostEvent::ChannelMessage(Box::new(answer)));
        }
    }

    /// `"<method> on <server>"`, as the request path names a request.
    fn context(&self) -> String {
        format!("{} on {}", self.incoming.method, self.server_id)
    }

    async fn work(&self, abort: &CancellationToken, limit: Duration) -> HostResult<Value> {
        let params = self.incoming.params.clone().unwrap_or_else(|| json!({}));
        let sending = Sending {
            timeout: limit,
            abort: Some(abort),
        };
        let (conn, server_id, limits) = (&self.conn, &self.server_id, &self.shared.limits());
        let method = self.incoming.method.as_str();
        match self.route {
            Route::Forward => {
                conn.request(server_id, (method, params), limits, sending)
                    .await
            }
            Route::ReadUi => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let result = conn
                    .request(server_id, (method, params), limits, sending)
                    .await?;
                check_contents(server_id, &uri, &result, limits.max_ui_resource_bytes)?;
                Ok(result)
            }
            Route::Sample => self.sample(params, abort).await,
            Route::Log | Route::Cancel => Err(HostError::new(
                ErrorCode::Internal,
                format!("{method} is not a request"),
            )),
        }
    }

    /// `sampling/createMessage` of the App, answered by the app's
    /// `sampling` handler (the one servers' requests use); its result is
    /// bounded like any result.
    async fn sample(&self, params: Value, abort: &CancellationToken) -> HostResult<Value> {
        let kind = ServerRequestKind::Sampling;
        let context = self.context();
        let Some(handler) = self.shared.opener().requests().filter(|h| h.handles(kind)) else {
            let what = format!("{context}: the app registered no sampling handler");
            return Err(HostError::new(ErrorCode::NotSupported, what));
        };
        let answer = handler.request(HandlerRequest::new(self.server_id.clone(), kind, params));
        let result = tokio::select! {
            answer = answer => answer.map_err(|message| {
                let what = format!("{context}: the sampling handler failed: {message}");
                HostError::new(ErrorCode::Internal, what)
            })?,
            () = abort.cancelled() => {
                return Err(HostError::new(ErrorCode::Cancelled, format!("{context} was cancelled")));
            }
        };
        check_bounds(&context, &result, self.shared.limits())?;
        Ok(result)
    }

    /// The response: the result, the server's own JSON-RPC error unchanged,
    /// or a host error with `data.code`.
    fn answer(&self, outcome: HostResult<Value>) -> Value {
        let channel = &self.incoming.channel;
        let e = match outcome {
            Ok(result) => return message::result(channel, &self.id, result),
            Err(e) => e,
        };
        if let (Some(text), ErrorDetail::JsonRpc { code, data }) =
            (server_error_message(&self.context(), &e), &e.detail)
        {
            return message::error(channel, &self.id, *code, text, data.clone());
        }
        let rpc = message::rpc_code(e.code);
        message::host_error(channel, &self.id, rpc, &e, Map::new())
    }
}
