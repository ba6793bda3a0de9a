//! `mcp.json` (Agent Plugins MCP configuration): the model, two-stage
//! validation, plugin variable expansion and stdio launch resolution.
//!
//! Implements Agent Plugins "MCP runtime" (seed 002): *Validate in two
//! stages*, *Launch stdio servers*, *Connect remote servers*.
//!
//! Data flow: [`parse_mcp_json`] (stage 1 + stage 2) → [`McpJson`] with one
//! [`ServerEntry`] per member of `mcpServers` (valid or not, each with its
//! source [`TextRange`]) → for stdio, [`launch::resolve_stdio`] at each start
//! turns a [`StdioConfig`] into a [`launch::LaunchSpec`].

mod command;
mod headers;
mod host_settings;
pub mod import;
pub mod launch;
mod line_index;
mod model;
mod read;
pub mod sandbox;
mod validate;
mod vars;

pub use headers::{with_provided_headers, HeaderProvider, HeaderReason};
pub use host_settings::{IdpSetting, OAuthClientSetting, OAuthGrant, ProtocolSetting};
pub use model::*;
pub use read::{read_config_file, read_regular_file, ReadBounds};
pub use validate::{
    literal_placeholders_of, parse_mcp_json, validate_entry_value, validate_literal_entry_value,
};
pub use vars::{check_variables, expand, literal_placeholders, PluginVars};
