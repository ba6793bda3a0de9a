//! The host as plain Rust: what the JS `McpHost` class wraps one to one.
//!
//! `add_plugin` / `add_server` surface customizations and start one actor per
//! valid server; `dispatch` handles client actions; `list_tools` and
//! `call_tool` serve the catalogue; `shutdown` stops gracefully and
//! `dispose_sync` kills everything without needing the async runtime.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ahp_types::actions::{
    ActionEnvelope, ActionOrigin, SessionCustomizationRemovedAction,
    SessionCustomizationUpdatedAction, StateAction,
};
use ahp_types::state::{
    Customization, CustomizationDegradedState, CustomizationErrorState, CustomizationLoadState,
    CustomizationLoadedState, CustomizationLoadingState, McpServerStartingState, McpServerState,
    SessionState,
};
use rmcp::model::{ClientConfig, Implementation};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::auth::flow::{
    client_credentials, enterprise_managed, sign_in, ClientIdentity, SignIn,
    DEFAULT_SIGN_IN_TIMEOUT,
};
use crate::auth::store::{MemorySecretStore, SecretStore};
use crate::catalogue::ToolDiagnostic;
use crate::config::launch::{ensure_plugin_data_dir, host_base_env, EnvPolicy};
use crate::config::{parse_mcp_json, validate_entry_value, PluginVars, ServerConfig};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, EventSink, HostEvent, LogLevel};
use crate::limits::Limits;
use crate::requests::{client_capabilities, RequestHandler};
use crate::session::{
    self, child_server_id, mcp_server_entry, plugin_entry, server_enabled, validate_client_action,
    ClientRequest, SessionStore,
};
use crate::supervisor::call::{call_tool, CallRequest, Progress};
use crate::supervisor::{
    Command, HostShared, OAuthClientSetting, OAuthGrant, ServerHandle, ServerSpec, TransportSpec,
};
use crate::toolcall::{self, ChatContext};
use crate::transport::process::ProcessRegistry;

/// Options of [`Host::new`] (JS: `new McpHost(options)`).
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
    /// Default: `<os temp dir>/ahp-mcp-host-data`.
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
}

fn yes() -> bool {
    true
}

fn default_session() -> String {
    "ahp-session:/mcp-host".to_owned()
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

/// Base environment policy option.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum EnvOption {
    /// Inherit the host process environment.
    #[default]
    Inherit,
    /// Only an allow-list of basic variables.
    AllowList,
}

/// `addPlugin` options.
#[derive(Debug, Clone, Deserialize)]
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

/// `callTool` arguments.
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
    /// Display name for AHP messages; default the tool's `title`, else its name.
    #[serde(default)]
    pub display_name: Option<String>,
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

#[derive(Default)]
struct Registry {
    /// Top-level ids (plugins and top-level servers) taken, including ones
    /// still being added: reserving is atomic with the check.
    names: BTreeSet<String>,
    servers: BTreeMap<String, Arc<ServerHandle>>,
    /// Plugin id → its server ids.
    plugins: BTreeMap<String, Vec<String>>,
}

/// One AHP session's MCP host.
pub struct Host {
    shared: Arc<HostShared>,
    registry: Mutex<Registry>,
    data_dir: PathBuf,
    client_metadata_url: Option<String>,
    oauth_redirect_port: Option<u16>,
    /// Digest of every tool as of the caller's last `list_tools`, keyed by
    /// (server id, original name): the stale-tool check.
    read_digests: Mutex<ReadCatalogue>,
    /// Chat tool calls paused on a step-up challenge, by (chat, turn, tool call id).
    /// Lock order: `auth_waits`, then `registry` or the session lock.
    auth_waits: Mutex<HashMap<(String, String, String), AuthWait>>,
}

/// The catalogue as of the caller's last `listTools`; indexed on first use.
#[derive(Default)]
struct ReadCatalogue {
    entries: Arc<Vec<Arc<crate::catalogue::CatalogueEntry>>>,
    index: std::sync::OnceLock<HashMap<(String, String), usize>>,
}

impl From<Arc<Vec<Arc<crate::catalogue::CatalogueEntry>>>> for ReadCatalogue {
    fn from(entries: Arc<Vec<Arc<crate::catalogue::CatalogueEntry>>>) -> Self {
        Self {
            entries,
            index: std::sync::OnceLock::new(),
        }
    }
}

impl ReadCatalogue {
    /// The digest the caller read for `tool` of `server`, if it read one.
    fn digest(&self, server: &str, tool: &str) -> Option<String> {
        let index = self.index.get_or_init(|| {
            self.entries
                .iter()
                .enumerate()
                .map(|(i, e)| ((e.customization_id.clone(), e.tool.tool_name.clone()), i))
                .collect()
        });
        index
            .get(&(server.to_owned(), tool.to_owned()))
            .map(|&i| self.entries[i].tool.digest.clone())
    }
}

/// A chat tool call waiting for a step-up token.
struct AuthWait {
    server_id: String,
    /// The protected resource the call's challenge advertised.
    resource: String,
    required_scopes: Vec<String>,
    tx: tokio::sync::oneshot::Sender<AuthWaitEnd>,
}

/// How an [`AuthWait`] ended.
enum AuthWaitEnd {
    /// `authenticate` installed a token: retry the request.
    Token,
    /// The client completed the tool call as failed (`chat/toolCallComplete`).
    ClientCancelled,
    /// The caller cancelled, or the wait was dropped.
    Gone,
}

/// Outcome of [`Host::await_step_up`].
enum StepUp {
    Resolved,
    Failed(HostError),
    ClientCancelled(HostError),
}

/// `authorize` options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorizeArgs {
    /// Scopes to request; default: the challenge's, else `scopes_supported`, else none.
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// Time allowed for the user to finish (ms); default 300 000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Enterprise ID token for `grant: "enterpriseManaged"` (a secret).
    #[serde(default)]
    pub id_token: Option<String>,
}

impl Host {
    /// Creates a host that reports to `sink`, with no handlers for
    /// server-initiated requests.
    pub fn new(options: HostOptions, sink: Arc<dyn EventSink>) -> Self {
        Self::with_bridges(options, sink, None, None)
    }

