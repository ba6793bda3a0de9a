//! One actor (tokio task) per MCP server: spawn or connect, handshake,
//! discovery, `list_changed` refresh, crash detection and restart with
//! backoff, stop. Actors never block each other: servers start concurrently
//! and a slow or failing one delays nobody.

mod actor;
pub mod call;
mod client;
mod connect;
pub mod discovery;

use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use ahp_types::actions::{
    SessionMcpServerStateChangedAction, SessionServerToolsChangedAction, StateAction,
};
use ahp_types::state::McpServerState;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::ClientConfig;
use rmcp::service::{Peer, RoleClient};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

pub use connect::TransportSpec;

// Re-exported for the host until it imports them from their homes.
pub use crate::config::{IdpSetting, OAuthClientSetting, OAuthGrant};
pub use crate::events::ToolsChangeReason;

use crate::catalogue::{Catalogue, ServerTools};
use crate::config::launch::EnvPolicy;
use crate::events::{EventSink, HostEvent};
use crate::limits::Limits;
use crate::session::{find, Found, SessionStore};
use crate::transport::process::ProcessRegistry;

/// What every actor shares: the session (single writer, gapless
/// `serverSeq`), the event sink, the process registry and host options.
pub struct HostShared {
    /// Session state and envelope sequence; emit only through [`HostShared::emit`].
    pub session: Mutex<SessionStore>,
    /// Where actions and logs go.
    pub sink: Arc<dyn EventSink>,
    /// Process groups owned by this host (for synchronous kill).
    pub processes: Arc<ProcessRegistry>,
    /// `clientInfo` and capabilities sent in `initialize`.
    pub client_info: ClientConfig,
    /// Timeouts and restart policy.
    pub limits: Limits,
    /// Base environment for stdio servers (see [`EnvPolicy`]).
    pub base_env: Vec<(OsString, OsString)>,
    /// How the base environment is filtered.
    pub env_policy: EnvPolicy,
    /// Cancelled by `dispose`: every actor and pending call ends.
    pub disposed: CancellationToken,
    /// The app's handlers for server-initiated requests.
    pub requests: Option<Arc<dyn crate::requests::RequestHandler>>,
    /// Where OAuth credentials are kept (the app's store, or memory).
    pub secrets: Arc<dyn crate::auth::store::SecretStore>,
    /// Per-credential refresh serialization.
    pub refresh_locks: Arc<crate::auth::store::RefreshLocks>,
    /// Every ready server's checked tools, named together.
    pub catalogue: RwLock<Catalogue>,
    /// Emit `session/serverToolsChanged` with the model catalogue on every change.
    pub publish_server_tools: bool,
}

impl HostShared {
    /// Applies a host action through the reducer and emits its envelope,
    /// atomically with respect to other emitters.
    pub fn emit(&self, action: StateAction) {
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        let envelope = session.emit(action);
        self.sink.send(HostEvent::Action(Box::new(envelope)));
    }

    /// Emits `session/mcpServerStateChanged` for `id` (nothing when the
    /// server no longer exists, or is already `starting` and `state` is `starting`).
    pub fn set_server_state(&self, id: &str, state: McpServerState) {
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        match find(session.state(), id) {
            // `starting` is not repeated (entries are created as `starting`);
            // every other state is emitted, so the end of a client's start or
            // stop request always arrives as an authoritative action.
            Some(Found::McpServer(s, _))
                if !(s.state == state && matches!(state, McpServerState::Starting(_))) => {}
            _ => return,
        }
        let action = StateAction::SessionMcpServerStateChanged(Box::new(
            SessionMcpServerStateChangedAction {
                id: id.to_owned(),
                state,
                channel: None,
            },
        ));
        let envelope = session.emit(action);
        self.sink.send(HostEvent::Action(Box::new(envelope)));
    }

    /// Emits an action on chat channel `chat` (not applied to the session).
    pub fn emit_on(&self, chat: &str, action: StateAction) {
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        let envelope = session.envelope_on(chat, action, None, None);
        self.sink.send(HostEvent::Action(Box::new(envelope)));
    }

    /// Sends a log record.
    pub fn log(&self, event: HostEvent) {
        self.sink.send(event);
    }

    /// Replaces (`Some`) or removes (`None`) server `id`'s tools in the
    /// catalogue and, when the model catalogue changed, publishes it (see
    /// [`HostShared::publish_tools`]).
    pub fn set_tools(&self, id: &str, tools: Option<Arc<ServerTools>>, reason: ToolsChangeReason) {
        if self.update_tools(id, tools) {
            self.publish_tools(id, reason);
        }
    }

    /// Replaces or removes server `id`'s tools in the catalogue without
    /// publishing; returns whether the model catalogue changed. (A server
    /// becoming ready updates the catalogue before its `ready` state and
    /// publishes after it.)
    pub fn update_tools(&self, id: &str, tools: Option<Arc<ServerTools>>) -> bool {
        self.catalogue
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .set_server(id, tools)
    }

