//! The flood bounds of one server connection's client handler
//! (docs/reliability.md, "Floods"): MCP log messages paced
//! ([`SERVER_LOG_BURST`], [`SERVER_LOG_PER_SECOND`]), notifications that
//! carry nothing to act on dropped, server requests waiting on the app
//! capped ([`MAX_PENDING_SERVER_REQUESTS`]); what was left out is counted
//! in `warn` records at most once per
//! [`crate::limits::FLOOD_REPORT_INTERVAL_MS`], and once more when the
//! connection's handler goes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ErrorData;

use crate::events::{log, EventSink, LogLevel};
use crate::limits::{
    MAX_PENDING_SERVER_REQUESTS, SENDS_IN_FLIGHT, SERVER_LOG_BURST, SERVER_LOG_PER_SECOND,
};
use crate::requests::ServerRequestKind;
use crate::transport::flood::{Lost, LostReport, Pace};

/// Shared by the clones of one connection's `HostClient`.
#[derive(Clone)]
pub struct Bounds(Arc<Inner>);

struct Inner {
    server_id: String,
    sink: Arc<dyn EventSink>,
    counts: Mutex<Counts>,
    pending: AtomicUsize,
}

struct Counts {
    log_pace: Pace,
    logs: Lost,
    dropped: Lost,
    refused: Lost,
    unanswered: Lost,
}

/// What a count is about (the words of its report).
#[derive(Clone, Copy)]
enum Kind {
    Logs,
    Dropped,
    Refused,
    Unanswered,
}

/// One server request counted as waiting on the app until dropped.
pub struct RequestSlot(Arc<Inner>);

impl Drop for RequestSlot {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Bounds {
    /// The bounds of server `server_id`'s connection, reporting to `sink`.
    pub fn new(server_id: &str, sink: Arc<dyn EventSink>) -> Self {
        Self(Arc::new(Inner {
            server_id: server_id.to_owned(),
            sink,
            counts: Mutex::new(Counts {
                log_pace: Pace::new(SERVER_LOG_BURST, SERVER_LOG_PER_SECOND),
                logs: Lost::default(),
                dropped: Lost::default(),
                refused: Lost::default(),
                unanswered: Lost::default(),
            }),
            pending: AtomicUsize::new(0),
        }))
    }

    /// Whether one more MCP log message is delivered (else it is counted).
    pub fn admit_log(&self) -> bool {
        let mut counts = self.0.lock();
        if counts.log_pace.admit() {
            return true;
        }
        counts.logs.add(0);
        let due = counts.logs.due();
        drop(counts);
        self.0.report(Kind::Logs, due);
        false
    }

    /// Counts a notification dropped unread (nothing to act on).
    pub fn dropped(&self) {
        let mut counts = self.0.lock();
        counts.dropped.add(0);
        let due = counts.dropped.due();
        drop(counts);
        self.0.report(Kind::Dropped, due);
    }

    /// Counts an answer to a server request left unsent: every send slot
    /// was taken (Streamable HTTP, where each answer is a POST).
    pub fn unanswered(&self) {
        let mut counts = self.0.lock();
        counts.unanswered.add(0);
        let due = counts.unanswered.due();
        drop(counts);
        self.0.report(Kind::Unanswered, due);
    }

