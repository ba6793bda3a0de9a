//! Splits a stdio server's stdout into lines (MCP 2025-11-25 "Transports ›
//! stdio": one message per line, ended by `\n`) with `memchr`, bounded by
//! the line limit: a line longer than the limit is never buffered whole,
//! only summarized ([`Summary`]) as it streams past.

use std::ops::Range;

use crate::limits::{OVERSIZE_ID_WINDOW_BYTES, STDOUT_NOISE_EXCERPT_BYTES};

/// Bytes asked of each read of the pipe (a Linux pipe holds 64 KiB).
pub(crate) const READ_CHUNK: usize = 64 * 1024;
/// Capacity (bytes) the buffer may keep between lines; a larger buffer
/// (grown for a long line) is shrunk once the line was taken.
const KEEP_CAPACITY: usize = 4 * 1024 * 1024;

/// How a line starts, after whitespace and UTF-8 byte order mark bytes
/// (which rmcp's codec skips).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) enum Kind {
    /// Only whitespace so far.
    #[default]
    Blank,
    /// Starts like JSON (`{` or `[`).
    Json,
    /// Anything else (a banner such as `Server running on stdio`).
    Noise,
}

/// What the stdout reports need of a line: how it starts, its length and,
/// for JSON, its first and last [`OVERSIZE_ID_WINDOW_BYTES`] (to find an
/// `id`), for noise its first [`STDOUT_NOISE_EXCERPT_BYTES`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Summary {
    /// Bytes of the line (leading whitespace included, `\n` not).
    pub(crate) len: usize,
    pub(crate) kind: Kind,
    /// First bytes of the JSON, from its `{` or `[`.
    pub(crate) head: Vec<u8>,
    /// Last bytes of the JSON after `head`.
    pub(crate) tail: Vec<u8>,
    /// First bytes of a noise line, from its first non-blank byte.
    pub(crate) excerpt: Vec<u8>,
}

impl Summary {
    /// The summary of a whole line (without its `\n`).
    pub(crate) fn of(line: &[u8]) -> Self {
        let mut summary = Self::default();
        summary.feed(line);
        summary
    }

    /// Where the JSON starts in a whole line summarized by [`Summary::of`].
    pub(crate) fn json_start(line: &[u8]) -> usize {
        line.iter()
            .position(|b| !is_blank(*b))
            .unwrap_or(line.len())
    }

    /// Follows the next bytes of the line.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        self.len = self.len.saturating_add(bytes.len());
        if self.kind == Kind::Blank {
            let Some(i) = bytes.iter().position(|b| !is_blank(*b)) else {
                return;
            };
            bytes = &bytes[i..];
            self.kind = match bytes[0] {
                b'{' | b'[' => Kind::Json,
                _ => Kind::Noise,
            };
        }
        match self.kind {
            Kind::Noise => {
                let room = STDOUT_NOISE_EXCERPT_BYTES - self.excerpt.len();
                self.excerpt
                    .extend_from_slice(&bytes[..room.min(bytes.len())]);
            }
            Kind::Json => {
                let room = OVERSIZE_ID_WINDOW_BYTES - self.head.len();
                let (head, rest) = bytes.split_at(room.min(bytes.len()));
                self.head.extend_from_slice(head);
                self.push_tail(rest);
            }
            Kind::Blank => {}
        }
    }

    fn push_tail(&mut self, bytes: &[u8]) {
        let window = OVERSIZE_ID_WINDOW_BYTES;
        if bytes.len() >= window {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - window..]);
            return;
        }
        let drop = (self.tail.len() + bytes.len()).saturating_sub(window);
        self.tail.drain(..drop);
        self.tail.extend_from_slice(bytes);
    }
}

/// Whitespace or a byte of a UTF-8 byte order mark, skipped at the start
/// of a line.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0xEF | 0xBB | 0xBF)
}

/// A line taken from the [`Framer`].
#[derive(Debug)]
pub(crate) enum Frame {
    /// A line no longer than the limit: its bytes (without `\n`) are
    /// [`Framer::line`] of this range until the next call.
    Line(Range<usize>),
    /// A line longer than the limit (its bytes are gone).
    Oversize(Summary),
}

/// The line buffer of one stdout: bytes are appended ([`Framer::buffer`]),
/// lines taken ([`Framer::next_frame`]). Every byte is searched for `\n`
/// once; a line's bytes are not copied (but for moving an unfinished line
/// to the front of the buffer).
#[derive(Debug)]
pub(crate) struct Framer {
    /// Longest line (bytes, `\n` included, as rmcp's codec counts).
    max_line: usize,
    buf: Vec<u8>,
    /// Start of the unfinished line in `buf`.
    start: usize,
    /// End of the bytes already searched for `\n`.
    scanned: usize,
    /// The unfinished line passed the limit: it is summarized, not kept.
    oversize: Option<Summary>,
}

impl Framer {
    /// A framer for lines of at most `max_line` bytes, `\n` included.
    pub(crate) fn new(max_line: usize) -> Self {
        Self {
            max_line,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            oversize: None,
        }
    }

    /// The bytes of a line returned as [`Frame::Line`].
    pub(crate) fn line(&self, range: Range<usize>) -> &[u8] {
        &self.buf[range]
    }

    /// The buffer to append newly read bytes to, with room for at least
    /// [`READ_CHUNK`] more. Call only once [`Framer::next_frame`] returned
    /// `None`.
    pub(crate) fn buffer(&mut self) -> &mut Vec<u8> {
        if self.start > 0 {
            self.buf.copy_within(self.start.., 0);
            self.buf.truncate(self.buf.len() - self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.buf.capacity() > KEEP_CAPACITY && self.buf.len() <= READ_CHUNK {
            self.buf.shrink_to(READ_CHUNK);
        }
        self.buf.reserve(READ_CHUNK);
        &mut self.buf
    }

    /// The next finished line, or `None` when more bytes are needed.
    pub(crate) fn next_frame(&mut self) -> Option<Frame> {
        let end = self.buf.len();
        let Some(i) = memchr::memchr(b'\n', &self.buf[self.scanned..]) else {
            self.scanned = end;
            if self.oversize.is_some() || end - self.start >= self.max_line {
                let summary = self.oversize.get_or_insert_with(Summary::default);
                summary.feed(&self.buf[self.start..end]);
                self.buf.clear();
                (self.start, self.scanned) = (0, 0);
            }
            return None;
        };
        let newline = self.scanned + i;
        let line = self.start..newline;
        (self.start, self.scanned) = (newline + 1, newline + 1);
        if let Some(mut summary) = self.oversize.take() {
            summary.feed(&self.buf[line]);
            return Some(Frame::Oversize(summary));
        }
        if line.len().saturating_add(1) > self.max_line {
            return Some(Frame::Oversize(Summary::of(&self.buf[line])));
        }
        Some(Frame::Line(line))
    }
}

/// The deepest nesting of `{`/`[` outside strings in a JSON text (string
/// and escape state followed), as the parser counts it for valid JSON.
/// A string is crossed in jumps ([`crate::json::string_end`]): most of a
/// listing's bytes are in strings.
pub(crate) fn max_depth(json: &[u8]) -> usize {
    let (mut depth, mut max, mut at) = (0usize, 0usize, 0usize);
    while let Some(&b) = json.get(at) {
        at += 1;
        match b {
            b'"' => at = crate::json::string_end(json, at),
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