    /// Publishes the current catalogue after a change caused by server `id`:
    /// the JS `toolsChanged` event and, with `publish_server_tools`,
    /// `session/serverToolsChanged` carrying the whole catalogue (AHP
    /// full-replacement semantics).
    pub fn publish_tools(&self, id: &str, reason: ToolsChangeReason) {
        // The session lock orders publications with each other and with their envelopes.
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        let entries = self
            .catalogue
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .entries();
        if self.publish_server_tools {
            let tools = entries.iter().map(|e| e.definition().clone()).collect();
            let envelope = session.emit(StateAction::SessionServerToolsChanged(
                SessionServerToolsChangedAction { tools },
            ));
            self.sink.send(HostEvent::Action(Box::new(envelope)));
        }
        self.sink.send(HostEvent::ToolsChanged {
            server_id: id.to_owned(),
            reason,
            tools: entries.len(),
        });
    }
}

/// Commands an actor accepts.
pub enum Command {
    /// Start, or restart when running; resets the crash counter.
    Start,
    /// Stop and stay stopped until [`Command::Start`].
    Stop,
    /// Enablement changed: `true` starts the server unless it is already
    /// starting or running (no restart); `false` stops it.
    SetEnabled(bool),
    /// Stop and end the actor; the sender is told when the process is gone.
    Shutdown(oneshot::Sender<()>),
    /// A host-run sign-in succeeded: connect through this authorization
    /// manager (it adds and refreshes the bearer token).
    UseOAuth {
        /// Holds the tokens; shared with every later connection (boxed: it is large).
        manager: Box<rmcp::transport::auth::AuthorizationManager>,
        /// Outcome: `Ok` once `ready`.
        reply: oneshot::Sender<crate::error::HostResult<()>>,
    },
    /// A request on the live connection showed the session is unusable:
    /// `auth_required` (401 after a refused refresh; carries the challenge) or
    /// `redirect_refused`. The actor leaves `ready` accordingly.
    ConnectionFailed(crate::error::HostError, Option<String>),
    /// A step-up token for a tool call waiting in `auth-required` (AHP
    /// `authenticate` while `ready`): used for reconnects from now on (the
    /// live connection already switched to it).
    StepUpToken(String),
    /// AHP `authenticate` for this server's advertised resource: reconnect
    /// with `token` (empty = revoke). The reply says whether the server
    /// accepted it.
    Authenticate {
        /// Bearer access token; a secret.
        token: String,
        /// Outcome: `Ok` once `ready`, `auth_required` if the server still refuses.
        reply: oneshot::Sender<crate::error::HostResult<()>>,
    },
}

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
    pub progress: ProgressDispatcher,
    /// The connection's replaceable bearer token (Streamable HTTP without host-run OAuth).
    pub bearer: Option<crate::transport::http::BearerCell>,
    /// Ids of responses discarded for exceeding the stdio message limit (stdio only).
    pub oversize: Option<crate::transport::noise::OversizeIds>,
}

/// What callers can read about a server without asking its actor.
#[derive(Default)]
pub struct ServerLive {
    conn: RwLock<Option<LiveConnection>>,
    challenge: RwLock<Option<String>>,
}

impl ServerLive {
    /// The current connection, when the server is `ready`.
    pub fn connection(&self) -> Option<LiveConnection> {
        self.conn
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The `WWW-Authenticate` challenge of the current `authRequired` state.
    pub fn challenge(&self) -> Option<String> {
        self.challenge
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_challenge(&self, header: Option<String>) {
        *self
            .challenge
            .write()
            .unwrap_or_else(PoisonError::into_inner) = header;
    }

    fn set(&self, conn: Option<LiveConnection>) {
        *self.conn.write().unwrap_or_else(PoisonError::into_inner) = conn;
    }
}

/// Everything an actor needs to know about its server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Customization id.
    pub id: String,
    /// Transport and its configuration.
    pub transport: TransportSpec,
    /// Spawn/connect + `initialize` budget.
    pub startup_timeout: Duration,
    /// Pre-registered OAuth client for this server (host-side setting).
    pub oauth_client: Option<OAuthClientSetting>,
}

/// The host's handle on one server actor.
pub struct ServerHandle {
    /// Customization id.
    pub id: String,
    /// What the actor runs.
    pub spec: ServerSpec,
    /// Live view for callers.
    pub live: Arc<ServerLive>,
    commands: mpsc::UnboundedSender<Command>,
}

impl ServerHandle {
    /// Starts the actor. It starts the server at once when `start` is true.
    pub fn spawn(shared: Arc<HostShared>, spec: ServerSpec, start: bool) -> Self {
        let (commands, rx) = mpsc::unbounded_channel();
        let live = Arc::new(ServerLive::default());
        let id = spec.id.clone();
        tokio::spawn(actor::run(shared, spec.clone(), live.clone(), rx, start));
        Self {
            id,
            spec,
            live,
            commands,
        }
    }

    /// Sends a command; ignored when the actor has ended.
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Stops the server and ends the actor; resolves once the process is gone.
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Shutdown(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}
