//! The model-facing tool catalogue: every `ready` server's tools as AHP
//! `ToolDefinition`s with model-safe names ([`names`]), usable schemas
//! ([`schema`]), bounded sizes ([`crate::limits::Limits`]), and a diagnostic
//! for everything changed or left out.
//!
//! Two steps. [`ServerTools::build_after`] turns one server's raw `tools/list`
//! entries into checked tools (per server, when the listing arrives; a
//! re-list reuses the checked tool of each unchanged entry, [`source`]).
//! [`Catalogue`] holds every server's [`ServerTools`] and names them all
//! together, so names stay distinct across servers.
//!
//! Tools whose `_meta.ui.visibility` is exactly `["app"]` (MCP Apps,
//! SEP-1865) serve an App's View only: they stay callable but are not in the
//! model catalogue.
//!
//! Each server may have a [`ToolFilter`] (`includeTools`, `excludeTools`,
//! `setToolEnabled`): the tools it leaves out are not in the model
//! catalogue, have a `filtered` diagnostic and are refused by `callTool`
//! (`tool_disabled`). Filters are kept by server id, apart from the
//! listings, so a reconnect or a re-list keeps them.

mod definition_text;
pub mod filter;
pub mod names;
pub mod read_view;
pub mod schema;
pub mod search;
mod server_tools;
mod sorted_index;
mod source;

pub use filter::ToolFilter;
pub use server_tools::{DiagnosticAction, ServerTool, ServerTools, ToolDiagnostic};

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::{Arc, OnceLock};

use ahp_types::state::ToolDefinition;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::HostResult;
use sorted_index::SortedIndex;

/// The first `N / 2` bytes of the SHA-256 of what `feed` writes, as `N`
/// lowercase hex digits (`N` even): the one "stable short id" of the
/// catalogue (model-name suffixes in [`names`], [`ServerTool::digest`]).
/// Stable across restarts, platforms and Rust versions. Written into an
/// array: no allocation per tool.
pub(crate) fn short_sha256<const N: usize>(feed: impl FnOnce(&mut Sha256)) -> [u8; N] {
    let mut h = Sha256::new();
    feed(&mut h);
    let mut hex = [b'0'; N];
    // `N / 2` bytes of a 32-byte digest fill exactly `N` digits.
    let _ = hex::encode_to_slice(&h.finalize()[..N / 2], &mut hex);
    hex
}

/// A `Write` that only counts the bytes (see [`CatalogueEntry::json_len`]).
struct ByteCount(usize);

impl Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One model catalogue entry (JS `HostTool`): AHP `ToolDefinition` plus
/// `customizationId`, `toolName` and `digest`. Built once per naming and
/// reused while neither the tool nor its name changes.
#[derive(Debug)]
pub struct CatalogueEntry {
    /// Model-safe name (see `names`).
    pub name: String,
    /// Owning server's customization id (one allocation shared by the
    /// server's entries).
    pub customization_id: Arc<str>,
    /// The tool of that server.
    pub tool: Arc<ServerTool>,
    /// The entry's searchable text, built by the first search that sees it
    /// (see [`search`]); boxed, so an entry never searched holds a pointer.
    search: OnceLock<Box<search::SearchText>>,
}

impl CatalogueEntry {
    fn new(name: String, customization_id: Arc<str>, tool: Arc<ServerTool>) -> Self {
        Self {
            name,
            customization_id,
            tool,
            search: OnceLock::new(),
        }
    }

