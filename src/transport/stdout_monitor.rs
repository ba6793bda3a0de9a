//! Watches a stdio server's stdout (MCP 2025-11-25 "Transports › stdio":
//! one JSON-RPC message per line) without changing a byte of it:
//!
//! - lines that are not JSON-RPC (banners such as `Server running on stdio`)
//!   become rate-limited `log` warnings; rmcp's line codec skips such lines
//!   itself, so a banner never kills the connection or delays messages;
//! - JSON lines longer than the stdio message limit, or nested deeper than
//!   [`MAX_MESSAGE_DEPTH`], are dropped by rmcp's codec without a word; this
//!   monitor reports them, and sends the message's `id` (when it can be found
//!   in the first or last [`OVERSIZE_ID_WINDOW_BYTES`] of the line) to
//!   [`OversizeIds`], so the waiting call fails with `limit_exceeded` at once
//!   instead of at its timeout.
//!
//! Inside, a `LineScanner` follows the bytes and a `Reporter` turns
//! finished lines into events.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, ReadBuf};

use crate::events::{log, EventSink, LogLevel};
use crate::limits::{
    MAX_MESSAGE_DEPTH, OVERSIZE_ID_WINDOW_BYTES, STDOUT_NOISE_EXCERPT_BYTES,
    STDOUT_NOISE_WARNINGS_PER_WINDOW, STDOUT_NOISE_WINDOW_MS,
};

/// Where the `id` of each undeliverable message goes (a JSON-RPC id as JSON:
/// number or string), with the reason. Calls waiting for that id fail with
/// `limit_exceeded`.
pub type OversizeIds = tokio::sync::broadcast::Sender<(serde_json::Value, String)>;

/// An `AsyncRead` adapter over a server's stdout: passes every byte through
/// and reports non-JSON lines and undeliverable JSON lines (see the module
/// documentation).
pub struct StdoutMonitor<R> {
    inner: R,
    scanner: LineScanner,
    reporter: Reporter,
}

impl<R> StdoutMonitor<R> {
    /// Wraps `inner`, the stdout of server `server_id`; warnings go to `sink`.
    pub fn new(inner: R, server_id: String, sink: Arc<dyn EventSink>) -> Self {
        Self {
            inner,
            scanner: LineScanner::default(),
            reporter: Reporter {
                server_id,
                sink,
                max_line: usize::MAX,
                oversize: None,
                noise: NoiseWindow {
                    start: Instant::now(),
                    warned: 0,
                    suppressed: 0,
                },
            },
        }
    }

    /// Reports JSON lines longer than `max_line` bytes: a warning, and the
    /// message's `id` (when it can be found near the start or the end of the
    /// line) on `ids`. Lines nested deeper than [`MAX_MESSAGE_DEPTH`] are
    /// reported on `ids` too.
    pub fn with_oversize(mut self, max_line: usize, ids: OversizeIds) -> Self {
        self.reporter.max_line = max_line;
        self.reporter.oversize = Some(ids);
        self
    }

