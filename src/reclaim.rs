//! Freeing large values off the thread that lets go of them.
//!
//! A catalogue of a thousand tools is tens of thousands of heap blocks
//! (every schema is a tree of maps and strings). Each refresh lets go of
//! several such generations: the catalogue it replaces, the session
//! state's previous `serverTools`, the published action once it is encoded,
//! the snapshot the caller read last. Freeing them where that happens puts
//! their `free` calls on the async worker (and the JS thread) between the
//! listing and the `toolsChanged` the app waits for. [`drop_later`] hands
//! such a value to one background thread (`ahp-reclaim`, started on first
//! use) that drops it, through a queue of at most [`MAX_PENDING_RECLAIMS`]
//! values; when the queue is full, or the thread could not start, the value
//! is dropped where it is, as it would have been.

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::limits::MAX_PENDING_RECLAIMS;

/// A value waiting to be dropped (a unit value: only the trim after it,
/// see [`trim_later`]).
type Garbage = Box<dyn Send>;

/// The reclaim thread's queue (`None`: the thread could not be started).
static QUEUE: OnceLock<Option<Mutex<SyncSender<Garbage>>>> = OnceLock::new();

/// Starts the reclaim thread and returns its queue.
fn start() -> Option<Mutex<SyncSender<Garbage>>> {
    let (queue, garbage) = sync_channel::<Garbage>(MAX_PENDING_RECLAIMS);
    std::thread::Builder::new()
        .name("ahp-reclaim".into())
        .spawn(move || {
            while let Ok(value) = garbage.recv() {
                drop(value);
                garbage.try_iter().for_each(drop);
                // Once a batch is gone, its pages go back to the system.
                crate::platform::trim_heap();
            }
        })
        .ok()?;
    Some(Mutex::new(queue))
}

/// Drops `value` on the reclaim thread, or here when its queue is full (see
/// the module docs). For values whose drop is long (large trees), never
/// for values whose drop has effects a caller waits for (a lock, a file).
pub fn drop_later<T: Send + 'static>(value: T) {
    let Some(queue) = QUEUE.get_or_init(start) else {
        return drop(value);
    };
    let sent = queue
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .try_send(Box::new(value));
    // Full or gone: dropped here, after the lock is released.
    if let Err(TrySendError::Full(value) | TrySendError::Disconnected(value)) = sent {
        drop(value);
    }
}

/// Asks the reclaim thread to hand the allocator's free pages back to the
/// system (`crate::platform::trim_heap`) once what is queued before is
/// dropped: after work that freed many blocks elsewhere (a batch of tool
/// caches parsed on a blocking thread), so their pages do not stay
/// resident. Nothing happens when the queue is full (a trim follows that
/// batch anyway).
pub fn trim_later() {
    if let Some(queue) = QUEUE.get_or_init(start) {
        let _ = (queue.lock().unwrap_or_else(PoisonError::into_inner)).try_send(Box::new(()));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{channel, Sender};
    use std::time::Duration;

    use super::*;

    /// Reports the name of the thread that drops it.
    struct Reporter(Sender<Option<String>>);

    impl Drop for Reporter {
        fn drop(&mut self) {
            let name = std::thread::current().name().map(str::to_owned);
            let _ = self.0.send(name);
        }
    }

    #[test]
    fn values_are_dropped_on_the_reclaim_thread_and_none_is_lost() {
        let (tx, rx) = channel();
        let count = MAX_PENDING_RECLAIMS * 4;
        for _ in 0..count {
            drop_later(Reporter(tx.clone()));
        }
        drop(tx);
        let names: Vec<Option<String>> = (0..count)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        assert!(
            names.iter().any(|n| n.as_deref() == Some("ahp-reclaim")),
            "some were dropped on the reclaim thread: {names:?}"
        );
        // Every value was dropped exactly once (here when the queue was full).
        assert_eq!(names.len(), count);
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    }
}
