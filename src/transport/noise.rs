//! Watches a stdio server's stdout for lines that are not JSON-RPC (banners
//! such as `Server running on stdio`) and reports them as rate-limited
//! warnings. The bytes pass through unchanged: rmcp's line codec skips
//! unparsable lines itself, so a banner never kills the connection and never
//! delays messages behind it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, ReadBuf};

use crate::events::{log, EventSink, LogLevel};
use crate::limits::{STDOUT_NOISE_WARNINGS_PER_WINDOW, STDOUT_NOISE_WINDOW_MS};

/// Longest excerpt of a skipped line quoted in the warning.
const EXCERPT_BYTES: usize = 120;

/// Bytes kept from the start and the end of each JSON line, to find the
/// `id` of a message too long to deliver.
const ID_WINDOW_BYTES: usize = 96;

/// Deepest nesting a message may have: the JSON parser's recursion limit.
/// Deeper messages cannot be parsed and are dropped by rmcp's codec.
pub const MAX_MESSAGE_DEPTH: usize = 128;

/// Where the `id` of each undeliverable message goes (a JSON-RPC id as JSON:
/// number or string), with the reason. Calls waiting for that id fail with
/// `limit_exceeded`.
pub type OversizeIds = tokio::sync::broadcast::Sender<(serde_json::Value, String)>;

/// An `AsyncRead` adapter over a server's stdout that warns about non-JSON
/// lines and reports JSON lines longer than the stdio message limit (which
/// rmcp's line codec discards without buffering them).
pub struct NoiseWatch<R> {
    inner: R,
    server_id: String,
    sink: Arc<dyn EventSink>,
    state: LineState,
    excerpt: Vec<u8>,
    line_len: usize,
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    max_line: usize,
    oversize: Option<OversizeIds>,
    depth: usize,
    max_depth: usize,
    in_string: bool,
    escaped: bool,
    window_start: Instant,
    warned_in_window: u32,
    suppressed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum LineState {
    /// At the start of a line (only whitespace seen so far).
    Start,
    /// Inside a line that starts like JSON.
    Json,
    /// Inside a line that does not start like JSON; collecting an excerpt.
    Noise,
}

impl<R> NoiseWatch<R> {
    /// Wraps `inner`, the stdout of server `server_id`.
    pub fn new(inner: R, server_id: String, sink: Arc<dyn EventSink>) -> Self {
        Self {
            inner,
            server_id,
            sink,
            state: LineState::Start,
            excerpt: Vec::new(),
            line_len: 0,
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            max_line: usize::MAX,
            oversize: None,
            depth: 0,
            max_depth: 0,
            in_string: false,
            escaped: false,
            window_start: Instant::now(),
            warned_in_window: 0,
            suppressed: 0,
        }
    }

    /// Reports JSON lines longer than `max_line` bytes: a warning, and the
    /// message's `id` (when it can be found near the start or the end of the
    /// line) on `ids`.
    pub fn with_oversize(mut self, max_line: usize, ids: OversizeIds) -> Self {
        self.max_line = max_line;
        self.oversize = Some(ids);
        self
    }

    fn observe(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.state == LineState::Json && b != b'\n' {
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
                if self.head.len() < ID_WINDOW_BYTES {
                    self.head.push(b);
                } else {
                    if self.tail.len() == ID_WINDOW_BYTES {
                        self.tail.pop_front();
                    }
                    self.tail.push_back(b);
                }
            }
            match (self.state, b) {
                (_, b'\n') => {
                    if self.state == LineState::Noise {
                        self.report();
                    }
                    if self.state == LineState::Json
                        && (self.line_len > self.max_line || self.max_depth > MAX_MESSAGE_DEPTH)
                    {
                        self.report_oversize();
                    }
                    self.state = LineState::Start;
                }
                (LineState::Start, b' ' | b'\t' | b'\r') => {}
                (LineState::Start, b'{' | b'[') => {
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
                (LineState::Start, _) => {
                    self.state = LineState::Noise;
                    self.excerpt.clear();
                    self.excerpt.push(b);
                }
                (LineState::Noise, _) if self.excerpt.len() < EXCERPT_BYTES => self.excerpt.push(b),
                _ => {}
            }
        }
    }

    fn report(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.window_start) >= Duration::from_millis(STDOUT_NOISE_WINDOW_MS) {
            self.window_start = now;
            self.warned_in_window = 0;
        }
        if self.warned_in_window >= STDOUT_NOISE_WARNINGS_PER_WINDOW {
            self.suppressed += 1;
            return;
        }
        self.warned_in_window += 1;
        let text = String::from_utf8_lossy(&self.excerpt);
        let mut message = format!(
            "skipped a stdout line that is not JSON-RPC: {:?}",
            text.trim_end()
        );
        if self.suppressed > 0 {
            message.push_str(&format!(
                " ({} similar lines not reported)",
                self.suppressed
            ));
            self.suppressed = 0;
        }
        self.sink.send(log(
            LogLevel::Warn,
            "host.stdio",
            Some(&self.server_id),
            message,
        ));
    }
}

impl<R> NoiseWatch<R> {
    fn report_oversize(&mut self) {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let id = message_id(&self.head, &tail);
        let what = match &id {
            Some(id) => format!("the response to request {id}"),
            None => "a message".to_owned(),
        };
        let reason = if self.line_len > self.max_line {
            format!(
                "{} bytes, more than the stdio message limit ({} bytes)",
                self.line_len, self.max_line
            )
        } else {
            format!(
                "nested {} levels deep, more than a message may be ({MAX_MESSAGE_DEPTH})",
                self.max_depth
            )
        };
        self.sink.send(log(
            LogLevel::Warn,
            "host.stdio",
            Some(&self.server_id),
            format!("discarded {what}: {reason}"),
        ));
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

impl<R: AsyncRead + Unpin> AsyncRead for NoiseWatch<R> {
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
        let mut w = NoiseWatch::new(
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
        let mut w = NoiseWatch::new(
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
        let mut w = NoiseWatch::new(
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
