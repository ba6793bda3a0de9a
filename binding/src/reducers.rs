//! `reduceSession` / `reduceChat` (native, wrapped by `index.js`): the
//! `ahp` crate's session and chat reducers as pure functions for
//! JavaScript, through [`ahp_reducers_json::reduce`] (AHP 1.0 "State model
//! › Reducers").

use ahp_reducers_json::{reduce, Scope};
use napi::{Error, Status};
use napi_derive::napi;

/// Runs one reducer; input that does not parse becomes `InvalidArg` with
/// the message `invalid_argument: state: …` or `invalid_argument: action: …`
/// (`index.js` turns it into a `HostError` with code `invalid_argument`).
fn run(scope: Scope, state_json: &str, action_json: &str) -> napi::Result<String> {
    reduce(scope, state_json, action_json)
        .map_err(|e| Error::new(Status::InvalidArg, format!("invalid_argument: {e}")))
}

/// `reduceSession(stateJson, actionJson)` → `{"state", "outcome", "error"?}`
/// JSON: `actionJson` (a `StateAction`) applied to `stateJson` (a
/// `SessionState`) by `ahp::reducers::apply_action_to_session`.
///
/// # Errors
/// `InvalidArg` `invalid_argument: state: …` / `invalid_argument: action: …`.
#[napi(catch_unwind)]
pub fn reduce_session(state_json: String, action_json: String) -> napi::Result<String> {
    run(Scope::Session, &state_json, &action_json)
}

/// `reduceChat(stateJson, actionJson)` → `{"state", "outcome", "error"?}`
/// JSON: `actionJson` (a `StateAction`) applied to `stateJson` (a
/// `ChatState`) by `ahp::reducers::apply_action_to_chat`.
///
/// # Errors
/// `InvalidArg` `invalid_argument: state: …` / `invalid_argument: action: …`.
#[napi(catch_unwind)]
pub fn reduce_chat(state_json: String, action_json: String) -> napi::Result<String> {
    run(Scope::Chat, &state_json, &action_json)
}
