//! Builders and lookups for the customization entries the host publishes.
//!
//! Ids: a plugin's id is its name; a plugin's MCP server child is
//! `<plugin>/<server>`; a top-level server's id is its name.

use ahp_types::state::{
    ChildCustomization, Customization, CustomizationEnablement, CustomizationLoadState, ErrorInfo,
    McpServerCustomization, McpServerErrorState, McpServerState, PluginCustomization, SessionState,
    TextRange,
};

use crate::error::ErrorCode;

/// Id of server `server` inside plugin `plugin`.
pub fn child_server_id(plugin: &str, server: &str) -> String {
    format!("{plugin}/{server}")
}

/// A new `McpServerCustomization` (AHP `type: "mcpServer"`).
pub fn mcp_server_entry(
    id: &str,
    uri: &str,
    name: &str,
    range: Option<TextRange>,
    state: McpServerState,
) -> McpServerCustomization {
    McpServerCustomization {
        id: id.to_owned(),
        uri: uri.to_owned(),
        name: name.to_owned(),
        icons: None,
        range,
        meta: None,
        enablement: None,
        state,
        channel: None,
        mcp_app: None,
    }
}

/// A new `PluginCustomization` with the given load state and MCP server children.
pub fn plugin_entry(
    id: &str,
    uri: &str,
    name: &str,
    load: CustomizationLoadState,
    children: Vec<McpServerCustomization>,
) -> PluginCustomization {
    PluginCustomization {
        id: id.to_owned(),
        uri: uri.to_owned(),
        name: name.to_owned(),
        icons: None,
        range: None,
        meta: None,
        client_id: None,
        load: Some(load),
        children: Some(
            children
                .into_iter()
                .map(|c| ChildCustomization::McpServer(Box::new(c)))
                .collect(),
        ),
        enablement: None,
        version: None,
    }
}

/// `McpServerState::Error` (AHP `McpServerErrorState`) with `errorType` =
/// the stable string of `code` (e.g. `"server_exited"`) and `message`.
pub fn server_error_state(code: ErrorCode, message: impl Into<String>) -> McpServerState {
    McpServerState::Error(McpServerErrorState {
        error: ErrorInfo {
            error_type: code.as_str().to_owned(),
            message: message.into(),
            stack: None,
            meta: None,
        },
    })
}

/// AHP "effective enabled": the first enablement entry decides; no entries = enabled.
/// An unknown first entry counts as disabled (as the reducer does).
pub fn effective_enabled(enablement: Option<&[CustomizationEnablement]>) -> bool {
    match enablement.and_then(|e| e.first()) {
        None => true,
        Some(CustomizationEnablement::Global { enabled })
        | Some(CustomizationEnablement::Workspace { enabled, .. })
        | Some(CustomizationEnablement::Session { enabled }) => *enabled,
        Some(CustomizationEnablement::Unknown(_)) => false,
    }
}

/// Where a customization id points in the session state.
#[derive(Debug, Clone, Copy)]
pub enum Found<'a> {
    /// A top-level plugin.
    Plugin(&'a PluginCustomization),
    /// An MCP server, with its containing plugin when it is a child.
    McpServer(&'a McpServerCustomization, Option<&'a PluginCustomization>),
    /// Something else (directory, skill, …) the host does not manage.
    Other,
}

/// Finds `id` by the reducer's rule: top-level entries first, then children.
pub fn find<'a>(state: &'a SessionState, id: &str) -> Option<Found<'a>> {
    let list = state.customizations.as_ref()?;
    for c in list {
        match c {
            Customization::Plugin(p) if p.id == id => return Some(Found::Plugin(p)),
            Customization::McpServer(s) if s.id == id => return Some(Found::McpServer(s, None)),
            Customization::Directory(d) if d.id == id => return Some(Found::Other),
            _ => {}
        }
    }
    for c in list {
        if let Customization::Plugin(p) = c {
            for child in p.children.iter().flatten() {
                match child {
                    ChildCustomization::McpServer(s) if s.id == id => {
                        return Some(Found::McpServer(s, Some(p)))
                    }
                    _ => {}
                }
            }
        }
    }
    None
}

/// Whether server `id` should be running: it and its plugin (if any) are
/// effectively enabled.
pub fn server_enabled(state: &SessionState, id: &str) -> bool {
    match find(state, id) {
        Some(Found::McpServer(s, parent)) => {
            effective_enabled(s.enablement.as_deref())
                && parent.is_none_or(|p| effective_enabled(p.enablement.as_deref()))
        }
        _ => false,
    }
}

/// Every MCP server in the session: top-level ones and plugin children.
pub fn mcp_servers(state: &SessionState) -> Vec<&McpServerCustomization> {
    let mut out = Vec::new();
    for c in state.customizations.iter().flatten() {
        match c {
            Customization::McpServer(s) => out.push(s.as_ref()),
            Customization::Plugin(p) => {
                out.extend(p.children.iter().flatten().filter_map(|child| match child {
                    ChildCustomization::McpServer(s) => Some(s.as_ref()),
                    _ => None,
                }))
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_error_state_carries_the_stable_code() {
        let McpServerState::Error(e) = server_error_state(ErrorCode::ServerExited, "exited 1")
        else {
            panic!("not an error state");
        };
        assert_eq!(e.error.error_type, "server_exited");
        assert_eq!(e.error.message, "exited 1");
        let McpServerState::Error(e) = server_error_state(ErrorCode::SpawnFailed, "m") else {
            panic!("not an error state");
        };
        assert_eq!(e.error.error_type, "spawn_failed");
    }
}
