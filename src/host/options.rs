//! The JS-shaped option and argument types of `McpHost` (camelCase,
//! `deny_unknown_fields`; each field is documented as JS sees it), and
//! their conversion into the typed parameters of the core.
//!
//! The binding (`napi`) parses these from JSON and converts them; the core
//! never sees an illegal combination: `callTool`'s "all three of `chat`,
//! `turnId`, `toolCallId` or none" and every timeout's clamping are checked
//! once, here.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use ahp_types::state::CustomizationLoadState;
use rmcp::model::Implementation;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::auth::Authorize;
use super::tools::{CallTool, ChatCall, ToolRef};
use super::{HostConfig, OAuthHostOptions};
use crate::auth::flow::DEFAULT_SIGN_IN_TIMEOUT;
use crate::config::launch::EnvPolicy;
use crate::config::{OAuthClientSetting, ProtocolSetting};
use crate::error::{ErrorCode, HostError};
use crate::limits::{Limits, MAX_TIMEOUT_MS};

/// A timeout option in ms, clamped to 1 ms ..= 24 h ([`MAX_TIMEOUT_MS`]),
/// like every configurable timeout.
pub fn clamped_timeout(ms: u64) -> Duration {
    Duration::from_millis(ms.clamp(1, MAX_TIMEOUT_MS))
}

/// Options of `new McpHost(options)`; converts into [`HostConfig`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostOptions {
    /// Session channel URI stamped on every envelope. Default `ahp-session:/mcp-host`.
    #[serde(default = "default_session")]
    pub session: String,
    /// `clientInfo` sent in `initialize`. Default `{name: "ahp-mcp-host", version: <crate version>}`.
    #[serde(default)]
    pub client_info: Option<ClientInfoOption>,
    /// Directory under which one `PLUGIN_DATA` directory per plugin is created.
    /// Default: [`default_data_dir`] (per user, survives restarts).
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// Timeouts and restart policy overrides (clamped to hard caps).
    #[serde(default)]
    pub limits: Limits,
    /// HTTPS URL of this app's OAuth Client ID Metadata Document, used as
    /// `client_id` when an authorization server supports CIMD.
    #[serde(default)]
    pub client_metadata_url: Option<String>,
    /// Port of the loopback OAuth redirect listener; default: random.
    #[serde(default)]
    pub oauth_redirect_port: Option<u16>,
    /// `"inherit"` (default): servers get the host's environment; `"allowList"`:
    /// only PATH, HOME, locale and similar basics (see `EnvPolicy`).
    #[serde(default)]
    pub env: EnvOption,
    /// Emit `session/serverToolsChanged` with the model tool catalogue
    /// whenever it changes (default `true`). A harness that merges MCP tools
    /// with its own publishes the merged list itself and sets this to `false`.
    #[serde(default = "yes")]
    pub publish_server_tools: bool,
    /// Declare the MCP form-elicitation capability even without an
    /// `elicitation` handler, so that AHP clients answer the elicitations of
    /// AHP tool calls (`chat/inputCompleted`); any other elicitation is then
    /// declined. Default `false`.
    #[serde(default)]
    pub chat_elicitation: bool,
    /// The AHP client declared `capabilities.mcpApps` in its `initialize`
    /// (AHP "MCP Servers › MCP Apps"): declare the MCP Apps extension to
    /// servers, publish `mcpApp` and the `mcp://` `channel` on their
    /// customizations, and carry `_meta.ui` on App tool calls. Default
    /// `false` (App tool calls are ordinary tool calls).
    #[serde(default)]
    pub mcp_apps: bool,
    /// The app's own proxy setting (like VS Code's `http.proxy`): a proxy URL
    /// or `{url, noProxy?}`; wins over `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`/
    /// `NO_PROXY`. Loopback is never proxied. See [`crate::ProxyOption`].
    #[serde(default)]
    pub proxy: Option<crate::ProxyOption>,
    /// PEM text of extra trusted CA certificates, besides the OS trust store
    /// and `NODE_EXTRA_CA_CERTS`. See [`crate::CaCertificates`].
    #[serde(default)]
    pub ca_certificates: crate::CaCertificates,
}

fn yes() -> bool {
    true
}

fn default_session() -> String {
    "ahp-session:/mcp-host".to_owned()
}