    /// Writes the JS object as JSON text: `{name, title?, description?,
    /// inputSchema, outputSchema?, annotations?, _meta?, customizationId,
    /// toolName, digest}`, spliced from the definition's text (serialized
    /// once, `ServerTool::definition_json`) on each read instead of kept: a
    /// second text per tool is the largest part of a big catalogue's memory.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        // Writing to a `Vec` does not fail.
        let _ = self.write_json_to(out);
    }

    /// The length of [`CatalogueEntry::write_json`]'s text (bytes), counted
    /// without writing it.
    pub fn json_len(&self) -> usize {
        let mut count = ByteCount(0);
        let _ = self.write_json_to(&mut count);
        count.0
    }

    fn write_json_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let tool = &self.tool;
        let inner = (tool.definition_json.strip_prefix('{'))
            .and_then(|b| b.strip_suffix('}'))
            .unwrap_or_default();
        // A JSON string, escaped straight into the text.
        let quote = |out: &mut dyn Write, key: &[u8], s: &str| {
            out.write_all(key)?;
            serde_json::to_writer(out, s).map_err(std::io::Error::other)
        };
        quote(out, b"{\"name\":", &self.name)?;
        if !inner.is_empty() {
            out.write_all(b",")?;
            out.write_all(inner.as_bytes())?;
        }
        quote(out, b",\"customizationId\":", &self.customization_id)?;
        quote(out, b",\"toolName\":", &tool.tool_name)?;
        quote(out, b",\"digest\":", tool.digest())?;
        out.write_all(b"}")
    }

    /// [`CatalogueEntry::write_json`]'s text.
    pub fn json(&self) -> String {
        let mut out = Vec::with_capacity(self.json_capacity());
        self.write_json(&mut out);
        // Only UTF-8 went in (the definition's text and JSON strings).
        String::from_utf8(out).unwrap_or_default()
    }

    /// About the length of [`CatalogueEntry::write_json`]'s text (bytes; at
    /// least it unless a name needs escaping): a buffer's capacity.
    pub fn json_capacity(&self) -> usize {
        let tool = &self.tool;
        tool.definition_json.len()
            + self.name.len()
            + self.customization_id.len()
            + tool.tool_name.len()
            + tool.digest().len()
            + 60
    }

    /// The entry's searchable text (built on first use, then kept).
    fn search_text(&self) -> &search::SearchText {
        self.search
            .get_or_init(|| Box::new(search::SearchText::of(self)))
    }

    /// The AHP `ToolDefinition` published in `session/serverToolsChanged`:
    /// the definition with the model-safe name;
    /// `_meta["ahp-mcp-host/source"]` is `{customizationId, toolName}`.
    /// Built (parsed from the checked definition's text) on each call and
    /// not kept: a publication moves it into its action, and a catalogue
    /// holds no schema tree.
    pub fn definition(&self) -> ToolDefinition {
        let mut d = self.tool.definition();
        let mut text = |k: &str| match d.remove(k) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let (title, description) = (text("title"), text("description"));
        let mut meta = match d.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let source = serde_json::json!({ "customizationId": &*self.customization_id, "toolName": self.tool.tool_name });
        meta.insert(definition_text::SOURCE_KEY.to_owned(), source);
        ToolDefinition {
            name: self.name.clone(),
            title,
            description,
            input_schema: d.remove("inputSchema"),
            output_schema: d.remove("outputSchema"),
            annotations: d
                .remove("annotations")
                .and_then(|a| serde_json::from_value(a).ok()),
            meta: Some(meta),
        }
    }

    /// Appends [`CatalogueEntry::definition`] as JSON text, written from
    /// the checked definition's text without a schema tree (what a
    /// publication and a full state read write).
    pub fn write_definition_json(&self, out: &mut Vec<u8>) {
        definition_text::write(self, out);
    }

    /// The JS object (parsed from [`CatalogueEntry::json`]).
    pub fn to_json(&self) -> Value {
        serde_json::from_str(&self.json()).unwrap_or(Value::Null)
    }
}

/// Every ready server's tools, named together, and every server's filter.
#[derive(Debug, Default)]
pub struct Catalogue {
    servers: BTreeMap<String, Arc<ServerTools>>,
    /// The filters of servers that have one, listed or not.
    filters: HashMap<String, ToolFilter>,
    entries: Arc<Vec<Arc<CatalogueEntry>>>,
    by_name: SortedIndex,
    /// [`crate::redact::generation`] the servers' tools were last checked
    /// under (see [`Catalogue::redact_again`]).
    redaction: u64,
}

