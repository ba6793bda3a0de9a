//! Chat tool calls paused on a step-up challenge (AHP 1.0 "Tool-call-level
//! authentication"; MCP 2025-11-25 "Authorization › Scope challenge
//! handling": a 403 `insufficient_scope` mid-call).
//!
//! A paused call registers a wait keyed by its AHP tool call
//! ([`CallKey`]: chat, turn, tool call id) and sleeps until one of:
//!
//! - `authenticate` hands over a token for the advertised resource
//!   ([`StepUpWaits::take_for_resource`], then [`ResumableCall::resume`])
//!   → [`AuthWaitEnd::Token`];
//! - a host-run sign-in reconnected the server with new tokens
//!   ([`StepUpWaits::resume_server`]) → [`AuthWaitEnd::Token`];
//! - the client completes the tool call as failed
//!   ([`StepUpWaits::cancel_call`]) → [`AuthWaitEnd::ClientCancelled`];
//! - the caller cancels → [`AuthWaitEnd::Gone`];
//! - a call paused on a token its server refused mid-call (401
//!   `invalid_token`, registered with [`StepUpWaits::register_expired`]):
//!   `authenticate` reconnects the server with the new token first, then
//!   resumes it ([`AuthWaitEnd::Token`]) or, when the server refuses that
//!   token too, fails it ([`ResumableCall::refuse`] → [`AuthWaitEnd::Refused`]);
//! - its server left the state the wait depended on (stopped, disabled,
//!   removed, crashed, restarted, failed, shut down: [`Leaving`]); the
//!   server's actor ends the waits in the same step
//!   ([`StepUpWaits::end_server`]) → [`AuthWaitEnd::Ended`].
//!
//! ## Lock
//!
//! [`StepUpWaits`] owns one `Mutex`. It is the outermost lock of the crate
//! (see the `## Lock order` section of [`crate::host`]): while it is held,
//! the callbacks given to [`StepUpWaits::cancel_call`], [`StepUpWaits::end_server`]
//! and [`StepUpWaits::register_expired`] may take the session lock. Never call a method of this type while holding it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use ahp_types::state::ProtectedResourceMetadata;
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult, AHP_AUTH_REQUIRED};

/// Identifies one AHP tool call: chat channel URI, turn id, tool call id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallKey {
    /// Chat channel URI.
    pub chat: String,
    /// The chat's turn.
    pub turn_id: String,
    /// The AHP tool call id.
    pub tool_call_id: String,
}

/// How a paused call's failed completion shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shown {
    /// The tool call's display name.
    pub display_name: String,
    /// The `_meta` of the call's AHP tool-call actions (an App tool call's
    /// `{ui}`, see `crate::chat`); `None` for an ordinary call.
    pub meta: Option<Map<String, Value>>,
}

impl From<&str> for Shown {
    fn from(display_name: &str) -> Self {
        Self {
            display_name: display_name.to_owned(),
            meta: None,
        }
    }
}

/// A chat tool call waiting for a step-up token.
struct AuthWait {
    /// Customization id of the server that sent the challenge.
    server_id: String,
    /// The tool call as its failed completion shows it.
    shown: Shown,
    /// The protected resource the call's challenge advertised (RFC 9728).
    resource: ProtectedResourceMetadata,
    /// Scopes the challenge asked for.
    required_scopes: Vec<String>,
    /// The server refused the call's token (401): a new token needs a
    /// reconnect, not just a new bearer on the live connection.
    reconnect: bool,
    tx: oneshot::Sender<AuthWaitEnd>,
}

/// How a step-up wait ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthWaitEnd {
    /// A token was installed (or the server signed in again): retry the request.
    Token,
    /// The client completed the tool call as failed (`chat/toolCallComplete`).
    ClientCancelled,
    /// The caller cancelled, or the wait was dropped.
    Gone,
    /// `authenticate` brought a token the server refused on reconnect (the
    /// error of that refusal, `auth_required` -32007): the call fails.
    Refused(HostError),
    /// The server left the state the wait depended on; the tool call was
    /// already settled (input-needed entry removed, completed as failed with
    /// [`Leaving::error`]) by [`StepUpWaits::end_server`].
    Ended(Leaving),
}

