//! A call on a lazy server (issue 29 item 2; `crate::mcp::StartPolicy::lazy`):
//! the server is started if it is not running, the call waits for `ready`
//! (bounded by the server's startup timeout: the actor fails a start that
//! takes longer), and a tool that changed or vanished between the list the
//! caller saw (the cached one) and the server's fresh `tools/list` fails
//! closed with `stale_tool` while the fresh list is published.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::mcp::activity::{Busy, Shown};
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
    /// `server_disabled` (the server or its plugin is toggled off: it is
    /// not started); the start's failure (its state's `errorType`: `server_exited`,
    /// `startup_timeout`, `auth_required`, …; the message names the
    /// server); `server_stopped` (stopped while the call waited);
    /// `stale_tool` (data `{reason: "changed" | "removed", serverId,
    /// toolName}`: the fresh list differs, and is published); `cancelled`;
    /// `timeout` (no outcome within twice the startup timeout).
    async fn wake(
        &self,
        handle: &ServerHandle,
        tool: &str,
        cancel: &CancellationToken,
    ) -> HostResult<()> {
        if !handle.spec.start.is_lazy() || handle.live.session().is_some() {
            return Ok(());
        }
        let publisher = self.shared.publisher();
        if !publisher.read_state(|state| server_enabled(state, &handle.id)) {
            let what = format!("server {} is disabled", handle.id);
            return Err(HostError::new(ErrorCode::ServerDisabled, what));
        }
        let seen = self.tool_digest(&handle.id, tool);
        self.started(handle, cancel).await?;
        let catalogue = self.shared.publisher().catalogue();
        let catalogue = catalogue
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
        let mut since = shown.borrow_and_update().0;
        let mut asked = false;
        let within = handle.spec.startup_timeout.saturating_mul(2);
        let deadline = Instant::now() + within.max(Duration::from_millis(1));
        loop {
            let (n, state) = shown.borrow_and_update().clone();
            match state {
                Shown::Ready if handle.live.session().is_some() => return Ok(()),
                Shown::Failed(e) if n > since || !asked => {
                    if asked {
                        return Err(e);
                    }
                    (asked, since) = (true, n);
                    handle.send(Command::Start);
                }
                Shown::Stopped if n > since && asked => {
                    let what = format!("server {id} was stopped while a call waited for its start");
                    return Err(HostError::new(ErrorCode::ServerStopped, what));
                }
                Shown::Stopped if !asked => {
                    (asked, since) = (true, n);
                    handle.send(Command::Start);
                }
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
                () = tokio::time::sleep_until(deadline) => {
                    let ms = within.as_millis();
                    let what = format!("server {id} was not ready within {ms} ms for a call");
                    return Err(HostError::new(ErrorCode::Timeout, what));
                }
            }
        }
    }

    /// The digest of tool `tool` of server `server` in the catalogue now.
    fn tool_digest(&self, server: &str, tool: &str) -> Option<String> {
        let catalogue = self.shared.publisher().catalogue();
        let catalogue = catalogue
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let tools = catalogue.server(server)?;
        tools.get(tool).map(|t| t.digest.clone())
    }
}
