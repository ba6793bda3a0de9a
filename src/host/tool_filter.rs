//! `setToolEnabled`: switching one tool of a server on or off at run time,
//! over its configured `includeTools` / `excludeTools` (see
//! [`crate::catalogue::filter`]), like VS Code's per-tool toggle.

use std::sync::PoisonError;

use super::Host;
use crate::error::HostResult;
use crate::events::ToolsChangeReason;

impl Host {
    /// Switches tool `tool` (the server's original name, `toolName`) of
    /// server `server_id` on (`enabled`) or off. The switch wins over the
    /// server's `includeTools` / `excludeTools`, applies to a tool the
    /// server does not list (yet), and lasts while the server is
    /// configured: across reconnects, restarts and
    /// `notifications/tools/list_changed`, until `remove`.
    ///
    /// When the model catalogue changes (the server is `ready` and lists
    /// the tool), it is published at once: `session/serverToolsChanged` and
    /// the JS `toolsChanged` event with reason `filter`. Returns whether the
    /// catalogue changed.
    ///
    /// # Errors
    /// `not_found` (no server `server_id`), `invalid_argument` (an empty
    /// tool name, or one longer than `MAX_TOOL_FILTER_PATTERN_BYTES`),
    /// `limit_exceeded` (`MAX_TOOL_TOGGLES_PER_SERVER`), `disposed`.
    pub fn set_tool_enabled(&self, server_id: &str, tool: &str, enabled: bool) -> HostResult<bool> {
        self.check_live()?;
        self.server(server_id)?;
        let publisher = self.shared.publisher();
        let changed = (publisher.catalogue().write())
            .unwrap_or_else(PoisonError::into_inner)
            .switch_tool(server_id, tool, enabled)?;
        if changed {
            publisher.publish_tools(server_id, ToolsChangeReason::Filter);
        }
        Ok(changed)
    }

    /// Forgets the tool filters of removed servers `ids` (their tools left
    /// the catalogue with them).
    pub(super) fn forget_filters<'a>(&self, ids: impl IntoIterator<Item = &'a str>) {
        let mut catalogue =
            (self.shared.publisher().catalogue().write()).unwrap_or_else(PoisonError::into_inner);
        for id in ids {
            catalogue.set_filter(id, None);
        }
    }
}
