//! One live MCP connection ([`Connection`]) and what opening one needs
//! besides the handshake: the
//! credentials of an HTTP attempt ([`HttpAuth`]), why an attempt failed
//! ([`Opening`]), and the wrap of an initialized rmcp service
//! ([`finish`]). The openers (`stdio_open`, `http_open`) build on it, and
//! `super::open` runs them.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{Peer, RoleClient, RunningServiceCancellationToken};
use tokio::sync::{mpsc, watch};

use crate::error::{ErrorCode, HostError};
use crate::limits::STDIN_WRITE_TIMEOUT_MS;
use crate::mcp::client::{HostClient, Notice, ServerRequestWaits};
use crate::mcp::identity::ServerIdentity;
use crate::mcp::listen::Subscriptions;
use crate::mcp::request::RequestFailure;
use crate::mcp::ServerTasks;
use crate::transport::process::{describe_exit, ServerProcess};
use crate::transport::stderr::StderrTail;
use crate::transport::{http, stdout_monitor};

/// How long to wait for the last stderr bytes after an exit. (A settle time
/// of this module's own, not a user-tunable limit: it stays here.)
pub(super) const STDERR_SETTLE: Duration = Duration::from_millis(250);
/// How long to wait for a process exit status once its stdout closed. (A
/// settle time of this module's own, not a user-tunable limit: it stays here.)
pub(super) const EXIT_SETTLE: Duration = Duration::from_millis(500);
/// How long [`Connection::close`] waits for the MCP session to end after
/// closing stdin, before [`ServerProcess::stop`] begins its own
/// `STOP_STDIN_GRACE_MS` wait (so a server that ignores stdin gets up to
/// both before SIGTERM). Kept as it was; not a user-tunable limit.
const CLOSE_SESSION_WAIT: Duration = Duration::from_secs(2);
/// A startup deadline that never comes (a year), for a timeout past what an
/// `Instant` can hold.
pub(super) const NEVER: Duration = Duration::from_secs(365 * 86_400);

