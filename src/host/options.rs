//! The typed parameters of the host's commands (`addPlugin`, `addServer`,
//! `authenticate`), the defaults of a host's settings ([`HostConfig`]'s
//! `Default`: what `new McpHost({})` gets) and of a sign-in, the clamping
//! of timeouts, and the wording of argument errors ([`field_error`]).
//!
//! The JS shapes (camelCase JSON, `deny_unknown_fields`) are the binding
//! crate's `Js*` types (`binding/src/options.rs`), converted into these by
//! `From` / `TryFrom`; the core never parses JS-shaped JSON. Rules shared by
//! every caller live here or beside their type: `callTool`'s "all three of
//! `chat`, `turnId`, `toolCallId` or none" ([`ChatCall::from_parts`]), a
//! tool named by catalogue name or by server and original name
//! ([`ToolRef::named`]), every timeout's clamping ([`clamped_timeout`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use ahp_types::state::CustomizationLoadState;
use rmcp::model::Implementation;
use serde::Serialize;
use serde_json::Value;

use super::auth::Authorize;
use super::tools::{ChatCall, ToolRef};
use super::{HostConfig, OAuthHostOptions};
use crate::auth::flow::DEFAULT_SIGN_IN_TIMEOUT;
use crate::catalogue::ToolFilter;
use crate::config::launch::EnvPolicy;
use crate::config::sandbox::SandboxSetting;
use crate::config::{OAuthClientSetting, ProtocolSetting};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{Limits, MAX_TIMEOUT_MS};
use crate::mcp::{CallLimits, StartPolicy};

/// A timeout option in ms, clamped to 1 ms ..= 24 h ([`MAX_TIMEOUT_MS`]),
/// like every configurable timeout.
pub fn clamped_timeout(ms: u64) -> Duration {
    Duration::from_millis(ms.clamp(1, MAX_TIMEOUT_MS))
}

/// The session channel URI of a host without a `session` option.
pub const DEFAULT_SESSION: &str = "ahp-session:/mcp-host";

/// The `clientInfo` of `initialize` without a `clientInfo` option:
/// `{name: "ahp-mcp-host", version: <crate version>}`.
pub fn default_client_info() -> Implementation {
    let mut info = Implementation::default();
    info.name = "ahp-mcp-host".to_owned();
    info.version = env!("CARGO_PKG_VERSION").to_owned();
    info.title = None;
    info
}

impl Default for HostConfig {
    /// The settings of `new McpHost({})`: session [`DEFAULT_SESSION`],
    /// [`default_client_info`], the [`default_data_dir`], default limits,
    /// the inherited environment (the JS default), the model catalogue
    /// published, no chat elicitation, no MCP Apps, no proxy or extra CAs,
    /// servers started at once (eager).
    fn default() -> Self {
        Self {
            session: DEFAULT_SESSION.to_owned(),
            client_info: default_client_info(),
            data_dir: default_data_dir(),
            limits: Limits::default(),
            oauth: OAuthHostOptions::default(),
            env_policy: EnvPolicy::Inherit,
            publish_server_tools: true,
            chat_elicitation: false,
            mcp_apps: false,
            network: crate::NetworkOptions::default(),
            lazy_start: false,
            policy: Default::default(),
            sandbox: None,
        }
    }
}

impl Authorize {
    /// The time a sign-in allows: `timeout_ms` clamped like every timeout,
    /// else 300 000 ms (5 min).
    pub fn timeout_of(timeout_ms: Option<u64>) -> Duration {
        timeout_ms.map_or(DEFAULT_SIGN_IN_TIMEOUT, clamped_timeout)
    }
}

impl ChatCall {
    /// The AHP tool call of a `callTool` from its three optional parts:
    /// all three (checked by [`ChatCall::new`]) or none.
    ///
    /// # Errors
    /// `invalid_argument` when only some are given, or one is empty.
    pub fn from_parts(
        chat: Option<String>,
        turn_id: Option<String>,
        tool_call_id: Option<String>,
    ) -> HostResult<Option<Self>> {
        match (chat, turn_id, tool_call_id) {
            (Some(chat), Some(turn_id), Some(tool_call_id)) => {
                Self::new(chat, turn_id, tool_call_id).map(Some)
            }
            (None, None, None) => Ok(None),
            _ => Err(HostError::new(
                ErrorCode::InvalidArgument,
                "chat, turnId and toolCallId go together: give all three or none",
            )),
        }
    }
}