    /// Creates a host whose server-initiated requests (`elicitation/create`,
    /// `sampling/createMessage`, `roots/list`) go to `requests`; only those it
    /// handles are declared as client capabilities. OAuth credentials go to
    /// `secrets` (default: memory; see [`crate::auth::store`] for the key format).
    pub fn with_bridges(
        options: HostOptions,
        sink: Arc<dyn EventSink>,
        requests: Option<Arc<dyn RequestHandler>>,
        secrets: Option<Arc<dyn SecretStore>>,
    ) -> Self {
        let info = options.client_info.clone();
        let mut implementation = Implementation::default();
        implementation.name = info
            .as_ref()
            .map_or_else(|| "ahp-mcp-host".to_owned(), |i| i.name.clone());
        implementation.version = info.as_ref().map_or_else(
            || env!("CARGO_PKG_VERSION").to_owned(),
            |i| i.version.clone(),
        );
        implementation.title = info.and_then(|i| i.title);
        // MCP 2025-11-25: the newest revision with an `initialize` handshake
        // (rmcp's default, 2026-07-28, has none).
        let client_info =
            ClientConfig::new(client_capabilities(requests.as_deref()), implementation)
                .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE);
        let shared = Arc::new(HostShared {
            session: Mutex::new(SessionStore::new(options.session)),
            sink,
            processes: Arc::new(ProcessRegistry::default()),
            client_info,
            limits: options.limits.clamped(),
            base_env: host_base_env(),
            env_policy: match options.env {
                EnvOption::Inherit => EnvPolicy::Inherit,
                EnvOption::AllowList => EnvPolicy::AllowList,
            },
            disposed: CancellationToken::new(),
            requests,
            secrets: secrets.unwrap_or_else(|| Arc::new(MemorySecretStore::default())),
            refresh_locks: Arc::default(),
            catalogue: Default::default(),
            publish_server_tools: options.publish_server_tools,
        });
        let data_dir = options
            .data_dir
            .unwrap_or_else(|| std::env::temp_dir().join("ahp-mcp-host-data"));
        Self {
            shared,
            registry: Mutex::new(Registry::default()),
            read_digests: Mutex::default(),
            auth_waits: Mutex::default(),
            data_dir,
            client_metadata_url: options.client_metadata_url,
            oauth_redirect_port: options.oauth_redirect_port,
        }
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check_live(&self) -> HostResult<()> {
        if self.shared.disposed.is_cancelled() {
            return Err(HostError::new(ErrorCode::Disposed, "the host was disposed"));
        }
        Ok(())
    }

    fn startup_timeout(&self, ms: Option<u64>) -> Duration {
        Duration::from_millis(ms.map_or(self.shared.limits.startup_timeout_ms, |ms| {
            ms.clamp(1, crate::limits::MAX_TIMEOUT_MS)
        }))
    }

