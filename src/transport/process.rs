//! Spawning a stdio server in its own process group and stopping it without
//! leaving orphans or zombies.
//!
//! Stop sequence (MCP 2025-11-25 "Lifecycle › Shutdown › stdio"): close the
//! server's stdin, wait [`STOP_STDIN_GRACE_MS`], SIGTERM the process group,
//! wait [`STOP_TERM_GRACE_MS`], SIGKILL the group. "Gone" means the leader was
//! reaped and no process is left in its group.
//!
//! Cleanup when the host process itself dies (Linux/Unix): the server gets a
//! parent-death signal (SIGKILL, Linux only), and a tiny watchdog (`/bin/sh`,
//! its own process group) holds the read end of a pipe whose write end only
//! the host holds. When the host exits for any reason, even SIGKILL, the pipe
//! closes and the watchdog SIGKILLs the server's whole process group, which
//! also catches grandchildren that ignore SIGTERM.
//!
//! Descendants that left the group (`setsid()`, a double fork) are found
//! and ended with it wherever the platform lets the host see them (Linux:
//! yes, see [`super::descendants`]; macOS: no): on stop (they share the
//! stdin grace, then get SIGTERM and SIGKILL with the group), on dispose,
//! after a crash of the leader, and by the watchdog when the host dies.
//!
//! Unix only (process groups, `kill(2)`, `/bin/sh`): the module is compiled
//! under `#[cfg(unix)]`; the system calls themselves are in `crate::platform`.

use std::collections::HashMap;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessGroup};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;

use crate::config::launch::LaunchSpec;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::EventSink;
use crate::limits::{PROCESS_GONE_POLL_MS, STOP_STDIN_GRACE_MS, STOP_TERM_GRACE_MS};
use crate::platform;

use super::descendants::Escaped;
use super::sandbox::{Applied, ChildSandbox};

/// Process groups the host currently owns, for a synchronous kill from
/// `dispose()`, `Drop` or an exit hook (no async runtime needed).
#[derive(Debug, Default)]
pub struct ProcessRegistry {
    groups: Mutex<HashMap<i32, Arc<Escaped>>>,
}

impl ProcessRegistry {
    fn insert(&self, pgid: i32, escaped: Arc<Escaped>) {
        self.groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(pgid, escaped);
    }

    /// Forgets a group once it is gone; closing its watchdog pipe lets the watchdog exit.
    pub fn remove(&self, pgid: i32) {
        let removed = self
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&pgid);
        if let Some(escaped) = removed {
            escaped.close_watchdog();
        }
    }

    /// SIGKILLs every registered process group and the descendants that
    /// left it (walked again first), and forgets them. Synchronous,
    /// idempotent, safe on any thread and after the runtime is gone.
    pub fn kill_all(&self) {
        let groups: Vec<_> = self
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for (pgid, escaped) in groups {
            kill_tree(pgid, &escaped, platform::SIGKILL);
            escaped.close_watchdog();
        }
    }

    /// Number of process groups currently registered.
    pub fn len(&self) -> usize {
        self.groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// A running stdio server process.
pub struct ServerProcess {
    /// Process group id (= the leader's pid).
    pub pgid: i32,
    /// The server's stdin (protocol out), stdout (protocol in), stderr (logs).
    pub stdio: Option<(ChildStdin, ChildStdout, ChildStderr)>,
    /// Becomes `Some(status)` once the leader exited and was reaped.
    pub exit: watch::Receiver<Option<ExitStatus>>,
    registry: Arc<ProcessRegistry>,
    /// Its descendants outside the group (shared with the registry).
    escaped: Arc<Escaped>,
    /// Set once the group was seen empty: its id may be reused, never signal it again.
    gone: bool,
    /// What lives as long as a sandboxed process (its proxy).
    _sandbox: Option<Applied>,
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProcess")
            .field("pgid", &self.pgid)
            .finish_non_exhaustive()
    }
}