impl ToolRef {
    /// A tool named by its catalogue `name` (no `server_id`), or by
    /// `server_id` plus the server's original tool name.
    pub fn named(server_id: Option<String>, name: String) -> Self {
        match server_id {
            Some(server_id) => Self::Original {
                server_id,
                tool_name: name,
            },
            None => Self::Catalogue(name),
        }
    }
}

/// The folder of the default `dataDir` inside the per-user data directory.
const DATA_DIR_NAME: &str = "ahp-mcp-host";

/// The default `dataDir`: `ahp-mcp-host` in the per-user application data
/// directory (`dirs::data_local_dir`): Linux `$XDG_DATA_HOME` (when
/// absolute), else `~/.local/share`; macOS `~/Library/Application Support`;
/// Windows `%LOCALAPPDATA%`. Only when no home directory is known:
/// `<os temp dir>/ahp-mcp-host-data` (see `data_dir_warning`). Created
/// (mode `0700` on Unix) when the first plugin data directory is.
pub fn default_data_dir() -> PathBuf {
    dirs::data_local_dir().map_or_else(temp_data_dir, |dir| dir.join(DATA_DIR_NAME))
}

fn temp_data_dir() -> PathBuf {
    std::env::temp_dir().join("ahp-mcp-host-data")
}

/// The `warn` text when `data_dir` is the temp fallback of
/// [`default_data_dir`] (no home directory known): data there may be
/// cleaned with the temp folder.
pub fn data_dir_warning(data_dir: &std::path::Path) -> Option<String> {
    (dirs::data_local_dir().is_none() && data_dir == temp_data_dir()).then(|| {
        format!(
            "no home directory is known: plugin data goes to {} (the temp folder; give the \
             dataDir option to keep it across restarts)",
            data_dir.display()
        )
    })
}

/// The message of an argument that does not parse: `<what><path>: <inner>`,
/// `what` the parameter (`options`), `path` serde_path_to_error's field path
/// (`.` for the value itself), in JS notation (`options.limits.x`,
/// `roots[0]`): an unknown field is added to the path it was found in; a
/// message that already starts with the field's name (`proxy: …`,
/// `caCertificates[0]: …`) is not named twice.
pub fn field_error(what: &str, path: &str, inner: &str) -> String {
    let mut full = match path {
        "." => what.to_owned(),
        p if p.starts_with('[') => format!("{what}{p}"),
        p => format!("{what}.{p}"),
    };
    if let Some(field) = inner
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(field, _)| field)
    {
        let last = path.rsplit('.').next().unwrap_or_default();
        if last != field {
            full = format!("{full}.{field}");
        }
        return format!("{full}: {inner}");
    }
    let last = path.rsplit('.').next().unwrap_or_default();
    let named = !last.is_empty()
        && inner
            .strip_prefix(last)
            .is_some_and(|rest| rest.starts_with(':') || rest.starts_with('['));
    if named && path != "." {
        let parent = &full[..full.len() - last.len()];
        return format!("{parent}{inner}");
    }
    format!("{full}: {inner}")
}

/// `addPlugin` parameters (JS `AddPluginOptions`).
#[derive(Debug, Clone, Default)]
pub struct AddPlugin {
    /// Plugin root directory; `<root>/mcp.json` is read.
    pub root: PathBuf,
    /// Customization `uri`; default: the root's `file://` URI.
    pub uri: Option<String>,
    /// Display name and customization id; default: the root's folder name.
    pub name: Option<String>,
    /// Startup timeout (ms) for every server of this plugin.
    pub startup_timeout_ms: Option<u64>,
    /// Per-server overrides, keyed by the server's name in `mcpServers`.
    pub servers: HashMap<String, ServerOverrides>,
}

impl AddPlugin {
    /// The plugin at `root`, every other parameter at its default.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            ..Self::default()
        }
    }
}