/// Why a server left `ready`, `starting` or `authRequired` in a way that
/// ends the chat tool calls paused on it (issue 9: "every server transition
/// settles what depends on it"). A host-run sign-in reconnecting the server,
/// or a 401 `invalid_token` taking it to `authRequired`, is not a `Leaving`:
/// paused calls resume after those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaving {
    /// `session/mcpServerStopRequested` (`server_stopped`).
    Stopped,
    /// Toggled off (`server_disabled`).
    Disabled,
    /// `remove` (`server_removed`).
    Removed,
    /// The connection or process ended on its own (`server_exited`).
    Crashed,
    /// A start request restarted a running server (`server_restarted`).
    Restarted,
    /// The server went to `error` with this code (e.g. `redirect_refused`,
    /// a failed retry's `connect_failed`).
    Failed(ErrorCode),
    /// The host shut down or was disposed (`disposed`).
    ShutDown,
}

impl Leaving {
    /// The stable code a paused call fails with.
    pub fn code(self) -> ErrorCode {
        match self {
            Self::Stopped => ErrorCode::ServerStopped,
            Self::Disabled => ErrorCode::ServerDisabled,
            Self::Removed => ErrorCode::ServerRemoved,
            Self::Crashed => ErrorCode::ServerExited,
            Self::Restarted => ErrorCode::ServerRestarted,
            Self::Failed(code) => code,
            Self::ShutDown => ErrorCode::Disposed,
        }
    }

    /// The error a call paused on server `server_id` fails with: [`Leaving::code`],
    /// message `"<server_id> <what happened> while the tool call waited for
    /// authentication"`.
    pub fn error(self, server_id: &str) -> HostError {
        let what = match self {
            Self::Stopped => "was stopped",
            Self::Disabled => "was disabled",
            Self::Removed => "was removed",
            Self::Crashed => "exited",
            Self::Restarted => "was restarted",
            Self::Failed(_) => "failed",
            Self::ShutDown => "was shut down with the host",
        };
        HostError::new(
            self.code(),
            format!("{server_id} {what} while the tool call waited for authentication"),
        )
    }
}

/// What a client's `chat/toolCallComplete` means for the calls paused here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallCompletion {
    /// No call waits under that (turn, tool call id): the action is rejected
    /// (echo it on the session channel).
    NotWaiting {
        /// The `rejectionReason`.
        rejection: String,
    },
    /// The call waits on `chat`, but a successful completion cannot end a
    /// call that never ran: the action is rejected.
    Refused {
        /// The call's chat channel URI.
        chat: String,
        /// The `rejectionReason`.
        rejection: String,
    },
    /// The call waits on `chat` and is completed as failed: the action is
    /// applied and the call ends with [`AuthWaitEnd::ClientCancelled`].
    Cancelled {
        /// The call's chat channel URI.
        chat: String,
    },
}

/// Every chat tool call of one host paused on a step-up challenge.
#[derive(Default)]
pub struct StepUpWaits {
    waits: Mutex<HashMap<CallKey, AuthWait>>,
}

/// A registered wait; [`StepUpWait::wait`] sleeps until it ends. Dropping it
/// (or the end of `wait`) removes the registration.
pub struct StepUpWait<'a> {
    waits: &'a StepUpWaits,
    key: CallKey,
    rx: Option<oneshot::Receiver<AuthWaitEnd>>,
}

impl StepUpWait<'_> {
    /// Sleeps until the wait ends or `cancel` fires ([`AuthWaitEnd::Gone`]).
    /// A wait that was already taken out (its end is decided) when `cancel`
    /// fires still returns that end, so a call is settled once.
    pub async fn wait(mut self, cancel: &CancellationToken) -> AuthWaitEnd {
        let Some(mut rx) = self.rx.take() else {
            return AuthWaitEnd::Gone;
        };
        tokio::select! {
            r = &mut rx => r.unwrap_or(AuthWaitEnd::Gone),
            _ = cancel.cancelled() => {
                if self.waits.lock().remove(&self.key).is_some() {
                    AuthWaitEnd::Gone
                } else {
                    rx.await.unwrap_or(AuthWaitEnd::Gone)
                }
            }
        }
    }
}

impl Drop for StepUpWait<'_> {
    fn drop(&mut self) {
        self.waits.lock().remove(&self.key);
    }
}

impl StepUpWaits {
    fn lock(&self) -> MutexGuard<'_, HashMap<CallKey, AuthWait>> {
        self.waits.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers tool call `key` (shown as `shown`: its display name, and
    /// the `_meta` of its actions) of server `server_id` as paused until a token for `resource` covering
    /// `required_scopes` arrives. A second registration under the same key
    /// replaces the first.
    pub fn register(
        &self,
        key: CallKey,
        server: (&str, impl Into<Shown>),
        resource: ProtectedResourceMetadata,
        required_scopes: Vec<String>,
    ) -> StepUpWait<'_> {
        self.insert(key, server, (resource, required_scopes), false, || {})
    }