impl From<HostOptions> for HostConfig {
    /// Resolves the defaults (client info, data directory) and clamps the limits.
    fn from(options: HostOptions) -> Self {
        let info = options.client_info;
        let mut client_info = Implementation::default();
        client_info.name = info
            .as_ref()
            .map_or_else(|| "ahp-mcp-host".to_owned(), |i| i.name.clone());
        client_info.version = info.as_ref().map_or_else(
            || env!("CARGO_PKG_VERSION").to_owned(),
            |i| i.version.clone(),
        );
        client_info.title = info.and_then(|i| i.title);
        Self {
            session: options.session,
            client_info,
            data_dir: options.data_dir.unwrap_or_else(default_data_dir),
            limits: options.limits.clamped(),
            oauth: OAuthHostOptions {
                client_metadata_url: options.client_metadata_url,
                redirect_port: options.oauth_redirect_port,
            },
            env_policy: options.env.into(),
            publish_server_tools: options.publish_server_tools,
            chat_elicitation: options.chat_elicitation,
            mcp_apps: options.mcp_apps,
            network: crate::NetworkOptions {
                proxy: options.proxy,
                ca_certificates: options.ca_certificates,
            },
        }
    }
}

/// The folder of the default `dataDir` inside the per-user data directory.
const DATA_DIR_NAME: &str = "ahp-mcp-host";

/// The default `dataDir`: `ahp-mcp-host` in the per-user application data
/// directory (`dirs::data_local_dir`): Linux `$XDG_DATA_HOME` (when
/// absolute), else `~/.local/share`; macOS `~/Library/Application Support`;
/// Windows `%LOCALAPPDATA%`. Only when no home directory is known:
/// `<os temp dir>/ahp-mcp-host-data` (see [`data_dir_warning`]). Created
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

/// `clientInfo` of `initialize` (MCP `Implementation`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientInfoOption {
    /// Client name, e.g. `"my-extension"`.
    pub name: String,
    /// Client version, e.g. `"1.2.0"`.
    pub version: String,
    /// Optional display title.
    #[serde(default)]
    pub title: Option<String>,
}

/// Base environment policy option (JS `env`; default `"inherit"`, while
/// [`EnvPolicy`]'s Rust default is the allow-list).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum EnvOption {
    /// Inherit the host process environment.
    #[default]
    Inherit,
    /// Only an allow-list of basic variables.
    AllowList,
}

impl From<EnvOption> for EnvPolicy {
    fn from(option: EnvOption) -> Self {
        match option {
            EnvOption::Inherit => EnvPolicy::Inherit,
            EnvOption::AllowList => EnvPolicy::AllowList,
        }
    }
}

/// `addPlugin` options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddPlugin {
    /// Plugin root directory; `<root>/mcp.json` is read.
    pub root: PathBuf,
    /// Customization `uri`; default: the root's `file://` URI.
    #[serde(default)]
    pub uri: Option<String>,
    /// Display name and customization id; default: the root's folder name.
    #[serde(default)]
    pub name: Option<String>,
    /// Startup timeout (ms) for every server of this plugin.
    #[serde(default)]
    pub startup_timeout_ms: Option<u64>,
    /// Per-server overrides, keyed by the server's name in `mcpServers`.
    #[serde(default)]
    pub servers: HashMap<String, ServerOverrides>,
}

/// Per-server host-side settings (not part of `mcp.json`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerOverrides {
    /// Startup timeout (ms): spawn/connect plus `initialize`. Default `limits.startupTimeoutMs`.
    #[serde(default)]
    pub startup_timeout_ms: Option<u64>,
    /// Pre-registered OAuth client for this server.
    #[serde(default)]
    pub oauth: Option<OAuthClientSetting>,
    /// MCP revision to speak: `auto` (default), `2026-07-28` or `legacy`.
    #[serde(default)]
    pub protocol: ProtocolSetting,
}

