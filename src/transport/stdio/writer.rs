//! The writing half of the stdio transport: every send serializes its
//! message at once into a [`Queue`] shared by the transport's sends (in
//! the order rmcp calls `send`), and whichever send holds the [`Writer`]
//! next takes everything queued by then and writes it as one batch. A send
//! yields once before it takes the writer (`StdioTransport::send`), so the
//! calls woken together (16 in flight, answers read in one go) queue their
//! requests behind the first, which writes them all: one `write` and one
//! wake-up of the server for several messages. A lone send is written as
//! before, one turn of the scheduler later.
//!
//! Each line is numbered in call order; a send settles when its line's
//! batch was written ([`Fate::Written`]) or given up ([`Fate::Lost`]). A
//! batch whose send was cancelled half-way is finished by the next holder,
//! so the stream never carries a torn line.

use std::ops::Range;
use std::sync::{Mutex as StdMutex, PoisonError};
use std::time::Duration;

use rmcp::service::{RoleClient, TxJsonRpcMessage};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::time::timeout;

use super::stall;

/// Capacity (bytes) the write buffer may keep between batches.
const KEEP_WRITE_CAPACITY: usize = 1024 * 1024;

/// Lines serialized by `send` and not yet taken by the writer. Bounded by
/// what is in flight: a message's line replaces the message, which rmcp
/// held until its send ran.
#[derive(Default)]
pub(super) struct Queue {
    /// The lines, each with its `\n`.
    bytes: Vec<u8>,
    /// Number of the last line queued (lines are numbered from 1).
    last: u64,
}

impl Queue {
    /// Serializes `item` and its `\n` at the end of the queue; the line's
    /// number.
    ///
    /// # Errors
    /// The serializer's (nothing is queued then).
    pub(super) fn push(&mut self, item: &TxJsonRpcMessage<RoleClient>) -> std::io::Result<u64> {
        let start = self.bytes.len();
        if let Err(e) = serde_json::to_writer(&mut self.bytes, item) {
            self.bytes.truncate(start);
            return Err(e.into());
        }
        self.bytes.push(b'\n');
        self.last += 1;
        Ok(self.last)
    }
}

/// [`Queue::push`] on the shared queue.
pub(super) fn enqueue(
    queue: &StdMutex<Queue>,
    item: &TxJsonRpcMessage<RoleClient>,
) -> std::io::Result<u64> {
    queue
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(item)
}

/// What became of a queued line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Its batch was written whole.
    Written,
    /// Its batch was given up (stdin took nothing for the write timeout).
    Lost,
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
    /// An earlier holder gave up the batch holding it.
    Lost,
    /// Stdin failed or is closed.
    Io(std::io::Error),
}

/// Stdin and the batch being written.
pub(super) struct Writer<W> {
    out: Option<W>,
    /// The batch: queued lines taken whole.
    buf: Vec<u8>,
    /// Bytes of `buf` written so far.
    written: usize,
    /// Number of the last line in `buf`.
    buf_last: u64,
    /// Every line up to this number is settled (written, or in `lost`).
    settled: u64,
    /// The lines of the last batch given up. Only the last: a sender
    /// whose line was in it is waiting for the lock when it is given up
    /// and looks next, where another batch can only be given up after the
    /// write timeout passes again.
    lost: Range<u64>,
    /// How long one write may take nothing before it is given up.
    stall: Duration,
    /// Marked at each write that took bytes.
    last: stall::LastWrite,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// A writer of `out`, giving up a write that takes nothing for `stall`.
    pub(super) fn new(out: W, stall: Duration, last: stall::LastWrite) -> Self {
        Self {
            out: Some(out),
            buf: Vec::new(),
            written: 0,
            buf_last: 0,
            settled: 0,
            lost: 0..0,
            stall,
            last,
        }
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

    /// Closes stdin (a send after it fails).
    pub(super) fn close(&mut self) {
        drop(self.out.take());
    }

    fn fate(&self, line: u64) -> Fate {
        if self.lost.contains(&line) {
            Fate::Lost
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
    pub(super) async fn write_through(
        &mut self,
        queue: &StdMutex<Queue>,
        line: u64,
    ) -> Result<(), Failure> {
        loop {
            match self.fate(line) {
                Fate::Written => return Ok(()),
                Fate::Lost => return Err(Failure::Lost),
                Fate::Waiting => {}
            }
            if self.written == self.buf.len() {
                self.take(queue);
            }
            match self.finish().await {
                Ok(()) => self.settled = self.buf_last,
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    return Err(Failure::Stalled {
                        torn: self.abandon(),
                    })
                }
                Err(e) => return Err(Failure::Io(e)),
            }
        }
    }

    /// Takes every queued line as the next batch (the buffers swap, so
    /// both keep their capacity).
    fn take(&mut self, queue: &StdMutex<Queue>) {
        let mut queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
        self.buf.clear();
        std::mem::swap(&mut self.buf, &mut queue.bytes);
        self.written = 0;
        self.buf_last = queue.last;
        if queue.bytes.capacity() > KEEP_WRITE_CAPACITY {
            queue.bytes = Vec::new();
        }
    }

    /// Gives up the batch being written: `true` when part of it was
    /// written (the stream is torn: stdin is closed), `false` when none
    /// was (its lines are dropped). Either way its lines are lost.
    fn abandon(&mut self) -> bool {
        let torn = self.written > 0 && self.written < self.buf.len();
        self.lost = self.settled + 1..self.buf_last + 1;
        self.settled = self.buf_last;
        self.buf.clear();
        self.written = 0;
        if torn {
            self.out = None;
        }
        torn
    }

    /// Writes what is left of the batch and flushes; `TimedOut` when stdin
    /// took nothing for `stall`.
    async fn finish(&mut self) -> std::io::Result<()> {
        let stall = self.stall;
        let Some(out) = self.out.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "Transport is closed",
            ));
        };
        while self.written < self.buf.len() {
            let write = timeout(stall, out.write(&self.buf[self.written..]));
            match write.await.map_err(|_| stall::stalled(stall))?? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => {
                    self.written += n;
                    self.last.mark();
                }
            }
        }
        let flush = timeout(stall, out.flush());
        flush.await.map_err(|_| stall::stalled(stall))??;
        if self.buf.capacity() > KEEP_WRITE_CAPACITY {
            self.buf = Vec::new();
            self.written = 0;
        }
        Ok(())
    }
}
