//! Validation of client-dispatched session actions (AHP `dispatchAction`).
//!
//! Clients may dispatch `session/customizationToggled`,
//! `session/mcpServerStartRequested`, `session/mcpServerStopRequested` and
//! `session/mcpServerBackgroundRequested`. Everything else the host refuses
//! (host-only actions such as `session/mcpServerStateChanged`, and actions of
//! other channels), with a `rejectionReason` naming the action type.
//!
//! Chat actions a client answers the host's own chat requests with are
//! judged where those requests live, before this validation: a failed
//! `chat/toolCallComplete` (a call paused for authentication,
//! `crate::auth::step_up`), and `chat/inputAnswerChanged` /
//! `chat/inputCompleted` (a form elicitation of a chat tool call,
//! `crate::chat::input_publisher`).

use ahp_types::actions::StateAction;
use ahp_types::state::{CustomizationEnablement, SessionState};

use super::customizations::{find, server_enabled, Found};

/// The side effect an accepted client action asks of the host (what the
/// client intends; not an MCP or JSON-RPC request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientIntent {
    /// Start (or restart) the MCP server with this id.
    Start(String),
    /// Stop the MCP server with this id.
    Stop(String),
    /// Enablement of this customization (plugin or server) changed: reconcile.
    Toggled(String),
    /// Stop blocking on this starting server (no process change).
    Background(String),
}

/// Checks a client action against the current state. `Ok` gives the side
/// effect to perform after the echo; `Err` gives the `rejectionReason`.
pub fn validate_client_action(
    state: &SessionState,
    action: &StateAction,
) -> Result<ClientIntent, String> {
    match action {
        StateAction::SessionCustomizationToggled(a) => {
            match find(state, &a.id) {
                Some(Found::Plugin(_)) | Some(Found::McpServer(..)) => {}
                Some(Found::Other) => {
                    return Err(format!("{} is not a customization this host manages", a.id))
                }
                None => return Err(format!("{} is not a customization of this session", a.id)),
            }
            check_enablement(&a.enablement)?;
            Ok(ClientIntent::Toggled(a.id.clone()))
        }
        StateAction::SessionMcpServerStartRequested(a) => {
            require_server(state, &a.id)?;
            if !server_enabled(state, &a.id) {
                return Err(format!(
                    "{} is disabled; enable it with session/customizationToggled first",
                    a.id
                ));
            }
            Ok(ClientIntent::Start(a.id.clone()))
        }
        StateAction::SessionMcpServerStopRequested(a) => {
            require_server(state, &a.id)?;
            Ok(ClientIntent::Stop(a.id.clone()))
        }
        StateAction::SessionMcpServerBackgroundRequested(a) => {
            require_server(state, &a.id)?;
            Ok(ClientIntent::Background(a.id.clone()))
        }
        other => Err(format!(
            "{} cannot be dispatched by a client to this host",
            action_type(other)
        )),
    }
}

fn require_server(state: &SessionState, id: &str) -> Result<(), String> {
    match find(state, id) {
        Some(Found::McpServer(..)) => Ok(()),
        _ => Err(format!("{id} is not a server this host runs")),
    }
}

/// AHP 1.0 wire contract: entries sorted session, workspace, global; at most
/// one of each; no unknown kinds.
fn check_enablement(list: &[CustomizationEnablement]) -> Result<(), String> {
    let mut last_rank = 0;
    for e in list {
        let rank = match e {
            CustomizationEnablement::Session { .. } => 1,
            CustomizationEnablement::Workspace { .. } => 2,
            CustomizationEnablement::Global { .. } => 3,
            CustomizationEnablement::Unknown(_) => {
                return Err("enablement contains an unknown kind".to_owned())
            }
        };
        if rank <= last_rank {
            return Err("enablement must list at most one session, workspace and global entry, in that order".to_owned());
        }
        last_rank = rank;
    }
    Ok(())
}

/// The wire `type` string of an action (e.g. `"session/mcpServerStateChanged"`).
pub fn action_type(action: &StateAction) -> String {
    serde_json::to_value(action)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "unknown action".to_owned())
}

#[cfg(test)]
mod tests {
    use ahp_types::actions::SessionMcpServerStopRequestedAction;
    use ahp_types::state::{Customization, McpServerState, McpServerStoppedState};

    use super::super::customizations::mcp_server_entry;
    use super::super::store::empty_session_state;
    use super::*;

    fn with_server(id: &str) -> SessionState {
        let mut state = empty_session_state();
        let entry = mcp_server_entry(
            id,
            "file:///mcp.json",
            id,
            None,
            McpServerState::Stopped(McpServerStoppedState {}),
        );
        state.customizations = Some(vec![Customization::McpServer(Box::new(entry))]);
        state
    }

    #[test]
    fn a_stop_request_for_a_known_server_is_a_stop_intent() {
        let state = with_server("s1");
        let stop = |id: &str| {
            StateAction::SessionMcpServerStopRequested(SessionMcpServerStopRequestedAction {
                id: id.to_owned(),
            })
        };
        assert_eq!(
            validate_client_action(&state, &stop("s1")),
            Ok(ClientIntent::Stop("s1".into()))
        );
        assert_eq!(
            validate_client_action(&state, &stop("nope")),
            Err("nope is not a server this host runs".to_owned())
        );
    }
}
