//! Opening one MCP connection: spawn or connect, then the handshake of the
//! server's era (see [`lifecycle`]): `server/discover` (MCP 2026-07-28
//! "Lifecycle › Discovery") with fallback to `initialize` (MCP 2025-11-25
//! "Lifecycle › Initialization"), raced against early process exit and the
//! startup timeout ([`startup`]: the first real cause of a failed start is
//! the one reported). The negotiated version must be one the host speaks.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, Peer, RoleClient, RunningServiceCancellationToken};
use tokio::sync::{mpsc, watch};

use super::client::{Bounds, HostClient, Notice, ServerRequestWaits};
use super::identity::{self, ServerIdentity};
use super::listen::Subscriptions;
use super::request::RequestFailure;
use super::{HostShared, ServerSpec, ServerTasks};
use crate::config::{HttpConfig, PluginVars, ProtocolSetting, StdioConfig};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::limits::STDIN_WRITE_TIMEOUT_MS;
use crate::transport::process::{describe_exit, ServerProcess};
use crate::transport::stderr::StderrTail;
use crate::transport::{http, stdout_monitor};

mod http_answer;
mod http_open;
mod startup;
mod stdio_open;

use http_open::open_http;
use stdio_open::{open_stdio, Stdio};

/// How long to wait for the last stderr bytes after an exit. (A settle time
/// of this module's own, not a user-tunable limit: it stays here.)
const STDERR_SETTLE: Duration = Duration::from_millis(250);
/// How long to wait for a process exit status once its stdout closed. (A
/// settle time of this module's own, not a user-tunable limit: it stays here.)
const EXIT_SETTLE: Duration = Duration::from_millis(500);
/// How long [`Connection::close`] waits for the MCP session to end after
/// closing stdin, before [`ServerProcess::stop`] begins its own
/// `STOP_STDIN_GRACE_MS` wait (so a server that ignores stdin gets up to
/// both before SIGTERM). Kept as it was; not a user-tunable limit.
const CLOSE_SESSION_WAIT: Duration = Duration::from_secs(2);
/// A startup deadline that never comes (a year), for a timeout past what an
/// `Instant` can hold.
const NEVER: Duration = Duration::from_secs(365 * 86_400);

/// Where a server lives.
#[derive(Debug, Clone)]
pub enum TransportSpec {
    /// A local process; variables come from its plugin (or the top-level server's root).
    Stdio(StdioConfig, PluginVars),
    /// A remote Streamable HTTP endpoint.
    StreamableHttp(HttpConfig),
}

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
    /// `true` once a stdin write tore the stream (stdio only).
    stdin_stalled: Option<watch::Receiver<bool>>,
    /// Set when the HTTP client refused a cross-origin redirect (HTTP only).
    pub redirect_refused: Option<http::RedirectRefused>,
    /// Routes `notifications/progress` to calls (shared with the client handler).
    pub progress: super::progress::ProgressRoutes,
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
    /// Its change streams and resource subscriptions (see [`super::listen`]).
    pub subscriptions: Subscriptions,
}

