//! `tools/call` on a ready server (MCP 2025-11-25 "Server Features › Tools ›
//! Calling Tools"), with progress ("Utilities › Progress"), an inactivity
//! timeout that progress resets and an absolute cap (rmcp's request
//! options), caller cancellation (`notifications/cancelled`, "Utilities ›
//! Cancellation"), result bounds, and immediate rejection when the server
//! crashes mid-call.

use std::time::Duration;

use futures::{FutureExt, StreamExt};
use rmcp::model::{CancelledNotificationParam, ClientRequest, CustomRequest};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::ServerLive;
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult, TimeoutKind};
use crate::limits::Limits;

/// How long a call that saw the transport close waits for the crash reason.
const REASON_SETTLE: Duration = Duration::from_secs(1);

/// One tool call.
#[derive(Debug, Clone)]
pub struct CallRequest {
    /// The tool's name exactly as the server listed it.
    pub name: String,
    /// Arguments object (`arguments` of `tools/call`).
    pub arguments: Option<Map<String, Value>>,
    /// Inactivity limit: reset by each `notifications/progress` of this call.
    pub timeout: Duration,
    /// Absolute limit; progress never extends it.
    pub max_total: Duration,
}

/// One `notifications/progress` of a call (MCP 2025-11-25 "Utilities › Progress").
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with each notification).
    pub progress: f64,
    /// Total, when known.
    pub total: Option<f64>,
    /// Human-readable status.
    pub message: Option<String>,
}

/// Calls a tool and returns the MCP `CallToolResult` as JSON.
///
/// Every request carries a unique `_meta.progressToken`; each progress
/// notification for it is passed to `on_progress` in order and resets the
/// inactivity timeout. On timeout or cancellation exactly one
/// `notifications/cancelled` (with the request id and a reason) is sent, and
/// a response arriving later is dropped.
///
/// Errors: `server_not_ready`; `timeout` (data `{kind: "inactivity"|"total",
/// ms}`); `cancelled` (the caller's token fired); `server_exited` (the
/// server crashed or was stopped during the call; message has the exit
/// status and stderr tail); `protocol_error` (JSON-RPC error: `data` is
/// `{code, data}`); `limit_exceeded` (the result passed `maxResultBytes`,
/// `maxJsonDepth` or `maxJsonProperties`); `auth_required` (data
/// `{code: -32007, insufficientScope, requiredScopes}`).
pub async fn call_tool(
    live: &ServerLive,
    server_id: &str,
    req: CallRequest,
    limits: &Limits,
    cancel: CancellationToken,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> HostResult<Value> {
    let conn = live.connection().ok_or_else(|| {
        HostError::new(
            ErrorCode::ServerNotReady,
            format!("server {server_id} is not ready"),
        )
    })?;
    let mut params = json!({ "name": req.name });
    if let Some(arguments) = &req.arguments {
        params["arguments"] = Value::Object(arguments.clone());
    }
    let request = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(req.timeout);
    options.max_total_timeout = Some(req.max_total);
    options.reset_timeout_on_progress = true;
    let mut oversize = conn.oversize.as_ref().map(|o| o.subscribe());
    let handle = conn
        .peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| service_error(server_id, &req, e))?;
    let request_id = handle.id.clone();
    let mut progress = conn.progress.subscribe(handle.progress_token.clone()).await;
    let mut closed = conn.closed.clone();
    let mut closed_late = conn.closed.clone();
    let response = handle.await_response();
    tokio::pin!(response);
    let outcome = loop {
        tokio::select! {
            biased;
            r = &mut response => break r,
            Some(p) = progress.next() => on_progress(Progress { progress: p.progress, total: p.total, message: p.message }),
            _ = cancel.cancelled() => {
                // rmcp forgets the request when the notification is sent: a late response is dropped.
                let _ = conn.peer.notify_cancelled(CancelledNotificationParam::new(Some(request_id), Some("cancelled by the client".to_owned()))).await;
                return Err(HostError::new(ErrorCode::Cancelled, format!("tools/call {:?} on {server_id} was cancelled", req.name)));
            }
            reason = closed_reason(&mut closed, Duration::MAX) => {
                return Err(exited(server_id, &req, &reason.unwrap_or_default()));
            }
            reason = discarded_response(&mut oversize, &request_id) => {
                abandon(&conn.peer, request_id).await;
                return Err(HostError::new(ErrorCode::LimitExceeded, format!("tools/call {:?} on {server_id}: the response was discarded: {reason}", req.name)));
            }
        }
    };
    // Progress that raced the response is delivered before the result.
    while let Some(Some(p)) = progress.next().now_or_never() {
        on_progress(Progress {
            progress: p.progress,
            total: p.total,
            message: p.message,
        });
    }
    match outcome {
        Ok(result) => {
            let value = serde_json::to_value(result).map_err(|e| {
                HostError::new(ErrorCode::Internal, format!("cannot encode result: {e}"))
            })?;
            check_result(server_id, &req, &value, limits)?;
            Ok(value)
        }
        Err(ServiceError::TransportClosed) => {
            let reason = closed_reason(&mut closed_late, REASON_SETTLE)
                .await
                .unwrap_or_else(|| "connection closed".to_owned());
            Err(exited(server_id, &req, &reason))
        }
        Err(_)
            if conn
                .redirect_refused
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::Acquire)) =>
        {
            Err(HostError::new(
                ErrorCode::RedirectRefused,
                format!(
                    "tools/call {:?} on {server_id}: {}",
                    req.name,
                    crate::transport::http::CROSS_ORIGIN_REDIRECT
                ),
            ))
        }
        Err(e) => match e.auth_challenge() {
            // 401 after a failed refresh, or 403 insufficient_scope (step-up).
            Some(header) => {
                live.set_challenge(Some(header.to_owned()));
                Err(auth_challenge_error(server_id, &req, header))
            }
            None => Err(service_error(server_id, &req, e)),
        },
    }
}

