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
}

impl SessionStore {
    /// A store for channel `channel` (e.g. `ahp-session:/3f2c…`), starting from
    /// [`empty_session_state`]. The first envelope gets `serverSeq` 1.
    pub fn new(channel: impl Into<String>) -> Self {
        Self {
            channel: channel.into(),
            state: empty_session_state(),
            last_seq: 0,
        }
    }

    /// The channel URI stamped on every envelope.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// The current state: exactly what the reducer made from the emitted actions.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The `serverSeq` of the last envelope made (0 before the first): the
    /// point of the action stream [`Self::state`] reflects.
    pub fn server_seq(&self) -> u64 {
        self.last_seq
    }

    /// Applies a host-originated action through the `ahp` session reducer and
    /// wraps it in the next envelope (no `origin`).
    pub fn emit(&mut self, action: StateAction) -> ActionEnvelope {
        // The reducer replaces `serverTools` whole; the catalogue it replaces
        // (thousands of schema trees for a large one) is freed off this thread.
        if matches!(action, StateAction::SessionServerToolsChanged(_)) {
            if let Some(replaced) = self.state.server_tools.take() {
                crate::reclaim::drop_later(replaced);
            }
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
