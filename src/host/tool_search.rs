//! `searchTools`, `listToolSummaries` and `getToolDefinitions`: deferred
//! tool loading over the model catalogue (see [`crate::catalogue::search`]).
//! A harness offers the model summaries or search results (no schemas),
//! fetches the definitions of the tools the model picks, then calls them.

use std::collections::HashMap;
use std::sync::PoisonError;

use super::Host;
use crate::catalogue::search::{ToolSearch, ToolSearchHit, ToolSummary};
use crate::catalogue::CatalogueEntry;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::MAX_TOOL_DEFINITION_NAMES;

impl Host {
    /// The catalogue tools that match `search`, best first (see
    /// [`ToolSearch`]). Filtered, app-only and task-required tools are
    /// never in the catalogue, so never found. Does not record a read (a
    /// summary has no schema to build arguments against).
    pub fn search_tools(&self, search: &ToolSearch) -> Vec<ToolSearchHit> {
        let entries = (self.shared.publisher().catalogue().read())
            .unwrap_or_else(PoisonError::into_inner)
            .entries();
        search.run(&entries)
    }

    /// A [`ToolSummary`] of every catalogue entry, in `listTools` order.
    /// Does not record a read.
    pub fn list_tool_summaries(&self) -> Vec<ToolSummary> {
        let entries = (self.shared.publisher().catalogue().read())
            .unwrap_or_else(PoisonError::into_inner)
            .entries();
        entries.iter().map(|e| ToolSummary::of(e)).collect()
    }

    /// The `listTools` entries of the catalogue tools named `names`
    /// (model-safe names), as a JSON array text in the order of `names`;
    /// a name not in the catalogue (unknown, removed, filtered) is left
    /// out, and a repeated name is given once. Records the catalogue as
    /// read, as `listTools` does (the stale-tool check of later calls
    /// compares with these definitions).
    ///
    /// # Errors
    /// `invalid_argument`: more than [`MAX_TOOL_DEFINITION_NAMES`] names.
    pub fn get_tool_definitions_json(&self, names: &[String]) -> HostResult<String> {
        if names.len() > MAX_TOOL_DEFINITION_NAMES {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                format!("names: more than {MAX_TOOL_DEFINITION_NAMES} names"),
            ));
        }
        let mut wanted: HashMap<&str, usize> = HashMap::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            wanted.entry(name.as_str()).or_insert(i);
        }
        let entries = self.read_view.read(self.shared.publisher().catalogue());
        let mut found: Vec<(usize, &CatalogueEntry)> = (entries.iter())
            .filter_map(|e| Some((*wanted.get(e.name.as_str())?, &**e)))
            .collect();
        found.sort_unstable_by_key(|(i, _)| *i);
        Ok(super::tools::json_array(found.iter().map(|(_, e)| *e)))
    }
}
