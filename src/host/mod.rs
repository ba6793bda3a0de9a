//! The host as plain Rust: what the JS `McpHost` class wraps one to one.
//!
//! [`Host`] is a façade over owned subsystems; each JS method group has its
//! own file:
//!
//! - `plugins.rs`: `addPlugin` / `addServer` (built around the pure
//!   `plan.rs`), which surface customizations and start one actor per valid
//!   server;
//! - `tools.rs`: `listTools`, `toolDiagnostics`, `callTool` (with the
//!   step-up pause of a chat tool call);
//! - `tool_filter.rs`: `setToolEnabled`;
//! - `tool_search.rs`: `searchTools`, `listToolSummaries`,
//!   `getToolDefinitions` (deferred tool loading);
//! - `auth.rs`: AHP `authenticate` and host-run `authorize`;
//! - `mcp_requests.rs`: resources and prompts; `utilities.rs`: `complete`, `setLogLevel`;
//! - `channel.rs`: the MCP Apps `mcp://` channel (`sendChannelMessage`)
//!   and `readAppResource`;
//! - `registry.rs`: which top-level ids are taken and what each is doing
//!   (adding, live, being removed), so that adds and removals of one id
//!   apply in call order;
//! - `options.rs`: the typed parameters of `addPlugin`, `addServer` and
//!   `authenticate`, the defaults of [`HostConfig`], timeout clamping and
//!   the wording of argument errors (the JS shapes are the binding's);
//! - this file: construction, `dispatch` of client actions, `state`,
//!   `remove`, `shutdown` (graceful) and `dispose_sync` (kills everything
//!   without needing the async runtime).
//!
//! The state lives in owned parts: the server registry (`registry.rs`), the paused
//! chat tool calls (`StepUpWaits`), what the caller last read of the
//! catalogue (`ReadCatalogue`), and what every server actor shares
//! (`HostShared`: session, catalogue, sink, limits).
//!
//! ## Lock order
//!
//! This is the one place the crate's lock order is written down. A lock on
//! the right of an arrow may be taken while the one on its left is held,
//! never the other way round; locks not related by an arrow are never held
//! together.
//!
//! ```text
//! step-up waits → session          (dispatch: chat/toolCallComplete echo; callTool: a call paused on a refused token announcing itself)
//! chat inputs → session            (dispatch: chat/inputCompleted echo; an elicitation published, answered by the app or withdrawn)
//! session → catalogue (read)       (supervisor: publishing the tools)
//! session → app channels           (supervisor: a state opens or closes a server's mcp:// channel)
//! session → Outbox.pending         (the JS sink runs under the session lock)
//! session → tools pending          (publisher: a server's tools catalogued, then published; whenReady's read of the state)
//! catalogue (read) → read view     (callTool: the stale-tool check)
//! keychain calls → keychain store  (credentials: 'os': a call on the blocking pool opens the store)
//! stdio writer → stdio queue       (a stdio connection: the batch being written (async lock, held across its writes) takes the lines `send` queued; `send` queues with the writer not held)
//! ```
//!
//! - step-up waits: `StepUpWaits` (`auth::step_up`);
//! - chat inputs: `ChatInputs` (`chat::input_publisher`), the open AHP
//!   input requests;
//! - session: `HostShared::session`; every emit holds it while the sink
//!   runs, so envelopes leave in `serverSeq` order;
//! - registry: `Host::registry` (`registry.rs`: ids, what each is doing,
//!   server handles);
//! - leaves, never held while taking another lock: the set of kept secret
//!   values (`redact::kept`), the registry, the
//!   sign-ins waiting for a callback URL (`sign_ins.rs`), a server's `ServerLive` cells (connection, challenge) and its
//!   `BearerCell` (written only by the server's actor), the refresh locks,
//!   the `mcp://` channels (`AppChannels`) and their requests in flight
//!   (`ChannelCalls`);
//! - catalogue: `HostShared::catalogue` (`RwLock`);
//! - tools pending: `SessionPublisher::tools_pending`, the servers whose
//!   tools are catalogued and not yet published;
//! - read view: `ReadCatalogue` (`catalogue::read_view`);
//! - `Outbox.pending`: the JS binding's event queue (the binding crate, `binding/`);
//! - keychain calls, keychain store: `KEYCHAIN_CALLS` (one OS keychain
//!   call at a time in the process) and the opened store of an
//!   `OsSecretStore` (`crate::auth::keychain`), taken only on tokio's
//!   blocking pool, never with another lock held.
//!
//! No `std` lock is held across an `.await` (these futures must be `Send`).
//! The one async lock held across awaits, the per-credential refresh lock
//! of `crate::auth::store`, is taken with none of the above held.

