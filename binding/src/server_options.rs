//! The per-server host-side options of `addServer` and a plugin's server
//! overrides (`addPlugin`'s `servers`): tool filter and call limits,
//! output budget, start policy (`required`, `start`, `idleStopMs`), OAuth
//! client and protocol; converted into the core's [`ServerOverrides`] and
//! [`AddServer`].

use std::path::PathBuf;
use std::time::Duration;

use ahp_mcp_host::config::{OAuthClientSetting, ProtocolSetting};
use ahp_mcp_host::error::HostError;
use ahp_mcp_host::host::{AddServer, CallLimits, ServerOverrides, StartPolicy, ToolFilter};
use ahp_mcp_host::limits::MAX_TIMEOUT_MS;
use serde::Deserialize;
use serde_json::Value;

use crate::options::JsOAuthClient;

/// Per-server host-side settings (not part of `mcp.json`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsServerOverrides {
    /// Startup timeout (ms): spawn/connect plus `initialize`. Default `limits.startupTimeoutMs`.
    #[serde(default)]
    startup_timeout_ms: Option<u64>,
    /// Pre-registered OAuth client for this server.
    #[serde(default)]
    oauth: Option<JsOAuthClient>,
    /// MCP revision to speak: `auto` (default), `2026-07-28` or `legacy`.
    #[serde(default)]
    protocol: ProtocolSetting,
    /// Only the tools whose original name matches one of these (exact
    /// names, `*` / `?` globs); default: every tool.
    #[serde(default)]
    include_tools: Option<Vec<String>>,
    /// Not the tools whose original name matches one of these.
    #[serde(default)]
    exclude_tools: Vec<String>,
    /// Inactivity limit (ms) of a call that gives no `timeoutMs`.
    #[serde(default)]
    call_timeout_ms: Option<u64>,
    /// Absolute limit (ms) of a call that gives no `maxTotalTimeoutMs`.
    #[serde(default)]
    call_max_total_ms: Option<u64>,
    /// The start holds back new messages: `starting` has `blocking: true`
    /// until the server is `ready`, fails or a client backgrounds it.
    #[serde(default)]
    required: bool,
    /// `eager` (start at once) or `lazy` (on the first call); default the host's.
    #[serde(default)]
    start: Option<JsStartMode>,
    /// A lazy server's idle time before it is stopped (ms; `0`: never).
    #[serde(default)]
    idle_stop_ms: Option<u64>,
    /// Model-facing output budget (characters) of a chat call that gives
    /// no `modelOutputMaxChars`.
    #[serde(default)]
    model_output_max_chars: Option<u64>,
    /// The server's sandbox: `true`, `false` or `SandboxOptions`
    /// (`crate::sandbox`); default the host's.
    #[serde(default)]
    sandbox: Option<Value>,
}

impl TryFrom<JsServerOverrides> for ServerOverrides {
    type Error = HostError;

    /// # Errors
    /// Those of [`tool_settings`].
    fn try_from(js: JsServerOverrides) -> Result<Self, HostError> {
        let (tool_filter, call_limits) = tool_settings(
            (js.include_tools.as_deref(), &js.exclude_tools),
            (js.call_timeout_ms, js.call_max_total_ms),
            js.model_output_max_chars,
        )?;
        Ok(Self {
            startup_timeout_ms: js.startup_timeout_ms,
            oauth: js.oauth.map(OAuthClientSetting::try_from).transpose()?,
            protocol: js.protocol,
            tool_filter,
            call_limits,
            start: start_policy(js.required, js.start, js.idle_stop_ms),
            sandbox: crate::sandbox::server_sandbox(js.sandbox)?,
        })
    }
}

/// The tool filter of `includeTools` and `excludeTools`, and the
/// server's own `tools/call` limits of `callTimeoutMs`, `callMaxTotalMs`
/// and `modelOutputMaxChars` (`addServer`, a plugin's server overrides).
///
/// # Errors
/// `invalid_argument` naming the list and the pattern (`ToolFilter::new`).
fn tool_settings(
    (include, exclude): (Option<&[String]>, &[String]),
    (timeout_ms, max_total_ms): (Option<u64>, Option<u64>),
    output_chars: Option<u64>,
) -> Result<(ToolFilter, CallLimits), HostError> {
    let filter = ToolFilter::new(include, exclude)?;
    let limits = CallLimits::from_ms(timeout_ms, max_total_ms).with_output_chars(output_chars);
    Ok((filter, limits))
}

