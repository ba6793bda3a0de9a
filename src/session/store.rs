//! The authoritative session state and the `serverSeq` counter.

use std::fmt::Debug;
use std::sync::Arc;

use ahp::reducers::apply_action_to_session;
use ahp_types::actions::{ActionEnvelope, ActionOrigin, StateAction};
use ahp_types::state::{SessionLifecycle, SessionState, SessionStatus, ToolDefinition};

/// A fresh, empty session: lifecycle `ready`, status idle, no customizations.
pub fn empty_session_state() -> SessionState {
    SessionState {
        provider: "mcp".to_owned(),
        title: String::new(),
        status: SessionStatus::Idle.bits(),
        activity: None,
        origin: None,
        project: None,
        working_directories: None,
        annotations: None,
        lifecycle: SessionLifecycle::Ready,
        creation_error: None,
        server_tools: None,
        active_clients: Vec::new(),
        chats: Vec::new(),
        default_chat: None,
        config: None,
        customizations: None,
        changesets: None,
        input_needed: None,
        meta: None,
    }
}

/// The `serverTools` of the last `session/serverToolsChanged`, held as
/// whoever published it keeps them (the catalogue's entries, shared with
/// it) instead of as a second copy of every definition: for a large
/// catalogue that copy was the largest part of the session's memory.
/// Read back only when a full state is read ([`SessionRead`]).
pub trait PublishedTools: Send + Sync + Debug {
    /// The tools exactly as the action carried them (what the `ahp`
    /// reducer put in `serverTools`).
    fn definitions(&self) -> Vec<ToolDefinition>;

    /// [`PublishedTools::definitions`] as a JSON array text, appended to `out`.
    fn write_json(&self, out: &mut Vec<u8>);
}

/// The published tools as their JSON text (an action emitted through
/// [`SessionStore::emit`], not [`SessionStore::emit_published_tools`]).
#[derive(Debug)]
struct ToolsText(String);

impl PublishedTools for ToolsText {
    fn definitions(&self) -> Vec<ToolDefinition> {
        serde_json::from_str(&self.0).unwrap_or_default()
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
}

/// Session state plus the envelope sequence of one AHP session channel.
///
/// Not thread-safe by itself: the host keeps it behind one lock and emits each
/// envelope while holding it, so envelopes leave in `serverSeq` order.
#[derive(Debug)]
pub struct SessionStore {
    channel: String,
    state: SessionState,
    last_seq: u64,
    /// `serverTools` of the last `session/serverToolsChanged` (the state
    /// itself keeps `None`).
    server_tools: Option<Arc<dyn PublishedTools>>,
}

/// A full read of the session (see [`SessionStore::read`]): taken under
/// the session lock, turned into a state or its JSON text after it is
/// released (the tools' definitions are the long part).
#[derive(Debug)]
pub struct SessionRead {
    /// The `serverSeq` of the last envelope the state reflects.
    pub server_seq: u64,
    state: SessionState,
    server_tools: Option<Arc<dyn PublishedTools>>,
}

impl SessionRead {
    /// The state with `serverTools`: exactly what the reducer made from the
    /// emitted actions.
    pub fn state(self) -> SessionState {
        let mut state = self.state;
        state.server_tools = self.server_tools.map(|t| t.definitions());
        state
    }

    /// [`SessionRead::state`] as JSON text, `serverTools` written from the
    /// published tools (no state tree of them): it comes last.
    pub fn json(&self) -> String {
        let mut json = serde_json::to_vec(&self.state).unwrap_or_else(|_| b"{}".to_vec());
        if let (Some(tools), Some(b'}')) = (&self.server_tools, json.last()) {
            json.pop();
            json.extend_from_slice(if json.len() > 1 {
                b",\"serverTools\":"
            } else {
                b"\"serverTools\":"
            });
            tools.write_json(&mut json);
            json.push(b'}');
        }
        // Only UTF-8 went in (JSON writers).
        String::from_utf8(json).unwrap_or_else(|_| "{}".to_owned())
    }
}

impl SessionStore {
    /// A store for channel `channel` (e.g. `ahp-session:/3f2c…`), starting from
    /// [`empty_session_state`]. The first envelope gets `serverSeq` 1.
    pub fn new(channel: impl Into<String>) -> Self {
        Self {
            channel: channel.into(),
            state: empty_session_state(),
            last_seq: 0,
            server_tools: None,
        }
    }

    /// The channel URI stamped on every envelope.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// The current state: exactly what the reducer made from the emitted
    /// actions, except `serverTools`, which is kept as published (see
    /// [`PublishedTools`]); `None` here.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The current state with `serverTools`, to be read after the lock is
    /// released ([`SessionRead`]).
    pub fn read(&self) -> SessionRead {
        SessionRead {
            server_seq: self.last_seq,
            state: self.state.clone(),
            server_tools: self.server_tools.clone(),
        }
    }

    /// The `serverSeq` of the last envelope made (0 before the first): the
    /// point of the action stream [`Self::state`] reflects.
    pub fn server_seq(&self) -> u64 {
        self.last_seq
    }

