//! What a failed `tools/call` means for its server: a refused token (the
//! call may pause in a chat), a session made unusable (the actor is told),
//! and the requirement a paused call shows.

use std::sync::Arc;

use ahp_types::state::McpServerAuthRequiredState;

use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult};
use crate::mcp::TransportSpec;
use crate::supervisor::{Command, ServerHandle};

/// A 401 on a request: the server refused the token (a challenge that is
/// not a step-up), MCP 2025-11-25 "Authorization" / RFC 6750 §3.1
/// `invalid_token`.
pub(super) fn is_refused_token(e: &HostError) -> bool {
    e.code == ErrorCode::AuthRequired
        && matches!(
            e.detail,
            ErrorDetail::Challenge {
                insufficient_scope: false,
                ..
            }
        )
}

/// Tells the server's actor when a request error makes the session
/// unusable: a refused token or refresh (401; step-up 403s do not) or a
/// refused redirect.
pub(super) fn report_unusable(handle: &ServerHandle, e: &HostError) {
    match e.code {
        ErrorCode::AuthRequired if !e.is_step_up() => handle.send(Command::ConnectionFailed {
            error: Box::new(e.clone()),
            challenge: handle.live.challenge(),
        }),
        ErrorCode::RedirectRefused => handle.send(Command::ConnectionFailed {
            error: Box::new(e.clone()),
            challenge: None,
        }),
        _ => {}
    }
}

/// The requirement a paused call shows (AHP `McpAuthRequirement`): from the
/// challenge the server's last refusal recorded, after RFC 9728 discovery.
///
/// # Errors
/// `auth_required` on a stdio server; those of `crate::auth::discover`.
pub(super) async fn paused_requirement(
    handle: &ServerHandle,
    network: &Arc<crate::network::Network>,
) -> HostResult<McpServerAuthRequiredState> {
    let TransportSpec::StreamableHttp(cfg) = &handle.spec.transport else {
        return Err(HostError::new(
            ErrorCode::AuthRequired,
            format!("{} asked for more scopes over stdio", handle.id),
        ));
    };
    let header = handle.live.challenge().unwrap_or_default();
    let challenge = crate::auth::AuthChallenge::from_header(&header, &cfg.url);
    let resource = crate::auth::discover(&cfg.url, &challenge, network).await?;
    let client_id = handle
        .spec
        .oauth_client
        .as_ref()
        .and_then(|c| c.client_id.as_deref());
    Ok(crate::auth::requirement(
        &challenge, /* had_token */ true, resource, client_id,
    ))
}
