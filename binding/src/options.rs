//! The JS-shaped option and argument types of `McpHost` (camelCase,
//! `deny_unknown_fields`; each field is documented as JS sees it), parsed
//! from the JSON the wrapper sends (`parse` in `lib.rs`), and their
//! conversion into the core's typed parameters by `From` / `TryFrom`.
//!
//! The rules every caller of the core shares are the core's
//! (`ChatCall::from_parts`, `ToolRef::named`, `clamped_timeout`,
//! `Authorize::timeout_of`, `HostConfig::default`); these types only map
//! JS names and defaults onto them. The field order is the order serde
//! lists in an unknown-field message.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::limits::JsLimits;
use crate::server_options::{JsServerOverrides, JsStartMode};
use ahp_mcp_host::config::launch::EnvPolicy;
use ahp_mcp_host::config::{IdpSetting, OAuthClientSetting, OAuthGrant};
use ahp_mcp_host::error::{ErrorCode, HostError, HostResult};
use ahp_mcp_host::host::{
    clamped_timeout, AddPlugin, AuthenticateArgs, Authorize, CallTool, ChatCall, HostConfig,
    OAuthHostOptions, ServerOverrides, ToolRef, UserFlow, DEFAULT_SESSION,
};
use ahp_mcp_host::limits::{clamped_output_chars, Limits};
use ahp_mcp_host::{CaCertificates, NetworkOptions, ProxyOption};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Options of `new McpHost(options)`; converts into [`HostConfig`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsHostOptions {
    /// Session channel URI stamped on every envelope. Default `ahp-session:/mcp-host`.
    #[serde(default = "default_session")]
    session: String,
    /// `clientInfo` sent in `initialize`. Default `{name: "ahp-mcp-host", version: <crate version>}`.
    #[serde(default)]
    client_info: Option<JsClientInfo>,
    /// Directory under which one `PLUGIN_DATA` directory per plugin is created.
    /// Default: the core's `default_data_dir` (per user, survives restarts).
    #[serde(default)]
    data_dir: Option<PathBuf>,
    /// Timeouts and restart policy overrides (clamped to hard caps).
    #[serde(default)]
    limits: JsLimits,
    /// HTTPS URL of this app's OAuth Client ID Metadata Document, used as
    /// `client_id` when an authorization server supports CIMD.
    #[serde(default)]
    client_metadata_url: Option<String>,
    /// Port of the loopback OAuth redirect listener; default: random.
    #[serde(default)]
    oauth_redirect_port: Option<u16>,
    /// `"inherit"` (default): servers get the host's environment; `"allowList"`:
    /// only PATH, HOME, locale and similar basics (see `EnvPolicy`).
    #[serde(default)]
    env: JsEnv,
    /// Emit `session/serverToolsChanged` with the model tool catalogue
    /// whenever it changes (default `true`). A harness that merges MCP tools
    /// with its own publishes the merged list itself and sets this to `false`.
    #[serde(default = "yes")]
    publish_server_tools: bool,
    /// Declare the MCP elicitation capability (form and URL mode, SEP-1036)
    /// even without an `elicitation` handler, so that AHP clients answer the
    /// elicitations of AHP tool calls (`chat/inputCompleted`); any other
    /// elicitation is then declined. Default `false`.
    #[serde(default)]
    chat_elicitation: bool,
    /// The AHP client declared `capabilities.mcpApps` in its `initialize`
    /// (AHP "MCP Servers › MCP Apps"): declare the MCP Apps extension to
    /// servers, publish `mcpApp` and the `mcp://` `channel` on their
    /// customizations, and carry `_meta.ui` on App tool calls. Default
    /// `false` (App tool calls are ordinary tool calls).
    #[serde(default)]
    mcp_apps: bool,
    /// The start of a server that does not say: `eager` (default) or `lazy`.
    #[serde(default)]
    start: Option<JsStartMode>,
    /// The app's own proxy setting (like VS Code's `http.proxy`): a proxy URL
    /// or `{url, noProxy?}`; wins over `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`/
    /// `NO_PROXY`. Loopback is never proxied. See [`ProxyOption`].
    #[serde(default)]
    proxy: Option<ProxyOption>,
    /// PEM text of extra trusted CA certificates, besides the OS trust store
    /// and `NODE_EXTRA_CA_CERTS`. See [`CaCertificates`].
    #[serde(default)]
    ca_certificates: CaCertificates,
    /// `"os"`: OAuth credentials live in the OS keychain
    /// ([`ahp_mcp_host::OsSecretStore`]). Absent: the app's store, when
    /// given to the constructor, else memory. (`index.js` sends only `"os"`
    /// here; an app's `{get, set, delete}` store is a callback.)
    #[serde(default)]
    credentials: Option<JsCredentials>,
    /// The app's allow and deny rules for servers (issue 32); compiled by
    /// the constructor (`JsPolicy::compile`), not by `From`.
    #[serde(default)]
    pub(crate) policy: Option<crate::policy::JsPolicy>,
    /// The default sandbox of stdio servers: `true`, `false` (default) or
    /// `SandboxOptions` (`crate::sandbox`).
    #[serde(default)]
    sandbox: Option<Value>,
}

/// The host option `credentials` as a name.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) enum JsCredentials {
    /// The OS keychain: Secret Service, macOS Keychain, Windows Credential Manager.
    Os,
}