/// Per-server host-side settings (not part of `mcp.json`).
#[derive(Debug, Clone, Default)]
pub struct ServerOverrides {
    /// Startup timeout (ms): spawn/connect plus `initialize`. Default `limits.startupTimeoutMs`.
    pub startup_timeout_ms: Option<u64>,
    /// Pre-registered OAuth client for this server.
    pub oauth: Option<OAuthClientSetting>,
    /// MCP revision to speak: `auto` (default), `2026-07-28` or `legacy`.
    pub protocol: ProtocolSetting,
    /// Which tools the model is offered and `callTool` accepts.
    pub tool_filter: ToolFilter,
    /// The server's tool-call limits, between a call's own and the host's.
    pub call_limits: CallLimits,
    /// How the server's start is shown and waited for (`required`).
    pub start: StartPolicy,
    /// Its sandbox (`sandbox`): the host's by default.
    pub sandbox: SandboxSetting,
}

impl CallLimits {
    /// The limits of `callTimeoutMs` and `callMaxTotalMs` (ms), clamped to
    /// 1 ms ..= 24 h like every timeout ([`clamped_timeout`]); no output
    /// budget of its own.
    pub fn from_ms(timeout_ms: Option<u64>, max_total_ms: Option<u64>) -> Self {
        Self {
            timeout: timeout_ms.map(clamped_timeout),
            max_total: max_total_ms.map(clamped_timeout),
            output_max_chars: None,
        }
    }

    /// These limits with the model-facing output budget `modelOutputMaxChars`
    /// (characters), clamped to 1 ..= `HARD_MAX_MODEL_OUTPUT_CHARS`
    /// ([`crate::limits::clamped_output_chars`]).
    pub fn with_output_chars(self, chars: Option<u64>) -> Self {
        Self {
            output_max_chars: chars.map(crate::limits::clamped_output_chars),
            ..self
        }
    }
}

/// `addServer` parameters: a top-level server outside any plugin.
#[derive(Debug, Clone)]
pub struct AddServer {
    /// Name and customization id.
    pub name: String,
    /// One `mcp.json` server entry (`{type: "stdio", command, …}` or `{type: "streamable-http", url, …}`).
    pub config: Value,
    /// Root for `./` commands, `${PLUGIN_ROOT}` and the default `cwd`; default: the host's cwd.
    pub root: Option<PathBuf>,
    /// Customization `uri`; default: the URL (HTTP) or the root's `file://` URI (stdio).
    pub uri: Option<String>,
    /// Startup timeout (ms).
    pub startup_timeout_ms: Option<u64>,
    /// Pre-registered OAuth client for this server.
    pub oauth: Option<OAuthClientSetting>,
    /// MCP revision to speak: `auto` (default), `2026-07-28` or `legacy`.
    pub protocol: ProtocolSetting,
    /// `config`'s values are literal text (an imported entry, its variables
    /// resolved: `config::validate_literal_entry_value`): no `${…}` is
    /// expanded or refused, and errors name fields, never values.
    pub literal: bool,
    /// More values to keep secret (`ServerSpec::secrets`): every one is
    /// shown as `[redacted]` in logs, errors, actions and state (the
    /// customization `uri` too) while the server is configured. An imported
    /// entry's secret variable values, wherever they were put.
    pub secrets: Vec<String>,
    /// Which tools the model is offered and `callTool` accepts
    /// (`includeTools`, `excludeTools`); default: every tool.
    pub tool_filter: ToolFilter,
    /// The server's tool-call limits (`callTimeoutMs`, `callMaxTotalMs`,
    /// `modelOutputMaxChars`).
    pub call_limits: CallLimits,
    /// How the server's start is shown and waited for (`required`).
    pub start: StartPolicy,
    /// Its sandbox (`sandbox`, stdio only): the host's by default.
    pub sandbox: SandboxSetting,
}

impl AddServer {
    /// Server `name` from the `mcp.json` entry `config`, every other
    /// parameter at its default.
    pub fn new(name: impl Into<String>, config: Value) -> Self {
        Self {
            name: name.into(),
            config,
            root: None,
            uri: None,
            startup_timeout_ms: None,
            oauth: None,
            protocol: ProtocolSetting::default(),
            literal: false,
            secrets: Vec::new(),
            tool_filter: ToolFilter::default(),
            call_limits: CallLimits::default(),
            start: StartPolicy::default(),
            sandbox: SandboxSetting::default(),
        }
    }
}

