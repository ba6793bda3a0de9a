//! One question to the app's `trust` callback ([`Asking`]): the pending
//! decision published while it is open, withdrawn when the start is
//! abandoned (stop, restart, remove), and the answer recorded.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{
    subject_of, Admission, Gate, TrustAnswer, TrustDecision, TrustReason, TrustRequest, TrustState,
};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::LogLevel;
use crate::mcp::ServerSpec;
use crate::publisher::SessionPublisher;

/// The question about `spec`.
pub(super) fn request(spec: &ServerSpec, reason: TrustReason) -> TrustRequest {
    let subject = subject_of(spec);
    TrustRequest {
        server_id: spec.id.clone(),
        name: subject.name,
        plugin: subject.plugin,
        reason,
        config: super::shown_config(spec),
    }
}

/// The failure of a callback that threw or answered something else.
pub(super) const FAILED: &str =
    "failed (it threw, or answered something else than a boolean or {trust, remember?})";

/// The failure of a callback that did not answer within `timeout`.
pub(super) fn timed_out(timeout: Duration) -> String {
    format!(
        "did not answer within {} ms (limits.trustTimeoutMs)",
        timeout.as_millis()
    )
}

/// An open question about one server: the pending decision is published
/// when it begins; dropped unanswered (the start was abandoned), the
/// pending decision is taken back unless the host is going.
pub(super) struct Asking<'a> {
    gate: &'a Gate,
    publisher: &'a SessionPublisher,
    id: &'a str,
    changed: bool,
    cancel: &'a CancellationToken,
    answered: bool,
}

impl<'a> Asking<'a> {
    /// Publishes the pending decision about server `id` (and a log record).
    pub(super) fn begin(
        gate: &'a Gate,
        publisher: &'a SessionPublisher,
        id: &'a str,
        reason: TrustReason,
        cancel: &'a CancellationToken,
    ) -> Self {
        let changed = reason == TrustReason::Changed;
        let why = match changed {
            true => "its configuration changed since the last decision",
            false => "no decision about its configuration is remembered",
        };
        let decision = TrustDecision {
            state: TrustState::Pending,
            remembered: false,
            changed,
            message: format!("waiting for the app's trust decision ({why})"),
        };
        let message = format!("server {id:?}: asking the app whether to trust it ({why})");
        gate.record(
            publisher,
            id,
            |d| d.trust = Some(decision),
            (LogLevel::Info, message),
        );
        Self {
            gate,
            publisher,
            id,
            changed,
            cancel,
            answered: false,
        }
    }

    /// Records `answer` (remembered as the app said) and says whether the
    /// server may start.
    ///
    /// # Errors
    /// `trust_refused` (the app said no), `trust_failed` (its callback
    /// failed: `answer` is `Err`).
    pub(super) async fn end(
        mut self,
        answer: Result<TrustAnswer, String>,
        digest: &str,
    ) -> HostResult<Admission> {
        let id = self.id;
        // A trust for this host only is held by it; a refusal that is not
        // remembered is not held at all (the next start asks again).
        if let Some(a) = answer.as_ref().ok().filter(|a| a.trust || a.remember) {
            self.gate
                .store
                .remember(id, digest, a.trust, a.remember)
                .await;
        }
        self.answered = true;
        let (state, level, message, code) = match &answer {
            Ok(a) => {
                let kept = match (a.remember, a.trust) {
                    (true, _) => "remembered under dataDir",
                    (false, true) => "for this host only",
                    (false, false) => "not remembered",
                };
                match a.trust {
                    true => (
                        TrustState::Trusted,
                        LogLevel::Info,
                        format!("trusted by the app ({kept})"),
                        None,
                    ),
                    false => (
                        TrustState::Refused,
                        LogLevel::Info,
                        format!("refused by the app ({kept})"),
                        Some(ErrorCode::TrustRefused),
                    ),
                }
            }
            Err(why) => (
                TrustState::Failed,
                LogLevel::Warn,
                format!("not trusted: the app's trust callback {why}"),
                Some(ErrorCode::TrustFailed),
            ),
        };
        let decision = TrustDecision {
            state,
            remembered: false,
            changed: self.changed,
            message: message.clone(),
        };
        let log = (level, format!("server {id:?} is {message}"));
        self.gate
            .record(self.publisher, id, |d| d.trust = Some(decision), log);
        match code {
            None => Ok(Admission::Asked),
            Some(code) => Err(HostError::new(code, format!("server {id:?} is {message}"))),
        }
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if self.answered || self.cancel.is_cancelled() {
            return;
        }
        let message = format!(
            "server {:?}: the trust question was withdrawn (its start ended)",
            self.id
        );
        (self.gate).record(
            self.publisher,
            self.id,
            |d| d.trust = None,
            (LogLevel::Debug, message),
        );
    }
}