impl JsHostOptions {
    /// Whether OAuth credentials go to the OS keychain (`credentials: 'os'`).
    pub(crate) fn os_keychain(&self) -> bool {
        self.credentials == Some(JsCredentials::Os)
    }
}

fn yes() -> bool {
    true
}

fn default_session() -> String {
    DEFAULT_SESSION.to_owned()
}

impl TryFrom<JsHostOptions> for HostConfig {
    type Error = HostError;

    /// Resolves the defaults (`HostConfig::default`: client info, data
    /// directory) and clamps the limits.
    ///
    /// # Errors
    /// `invalid_argument` for a malformed `sandbox` (`options.sandbox.…`).
    fn try_from(options: JsHostOptions) -> Result<Self, HostError> {
        let sandbox = crate::sandbox::host_sandbox(options.sandbox).map_err(|mut e| {
            e.message = format!("options.{}", e.message);
            e
        })?;
        let defaults = HostConfig::default();
        let mut client_info = defaults.client_info;
        if let Some(info) = options.client_info {
            client_info.name = info.name;
            client_info.version = info.version;
            client_info.title = info.title;
        }
        Ok(Self {
            session: options.session,
            client_info,
            data_dir: options.data_dir.unwrap_or(defaults.data_dir),
            limits: Limits::from(options.limits).clamped(),
            oauth: OAuthHostOptions {
                client_metadata_url: options.client_metadata_url,
                redirect_port: options.oauth_redirect_port,
            },
            env_policy: options.env.into(),
            publish_server_tools: options.publish_server_tools,
            chat_elicitation: options.chat_elicitation,
            mcp_apps: options.mcp_apps,
            lazy_start: options.start == Some(JsStartMode::Lazy),
            network: NetworkOptions {
                proxy: options.proxy,
                ca_certificates: options.ca_certificates,
            },
            sandbox,
            // Compiled by the constructor, which can refuse it (`JsPolicy::compile`).
            policy: defaults.policy,
        })
    }
}

/// `clientInfo` of `initialize` (MCP `Implementation`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsClientInfo {
    /// Client name, e.g. `"my-extension"`.
    name: String,
    /// Client version, e.g. `"1.2.0"`.
    version: String,
    /// Optional display title.
    #[serde(default)]
    title: Option<String>,
}

/// Base environment policy option (JS `env`; default `"inherit"`, while
/// [`EnvPolicy`]'s Rust default is the allow-list).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
enum JsEnv {
    /// Inherit the host process environment.
    #[default]
    Inherit,
    /// Only an allow-list of basic variables.
    AllowList,
}

impl From<JsEnv> for EnvPolicy {
    fn from(option: JsEnv) -> Self {
        match option {
            JsEnv::Inherit => EnvPolicy::Inherit,
            JsEnv::AllowList => EnvPolicy::AllowList,
        }
    }
}