    fn observe(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match self.scanner.push(b) {
                Some(LineEnd::Noise) => self.reporter.noise(&self.scanner.excerpt),
                Some(LineEnd::Json) => self.reporter.json_line(&self.scanner),
                None => {}
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for StdoutMonitor<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = poll {
            this.observe(&buf.filled()[before..]);
        }
        poll
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum LineState {
    /// At the start of a line (only whitespace seen so far).
    #[default]
    Start,
    /// Inside a line that starts like JSON.
    Json,
    /// Inside a line that does not start like JSON; collecting an excerpt.
    Noise,
}

/// A line that just ended (at `\n`), by how it started.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LineEnd {
    /// Not JSON: [`LineScanner::excerpt`] holds its start.
    Noise,
    /// JSON: length, depth, head and tail are in the scanner.
    Json,
}

/// Byte-level scan of stdout lines. For a JSON line it tracks the length,
/// the bracket depth outside strings (string and escape state) and the
/// first and last [`OVERSIZE_ID_WINDOW_BYTES`]; for other lines an excerpt.
/// What it holds about a line stays readable until the next line starts.
#[derive(Debug, Default)]
struct LineScanner {
    state: LineState,
    /// First [`STDOUT_NOISE_EXCERPT_BYTES`] of a noise line.
    excerpt: Vec<u8>,
    /// Bytes of the JSON line so far.
    line_len: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    depth: usize,
    max_depth: usize,
    in_string: bool,
    escaped: bool,
}

impl LineScanner {
    /// Feeds one byte; returns the kind of line that `b` (a `\n`) ended.
    fn push(&mut self, b: u8) -> Option<LineEnd> {
        if self.state == LineState::Json && b != b'\n' {
            self.json_byte(b);
        }
        match (self.state, b) {
            (_, b'\n') => {
                let ended = match self.state {
                    LineState::Start => None,
                    LineState::Json => Some(LineEnd::Json),
                    LineState::Noise => Some(LineEnd::Noise),
                };
                self.state = LineState::Start;
                return ended;
            }
            (LineState::Start, b' ' | b'\t' | b'\r') => {}
            (LineState::Start, b'{' | b'[') => self.start_json(b),
            (LineState::Start, _) => {
                self.state = LineState::Noise;
                self.excerpt.clear();
                self.excerpt.push(b);
            }
            (LineState::Noise, _) if self.excerpt.len() < STDOUT_NOISE_EXCERPT_BYTES => {
                self.excerpt.push(b)
            }
            _ => {}
        }
        None
    }

    fn start_json(&mut self, b: u8) {
        self.state = LineState::Json;
        self.line_len = 1;
        self.depth = 1;
        self.max_depth = 1;
        self.in_string = false;
        self.escaped = false;
        self.head.clear();
        self.head.push(b);
        self.tail.clear();
    }

    /// One byte inside a JSON line (after its first).
    fn json_byte(&mut self, b: u8) {
        self.line_len += 1;
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    self.max_depth = self.max_depth.max(self.depth);
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        if self.head.len() < OVERSIZE_ID_WINDOW_BYTES {
            self.head.push(b);
        } else {
            if self.tail.len() == OVERSIZE_ID_WINDOW_BYTES {
                self.tail.pop_front();
            }
            self.tail.push_back(b);
        }
    }
}

/// Turns finished lines into `log` events (target `host.stdio`) and
/// undeliverable message ids into [`OversizeIds`] messages.
struct Reporter {
    server_id: String,
    sink: Arc<dyn EventSink>,
    /// Longest deliverable JSON line (bytes).
    max_line: usize,
    oversize: Option<OversizeIds>,
    noise: NoiseWindow,
}

/// The rate limit of noise warnings: at most
/// [`STDOUT_NOISE_WARNINGS_PER_WINDOW`] per [`STDOUT_NOISE_WINDOW_MS`].
struct NoiseWindow {
    start: Instant,
    warned: u32,
    /// Noise lines not reported since the last warning.
    suppressed: u64,
}

impl Reporter {
    fn warn(&self, message: String) {
        self.sink.send(log(
            LogLevel::Warn,
            "host.stdio",
            Some(&self.server_id),
            message,
        ));
    }

    /// A non-JSON line, starting with `excerpt`.
    fn noise(&mut self, excerpt: &[u8]) {
        let now = Instant::now();
        let window = &mut self.noise;
        if now.duration_since(window.start) >= Duration::from_millis(STDOUT_NOISE_WINDOW_MS) {
            window.start = now;
            window.warned = 0;
        }
        if window.warned >= STDOUT_NOISE_WARNINGS_PER_WINDOW {
            window.suppressed += 1;
            return;
        }
        window.warned += 1;
        let text = String::from_utf8_lossy(excerpt);
        let mut message = format!(
            "skipped a stdout line that is not JSON-RPC: {:?}",
            text.trim_end()
        );
        if window.suppressed > 0 {
            message.push_str(&format!(
                " ({} similar lines not reported)",
                window.suppressed
            ));
            window.suppressed = 0;
        }
        self.warn(message);
    }

    /// A JSON line: reported when it is too long or too deep to deliver.
    fn json_line(&self, line: &LineScanner) {
        if line.line_len <= self.max_line && line.max_depth <= MAX_MESSAGE_DEPTH {
            return;
        }
        let tail: Vec<u8> = line.tail.iter().copied().collect();
        let id = message_id(&line.head, &tail);
        let what = match &id {
            Some(id) => format!("the response to request {id}"),
            None => "a message".to_owned(),
        };
        let reason = if line.line_len > self.max_line {
            format!(
                "{} bytes, more than the stdio message limit ({} bytes)",
                line.line_len, self.max_line
            )
        } else {
            format!(
                "nested {} levels deep, more than a message may be ({MAX_MESSAGE_DEPTH})",
                line.max_depth
            )
        };
        self.warn(format!("discarded {what}: {reason}"));
        if let (Some(id), Some(ids)) = (id, &self.oversize) {
            let _ = ids.send((id, reason));
        }
    }
}

/// The top-level `id` of a JSON-RPC message from the first and last bytes of
/// its line: `{"jsonrpc":"2.0","id":…` (id first) or `…,"id":…}` (id last,
/// as the TypeScript SDK writes responses).
fn message_id(head: &[u8], tail: &[u8]) -> Option<serde_json::Value> {
    fn value_at(text: &str) -> Option<serde_json::Value> {
        let rest = text.trim_start();
        let end = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.find('"').map(|i| i + 2)?
        } else {
            rest.find(|c: char| !(c.is_ascii_digit() || c == '-'))
                .unwrap_or(rest.len())
        };
        serde_json::from_str(&rest[..end])
            .ok()
            .filter(|v: &serde_json::Value| v.is_number() || v.is_string())
    }
    let tail = String::from_utf8_lossy(tail);
    if let Some(i) = tail.rfind("\"id\":") {
        let after = &tail[i + 5..];
        let v = value_at(after)?;
        let rest = after.trim_start().get(v.to_string().len()..).unwrap_or("");
        if rest.trim() == "}" {
            return Some(v);
        }
    }
    let head = String::from_utf8_lossy(head);
    let start = head
        .strip_prefix("{\"jsonrpc\":\"2.0\",\"id\":")
        .or_else(|| head.strip_prefix("{\"id\":"))?;
    value_at(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::HostEvent;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn passes_bytes_through_and_rate_limits_warnings() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let mut input = String::from("Server running on stdio\n{\"jsonrpc\":\"2.0\"}\n");
        for i in 0..10 {
            input.push_str(&format!("banner {i}\n"));
        }
        let mut w = StdoutMonitor::new(
            std::io::Cursor::new(input.clone().into_bytes()),
            "s".into(),
            Arc::new(tx),
        );
        let mut out = String::new();
        w.read_to_string(&mut out).await.unwrap_or_default();
        assert_eq!(out, input);
        let mut warnings = Vec::new();
        while let Ok(HostEvent::Log(r)) = rx.try_recv() {
            warnings.push(r.message);
        }
        assert_eq!(warnings.len(), STDOUT_NOISE_WARNINGS_PER_WINDOW as usize);
        assert!(
            warnings[0].contains("Server running on stdio"),
            "{warnings:?}"
        );
    }

    #[tokio::test]
    async fn reports_the_id_of_oversize_lines() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let (ids, mut got) = tokio::sync::broadcast::channel(4);
        let big = "x".repeat(500);
        let input = format!(
            "{{\"result\":{{\"t\":\"{big}\"}},\"jsonrpc\":\"2.0\",\"id\":7}}\n{{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"result\":\"{big}\"}}\n{{\"ok\":1}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":\"{big}\"}}\n"
        );
        let mut w = StdoutMonitor::new(
            std::io::Cursor::new(input.clone().into_bytes()),
            "s".into(),
            Arc::new(tx),
        )
        .with_oversize(300, ids);
        let mut out = String::new();
        w.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, input);
        assert_eq!(got.try_recv().unwrap().0, serde_json::json!(7));
        assert_eq!(got.try_recv().unwrap().0, serde_json::json!("s-1"));
        assert!(
            got.try_recv().is_err(),
            "the short line and the id-less notification report no id"
        );
        let mut warnings = 0;
        while let Ok(HostEvent::Log(r)) = rx.try_recv() {
            assert!(
                r.message
                    .contains("more than the stdio message limit (300 bytes)"),
                "{}",
                r.message
            );
            warnings += 1;
        }
        assert_eq!(warnings, 3);
    }

    #[tokio::test]
    async fn reports_messages_too_deep_to_parse() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let (ids, mut got) = tokio::sync::broadcast::channel(4);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let strings = format!("\"{}\"", "[\\\"".repeat(300));
        let input = format!("{{\"result\":{deep},\"jsonrpc\":\"2.0\",\"id\":3}}\n{{\"result\":{strings},\"jsonrpc\":\"2.0\",\"id\":4}}\n");
        let mut w = StdoutMonitor::new(
            std::io::Cursor::new(input.into_bytes()),
            "s".into(),
            Arc::new(tx),
        )
        .with_oversize(1 << 20, ids);
        let mut out = String::new();
        w.read_to_string(&mut out).await.unwrap();
        let (id, reason) = got.try_recv().unwrap();
        assert_eq!(id, serde_json::json!(3));
        assert!(reason.contains("201 levels"), "{reason}");
        assert!(
            got.try_recv().is_err(),
            "brackets inside strings do not count"
        );
    }
}
