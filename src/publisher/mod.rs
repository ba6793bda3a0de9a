//! [`SessionPublisher`]: the one writer of the AHP session state and its
//! envelopes (so `serverSeq` stays gapless and every envelope reaches the
//! sink in order), and of the tool catalogue it publishes. Everything that
//! changes the session (the host façade's client echoes, each server's
//! actor, the chat-input publisher, the skills listing) writes through it.
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
//! it as soon as its connection closes ([`SessionPublisher::close_app_channel`]).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, Weak};

use ahp_types::actions::{
    ActionEnvelope, ActionOrigin, SessionCustomizationUpdatedAction,
    SessionMcpServerStateChangedAction, StateAction,
};
use ahp_types::state::{
    AhpMcpUiHostCapabilities, Customization, Icon, McpServerCustomizationApps, McpServerState,
    SessionState,
};

use crate::apps::channels::AppChannels;
use crate::catalogue::{Catalogue, CatalogueEntry, ServerTools};
use crate::events::{EncodedEnvelope, EventSink, HostEvent, ToolsChangeReason};
use crate::session::{find, with_mcp_app, with_server_info, with_server_meta, Found, SessionStore};

#[cfg(test)]
mod perf;
#[cfg(test)]
mod tests;
mod tools_envelope;

use tools_envelope::{CatalogueTools, ToolsEnvelope};

/// The session (single writer, gapless `serverSeq`), the event sink, the
/// tool catalogue and the `mcp://` channels it opens and closes with
/// server states. Every field is private: write through its methods.
pub struct SessionPublisher {
    /// Session state and envelope sequence; only this type locks it.
    session: Mutex<SessionStore>,
    /// Where actions and logs go.
    sink: Arc<dyn EventSink>,
    /// Every ready server's checked tools, named together.
    catalogue: RwLock<Catalogue>,
    /// Emit `session/serverToolsChanged` with the model catalogue on every change.
    publish_server_tools: bool,
    /// The catalogue generation the last `session/serverToolsChanged`
    /// carried (written under the session lock). Weak: it keeps only the
    /// allocation, so no later generation can have its address.
    published: Mutex<Weak<Vec<Arc<CatalogueEntry>>>>,
    /// Servers whose tools the catalogue holds and no
    /// `session/serverToolsChanged` carried yet (between
    /// [`SessionPublisher::update_tools`] and the publication that follows
    /// it); written and read under the session lock (see
    /// [`SessionPublisher::read_store_with_pending`]).
    tools_pending: Mutex<BTreeSet<String>>,
    /// The AHP client declared `mcpApps` (JS option `mcpApps`): servers are
    /// told the MCP Apps extension, customizations carry `mcpApp` and
    /// `channel`, App tool calls carry `_meta.ui` (see [`crate::apps`]).
    mcp_apps: bool,
    /// The `mcp://` channels of ready servers (with `mcp_apps`). Written
    /// here only (see the module doc); read by the channel proxy and by each
    /// connection's client handler (the server notifications it forwards).
    app_channels: Arc<AppChannels>,
}

/// What a [`SessionPublisher`] publishes besides server states.
#[derive(Debug, Clone, Copy, Default)]
pub struct Publishing {
    /// Emit `session/serverToolsChanged` on every catalogue change.
    pub server_tools: bool,
    /// MCP Apps: `mcpApp` and `channel` on customizations.
    pub mcp_apps: bool,
}

impl SessionPublisher {
    /// A publisher of `store` to `sink`.
    pub fn new(store: SessionStore, sink: Arc<dyn EventSink>, publishing: Publishing) -> Self {
        Self {
            session: Mutex::new(store),
            sink,
            catalogue: RwLock::default(),
            publish_server_tools: publishing.server_tools,
            published: Mutex::default(),
            tools_pending: Mutex::default(),
            mcp_apps: publishing.mcp_apps,
            app_channels: Arc::default(),
        }
    }

    /// Where actions and logs go.
    pub fn sink(&self) -> &Arc<dyn EventSink> {
        &self.sink
    }

    /// Whether the AHP client declared `mcpApps`.
    pub fn mcp_apps(&self) -> bool {
        self.mcp_apps
    }

    /// The `mcp://` channels of ready servers (opened and closed only here).
    pub fn app_channels(&self) -> &Arc<AppChannels> {
        &self.app_channels
    }

    /// The tool catalogue (read it; write with [`SessionPublisher::set_tools`]
    /// or [`SessionPublisher::update_tools`]).
    pub fn catalogue(&self) -> &RwLock<Catalogue> {
        &self.catalogue
    }

