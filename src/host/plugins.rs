//! `addPlugin` and `addServer`: publish customizations (AHP
//! `PluginCustomization`, `McpServerCustomization`) and start one actor per
//! valid server. The plan of a plugin is the pure `plan::plan_plugin`; this
//! file does the I/O around it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ahp_types::actions::{SessionCustomizationUpdatedAction, StateAction};
use ahp_types::state::{Customization, CustomizationLoadState, CustomizationLoadingState};
use serde_json::{json, Value};

use super::options::{AddPlugin, AddServer, PluginAdded};
use super::plan::{
    plan_plugin, server_sandbox, starting, startup_timeout, transport_spec, with_sandbox_meta,
    PluginSource,
};
use super::registry::InFlight;
use super::Host;
use crate::config::launch::ensure_plugin_data_dir;
use crate::config::{
    literal_placeholders_of, parse_mcp_json, read_config_file, validate_entry_value,
    validate_literal_entry_value, PluginVars, ReadBounds, ServerConfig,
};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::mcp::ServerSpec;
use crate::session::{mcp_server_entry, plugin_entry, LITERAL_PLACEHOLDERS_META_KEY};
use crate::supervisor::ServerHandle;

/// `addPlugin`, as named in messages.
const ADD_PLUGIN: &str = "addPlugin";
/// `addServer`, as named in messages.
const ADD_SERVER: &str = "addServer";

/// An add in flight of top-level id `id`: holds its reservation in the
/// registry. The add calls [`Adding::check`] after each `.await` and
/// publishes only through [`Adding::publish`] and [`Adding::go_live`].
///
/// Dropped without going live (an error, `cancelled`, or the future
/// dropped), it frees the id, or, once a customization was published,
/// leaves the id live without servers for `remove` to take away; either
/// way it then wakes a `remove` waiting for it (`InFlight::ended`).
struct Adding<'h> {
    host: &'h Host,
    id: String,
    flight: InFlight,
    /// A plugin (its children are recorded), not a top-level server.
    plugin: bool,
    /// A `session/customizationUpdated` for `id` has been emitted.
    published: bool,
    /// [`Adding::go_live`] ran.
    ended: bool,
}

impl Adding<'_> {
    /// # Errors
    /// `cancelled` once `remove(id)` was called: the add stops here and
    /// publishes nothing further.
    fn check(&self, method: &str) -> HostResult<()> {
        if self.flight.removal.is_cancelled() {
            return Err(cancelled_by_remove(method, &self.id));
        }
        Ok(())
    }

    /// Emits `session/customizationUpdated` for the id.
    fn publish(&mut self, customization: Customization) {
        self.host.upsert(customization);
        self.published = true;
    }

    /// Makes the id live and starts one actor per spec (each starts its
    /// server at once).
    ///
    /// # Errors
    /// `cancelled` when `remove(id)` was called first: no actor is started.
    fn go_live(
        mut self,
        method: &str,
        specs: Vec<ServerSpec>,
        (cached, screened): (super::lazy::Cached, super::policy::Screened),
    ) -> HostResult<()> {
        self.ended = true;
        let shared = &self.host.shared;
        let ids: Vec<String> = specs.iter().map(|s| s.id.clone()).collect();
        let children = (self.plugin).then(|| ids.clone());
        // Each server's tool filter is in the catalogue before its actor
        // can list a tool, and forgotten again if none starts.
        let configured: Vec<_> = (specs.iter())
            .map(|s| (s.id.clone(), s.tool_filter.clone()))
            .collect();
        let filters = |set: bool| {
            let mut catalogue = (shared.publisher().catalogue().write())
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for (id, filter) in &configured {
                catalogue.set_filter(id, set.then_some(filter));
            }
        };
        filters(true);
        cached.set(shared.publisher(), true);
        let start = || {
            let start = |spec: ServerSpec| {
                let id = spec.id.clone();
                let first = screened.begin(&id, cached.has(&id));
                (
                    id,
                    Arc::new(ServerHandle::start(shared.clone(), spec, first)),
                )
            };
            specs.into_iter().map(start).collect()
        };
        // Lock: the registry alone (starting an actor takes no lock).
        let started = self.host.registry().go_live(&self.id, children, start);
        if !started {
            cached.set(shared.publisher(), false);
            filters(false);
            return Err(cancelled_by_remove(method, &self.id));
        }
        cached.publish(shared.publisher());
        // Tasks a former host left recorded for these servers (`tasks.rs`).
        self.host.resume_tasks(&ids);
        Ok(())
    }
}

