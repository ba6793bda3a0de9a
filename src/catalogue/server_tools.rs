//! One server's `tools/list` result, checked tool by tool (MCP 2025-11-25
//! "Tools › Listing Tools"): names, bounds of `limits.rs`, schema
//! normalization ([`super::schema`]) and a [`ToolDiagnostic`] for everything
//! changed or left out.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::schema;
use super::sorted_index::SortedIndex;
use super::source::SourceDigests;
use crate::error::{ErrorCode, HostError};
use crate::json::{check_shape, floor_char_boundary, json_len};
use crate::limits::{Limits, DIAGNOSTIC_TOOL_NAME_CHARS};

mod definition;
mod entry;
mod redaction;
mod relabel;
use definition::TitleFrom;
use redaction::secret_in_name;
pub use redaction::SECRET_NAME_REASON;

/// What the host did about one tool (JS `ToolDiagnostic`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDiagnostic {
    /// Customization id of the server.
    pub server_id: String,
    /// The tool's name as the server sent it (`""` when it had none).
    pub tool: String,
    /// `normalized` (schema fixed), `omitted` (left out of the catalogue),
    /// `outputSchemaDropped`, `truncated` (description cut), `duplicate` or
    /// `filtered` (left out by the server's tool filter).
    pub action: DiagnosticAction,
    /// What was wrong, naming the field or bound.
    pub reason: String,
}

/// [`ToolDiagnostic::action`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosticAction {
    /// The input schema was repaired by a rule of `schema`.
    Normalized,
    /// The tool is not in the catalogue.
    Omitted,
    /// Only the output schema was dropped.
    OutputSchemaDropped,
    /// The description was cut to `maxToolDescriptionBytes`.
    Truncated,
    /// A second tool with the same name on the same server; the first is kept.
    Duplicate,
    /// The server's tool filter leaves it out (`catalogue::filter`).
    Filtered,
}

/// One checked tool of one server.
#[derive(Debug, Clone)]
pub struct ServerTool {
    /// The server's original tool name, byte for byte.
    pub tool_name: String,
    /// The checked definition as compact JSON text, serialized once (see
    /// [`ServerTool::definition`]): the digest is taken over it and the
    /// catalogue's JSON for JS is spliced from it. The only copy kept: a
    /// schema tree per tool costs ten times its text.
    pub definition_json: String,
    /// [`ServerTool::display_title`], kept.
    title: Option<Box<str>>,
    /// Which member [`ServerTool::title`] was read from.
    title_from: TitleFrom,
    /// Where the members after the labels (`title`, `description`) begin in
    /// `definition_json` (at `"inputSchema":`), when the labels are strings
    /// or absent: a re-list that changes only the labels writes them in
    /// front of that text again (`relabel.rs`). `None`: checked in full.
    labels_end: Option<u32>,
    /// `_meta.ui` when it is an object (MCP Apps), kept.
    ui: Option<Box<Map<String, Value>>>,
    /// [`ServerTool::digest`]'s 16 hex digits, inline (no allocation).
    digest: [u8; 16],
    /// `_meta.ui.visibility` is `["app"]`: callable, not in the model catalogue.
    pub app_only: bool,
    /// `execution.taskSupport` is `"required"` (MCP 2025-11-25 "Tools ›
    /// Tool", "Tasks › Tool-Level Negotiation"): the tool runs only as a
    /// task-augmented `tools/call` (`params.task`), which the host does not
    /// send, so it is kept out of the model catalogue (with an `omitted`
    /// diagnostic, [`TASK_REQUIRED_REASON`]); its definition keeps `execution`.
    pub task_required: bool,
    /// The fingerprints of the raw entry it was checked from
    /// ([`super::source::source_digests`]).
    source: SourceDigests,
    /// [`crate::redact::generation`] when it was checked for kept secret
    /// values: reused as it is unless it holds a value kept since
    /// ([`ServerTool::holds_kept_since`]).
    redaction: u64,
    /// Its schemas' bytes (`maxTotalSchemaBytes` counts them again on reuse).
    schema_bytes: usize,
    /// The diagnostics checking it gave (given again on reuse; boxed:
    /// most tools have none).
    notes: Box<[ToolDiagnostic]>,
}

/// The reason of the `omitted` diagnostic of a task-required tool.
pub const TASK_REQUIRED_REASON: &str = "execution.taskSupport is \"required\" (MCP 2025-11-25 \
     Tasks): the tool runs only as a task-augmented tools/call, which this host does not \
     send, so the model is not offered it";

/// One server's tools after checks.
#[derive(Debug, Clone, Default)]
pub struct ServerTools {
    /// Usable tools, in server order (app-only ones included).
    pub tools: Vec<Arc<ServerTool>>,
    /// What was changed or left out.
    pub diagnostics: Vec<ToolDiagnostic>,
    /// Position in `tools` by original name.
    index: SortedIndex,
}

