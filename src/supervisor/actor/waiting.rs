//! What a server's actor waits on besides commands, phase by phase
//! ([`Waiting`]): the attempt in flight, the ready connection with its
//! change notices and re-list pacing ([`Serving`]), or the restart timer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::super::connector::{BoxFuture, Opened, ServerConnection};
use super::super::phase::{Input, Phase};
use crate::limits::{LIST_CHANGED_BURST, LIST_CHANGED_DEBOUNCE_MS};
use crate::mcp::client::Notice;
use crate::mcp::request::RequestFailure;
use crate::mcp::ServerLive;

/// What the current phase waits on besides commands.
pub(super) enum Waiting<K> {
    /// Nothing (stopped, failed, `authRequired`).
    Nothing,
    /// Starting: the attempt in flight.
    Open(BoxFuture<Result<Opened<K>, RequestFailure>>),
    /// Ready: the connection (boxed: an actor that is not ready, like a
    /// lazy server's before its first call, holds only the pointer).
    Serve(Box<Serving<K>>),
    /// Backing off: the restart timer.
    Backoff(std::pin::Pin<Box<tokio::time::Sleep>>),
}

/// A ready connection and what the actor watches on it.
pub(super) struct Serving<K> {
    pub(super) conn: K,
    pub(super) closed: watch::Sender<Option<String>>,
    notices: Option<mpsc::UnboundedReceiver<Notice>>,
    relist_at: Option<tokio::time::Instant>,
    /// The re-list pacing credit (see [`relist_time`]); `None` before the
    /// first re-list.
    pub(super) relist_tat: Option<tokio::time::Instant>,
    /// Whether the server declared the skills extension (SEP-2640): only
    /// then does `notifications/resources/list_changed` re-list skills.
    skills: bool,
    /// What the next re-list lists again.
    pub(super) stale: Stale,
    gone: Option<BoxFuture<String>>,
    /// A lazy server's idle stop ([`Serving::stop_when_idle`]).
    idle: Option<IdleStop>,
}

/// When a lazy server is stopped: after `after` with no request
/// (`crate::mcp::activity`) and no resource subscription, counted from
/// `since` (when it became ready) at the earliest.
struct IdleStop {
    after: Duration,
    since: tokio::time::Instant,
    live: Arc<ServerLive>,
}