/// Spawns `spec` as the leader of a new process group, with piped stdio, a
/// cleared environment replaced by `spec.env`, and no shell; inside
/// `sandbox` when given (Linux: Landlock before `exec`; macOS:
/// `sandbox-exec`), whose proxy then lives as long as the process.
///
/// # Errors
/// `spawn_failed` naming the program and the OS error; sandboxed:
/// `sandbox_denied` when executing the program was refused (`EACCES`,
/// `EPERM`), `sandbox_unavailable` when the child could not restrict
/// itself.
pub fn spawn(
    spec: &LaunchSpec,
    registry: &Arc<ProcessRegistry>,
    sandbox: Option<ChildSandbox>,
) -> HostResult<ServerProcess> {
    let mark = platform::process_mark();
    let sandboxed = sandbox.is_some();
    let (program, args) = match &sandbox {
        Some(s) => s.command(&spec.program, &spec.args),
        None => (spec.program.clone(), spec.args.clone()),
    };
    let mut sandbox = sandbox;
    let mut wrap = CommandWrap::with_new(&program, |cmd| {
        cmd.args(&args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env(platform::PROCESS_MARK_VAR, &mark)
            .current_dir(&spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(false);
        platform::set_parent_death_signal(cmd);
        if let Some(s) = sandbox.as_mut() {
            s.apply(cmd);
        }
    });
    wrap.wrap(ProcessGroup::leader());
    let mut child = wrap.spawn().map_err(|e| spawn_error(spec, &e, sandboxed))?;
    let pgid = child.id().map(|p| p as i32).unwrap_or(0);
    let stdin = child.stdin().take();
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let watchdog = platform::spawn_watchdog(pgid, Some(&mark));
    let escaped = Arc::new(Escaped::new(pgid, Some(mark), watchdog));
    registry.insert(pgid, escaped.clone());
    let (exit_tx, exit_rx) = watch::channel(None);
    tokio::spawn(reap(child, exit_tx));
    let stdio = match (stdin, stdout, stderr) {
        (Some(i), Some(o), Some(e)) => Some((i, o, e)),
        _ => None,
    };
    Ok(ServerProcess {
        pgid,
        stdio,
        exit: exit_rx,
        registry: registry.clone(),
        escaped,
        gone: false,
        _sandbox: sandbox.map(ChildSandbox::into_applied),
    })
}

/// The error of a spawn that failed with `e` (see [`spawn`]).
fn spawn_error(spec: &LaunchSpec, e: &std::io::Error, sandboxed: bool) -> HostError {
    let program = match spec.literal {
        true => "the command".into(),
        false => spec.program.display().to_string(),
    };
    let errno = e.raw_os_error();
    #[cfg(target_os = "linux")]
    if sandboxed && errno == Some(platform::SANDBOX_SETUP_ERRNO) {
        let msg = format!("cannot start {program}: the sandbox could not be applied");
        return HostError::new(ErrorCode::SandboxUnavailable, msg);
    }
    if sandboxed && matches!(errno, Some(libc::EACCES) | Some(libc::EPERM)) {
        let msg = format!(
            "cannot start {program}: the sandbox denied executing it ({e}); give its folder in \
             sandbox.filesystem.read"
        );
        return HostError::new(ErrorCode::SandboxDenied, msg);
    }
    HostError::new(
        ErrorCode::SpawnFailed,
        format!("cannot start {program}: {e}"),
    )
}

/// Walks the tree below `pgid`'s leader (while it is intact) and finds the
/// processes holding its mark ([`Escaped::sweep`]), then sends `signal` to
/// the group and to every descendant that left it.
fn kill_tree(pgid: i32, escaped: &Escaped, signal: i32) {
    if signal == platform::SIGKILL {
        // Stopped first, then killed: see `Escaped::kill_all`.
        escaped.kill_all();
        return;
    }
    let (_, found) = escaped.sweep();
    kill_group(pgid, signal);
    escaped.signal(signal, &found);
}

impl ServerProcess {
    /// Starts walking the server's tree for descendants that leave its
    /// process group (see [`super::descendants::watch`]); each one found is
    /// an `info` log of `server_id` on `sink`.
    pub fn watch_descendants(&self, server_id: String, sink: Arc<dyn EventSink>) {
        let watch =
            super::descendants::watch(self.escaped.clone(), self.exit.clone(), server_id, sink);
        tokio::spawn(watch);
    }
}

async fn reap(mut child: Box<dyn ChildWrapper>, exit_tx: watch::Sender<Option<ExitStatus>>) {
    if let Ok(status) = child.wait().await {
        let _ = exit_tx.send(Some(status));
    }
}

/// Sends `signal` to every process in group `pgid`. Returns false when the
/// group no longer exists.
pub fn kill_group(pgid: i32, signal: i32) -> bool {
    platform::kill_group(pgid, signal)
}

fn group_alive(pgid: i32) -> bool {
    kill_group(pgid, 0)
}

impl ServerProcess {
    /// Whether the leader has exited.
    pub fn exited(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits until the leader exits; returns its status.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only waits on the exit watch; dropping the future
    /// changes nothing, and a later call sees the same status.
    pub async fn wait_exit(&mut self) -> Option<ExitStatus> {
        let _ = self.exit.wait_for(Option::is_some).await;
        self.exited()
    }

    async fn wait_gone(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if self.exited().is_some() && !group_alive(self.pgid) && !self.escaped.any_alive() {
                self.gone = true;
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(PROCESS_GONE_POLL_MS)).await;
        }
    }

    /// Stops the process group. The caller closes stdin first (by shutting
    /// the MCP transport down); this waits for a clean exit, then escalates to
    /// SIGTERM and SIGKILL on the whole group. Returns the leader's status.
    ///
    /// # Cancel safety
    /// Not resumable: the future owns the process, so dropping it drops the
    /// [`ServerProcess`], whose `Drop` SIGKILLs the group at once (the
    /// remaining grace is skipped, nothing is left behind).
    pub async fn stop(mut self) -> Option<ExitStatus> {
        // While the leader lives its tree is whole: every escaped descendant is found now.
        self.escaped.sweep();
        if !self
            .wait_gone(Duration::from_millis(STOP_STDIN_GRACE_MS))
            .await
        {
            kill_tree(self.pgid, &self.escaped, platform::SIGTERM);
            if !self
                .wait_gone(Duration::from_millis(STOP_TERM_GRACE_MS))
                .await
            {
                kill_tree(self.pgid, &self.escaped, platform::SIGKILL);
                self.wait_gone(Duration::from_millis(STOP_TERM_GRACE_MS))
                    .await;
            }
        }
        self.exited()
    }

    /// After the leader exited on its own (a crash): SIGKILL whatever is left
    /// in its group so no grandchild outlives it.
    ///
    /// # Cancel safety
    /// The SIGKILL is sent before the first await; dropping the future only
    /// skips waiting for the group to be gone.
    pub async fn sweep(mut self) {
        kill_tree(self.pgid, &self.escaped, platform::SIGKILL);
        self.wait_gone(Duration::from_millis(STOP_TERM_GRACE_MS))
            .await;
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Whatever path got here, leave nothing behind.
        if !self.gone {
            kill_tree(self.pgid, &self.escaped, platform::SIGKILL);
        }
        self.registry.remove(self.pgid);
    }
}

/// Describes an exit status the way users expect: `exit code 3` or `signal 9 (SIGKILL)`.
pub fn describe_exit(status: Option<ExitStatus>) -> String {
    match status {
        None => "exited".to_owned(),
        Some(s) => match (s.code(), platform::exit_signal(&s)) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}{}", signal_name(sig)),
            _ => format!("exited ({s})"),
        },
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        platform::SIGKILL => " (SIGKILL)",
        platform::SIGTERM => " (SIGTERM)",
        platform::SIGSEGV => " (SIGSEGV)",
        platform::SIGABRT => " (SIGABRT)",
        platform::SIGINT => " (SIGINT)",
        _ => "",
    }
}
