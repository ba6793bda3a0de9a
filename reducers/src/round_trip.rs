//! Restores the one chat state shape that does not survive a JSON round trip
//! in `ahp-types` 1.0.0: an `auth-required` tool call.
//!
//! `ToolCallState` is internally tagged by `status`, and
//! `ToolCallAuthRequiredState` also has a required `status` field. The tag
//! consumes the key, the struct then misses it, and the untagged `Unknown`
//! variant takes the call, so every later tool-call action is a no-op
//! (fixture 243 through JSON shows it). Here such an `Unknown` call is read
//! as the struct itself, where `status` is present.

use ahp_types::state::{ChatState, ResponsePart, ToolCallAuthRequiredState, ToolCallState};

/// Turns every `Unknown` tool call with `status: "auth-required"` in the
/// chat's turns and active turn back into `ToolCallState::AuthRequired`.
pub fn restore_auth_required(state: &mut ChatState) {
    let active = state.active_turn.iter_mut().map(|t| &mut t.response_parts);
    let turns = state.turns.iter_mut().map(|t| &mut t.response_parts);
    for parts in active.chain(turns) {
        for part in parts.iter_mut() {
            let ResponsePart::ToolCall(call) = part else {
                continue;
            };
            let ToolCallState::Unknown(raw) = &call.tool_call else {
                continue;
            };
            if raw.get("status").and_then(|s| s.as_str()) != Some("auth-required") {
                continue;
            }
            if let Ok(s) = serde_json::from_value::<ToolCallAuthRequiredState>(raw.clone()) {
                call.tool_call = ToolCallState::AuthRequired(Box::new(s));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{reduce, Scope};
    use serde_json::{json, Value};

    /// Fixture 243 through JSON between every action: the auth-required call
    /// is found again by `chat/toolCallAuthResolved` and completes.
    #[test]
    fn an_auth_required_tool_call_survives_the_json_between_actions() {
        let fixture: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/ahp/243-toolcallauthrequired-full-lifecycle-running-authrequired-running-completed.json"
        ))
        .unwrap();
        let mut state = fixture["initial"].to_string();
        let mut outcomes = Vec::new();
        for action in fixture["actions"].as_array().unwrap() {
            let out: Value =
                serde_json::from_str(&reduce(Scope::Chat, &state, &action.to_string()).unwrap())
                    .unwrap();
            outcomes.push(out["outcome"].clone());
            state = out["state"].to_string();
        }
        assert_eq!(
            Value::Array(outcomes),
            json!(["applied", "applied", "applied", "applied", "applied"])
        );
        let state: Value = serde_json::from_str(&state).unwrap();
        let call = &state["activeTurn"]["responseParts"][0]["toolCall"];
        assert_eq!(call["status"], "completed", "{call}");
    }
}