    /// Applies a host-originated action through the `ahp` session reducer and
    /// wraps it in the next envelope (no `origin`).
    pub fn emit(&mut self, action: StateAction) -> ActionEnvelope {
        // The reducer replaces `serverTools` whole: kept as the list's JSON
        // text instead of thousands of schema trees (a tenth of the memory
        // for a large catalogue), spliced into every full read.
        if let StateAction::SessionServerToolsChanged(changed) = &action {
            let mut text = serde_json::to_string(&changed.tools).unwrap_or_default();
            text.shrink_to_fit();
            return self.emit_tools(action, Arc::new(ToolsText(text)));
        }
        apply_action_to_session(&mut self.state, &action);
        self.envelope(action, None, None)
    }

    /// Emits `action`, a `session/serverToolsChanged` whose `tools` are
    /// `published`'s definitions, keeping `published` as the state's
    /// `serverTools` instead of a copy of the action's (see
    /// [`PublishedTools`]). Any other action is emitted as by
    /// [`SessionStore::emit`].
    fn emit_tools(
        &mut self,
        action: StateAction,
        published: Arc<dyn PublishedTools>,
    ) -> ActionEnvelope {
        if !matches!(action, StateAction::SessionServerToolsChanged(_)) {
            return self.emit(action);
        }
        self.keep_tools(published);
        self.envelope(action, None, None)
    }

    /// A `session/serverToolsChanged` of `published`'s definitions whose
    /// envelope the caller writes itself (as its JSON text, see
    /// `crate::events::EnvelopeText`): keeps `published` as the state's
    /// `serverTools` and returns the envelope's `serverSeq`.
    pub fn emit_published_tools(&mut self, published: Arc<dyn PublishedTools>) -> u64 {
        self.keep_tools(published);
        self.last_seq += 1;
        self.last_seq
    }

    fn keep_tools(&mut self, published: Arc<dyn PublishedTools>) {
        // The generation it replaces may be the last hold on a large catalogue.
        crate::reclaim::drop_later(self.server_tools.replace(published));
    }

    /// Echoes a client dispatch. With `rejection: None` the action is applied
    /// (through the reducer) and echoed with its `origin`; with
    /// `Some(reason)` the state is left unchanged and the echo carries
    /// `rejectionReason` so the client rolls back.
    pub fn echo_client(
        &mut self,
        action: StateAction,
        origin: ActionOrigin,
        rejection: Option<String>,
    ) -> ActionEnvelope {
        if rejection.is_none() {
            apply_action_to_session(&mut self.state, &action);
        }
        self.envelope(action, Some(origin), rejection)
    }

    /// Wraps an action of another channel (a chat this host's calls run in)
    /// in the next envelope. The host does not own that channel's state, so
    /// nothing is applied here: the chat's owner applies it with `ahp`'s chat
    /// reducer. `serverSeq` is shared by all channels of this host.
    pub fn envelope_on(
        &mut self,
        channel: &str,
        action: StateAction,
        origin: Option<ActionOrigin>,
        rejection_reason: Option<String>,
    ) -> ActionEnvelope {
        self.last_seq += 1;
        ActionEnvelope {
            channel: channel.to_owned(),
            action,
            server_seq: self.last_seq,
            origin,
            rejection_reason,
        }
    }

    fn envelope(
        &mut self,
        action: StateAction,
        origin: Option<ActionOrigin>,
        rejection_reason: Option<String>,
    ) -> ActionEnvelope {
        self.last_seq += 1;
        ActionEnvelope {
            channel: self.channel.clone(),
            action,
            server_seq: self.last_seq,
            origin,
            rejection_reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use ahp::reducers::apply_action_to_session;
    use ahp_types::actions::{SessionServerToolsChangedAction, StateAction};
    use ahp_types::state::ToolDefinition;
    use serde_json::json;

    use super::*;

    fn tools(names: &[&str]) -> StateAction {
        let tools = names
            .iter()
            .map(|n| {
                serde_json::from_value::<ToolDefinition>(json!({
                    "name": n, "description": "d é \"q\"",
                    "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}
                }))
                .unwrap_or_else(|e| panic!("{e}"))
            })
            .collect();
        StateAction::SessionServerToolsChanged(SessionServerToolsChangedAction { tools })
    }

    #[test]
    fn server_tools_kept_as_text_read_back_as_the_reducer_makes_them() {
        let mut store = SessionStore::new("ahp-session:/t");
        let mut replay = empty_session_state();
        assert_eq!(store.read().state(), replay);
        for action in [tools(&["a", "b"]), tools(&[]), tools(&["c"])] {
            apply_action_to_session(&mut replay, &action);
            store.emit(action);
            assert_eq!(store.read().state(), replay);
            assert!(store.state().server_tools.is_none(), "no tree kept");
            let text: serde_json::Value =
                serde_json::from_str(&store.read().json()).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                text,
                serde_json::to_value(&replay).unwrap_or_else(|e| panic!("{e}"))
            );
        }
        assert_eq!(store.server_seq(), 3);
    }
}
