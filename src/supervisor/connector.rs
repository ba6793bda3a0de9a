//! The seam between a server's actor and the network or process: a
//! [`Connector`] opens connections (spawn or connect plus `initialize`) and
//! runs RFC 9728 discovery; a [`ServerConnection`] is one open connection.
//! [`McpConnector`] is the real one ([`crate::mcp::connect`], rmcp); tests drive
//! the actor with a fake.
//!
//! On top of the seam, [`open_listed`] is a whole start (open, first
//! `tools/list`, publication) and [`relist_tools`] the re-listing after
//! `notifications/tools/list_changed`.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};

use rmcp::transport::auth::AuthorizationManager;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};

use super::HostShared;
use crate::auth::{self, AuthChallenge};
use crate::catalogue::{DiagnosticAction, ServerTools, ToolDiagnostic};
use crate::config::OAuthClientSetting;
use crate::error::{ErrorCode, HostError};
use crate::events::{log, LogLevel};
use crate::limits::Limits;
use crate::mcp::client::Notice;
use crate::mcp::connect::{Connection, HttpAuth};
use crate::mcp::identity::{Handshake, ServerIdentity};
use crate::mcp::request::{self, RequestFailure};
use crate::mcp::TransportSpec;
use crate::mcp::{ServerLive, ServerSpec, ServerTasks, Session};
use crate::transport::http::BearerCell;

/// An owned future, as kept across `select!` rounds.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What discovery found (see [`Connector::discover`]).
pub enum Discovered {
    /// Stored credentials of an earlier sign-in, ready to use (boxed: it is large).
    Restored(Box<AuthorizationManager>),
    /// The server's protected resource metadata (boxed: it is large too).
    Resource(Box<ahp_types::state::ProtectedResourceMetadata>),
}

/// How a server's actor reaches its server.
pub trait Connector: Send + Sync + 'static {
    /// One open connection.
    type Connection: ServerConnection;

    /// Spawns or connects and completes `initialize` (MCP 2025-11-25
    /// "Lifecycle › Initialization") with `auth` (Streamable HTTP); the
    /// connection's own tasks run on `tasks`.
    ///
    /// # Errors
    ///
    /// [`RequestFailure::Auth`] for a 401/403 challenge; otherwise the
    /// launch or connect error (`spawn_failed`, `server_exited`,
    /// `startup_timeout`, `connect_failed`, …).
    fn open<'a>(
        &'a self,
        shared: &'a Arc<HostShared>,
        spec: &'a ServerSpec,
        auth: HttpAuth<'a>,
        tasks: &'a ServerTasks,
    ) -> impl Future<Output = Result<Self::Connection, RequestFailure>> + Send + 'a;

    /// RFC 9728 discovery for `challenge` at `endpoint` (MCP 2025-11-25
    /// "Authorization › Protected Resource Metadata Discovery"); with
    /// `restore`, stored credentials of an earlier sign-in win (found as
    /// the server's `oauth` overrides say: its configured authorization
    /// server metadata and RFC 8707 resource).
    ///
    /// # Errors
    ///
    /// `auth_discovery_failed` naming every URL tried.
    fn discover<'a>(
        &'a self,
        shared: &'a Arc<HostShared>,
        target: (&'a url::Url, Option<&'a OAuthClientSetting>),
        challenge: &'a AuthChallenge,
        restore: bool,
    ) -> impl Future<Output = Result<Discovered, HostError>> + Send + 'a;
}