mod auth;
mod channel;
mod import;
mod lazy;
mod mcp_requests;
mod options;
mod plan;
mod plugins;
mod policy;
mod registry;
mod roots;
mod settings;
mod sign_ins;
mod skills;
mod state;
mod tasks;
mod tool_filter;
mod tool_search;
mod tools;
mod until_disposed;
mod utilities;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ahp_types::actions::{
    ActionEnvelope, ActionOrigin, ChatToolCallCompleteAction, SessionCustomizationRemovedAction,
    StateAction,
};
use ahp_types::state::SessionState;
use rmcp::model::{ClientConfig, ProtocolVersion};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::auth::step_up::CallCompletion;
use crate::auth::store::MemorySecretStore;
use crate::catalogue::read_view::ReadCatalogue;
use crate::chat::input_publisher::ChatInputs;
use crate::config::launch::host_base_env;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::EventSink;
use crate::mcp::{Opener, OpenerParts};
use crate::policy::Gate;
use crate::publisher::{Publishing, SessionPublisher};
use crate::requests::client_capabilities_with;
use crate::session::{server_enabled, validate_client_action, ClientIntent, SessionStore};
use crate::supervisor::{Command, Credentials, HostShared, ServerHandle};
use registry::{Registry, Removal};

pub use crate::auth::flow::UserFlow;
pub use auth::{AuthenticateArgs, Authorize};
pub use channel::ChannelTask;
pub use import::ImportSource;
pub use options::{
    clamped_timeout, default_client_info, default_data_dir, field_error, AddPlugin, AddServer,
    PluginAdded, ServerOverrides, DEFAULT_SESSION,
};
pub use tools::{CallTool, ChatCall, OnProgress, ToolRef};

/// The server policy and the trust callback (issue 32, `crate::policy`).
pub use crate::policy::{PolicyRule, RuleTransport, ServerPolicy, POLICY_META_KEY, TRUST_FILE};
pub use crate::policy::{TrustAnswer, TrustAsker, TrustReason, TrustRequest};
pub use settings::{HostConfig, HostDeps, OAuthHostOptions};
pub use utilities::{Complete, CompletionArgument, CompletionContextArgs, CompletionRef};

/// A server's tool filter (`includeTools`, `excludeTools`; see
/// [`Host::set_tool_enabled`]) and its own `tools/call` limits.
pub use crate::catalogue::search::{ToolSearch, ToolSearchHit, ToolSummary};
pub use crate::catalogue::ToolFilter;
pub use crate::mcp::{CallLimits, StartPolicy};

/// A `CallToolResult` as JSON text ([`Host::call_tool_json`]).
pub use crate::json::JsonText;
/// One progress notification of a `callTool`, as an [`OnProgress`] listener
/// receives it (the binding turns it into a JS `progress` item).
pub use crate::mcp::tool_call::Progress;

/// Re-exported for tests: the session snapshot type.
pub use crate::session::empty_session_state;

/// One AHP session's MCP host.
pub struct Host {
    shared: Arc<HostShared>,
    /// Top-level ids and server actors (a leaf lock).
    registry: Mutex<Registry<Arc<ServerHandle>>>,
    /// The catalogue as of the caller's last `listTools`.
    read_view: ReadCatalogue,
    data_dir: PathBuf,
    oauth: OAuthHostOptions,
    /// [`HostConfig::lazy_start`].
    lazy_start: bool,
    /// [`HostConfig::sandbox`].
    sandbox: Option<crate::config::sandbox::SandboxOptions>,
    /// The host's own roots (`roots.rs`).
    roots: Arc<crate::requests::host_roots::HostRoots>,
    /// The AHP input requests (elicitations of chat tool calls) waiting on
    /// an answer.
    chat_inputs: Arc<ChatInputs>,
    /// The requests in flight on the `mcp://` channels (`channel.rs`).
    channel_calls: Arc<channel::ChannelCalls>,
    /// Cancelled when [`Host::shutdown`] starts (and by dispose, its
    /// parent): requests in flight then fail `disposed`, new ones are refused.
    closing: CancellationToken,
    /// The outstanding tasks of AHP tool calls recorded under `dataDir` (`tasks.rs`).
    task_records: Arc<tasks::TaskRecords>,
    /// The whole results of chat calls cut to the output budget (`crate::chat::spill`).
    tool_results: Arc<crate::chat::ToolResults>,
    /// The sign-ins that take a callback URL from the app (`sign_ins.rs`).
    sign_ins: Arc<sign_ins::SignIns>,
}