    fn reserve_id(&self, id: &str) -> HostResult<()> {
        if id.is_empty() || id.contains('/') {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                format!("name {id:?} must be non-empty and contain no '/'"),
            ));
        }
        if !self.registry().names.insert(id.to_owned()) {
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!("a plugin or server named {id:?} already exists"),
            ));
        }
        Ok(())
    }

    fn release_id(&self, id: &str) {
        self.registry().names.remove(id);
    }

    /// Reads `<root>/mcp.json`, publishes the plugin customization and starts
    /// its valid servers (Agent Plugins "Validate in two stages").
    ///
    /// A broken file is not an error of this call: the plugin is added with
    /// load state `error` (message with file, line:column and rule).
    /// Errors: `invalid_argument` (root is not a directory, bad name),
    /// `already_exists`, `disposed`.
    pub async fn add_plugin(&self, opts: AddPlugin) -> HostResult<PluginAdded> {
        self.check_live()?;
        let root = tokio::fs::canonicalize(&opts.root).await.map_err(|e| {
            HostError::new(
                ErrorCode::InvalidArgument,
                format!("plugin root {}: {e}", opts.root.display()),
            )
        })?;
        if !root.is_dir() {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                format!("plugin root {} is not a directory", root.display()),
            ));
        }
        let name = opts.name.clone().unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        self.reserve_id(&name)?;
        self.registry().plugins.insert(name.clone(), Vec::new());
        let uri = opts.uri.clone().unwrap_or_else(|| file_uri(&root, true));
        let file = root.join("mcp.json");
        let file_uri = file_uri(&file, false);
        let loading = CustomizationLoadState::Loading(CustomizationLoadingState {});
        self.upsert(Customization::Plugin(plugin_entry(
            &name,
            &uri,
            &name,
            loading,
            Vec::new(),
        )));

        let parsed = match tokio::fs::read_to_string(&file).await {
            Ok(text) => parse_mcp_json(&text, &file.display().to_string()),
            Err(e) => Err(format!("{}: cannot read: {e}", file.display())),
        };
        let mcp = match parsed {
            Ok(mcp) => mcp,
            Err(message) => {
                self.shared.log(log(
                    LogLevel::Error,
                    "host.config",
                    None,
                    format!("plugin {name}: MCP disabled: {message}"),
                ));
                let load = CustomizationLoadState::Error(CustomizationErrorState { message });
                self.upsert(Customization::Plugin(plugin_entry(
                    &name,
                    &uri,
                    &name,
                    load.clone(),
                    Vec::new(),
                )));
                return Ok(PluginAdded {
                    id: name,
                    servers: Vec::new(),
                    load,
                });
            }
        };
        let data = match ensure_plugin_data_dir(&self.data_dir, &name) {
            Ok(data) => data,
            Err(e) => {
                let message = format!(
                    "cannot create PLUGIN_DATA under {}: {e}",
                    self.data_dir.display()
                );
                self.shared.log(log(
                    LogLevel::Error,
                    "host.config",
                    None,
                    format!("plugin {name}: MCP disabled: {message}"),
                ));
                let load = CustomizationLoadState::Error(CustomizationErrorState { message });
                self.upsert(Customization::Plugin(plugin_entry(
                    &name,
                    &uri,
                    &name,
                    load.clone(),
                    Vec::new(),
                )));
                return Ok(PluginAdded {
                    id: name,
                    servers: Vec::new(),
                    load,
                });
            }
        };
        let vars = PluginVars {
            plugin_root: root.clone(),
            plugin_data: data,
        };
        let mut problems = Vec::new();
        let mut children = Vec::new();
        let mut specs = Vec::new();
        for entry in mcp.servers {
            let config = match entry.config {
                Ok(c) => c,
                Err(message) => {
                    self.shared.log(log(
                        LogLevel::Warn,
                        "host.config",
                        None,
                        format!("plugin {name}: skipped {message}"),
                    ));
                    problems.push(message);
                    continue;
                }
            };
            let id = child_server_id(&name, &entry.name);
            let overrides = opts
                .servers
                .get(&entry.name)
                .and_then(|o| o.startup_timeout_ms);
            children.push(mcp_server_entry(
                &id,
                &file_uri,
                &entry.name,
                entry.range,
                starting(),
            ));
            specs.push(ServerSpec {
                id,
                transport: transport_spec(config, vars.clone()),
                startup_timeout: self.startup_timeout(overrides.or(opts.startup_timeout_ms)),
                oauth_client: opts.servers.get(&entry.name).and_then(|o| o.oauth.clone()),
            });
        }
        let load = if problems.is_empty() {
            CustomizationLoadState::Loaded(CustomizationLoadedState {})
        } else {
            CustomizationLoadState::Degraded(CustomizationDegradedState {
                message: problems.join("; "),
            })
        };
        self.upsert(Customization::Plugin(plugin_entry(
            &name,
            &uri,
            &name,
            load.clone(),
            children,
        )));
        let ids: Vec<String> = specs.iter().map(|s| s.id.clone()).collect();
        self.spawn_actors(specs);
        self.registry().plugins.insert(name.clone(), ids.clone());
        Ok(PluginAdded {
            id: name,
            servers: ids,
            load,
        })
    }

    /// Adds a top-level server (AHP: host-originated `McpServerCustomization`)
    /// and starts it.
    ///
    /// Errors: `invalid_entry` (the config breaks a stage-2 rule; message names
    /// the field), `invalid_argument`, `already_exists`, `disposed`.
    pub async fn add_server(&self, opts: AddServer) -> HostResult<String> {
        self.check_live()?;
        let config = validate_entry_value(&opts.name, &opts.config)
            .map_err(|m| HostError::new(ErrorCode::InvalidEntry, m))?;
        self.reserve_id(&opts.name)?;
        self.add_reserved_server(opts, config).await
    }

    /// Second half of [`Host::add_server`], once the name is reserved; frees
    /// the name again if it fails before anything was published.
    async fn add_reserved_server(
        &self,
        opts: AddServer,
        config: ServerConfig,
    ) -> HostResult<String> {
        let fail = |e: HostError| {
            self.release_id(&opts.name);
            e
        };
        let root = match &opts.root {
            Some(r) => r.clone(),
            None => std::env::current_dir().map_err(|e| {
                fail(HostError::new(
                    ErrorCode::Internal,
                    format!("cannot read cwd: {e}"),
                ))
            })?,
        };
        let root = std::fs::canonicalize(&root).map_err(|e| {
            fail(HostError::new(
                ErrorCode::InvalidArgument,
                format!("root {}: {e}", root.display()),
            ))
        })?;
        let uri = opts.uri.clone().unwrap_or_else(|| match &config {
            ServerConfig::StreamableHttp(h) => h.url.to_string(),
            ServerConfig::Stdio(_) => file_uri(&root, true),
        });
        let data = ensure_plugin_data_dir(&self.data_dir, &opts.name).map_err(|e| {
            fail(HostError::new(
                ErrorCode::Internal,
                format!(
                    "cannot create PLUGIN_DATA under {}: {e}",
                    self.data_dir.display()
                ),
            ))
        })?;
        let spec = ServerSpec {
            id: opts.name.clone(),
            transport: transport_spec(
                config,
                PluginVars {
                    plugin_root: root,
                    plugin_data: data,
                },
            ),
            startup_timeout: self.startup_timeout(opts.startup_timeout_ms),
            oauth_client: opts.oauth.clone(),
        };
        self.upsert(Customization::McpServer(Box::new(mcp_server_entry(
            &opts.name,
            &uri,
            &opts.name,
            None,
            starting(),
        ))));
        self.spawn_actors(vec![spec]);
        Ok(opts.name)
    }

    fn upsert(&self, customization: Customization) {
        self.shared
            .emit(StateAction::SessionCustomizationUpdated(Box::new(
                SessionCustomizationUpdatedAction { customization },
            )));
    }

    fn spawn_actors(&self, specs: Vec<ServerSpec>) {
        let mut reg = self.registry();
        for spec in specs {
            let id = spec.id.clone();
            let handle = ServerHandle::spawn(self.shared.clone(), spec, true);
            reg.servers.insert(id, Arc::new(handle));
        }
    }

    /// Stops and removes a plugin (with all its servers) or a top-level server;
    /// emits `session/customizationRemoved` once the processes are gone.
    ///
    /// Errors: `not_found` (also for a plugin's child: remove the plugin), `disposed`.
    pub async fn remove(&self, id: &str) -> HostResult<()> {
        self.check_live()?;
        let handles: Vec<Arc<ServerHandle>> = {
            let mut reg = self.registry();
            let ids = match reg.plugins.remove(id) {
                Some(ids) => ids,
                None if reg.servers.contains_key(id) && !id.contains('/') => vec![id.to_owned()],
                None => {
                    return Err(HostError::new(
                        ErrorCode::NotFound,
                        format!("no plugin or top-level server {id:?}"),
                    ))
                }
            };
            reg.names.remove(id);
            ids.iter().filter_map(|i| reg.servers.remove(i)).collect()
        };
        futures::future::join_all(handles.iter().map(|h| h.shutdown())).await;
        self.shared.emit(StateAction::SessionCustomizationRemoved(
            SessionCustomizationRemovedAction { id: id.to_owned() },
        ));
        Ok(())
    }

    /// Handles a client-dispatched action (AHP `dispatchAction`): validates it,
    /// echoes it with `origin` (applied) or with `rejectionReason` (not
    /// applied), then starts/stops servers; the authoritative
    /// `session/mcpServerStateChanged` follows from the server's actor.
    ///
    /// Errors: `invalid_argument` when `action` is not an AHP action.
    pub fn dispatch(&self, action: Value, origin: ActionOrigin) -> HostResult<ActionEnvelope> {
        self.check_live()?;
        let action: StateAction = serde_json::from_value(action)
            .map_err(|e| HostError::new(ErrorCode::InvalidArgument, format!("action: {e}")))?;
        if let StateAction::ChatToolCallComplete(complete) = &action {
            return Ok(self.dispatch_tool_call_complete(complete, &action, origin));
        }
        let (envelope, request, state) = {
            let mut session = self
                .shared
                .session
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let verdict = validate_client_action(session.state(), &action);
            let (request, rejection) = match verdict {
                Ok(r) => (Some(r), None),
                Err(reason) => (None, Some(reason)),
            };
            let envelope = session.echo_client(action, origin, rejection);
            self.shared
                .sink
                .send(HostEvent::Action(Box::new(envelope.clone())));
            (envelope, request, session.state().clone())
        };
        if let Some(request) = request {
            self.act(request, &state);
        }
        Ok(envelope)
    }

    /// A client's `chat/toolCallComplete` for a call paused in
    /// `auth-required`: a failed result cancels the call (the MCP request is
    /// abandoned and the `inputNeeded` entry removed) and is echoed on the
    /// chat channel; a successful one, or one for a call that is not waiting,
    /// is echoed with a `rejectionReason`.
    fn dispatch_tool_call_complete(
        &self,
        complete: &ahp_types::actions::ChatToolCallCompleteAction,
        action: &StateAction,
        origin: ActionOrigin,
    ) -> ActionEnvelope {
        let mut waits = self
            .auth_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let key = waits
            .keys()
            .find(|(_, turn, id)| *turn == complete.turn_id && *id == complete.tool_call_id)
            .cloned();
        let (channel, rejection) = match &key {
            None => (self.shared.session.lock().unwrap_or_else(PoisonError::into_inner).channel().to_owned(), Some(format!("tool call {} is not waiting for authentication on this host", complete.tool_call_id))),
            Some((chat, ..)) if complete.result.success => (chat.clone(), Some("a tool call waiting for authentication can only be completed as failed (cancelled)".to_owned())),
            Some((chat, ..)) => (chat.clone(), None),
        };
        let envelope = {
            let mut session = self
                .shared
                .session
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let envelope =
                session.envelope_on(&channel, action.clone(), Some(origin), rejection.clone());
            self.shared
                .sink
                .send(HostEvent::Action(Box::new(envelope.clone())));
            envelope
        };
        if let (None, Some(key)) = (rejection, key) {
            if let Some(wait) = waits.remove(&key) {
                let _ = wait.tx.send(AuthWaitEnd::ClientCancelled);
            }
        }
        envelope
    }

    fn act(&self, request: ClientRequest, state: &SessionState) {
        let reg = self.registry();
        let send = |id: &str, command: Command| {
            if let Some(h) = reg.servers.get(id) {
                h.send(command);
            }
        };
        match request {
            ClientRequest::Start(id) => send(&id, Command::Start),
            ClientRequest::Stop(id) => send(&id, Command::Stop),
            ClientRequest::Background(_) => {}
            ClientRequest::Toggled(id) => {
                let ids = match reg.plugins.get(&id) {
                    Some(children) => children.clone(),
                    None => vec![id],
                };
                for id in ids {
                    send(&id, Command::SetEnabled(server_enabled(state, &id)));
                }
            }
        }
    }

    /// AHP `authenticate`: hands a token to every server whose live
    /// `authRequired` state advertises `resource`; resolves once one of them
    /// is `ready` with it.
    ///
    /// Errors: `invalid_params` (data `{code: -32602, resources}`) when no live
    /// state advertises `resource`; `auth_required` (data `{code: -32007,
    /// resources}`) when `scopes` do not cover `requiredScopes` (nothing is
    /// retried) or the server still refuses the token; `disposed`.
    pub async fn authenticate(&self, args: AuthenticateArgs) -> HostResult<()> {
        self.check_live()?;
        if self.step_up(&args)? {
            return Ok(());
        }
        let (targets, mut advertised) = {
            let session = self
                .shared
                .session
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let mut targets = Vec::new();
            let mut advertised = Vec::new();
            for server in session::mcp_servers(session.state()) {
                if let McpServerState::AuthRequired(req) = &server.state {
                    advertised.push(req.resource.clone());
                    if req.resource.resource == args.resource {
                        targets.push((server.id.clone(), req.clone()));
                    }
                }
            }
            (targets, advertised)
        };
        // Lock order: `auth_waits` is never taken while the session lock is held.
        let waiting: Vec<String> = self
            .auth_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|w| w.resource.clone())
            .collect();
        advertised.extend(
            waiting
                .into_iter()
                .filter_map(|r| serde_json::from_value(serde_json::json!({ "resource": r })).ok()),
        );
        if targets.is_empty() {
            return Err(HostError::new(
                ErrorCode::InvalidParams,
                format!(
                    "{} is not a protected resource this host is waiting for",
                    args.resource
                ),
            )
            .with_data(serde_json::json!({ "code": -32602, "resources": advertised })));
        }
        if let Some(granted) = &args.scopes {
            for (_, req) in &targets {
                let missing: Vec<&String> = req
                    .required_scopes
                    .iter()
                    .flatten()
                    .filter(|s| !granted.contains(s))
                    .collect();
                if !missing.is_empty() && !args.token.is_empty() {
                    return Err(HostError::new(
                        ErrorCode::AuthRequired,
                        format!("the token does not grant the required scopes {missing:?}"),
                    )
                    .with_data(
                        serde_json::json!({ "code": -32007, "resources": [req.resource] }),
                    ));
                }
            }
        }
        let replies: Vec<_> = {
            let reg = self.registry();
            targets
                .iter()
                .filter_map(|(id, _)| reg.servers.get(id).cloned())
                .map(|handle| {
                    let (reply, rx) = tokio::sync::oneshot::channel();
                    handle.send(Command::Authenticate {
                        token: args.token.clone(),
                        reply,
                    });
                    rx
                })
                .collect()
        };
        let mut last = Err(HostError::new(ErrorCode::NotFound, "the server is gone"));
        for outcome in futures::future::join_all(replies).await {
            match outcome {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => last = Err(e),
                Err(_) => {}
            }
        }
        last
    }

    /// `authenticate` for chat tool calls paused on a step-up challenge for
    /// `args.resource`: checks `scopes`, switches each server's live
    /// connection to the token (no reconnect: other calls keep running) and
    /// resumes the calls. `Ok(false)` when no call waits for that resource.
    fn step_up(&self, args: &AuthenticateArgs) -> HostResult<bool> {
        let mut waits = self
            .auth_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let keys: Vec<_> = waits
            .iter()
            .filter(|(_, w)| w.resource == args.resource)
            .map(|(k, _)| k.clone())
            .collect();
        if keys.is_empty() || args.token.is_empty() {
            return Ok(false);
        }
        if let Some(granted) = &args.scopes {
            for k in &keys {
                let missing: Vec<&String> = waits[k]
                    .required_scopes
                    .iter()
                    .filter(|s| !granted.contains(s))
                    .collect();
                if !missing.is_empty() {
                    return Err(HostError::new(ErrorCode::AuthRequired, format!("the token does not grant the required scopes {missing:?}"))
                        .with_data(serde_json::json!({ "code": -32007, "resources": [{ "resource": args.resource }] })));
                }
            }
        }
        let reg = self.registry();
        for k in keys {
            let Some(wait) = waits.remove(&k) else {
                continue;
            };
            if let Some(handle) = reg.servers.get(&wait.server_id) {
                if let Some(cell) = handle.live.connection().and_then(|c| c.bearer) {
                    *cell.write().unwrap_or_else(PoisonError::into_inner) =
                        Some(args.token.clone());
                }
                handle.send(Command::StepUpToken(args.token.clone()));
            }
            let _ = wait.tx.send(AuthWaitEnd::Token);
        }
        Ok(true)
    }

    /// Resumes every chat tool call of `server_id` paused on a step-up
    /// challenge: a host-run sign-in (`authorize`, e.g. with the union of
    /// scopes) reconnected the server with new tokens; each call retries once.
    fn resume_auth_waits(&self, server_id: &str) {
        let mut waits = self
            .auth_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let keys: Vec<_> = waits
            .iter()
            .filter(|(_, w)| w.server_id == server_id)
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            if let Some(wait) = waits.remove(&k) {
                let _ = wait.tx.send(AuthWaitEnd::Token);
            }
        }
    }

    /// Host-run sign-in for Streamable HTTP server `server_id` (see
    /// [`crate::auth::flow`]). The app receives the authorization URL as an
    /// `authorizationUrl` event and opens it; the host never opens a browser.
    /// Resolves once the server is `ready` with the new tokens.
    ///
    /// A denied consent, a wrong `state`, a failed exchange or a timeout ends
    /// the attempt: the server stays `authRequired` with the reason as its
    /// `description`, the redirect port is freed, and nothing is retried.
    /// Errors: `not_found`, `invalid_argument` (not an HTTP server),
    /// `auth_failed`, `auth_denied`, `timeout`, `disposed`.
    pub async fn authorize(&self, server_id: &str, args: AuthorizeArgs) -> HostResult<()> {
        self.check_live()?;
        let handle = self
            .registry()
            .servers
            .get(server_id)
            .cloned()
            .ok_or_else(|| {
                HostError::new(ErrorCode::NotFound, format!("no server {server_id:?}"))
            })?;
        let TransportSpec::StreamableHttp(cfg) = &handle.spec.transport else {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                format!("{server_id} is not a Streamable HTTP server"),
            ));
        };
        let client = handle.spec.oauth_client.clone();
        let opts = SignIn {
            server: cfg.url.clone(),
            challenge: handle.live.challenge(),
            identity: ClientIdentity {
                client_id: client.as_ref().map(|c| c.client_id.clone()),
                client_secret: client.and_then(|c| c.client_secret),
                client_metadata_url: self.client_metadata_url.clone(),
                client_name: self.shared.client_info.client_info.name.clone(),
            },
            scopes: args.scopes.unwrap_or_default(),
            redirect_port: self.oauth_redirect_port.unwrap_or(0),
            timeout: args
                .timeout_ms
                .map_or(DEFAULT_SIGN_IN_TIMEOUT, Duration::from_millis),
        };
        let sink = self.shared.sink.clone();
        let id = server_id.to_owned();
        let setting = handle.spec.oauth_client.clone();
        if let Some(s) = setting
            .as_ref()
            .filter(|s| s.grant == OAuthGrant::EnterpriseManaged)
        {
            let idp = s.idp.clone().ok_or_else(|| {
                HostError::new(
                    ErrorCode::InvalidArgument,
                    "oauth.idp is required for enterpriseManaged",
                )
            })?;
            let id_token = args.id_token.clone().ok_or_else(|| {
                HostError::new(
                    ErrorCode::InvalidArgument,
                    "authorize needs idToken for enterpriseManaged",
                )
            })?;
            let (opts, secret) = (opts.clone(), s.client_secret.clone());
            let runtime = tokio::runtime::Handle::current();
            let token = tokio::task::spawn_blocking(move || {
                runtime.block_on(enterprise_managed(
                    &opts,
                    &idp,
                    secret.as_deref(),
                    &id_token,
                ))
            })
            .await
            .unwrap_or_else(|e| {
                Err(HostError::new(
                    ErrorCode::Internal,
                    format!("enterprise-managed task failed: {e}"),
                ))
            });
            let token = match token {
                Ok(token) => token,
                Err(e) => {
                    self.describe_auth_failure(server_id, &e.message);
                    return Err(e);
                }
            };
            let (reply, rx) = tokio::sync::oneshot::channel();
            handle.send(Command::Authenticate { token, reply });
            return rx.await.unwrap_or_else(|_| {
                Err(HostError::new(ErrorCode::NotFound, "the server is gone"))
            });
        }
        let flow = async {
            match &setting {
                Some(s) if s.grant == OAuthGrant::ClientCredentials => {
                    // rmcp's private_key_jwt exchange future is not `Send`: run it on a
                    // blocking thread that drives it with the runtime handle.
                    let (opts, s, secrets, locks) = (
                        opts.clone(),
                        s.clone(),
                        self.shared.secrets.clone(),
                        self.shared.refresh_locks.clone(),
                    );
                    let runtime = tokio::runtime::Handle::current();
                    tokio::task::spawn_blocking(move || {
                        let key = s
                            .private_key_pem
                            .as_deref()
                            .map(|pem| (pem, s.signing_algorithm.as_deref().unwrap_or("ES256")));
                        runtime.block_on(client_credentials(&opts, key, &secrets, &locks))
                    })
                    .await
                    .unwrap_or_else(|e| {
                        Err(HostError::new(
                            ErrorCode::Internal,
                            format!("client credentials task failed: {e}"),
                        ))
                    })
                }
                _ => {
                    sign_in(
                        &opts,
                        &self.shared.secrets,
                        &self.shared.refresh_locks,
                        move |url| sink.send(HostEvent::AuthorizationUrl { server_id: id, url }),
                    )
                    .await
                }
            }
        };
        let signed_in = tokio::select! {
            r = flow => r,
            _ = self.shared.disposed.cancelled() => Err(HostError::new(ErrorCode::Disposed, "the host was disposed")),
        };
        match signed_in {
            Ok(manager) => {
                let (reply, rx) = tokio::sync::oneshot::channel();
                handle.send(Command::UseOAuth {
                    manager: Box::new(manager),
                    reply,
                });
                let outcome = rx.await.unwrap_or_else(|_| {
                    Err(HostError::new(ErrorCode::NotFound, "the server is gone"))
                });
                if outcome.is_ok() {
                    self.resume_auth_waits(server_id);
                }
                outcome
            }
            Err(e) => {
                self.describe_auth_failure(server_id, &e.message);
                Err(e)
            }
        }
    }

    /// Puts the reason of a failed sign-in into the server's `authRequired` state.
    fn describe_auth_failure(&self, server_id: &str, message: &str) {
        let current = {
            let session = self
                .shared
                .session
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            session::mcp_servers(session.state())
                .into_iter()
                .find(|s| s.id == server_id)
                .map(|s| s.state.clone())
        };
        if let Some(McpServerState::AuthRequired(mut req)) = current {
            req.description = Some(message.to_owned());
            self.shared
                .set_server_state(server_id, McpServerState::AuthRequired(req));
        }
    }

    /// The session state: exactly what the `ahp` reducer made from the emitted envelopes.
    pub fn state(&self) -> SessionState {
        self.shared
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .state()
            .clone()
    }

    /// The model tool catalogue (see [`crate::catalogue`]): every ready
    /// server's tools as AHP `ToolDefinition` objects with model-safe names,
    /// plus `customizationId`, `toolName` (the server's original name) and
    /// `digest`. Records what the caller has now read, for stale-tool checks
    /// of later calls.
    pub fn list_tools(&self) -> Vec<Value> {
        self.read_catalogue().iter().map(|e| e.to_json()).collect()
    }

    /// [`Host::list_tools`] as a JSON array text (no per-call conversion:
    /// each entry's JSON is built once when the catalogue changes).
    pub fn list_tools_json(&self) -> String {
        let entries = self.read_catalogue();
        let mut out =
            String::with_capacity(entries.iter().map(|e| e.json.len() + 1).sum::<usize>() + 2);
        out.push('[');
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&e.json);
        }
        out.push(']');
        out
    }

    /// The catalogue now, recorded as what the caller has read.
    fn read_catalogue(&self) -> Arc<Vec<Arc<crate::catalogue::CatalogueEntry>>> {
        let entries = self
            .shared
            .catalogue
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .entries();
        *self
            .read_digests
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = ReadCatalogue::from(entries.clone());
        entries
    }

    /// What the host normalized, dropped or left out of the catalogue, for
    /// every listed server.
    pub fn tool_diagnostics(&self) -> Vec<ToolDiagnostic> {
        self.shared
            .catalogue
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .diagnostics()
    }

    /// Resolves a call target: `(server id, original tool name, digest now)`.
    /// With `server_id`, `name` is the server's original tool name;
    /// without, it is a model-safe catalogue name.
    ///
    /// Errors: `not_found` (unknown server or catalogue name); `stale_tool`
    /// when the tool changed or disappeared since the caller read it (the
    /// `digest` given, else the last `listTools()`); data `{reason:
    /// "changed"|"removed", serverId, toolName}`.
    /// The third value is the tool's `title`, if the catalogue lists one.
    fn resolve_tool(
        &self,
        server_id: Option<&str>,
        name: &str,
        digest: Option<&str>,
    ) -> HostResult<(String, String, Option<String>)> {
        let catalogue = self
            .shared
            .catalogue
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let (server, tool) = match server_id {
            Some(id) => (id.to_owned(), name.to_owned()),
            None => match catalogue.by_model_name(name) {
                Some(e) => (e.customization_id.clone(), e.tool.tool_name.clone()),
                None => {
                    return Err(HostError::new(ErrorCode::NotFound, format!("no tool {name:?} in the catalogue (pass serverId to call a tool by its original name)"))
                        .with_data(serde_json::json!({ "reason": "removed" })))
                }
            },
        };
        let listed = catalogue.server(&server);
        let listed = listed.as_ref().and_then(|st| st.get(&tool));
        let now = listed.map(|t| t.digest.clone());
        let title = listed.and_then(|t| {
            t.definition
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        let expected = match digest {
            Some(d) => Some(d.to_owned()),
            None => self
                .read_digests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .digest(&server, &tool),
        };
        if let Some(expected) = expected {
            let reason = match &now {
                None => Some("removed"),
                Some(d) if *d != expected => Some("changed"),
                Some(_) => None,
            };
            if let Some(reason) = reason {
                return Err(HostError::new(
                    ErrorCode::StaleTool,
                    format!("tool {tool:?} on {server} was {reason} since the catalogue was read; read it again (listTools) before calling"),
                )
                .with_data(serde_json::json!({ "reason": reason, "serverId": server, "toolName": tool })));
            }
        }
        Ok((server, tool, title))
    }

    /// Calls a tool; resolves to the MCP `CallToolResult` JSON (an `isError`
    /// result resolves too).
    ///
    /// With `chat`, `turnId` and `toolCallId` the call runs as that AHP tool
    /// call and the host emits its execution-phase actions (see
    /// [`crate::toolcall`]): progress, a mid-call step-up (403
    /// `insufficient_scope` → `chat/toolCallAuthRequired` and
    /// `session/inputNeededSet`; after `authenticate` → resolved, retried
    /// once), and `chat/toolCallComplete` (failed for every error below).
    ///
    /// Errors: `invalid_argument` (only some of chat/turnId/toolCallId),
    /// `not_found`, `stale_tool`, `disposed`, and those of
    /// [`crate::supervisor::call::call_tool`].
    pub async fn call_tool(
        &self,
        args: CallToolArgs,
        cancel: CancellationToken,
    ) -> HostResult<Value> {
        self.check_live()?;
        let (server_id, tool_name, title) = self.resolve_tool(
            args.server_id.as_deref(),
            &args.name,
            args.digest.as_deref(),
        )?;
        let handle = self
            .registry()
            .servers
            .get(&server_id)
            .cloned()
            .ok_or_else(|| {
                HostError::new(ErrorCode::NotFound, format!("no server {server_id:?}"))
            })?;
        let ctx = match (&args.chat, &args.turn_id, &args.tool_call_id) {
            (Some(chat), Some(turn_id), Some(tool_call_id))
                if chat.is_empty() || turn_id.is_empty() || tool_call_id.is_empty() =>
            {
                return Err(HostError::new(
                    ErrorCode::InvalidArgument,
                    "chat, turnId and toolCallId must not be empty",
                ));
            }
            (Some(chat), Some(turn_id), Some(tool_call_id)) => Some(ChatContext {
                chat: chat.clone(),
                turn_id: turn_id.clone(),
                tool_call_id: tool_call_id.clone(),
                customization_id: server_id.clone(),
            }),
            (None, None, None) => None,
            _ => {
                return Err(HostError::new(
                    ErrorCode::InvalidArgument,
                    "chat, turnId and toolCallId go together: give all three or none",
                ))
            }
        };
        let display = args
            .display_name
            .clone()
            .or(title)
            .unwrap_or_else(|| tool_name.clone());
        let limits = self.shared.limits;
        let ms = |v: Option<u64>, default: u64| {
            Duration::from_millis(v.unwrap_or(default).clamp(1, crate::limits::MAX_TIMEOUT_MS))
        };
        let req = CallRequest {
            name: tool_name,
            arguments: args.arguments,
            timeout: ms(args.timeout_ms, limits.call_timeout_ms),
            max_total: ms(args.max_total_timeout_ms, limits.call_max_total_ms),
        };
        let (result, client_completed) = tokio::select! {
            r = self.run_call(&handle, req, &cancel, ctx.as_ref(), &display) => r,
            _ = self.shared.disposed.cancelled() => (Err(HostError::new(ErrorCode::Disposed, "the host was disposed")), false),
        };
        if let Some(ctx) = &ctx {
            if !client_completed {
                self.shared
                    .emit_on(&ctx.chat, toolcall::complete_action(ctx, &display, &result));
            }
        }
        if let Err(e) = &result {
            // A refused refresh (401) or a refused redirect makes the session
            // unusable: the server leaves `ready` (step-up 403s do not).
            let step_up = e
                .data
                .as_ref()
                .and_then(|d| d.get("insufficientScope"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match e.code {
                ErrorCode::AuthRequired if !step_up => handle.send(Command::ConnectionFailed(
                    e.clone(),
                    handle.live.challenge(),
                )),
                ErrorCode::RedirectRefused => {
                    handle.send(Command::ConnectionFailed(e.clone(), None))
                }
                _ => {}
            }
        }
        result
    }

    /// Runs the MCP request, pausing once for a step-up token when the call
    /// runs in a chat. The flag is true when the client completed the AHP
    /// tool call itself (a failed `chat/toolCallComplete` while auth-required).
    async fn run_call(
        &self,
        handle: &ServerHandle,
        req: CallRequest,
        cancel: &CancellationToken,
        ctx: Option<&ChatContext>,
        display: &str,
    ) -> (HostResult<Value>, bool) {
        let mut stepped_up = false;
        loop {
            let shared = &self.shared;
            let mut on_progress = |p: Progress| {
                if let Some(ctx) = ctx {
                    shared.emit_on(
                        &ctx.chat,
                        toolcall::progress_action(ctx, p.progress, p.total, p.message.as_deref()),
                    );
                }
            };
            let result = call_tool(
                &handle.live,
                &handle.id,
                req.clone(),
                &self.shared.limits,
                cancel.clone(),
                &mut on_progress,
            )
            .await;
            let step_up = matches!(&result, Err(e) if e.code == ErrorCode::AuthRequired
                && e.data.as_ref().and_then(|d| d.get("insufficientScope")).and_then(Value::as_bool).unwrap_or(false));
            let Some(ctx) = ctx.filter(|_| step_up && !stepped_up) else {
                return (result, false);
            };
            stepped_up = true;
            match self
                .await_step_up(handle, ctx, &req.name, display, cancel)
                .await
            {
                StepUp::Resolved => continue,
                StepUp::Failed(e) => return (Err(e), false),
                StepUp::ClientCancelled(e) => return (Err(e), true),
            }
        }
    }

    /// Pauses a chat tool call on a step-up challenge until `authenticate`
    /// supplies a token for the advertised resource, the client completes the
    /// call as failed, the caller cancels, or the absolute limit passes.
    async fn await_step_up(
        &self,
        handle: &ServerHandle,
        ctx: &ChatContext,
        tool_name: &str,
        display: &str,
        cancel: &CancellationToken,
    ) -> StepUp {
        let TransportSpec::StreamableHttp(cfg) = &handle.spec.transport else {
            return StepUp::Failed(HostError::new(
                ErrorCode::AuthRequired,
                format!("{} asked for more scopes over stdio", handle.id),
            ));
        };
        let header = handle.live.challenge().unwrap_or_default();
        let challenge = crate::auth::AuthChallenge::from_header(&header, &cfg.url);
        let resource = match crate::auth::discover(&cfg.url, &challenge).await {
            Ok(r) => r,
            Err(e) => return StepUp::Failed(e),
        };
        let client_id = handle
            .spec
            .oauth_client
            .as_ref()
            .map(|c| c.client_id.as_str());
        let requirement = crate::auth::requirement(&challenge, true, resource, client_id);
        let mut auth = serde_json::to_value(&requirement).unwrap_or_default();
        if let Value::Object(m) = &mut auth {
            m.remove("kind");
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let key = (
            ctx.chat.clone(),
            ctx.turn_id.clone(),
            ctx.tool_call_id.clone(),
        );
        self.auth_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                key.clone(),
                AuthWait {
                    server_id: handle.id.clone(),
                    resource: requirement.resource.resource.clone(),
                    required_scopes: requirement.required_scopes.clone().unwrap_or_default(),
                    tx,
                },
            );
        self.shared
            .emit_on(&ctx.chat, toolcall::auth_required_action(ctx, &auth));
        self.shared.emit(toolcall::input_needed_set_action(
            ctx,
            tool_name,
            display,
            &format!("Calling {display}"),
            &auth,
        ));
        let end = tokio::select! {
            r = rx => r.unwrap_or(AuthWaitEnd::Gone),
            _ = cancel.cancelled() => AuthWaitEnd::Gone,
        };
        self.auth_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        self.shared.emit(toolcall::input_needed_removed_action(ctx));
        match end {
            AuthWaitEnd::Token => {
                self.shared.emit_on(&ctx.chat, toolcall::auth_resolved_action(ctx));
                StepUp::Resolved
            }
            AuthWaitEnd::ClientCancelled => StepUp::ClientCancelled(HostError::new(ErrorCode::Cancelled, format!("tools/call {tool_name:?} on {}: the client cancelled it while it waited for authentication", handle.id))),
            AuthWaitEnd::Gone => StepUp::Failed(HostError::new(ErrorCode::Cancelled, format!("tools/call {tool_name:?} on {} was cancelled while it waited for authentication", handle.id))),
        }
    }

    /// The live connection of ready server `server_id`.
    ///
    /// Errors: `not_found`, `server_not_ready`, `disposed`.
    fn ready_connection(&self, server_id: &str) -> HostResult<crate::supervisor::LiveConnection> {
        self.check_live()?;
        let handle = self
            .registry()
            .servers
            .get(server_id)
            .cloned()
            .ok_or_else(|| {
                HostError::new(ErrorCode::NotFound, format!("no server {server_id:?}"))
            })?;
        handle.live.connection().ok_or_else(|| {
            HostError::new(
                ErrorCode::ServerNotReady,
                format!("server {server_id} is not ready"),
            )
        })
    }

    /// Walks every page of `method` on `server_id` and returns the items
    /// under `key` (MCP 2025-11-25 "Utilities › Pagination").
    ///
    /// Errors: `not_found`, `server_not_ready`, `protocol_error`, `timeout`
    /// (a page took longer than `callTimeoutMs`), `auth_required`,
    /// `limit_exceeded` (pages, cursor, `maxListItems`, or `maxResultBytes`
    /// for all items together), `disposed`.
    async fn list_items(&self, server_id: &str, method: &str, key: &str) -> HostResult<Vec<Value>> {
        let conn = self.ready_connection(server_id)?;
        let limits = self.shared.limits;
        let walk = crate::supervisor::discovery::list_all(
            &conn.peer,
            conn.oversize.as_ref(),
            server_id,
            method,
            key,
            &limits,
            (limits.max_list_items, "maxListItems"),
        );
        let items = tokio::select! {
            r = walk => r.map_err(|e| list_failure(server_id, method, e))?,
            _ = self.shared.disposed.cancelled() => return Err(HostError::new(ErrorCode::Disposed, "the host was disposed")),
        };
        let items = Value::Array(items);
        crate::supervisor::call::check_value(&format!("{method} on {server_id}"), &items, &limits)?;
        let Value::Array(items) = items else {
            unreachable!()
        };
        Ok(items)
    }

    /// Sends one request and bounds its result.
    async fn request(&self, server_id: &str, method: &str, params: Value) -> HostResult<Value> {
        let conn = self.ready_connection(server_id)?;
        let limits = self.shared.limits;
        let timeout = Some(Duration::from_millis(limits.call_timeout_ms));
        let result = tokio::select! {
            r = crate::supervisor::discovery::request_raw(&conn.peer, conn.oversize.as_ref(), server_id, method, params, timeout) => r.map_err(|e| list_failure(server_id, method, e))?,
            _ = self.shared.disposed.cancelled() => return Err(HostError::new(ErrorCode::Disposed, "the host was disposed")),
        };
        crate::supervisor::call::check_value(
            &format!("{method} on {server_id}"),
            &result,
            &limits,
        )?;
        Ok(result)
    }

    /// MCP `resources/list`, every page: the server's `Resource` objects.
    /// Errors: as [`Host::list_items`].
    pub async fn list_resources(&self, server_id: &str) -> HostResult<Vec<Value>> {
        self.list_items(server_id, "resources/list", "resources")
            .await
    }

    /// MCP `resources/templates/list`, every page: `ResourceTemplate` objects.
    /// Errors: as [`Host::list_items`].
    pub async fn list_resource_templates(&self, server_id: &str) -> HostResult<Vec<Value>> {
        self.list_items(server_id, "resources/templates/list", "resourceTemplates")
            .await
    }

    /// MCP `resources/read`: the `ReadResourceResult` (`{contents: [...]}`).
    /// Errors: as [`Host::list_items`] (a JSON-RPC error, e.g. -32002
    /// resource not found, is `protocol_error` with `data.code`).
    pub async fn read_resource(&self, server_id: &str, uri: &str) -> HostResult<Value> {
        self.request(
            server_id,
            "resources/read",
            serde_json::json!({ "uri": uri }),
        )
        .await
    }

    /// MCP `prompts/list`, every page: `Prompt` objects.
    /// Errors: as [`Host::list_items`].
    pub async fn list_prompts(&self, server_id: &str) -> HostResult<Vec<Value>> {
        self.list_items(server_id, "prompts/list", "prompts").await
    }

    /// MCP `prompts/get` with string `arguments`: the `GetPromptResult`.
    /// Errors: as [`Host::read_resource`].
    pub async fn get_prompt(
        &self,
        server_id: &str,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> HostResult<Value> {
        let mut params = serde_json::json!({ "name": name });
        if let Some(a) = arguments {
            params["arguments"] = Value::Object(a);
        }
        self.request(server_id, "prompts/get", params).await
    }

    /// Stops every server gracefully (stdin close, SIGTERM, SIGKILL), then disposes.
    pub async fn shutdown(&self) {
        let handles: Vec<Arc<ServerHandle>> = std::mem::take(&mut self.registry().servers)
            .into_values()
            .collect();
        futures::future::join_all(handles.iter().map(|h| h.shutdown())).await;
        self.dispose_sync();
    }

    /// Kills every process group at once and ends all actors and pending
    /// calls (`disposed`). Synchronous, idempotent, needs no runtime.
    pub fn dispose_sync(&self) {
        self.shared.disposed.cancel();
        self.shared.processes.kill_all();
    }

    /// Process groups currently alive under this host.
    pub fn process_count(&self) -> usize {
        self.shared.processes.len()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.dispose_sync();
    }
}

fn list_failure(
    server_id: &str,
    method: &str,
    e: crate::supervisor::discovery::ListFailure,
) -> HostError {
    match e {
        crate::supervisor::discovery::ListFailure::Failed(e) => e,
        crate::supervisor::discovery::ListFailure::Auth(_) => HostError::new(
            ErrorCode::AuthRequired,
            format!("{method} on {server_id} was refused (authorization)"),
        ),
    }
}

fn starting() -> McpServerState {
    McpServerState::Starting(McpServerStartingState::default())
}

fn transport_spec(config: ServerConfig, vars: PluginVars) -> TransportSpec {
    match config {
        ServerConfig::Stdio(c) => TransportSpec::Stdio(c, vars),
        ServerConfig::StreamableHttp(h) => TransportSpec::StreamableHttp(h),
    }
}

fn file_uri(path: &Path, dir: bool) -> String {
    let url = if dir {
        url::Url::from_directory_path(path)
    } else {
        url::Url::from_file_path(path)
    };
    url.map(|u| u.to_string())
        .unwrap_or_else(|_| format!("file://{}", path.display()))
}

/// Re-exported for tests: the session snapshot type.
pub use session::empty_session_state;
