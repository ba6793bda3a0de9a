//! Requests on a live MCP connection: one send path ([`InFlight`], used by
//! [`send_bounded`] and by `tools/call` in [`super::tool_call`]), one mapping
//! of rmcp's `ServiceError` ([`map_service_error`]) into [`RequestFailure`],
//! list walks following every cursor (MCP 2025-11-25 "Utilities ›
//! Pagination", [`list_all`]; a list the server did not declare is empty
//! without a request), the response cache hook ([`send_cached`]: a fresh
//! cacheable result is served without a request, see [`super::cache`]) and
//! the result bounds ([`crate::json::check_bounds`]).
//!
//! Items of list walks are returned as raw JSON ([`list`]): one malformed
//! tool must cost only that tool (see [`crate::catalogue`]), not the whole
//! typed result; a `tools/list` walk's items as the text the server sent
//! (`list::ListItem`).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rmcp::model::{
    ClientRequest, CustomRequest, CustomResult, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::cache::ResponseCache;
use crate::error::strip_type_names;
use crate::error::{ErrorCode, ErrorDetail, HostError, TimeoutKind};
use crate::network::error_text::what_happened;
use crate::transport::stdout_monitor::{Discarded, DiscardedIds};
use crate::transport::stream_watch::StreamWatch;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestFailure {
    /// The server answered 401/403 with this `WWW-Authenticate` header
    /// (parse it with [`crate::auth::AuthChallenge::from_header`] against the
    /// server's URL).
    Auth(String),
    /// Any other failure, with its stable code (`protocol_error`, `timeout`,
    /// `limit_exceeded`, `connect_failed`, …) and a message naming the
    /// server and the method.
    Failed(HostError),
}

impl RequestFailure {
    /// The host's error for this failure of `method` on `server_id`: a
    /// challenge becomes `auth_required` ("refused (authorization)").
    pub fn into_error(self, server_id: &str, method: &str) -> HostError {
        match self {
            Self::Failed(e) => e,
            Self::Auth(_) => HostError::new(
                ErrorCode::AuthRequired,
                format!("{method} on {server_id} was refused (authorization)"),
            ),
        }
    }
}

impl From<HostError> for RequestFailure {
    fn from(e: HostError) -> Self {
        Self::Failed(e)
    }
}

/// The response of a request in flight.
pub type Response = Pin<Box<dyn Future<Output = Result<ServerResult, ServiceError>> + Send>>;

/// A request sent to a server and not yet answered.
pub struct InFlight {
    /// The request's JSON-RPC id.
    pub id: RequestId,
    /// Its `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Resolves with the response (or rmcp's error: timeout, transport
    /// closed, JSON-RPC error). Poll it by `&mut`; never again once it resolved.
    pub response: Response,
    /// Tells when the stdout reader discarded this request's response.
    pub discarded: DiscardWatch,
}

/// Request `method` with `params` as rmcp's untyped request (a pass-through).
pub fn custom(method: &str, params: Value) -> ClientRequest {
    ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)))
}

impl InFlight {
    /// Sends `request` (one of rmcp's typed requests, or [`custom`]). With
    /// `discarded` (stdio), the discard notices are watched from before the
    /// request leaves.
    ///
    /// # Errors
    ///
    /// rmcp's error when the request cannot be sent (transport closed).
    pub async fn send(
        peer: &Peer<RoleClient>,
        request: ClientRequest,
        options: PeerRequestOptions,
        discarded: Option<&DiscardedIds>,
    ) -> Result<Self, ServiceError> {
        let rx = discarded.map(|o| o.subscribe());
        let stdio = discarded.is_some();
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| pipe_closed(e, stdio))?;
        let wanted = serde_json::to_value(&handle.id).unwrap_or_default();
        let id = handle.id.clone();
        let progress_token = handle.progress_token.clone();
        let response = async move {
            let r = handle.await_response().await;
            r.map_err(|e| pipe_closed(e, stdio))
        };
        Ok(Self {
            id,
            progress_token,
            response: Box::pin(response),
            discarded: DiscardWatch { rx, wanted },
        })
    }
}

