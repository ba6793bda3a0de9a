//! Bounded startup: at most [`Limits::max_concurrent_launches`] stdio
//! servers of one host are between spawn and `ready` (or a failed start) at
//! once. A start first takes its place in a fair queue ([`LaunchGate::queue`],
//! in call order: the actors are created in configuration order), then waits
//! for a permit ([`Queued::permit`]) and holds it through spawn, handshake
//! and first `tools/list`. Dropping the wait (stop, remove, dispose, a
//! superseding start) leaves the queue at once; dropping the permit hands
//! it to the next in line.
//!
//! [`Limits::max_concurrent_launches`]: crate::limits::Limits::max_concurrent_launches

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};

/// The host's launch permits (a fair `tokio` semaphore: waiters are served
/// in the order they were queued).
pub struct LaunchGate(Arc<Semaphore>);

/// One start's place in the queue (see [`LaunchGate::queue`]).
pub struct Queued {
    acquire: Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>,
    waits: bool,
}

/// A held launch permit; dropping it lets the next start go.
pub type LaunchPermit = OwnedSemaphorePermit;

impl LaunchGate {
    /// A gate of `permits` concurrent launches (at least 1).
    pub fn new(permits: usize) -> Self {
        Self(Arc::new(Semaphore::new(permits.max(1))))
    }

    /// Takes a place in the queue now: the semaphore queues a waiter when
    /// its acquire is first polled, so it is polled once here, with a waker
    /// that does nothing (the real one replaces it when [`Queued::permit`]
    /// is awaited). Places are therefore in call order, not in the order
    /// the actors' tasks happen to run.
    pub fn queue(&self) -> Queued {
        let mut acquire = Box::pin(self.0.clone().acquire_owned());
        let mut cx = Context::from_waker(Waker::noop());
        match acquire.as_mut().poll(&mut cx) {
            Poll::Ready(permit) => Queued {
                acquire: Box::pin(std::future::ready(permit)),
                waits: false,
            },
            Poll::Pending => Queued {
                acquire,
                waits: true,
            },
        }
    }
}

impl Queued {
    /// Whether no permit was free when the place was taken.
    pub fn waits(&self) -> bool {
        self.waits
    }

    /// Waits for the permit.
    ///
    /// # Cancel safety
    ///
    /// Dropping the wait leaves the queue (a permit already assigned goes
    /// back to the gate).
    pub async fn permit(self) -> Option<LaunchPermit> {
        self.acquire.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn places_are_taken_in_call_order_and_a_dropped_wait_leaves_the_queue() {
        let gate = LaunchGate::new(1);
        let first = gate.queue().permit().await.expect("a permit");
        let (second, third, fourth) = (gate.queue(), gate.queue(), gate.queue());
        assert!(second.waits() && third.waits() && fourth.waits());
        // Awaited in the reverse order: the queue order still decides.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for (name, queued) in [(4, fourth), (2, second)] {
            let tx = tx.clone();
            tokio::spawn(async move {
                let permit = queued.permit().await;
                let _ = tx.send(name);
                drop(permit);
            });
        }
        drop(third); // stopped while waiting: the next in line goes on
        tokio::task::yield_now().await;
        assert!(
            rx.try_recv().is_err(),
            "nobody goes while the first holds the permit"
        );
        drop(first);
        assert_eq!((rx.recv().await, rx.recv().await), (Some(2), Some(4)));
    }
}
