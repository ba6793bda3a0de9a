//! [`Step`]: [`super::transition`] phase by phase. Each method handles the
//! inputs that matter in one phase; anything else is ignored there (the
//! table in `tests.rs` lists the rows).

use std::time::{Duration, Instant};

use ahp_types::state::{
    McpServerReadyState, McpServerStartingState, McpServerState, McpServerStoppedState,
};

use super::{
    not_waiting, token_refused, Closing, Discovery, Effect, Input, Leaving, Machine, Phase, Rules,
    Supersede,
};
use crate::auth::{requirement, AuthChallenge};
use crate::error::ErrorCode;
use crate::events::LogLevel;
use crate::session::{restarting_error_state, server_error_state};

/// One transition in progress: the machine being changed and the effects so far.
pub(super) struct Step<'r> {
    pub(super) m: Machine,
    pub(super) fx: Vec<Effect>,
    pub(super) rules: &'r Rules,
}

impl Step<'_> {
    pub(super) fn apply(&mut self, input: Input) {
        match (self.m.phase.clone(), input) {
            (Phase::Exited, _) => {}
            (_, Input::Disposed) => self.m.phase = Phase::Exited,
            (_, Input::AuthFailed(description)) => self.auth_failed(description),
            // No commands are read while discarding or discovering (below).
            (phase, Input::Denied(error))
                if !matches!(phase, Phase::Crashed { .. } | Phase::Challenged { .. }) =>
            {
                self.denied(phase, error)
            }
            (Phase::Stopped | Phase::Failed, input) => self.idle(input),
            (Phase::Starting { crashes }, input) => self.starting(crashes, input),
            (Phase::Ready { crashes, since }, input) => self.ready(crashes, since, input),
            (Phase::Crashed { .. }, Input::Discarded { at }) => self.discarded(at),
            (Phase::Challenged { .. }, Input::Discovered(found)) => self.discovered(found),
            // No commands are read while discarding or discovering.
            (Phase::Crashed { .. } | Phase::Challenged { .. }, _) => {}
            (Phase::AuthRequired { crashes }, input) => self.auth_required(crashes, input),
            (Phase::BackingOff { crashes }, input) => self.backing_off(crashes, input),
        }
    }

    /// Stopped or failed.
    fn idle(&mut self, input: Input) {
        match input {
            // Published `stopped` by the host already (with its cached tools).
            Input::Dormant => self.m.phase = Phase::Stopped,
            // Published `error` (`policy_denied`) by the host already.
            Input::Blocked => self.m.phase = Phase::Failed,
            Input::SetEnabled(false) if self.rules.lazy => {
                self.fx.push(Effect::DropTools);
                self.stopped();
            }
            Input::Start | Input::SetEnabled(true) => self.start(0, true),
            Input::Authenticate(_) => self.refuse(),
            Input::UseOAuth => {
                self.adopt_oauth();
                self.start(0, true);
            }
            Input::StepUpToken(_) => self.fx.push(Effect::Ack),
            Input::Stop | Input::SetEnabled(false) => self.stopped(),
            Input::Shutdown(_) => self.shutdown(),
            Input::CommandsClosed => self.m.phase = Phase::Exited,
            // ConnectionFailed: no connection; events of other phases.
            _ => {}
        }
    }

    fn starting(&mut self, crashes: u32, input: Input) {
        match input {
            Input::Authenticate(_) => self.refuse(),
            Input::StepUpToken(_) => self.fx.push(Effect::Ack),
            Input::UseOAuth => {
                self.fx.push(Effect::CancelOpen);
                self.adopt_oauth();
                self.start(crashes, true);
            }
            // Restart: drop this attempt.
            Input::Start => {
                self.leave(Leaving::Restarted);
                self.fx.push(Effect::CancelOpen);
                self.start(crashes, true);
            }
            Input::Stop | Input::SetEnabled(false) => {
                self.leave(stop_cause(&input));
                self.fx.push(Effect::CancelOpen);
                if self.rules.lazy && input == Input::SetEnabled(false) {
                    self.fx.push(Effect::DropTools);
                }
                self.stopped();
            }
            Input::Shutdown(why) => {
                self.leave(why);
                self.shutdown();
            }
            Input::CommandsClosed => {
                self.leave(Leaving::ShutDown);
                self.m.phase = Phase::Exited;
            }
            Input::Opened { at, tools_changed } => self.opened(crashes, at, tools_changed),
            // The app's policy or trust refused the start (`crate::policy`,
            // which logged it): denied is an `error`, refused trust `stopped`.
            Input::OpenFailed(e) if refused_by_app(e.code) => {
                self.leave(Leaving::Failed(e.code));
                self.fx.push(Effect::Answer(Err(e.clone())));
                match e.code {
                    ErrorCode::PolicyDenied => {
                        self.set_state(server_error_state(e.code, e.message));
                        self.m.phase = Phase::Failed;
                    }
                    _ => self.stopped(),
                }
            }
            Input::OpenFailed(e) => {
                self.leave(Leaving::Failed(e.code));
                let message = format!("start failed: {}", e.message);
                self.fx.push(Effect::Log(LogLevel::Error, message));
                self.fx.push(Effect::Answer(Err(e.clone())));
                self.set_state(server_error_state(e.code, e.message));
                self.m.phase = Phase::Failed;
            }
            Input::Challenged(header) => self.challenged(crashes, header),
            // The client's reducer already shows `blocking: false`.
            Input::Background => self.m.backgrounded = self.rules.required,
            // SetEnabled(true): already starting; ConnectionFailed: no connection yet.
            _ => {}
        }
    }

    fn opened(&mut self, crashes: u32, at: Instant, tools_changed: bool) {
        self.m.creds.restore_tried = false;
        self.fx.push(Effect::SetChallenge(None));
        self.set_state(McpServerState::Ready(McpServerReadyState {}));
        if tools_changed {
            self.fx.push(Effect::PublishTools);
        }
        // `authenticate` / `authorize` resolve only once `ready` is in the state.
        self.fx.push(Effect::Answer(Ok(())));
        self.m.phase = Phase::Ready { crashes, since: at };
    }

    fn ready(&mut self, crashes: u32, since: Instant, input: Input) {
        match input {
            Input::Authenticate(_) => self.refuse(),
            Input::UseOAuth => {
                self.adopt_oauth();
                self.fx.push(Effect::Close(Closing::Stopped));
                self.start(0, true);
            }
            Input::ConnectionFailed { error, challenge } => {
                let reauth = error.code == ErrorCode::AuthRequired && self.rules.endpoint.is_some();
                match challenge.filter(|_| reauth) {
                    // The app's headers provider is asked again by the
                    // reconnect (a rotated token, as Claude Code's
                    // headersHelper). Chat calls paused on the refused
                    // token end (`server_restarted`): nothing would resume
                    // them, and a retry by the app gets the new headers.
                    Some(_) if self.rules.headers_provider => {
                        self.leave(Leaving::Restarted);
                        self.fx.push(Effect::Close(Closing::Stopped));
                        self.start(crashes, true);
                    }
                    // A refused token (401): the calls paused on it keep
                    // waiting in `authRequired` and resume once `ready`.
                    Some(header) => {
                        self.fx.push(Effect::Close(Closing::Stopped));
                        self.challenged(crashes, header)
                    }
                    None => {
                        self.leave(Leaving::Failed(error.code));
                        self.fx.push(Effect::Close(Closing::Stopped));
                        self.fx
                            .push(Effect::Log(LogLevel::Error, error.message.clone()));
                        self.set_state(server_error_state(error.code, error.message));
                        self.m.phase = Phase::Failed;
                    }
                }
            }
            Input::StepUpToken(token) => {
                self.m.creds.token = Some(token);
                self.fx.extend([Effect::WriteBearer, Effect::Ack]);
            }
            Input::Stop | Input::SetEnabled(false) | Input::IdleElapsed => self.stop_ready(input),
            Input::Start => {
                self.leave(Leaving::Restarted);
                self.fx.push(Effect::Close(Closing::Stopped));
                self.start(0, true);
            }
            Input::Shutdown(why) => {
                self.leave(why);
                self.fx.push(Effect::Close(Closing::Stopped));
                self.shutdown();
            }
            Input::CommandsClosed => {
                self.leave(Leaving::ShutDown);
                self.fx.push(Effect::Close(Closing::Stopped));
                self.m.phase = Phase::Exited;
            }
            Input::ListChanged => self.fx.push(Effect::ScheduleRelist),
            Input::RelistDue => self.fx.push(Effect::Relist),
            Input::Crashed(reason) => {
                self.leave(Leaving::Crashed);
                self.fx
                    .push(Effect::Close(Closing::Crashed(reason.clone())));
                self.m.phase = Phase::Crashed {
                    crashes,
                    since,
                    reason,
                };
            }
            // SetEnabled(true): already running; events of other phases.
            _ => {}
        }
    }

    /// After a crash's connection is gone: restart after a delay, or give up.
    fn discarded(&mut self, at: Instant) {
        let Phase::Crashed {
            crashes,
            since,
            reason,
        } = self.m.phase.clone()
        else {
            return;
        };
        let limits = self.rules.limits;
        let reset = Duration::from_millis(limits.restart_reset_after_ms);
        let crashes = if at.saturating_duration_since(since) >= reset {
            1
        } else {
            crashes + 1
        };
        let message = format!("server {reason}");
        self.fx.push(Effect::Log(LogLevel::Error, message.clone()));
        // A crash the sandbox caused keeps its own code (`sandbox_denied`).
        let exited = match reason.starts_with(crate::transport::sandbox::DENIED_PREFIX) {
            true => ErrorCode::SandboxDenied,
            false => ErrorCode::ServerExited,
        };
        if crashes > limits.max_restarts {
            let message = format!(
                "{message}; restart limit reached ({} restarts)",
                limits.max_restarts
            );
            self.set_state(server_error_state(exited, message));
            self.m.phase = Phase::Failed;
            return;
        }
        let delay = limits.restart_delay_ms(crashes);
        let max = limits.max_restarts;
        self.set_state(restarting_error_state(
            exited,
            message,
            (delay, crashes, max),
        ));
        let note = format!("restarting in {delay} ms (restart {crashes} of {max})");
        self.fx.push(Effect::Log(LogLevel::Info, note));
        self.fx
            .push(Effect::ScheduleRestart(Duration::from_millis(delay)));
        self.m.phase = Phase::BackingOff { crashes };
    }

    /// A 401/403 challenge: discovery next (HTTP only; stdio never gets here).
    fn challenged(&mut self, crashes: u32, header: String) {
        if self.rules.endpoint.is_none() {
            self.m.phase = Phase::Failed;
            return;
        }
        let creds = &self.m.creds;
        let restore = !creds.restore_tried && !creds.oauth && creds.token.is_none();
        self.fx.push(Effect::Discover {
            header: header.clone(),
            restore,
        });
        self.m.phase = Phase::Challenged {
            crashes,
            header,
            restore,
        };
    }

    fn discovered(&mut self, found: Discovery) {
        let Phase::Challenged {
            crashes,
            header,
            restore,
        } = self.m.phase.clone()
        else {
            return;
        };
        match found {
            Discovery::Failed(e) => {
                self.leave(Leaving::Failed(e.code));
                self.fx
                    .push(Effect::Log(LogLevel::Error, e.message.clone()));
                self.fx.push(Effect::Answer(Err(e.clone())));
                self.set_state(server_error_state(e.code, e.message));
                self.m.phase = Phase::Failed;
            }
            Discovery::Restored => {
                self.m.creds.restore_tried = true;
                self.m.creds.oauth = true;
                let note = "signing in with stored credentials".to_owned();
                self.fx.push(Effect::Log(LogLevel::Info, note));
                self.start(crashes, false);
            }
            Discovery::Resource(resource) => {
                self.m.creds.restore_tried |= restore;
                let Some(endpoint) = &self.rules.endpoint else {
                    return;
                };
                let challenge = AuthChallenge::from_header(&header, endpoint);
                let had_token = self.m.creds.token.is_some() || self.m.creds.oauth;
                let client_id = self.rules.client_id.as_deref();
                let required = requirement(&challenge, had_token, resource, client_id);
                self.fx.push(Effect::SetChallenge(Some(header)));
                self.fx.push(Effect::Answer(Err(token_refused(&required))));
                self.set_state(McpServerState::AuthRequired(Box::new(required)));
                self.m.phase = Phase::AuthRequired { crashes };
            }
        }
    }

    fn auth_required(&mut self, crashes: u32, input: Input) {
        match input {
            // Revoke: forget the token, keep waiting.
            Input::Authenticate(token) if token.0.is_empty() => {
                self.m.creds.token = None;
                self.fx.push(Effect::Reply(Ok(())));
            }
            Input::Authenticate(token) => {
                self.m.creds.token = Some(token);
                self.fx.push(Effect::HoldReply(Supersede::Drop));
                self.start(crashes, false);
            }
            Input::UseOAuth => {
                self.adopt_oauth();
                self.start(crashes, false);
            }
            // A quiet retry with the same credentials: calls keep waiting.
            Input::Start => self.start(crashes, false),
            Input::StepUpToken(_) => self.fx.push(Effect::Ack),
            Input::Stop | Input::SetEnabled(false) => {
                self.leave(stop_cause(&input));
                self.stopped();
            }
            Input::Shutdown(why) => {
                self.leave(why);
                self.shutdown();
            }
            Input::CommandsClosed => {
                self.leave(Leaving::ShutDown);
                self.m.phase = Phase::Exited;
            }
            // SetEnabled(true), ConnectionFailed; events of other phases.
            _ => {}
        }
    }

    fn backing_off(&mut self, crashes: u32, input: Input) {
        match input {
            Input::BackoffElapsed => self.start(crashes, true),
            Input::Start => self.start(0, true),
            Input::UseOAuth => {
                self.adopt_oauth();
                self.start(0, true);
            }
            Input::Stop | Input::SetEnabled(false) => self.stopped(),
            Input::Shutdown(_) => self.shutdown(),
            Input::CommandsClosed => self.m.phase = Phase::Exited,
            // Any other command ends the wait early and restarts now (the
            // wait is one `select!` over the timer and the next command).
            Input::Authenticate(_) => {
                self.refuse();
                self.start(crashes, true);
            }
            Input::StepUpToken(_) => {
                self.fx.push(Effect::Ack);
                self.start(crashes, true);
            }
            Input::SetEnabled(true) | Input::ConnectionFailed { .. } => self.start(crashes, true),
            _ => {}
        }
    }

    /// Starts an attempt; `announce` emits `starting` (a retry after
    /// `authenticate` or a sign-in keeps the shown state).
    fn start(&mut self, crashes: u32, announce: bool) {
        if announce {
            let blocking = self.rules.required.then_some(!self.m.backgrounded);
            self.set_state(McpServerState::Starting(McpServerStartingState {
                blocking,
            }));
        }
        self.fx.push(Effect::Open);
        self.m.phase = Phase::Starting { crashes };
    }

    /// Ready: a stop request, a toggle off, or a lazy server's idle time
    /// passed. A lazy server's stop keeps its tools published (the next
    /// call starts it); a toggle off drops them.
    fn stop_ready(&mut self, input: Input) {
        let lazy = self.rules.lazy;
        match input {
            Input::IdleElapsed if !lazy => return,
            Input::IdleElapsed => {
                let message = "idle: stopped (its tools stay published; a call starts it)";
                self.fx
                    .push(Effect::Log(LogLevel::Info, message.to_owned()));
            }
            _ => self.leave(stop_cause(&input)),
        }
        let keep = lazy && input != Input::SetEnabled(false);
        let closing = if keep {
            Closing::Dormant
        } else {
            Closing::Stopped
        };
        self.fx.push(Effect::Close(closing));
        self.stopped();
    }

    /// The policy now denies the server (`setPolicy`): what runs in
    /// `phase` ends (a lazy server's tools go too), then `error`.
    fn denied(&mut self, phase: Phase, error: crate::error::HostError) {
        let leaving = Leaving::Failed(error.code);
        match phase {
            Phase::Starting { .. } => {
                self.leave(leaving);
                self.fx.push(Effect::CancelOpen);
            }
            Phase::Ready { .. } => {
                self.leave(leaving);
                self.fx.push(Effect::Close(Closing::Stopped));
            }
            Phase::AuthRequired { .. } => self.leave(leaving),
            _ => {}
        }
        if self.rules.lazy && !matches!(phase, Phase::Ready { .. }) {
            self.fx.push(Effect::DropTools);
        }
        self.fx.push(Effect::Answer(Err(error.clone())));
        self.set_state(server_error_state(error.code, error.message));
        self.m.phase = Phase::Failed;
    }

    fn stopped(&mut self) {
        self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
        self.m.phase = Phase::Stopped;
    }

    fn shutdown(&mut self) {
        self.set_state(McpServerState::Stopped(McpServerStoppedState {}));
        self.fx.push(Effect::Ack);
        self.m.phase = Phase::Exited;
    }

    /// Ends the tool-auth waits on this server (see [`Effect::EndToolAuthWaits`]).
    fn leave(&mut self, why: Leaving) {
        self.fx.push(Effect::EndToolAuthWaits(why));
    }

    fn refuse(&mut self) {
        self.fx.push(Effect::Reply(Err(not_waiting())));
    }

    /// A host-run sign-in's tokens replace any pushed token; its caller is
    /// answered after the next attempt, a previous one `cancelled`.
    fn adopt_oauth(&mut self) {
        self.m.creds.oauth = true;
        self.m.creds.token = None;
        self.fx.push(Effect::AdoptOAuth);
        self.fx.push(Effect::HoldReply(Supersede::Cancel));
    }

    /// Applies a sign-in failure to the shown `authRequired` state (nothing
    /// once another state replaced it).
    fn auth_failed(&mut self, description: String) {
        if let Some(mut shown) = self.m.shown_auth.clone() {
            shown.description = Some(description);
            self.set_state(McpServerState::AuthRequired(shown));
        }
        self.fx.push(Effect::Ack);
    }

    fn set_state(&mut self, state: McpServerState) {
        if !matches!(state, McpServerState::Starting(_)) {
            self.m.backgrounded = false;
        }
        self.m.shown_auth = match &state {
            McpServerState::AuthRequired(shown) => Some(shown.clone()),
            _ => None,
        };
        self.fx.push(Effect::SetState(state));
    }
}

/// Whether a failed start is the app's refusal: its policy denied the
/// server, or its trust callback refused it or failed.
fn refused_by_app(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::PolicyDenied | ErrorCode::TrustRefused | ErrorCode::TrustFailed
    )
}

/// Why a stop-like input leaves: a stop request or a toggle off.
fn stop_cause(input: &Input) -> Leaving {
    match input {
        Input::SetEnabled(false) => Leaving::Disabled,
        _ => Leaving::Stopped,
    }
}
