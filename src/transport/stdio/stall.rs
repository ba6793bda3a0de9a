//! When a write to a server's stdin has stalled: no byte accepted for
//! [`STDIN_WRITE_TIMEOUT_MS`](crate::limits::STDIN_WRITE_TIMEOUT_MS). A
//! send waiting behind others waits as long as the writing goes on; only a
//! pipe that takes nothing for that long stalls it (a slow reader is not a
//! stalled one).

use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};
use tokio::time::{timeout_at, Instant};

/// When the writer last made progress (a write accepted bytes, or a send
/// took the pipe); shared by the sends of one transport.
#[derive(Clone)]
pub(super) struct LastWrite(Arc<StdMutex<Instant>>);

impl LastWrite {
    pub(super) fn new() -> Self {
        Self(Arc::new(StdMutex::new(Instant::now())))
    }

    pub(super) fn get(&self) -> Instant {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records progress now.
    pub(super) fn mark(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }
}

/// The writer's lock, waited for while the writing makes progress; `None`
/// once it made none for `stall`.
pub(super) async fn lock<'a, T>(
    writer: &'a Mutex<T>,
    last: &LastWrite,
    stall: Duration,
) -> Option<MutexGuard<'a, T>> {
    loop {
        let since = last.get();
        match timeout_at(since + stall, writer.lock()).await {
            Ok(guard) => {
                last.mark();
                return Some(guard);
            }
            Err(_) if last.get() == since => return None,
            Err(_) => {}
        }
    }
}

/// The error of a send abandoned because stdin took nothing for `stall`.
pub(super) fn stalled(stall: Duration) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!(
            "the server did not read its stdin for {} ms",
            stall.as_millis()
        ),
    )
}
