//! OAuth glue around rmcp's `auth` feature: turning a 401/403 challenge into
//! AHP's `McpServerAuthRequiredState`, and checking tokens pushed with the
//! AHP `authenticate` command.
//!
//! Implements MCP 2025-11-25 "Authorization" (RFC 9728 protected resource
//! metadata discovery) and AHP 1.0 "Authentication" (`authRequired`,
//! `authenticate`). Tokens and client secrets never enter state, logs or
//! error messages.

pub mod callback;
mod challenge;
mod device;
pub mod dpop;
mod echo;
pub mod flow;
pub mod grant;
mod jwt_bearer;
pub mod keychain;
mod oauth_http;
pub mod redirect;
mod resource_metadata;
mod setup;
pub mod step_up;
pub mod store;

pub use challenge::{AuthChallenge, ChallengeStatus};
pub use resource_metadata::{
    discover, legacy_metadata, refused_authorization_servers, requirement,
};
pub use setup::configured_resource;
