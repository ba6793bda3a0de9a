//! The stdio transport of a client (MCP 2025-11-25 "Transports › stdio":
//! newline-delimited JSON-RPC messages on the server's stdin and stdout),
//! an rmcp [`Transport<RoleClient>`] in place of rmcp's `AsyncRwTransport`.
//!
//! Receiving: stdout is split into lines with `memchr` by the stdout
//! monitor's framer (bounded by the stdio message limit), and each line is
//! decoded once into a [`ServerJsonRpcMessage`], `tools/call` results on a
//! typed fast path (`fast`), the host's `tools/list` results as raw JSON
//! (`list_results`). Only a line that does not decode is looked at
//! again: the stdout monitor's [`Reporter`] says what was wrong (`log`
//! warnings, [`DiscardedIds`] for the requests it answered), and rmcp's own
//! handling follows (a non-standard notification is skipped, well-formed
//! JSON of the wrong shape is answered with an `Invalid Request` error, as
//! rmcp's `AsyncRwTransport` does).
//!
//! Sending: each message is serialized once, when rmcp calls `send`, into
//! a queue shared by the transport's sends, and written by whichever send
//! holds the writer next, with every line queued by then (`writer`): a
//! send finding the writer free writes its line at once, and the lines
//! queued while a write is under way go out together in the next one. A
//! send cancelled half-way is finished by the next one, so the stream
//! never carries a torn line. A server that stops reading its stdin fills
//! the pipe: once stdin took nothing for [`STDIN_WRITE_TIMEOUT_MS`] the
//! batch being written, and the sends waiting behind it, are abandoned and
//! fail (a `warn` log says so, target `host.stdio`; a slow reader that
//! keeps taking bytes stalls nothing); when part of the batch was written
//! the stream is torn, so the connection fails too (stdin is closed, the
//! receiving side ends).