/// One open connection, as the actor uses it.
pub trait ServerConnection: Send + Sync + 'static {
    /// What callers see while it is ready (`closed` tells them when it
    /// ends); `None` when it has no request handle (test fakes).
    fn live(&self, closed: watch::Receiver<Option<String>>) -> Option<Session>;

    /// The tool names of the `tools/list` results the transport received
    /// since the last call, before it dropped any (HTTP; empty otherwise).
    fn take_listed(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the server said about itself (`None` for a connection without one).
    fn identity(&self) -> Option<Arc<ServerIdentity>> {
        None
    }

    /// Its replaceable bearer token (Streamable HTTP without host-run OAuth).
    fn bearer(&self) -> Option<BearerCell>;

    /// Takes the server notifications the actor acts on.
    fn take_notices(&mut self) -> mpsc::UnboundedReceiver<Notice>;

    /// Starts following the server's changes and subscribes to the
    /// resources in `wanted` (see [`crate::mcp::listen`]); `timeout` bounds each
    /// acknowledgment. Nothing for a connection without a peer (test fakes).
    fn follow(&self, _wanted: Vec<String>, _timeout: std::time::Duration) {}

    /// Resolves with the reason once the connection is gone on its own
    /// (exit status and stderr tail); owns what it watches.
    fn ended(&self) -> BoxFuture<String>;

    /// Resolves once the connection can carry server requests: a
    /// Streamable HTTP session's standalone GET stream has its answer
    /// (bounded by [`crate::limits::GET_STREAM_WAIT_MS`]); at once for
    /// everything else. Awaited before `ready`, beside the first `tools/list`.
    fn settled(&self) -> impl Future<Output = ()> + Send + '_ {
        std::future::ready(())
    }

    /// One `tools/list` walk: each item's JSON text.
    ///
    /// # Errors
    ///
    /// Those of [`request::list_all`].
    fn list_tools<'a>(
        &'a self,
        server_id: &'a str,
        limits: &'a Limits,
    ) -> impl Future<Output = Result<Vec<Box<RawValue>>, RequestFailure>> + Send + 'a;

    /// Closes gracefully (see [`Connection::close`]).
    fn close(self) -> impl Future<Output = ()> + Send;

    /// After [`ServerConnection::ended`]: kills what is left.
    fn discard(self) -> impl Future<Output = ()> + Send;
}

/// The real connector: stdio processes and Streamable HTTP through rmcp.
pub struct McpConnector;

impl Connector for McpConnector {
    type Connection = Connection;

    fn open<'a>(
        &'a self,
        shared: &'a Arc<HostShared>,
        spec: &'a ServerSpec,
        auth: HttpAuth<'a>,
        tasks: &'a ServerTasks,
    ) -> impl Future<Output = Result<Connection, RequestFailure>> + Send + 'a {
        shared.opener().open(spec, auth, tasks)
    }

    async fn discover<'a>(
        &'a self,
        shared: &'a Arc<HostShared>,
        (endpoint, oauth): (&'a url::Url, Option<&'a OAuthClientSetting>),
        challenge: &'a AuthChallenge,
        restore: bool,
    ) -> Result<Discovered, HostError> {
        let network = shared.opener().network();
        let configured = oauth.and_then(|o| o.auth_server_metadata_url.as_ref());
        let resource = match (
            auth::discover(endpoint, challenge, network).await,
            configured,
        ) {
            (Ok(resource), _) => resource,
            (Err(e), None) => return Err(e),
            (Err(e), Some(url)) => auth::configured_resource(endpoint, challenge, url, network)
                .await
                .ok_or(e)?,
        };
        if restore {
            let issuer = resource
                .authorization_servers
                .iter()
                .flatten()
                .next()
                .cloned()
                .unwrap_or_default();
            let stores = (
                shared.credentials().secrets(),
                shared.credentials().refresh_locks(),
                &**shared.opener().dpop_keys(),
                shared.opener().network(),
            );
            // A store that cannot be read fails the discovery
            // (`credential_store_failed`): the server shows that error, not
            // a sign-in whose tokens could not be kept either.
            let overrides = auth::flow::Overrides::from(oauth);
            let on = (issuer.as_str(), &overrides);
            if let Some(manager) = auth::flow::restore(endpoint, on, stores).await? {
                return Ok(Discovered::Restored(Box::new(manager)));
            }
        }
        Ok(Discovered::Resource(Box::new(resource)))
    }
}

impl ServerConnection for Connection {
    fn live(&self, closed: watch::Receiver<Option<String>>) -> Option<Session> {
        Some(self.session(closed))
    }

    fn bearer(&self) -> Option<BearerCell> {
        self.bearer.clone()
    }