/// The `disposed` error every method of a disposed host returns.
fn disposed() -> HostError {
    HostError::new(ErrorCode::Disposed, "the host was disposed")
}

impl Host {
    /// Creates a host that reports to `sink`, with no handlers for
    /// server-initiated requests and credentials kept in memory.
    pub fn new(config: impl Into<HostConfig>, sink: Arc<dyn EventSink>) -> Self {
        Self::with_handlers(config, sink, HostDeps::default())
    }

    /// Creates a host whose server-initiated requests go to `deps.requests`
    /// (only the kinds it handles are declared as client capabilities) and
    /// whose OAuth credentials go to `deps.secrets`.
    pub fn with_handlers(
        config: impl Into<HostConfig>,
        sink: Arc<dyn EventSink>,
        deps: HostDeps,
    ) -> Self {
        let config = config.into();
        let HostDeps {
            requests,
            secrets,
            roots: initial_roots,
            header_provider,
            trust,
        } = deps;
        let (requests, host_roots) = roots::install(requests, initial_roots);
        let mut capabilities =
            client_capabilities_with(requests.as_deref(), config.chat_elicitation);
        if config.mcp_apps {
            crate::apps::declare_ui_extension(&mut capabilities);
        }
        // MCP 2025-11-25: the newest revision with an `initialize` handshake
        // (rmcp's default, 2026-07-28, has none).
        let client_info = ClientConfig::new(capabilities, config.client_info)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let publishing = Publishing {
            server_tools: config.publish_server_tools,
            mcp_apps: config.mcp_apps,
        };
        let store = SessionStore::new(config.session);
        let opener = Opener::new(OpenerParts {
            client_info,
            // Idempotent; keeps a `HostConfig` built in Rust inside the caps too.
            limits: config.limits.clamped(),
            publisher: Arc::new(SessionPublisher::new(store, sink, publishing)),
            requests,
            header_provider,
            network: Arc::new(crate::network::Network::new(&config.network)),
            eras: crate::mcp::eras::EraMemory::in_dir(&config.data_dir),
            tool_cache: crate::mcp::tool_cache::ToolCache::in_dir(&config.data_dir),
            base_env: host_base_env(),
            env_policy: config.env_policy,
        });
        let secrets = secrets.unwrap_or_else(|| Arc::new(MemorySecretStore::default()));
        let trust_timeout =
            std::time::Duration::from_millis(config.limits.clamped().trust_timeout_ms);
        let gate = Gate::new(config.policy, trust, Some(&config.data_dir), trust_timeout);
        let shared = Arc::new(HostShared::new(opener, Credentials::new(secrets)).with_gate(gate));
        for warning in shared.opener().network().warnings() {
            let level = crate::events::LogLevel::Warn;
            shared
                .publisher()
                .log(crate::events::log(level, "network", None, warning.clone()));
        }
        if let Some(warning) = options::data_dir_warning(&config.data_dir) {
            let level = crate::events::LogLevel::Warn;
            shared
                .publisher()
                .log(crate::events::log(level, "host.config", None, warning));
        }
        let closing = shared.disposed().child_token();
        let task_records = tasks::TaskRecords::load(&config.data_dir, &shared);
        Self {
            task_records,
            tool_results: Arc::new(crate::chat::ToolResults::in_dir(&config.data_dir)),
            shared,
            registry: Mutex::new(Registry::default()),
            read_view: ReadCatalogue::default(),
            data_dir: config.data_dir,
            lazy_start: config.lazy_start,
            sandbox: config.sandbox,
            oauth: config.oauth,
            roots: host_roots,
            chat_inputs: Arc::default(),
            channel_calls: Arc::default(),
            sign_ins: Arc::default(),
            closing,
        }
    }

    fn registry(&self) -> MutexGuard<'_, Registry<Arc<ServerHandle>>> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The handle of server `server_id`.
    ///
    /// # Errors
    /// `not_found`.
    fn server(&self, server_id: &str) -> HostResult<Arc<ServerHandle>> {
        self.registry()
            .servers
            .get(server_id)
            .cloned()
            .ok_or_else(|| HostError::new(ErrorCode::NotFound, format!("no server {server_id:?}")))
    }

    /// # Errors
    /// `disposed` once [`Host::shutdown`] started or [`Host::dispose_sync`] ran.
    fn check_live(&self) -> HostResult<()> {
        if self.closing.is_cancelled() {
            return Err(disposed());
        }
        Ok(())
    }