/// When a server starts (`ServerStartOptions`: `start`, `idleStopMs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum JsStartMode {
    /// At once.
    Eager,
    /// On its first call, from the tool cache meanwhile.
    Lazy,
}

/// The [`StartPolicy`] of `required`, `start` and `idleStopMs` (clamped to
/// 24 h; `0`: never).
fn start_policy(required: bool, start: Option<JsStartMode>, idle_ms: Option<u64>) -> StartPolicy {
    StartPolicy {
        required,
        lazy: start.map(|m| m == JsStartMode::Lazy),
        idle_stop: idle_ms.map(|ms| Duration::from_millis(ms.min(MAX_TIMEOUT_MS))),
    }
}

/// `addServer` options: a top-level server outside any plugin; converts
/// into [`AddServer`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsAddServer {
    /// Name and customization id.
    name: String,
    /// One `mcp.json` server entry (`{type: "stdio", command, …}` or `{type: "streamable-http", url, …}`).
    config: Value,
    /// Root for `./` commands, `${PLUGIN_ROOT}` and the default `cwd`; default: the host's cwd.
    #[serde(default)]
    root: Option<PathBuf>,
    /// Customization `uri`; default: the URL (HTTP) or the root's `file://` URI (stdio).
    #[serde(default)]
    uri: Option<String>,
    /// Startup timeout (ms).
    #[serde(default)]
    startup_timeout_ms: Option<u64>,
    /// Pre-registered OAuth client for this server.
    #[serde(default)]
    oauth: Option<JsOAuthClient>,
    /// MCP revision to speak: `auto` (default), `2026-07-28` or `legacy`.
    #[serde(default)]
    protocol: ProtocolSetting,
    /// `config`'s values are literal text (an imported entry).
    #[serde(default)]
    literal: bool,
    /// More values to keep secret (redacted everywhere).
    #[serde(default)]
    secrets: Vec<String>,
    /// Only the tools whose original name matches one of these (exact
    /// names, `*` / `?` globs); default: every tool.
    #[serde(default)]
    include_tools: Option<Vec<String>>,
    /// Not the tools whose original name matches one of these.
    #[serde(default)]
    exclude_tools: Vec<String>,
    /// Inactivity limit (ms) of a call that gives no `timeoutMs`.
    #[serde(default)]
    call_timeout_ms: Option<u64>,
    /// Absolute limit (ms) of a call that gives no `maxTotalTimeoutMs`.
    #[serde(default)]
    call_max_total_ms: Option<u64>,
    /// The start holds back new messages: `starting` has `blocking: true`
    /// until the server is `ready`, fails or a client backgrounds it.
    #[serde(default)]
    required: bool,
    /// `eager` (start at once) or `lazy` (on the first call); default the host's.
    #[serde(default)]
    start: Option<JsStartMode>,
    /// A lazy server's idle time before it is stopped (ms; `0`: never).
    #[serde(default)]
    idle_stop_ms: Option<u64>,
    /// Model-facing output budget (characters) of a chat call that gives
    /// no `modelOutputMaxChars`.
    #[serde(default)]
    model_output_max_chars: Option<u64>,
    /// The server's sandbox: `true`, `false` or `SandboxOptions`
    /// (`crate::sandbox`); default the host's.
    #[serde(default)]
    sandbox: Option<Value>,
}

impl TryFrom<JsAddServer> for AddServer {
    type Error = HostError;

    /// # Errors
    /// Those of [`tool_settings`], the message starting with `options.`.
    fn try_from(js: JsAddServer) -> Result<Self, HostError> {
        let (tool_filter, call_limits) = tool_settings(
            (js.include_tools.as_deref(), &js.exclude_tools),
            (js.call_timeout_ms, js.call_max_total_ms),
            js.model_output_max_chars,
        )
        .map_err(|mut e| {
            e.message = format!("options.{}", e.message);
            e
        })?;
        Ok(Self {
            name: js.name,
            config: js.config,
            root: js.root,
            uri: js.uri,
            startup_timeout_ms: js.startup_timeout_ms,
            oauth: js
                .oauth
                .map(OAuthClientSetting::try_from)
                .transpose()
                .map_err(|mut e| {
                    e.message = format!("options.{}", e.message);
                    e
                })?,
            protocol: js.protocol,
            literal: js.literal,
            secrets: js.secrets,
            tool_filter,
            call_limits,
            start: start_policy(js.required, js.start, js.idle_stop_ms),
            sandbox: crate::sandbox::server_sandbox(js.sandbox).map_err(|mut e| {
                e.message = format!("options.{}", e.message);
                e
            })?,
        })
    }
}
