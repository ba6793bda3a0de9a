//! The writing half of the stdio transport: every send serializes its
//! message at once into a [`Queue`] shared by the transport's sends (in
//! the order rmcp calls `send`), and whichever send holds the [`Writer`]
//! next takes everything queued by then and writes it as one batch. A send
//! that finds the writer free writes at once (its line alone, usually):
//! the server starts on a request while the client is still busy with the
//! next, which at 16 calls in flight on two cores gave 8–14 % more calls per
//! second than a send that first yielded to let the others queue behind it
//! (docs/benchmark.md, issue 28, "fifth"). Lines queued while a write is
//! under way (a server slow to read) go out together in the next one.
//!
//! Each line is numbered in call order; a send settles when its line's
//! batch was written ([`Fate::Written`]) or given up ([`Fate::Lost`]). A
//! batch is given up with every line queued behind it (a stall, a failed
//! or closed stdin), so a send that failed is never written later and one
//! told `Ok` was written. A batch whose send was cancelled half-way is
//! finished by the next holder, so the stream never carries a torn line.

use std::collections::VecDeque;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::Duration;

use rmcp::service::{RoleClient, TxJsonRpcMessage};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::time::timeout;

use crate::limits::MAX_LOST_STDIN_BATCHES;

/// Capacity (bytes) the write buffer may keep between batches.
const KEEP_WRITE_CAPACITY: usize = 1024 * 1024;

/// Lines serialized by `send` and not yet taken by the writer. Bounded by
/// what is in flight: a message's line replaces the message, which rmcp
/// held until its send ran; once stdin is closed or failed nothing more
/// is queued.
#[derive(Default)]
pub(super) struct Queue {
    /// The lines, each with its `\n`.
    bytes: Vec<u8>,
    /// Number of the last line queued (lines are numbered from 1).
    last: u64,
    /// Stdin is closed or failed: [`Queue::push`] refuses.
    closed: bool,
}

impl Queue {
    /// Serializes `item` and its `\n` at the end of the queue; the line's
    /// number.
    ///
    /// # Errors
    /// `NotConnected` once stdin is closed or failed; the serializer's
    /// (nothing is queued then).
    pub(super) fn push(&mut self, item: &TxJsonRpcMessage<RoleClient>) -> std::io::Result<u64> {
        if self.closed {
            return Err(closed());
        }
        let start = self.bytes.len();
        if let Err(e) = serde_json::to_writer(&mut self.bytes, item) {
            self.bytes.truncate(start);
            return Err(e.into());
        }
        self.bytes.push(b'\n');
        self.last += 1;
        Ok(self.last)
    }

    /// Drops every queued line (they are lost); the number of the last.
    fn drop_all(&mut self, close: bool) -> u64 {
        self.bytes = Vec::new();
        self.closed |= close;
        self.last
    }
}

/// [`Queue::push`] on the shared queue.
pub(super) fn enqueue(
    queue: &StdMutex<Queue>,
    item: &TxJsonRpcMessage<RoleClient>,
) -> std::io::Result<u64> {
    lock(queue).push(item)
}

fn lock(queue: &StdMutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    queue.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The error of a send on a closed stdin.
fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotConnected, "Transport is closed")
}

/// What became of a queued line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Its batch was written whole.
    Written,
    /// It was given up with a batch, for this reason.
    Lost(std::io::ErrorKind),
    /// Still queued, or in the batch being written.
    Waiting,
}

/// Why [`Writer::write_through`] did not write a line.
#[derive(Debug)]
pub(super) enum Failure {
    /// This call gave up the batch holding it: stdin took nothing for the
    /// write timeout. `torn` when part of the batch was written (stdin is
    /// then closed: every later send fails).
    Stalled { torn: bool },
    /// Stdin failed or is closed, or the line was given up with an earlier
    /// batch (a stall: `TimedOut`; a failed stdin or `close`).
    Failed(std::io::Error),
}

/// The error of a send abandoned because stdin took nothing for `stall`
/// ([`STDIN_WRITE_TIMEOUT_MS`](crate::limits::STDIN_WRITE_TIMEOUT_MS)).
pub(super) fn stalled(stall: Duration) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!(
            "the server did not read its stdin for {} ms",
            stall.as_millis()
        ),
    )
}

/// Stdin and the batch being written.
pub(super) struct Writer<W> {
    out: Option<W>,
    /// The transport's queue, which `send` fills.
    queue: Arc<StdMutex<Queue>>,
    /// The batch: queued lines taken whole.
    buf: Vec<u8>,
    /// Bytes of `buf` written so far.
    written: usize,
    /// Number of the last line in `buf`.
    buf_last: u64,
    /// Every line up to this number is settled: written, or in `lost`.
    settled: u64,
    /// The lines given up, oldest first, each range with why: a batch and
    /// every line queued behind it when it was given up (ranges that meet,
    /// for the same reason, are one). At most [`MAX_LOST_STDIN_BATCHES`];
    /// each took a whole write timeout.
    lost: VecDeque<(RangeInclusive<u64>, std::io::ErrorKind)>,
    /// The last line of the oldest range let go of to keep `lost` bounded:
    /// a line up to it that no kept range holds may have been lost, so it
    /// is reported lost (`TimedOut`), never written.
    forgotten: u64,
    /// How long one write may take nothing before it is given up.
    stall: Duration,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// A writer of `out` taking its lines from `queue`, giving up a write
    /// that takes nothing for `stall`.
    pub(super) fn new(out: W, queue: Arc<StdMutex<Queue>>, stall: Duration) -> Self {
        Self {
            out: Some(out),
            queue,
            buf: Vec::new(),
            written: 0,
            buf_last: 0,
            settled: 0,
            lost: VecDeque::new(),
            forgotten: 0,
            stall,
        }
    }

