//! The YAML frontmatter of a `SKILL.md` (Agent Skills specification:
//! a file that starts with a `---` line, YAML up to the next `---` line),
//! parsed within bounds and compared field by field with the entry's
//! `frontmatter` (SEP-2640 "Integrity and Verification › Frontmatter
//! Verification").
//!
//! Bounds (see [`crate::limits`]): the YAML text at most
//! [`MAX_SKILL_FRONTMATTER_BYTES`], nesting at most
//! [`MAX_SKILL_FRONTMATTER_DEPTH`], at most [`MAX_SKILL_FRONTMATTER_KEYS`]
//! mapping keys in all. The parser (`serde_yaml_ng`) refuses alias
//! expansions past its own repetition limit.

use serde_json::{Map, Value};

use crate::limits::{
    MAX_SKILL_FRONTMATTER_BYTES, MAX_SKILL_FRONTMATTER_DEPTH, MAX_SKILL_FRONTMATTER_KEYS,
};

/// The frontmatter of `text` (a whole `SKILL.md`) as a JSON object.
///
/// # Errors
/// A sentence saying what is wrong: no `---` block, an unterminated one,
/// too large, not YAML, not a mapping, too deep or too many keys.
pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = block(text)?;
    if yaml.len() > MAX_SKILL_FRONTMATTER_BYTES {
        return Err(format!(
            "the frontmatter is {} bytes, more than {MAX_SKILL_FRONTMATTER_BYTES}",
            yaml.len()
        ));
    }
    let value: Value = serde_yaml_ng::from_str(yaml)
        .map_err(|e| format!("the frontmatter is not valid YAML: {e}"))?;
    let Value::Object(map) = value else {
        return Err("the frontmatter is not a YAML mapping".to_owned());
    };
    let mut keys = 0;
    check_shape(&map, 1, &mut keys)?;
    Ok(map)
}

/// The YAML between the opening and the closing `---` lines.
fn block(text: &str) -> Result<&str, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err("SKILL.md does not start with a `---` frontmatter line".to_owned());
    }
    let start = first.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(&text[start..at]);
        }
        at += line.len();
    }
    Err("the frontmatter has no closing `---` line".to_owned())
}

fn check_shape(map: &Map<String, Value>, depth: usize, keys: &mut usize) -> Result<(), String> {
    if depth > MAX_SKILL_FRONTMATTER_DEPTH {
        return Err(format!(
            "the frontmatter nests deeper than {MAX_SKILL_FRONTMATTER_DEPTH} levels"
        ));
    }
    *keys += map.len();
    if *keys > MAX_SKILL_FRONTMATTER_KEYS {
        return Err(format!(
            "the frontmatter has more than {MAX_SKILL_FRONTMATTER_KEYS} keys"
        ));
    }
    map.values().try_for_each(|v| check_value(v, depth, keys))
}

fn check_value(value: &Value, depth: usize, keys: &mut usize) -> Result<(), String> {
    match value {
        Value::Object(inner) => check_shape(inner, depth + 1, keys),
        Value::Array(items) if depth >= MAX_SKILL_FRONTMATTER_DEPTH && !items.is_empty() => Err(
            format!("the frontmatter nests deeper than {MAX_SKILL_FRONTMATTER_DEPTH} levels"),
        ),
        Value::Array(items) => items
            .iter()
            .try_for_each(|v| check_value(v, depth + 1, keys)),
        _ => Ok(()),
    }
}

/// Compares the entry's `frontmatter` with the file's, field by field.
///
/// # Errors
/// The first field that differs (or is in one only), by name.
pub fn compare(entry: &Map<String, Value>, file: &Map<String, Value>) -> Result<(), String> {
    for (key, value) in entry {
        match file.get(key) {
            None => return Err(format!("field `{key}` is in the entry but not in the file")),
            Some(other) if !same(value, other) => {
                return Err(format!(
                    "field `{key}` differs between the entry and the file"
                ))
            }
            Some(_) => {}
        }
    }
    match file.keys().find(|k| !entry.contains_key(*k)) {
        Some(key) => Err(format!("field `{key}` is in the file but not in the entry")),
        None => Ok(()),
    }
}

/// JSON equality where numbers compare by value (`1` equals `1.0`) and
/// object key order does not matter.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests;
