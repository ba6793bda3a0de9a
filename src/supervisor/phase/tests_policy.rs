//! The phase machine with the app's policy and trust (issue 32,
//! `crate::policy`): a server denied when it was added stays in the
//! `error` the host published; a start the gate refuses is `error`
//! (`policy_denied`) or `stopped` (`trust_refused`, `trust_failed`),
//! without the `start failed` log the gate already wrote; a server the
//! policy now denies leaves whatever it does for `error`.

use std::time::Instant;

use ahp_types::state::McpServerStoppedState;

use super::tests_lazy::rules;
use super::Effect::*;
use super::Input as I;
use super::Phase as P;
use super::*;
use crate::session::server_error_state;

fn denied() -> HostError {
    HostError::new(
        ErrorCode::PolicyDenied,
        "server \"a\" is denied by policy rule deny[0]",
    )
}

fn starting() -> Machine {
    Machine::from(P::Starting { crashes: 0 })
}

#[test]
fn a_blocked_first_step_stays_failed_without_opening_or_publishing() {
    let (next, fx) = transition(&Machine::default(), I::Blocked, &rules(false));
    assert_eq!((&next.phase, fx), (&P::Failed, vec![]));
    // A start request afterwards is checked by the gate again (an attempt).
    let (next, fx) = transition(&next, I::Start, &rules(false));
    assert!(matches!(next.phase, P::Starting { .. }));
    assert!(fx.contains(&Open), "{fx:?}");
}

#[test]
fn a_refused_start_is_an_error_when_denied_and_stopped_when_not_trusted() {
    let e = denied();
    let (next, fx) = transition(&starting(), I::OpenFailed(e.clone()), &rules(false));
    assert_eq!(next.phase, P::Failed);
    assert_eq!(
        fx,
        [
            EndToolAuthWaits(Leaving::Failed(ErrorCode::PolicyDenied)),
            Answer(Err(e.clone())),
            SetState(server_error_state(e.code, e.message)),
        ]
    );
    for code in [ErrorCode::TrustRefused, ErrorCode::TrustFailed] {
        let e = HostError::new(code, "server \"a\" is refused by the app");
        let (next, fx) = transition(&starting(), I::OpenFailed(e.clone()), &rules(false));
        assert_eq!(next.phase, P::Stopped);
        assert_eq!(
            fx,
            [
                EndToolAuthWaits(Leaving::Failed(code)),
                Answer(Err(e)),
                SetState(McpServerState::Stopped(McpServerStoppedState {})),
            ]
        );
    }
}

#[test]
fn a_server_the_policy_now_denies_ends_what_it_does() {
    let e = denied();
    let error = SetState(server_error_state(e.code, e.message.clone()));
    let leave = EndToolAuthWaits(Leaving::Failed(ErrorCode::PolicyDenied));
    let ready = Machine::from(P::Ready {
        crashes: 0,
        since: Instant::now(),
    });
    let (next, fx) = transition(&ready, I::Denied(e.clone()), &rules(true));
    assert_eq!(next.phase, P::Failed);
    assert_eq!(
        fx,
        [
            leave.clone(),
            Close(Closing::Stopped),
            Answer(Err(e.clone())),
            error.clone()
        ]
    );
    let (_, fx) = transition(&starting(), I::Denied(e.clone()), &rules(false));
    assert_eq!(
        fx,
        [leave, CancelOpen, Answer(Err(e.clone())), error.clone()]
    );
    // A dormant lazy server's cached tools go too.
    let (next, fx) = transition(&Machine::default(), I::Denied(e.clone()), &rules(true));
    assert_eq!(next.phase, P::Failed);
    assert_eq!(fx, [DropTools, Answer(Err(e.clone())), error]);
    let backing_off = Machine::from(P::BackingOff { crashes: 1 });
    let (next, _) = transition(&backing_off, I::Denied(e), &rules(false));
    assert_eq!(next.phase, P::Failed, "no restart comes");
}