    fn lock_session(&self) -> MutexGuard<'_, SessionStore> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// [`SessionPublisher::read_store`], with the ids of the servers whose
    /// tools are in the catalogue but not yet in the state (a server turns
    /// `ready` before the publication of its tools; `whenReady` waits for
    /// both), read under the same lock.
    pub fn read_store_with_pending<R>(
        &self,
        read: impl FnOnce(&SessionStore, &BTreeSet<String>) -> R,
    ) -> R {
        let session = self.lock_session();
        read(&session, &self.pending())
    }

    fn pending(&self) -> MutexGuard<'_, BTreeSet<String>> {
        self.tools_pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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
    /// through `Command`s of the supervisor).
    pub fn set_server_state(
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
    pub fn close_app_channel(&self, id: &str) {
        self.app_channels.close(id);
    }

    /// After server `id`'s tools changed while it is `ready`: what its open
    /// channel serves becomes `app`, and `mcpApp` is published when it
    /// changed (nothing without `mcp_apps`).
    pub fn update_mcp_app(&self, id: &str, app: Option<AhpMcpUiHostCapabilities>) {
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

    /// Publishes server `id`'s identity on its customization: AHP `icons`
    /// and `info` as `_meta["ahp-mcp-host/serverInfo"]` (a
    /// `session/customizationUpdated` of the top-level entry holding it;
    /// nothing when `id` is gone).
    pub fn publish_identity(&self, id: &str, icons: Option<Vec<Icon>>, info: serde_json::Value) {
        self.emit_from(|state| updated(with_server_info(state, id, icons, info)));
    }

    /// Sets `_meta[key]` of server `id`'s customization to `value` (`null`
    /// removes it; a `session/customizationUpdated` of the top-level entry
    /// holding it; nothing when `id` is gone or the value is already that).
    pub fn publish_meta(&self, id: &str, key: &str, value: serde_json::Value) {
        self.emit_from(|state| updated(with_server_meta(state, id, key, value)));
    }

    /// Sends a host event (a log record, `authorizationUrl`, …) to the sink.
    pub fn log(&self, event: HostEvent) {
        self.sink.send(event);
    }

    /// Replaces (`Some`) or removes (`None`) server `id`'s tools in the
    /// catalogue and, when the model catalogue changed, publishes it (see
    /// [`SessionPublisher::publish_tools`]).
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
        let added = tools.is_some();
        let changed = self
            .catalogue
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .set_server(id, tools);
        // Pending until a publication for `id` (under the session lock; the
        // server's `ready` comes after this returns, so no read of the
        // state sees it `ready` without its tools, or them pending).
        if changed && added && self.publish_server_tools {
            let _session = self.lock_session();
            self.pending().insert(id.to_owned());
        }
        changed
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
        self.publish_tools_of(&[id], reason);
    }

    /// [`SessionPublisher::publish_tools`] after a change caused by every
    /// server of `ids` at once: one `session/serverToolsChanged`, then one
    /// `toolsChanged` event per server, in order (a plugin's lazy servers
    /// published from the tool cache together).
    pub fn publish_tools_of(&self, ids: &[&str], reason: ToolsChangeReason) {
        let published = || {
            self.published
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        // The session lock orders publications with each other and with their envelopes.
        let mut session = self.lock_session();
        let entries = (self.catalogue.read())
            .unwrap_or_else(PoisonError::into_inner)
            .entries();
        // A generation another publication carried already (servers that
        // became ready together) is not published again.
        let carried = std::ptr::eq(published().as_ptr(), Arc::as_ptr(&entries));
        if self.publish_server_tools && !carried {
            let tools = Arc::new(CatalogueTools::new(entries.clone()));
            let server_seq = session.emit_published_tools(tools.clone());
            *published() = Arc::downgrade(&entries);
            let envelope = ToolsEnvelope::new(session.channel(), server_seq, tools);
            self.sink
                .send(HostEvent::EncodedAction(EncodedEnvelope(Arc::new(
                    envelope,
                ))));
        }
        let mut pending = self.pending();
        for id in ids {
            pending.remove(*id);
        }
        drop(pending);
        for id in ids {
            self.sink.send(HostEvent::ToolsChanged {
                server_id: (*id).to_owned(),
                reason,
                tools: entries.len(),
            });
        }
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

/// `session/customizationUpdated` of `customization`, when there is one.
fn updated(customization: Option<Customization>) -> Option<StateAction> {
    let updated = |customization| SessionCustomizationUpdatedAction { customization };
    customization.map(|c| StateAction::SessionCustomizationUpdated(Box::new(updated(c))))
}
