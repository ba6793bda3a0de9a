//! Watches a stdio server's stdout (MCP 2025-11-25 "Transports › stdio":
//! one JSON-RPC message per line) without changing a byte of it. rmcp's line
//! codec drops every line it cannot deliver without a word; this monitor
//! reports each one:
//!
//! - lines that do not start like JSON (banners such as `Server running on
//!   stdio`) become `log` warnings;
//! - JSON lines longer than the stdio message limit, or nested deeper than
//!   [`MAX_MESSAGE_DEPTH`], are reported as [`Discarded`] with
//!   `limit_exceeded` (the message's `id` found in the first or last
//!   [`OVERSIZE_ID_WINDOW_BYTES`](crate::limits::OVERSIZE_ID_WINDOW_BYTES)
//!   of a line too long to keep, anywhere in a line too deep);
//! - JSON lines rmcp cannot decode as a message (invalid UTF-8, not JSON, a
//!   response without `result` or `error`, an error whose `code` is not an
//!   integer, a batch, any shape rmcp rejects: the verdict is rmcp's own
//!   decode, see `decode`) are reported as [`Discarded`] with
//!   `protocol_error` and what was wrong; the `id` of a line that is not
//!   JSON is its top-level `id` member wherever it is in the line. (A lone
//!   UTF-16 surrogate escape alone does not make a line undecodable: the
//!   stdio transport reads it as U+FFFD, see `transport::lone_surrogates`.)
//!
//! A [`Discarded`] goes to [`DiscardedIds`] for each response id the line
//! carries, so the request waiting for it fails at once instead of at its
//! timeout; every such line is also a `log` warning naming the server with
//! a truncated preview. Warnings are rate-limited ([`STDOUT_NOISE_WARNINGS_PER_WINDOW`]
//! per [`STDOUT_NOISE_WINDOW_MS`]); the connection and other requests go on.
//!
//! Inside, `framer::Framer` splits the bytes into lines (`memchr`) and a
//! [`Reporter`] turns undeliverable lines into events. The stdio transport
//! (`crate::transport::stdio`) uses both and decodes each line once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::ErrorCode;
use crate::events::{log, EventSink, LogLevel};
use crate::limits::{
    MAX_MESSAGE_DEPTH, STDOUT_NOISE_EXCERPT_BYTES, STDOUT_NOISE_WARNINGS_PER_WINDOW,
    STDOUT_NOISE_WINDOW_MS,
};

mod decode;
pub(crate) mod framer;
#[cfg(test)]
mod tests;

pub(crate) use decode::framed;
use framer::{Kind, Summary};

/// A response the stdout reader could not deliver.
#[derive(Debug, Clone, PartialEq)]
pub struct Discarded {
    /// The request id it answered (a JSON-RPC id as JSON: number or string).
    pub id: Value,
    /// How the waiting request fails: `limit_exceeded` (too long or too
    /// deep) or `protocol_error` (not a JSON-RPC message rmcp can decode).
    pub code: ErrorCode,
    /// What was wrong, e.g. "not valid UTF-8 (byte 0xB0 at offset 62)".
    pub reason: String,
}

/// Where each undeliverable response goes; the call waiting for its id
/// fails with its code.
pub type DiscardedIds = tokio::sync::broadcast::Sender<Discarded>;

/// Turns finished lines into `log` events (target `host.stdio`) and
/// undeliverable responses into [`DiscardedIds`] messages.
pub(crate) struct Reporter {
    server_id: String,
    sink: Arc<dyn EventSink>,
    /// rmcp's line limit (bytes, `\n` included).
    max_line: usize,
    discarded: Option<DiscardedIds>,
    window: NoiseWindow,
}

/// The rate limit of warnings: at most [`STDOUT_NOISE_WARNINGS_PER_WINDOW`]
/// per [`STDOUT_NOISE_WINDOW_MS`].
struct NoiseWindow {
    start: Instant,
    warned: u32,
    /// Lines not reported since the last warning.
    suppressed: u64,
}

impl Reporter {
    /// The server's id and the sink its warnings go to (for the writer's
    /// own warning, see `transport::stdio`).
    pub(crate) fn sink(&self) -> (String, Arc<dyn EventSink>) {
        (self.server_id.clone(), self.sink.clone())
    }

    /// The line limit (bytes, `\n` included).
    pub(crate) fn max_line(&self) -> usize {
        self.max_line
    }

