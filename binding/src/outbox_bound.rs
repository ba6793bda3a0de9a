//! The bound of the JS outbox (docs/reliability.md, "Floods"): at most
//! [`MAX_OUTBOX_LOG_RECORDS`] log records are queued between two drains
//! by the JS thread; more are dropped and counted, the count delivered as
//! one `warn` record (target `host.events`) at the end of the next drain.
//! Actions, answers and every other event are never dropped; a
//! `listChanged` or `resourceUpdated` event equal to one still queued is
//! not queued again (coalesced: the queued one reports the same change).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use ahp_mcp_host::events::{log, HostEvent, LogLevel};
use ahp_mcp_host::limits::MAX_OUTBOX_LOG_RECORDS;

/// What the outbox holds back (see the module documentation).
#[derive(Default)]
pub(super) struct OutboxBound {
    /// Log records queued since the last drain.
    logs: AtomicUsize,
    /// Log records dropped since the last drain.
    dropped: AtomicU64,
    /// The coalescible items queued since the last drain.
    queued: Mutex<HashSet<String>>,
}

/// How an item is kept.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An action, an answer, …: always queued.
    Kept,
    /// A log record: queued within the bound.
    Log,
    /// Queued unless an equal one is queued already.
    Coalesced,
}

impl OutboxBound {
    /// Whether to queue `item` of `kind` (counted when it is dropped).
    pub(super) fn admit(&self, kind: Kind, item: &str) -> bool {
        match kind {
            Kind::Kept => true,
            Kind::Log => {
                if self.logs.fetch_add(1, Ordering::AcqRel) < MAX_OUTBOX_LOG_RECORDS {
                    return true;
                }
                self.dropped.fetch_add(1, Ordering::AcqRel);
                false
            }
            Kind::Coalesced => self
                .queued
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(item.to_owned()),
        }
    }

    /// A drain starts: the counts start over; the `warn` item about the
    /// records dropped since the last drain, if any.
    pub(super) fn drained(&self) -> Option<String> {
        self.logs.store(0, Ordering::Release);
        self.queued
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        let dropped = self.dropped.swap(0, Ordering::AcqRel);
        if dropped == 0 {
            return None;
        }
        let message = format!(
            "dropped {dropped} log records: more than {MAX_OUTBOX_LOG_RECORDS} were waiting for the JS thread (MAX_OUTBOX_LOG_RECORDS)"
        );
        let HostEvent::Log(record) = log(LogLevel::Warn, "host.events", None, message) else {
            return None;
        };
        let item = serde_json::json!({ "event": "log", "payload": record });
        Some(item.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_records_past_the_bound_are_counted_and_reported_at_the_drain() {
        let bound = OutboxBound::default();
        let admitted = (0..MAX_OUTBOX_LOG_RECORDS + 5)
            .filter(|_| bound.admit(Kind::Log, "{}"))
            .count();
        assert_eq!(admitted, MAX_OUTBOX_LOG_RECORDS);
        assert!((0..10).all(|_| bound.admit(Kind::Kept, "{}")));
        let warn = bound.drained().expect("a count");
        assert!(warn.contains("dropped 5 log records"), "{warn}");
        assert!(warn.contains(r#""target":"host.events""#), "{warn}");
        assert!(bound.admit(Kind::Log, "{}"));
        assert_eq!(bound.drained(), None);
    }

    #[test]
    fn an_equal_coalesced_item_is_queued_once_per_drain() {
        let bound = OutboxBound::default();
        assert!(bound.admit(Kind::Coalesced, "a"));
        assert!(!bound.admit(Kind::Coalesced, "a"));
        assert!(bound.admit(Kind::Coalesced, "b"));
        bound.drained();
        assert!(bound.admit(Kind::Coalesced, "a"));
    }
}