impl ServerTools {
    /// [`ServerTools::build_after`] with no earlier listing (tests, fuzzing).
    ///
    /// # Errors
    /// Those of [`ServerTools::build_after`].
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn build(server_id: &str, raw: Vec<Value>, limits: &Limits) -> Result<Self, HostError> {
        Self::build_after(server_id, raw, limits, None)
    }

    /// [`ServerTools::build_after_text`] of entries given as trees (the
    /// lazy servers' tool cache, tests): each is written as text first.
    ///
    /// # Errors
    /// Those of [`ServerTools::build_after_text`].
    pub fn build_after(
        server_id: &str,
        raw: Vec<Value>,
        limits: &Limits,
        previous: Option<&ServerTools>,
    ) -> Result<Self, HostError> {
        let texts: Vec<Box<RawValue>> = raw
            .iter()
            .filter_map(|v| serde_json::value::to_raw_value(v).ok())
            .collect();
        Self::build_after_text(server_id, &texts, limits, previous)
    }

    /// Checks the raw `tools` of one `tools/list` walk of `server_id`, each
    /// entry the text the server sent (`entry.rs`).
    ///
    /// Per-tool problems (name, schema, description, duplicate) cost only
    /// that tool or field, with a diagnostic, in server order.
    ///
    /// On a re-list, a tool of `previous` (the server's current tools)
    /// whose raw entry is unchanged (same
    /// [`super::source::source_digests`], taken over the entry's text
    /// without building its tree) is reused as it is, with its
    /// diagnostics, instead of being checked, normalized, serialized and
    /// digested again; one whose entry changed only in its labels (`title`,
    /// `description`) gets only those read, checked and written again in
    /// front of its checked schemas (`relabel.rs`); only new or otherwise
    /// changed entries are parsed and checked in full. The result is the
    /// same as without `previous`.
    ///
    /// # Errors
    /// `limit_exceeded`, naming the server and the bound: more than
    /// `maxToolsPerServer` tools, or schemas adding up to more than
    /// `maxTotalSchemaBytes`. The caller then keeps the previous catalogue.
    pub fn build_after_text(
        server_id: &str,
        raw: &[Box<RawValue>],
        limits: &Limits,
        previous: Option<&ServerTools>,
    ) -> Result<Self, HostError> {
        if raw.len() > limits.max_tools_per_server {
            return Err(HostError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "server {server_id} lists {} tools, more than maxToolsPerServer ({})",
                    raw.len(),
                    limits.max_tools_per_server
                ),
            ));
        }
        let mut listing = Listing::new(server_id, limits, raw.len());
        let mut tools = Vec::with_capacity(raw.len());
        for entry in raw {
            // A re-list comes in the order of the last one, as a rule:
            // this entry's tool is looked for where the next one stood.
            let previous = previous.map(|p| (p, tools.len()));
            if let Some(tool) = listing.check_entry(entry, previous)? {
                tools.push(tool);
            }
        }
        let index = SortedIndex::new(&tools, tool_name);
        Ok(Self {
            tools,
            diagnostics: listing.diagnostics,
            index,
        })
    }

    /// A listing that failed as a whole: no tools, one diagnostic saying why.
    pub fn failed(server_id: &str, reason: String) -> Self {
        let diagnostic = ToolDiagnostic {
            server_id: server_id.to_owned(),
            tool: String::new(),
            action: DiagnosticAction::Omitted,
            reason,
        };
        Self {
            tools: Vec::new(),
            diagnostics: vec![diagnostic],
            index: SortedIndex::default(),
        }
    }

    /// The tool named `tool_name` (original name).
    pub fn get(&self, tool_name: &str) -> Option<&ServerTool> {
        let at = self.index.find(&self.tools, self::tool_name, &tool_name)?;
        Some(&self.tools[at])
    }

    /// The tool named `tool_name` if it was checked from a raw entry with
    /// the shape fingerprint of `source` ([`SourceDigests::shape`]). The
    /// tool at position `hint` is tried first: a listing in the same order
    /// then costs one look instead of a search of the index, whose every
    /// step reads another tool's name from memory.
    fn same_shape(
        &self,
        tool_name: &str,
        source: &SourceDigests,
        hint: usize,
    ) -> Option<&Arc<ServerTool>> {
        let tool = match self.tools.get(hint) {
            Some(tool) if tool.tool_name == tool_name => tool,
            _ => &self.tools[self.index.find(&self.tools, self::tool_name, &tool_name)?],
        };
        (tool.source.shape == source.shape).then_some(tool)
    }
}

