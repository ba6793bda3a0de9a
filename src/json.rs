//! Generic JSON helpers, in one home: the type word used in messages, the
//! serialized size of a value without building its text, its depth and
//! member count (stopping early at the bounds), the result bound check of
//! `limits.rs` (on a tree, or on a document's text: [`text`]), and cutting
//! text on a UTF-8 character boundary, and an object's members read one
//! level deep as raw text ([`Members`]).
//!
//! Key order: `serde_json` is built with `preserve_order` (Cargo.toml), so
//! a parsed object keeps the order its sender wrote and serializes in that
//! order (issue 10: schema `properties` are the argument order the model
//! sees). `Map::remove` is then `swap_remove`, which moves the last member
//! into the gap: code that takes a member out of an object it passes on
//! uses `shift_remove`.
//!
//! A leaf module: it depends only on [`crate::error`] and [`crate::limits`].

use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::Limits;

mod members;
mod text;

pub use members::{ListPage, Members};
pub(crate) use text::string_end;
pub use text::{check_text_bounds, JsonText};

/// The JSON type of `value` as a word for messages: `"null"`, `"boolean"`,
/// `"number"`, `"string"`, `"array"` or `"object"`.
#[must_use]
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Serialized length of `v` in bytes (compact `serde_json` text), without
/// building the text. `usize::MAX` when `v` cannot be serialized.
pub fn json_len<T: Serialize + ?Sized>(v: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    serde_json::to_writer(&mut c, v)
        .map(|()| c.0)
        .unwrap_or(usize::MAX)
}

/// Depth and member count of a JSON value, for the bounds of `limits.rs`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// Nesting depth (a scalar is 0, `{}` or `[]` is 1).
    pub depth: usize,
    /// Object members plus array elements, all levels.
    pub members: usize,
}

/// Measures `value`, stopping early (and returning at least `max_depth + 1`
/// or `max_members + 1`) once either bound is passed, so a hostile value
/// costs no more than the bounds allow.
#[must_use]
pub fn shape(value: &Value, max_depth: usize, max_members: usize) -> Shape {
    let mut walk = ShapeWalk::new(max_depth, max_members);
    walk.stack.push((value, 0));
    walk.run();
    walk.out
}

/// [`shape`] of `items` taken as one JSON array, without building the array.
#[must_use]
pub fn array_shape(items: &[Value], max_depth: usize, max_members: usize) -> Shape {
    let mut walk = ShapeWalk::new(max_depth, max_members);
    if walk.enter(items.iter(), 0) {
        walk.run();
    }
    walk.out
}

/// Checks `value` against `maxJsonDepth` and `maxJsonProperties`.
///
/// # Errors
/// A sentence naming the bound, to follow the value's name:
/// `is nested deeper than maxJsonDepth (64)` or
/// `has more than maxJsonProperties (100000) members`.
pub fn check_shape(value: &Value, max_depth: usize, max_members: usize) -> Result<(), String> {
    shape_within(shape(value, max_depth, max_members), max_depth, max_members)
}

/// Checks a result (tool result, resource read, prompt, list) against
/// `maxResultBytes` (serialized size), `maxJsonDepth` and `maxJsonProperties`
/// of `limits`.
///
/// # Errors
/// `limit_exceeded`, the message naming `context` and the bound, e.g.
/// `tools/call "t" on s: the result is 12 bytes, more than maxResultBytes (10)`.
pub fn check_bounds(context: &str, value: &Value, limits: &Limits) -> HostResult<()> {
    within_limits(context, json_len(value), limits, || {
        shape(value, limits.max_json_depth, limits.max_json_properties)
    })
}

/// [`check_bounds`] for `items` taken as one JSON array (a list walk's
/// items), without building the array. Same result, same messages.
///
/// # Errors
/// `limit_exceeded`, as [`check_bounds`].
pub fn check_list_bounds(context: &str, items: &[Value], limits: &Limits) -> HostResult<()> {
    within_limits(context, json_len(items), limits, || {
        array_shape(items, limits.max_json_depth, limits.max_json_properties)
    })
}

