//! `replaySessionEnvelopes` (binding only, not re-exported by `index.js`):
//! the tests' mirror of the session, built with `ahp`'s own session reducer
//! (see [`crate::session::replay_envelopes`]) instead of a JavaScript copy
//! of it.

use ahp_types::actions::ActionEnvelope;
use ahp_types::state::SessionState;
use napi_derive::napi;

use crate::session::{empty_session_state, replay_envelopes};

/// `replaySessionEnvelopes(channel, envelopesJson, initialJson?)` → the
/// session state JSON after applying every envelope on `channel` without
/// `rejectionReason`, in array order, to `initialJson` (a `SessionState`)
/// or to the host's empty session state.
///
/// # Errors
/// `InvalidArg` naming the JSON that does not parse (`envelopes` /
/// `initial`) and where.
#[napi]
pub fn replay_session_envelopes(
    channel: String,
    envelopes_json: String,
    initial_json: Option<String>,
) -> napi::Result<String> {
    let invalid = |what: &str, e: serde_json::Error| {
        napi::Error::new(napi::Status::InvalidArg, format!("{what}: {e}"))
    };
    let envelopes: Vec<ActionEnvelope> =
        serde_json::from_str(&envelopes_json).map_err(|e| invalid("envelopes", e))?;
    let mut state: SessionState = match initial_json {
        Some(json) => serde_json::from_str(&json).map_err(|e| invalid("initial", e))?,
        None => empty_session_state(),
    };
    replay_envelopes(&mut state, &channel, &envelopes);
    serde_json::to_string(&state).map_err(|e| invalid("state", e))
}