/// Credentials for a Streamable HTTP connection.
#[derive(Clone, Copy)]
pub enum HttpAuth<'a> {
    /// No `Authorization` header (a 401 starts the auth flow).
    None,
    /// A token pushed with AHP `authenticate`.
    Bearer(&'a str),
    /// A host-run sign-in: rmcp's `AuthClient` adds the token, refreshes it
    /// shortly before expiry and once on a 401.
    OAuth(&'a rmcp::transport::auth::AuthClient<reqwest::Client>),
}

/// A live, initialized connection.
pub struct Connection {
    /// Handle for requests to the server.
    pub peer: Peer<RoleClient>,
    /// Server notifications for the actor.
    pub notices: mpsc::UnboundedReceiver<Notice>,
    cancel: Option<RunningServiceCancellationToken>,
    ended: watch::Receiver<bool>,
    process: Option<ServerProcess>,
    stderr: Option<Arc<StderrTail>>,
    /// The process runs in a sandbox (stdio only): an exit with a
    /// permission error on stderr is reported as the sandbox's doing.
    pub(super) sandboxed: bool,
    /// `true` once a stdin write tore the stream (stdio only).
    pub(super) stdin_stalled: Option<watch::Receiver<bool>>,
    /// Set when the HTTP client refused a cross-origin redirect (HTTP only).
    pub redirect_refused: Option<http::RedirectRefused>,
    /// Routes `notifications/progress` to calls (shared with the client handler).
    pub progress: crate::mcp::progress::ProgressRoutes,
    /// Server requests waiting on the app (shared with the client handler).
    pub waits: ServerRequestWaits,
    /// The replaceable bearer token (Streamable HTTP without host-run OAuth).
    pub bearer: Option<http::BearerCell>,
    /// Responses the stdout reader discarded: too long or too deep, or not a
    /// JSON-RPC message rmcp can decode (stdio only).
    pub discarded: Option<stdout_monitor::DiscardedIds>,
    /// The Streamable HTTP endpoint (HTTP only).
    pub endpoint: Option<url::Url>,
    /// What the HTTP client saw (HTTP only): the GET stream, raw tool lists.
    pub stream_watch: Option<Arc<crate::transport::stream_watch::StreamWatch>>,
    /// What the server said about itself, with the negotiated version.
    pub identity: Arc<ServerIdentity>,
    /// The connection's client handler (also answers MRTR input requests).
    pub handler: HostClient,
    /// Its change streams and resource subscriptions (see [`crate::mcp::listen`]).
    pub subscriptions: Subscriptions,
    /// The values of the app's dynamic headers for this connection, hidden
    /// from every text while it lives (`crate::redact`).
    pub kept: Vec<crate::redact::KeptSecret>,
}

/// Why one connection attempt failed.
pub(super) enum Opening {
    /// The attempt failed for good.
    Failed(RequestFailure),
    /// `auto` only: the server answered `server/discover` with something
    /// that is not a discover result (e.g. `{}` to any method), so rmcp
    /// could not fall back on that connection; the attempt was cleaned up.
    ProbeUnusable(String),
    /// The POST of the first request was answered with this HTTP status
    /// (400, 404 or 405) without a JSON-RPC error: a legacy HTTP+SSE server,
    /// tried next on the same URL (MCP 2025-11-25 "Transports › Backwards
    /// Compatibility").
    Legacy(u16),
}

impl Opening {
    pub(super) fn into_failure(self) -> RequestFailure {
        match self {
            Self::Failed(f) => f,
            Self::ProbeUnusable(why) => RequestFailure::Failed(HostError::new(
                ErrorCode::ProtocolError,
                format!("server/discover answered with {why}"),
            )),
            Self::Legacy(status) => RequestFailure::Failed(HostError::new(
                ErrorCode::ConnectFailed,
                format!("connect failed: the MCP POST was answered with HTTP {status}"),
            )),
        }
    }
}

impl<E: Into<RequestFailure>> From<E> for Opening {
    fn from(e: E) -> Self {
        Self::Failed(e.into())
    }
}

/// Wraps an initialized service; its waiter task (which flags the end of
/// the session) runs on `tasks` until the service ends or the server's
/// token is cancelled (dropping the service then cancels it).
pub(super) fn finish(
    service: rmcp::service::RunningService<RoleClient, HostClient>,
    notices: mpsc::UnboundedReceiver<Notice>,
    (process, stderr): (Option<ServerProcess>, Option<Arc<StderrTail>>),
    tasks: &ServerTasks,
) -> Connection {
    let peer = service.peer().clone();
    let handler = service.service().clone();
    let identity = match peer.peer_info() {
        Some(info) => ServerIdentity::from_peer(&info),
        None => ServerIdentity::unknown(),
    };
    let subscriptions = Subscriptions::new(peer.clone(), handler.clone(), tasks);
    let cancel = Some(service.cancellation_token());
    let (ended_tx, ended) = watch::channel(false);
    let disposed = tasks.cancel.clone();
    tasks.tracker.spawn(async move {
        tokio::select! {
            _ = service.waiting() => {}
            _ = disposed.cancelled() => {}
        }
        let _ = ended_tx.send(true);
    });
    Connection {
        peer,
        notices,
        cancel,
        ended,
        process,
        stderr,
        sandboxed: false,
        stdin_stalled: None,
        redirect_refused: None,
        progress: Default::default(),
        waits: Default::default(),
        bearer: None,
        discarded: None,
        endpoint: None,
        stream_watch: None,
        identity: Arc::new(identity),
        handler,
        subscriptions,
        kept: Vec::new(),
    }
}

pub(super) fn with_tail(what: String, tail: &StderrTail) -> String {
    let text = tail.text();
    if text.is_empty() {
        what
    } else {
        format!("{what}; stderr: {text}")
    }
}

impl Connection {
    /// This connection as callers see it while it is ready; `closed` tells
    /// them when it ends.
    pub fn session(&self, closed: watch::Receiver<Option<String>>) -> crate::mcp::Session {
        crate::mcp::Session {
            peer: self.peer.clone(),
            closed,
            redirect_refused: self.redirect_refused.clone(),
            progress: self.progress.clone(),
            waits: self.waits.clone(),
            discarded: self.discarded.clone(),
            stream_watch: self.stream_watch.clone(),
            endpoint: self.endpoint.clone(),
            handler: self.handler.clone(),
            subscriptions: self.subscriptions.clone(),
        }
    }

    /// A future that resolves when the connection is gone on its own
    /// (process exit or transport closed) with a message giving the exit
    /// status and stderr tail. It owns what it watches, so it can be kept
    /// while the connection is used.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only watches; a new one starts over (including the
    /// settle waits once the end was seen).
    pub fn ended(&self) -> impl std::future::Future<Output = String> + Send + 'static {
        let mut ended = self.ended.clone();
        let exit = self.process.as_ref().map(|p| p.exit.clone());
        let stderr = self.stderr.clone();
        let stalled = self.stdin_stalled.clone();
        let sandboxed = self.sandboxed;
        async move {
            let Some(mut exit) = exit else {
                until_true(&mut ended).await;
                return "connection closed".to_owned();
            };
            tokio::select! {
                _ = changed(&mut exit) => {}
                _ = until_true(&mut ended) => {}
            }
            let status = settle_status(&mut exit).await;
            let what = match status {
                _ if stalled.is_some_and(|s| *s.borrow()) => format!(
                    "stopped reading its stdin (a message could not be written within {STDIN_WRITE_TIMEOUT_MS} ms)"
                ),
                Some(_) => describe_exit(status),
                None => "closed its stdout".to_owned(),
            };
            match &stderr {
                Some(tail) => {
                    tail.wait_eof(STDERR_SETTLE).await;
                    let denied = sandboxed && crate::transport::sandbox::looks_denied(&tail.text());
                    let prefix = if denied {
                        crate::transport::sandbox::DENIED_PREFIX
                    } else {
                        ""
                    };
                    with_tail(format!("{prefix}{what}"), tail)
                }
                None => what,
            }
        }
    }

    /// Closes the connection: shuts the MCP session down (closing stdin),
    /// then stops the process group (see [`ServerProcess::stop`]).
    pub async fn close(mut self) {
        self.subscriptions.stop().await;
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        let _ = tokio::time::timeout(CLOSE_SESSION_WAIT, until_true(&mut self.ended)).await;
        if let Some(proc) = self.process.take() {
            proc.stop().await;
        }
    }

    /// After [`Connection::ended`]: kills what is left of the process group.
    pub async fn discard(mut self) {
        self.subscriptions.stop().await;
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        if let Some(proc) = self.process.take() {
            proc.sweep().await;
        }
    }
}

impl Drop for Connection {
    /// A connection dropped without [`Connection::close`] (an attempt given
    /// up) stops its listen streams too.
    fn drop(&mut self) {
        self.subscriptions.cancel();
    }
}

/// Like `settle_exit`, on a watch of the exit status.
async fn settle_status(
    exit: &mut watch::Receiver<Option<std::process::ExitStatus>>,
) -> Option<std::process::ExitStatus> {
    let wait = async {
        let _ = exit.wait_for(Option::is_some).await;
        *exit.borrow()
    };
    tokio::time::timeout(EXIT_SETTLE, wait).await.ok().flatten()
}

/// Resolves once the exit watch holds a status (or its sender is gone).
///
/// # Cancel safety
///
/// Cancel safe: it only watches.
pub(super) async fn changed(exit: &mut watch::Receiver<Option<std::process::ExitStatus>>) {
    let _ = exit.wait_for(Option::is_some).await;
}

/// Resolves once the flag is `true` (or its sender is gone).
///
/// # Cancel safety
///
/// Cancel safe: it only watches.
async fn until_true(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|v| *v).await;
}
