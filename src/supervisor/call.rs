//! `tools/call` on a ready server (MCP 2025-11-25 "Server Features › Tools ›
//! Calling Tools"), with a per-call timeout, caller cancellation
//! (`notifications/cancelled`, "Utilities › Cancellation") and immediate
//! rejection when the server crashes mid-call.

use std::time::Duration;

use rmcp::model::{CancelledNotificationParam, ClientRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::ServerLive;
use crate::error::{ErrorCode, HostError, HostResult};

/// How long a call that saw the transport close waits for the crash reason.
const REASON_SETTLE: Duration = Duration::from_secs(1);

/// One tool call.
#[derive(Debug, Clone)]
pub struct CallRequest {
    /// The tool's name exactly as the server listed it.
    pub name: String,
    /// Arguments object (`arguments` of `tools/call`).
    pub arguments: Option<Map<String, Value>>,
    /// Time limit; on expiry the host sends `notifications/cancelled`.
    pub timeout: Duration,
}

/// Calls a tool and returns the MCP `CallToolResult` as JSON.
///
/// Errors: `server_not_ready`; `timeout`; `cancelled` (the caller's token
/// fired; `notifications/cancelled` was sent); `server_exited` (the server
/// crashed or was stopped during the call; message has the exit status and
/// stderr tail); `protocol_error` (JSON-RPC error: `data` is `{code, data}`).
pub async fn call_tool(live: &ServerLive, server_id: &str, req: CallRequest, cancel: CancellationToken) -> HostResult<Value> {
    let conn = live
        .connection()
        .ok_or_else(|| HostError::new(ErrorCode::ServerNotReady, format!("server {server_id} is not ready")))?;
    let request: ClientRequest = serde_json::from_value(json!({
        "method": "tools/call",
        "params": { "name": req.name, "arguments": req.arguments },
    }))
    .map_err(|e| HostError::new(ErrorCode::InvalidArgument, format!("tools/call request: {e}")))?;
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(req.timeout);
    let handle = conn.peer.send_request_with_option(request, options).await.map_err(|e| service_error(server_id, &req, e))?;
    let request_id = handle.id.clone();
    let mut closed = conn.closed.clone();
    let mut closed_late = conn.closed.clone();
    tokio::select! {
        r = handle.await_response() => match r {
            Ok(ServerResult::CallToolResult(result)) => serde_json::to_value(result)
                .map_err(|e| HostError::new(ErrorCode::Internal, format!("cannot encode result: {e}"))),
            Ok(_) => Err(HostError::new(ErrorCode::ProtocolError, format!("server {server_id} answered tools/call {:?} with an unexpected result type", req.name))),
            Err(ServiceError::TransportClosed) => {
                let reason = closed_reason(&mut closed_late, REASON_SETTLE).await
                    .unwrap_or_else(|| "connection closed".to_owned());
                Err(exited(server_id, &req, &reason))
            }
            Err(_) if conn.redirect_refused.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Acquire)) => Err(HostError::new(
                ErrorCode::RedirectRefused,
                format!("tools/call {:?} on {server_id}: {}", req.name, crate::transport::http::CROSS_ORIGIN_REDIRECT),
            )),
            Err(e) => match e.auth_challenge() {
                // 401 after a failed refresh, or 403 insufficient_scope (step-up):
                // the caller signs in again (`authorize` uses this challenge) and retries once.
                Some(header) => {
                    live.set_challenge(Some(header.to_owned()));
                    Err(auth_challenge_error(server_id, &req, header))
                }
                None => Err(service_error(server_id, &req, e)),
            },
        },
        _ = cancel.cancelled() => {
            let _ = conn.peer.notify_cancelled(CancelledNotificationParam::new(Some(request_id), Some("cancelled by the client".to_owned()))).await;
            Err(HostError::new(ErrorCode::Cancelled, format!("tools/call {:?} on {server_id} was cancelled", req.name)))
        }
        reason = closed_reason(&mut closed, Duration::MAX) => {
            Err(exited(server_id, &req, &reason.unwrap_or_default()))
        }
    }
}

fn auth_challenge_error(server_id: &str, req: &CallRequest, header: &str) -> HostError {
    // The base only resolves a relative `resource_metadata`, which is not used here.
    let params = url::Url::parse("http://localhost/")
        .map(|base| rmcp::transport::auth::WWWAuthenticateParams::parse(header, &base))
        .unwrap_or_default();
    let scopes: Vec<&str> = params.scope.as_deref().map(|s| s.split_whitespace().collect()).unwrap_or_default();
    let what = if params.is_insufficient_scope() { "needs more scopes" } else { "needs a new sign-in" };
    HostError::new(ErrorCode::AuthRequired, format!("tools/call {:?} on {server_id} {what}", req.name))
        .with_data(json!({ "code": -32007, "insufficientScope": params.is_insufficient_scope(), "requiredScopes": scopes }))
}

fn exited(server_id: &str, req: &CallRequest, reason: &str) -> HostError {
    HostError::new(ErrorCode::ServerExited, format!("tools/call {:?} on {server_id} failed: {reason}", req.name))
}

fn service_error(server_id: &str, req: &CallRequest, e: ServiceError) -> HostError {
    match e {
        ServiceError::McpError(err) => HostError::new(
            ErrorCode::ProtocolError,
            format!("tools/call {:?} on {server_id} failed: {} (JSON-RPC error {})", req.name, err.message, err.code.0),
        )
        .with_data(json!({ "code": err.code.0, "data": err.data })),
        ServiceError::Timeout { timeout } => HostError::new(
            ErrorCode::Timeout,
            format!("tools/call {:?} on {server_id} timed out after {} ms", req.name, timeout.as_millis()),
        ),
        other => HostError::new(
            ErrorCode::ProtocolError,
            format!("tools/call {:?} on {server_id} failed: {}", req.name, super::connect::strip_type_names(&other.to_string())),
        ),
    }
}

/// Waits (up to `within`) for the connection's end reason.
async fn closed_reason(closed: &mut tokio::sync::watch::Receiver<Option<String>>, within: Duration) -> Option<String> {
    let wait = async {
        let reason = closed.wait_for(Option::is_some).await.ok().and_then(|v| v.clone());
        match reason {
            Some(reason) => Some(reason),
            None => std::future::pending().await,
        }
    };
    tokio::time::timeout(within, wait).await.ok().flatten()
}
