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

/// An `AsyncRead` adapter over a server's stdout that warns about non-JSON lines.
pub struct NoiseWatch<R> {
    inner: R,
    server_id: String,
    sink: Arc<dyn EventSink>,
    state: LineState,
    excerpt: Vec<u8>,
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
            window_start: Instant::now(),
            warned_in_window: 0,
            suppressed: 0,
        }
    }

    fn observe(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match (self.state, b) {
                (_, b'\n') => {
                    if self.state == LineState::Noise {
                        self.report();
                    }
                    self.state = LineState::Start;
                }
                (LineState::Start, b' ' | b'\t' | b'\r') => {}
                (LineState::Start, b'{' | b'[') => self.state = LineState::Json,
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
        let mut message = format!("skipped a stdout line that is not JSON-RPC: {:?}", text.trim_end());
        if self.suppressed > 0 {
            message.push_str(&format!(" ({} similar lines not reported)", self.suppressed));
            self.suppressed = 0;
        }
        self.sink.send(log(LogLevel::Warn, "host.stdio", Some(&self.server_id), message));
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for NoiseWatch<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
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
        let mut w = NoiseWatch::new(std::io::Cursor::new(input.clone().into_bytes()), "s".into(), Arc::new(tx));
        let mut out = String::new();
        w.read_to_string(&mut out).await.unwrap_or_default();
        assert_eq!(out, input);
        let mut warnings = Vec::new();
        while let Ok(HostEvent::Log(r)) = rx.try_recv() {
            warnings.push(r.message);
        }
        assert_eq!(warnings.len(), STDOUT_NOISE_WARNINGS_PER_WINDOW as usize);
        assert!(warnings[0].contains("Server running on stdio"), "{warnings:?}");
    }
}
