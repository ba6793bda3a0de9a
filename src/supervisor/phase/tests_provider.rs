//! The phase machine with the app's headers provider (issue 30, item 4): a
//! 401 on a ready connection reconnects (the provider is asked again at
//! the connect) instead of entering discovery and `authRequired`.

use super::Effect::*;
use super::Input as I;
use super::Phase as P;
use super::*;
use crate::error::ErrorCode;

fn rules(headers_provider: bool) -> Rules {
    Rules {
        limits: Limits::default(),
        endpoint: Some(
            url::Url::parse("https://mcp.example.test/mcp").unwrap_or_else(|e| panic!("{e}")),
        ),
        client_id: None,
        headers_provider,
        required: false,
        lazy: false,
    }
}

fn ready() -> Machine {
    Machine::from(P::Ready {
        crashes: 0,
        since: std::time::Instant::now(),
    })
}

fn refused() -> Input {
    let error = HostError::new(ErrorCode::AuthRequired, "401 invalid_token");
    I::ConnectionFailed {
        error,
        challenge: Some("Bearer error=\"invalid_token\"".to_owned()),
    }
}

#[test]
fn a_401_on_a_ready_connection_reconnects_when_the_app_provides_headers() {
    let (next, effects) = transition(&ready(), refused(), &rules(true));
    assert_eq!(next.phase, P::Starting { crashes: 0 });
    let starting = McpServerState::Starting(Default::default());
    let ended = EndToolAuthWaits(Leaving::Restarted);
    assert_eq!(
        effects,
        [ended, Close(Closing::Stopped), SetState(starting), Open]
    );
    // Without a provider: discovery, then authRequired (as before).
    let (next, effects) = transition(&ready(), refused(), &rules(false));
    assert!(
        matches!(next.phase, P::Challenged { .. }),
        "{:?}",
        next.phase
    );
    assert!(
        matches!(effects[..], [Close(Closing::Stopped), Discover { .. }]),
        "{effects:?}"
    );
}
