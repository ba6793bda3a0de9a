//! The bound of an outbox of [`HostEvent`]s waiting for a consumer that
//! drains them (the binding's JS outbox; docs/reliability.md, "Floods"): at most
//! [`MAX_OUTBOX_LOG_RECORDS`] log records are queued between two drains
//! by the consumer; more are dropped and counted, the count delivered as
//! one `warn` record (target `host.events`) at the end of the next drain.
//! Actions, answers and every other event are never dropped; a
//! `listChanged` or `resourceUpdated` event equal to one still queued is
//! not queued again (coalesced: the queued one reports the same change).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{log, HostEvent, LogLevel, LogRecord};
use crate::limits::MAX_OUTBOX_LOG_RECORDS;

/// What the outbox holds back (see the module documentation).
#[derive(Default)]
pub struct OutboxBound {
    /// Log records queued since the last drain.
    logs: AtomicUsize,
    /// Log records dropped since the last drain.
    dropped: AtomicU64,
    /// The coalescible items queued since the last drain.
    queued: Mutex<HashSet<String>>,
}

/// How an item is kept.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OutboxKind {
    /// An action, an answer, …: always queued.
    Kept,
    /// A log record: queued within the bound.
    Log,
    /// Queued unless an equal one is queued already.
    Coalesced,
}

impl OutboxBound {
    /// Whether to queue `item` of `kind` (counted when it is dropped).
    pub fn admit(&self, kind: OutboxKind, item: &str) -> bool {
        match kind {
            OutboxKind::Kept => true,
            OutboxKind::Log => {
                if self.logs.fetch_add(1, Ordering::AcqRel) < MAX_OUTBOX_LOG_RECORDS {
                    return true;
                }
                self.dropped.fetch_add(1, Ordering::AcqRel);
                false
            }
            OutboxKind::Coalesced => self
                .queued
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(item.to_owned()),
        }
    }

    /// A drain starts: the counts start over; the `warn` record about the
    /// records dropped since the last drain, if any.
    pub fn drained(&self) -> Option<LogRecord> {
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
        match log(LogLevel::Warn, "host.events", None, message) {
            HostEvent::Log(record) => Some(record),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_records_past_the_bound_are_counted_and_reported_at_the_drain() {
        let bound = OutboxBound::default();
        let admitted = (0..MAX_OUTBOX_LOG_RECORDS + 5)
            .filter(|_| bound.admit(OutboxKind::Log, "{}"))
            .count();
        assert_eq!(admitted, MAX_OUTBOX_LOG_RECORDS);
        assert!((0..10).all(|_| bound.admit(OutboxKind::Kept, "{}")));
        let warn = bound.drained().expect("a count");
        assert!(warn.message.contains("dropped 5 log records"), "{warn:?}");
        assert_eq!(warn.target, "host.events");
        assert!(bound.admit(OutboxKind::Log, "{}"));
        assert_eq!(bound.drained(), None);
    }

    #[test]
    fn an_equal_coalesced_item_is_queued_once_per_drain() {
        let bound = OutboxBound::default();
        assert!(bound.admit(OutboxKind::Coalesced, "a"));
        assert!(!bound.admit(OutboxKind::Coalesced, "a"));
        assert!(bound.admit(OutboxKind::Coalesced, "b"));
        bound.drained();
        assert!(bound.admit(OutboxKind::Coalesced, "a"));
    }
}