    fn identity(&self) -> Option<Arc<ServerIdentity>> {
        Some(self.identity.clone())
    }

    fn take_listed(&self) -> Vec<String> {
        self.stream_watch
            .as_ref()
            .map(|w| w.take_listed())
            .unwrap_or_default()
    }

    fn take_notices(&mut self) -> mpsc::UnboundedReceiver<Notice> {
        std::mem::replace(&mut self.notices, mpsc::unbounded_channel().1)
    }

    fn follow(&self, wanted: Vec<String>, timeout: std::time::Duration) {
        self.subscriptions.start(wanted, timeout);
    }

    fn ended(&self) -> BoxFuture<String> {
        Box::pin(Connection::ended(self))
    }

    fn settled(&self) -> impl Future<Output = ()> + Send + '_ {
        let wait = std::time::Duration::from_millis(crate::limits::GET_STREAM_WAIT_MS);
        async move {
            if let Some(watch) = &self.stream_watch {
                watch.settled(wait).await;
            }
        }
    }

    fn list_tools<'a>(
        &'a self,
        server_id: &'a str,
        limits: &'a Limits,
    ) -> impl Future<Output = Result<Vec<Box<RawValue>>, RequestFailure>> + Send + 'a {
        let wire = request::Wire {
            peer: &self.peer,
            discarded: self.discarded.as_ref(),
            watch: self.stream_watch.as_deref(),
            cache: Some(&self.handler.cache),
            abort: None,
        };
        request::list_all(
            wire,
            server_id,
            "tools/list",
            "tools",
            limits,
            (limits.max_tools_per_server, "maxToolsPerServer"),
        )
    }

    fn close(self) -> impl Future<Output = ()> + Send {
        Connection::close(self)
    }

    fn discard(self) -> impl Future<Output = ()> + Send {
        Connection::discard(self)
    }
}

/// A started connection: published to callers and in the catalogue.
pub struct Opened<K> {
    /// The connection.
    pub conn: K,
    /// Tells callers (through [`Session::closed`]) why it ended.
    pub closed: watch::Sender<Option<String>>,
    /// Whether the model catalogue changed (to publish after `ready`).
    pub tools_changed: bool,
    /// Whether the server declared the skills extension (SEP-2640).
    pub skills: bool,
}

/// A whole start: opens, lists tools (a server may accept `initialize`
/// unauthenticated and challenge the first real request), then publishes
/// the connection and its tools. A failed first listing leaves the server
/// usable with no tools (the diagnostic says why).
///
/// # Errors
///
/// Those of [`Connector::open`]; [`RequestFailure::Auth`] when the first
/// `tools/list` is challenged (`protocol_error` for a stdio server).
pub async fn open_listed<C: Connector>(
    connector: &C,
    shared: &Arc<HostShared>,
    spec: &ServerSpec,
    (live, tasks): (&ServerLive, &ServerTasks),
    auth: HttpAuth<'_>,
) -> Result<Opened<C::Connection>, RequestFailure> {
    let conn = connector.open(shared, spec, auth, tasks).await?;
    // Before the first listing, so that no change after it is missed.
    let timeout = std::time::Duration::from_millis(shared.limits().call_timeout_ms);
    conn.follow(live.resources.list(), timeout);
    let (closed, watch) = watch::channel(None);
    reapply_log_level(shared, spec, live, &conn, &watch).await;
    let listing = tokio::time::timeout(spec.startup_timeout, list_tools(shared, spec, &conn));
    // The first listing and the wait for the GET stream's answer overlap.
    let (listing, ()) = tokio::join!(listing, conn.settled());
    let tools = match listing {
        Ok(Err(RequestFailure::Auth(header))) => {
            conn.close().await;
            return match &spec.transport {
                TransportSpec::StreamableHttp(_) => Err(RequestFailure::Auth(header)),
                TransportSpec::Stdio(..) => Err(HostError::new(
                    ErrorCode::ProtocolError,
                    "tools/list asked a stdio server for authorization",
                )
                .into()),
            };
        }
        first => report_listing(shared, spec, first, None)
            .unwrap_or_else(|e| Arc::new(ServerTools::failed(&spec.id, e.message))),
    };
    if let Some(identity) = conn.identity() {
        announce_identity(shared, &spec.id, live, identity);
    }
    live.set(conn.live(watch));
    let skills = crate::mcp::skills::list_skills(
        shared.opener(),
        shared.skills(),
        &spec.id,
        live,
        spec.startup_timeout,
    )
    .await;
    let tools_changed = shared.publisher().update_tools(&spec.id, Some(tools));
    Ok(Opened {
        conn,
        closed,
        tools_changed,
        skills,
    })
}

