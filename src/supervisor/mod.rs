//! One actor (tokio task) per MCP server: spawn or connect, handshake,
//! discovery, `list_changed` refresh, crash detection and restart with
//! backoff, stop. Actors never block each other: servers start concurrently
//! and a slow or failing one delays nobody, except that at most
//! `limits.max_concurrent_launches` stdio servers start at once ([`launch`]).
//!
//! Layout: [`phase`] is the state machine (pure, table-tested); `actor.rs`
//! its loop; `connector.rs` the seam to processes and the network
//! (`connect.rs`, rmcp); [`request`] and [`tool_call`] the requests callers
//! send on a ready server's [`LiveConnection`]; [`HostShared`] the session
//! and catalogue every actor writes through.

mod actor;
pub mod cache;
pub mod capabilities;
pub mod chat_input;
mod client;
mod command;
mod connect;
mod connector;
pub mod eras;
pub mod identity;
pub mod launch;
pub mod listen;
mod live;
pub mod mrtr;
pub mod phase;
mod progress;
pub mod request;
mod shared;
pub mod skills;
pub mod task;
mod too_large;
pub mod tool_call;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use command::Command;
pub use live::{LiveConnection, ServerLive};
pub use shared::{HostShared, SessionCell};

use crate::auth::step_up::Leaving;
use crate::config::{HttpConfig, OAuthClientSetting, PluginVars, ProtocolSetting, StdioConfig};
use crate::redact::KeptSecret;

use connector::{Connector, McpConnector};

/// Where a server lives.
#[derive(Debug, Clone)]
pub enum TransportSpec {
    /// A local process; variables come from its plugin (or the top-level server's root).
    Stdio(StdioConfig, PluginVars),
    /// A remote Streamable HTTP endpoint.
    StreamableHttp(HttpConfig),
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
    /// Which MCP revision to speak (host-side setting).
    pub protocol: ProtocolSetting,
}

/// The tasks of one server (its actor, its connections' service waiters)
/// and its cancellation (a child of the host's `disposed`).
#[derive(Clone)]
pub struct ServerTasks {
    /// Every task spawned for the server.
    pub tracker: TaskTracker,
    /// Cancelled when the host is disposed.
    pub cancel: CancellationToken,
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
    tasks: ServerTasks,
    /// The secret values of `spec`, hidden from every text while the
    /// server is configured ([`ServerSpec::secrets`]).
    _kept: Vec<KeptSecret>,
}

impl ServerSpec {
    /// The values of this server's configuration that are secrets
    /// (`crate::redact`): a Streamable HTTP server's header values (and a
    /// `<scheme> <credentials>` value's credentials), its URL's password,
    /// query (whole, each pair, each value) and fragment; the OAuth
    /// client's secret and private key.
    pub fn secrets(&self) -> Vec<String> {
        let mut all = Vec::new();
        if let TransportSpec::StreamableHttp(cfg) = &self.transport {
            all.extend(crate::redact::url_secrets(&cfg.url));
            for value in cfg.headers.values() {
                all.extend(crate::redact::header_secrets(value));
            }
        }
        if let Some(client) = &self.oauth_client {
            all.extend(client.client_secret.iter().cloned());
            all.extend(client.private_key_pem.iter().cloned());
        }
        all
    }
}

impl ServerHandle {
    /// Spawns the server's actor, which starts the server at once.
    pub fn start(shared: Arc<HostShared>, spec: ServerSpec) -> Self {
        Self::start_with(shared, spec, Arc::new(McpConnector))
    }

    /// [`ServerHandle::start`] through `connector`.
    pub(crate) fn start_with<C: Connector>(
        shared: Arc<HostShared>,
        spec: ServerSpec,
        connector: Arc<C>,
    ) -> Self {
        let kept = KeptSecret::all(spec.secrets().iter().map(String::as_str));
        let (commands, rx) = mpsc::unbounded_channel();
        let live = Arc::new(ServerLive::default());
        let tasks = ServerTasks {
            tracker: TaskTracker::new(),
            cancel: shared.disposed.child_token(),
        };
        let actor = actor::Actor::new(
            shared,
            Arc::new(spec.clone()),
            live.clone(),
            connector,
            rx,
            tasks.clone(),
        );
        tasks.tracker.spawn(actor::run(actor));
        // Closed at once: `wait` resolves when the actor and every task it
        // spawned have ended.
        tasks.tracker.close();
        Self {
            id: spec.id.clone(),
            spec,
            live,
            commands,
            tasks,
            _kept: kept,
        }
    }

    /// Sends a command; ignored when the actor has ended.
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Stops the server and ends the actor as part of the host's shutdown
    /// (chat tool calls paused on it fail with `disposed`); resolves once
    /// the process is gone.
    pub async fn shutdown(&self) {
        self.shutdown_for(Leaving::ShutDown).await;
    }

    /// Stops the server and ends the actor because it is removed (chat tool
    /// calls paused on it fail with `server_removed`); resolves once the
    /// process is gone.
    pub async fn remove(&self) {
        self.shutdown_for(Leaving::Removed).await;
    }

    /// Stops the server and ends the actor for `why` (see
    /// [`Command::Shutdown`]); resolves once the process is gone.
    pub async fn shutdown_for(&self, why: Leaving) {
        let (done, rx) = oneshot::channel();
        if self.commands.send(Command::Shutdown { why, done }).is_ok() {
            let _ = rx.await;
        }
    }

    /// Hands a step-up token to the actor ([`Command::StepUpToken`](variant@Command::StepUpToken));
    /// resolves once the live connection uses it.
    pub async fn step_up_token(&self, token: String) {
        let (done, rx) = oneshot::channel();
        let done = Some(done);
        if self
            .commands
            .send(Command::StepUpToken { token, done })
            .is_ok()
        {
            let _ = rx.await;
        }
    }

    /// Describes a failed sign-in on the server's `authRequired` state
    /// ([`Command::AuthFailed`]); resolves once applied (or found not applicable).
    pub async fn auth_failed(&self, description: String) {
        let (done, rx) = oneshot::channel();
        let done = Some(done);
        if self
            .commands
            .send(Command::AuthFailed { description, done })
            .is_ok()
        {
            let _ = rx.await;
        }
    }

    /// Resolves once the actor and every task it spawned have ended (after
    /// [`ServerHandle::shutdown`], or once the host was disposed).
    pub async fn tasks_ended(&self) {
        self.tasks.tracker.wait().await;
    }
}
