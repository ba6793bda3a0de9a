//! A call on a lazy server (issue 29 item 2; `crate::mcp::StartPolicy::lazy`):
//! the server is started if it is not running (one start for concurrent
//! calls), the call waits for `ready` (bounded by the server's startup
//! timeout: the actor fails a start that takes longer; and by the call's
//! own time limits), and a tool that changed or vanished between the list the
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
use crate::error::{ErrorCode, HostError, HostResult, TimeoutKind};
use crate::events::ToolsChangeReason;
use crate::mcp::activity::{Busy, Shown};
use crate::mcp::request::call_timeout;
use crate::mcp::tool_call::CallRequest;
use crate::mcp::ServerSpec;
use crate::publisher::SessionPublisher;
use crate::session::server_enabled;
use crate::supervisor::{Command, ServerHandle};

impl Host {
    /// Before `req` (`tools/call`) is sent to `handle`'s server: the call
    /// counts as the server's activity (no idle stop while it runs) from
    /// here until the returned guard is dropped; a lazy server is started
    /// and waited for ([`Host::wake`]) within the call's limits
    /// (`req.timeout`, `req.max_total`; see [`StartWait`]), the time waited
    /// recorded in `req.waited` (it counts against `req.max_total`).
    ///
    /// # Errors
    /// `cancelled` when `cancel` fired already (aborted in the same JS
    /// tick: nothing reaches the server); those of [`Host::wake`].
    pub(super) async fn before_send<'h>(
        &self,
        handle: &'h ServerHandle,
        req: &mut CallRequest,
        cancel: &CancellationToken,
    ) -> HostResult<Busy<'h>> {
        let tool = &req.name;
        if cancel.is_cancelled() {
            let what = format!("tools/call {tool:?} on {} was cancelled", handle.id);
            return Err(HostError::new(ErrorCode::Cancelled, what));
        }
        let (busy, asked) = (handle.live.activity().begin(), Instant::now());
        let limits = (req.timeout, req.max_total);
        self.wake(handle, tool, cancel, limits).await?;
        req.waited = asked.elapsed();
        Ok(busy)
    }

    /// Before a call of `tool` on `handle`'s server: when the server is lazy
    /// and not ready, starts it (unless a start is under way: concurrent
    /// calls share one start) and waits until it is `ready`, then checks
    /// that `tool` is what the caller saw before the start. Returns at once
    /// for any other server. The wait ends with the call's own limits
    /// (`limits`: inactivity, absolute; nothing comes from the server while
    /// it starts), the start going on.
    ///
    /// # Errors
    /// `server_disabled` (the server or its plugin is toggled off, also
    /// while the call waited: it is not started); `tool_disabled` (the
    /// server's tool filter left `tool` out while the call waited: it is
    /// not sent); `server_removed` (removed while the call waited); the
    /// failure of the start the call waited on, whether it asked for it or
    /// found it under way (its state's `errorType`: `server_exited`,
    /// `startup_timeout`, `auth_required`, …; the message names the
    /// server; the server is not started again for those calls);
    /// `server_stopped` (stopped while the call waited); `stale_tool` (data
    /// `{reason: "changed" | "removed", serverId, toolName}`: the fresh list
    /// differs, and is published); `cancelled`; `timeout` (data `{kind:
    /// "inactivity" | "total", ms}`) when the call's limit passed first; after
    /// twice the startup timeout without an outcome, the failure of the last
    /// attempt (a start being retried after a crash), else `timeout`.
    async fn wake(
        &self,
        handle: &ServerHandle,
        tool: &str,
        cancel: &CancellationToken,
        limits: (Duration, Duration),
    ) -> HostResult<()> {
        if !handle.spec.start.is_lazy() || handle.live.session().is_some() {
            return Ok(());
        }
        self.check_enabled(handle)?;
        let seen = self.tool_digest(&handle.id, tool);
        let wait = StartWait::new(handle, tool, limits);
        self.started(handle, cancel, wait).await?;
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
    ///
    /// The call waits on one start: the one it asks for when it finds the
    /// server `stopped` or failed ([`Command::Wake`], which the actor
    /// ignores when another call's start came first: then that one), or the
    /// one under way when it came. Whatever is shown after that start
    /// began ends the wait: `ready`, its failure, a stop. A server found
    /// `ready` but closing (an idle stop) is started once it is `stopped`.
    async fn started(
        &self,
        handle: &ServerHandle,
        cancel: &CancellationToken,
        wait: StartWait,
    ) -> HostResult<()> {
        let id = &handle.id;
        let mut shown = handle.live.activity().shown();
        let (mut since, _) = shown.borrow_and_update().clone();
        // Whether the start the call waits on is known (not while closing).
        let (mut attached, mut last_failure) = (false, None);
        loop {
            let (n, state) = shown.borrow_and_update().clone();
            if n > since && !self.registered(handle) {
                return Err(removed(id));
            }
            match state {
                Shown::Ready if handle.live.session().is_some() => return Ok(()),
                Shown::Stopped | Shown::Failed(_) if !attached => {
                    self.check_enabled(handle)?;
                    handle.send(Command::Wake { seen: n });
                    (attached, since) = (true, n);
                }
                Shown::Starting => (attached, since) = (true, n),
                Shown::Restarting(e) => (attached, since, last_failure) = (true, n, Some(e)),
                _ if n == since => {}
                Shown::Failed(e) => return Err(e),
                Shown::Stopped => {
                    self.check_enabled(handle)?;
                    // The app's trust callback refused the start (`crate::policy`).
                    if let Some(refused) = self.shared.gate().refusal(id) {
                        return Err(refused);
                    }
                    let what = format!("server {id} was stopped while a call waited for its start");
                    return Err(HostError::new(ErrorCode::ServerStopped, what));
                }
                Shown::Ready => {}
            }
            tokio::select! {
                changed = shown.changed() => if changed.is_err() {
                    return Err(removed(id));
                },
                () = cancel.cancelled() => {
                    let what = format!("the call was cancelled while server {id} started");
                    return Err(HostError::new(ErrorCode::Cancelled, what));
                }
                () = tokio::time::sleep_until(wait.deadline) => return Err(wait.expired(last_failure)),
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

/// `server_removed`: server `id` was removed while a call waited for its start.
fn removed(id: &str) -> HostError {
    let what = format!("server {id} was removed while a call waited for its start");
    HostError::new(ErrorCode::ServerRemoved, what)
}

/// How long a call waits for a lazy server's start ([`Host::started`]),
/// and how it fails when that passed.
struct StartWait {
    /// When the wait ends.
    deadline: Instant,
    /// The call's `tools/call "<tool>" on <server>` and its limit that
    /// ends the wait (kind, limit), if one does; else twice the startup
    /// timeout does.
    by_call: Option<(String, TimeoutKind, Duration)>,
    /// Twice the server's startup timeout, and its id.
    within: (Duration, String),
}

impl StartWait {
    /// The wait of a call of `tool` on `handle`'s server with `limits`
    /// (inactivity, absolute): whichever ends first of those two (nothing
    /// comes from the server while it starts, so the inactivity limit runs
    /// too) and twice the startup timeout (a start being retried after a
    /// crash; one attempt fails by its startup timeout).
    fn new(handle: &ServerHandle, tool: &str, (timeout, max_total): (Duration, Duration)) -> Self {
        let (kind, limit) = match max_total < timeout {
            true => (TimeoutKind::Total, max_total),
            false => (TimeoutKind::Inactivity, timeout),
        };
        let within = handle.spec.startup_timeout.saturating_mul(2);
        let context = format!("tools/call {tool:?} on {}", handle.id);
        let by_call = (limit <= within).then_some((context, kind, limit));
        let wait = limit.min(within).max(Duration::from_millis(1));
        Self {
            deadline: Instant::now() + wait,
            by_call,
            within: (within, handle.id.clone()),
        }
    }

    /// The call's error once the wait passed: the `timeout` a call on a
    /// ready server gets for the same limit (data `{kind, ms}`), saying the
    /// start goes on; else (twice the startup timeout) `last_failure` (a
    /// start being retried after a crash), else `timeout`.
    fn expired(self, last_failure: Option<HostError>) -> HostError {
        let (within, id) = self.within;
        if let Some((context, kind, limit)) = self.by_call {
            let mut e = call_timeout(&context, kind, limit);
            e.message
                .push_str(&format!(" while server {id} started (the start goes on)"));
            return e;
        }
        last_failure.unwrap_or_else(|| {
            let ms = within.as_millis();
            let what = format!("server {id} was not ready within {ms} ms for a call");
            HostError::new(ErrorCode::Timeout, what)
        })
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