/// `addServer` options: a top-level server outside any plugin.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddServer {
    /// Name and customization id.
    pub name: String,
    /// One `mcp.json` server entry (`{type: "stdio", command, …}` or `{type: "streamable-http", url, …}`).
    pub config: Value,
    /// Root for `./` commands, `${PLUGIN_ROOT}` and the default `cwd`; default: the host's cwd.
    #[serde(default)]
    pub root: Option<PathBuf>,
    /// Customization `uri`; default: the URL (HTTP) or the root's `file://` URI (stdio).
    #[serde(default)]
    pub uri: Option<String>,
    /// Startup timeout (ms).
    #[serde(default)]
    pub startup_timeout_ms: Option<u64>,
    /// Pre-registered OAuth client for this server.
    #[serde(default)]
    pub oauth: Option<OAuthClientSetting>,
    /// MCP revision to speak: `auto` (default), `2026-07-28` or `legacy`.
    #[serde(default)]
    pub protocol: ProtocolSetting,
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

/// `callTool` arguments; converts into [`CallTool`].
///
/// The tool is named either by its model-safe catalogue `name` (no
/// `serverId`), or by `serverId` plus the server's original tool name.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallToolArgs {
    /// Customization id of the server; when given, `name` is the original tool name.
    #[serde(default)]
    pub server_id: Option<String>,
    /// Catalogue name, or (with `server_id`) the tool's original name.
    pub name: String,
    /// Arguments object.
    #[serde(default)]
    pub arguments: Option<Map<String, Value>>,
    /// Inactivity limit (ms), reset by each progress notification; default `limits.callTimeoutMs`.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Absolute limit (ms) that progress never extends; default `limits.callMaxTotalMs`.
    #[serde(default)]
    pub max_total_timeout_ms: Option<u64>,
    /// The `digest` of the catalogue entry the caller validated the arguments
    /// against; default: the digest as of the last `listTools()`.
    #[serde(default)]
    pub digest: Option<String>,
    /// Chat channel URI of the AHP tool call (with `turnId` and `toolCallId`).
    #[serde(default)]
    pub chat: Option<String>,
    /// The chat's active turn.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The AHP tool call id.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// Display name for AHP messages; default the tool's `title`, else its `annotations.title`, else its name.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Resolve with the task handle (the server's `CreateTaskResult`) when
    /// the server answers with a task, instead of following it (SEP-2663).
    #[serde(default)]
    pub task_handle: Option<bool>,
}

impl TryFrom<CallToolArgs> for CallTool {
    type Error = HostError;

    /// # Errors
    /// `invalid_argument` when only some of `chat`/`turnId`/`toolCallId` are
    /// given, or one of them is empty.
    fn try_from(args: CallToolArgs) -> Result<Self, HostError> {
        let chat = match (args.chat, args.turn_id, args.tool_call_id) {
            (Some(chat), Some(turn_id), Some(tool_call_id)) => {
                Some(ChatCall::new(chat, turn_id, tool_call_id)?)
            }
            (None, None, None) => None,
            _ => {
                return Err(HostError::new(
                    ErrorCode::InvalidArgument,
                    "chat, turnId and toolCallId go together: give all three or none",
                ))
            }
        };
        let target = match args.server_id {
            Some(server_id) => ToolRef::Original {
                server_id,
                tool_name: args.name,
            },
            None => ToolRef::Catalogue(args.name),
        };
        Ok(Self {
            target,
            arguments: args.arguments,
            timeout: args.timeout_ms.map(clamped_timeout),
            max_total: args.max_total_timeout_ms.map(clamped_timeout),
            digest: args.digest,
            chat,
            display_name: args.display_name,
            task_handle: args.task_handle.unwrap_or(false),
        })
    }
}

/// AHP `authenticate` command parameters (AHP 1.0 "Authentication").
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthenticateArgs {
    /// The protected resource identifier (`resource` of the advertised RFC 9728 metadata).
    pub resource: String,
    /// Bearer access token; empty revokes. A secret: never logged or emitted.
    pub token: String,
    /// Seconds until the token expires, as the client computed it.
    #[serde(default)]
    pub expires_in: Option<u64>,
    /// Scopes the token grants; when given they must cover `requiredScopes`.
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
}

/// `authorize` options; converts into [`Authorize`]. `Debug` never shows
/// the ID token or the assertion.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorizeArgs {
    /// Scopes to request; default: the challenge's, else `scopes_supported`, else none.
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// Time allowed for the user to finish (ms); default 300 000, clamped to
    /// 1 ..= 86 400 000 like every timeout.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Enterprise ID token for `grant: "enterpriseManaged"` (a secret).
    #[serde(default)]
    pub id_token: Option<String>,
    /// Workload JWT for `grant: "jwtBearer"` (SEP-1933; a secret).
    #[serde(default)]
    pub assertion: Option<String>,
}