/// The largest index `<= i` (and `<= s.len()`) that is a character boundary
/// of `s`, so `&s[..floor_char_boundary(s, i)]` never splits a character.
#[must_use]
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn shape_within(s: Shape, max_depth: usize, max_members: usize) -> Result<(), String> {
    if s.depth > max_depth {
        Err(format!("is nested deeper than maxJsonDepth ({max_depth})"))
    } else if s.members > max_members {
        Err(format!(
            "has more than maxJsonProperties ({max_members}) members"
        ))
    } else {
        Ok(())
    }
}

/// The size bound first, then (only if it holds) the shape bounds.
fn within_limits(
    context: &str,
    bytes: usize,
    limits: &Limits,
    measure: impl FnOnce() -> Shape,
) -> HostResult<()> {
    let exceeded = |what: String| {
        HostError::new(
            ErrorCode::LimitExceeded,
            format!("{context}: the result {what}"),
        )
    };
    if bytes > limits.max_result_bytes {
        return Err(exceeded(format!(
            "is {bytes} bytes, more than maxResultBytes ({})",
            limits.max_result_bytes
        )));
    }
    shape_within(measure(), limits.max_json_depth, limits.max_json_properties).map_err(exceeded)
}

/// Depth-first walk of [`shape`] with an explicit stack (no recursion).
struct ShapeWalk<'a> {
    out: Shape,
    stack: Vec<(&'a Value, usize)>,
    max_depth: usize,
    max_members: usize,
}

impl<'a> ShapeWalk<'a> {
    fn new(max_depth: usize, max_members: usize) -> Self {
        Self {
            out: Shape::default(),
            stack: Vec::new(),
            max_depth,
            max_members,
        }
    }

    /// Counts the children of a container at `level` and queues them;
    /// `false` once a bound is passed (the walk stops there).
    fn enter(&mut self, children: impl Iterator<Item = &'a Value>, level: usize) -> bool {
        self.out.depth = self.out.depth.max(level + 1);
        for child in children {
            self.out.members += 1;
            if self.out.members > self.max_members || level + 1 > self.max_depth {
                return false;
            }
            self.stack.push((child, level + 1));
        }
        true
    }