/// rmcp's lifecycle for a server's [`ProtocolSetting`]: `auto` probes with
/// `server/discover` offering 2026-07-28 and falls back to `initialize`
/// offering 2025-11-25 (on a JSON-RPC error at once; on silence after
/// rmcp's 10 s probe time, within the startup timeout).
pub fn lifecycle(setting: ProtocolSetting) -> ClientLifecycleMode {
    let modern = vec![ProtocolVersion::V_2026_07_28];
    match setting {
        ProtocolSetting::Auto => ClientLifecycleMode::Auto {
            preferred_versions: modern,
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
        ProtocolSetting::Stateless => ClientLifecycleMode::Discover {
            preferred_versions: modern,
        },
        ProtocolSetting::Legacy => ClientLifecycleMode::Initialize,
    }
}

/// Opens and initializes a connection for server `server_id`; its service
/// task runs on `tasks` and ends with the server's token at the latest.
///
/// `auth` gives the credentials for a Streamable HTTP server.
///
/// # Errors
///
/// The first real cause, never a later symptom (see [`startup`]):
/// `command_not_found`, `command_outside_root`, `spawn_failed` (launch);
/// `protocol_error` (the server answered `initialize` with a JSON-RPC error,
/// named with its code and message, or with something that is not an
/// `InitializeResult`; stdio and Streamable HTTP alike, whatever the process
/// does next); `server_exited` (exited before answering `initialize`, with
/// exit status and stderr tail); `startup_timeout` (no answer within
/// `startup_timeout`, process still running); `connect_failed`,
/// `redirect_refused`; [`RequestFailure::Auth`] when the server answers
/// 401/403 with a challenge.
pub async fn open(
    shared: &Arc<HostShared>,
    server: &ServerSpec,
    auth: HttpAuth<'_>,
    tasks: &ServerTasks,
) -> Result<Connection, RequestFailure> {
    let auto = server.protocol == ProtocolSetting::Auto;
    let digest = auto.then(|| super::eras::digest(&server.transport));
    let known_legacy = match &digest {
        Some(d) => shared.eras.is_legacy(d).await,
        None => false,
    };
    let first_lifecycle = match known_legacy {
        // This configuration spoke the 2025 era last time: no probe.
        true => ClientLifecycleMode::Initialize,
        false => lifecycle(server.protocol),
    };
    let first = open_with(shared, server, auth, tasks, first_lifecycle).await;
    let opened = match first {
        Err(Opening::ProbeUnusable(why)) if auto => {
            let text = format!(
                "server/discover answered with {why}; connecting again with initialize \
                 (give this server protocol: \"legacy\" to skip the probe)"
            );
            shared.log(log(LogLevel::Warn, "host.connect", Some(&server.id), text));
            let legacy = ClientLifecycleMode::Initialize;
            open_with(shared, server, auth, tasks, legacy)
                .await
                .map_err(Opening::into_failure)
        }
        other => other.map_err(Opening::into_failure),
    };
    if let Some(d) = &digest {
        shared.eras.after_start(d, known_legacy, &opened).await;
    }
    opened
}

/// Why one connection attempt failed.
enum Opening {
    /// The attempt failed for good.
    Failed(RequestFailure),
    /// `auto` only: the server answered `server/discover` with something
    /// that is not a discover result (e.g. `{}` to any method), so rmcp
    /// could not fall back on that connection; the attempt was cleaned up.
    ProbeUnusable(String),
}

impl Opening {
    fn into_failure(self) -> RequestFailure {
        match self {
            Self::Failed(f) => f,
            Self::ProbeUnusable(why) => RequestFailure::Failed(HostError::new(
                ErrorCode::ProtocolError,
                format!("server/discover answered with {why}"),
            )),
        }
    }
}

impl<E: Into<RequestFailure>> From<E> for Opening {
    fn from(e: E) -> Self {
        Self::Failed(e.into())
    }
}

/// One connection attempt with `lifecycle`.
async fn open_with(
    shared: &Arc<HostShared>,
    server: &ServerSpec,
    auth: HttpAuth<'_>,
    tasks: &ServerTasks,
    lifecycle: ClientLifecycleMode,
) -> Result<Connection, Opening> {
    let (server_id, spec) = (server.id.as_str(), &server.transport);
    let startup_timeout = server.startup_timeout;
    let (notice_tx, notices) = mpsc::unbounded_channel();
    let progress = super::progress::ProgressRoutes::default();
    let waits = ServerRequestWaits::default();
    let handler = HostClient {
        info: shared.client_info.clone(),
        server_id: server_id.to_owned(),
        notices: notice_tx,
        sink: shared.sink.clone(),
        requests: shared.requests.clone(),
        progress: progress.clone(),
        waits: waits.clone(),
        cache: Default::default(),
        calls: Default::default(),
        app_channels: shared.mcp_apps.then(|| shared.app_channels.clone()),
        bounds: Bounds::new(server_id, shared.sink.clone()),
    };
    let mut conn = match spec {
        TransportSpec::Stdio(cfg, vars) => {
            let stdio = Stdio {
                cfg,
                vars,
                startup_timeout,
                lifecycle,
            };
            open_stdio(shared, server_id, stdio, handler, notices, tasks).await?
        }
        TransportSpec::StreamableHttp(cfg) => {
            open_http(
                (server_id, &shared.dpop_keys, &shared.network),
                cfg,
                handler,
                notices,
                (startup_timeout, auth, lifecycle),
                tasks,
            )
            .await?
        }
    };
    conn.progress = progress;
    conn.waits = waits;
    let base = conn.endpoint.clone();
    for src in Arc::make_mut(&mut conn.identity).resolve_icons(base.as_ref()) {
        let text = format!("serverInfo icon {src:?} dropped: a relative URI that cannot be resolved (no server URL, or too long)");
        shared.log(log(LogLevel::Warn, "host.connect", Some(server_id), text));
    }
    if let Err(e) = check_version(server_id, &conn.identity) {
        conn.close().await;
        return Err(e.into());
    }
    Ok(conn)
}

/// The `protocol_error` for a server that settled on a revision the host
/// never offered (e.g. an `initialize` result naming `1999-01-01`).
fn check_version(server_id: &str, identity: &ServerIdentity) -> HostResult<()> {
    let version = &identity.protocol_version;
    if identity::supported(version) {
        return Ok(());
    }
    Err(HostError::new(
        ErrorCode::ProtocolError,
        format!(
            "server {server_id:?} answered with protocol version {version:?}, which this host \
             does not speak (it speaks {})",
            identity::supported_list()
        ),
    ))
}

/// Removes `[path::Type<…>]` segments (Rust type names) from an error text.
pub(crate) fn strip_type_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('[') {
        let Some(len) = rest[start..].find(']') else {
            break;
        };
        let inner = &rest[start..start + len];
        out.push_str(&rest[..start]);
        if !inner.contains("::") {
            out.push_str(&rest[start..=start + len]);
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Wraps an initialized service; its waiter task (which flags the end of
/// the session) runs on `tasks` until the service ends or the server's
/// token is cancelled (dropping the service then cancels it).
fn finish(
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
    }
}

fn with_tail(what: String, tail: &StderrTail) -> String {
    let text = tail.text();
    if text.is_empty() {
        what
    } else {
        format!("{what}; stderr: {text}")
    }
}

impl Connection {
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
                    with_tail(what, tail)
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
async fn changed(exit: &mut watch::Receiver<Option<std::process::ExitStatus>>) {
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