/// What `addPlugin` reports.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginAdded {
    /// The plugin's customization id.
    pub id: String,
    /// Ids of the servers being started (valid entries only).
    pub servers: Vec<String>,
    /// The plugin's load state: `loaded`, `degraded` (some entries invalid) or `error`.
    pub load: CustomizationLoadState,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_turn_and_tool_call_go_together() {
        let some = |s: &str| Some(s.to_owned());
        let partial = ChatCall::from_parts(some("c"), some("t"), None).unwrap_err();
        assert_eq!(partial.code, ErrorCode::InvalidArgument);
        assert_eq!(
            partial.message,
            "chat, turnId and toolCallId go together: give all three or none"
        );
        let empty = ChatCall::from_parts(some(""), some("t"), some("x"));
        let empty = empty.unwrap_err();
        assert_eq!(empty.code, ErrorCode::InvalidArgument);
        assert_eq!(
            empty.message,
            "chat, turnId and toolCallId must not be empty"
        );
        let all = ChatCall::from_parts(some("c"), some("t"), some("x"));
        let chat = all.unwrap().unwrap();
        assert_eq!(
            (chat.chat(), chat.turn_id(), chat.tool_call_id()),
            ("c", "t", "x")
        );
        assert_eq!(ChatCall::from_parts(None, None, None).unwrap(), None);
    }

    #[test]
    fn the_target_is_a_catalogue_name_or_server_and_original_name() {
        let by_name = ToolRef::named(None, "srv__echo".into());
        assert_eq!(by_name, ToolRef::Catalogue("srv__echo".into()));
        let original = ToolRef::named(Some("srv".into()), "echo".into());
        assert_eq!(
            original,
            ToolRef::Original {
                server_id: "srv".into(),
                tool_name: "echo".into()
            }
        );
    }

    #[test]
    fn call_timeouts_are_clamped() {
        assert_eq!(clamped_timeout(0), Duration::from_millis(1));
        assert_eq!(
            clamped_timeout(u64::MAX),
            Duration::from_millis(MAX_TIMEOUT_MS)
        );
    }

    #[test]
    fn authorize_timeout_is_clamped_with_the_sign_in_default() {
        assert_eq!(Authorize::timeout_of(None), DEFAULT_SIGN_IN_TIMEOUT);
        for (ms, want) in [(0, 1), (5_000, 5_000), (u64::MAX, MAX_TIMEOUT_MS)] {
            assert_eq!(Authorize::timeout_of(Some(ms)), Duration::from_millis(want));
        }
    }

    #[test]
    fn host_config_defaults_are_those_of_an_empty_options_object() {
        let config = HostConfig::default();
        assert_eq!(config.session, "ahp-session:/mcp-host");
        assert_eq!(config.client_info.name, "ahp-mcp-host");
        assert_eq!(config.env_policy, EnvPolicy::Inherit);
        assert!(config.publish_server_tools);
        let limits = Limits {
            call_timeout_ms: 0,
            ..Limits::default()
        };
        assert_eq!(limits.clamped().call_timeout_ms, 1);
    }

    #[test]
    fn field_errors_start_with_the_parameter_and_the_field_path() {
        let cases = [
            (".", "invalid type: null", "options: invalid type: null"),
            (
                "limits.callTimeoutMs",
                "bad",
                "options.limits.callTimeoutMs: bad",
            ),
            ("[0].uri", "bad", "options[0].uri: bad"),
            (
                "id",
                "unknown field `id`, expected …",
                "options.id: unknown field `id`, expected …",
            ),
            (
                ".",
                "unknown field `id`, expected …",
                "options.id: unknown field `id`, expected …",
            ),
            (
                "proxy",
                "proxy: not an http(s) URL",
                "options.proxy: not an http(s) URL",
            ),
            (
                "caCertificates",
                "caCertificates[0]: no PEM",
                "options.caCertificates[0]: no PEM",
            ),
            ("proxyUrl", "proxy: x", "options.proxyUrl: proxy: x"),
        ];
        for (path, inner, want) in cases {
            assert_eq!(field_error("options", path, inner), want, "{path} {inner}");
        }
    }
}
