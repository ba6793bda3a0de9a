//! Byte-level scan of a stdio server's stdout lines (MCP 2025-11-25
//! "Transports › stdio": one message per line, ended by `\n`).

use std::collections::VecDeque;

use crate::limits::{OVERSIZE_ID_WINDOW_BYTES, STDOUT_NOISE_EXCERPT_BYTES};

/// Capacity (bytes) the line buffer may keep between lines; a longer line's
/// buffer is freed once it ended.
const KEEP_LINE_CAPACITY: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum LineState {
    /// At the start of a line (only whitespace or a byte order mark so far).
    #[default]
    Start,
    /// Inside a line that starts like JSON (`{` or `[`).
    Json,
    /// Inside a line that does not start like JSON; collecting an excerpt.
    Noise,
}

/// A line that just ended (at `\n`), by how it started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum LineEnd {
    /// Not JSON: [`LineScanner::excerpt`] holds its start.
    Noise,
    /// JSON: length, depth, head, tail and (up to the line limit) the
    /// whole line are in the scanner.
    Json,
}

/// Follows stdout byte by byte. For a JSON line it tracks the length, the
/// bracket depth outside strings (string and escape state), the first and
/// last [`OVERSIZE_ID_WINDOW_BYTES`] and, while the line is no longer than
/// `max_line`, the line itself (leading whitespace included: the bytes
/// rmcp's codec decodes); for other lines an excerpt. What it holds about a
/// line stays readable until the next line's first byte.
#[derive(Debug)]
pub(super) struct LineScanner {
    state: LineState,
    /// The last byte ended a line: the next one starts a new line.
    ended: bool,
    /// Longest line kept whole (bytes); longer lines keep only head and tail.
    max_line: usize,
    /// First [`STDOUT_NOISE_EXCERPT_BYTES`] of a noise line.
    pub(super) excerpt: Vec<u8>,
    /// Bytes of the line so far, leading whitespace included, `\n` not.
    line_len: usize,
    /// Bytes of the JSON line that just ended as rmcp's codec counts them
    /// against its line limit (`\n` included).
    pub(super) framed_len: usize,
    /// The line (empty once it passed `max_line`, and for noise).
    pub(super) line: Vec<u8>,
    pub(super) head: Vec<u8>,
    pub(super) tail: VecDeque<u8>,
    depth: usize,
    pub(super) max_depth: usize,
    in_string: bool,
    escaped: bool,
}

impl LineScanner {
    /// A scanner keeping JSON lines of up to `max_line` bytes whole.
    pub(super) fn new(max_line: usize) -> Self {
        Self {
            state: LineState::Start,
            ended: false,
            max_line,
            excerpt: Vec::new(),
            line_len: 0,
            framed_len: 0,
            line: Vec::new(),
            head: Vec::new(),
            tail: VecDeque::new(),
            depth: 0,
            max_depth: 0,
            in_string: false,
            escaped: false,
        }
    }

    /// Whether the JSON line that just ended was kept whole.
    pub(super) fn kept_whole(&self) -> bool {
        self.line_len <= self.max_line
    }

    /// The tail window as bytes.
    pub(super) fn tail(&self) -> Vec<u8> {
        self.tail.iter().copied().collect()
    }

    /// Feeds one byte; returns the kind of line that `b` (a `\n`) ended.
    pub(super) fn push(&mut self, b: u8) -> Option<LineEnd> {
        if std::mem::take(&mut self.ended) {
            self.begin_line();
        }
        if b == b'\n' {
            self.ended = true;
            let ended = match self.state {
                LineState::Start => None,
                LineState::Json => Some(LineEnd::Json),
                LineState::Noise => Some(LineEnd::Noise),
            };
            self.framed_len = self.line_len.saturating_add(1);
            self.state = LineState::Start;
            return ended;
        }
        self.line_len = self.line_len.saturating_add(1);
        if self.state != LineState::Noise {
            self.keep(b);
        }
        match self.state {
            // Whitespace and a UTF-8 byte order mark (rmcp's codec skips both).
            LineState::Start => match b {
                b' ' | b'\t' | b'\r' | 0xEF | 0xBB | 0xBF => {}
                b'{' | b'[' => self.start_json(b),
                _ => {
                    self.state = LineState::Noise;
                    self.line.clear();
                    self.excerpt.clear();
                    self.excerpt.push(b);
                }
            },
            LineState::Json => self.json_byte(b),
            LineState::Noise if self.excerpt.len() < STDOUT_NOISE_EXCERPT_BYTES => {
                self.excerpt.push(b)
            }
            LineState::Noise => {}
        }
        None
    }

    fn begin_line(&mut self) {
        self.line_len = 0;
        if self.line.capacity() > KEEP_LINE_CAPACITY {
            self.line = Vec::new();
        }
        self.line.clear();
    }

    /// Keeps `b` in the line while it is no longer than `max_line`.
    fn keep(&mut self, b: u8) {
        if self.line_len <= self.max_line {
            self.line.push(b);
        } else if self.line.capacity() > 0 {
            self.line = Vec::new();
        }
    }

    fn start_json(&mut self, b: u8) {
        self.state = LineState::Json;
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