/// A failed write to a stdio server's stdin is its pipe closing under the
/// request (the server exited or was killed): rmcp's `TransportSend` becomes
/// `TransportClosed`, which maps to `server_exited`. Over Streamable HTTP a
/// send error stays what it is (refused, reset, TLS, …).
fn pipe_closed(e: ServiceError, stdio: bool) -> ServiceError {
    match e {
        ServiceError::TransportSend(_) if stdio => ServiceError::TransportClosed,
        e => e,
    }
}

/// Watches the stdout reader's discard notices for one request id.
pub struct DiscardWatch {
    rx: Option<broadcast::Receiver<Discarded>>,
    wanted: Value,
}

impl DiscardWatch {
    /// Resolves once the stdout reader discarded the response to this
    /// request (too long or too deep to deliver, or not a JSON-RPC message
    /// rmcp can decode); pending forever without a stdio connection. The
    /// caller then gives the request up with [`abandon`] and fails it with
    /// [`discarded_error`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a notice is consumed only when this resolves.
    pub async fn notice(&mut self) -> Discarded {
        use tokio::sync::broadcast::error::RecvError;
        let Some(rx) = &mut self.rx else {
            return std::future::pending().await;
        };
        loop {
            match rx.recv().await {
                Ok(gone) if gone.id == self.wanted => return gone,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return std::future::pending().await,
            }
        }
    }
}

/// The error of request `context` whose response the stdout reader
/// discarded: `limit_exceeded` ("the response was discarded: <reason>") or
/// `protocol_error` ("the response cannot be decoded: <what was wrong>").
pub fn discarded_error(context: &str, gone: Discarded) -> HostError {
    let Discarded { code, reason, .. } = gone;
    let message = match code {
        ErrorCode::LimitExceeded => format!("{context}: the response was discarded: {reason}"),
        _ => format!("{context} failed: the response cannot be decoded: {reason}"),
    };
    HostError::new(code, message)
}

/// The two limits of a `tools/call` (they name a timeout's kind).
#[derive(Debug, Clone, Copy)]
pub struct CallTimeouts {
    /// Inactivity limit, reset by progress.
    pub inactivity: Duration,
    /// Absolute limit.
    pub total: Duration,
}

/// Maps an rmcp request error for `context` (`"<method> on <server>"` or
/// `"tools/call \"<tool>\" on <server>"`).
///
/// # Errors
///
/// The mapping itself: [`RequestFailure::Auth`] for an authorization
/// challenge; otherwise `protocol_error` (a JSON-RPC error: message with its
/// code, `data` `{code, data}`, both without the secret values the host
/// holds, `crate::redact`; or the transport error without Rust type
/// names), `server_exited` (the connection closed under the request: the
/// server stopped, exited or crashed; or a legacy HTTP+SSE stream was lost
/// with the answer), `limit_exceeded` (an answer over a size limit) or `timeout` (with `call`, the message
/// says "without progress" or "in total" and `data` is `{kind:
/// "inactivity"|"total", ms}`).
pub fn map_service_error(
    context: &str,
    e: ServiceError,
    call: Option<CallTimeouts>,
) -> RequestFailure {
    if let Some(header) = e.auth_challenge() {
        return RequestFailure::Auth(header.to_owned());
    }
    RequestFailure::Failed(match e {
        ServiceError::McpError(err) => rpc_error::answered(context, err),
        ServiceError::Timeout { timeout } => timeout_error(context, timeout, call),
        // Callers tell a closed response stream apart: see `stream_closed`.
        ServiceError::TransportClosed => HostError::new(
            ErrorCode::ServerExited,
            format!("{context} failed: the connection closed (the server stopped or exited)"),
        ),
        // What happened on the wire (reset, refused, timed out, TLS, …)
        // first: rmcp's text ends at "error sending request".
        other if super::too_large::response_limit(&other).is_some() => {
            let limit = super::too_large::response_limit(&other).unwrap_or_default();
            super::too_large::over_limit(context, limit)
        }
        other => {
            let text = strip_type_names(&other.to_string());
            let message = match what_happened(&other) {
                Some(what) => format!("{context} failed: {what}; {text}"),
                None => format!("{context} failed: {text}"),
            };
            HostError::new(ErrorCode::ProtocolError, message)
        }
    })
}