/// The catalogue's entries before a rename, found by model name: first at
/// the position the new entry takes (a catalogue named again in the same
/// order, as a re-list of one server gives it), else through a map built
/// at the first miss.
struct PreviousEntries<'a> {
    entries: &'a [Arc<CatalogueEntry>],
    by_name: Option<HashMap<&'a str, &'a Arc<CatalogueEntry>>>,
}

impl<'a> PreviousEntries<'a> {
    fn new(entries: &'a [Arc<CatalogueEntry>]) -> Self {
        Self {
            entries,
            by_name: None,
        }
    }

    /// The entry named `name`, looked for at position `at` first.
    fn find(&mut self, at: usize, name: &str) -> Option<&'a Arc<CatalogueEntry>> {
        match self.entries.get(at) {
            Some(entry) if entry.name == name => Some(entry),
            _ => {
                let entries = self.entries;
                let by_name = self
                    .by_name
                    .get_or_insert_with(|| entries.iter().map(|e| (e.name.as_str(), e)).collect());
                by_name.get(name).copied()
            }
        }
    }
}

impl Catalogue {
    /// Sets (or with `None` removes) one server's tools and renames the
    /// catalogue. Returns whether the model catalogue changed.
    pub fn set_server(&mut self, server_id: &str, tools: Option<Arc<ServerTools>>) -> bool {
        let replaced = match tools {
            Some(t) => self.servers.insert(server_id.to_owned(), t),
            None => self.servers.remove(server_id),
        };
        self.rename(replaced)
    }

    /// Gives server `server_id` the configured lists of `filter` (the
    /// switches of `setToolEnabled` it had are kept), or with `None`
    /// forgets its filter (the server was removed). Returns whether the
    /// model catalogue changed.
    pub fn set_filter(&mut self, server_id: &str, filter: Option<&ToolFilter>) -> bool {
        match filter {
            Some(config) => {
                let kept = self.filters.remove(server_id).unwrap_or_default();
                let filter = kept.with_lists_of(config);
                if !filter.is_empty() {
                    self.filters.insert(server_id.to_owned(), filter);
                }
            }
            None => {
                self.filters.remove(server_id);
            }
        }
        self.rename(None)
    }

    /// Switches tool `tool` (original name) of server `server_id` on or off
    /// over its lists (see [`ToolFilter::switch`]). Returns whether the
    /// model catalogue changed.
    ///
    /// # Errors
    /// Those of [`ToolFilter::switch`].
    pub fn switch_tool(&mut self, server_id: &str, tool: &str, enabled: bool) -> HostResult<bool> {
        let filter = self.filters.entry(server_id.to_owned()).or_default();
        if !filter.switch(tool, enabled)? {
            return Ok(false);
        }
        Ok(self.rename(None))
    }

    /// Why the filter of server `server_id` leaves tool `tool` (original
    /// name) out, or `None` when it does not.
    pub fn why_disabled(&self, server_id: &str, tool: &str) -> Option<String> {
        self.filters.get(server_id)?.why_disabled(tool)
    }