/// `addPlugin` options; converts into [`AddPlugin`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsAddPlugin {
    /// Plugin root directory; `<root>/mcp.json` is read.
    root: PathBuf,
    /// Customization `uri`; default: the root's `file://` URI.
    #[serde(default)]
    uri: Option<String>,
    /// Display name and customization id; default: the root's folder name.
    #[serde(default)]
    name: Option<String>,
    /// Startup timeout (ms) for every server of this plugin.
    #[serde(default)]
    startup_timeout_ms: Option<u64>,
    /// Per-server overrides, keyed by the server's name in `mcpServers`.
    #[serde(default)]
    servers: HashMap<String, JsServerOverrides>,
}

impl TryFrom<JsAddPlugin> for AddPlugin {
    type Error = HostError;

    /// # Errors
    /// A server override's [`tool_settings`] error, its message starting
    /// with `options.servers.<name>.`.
    fn try_from(js: JsAddPlugin) -> Result<Self, HostError> {
        let overrides = |(name, o): (String, JsServerOverrides)| {
            let o = ServerOverrides::try_from(o).map_err(|mut e| {
                e.message = format!("options.servers.{name}.{}", e.message);
                e
            })?;
            Ok((name, o))
        };
        Ok(Self {
            root: js.root,
            uri: js.uri,
            name: js.name,
            startup_timeout_ms: js.startup_timeout_ms,
            servers: js
                .servers
                .into_iter()
                .map(overrides)
                .collect::<Result<_, _>>()?,
        })
    }
}

/// `setToolEnabled` options (see `Host::set_tool_enabled`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsSetToolEnabled {
    /// Customization id of the server.
    pub(crate) server_id: String,
    /// The tool's original name (`toolName`).
    pub(crate) tool: String,
    /// On (`true`) or off.
    pub(crate) enabled: bool,
}

/// `callTool` arguments; converts into [`CallTool`].
///
/// The tool is named either by its model-safe catalogue `name` (no
/// `serverId`), or by `serverId` plus the server's original tool name.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsCallToolArgs {
    /// Customization id of the server; when given, `name` is the original tool name.
    #[serde(default)]
    server_id: Option<String>,
    /// Catalogue name, or (with `server_id`) the tool's original name.
    name: String,
    /// Arguments object.
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    /// Inactivity limit (ms), reset by each progress notification; default `limits.callTimeoutMs`.
    #[serde(default)]
    timeout_ms: Option<u64>,
    /// Absolute limit (ms) that progress never extends; default `limits.callMaxTotalMs`.
    #[serde(default)]
    max_total_timeout_ms: Option<u64>,
    /// Model-facing output budget (characters) of a chat call; default the
    /// server's, else `limits.modelOutputMaxChars`.
    #[serde(default)]
    model_output_max_chars: Option<u64>,
    /// The `digest` of the catalogue entry the caller validated the arguments
    /// against; default: the digest as of the last `listTools()`.
    #[serde(default)]
    digest: Option<String>,
    /// Chat channel URI of the AHP tool call (with `turnId` and `toolCallId`).
    #[serde(default)]
    chat: Option<String>,
    /// The chat's active turn.
    #[serde(default)]
    turn_id: Option<String>,
    /// The AHP tool call id.
    #[serde(default)]
    tool_call_id: Option<String>,
    /// Display name for AHP messages; default the tool's `title`, else its `annotations.title`, else its name.
    #[serde(default)]
    display_name: Option<String>,
    /// Resolve with the task handle (the server's `CreateTaskResult`) when
    /// the server answers with a task, instead of following it (SEP-2663).
    #[serde(default)]
    task_handle: Option<bool>,
}

impl TryFrom<JsCallToolArgs> for CallTool {
    type Error = HostError;

    /// # Errors
    /// `invalid_argument` when only some of `chat`/`turnId`/`toolCallId` are
    /// given, or one of them is empty (`ChatCall::from_parts`).
    fn try_from(args: JsCallToolArgs) -> Result<Self, HostError> {
        Ok(Self {
            chat: ChatCall::from_parts(args.chat, args.turn_id, args.tool_call_id)?,
            arguments: args.arguments,
            timeout: args.timeout_ms.map(clamped_timeout),
            max_total: args.max_total_timeout_ms.map(clamped_timeout),
            output_max_chars: args.model_output_max_chars.map(clamped_output_chars),
            digest: args.digest,
            display_name: args.display_name,
            task_handle: args.task_handle.unwrap_or(false),
            ..Self::new(ToolRef::named(args.server_id, args.name))
        })
    }
}