/// A log level the app set for this server before (see
/// [`crate::mcp::log_level`]): sent again on the new connection (2025 era)
/// before its first listing, within `callTimeoutMs` and the startup
/// timeout. A failure is a `warn` log (target `host.logging`), never the
/// start's; a sent level an `info` one.
async fn reapply_log_level<K: ServerConnection>(
    shared: &HostShared,
    spec: &ServerSpec,
    live: &ServerLive,
    conn: &K,
    watch: &watch::Receiver<Option<String>>,
) {
    let Some(level) = live.log_level().get() else {
        return;
    };
    let Some(session) = conn.live(watch.clone()) else {
        return;
    };
    let limits = &shared.limits();
    let timeout =
        std::time::Duration::from_millis(limits.call_timeout_ms).min(spec.startup_timeout);
    let name = crate::mcp::log_level::level_name(&level);
    let (level, text) = match session
        .reapply_log_level(&spec.id, level, limits, timeout)
        .await
    {
        Ok(false) => return,
        Ok(true) => (
            LogLevel::Info,
            format!("log level {name:?} set again on the new connection"),
        ),
        Err(e) => (
            LogLevel::Warn,
            format!(
                "log level {name:?} not set again on the new connection: {}",
                e.message
            ),
        ),
    };
    shared
        .publisher()
        .log(log(level, "host.logging", Some(&spec.id), text));
}

/// Records a new connection's identity, publishes it on the customization
/// and logs the negotiated revision (`host.connect`, info).
fn announce_identity(
    shared: &HostShared,
    id: &str,
    live: &ServerLive,
    identity: Arc<ServerIdentity>,
) {
    let how = match identity.handshake {
        Handshake::Discover => "server/discover",
        Handshake::Initialize => "initialize",
    };
    let text = format!(
        "connected: MCP {} ({how}), server {:?} {}",
        identity.protocol_version,
        identity.name,
        identity.version.as_deref().unwrap_or("")
    );
    shared.publisher().log(log(
        LogLevel::Info,
        "host.connect",
        Some(id),
        text.trim_end().to_owned(),
    ));
    shared
        .publisher()
        .publish_identity(id, identity.ahp_icons(), identity.to_json());
    live.set_identity(identity);
}

/// One `tools/list` walk, checked into [`ServerTools`].
async fn list_tools<K: ServerConnection>(
    shared: &HostShared,
    spec: &ServerSpec,
    conn: &K,
) -> Result<ServerTools, RequestFailure> {
    let limits = &shared.limits();
    conn.take_listed(); // forget what an earlier listing left
    let raw = conn.list_tools(&spec.id, limits).await?;
    if spec.start.is_lazy() {
        cache_listing(shared, spec, &raw);
    }
    let sent = conn.take_listed();
    let dropped = dropped_by_transport(&spec.id, &sent, &raw);
    // A re-list reuses what it checked before for each unchanged entry.
    let previous = shared
        .publisher()
        .catalogue()
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .server(&spec.id);
    let mut tools = ServerTools::build_after_text(&spec.id, &raw, limits, previous.as_deref())
        .map_err(RequestFailure::Failed)?;
    tools.diagnostics.extend(dropped);
    Ok(tools)
}

