//! The fingerprints of one raw `tools/list` entry, as the server sent it:
//! SHA-256 over the entry's members read one level deep
//! ([`crate::json::Members`]): each member's name and the text of its value
//! exactly as the server wrote it (lengths fed, members in the server's
//! order), taken apart for the entry's labels (`title` and `description`)
//! and for the rest of it (its shape). A re-list reuses a checked tool
//! whose entry has the same two fingerprints instead of checking,
//! normalizing, serializing and digesting it again, and writes only the
//! labels again for one whose shape is unchanged
//! ([`super::ServerTools::build_after`]); no tree of the entry is built for
//! either. The same text always parses to the same tree, so equal
//! fingerprints mean an equal check; text that differs only in spacing or
//! escapes is checked again, which costs time, never correctness.
//!
//! SHA-256, not a keyed 64-bit hash: a server that could make two
//! different entries collide would keep an old definition published while
//! the tool changed under it.

use sha2::{Digest, Sha256};

use crate::json::Members;

/// The members of an entry hashed into [`SourceDigests::labels`].
pub(crate) const LABELS: [&str; 2] = ["title", "description"];

/// The two fingerprints of one entry (32 bytes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SourceDigests {
    /// Every member but the labels, in the server's order (the whole
    /// entry's text when it is not an object).
    pub shape: [u8; 32],
    /// The `title` and `description` members, in the server's order.
    pub labels: [u8; 32],
}

/// The fingerprints of entry `text` (`members`: its members, when it is an
/// object).
pub(crate) fn source_digests(text: &str, members: Option<&Members<'_>>) -> SourceDigests {
    let mut shape = Sha256::new();
    let mut labels = Sha256::new();
    match members {
        Some(members) => {
            let is_label = |key: &str| LABELS.contains(&key);
            shape.update(b"{");
            len(
                &mut shape,
                members.iter().filter(|(k, _)| !is_label(k)).count(),
            );
            for (key, value) in members.iter() {
                let h = if is_label(key) {
                    &mut labels
                } else {
                    &mut shape
                };
                piece(h, key);
                piece(h, value.get());
            }
        }
        None => {
            shape.update(b"v");
            piece(&mut shape, text);
        }
    }
    SourceDigests {
        shape: shape.finalize().into(),
        labels: labels.finalize().into(),
    }
}

/// A length as 8 little-endian bytes, then the bytes (so `"ab"` then `""`
/// and `"a"` then `"b"` differ).
fn piece(h: &mut Sha256, text: &str) {
    len(h, text.len());
    h.update(text.as_bytes());
}

/// A length as 8 little-endian bytes.
fn len(h: &mut Sha256, n: usize) {
    h.update((n as u64).to_le_bytes());
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::source_digests;
    use crate::json::Members;

    fn source_digest(entry: &serde_json::Value) -> super::SourceDigests {
        let text = entry.to_string();
        source_digests(&text, Members::of(&text).as_ref())
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