/// AHP `authenticate` command parameters (AHP 1.0 "Authentication");
/// converts into [`AuthenticateArgs`]. `Debug` never shows the token.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsAuthenticateArgs {
    /// The protected resource identifier (`resource` of the advertised RFC 9728 metadata).
    resource: String,
    /// Bearer access token; empty revokes. A secret: never logged or emitted.
    token: String,
    /// Seconds until the token expires, as the client computed it.
    #[serde(default)]
    expires_in: Option<u64>,
    /// Scopes the token grants; when given they must cover `requiredScopes`.
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

impl std::fmt::Debug for JsAuthenticateArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        AuthenticateArgs::from(self.clone()).fmt(f)
    }
}

impl From<JsAuthenticateArgs> for AuthenticateArgs {
    fn from(js: JsAuthenticateArgs) -> Self {
        Self {
            resource: js.resource,
            token: js.token,
            expires_in: js.expires_in,
            scopes: js.scopes,
        }
    }
}

/// `authorize` options; converts into [`Authorize`]. `Debug` never shows
/// the ID token or the assertion.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsAuthorizeArgs {
    /// Scopes to request; default: the challenge's, else `scopes_supported`, else none.
    #[serde(default)]
    scopes: Option<Vec<String>>,
    /// Time allowed for the user to finish (ms); default 300 000, clamped to
    /// 1 ..= 86 400 000 like every timeout.
    #[serde(default)]
    timeout_ms: Option<u64>,
    /// Enterprise ID token for `grant: "enterpriseManaged"` (a secret).
    #[serde(default)]
    id_token: Option<String>,
    /// Workload JWT for `grant: "jwtBearer"` (SEP-1933; a secret).
    #[serde(default)]
    assertion: Option<String>,
    /// A redirect URI the app handles (no loopback listener).
    #[serde(default)]
    redirect_uri: Option<String>,
    /// `authorizationCode` (default), `deviceCode` or `auto`.
    #[serde(default)]
    flow: JsUserFlow,
}

/// `authorize({flow})`; converts into [`UserFlow`].
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum JsUserFlow {
    /// The authorization code grant (a browser).
    #[default]
    AuthorizationCode,
    /// The device authorization grant (RFC 8628).
    DeviceCode,
    /// The device grant when the authorization server advertises it.
    Auto,
}

impl From<JsUserFlow> for UserFlow {
    fn from(js: JsUserFlow) -> Self {
        match js {
            JsUserFlow::AuthorizationCode => Self::AuthorizationCode,
            JsUserFlow::DeviceCode => Self::DeviceCode,
            JsUserFlow::Auto => Self::Auto,
        }
    }
}

impl std::fmt::Debug for JsAuthorizeArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Authorize::from(self.clone()).fmt(f)
    }
}

impl From<JsAuthorizeArgs> for Authorize {
    fn from(args: JsAuthorizeArgs) -> Self {
        Self {
            scopes: args.scopes.unwrap_or_default(),
            timeout: Authorize::timeout_of(args.timeout_ms),
            id_token: args.id_token,
            assertion: args.assertion,
            redirect_uri: args.redirect_uri,
            flow: args.flow.into(),
        }
    }
}

