//! The stdio transport of a client (MCP 2025-11-25 "Transports › stdio":
//! newline-delimited JSON-RPC messages on the server's stdin and stdout),
//! an rmcp [`Transport<RoleClient>`] in place of rmcp's `AsyncRwTransport`.
//!
//! Receiving: stdout is split into lines with `memchr` by the stdout
//! monitor's framer (bounded by the stdio message limit), and each line is
//! decoded once into a [`ServerJsonRpcMessage`], `tools/call` results on a
//! typed fast path (`fast`). Only a line that does not decode is looked at
//! again: the stdout monitor's [`Reporter`] says what was wrong (`log`
//! warnings, [`DiscardedIds`] for the requests it answered), and rmcp's own
//! handling follows (a non-standard notification is skipped, well-formed
//! JSON of the wrong shape is answered with an `Invalid Request` error, as
//! rmcp's `AsyncRwTransport` does).
//!
//! Sending: each message is serialized once into a reused buffer with its
//! `\n` and written whole; a send cancelled half-way is finished by the next
//! one, so the stream never carries a torn line.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{ErrorData, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

use crate::transport::stdout_monitor::framer::{Frame, Framer};
use crate::transport::stdout_monitor::{framed, Reporter};

mod compat;
pub(crate) mod fast;
#[cfg(test)]
mod report_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

/// Capacity (bytes) the write buffer may keep between messages.
const KEEP_WRITE_CAPACITY: usize = 1024 * 1024;

/// A client transport over a server's stdout (`R`) and stdin (`W`); see
/// the module documentation.
pub struct StdioTransport<R, W> {
    read: R,
    framer: Framer,
    reporter: Reporter,
    writer: Arc<Mutex<Writer<W>>>,
    /// A line was well-formed JSON of the wrong shape: answer it with an
    /// `Invalid Request` error before reading on.
    answer_invalid: bool,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading `read` (a server's stdout) and writing `write`
    /// (its stdin). Lines longer than the `reporter`'s line limit (bytes,
    /// `\n` included) are dropped; undeliverable lines go to `reporter`
    /// (`log` warnings, and discarded response ids).
    pub fn new((read, write): (R, W), reporter: Reporter) -> Self {
        Self {
            read,
            framer: Framer::new(reporter.max_line()),
            reporter,
            writer: Arc::new(Mutex::new(Writer {
                out: Some(write),
                buf: Vec::new(),
                written: 0,
            })),
            answer_invalid: false,
        }
    }

    /// Decodes one line (without `\n`); reports it when it does not decode.
    fn decode_line(&mut self, range: std::ops::Range<usize>) -> Option<ServerJsonRpcMessage> {
        let line = self.framer.line(range);
        if line.strip_suffix(b"\r").unwrap_or(line).is_empty() {
            return None;
        }
        let text = framed(line);
        let err = match fast::decode(text) {
            Ok(message) => return Some(message),
            Err(e) => e,
        };
        self.reporter.undecodable(line, &err);
        if !compat::ignored_notification(text) {
            use serde_json::error::Category;
            if matches!(err.classify(), Category::Data | Category::Io) {
                self.answer_invalid = true;
            }
        }
        None
    }

    /// Sends the `Invalid Request` error rmcp answers a malformed message
    /// with; `false` when stdin is closed or failed.
    async fn answer_invalid_request(&mut self) -> bool {
        let mut writer = self.writer.lock().await;
        if writer.out.is_none() {
            return false;
        }
        let response = TxJsonRpcMessage::<RoleClient>::error(
            ErrorData::invalid_request("Invalid request", None),
            None,
        );
        if writer.finish().await.is_err() || writer.enqueue(&response).is_err() {
            return false;
        }
        self.answer_invalid = false;
        writer.finish().await.is_ok()
    }
}

impl<R, W> Transport<RoleClient> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut writer = writer.lock().await;
            writer.finish().await?;
            writer.enqueue(&item)?;
            writer.finish().await
        }
    }

    /// Cancel-safe: bytes read stay in the framer, a line is taken only
    /// when it is decoded.
    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if self.answer_invalid && !self.answer_invalid_request().await {
                return None;
            }
            match self.framer.next_frame() {
                Some(Frame::Line(range)) => match self.decode_line(range) {
                    Some(message) => return Some(message),
                    None => continue,
                },
                Some(Frame::Oversize(summary)) => {
                    self.reporter.oversize(&summary);
                    continue;
                }
                None => {}
            }
            let buffer = self.framer.buffer();
            match self.read.read_buf(buffer).await {
                Ok(0) => return None,
                Ok(_) => {}
                // The connection ends; the process watch reports why.
                Err(_) => return None,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.writer.lock().await.out.take());
        Ok(())
    }
}

/// The writing half: stdin and the bytes of the message being written.
struct Writer<W> {
    out: Option<W>,
    /// One serialized message and its `\n`.
    buf: Vec<u8>,
    /// Bytes of `buf` written so far.
    written: usize,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// Serializes `item` and its `\n` into the buffer (which must be
    /// written out: see [`Writer::finish`]).
    fn enqueue(&mut self, item: &TxJsonRpcMessage<RoleClient>) -> std::io::Result<()> {
        self.buf.clear();
        self.written = 0;
        if let Err(e) = serde_json::to_writer(&mut self.buf, item) {
            self.buf.clear();
            return Err(e.into());
        }
        self.buf.push(b'\n');
        Ok(())
    }

    /// Writes what is left of the buffer (a message, or the rest of one
    /// whose send was cancelled) and flushes.
    async fn finish(&mut self) -> std::io::Result<()> {
        let Some(out) = self.out.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "Transport is closed",
            ));
        };
        while self.written < self.buf.len() {
            match out.write(&self.buf[self.written..]).await? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => self.written += n,
            }
        }
        out.flush().await?;
        if self.buf.capacity() > KEEP_WRITE_CAPACITY {
            self.buf = Vec::new();
            self.written = 0;
        }
        Ok(())
    }
}