    /// The write timeout.
    pub(super) fn stall(&self) -> Duration {
        self.stall
    }

    /// Sets the write timeout (tests).
    #[cfg(test)]
    pub(super) fn set_stall(&mut self, stall: Duration) {
        self.stall = stall;
    }

    /// Stdin, while open (tests).
    #[cfg(test)]
    pub(super) fn stdin(&self) -> Option<&W> {
        self.out.as_ref()
    }

    /// Closes stdin: first the rest of a batch a cancelled send left
    /// half-written (bounded by the write timeout), so the stream ends on
    /// a whole line; what is queued behind it is lost, a send after it
    /// fails.
    pub(super) async fn close(&mut self) {
        if self.written > 0 && self.written < self.buf.len() && self.finish().await.is_ok() {
            self.settled = self.buf_last;
        }
        drop(self.out.take());
        self.give_up(std::io::ErrorKind::NotConnected, true);
    }

    fn fate(&self, line: u64) -> Fate {
        if let Some((_, why)) = self.lost.iter().find(|(lines, _)| lines.contains(&line)) {
            Fate::Lost(*why)
        } else if line <= self.forgotten {
            Fate::Lost(std::io::ErrorKind::TimedOut)
        } else if line <= self.settled {
            Fate::Written
        } else {
            Fate::Waiting
        }
    }

    /// Writes until line `line` is settled: the rest of a batch a
    /// cancelled send left, then everything queued by then, each batch
    /// in as few `write`s as stdin takes.
    ///
    /// # Errors
    /// See [`Failure`].
    pub(super) async fn write_through(&mut self, line: u64) -> Result<(), Failure> {
        loop {
            match self.fate(line) {
                Fate::Written => return Ok(()),
                Fate::Lost(why) => return Err(Failure::Failed(self.lost(why))),
                Fate::Waiting => {}
            }
            if self.written == self.buf.len() {
                self.take();
            }
            match self.finish().await {
                Ok(()) => self.settled = self.buf_last,
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    // Bytes handed to stdin may still arrive (a flush that
                    // stalled included): the batch is torn, not dropped.
                    let torn = self.written > 0;
                    self.give_up(e.kind(), torn);
                    return Err(Failure::Stalled { torn });
                }
                Err(e) => {
                    self.give_up(e.kind(), true);
                    return Err(Failure::Failed(e));
                }
            }
        }
    }

    /// The error of a line given up with a batch, for `why`.
    fn lost(&self, why: std::io::ErrorKind) -> std::io::Error {
        match why {
            std::io::ErrorKind::TimedOut => stalled(self.stall),
            why => std::io::Error::new(
                why,
                "an earlier write to the server's stdin failed; this message was dropped",
            ),
        }
    }

    /// Takes every queued line as the next batch (the buffers swap, so
    /// both keep their capacity).
    fn take(&mut self) {
        let mut queue = lock(&self.queue);
        self.buf.clear();
        std::mem::swap(&mut self.buf, &mut queue.bytes);
        self.written = 0;
        self.buf_last = queue.last;
        if queue.bytes.capacity() > KEEP_WRITE_CAPACITY {
            queue.bytes = Vec::new();
        }
    }

    /// Gives up the batch being written and every line queued behind it
    /// (they are lost, for `why`); with `close`, stdin too (a torn stream
    /// or a failed stdin: every later send fails).
    fn give_up(&mut self, why: std::io::ErrorKind, close: bool) {
        let last = lock(&self.queue).drop_all(close);
        if last > self.settled {
            let first = self.settled + 1;
            match self.lost.back_mut() {
                Some((lines, kind)) if *kind == why && *lines.end() + 1 == first => {
                    *lines = *lines.start()..=last;
                }
                _ => {
                    if self.lost.len() == MAX_LOST_STDIN_BATCHES {
                        if let Some((lines, _)) = self.lost.pop_front() {
                            self.forgotten = *lines.end();
                        }
                    }
                    self.lost.push_back((first..=last, why));
                }
            }
        }
        self.settled = last;
        self.buf_last = last;
        self.buf = Vec::new();
        self.written = 0;
        if close {
            self.out = None;
        }
    }

    /// Writes what is left of the batch and flushes; `TimedOut` when stdin
    /// took nothing for `stall`.
    async fn finish(&mut self) -> std::io::Result<()> {
        let stall = self.stall;
        let Some(out) = self.out.as_mut() else {
            return Err(closed());
        };
        while self.written < self.buf.len() {
            let write = timeout(stall, out.write(&self.buf[self.written..]));
            match write.await.map_err(|_| stalled(stall))?? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => self.written += n,
            }
        }
        let flush = timeout(stall, out.flush());
        flush.await.map_err(|_| stalled(stall))??;
        if self.buf.capacity() > KEEP_WRITE_CAPACITY {
            self.buf = Vec::new();
            self.written = 0;
        }
        Ok(())
    }
}