/// The key of [`ServerTools`]' index: the original name.
fn tool_name(tool: &Arc<ServerTool>) -> &str {
    &tool.tool_name
}

/// The running state of one [`ServerTools::build_after`]: names seen so far, the
/// schema bytes so far and the diagnostics.
struct Listing<'a> {
    server_id: &'a str,
    limits: &'a Limits,
    /// [`crate::redact::generation`] before any check of this listing.
    redaction: u64,
    seen: HashSet<String>,
    total_schema_bytes: usize,
    diagnostics: Vec<ToolDiagnostic>,
}

impl<'a> Listing<'a> {
    fn new(server_id: &'a str, limits: &'a Limits, entries: usize) -> Self {
        Self {
            server_id,
            limits,
            redaction: crate::redact::generation(),
            seen: HashSet::with_capacity(entries),
            total_schema_bytes: 0,
            diagnostics: Vec::new(),
        }
    }

    fn diag(&self, tool: &str, action: DiagnosticAction, reason: String) -> ToolDiagnostic {
        ToolDiagnostic {
            server_id: self.server_id.to_owned(),
            tool: tool.to_owned(),
            action,
            reason,
        }
    }

    /// Checks one identified `tools/list` entry. `Ok(None)`: the tool is
    /// left out (with a diagnostic); `Ok(Some)`: usable, maybe with
    /// diagnostics. A kept secret anywhere in it (a server echoing its
    /// token into a description, a property name or a number) is
    /// `[redacted]` first (`crate::redact::hidden_in_value`; the tool's
    /// own member names are the spec's).
    ///
    /// # Errors
    /// `limit_exceeded` when the schemas so far pass `maxTotalSchemaBytes`.
    fn check_tool(
        &mut self,
        name: String,
        mut tool: Map<String, Value>,
        source: SourceDigests,
    ) -> Result<Option<ServerTool>, HostError> {
        tool.values_mut().for_each(crate::redact::hidden_in_value);
        let Some(schema_bytes) = self.count_schema_bytes(&name, &tool)? else {
            return Ok(None);
        };
        let input = match self.input_schema(&name, tool.remove("inputSchema")) {
            Ok(input) => input,
            Err(d) => {
                self.diagnostics.push(d);
                return Ok(None);
            }
        };
        // Members in the order of MCP's `Tool` (and AHP's `ToolDefinition`);
        // inside each member the server's order is kept.
        // Sized for every member it can get (no growth).
        let mut definition = Map::with_capacity(7);
        for key in ["title", "description"] {
            move_member(&mut tool, &mut definition, key);
        }
        if let Some(Value::String(d)) = definition.get_mut("description") {
            self.cut_description(&name, d);
        }
        definition.insert("inputSchema".to_owned(), input);
        if let Some(output) = tool.remove("outputSchema").filter(|v| !v.is_null()) {
            match self.output_schema(&output) {
                Ok(()) => {
                    definition.insert("outputSchema".to_owned(), output);
                }
                Err(reason) => self.diagnostics.push(self.diag(
                    &name,
                    DiagnosticAction::OutputSchemaDropped,
                    reason,
                )),
            }
        }
        for key in ["annotations", "execution", "_meta"] {
            move_member(&mut tool, &mut definition, key);
        }
        let mut tool = ServerTool::new(name, definition);
        tool.source = source;
        tool.redaction = self.redaction;
        tool.schema_bytes = schema_bytes;
        if tool.task_required {
            self.diagnostics.push(self.diag(
                &tool.tool_name,
                DiagnosticAction::Omitted,
                TASK_REQUIRED_REASON.to_owned(),
            ));
        }
        Ok(Some(tool))
    }

    /// The entry as an object with a usable, first-seen name.
    fn identify(&mut self, raw: Value) -> Result<(String, Map<String, Value>), ToolDiagnostic> {
        let Value::Object(mut tool) = raw else {
            let reason = "a tools/list entry is not a JSON object".to_owned();
            return Err(self.diag("", DiagnosticAction::Omitted, reason));
        };
        // Taken out, not copied: no definition member is named `name`.
        let name = match tool.remove("name") {
            Some(Value::String(n)) => n,
            _ => String::new(),
        };
        Ok((self.identify_name(name)?, tool))
    }

