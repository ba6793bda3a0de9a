//! AHP session state held by the host: the `ahp` session reducer is the only
//! thing that changes it, and every change leaves as an `ActionEnvelope`
//! with a gapless `serverSeq`.
//!
//! Implements AHP 1.0 "Actions" (envelopes, `origin`, `rejectionReason`) and
//! the session-channel parts of the MCP guide (seed 000): customizations,
//! `session/mcpServerStateChanged`, client start/stop/toggle requests.

mod customizations;
mod dispatch;
mod store;

pub use customizations::*;
pub use dispatch::{validate_client_action, ClientIntent};
pub use store::{empty_session_state, PublishedTools, SessionRead, SessionStore};
