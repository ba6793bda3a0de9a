//! Byte offsets to LSP positions: 0-based line and character, the character
//! counted in UTF-16 code units (LSP 3.17 `Position`, AHP `TextPosition`).

use super::model::{TextPosition, TextRange};
use crate::json::floor_char_boundary;

/// Maps byte offsets to 0-based line / UTF-16 character positions.
/// Line breaks are `\n`, `\r\n` and a lone `\r` (as in LSP).
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
    /// Whether each line is ASCII only (its UTF-16 column is its byte
    /// column, found without scanning the line: a file of one long line,
    /// as `JSON.stringify` writes, is then positioned in O(log lines) per
    /// offset, not O(line)).
    ascii: Vec<bool>,
}

impl<'a> LineIndex<'a> {
    /// Indexes the line starts of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            let crlf_first_half = b == b'\r' && bytes.get(i + 1) == Some(&b'\n');
            if (b == b'\n' || b == b'\r') && !crlf_first_half {
                starts.push(i + 1);
            }
        }
        let ends = starts.iter().skip(1).copied().chain([bytes.len()]);
        let ascii = starts
            .iter()
            .zip(ends)
            .map(|(&s, e)| bytes[s..e].is_ascii())
            .collect();
        Self {
            text,
            starts,
            ascii,
        }
    }

    /// Position of byte `offset` (clamped to the text, on a char boundary).
    pub(crate) fn position(&self, offset: usize) -> TextPosition {
        let offset = floor_char_boundary(self.text, offset);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character: usize = if self.ascii[line] {
            offset - start
        } else {
            self.text[start..offset].chars().map(char::len_utf16).sum()
        };
        let to_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        TextPosition {
            line: to_i64(line),
            character: to_i64(character),
        }
    }

    /// Range of the bytes `start..end`.
    pub(crate) fn range(&self, start: usize, end: usize) -> TextRange {
        TextRange {
            start: self.position(start),
            end: self.position(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_other_lines_count_utf16_units() {
        let idx = LineIndex::new("ab\néé𝄞x\nlast");
        let at = |o| idx.position(o);
        assert_eq!((at(2).line, at(2).character), (0, 2));
        // é is 2 bytes / 1 unit, 𝄞 4 bytes / 2 units.
        assert_eq!((at(3 + 8).line, at(3 + 8).character), (1, 4));
        assert_eq!(
            (at(3 + 9 + 1 + 2).line, at(3 + 9 + 1 + 2).character),
            (2, 2)
        );
    }

    #[test]
    fn line_index_handles_lone_cr() {
        let idx = LineIndex::new("a\rb\nc\r\nd");
        assert_eq!(
            idx.position(2),
            TextPosition {
                line: 1,
                character: 0
            }
        );
        assert_eq!(
            idx.position(4),
            TextPosition {
                line: 2,
                character: 0
            }
        );
        assert_eq!(
            idx.position(7),
            TextPosition {
                line: 3,
                character: 0
            }
        );
    }

    #[test]
    fn positions_count_utf16_units_and_clamp_to_the_text() {
        // "é" is 2 bytes / 1 unit, "😀" 4 bytes / 2 units.
        let idx = LineIndex::new("é😀x\ny");
        assert_eq!(idx.position(6).character, 3, "after é😀");
        assert_eq!(idx.position(4).character, 1, "inside 😀: its start");
        assert_eq!(
            idx.position(100),
            TextPosition {
                line: 1,
                character: 1
            }
        );
    }
}