    /// Like [`StepUpWaits::register`], for a call whose token the server
    /// refused mid-call (401 `invalid_token`): `authenticate` must reconnect
    /// the server with the new token ([`ResumableCall::reconnect`]).
    /// `announce` runs under the lock right after the registration (the
    /// caller emits the call's `auth-required` actions and tells the
    /// server's actor its connection failed), so `authenticate` can take the
    /// call only after the actor got that news. `announce` may take the
    /// session lock, nothing else of this type.
    pub fn register_expired(
        &self,
        key: CallKey,
        server: (&str, impl Into<Shown>),
        resource: ProtectedResourceMetadata,
        required_scopes: Vec<String>,
        announce: impl FnOnce(),
    ) -> StepUpWait<'_> {
        self.insert(key, server, (resource, required_scopes), true, announce)
    }

    fn insert(
        &self,
        key: CallKey,
        (server_id, shown): (&str, impl Into<Shown>),
        (resource, required_scopes): (ProtectedResourceMetadata, Vec<String>),
        reconnect: bool,
        announce: impl FnOnce(),
    ) -> StepUpWait<'_> {
        let (tx, rx) = oneshot::channel();
        let wait = AuthWait {
            server_id: server_id.to_owned(),
            shown: shown.into(),
            resource,
            required_scopes,
            reconnect,
            tx,
        };
        let mut waits = self.lock();
        waits.insert(key.clone(), wait);
        announce();
        drop(waits);
        StepUpWait {
            waits: self,
            key,
            rx: Some(rx),
        }
    }

    /// AHP `authenticate` for the calls paused on `resource` (the RFC 9728
    /// `resource` identifier): checks that `scopes` (when given) cover every
    /// waiting call's required scopes, then takes those calls out of the
    /// waits. The caller hands the token to each call's server, then
    /// [`ResumableCall::resume`]s it (it retries with [`AuthWaitEnd::Token`]).
    ///
    /// Empty (nothing taken) when no call waits for `resource` or `token`
    /// is empty (a revocation is for the server, not for the calls).
    ///
    /// # Errors
    /// `auth_required` with data `{code: -32007, resources: [resource]}`
    /// when `scopes` miss a required scope (see [`require_scopes`]); no call
    /// is taken then.
    pub fn take_for_resource(
        &self,
        resource: &str,
        token: &str,
        scopes: Option<&[String]>,
    ) -> HostResult<Vec<ResumableCall>> {
        let mut waits = self.lock();
        let keys: Vec<CallKey> = waits
            .iter()
            .filter(|(_, w)| w.resource.resource == resource)
            .map(|(k, _)| k.clone())
            .collect();
        if keys.is_empty() || token.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(granted) = scopes {
            for k in &keys {
                let wait = &waits[k];
                require_scopes(&wait.resource, &wait.required_scopes, granted)?;
            }
        }
        Ok(keys
            .iter()
            .filter_map(|k| waits.remove(k))
            .map(|wait| ResumableCall {
                server_id: wait.server_id,
                reconnect: wait.reconnect,
                tx: wait.tx,
            })
            .collect())
    }

    /// Wakes every call paused on server `server_id` with
    /// [`AuthWaitEnd::Token`] (a host-run sign-in reconnected it with new
    /// tokens; each call retries once). Calls of other servers keep waiting.
    pub fn resume_server(&self, server_id: &str) {
        for (_, wait) in take_server(&mut self.lock(), server_id) {
            let _ = wait.tx.send(AuthWaitEnd::Token);
        }
    }

    /// Server `server_id` left the state its paused calls depended on
    /// (`why`): for each of them, in one step under the lock, runs
    /// `settle(key, shown)` (the caller emits
    /// `session/inputNeededRemoved` and the failed `chat/toolCallComplete`)
    /// and wakes it with [`AuthWaitEnd::Ended`]. Calls of other servers keep
    /// waiting; afterwards nothing waits for this server, so `authenticate`
    /// for its resource is refused (unless the server itself waits).
    /// Returns how many calls ended.
    pub fn end_server(
        &self,
        server_id: &str,
        why: Leaving,
        mut settle: impl FnMut(&CallKey, &Shown),
    ) -> usize {
        // The lock stays held while the calls are settled (see the module doc).
        let mut waits = self.lock();
        let ended = take_server(&mut waits, server_id);
        let count = ended.len();
        for (key, wait) in ended {
            settle(&key, &wait.shown);
            let _ = wait.tx.send(AuthWaitEnd::Ended(why));
        }
        drop(waits);
        count
    }

    /// A client's `chat/toolCallComplete` for tool call `tool_call_id` of
    /// turn `turn_id`: decides what it means ([`CallCompletion`]), runs
    /// `echo` with that decision (the caller emits the echoed envelope), and
    /// when it is [`CallCompletion::Cancelled`] ends the call with
    /// [`AuthWaitEnd::ClientCancelled`] — in that order, atomically with
    /// respect to the other methods (the echo precedes anything the woken
    /// call emits).
    pub fn cancel_call<R>(
        &self,
        turn_id: &str,
        tool_call_id: &str,
        success: bool,
        echo: impl FnOnce(&CallCompletion) -> R,
    ) -> R {
        let mut waits = self.lock();
        let key = waits
            .keys()
            .find(|k| k.turn_id == turn_id && k.tool_call_id == tool_call_id)
            .cloned();
        let completion = match &key {
            None => CallCompletion::NotWaiting {
                rejection: format!(
                    "tool call {tool_call_id} is not waiting for authentication on this host"
                ),
            },
            Some(k) if success => CallCompletion::Refused {
                chat: k.chat.clone(),
                rejection: "a tool call waiting for authentication can only be completed as \
                            failed (cancelled)"
                    .to_owned(),
            },
            Some(k) => CallCompletion::Cancelled {
                chat: k.chat.clone(),
            },
        };
        let out = echo(&completion);
        if let (CallCompletion::Cancelled { .. }, Some(key)) = (&completion, key) {
            if let Some(wait) = waits.remove(&key) {
                let _ = wait.tx.send(AuthWaitEnd::ClientCancelled);
            }
        }
        out
    }

    /// The protected resources paused calls wait for, as their RFC 9728
    /// metadata (one per waiting call, in no particular order; the same
    /// shape as the server states' `resource`): listed in the
    /// `invalid_params` error of `authenticate`.
    pub fn advertised_resources(&self) -> Vec<ProtectedResourceMetadata> {
        self.lock().values().map(|w| w.resource.clone()).collect()
    }
}

