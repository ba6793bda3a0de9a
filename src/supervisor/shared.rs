//! [`HostShared`]: what every server actor shares with the host façade, and
//! the only ways to write the session (so `serverSeq` stays gapless and every
//! envelope reaches the sink in order).
//!
//! Lock order: the session lock, then `catalogue` (read) or the app
//! channels (a leaf). Event sinks run under the session lock (see
//! [`EventSink`]).
//!
//! MCP Apps (with `mcp_apps`): a server's `mcp://` channel is open exactly
//! while its customization shows it. A `ready` state opens it (after
//! publishing `mcpApp`) and carries its URI; every other state, and an
//! accepted client start or stop request (whose reducer clears `channel`),
//! closes it first, under the session lock. The server's actor also closes
//! it as soon as its connection closes ([`HostShared::close_app_channel`]).

use std::ffi::OsString;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use ahp_types::actions::{
    ActionEnvelope, ActionOrigin, SessionCustomizationUpdatedAction,
    SessionMcpServerStateChangedAction, SessionServerToolsChangedAction, StateAction,
};
use ahp_types::state::{
    AhpMcpUiHostCapabilities, McpServerCustomizationApps, McpServerState, SessionState,
    ToolDefinition,
};
use rmcp::model::ClientConfig;
use tokio_util::sync::CancellationToken;

use super::identity::ServerIdentity;
use crate::auth::step_up::{Leaving, StepUpWaits};
use crate::catalogue::{Catalogue, CatalogueEntry, ServerTools};
use crate::chat::{self, ChatContext};
use crate::config::launch::EnvPolicy;
use crate::events::{EventSink, HostEvent, ToolsChangeReason};
use crate::limits::Limits;
use crate::session::{find, with_mcp_app, with_server_info, Found, SessionStore};
use crate::transport::process::ProcessRegistry;

#[cfg(test)]
mod perf;

/// What every actor shares: the session (single writer, gapless
/// `serverSeq`), the event sink, the process registry and host options.
pub struct HostShared {
    /// Session state and envelope sequence. Write only through
    /// [`HostShared::emit`], [`HostShared::echo_client`],
    /// [`HostShared::envelope_on`] and [`HostShared::set_server_state`]; read
    /// with [`HostShared::read_state`] (only this module can lock it).
    pub session: SessionCell,
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
    /// Cancelled by `dispose`: every actor and pending call ends. Each server
    /// runs under a child token of it.
    pub disposed: CancellationToken,
    /// The app's handlers for server-initiated requests.
    pub requests: Option<Arc<dyn crate::requests::RequestHandler>>,
    /// Where OAuth credentials are kept (the app's store, or memory).
    pub secrets: Arc<dyn crate::auth::store::SecretStore>,
    /// Per-credential refresh serialization.
    pub refresh_locks: Arc<crate::auth::store::RefreshLocks>,
    /// This host's DPoP keys, one per MCP server URL (RFC 9449; secrets).
    pub dpop_keys: Arc<crate::auth::dpop::DpopKeys>,
    /// Proxy route and trust roots of every HTTP client of this host.
    pub network: Arc<crate::network::Network>,
    /// Every ready server's checked tools, named together.
    pub catalogue: RwLock<Catalogue>,
    /// Emit `session/serverToolsChanged` with the model catalogue on every change.
    pub publish_server_tools: bool,
    /// The AHP client declared `mcpApps` (JS option `mcpApps`): servers are
    /// told the MCP Apps extension, customizations carry `mcpApp` and
    /// `channel`, App tool calls carry `_meta.ui` (see [`crate::apps`]).
    pub mcp_apps: bool,
    /// The `mcp://` channels of ready servers (with `mcp_apps`). Written
    /// here only (see the module doc): opened with a `ready` state, closed
    /// when the server leaves `ready`; read by the channel proxy and by each
    /// connection's client handler (the server notifications it forwards).
    pub app_channels: Arc<crate::apps::channels::AppChannels>,
    /// Chat tool calls paused for authentication (step-up, expired token).
    /// Registered by the host's `callTool`; ended by the paused server's
    /// actor when the server leaves the state they depend on
    /// ([`HostShared::end_tool_auth_waits`]). Lock order: before the session.
    pub step_up: StepUpWaits,
    /// The launch permits of stdio servers (see [`super::launch`]).
    pub launches: super::launch::LaunchGate,
    /// Every server's last `skills/list` entries (SEP-2640; see
    /// [`super::skills`]), keyed by server id. A leaf lock.
    pub skills: crate::skills::SkillRegistry,
    /// Which configurations spoke the 2025 era last time (`auto` probes
    /// once per configuration; see [`super::eras`]).
    pub eras: super::eras::EraMemory,
}

/// The session store behind the one session lock. Only [`HostShared`]'s
/// methods lock it, so every envelope is emitted under it, in `serverSeq`
/// order.
pub struct SessionCell(Mutex<SessionStore>);

impl SessionCell {
    /// Wraps a new session store.
    pub fn new(store: SessionStore) -> Self {
        Self(Mutex::new(store))
    }
}

