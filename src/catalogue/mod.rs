//! The model-facing tool catalogue: every `ready` server's tools as AHP
//! `ToolDefinition`s with model-safe names ([`names`]), usable schemas
//! ([`schema`]), bounded sizes ([`crate::limits::Limits`]), and a diagnostic
//! for everything changed or left out.
//!
//! Two steps. [`ServerTools::build`] turns one server's raw `tools/list`
//! entries into checked tools (per server, when the listing arrives).
//! [`Catalogue`] holds every server's [`ServerTools`] and names them all
//! together, so names stay distinct across servers.
//!
//! Tools whose `_meta.ui.visibility` is exactly `["app"]` (MCP Apps,
//! SEP-1865) serve an App's View only: they stay callable but are not in the
//! model catalogue.

pub mod names;
pub mod read_view;
pub mod schema;

use schema::json_len;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{ErrorCode, HostError};
use ahp_types::state::ToolDefinition;

use crate::limits::Limits;

/// What the host did about one tool (JS `ToolDiagnostic`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDiagnostic {
    /// Customization id of the server.
    pub server_id: String,
    /// The tool's name as the server sent it (`""` when it had none).
    pub tool: String,
    /// `normalized` (schema fixed), `omitted` (left out of the catalogue),
    /// `outputSchemaDropped`, `truncated` (description cut) or `duplicate`.
    pub action: DiagnosticAction,
    /// What was wrong, naming the field or bound.
    pub reason: String,
}

/// [`ToolDiagnostic::action`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosticAction {
    /// The input schema was repaired by a rule of [`schema`].
    Normalized,
    /// The tool is not in the catalogue.
    Omitted,
    /// Only the output schema was dropped.
    OutputSchemaDropped,
    /// The description was cut to `maxToolDescriptionBytes`.
    Truncated,
    /// A second tool with the same name on the same server; the first is kept.
    Duplicate,
}

/// One checked tool of one server.
#[derive(Debug, Clone)]
pub struct ServerTool {
    /// The server's original tool name, byte for byte.
    pub tool_name: String,
    /// AHP `ToolDefinition` fields except `name`: `title`, `description`,
    /// `inputSchema` (normalized), `outputSchema`, `annotations`, `_meta`.
    pub definition: Map<String, Value>,
    /// First 64 bits of SHA-256 over the definition, hex: changes whenever
    /// the definition does (for stale-tool checks).
    pub digest: String,
    /// `_meta.ui.visibility` is `["app"]`: callable, not in the model catalogue.
    pub app_only: bool,
}

/// One server's tools after checks.
#[derive(Debug, Clone, Default)]
pub struct ServerTools {
    /// Usable tools, in server order (app-only ones included).
    pub tools: Vec<Arc<ServerTool>>,
    /// What was changed or left out.
    pub diagnostics: Vec<ToolDiagnostic>,
    /// Position in `tools` by original name.
    index: HashMap<String, usize>,
}

