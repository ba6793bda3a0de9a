//! A checked tool's definition written once ([`ServerTool::new`]): its
//! text, digest, display title and the flags read from it, and the
//! accessors that read them back.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde_json::{Map, Value};
use sha2::Digest;

use super::super::short_sha256;
use super::super::source::{SourceDigests, LABELS};
use super::ServerTool;

/// The member a tool's display title was read from (MCP 2025-11-25 "Tools ›
/// Tool": `title`, else `annotations.title`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TitleFrom {
    /// No non-empty title: the name is shown.
    Nothing,
    /// The tool's own `title`.
    Title,
    /// `annotations.title`.
    Annotations,
}

/// The text that begins the members after the labels in a definition's
/// JSON: `inputSchema` always follows them ([`ServerTool::new`]).
const AFTER_LABELS: &[u8] = b"\"inputSchema\":";

impl ServerTool {
    /// The name people see for this tool, when the server gave one (MCP
    /// 2025-11-25 "Tools › Tool": display name precedence): `title`, else
    /// `annotations.title` (e.g. the Playwright server's "Manage tabs" for
    /// `browser_tabs`). Empty strings count as absent. Callers fall back to
    /// [`ServerTool::tool_name`].
    #[must_use]
    pub fn display_title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// First 64 bits of SHA-256 over the name and the definition, as 16
    /// lowercase hex digits: changes whenever the definition does (for
    /// stale-tool checks; JS `HostTool.digest`).
    #[must_use]
    pub fn digest(&self) -> &str {
        // Only hex digits are stored (see `digest_of`).
        std::str::from_utf8(&self.digest).unwrap_or_default()
    }

    /// AHP `ToolDefinition` fields except `name`, in this order: `title`,
    /// `description`, `inputSchema` (normalized), `outputSchema`,
    /// `annotations`, `execution` (MCP 2025-11-25), `_meta` (each member's
    /// own keys in the server's order): parsed from
    /// [`ServerTool::definition_json`] on each call, not kept.
    #[must_use]
    pub fn definition(&self) -> Map<String, Value> {
        serde_json::from_str(&self.definition_json).unwrap_or_default()
    }

    /// The non-empty `description`, if any: read from
    /// [`ServerTool::definition_json`] on each call (search and summaries
    /// need it, rarely; a second copy per tool is not kept).
    #[must_use]
    pub fn description(&self) -> Option<String> {
        /// Only the member wanted; the rest of the text is skipped.
        #[derive(serde::Deserialize)]
        struct Described {
            description: Option<String>,
        }
        (serde_json::from_str::<Described>(&self.definition_json).ok())
            .and_then(|d| d.description)
            .filter(|d| !d.trim().is_empty())
    }

    /// `_meta.ui` (MCP Apps), when it is an object.
    #[must_use]
    pub fn ui_meta(&self) -> Option<&Map<String, Value>> {
        self.ui.as_deref()
    }

    pub(super) fn new(tool_name: String, definition: Map<String, Value>) -> Self {
        let app_only = is_app_only(&definition);
        let task_required = is_task_required(&definition);
        let mut definition_json =
            serde_json::to_string(&definition).unwrap_or_else(|_| "{}".into());
        // Kept for the tool's life: its size, not the writer's capacity.
        definition_json.shrink_to_fit();
        let digest = digest_of(&tool_name, &definition_json);
        let (title, title_from) = match non_empty(definition.get("title")) {
            Some(title) => (Some(title), TitleFrom::Title),
            None => match annotations_title(definition.get("annotations")) {
                Some(title) => (Some(title), TitleFrom::Annotations),
                None => (None, TitleFrom::Nothing),
            },
        };
        let title = title.map(Box::from);
        let labels_end = labels_end(&definition, &definition_json);
        let ui = (definition.get("_meta").and_then(|m| m.get("ui")))
            .and_then(Value::as_object)
            .map(|ui| Box::new(ui.clone()));
        Self {
            tool_name,
            definition_json,
            title,
            title_from,
            labels_end,
            ui,
            digest,
            app_only,
            task_required,
            source: SourceDigests::default(),
            redaction: 0,
            schema_bytes: 0,
            notes: Box::default(),
        }
    }
}

/// Where the members after the labels begin in `text`, the JSON of
/// `definition`, when its labels are strings or absent. In JSON text a
/// string's quotes are escaped, so the first `"inputSchema":` outside one
/// is the member's key.
fn labels_end(definition: &Map<String, Value>, text: &str) -> Option<u32> {
    let labels_are_text = LABELS
        .iter()
        .all(|k| definition.get(*k).is_none_or(Value::is_string));
    labels_are_text.then(|| text_labels_end(text))?
}

/// Where `"inputSchema":` begins in `text`, a definition's JSON whose labels
/// are strings or absent (see [`labels_end`]).
pub(super) fn text_labels_end(text: &str) -> Option<u32> {
    // One searcher for every definition (building one per search was a
    // measurable part of a re-list).
    static AFTER_LABELS_FINDER: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(AFTER_LABELS));
    let at = AFTER_LABELS_FINDER.find(text.as_bytes())?;
    u32::try_from(at).ok()
}

/// `annotations.title` of a tool, if it is a non-empty string.
pub(super) fn annotations_title(annotations: Option<&Value>) -> Option<&str> {
    non_empty(annotations.and_then(|a| a.get("title")))
}

/// `value` as a string, if it is a non-empty one.
fn non_empty(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `_meta.ui.visibility` is exactly `["app"]`.
fn is_app_only(definition: &Map<String, Value>) -> bool {
    let visibility = definition
        .get("_meta")
        .and_then(|m| m.get("ui"))
        .and_then(|u| u.get("visibility"))
        .and_then(Value::as_array);
    matches!(visibility, Some(v) if v.len() == 1 && v[0] == "app")
}

/// `execution.taskSupport` is `"required"`.
fn is_task_required(definition: &Map<String, Value>) -> bool {
    let support = definition
        .get("execution")
        .and_then(|e| e.get("taskSupport"));
    support.and_then(Value::as_str) == Some("required")
}

/// [`ServerTool::digest`] of a tool: SHA-256 over `name \0 definition-JSON`
/// (the compact text of [`ServerTool::definition_json`]), first 16 hex digits.
pub(super) fn digest_of(name: &str, definition_json: &str) -> [u8; 16] {
    short_sha256(|h| {
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update(definition_json.as_bytes());
    })
}
