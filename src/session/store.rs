//! The authoritative session state and the `serverSeq` counter.

use ahp::reducers::apply_action_to_session;
use ahp_types::actions::{ActionEnvelope, ActionOrigin, StateAction};
use ahp_types::state::{SessionLifecycle, SessionState, SessionStatus};

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

/// Session state plus the envelope sequence of one AHP session channel.
///
/// Not thread-safe by itself: the host keeps it behind one lock and emits each
/// envelope while holding it, so envelopes leave in `serverSeq` order.
#[derive(Debug)]
pub struct SessionStore {
    channel: String,
    state: SessionState,
    last_seq: u64,
    /// `serverTools` of the last `session/serverToolsChanged`, as JSON text
    /// (the state itself keeps `None`).
    server_tools: Option<String>,
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
    /// actions, except `serverTools`, which is kept as JSON text (see
    /// [`Self::full_state`]); `None` here.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The current state with `serverTools` (what the reducer made from the
    /// emitted actions, whole): a copy, the tools parsed from their text.
    pub fn full_state(&self) -> SessionState {
        let mut state = self.state.clone();
        state.server_tools =
            (self.server_tools.as_deref()).and_then(|t| serde_json::from_str(t).ok());
        state
    }

    /// [`Self::full_state`] as JSON text, the tools' text spliced in as it
    /// is (no parse, no tree): `serverTools` comes last.
    pub fn full_state_json(&self) -> String {
        let mut json = serde_json::to_string(&self.state).unwrap_or_else(|_| "{}".to_owned());
        if let (Some(tools), Some(b'}')) = (&self.server_tools, json.as_bytes().last()) {
            json.pop();
            json.push_str(if json.len() > 1 {
                ",\"serverTools\":"
            } else {
                "\"serverTools\":"
            });
            json.push_str(tools);
            json.push('}');
        }
        json
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
            self.server_tools = Some(serde_json::to_string(&changed.tools).unwrap_or_default());
            return self.envelope(action, None, None);
        }
        apply_action_to_session(&mut self.state, &action);
        self.envelope(action, None, None)
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
        assert_eq!(store.full_state(), replay);
        for action in [tools(&["a", "b"]), tools(&[]), tools(&["c"])] {
            apply_action_to_session(&mut replay, &action);
            store.emit(action);
            assert_eq!(store.full_state(), replay);
            assert!(store.state().server_tools.is_none(), "no tree kept");
            let text: serde_json::Value =
                serde_json::from_str(&store.full_state_json()).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                text,
                serde_json::to_value(&replay).unwrap_or_else(|e| panic!("{e}"))
            );
        }
        assert_eq!(store.server_seq(), 3);
    }
}