impl ServerTools {
    /// Checks the raw `tools` of one `tools/list` walk of `server_id`.
    ///
    /// Per-tool problems (name, schema, description, duplicate) cost only
    /// that tool or field, with a diagnostic. Errors (`limit_exceeded`,
    /// naming the server and the bound): more than `maxToolsPerServer` tools,
    /// or schemas adding up to more than `maxTotalSchemaBytes`; the caller
    /// then keeps the previous catalogue.
    pub fn build(server_id: &str, raw: Vec<Value>, limits: &Limits) -> Result<Self, HostError> {
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
        let mut out = ServerTools::default();
        let mut seen = HashSet::new();
        let mut total_schema_bytes = 0usize;
        for tool in raw {
            let diag = |tool: &str, action, reason: String| ToolDiagnostic {
                server_id: server_id.to_owned(),
                tool: tool.to_owned(),
                action,
                reason,
            };
            let Value::Object(mut tool) = tool else {
                out.diagnostics.push(diag(
                    "",
                    DiagnosticAction::Omitted,
                    "a tools/list entry is not a JSON object".to_owned(),
                ));
                continue;
            };
            let name = match tool.get("name") {
                Some(Value::String(n)) if !n.is_empty() => n.clone(),
                _ => {
                    out.diagnostics.push(diag(
                        "",
                        DiagnosticAction::Omitted,
                        "a tool has no name".to_owned(),
                    ));
                    continue;
                }
            };
            if name.len() > limits.max_tool_name_bytes {
                let shown: String = name.chars().take(64).collect();
                out.diagnostics.push(diag(
                    &shown,
                    DiagnosticAction::Omitted,
                    format!(
                        "tool name is {} bytes, more than maxToolNameBytes ({})",
                        name.len(),
                        limits.max_tool_name_bytes
                    ),
                ));
                continue;
            }
            if !seen.insert(name.clone()) {
                out.diagnostics.push(diag(
                    &name,
                    DiagnosticAction::Duplicate,
                    "the server lists this name more than once; the first definition is kept"
                        .to_owned(),
                ));
                continue;
            }
            let schema_bytes = ["inputSchema", "outputSchema"]
                .iter()
                .filter_map(|k| tool.get(*k))
                .map(json_len)
                .sum::<usize>();
            if schema_bytes > limits.max_tool_schema_bytes {
                out.diagnostics.push(diag(
                    &name,
                    DiagnosticAction::Omitted,
                    format!(
                        "schemas are {schema_bytes} bytes, more than maxToolSchemaBytes ({})",
                        limits.max_tool_schema_bytes
                    ),
                ));
                continue;
            }
            total_schema_bytes += schema_bytes;
            if total_schema_bytes > limits.max_total_schema_bytes {
                return Err(HostError::new(
                    ErrorCode::LimitExceeded,
                    format!("server {server_id}: tool schemas add up to more than maxTotalSchemaBytes ({})", limits.max_total_schema_bytes),
                ));
            }
            let shape_ok = |v: &Value| {
                schema::check_shape(v, limits.max_json_depth, limits.max_json_properties)
            };
            let input = match normalize(tool.remove("inputSchema"), &shape_ok) {
                Ok((schema, fixes)) => {
                    for f in fixes {
                        out.diagnostics.push(diag(
                            &name,
                            DiagnosticAction::Normalized,
                            f.describe(),
                        ));
                    }
                    schema
                }
                Err(reason) => {
                    out.diagnostics
                        .push(diag(&name, DiagnosticAction::Omitted, reason));
                    continue;
                }
            };
            let mut definition = Map::new();
            for key in ["title", "description", "annotations", "_meta"] {
                if let Some(v) = tool.remove(key).filter(|v| !v.is_null()) {
                    definition.insert(key.to_owned(), v);
                }
            }
            if let Some(Value::String(d)) = definition.get_mut("description") {
                if d.len() > limits.max_tool_description_bytes {
                    let keep = floor_char_boundary(d, limits.max_tool_description_bytes);
                    out.diagnostics.push(diag(
                        &name,
                        DiagnosticAction::Truncated,
                        format!(
                            "description is {} bytes, more than maxToolDescriptionBytes ({}); cut",
                            d.len(),
                            limits.max_tool_description_bytes
                        ),
                    ));
                    d.truncate(keep);
                }
            }
            definition.insert("inputSchema".to_owned(), input);
            if let Some(output) = tool.remove("outputSchema").filter(|v| !v.is_null()) {
                match schema::check_output(&output).and_then(|()| {
                    shape_ok(&output).map_err(|r| format!("outputSchema {r}; dropped it"))
                }) {
                    Ok(()) => {
                        definition.insert("outputSchema".to_owned(), output);
                    }
                    Err(reason) => out.diagnostics.push(diag(
                        &name,
                        DiagnosticAction::OutputSchemaDropped,
                        reason,
                    )),
                }
            }
            let app_only = is_app_only(&definition);
            let digest = digest(&name, &definition);
            out.tools.push(Arc::new(ServerTool {
                tool_name: name,
                definition,
                digest,
                app_only,
            }));
        }
        out.index = out
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tool_name.clone(), i))
            .collect();
        Ok(out)
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
            index: HashMap::new(),
        }
    }

    /// The tool named `tool_name` (original name).
    pub fn get(&self, tool_name: &str) -> Option<&ServerTool> {
        self.index.get(tool_name).map(|&i| &*self.tools[i])
    }
}

