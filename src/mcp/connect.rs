//! Opening one MCP connection: spawn or connect, then the handshake of the
//! server's era (see [`lifecycle`]): `server/discover` (MCP 2026-07-28
//! "Lifecycle › Discovery") with fallback to `initialize` (MCP 2025-11-25
//! "Lifecycle › Initialization"), raced against early process exit and the
//! startup timeout ([`startup`]: the first real cause of a failed start is
//! the one reported). The negotiated version must be one the host speaks.

use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;
use tokio::sync::mpsc;

use super::client::{Bounds, HostClient, ServerRequestWaits};
use super::identity::{self, ServerIdentity, TransportKind};
use super::request::RequestFailure;
use super::{Opener, ServerSpec, ServerTasks, TransportSpec};
use crate::config::{HeaderReason, HttpConfig, HttpTransport, ProtocolSetting};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};

mod connection;
mod http_answer;
mod http_open;
mod provided;
mod sse_open;
mod startup;
mod stdio_open;

use connection::Opening;
pub use connection::{Connection, HttpAuth};

use http_open::open_http;
use sse_open::open_sse;
use stdio_open::{open_stdio, Stdio};

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

impl Opener {
    /// Opens and initializes a connection for `server` (see
    /// [`open`] for the errors).
    ///
    /// # Errors
    ///
    /// `command_not_found`, `spawn_failed`, `protocol_error`,
    /// `server_exited`, `startup_timeout`, `connect_failed`,
    /// `redirect_refused`; [`RequestFailure::Auth`] on a 401/403 challenge.
    pub async fn open(
        &self,
        server: &ServerSpec,
        auth: HttpAuth<'_>,
        tasks: &ServerTasks,
    ) -> Result<Connection, RequestFailure> {
        open(self, server, auth, tasks).await
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
    opener: &Opener,
    server: &ServerSpec,
    auth: HttpAuth<'_>,
    tasks: &ServerTasks,
) -> Result<Connection, RequestFailure> {
    let auto = server.protocol == ProtocolSetting::Auto;
    let digest = auto.then(|| super::eras::digest(&server.transport));
    let known_legacy = match &digest {
        Some(d) => opener.eras().is_legacy(d).await,
        None => false,
    };
    let first_lifecycle = match known_legacy {
        // This configuration spoke the 2025 era last time: no probe.
        true => ClientLifecycleMode::Initialize,
        false => lifecycle(server.protocol),
    };
    let first = open_with(
        opener,
        server,
        auth,
        tasks,
        first_lifecycle.clone(),
        HeaderReason::Connect,
    )
    .await;
    // A 401 with the app's headers: ask it once more (a rotated token), as
    // Claude Code's headersHelper is run again.
    let first = match first {
        Err(Opening::Failed(RequestFailure::Auth(_))) if asks_headers(opener, server) => {
            let reason = HeaderReason::Unauthorized;
            open_with(opener, server, auth, tasks, first_lifecycle, reason).await
        }
        other => other,
    };
    let opened = match first {
        Err(Opening::ProbeUnusable(why)) if auto => {
            let text = format!(
                "server/discover answered with {why}; connecting again with initialize \
                 (give this server protocol: \"legacy\" to skip the probe)"
            );
            opener.log(log(LogLevel::Warn, "host.connect", Some(&server.id), text));
            let legacy = ClientLifecycleMode::Initialize;
            open_with(opener, server, auth, tasks, legacy, HeaderReason::Connect)
                .await
                .map_err(Opening::into_failure)
        }
        other => other.map_err(Opening::into_failure),
    };
    if let Some(d) = &digest {
        let handshake = opened
            .as_ref()
            .map(|c| &c.identity.handshake)
            .map_err(|f| match f {
                RequestFailure::Failed(e) => Some(e.code),
                RequestFailure::Auth(_) => None,
            });
        opener.eras().after_start(d, known_legacy, handshake).await;
    }
    opened
}

/// `server` is a Streamable HTTP server and the app gave a headers provider.
fn asks_headers(opener: &Opener, server: &ServerSpec) -> bool {
    let http = matches!(server.transport, TransportSpec::StreamableHttp(_));
    http && opener.header_provider().is_some()
}

/// One connection attempt with `lifecycle`; a Streamable HTTP one asks the
/// app's headers provider first, for `reason`.
async fn open_with(
    opener: &Opener,
    server: &ServerSpec,
    auth: HttpAuth<'_>,
    tasks: &ServerTasks,
    lifecycle: ClientLifecycleMode,
    reason: HeaderReason,
) -> Result<Connection, Opening> {
    let (server_id, spec) = (server.id.as_str(), &server.transport);
    let startup_timeout = server.startup_timeout;
    let progress = super::progress::ProgressRoutes::default();
    let waits = ServerRequestWaits::default();
    let handler = || host_client(opener, server_id, tasks, (&progress, &waits));
    let mut conn = match spec {
        TransportSpec::Stdio(cfg, vars) => {
            let stdio = Stdio {
                cfg,
                vars,
                startup_timeout,
                lifecycle,
                sandbox: server.sandbox.as_ref(),
            };
            let (handler, notices) = handler();
            open_stdio(opener, server_id, stdio, handler, notices, tasks).await?
        }
        TransportSpec::StreamableHttp(cfg) => {
            let (cfg, kept) = provided::provided_config(opener, server_id, cfg, reason).await?;
            let attempt = (startup_timeout, auth, lifecycle);
            let mut conn = open_remote(opener, server_id, &cfg, handler, attempt, tasks).await?;
            conn.kept = kept;
            conn
        }
    };
    conn.progress = progress;
    conn.waits = waits;
    let base = conn.endpoint.clone();
    for src in Arc::make_mut(&mut conn.identity).resolve_icons(base.as_ref()) {
        let text = format!("serverInfo icon {src:?} dropped: a relative URI that cannot be resolved (no server URL, or too long)");
        opener.log(log(LogLevel::Warn, "host.connect", Some(server_id), text));
    }
    if let Err(e) = check_version(server_id, &conn.identity) {
        conn.close().await;
        return Err(e.into());
    }
    Ok(conn)
}

/// The client handler of a new connection of `server_id` and the receiver
/// of its notices; `progress` and `waits` are the connection's.
fn host_client(
    opener: &Opener,
    server_id: &str,
    tasks: &ServerTasks,
    (progress, waits): (&super::progress::ProgressRoutes, &ServerRequestWaits),
) -> (HostClient, mpsc::UnboundedReceiver<super::client::Notice>) {
    let (notice_tx, notices) = mpsc::unbounded_channel();
    let handler = HostClient {
        info: opener.client_info().clone(),
        server_id: server_id.to_owned(),
        notices: notice_tx,
        sink: opener.publisher().sink().clone(),
        requests: opener.requests().cloned(),
        progress: progress.clone(),
        waits: waits.clone(),
        cache: Default::default(),
        calls: Default::default(),
        app_channels: (opener.publisher().mcp_apps())
            .then(|| opener.publisher().app_channels().clone()),
        bounds: Bounds::new(server_id, opener.publisher().sink().clone()),
        log_level: tasks.log_level.clone(),
        url_waits: Default::default(),
    };
    (handler, notices)
}

/// Connects to a remote server: a `type: "sse"` entry over legacy
/// HTTP+SSE; a `streamable-http` one over Streamable HTTP, and, when the
/// POST of its first request is answered 400, 404 or 405 without a
/// JSON-RPC error, over legacy HTTP+SSE on the same URL within what is
/// left of the startup time, with a `warn` log (MCP 2025-11-25 "Transports ›
/// Backwards Compatibility"). The connection's identity names the transport.
async fn open_remote(
    opener: &Opener,
    server_id: &str,
    cfg: &HttpConfig,
    handler: impl Fn() -> (HostClient, mpsc::UnboundedReceiver<super::client::Notice>),
    (startup_timeout, auth, lifecycle): (std::time::Duration, HttpAuth<'_>, ClientLifecycleMode),
    tasks: &ServerTasks,
) -> Result<Connection, Opening> {
    let ids = (server_id, &**opener.dpop_keys(), &**opener.network());
    let started = tokio::time::Instant::now();
    let status = match cfg.transport {
        HttpTransport::Sse => None,
        HttpTransport::StreamableHttp => {
            let (client, notices) = handler();
            let attempt = (startup_timeout, auth, lifecycle);
            match open_http(ids, cfg, client, notices, attempt, tasks).await {
                Err(Opening::Legacy(status)) => Some(status),
                Err(other) => return Err(other),
                Ok(mut conn) => {
                    Arc::make_mut(&mut conn.identity).transport = TransportKind::StreamableHttp;
                    return Ok(conn);
                }
            }
        }
    };
    if let Some(status) = status {
        let text = format!(
            "the Streamable HTTP POST was answered with HTTP {status}: connecting with the legacy \
             HTTP+SSE transport (MCP 2024-11-05) on the same URL (give this server type \"sse\" \
             to skip the POST)"
        );
        opener.log(log(LogLevel::Warn, "host.connect", Some(server_id), text));
    }
    let left = startup_timeout.saturating_sub(started.elapsed());
    let (client, notices) = handler();
    let mut conn = match (
        open_sse(ids, cfg, client.clone(), notices, (left, auth), tasks).await,
        status,
    ) {
        (Err(Opening::Failed(RequestFailure::Failed(e))), Some(status))
            if e.code == ErrorCode::ConnectFailed =>
        {
            let at = (cfg, ids.2);
            return Err(http_open::refused_post(at, &client, auth, status, e).await);
        }
        (opened, _) => opened?,
    };
    Arc::make_mut(&mut conn.identity).transport = TransportKind::Sse;
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
