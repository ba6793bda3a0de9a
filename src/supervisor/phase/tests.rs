//! The transition table: one row per (phase, input) that matters, giving the
//! next phase and the effects in order. Rows read
//! `"what": from, input => next phase, [effects];`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ahp_types::state::{
    McpAuthRequiredReason, McpServerAuthRequiredState, McpServerReadyState, McpServerState,
    McpServerStoppedState, ProtectedResourceMetadata,
};

use super::Effect::*;
use super::Input as I;
use super::Phase as P;
use super::*;
use crate::auth::{requirement, AuthChallenge};
use crate::error::ErrorCode;
use crate::session::{restarting_error_state, server_error_state};

const HEADER: &str =
    r#"Bearer resource_metadata="/.well-known/oauth-protected-resource/mcp", scope="files:read""#;

/// Checks rows against [`transition`] under `rules`.
macro_rules! table {
    ($rules:expr;
     $($name:literal: $from:expr, $input:expr => $to:expr, [$($fx:expr),* $(,)?];)*) => {{
        let rules = $rules;
        $(
            let (next, effects) = transition(&Machine::from($from), $input, &rules);
            assert_eq!(next.phase, $to, "{}: next phase", $name);
            assert_eq!(effects, vec![$($fx),*], "{}: effects", $name);
        )*
    }};
}

impl From<Phase> for Machine {
    fn from(phase: Phase) -> Self {
        Machine {
            phase,
            ..Machine::default()
        }
    }
}

fn rules() -> Rules {
    Rules {
        limits: Limits {
            max_restarts: 2,
            restart_backoff_ms: 100,
            restart_backoff_max_ms: 1_000,
            restart_reset_after_ms: 60_000,
            ..Limits::default()
        },
        endpoint: Some(
            url::Url::parse("https://mcp.example.test/mcp").unwrap_or_else(|e| panic!("{e}")),
        ),
        client_id: Some("app".to_owned()),
        headers_provider: false,
        required: false,
        lazy: false,
    }
}

fn stdio_rules() -> Rules {
    Rules {
        endpoint: None,
        ..rules()
    }
}

/// One fixed instant: `ready` phases compare equal across rows.
fn t0() -> Instant {
    static T0: OnceLock<Instant> = OnceLock::new();
    *T0.get_or_init(Instant::now)
}

fn starting(crashes: u32) -> Phase {
    P::Starting { crashes }
}

fn ready(crashes: u32) -> Phase {
    P::Ready {
        crashes,
        since: t0(),
    }
}

fn crashed(crashes: u32) -> Phase {
    let reason = "exited with code 1".to_owned();
    P::Crashed {
        crashes,
        since: t0(),
        reason,
    }
}

fn challenged(crashes: u32, restore: bool) -> Phase {
    let header = HEADER.to_owned();
    P::Challenged {
        crashes,
        header,
        restore,
    }
}

fn auth_req(crashes: u32) -> Phase {
    P::AuthRequired { crashes }
}

fn backing_off(crashes: u32) -> Phase {
    P::BackingOff { crashes }
}

/// `phase` with a pushed token.
fn with_token(phase: Phase) -> Machine {
    let token = Some(token("tok"));
    Machine {
        creds: Creds {
            token,
            ..Creds::default()
        },
        ..Machine::from(phase)
    }
}

/// `phase` while `authRequired` (no description) is the shown state.
fn showing_auth(phase: Phase) -> Machine {
    Machine {
        shown_auth: Some(Box::new(required(false))),
        ..Machine::from(phase)
    }
}

fn show_starting() -> Effect {
    SetState(McpServerState::Starting(Default::default()))
}

fn show_stopped() -> Effect {
    SetState(McpServerState::Stopped(McpServerStoppedState {}))
}

fn show_ready() -> Effect {
    SetState(McpServerState::Ready(McpServerReadyState {}))
}

fn show_error(e: &HostError) -> Effect {
    SetState(server_error_state(e.code, e.message.clone()))
}

fn show_exited(message: &str) -> Effect {
    SetState(server_error_state(ErrorCode::ServerExited, message))
}

fn show_auth(required: McpServerAuthRequiredState) -> Effect {
    SetState(McpServerState::AuthRequired(Box::new(required)))
}

/// The host's shutdown (`ServerHandle::shutdown`).
fn shutdown() -> Input {
    I::Shutdown(Leaving::ShutDown)
}

