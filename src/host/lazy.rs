//! A call on a lazy server (issue 29 item 2; `crate::mcp::StartPolicy::lazy`):
//! the server is started if it is not running, the call waits for `ready`
//! (bounded by the server's startup timeout: the actor fails a start that
//! takes longer), and a tool that changed or vanished between the list the
//! caller saw (the cached one) and the server's fresh `tools/list` fails
//! closed with `stale_tool` while the fresh list is published.

use std::sync::Arc;
use std::time::Duration;

use ahp_types::state::{ChildCustomization, Customization, McpServerState, McpServerStoppedState};

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::catalogue::read_view::disabled;
use crate::catalogue::ServerTools;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::ToolsChangeReason;
use crate::mcp::activity::{Busy, Shown};
use crate::mcp::ServerSpec;
use crate::publisher::SessionPublisher;
use crate::session::server_enabled;
use crate::supervisor::{Command, ServerHandle};

impl Host {
    /// Before `tools/call` of `tool` is sent to `handle`'s server: the call
    /// counts as the server's activity (no idle stop while it runs) from
    /// here until the returned guard is dropped; a lazy server is started
    /// and waited for ([`Host::wake`]).
    ///
    /// # Errors
    /// `cancelled` when `cancel` fired already (aborted in the same JS
    /// tick: nothing reaches the server); those of [`Host::wake`].
    pub(super) async fn before_send<'h>(
        &self,
        handle: &'h ServerHandle,
        tool: &str,
        cancel: &CancellationToken,
    ) -> HostResult<Busy<'h>> {
        if cancel.is_cancelled() {
            let what = format!("tools/call {tool:?} on {} was cancelled", handle.id);
            return Err(HostError::new(ErrorCode::Cancelled, what));
        }
        let busy = handle.live.activity().begin();
        self.wake(handle, tool, cancel).await?;
        Ok(busy)
    }

    /// Before a call of `tool` on `handle`'s server: when the server is lazy
    /// and not ready, starts it (unless a start is under way) and waits
    /// until it is `ready`, then checks that `tool` is what the caller saw
    /// before the start. Returns at once for any other server.
    ///
    /// # Errors
    /// `server_disabled` (the server or its plugin is toggled off, also
    /// while the call waited: it is not started); `tool_disabled` (the
    /// server's tool filter left `tool` out while the call waited: it is
    /// not sent); `server_removed`
    /// (removed while the call waited); the start's failure (its state's `errorType`: `server_exited`,
    /// `startup_timeout`, `auth_required`, …; the message names the
    /// server); `server_stopped` (stopped while the call waited);
    /// `stale_tool` (data `{reason: "changed" | "removed", serverId,
    /// toolName}`: the fresh list differs, and is published); `cancelled`;
    /// after twice the startup timeout without an outcome, the failure of
    /// the last attempt (a start being retried after a crash), else `timeout`.
    async fn wake(
        &self,
        handle: &ServerHandle,
        tool: &str,
        cancel: &CancellationToken,
    ) -> HostResult<()> {
        if !handle.spec.start.is_lazy() || handle.live.session().is_some() {
            return Ok(());
        }
        self.check_enabled(handle)?;
        let seen = self.tool_digest(&handle.id, tool);
        self.started(handle, cancel).await?;
        let catalogue = self.shared.publisher().catalogue();
        let catalogue = catalogue
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A filter change while the call waited for the start (checked
        // before the wait too).
        if let Some(reason) = catalogue.why_disabled(&handle.id, tool) {
            return Err(disabled(handle.id.clone(), tool.to_owned(), reason));
        }
        let Some(seen) = seen else {
            return Ok(());
        };
        self.read_view
            .check_fresh(&catalogue, &handle.id, tool, Some(&seen))
            .map(|_| ())
    }

    /// Starts `handle`'s server if it is stopped or failed, and waits for
    /// its `ready` state with a live connection (see [`Host::wake`]).
    async fn started(&self, handle: &ServerHandle, cancel: &CancellationToken) -> HostResult<()> {
        let id = &handle.id;
        let mut shown = handle.live.activity().shown();
        let (mut since, first) = shown.borrow_and_update().clone();
        // A start under way when the call came (not asked by it): a `stopped`
        // after it is a stop request or a toggle off, not an idle stop.
        let under_way = first == Shown::Starting;
        let (mut asked, mut last_failure) = (false, None);
        let within = handle.spec.startup_timeout.saturating_mul(2);
        let deadline = Instant::now() + within.max(Duration::from_millis(1));
        loop {
            let (n, state) = shown.borrow_and_update().clone();
            if n > since && !self.registered(handle) {
                let what = format!("server {id} was removed while a call waited for its start");
                return Err(HostError::new(ErrorCode::ServerRemoved, what));
            }
            match state {
                Shown::Ready if handle.live.session().is_some() => return Ok(()),
                Shown::Failed(e) if n > since || !asked => {
                    if asked {
                        return Err(e);
                    }
                    self.check_enabled(handle)?;
                    (asked, since) = (true, n);
                    handle.send(Command::Start);
                }
                Shown::Stopped if n > since && (asked || under_way) => {
                    self.check_enabled(handle)?;
                    let what = format!("server {id} was stopped while a call waited for its start");
                    return Err(HostError::new(ErrorCode::ServerStopped, what));
                }
                Shown::Stopped if !asked => {
                    self.check_enabled(handle)?;
                    (asked, since) = (true, n);
                    handle.send(Command::Start);
                }
                Shown::Restarting(e) => last_failure = Some(e),
                _ => {}
            }
            tokio::select! {
                changed = shown.changed() => if changed.is_err() {
                    let what = format!("server {id} was removed while a call waited for its start");
                    return Err(HostError::new(ErrorCode::ServerRemoved, what));
                },
                () = cancel.cancelled() => {
                    let what = format!("the call was cancelled while server {id} started");
                    return Err(HostError::new(ErrorCode::Cancelled, what));
                }
                // Still restarting: the last failure says why, else `timeout`.
                () = tokio::time::sleep_until(deadline) => return Err(last_failure.unwrap_or_else(|| {
                    let ms = within.as_millis();
                    let what = format!("server {id} was not ready within {ms} ms for a call");
                    HostError::new(ErrorCode::Timeout, what)
                })),
            }
        }
    }

    /// `server_disabled` when `handle`'s server (or its plugin) is toggled
    /// off now: a call never starts it.
    fn check_enabled(&self, handle: &ServerHandle) -> HostResult<()> {
        let publisher = self.shared.publisher();
        if publisher.read_state(|state| server_enabled(state, &handle.id)) {
            return Ok(());
        }
        let what = format!("server {} is disabled", handle.id);
        Err(HostError::new(ErrorCode::ServerDisabled, what))
    }

    /// Whether `handle` is still the registered handle of its server (not
    /// removed, nor replaced by a later add of the same id).
    fn registered(&self, handle: &ServerHandle) -> bool {
        (self.registry().servers.get(&handle.id))
            .is_some_and(|h| std::ptr::eq(Arc::as_ptr(h), handle))
    }

    /// The digest of tool `tool` of server `server` in the catalogue now.
    fn tool_digest(&self, server: &str, tool: &str) -> Option<String> {
        let catalogue = self.shared.publisher().catalogue();
        let catalogue = catalogue
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let tools = catalogue.server(server)?;
        tools.get(tool).map(|t| t.digest().to_owned())
    }
}

