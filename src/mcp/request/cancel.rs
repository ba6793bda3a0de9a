//! Ending a request early on a live connection: `notifications/cancelled`
//! sent without waiting for the transport ([`cancel_in_background`]), for a
//! timed-out or aborted request, a discarded response ([`abandon`]) or a
//! response stream that closed under its request ([`stream_closed`]).

use std::time::Duration;

use rmcp::model::{CancelledNotificationParam, RequestId};
use rmcp::service::{Peer, RoleClient};

use crate::error::{ErrorCode, HostError};
use crate::limits::CANCEL_NOTICE_WAIT_MS;
use crate::transport::stream_watch::StreamWatch;

/// How long a request that rmcp ended with `TransportClosed` waits for the
/// connection's end before it is taken for a closed response stream (see
/// [`connection_ended`]). A settle time of this module's own; not a
/// user-tunable limit.
const CLOSE_SETTLE: Duration = Duration::from_millis(200);

/// `Some(protocol_error)` for request `id` (`context` as in
/// [`map_service_error`]) that rmcp ended with `ServiceError::TransportClosed`
/// while the connection lives on ([`connection_ended`]): only its response
/// stream closed (Streamable HTTP: the POST's SSE stream ended before the
/// response; rmcp reports that and a closed connection alike). The server
/// is sent `notifications/cancelled` for it, since no answer can arrive any
/// more. `None` once the connection has ended: that is `server_exited`;
/// always `None` for a `stdio` connection, whose one stream is the connection.
/// `limit_exceeded` (the wording of `too_large::over_limit`) when `watch`
/// saw an SSE event on the stream over rmcp's event size limit: rmcp
/// dropped the answer and ended the stream.
pub async fn stream_closed(
    context: &str,
    peer: &Peer<RoleClient>,
    id: RequestId,
    (stdio, watch): (bool, Option<&StreamWatch>),
) -> Option<HostError> {
    if let Some(limit) = watch.and_then(|w| w.take_oversized(&id)) {
        abandon(peer, id);
        return Some(super::super::too_large::over_limit(context, limit));
    }
    if stdio || connection_ended(peer).await {
        return None;
    }
    cancel_in_background(peer, id, "the response stream closed before the response");
    Some(HostError::new(
        ErrorCode::ProtocolError,
        format!(
            "{context} failed: the response stream closed before the response (the connection \
             is still open)"
        ),
    ))
}

/// Whether the connection of `peer` has ended: rmcp's service loop is gone.
/// A request's pending response is dropped together with the loop, so the
/// loop's end is waited for a moment ([`CLOSE_SETTLE`]) before it is ruled out.
async fn connection_ended(peer: &Peer<RoleClient>) -> bool {
    let start = tokio::time::Instant::now();
    while !peer.is_transport_closed() {
        if start.elapsed() >= CLOSE_SETTLE {
            return false;
        }
        tokio::time::sleep(CLOSE_SETTLE / 20).await;
    }
    true
}

/// Frees rmcp's pending entry for a request whose response was discarded
/// (`notifications/cancelled`; the server already answered, so it ignores it).
pub fn abandon(peer: &Peer<RoleClient>, id: RequestId) {
    cancel_in_background(peer, id, "the response could not be delivered");
}

/// Sends `notifications/cancelled` for request `id` with `reason` (MCP
/// 2025-11-25 "Utilities › Cancellation") from a task of its own, given up
/// after [`CANCEL_NOTICE_WAIT_MS`]. The request it ends is over at once:
/// rmcp's `notify_cancelled` resolves only once the transport has written
/// the notice, which a server that stopped reading stdin (a full pipe)
/// delays for ever, so awaiting it would let that server hold a timed-out
/// or aborted request open.
pub fn cancel_in_background(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let peer = peer.clone();
    let param = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
    let wait = Duration::from_millis(CANCEL_NOTICE_WAIT_MS);
    tokio::spawn(async move {
        let _ = tokio::time::timeout(wait, peer.notify_cancelled(param)).await;
    });
}
