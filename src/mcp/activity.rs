//! What a lazy server's start and idle stop need to know about a server
//! without asking its actor (issue 29 item 2): its requests in flight and
//! when the last one ended ([`Activity::begin`], [`Activity::idle_for`]),
//! and its shown state as a watch ([`Activity::shown`]) that a call waiting
//! for the server's start follows.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use ahp_types::state::McpServerState;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::{ErrorCode, HostError};
use crate::session::RESTART_META_KEY;

/// A server's shown state, as a start waiter reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Shown {
    /// `starting`.
    #[default]
    Starting,
    /// `error` with a restart scheduled: on its way back, failed with this.
    Restarting(HostError),
    /// `ready`.
    Ready,
    /// `stopped`.
    Stopped,
    /// `error` without a restart coming, or `authRequired`: why a call
    /// cannot be served.
    Failed(HostError),
}

impl Shown {
    /// The [`Shown`] of server `id` in AHP state `state`.
    pub fn of(id: &str, state: &McpServerState) -> Self {
        match state {
            McpServerState::Starting(_) => Self::Starting,
            McpServerState::Ready(_) => Self::Ready,
            McpServerState::Stopped(_) => Self::Stopped,
            McpServerState::Error(e) => {
                let code = ErrorCode::ALL
                    .into_iter()
                    .find(|c| c.as_str() == e.error.error_type)
                    .unwrap_or(ErrorCode::ServerNotReady);
                let message = format!("server {id} failed to start: {}", e.error.message);
                let failed = HostError::new(code, message);
                let meta = e.error.meta.as_ref();
                match meta.is_some_and(|m| m.contains_key(RESTART_META_KEY)) {
                    true => Self::Restarting(failed),
                    false => Self::Failed(failed),
                }
            }
            McpServerState::AuthRequired(_) => Self::Failed(HostError::new(
                ErrorCode::AuthRequired,
                format!("server {id} needs authorization"),
            )),
            McpServerState::Unknown(_) => Self::Failed(HostError::new(
                ErrorCode::ServerNotReady,
                format!("server {id} is not ready"),
            )),
        }
    }
}

/// Requests in flight, the end of the last one, and the shown state.
#[derive(Debug)]
pub struct Activity {
    in_flight: AtomicUsize,
    last: Mutex<Instant>,
    /// `(n, state)`: `n` counts the states shown so far.
    shown: watch::Sender<(u64, Shown)>,
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            shown: watch::Sender::new((0, Shown::Starting)),
        }
    }
}

/// One request in flight ([`Activity::begin`]); its end counts as activity.
#[derive(Debug)]
pub struct Busy<'a>(&'a Activity);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Activity {
    /// A request begins; the server is busy until the guard is dropped.
    pub fn begin(&self) -> Busy<'_> {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(self)
    }

    /// How long the server has been idle at `now` (no request in flight;
    /// since the last one ended, or since `since` if later); `None` while
    /// busy.
    pub fn idle_for(&self, since: Instant, now: Instant) -> Option<Duration> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let last = *self.last.lock().unwrap_or_else(PoisonError::into_inner);
        Some(now.saturating_duration_since(last.max(since)))
    }

    /// Records the state the actor just published.
    pub(crate) fn show(&self, shown: Shown) {
        self.shown.send_modify(|(n, s)| {
            *n += 1;
            *s = shown;
        });
    }

    /// The number of the shown state now (how many were shown so far).
    pub fn shown_count(&self) -> u64 {
        self.shown.borrow().0
    }

    /// The shown state, as a watch.
    pub fn shown(&self) -> watch::Receiver<(u64, Shown)> {
        self.shown.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn idle_time_counts_from_the_last_request_and_not_while_one_runs() {
        let activity = Activity::default();
        let start = Instant::now();
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(
            activity.idle_for(start, Instant::now()),
            Some(Duration::from_secs(5))
        );
        let busy = activity.begin();
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(activity.idle_for(start, Instant::now()), None);
        drop(busy);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(
            activity.idle_for(start, Instant::now()),
            Some(Duration::from_secs(2))
        );
        // A later `since` (the server became ready after the last request).
        let ready = Instant::now();
        assert_eq!(activity.idle_for(ready, ready), Some(Duration::ZERO));
    }

    #[test]
    fn a_shown_error_with_a_restart_coming_is_still_starting() {
        let state: McpServerState = serde_json::from_value(serde_json::json!({
            "kind": "error",
            "error": {"errorType": "server_exited", "message": "exited 1",
                      "_meta": {RESTART_META_KEY: {"delayMs": 100}}}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            matches!(Shown::of("s", &state), Shown::Restarting(e) if e.code == ErrorCode::ServerExited)
        );
        let state: McpServerState = serde_json::from_value(serde_json::json!({
            "kind": "error", "error": {"errorType": "server_exited", "message": "exited 1"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let Shown::Failed(e) = Shown::of("s", &state) else {
            panic!("not failed")
        };
        assert_eq!(e.code, ErrorCode::ServerExited);
        assert!(e.message.contains("exited 1"), "{}", e.message);
    }
}