/// The cached tool lists of the lazy servers being added (see
/// [`Host::cached_tools`]): put in the catalogue and published together,
/// their servers created `stopped` and their actors dormant.
#[derive(Default)]
pub(super) struct Cached {
    tools: Vec<(String, Arc<ServerTools>)>,
}

impl Cached {
    /// Whether server `id` has cached tools.
    pub(super) fn has(&self, id: &str) -> bool {
        self.tools.iter().any(|(cached, _)| cached == id)
    }

    /// Puts the cached tools in the catalogue (`on`), or takes them out
    /// again (an add that a `remove` overtook); nothing is published.
    pub(super) fn set(&self, publisher: &SessionPublisher, on: bool) {
        for (id, tools) in &self.tools {
            publisher.update_tools(id, on.then(|| tools.clone()));
        }
    }

    /// Publishes the catalogue once for all of them (`toolsChanged`
    /// reason `cached`, one event per server).
    pub(super) fn publish(&self, publisher: &SessionPublisher) {
        if !self.tools.is_empty() {
            let ids: Vec<&str> = self.tools.iter().map(|(id, _)| id.as_str()).collect();
            publisher.publish_tools_of(&ids, ToolsChangeReason::Cached);
            // Reading the caches freed their parsed trees on another
            // thread: give those pages back.
            crate::reclaim::trim_later();
        }
    }

    /// `customization` (a plugin, or a top-level server) with each server
    /// that has cached tools `stopped` instead of `starting`.
    pub(super) fn stopped_in(&self, customization: &mut Customization) {
        let stopped = || McpServerState::Stopped(McpServerStoppedState {});
        match customization {
            Customization::McpServer(s) if self.has(&s.id) => s.state = stopped(),
            Customization::Plugin(p) => {
                for child in p.children.iter_mut().flatten() {
                    if let ChildCustomization::McpServer(s) = child {
                        if self.has(&s.id) {
                            s.state = stopped();
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

impl Host {
    /// The cached tool lists (`crate::mcp::tool_cache`) of the lazy servers
    /// among `specs`, read concurrently (each read bounded); a server
    /// without a usable cache (none, another key, too old, not a valid
    /// listing) is left out and starts at once.
    pub(super) async fn cached_tools(&self, specs: &[ServerSpec]) -> Cached {
        let opener = self.shared.opener();
        let lazy: Vec<&ServerSpec> = specs.iter().filter(|s| s.start.is_lazy()).collect();
        if lazy.is_empty() {
            return Cached::default();
        }
        let keys = lazy.iter().map(|s| opener.tool_cache_key(s)).collect();
        let ids: Vec<String> = lazy.iter().map(|s| s.id.clone()).collect();
        let limits = *self.shared.limits();
        // Checked on the reading thread too: the raw trees never reach the runtime.
        let build = move |i: usize, raw| {
            let id: &String = &ids[i];
            let tools = ServerTools::build_after(id, raw, &limits, None).ok()?;
            Some((id.clone(), Arc::new(tools)))
        };
        let (all, refused) = opener.tool_cache().load_all(keys, build).await;
        if let Some(why) = refused {
            let level = crate::events::LogLevel::Warn;
            let record = crate::events::log(level, "host.config", None, why);
            self.shared.publisher().log(record);
        }
        Cached {
            tools: all.into_iter().flatten().collect(),
        }
    }
}
