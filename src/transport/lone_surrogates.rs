//! Lone UTF-16 surrogate escapes in a server's JSON text, read as U+FFFD.
//!
//! A JavaScript server that cuts a string between the two halves of a
//! surrogate pair (`'ab😀cd'.slice(0, 3)`) sends the half it kept as an
//! escape: `JSON.stringify` writes `"ab\ud83d"` (Python's `json.dumps`
//! does the same for a lone surrogate). RFC 8259 §8.2 leaves such a text's
//! meaning to the reader; `JSON.parse` accepts it, but a Rust string cannot
//! hold a lone surrogate, so serde_json refuses the whole message ("unexpected
//! end of hex escape", "lone leading surrogate in hex escape") and has no
//! option to accept it. [`replace`] rewrites each lone surrogate escape as
//! `\ufffd` (U+FFFD REPLACEMENT CHARACTER, as a UTF-16 decoder does), in
//! place: both escapes are six ASCII bytes, so the text keeps its length
//! and every other byte. A paired escape (`\ud83d\ude00`) is left alone.
//!
//! Used on a stdio line that did not decode (only then: lines that decode
//! never pay for it) and on each SSE event of a Streamable HTTP or legacy
//! SSE stream before rmcp decodes it.

/// The replacement of a lone surrogate escape: U+FFFD, also six bytes.
const REPLACEMENT: &[u8; 6] = b"\\ufffd";

/// `text` with each lone surrogate escape (`\uD800`–`\uDFFF` not part of
/// a high-low pair) replaced by `\ufffd`; `None` when it has none. The
/// text keeps its length; one that is not JSON is scanned all the same.
pub(crate) fn replace(text: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut at = 0;
    while let Some(found) = text.get(at..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        let i = at + found;
        match text.get(i + 1) {
            Some(b'u') => {}
            // `\\`, `\"`, `\n` … (or a backslash at the end): one escape.
            _ => {
                at = i + 2;
                continue;
            }
        }
        at = i + 6;
        let Some(unit) = hex4(text, i + 2) else {
            at = i + 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF if low_after(text, i + 6) => {
                at = i + 12;
                false
            }
            0xD800..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let out = out.get_or_insert_with(|| text.to_vec());
            out[i..i + 6].copy_from_slice(REPLACEMENT);
        }
    }
    out
}

/// [`replace`] for a text known to be UTF-8 (an SSE event's data): the
/// result is UTF-8 too (only ASCII bytes change).
pub(crate) fn replace_str(text: &str) -> Option<String> {
    replace(text.as_bytes()).and_then(|bytes| String::from_utf8(bytes).ok())
}

/// Whether a low surrogate escape (`\uDC00`–`\uDFFF`) starts at `at`.
fn low_after(text: &[u8], at: usize) -> bool {
    text.get(at..at + 2) == Some(b"\\u".as_slice())
        && hex4(text, at + 2).is_some_and(|u| (0xDC00..=0xDFFF).contains(&u))
}

/// The four hex digits at `at` as a UTF-16 code unit.
fn hex4(text: &[u8], at: usize) -> Option<u16> {
    let digits = text.get(at..at + 4)?;
    let digits = std::str::from_utf8(digits).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn fixed(text: &str) -> Option<String> {
        replace_str(text)
    }

    #[test]
    fn a_lone_high_surrogate_becomes_the_replacement_character() {
        let line = r#"{"result":{"text":"ab\ud83d rest"},"id":3}"#;
        assert!(serde_json::from_str::<Value>(line).is_err());
        let line = fixed(line).unwrap();
        assert_eq!(line, r#"{"result":{"text":"ab\ufffd rest"},"id":3}"#);
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["result"]["text"], "ab\u{FFFD} rest");
    }

    #[test]
    fn lone_surrogates_at_the_end_of_a_string_low_ones_and_runs_are_replaced() {
        assert_eq!(fixed(r#"["\uD83D"]"#).unwrap(), r#"["\ufffd"]"#);
        assert_eq!(fixed(r#"["x\ude00"]"#).unwrap(), r#"["x\ufffd"]"#);
        // Two highs in a row, then a pair: the first high is lone.
        let text = r#"["\ud83d\ud83d\ude00"]"#;
        assert_eq!(fixed(text).unwrap(), r#"["\ufffd\ud83d\ude00"]"#);
        // A low then a high: both lone.
        assert_eq!(fixed(r#"["\ude00\ud83d"]"#).unwrap(), r#"["\ufffd\ufffd"]"#);
        let value: Value = serde_json::from_str(&fixed(text).unwrap()).unwrap();
        assert_eq!(value[0], "\u{FFFD}😀");
    }

    #[test]
    fn pairs_other_escapes_and_escaped_backslashes_are_left_alone() {
        for text in [
            r#"{"a":"\ud83d\ude00","b":"\u00e9\n\"\\"}"#,
            // `\\ud83d` is a backslash and the letters "ud83d".
            r#"{"a":"\\ud83d","b":"\\\\ud83d"}"#,
            r#"{"a":"no escapes at all"}"#,
            r#"{"a":"\u12"}"#,
            "\\",
            "",
        ] {
            assert_eq!(fixed(text), None, "{text}");
        }
        // After an escaped backslash, a real escape is still seen.
        assert_eq!(fixed(r#"["\\\ud83d"]"#).unwrap(), r#"["\\\ufffd"]"#);
    }

    #[test]
    fn the_text_keeps_its_length_and_other_bytes() {
        let text = "{\"é\":\"\\udc00 ü\"}".as_bytes();
        let out = replace(text).unwrap();
        assert_eq!(out.len(), text.len());
        assert_eq!(out, "{\"é\":\"\\ufffd ü\"}".as_bytes());
    }
}