    /// `name` when it is usable (not empty, no kept secret, within
    /// `maxToolNameBytes`) and first seen in this listing.
    fn identify_name(&mut self, name: String) -> Result<String, ToolDiagnostic> {
        let omitted = |listing: &Self, tool: &str, reason: String| {
            listing.diag(tool, DiagnosticAction::Omitted, reason)
        };
        if name.is_empty() {
            return Err(omitted(self, "", "a tool has no name".to_owned()));
        }
        if let Some(shown) = secret_in_name(&name) {
            return Err(omitted(self, &shown, SECRET_NAME_REASON.to_owned()));
        }
        let max = self.limits.max_tool_name_bytes;
        if name.len() > max {
            let shown: String = name.chars().take(DIAGNOSTIC_TOOL_NAME_CHARS).collect();
            let reason = format!(
                "tool name is {} bytes, more than maxToolNameBytes ({max})",
                name.len()
            );
            return Err(omitted(self, &shown, reason));
        }
        if !self.seen.insert(name.clone()) {
            return Err(self.diag(
                &name,
                DiagnosticAction::Duplicate,
                "the server lists this name more than once; the first definition is kept"
                    .to_owned(),
            ));
        }
        Ok(name)
    }

    /// Adds the tool's schema bytes to the listing's total and returns
    /// them. `Ok(None)`: the tool alone passes `maxToolSchemaBytes` and is
    /// left out.
    ///
    /// # Errors
    /// `limit_exceeded` when the total passes `maxTotalSchemaBytes`.
    fn count_schema_bytes(
        &mut self,
        name: &str,
        tool: &Map<String, Value>,
    ) -> Result<Option<usize>, HostError> {
        let schema_bytes = ["inputSchema", "outputSchema"]
            .iter()
            .filter_map(|k| tool.get(*k))
            .map(json_len)
            .sum::<usize>();
        if schema_bytes > self.limits.max_tool_schema_bytes {
            let reason = format!(
                "schemas are {schema_bytes} bytes, more than maxToolSchemaBytes ({})",
                self.limits.max_tool_schema_bytes
            );
            let d = self.diag(name, DiagnosticAction::Omitted, reason);
            self.diagnostics.push(d);
            return Ok(None);
        }
        self.add_schema_bytes(schema_bytes)?;
        Ok(Some(schema_bytes))
    }

    /// Adds `schema_bytes` to the listing's total.
    ///
    /// # Errors
    /// `limit_exceeded` when the total passes `maxTotalSchemaBytes`.
    fn add_schema_bytes(&mut self, schema_bytes: usize) -> Result<(), HostError> {
        self.total_schema_bytes += schema_bytes;
        if self.total_schema_bytes > self.limits.max_total_schema_bytes {
            return Err(HostError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "server {}: tool schemas add up to more than maxTotalSchemaBytes ({})",
                    self.server_id, self.limits.max_total_schema_bytes
                ),
            ));
        }
        Ok(())
    }

    /// The bounded, normalized input schema; each fix adds a `normalized`
    /// diagnostic. `Err`: the `omitted` diagnostic.
    fn input_schema(&mut self, name: &str, input: Option<Value>) -> Result<Value, ToolDiagnostic> {
        let normalized = match &input {
            Some(v) => self.shape_ok(v).map_err(|r| format!("inputSchema {r}")),
            None => Ok(()),
        }
        .and_then(|()| schema::normalize_input(input));
        match normalized {
            Ok((schema, fixes)) => {
                for f in fixes {
                    let d = self.diag(name, DiagnosticAction::Normalized, f.describe());
                    self.diagnostics.push(d);
                }
                Ok(schema)
            }
            Err(reason) => Err(self.diag(name, DiagnosticAction::Omitted, reason)),
        }
    }

    /// Cuts a description longer than `maxToolDescriptionBytes`, with a
    /// `truncated` diagnostic.
    fn cut_description(&mut self, name: &str, d: &mut String) {
        let max = self.limits.max_tool_description_bytes;
        if d.len() <= max {
            return;
        }
        let reason = format!(
            "description is {} bytes, more than maxToolDescriptionBytes ({max}); cut",
            d.len()
        );
        d.truncate(floor_char_boundary(d, max));
        let diag = self.diag(name, DiagnosticAction::Truncated, reason);
        self.diagnostics.push(diag);
    }

    /// `Ok(())` when the output schema is kept, else why it is dropped.
    fn output_schema(&self, output: &Value) -> Result<(), String> {
        schema::check_output(output).and_then(|()| {
            self.shape_ok(output)
                .map_err(|r| format!("outputSchema {r}; dropped it"))
        })
    }

    /// `maxJsonDepth` and `maxJsonProperties` for one schema.
    fn shape_ok(&self, v: &Value) -> Result<(), String> {
        check_shape(
            v,
            self.limits.max_json_depth,
            self.limits.max_json_properties,
        )
    }
}

/// Moves member `key` (unless absent or `null`) from `from` to the end of
/// `to`, with its key's own text.
fn move_member(from: &mut Map<String, Value>, to: &mut Map<String, Value>, key: &str) {
    if let Some((key, v)) = from.remove_entry(key).filter(|(_, v)| !v.is_null()) {
        to.insert(key, v);
    }
}

#[cfg(test)]
mod tests;
