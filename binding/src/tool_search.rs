//! Deferred tool loading methods of [`NativeHost`] (see
//! `host/tool_search.rs`): `searchTools`, `listToolSummaries`,
//! `getToolDefinitions`, all answering at once.

use ahp_mcp_host::host::ToolSearch;
use napi_derive::napi;
use serde::Deserialize;

use super::{failure, parse, respond, NativeHost};

/// `searchTools` arguments (the JS wrapper joins `query` and `options`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsSearchTools {
    /// Words to match.
    query: String,
    /// Most results.
    #[serde(default)]
    limit: Option<u64>,
    /// Only these servers' tools.
    #[serde(default)]
    server_ids: Option<Vec<String>>,
}

#[napi]
impl NativeHost {
    /// `searchTools(argsJson)` → response JSON with the `ToolSearchResult`
    /// array, best first (see `Host::search_tools`).
    #[napi(catch_unwind)]
    pub fn search_tools(&self, args_json: String) -> String {
        respond(parse::<JsSearchTools>("options", &args_json).and_then(|a| {
            let search = ToolSearch::new(&a.query, a.limit, a.server_ids)?;
            Ok(self.host.search_tools(&search))
        }))
    }

    /// Every catalogue entry's `ToolSummary`, as JSON.
    #[napi(catch_unwind)]
    pub fn list_tool_summaries(&self) -> String {
        serde_json::to_string(&self.host.list_tool_summaries()).unwrap_or_else(|_| "[]".to_owned())
    }

    /// `getToolDefinitions(namesJson)` → response JSON with the `HostTool`
    /// entries of those names (see `Host::get_tool_definitions_json`).
    #[napi(catch_unwind)]
    pub fn get_tool_definitions(&self, names_json: String) -> String {
        let json = parse::<Vec<String>>("names", &names_json)
            .and_then(|names| self.host.get_tool_definitions_json(&names));
        match json {
            Ok(array) => format!("{{\"ok\":true,\"value\":{array}}}"),
            Err(e) => failure(&e),
        }
    }
}
