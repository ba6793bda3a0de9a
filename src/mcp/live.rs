//! What callers read about a server without asking its actor: the live
//! connection of a `ready` server and the `WWW-Authenticate` challenge of its
//! `authRequired` state. Only the server's actor replaces the connection
//! and writes its bearer token.

use std::sync::{Arc, PoisonError, RwLock};

use super::identity::ServerIdentity;

use rmcp::service::{Peer, RoleClient};
use tokio::sync::watch;

/// A ready server's connection as seen by callers.
#[derive(Clone)]
pub struct LiveConnection {
    /// Request handle.
    pub peer: Peer<RoleClient>,
    /// Becomes `Some(reason)` when the connection ends (crash, exit, stop).
    pub closed: watch::Receiver<Option<String>>,
    /// Set when the HTTP client refused a cross-origin redirect (HTTP only).
    pub redirect_refused: Option<crate::transport::http::RedirectRefused>,
    /// Routes `notifications/progress` to the call that owns the token.
    pub progress: super::progress::ProgressRoutes,
    /// Server requests of this connection waiting on the app's handler.
    pub waits: super::client::ServerRequestWaits,
    /// Responses the stdout reader discarded: too long or too deep, or not a
    /// JSON-RPC message rmcp can decode (stdio only).
    pub discarded: Option<crate::transport::stdout_monitor::DiscardedIds>,
    /// What the HTTP client saw (HTTP only): answers over the SSE event limit.
    pub stream_watch: Option<Arc<crate::transport::stream_watch::StreamWatch>>,
    /// The Streamable HTTP endpoint (HTTP only): the base a challenge's
    /// relative `resource_metadata` resolves against.
    pub endpoint: Option<url::Url>,
    /// The connection's client handler: answers MRTR input requests with
    /// the same handlers as server-initiated requests ([`super::mrtr`]).
    pub handler: super::client::HostClient,
    /// Its change streams and resource subscriptions ([`super::listen`]).
    pub subscriptions: super::listen::Subscriptions,
}

impl LiveConnection {
    /// This connection as a request target.
    pub fn wire(&self) -> super::request::Wire<'_> {
        super::request::Wire {
            peer: &self.peer,
            discarded: self.discarded.as_ref(),
            watch: self.stream_watch.as_deref(),
            cache: Some(&self.handler.cache),
            abort: None,
        }
    }
}

/// What callers can read about a server without asking its actor.
#[derive(Default)]
pub struct ServerLive {
    conn: RwLock<Option<LiveConnection>>,
    challenge: RwLock<Option<String>>,
    identity: RwLock<Option<Arc<ServerIdentity>>>,
    /// The resources the app subscribed to (kept across connections).
    pub resources: super::listen::WantedResources,
}

impl ServerLive {
    /// The current connection, when the server is `ready`: none once the
    /// connection is closing (stop, crash), even before the actor has
    /// withdrawn it, so nothing new is sent on it.
    pub fn connection(&self) -> Option<LiveConnection> {
        self.conn
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|conn| conn.closed.borrow().is_none())
    }

    /// The `WWW-Authenticate` challenge of the current `authRequired` state,
    /// or of the last request refused on the live connection.
    pub fn challenge(&self) -> Option<String> {
        self.challenge
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records the challenge: by the actor (entering or leaving
    /// `authRequired`) and by `tools/call` when the server refuses a call.
    pub(crate) fn set_challenge(&self, header: Option<String>) {
        *self
            .challenge
            .write()
            .unwrap_or_else(PoisonError::into_inner) = header;
    }

    /// What the server said about itself at its last connection (kept
    /// after it disconnects; replaced on every reconnect); `None` before
    /// its first connection.
    pub fn identity(&self) -> Option<Arc<ServerIdentity>> {
        self.identity
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records the identity of a new connection; the actor's alone.
    pub(crate) fn set_identity(&self, identity: Arc<ServerIdentity>) {
        *self
            .identity
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(identity);
    }

    /// Publishes (`Some`) or withdraws (`None`) the connection; the actor's alone.
    pub(crate) fn set(&self, conn: Option<LiveConnection>) {
        *self.conn.write().unwrap_or_else(PoisonError::into_inner) = conn;
    }
}