fn normalize(
    input: Option<Value>,
    shape_ok: &dyn Fn(&Value) -> Result<(), String>,
) -> Result<(Value, Vec<schema::Fix>), String> {
    if let Some(v) = &input {
        shape_ok(v).map_err(|r| format!("inputSchema {r}"))?;
    }
    schema::normalize_input(input)
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

fn digest(name: &str, definition: &Map<String, Value>) -> String {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([0u8]);
    let _ = serde_json::to_writer(&mut h, definition);
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One model catalogue entry (JS `HostTool`): AHP `ToolDefinition` plus
/// `customizationId`, `toolName` and `digest`. Built once per naming and
/// reused while neither the tool nor its name changes.
#[derive(Debug)]
pub struct CatalogueEntry {
    /// Model-safe name (see [`names`]).
    pub name: String,
    /// Owning server's customization id.
    pub customization_id: String,
    /// The tool of that server.
    pub tool: Arc<ServerTool>,
    /// The JS object as JSON text: `{name, title?, description?, inputSchema,
    /// outputSchema?, annotations?, _meta?, customizationId, toolName, digest}`.
    pub json: String,
    definition: std::sync::OnceLock<ToolDefinition>,
}

impl CatalogueEntry {
    fn new(name: String, customization_id: &str, tool: Arc<ServerTool>) -> Self {
        // `{"name":…,<definition members>,"customizationId":…,"toolName":…,"digest":…}`,
        // spliced from the definition's own serialization (no copy of the schemas).
        let body = serde_json::to_string(&tool.definition).unwrap_or_else(|_| "{}".to_owned());
        let inner = &body[1..body.len() - 1];
        let quote = |s: &str| Value::String(s.to_owned()).to_string();
        let mut json = String::with_capacity(
            body.len() + name.len() + customization_id.len() + tool.tool_name.len() + 80,
        );
        json.push_str("{\"name\":");
        json.push_str(&quote(&name));
        if !inner.is_empty() {
            json.push(',');
            json.push_str(inner);
        }
        json.push_str(",\"customizationId\":");
        json.push_str(&quote(customization_id));
        json.push_str(",\"toolName\":");
        json.push_str(&quote(&tool.tool_name));
        json.push_str(",\"digest\":");
        json.push_str(&quote(&tool.digest));
        json.push('}');
        Self {
            name,
            customization_id: customization_id.to_owned(),
            tool,
            json,
            definition: std::sync::OnceLock::new(),
        }
    }

    /// The AHP `ToolDefinition` published in `session/serverToolsChanged`:
    /// the definition with the model-safe name;
    /// `_meta["ahp-mcp-host/source"]` is `{customizationId, toolName}`.
    pub fn definition(&self) -> &ToolDefinition {
        self.definition.get_or_init(|| {
            let d = &self.tool.definition;
            let text = |k: &str| d.get(k).and_then(Value::as_str).map(str::to_owned);
            let mut meta = match d.get("_meta") {
                Some(Value::Object(m)) => m.clone(),
                _ => Map::new(),
            };
            meta.insert("ahp-mcp-host/source".to_owned(), serde_json::json!({ "customizationId": self.customization_id, "toolName": self.tool.tool_name }));
            ToolDefinition {
                name: self.name.clone(),
                title: text("title"),
                description: text("description"),
                input_schema: d.get("inputSchema").cloned(),
                output_schema: d.get("outputSchema").cloned(),
                annotations: d.get("annotations").and_then(|a| serde_json::from_value(a.clone()).ok()),
                meta: Some(meta),
            }
        })
    }

    /// The JS object (parsed from [`CatalogueEntry::json`]).
    pub fn to_json(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }
}

/// Every ready server's tools, named together.
#[derive(Debug, Default)]
pub struct Catalogue {
    servers: BTreeMap<String, Arc<ServerTools>>,
    entries: Arc<Vec<Arc<CatalogueEntry>>>,
    by_name: HashMap<String, usize>,
}

impl Catalogue {
    /// Sets (or with `None` removes) one server's tools and renames the
    /// catalogue. Returns whether the model catalogue changed.
    pub fn set_server(&mut self, server_id: &str, tools: Option<Arc<ServerTools>>) -> bool {
        match tools {
            Some(t) => self.servers.insert(server_id.to_owned(), t),
            None => self.servers.remove(server_id),
        };
        let listed: Vec<(&str, &Arc<ServerTool>)> = self
            .servers
            .iter()
            .flat_map(|(id, st)| {
                st.tools
                    .iter()
                    .filter(|t| !t.app_only)
                    .map(move |t| (id.as_str(), t))
            })
            .collect();
        let pairs: Vec<(&str, &str)> = listed
            .iter()
            .map(|(id, t)| (*id, t.tool_name.as_str()))
            .collect();
        let names = names::assign(&pairs);
        // Entries whose name and tool did not change are reused as they are.
        let previous: HashMap<&str, &Arc<CatalogueEntry>> =
            self.entries.iter().map(|e| (e.name.as_str(), e)).collect();
        let entries: Vec<Arc<CatalogueEntry>> = listed
            .iter()
            .zip(names)
            .map(|((id, t), name)| match previous.get(name.as_str()) {
                Some(e)
                    if e.customization_id == *id
                        && (Arc::ptr_eq(&e.tool, t)
                            || e.tool.digest == t.digest && e.tool.tool_name == t.tool_name) =>
                {
                    Arc::clone(e)
                }
                _ => Arc::new(CatalogueEntry::new(name, id, Arc::clone(t))),
            })
            .collect();
        let changed = self.entries.len() != entries.len()
            || self
                .entries
                .iter()
                .zip(entries.iter())
                .any(|(a, b)| !Arc::ptr_eq(a, b));
        drop(previous);
        self.by_name = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        self.entries = Arc::new(entries);
        changed
    }

    /// The model catalogue, in server-id then server order.
    pub fn entries(&self) -> Arc<Vec<Arc<CatalogueEntry>>> {
        self.entries.clone()
    }

    /// The entry with model-safe name `name`.
    pub fn by_model_name(&self, name: &str) -> Option<&CatalogueEntry> {
        self.by_name.get(name).map(|&i| &*self.entries[i])
    }

    /// One server's checked tools (app-only ones included), if it is listed.
    pub fn server(&self, server_id: &str) -> Option<Arc<ServerTools>> {
        self.servers.get(server_id).cloned()
    }

    /// Every diagnostic of every listed server.
    pub fn diagnostics(&self) -> Vec<ToolDiagnostic> {
        self.servers
            .values()
            .flat_map(|s| s.diagnostics.iter().cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> Value {
        json!({"name": name, "inputSchema": {"type": "object"}})
    }

    #[test]
    fn duplicates_keep_the_first_with_a_diagnostic() {
        let raw = vec![
            json!({"name": "d", "description": "first", "inputSchema": {"type": "object"}}),
            json!({"name": "d", "description": "second", "inputSchema": {"type": "object"}}),
        ];
        let st = ServerTools::build("s", raw, &Limits::default()).unwrap();
        assert_eq!(st.tools.len(), 1);
        assert_eq!(st.tools[0].definition["description"], "first");
        assert_eq!(st.diagnostics[0].action, DiagnosticAction::Duplicate);
    }

    #[test]
    fn bad_tools_cost_only_themselves() {
        let raw = vec![
            json!({"name": "bad", "inputSchema": {"type": "string"}}),
            json!({"name": "out", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
            json!(5),
            tool("ok"),
        ];
        let st = ServerTools::build("s", raw, &Limits::default()).unwrap();
        let names: Vec<&str> = st.tools.iter().map(|t| t.tool_name.as_str()).collect();
        assert_eq!(names, ["out", "ok"]);
        assert!(!st.tools[0].definition.contains_key("outputSchema"));
        let actions: Vec<DiagnosticAction> = st.diagnostics.iter().map(|d| d.action).collect();
        assert_eq!(
            actions,
            [
                DiagnosticAction::Omitted,
                DiagnosticAction::OutputSchemaDropped,
                DiagnosticAction::Omitted
            ]
        );
    }

    #[test]
    fn aggregate_bounds_fail_the_listing() {
        let limits = Limits {
            max_tools_per_server: 2,
            ..Limits::default()
        };
        let e =
            ServerTools::build("srv", vec![tool("a"), tool("b"), tool("c")], &limits).unwrap_err();
        assert_eq!(e.code, ErrorCode::LimitExceeded);
        assert!(e.message.contains("srv") && e.message.contains("maxToolsPerServer"));
        let limits = Limits {
            max_total_schema_bytes: 40,
            ..Limits::default()
        };
        let e =
            ServerTools::build("srv", vec![tool("a"), tool("b"), tool("c")], &limits).unwrap_err();
        assert!(e.message.contains("maxTotalSchemaBytes"));
    }

    #[test]
    fn per_tool_bounds_omit_or_truncate() {
        let limits = Limits {
            max_tool_name_bytes: 8,
            max_tool_description_bytes: 5,
            max_json_depth: 3,
            ..Limits::default()
        };
        let raw = vec![
            tool("a-very-long-name"),
            json!({"name": "desc", "description": "ééééé", "inputSchema": {"type": "object"}}),
            json!({"name": "deep", "inputSchema": {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {}}}}}}),
        ];
        let st = ServerTools::build("s", raw, &limits).unwrap();
        assert_eq!(st.tools.len(), 1);
        assert_eq!(st.tools[0].definition["description"], "éé");
        assert!(st
            .diagnostics
            .iter()
            .any(|d| d.reason.contains("maxToolNameBytes")));
        assert!(st
            .diagnostics
            .iter()
            .any(|d| d.tool == "deep" && d.reason.contains("maxJsonDepth")));
    }

    #[test]
    fn app_only_tools_stay_out_of_the_model_catalogue() {
        let raw = vec![
            json!({"name": "view", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": ["app"]}}}),
            json!({"name": "both", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": ["model", "app"]}}}),
        ];
        let mut c = Catalogue::default();
        assert!(c.set_server(
            "s",
            Some(Arc::new(
                ServerTools::build("s", raw, &Limits::default()).unwrap()
            ))
        ));
        let names: Vec<String> = c.entries().iter().map(|e| e.name.clone()).collect();
        assert_eq!(names, ["mcp__s__both"]);
        assert!(c.server("s").unwrap().get("view").is_some());
    }

    #[test]
    fn catalogue_reports_changes_and_digests_follow_definitions() {
        let mut c = Catalogue::default();
        let build = |raw| {
            Some(Arc::new(
                ServerTools::build("s", raw, &Limits::default()).unwrap(),
            ))
        };
        assert!(c.set_server("s", build(vec![tool("a")])));
        let d1 = c.by_model_name("mcp__s__a").unwrap().tool.digest.clone();
        assert!(!c.set_server("s", build(vec![tool("a")])));
        assert!(c.set_server(
            "s",
            build(vec![
                json!({"name": "a", "inputSchema": {"type": "object", "properties": {"x": {}}}})
            ])
        ));
        assert_ne!(c.by_model_name("mcp__s__a").unwrap().tool.digest, d1);
        assert!(c.set_server("s", None));
        assert!(c.entries().is_empty());
    }
}