use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use rmcp::model::{ErrorData, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{watch, Mutex};

use crate::events::{log, EventSink, LogLevel};
use crate::limits::STDIN_WRITE_TIMEOUT_MS;

use crate::transport::lone_surrogates;
use crate::transport::stdout_monitor::framer::{Frame, Framer};
use crate::transport::stdout_monitor::{framed, Reporter};

mod compat;
#[cfg(test)]
mod contract_tests;
pub(crate) mod fast;
mod list_results;
#[cfg(test)]
mod report_tests;
#[cfg(test)]
mod stall_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
mod writer;

use writer::{Failure, Queue, Writer};

/// A client transport over a server's stdout (`R`) and stdin (`W`); see
/// the module documentation.
pub struct StdioTransport<R, W> {
    read: R,
    framer: Framer,
    reporter: Reporter,
    /// Lines serialized by `send`, waiting for the writer (`writer`).
    queue: Arc<StdMutex<Queue>>,
    writer: Arc<Mutex<Writer<W>>>,
    /// Set once a send tore the stream (see the module documentation).
    torn: Arc<watch::Sender<bool>>,
    /// Where the writer's warning goes: the server's id and sink.
    warn_to: (String, Arc<dyn EventSink>),
    /// The line of the `Invalid Request` answer queued and not yet
    /// written (a cancelled `receive` waits for it again, never queues a
    /// second).
    answer_line: Option<u64>,
    /// A line was well-formed JSON of the wrong shape: answer it with an
    /// `Invalid Request` error before reading on.
    answer_invalid: bool,
    /// The `tools/list` requests whose answers are read raw (`list_results`).
    list_ids: list_results::ListIds,
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
        let (torn, _) = watch::channel(false);
        let stall = Duration::from_millis(STDIN_WRITE_TIMEOUT_MS);
        let queue = Arc::<StdMutex<Queue>>::default();
        Self {
            torn: Arc::new(torn),
            warn_to: reporter.sink(),
            answer_line: None,
            read,
            framer: Framer::new(reporter.max_line()),
            reporter,
            writer: Arc::new(Mutex::new(Writer::new(write, queue.clone(), stall))),
            queue,
            answer_invalid: false,
            list_ids: list_results::ListIds::default(),
        }
    }

    /// The same with a write timeout of `timeout` (tests).
    #[cfg(test)]
    fn with_write_timeout(self, timeout: Duration) -> Self {
        if let Ok(mut writer) = self.writer.try_lock() {
            writer.set_stall(timeout);
        }
        self
    }

    /// Becomes `true` once a send tore the stream and the connection failed
    /// (the server stopped reading its stdin).
    pub fn stalled(&self) -> watch::Receiver<bool> {
        self.torn.subscribe()
    }

    /// Decodes one line (without `\n`); reports it when it does not decode.
    fn decode_line(&mut self, range: std::ops::Range<usize>) -> Option<ServerJsonRpcMessage> {
        let line = self.framer.line(range);
        if line.strip_suffix(b"\r").unwrap_or(line).is_empty() {
            return None;
        }
        let text = framed(line);
        let err = match decode_text(&mut self.list_ids, text) {
            Ok(message) => return Some(message),
            Err(e) => e,
        };
        // A lone surrogate escape (a JS server cut a string mid-pair): read
        // as U+FFFD, as `JSON.parse` would read the line at all; a line
        // still wrong is reported as repaired (what else was wrong).
        let err = match lone_surrogates::replace(text) {
            Some(repaired) => match decode_text(&mut self.list_ids, &repaired) {
                Ok(message) => return Some(message),
                Err(e) => {
                    self.reporter.undecodable(&repaired, &e);
                    e
                }
            },
            None => {
                self.reporter.undecodable(line, &err);
                err
            }
        };
        if !compat::ignored_notification(text) {
            use serde_json::error::Category;
            if matches!(err.classify(), Category::Data | Category::Io) {
                self.answer_invalid = true;
            }
        }
        None
    }

    /// Sends the `Invalid Request` error rmcp answers a malformed message
    /// with; `false` when stdin is closed or failed. Like a send, given up
    /// when stdin takes nothing for [`STDIN_WRITE_TIMEOUT_MS`], so a server
    /// that does not read its stdin never stalls the receiving side.
    /// Cancel-safe: the answer is queued once.
    async fn answer_invalid_request(&mut self) -> bool {
        let line = match self.answer_line {
            Some(line) => line,
            None => {
                let response = TxJsonRpcMessage::<RoleClient>::error(
                    ErrorData::invalid_request("Invalid request", None),
                    None,
                );
                let Ok(line) = writer::enqueue(&self.queue, &response) else {
                    return false;
                };
                *self.answer_line.insert(line)
            }
        };
        let mut writer = self.writer.lock().await;
        let written = writer.write_through(line).await;
        self.answer_line = None;
        match written {
            Ok(()) => {
                self.answer_invalid = false;
                true
            }
            Err(Failure::Stalled { torn }) => {
                if torn {
                    self.torn.send_replace(true);
                }
                false
            }
            Err(_) => false,
        }
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
        self.list_ids.note(&item);
        // Queued now, in call order; written by whichever send holds the
        // writer next (see `writer`).
        let line = writer::enqueue(&self.queue, &item);
        drop(item);
        let writer = self.writer.clone();
        let torn = self.torn.clone();
        let warn_to = self.warn_to.clone();
        async move {
            let line = line?;
            // Waits while the batch before makes progress (each of its
            // writes is bounded by the write timeout).
            let mut writer = writer.lock().await;
            let torn_now = match writer.write_through(line).await {
                Ok(()) => return Ok(()),
                Err(Failure::Failed(e)) => return Err(e),
                Err(Failure::Stalled { torn }) => torn,
            };
            let why = if torn_now {
                torn.send_replace(true);
                "its line is torn, so the connection fails"
            } else {
                "it was dropped (none of it was written)"
            };
            let (server_id, sink) = warn_to;
            let stall = writer.stall();
            let message = format!(
                "the server stopped reading its stdin: nothing could be written for {} ms; {why}",
                stall.as_millis()
            );
            sink.send(log(LogLevel::Warn, "host.stdio", Some(&server_id), message));
            Err(writer::stalled(stall))
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
            let mut torn = self.torn.subscribe();
            let read = tokio::select! {
                biased;
                _ = torn.wait_for(|torn| *torn) => return None,
                read = self.read.read_buf(buffer) => read,
            };
            match read {
                Ok(0) => return None,
                Ok(_) => {}
                // The connection ends; the process watch reports why.
                Err(_) => return None,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.close().await;
        Ok(())
    }
}

/// One framed line as a message: a noted `tools/list` answer raw
/// (`list_results`), anything else through [`fast::decode`].
fn decode_text(
    list_ids: &mut list_results::ListIds,
    text: &[u8],
) -> Result<ServerJsonRpcMessage, serde_json::Error> {
    match list_ids.answered(text) {
        Some(message) => Ok(message),
        None => fast::decode(text),
    }
}
