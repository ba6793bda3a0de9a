//! One actor (tokio task) per MCP server: spawn or connect, handshake,
//! discovery, `list_changed` refresh, crash detection and restart with
//! backoff, stop. Actors never block each other: servers start concurrently
//! and a slow or failing one delays nobody, except that at most
//! `limits.max_concurrent_launches` stdio servers start at once ([`launch`]).
//!
//! Layout: [`phase`] is the state machine (pure, table-tested); `actor.rs`
//! its loop; `connector.rs` the seam to processes and the network (through
//! [`crate::mcp::Opener`]); [`launch`] the stdio launch permits;
//! [`HostShared`] the owned parts every actor shares with the host façade.
//! What a ready connection carries is [`crate::mcp`]'s.

mod actor;
mod command;
mod connector;
pub mod launch;
pub mod phase;
mod shared;

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use tokio_util::task::TaskTracker;

pub use actor::Begin;
pub use command::Command;
pub use shared::{Credentials, HostShared};

use crate::auth::step_up::Leaving;
use crate::error::{ErrorCode, HostError};
use crate::mcp::{ServerLive, ServerSpec, ServerTasks};
use crate::redact::KeptSecret;

use connector::{Connector, McpConnector};

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

impl ServerHandle {
    /// Spawns the server's actor, which starts the server at once, or
    /// (`first`) leaves it `stopped` (a lazy server whose cached tools the
    /// host published) until a call starts it, or in the `error` the host
    /// published for a server its policy denied.
    pub fn start(shared: Arc<HostShared>, spec: ServerSpec, first: Begin) -> Self {
        Self::start_with(shared, spec, Arc::new(McpConnector), first)
    }

    /// [`ServerHandle::start`] through `connector`.
    pub(crate) fn start_with<C: Connector>(
        shared: Arc<HostShared>,
        spec: ServerSpec,
        connector: Arc<C>,
        first: Begin,
    ) -> Self {
        let kept = KeptSecret::all(spec.secrets().iter().map(String::as_str));
        let (commands, rx) = mpsc::unbounded_channel();
        let live = Arc::new(ServerLive::default());
        // As the host published it: a call's wait sees it is not starting.
        match first {
            Begin::Start => {}
            Begin::Dormant => live.activity().show(crate::mcp::activity::Shown::Stopped),
            Begin::Blocked => {
                let blocked = shared.gate().verdict(&spec).map(|v| v.error(&spec.id));
                let error = blocked
                    .unwrap_or_else(|| HostError::new(ErrorCode::PolicyDenied, "denied by policy"));
                live.activity()
                    .show(crate::mcp::activity::Shown::Failed(error));
            }
        }
        let tasks = ServerTasks {
            tracker: TaskTracker::new(),
            cancel: shared.disposed().child_token(),
            log_level: live.log_level().clone(),
        };
        let actor = actor::Actor::new(
            shared,
            Arc::new(spec.clone()),
            live.clone(),
            connector,
            rx,
            tasks.clone(),
        );
        let actor = actor.begin(first);
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
