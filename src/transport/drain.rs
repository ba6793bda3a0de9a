//! Keeps reading a stdio server's stdout after the host stopped listening.
//!
//! Closing a connection drops rmcp's transport, and with it the read end of
//! the server's stdout, while the server may still be writing (progress of
//! a tool call in flight): every write then fails with `EPIPE`, and many
//! servers log each failure on stderr. [`DrainOnDrop`] hands the pipe to a
//! task that reads and discards it until the server's end closes (the
//! process exited; the stop sequence ends in SIGKILL), at most
//! [`DRAIN_MAX`], so a server being stopped never sees `EPIPE` on stdout.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, ReadBuf};

use crate::limits::{STOP_STDIN_GRACE_MS, STOP_TERM_GRACE_MS};

/// The longest a dropped stdout is drained: the whole stop sequence (stdin
/// grace, SIGTERM grace, SIGKILL wait) and a second more. A process outside
/// the server's group that holds the pipe open is not waited for longer.
pub const DRAIN_MAX: Duration =
    Duration::from_millis(STOP_STDIN_GRACE_MS + 2 * STOP_TERM_GRACE_MS + 1_000);

/// An `AsyncRead` that passes reads through and, when dropped inside a
/// Tokio runtime, drains what is left of the pipe on a task (see the module
/// documentation). Outside a runtime the pipe just closes.
pub struct DrainOnDrop<R: AsyncRead + Unpin + Send + 'static> {
    inner: Option<R>,
}

impl<R: AsyncRead + Unpin + Send + 'static> DrainOnDrop<R> {
    /// Wraps a server's stdout.
    pub fn new(inner: R) -> Self {
        Self { inner: Some(inner) }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> AsyncRead for DrainOnDrop<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_read(cx, buf),
            None => Poll::Ready(Ok(())),
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Drop for DrainOnDrop<R> {
    fn drop(&mut self) {
        let Some(mut pipe) = self.inner.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let mut sink = tokio::io::sink();
                let discard = tokio::io::copy(&mut pipe, &mut sink);
                let _ = tokio::time::timeout(DRAIN_MAX, discard).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_dropped_reader_keeps_draining_so_the_writer_never_sees_a_closed_pipe() {
        let (mut writer, reader) = tokio::io::duplex(64);
        drop(DrainOnDrop::new(reader));
        // Far more than the 64-byte buffer: only a drain lets these writes finish.
        for _ in 0..100 {
            writer
                .write_all(&[b'x'; 64])
                .await
                .expect("write after drop");
        }
    }
}