/// The paused chat tool calls end because the server leaves for `why`.
fn end(why: Leaving) -> Effect {
    EndToolAuthWaits(why)
}

fn refused() -> Effect {
    Reply(Err(not_waiting()))
}

fn error(e: &HostError) -> Effect {
    Log(LogLevel::Error, e.message.clone())
}

fn info(message: &str) -> Effect {
    Log(LogLevel::Info, message.to_owned())
}

fn token(t: &str) -> Secret {
    Secret(t.to_owned())
}

fn failure(code: ErrorCode, message: &str) -> HostError {
    HostError::new(code, message)
}

fn failed(error: HostError, challenge: Option<&str>) -> Input {
    let challenge = challenge.map(str::to_owned);
    I::ConnectionFailed { error, challenge }
}

fn discover(restore: bool) -> Effect {
    let header = HEADER.to_owned();
    Discover { header, restore }
}

fn resource() -> ProtectedResourceMetadata {
    serde_json::from_value(serde_json::json!({
        "resource": "https://mcp.example.test/mcp",
        "authorization_servers": ["https://as.example.test"],
        "scopes_supported": ["files:read", "files:write"],
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

fn required(had_token: bool) -> McpServerAuthRequiredState {
    let rules = rules();
    let endpoint = rules.endpoint.as_ref().unwrap_or_else(|| panic!("http"));
    let challenge = AuthChallenge::from_header(HEADER, endpoint);
    requirement(&challenge, had_token, resource(), Some("app"))
}

#[test]
fn stopped_or_failed_rows() {
    let e401 = failure(ErrorCode::AuthRequired, "401");
    table! { rules();
        "start": P::Stopped, I::Start => starting(0), [show_starting(), Open];
        "enable": P::Failed, I::SetEnabled(true) => starting(0), [show_starting(), Open];
        "authenticate is refused": P::Stopped, I::Authenticate(token("t")) => P::Stopped,
            [refused()];
        "sign-in starts": P::Failed, I::UseOAuth => starting(0),
            [AdoptOAuth, HoldReply(Supersede::Cancel), show_starting(), Open];
        "stop after a failure": P::Failed, I::Stop => P::Stopped, [show_stopped()];
        "stop again is answered again": P::Stopped, I::SetEnabled(false) => P::Stopped,
            [show_stopped()];
        "connection failure is ignored": P::Stopped, failed(e401, None) => P::Stopped, [];
        "step-up token is ignored": P::Stopped, I::StepUpToken(token("t")) => P::Stopped, [Ack];
        "shutdown acks": P::Failed, shutdown() => P::Exited, [show_stopped(), Ack];
        "commands closed": P::Stopped, I::CommandsClosed => P::Exited, [];
        "disposed": P::Stopped, I::Disposed => P::Exited, [];
        "exited stays exited": P::Exited, I::Start => P::Exited, [];
    }
    let (next, _) = transition(&P::Failed.into(), I::UseOAuth, &rules());
    assert!(next.creds.oauth);
    let (next, _) = transition(&P::Stopped.into(), I::StepUpToken(token("t")), &rules());
    assert_eq!(
        next.creds.token, None,
        "a step-up token is kept only while ready"
    );
}

#[test]
fn starting_rows() {
    let spawn = failure(ErrorCode::SpawnFailed, "cannot start ./srv: not found");
    let start_failed = Log(LogLevel::Error, format!("start failed: {}", spawn.message));
    let opened = |tools_changed| I::Opened {
        at: t0(),
        tools_changed,
    };
    table! { rules();
        "enable is a no-op": starting(1), I::SetEnabled(true) => starting(1), [];
        "authenticate is refused": starting(1), I::Authenticate(token("t")) => starting(1),
            [refused()];
        "start restarts the attempt, keeps the count": starting(1), I::Start => starting(1),
            [end(Leaving::Restarted), CancelOpen, show_starting(), Open];
        "sign-in restarts the attempt": starting(1), I::UseOAuth => starting(1),
            [CancelOpen, AdoptOAuth, HoldReply(Supersede::Cancel), show_starting(), Open];
        "stop while starting": starting(1), I::Stop => P::Stopped,
            [end(Leaving::Stopped), CancelOpen, show_stopped()];
        "shutdown while starting": starting(1), shutdown() => P::Exited,
            [end(Leaving::ShutDown), show_stopped(), Ack];
        "opened, catalogue changed": starting(1), opened(true) => ready(1),
            [SetChallenge(None), show_ready(), PublishTools, Answer(Ok(()))];
        "opened, catalogue unchanged": starting(1), opened(false) => ready(1),
            [SetChallenge(None), show_ready(), Answer(Ok(()))];
        "open failed": starting(1), I::OpenFailed(spawn.clone()) => P::Failed,
            [end(Leaving::Failed(ErrorCode::SpawnFailed)), start_failed, Answer(Err(spawn.clone())),
             show_error(&spawn)];
        "challenged without credentials: try stored ones":
            starting(1), I::Challenged(HEADER.to_owned()) => challenged(1, true), [discover(true)];
        "challenged with a token": with_token(starting(1)), I::Challenged(HEADER.to_owned())
            => challenged(1, false), [discover(false)];
        "disposed": starting(1), I::Disposed => P::Exited, [];
    }
    table! { stdio_rules();
        "a stdio challenge cannot happen: idle, no state":
            starting(1), I::Challenged(HEADER.to_owned()) => P::Failed, [];
    }
    let mut tried = Machine::from(starting(1));
    tried.creds.restore_tried = true;
    let (next, _) = transition(&tried, opened(false), &rules());
    assert!(
        !next.creds.restore_tried,
        "ready resets the stored-credentials try"
    );
}

#[test]
fn challenged_rows() {
    let e = failure(ErrorCode::AuthDiscoveryFailed, "no metadata");
    let found = || I::Discovered(Discovery::Resource(resource()));
    let refused_token = |had_token| Answer(Err(token_refused(&required(had_token))));
    let challenge = SetChallenge(Some(HEADER.to_owned()));
    table! { rules();
        "metadata found": challenged(1, true), found() => auth_req(1),
            [challenge.clone(), refused_token(false), show_auth(required(false))];
        "metadata found after a token: expired": with_token(challenged(1, false)), found()
            => auth_req(1), [challenge.clone(), refused_token(true), show_auth(required(true))];
        "stored credentials: retry quietly": challenged(1, true),
            I::Discovered(Discovery::Restored) => starting(1),
            [info("signing in with stored credentials"), Open];
        "discovery failed": challenged(1, true), I::Discovered(Discovery::Failed(e.clone()))
            => P::Failed, [end(Leaving::Failed(ErrorCode::AuthDiscoveryFailed)), error(&e),
                Answer(Err(e.clone())), show_error(&e)];
        "no commands while discovering": challenged(1, true), I::Stop => challenged(1, true), [];
    }
    assert_eq!(required(false).reason, McpAuthRequiredReason::Required);
    assert_eq!(required(true).reason, McpAuthRequiredReason::Expired);
    let scopes = Some(vec!["files:read".to_owned()]);
    assert_eq!(required(false).required_scopes, scopes);
    let (next, _) = transition(&challenged(1, true).into(), found(), &rules());
    assert!(next.creds.restore_tried && next.shown_auth.is_some());
    let restored = I::Discovered(Discovery::Restored);
    let (next, _) = transition(&challenged(1, true).into(), restored, &rules());
    assert!(next.creds.oauth && next.creds.restore_tried);
}

#[test]
fn auth_required_rows() {
    let mut described = required(false);
    described.description = Some("access_denied".to_owned());
    let denied = || I::AuthFailed("access_denied".to_owned());
    let e401 = failure(ErrorCode::AuthRequired, "401");
    table! { rules();
        "authenticate retries quietly": showing_auth(auth_req(1)), I::Authenticate(token("t"))
            => starting(1), [HoldReply(Supersede::Drop), Open];
        "an empty authenticate revokes": showing_auth(auth_req(1)), I::Authenticate(token(""))
            => auth_req(1), [Reply(Ok(()))];
        "sign-in retries quietly": showing_auth(auth_req(1)), I::UseOAuth => starting(1),
            [AdoptOAuth, HoldReply(Supersede::Cancel), Open];
        "start retries quietly": showing_auth(auth_req(1)), I::Start => starting(1), [Open];
        "stop": auth_req(1), I::Stop => P::Stopped, [end(Leaving::Stopped), show_stopped()];
        "shutdown acks": auth_req(1), shutdown() => P::Exited,
            [end(Leaving::ShutDown), show_stopped(), Ack];
        "enable is a no-op": auth_req(1), I::SetEnabled(true) => auth_req(1), [];
        "connection failure is ignored": auth_req(1), failed(e401, None) => auth_req(1), [];
        "step-up token is ignored": auth_req(1), I::StepUpToken(token("t")) => auth_req(1), [Ack];
        "a failed sign-in is described": showing_auth(auth_req(1)), denied() => auth_req(1),
            [show_auth(described.clone()), Ack];
        "described during a quiet retry too": showing_auth(starting(1)), denied() => starting(1),
            [show_auth(described.clone()), Ack];
        "not described once another state is shown": ready(0), denied() => ready(0), [Ack];
    }
    let (next, _) = transition(
        &showing_auth(auth_req(1)),
        I::Authenticate(token("t")),
        &rules(),
    );
    assert_eq!(next.creds.token, Some(token("t")));
    assert!(
        next.shown_auth.is_some(),
        "a quiet retry still shows authRequired"
    );
    let revoke = I::Authenticate(token(""));
    let (next, _) = transition(&with_token(auth_req(0)), revoke, &rules());
    assert_eq!(next.creds.token, None);
    let (next, _) = transition(&with_token(auth_req(0)), I::UseOAuth, &rules());
    assert!(
        next.creds.oauth && next.creds.token.is_none(),
        "a sign-in replaces a pushed token"
    );
}

#[test]
fn ready_rows() {
    let stop = Close(Closing::Stopped);
    let e401 = failure(
        ErrorCode::AuthRequired,
        "tools/call \"x\" on s needs a new sign-in",
    );
    let redirect = failure(ErrorCode::RedirectRefused, "redirect refused");
    let crash = I::Crashed("exited with code 1".to_owned());
    table! { rules();
        "enable is a no-op": ready(1), I::SetEnabled(true) => ready(1), [];
        "authenticate is refused": ready(1), I::Authenticate(token("t")) => ready(1), [refused()];
        "a step-up token goes into the bearer cell": ready(1), I::StepUpToken(token("t"))
            => ready(1), [WriteBearer, Ack];
        "stop": ready(1), I::Stop => P::Stopped,
            [end(Leaving::Stopped), stop.clone(), show_stopped()];
        "start restarts, resets the count": ready(1), I::Start => starting(0),
            [end(Leaving::Restarted), stop.clone(), show_starting(), Open];
        "sign-in reconnects": ready(1), I::UseOAuth => starting(0),
            [AdoptOAuth, HoldReply(Supersede::Cancel), stop.clone(), show_starting(), Open];
        "shutdown closes, acks": ready(1), shutdown() => P::Exited,
            [end(Leaving::ShutDown), stop.clone(), show_stopped(), Ack];
        "commands closed: close": ready(1), I::CommandsClosed => P::Exited,
            [end(Leaving::ShutDown), stop.clone()];
        "disposed: no close": ready(1), I::Disposed => P::Exited, [];
        "a refused refresh re-enters discovery": ready(1), failed(e401.clone(), Some(HEADER))
            => challenged(1, true), [stop.clone(), discover(true)];
        "auth failure without a challenge is an error": ready(1), failed(e401.clone(), None)
            => P::Failed,
            [end(Leaving::Failed(ErrorCode::AuthRequired)), stop.clone(), error(&e401),
             show_error(&e401)];
        "a refused redirect is an error": ready(1), failed(redirect.clone(), Some(HEADER))
            => P::Failed,
            [end(Leaving::Failed(ErrorCode::RedirectRefused)), stop.clone(), error(&redirect),
             show_error(&redirect)];
        "list changed: debounce": ready(1), I::ListChanged => ready(1), [ScheduleRelist];
        "debounce passed: relist": ready(1), I::RelistDue => ready(1), [Relist];
        "crash: discard first": ready(1), crash => crashed(1),
            [end(Leaving::Crashed), Close(Closing::Crashed("exited with code 1".to_owned()))];
    }
    let (next, _) = transition(&ready(1).into(), I::StepUpToken(token("t2")), &rules());
    assert_eq!(next.creds.token, Some(token("t2")), "kept for reconnects");
}

#[test]
fn crash_and_backoff_rows() {
    let discarded = |after| I::Discarded {
        at: t0() + Duration::from_secs(after),
    };
    let crash = error(&failure(
        ErrorCode::ServerExited,
        "server exited with code 1",
    ));
    let message = "server exited with code 1";
    let show_crash = |ms: u64, n: u32| {
        SetState(restarting_error_state(
            ErrorCode::ServerExited,
            message,
            (ms, n, 2),
        ))
    };
    let limit = show_exited("server exited with code 1; restart limit reached (2 restarts)");
    let restart = |n: u32, ms: u64| info(&format!("restarting in {ms} ms (restart {n} of 2)"));
    let after = |ms| ScheduleRestart(Duration::from_millis(ms));
    table! { rules();
        "first crash backs off": crashed(0), discarded(1) => backing_off(1),
            [crash.clone(), show_crash(100, 1), restart(1, 100), after(100)];
        "second crash backs off twice as long": crashed(1), discarded(1) => backing_off(2),
            [crash.clone(), show_crash(200, 2), restart(2, 200), after(200)];
        "restart limit": crashed(2), discarded(1) => P::Failed, [crash.clone(), limit];
        "a long uptime resets the count": crashed(2), discarded(60) => backing_off(1),
            [crash.clone(), show_crash(100, 1), restart(1, 100), after(100)];
        "no commands while discarding": crashed(0), I::Stop => crashed(0), [];
        "backoff elapsed": backing_off(1), I::BackoffElapsed => starting(1),
            [show_starting(), Open];
        "start resets the count": backing_off(1), I::Start => starting(0), [show_starting(), Open];
        "sign-in resets the count": backing_off(1), I::UseOAuth => starting(0),
            [AdoptOAuth, HoldReply(Supersede::Cancel), show_starting(), Open];
        "stop while backing off": backing_off(1), I::Stop => P::Stopped, [show_stopped()];
        "shutdown while backing off": backing_off(1), shutdown() => P::Exited,
            [show_stopped(), Ack];
        "authenticate is refused and ends the wait": backing_off(1), I::Authenticate(token("t"))
            => starting(1), [refused(), show_starting(), Open];
        "enable ends the wait": backing_off(1), I::SetEnabled(true) => starting(1),
            [show_starting(), Open];
        "a step-up token ends the wait": backing_off(1), I::StepUpToken(token("t"))
            => starting(1), [Ack, show_starting(), Open];
    }
}

/// Issue 9: every transition that leaves `ready`, `starting` or
/// `authRequired` ends the tool-auth waits on the server first, with the
/// cause; a host-run sign-in, a quiet retry or a 401 re-entering
/// `authRequired` does not (those calls resume once `ready`).
#[test]
fn leaving_rows_end_the_tool_auth_waits() {
    let stop = Close(Closing::Stopped);
    let crash = I::Crashed("exited with code 1".to_owned());
    let e401 = failure(ErrorCode::AuthRequired, "401 invalid_token");
    let removed = I::Shutdown(Leaving::Removed);
    table! { rules();
        "ready, stop request": ready(0), I::Stop => P::Stopped,
            [end(Leaving::Stopped), stop.clone(), show_stopped()];
        "ready, toggled off": ready(0), I::SetEnabled(false) => P::Stopped,
            [end(Leaving::Disabled), stop.clone(), show_stopped()];
        "ready, removed": ready(0), removed.clone() => P::Exited,
            [end(Leaving::Removed), stop.clone(), show_stopped(), Ack];
        "ready, host shutdown": ready(0), shutdown() => P::Exited,
            [end(Leaving::ShutDown), stop.clone(), show_stopped(), Ack];
        "ready, crash": ready(0), crash.clone() => crashed(0),
            [end(Leaving::Crashed), Close(Closing::Crashed("exited with code 1".to_owned()))];
        "ready, start request restarts": ready(0), I::Start => starting(0),
            [end(Leaving::Restarted), stop.clone(), show_starting(), Open];
        "ready, sign-in reconnects: NO end (calls resume once ready)": ready(0), I::UseOAuth
            => starting(0),
            [AdoptOAuth, HoldReply(Supersede::Cancel), stop.clone(), show_starting(), Open];
        "ready, 401 invalid_token re-enters discovery: NO end (calls resume once ready)":
            with_token(ready(0)), failed(e401, Some(HEADER)) => challenged(0, false),
            [stop.clone(), discover(false)];
        "authRequired, stop request": auth_req(0), I::Stop => P::Stopped,
            [end(Leaving::Stopped), show_stopped()];
        "authRequired, toggled off": auth_req(0), I::SetEnabled(false) => P::Stopped,
            [end(Leaving::Disabled), show_stopped()];
        "authRequired, removed": auth_req(0), removed.clone() => P::Exited,
            [end(Leaving::Removed), show_stopped(), Ack];
        "authRequired, authenticate retries: NO end": showing_auth(auth_req(0)),
            I::Authenticate(token("t")) => starting(0), [HoldReply(Supersede::Drop), Open];
        "authRequired, sign-in retries: NO end": showing_auth(auth_req(0)), I::UseOAuth
            => starting(0), [AdoptOAuth, HoldReply(Supersede::Cancel), Open];
        "starting, stop request": starting(0), I::Stop => P::Stopped,
            [end(Leaving::Stopped), CancelOpen, show_stopped()];
        "starting, toggled off": starting(0), I::SetEnabled(false) => P::Stopped,
            [end(Leaving::Disabled), CancelOpen, show_stopped()];
        "starting, removed": starting(0), removed => P::Exited,
            [end(Leaving::Removed), show_stopped(), Ack];
        "starting, start request restarts": starting(0), I::Start => starting(0),
            [end(Leaving::Restarted), CancelOpen, show_starting(), Open];
        "starting, sign-in: NO end": starting(0), I::UseOAuth => starting(0),
            [CancelOpen, AdoptOAuth, HoldReply(Supersede::Cancel), show_starting(), Open];
        "stopped: nothing can wait, nothing ends": P::Stopped, I::Stop => P::Stopped,
            [show_stopped()];
        "backing off: nothing can wait, nothing ends": backing_off(1), I::Stop => P::Stopped,
            [show_stopped()];
    }
}

#[test]
fn leaving_causes_have_stable_codes() {
    let codes = [
        (Leaving::Stopped, "server_stopped"),
        (Leaving::Disabled, "server_disabled"),
        (Leaving::Removed, "server_removed"),
        (Leaving::Crashed, "server_exited"),
        (Leaving::Restarted, "server_restarted"),
        (
            Leaving::Failed(ErrorCode::RedirectRefused),
            "redirect_refused",
        ),
        (Leaving::ShutDown, "disposed"),
    ];
    for (why, code) in codes {
        let e = why.error("srv");
        assert_eq!(e.code.as_str(), code, "{why:?}");
        assert!(e.message.starts_with("srv "), "{}", e.message);
    }
}

#[test]
fn secrets_never_show_in_debug() {
    let machine = with_token(starting(0));
    let shown = format!("{machine:?} {:?}", I::Authenticate(token("tok")));
    assert!(!shown.contains("tok\""), "{shown}");
    assert!(shown.contains("Secret(…)"), "{shown}");
}

/// Every input that takes a server out of `ready` (but `Disposed`, which
/// ends the actor without effects; the actor then closes the channel)
/// closes the connection (and with it the `mcp://` channel) before any
/// state is emitted, so no channel outlives its connection (MCP Apps).
#[test]
fn leaving_ready_closes_the_connection_before_any_state() {
    let error = HostError::new(ErrorCode::RedirectRefused, "refused");
    let refused = HostError::new(ErrorCode::AuthRequired, "refused");
    let inputs = [
        I::Stop,
        I::SetEnabled(false),
        I::Start,
        I::UseOAuth,
        I::Shutdown(Leaving::Removed),
        I::Shutdown(Leaving::ShutDown),
        I::CommandsClosed,
        I::Crashed("exited".into()),
        I::ConnectionFailed {
            error,
            challenge: None,
        },
        I::ConnectionFailed {
            error: refused,
            challenge: Some(HEADER.into()),
        },
    ];
    for r in [rules(), stdio_rules()] {
        for input in inputs.clone() {
            let (next, effects) = transition(&Machine::from(ready(0)), input.clone(), &r);
            assert!(
                !matches!(next.phase, P::Ready { .. }),
                "{input:?} stays ready"
            );
            let close = effects.iter().position(|e| matches!(e, Close(_)));
            let state = effects.iter().position(|e| matches!(e, SetState(_)));
            assert!(close.is_some(), "{input:?}: no Close in {effects:?}");
            assert!(
                state.is_none_or(|s| Some(s) > close),
                "{input:?}: {effects:?}"
            );
        }
    }
    let (next, effects) = transition(&Machine::from(ready(0)), I::Disposed, &rules());
    assert_eq!((next.phase, effects), (P::Exited, vec![]));
}