impl std::fmt::Debug for AuthorizeArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Authorize::from(self.clone()).fmt(f)
    }
}

impl From<AuthorizeArgs> for Authorize {
    fn from(args: AuthorizeArgs) -> Self {
        Self {
            scopes: args.scopes.unwrap_or_default(),
            timeout: args
                .timeout_ms
                .map_or(DEFAULT_SIGN_IN_TIMEOUT, clamped_timeout),
            id_token: args.id_token,
            assertion: args.assertion,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(v: Value) -> Result<CallTool, HostError> {
        CallTool::try_from(serde_json::from_value::<CallToolArgs>(v).unwrap())
    }

    #[test]
    fn chat_turn_and_tool_call_go_together() {
        let partial = call(json!({"name": "t", "chat": "c", "turnId": "t"})).unwrap_err();
        assert_eq!(partial.code, ErrorCode::InvalidArgument);
        assert_eq!(
            partial.message,
            "chat, turnId and toolCallId go together: give all three or none"
        );
        let empty = call(json!({"name": "t", "chat": "", "turnId": "t", "toolCallId": "x"}));
        let empty = empty.unwrap_err();
        assert_eq!(empty.code, ErrorCode::InvalidArgument);
        assert_eq!(
            empty.message,
            "chat, turnId and toolCallId must not be empty"
        );
        let all = call(json!({"name": "t", "chat": "c", "turnId": "t", "toolCallId": "x"}));
        let chat = all.unwrap().chat.unwrap();
        assert_eq!(
            (chat.chat(), chat.turn_id(), chat.tool_call_id()),
            ("c", "t", "x")
        );
        assert_eq!(call(json!({"name": "t"})).unwrap().chat, None);
    }

    #[test]
    fn the_target_is_a_catalogue_name_or_server_and_original_name() {
        let by_name = call(json!({"name": "srv__echo"})).unwrap();
        assert_eq!(by_name.target, ToolRef::Catalogue("srv__echo".into()));
        let original = call(json!({"serverId": "srv", "name": "echo"})).unwrap();
        assert_eq!(
            original.target,
            ToolRef::Original {
                server_id: "srv".into(),
                tool_name: "echo".into()
            }
        );
    }

    #[test]
    fn call_timeouts_are_clamped_and_default_to_the_limits() {
        let c = call(json!({"name": "t", "timeoutMs": 0, "maxTotalTimeoutMs": u64::MAX})).unwrap();
        assert_eq!(c.timeout, Some(Duration::from_millis(1)));
        assert_eq!(c.max_total, Some(Duration::from_millis(MAX_TIMEOUT_MS)));
        let d = call(json!({"name": "t"})).unwrap();
        assert_eq!((d.timeout, d.max_total), (None, None));
    }

    #[test]
    fn authorize_timeout_is_clamped_with_the_sign_in_default() {
        let none = Authorize::from(AuthorizeArgs::default());
        assert_eq!(none.timeout, DEFAULT_SIGN_IN_TIMEOUT);
        assert!(none.scopes.is_empty());
        for (ms, want) in [(0, 1), (5_000, 5_000), (u64::MAX, MAX_TIMEOUT_MS)] {
            let args = AuthorizeArgs {
                timeout_ms: Some(ms),
                ..Default::default()
            };
            assert_eq!(Authorize::from(args).timeout, Duration::from_millis(want));
        }
    }

    #[test]
    fn host_options_resolve_defaults_and_clamp_limits() {
        let options: HostOptions = serde_json::from_value(json!({
            "limits": {"callTimeoutMs": 0},
            "env": "allowList",
        }))
        .unwrap();
        let config = HostConfig::from(options);
        assert_eq!(config.session, "ahp-session:/mcp-host");
        assert_eq!(config.client_info.name, "ahp-mcp-host");
        assert_eq!(config.limits.call_timeout_ms, 1);
        assert_eq!(config.env_policy, EnvPolicy::AllowList);
        assert!(config.publish_server_tools);
        let inherit: HostOptions = serde_json::from_value(json!({})).unwrap();
        assert_eq!(HostConfig::from(inherit).env_policy, EnvPolicy::Inherit);
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