    /// A slot for one server request of `kind` waiting on the app, or the
    /// JSON-RPC error it is answered with at once (counted, logged).
    pub fn request_slot(&self, kind: ServerRequestKind) -> Result<RequestSlot, ErrorData> {
        let taken = self.0.pending.fetch_add(1, Ordering::AcqRel);
        if taken < MAX_PENDING_SERVER_REQUESTS {
            return Ok(RequestSlot(self.0.clone()));
        }
        self.0.pending.fetch_sub(1, Ordering::AcqRel);
        let mut counts = self.0.lock();
        counts.refused.add(0);
        let due = counts.refused.due();
        drop(counts);
        self.0.report(Kind::Refused, due);
        Err(ErrorData::internal_error(
            format!(
                "{} refused: {MAX_PENDING_SERVER_REQUESTS} requests of this server are already \
                 waiting on the client (the host's bound of {MAX_PENDING_SERVER_REQUESTS} pending \
                 server requests per server, MAX_PENDING_SERVER_REQUESTS); retry after those are answered",
                kind.method()
            ),
            None,
        ))
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn report(&self, kind: Kind, report: Option<LostReport>) {
        let Some(r) = report else { return };
        let (target, message) = match kind {
            Kind::Logs => (
                "server.log",
                format!(
                    "suppressed {} log messages in the last {} s (at most {SERVER_LOG_BURST} at once, then {SERVER_LOG_PER_SECOND} per second)",
                    r.records, r.seconds
                ),
            ),
            Kind::Dropped => (
                "host.notifications",
                format!(
                    "dropped {} notifications with nothing to act on (a method MCP does not define, or progress for a token the host never issued) in the last {} s",
                    r.records, r.seconds
                ),
            ),
            Kind::Refused => (
                "host.requests",
                format!(
                    "refused {} server requests in the last {} s: more than {MAX_PENDING_SERVER_REQUESTS} were waiting on the client (MAX_PENDING_SERVER_REQUESTS)",
                    r.records, r.seconds
                ),
            ),
            Kind::Unanswered => (
                "host.requests",
                format!(
                    "left {} server requests unanswered in the last {} s: {SENDS_IN_FLIGHT} answers were already waiting to be sent (SENDS_IN_FLIGHT)",
                    r.records, r.seconds
                ),
            ),
        };
        self.sink
            .send(log(LogLevel::Warn, target, Some(&self.server_id), message));
    }
}

impl Drop for Inner {
    /// The connection's handler is gone: the last counts are reported.
    fn drop(&mut self) {
        let counts = self
            .counts
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let last = [
            (Kind::Logs, counts.logs.take()),
            (Kind::Dropped, counts.dropped.take()),
            (Kind::Refused, counts.refused.take()),
            (Kind::Unanswered, counts.unanswered.take()),
        ];
        for (kind, report) in last {
            self.report(kind, report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::HostEvent;

    #[tokio::test]
    async fn requests_past_the_cap_are_refused_naming_the_bound_and_counted() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let bounds = Bounds::new("s1", Arc::new(tx));
        let kind = ServerRequestKind::Sampling;
        let slots: Vec<_> = (0..MAX_PENDING_SERVER_REQUESTS)
            .map(|_| match bounds.request_slot(kind) {
                Ok(slot) => slot,
                Err(e) => panic!("no slot: {}", e.message),
            })
            .collect();
        let Err(refused) = bounds.request_slot(kind) else {
            panic!("one past the cap")
        };
        assert!(refused.message.contains("MAX_PENDING_SERVER_REQUESTS"));
        assert!(refused
            .message
            .starts_with("sampling/createMessage refused"));
        drop(slots);
        assert!(bounds.request_slot(kind).is_ok());
        drop(bounds);
        let HostEvent::Log(last) = rx.try_recv().expect("the count") else {
            panic!("a log record")
        };
        assert_eq!(last.target, "host.requests");
        assert!(last.message.starts_with("refused 1 server requests"));
    }

    #[tokio::test]
    async fn log_messages_past_the_burst_are_counted_and_reported_at_the_end() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let bounds = Bounds::new("s1", Arc::new(tx));
        let total = SERVER_LOG_BURST as usize + 10;
        let admitted = (0..total).filter(|_| bounds.admit_log()).count();
        assert_eq!(admitted, SERVER_LOG_BURST as usize);
        bounds.dropped();
        drop(bounds);
        let mut messages = Vec::new();
        while let Ok(HostEvent::Log(r)) = rx.try_recv() {
            messages.push(r.message);
        }
        assert!(messages[0].starts_with("suppressed 10 log messages"));
        assert!(messages[1].starts_with("dropped 1 notifications"));
    }
}
