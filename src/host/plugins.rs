//! `addPlugin` and `addServer`: publish customizations (AHP
//! `PluginCustomization`, `McpServerCustomization`) and start one actor per
//! valid server. The plan of a plugin is the pure `plan::plan_plugin`; this
//! file does the I/O around it.

use std::path::Path;
use std::sync::Arc;

use ahp_types::actions::{SessionCustomizationUpdatedAction, StateAction};
use ahp_types::state::{Customization, CustomizationLoadState, CustomizationLoadingState};

use super::options::{AddPlugin, AddServer, PluginAdded};
use super::plan::{plan_plugin, starting, startup_timeout, transport_spec, PluginSource};
use super::Host;
use crate::config::launch::ensure_plugin_data_dir;
use crate::config::{parse_mcp_json, validate_entry_value, PluginVars, ServerConfig};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::session::{mcp_server_entry, plugin_entry};
use crate::supervisor::{ServerHandle, ServerSpec};

impl Host {
    /// Takes top-level id `id` (plugin or top-level server).
    ///
    /// # Errors
    /// `invalid_argument` (empty, or contains `/`), `already_exists`.
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
    ///
    /// # Errors
    /// `invalid_argument` (root is not a directory, bad name),
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
        let uri = (opts.uri.clone()).unwrap_or_else(|| file_uri(&root, /* dir */ true));
        let file = root.join("mcp.json");
        let loading = CustomizationLoadState::Loading(CustomizationLoadingState {});
        let entry = plugin_entry(&name, &uri, &name, loading, Vec::new());
        self.upsert(Customization::Plugin(entry));

        let loaded = match tokio::fs::read_to_string(&file).await {
            Ok(text) => parse_mcp_json(&text, &file.display().to_string()),
            Err(e) => Err(format!("{}: cannot read: {e}", file.display())),
        };
        let loaded = loaded.and_then(|mcp| {
            let data = ensure_plugin_data_dir(&self.data_dir, &name).map_err(|e| {
                let dir = self.data_dir.display();
                format!("cannot create PLUGIN_DATA under {dir}: {e}")
            })?;
            let vars = PluginVars {
                plugin_root: root.clone(),
                plugin_data: data,
            };
            Ok((mcp, vars))
        });
        let source = PluginSource {
            name: &name,
            uri: &uri,
            file_uri: &file_uri(&file, /* dir */ false),
            opts: &opts,
            limits: &self.shared.limits,
        };
        let plan = plan_plugin(&source, loaded);
        for record in plan.logs {
            self.shared.log(record);
        }
        self.upsert(plan.customization);
        let ids: Vec<String> = plan.specs.iter().map(|s| s.id.clone()).collect();
        self.spawn_actors(plan.specs);
        self.registry().plugins.insert(name.clone(), ids.clone());
        Ok(PluginAdded {
            id: name,
            servers: ids,
            load: plan.load,
        })
    }

    /// Adds a top-level server (AHP: host-originated `McpServerCustomization`)
    /// and starts it.
    ///
    /// # Errors
    /// `invalid_entry` (the config breaks a stage-2 rule; message names
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
            ServerConfig::Stdio(_) => file_uri(&root, /* dir */ true),
        });
        let data = ensure_plugin_data_dir(&self.data_dir, &opts.name).map_err(|e| {
            let dir = self.data_dir.display();
            let message = format!("cannot create PLUGIN_DATA under {dir}: {e}");
            fail(HostError::new(ErrorCode::Internal, message))
        })?;
        let vars = PluginVars {
            plugin_root: root,
            plugin_data: data,
        };
        let spec = ServerSpec {
            id: opts.name.clone(),
            transport: transport_spec(config, vars),
            startup_timeout: startup_timeout(opts.startup_timeout_ms, &self.shared.limits),
            oauth_client: opts.oauth.clone(),
        };
        let entry = mcp_server_entry(&opts.name, &uri, &opts.name, None, starting());
        self.upsert(Customization::McpServer(Box::new(entry)));
        self.spawn_actors(vec![spec]);
        Ok(opts.name)
    }

    /// Emits `session/customizationUpdated` (add or replace).
    fn upsert(&self, customization: Customization) {
        self.shared
            .emit(StateAction::SessionCustomizationUpdated(Box::new(
                SessionCustomizationUpdatedAction { customization },
            )));
    }

    /// Starts one actor per spec (each starts its server at once).
    fn spawn_actors(&self, specs: Vec<ServerSpec>) {
        let mut reg = self.registry();
        for spec in specs {
            let id = spec.id.clone();
            let handle = ServerHandle::start(self.shared.clone(), spec);
            reg.servers.insert(id, Arc::new(handle));
        }
    }
}

/// The `file://` URI of `path` (a directory's ends with `/`).
fn file_uri(path: &Path, dir: bool) -> String {
    let url = if dir {
        url::Url::from_directory_path(path)
    } else {
        url::Url::from_file_path(path)
    };
    url.map(|u| u.to_string())
        .unwrap_or_else(|_| format!("file://{}", path.display()))
}
