//! One MCP connection's client: opening it ([`Opener`]: spawn or connect
//! and the handshake of the server's era), the rmcp client handler (server
//! requests and notifications), and the requests callers send on a ready
//! connection ([`Session`]: `tools/call` with progress, tasks and
//! MRTR, paginated lists, the response cache, `subscriptions/listen`,
//! capabilities, the server's identity, the skills listing). It knows no
//! actor: the supervisor decides when to open and close, this module speaks
//! MCP (MCP 2025-11-25 and 2026-07-28) over [`crate::transport`].

pub mod activity;
pub mod cache;
pub mod capabilities;
pub mod client;
pub mod connect;
pub mod eras;
pub mod identity;
pub mod listen;
pub mod log_level;
pub mod mrtr;
mod opener;
pub mod progress;
pub mod request;
mod session;
pub mod skills;
pub mod task;
mod too_large;
pub mod tool_cache;
pub mod tool_call;
mod utilities;

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use opener::{Opener, OpenerParts};
pub use session::{Sending, ServerLive, Session};

use crate::catalogue::ToolFilter;
use crate::config::sandbox::SandboxProfile;
use crate::config::{HttpConfig, OAuthClientSetting, PluginVars, ProtocolSetting, StdioConfig};

/// Where a server lives.
#[derive(Debug, Clone)]
pub enum TransportSpec {
    /// A local process; variables come from its plugin (or the top-level server's root).
    Stdio(StdioConfig, PluginVars),
    /// A remote Streamable HTTP endpoint.
    StreamableHttp(HttpConfig),
}

/// Everything an actor needs to know about its server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Customization id.
    pub id: String,
    /// Transport and its configuration.
    pub transport: TransportSpec,
    /// Spawn/connect + `initialize` budget.
    pub startup_timeout: Duration,
    /// Pre-registered OAuth client for this server (host-side setting).
    pub oauth_client: Option<OAuthClientSetting>,
    /// Which MCP revision to speak (host-side setting).
    pub protocol: ProtocolSetting,
    /// More secret values given with the server (`addServer`'s `secrets`:
    /// an imported entry's secret variable values, wherever they were put).
    pub secret_values: Vec<String>,
    /// The configured tool filter (`includeTools`, `excludeTools`), given to
    /// the catalogue when the server is added (host-side setting).
    pub tool_filter: ToolFilter,
    /// The server's own `tools/call` limits (host-side setting).
    pub call_limits: CallLimits,
    /// How the server's start is shown and waited for (host-side setting).
    pub start: StartPolicy,
    /// The sandbox a stdio server runs in (`sandbox` of `addServer`, a
    /// plugin override or the host default, folded by
    /// `config::sandbox::effective_profile`); `None`: unsandboxed.
    pub sandbox: Option<SandboxProfile>,
}

/// How a server's start is shown and waited for (host-side settings of
/// `addServer` and a plugin's server overrides).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StartPolicy {
    /// `required`: the server's start holds back new messages (the next
    /// turn) until it is `ready` or has failed, so its `starting` state is
    /// published with `blocking: true` (AHP 1.0 `McpServerStartingState`)
    /// until a client backgrounds it
    /// (`session/mcpServerBackgroundRequested`) or the start ends.
    pub required: bool,
    /// `start: "lazy"` (`Some(true)`): the server starts on its first
    /// call, publishing its last known tools from the tool cache
    /// (`tool_cache`) meanwhile, and is stopped after
    /// [`StartPolicy::idle_stop`] without requests; without a usable cache
    /// it starts at once (to list its tools). `None`: the host's default
    /// (`McpHostOptions.start`), set when the server is added
    /// ([`StartPolicy::or_default`]).
    pub lazy: Option<bool>,
    /// The idle time after which a lazy server is stopped (`idleStopMs`);
    /// `None`: `limits.idleStopMs`; zero: never.
    pub idle_stop: Option<Duration>,
}

impl StartPolicy {
    /// Whether the server starts lazily (see [`StartPolicy::lazy`]).
    pub fn is_lazy(&self) -> bool {
        self.lazy == Some(true)
    }

    /// This policy with the host's default start (`lazy`) where it gives none.
    #[must_use]
    pub fn or_default(self, lazy: bool) -> Self {
        Self {
            lazy: Some(self.lazy.unwrap_or(lazy)),
            ..self
        }
    }
}

/// A server's own `tools/call` limits (`callTimeoutMs`, `callMaxTotalMs`,
/// `modelOutputMaxChars`): each applies to a call that gives none of its
/// own (`timeoutMs`, `maxTotalTimeoutMs`, `modelOutputMaxChars`); `None`
/// leaves the host's (`limits.callTimeoutMs`, `limits.callMaxTotalMs`,
/// `limits.modelOutputMaxChars`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallLimits {
    /// Inactivity limit, reset by each progress notification.
    pub timeout: Option<Duration>,
    /// Absolute limit that progress never extends.
    pub max_total: Option<Duration>,
    /// The model-facing output budget of a chat call (characters,
    /// 1 ..= `HARD_MAX_MODEL_OUTPUT_CHARS`; see `crate::chat::budget`).
    pub output_max_chars: Option<usize>,
}

/// The tasks of one server (its actor, its connections' service waiters)
/// and its cancellation (a child of the host's `disposed`).
#[derive(Clone)]
pub struct ServerTasks {
    /// Every task spawned for the server.
    pub tracker: TaskTracker,
    /// Cancelled when the host is disposed.
    pub cancel: CancellationToken,
    /// The log level the app chose for the server (its `ServerLive`'s),
    /// which each connection's requests ask for ([`log_level`]).
    pub log_level: log_level::LogLevelCell,
}

impl ServerSpec {
    /// A spec of server `id` running `transport` with every host-side
    /// setting at its default (tests).
    #[cfg(test)]
    pub(crate) fn of(id: &str, transport: TransportSpec) -> Self {
        Self {
            id: id.to_owned(),
            transport,
            startup_timeout: Duration::from_secs(5),
            oauth_client: None,
            protocol: ProtocolSetting::default(),
            secret_values: Vec::new(),
            tool_filter: ToolFilter::default(),
            call_limits: CallLimits::default(),
            start: StartPolicy::default(),
            sandbox: None,
        }
    }

    /// The values of this server's configuration that are secrets
    /// (`crate::redact`): a stdio server's `env` values; a Streamable HTTP
    /// server's header values (and a
    /// `<scheme> <credentials>` value's credentials), its URL's password,
    /// query (whole, each pair, each value) and fragment; the OAuth
    /// client's secret and private key; every value of `secret_values`.
    pub fn secrets(&self) -> Vec<String> {
        let mut all = crate::redact::with_url_forms(&self.secret_values);
        match &self.transport {
            TransportSpec::StreamableHttp(cfg) => {
                all.extend(crate::redact::url_secrets(&cfg.url));
                for value in cfg.headers.values() {
                    all.extend(crate::redact::header_secrets(value));
                }
            }
            // The stdio place of a token (an imported `${input:…}` or
            // `isSecret` value, a `GITHUB_TOKEN`): a server printing its
            // environment to stderr must not put it in a log.
            TransportSpec::Stdio(cfg, _) => all.extend(cfg.env.values().cloned()),
        }
        if let Some(client) = &self.oauth_client {
            all.extend(client.client_secret.iter().cloned());
            all.extend(client.private_key_pem.iter().cloned());
        }
        all
    }
}
