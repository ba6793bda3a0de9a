//! [`Opener`]: what opening an MCP connection needs, and nothing else. The
//! supervisor's actor asks it for a connection (`Opener::open`, in
//! [`super::connect`]); it holds
//! no lock of its own (the era memory, the process registry and the
//! publisher lock their own state).

use std::ffi::OsString;
use std::sync::Arc;

use rmcp::model::ClientConfig;

use super::eras::EraMemory;
use super::tool_cache::ToolCache;
use crate::auth::dpop::DpopKeys;
use crate::config::launch::EnvPolicy;
use crate::config::HeaderProvider;
use crate::events::HostEvent;
use crate::limits::Limits;
use crate::network::Network;
use crate::publisher::SessionPublisher;
use crate::requests::RequestHandler;
use crate::transport::process::ProcessRegistry;

/// What opening a connection needs: the `initialize` client info, the
/// limits, the app's request handlers, the HTTP network and DPoP keys, the
/// era memory, the process registry and base environment of stdio servers,
/// and the publisher the connection's events go through.
pub struct Opener {
    client_info: ClientConfig,
    limits: Limits,
    publisher: Arc<SessionPublisher>,
    requests: Option<Arc<dyn RequestHandler>>,
    header_provider: Option<Arc<dyn HeaderProvider>>,
    network: Arc<Network>,
    dpop_keys: Arc<DpopKeys>,
    eras: EraMemory,
    tool_cache: ToolCache,
    processes: Arc<ProcessRegistry>,
    base_env: Vec<(OsString, OsString)>,
    env_policy: EnvPolicy,
}

/// The parts an [`Opener`] is made of (see its accessors for each).
pub struct OpenerParts {
    /// `clientInfo` and capabilities sent in `initialize`.
    pub client_info: ClientConfig,
    /// Timeouts, bounds and restart policy (already clamped).
    pub limits: Limits,
    /// Where the session's actions and the logs go.
    pub publisher: Arc<SessionPublisher>,
    /// The app's handlers for server-initiated requests.
    pub requests: Option<Arc<dyn RequestHandler>>,
    /// The app's provider of dynamic headers for Streamable HTTP servers.
    pub header_provider: Option<Arc<dyn HeaderProvider>>,
    /// Proxy route and trust roots of every HTTP client of this host.
    pub network: Arc<Network>,
    /// Which configurations spoke the 2025 era last time.
    pub eras: EraMemory,
    /// The last tool listings of lazy servers.
    pub tool_cache: ToolCache,
    /// Base environment for stdio servers (see [`EnvPolicy`]).
    pub base_env: Vec<(OsString, OsString)>,
    /// How the base environment is filtered.
    pub env_policy: EnvPolicy,
}

impl Opener {
    /// An opener of `parts`, with a new process registry and DPoP key set.
    pub fn new(parts: OpenerParts) -> Self {
        Self {
            client_info: parts.client_info,
            limits: parts.limits,
            publisher: parts.publisher,
            requests: parts.requests,
            header_provider: parts.header_provider,
            network: parts.network,
            dpop_keys: Arc::default(),
            eras: parts.eras,
            tool_cache: parts.tool_cache,
            processes: Arc::default(),
            base_env: parts.base_env,
            env_policy: parts.env_policy,
        }
    }

    /// `clientInfo` and capabilities sent in `initialize`.
    pub fn client_info(&self) -> &ClientConfig {
        &self.client_info
    }

    /// Timeouts, bounds and restart policy.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The session publisher.
    pub fn publisher(&self) -> &Arc<SessionPublisher> {
        &self.publisher
    }

    /// The app's handlers for server-initiated requests.
    pub fn requests(&self) -> Option<&Arc<dyn RequestHandler>> {
        self.requests.as_ref()
    }

    /// The app's provider of dynamic headers, if it gave one.
    pub fn header_provider(&self) -> Option<&Arc<dyn HeaderProvider>> {
        self.header_provider.as_ref()
    }

    /// Proxy route and trust roots of every HTTP client of this host.
    pub fn network(&self) -> &Arc<Network> {
        &self.network
    }

    /// This host's DPoP keys, one per MCP server URL (RFC 9449; secrets).
    pub fn dpop_keys(&self) -> &Arc<DpopKeys> {
        &self.dpop_keys
    }

    /// Which configurations spoke the 2025 era last time.
    pub fn eras(&self) -> &EraMemory {
        &self.eras
    }

    /// The last tool listings of lazy servers (`dataDir/.tool-cache`).
    pub fn tool_cache(&self) -> &ToolCache {
        &self.tool_cache
    }

    /// The tool cache key of `spec` ([`ToolCache::key`]) with the client
    /// capabilities this host declares.
    pub fn tool_cache_key(&self, spec: &super::ServerSpec) -> String {
        let capabilities = serde_json::to_value(&self.client_info.capabilities);
        ToolCache::key(spec, &capabilities.unwrap_or_default())
    }

    /// Process groups owned by this host (for synchronous kill).
    pub fn processes(&self) -> &Arc<ProcessRegistry> {
        &self.processes
    }

    /// Base environment for stdio servers, and how it is filtered.
    pub fn base_env(&self) -> (&[(OsString, OsString)], EnvPolicy) {
        (&self.base_env, self.env_policy)
    }

    /// Sends a host event (a log record, …) to the sink.
    pub fn log(&self, event: HostEvent) {
        self.publisher.log(event);
    }
}