/// The server's own message of `e`, a JSON-RPC error answer that
/// [`map_service_error`] mapped for `context` (`None` for any other error),
/// so a proxy can pass the server's error on unchanged.
pub fn server_error_message<'a>(context: &str, e: &'a HostError) -> Option<&'a str> {
    let ErrorDetail::JsonRpc { code, .. } = &e.detail else {
        return None;
    };
    e.message
        .strip_prefix(context)?
        .strip_prefix(" failed: ")?
        .strip_suffix(&format!(" (JSON-RPC error {code})"))
}

fn timeout_error(context: &str, timeout: Duration, call: Option<CallTimeouts>) -> HostError {
    let Some(call) = call else {
        let ms = timeout.as_millis();
        return HostError::new(
            ErrorCode::Timeout,
            format!("{context} timed out after {ms} ms"),
        );
    };
    let kind = if timeout == call.total && timeout != call.inactivity {
        TimeoutKind::Total
    } else {
        TimeoutKind::Inactivity
    };
    call_timeout(context, kind, timeout)
}

/// The `timeout` error of a `tools/call` (`context` as in
/// [`map_service_error`]) that ran into its `kind` limit of `limit`: the
/// message says "without progress" (inactivity) or "in total"; `data` is
/// `{kind: "inactivity"|"total", ms}`.
pub fn call_timeout(context: &str, kind: TimeoutKind, limit: Duration) -> HostError {
    let ms = limit.as_millis();
    let what = match kind {
        TimeoutKind::Total => "in total",
        TimeoutKind::Inactivity => "without progress",
    };
    HostError::new(
        ErrorCode::Timeout,
        format!("{context} timed out after {ms} ms {what}"),
    )
    .with_detail(ErrorDetail::Timeout {
        kind,
        ms: u64::try_from(ms).unwrap_or(u64::MAX),
    })
}

/// What [`send_bounded`] sends on besides the peer: the stdout reader's
/// discard notices (stdio), the HTTP client's [`StreamWatch`] (Streamable
/// HTTP) and a token that gives the request up.
pub type Bounded<'a> = (
    Option<&'a DiscardedIds>,
    Option<&'a StreamWatch>,
    Option<&'a CancellationToken>,
);

/// Sends one request `method` with `params` to server `server_id` and
/// returns the raw result object. A response the stdout reader had to
/// discard (too long or too deep, or undecodable; stdio with `discarded`)
/// fails at once instead of timing out.
///
/// # Errors
///
/// [`RequestFailure::Auth`] on an authorization challenge; otherwise
/// `protocol_error` (also an undecodable response, or a response stream
/// that closed before the response), `server_exited` (the connection
/// closed), `timeout` (`options.timeout` passed; the request is cancelled
/// with `notifications/cancelled`), `limit_exceeded` (a response too long
/// or too deep; over the HTTP response limit, a JSON body or an SSE event) or `internal`, each naming `server_id` and `method`;
/// `cancelled` once `abort` is (see [`send_cached`]).
pub async fn send_bounded(
    peer: &Peer<RoleClient>,
    server_id: &str,
    method: &str,
    params: Value,
    options: PeerRequestOptions,
    (discarded, watch, abort): Bounded<'_>,
) -> Result<Value, RequestFailure> {
    let wire = Wire {
        peer,
        discarded,
        watch,
        cache: None,
        abort,
    };
    send_on(wire, server_id, custom(method, params), options).await
}

/// A result as the request path got it: a tree, or the text of a
/// `tools/list` result the transport read without one
/// (`transport::raw_text`, Streamable HTTP's raw lists).
#[derive(Debug)]
pub enum Answer {
    /// rmcp's decode (or a cached result).
    Tree(Value),
    /// The result's JSON text as the server sent it (an object).
    Text(String),
}

/// What a request hands its result back as: a tree ([`Value`]; a text is
/// parsed then) or as the transport handed it on ([`Answer`]).
pub trait FromAnswer: Sized {
    /// The result in this form.
    ///
    /// # Errors
    /// `protocol_error` naming `context` when a text does not parse.
    fn from_answer(answer: Answer, context: &str) -> Result<Self, HostError>;
}

