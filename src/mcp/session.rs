//! [`Session`]: one ready connection's MCP client, the one thing callers
//! send requests on (`request`, `list_all`, `subscribe`, `unsubscribe`;
//! `tools/call` through `ServerLive::call_tool`, in [`super::tool_call`]); its fields are this
//! module's. [`ServerLive`]: what callers read about a server without
//! asking its actor: its session while `ready`, the `WWW-Authenticate`
//! challenge of its `authRequired` state, its identity. Only the server's
//! actor replaces the session and writes its bearer token.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::ServerPeerInfo;
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::identity::ServerIdentity;
use super::log_level::LogLevelCell;
use super::request::{self, RequestFailure};
use super::{capabilities, mrtr};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::json::check_bounds;
use crate::limits::Limits;

/// A ready server's connection as seen by callers: its MCP client session
/// (cheap to clone; every part is shared with the connection).
#[derive(Clone)]
pub struct Session {
    /// Request handle.
    pub(super) peer: Peer<RoleClient>,
    /// Becomes `Some(reason)` when the connection ends (crash, exit, stop).
    pub(super) closed: watch::Receiver<Option<String>>,
    /// Set when the HTTP client refused a cross-origin redirect (HTTP only).
    pub(super) redirect_refused: Option<crate::transport::http::RedirectRefused>,
    /// Routes `notifications/progress` to the call that owns the token.
    pub(super) progress: super::progress::ProgressRoutes,
    /// Server requests of this connection waiting on the app's handler.
    pub(super) waits: super::client::ServerRequestWaits,
    /// Responses the stdout reader discarded: too long or too deep, or not a
    /// JSON-RPC message rmcp can decode (stdio only).
    pub(super) discarded: Option<crate::transport::stdout_monitor::DiscardedIds>,
    /// What the HTTP client saw (HTTP only): answers over the SSE event limit.
    pub(super) stream_watch: Option<Arc<crate::transport::stream_watch::StreamWatch>>,
    /// The Streamable HTTP endpoint (HTTP only): the base a challenge's
    /// relative `resource_metadata` resolves against.
    pub(super) endpoint: Option<url::Url>,
    /// The connection's client handler: answers MRTR input requests with
    /// the same handlers as server-initiated requests ([`mrtr`]).
    pub(super) handler: super::client::HostClient,
    /// Its change streams and resource subscriptions ([`super::listen`]).
    pub(super) subscriptions: super::listen::Subscriptions,
}

/// How [`Session::request`] sends: the time bound of each send and what
/// gives the request up.
#[derive(Clone, Copy)]
pub struct Sending<'a> {
    /// Time allowed for each send (one `input_required` round); rmcp then
    /// cancels it upstream (`timeout`).
    pub timeout: Duration,
    /// Cancelled: the request is given up (`notifications/cancelled` to the
    /// server, once, if it was sent; not sent at all if cancelled before)
    /// and fails with `cancelled`.
    pub abort: Option<&'a CancellationToken>,
}

