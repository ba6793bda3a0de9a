//! The `ahp` crate's reducers (`ahp::reducers::apply_action_to_session`,
//! `apply_action_to_chat`) behind one JSON-in, JSON-out call, so JavaScript
//! applies AHP actions with the official reducers instead of a copy of
//! them: through the napi addon, or compiled to WebAssembly where no addon
//! can load (a webview).
//!
//! [`reduce`] takes a state and an action as JSON text and returns
//! `{"state": <new state>, "outcome": "applied" | "noOp" | "outOfScope" |
//! "invalid", "error"?: <message>}` (AHP 1.0 "State model › Reducers";
//! `outcome` is the crate's `ReduceOutcome`; with `invalid` the state is
//! unchanged and `error` says why).

use ahp::reducers::{apply_action_to_chat, apply_action_to_session, ReduceOutcome};
use ahp_types::actions::StateAction;
use ahp_types::state::{ChatState, SessionState};
use serde_json::{json, Value};

mod round_trip;

/// Which reducer: the session channel's or a chat channel's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `ahp-session:` channels (`SessionState`).
    Session,
    /// `ahp-chat:` channels (`ChatState`).
    Chat,
}

/// Why [`reduce`] could not run: which input did not parse, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Applies `action_json` (a `StateAction`) to `state_json` (a
/// `SessionState` or `ChatState`, per `scope`) and returns the result JSON
/// described in the crate doc.
///
/// # Errors
/// [`InputError`] naming `state` or `action` when it is not valid JSON of
/// its type (serde's message, with line and column).
pub fn reduce(scope: Scope, state_json: &str, action_json: &str) -> Result<String, InputError> {
    let action: StateAction =
        serde_json::from_str(action_json).map_err(|e| InputError(format!("action: {e}")))?;
    let parse_state = |e: serde_json::Error| InputError(format!("state: {e}"));
    let (state, outcome) = match scope {
        Scope::Session => {
            let mut state: SessionState = serde_json::from_str(state_json).map_err(parse_state)?;
            let outcome = apply_action_to_session(&mut state, &action);
            (serde_json::to_value(state), outcome)
        }
        Scope::Chat => {
            let mut state: ChatState = serde_json::from_str(state_json).map_err(parse_state)?;
            round_trip::restore_auth_required(&mut state);
            let outcome = apply_action_to_chat(&mut state, &action);
            (serde_json::to_value(state), outcome)
        }
    };
    let state = state.map_err(|e| InputError(format!("state: {e}")))?;
    let mut answer = json!({ "state": state, "outcome": outcome_name(&outcome) });
    if let ReduceOutcome::Invalid(e) = &outcome {
        answer["error"] = Value::String(e.to_string());
    }
    Ok(answer.to_string())
}

/// The JS name of an outcome.
fn outcome_name(outcome: &ReduceOutcome) -> &'static str {
    match outcome {
        ReduceOutcome::Applied => "applied",
        ReduceOutcome::NoOp => "noOp",
        ReduceOutcome::OutOfScope => "outOfScope",
        ReduceOutcome::Invalid(_) => "invalid",
    }
}

// The WebAssembly ABI of `reduce` (extern "C" exports for lib/reducers-wasm.js).
#[cfg(target_arch = "wasm32")]
pub mod wasm;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_action_is_applied_another_is_out_of_scope_and_bad_input_is_named() {
        let state = json!({"provider": "mcp", "title": "", "status": 1, "lifecycle": "ready",
                           "activeClients": [], "chats": []})
        .to_string();
        let action = json!({"type": "session/titleChanged", "title": "T"}).to_string();
        let out: Value =
            serde_json::from_str(&reduce(Scope::Session, &state, &action).unwrap()).unwrap();
        assert_eq!(out["outcome"], "applied");
        assert_eq!(out["state"]["title"], "T");
        let bad = reduce(Scope::Session, "{}", &action).unwrap_err();
        assert!(bad.0.starts_with("state: "), "{bad}");
        let bad = reduce(Scope::Session, &state, "not json").unwrap_err();
        assert!(bad.0.starts_with("action: "), "{bad}");
        // An action of another channel's reducer (or of a type this version
        // does not know) leaves the state alone.
        let chat = json!({"type": "chat/titleChanged", "title": "C"}).to_string();
        let out: Value =
            serde_json::from_str(&reduce(Scope::Session, &state, &chat).unwrap()).unwrap();
        assert_eq!(out["outcome"], "outOfScope");
    }
}