fn check_result(
    server_id: &str,
    req: &CallRequest,
    value: &Value,
    limits: &Limits,
) -> HostResult<()> {
    check_value(
        &format!("tools/call {:?} on {server_id}", req.name),
        value,
        limits,
    )
}

/// Checks a result (tool result, resource read, prompt, list) against
/// `maxResultBytes`, `maxJsonDepth` and `maxJsonProperties`.
///
/// Errors: `limit_exceeded`, the message naming `context` and the bound.
pub fn check_value(context: &str, value: &Value, limits: &Limits) -> HostResult<()> {
    use crate::catalogue::schema::{check_shape, json_len};
    let bound = |what: String| {
        Err(HostError::new(
            ErrorCode::LimitExceeded,
            format!("{context}: the result {what}"),
        ))
    };
    let bytes = json_len(value);
    if bytes > limits.max_result_bytes {
        return bound(format!(
            "is {bytes} bytes, more than maxResultBytes ({})",
            limits.max_result_bytes
        ));
    }
    check_shape(value, limits.max_json_depth, limits.max_json_properties).or_else(bound)
}

fn auth_challenge_error(server_id: &str, req: &CallRequest, header: &str) -> HostError {
    // The base only resolves a relative `resource_metadata`, which is not used here.
    let params = url::Url::parse("http://localhost/")
        .map(|base| rmcp::transport::auth::WWWAuthenticateParams::parse(header, &base))
        .unwrap_or_default();
    let required_scopes: Vec<String> = params
        .scope
        .as_deref()
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let what = if params.is_insufficient_scope() {
        "needs more scopes"
    } else {
        "needs a new sign-in"
    };
    HostError::new(
        ErrorCode::AuthRequired,
        format!("tools/call {:?} on {server_id} {what}", req.name),
    )
    .with_detail(ErrorDetail::Challenge {
        insufficient_scope: params.is_insufficient_scope(),
        required_scopes,
    })
}

fn exited(server_id: &str, req: &CallRequest, reason: &str) -> HostError {
    HostError::new(
        ErrorCode::ServerExited,
        format!("tools/call {:?} on {server_id} failed: {reason}", req.name),
    )
}

fn service_error(server_id: &str, req: &CallRequest, e: ServiceError) -> HostError {
    match e {
        ServiceError::McpError(err) => HostError::new(
            ErrorCode::ProtocolError,
            format!(
                "tools/call {:?} on {server_id} failed: {} (JSON-RPC error {})",
                req.name, err.message, err.code.0
            ),
        )
        .with_detail(ErrorDetail::JsonRpc {
            code: err.code.0.into(),
            data: err.data,
        }),
        ServiceError::Timeout { timeout } => {
            let (kind, what) = if timeout == req.max_total && timeout != req.timeout {
                (TimeoutKind::Total, "in total")
            } else {
                (TimeoutKind::Inactivity, "without progress")
            };
            HostError::new(
                ErrorCode::Timeout,
                format!(
                    "tools/call {:?} on {server_id} timed out after {} ms {what}",
                    req.name,
                    timeout.as_millis()
                ),
            )
            .with_detail(ErrorDetail::Timeout {
                kind,
                ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            })
        }
        other => HostError::new(
            ErrorCode::ProtocolError,
            format!(
                "tools/call {:?} on {server_id} failed: {}",
                req.name,
                super::connect::strip_type_names(&other.to_string())
            ),
        ),
    }
}

/// Waits until the stdout reader discards the response to request `id` (too
/// long or too deep to deliver) and returns the reason. Pending forever
/// without a stdio connection. The caller then gives the request up with
/// [`abandon`].
pub(crate) async fn discarded_response(
    rx: &mut Option<tokio::sync::broadcast::Receiver<(Value, String)>>,
    id: &rmcp::model::RequestId,
) -> String {
    use tokio::sync::broadcast::error::RecvError;
    let Some(rx) = rx else {
        return std::future::pending().await;
    };
    let wanted = serde_json::to_value(id).unwrap_or_default();
    loop {
        match rx.recv().await {
            Ok((gone, reason)) if gone == wanted => return reason,
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return std::future::pending().await,
        }
    }
}

/// Frees rmcp's pending entry for a request whose response was discarded
/// (`notifications/cancelled`; the server already answered, so it ignores it).
pub(crate) async fn abandon(
    peer: &rmcp::service::Peer<rmcp::service::RoleClient>,
    id: rmcp::model::RequestId,
) {
    let _ = peer
        .notify_cancelled(CancelledNotificationParam::new(
            Some(id),
            Some("the response could not be delivered".to_owned()),
        ))
        .await;
}

/// Waits (up to `within`) for the connection's end reason.
async fn closed_reason(
    closed: &mut tokio::sync::watch::Receiver<Option<String>>,
    within: Duration,
) -> Option<String> {
    let wait = async {
        let reason = closed
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|v| v.clone());
        match reason {
            Some(reason) => Some(reason),
            None => std::future::pending().await,
        }
    };
    tokio::time::timeout(within, wait).await.ok().flatten()
}