/// Takes every wait of server `server_id` out of `waits`.
fn take_server(
    waits: &mut HashMap<CallKey, AuthWait>,
    server_id: &str,
) -> Vec<(CallKey, AuthWait)> {
    let keys: Vec<CallKey> = waits
        .iter()
        .filter(|(_, w)| w.server_id == server_id)
        .map(|(k, _)| k.clone())
        .collect();
    keys.into_iter()
        .filter_map(|k| waits.remove(&k).map(|w| (k, w)))
        .collect()
}

/// A paused call taken out of the waits by [`StepUpWaits::take_for_resource`]:
/// its server gets the token first, then [`ResumableCall::resume`] wakes it.
/// Dropped without `resume`, the call ends as [`AuthWaitEnd::Gone`].
#[derive(Debug)]
pub struct ResumableCall {
    /// The customization id of the call's server.
    pub server_id: String,
    /// The server refused the call's token (registered with
    /// [`StepUpWaits::register_expired`]): reconnect it with the new token
    /// before [`ResumableCall::resume`].
    pub reconnect: bool,
    tx: oneshot::Sender<AuthWaitEnd>,
}

impl ResumableCall {
    /// Wakes the call with [`AuthWaitEnd::Token`]: it retries its request.
    pub fn resume(self) {
        let _ = self.tx.send(AuthWaitEnd::Token);
    }

    /// Wakes the call with [`AuthWaitEnd::Refused`]: it fails with `error`
    /// (the server refused the new token).
    pub fn refuse(self, error: HostError) {
        let _ = self.tx.send(AuthWaitEnd::Refused(error));
    }
}

/// The scope-coverage check of AHP `authenticate` (AHP 1.0
/// "Authentication"): `Ok` when `granted` contains every scope of `required`.
///
/// # Errors
/// `auth_required`, message `the token does not grant the required scopes
/// [..]`, data `{code: -32007, resources: [resource]}` (the full RFC 9728
/// metadata object of the resource).
pub fn require_scopes(
    resource: &ProtectedResourceMetadata,
    required: &[String],
    granted: &[String],
) -> HostResult<()> {
    let missing: Vec<&String> = required.iter().filter(|s| !granted.contains(s)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(HostError::new(
        ErrorCode::AuthRequired,
        format!("the token does not grant the required scopes {missing:?}"),
    )
    .with_detail(ErrorDetail::Ahp {
        rpc_code: AHP_AUTH_REQUIRED,
        resources: Some(vec![resource.clone()]),
    }))
}

#[cfg(test)]
mod tests;