impl HostShared {
    fn lock_session(&self) -> MutexGuard<'_, SessionStore> {
        self.session
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn send(&self, envelope: ActionEnvelope) {
        self.sink.send(HostEvent::Action(Box::new(envelope)));
    }

    /// Applies a host action through the reducer and emits its envelope,
    /// atomically with respect to other emitters.
    pub fn emit(&self, action: StateAction) {
        let mut session = self.lock_session();
        let envelope = session.emit(action);
        self.send(envelope);
    }

    /// Emits the action `make` derives from the current state (none: nothing
    /// is emitted), atomically with respect to other emitters.
    pub fn emit_from(&self, make: impl FnOnce(&SessionState) -> Option<StateAction>) {
        let mut session = self.lock_session();
        if let Some(action) = make(session.state()) {
            let envelope = session.emit(action);
            self.send(envelope);
        }
    }

    /// AHP `dispatchAction` echo, atomically: `verdict` judges `action`
    /// against the current state (`Err(reason)` rejects it), then the echo is
    /// emitted with `origin` — applied, or carrying `rejectionReason`.
    /// Returns the envelope, the verdict's value when accepted, and the state
    /// after the echo.
    pub fn echo_client<T>(
        &self,
        action: StateAction,
        origin: ActionOrigin,
        verdict: impl FnOnce(&SessionState, &StateAction) -> Result<T, String>,
    ) -> (ActionEnvelope, Option<T>, SessionState) {
        let mut session = self.lock_session();
        let (accepted, rejection) = match verdict(session.state(), &action) {
            Ok(value) => (Some(value), None),
            Err(reason) => (None, Some(reason)),
        };
        if let (Some(_), Some(id)) = (&accepted, clears_channel(&action)) {
            self.app_channels.close(id);
        }
        let envelope = session.echo_client(action, origin, rejection);
        self.send(envelope.clone());
        (envelope, accepted, session.state().clone())
    }

    /// Emits an action on channel `channel` (a chat: not applied to the
    /// session) with an optional `origin` and `rejectionReason`; returns the
    /// envelope.
    pub fn envelope_on(
        &self,
        channel: &str,
        action: StateAction,
        origin: Option<ActionOrigin>,
        rejection: Option<String>,
    ) -> ActionEnvelope {
        let mut session = self.lock_session();
        let envelope = session.envelope_on(channel, action, origin, rejection);
        self.send(envelope.clone());
        envelope
    }

    /// Emits an action on chat channel `chat` (not applied to the session).
    pub fn emit_on(&self, chat: &str, action: StateAction) {
        self.envelope_on(chat, action, None, None);
    }

    /// Reads the session state under the session lock (keep `read` short:
    /// every emitter waits for it).
    pub fn read_state<R>(&self, read: impl FnOnce(&SessionState) -> R) -> R {
        read(self.lock_session().state())
    }

    /// Reads the session store (state and `serverSeq` together) under its lock.
    pub fn read_store<R>(&self, read: impl FnOnce(&SessionStore) -> R) -> R {
        read(&self.lock_session())
    }

    /// The session channel URI stamped on every envelope.
    pub fn channel(&self) -> String {
        self.lock_session().channel().to_owned()
    }

    /// Emits `session/mcpServerStateChanged` for `id` (nothing when the
    /// server no longer exists, or is already `starting` and `state` is `starting`).
    ///
    /// With `mcp_apps`, a `ready` state first publishes `app` as the
    /// customization's `mcpApp` (when it changed), then opens the server's
    /// `mcp://` channel serving `app` and carries its URI in `channel`;
    /// every other state closes the channel first (the action omits
    /// `channel`, which clears it). `app` is ignored otherwise.
    ///
    /// Server states are written only by the server's actor (the host asks
    /// through [`super::Command`]s).
    pub(super) fn set_server_state(
        &self,
        id: &str,
        state: McpServerState,
        app: Option<AhpMcpUiHostCapabilities>,
    ) {
        let state = crate::session::shown_server_state(state);
        let mut session = self.lock_session();
        let ready = matches!(state, McpServerState::Ready(_)) && self.mcp_apps;
        if !ready {
            self.app_channels.close(id);
        }
        match find(session.state(), id) {
            // `starting` is not repeated (entries are created as `starting`);
            // every other state is emitted, so the end of a client's start or
            // stop request always arrives as an authoritative action.
            Some(Found::McpServer(s, _))
                if !(s.state == state && matches!(state, McpServerState::Starting(_))) => {}
            _ => return,
        }
        let channel = ready.then(|| {
            self.publish_mcp_app(&mut session, id, app.clone());
            let uri = session.channel().to_owned();
            self.app_channels.open(&uri, id, app)
        });
        let action = StateAction::SessionMcpServerStateChanged(Box::new(
            SessionMcpServerStateChangedAction {
                id: id.to_owned(),
                state,
                channel,
            },
        ));
        let envelope = session.emit(action);
        self.send(envelope);
    }