impl FromAnswer for Answer {
    fn from_answer(answer: Answer, _: &str) -> Result<Self, HostError> {
        Ok(answer)
    }
}

impl FromAnswer for Value {
    fn from_answer(answer: Answer, context: &str) -> Result<Self, HostError> {
        match answer {
            Answer::Tree(value) => Ok(value),
            Answer::Text(text) => serde_json::from_str(&text).map_err(|e| {
                HostError::new(
                    ErrorCode::ProtocolError,
                    format!("{context}: the result is not valid JSON ({e})"),
                )
            }),
        }
    }
}

/// [`send_bounded`] of `request` (typed, or [`custom`]) on `wire` (cache
/// unused); with `wire.abort`, it is given up once that token is cancelled:
/// the server is sent `notifications/cancelled` for it (MCP 2025-11-25
/// "Utilities › Cancellation") and rmcp drops its pending entry.
///
/// # Errors
///
/// Those of [`send_bounded`]; `cancelled` when aborted; `protocol_error`
/// when the result is wanted as a tree and its text does not parse.
pub async fn send_on<T: FromAnswer>(
    wire: Wire<'_>,
    server_id: &str,
    request: ClientRequest,
    options: PeerRequestOptions,
) -> Result<T, RequestFailure> {
    let method = request.method().to_owned();
    let context = format!("{method} on {server_id}");
    let peer = wire.peer;
    let cancelled = || HostError::new(ErrorCode::Cancelled, format!("{context} was cancelled"));
    if wire.abort.is_some_and(CancellationToken::is_cancelled) {
        // Not sent at all: rmcp writes messages from separate tasks, so a
        // cancellation sent right behind its request could overtake it.
        return Err(cancelled().into());
    }
    // The request's timeout is the host's own (`deadline`), not rmcp's:
    // rmcp's awaits its `notifications/cancelled` write, which a server not
    // reading its stdin never lets finish.
    let mut options = options;
    let limit = options.timeout.take().or(options.max_total_timeout.take());
    let deadline = async {
        match limit {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    let mut sent = InFlight::send(peer, request, options, wire.discarded)
        .await
        .map_err(|e| map_service_error(&context, e, None))?;
    let aborted = async {
        match wire.abort {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let result = tokio::select! {
        r = &mut sent.response => match r {
            Err(ServiceError::TransportClosed) => {
                let on = (wire.discarded.is_some(), wire.watch);
                let closed = stream_closed(&context, peer, sent.id, on).await;
                return Err(closed.map_or_else(
                    || map_service_error(&context, ServiceError::TransportClosed, None),
                    RequestFailure::Failed,
                ));
            }
            r => r.map_err(|e| map_service_error(&context, e, None))?,
        },
        gone = sent.discarded.notice() => {
            abandon(peer, sent.id);
            return Err(discarded_error(&context, gone).into());
        }
        () = aborted => {
            cancel_in_background(peer, sent.id, "the client cancelled the request");
            return Err(cancelled().into());
        }
        () = deadline => {
            let reason = RequestHandle::<RoleClient>::REQUEST_TIMEOUT_REASON;
            cancel_in_background(peer, sent.id, reason);
            let timeout = limit.unwrap_or_default();
            return Err(map_service_error(&context, ServiceError::Timeout { timeout }, None));
        }
    };
    let on_http = wire.watch.map(|watch| (watch, &sent.id));
    let answer = answer_of(result, &method, on_http, &context)?;
    Ok(T::from_answer(answer, &context)?)
}

/// The [`Answer`] of `result` (rmcp's, to request `method`; `on_http`: the
/// connection's [`StreamWatch`] and the request's id, Streamable HTTP).
fn answer_of(
    result: ServerResult,
    method: &str,
    on_http: Option<(&StreamWatch, &RequestId)>,
    context: &str,
) -> Result<Answer, RequestFailure> {
    let value = match result {
        // Read raw by the transport (stdio `tools/list`): already the JSON.
        ServerResult::CustomResult(CustomResult(raw)) => raw,
        typed => serde_json::to_value(typed).map_err(|e| {
            HostError::new(
                ErrorCode::Internal,
                format!("{context}: cannot encode result: {e}"),
            )
        })?,
    };
    if method != "tools/list" {
        return Ok(Answer::Tree(value));
    }
    // stdio: the text the transport carried (`transport::raw_text`).
    let value = match crate::transport::raw_text::carried(value) {
        Ok(text) => return Ok(Answer::Text(text)),
        Err(value) => value,
    };
    match on_http {
        Some((watch, id)) => http_tools_list(watch, id, value, context),
        None => Ok(Answer::Tree(value)),
    }
}

/// A Streamable HTTP `tools/list` result as the server sent it: the SSE
/// answer's text when the transport kept it (`value` is then rmcp's decode
/// of a stand-in), else `value` with the `execution` members rmcp's `Tool`
/// dropped put back (see `transport::raw_tools`).
fn http_tools_list(
    watch: &StreamWatch,
    id: &RequestId,
    mut value: Value,
    context: &str,
) -> Result<Answer, RequestFailure> {
    if let Some(text) = watch.take_raw_list(id) {
        return Ok(Answer::Text(text));
    }
    if crate::transport::stream_watch::is_stand_in(&value) {
        let message = format!("{context}: the raw answer was not kept");
        return Err(HostError::new(ErrorCode::Internal, message).into());
    }
    let found = watch.take_executions(id);
    crate::transport::raw_tools::restore_executions(&mut value, &found);
    Ok(Answer::Tree(value))
}

/// Where a request goes: the connection's peer, its discard notices (stdio)
/// and its response cache.
#[derive(Clone, Copy)]
pub struct Wire<'a> {
    /// Request handle.
    pub peer: &'a Peer<RoleClient>,
    /// Responses discarded by the stdout reader (stdio only).
    pub discarded: Option<&'a DiscardedIds>,
    /// Answers over the SSE event limit (Streamable HTTP only).
    pub watch: Option<&'a StreamWatch>,
    /// The connection's response cache (`None`: nothing is cached).
    pub cache: Option<&'a ResponseCache>,
    /// Gives the request up when cancelled (`None`: never); see [`send_cached`].
    pub abort: Option<&'a CancellationToken>,
}

/// [`send_bounded`] through the connection's response cache (SEP-2549, see
/// [`super::cache`]): a fresh result of a cacheable method (list pages,
/// `resources/read`) is returned without a request; a result with a
/// positive `ttlMs` is kept. With `wire.abort`, a request is given up
/// (`notifications/cancelled` to the server) once that token is cancelled.
///
/// # Errors
///
/// A result kept as text ([`Answer::Text`]) goes into the cache only when
/// it mentions `ttlMs` (parsed then; the cache keeps trees).
///
/// # Errors
///
/// Those of [`send_on`].
pub async fn send_cached<T: FromAnswer>(
    wire: Wire<'_>,
    server_id: &str,
    method: &str,
    params: Value,
    options: PeerRequestOptions,
) -> Result<T, RequestFailure> {
    let Some(cache) = wire.cache else {
        return send_on(wire, server_id, custom(method, params), options).await;
    };
    let context = || format!("{method} on {server_id}");
    if let Some(fresh) = cache.get(method, &params) {
        return Ok(T::from_answer(Answer::Tree(fresh), &context())?);
    }
    let since = cache.generation();
    let sent = params.clone();
    let answer: Answer = send_on(wire, server_id, custom(method, sent), options).await?;
    match &answer {
        Answer::Tree(result) => cache.put(method, &params, result, since),
        Answer::Text(text) if text.contains("\"ttlMs\"") => {
            if let Ok(result) = serde_json::from_str::<Value>(text) {
                cache.put(method, &params, &result, since);
            }
        }
        Answer::Text(_) => {}
    }
    Ok(T::from_answer(answer, &context())?)
}

mod cancel;
mod list;
mod rpc_error;
pub use cancel::{abandon, cancel_in_background, stream_closed};
pub use list::list_all;
#[cfg(test)]
mod tests;
