//! List walks: `tools/list`, `resources/list`, `resources/templates/list`,
//! `prompts/list`, following every cursor (MCP 2025-11-25 "Utilities ›
//! Pagination"), bounded by `maxListPages`, `maxCursorBytes` and an item cap,
//! failing on a repeated cursor.
//!
//! Items are returned as raw JSON: one malformed tool must cost only that
//! tool (see [`crate::catalogue`]), not the whole typed result.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{json, Value};

use crate::error::{ErrorCode, ErrorDetail, HostError};
use crate::limits::Limits;
use crate::transport::noise::OversizeIds;

/// Why a list walk failed.
#[derive(Debug)]
pub enum ListFailure {
    /// The server answered 401/403 with this `WWW-Authenticate` challenge.
    Auth(String),
    /// Any other failure: `protocol_error`, or `limit_exceeded` naming the
    /// server and the bound.
    Failed(HostError),
}

/// Sends one request `method` with `params` and returns the raw result object.
///
/// Errors: [`ListFailure::Auth`] on an authorization challenge, otherwise
/// `protocol_error` naming `server_id` and `method`.
/// With `timeout`, an unanswered request is cancelled (`notifications/cancelled`)
/// and fails with `timeout`.
///
/// With `oversize` (stdio), a response the reader had to discard (too long
/// or too deep) fails at once with `limit_exceeded` instead of timing out.
pub async fn request_raw(
    peer: &Peer<RoleClient>,
    oversize: Option<&OversizeIds>,
    server_id: &str,
    method: &str,
    params: Value,
    timeout: Option<Duration>,
) -> Result<Value, ListFailure> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let mut options = PeerRequestOptions::no_options();
    options.timeout = timeout;
    let mut discarded = oversize.map(|o| o.subscribe());
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| failure(server_id, method, e))?;
    let request_id = handle.id.clone();
    let response = handle.await_response();
    tokio::pin!(response);
    let result = tokio::select! {
        r = &mut response => r.map_err(|e| failure(server_id, method, e))?,
        reason = super::call::discarded_response(&mut discarded, &request_id) => {
            super::call::abandon(peer, request_id).await;
            return Err(ListFailure::Failed(HostError::new(ErrorCode::LimitExceeded, format!("{method} on {server_id}: the response was discarded: {reason}"))));
        }
    };
    serde_json::to_value(result).map_err(|e| {
        ListFailure::Failed(HostError::new(
            ErrorCode::Internal,
            format!("{method} on {server_id}: cannot encode result: {e}"),
        ))
    })
}

fn failure(server_id: &str, method: &str, e: ServiceError) -> ListFailure {
    match e.auth_challenge() {
        Some(header) => ListFailure::Auth(header.to_owned()),
        None => {
            if let ServiceError::Timeout { timeout } = &e {
                return ListFailure::Failed(HostError::new(
                    ErrorCode::Timeout,
                    format!(
                        "{method} on {server_id} timed out after {} ms",
                        timeout.as_millis()
                    ),
                ));
            }
            let (message, data) = match &e {
                ServiceError::McpError(err) => (
                    format!("{} (JSON-RPC error {})", err.message, err.code.0),
                    ErrorDetail::JsonRpc {
                        code: err.code.0.into(),
                        data: err.data.clone(),
                    },
                ),
                other => (
                    super::connect::strip_type_names(&other.to_string()),
                    ErrorDetail::None,
                ),
            };
            let err = HostError::new(
                ErrorCode::ProtocolError,
                format!("{method} on {server_id} failed: {message}"),
            );
            ListFailure::Failed(err.with_detail(data))
        }
    }
}

/// Walks every page of list method `method` (items under `key`), with
/// `params` merged into each request.
///
/// Errors: [`ListFailure::Auth`]; `protocol_error`; `limit_exceeded` when the
/// walk passes `maxListPages`, a cursor is longer than `maxCursorBytes` or
/// repeats, or there are more than `max_items` items.
/// Each page may take `limits.callTimeoutMs`. `max_items` is `(count, name
/// of the bound)`, e.g. `(5000, "maxToolsPerServer")`.
pub async fn list_all(
    peer: &Peer<RoleClient>,
    oversize: Option<&OversizeIds>,
    server_id: &str,
    method: &str,
    key: &str,
    limits: &Limits,
    (max_items, bound): (usize, &str),
) -> Result<Vec<Value>, ListFailure> {
    let limit = |what: String| {
        ListFailure::Failed(HostError::new(
            ErrorCode::LimitExceeded,
            format!("{method} on {server_id}: {what}"),
        ))
    };
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..limits.max_list_pages {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let mut page = request_raw(
            peer,
            oversize,
            server_id,
            method,
            params,
            Some(Duration::from_millis(limits.call_timeout_ms)),
        )
        .await?;
        match page.get_mut(key).map(Value::take) {
            Some(Value::Array(found)) => items.extend(found),
            _ => {
                return Err(ListFailure::Failed(HostError::new(
                    ErrorCode::ProtocolError,
                    format!("{method} on {server_id}: the result has no `{key}` array"),
                )))
            }
        }
        if items.len() > max_items {
            return Err(limit(format!("more than {bound} ({max_items}) items")));
        }
        match page.get("nextCursor") {
            None | Some(Value::Null) => return Ok(items),
            Some(Value::String(next)) if next.len() > limits.max_cursor_bytes => {
                return Err(limit(format!(
                    "a cursor of {} bytes is longer than maxCursorBytes ({})",
                    next.len(),
                    limits.max_cursor_bytes
                )));
            }
            Some(Value::String(next)) if !seen.insert(next.clone()) => {
                return Err(limit(
                    "the server repeated a cursor (pagination loop)".to_owned(),
                ))
            }
            Some(Value::String(next)) => cursor = Some(next.clone()),
            Some(_) => {
                return Err(ListFailure::Failed(HostError::new(
                    ErrorCode::ProtocolError,
                    format!("{method} on {server_id}: nextCursor is not a string"),
                )))
            }
        }
    }
    Err(limit(format!(
        "more than maxListPages ({}) pages",
        limits.max_list_pages
    )))
}