    /// A reporter for server `server_id` (warnings to `sink`) whose line
    /// limit is `max_line` bytes (`\n` included); undeliverable responses
    /// go to `discarded`.
    pub(crate) fn new(
        server_id: String,
        sink: Arc<dyn EventSink>,
        max_line: usize,
        discarded: Option<DiscardedIds>,
    ) -> Self {
        Self {
            server_id,
            sink,
            max_line,
            discarded,
            window: NoiseWindow {
                start: Instant::now(),
                warned: 0,
                suppressed: 0,
            },
        }
    }

    /// Sends `message` as a warning unless the window is full; says how
    /// many lines were not reported since the last one.
    fn warn(&mut self, message: String) {
        let now = Instant::now();
        let window = &mut self.window;
        if now.duration_since(window.start) >= Duration::from_millis(STDOUT_NOISE_WINDOW_MS) {
            window.start = now;
            window.warned = 0;
        }
        if window.warned >= STDOUT_NOISE_WARNINGS_PER_WINDOW {
            window.suppressed += 1;
            return;
        }
        window.warned += 1;
        let mut message = message;
        if window.suppressed > 0 {
            message.push_str(&format!(
                " ({} similar lines not reported)",
                window.suppressed
            ));
            window.suppressed = 0;
        }
        self.sink.send(log(
            LogLevel::Warn,
            "host.stdio",
            Some(&self.server_id),
            message,
        ));
    }

    /// A non-JSON line, starting with `excerpt`.
    fn noise(&mut self, excerpt: &[u8]) {
        let text = String::from_utf8_lossy(excerpt);
        self.warn(format!(
            "skipped a stdout line that is not JSON-RPC: {:?}",
            text.trim_end()
        ));
    }

    /// A line longer than the limit (`summary` of all its bytes).
    pub(crate) fn oversize(&mut self, summary: &Summary) {
        match summary.kind {
            Kind::Blank => {}
            Kind::Noise => self.noise(&summary.excerpt),
            Kind::Json => {
                let reason = format!(
                    "{} bytes, more than the stdio message limit ({} bytes)",
                    summary.len.saturating_add(1),
                    self.max_line
                );
                let ids = decode::message_id(&summary.head, &summary.tail);
                let ids = ids.into_iter().collect();
                self.report(&[], ids, ErrorCode::LimitExceeded, reason);
            }
        }
    }

    /// A line (without `\n`, within the limit) rmcp cannot decode: `err`
    /// is its decode error of the [`framed`] line.
    pub(crate) fn undecodable(&mut self, line: &[u8], err: &serde_json::Error) {
        let summary = Summary::of(line);
        match summary.kind {
            Kind::Blank => {}
            Kind::Noise => self.noise(&summary.excerpt),
            Kind::Json => {
                let depth = framer::max_depth(&line[Summary::json_start(line)..]);
                if depth > MAX_MESSAGE_DEPTH {
                    let reason = format!(
                        "nested {depth} levels deep, more than a message may be ({MAX_MESSAGE_DEPTH})"
                    );
                    let ids = decode::top_level_id(framed(line));
                    let ids = ids.into_iter().collect();
                    self.report(line, ids, ErrorCode::LimitExceeded, reason);
                } else {
                    let bad = decode::explain(framed(line), err);
                    self.report(line, bad.ids, ErrorCode::ProtocolError, bad.what);
                }
            }
        }
    }

    /// Warns about an undeliverable `line` and fails the requests it answered.
    fn report(&mut self, line: &[u8], ids: Vec<Value>, code: ErrorCode, reason: String) {
        let what = match ids.as_slice() {
            [] => "a message".to_owned(),
            [id] => format!("the response to request {id}"),
            ids => format!("the responses to requests {}", Value::from(ids.to_vec())),
        };
        let mut message = format!("discarded {what}: {reason}");
        if code == ErrorCode::ProtocolError {
            message.push_str(&format!("; the line starts {}", preview(line)));
        }
        self.warn(message);
        if let Some(sender) = &self.discarded {
            for id in ids {
                let reason = reason.clone();
                let _ = sender.send(Discarded { id, code, reason });
            }
        }
    }
}

/// The start of `line` for a log message: at most
/// [`STDOUT_NOISE_EXCERPT_BYTES`], invalid UTF-8 and control characters
/// shown as U+FFFD, "…" when cut.
fn preview(line: &[u8]) -> String {
    let head = &line[..line.len().min(STDOUT_NOISE_EXCERPT_BYTES)];
    let text: String = String::from_utf8_lossy(head)
        .trim()
        .chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect();
    let more = if line.len() > head.len() { "…" } else { "" };
    format!("{text}{more}")
}
