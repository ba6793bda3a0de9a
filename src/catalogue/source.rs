//! The fingerprints of one raw `tools/list` entry, as the server sent it:
//! SHA-256 over a canonical walk of the decoded JSON (a type tag, then the
//! length or bytes of each value; object members in the server's order),
//! taken apart for the entry's labels (`title` and `description`) and for
//! the rest of it (its shape). A re-list reuses a checked tool whose entry
//! has the same two fingerprints instead of checking, normalizing,
//! serializing and digesting it again, and writes only the labels again
//! for one whose shape is unchanged
//! ([`super::ServerTools::build_after`]).
//!
//! SHA-256, not a keyed 64-bit hash: a server that could make two
//! different entries collide would keep an old definition published while
//! the tool changed under it.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The members of an entry hashed into [`SourceDigests::labels`].
pub(crate) const LABELS: [&str; 2] = ["title", "description"];

/// The two fingerprints of one entry (32 bytes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SourceDigests {
    /// Every member but the labels, in the server's order (the whole
    /// entry's walk when it is not an object).
    pub shape: [u8; 32],
    /// The `title` and `description` members, in the server's order.
    pub labels: [u8; 32],
}

/// The fingerprints of `entry`'s canonical walk.
pub(crate) fn source_digests(entry: &Value) -> SourceDigests {
    let mut shape = Sha256::new();
    let mut labels = Sha256::new();
    match entry {
        Value::Object(members) => {
            let is_label = |key: &str| LABELS.contains(&key);
            shape.update(b"{");
            len(&mut shape, members.keys().filter(|k| !is_label(k)).count());
            for (key, value) in members {
                let h = if is_label(key) {
                    &mut labels
                } else {
                    &mut shape
                };
                len(h, key.len());
                h.update(key.as_bytes());
                feed(h, value);
            }
        }
        other => feed(&mut shape, other),
    }
    SourceDigests {
        shape: shape.finalize().into(),
        labels: labels.finalize().into(),
    }
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

    use super::source_digests;

    fn source_digest(entry: &serde_json::Value) -> super::SourceDigests {
        source_digests(entry)
    }

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
            json!({"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"minimum": 1}}}}),
            json!({"inputSchema": {"type": "object", "properties": {"x": {"minimum": 1}}}, "name": "t", "description": "d"}),
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

    #[test]
    fn a_label_change_keeps_the_shape_and_a_shape_change_the_labels() {
        let a = json!({"name": "t", "description": "d", "inputSchema": {"type": "object"}});
        let relabeled = [
            json!({"name": "t", "description": "e", "inputSchema": {"type": "object"}}),
            json!({"name": "t", "description": "d", "title": "T", "inputSchema": {"type": "object"}}),
            json!({"name": "t", "inputSchema": {"type": "object"}}),
        ];
        for r in &relabeled {
            assert_eq!(source_digest(&a).shape, source_digest(r).shape, "{r}");
            assert_ne!(source_digest(&a).labels, source_digest(r).labels, "{r}");
        }
        // Where the labels stand among the other members changes nothing
        // the catalogue writes (its members have a fixed order).
        let moved = json!({"description": "d", "name": "t", "inputSchema": {"type": "object"}});
        assert_eq!(source_digest(&a), source_digest(&moved));
        let reshaped = json!({"name": "t", "description": "d", "inputSchema": {"type": "array"}});
        assert_ne!(source_digest(&a).shape, source_digest(&reshaped).shape);
        assert_eq!(source_digest(&a).labels, source_digest(&reshaped).labels);
    }
}