    fn run(&mut self) {
        while let Some((v, level)) = self.stack.pop() {
            let go_on = match v {
                Value::Object(m) => self.enter(m.values(), level),
                Value::Array(a) => self.enter(a.iter(), level),
                _ => true,
            };
            if !go_on {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn type_names_are_json_words() {
        let words: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1.5),
            json!("s"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(type_name)
        .collect();
        assert_eq!(
            words,
            ["null", "boolean", "number", "string", "array", "object"]
        );
    }

    #[test]
    fn objects_keep_the_sender_key_order() {
        let text = r#"{"url":1,"thought":{"zeta":1,"b":2},"a":3,"zeta":4,"b":5}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["url", "thought", "a", "zeta", "b"]);
        assert_eq!(v.to_string(), text);
        let mut m = v.as_object().unwrap().clone();
        m.shift_remove("thought");
        assert_eq!(
            Value::Object(m).to_string(),
            r#"{"url":1,"a":3,"zeta":4,"b":5}"#
        );
    }

    #[test]
    fn json_len_is_the_serialized_length() {
        let v = json!({"a": [1, "é\n", null], "b": {"c": 2.5}});
        assert_eq!(json_len(&v), serde_json::to_string(&v).unwrap().len());
        let items = [json!(1), json!("x")];
        assert_eq!(json_len(&items[..]), "[1,\"x\"]".len());
        assert_eq!(json_len(&Vec::<Value>::new()), 2);
    }

    #[test]
    fn shape_stops_at_bounds() {
        let mut deep = json!(1);
        for _ in 0..500 {
            deep = json!({ "n": deep });
        }
        assert!(shape(&deep, 64, 10_000).depth > 64);
        let wide = Value::Array(vec![json!(0); 50]);
        assert_eq!(
            shape(&wide, 64, 10),
            Shape {
                depth: 1,
                members: 11
            }
        );
        assert_eq!(
            shape(&json!({"a": [1, 2]}), 64, 100),
            Shape {
                depth: 2,
                members: 3
            }
        );
    }

    #[test]
    fn array_shape_equals_the_shape_of_the_array() {
        let items = vec![json!({"a": [1, 2, {"b": []}]}), json!(3), json!([[]])];
        let whole = Value::Array(items.clone());
        for (depth, members) in [(64, 100), (2, 100), (64, 3), (1, 1), (0, 0)] {
            assert_eq!(
                array_shape(&items, depth, members),
                shape(&whole, depth, members),
                "bounds {depth}/{members}"
            );
        }
        assert_eq!(array_shape(&[], 64, 100), shape(&json!([]), 64, 100));
    }

    #[test]
    fn check_shape_names_the_bound() {
        assert_eq!(check_shape(&json!({"a": 1}), 64, 100), Ok(()));
        assert_eq!(
            check_shape(&json!({"a": {"b": {}}}), 2, 100),
            Err("is nested deeper than maxJsonDepth (2)".to_owned())
        );
        assert_eq!(
            check_shape(&json!([1, 2, 3]), 64, 2),
            Err("has more than maxJsonProperties (2) members".to_owned())
        );
    }

    #[test]
    fn check_bounds_names_context_and_bound() {
        let limits = Limits {
            max_result_bytes: 10,
            max_json_depth: 2,
            max_json_properties: 3,
            ..Limits::default()
        };
        assert!(check_bounds("ctx", &json!([1, 2]), &limits).is_ok());
        let e = check_bounds("ctx", &json!("0123456789"), &limits).unwrap_err();
        assert_eq!(e.code, ErrorCode::LimitExceeded);
        assert_eq!(
            e.message,
            "ctx: the result is 12 bytes, more than maxResultBytes (10)"
        );
        let e = check_bounds("ctx", &json!([[[]]]), &limits).unwrap_err();
        assert_eq!(
            e.message,
            "ctx: the result is nested deeper than maxJsonDepth (2)"
        );
        let e = check_bounds("ctx", &json!([1, 2, 3, 4]), &limits).unwrap_err();
        assert_eq!(
            e.message,
            "ctx: the result has more than maxJsonProperties (3) members"
        );
    }

    #[test]
    fn check_list_bounds_equals_check_bounds_on_the_array() {
        let limits = Limits {
            max_result_bytes: 20,
            max_json_depth: 2,
            max_json_properties: 4,
            ..Limits::default()
        };
        let cases = [
            vec![json!(1), json!(2)],
            vec![json!("0123456789"), json!("0123456789")],
            vec![json!([[]])],
            vec![json!(1), json!(2), json!(3), json!(4), json!(5)],
            vec![],
        ];
        for items in cases {
            let one = check_bounds("c", &Value::Array(items.clone()), &limits);
            let list = check_list_bounds("c", &items, &limits);
            assert_eq!(
                one.map_err(|e| e.message),
                list.map_err(|e| e.message),
                "{items:?}"
            );
        }
    }

    #[test]
    fn floor_char_boundary_never_splits_a_character() {
        let s = "aé😀";
        assert_eq!(floor_char_boundary(s, 0), 0);
        assert_eq!(floor_char_boundary(s, 2), 1);
        assert_eq!(floor_char_boundary(s, 3), 3);
        assert_eq!(floor_char_boundary(s, 6), 3);
        assert_eq!(floor_char_boundary(s, 7), 7);
        assert_eq!(floor_char_boundary(s, 100), 7);
    }
}