    /// Runs `fut` until it ends or the host starts shutting down or is
    /// disposed (then `disposed`, not the `server_exited` of a connection
    /// the shutdown closes; `fut` is dropped).
    fn until_disposed<F>(&self, fut: F) -> until_disposed::UntilDisposed<'_, F> {
        until_disposed::UntilDisposed::new(self.closing.cancelled(), fut)
    }

    /// Stops and removes a plugin (with all its servers) or a top-level server;
    /// emits `session/customizationRemoved` once the processes are gone, then
    /// frees the id (until then a new add of `id` is `already_exists`).
    ///
    /// Commands on one id apply in call order: when an `addPlugin` /
    /// `addServer` of `id` is still in flight, it is told to stop (it
    /// publishes nothing further, starts no server and fails `cancelled`,
    /// unless it had already finished) and this removal waits for it, then
    /// removes what it published. Once this resolves no action about `id`
    /// follows.
    ///
    /// # Errors
    /// `not_found` (no such id, a plugin's child: remove the plugin, or a
    /// removal of `id` already under way), `disposed`.
    pub async fn remove(&self, id: &str) -> HostResult<()> {
        self.check_live()?;
        let mut waited = false;
        let handles = loop {
            let step = self.registry().begin_remove(id)?;
            match step {
                Removal::Stop(handles) => break handles,
                Removal::WaitForAdd(ended) => {
                    waited = true;
                    let ended = async {
                        ended.cancelled().await;
                        Ok(())
                    };
                    self.until_disposed(ended).await?;
                }
                // The add waited for ended before publishing anything.
                Removal::Absent if waited => return Ok(()),
                Removal::Absent => {
                    return Err(HostError::new(
                        ErrorCode::NotFound,
                        format!("no plugin or top-level server {id:?}"),
                    ))
                }
            }
        };
        futures::future::join_all(handles.iter().map(|h| h.remove())).await;
        self.forget_filters(handles.iter().map(|h| h.id.as_str()));
        handles
            .iter()
            .for_each(|h| self.shared.gate().forget(&h.id));
        self.shared
            .publisher()
            .emit(StateAction::SessionCustomizationRemoved(
                SessionCustomizationRemovedAction { id: id.to_owned() },
            ));
        // A top-level server's skills container (see `skills::publish`).
        self.shared
            .publisher()
            .emit_from(|s| crate::skills::publish::remove_container(s, id));
        self.shared.skills().forget(id);
        self.registry().end_remove(id);
        Ok(())
    }

    /// Handles a client-dispatched action (AHP `dispatchAction`): validates it,
    /// echoes it with `origin` (applied) or with `rejectionReason` (not
    /// applied), then starts/stops servers; the authoritative
    /// `session/mcpServerStateChanged` follows from the server's actor.
    ///
    /// `chat/inputAnswerChanged` and `chat/inputCompleted` answer an input
    /// request this host published for a form elicitation of a chat tool
    /// call (see `ChatInputs::completed`); they are echoed on its chat.
    /// `chat/toolCallComplete` (failed) cancels a call paused for
    /// authentication.
    ///
    /// # Errors
    /// `invalid_argument` when `action` is not an AHP action; `disposed`.
    pub fn dispatch(&self, action: Value, origin: ActionOrigin) -> HostResult<ActionEnvelope> {
        self.check_live()?;
        let action: StateAction = serde_json::from_value(action)
            .map_err(|e| HostError::new(ErrorCode::InvalidArgument, format!("action: {e}")))?;
        match &action {
            StateAction::ChatToolCallComplete(complete) => {
                return Ok(self.dispatch_tool_call_complete(complete, &action, origin));
            }
            StateAction::ChatInputCompleted(completed) => {
                return Ok(self
                    .chat_inputs
                    .completed(self.shared.publisher(), completed, origin));
            }
            StateAction::ChatInputAnswerChanged(changed) => {
                return Ok(self.chat_inputs.answer_changed(
                    self.shared.publisher(),
                    changed,
                    origin,
                ));
            }
            _ => {}
        }
        let (envelope, request, state) =
            self.shared
                .publisher()
                .echo_client(action, origin, |state, action| {
                    validate_client_action(state, action)
                });
        if let Some(request) = request {
            self.act(request, &state);
        }
        Ok(envelope)
    }

    /// A client's `chat/toolCallComplete` for a call paused in
    /// `auth-required`: a failed result cancels the call (the MCP request is
    /// abandoned and the `inputNeeded` entry removed) and is echoed on the
    /// chat channel; a successful one, or one for a call that is not waiting,
    /// is echoed with a `rejectionReason` (see [`StepUpWaits::cancel_call`]).
    fn dispatch_tool_call_complete(
        &self,
        complete: &ChatToolCallCompleteAction,
        action: &StateAction,
        origin: ActionOrigin,
    ) -> ActionEnvelope {
        let (turn, call) = (&complete.turn_id, &complete.tool_call_id);
        // A running task-based call: the client's cancel sends `tasks/cancel` (`tasks.rs`).
        if !complete.result.success {
            if let Some(chat) = self.cancel_task_call(turn, call) {
                return self.shared.publisher().envelope_on(
                    &chat,
                    action.clone(),
                    Some(origin),
                    None,
                );
            }
        }
        // Lock order: step-up waits, then the session.
        self.shared
            .step_up()
            .cancel_call(turn, call, complete.result.success, |completion| {
                let (channel, rejection) = match completion {
                    CallCompletion::NotWaiting { rejection } => {
                        (self.shared.publisher().channel(), Some(rejection.clone()))
                    }
                    CallCompletion::Refused { chat, rejection } => {
                        (chat.clone(), Some(rejection.clone()))
                    }
                    CallCompletion::Cancelled { chat } => (chat.clone(), None),
                };
                self.shared.publisher().envelope_on(
                    &channel,
                    action.clone(),
                    Some(origin),
                    rejection,
                )
            })
    }

    fn act(&self, request: ClientIntent, state: &SessionState) {
        let reg = self.registry();
        let send = |id: &str, command: Command| {
            if let Some(h) = reg.servers.get(id) {
                h.send(command);
            }
        };
        match request {
            ClientIntent::Start(id) => send(&id, Command::Start),
            ClientIntent::Stop(id) => send(&id, Command::Stop),
            ClientIntent::Background(id) => send(&id, Command::Background),
            ClientIntent::Toggled(id) => {
                let ids = match reg.plugins.get(&id) {
                    Some(children) => children.clone(),
                    None => vec![id],
                };
                for id in ids {
                    send(&id, Command::SetEnabled(server_enabled(state, &id)));
                }
            }
        }
    }

    /// What server `server_id` said about itself at its last connection
    /// (name, title, version, icons, `instructions`, declared capabilities,
    /// negotiated protocol version and handshake: see
    /// [`crate::ServerIdentity`] for the shape and
    /// bounds), or `null` before its first connection. Replaced on every
    /// reconnect. With the app's policy or trust callback, the decision
    /// about the server is its `policy` (`{policy}` alone for a server that
    /// never connected, as a denied or refused one).
    ///
    /// # Errors
    /// `not_found` (no such server), `disposed`.
    pub fn server_info(&self, server_id: &str) -> HostResult<Value> {
        self.check_live()?;
        let handle = self.server(server_id)?;
        let identity = handle.live.identity().map(|identity| identity.to_json());
        Ok(self.with_decision(server_id, identity))
    }

    /// Stops every server gracefully (stdin close, SIGTERM, SIGKILL), then
    /// disposes and waits (at most `TASKS_END_WAIT_MS`) for every server task
    /// to end. Requests in flight fail `disposed` at once; new ones are
    /// refused with `disposed`.
    pub async fn shutdown(&self) {
        self.closing.cancel();
        let handles = self.registry().take_servers();
        futures::future::join_all(handles.iter().map(|h| h.shutdown())).await;
        self.dispose_sync();
        // Every server task was spawned on its tracker: wait (bounded) until
        // they are all gone, so nothing of this host outlives `shutdown`.
        let ended = futures::future::join_all(handles.iter().map(|h| h.tasks_ended()));
        let wait = std::time::Duration::from_millis(crate::limits::TASKS_END_WAIT_MS);
        let _ = tokio::time::timeout(wait, ended).await;
        // The tool listings of lazy servers being written: complete for the next host.
        self.shared.opener().tool_cache().flushed(wait).await;
    }

    /// Kills every process group at once and ends all actors and pending
    /// calls (`disposed`). Synchronous, idempotent, needs no runtime.
    pub fn dispose_sync(&self) {
        self.shared.disposed().cancel();
        self.shared.opener().processes().kill_all();
        self.task_records.release();
    }

    /// Process groups currently alive under this host.
    pub fn process_count(&self) -> usize {
        self.shared.opener().processes().len()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.dispose_sync();
    }
}