impl Session {
    /// This connection as a request target.
    pub(super) fn wire(&self) -> super::request::Wire<'_> {
        super::request::Wire {
            peer: &self.peer,
            discarded: self.discarded.as_ref(),
            watch: self.stream_watch.as_deref(),
            cache: Some(&self.handler.cache),
            abort: None,
        }
    }

    /// The server's `initialize` / `server/discover` answer (`serverInfo`,
    /// capabilities, negotiated version).
    pub fn peer_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.peer.peer_info()
    }

    /// The request handle, for the notifications the host sends itself
    /// (`notifications/roots/list_changed`).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Forgets the responses cached for the previous authorization context
    /// (SEP-2549 `cacheScope: "private"`): the bearer token changed.
    pub fn drop_private_cache(&self) {
        self.handler.cache.drop_private();
    }

    /// Fails unless server `server_id` declared the capability `method`
    /// needs (see [`capabilities::require`]).
    ///
    /// # Errors
    /// `not_supported`, naming the capability; nothing is sent.
    pub fn require(&self, server_id: &str, method: &str) -> HostResult<()> {
        capabilities::require(&self.peer, server_id, method)
    }

    /// Walks every page of `method` and returns the items under `key` (MCP
    /// 2025-11-25 "Utilities › Pagination"; see [`request::list_all`]): at
    /// most `max_items` (`bound` names it in the error), given up once
    /// `abort` is cancelled. An undeclared list is empty, without a request.
    ///
    /// # Errors
    /// `protocol_error`, `timeout`, `limit_exceeded`, `cancelled`,
    /// `auth_required`; as [`RequestFailure`], so callers can act on a challenge.
    pub async fn list_all(
        &self,
        server_id: &str,
        (method, key): (&str, &str),
        (limits, bound): (&Limits, (usize, &str)),
        abort: Option<&CancellationToken>,
    ) -> Result<Vec<Value>, RequestFailure> {
        let mut wire = self.wire();
        wire.abort = abort;
        request::list_all(wire, server_id, method, key, limits, bound).await
    }

    /// Sends one request of server `server_id` through the one request path
    /// ([`request::send_cached`]: bounded send, error mapping, the response
    /// cache) and bounds its result ([`check_bounds`]). An `input_required`
    /// result (MRTR, SEP-2322, 2026-07-28) is answered through the
    /// connection's handlers and the request sent again with
    /// `inputResponses` and the `requestState` untouched (see [`mrtr`]).
    ///
    /// # Errors
    /// `protocol_error`, `timeout`, `auth_required`, `server_exited`;
    /// `not_supported` (not sent) when the server did not declare the
    /// capability `method` needs; `limit_exceeded` (result bounds, or after
    /// 10 `input_required` rounds); `cancelled` once `sending.abort` is.
    pub async fn request(
        &self,
        server_id: &str,
        (method, params): (&str, Value),
        limits: &Limits,
        sending: Sending<'_>,
    ) -> HostResult<Value> {
        self.require(server_id, method)?;
        let context = format!("{method} on {server_id}");
        let mut wire = self.wire();
        wire.abort = sending.abort;
        let mut rounds = mrtr::Rounds::default();
        let mut answers = Map::new();
        loop {
            let mut params = params.clone();
            if let Some(params) = params.as_object_mut() {
                params.append(&mut answers);
            }
            let mut options = PeerRequestOptions::no_options();
            options.timeout = Some(sending.timeout);
            let result = request::send_cached(wire, server_id, method, params, options)
                .await
                .map_err(|e| e.into_error(server_id, method))?;
            check_bounds(&context, &result, limits)?;
            if !mrtr::is_input_required(&result) {
                return Ok(mrtr::finished(result));
            }
            let with = (&self.handler, &self.peer);
            let answering = rounds.answer(&context, result, with, None);
            answers = match sending.abort {
                None => answering.await?,
                Some(abort) => tokio::select! {
                    answered = answering => answered?,
                    () = abort.cancelled() => {
                        let what = format!("{context} was cancelled");
                        return Err(HostError::new(ErrorCode::Cancelled, what));
                    }
                },
            };
        }
    }

    /// Follows resource `uri` (MCP `resources/subscribe` in the 2025 era, a
    /// `subscriptions/listen` stream at 2026-07-28; see
    /// [`super::listen::Subscriptions::subscribe`]); `timeout` bounds the
    /// acknowledgment.
    ///
    /// # Errors
    /// Those of the request; `cancelled` once `abort` is.
    pub async fn subscribe(
        &self,
        uri: &str,
        bounds: (Duration, Option<&CancellationToken>),
    ) -> HostResult<()> {
        self.subscriptions.subscribe(uri, bounds).await
    }

    /// Stops following resource `uri` (see
    /// [`super::listen::Subscriptions::unsubscribe`]).
    ///
    /// # Errors
    /// Those of `resources/unsubscribe` (2025 era); `cancelled` once `abort` is.
    pub async fn unsubscribe(
        &self,
        uri: &str,
        bounds: (Duration, Option<&CancellationToken>),
    ) -> HostResult<()> {
        self.subscriptions.unsubscribe(uri, bounds).await
    }
}

/// What callers can read about a server without asking its actor.
#[derive(Default)]
pub struct ServerLive {
    conn: RwLock<Option<Arc<Session>>>,
    challenge: RwLock<Option<String>>,
    identity: RwLock<Option<Arc<ServerIdentity>>>,
    /// The resources the app subscribed to (kept across connections).
    pub resources: super::listen::WantedResources,
    activity: super::activity::Activity,
    log_level: LogLevelCell,
}

impl ServerLive {
    /// Requests in flight, the end of the last one and the shown state
    /// (lazy start and idle stop, [`super::activity`]).
    pub fn activity(&self) -> &super::activity::Activity {
        &self.activity
    }

    /// The current connection, when the server is `ready`: none once the
    /// connection is closing (stop, crash), even before the actor has
    /// withdrawn it, so nothing new is sent on it.
    /// Shared, not copied: a call takes it on every request.
    pub fn session(&self) -> Option<Arc<Session>> {
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

    /// The log level the app chose for this server (kept across its
    /// connections, which share it through [`super::ServerTasks`]; see
    /// [`super::log_level`]).
    pub fn log_level(&self) -> &LogLevelCell {
        &self.log_level
    }

    /// Publishes (`Some`) or withdraws (`None`) the connection; the actor's alone.
    pub(crate) fn set(&self, conn: Option<Session>) {
        *self.conn.write().unwrap_or_else(PoisonError::into_inner) = conn.map(Arc::new);
    }
}