impl IdleStop {
    /// Resolves once the server has been idle for `after`.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only reads the activity and sleeps.
    async fn elapsed(&self) {
        loop {
            let now = tokio::time::Instant::now();
            // A resource subscription keeps the server up: its updates need the connection.
            let subscribed = !self.live.resources.is_empty();
            let idle = self
                .live
                .activity()
                .idle_for(self.since, now)
                .filter(|_| !subscribed);
            let wait = match idle {
                Some(idle) if idle >= self.after => return,
                Some(idle) => self.after - idle,
                // Busy: look again after a whole idle time at the latest.
                None => self.after,
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// The lists a change notice made stale, re-listed together by the next
/// paced re-list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Stale {
    /// `notifications/tools/list_changed`: `tools/list`.
    pub(super) tools: bool,
    /// `notifications/resources/list_changed` from a server with skills:
    /// `skills/list`.
    pub(super) skills: bool,
}

impl<K: ServerConnection> Serving<K> {
    fn new(opened: Opened<K>) -> Self {
        let mut conn = opened.conn;
        let notices = Some(conn.take_notices());
        let gone = Some(conn.ended());
        Self {
            conn,
            closed: opened.closed,
            notices,
            relist_at: None,
            relist_tat: None,
            skills: opened.skills,
            stale: Stale::default(),
            gone,
            idle: None,
        }
    }

    /// Stops the server (`Input::IdleElapsed`) once it has had no request
    /// for `after`; `None`: never. Set once per connection.
    pub(super) fn stop_when_idle(&mut self, after: Option<Duration>, live: &Arc<ServerLive>) {
        if let (None, Some(after)) = (&self.idle, after) {
            let since = tokio::time::Instant::now();
            let live = live.clone();
            self.idle = Some(IdleStop { after, since, live });
        }
    }

    /// Schedules a re-list after a change notice (see
    /// [`relist_time`]: [`LIST_CHANGED_BURST`] at once, then one per
    /// [`LIST_CHANGED_DEBOUNCE_MS`]).
    pub(super) fn schedule_relist(&mut self) {
        let now = tokio::time::Instant::now();
        let burst = LIST_CHANGED_BURST.saturating_sub(1);
        let window = Duration::from_millis(LIST_CHANGED_DEBOUNCE_MS * u64::from(burst));
        self.relist_at = Some(relist_time(self.relist_at, self.relist_tat, now, window));
    }

    /// The connection's next event: it ended, a list it re-lists changed
    /// (tools; resources of a server with skills), or the re-list pacing
    /// let the next re-list run.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the end watch is kept until it resolves; notices are
    /// taken only when returned.
    async fn next(&mut self) -> Input {
        loop {
            let relist_at = self.relist_at;
            // A re-list due now runs now: a timer set for the present fires
            // only on the timer's next tick (about 1 ms later).
            let relist = async move {
                match relist_at {
                    Some(at) if at <= tokio::time::Instant::now() => {}
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let gone = async {
                match &mut self.gone {
                    Some(gone) => gone.as_mut().await,
                    None => std::future::pending().await,
                }
            };
            let idle = self.idle.as_ref();
            let idle = async move {
                match idle {
                    Some(idle) => idle.elapsed().await,
                    None => std::future::pending().await,
                }
            };
            let notices = &mut self.notices;
            // Biased: notices already received are taken before a due
            // re-list, so notices that arrived together cost one re-list.
            tokio::select! {
                biased;
                reason = gone => {
                    self.gone = None;
                    return Input::Crashed(reason);
                }
                notice = async { notices.as_mut()?.recv().await }, if notices.is_some() => match notice {
                    Some(Notice::ToolsChanged) => {
                        self.stale.tools = true;
                        return Input::ListChanged;
                    }
                    Some(Notice::ResourcesChanged) if self.skills => {
                        self.stale.skills = true;
                        return Input::ListChanged;
                    }
                    Some(Notice::ResourcesChanged) => {}
                    None => self.notices = None,
                },
                _ = relist => {
                    self.relist_at = None;
                    return Input::RelistDue;
                }
                () = idle => return Input::IdleElapsed,
            }
        }
    }
}

impl<K: ServerConnection> Waiting<K> {
    /// The current phase's next event. A finished attempt becomes the
    /// served connection (or nothing).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the attempt, the connection's watches and the timer are
    /// polled by reference and kept until they resolve.
    pub(super) async fn next(&mut self) -> Input {
        match self {
            Waiting::Nothing => std::future::pending().await,
            Waiting::Open(attempt) => {
                let outcome = attempt.as_mut().await;
                *self = Waiting::Nothing;
                match outcome {
                    Ok(opened) => {
                        let tools_changed = opened.tools_changed;
                        *self = Waiting::Serve(Box::new(Serving::new(opened)));
                        let at = Instant::now();
                        Input::Opened { at, tools_changed }
                    }
                    Err(RequestFailure::Auth(header)) => Input::Challenged(header),
                    Err(RequestFailure::Failed(e)) => Input::OpenFailed(e),
                }
            }
            Waiting::Serve(serving) => serving.next().await,
            Waiting::Backoff(timer) => {
                timer.as_mut().await;
                *self = Waiting::Nothing;
                Input::BackoffElapsed
            }
        }
    }

    /// Drops what `phase` no longer waits on.
    pub(super) fn keep_for(&mut self, phase: &Phase) {
        let keep = matches!(
            (&*self, phase),
            (Waiting::Nothing, _)
                | (Waiting::Open(_), Phase::Starting { .. })
                | (Waiting::Serve(_), Phase::Ready { .. })
                | (Waiting::Backoff(_), Phase::BackingOff { .. })
        );
        if !keep {
            *self = Waiting::Nothing;
        }
    }
}

/// When to re-list after a change notice at `now`
/// (pacing by the generic cell rate algorithm): a re-list already
/// `scheduled` is kept (not pushed back, so a steady stream of notices
/// cannot starve it); else at once while the pacing credit `tat` (see
/// [`relist_credit`]) is at most `window` ahead of `now`, else when it is.
/// With `window` = (burst − 1) × interval, up to `burst` re-lists run at
/// once, then at most one per interval; notices that arrive while one is
/// scheduled cost nothing more.
pub(super) fn relist_time<T>(scheduled: Option<T>, tat: Option<T>, now: T, window: Duration) -> T
where
    T: Copy + Ord + std::ops::Add<Duration, Output = T> + std::ops::Sub<Duration, Output = T>,
{
    scheduled.unwrap_or_else(|| match tat {
        Some(tat) if tat > now + window => tat - window,
        _ => now,
    })
}

/// The pacing credit (theoretical arrival time) once a re-list begins at
/// `start`: one `interval` past the later of the old credit and `start`.
pub(super) fn relist_credit<T>(tat: Option<T>, start: T, interval: Duration) -> T
where
    T: Copy + Ord + std::ops::Add<Duration, Output = T>,
{
    tat.map_or(start, |t| t.max(start)) + interval
}
