//! Requests on a live MCP connection: one send path ([`InFlight`], used by
//! [`send_bounded`] and by `tools/call` in [`super::tool_call`]), one mapping
//! of rmcp's `ServiceError` ([`map_service_error`]) into [`RequestFailure`],
//! list walks following every cursor (MCP 2025-11-25 "Utilities ›
//! Pagination", [`list_all`]; a list the server did not declare is empty
//! without a request), the response cache hook ([`send_cached`]: a fresh
//! cacheable result is served without a request, see [`super::cache`]) and
//! the result bounds ([`crate::json::check_bounds`]).
//!
//! Items of list walks are returned as raw JSON: one malformed tool must cost
//! only that tool (see [`crate::catalogue`]), not the whole typed result.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rmcp::model::{
    ClientRequest, CustomRequest, CustomResult, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, RoleClient, ServiceError};
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::cache::ResponseCache;
use super::capabilities;
use crate::error::strip_type_names;
use crate::error::{ErrorCode, ErrorDetail, HostError, TimeoutKind};
use crate::limits::Limits;
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

/// [`send_bounded`] of `request` (typed, or [`custom`]) on `wire` (cache
/// unused); with `wire.abort`, it is given up once that token is cancelled:
/// the server is sent `notifications/cancelled` for it (MCP 2025-11-25
/// "Utilities › Cancellation") and rmcp drops its pending entry.
///
/// # Errors
///
/// Those of [`send_bounded`]; `cancelled` when aborted.
pub async fn send_on(
    wire: Wire<'_>,
    server_id: &str,
    request: ClientRequest,
    options: PeerRequestOptions,
) -> Result<Value, RequestFailure> {
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
    let mut value = match result {
        // Read raw by the transport (stdio `tools/list`): already the JSON.
        ServerResult::CustomResult(CustomResult(raw)) => raw,
        typed => serde_json::to_value(typed).map_err(|e| {
            HostError::new(
                ErrorCode::Internal,
                format!("{context}: cannot encode result: {e}"),
            )
        })?,
    };
    if let (Some(watch), "tools/list") = (wire.watch, method.as_str()) {
        value = http_tools_list(watch, &sent.id, value, &context)?;
    }
    Ok(value)
}

/// A Streamable HTTP `tools/list` result as the server sent it: the raw
/// SSE answer when the transport kept it (`value` is then rmcp's decode of
/// a stand-in), else `value` with the `execution` members rmcp's `Tool`
/// dropped put back (see `transport::raw_tools`).
fn http_tools_list(
    watch: &StreamWatch,
    id: &RequestId,
    mut value: Value,
    context: &str,
) -> Result<Value, RequestFailure> {
    if let Some(raw) = watch.take_raw_list(id) {
        return Ok(raw);
    }
    if crate::transport::stream_watch::is_stand_in(&value) {
        let message = format!("{context}: the raw answer was not kept");
        return Err(HostError::new(ErrorCode::Internal, message).into());
    }
    let found = watch.take_executions(id);
    crate::transport::raw_tools::restore_executions(&mut value, &found);
    Ok(value)
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
/// Those of [`send_bounded`]; `cancelled` when aborted.
pub async fn send_cached(
    wire: Wire<'_>,
    server_id: &str,
    method: &str,
    params: Value,
    options: PeerRequestOptions,
) -> Result<Value, RequestFailure> {
    let Some(cache) = wire.cache else {
        return send_on(wire, server_id, custom(method, params), options).await;
    };
    if let Some(fresh) = cache.get(method, &params) {
        return Ok(fresh);
    }
    let since = cache.generation();
    let sent = params.clone();
    let result = send_on(wire, server_id, custom(method, sent), options).await?;
    cache.put(method, &params, &result, since);
    Ok(result)
}

/// Walks every page of list method `method` (items under `key`), following
/// `nextCursor`, each page through the response cache ([`send_cached`]). A
/// list of a capability the server did not declare is empty, without a
/// request (see [`super::capabilities`]).
///
/// Each page may take `limits.callTimeoutMs`. `max_items` is `(count, name
/// of the bound)`, e.g. `(5000, "maxToolsPerServer")`.
///
/// # Errors
///
/// Those of [`send_bounded`]; `protocol_error` when a page has no `key`
/// array or a non-string `nextCursor`; `limit_exceeded` when the walk passes
/// `maxListPages`, a cursor is longer than `maxCursorBytes` or repeats, or
/// there are more than `max_items` items.
pub async fn list_all(
    wire: Wire<'_>,
    server_id: &str,
    method: &str,
    key: &str,
    limits: &Limits,
    (max_items, bound): (usize, &str),
) -> Result<Vec<Value>, RequestFailure> {
    if !capabilities::allows(wire.peer, method) {
        return Ok(Vec::new());
    }
    let fail =
        |code, what: String| HostError::new(code, format!("{method} on {server_id}: {what}"));
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..limits.max_list_pages {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(Duration::from_millis(limits.call_timeout_ms));
        let mut page = send_cached(wire, server_id, method, params, options)
            .await
            .inspect_err(|_| forget_pages(wire, method, cursor.is_some()))?;
        match page.get_mut(key).map(Value::take) {
            Some(Value::Array(found)) => items.extend(found),
            _ => {
                let what = format!("the result has no `{key}` array");
                return Err(fail(ErrorCode::ProtocolError, what).into());
            }
        }
        if items.len() > max_items {
            let what = format!("more than {bound} ({max_items}) items");
            return Err(fail(ErrorCode::LimitExceeded, what).into());
        }
        match next_cursor(&page, limits, &mut seen) {
            Ok(None) => return Ok(items),
            Ok(Some(next)) => cursor = Some(next),
            Err((code, what)) => return Err(fail(code, what).into()),
        }
    }
    let what = format!("more than maxListPages ({}) pages", limits.max_list_pages);
    Err(fail(ErrorCode::LimitExceeded, what).into())
}

/// A page after the first failed: its cursor may have become invalid, so
/// every cached page of `method` goes (SEP-2549 "Interaction with Pagination").
fn forget_pages(wire: Wire<'_>, method: &str, with_cursor: bool) {
    let list = match method {
        "tools/list" => super::cache::Invalidation::Tools,
        "prompts/list" => super::cache::Invalidation::Prompts,
        _ => super::cache::Invalidation::Resources,
    };
    if let (true, Some(cache)) = (with_cursor, wire.cache) {
        cache.invalidate(&list);
    }
}

/// The page's `nextCursor`: `None` at the end, or why it is refused.
fn next_cursor(
    page: &Value,
    limits: &Limits,
    seen: &mut HashSet<String>,
) -> Result<Option<String>, (ErrorCode, String)> {
    match page.get("nextCursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(next)) if next.len() > limits.max_cursor_bytes => Err((
            ErrorCode::LimitExceeded,
            format!(
                "a cursor of {} bytes is longer than maxCursorBytes ({})",
                next.len(),
                limits.max_cursor_bytes
            ),
        )),
        Some(Value::String(next)) if !seen.insert(next.clone()) => Err((
            ErrorCode::LimitExceeded,
            "the server repeated a cursor (pagination loop)".to_owned(),
        )),
        Some(Value::String(next)) => Ok(Some(next.clone())),
        Some(_) => Err((
            ErrorCode::ProtocolError,
            "nextCursor is not a string".to_owned(),
        )),
    }
}

mod cancel;
mod rpc_error;
pub use cancel::{abandon, cancel_in_background, stream_closed};
#[cfg(test)]
mod tests;
