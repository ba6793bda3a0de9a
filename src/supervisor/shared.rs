//! [`HostShared`]: what every server actor shares with the host façade,
//! as owned parts with private fields, each behind an accessor:
//!
//! - the session publisher ([`SessionPublisher`]: the session lock, then
//!   the catalogue or the app channels);
//! - what opening a connection needs ([`Opener`]: no lock of its own);
//! - credentials ([`Credentials`]: the app's secret store and the
//!   per-credential refresh locks);
//! - step-up waits ([`StepUpWaits`]: locked before the session);
//! - launch permits ([`LaunchGate`]);
//! - every server's listed skills ([`SkillRegistry`]: a leaf lock);
//! - the server policy and trust decisions ([`Gate`]: leaf locks);
//! - the host's `disposed` token.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::launch::LaunchGate;
use crate::auth::step_up::{Leaving, StepUpWaits};
use crate::auth::store::{RefreshLocks, SecretStore};
use crate::chat::{self, ChatContext};
use crate::limits::Limits;
use crate::mcp::Opener;
use crate::policy::Gate;
use crate::publisher::SessionPublisher;
use crate::skills::SkillRegistry;

/// Where OAuth credentials are kept (the app's store, or memory), and the
/// per-credential refresh serialization.
pub struct Credentials {
    secrets: Arc<dyn SecretStore>,
    refresh_locks: Arc<RefreshLocks>,
}

impl Credentials {
    /// Credentials kept in `secrets`.
    pub fn new(secrets: Arc<dyn SecretStore>) -> Self {
        Self {
            secrets,
            refresh_locks: Arc::default(),
        }
    }

    /// The secret store.
    pub fn secrets(&self) -> &Arc<dyn SecretStore> {
        &self.secrets
    }

    /// Per-credential refresh serialization.
    pub fn refresh_locks(&self) -> &Arc<RefreshLocks> {
        &self.refresh_locks
    }
}

/// What every actor shares with the host façade (see the module doc).
pub struct HostShared {
    opener: Opener,
    credentials: Credentials,
    disposed: CancellationToken,
    step_up: StepUpWaits,
    launches: LaunchGate,
    skills: SkillRegistry,
    gate: Gate,
}

impl HostShared {
    /// The shared parts of a host whose connections open with `opener` and
    /// whose sign-ins keep their credentials in `credentials`.
    pub fn new(opener: Opener, credentials: Credentials) -> Self {
        let launches = LaunchGate::new(opener.limits().max_concurrent_launches);
        Self {
            opener,
            credentials,
            disposed: CancellationToken::new(),
            step_up: StepUpWaits::default(),
            launches,
            skills: SkillRegistry::default(),
            gate: Gate::default(),
        }
    }

    /// These parts with `gate` deciding what may start (default: a gate
    /// without rules or trust callback, which lets every server start).
    #[must_use]
    pub fn with_gate(self, gate: Gate) -> Self {
        Self { gate, ..self }
    }

    /// The server policy and trust decisions, asked before every start
    /// (see [`crate::policy`]).
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The one writer of the session state.
    pub fn publisher(&self) -> &Arc<SessionPublisher> {
        self.opener.publisher()
    }

    /// What opening a connection needs.
    pub fn opener(&self) -> &Opener {
        &self.opener
    }

    /// Timeouts, bounds and restart policy.
    pub fn limits(&self) -> &Limits {
        self.opener.limits()
    }

    /// OAuth credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// Cancelled by `dispose`: every actor and pending call ends. Each server
    /// runs under a child token of it.
    pub fn disposed(&self) -> &CancellationToken {
        &self.disposed
    }

    /// Chat tool calls paused for authentication (step-up, expired token).
    /// Registered by the host's `callTool`; ended by the paused server's
    /// actor when the server leaves the state they depend on
    /// ([`HostShared::end_tool_auth_waits`]). Lock order: before the session.
    pub fn step_up(&self) -> &StepUpWaits {
        &self.step_up
    }

    /// The launch permits of stdio servers (see [`super::launch`]).
    pub fn launches(&self) -> &LaunchGate {
        &self.launches
    }

    /// Every server's last `skills/list` entries (SEP-2640; see
    /// [`crate::mcp::skills`]), keyed by server id. A leaf lock.
    pub fn skills(&self) -> &SkillRegistry {
        &self.skills
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
            self.publisher()
                .emit(chat::input_needed_removed_action(&ctx));
            let failed = Err(error.clone());
            let display = &shown.display_name;
            self.publisher()
                .emit_on(&ctx.chat, chat::complete_action(&ctx, display, &failed));
        });
    }
}
