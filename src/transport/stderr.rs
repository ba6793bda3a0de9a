//! Continuous draining of a stdio server's stderr: each line becomes a `log`
//! event (target `server.stderr`), and the last [`STDERR_TAIL_BYTES`] are kept
//! for error messages. A server that floods stderr, with or without
//! newlines, can never block on a full pipe or grow host memory: a line is
//! cut at [`STDERR_LINE_BYTES`] (the rest skipped to its newline) and lines
//! are paced ([`STDERR_LINES_BURST`], [`STDERR_LINES_PER_SECOND`]), what was
//! left out counted in a periodic `warn` record.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

use crate::events::{log, EventSink, LogLevel};
use crate::limits::{
    STDERR_LINES_BURST, STDERR_LINES_PER_SECOND, STDERR_LINE_BYTES, STDERR_READ_CHUNK_BYTES,
    STDERR_TAIL_BYTES,
};
use crate::transport::flood::{Lost, LostReport, Pace};

/// The bounded tail of a server's stderr, shared with the supervisor.
#[derive(Debug)]
pub struct StderrTail {
    tail: Mutex<VecDeque<u8>>,
    /// Whether bytes before the kept tail were let go of.
    cut: AtomicBool,
    eof: watch::Sender<bool>,
}

impl StderrTail {
    /// The kept tail as text (lossy UTF-8), trimmed; empty when nothing was
    /// written. When earlier bytes were let go of, a head that is the end of
    /// a kept secret value is redacted (`crate::redact::hidden_cut_start`),
    /// as is every whole value.
    pub fn text(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let (a, b) = tail.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        drop(tail);
        let text = String::from_utf8_lossy(&bytes);
        if !self.cut.load(Ordering::Acquire) {
            return crate::redact::hidden(&text).trim().to_owned();
        }
        // A character the cut split is no part of what is shown.
        let text = text.trim_start_matches(char::REPLACEMENT_CHARACTER);
        crate::redact::hidden_cut_start(text).trim().to_owned()
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
        let kept = &bytes[bytes.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (tail.len() + kept.len()).saturating_sub(STDERR_TAIL_BYTES);
        if overflow > 0 || kept.len() < bytes.len() {
            self.cut.store(true, Ordering::Release);
        }
        tail.drain(..overflow);
        tail.extend(kept);
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
        cut: AtomicBool::new(false),
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
    let mut lines = Lines::new(server_id, sink);
    loop {
        let read = stderr.read(&mut chunk);
        let n = match lines.lost.deadline() {
            // A quiet pipe after a flood: the count is reported when due.
            Some(at) => match tokio::time::timeout_at(at, read).await {
                Ok(read) => read,
                Err(_) => {
                    lines.report_due();
                    continue;
                }
            },
            None => read.await,
        };
        let n = match n {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        tail.push(&chunk[..n]);
        lines.feed(&chunk[..n]);
    }
    lines.finish();
    let _ = tail.eof.send(true);
}

/// Splits stderr into `log` records: a line is cut at [`STDERR_LINE_BYTES`]
/// (the record says so) and the rest of it skipped up to its newline; lines
/// beyond [`STDERR_LINES_BURST`], then [`STDERR_LINES_PER_SECOND`], are
/// counted instead of delivered, the count logged as one `warn` record per
/// [`crate::limits::FLOOD_REPORT_INTERVAL_MS`] and at the end.
struct Lines {
    server_id: String,
    sink: Arc<dyn EventSink>,
    line: Vec<u8>,
    /// Past [`STDERR_LINE_BYTES`] of the current line: bytes skipped so far.
    skipping: Option<usize>,
    pace: Pace,
    lost: Lost,
}

impl Lines {
    fn new(server_id: String, sink: Arc<dyn EventSink>) -> Self {
        Self {
            server_id,
            sink,
            line: Vec::new(),
            skipping: None,
            pace: Pace::new(STDERR_LINES_BURST, STDERR_LINES_PER_SECOND),
            lost: Lost::default(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let ends = piece.ends_with(b"\n");
            if let Some(skipped) = self.skipping.as_mut() {
                *skipped += piece.len();
                if ends {
                    self.lost.add_bytes(*skipped);
                    self.skipping = None;
                }
                continue;
            }
            let room = STDERR_LINE_BYTES - self.line.len();
            let (now, rest) = piece.split_at(piece.len().min(room));
            self.line.extend_from_slice(now);
            if ends && rest.is_empty() {
                self.emit(false);
            } else if self.line.len() >= STDERR_LINE_BYTES {
                self.emit(true);
                if ends {
                    self.lost.add_bytes(rest.len());
                } else {
                    self.skipping = Some(rest.len());
                }
            }
        }
    }

    /// Delivers (or counts) the current line; `cut`: it went on.
    fn emit(&mut self, cut: bool) {
        let line = std::mem::take(&mut self.line);
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            return;
        }
        self.report_due();
        if !self.pace.admit() {
            self.lost.add(line.len());
            return;
        }
        let text = if cut {
            // Redacted before the marker goes on: the cut may have split a
            // secret value, whose start no search for the whole value finds;
            // a character the cut split is no part of what is shown.
            let text = text.trim_end_matches(char::REPLACEMENT_CHARACTER);
            let text = crate::redact::hidden_cut(text);
            format!("{text}… [truncated: line longer than {STDERR_LINE_BYTES} bytes]")
        } else {
            text.to_owned()
        };
        let record = log(LogLevel::Info, "server.stderr", Some(&self.server_id), text);
        self.sink.send(record);
    }

    fn report_due(&mut self) {
        if let Some(report) = self.lost.due() {
            self.report(report);
        }
    }

    fn report(&self, r: LostReport) {
        let message = format!(
            "suppressed {} lines ({} bytes) of stderr in the last {} s (at most {STDERR_LINES_BURST} at once, then {STDERR_LINES_PER_SECOND} per second; a line is cut at {STDERR_LINE_BYTES} bytes)",
            r.records, r.bytes, r.seconds
        );
        let record = log(
            LogLevel::Warn,
            "server.stderr",
            Some(&self.server_id),
            message,
        );
        self.sink.send(record);
    }

    /// End of the stream: the unfinished line, then the last count.
    fn finish(&mut self) {
        if let Some(skipped) = self.skipping.take() {
            self.lost.add_bytes(skipped);
        }
        self.emit(false);
        if let Some(report) = self.lost.take() {
            self.report(report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::HostEvent;

    fn records(
        rx: &mut tokio::sync::mpsc::UnboundedReceiver<HostEvent>,
    ) -> Vec<(LogLevel, String)> {
        let mut lines = Vec::new();
        while let Ok(HostEvent::Log(r)) = rx.try_recv() {
            assert_eq!(r.server_id.as_deref(), Some("s1"));
            lines.push((r.level, r.message));
        }
        lines
    }

    #[tokio::test]
    async fn splits_lines_cuts_long_ones_and_keeps_tail() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let mut input = b"first\nsecond\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', STDERR_LINE_BYTES * 2 + 10));
        input.extend(b"\nlast line");
        let tail = drain(std::io::Cursor::new(input), "s1".into(), Arc::new(tx));
        tail.wait_eof(Duration::from_secs(5)).await;
        let lines = records(&mut rx);
        let texts: Vec<&str> = lines.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(texts[..2], ["first", "second"]);
        let cut = texts[2];
        assert!(cut.starts_with(&"x".repeat(STDERR_LINE_BYTES)));
        assert!(
            cut.ends_with("[truncated: line longer than 8192 bytes]"),
            "{cut:.40}"
        );
        assert_eq!(texts[3], "last line");
        // The skipped rest of the long line is counted once, at the end.
        assert_eq!(lines[4].0, LogLevel::Warn);
        let skipped = STDERR_LINE_BYTES + 11;
        assert!(
            lines[4]
                .1
                .starts_with(&format!("suppressed 0 lines ({skipped} bytes)")),
            "{}",
            lines[4].1
        );
        assert_eq!(lines.len(), 5);
        let t = tail.text();
        assert!(t.len() <= STDERR_TAIL_BYTES && t.ends_with("last line"));
    }

    #[tokio::test]
    async fn a_line_without_newline_is_one_record_however_long() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let mut input = vec![b'y'; 4 * 1024 * 1024];
        input.extend(b"\nnext\n");
        let tail = drain(std::io::Cursor::new(input), "s1".into(), Arc::new(tx));
        tail.wait_eof(Duration::from_secs(5)).await;
        let lines = records(&mut rx);
        assert_eq!(
            lines.len(),
            3,
            "{:?}",
            lines.iter().map(|l| l.1.len()).collect::<Vec<_>>()
        );
        assert!(lines[0].1.len() < STDERR_LINE_BYTES + 100);
        assert_eq!(lines[1].1, "next");
        assert!(lines[2].1.contains(&format!(
            "({} bytes)",
            4 * 1024 * 1024 - STDERR_LINE_BYTES + 1
        )));
    }

    #[tokio::test]
    async fn lines_past_the_burst_are_counted_not_delivered() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
        let total = STDERR_LINES_BURST as usize * 3;
        let input: Vec<u8> = (0..total)
            .flat_map(|i| format!("line {i:05}\n").into_bytes())
            .collect();
        let tail = drain(std::io::Cursor::new(input), "s1".into(), Arc::new(tx));
        tail.wait_eof(Duration::from_secs(5)).await;
        let lines = records(&mut rx);
        let delivered = lines.iter().filter(|(l, _)| *l == LogLevel::Info).count();
        let counted: usize = lines
            .iter()
            .filter(|(l, _)| *l == LogLevel::Warn)
            .map(|(_, m)| m.split(' ').nth(1).unwrap().parse::<usize>().unwrap())
            .sum();
        // The burst, and what the bucket refilled while the test ran.
        assert!(delivered >= STDERR_LINES_BURST as usize && delivered < total);
        assert_eq!(delivered + counted, total);
    }

    /// Red team: a cut that splits a secret value must not show the piece
    /// before it (a long line) or after it (the tail's start).
    #[tokio::test]
    async fn a_cut_through_a_secret_shows_no_piece_of_it() {
        let secret = "canary-stderr-cut-9c41e7";
        let _kept = crate::redact::KeptSecret::all([secret]);
        for k in 4..secret.len() {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
            // The line is cut k bytes into the secret; the tail starts k
            // bytes before the secret's end.
            let mut input = vec![b'e'; STDERR_LINE_BYTES - k];
            input.extend(secret.as_bytes());
            input.push(b'\n');
            input.extend(secret.as_bytes());
            input.extend(std::iter::repeat_n(b'b', STDERR_TAIL_BYTES - k));
            let tail = drain(std::io::Cursor::new(input), "s1".into(), Arc::new(tx));
            tail.wait_eof(Duration::from_secs(5)).await;
            let lines = records(&mut rx);
            let cut = &lines[0].1;
            assert!(cut.contains("e[redacted]… [truncated"), "k={k}: {cut:.60}");
            assert!(!cut.contains(&secret[..4]), "k={k}");
            let t = tail.text();
            assert!(t.starts_with("[redacted]bbb"), "k={k}: {t:.60}");
            assert!(!t.contains(&secret[secret.len() - 4..]), "k={k}");
        }
    }
}
