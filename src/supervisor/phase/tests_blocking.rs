//! The phase machine for a `required` server (issue 29, item 6; AHP 1.0
//! `McpServerStartingState.blocking`, `session/mcpServerBackgroundRequested`):
//! its `starting` is published `blocking: true`; a background request
//! makes the start in progress non-blocking (no state is published: the
//! client's reducer already shows `blocking: false`), a restart of that
//! start stays non-blocking, and the next start after it ended blocks again.

use std::time::Instant;

use ahp_types::state::McpServerStartingState;

use super::Effect::*;
use super::Input as I;
use super::Phase as P;
use super::*;
use crate::error::ErrorCode;

fn rules(required: bool) -> Rules {
    Rules {
        limits: Limits::default(),
        endpoint: None,
        client_id: None,
        headers_provider: false,
        required,
        lazy: false,
    }
}

fn starting(blocking: Option<bool>) -> Effect {
    SetState(McpServerState::Starting(McpServerStartingState {
        blocking,
    }))
}

/// Applies `inputs` in order from `machine`; the last step's machine and effects.
fn run(machine: Machine, inputs: Vec<Input>, rules: &Rules) -> (Machine, Vec<Effect>) {
    let mut state = (machine, Vec::new());
    for input in inputs {
        state = transition(&state.0, input, rules);
    }
    state
}

#[test]
fn a_required_server_starts_blocking_and_an_optional_one_does_not() {
    let (next, fx) = transition(&Machine::default(), I::Start, &rules(true));
    assert_eq!(next.phase, P::Starting { crashes: 0 });
    assert_eq!(fx, [starting(Some(true)), Open]);
    let (_, fx) = transition(&Machine::default(), I::Start, &rules(false));
    assert_eq!(fx, [starting(None), Open]);
}

#[test]
fn a_background_request_unblocks_the_start_in_progress_without_a_state() {
    let rules = rules(true);
    let (next, fx) = run(Machine::default(), vec![I::Start, I::Background], &rules);
    assert!(next.backgrounded);
    assert_eq!(fx, []);
    // A restart of that start (a start request while starting) stays non-blocking.
    let (next, fx) = transition(&next, I::Start, &rules);
    assert!(next.backgrounded);
    assert!(fx.contains(&starting(Some(false))), "{fx:?}");
    // Ready ends the start: the next one blocks again.
    let opened = I::Opened {
        at: Instant::now(),
        tools_changed: false,
    };
    let (next, _) = transition(&next, opened, &rules);
    assert!(!next.backgrounded);
    let (_, fx) = run(next, vec![I::Stop, I::Start], &rules);
    assert_eq!(fx, [starting(Some(true)), Open]);
}

#[test]
fn a_failed_start_ends_the_background_and_background_is_ignored_elsewhere() {
    let required = rules(true);
    let failed = I::OpenFailed(HostError::new(ErrorCode::ServerExited, "exited 1"));
    let (next, _) = run(
        Machine::default(),
        vec![I::Start, I::Background, failed],
        &required,
    );
    assert_eq!((next.phase.clone(), next.backgrounded), (P::Failed, false));
    // Not starting: nothing happens.
    let (after, fx) = transition(&next, I::Background, &required);
    assert_eq!((after, fx), (next, vec![]));
    // An optional server ignores it while starting too.
    let (next, fx) = run(
        Machine::default(),
        vec![I::Start, I::Background],
        &rules(false),
    );
    assert_eq!((next.backgrounded, fx), (false, vec![]));
}
