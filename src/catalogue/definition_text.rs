//! The AHP `ToolDefinition` of a catalogue entry as JSON text, written
//! straight from the checked definition's text
//! ([`super::ServerTool::definition_json`]): byte for byte what serde writes
//! for [`CatalogueEntry::definition`], without parsing the schemas into
//! trees and serializing them again. A `session/serverToolsChanged` of a
//! large catalogue and every full state read are written this way.
//!
//! The checked text is serde's compact output of the definition, so each
//! member's raw text is what serializing its parsed value gives. The one
//! member that changes is `_meta`, which gains
//! `"ahp-mcp-host/source"` at its end; a `_meta` that already has that key
//! (the server's own) takes the tree path, which replaces it in place.

use ahp_types::state::ToolAnnotations;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::CatalogueEntry;

/// The `_meta` key the host adds to each published definition.
pub(super) const SOURCE_KEY: &str = "ahp-mcp-host/source";

/// The members of a checked definition text a `ToolDefinition` keeps, each
/// as its raw text (`null` included, as the tree path keeps it).
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(borrow, default, deserialize_with = "raw")]
    title: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    description: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "inputSchema", deserialize_with = "raw")]
    input_schema: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "outputSchema", deserialize_with = "raw")]
    output_schema: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw")]
    annotations: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta", deserialize_with = "raw")]
    meta: Option<&'a RawValue>,
}

/// A present member's raw text, `null` too (`Option`'s own decoding would
/// read `null` as absent).
fn raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Appends the entry's `ToolDefinition` JSON (see the module doc).
pub(super) fn write(entry: &CatalogueEntry, out: &mut Vec<u8>) {
    if !write_from_text(entry, out) {
        // Writing to a `Vec` does not fail.
        let _ = serde_json::to_writer(&mut *out, &entry.definition());
    }
}

/// A member's text when it is a JSON string (else the tree path drops it).
fn string(v: Option<&RawValue>) -> Option<&str> {
    v.map(RawValue::get).filter(|t| t.starts_with('"'))
}

/// The text path; `false` (nothing written) when the tree path must write it.
fn write_from_text(entry: &CatalogueEntry, out: &mut Vec<u8>) -> bool {
    let Ok(m) = serde_json::from_str::<Members>(&entry.tool.definition_json) else {
        return false;
    };
    let meta = m.meta.map(RawValue::get).filter(|t| t.starts_with('{'));
    if meta.is_some_and(|t| memchr::memmem::find(t.as_bytes(), SOURCE_KEY.as_bytes()).is_some()) {
        return false;
    }
    // JSON strings are escaped straight into `out` (writing to a `Vec`
    // does not fail): no text per entry.
    let quoted = |out: &mut Vec<u8>, key: &str, s: &str| {
        out.extend_from_slice(key.as_bytes());
        let _ = serde_json::to_writer(&mut *out, s);
    };
    quoted(out, "{\"name\":", &entry.name);
    let mut put = |key: &str, text: &str| {
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(text.as_bytes());
    };
    if let Some(title) = string(m.title) {
        put(",\"title\":", title);
    }
    if let Some(description) = string(m.description) {
        put(",\"description\":", description);
    }
    if let Some(schema) = m.input_schema {
        put(",\"inputSchema\":", schema.get());
    }
    if let Some(schema) = m.output_schema {
        put(",\"outputSchema\":", schema.get());
    }
    let annotations =
        (m.annotations).and_then(|a| serde_json::from_str::<ToolAnnotations>(a.get()).ok());
    if let Some(a) = annotations {
        put(
            ",\"annotations\":",
            &serde_json::to_string(&a).unwrap_or_default(),
        );
    }
    let inner = meta.map_or("", |t| &t[1..t.len() - 1]);
    put(",\"_meta\":{", inner);
    let comma = if inner.is_empty() { "" } else { "," };
    put(comma, "\"");
    put(SOURCE_KEY, "\":");
    quoted(out, "{\"customizationId\":", &entry.customization_id);
    quoted(out, ",\"toolName\":", &entry.tool.tool_name);
    out.extend_from_slice(b"}}}");
    true
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{json, Value};

    use crate::catalogue::{Catalogue, ServerTools};
    use crate::limits::Limits;

    /// Every entry's text equals serde's writing of its `ToolDefinition`,
    /// written by the text path (`by_text`) or the tree path.
    fn assert_text_is_the_definition(raw: Vec<Value>, by_text: bool) {
        let tools = ServerTools::build("s", raw, &Limits::default()).unwrap();
        let mut c = Catalogue::default();
        c.set_server("s", Some(Arc::new(tools)));
        for entry in c.entries().iter() {
            let mut text = Vec::new();
            assert_eq!(super::write_from_text(entry, &mut text), by_text);
            if !by_text {
                entry.write_definition_json(&mut text);
            }
            let tree = serde_json::to_string(&entry.definition()).unwrap();
            assert_eq!(String::from_utf8(text).unwrap(), tree, "{}", entry.name);
        }
    }

    #[test]
    fn the_text_is_what_serde_writes_for_the_definition() {
        assert_text_is_the_definition(
            vec![
                json!({"name": "bare", "inputSchema": {"type": "object"}}),
                json!({
                    "name": "rich", "title": "Rich \"one\" \u{e9}\u{1F600}\n",
                    "description": "tab\there \\ back \u{1}",
                    "inputSchema": {"type": "object", "properties": {"z": {"type": "number", "minimum": 1.5e-7}, "a": {"enum": [1, -2, 3.25, null, true]}}},
                    "outputSchema": {"type": "object", "properties": {"hits": {"type": "array"}}},
                    "annotations": {"title": "R", "readOnlyHint": true, "unknownHint": 3},
                    "execution": {"taskSupport": "optional"},
                    "icons": [{"src": "https://example.com/i.png"}],
                    "_meta": {"z/last": 1, "a/first": {"deep": [1, 2]}},
                }),
                json!({"name": "nulls", "title": null, "description": 5, "inputSchema": {"type": "object"}, "annotations": null, "_meta": null}),
                json!({"name": "meta-not-object", "inputSchema": {"type": "object"}, "_meta": "text"}),
                json!({"name": "bad-annotations", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}),
                json!({"name": "empty-meta", "inputSchema": {"type": "object"}, "_meta": {}}),
            ],
            true,
        );
    }

    #[test]
    fn a_server_source_key_is_replaced_in_place_as_by_the_tree() {
        assert_text_is_the_definition(
            vec![json!({
                "name": "spoof", "inputSchema": {"type": "object"},
                "_meta": {"ahp-mcp-host/source": {"customizationId": "other"}, "after": 1},
            })],
            false,
        );
    }
}
