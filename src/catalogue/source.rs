//! The fingerprint of one raw `tools/list` entry, as the server sent it:
//! SHA-256 over a canonical walk of the decoded JSON (a type tag, then the
//! length or bytes of each value; object members in the server's order).
//! A re-list reuses a checked tool whose entry has the same fingerprint
//! instead of checking, normalizing, serializing and digesting it again
//! ([`super::ServerTools::build_after`]).
//!
//! SHA-256, not a keyed 64-bit hash: a server that could make two
//! different entries collide would keep an old definition published while
//! the tool changed under it.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of `entry`'s canonical walk (32 bytes).
pub(crate) fn source_digest(entry: &Value) -> [u8; 32] {
    let mut h = Sha256::new();
    feed(&mut h, entry);
    h.finalize().into()
}

/// A length as 8 little-endian bytes (so `["ab"]` and `["a","b"]` differ).
fn len(h: &mut Sha256, n: usize) {
    h.update((n as u64).to_le_bytes());
}

fn feed(h: &mut Sha256, v: &Value) {
    match v {
        Value::Null => h.update(b"n"),
        Value::Bool(true) => h.update(b"t"),
        Value::Bool(false) => h.update(b"f"),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                h.update(b"u");
                h.update(u.to_le_bytes());
            } else if let Some(i) = n.as_i64() {
                h.update(b"i");
                h.update(i.to_le_bytes());
            } else {
                h.update(b"d");
                h.update(n.as_f64().unwrap_or(f64::NAN).to_bits().to_le_bytes());
            }
        }
        Value::String(s) => {
            h.update(b"s");
            len(h, s.len());
            h.update(s.as_bytes());
        }
        Value::Array(items) => {
            h.update(b"[");
            len(h, items.len());
            for item in items {
                feed(h, item);
            }
        }
        Value::Object(members) => {
            h.update(b"{");
            len(h, members.len());
            for (key, value) in members {
                len(h, key.len());
                h.update(key.as_bytes());
                feed(h, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::source_digest;

    #[test]
    fn equal_entries_agree_and_any_change_differs() {
        let a = json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"x": {"minimum": 1}}}});
        assert_eq!(source_digest(&a), source_digest(&a.clone()));
        let changed = [
            json!({"name": "t", "description": "e", "inputSchema": {"type": "object", "properties": {"x": {"minimum": 1}}}}),
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"x": {"minimum": 2}}}}),
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"x": {"minimum": 1.0}}}}),
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"x": {"minimum": -1}}}}),
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"y": {"minimum": 1}}}}),
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"x": {"minimum": "1"}}}}),
            json!({"description": "d", "name": "t", "inputSchema": {"type": "object", "properties": {"x": {"minimum": 1}}}}),
        ];
        for c in &changed {
            assert_ne!(source_digest(&a), source_digest(c), "{c}");
        }
        // Lengths are fed, so a split string is not the joined one.
        assert_ne!(
            source_digest(&json!(["ab"])),
            source_digest(&json!(["a", "b"]))
        );
        assert_ne!(source_digest(&json!([[]])), source_digest(&json!([])));
    }
}
