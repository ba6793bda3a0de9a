//! The bytes of one skill file from a `resources/read` result, and their
//! check against the manifest (SEP-2640 "Integrity and Verification ›
//! Verification on Read": the digest covers the raw bytes: a `text`
//! content's UTF-8 bytes, a `blob` content's base64-decoded bytes).

use base64::Engine;
use rmcp::model::{SkillIntegrityError, SkillResource};
use serde_json::Value;

/// One file as read: its raw bytes and how the server sent them.
#[derive(Debug, Clone, PartialEq)]
pub struct FileContent {
    /// The raw bytes (what `size` and `digest` cover).
    pub bytes: Vec<u8>,
    /// Sent as `text` (else as a base64 `blob`).
    pub is_text: bool,
    /// The content's `mimeType`, when given.
    pub mime_type: Option<String>,
}

/// The content for `uri` in a `ReadResourceResult` (`{contents: [...]}`):
/// the item whose `uri` is `uri`, or the only item.
///
/// # Errors
/// A sentence: no such item, neither `text` nor `blob`, a `blob` that is
/// not base64.
pub fn file_content(result: &Value, uri: &str) -> Result<FileContent, String> {
    let items = result
        .get("contents")
        .and_then(Value::as_array)
        .ok_or("the resources/read result has no `contents` array")?;
    let item = match items
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
    {
        Some(item) => item,
        None if items.len() == 1 => &items[0],
        None => return Err(format!("the result has no content for {uri}")),
    };
    let mime_type = item
        .get("mimeType")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(text) = item.get("text").and_then(Value::as_str) {
        return Ok(FileContent {
            bytes: text.as_bytes().to_vec(),
            is_text: true,
            mime_type,
        });
    }
    let blob = item
        .get("blob")
        .and_then(Value::as_str)
        .ok_or("the content has neither `text` nor `blob`")?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .map_err(|e| format!("the content's `blob` is not base64: {e}"))?;
    Ok(FileContent {
        bytes,
        is_text: false,
        mime_type,
    })
}

/// Checks `bytes` against the manifest entry with rmcp's
/// `SkillResource::verify`: size first (a different length fails without
/// hashing), then the `sha256:` digest.
///
/// # Errors
/// `("size" | "digest", sentence)`.
pub fn verify(entry: &SkillResource, bytes: &[u8]) -> Result<(), (&'static str, String)> {
    entry.verify(bytes).map_err(|e| match e {
        SkillIntegrityError::Size {
            expected, actual, ..
        } => (
            "size",
            format!("it is {actual} bytes, the skill entry says {expected}"),
        ),
        _ => (
            "digest",
            "its sha256 digest is not the one in the skill entry".to_owned(),
        ),
    })
}
