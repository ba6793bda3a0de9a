//! [`UntilDisposed`]: a request's future raced against the host's
//! shutdown, holding that future once.
//!
//! An `async fn` keeps each argument in its state twice (the argument, and
//! the local it is moved into to be polled; rust-lang/rust#62958), so a
//! helper `async fn until_disposed(fut)` made every request's future twice
//! its size: a `callTool` future of 21 KB, copied whole on each move
//! (docs/benchmark.md, "Issue 28"). This future is a plain struct.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tokio_util::sync::WaitForCancellationFuture;

use crate::error::HostResult;

pin_project! {
    /// Resolves to `fut`'s output, or to `disposed` once `closing` fires.
    /// Biased: `closing` is polled first, so a request whose connection the
    /// shutdown closes fails `disposed`, not `server_exited`. `fut` is
    /// dropped with this future.
    pub(super) struct UntilDisposed<'a, F> {
        #[pin]
        closing: WaitForCancellationFuture<'a>,
        #[pin]
        fut: F,
    }
}

impl<'a, F> UntilDisposed<'a, F> {
    /// `fut` raced against `closing` (the host's shutdown).
    pub(super) fn new(closing: WaitForCancellationFuture<'a>, fut: F) -> Self {
        Self { closing, fut }
    }
}

impl<T, F: Future<Output = HostResult<T>>> Future for UntilDisposed<'_, F> {
    type Output = HostResult<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if this.closing.poll(cx).is_ready() {
            return Poll::Ready(Err(super::disposed()));
        }
        this.fut.poll(cx)
    }
}
