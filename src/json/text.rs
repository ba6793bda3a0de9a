//! One JSON document kept as its text ([`JsonText`]), and the result
//! bounds of `limits.rs` measured on that text ([`check_text_bounds`])
//! instead of on a [`Value`] tree: a `tools/call` result goes from rmcp's
//! typed value to its text once and is passed on as that text (to JS, in
//! the response envelope) without a tree in between (issue 28).

use serde::Serialize;
use serde_json::Value;

use super::{within_limits, Shape};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::Limits;

/// A JSON document as compact text, written by `serde_json` (so it is
/// valid JSON): a result passed on as it is instead of as a tree that is
/// encoded again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText(String);

impl JsonText {
    /// The compact text of `value`.
    ///
    /// # Errors
    /// `internal` when `value` cannot be encoded (a map with non-string
    /// keys; never for a [`Value`] or an rmcp model type).
    pub fn of<T: Serialize + ?Sized>(value: &T) -> HostResult<Self> {
        serde_json::to_string(value)
            .map(Self)
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("cannot encode result: {e}")))
    }

    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    #[must_use]
    pub fn into_string(self) -> String {
        self.0
    }

    /// The document as a tree.
    ///
    /// # Errors
    /// `internal` if the text does not parse (it always does: it was
    /// written by `serde_json`).
    pub fn to_value(&self) -> HostResult<Value> {
        serde_json::from_str(&self.0)
            .map_err(|e| HostError::new(ErrorCode::Internal, format!("cannot decode result: {e}")))
    }

    /// Takes the first member of the top-level object out when its text
    /// is exactly `member` (e.g. `"resultType":"complete"`, the marker a
    /// result reads the same without); `false` (text unchanged) otherwise.
    pub(crate) fn strip_first_member(&mut self, member: &str) -> bool {
        let rest = &self.0.as_bytes()[1..];
        let Some(after) = rest.strip_prefix(member.as_bytes()) else {
            return false;
        };
        let cut = match after.first() {
            Some(b',') => member.len() + 1,
            Some(b'}') => member.len(),
            _ => return false,
        };
        self.0.replace_range(1..=cut, "");
        true
    }
}

/// [`super::check_bounds`] on the text of a document: the same bounds
/// (`maxResultBytes` on its length, then `maxJsonDepth` and
/// `maxJsonProperties`) and the same messages, read in one pass over the
/// bytes with no tree. When both shape bounds are passed, the depth is
/// named.
///
/// # Errors
/// `limit_exceeded`, as [`super::check_bounds`].
pub fn check_text_bounds(context: &str, text: &JsonText, limits: &Limits) -> HostResult<()> {
    within_limits(context, text.0.len(), limits, || {
        text_shape(text.as_str(), limits.max_json_depth)
    })
}

/// Depth and member count ([`Shape`]) of valid JSON text; the scan stops
/// once the depth passes `max_depth` (then `depth` is `max_depth + 1`).
fn text_shape(text: &str, max_depth: usize) -> Shape {
    let bytes = text.as_bytes();
    let mut out = Shape::default();
    // Per open container: is it an array, and does it wait for an element?
    let mut open: Vec<(bool, bool)> = Vec::new();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        let starts_value = matches!(
            b,
            b'"' | b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        );
        if starts_value {
            if let Some((true, waiting @ true)) = open.last_mut() {
                *waiting = false;
                out.members += 1;
            }
        }
        match b {
            b'"' => i = string_end(bytes, i),
            b'{' | b'[' => {
                open.push((b == b'[', b == b'['));
                out.depth = out.depth.max(open.len());
                if open.len() > max_depth {
                    return out;
                }
            }
            b'}' | b']' => {
                open.pop();
            }
            b':' => out.members += 1,
            b',' => {
                if let Some((true, waiting)) = open.last_mut() {
                    *waiting = true;
                }
            }
            _ => {}
        }
    }
    out
}

/// The index just past the closing quote of the string whose contents
/// start at `from` (the text's end if it has none): `memchr` jumps to the
/// next quote or backslash, so a long string costs a fast scan, not a
/// step per byte.
pub(crate) fn string_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(at) = bytes
        .get(from..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        let at = from + at;
        if bytes[at] == b'"' {
            return at + 1;
        }
        from = at + 2;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::shape;
    use serde_json::json;

    fn both(v: &Value) -> (Shape, Shape) {
        let text = JsonText::of(v).unwrap();
        (shape(v, 1000, 1_000_000), text_shape(text.as_str(), 1000))
    }

    #[test]
    fn the_text_shape_is_the_tree_shape() {
        let values = [
            json!(1),
            json!("a"),
            json!([]),
            json!({}),
            json!([[], {}, [1, [2, "]"]], {"a": {"b": "}{[,:\"\\"}}]),
            json!({"content": [{"type": "text", "text": "x,y:z"}], "isError": false}),
            json!([null, true, false, -1.5e3, "", {"": []}]),
            json!({"a": [1, 2, 3], "b": {"c": [{"d": null}]}}),
        ];
        for v in &values {
            let (tree, text) = both(v);
            assert_eq!(tree, text, "{v}");
        }
    }

    #[test]
    fn a_deep_text_stops_past_the_bound() {
        let text = "[".repeat(500) + &"]".repeat(500);
        let s = text_shape(&text, 64);
        assert_eq!(s.depth, 65);
    }

    #[test]
    fn text_bounds_name_the_bound_like_the_tree_check() {
        let limits = Limits {
            max_json_properties: 2,
            ..Limits::default()
        };
        let v = json!({"a": 1, "b": 2, "c": 3});
        let text = JsonText::of(&v).unwrap();
        let tree = crate::json::check_bounds("ctx", &v, &limits).unwrap_err();
        let flat = check_text_bounds("ctx", &text, &limits).unwrap_err();
        assert_eq!((tree.code, tree.message), (flat.code, flat.message));
        let limits = Limits {
            max_result_bytes: 5,
            ..Limits::default()
        };
        let tree = crate::json::check_bounds("ctx", &v, &limits).unwrap_err();
        let flat = check_text_bounds("ctx", &text, &limits).unwrap_err();
        assert_eq!(tree.message, flat.message);
        assert!(check_text_bounds("ctx", &text, &Limits::default()).is_ok());
    }

    #[test]
    fn the_first_member_is_stripped_only_when_it_matches() {
        let complete = r#""resultType":"complete""#;
        let mut t = JsonText::of(&json!({"resultType": "complete", "content": []})).unwrap();
        assert!(t.strip_first_member(complete));
        assert_eq!(t.as_str(), r#"{"content":[]}"#);
        let mut alone = JsonText::of(&json!({"resultType": "complete"})).unwrap();
        assert!(alone.strip_first_member(complete));
        assert_eq!(alone.as_str(), "{}");
        let mut other = JsonText::of(&json!({"resultType": "completed", "a": 1})).unwrap();
        assert!(!other.strip_first_member(complete));
        let mut later = JsonText::of(&json!({"a": 1, "resultType": "complete"})).unwrap();
        assert!(!later.strip_first_member(complete));
        assert_eq!(later.as_str(), r#"{"a":1,"resultType":"complete"}"#);
    }
}