/// `oauth` of `addServer` / plugin server overrides: a pre-registered OAuth
/// client (MCP 2025-11-25 "Authorization"; SEP-1046, SEP-990, SEP-1933);
/// converts into [`OAuthClientSetting`]. `clientSecret`, `privateKeyPem`
/// and the IdP's `clientSecret` are secrets.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsOAuthClient {
    /// The client id registered with the authorization server; none: CIMD,
    /// else dynamic registration.
    #[serde(default)]
    client_id: Option<String>,
    /// Its secret, for confidential clients.
    #[serde(default)]
    client_secret: Option<String>,
    /// `authorizationCode` (default), `clientCredentials`,
    /// `enterpriseManaged` or `jwtBearer`.
    #[serde(default)]
    grant: OAuthGrant,
    /// PEM private key for `private_key_jwt` client authentication (RFC 7523).
    #[serde(default)]
    private_key_pem: Option<String>,
    /// JWS algorithm of `privateKeyPem`: `ES256` (default), `ES384`, `RS256`, `RS384`, `RS512`.
    #[serde(default)]
    signing_algorithm: Option<String>,
    /// The enterprise identity provider of `grant: "enterpriseManaged"`.
    #[serde(default)]
    idp: Option<JsIdp>,
    /// Scopes requested when `authorize` names none.
    #[serde(default)]
    scopes: Vec<String>,
    /// The authorization server's RFC 8414 / OpenID Connect metadata URL,
    /// read instead of RFC 9728 → RFC 8414 discovery.
    #[serde(default)]
    auth_server_metadata_url: Option<String>,
    /// Port of this server's loopback redirect listener.
    #[serde(default)]
    callback_port: Option<u16>,
    /// The RFC 8707 resource indicator sent instead of the server's URL.
    #[serde(default)]
    resource: Option<String>,
}

/// `oauth.idp`: the enterprise IdP of `grant: "enterpriseManaged"`
/// (SEP-990); converts into [`IdpSetting`].
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsIdp {
    /// The IdP's issuer.
    issuer: String,
    /// Its token endpoint (RFC 8693 token exchange).
    token_endpoint: String,
    /// This app's client id at the IdP.
    client_id: String,
    /// Its secret at the IdP, if confidential (a secret).
    #[serde(default)]
    client_secret: Option<String>,
}

impl TryFrom<JsOAuthClient> for OAuthClientSetting {
    type Error = HostError;

    /// # Errors
    /// `invalid_argument` naming `oauth.<field>` (the caller prefixes
    /// `options.` or `options.servers.<name>.`): a URL that does not parse,
    /// and what [`OAuthClientSetting::checked`] refuses.
    fn try_from(js: JsOAuthClient) -> Result<Self, HostError> {
        let url = |field: &str, value: Option<String>| {
            value
                .map(|v| {
                    url::Url::parse(&v).map_err(|e| {
                        HostError::new(
                            ErrorCode::InvalidArgument,
                            format!("oauth.{field}: not an absolute URL ({e})"),
                        )
                    })
                })
                .transpose()
        };
        Self {
            client_id: js.client_id,
            client_secret: js.client_secret,
            grant: js.grant,
            private_key_pem: js.private_key_pem,
            signing_algorithm: js.signing_algorithm,
            idp: js.idp.map(|idp| IdpSetting {
                issuer: idp.issuer,
                token_endpoint: idp.token_endpoint,
                client_id: idp.client_id,
                client_secret: idp.client_secret,
            }),
            scopes: js.scopes,
            auth_server_metadata_url: url("authServerMetadataUrl", js.auth_server_metadata_url)?,
            callback_port: js.callback_port,
            resource: url("resource", js.resource)?,
        }
        .checked("oauth")
    }
}

/// Shown as the core's [`OAuthClientSetting`] is: secrets redacted.
impl std::fmt::Debug for JsOAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsOAuthClient")
            .field("client_id", &self.client_id)
            .field("grant", &self.grant)
            .finish_non_exhaustive()
    }
}

/// The largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`, 2^53 − 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// An AHP `ActionOrigin.clientSeq` from a JS number: a non-negative safe
/// integer, taken as is. A client matches its echoes by this number, so
/// NaN, ±Infinity, fractions, negatives and values above 2^53 − 1 are
/// refused (`invalid_argument` naming `origin.clientSeq`), never rewritten.
pub(crate) fn client_seq_of(value: f64) -> HostResult<i64> {
    if value.is_finite() && value.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(&value) {
        // Exact: an integral f64 in [0, 2^53 − 1] converts without loss.
        #[allow(clippy::cast_possible_truncation)]
        return Ok(value as i64);
    }
    Err(HostError::new(
        ErrorCode::InvalidArgument,
        format!(
            "origin.clientSeq: must be a non-negative safe integer (0 to 2^53-1), got {value:?}"
        ),
    ))
}