    /// Names the catalogue again after a change; `replaced` (a server's
    /// former tools) is freed with the former entries. Returns whether the
    /// model catalogue changed.
    fn rename(&mut self, replaced: Option<Arc<ServerTools>>) -> bool {
        let redacted = self.redact_again();
        let offered = |id: &str, t: &ServerTool| {
            !t.app_only && !t.task_required && self.why_disabled(id, &t.tool_name).is_none()
        };
        let listed: Vec<(&str, &Arc<ServerTool>)> = self
            .servers
            .iter()
            .flat_map(|(id, st)| {
                st.tools
                    .iter()
                    .filter(|t| offered(id, t))
                    .map(move |t| (id.as_str(), t))
            })
            .collect();
        let pairs: Vec<(&str, &str)> = listed
            .iter()
            .map(|(id, t)| (*id, t.tool_name.as_str()))
            .collect();
        let names = names::assign(&pairs);
        // Entries whose name and tool did not change are reused as they are.
        let mut previous = PreviousEntries::new(&self.entries);
        // One id allocation per server for its new entries (they come grouped by server).
        let mut last_id: Option<Arc<str>> = None;
        let mut shared_id = |id: &str| match &last_id {
            Some(last) if &**last == id => Arc::clone(last),
            _ => Arc::clone(last_id.insert(Arc::from(id))),
        };
        let entries: Vec<Arc<CatalogueEntry>> = listed
            .iter()
            .zip(names)
            .enumerate()
            .map(|(at, ((id, t), name))| match previous.find(at, &name) {
                Some(e)
                    if &*e.customization_id == *id
                        && (Arc::ptr_eq(&e.tool, t)
                            || e.tool.digest() == t.digest()
                                && e.tool.tool_name == t.tool_name) =>
                {
                    Arc::clone(e)
                }
                _ => Arc::new(CatalogueEntry::new(name, shared_id(id), Arc::clone(t))),
            })
            .collect();
        let changed = self.entries.len() != entries.len()
            || self
                .entries
                .iter()
                .zip(entries.iter())
                .any(|(a, b)| !Arc::ptr_eq(a, b));
        drop(previous);
        self.by_name = SortedIndex::new(&entries, model_name);
        let old = std::mem::replace(&mut self.entries, Arc::new(entries));
        // The previous generation (its schema trees) is freed off this thread.
        crate::reclaim::drop_later((replaced, redacted, old));
        changed
    }

    /// Checks every server's tools again for the kept secret values added
    /// since they were checked ([`ServerTools::redacted_again`]), when
    /// [`crate::redact::generation`] has grown; returns the tools replaced.
    fn redact_again(&mut self) -> Vec<Arc<ServerTools>> {
        let now = crate::redact::generation();
        if now == self.redaction {
            return Vec::new();
        }
        self.redaction = now;
        let mut replaced = Vec::new();
        for (id, tools) in &mut self.servers {
            if let Some(again) = tools.redacted_again(id, now) {
                replaced.push(std::mem::replace(tools, Arc::new(again)));
            }
        }
        replaced
    }

    /// The model catalogue, in server-id then server order.
    pub fn entries(&self) -> Arc<Vec<Arc<CatalogueEntry>>> {
        self.entries.clone()
    }

    /// The entry with model-safe name `name`.
    pub fn by_model_name(&self, name: &str) -> Option<&CatalogueEntry> {
        let at = self.by_name.find(&self.entries, model_name, &name)?;
        Some(&self.entries[at])
    }

    /// One server's checked tools (app-only ones included), if it is listed.
    pub fn server(&self, server_id: &str) -> Option<Arc<ServerTools>> {
        self.servers.get(server_id).cloned()
    }

    /// Every diagnostic of every listed server: those of its listing, then
    /// a `filtered` one for each tool its filter leaves out.
    pub fn diagnostics(&self) -> Vec<ToolDiagnostic> {
        let filtered = |id: &str, st: &ServerTools| -> Vec<ToolDiagnostic> {
            let Some(filter) = self.filters.get(id) else {
                return Vec::new();
            };
            let diagnostic = |t: &Arc<ServerTool>| {
                Some(ToolDiagnostic {
                    server_id: id.to_owned(),
                    tool: t.tool_name.clone(),
                    action: DiagnosticAction::Filtered,
                    reason: filter.why_disabled(&t.tool_name)?,
                })
            };
            st.tools.iter().filter_map(diagnostic).collect()
        };
        self.servers
            .iter()
            .flat_map(|(id, s)| s.diagnostics.iter().cloned().chain(filtered(id, s)))
            .collect()
    }
}

/// The key of the catalogue's index: the model-safe name.
fn model_name(entry: &Arc<CatalogueEntry>) -> &str {
    &entry.name
}

#[cfg(test)]
mod tests;
