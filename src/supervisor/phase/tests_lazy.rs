//! The phase machine for a lazy server (issue 29, item 2;
//! `crate::mcp::StartPolicy::lazy`): the first step with cached tools
//! stays `stopped`; an idle time passing while ready stops it keeping its
//! tools (`Closing::Dormant`), as does a stop request; a toggle off drops
//! them, running or not; an eager server ignores the idle input.

use std::time::Instant;

use ahp_types::state::McpServerStoppedState;

use super::Effect::*;
use super::Input as I;
use super::Phase as P;
use super::*;

/// The rules of an eager or `lazy` stdio server (also `tests_policy`).
pub(super) fn rules(lazy: bool) -> Rules {
    Rules {
        limits: Limits::default(),
        endpoint: None,
        client_id: None,
        headers_provider: false,
        required: false,
        lazy,
    }
}

fn ready() -> Machine {
    Machine::from(P::Ready {
        crashes: 0,
        since: Instant::now(),
    })
}

fn stopped() -> Effect {
    SetState(McpServerState::Stopped(McpServerStoppedState {}))
}

#[test]
fn a_dormant_first_step_stays_stopped_without_opening() {
    let (next, fx) = transition(&Machine::default(), I::Dormant, &rules(true));
    assert_eq!(next.phase, P::Stopped);
    assert_eq!(
        fx,
        [],
        "the host published it stopped with its cached tools"
    );
}

#[test]
fn idle_and_stop_keep_a_lazy_servers_tools_and_a_toggle_off_drops_them() {
    let lazy = rules(true);
    let (next, fx) = transition(&ready(), I::IdleElapsed, &lazy);
    assert_eq!(next.phase, P::Stopped);
    assert!(
        matches!(&fx[..], [Log(LogLevel::Info, m), Close(Closing::Dormant), s] if m.starts_with("idle") && *s == stopped()),
        "{fx:?}"
    );
    let (_, fx) = transition(&ready(), I::Stop, &lazy);
    assert!(fx.contains(&Close(Closing::Dormant)), "{fx:?}");
    let (_, fx) = transition(&ready(), I::SetEnabled(false), &lazy);
    assert!(fx.contains(&Close(Closing::Stopped)), "{fx:?}");
    // Not running (dormant or failed): a toggle off drops the cached tools.
    let (_, fx) = transition(&Machine::default(), I::SetEnabled(false), &lazy);
    assert_eq!(fx, [DropTools, stopped()]);
    let failed = Machine::from(P::Failed);
    let (_, fx) = transition(&failed, I::SetEnabled(false), &lazy);
    assert_eq!(fx, [DropTools, stopped()]);
}

#[test]
fn an_eager_server_ignores_idle_and_drops_its_tools_on_stop() {
    let eager = rules(false);
    let running = ready();
    let (next, fx) = transition(&running, I::IdleElapsed, &eager);
    assert_eq!((next, fx), (running, vec![]));
    let (_, fx) = transition(&ready(), I::Stop, &eager);
    assert!(fx.contains(&Close(Closing::Stopped)), "{fx:?}");
    let (_, fx) = transition(&Machine::default(), I::SetEnabled(false), &eager);
    assert_eq!(fx, [stopped()]);
}
