//! `setRoots`: the host's own roots (MCP 2025-11-25 "Client Features ›
//! Roots") and telling the servers they changed.
//!
//! Per era: a 2025-era server (one with an `initialize` session) gets
//! `notifications/roots/list_changed` and then asks `roots/list` again. MCP
//! 2026-07-28 removed that notification (changelog, SEP-2575: no session, no
//! client-to-server change signal); a server of that era asks for roots
//! inside each request that needs them (an `input_required` result carrying
//! a `roots/list` input request, SEP-2322), so it gets nothing and its next
//! such request is answered from the new roots.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{Peer, RoleClient};

use super::Host;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::requests::host_roots::{HostRoots, WithHostRoots};
use crate::requests::roots::Root;
use crate::requests::{RequestHandler, ServerRequestKind};

/// The request handler a host installs around the app's (`app`) and the
/// host's roots, `initial` from the `roots` option (see
/// [`crate::requests::host_roots`] for the precedence).
pub(super) fn install(
    app: Option<Arc<dyn RequestHandler>>,
    initial: Option<Vec<Root>>,
) -> (Option<Arc<dyn RequestHandler>>, Arc<HostRoots>) {
    let app_roots = app
        .as_ref()
        .is_some_and(|h| h.handles(ServerRequestKind::Roots));
    let roots = Arc::new(HostRoots::new(initial, app_roots));
    let handler: Arc<dyn RequestHandler> = Arc::new(WithHostRoots::new(app, roots.clone()));
    (Some(handler), roots)
}

impl Host {
    /// Sets the host's roots (`roots/list` answers them from now on, before
    /// the app's `roots` handler) and, when they differ from the current
    /// ones, sends `notifications/roots/list_changed` to every 2025-era
    /// server that is `ready` or has read roots (a starting one included);
    /// resolves once each notification was written (each bounded by
    /// `limits.callTimeoutMs`; a server whose connection is gone is skipped).
    /// 2026-07-28 servers get nothing (see the module docs). `roots` are
    /// checked and encoded already ([`crate::requests::roots::parse_roots`]).
    ///
    /// # Errors
    ///
    /// `invalid_argument` when the host declared no `roots` capability
    /// (neither the `roots` option nor a `roots` handler: servers would never
    /// ask); `disposed`.
    pub async fn set_roots(&self, roots: Vec<Root>) -> HostResult<()> {
        self.check_live()?;
        if !self.roots.declared() {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                "setRoots: this host declared no roots capability; give new McpHost a `roots` \
                 option (e.g. []) or a `roots` handler",
            ));
        }
        if !self.roots.replace(roots) {
            return Ok(());
        }
        let limit = Duration::from_millis(self.shared.limits().call_timeout_ms);
        let sends = self.roots_listeners().into_iter().map(|(id, peer)| {
            let shared = self.shared.clone();
            async move {
                let sent = tokio::time::timeout(limit, peer.notify_roots_list_changed()).await;
                let what = match sent {
                    Ok(Ok(())) => "sent notifications/roots/list_changed".to_owned(),
                    Ok(Err(e)) => format!("notifications/roots/list_changed not sent: {e}"),
                    Err(_) => format!(
                        "notifications/roots/list_changed not sent within {} ms",
                        limit.as_millis()
                    ),
                };
                shared
                    .publisher()
                    .log(log(LogLevel::Debug, "host.roots", Some(&id), what));
            }
        });
        let all = async {
            futures::future::join_all(sends).await;
            Ok(())
        };
        self.until_disposed(all).await
    }

    /// The 2025-era connections to tell about a change, by server id: each
    /// `ready` server's, else the one that last read roots (if still open).
    fn roots_listeners(&self) -> Vec<(String, Peer<RoleClient>)> {
        let mut peers: HashMap<String, Peer<RoleClient>> =
            self.roots.readers().into_iter().collect();
        for (id, handle) in &self.registry().servers {
            if let Some(conn) = handle.live.session() {
                peers.insert(id.clone(), conn.peer().clone());
            }
        }
        let modern = |peer: &Peer<RoleClient>| {
            peer.peer_info()
                .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28)
        };
        peers
            .into_iter()
            .filter(|(_, peer)| !modern(peer))
            .collect()
    }
}
