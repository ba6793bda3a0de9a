//! The settings a host is made with ([`HostConfig`], [`OAuthHostOptions`])
//! and what the app hands it besides events ([`HostDeps`]).

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::Implementation;

use crate::auth::store::SecretStore;
use crate::config::launch::EnvPolicy;
use crate::limits::Limits;
use crate::policy::{ServerPolicy, TrustAsker};
use crate::requests::RequestHandler;

/// A host's settings, with every default resolved and every bound clamped
/// (the binding builds it from the JS options; `Default`: the settings of
/// `new McpHost({})`).
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Session channel URI stamped on every envelope.
    pub session: String,
    /// `clientInfo` sent in `initialize` (MCP `Implementation`).
    pub client_info: Implementation,
    /// Directory under which one `PLUGIN_DATA` directory per plugin is created.
    pub data_dir: PathBuf,
    /// Timeouts, sizes and restart policy, inside their hard caps.
    pub limits: Limits,
    /// Host-wide OAuth settings of host-run sign-ins.
    pub oauth: OAuthHostOptions,
    /// How stdio servers' base environment is filtered.
    pub env_policy: EnvPolicy,
    /// Emit `session/serverToolsChanged` whenever the model catalogue changes.
    pub publish_server_tools: bool,
    /// Declare elicitation, form and URL mode (SEP-1036), without an
    /// `elicitation` handler (AHP clients answer the elicitations of chat
    /// tool calls).
    pub chat_elicitation: bool,
    /// The AHP client declared `mcpApps`: serve MCP Apps (see `crate::apps`).
    pub mcp_apps: bool,
    /// Proxy and extra trusted CAs of every HTTP client (see [`crate::NetworkOptions`]).
    pub network: crate::NetworkOptions,
    /// The start of a server that does not say (`start: "lazy"`, issue 29):
    /// lazy ([`crate::mcp::StartPolicy::lazy`]) when `true`.
    pub lazy_start: bool,
    /// The app's allow and deny rules for servers (issue 32; default: no
    /// rule, every server may start). See [`ServerPolicy`] and
    /// `Host::set_policy`.
    pub policy: ServerPolicy,
    /// The sandbox of every stdio server that does not say otherwise
    /// (issue 32; `None`: unsandboxed unless a server asks for one).
    pub sandbox: Option<crate::config::sandbox::SandboxOptions>,
}

/// Host-wide settings of host-run OAuth sign-ins (`authorize`).
#[derive(Debug, Clone, Default)]
pub struct OAuthHostOptions {
    /// HTTPS URL of this app's OAuth Client ID Metadata Document.
    pub client_metadata_url: Option<String>,
    /// Port of the loopback redirect listener; `None`: random.
    pub redirect_port: Option<u16>,
}

/// What a host hands to the app besides events: handlers of
/// server-initiated requests, the credential store and the roots.
#[derive(Default)]
pub struct HostDeps {
    /// Handles `elicitation/create`, `sampling/createMessage`, `roots/list`;
    /// only the kinds it handles are declared as client capabilities.
    pub requests: Option<Arc<dyn RequestHandler>>,
    /// Where OAuth credentials are kept; default: memory (see
    /// `crate::auth::store` for the key format).
    pub secrets: Option<Arc<dyn SecretStore>>,
    /// The host's roots from the start (JS option `roots`): `Some` declares
    /// the `roots` capability even without a `roots` handler (see
    /// `Host::set_roots`).
    pub roots: Option<Vec<crate::requests::roots::Root>>,
    /// The app's provider of dynamic headers for Streamable HTTP servers
    /// (JS option `headers`), asked at each connect and once after a 401.
    pub header_provider: Option<Arc<dyn crate::config::HeaderProvider>>,
    /// The app's `trust` callback (issue 32), asked before the first start
    /// of each server configuration it has not decided about; `None`:
    /// every configuration is trusted.
    pub trust: Option<Arc<dyn TrustAsker>>,
}
