//! Continuous draining of a stdio server's stderr: every line becomes a `log`
//! event (target `server.stderr`), and the last [`STDERR_TAIL_BYTES`] are kept
//! for error messages. A server that floods stderr, with or without
//! newlines, can never block on a full pipe or grow host memory.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use crate::events::{log, EventSink, LogLevel};
use crate::limits::{STDERR_LINE_BYTES, STDERR_READ_CHUNK_BYTES, STDERR_TAIL_BYTES};

/// The bounded tail of a server's stderr, shared with the supervisor.
#[derive(Debug)]
pub struct StderrTail {
    tail: Mutex<VecDeque<u8>>,
    eof: watch::Sender<bool>,
}

impl StderrTail {
    /// The kept tail as text (lossy UTF-8), trimmed; empty when nothing was written.
    pub fn text(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let (a, b) = tail.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }

    /// Waits up to `within` for stderr to reach end-of-file, so a tail read
    /// right after an exit includes the last lines.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only waits on the end-of-file watch.
    pub async fn wait_eof(&self, within: Duration) {
        let mut rx = self.eof.subscribe();
        let _ = tokio::time::timeout(within, rx.wait_for(|eof| *eof)).await;
    }

    fn push(&self, bytes: &[u8]) {
        let mut tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = &bytes[bytes.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (tail.len() + bytes.len()).saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..overflow);
        tail.extend(bytes);
    }
}

/// Spawns the drain task for `stderr` of server `server_id`.
pub fn drain<R>(stderr: R, server_id: String, sink: Arc<dyn EventSink>) -> Arc<StderrTail>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let (eof, _) = watch::channel(false);
    let tail = Arc::new(StderrTail {
        tail: Mutex::new(VecDeque::new()),
        eof,
    });
    tokio::spawn(drain_loop(stderr, server_id, sink, tail.clone()));
    tail
}

async fn drain_loop<R: AsyncRead + Unpin>(
    mut stderr: R,
    server_id: String,
    sink: Arc<dyn EventSink>,
    tail: Arc<StderrTail>,
) {
    let mut chunk = vec![0u8; STDERR_READ_CHUNK_BYTES];
    let mut line: Vec<u8> = Vec::new();
    let emit = |line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\r', '\n']);
        if !text.is_empty() {
            sink.send(log(LogLevel::Info, "server.stderr", Some(&server_id), text));
        }
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        tail.push(&chunk[..n]);
        for piece in chunk[..n].split_inclusive(|b| *b == b'\n') {
            let room = STDERR_LINE_BYTES - line.len();
            let (now, rest) = piece.split_at(piece.len().min(room));
            line.extend_from_slice(now);
            if line.ends_with(b"\n") || line.len() >= STDERR_LINE_BYTES {
                emit(&line);
                line.clear();
            }
            // A line longer than STDERR_LINE_BYTES continues as further records.
            for part in rest.chunks(STDERR_LINE_BYTES) {
                if part.len() == STDERR_LINE_BYTES || part.ends_with(b"\n") {
                    emit(part);
                } else {
                    line.extend_from_slice(part);
                }
            }
        }
    }
    emit(&line);
    let _ = tail.eof.send(true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::HostEvent;

    #[tokio::test]
    async fn splits_lines_bounds_long_ones_and_keeps_tail() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let mut input = b"first\nsecond\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', STDERR_LINE_BYTES * 2 + 10));
        input.extend(b"\nlast line");
        let tail = drain(std::io::Cursor::new(input), "s1".into(), Arc::new(tx));
        tail.wait_eof(Duration::from_secs(5)).await;
        let mut lines = Vec::new();
        while let Ok(HostEvent::Log(r)) = rx.try_recv() {
            assert_eq!(r.server_id.as_deref(), Some("s1"));
            lines.push(r.message);
        }
        assert_eq!(lines[0], "first");
        assert_eq!(lines[1], "second");
        assert!(lines[2..lines.len() - 1]
            .iter()
            .all(|l| l.len() <= STDERR_LINE_BYTES && l.chars().all(|c| c == 'x')));
        assert_eq!(
            lines[2..lines.len() - 1]
                .iter()
                .map(String::len)
                .sum::<usize>(),
            STDERR_LINE_BYTES * 2 + 10
        );
        assert_eq!(lines.last().map(String::as_str), Some("last line"));
        let t = tail.text();
        assert!(t.len() <= STDERR_TAIL_BYTES && t.ends_with("last line"));
    }
}
