//! A JSON-RPC error answer as the host's error (see
//! [`super::map_service_error`]).

use rmcp::model::ErrorData;

use crate::error::{ErrorCode, ErrorDetail, HostError};

/// The error of request `context` answered with `err`: `protocol_error`
/// with the server's message and code, `data` `{code, data}` (shown as its
/// message is, `HostError::new`: without the secret values the host holds,
/// nor a -32042's URLs); or, for an answer the legacy HTTP+SSE transport
/// made up because the stream was lost with the real one, its
/// `server_exited` / `limit_exceeded` ([`crate::transport::sse::lost`]).
pub(super) fn answered(context: &str, err: ErrorData) -> HostError {
    if let Some(lost) = crate::transport::sse::lost(context, &err) {
        return lost;
    }
    let mut data = err.data;
    if let Some(data) = &mut data {
        crate::requests::url_elicitation::hidden_in_error_data(err.code.0, data);
    }
    HostError::new(
        ErrorCode::ProtocolError,
        format!(
            "{context} failed: {} (JSON-RPC error {})",
            err.message, err.code.0
        ),
    )
    .with_detail(ErrorDetail::JsonRpc {
        code: err.code.0.into(),
        data,
    })
}