    /// Closes server `id`'s `mcp://` channel (its connection is closing or
    /// gone); the next state the server's actor emits clears it from the
    /// customization.
    pub(super) fn close_app_channel(&self, id: &str) {
        self.app_channels.close(id);
    }

    /// After server `id`'s tools changed while it is `ready`: what its open
    /// channel serves becomes `app`, and `mcpApp` is published when it
    /// changed (nothing without `mcp_apps`).
    pub(super) fn update_mcp_app(&self, id: &str, app: Option<AhpMcpUiHostCapabilities>) {
        if !self.mcp_apps {
            return;
        }
        let mut session = self.lock_session();
        self.app_channels.set_capabilities(id, app.clone());
        self.publish_mcp_app(&mut session, id, app);
    }

    /// Emits `session/customizationUpdated` with `mcpApp` = `app` (`None`:
    /// removed) on server `id`, when that changes it; under the session lock.
    fn publish_mcp_app(
        &self,
        session: &mut SessionStore,
        id: &str,
        app: Option<AhpMcpUiHostCapabilities>,
    ) {
        let app = app.map(|capabilities| McpServerCustomizationApps { capabilities });
        let Some(customization) = with_mcp_app(session.state(), id, app) else {
            return;
        };
        let envelope = session.emit(StateAction::SessionCustomizationUpdated(Box::new(
            SessionCustomizationUpdatedAction { customization },
        )));
        self.send(envelope);
    }

    /// Server `id` leaves the state its paused chat tool calls depend on
    /// (`why`, see [`super::phase::Effect::EndToolAuthWaits`]): for each,
    /// emits `session/inputNeededRemoved`, then `chat/toolCallComplete`
    /// failed with [`Leaving::error`] (code e.g. `server_stopped`), and
    /// wakes the call (its `callTool` rejects with that error). Lock order:
    /// step-up waits, then the session.
    pub(super) fn end_tool_auth_waits(&self, id: &str, why: Leaving) {
        let error = why.error(id);
        self.step_up.end_server(id, why, |key, shown| {
            let ctx = ChatContext {
                chat: key.chat.clone(),
                turn_id: key.turn_id.clone(),
                tool_call_id: key.tool_call_id.clone(),
                customization_id: id.to_owned(),
                meta: shown.meta.clone().map(Arc::new),
            };
            self.emit(chat::input_needed_removed_action(&ctx));
            let failed = Err(error.clone());
            let display = &shown.display_name;
            self.emit_on(&ctx.chat, chat::complete_action(&ctx, display, &failed));
        });
    }

    /// Publishes server `id`'s identity on its customization: AHP `icons`
    /// and `_meta["ahp-mcp-host/serverInfo"]` (a `session/customizationUpdated`
    /// of the top-level entry holding it; nothing when `id` is gone).
    pub(super) fn publish_identity(&self, id: &str, identity: &ServerIdentity) {
        let mut session = self.lock_session();
        let info = identity.to_json();
        let Some(customization) = with_server_info(session.state(), id, identity.ahp_icons(), info)
        else {
            return;
        };
        let envelope = session.emit(StateAction::SessionCustomizationUpdated(Box::new(
            SessionCustomizationUpdatedAction { customization },
        )));
        self.send(envelope);
    }

    /// Sends a host event (a log record, `authorizationUrl`, …) to the sink.
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
    ///
    /// The definitions are copied before the session lock is taken (for a
    /// large catalogue that copy is most of the work), so other emitters
    /// wait only for the reducer and the envelope; under the lock the
    /// catalogue is read again and copied again only if it changed meanwhile,
    /// so publications still leave in catalogue order.
    pub fn publish_tools(&self, id: &str, reason: ToolsChangeReason) {
        let read = || {
            self.catalogue
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .entries()
        };
        let definitions = |entries: &[Arc<CatalogueEntry>]| -> Vec<ToolDefinition> {
            entries.iter().map(|e| e.definition()).collect()
        };
        let mut entries = read();
        let mut tools = self.publish_server_tools.then(|| definitions(&entries));
        // The session lock orders publications with each other and with their envelopes.
        let mut session = self.lock_session();
        let now = read();
        if !Arc::ptr_eq(&now, &entries) {
            tools = self.publish_server_tools.then(|| definitions(&now));
            entries = now;
        }
        if let Some(tools) = tools {
            let envelope = session.emit(StateAction::SessionServerToolsChanged(
                SessionServerToolsChangedAction { tools },
            ));
            self.send(envelope);
        }
        self.sink.send(HostEvent::ToolsChanged {
            server_id: id.to_owned(),
            reason,
            tools: entries.len(),
        });
    }
}

/// The server whose `channel` the reducer clears when it applies `action`
/// (a client's `session/mcpServerStartRequested` or
/// `session/mcpServerStopRequested`).
fn clears_channel(action: &StateAction) -> Option<&str> {
    match action {
        StateAction::SessionMcpServerStartRequested(a) => Some(&a.id),
        StateAction::SessionMcpServerStopRequested(a) => Some(&a.id),
        _ => None,
    }
}