/// Writes lazy server `spec`'s listing `raw` to the tool cache
/// (`crate::mcp::tool_cache`) in a task of its own, so a slow disk never
/// holds back `ready`. The cache keeps trees: each entry that parses is
/// one (an entry that does not is left out of the catalogue all the same).
fn cache_listing(shared: &HostShared, spec: &ServerSpec, raw: &[Box<RawValue>]) {
    let raw = raw
        .iter()
        .filter_map(|entry| serde_json::from_str(entry.get()).ok())
        .collect();
    let opener = shared.opener();
    let key = opener.tool_cache_key(spec);
    opener.tool_cache().store_later(key, raw, spec.secrets());
}

/// A diagnostic for each tool the server listed (`sent`) that did not
/// reach the catalogue (`received`): rmcp's Streamable HTTP transport drops
/// a tool whose `x-mcp-header` annotations are invalid (SEP-2243,
/// 2026-07-28), and only that tool.
fn dropped_by_transport(
    server_id: &str,
    sent: &[String],
    received: &[Box<RawValue>],
) -> Vec<ToolDiagnostic> {
    if sent.is_empty() {
        return Vec::new();
    }
    let kept: std::collections::HashSet<String> = received
        .iter()
        .filter_map(|t| crate::json::Members::of(t.get())?.string("name"))
        .collect();
    let mut seen = std::collections::HashSet::new();
    sent.iter()
        .filter(|name| !kept.contains(name.as_str()) && seen.insert(name.as_str()))
        .map(|name| ToolDiagnostic {
            server_id: server_id.to_owned(),
            // A name holding a kept secret value is not shown.
            tool: crate::redact::hidden(name).into_owned(),
            action: DiagnosticAction::Omitted,
            reason: "invalid x-mcp-header annotations (SEP-2243): the Streamable HTTP \
                     transport refused this tool"
                .to_owned(),
        })
        .collect()
}

/// Re-lists tools (bounded by the startup timeout); `None` keeps the
/// previous catalogue (a failed refresh is atomic).
pub async fn relist_tools<K: ServerConnection>(
    shared: &HostShared,
    spec: &ServerSpec,
    conn: &K,
) -> Option<Arc<ServerTools>> {
    let listing = tokio::time::timeout(spec.startup_timeout, list_tools(shared, spec, conn)).await;
    let known = (shared.publisher().catalogue().read())
        .unwrap_or_else(PoisonError::into_inner)
        .server(&spec.id);
    report_listing(shared, spec, listing, known.as_deref()).ok()
}

/// Logs each diagnostic of a listing that `known` (the server's listing
/// before it, on a re-list) did not have already, or why it failed.
fn report_listing(
    shared: &HostShared,
    spec: &ServerSpec,
    listing: Result<Result<ServerTools, RequestFailure>, tokio::time::error::Elapsed>,
    known: Option<&ServerTools>,
) -> Result<Arc<ServerTools>, HostError> {
    let warn = |level, message: String| {
        shared
            .publisher()
            .log(log(level, "host.catalogue", Some(&spec.id), message))
    };
    let error = match listing {
        Ok(Ok(found)) => {
            // A server that re-lists often (every `list_changed`) would
            // otherwise repeat the same warnings each time.
            let before: HashSet<&ToolDiagnostic> = known
                .map(|k| k.diagnostics.iter().collect())
                .unwrap_or_default();
            for d in found.diagnostics.iter().filter(|d| !before.contains(d)) {
                warn(LogLevel::Warn, format!("tool {:?}: {}", d.tool, d.reason));
            }
            return Ok(Arc::new(found));
        }
        Ok(Err(RequestFailure::Failed(e))) => e,
        Ok(Err(RequestFailure::Auth(_))) => HostError::new(
            ErrorCode::AuthRequired,
            format!("tools/list on {} was refused (authorization)", spec.id),
        ),
        Err(_) => HostError::new(
            ErrorCode::Timeout,
            format!("tools/list on {} timed out", spec.id),
        ),
    };
    let kept = if known.is_some() {
        "the previous tool list is kept"
    } else {
        "it lists no tools until a listing succeeds"
    };
    warn(LogLevel::Error, format!("{}; {kept}", error.message));
    Err(error)
}