impl Drop for Adding<'_> {
    fn drop(&mut self) {
        if !self.ended {
            let mut reg = self.host.registry();
            if self.published {
                reg.go_live(&self.id, self.plugin.then(Vec::new), Vec::new);
            } else {
                reg.release(&self.id);
            }
        }
        self.flight.ended.cancel();
    }
}

/// The `cancelled` error of an add of `id` that a `remove(id)` overtook.
fn cancelled_by_remove(method: &str, id: &str) -> HostError {
    HostError::new(
        ErrorCode::Cancelled,
        format!("{method} {id:?} was cancelled: remove({id:?}) was called before it finished"),
    )
}

impl Host {
    /// Takes top-level id `id` (plugin or top-level server) for an add.
    ///
    /// # Errors
    /// `invalid_argument` (empty, or contains `/`), `already_exists`
    /// (being added, live, or being removed).
    fn reserve_id(&self, id: &str, plugin: bool) -> HostResult<Adding<'_>> {
        let flight = self.registry().reserve(id)?;
        Ok(Adding {
            host: self,
            id: id.to_owned(),
            flight,
            plugin,
            published: false,
            ended: false,
        })
    }

    /// Reads `<root>/mcp.json`, publishes the plugin customization and starts
    /// its valid servers (Agent Plugins "Validate in two stages").
    ///
    /// A broken file is not an error of this call: the plugin is added with
    /// load state `error` (message with file, line:column and rule). So is
    /// a file that cannot be used: missing, not a regular file (a named
    /// pipe, a device, a directory), larger than `maxConfigFileBytes`, not
    /// UTF-8, or not read within `configReadTimeoutMs` (see
    /// `Host::read_mcp_json`); the message names the file and why.
    ///
    /// The id is taken before the first `.await` when `opts.name` is given
    /// (else once the root is resolved). A `remove` of the id while this
    /// runs stops it: nothing further is published, no server starts.
    ///
    /// # Errors
    /// `invalid_argument` (root is not a directory, bad name),
    /// `already_exists` (the id is being added, live or being removed),
    /// `cancelled` (`remove(id)` was called before this finished; the
    /// message names the id), `disposed` (also when the host is disposed
    /// while `mcp.json` is read).
    pub async fn add_plugin(&self, opts: AddPlugin) -> HostResult<PluginAdded> {
        self.check_live()?;
        let early = match &opts.name {
            Some(name) => Some(self.reserve_id(name, /* plugin */ true)?),
            None => None,
        };
        let root = plugin_root(&opts.root).await?;
        let mut adding = match early {
            Some(adding) => adding,
            None => self.reserve_id(&default_name(&root), /* plugin */ true)?,
        };
        adding.check(ADD_PLUGIN)?;
        let name = adding.id.clone();
        let uri = (opts.uri.clone()).unwrap_or_else(|| file_uri(&root, /* dir */ true));
        let file = root.join("mcp.json");
        let loading = CustomizationLoadState::Loading(CustomizationLoadingState {});
        adding.publish(Customization::Plugin(plugin_entry(
            &name,
            &uri,
            &name,
            loading,
            Vec::new(),
        )));

        let text = self.read_mcp_json(&adding, &file).await?;
        adding.check(ADD_PLUGIN)?;
        let loaded = text.and_then(|text| parse_mcp_json(&text, &file.display().to_string()));
        let loaded = loaded.and_then(|mcp| {
            let stdio = mcp
                .servers
                .iter()
                .any(|e| matches!(e.config, Ok(ServerConfig::Stdio(_))));
            Ok((mcp, self.plugin_vars(&name, &root, stdio)?))
        });
        let source = PluginSource {
            name: &name,
            uri: &uri,
            file_uri: &file_uri(&file, /* dir */ false),
            opts: &opts,
            limits: self.shared.limits(),
            lazy_start: self.lazy_start,
            sandbox: self.sandbox.as_ref(),
        };
        let plan = plan_plugin(&source, loaded);
        adding.check(ADD_PLUGIN)?;
        for record in plan.logs {
            self.shared.publisher().log(record);
        }
        // The app's policy: a denied server is published in `error`, never started.
        let screened = self.screen(&plan.specs);
        let cached = self.cached_tools(&screened.allowed(&plan.specs)).await;
        adding.check(ADD_PLUGIN)?;
        let mut customization = plan.customization;
        cached.stopped_in(&mut customization);
        screened.apply(&mut customization);
        adding.publish(customization);
        let ids: Vec<String> = plan.specs.iter().map(|s| s.id.clone()).collect();
        adding.go_live(ADD_PLUGIN, plan.specs, (cached, screened))?;
        Ok(PluginAdded {
            id: name,
            servers: ids,
            load: plan.load,
        })
    }

    /// The text of a plugin's `mcp.json` (`file`), read within
    /// `maxConfigFileBytes` and `configReadTimeoutMs` (see
    /// [`read_config_file`]: a regular file only; a named pipe or a device
    /// is refused without waiting on it). `Ok(Err(message))`: the file
    /// cannot be used, so the plugin's load state is `error`.
    ///
    /// # Errors
    /// `cancelled` (`remove` of the plugin's id came first) or `disposed`:
    /// the read is abandoned at once.
    async fn read_mcp_json(
        &self,
        adding: &Adding<'_>,
        file: &Path,
    ) -> HostResult<Result<String, String>> {
        let limits = &self.shared.limits();
        let bounds = ReadBounds {
            max_bytes: limits.max_config_file_bytes,
            timeout: Duration::from_millis(limits.config_read_timeout_ms),
            limit_name: "maxConfigFileBytes",
            timeout_name: "configReadTimeoutMs",
        };
        let read = async {
            tokio::select! {
                text = read_config_file(file, bounds) => Ok(text),
                () = adding.flight.removal.cancelled() => Err(cancelled_by_remove(ADD_PLUGIN, &adding.id)),
            }
        };
        self.until_disposed(read).await
    }

    /// `${PLUGIN_ROOT}` and `${PLUGIN_DATA}` of plugin `name`; the data
    /// directory is created only for a `stdio` server (`create`): a
    /// Streamable HTTP server never sees `PLUGIN_DATA`, so none is left
    /// behind for it.
    ///
    /// # Errors
    /// The message saying why `PLUGIN_DATA` could not be created.
    fn plugin_vars(&self, name: &str, root: &Path, create: bool) -> Result<PluginVars, String> {
        let data = match create {
            true => ensure_plugin_data_dir(&self.data_dir, name).map_err(|e| {
                let dir = self.data_dir.display();
                format!("cannot create PLUGIN_DATA under {dir}: {e}")
            })?,
            false => PathBuf::new(),
        };
        Ok(PluginVars {
            plugin_root: root.to_path_buf(),
            plugin_data: data,
        })
    }

    /// Adds a top-level server (AHP: host-originated `McpServerCustomization`)
    /// and starts it.
    ///
    /// # Errors
    /// `invalid_entry` (the config breaks a stage-2 rule; message names
    /// the field), `invalid_argument`, `already_exists` (the id is being
    /// added, live or being removed), `cancelled` (`remove(id)` came
    /// first), `disposed`.
    pub async fn add_server(&self, opts: AddServer) -> HostResult<String> {
        self.check_live()?;
        let config = match opts.literal {
            true => validate_literal_entry_value(&opts.name, &opts.config),
            false => validate_entry_value(&opts.name, &opts.config),
        };
        let config = config.map_err(|m| HostError::new(ErrorCode::InvalidEntry, m))?;
        let mut adding = self.reserve_id(&opts.name, /* plugin */ false)?;
        let (spec, uri) = self.server_spec(&opts, config)?;
        adding.check(ADD_SERVER)?;
        let mut entry = mcp_server_entry(&opts.name, &uri, &opts.name, None, starting(spec.start));
        if !opts.literal {
            entry.meta = self.literal_placeholders(&opts);
        }
        entry.meta = with_sandbox_meta(entry.meta.take(), spec.sandbox.as_ref());
        let screened = self.screen(std::slice::from_ref(&spec));
        let cached = self
            .cached_tools(&screened.allowed(std::slice::from_ref(&spec)))
            .await;
        adding.check(ADD_SERVER)?;
        let mut customization = Customization::McpServer(Box::new(entry));
        cached.stopped_in(&mut customization);
        screened.apply(&mut customization);
        adding.publish(customization);
        adding.go_live(ADD_SERVER, vec![spec], (cached, screened))?;
        Ok(opts.name)
    }

    /// The `_meta` of top-level server `opts.name` when its `url` or
    /// `headers` hold `${…}` placeholders, which are sent literally (as in a
    /// plugin, see `plan::plan_plugin`), with one `warn` log each; `None`
    /// without any.
    fn literal_placeholders(&self, opts: &AddServer) -> Option<serde_json::Map<String, Value>> {
        let found = literal_placeholders_of(&opts.config);
        let mut diagnostics = Vec::new();
        for p in &found {
            let message = p.message(&opts.name);
            let text = format!("addServer: {message}");
            self.shared
                .publisher()
                .log(log(LogLevel::Warn, "host.config", None, text));
            diagnostics
                .push(json!({"field": p.field, "placeholder": p.placeholder, "message": message}));
        }
        let key = LITERAL_PLACEHOLDERS_META_KEY.to_owned();
        (!found.is_empty()).then(|| [(key, Value::Array(diagnostics))].into_iter().collect())
    }

    /// The spec and customization `uri` of top-level server `opts.name`
    /// (creates its `PLUGIN_DATA` directory).
    ///
    /// # Errors
    /// `internal` (no cwd, no `PLUGIN_DATA`), `invalid_argument` (bad root).
    fn server_spec(
        &self,
        opts: &AddServer,
        config: ServerConfig,
    ) -> HostResult<(ServerSpec, String)> {
        let root = match &opts.root {
            Some(r) => r.clone(),
            None => std::env::current_dir().map_err(|e| {
                HostError::new(ErrorCode::Internal, format!("cannot read cwd: {e}"))
            })?,
        };
        let root = std::fs::canonicalize(&root).map_err(|e| {
            HostError::new(
                ErrorCode::InvalidArgument,
                format!("root {}: {e}", root.display()),
            )
        })?;
        let uri = opts.uri.clone().unwrap_or_else(|| match &config {
            ServerConfig::StreamableHttp(h) => crate::redact::shown_server_url(&h.url),
            ServerConfig::Stdio(_) => file_uri(&root, /* dir */ true),
        });
        let uri = crate::redact::without(&uri, &opts.secrets);
        let stdio = matches!(config, ServerConfig::Stdio(_));
        let vars = self
            .plugin_vars(&opts.name, &root, stdio)
            .map_err(|m| HostError::new(ErrorCode::Internal, m))?;
        let transport = transport_spec(config, vars);
        let sandbox = server_sandbox(&transport, &opts.sandbox, self.sandbox.as_ref());
        let spec = ServerSpec {
            id: opts.name.clone(),
            transport,
            startup_timeout: startup_timeout(opts.startup_timeout_ms, self.shared.limits()),
            oauth_client: opts.oauth.clone(),
            protocol: opts.protocol,
            secret_values: opts.secrets.clone(),
            tool_filter: opts.tool_filter.clone(),
            call_limits: opts.call_limits,
            start: opts.start.or_default(self.lazy_start),
            sandbox,
        };
        Ok((spec, uri))
    }

    /// Emits `session/customizationUpdated` (add or replace).
    fn upsert(&self, customization: Customization) {
        self.shared
            .publisher()
            .emit(StateAction::SessionCustomizationUpdated(Box::new(
                SessionCustomizationUpdatedAction { customization },
            )));
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

/// The canonical directory of a plugin root.
///
/// # Errors
/// `invalid_argument` (missing, or not a directory).
async fn plugin_root(root: &Path) -> HostResult<PathBuf> {
    let canonical = tokio::fs::canonicalize(root).await.map_err(|e| {
        HostError::new(
            ErrorCode::InvalidArgument,
            format!("plugin root {}: {e}", root.display()),
        )
    })?;
    if !canonical.is_dir() {
        return Err(HostError::new(
            ErrorCode::InvalidArgument,
            format!("plugin root {} is not a directory", canonical.display()),
        ));
    }
    Ok(canonical)
}

/// A plugin's default name: its root directory's name.
fn default_name(root: &Path) -> String {
    root.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
