//! Spawning a stdio server in its own Job Object and stopping it without
//! leaving a process behind: the Windows counterpart of `process.rs` (same
//! items, same callers), compiled as `transport::process` under `#[cfg(windows)]`.
//!
//! Stop sequence (MCP 2025-11-25 "Lifecycle › Shutdown › stdio"; Windows has
//! no SIGTERM for a console-less process): close the server's stdin, wait
//! [`STOP_STDIN_GRACE_MS`] for it to exit, then end its job
//! (`TerminateJobObject`: the server and every process it started, at once),
//! and wait at most [`STOP_TERM_GRACE_MS`] for the exit to be seen. The job
//! is ended even when the server exited in time, so no grandchild outlives
//! it. "Gone" means the leader's exit was seen and its job was ended.
//!
//! Cleanup when the host process itself dies: the job is kill-on-close
//! (process-wrap's `KillOnDrop`) and only the host holds its handle, so when
//! the host ends by any means (crash, `TerminateProcess`) Windows closes the
//! handle and ends every process in the job, detached grandchildren included.
//! No watchdog process is needed.
//!
//! The child wrapper (which owns the job handle) sits in a mutex shared by
//! the reaper task and the registry: the reaper polls `try_wait` every
//! [`PROCESS_GONE_POLL_MS`], and the synchronous kill path takes the wrapper
//! out and ends the job without any async runtime.

use std::collections::HashMap;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;

use super::sandbox::ChildSandbox;
use crate::config::launch::LaunchSpec;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::limits::{PROCESS_GONE_POLL_MS, STOP_STDIN_GRACE_MS, STOP_TERM_GRACE_MS};
use crate::platform;

/// One server's job: the process-wrap child (leader + its Job Object), or
/// `None` once the job was ended.
struct Job {
    child: Mutex<Option<Box<dyn ChildWrapper>>>,
}

impl Job {
    fn new(child: Box<dyn ChildWrapper>) -> Self {
        Self {
            child: Mutex::new(Some(child)),
        }
    }

    /// Ends every process in the job (`TerminateJobObject`, exit code 1) and
    /// closes it. Synchronous and idempotent.
    fn end(&self) {
        let taken = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut child) = taken {
            let _ = child.start_kill();
            // Dropping closes the job handle; kill-on-close ends what is left.
            drop(child);
        }
    }

    /// The leader's status once it exited (`Ok(None)` while it runs); `Err`
    /// once the job was ended before the exit was seen.
    fn try_wait(&self) -> Result<Option<ExitStatus>, ()> {
        let mut guard = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        match guard.as_mut() {
            Some(child) => Ok(child.try_wait().ok().flatten()),
            None => Err(()),
        }
    }
}

/// Jobs the host currently owns, for a synchronous kill from `dispose()`,
/// `Drop` or an exit hook (no async runtime needed).
#[derive(Default)]
pub struct ProcessRegistry {
    jobs: Mutex<HashMap<u32, Arc<Job>>>,
}

impl std::fmt::Debug for ProcessRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessRegistry")
            .field("jobs", &self.len())
            .finish()
    }
}

impl ProcessRegistry {
    fn insert(&self, pid: u32, job: Arc<Job>) {
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(pid, job);
    }

    /// Forgets a job once it is gone.
    pub fn remove(&self, pid: u32) {
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&pid);
    }

    /// Ends every registered job (each server with all its descendants) and
    /// forgets them. Synchronous, idempotent, safe on any thread and after
    /// the runtime is gone.
    pub fn kill_all(&self) {
        let jobs: Vec<_> = self
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for (_pid, job) in jobs {
            job.end();
        }
    }

    /// Number of jobs (servers) currently registered.
    pub fn len(&self) -> usize {
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// A running stdio server process.
pub struct ServerProcess {
    /// The leader's process id.
    pub pid: u32,
    /// The server's stdin (protocol out), stdout (protocol in), stderr (logs).
    pub stdio: Option<(ChildStdin, ChildStdout, ChildStderr)>,
    /// Becomes `Some(status)` once the leader exited.
    pub exit: watch::Receiver<Option<ExitStatus>>,
    job: Arc<Job>,
    registry: Arc<ProcessRegistry>,
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProcess")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Spawns `spec` in a new Job Object ([`platform::wrap_in_job`]), with piped
/// stdio, a cleared environment replaced by `spec.env`, no console window
/// and no shell of the host's making. A `.cmd` / `.bat` program runs through
/// `cmd.exe` as Rust's std runs batch files: each argument quoted so that
/// `cmd.exe` passes it through unchanged (`%` cannot expand a variable, `&`
/// `|` `^` `"` cannot start another command); an argument it cannot quote
/// (a line break) makes the spawn fail.
///
/// # Errors
/// `invalid_argument` naming the argument (`args[i]`) a batch file cannot
/// be given; `spawn_failed` naming the program and the OS error otherwise.
pub fn spawn(
    spec: &LaunchSpec,
    registry: &Arc<ProcessRegistry>,
    sandbox: Option<ChildSandbox>,
) -> HostResult<ServerProcess> {
    // Windows enforces no sandbox: a profile reaches here only as
    // `best-effort`, reported as not enforced (`transport::sandbox`).
    drop(sandbox);
    let mut wrap = CommandWrap::with_new(&spec.program, |cmd| {
        cmd.args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&spec.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    });
    platform::wrap_in_job(&mut wrap);
    let mut child = wrap.spawn().map_err(|e| spawn_error(spec, &e))?;
    let pid = child.id().unwrap_or(0);
    let stdin = child.stdin().take();
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let job = Arc::new(Job::new(child));
    registry.insert(pid, job.clone());
    let (exit_tx, exit_rx) = watch::channel(None);
    tokio::spawn(reap(job.clone(), exit_tx));
    let stdio = match (stdin, stdout, stderr) {
        (Some(i), Some(o), Some(e)) => Some((i, o, e)),
        _ => None,
    };
    Ok(ServerProcess {
        pid,
        stdio,
        exit: exit_rx,
        job,
        registry: registry.clone(),
    })
}

/// The error of a failed spawn. Rust's std refuses (`InvalidInput`) a batch
/// file argument `cmd.exe` cannot be given unchanged: the CR or LF that
/// would end its command line (NUL is refused for any program).
fn spawn_error(spec: &LaunchSpec, e: &std::io::Error) -> HostError {
    if e.kind() == std::io::ErrorKind::InvalidInput && is_batch_file(&spec.program) {
        let refused = spec
            .args
            .iter()
            .position(|a| a.contains(['\r', '\n', '\0']));
        if let Some(i) = refused {
            let msg = format!(
                "cannot start {}: args[{i}] contains a line break or NUL, which a batch \
                 file (.cmd/.bat, run by cmd.exe) cannot be given unchanged",
                spec.program.display()
            );
            return HostError::new(ErrorCode::InvalidArgument, msg);
        }
    }
    HostError::new(
        ErrorCode::SpawnFailed,
        format!("cannot start {}: {e}", spec.program.display()),
    )
}

/// Whether `program` is run by `cmd.exe` (a `.cmd` or `.bat` file, any case).
fn is_batch_file(program: &std::path::Path) -> bool {
    program
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"))
}

/// Polls the leader until it exits (or its job is ended) and publishes its status.
async fn reap(job: Arc<Job>, exit_tx: watch::Sender<Option<ExitStatus>>) {
    loop {
        match job.try_wait() {
            Ok(Some(status)) => {
                let _ = exit_tx.send(Some(status));
                return;
            }
            Ok(None) => {}
            Err(()) => return,
        }
        tokio::time::sleep(Duration::from_millis(PROCESS_GONE_POLL_MS)).await;
    }
}

impl ServerProcess {
    /// Nothing to walk on Windows: the server's Job Object holds every
    /// descendant (a detached grandchild too) and ends them with the job.
    /// The Unix `transport::process` finds descendants that left the
    /// process group here.
    pub fn watch_descendants(&self, server_id: String, sink: Arc<dyn crate::events::EventSink>) {
        let _ = (server_id, sink);
    }

    /// Whether the leader has exited.
    pub fn exited(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits until the leader exits; returns its status (`None` when its job
    /// was ended before the exit was seen).
    ///
    /// # Cancel safety
    /// Cancel-safe: it only waits on the exit watch; dropping the future
    /// changes nothing, and a later call sees the same status.
    pub async fn wait_exit(&mut self) -> Option<ExitStatus> {
        let _ = self.exit.wait_for(Option::is_some).await;
        self.exited()
    }

    async fn wait_exit_within(&mut self, within: Duration) -> bool {
        tokio::time::timeout(within, self.wait_exit()).await.is_ok() && self.exited().is_some()
    }

    /// Stops the server. The caller closes stdin first (by shutting the MCP
    /// transport down); this waits for a clean exit, then ends the job (the
    /// leader if still running, and every descendant). Returns the leader's
    /// status.
    ///
    /// # Cancel safety
    /// Not resumable: the future owns the process, so dropping it drops the
    /// [`ServerProcess`], whose `Drop` ends the job at once.
    pub async fn stop(mut self) -> Option<ExitStatus> {
        let clean = self
            .wait_exit_within(Duration::from_millis(STOP_STDIN_GRACE_MS))
            .await;
        if !clean {
            // Let the reaper see the status of the ended leader (exit code 1).
            if let Some(child) = self
                .job
                .child
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_mut()
            {
                let _ = child.start_kill();
            }
            self.wait_exit_within(Duration::from_millis(STOP_TERM_GRACE_MS))
                .await;
        }
        self.job.end();
        self.exited()
    }

    /// After the leader exited on its own (a crash): end its job so no
    /// grandchild outlives it.
    ///
    /// # Cancel safety
    /// Nothing is awaited: the job is ended before this returns.
    pub async fn sweep(self) {
        self.job.end();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Whatever path got here, leave nothing behind.
        self.job.end();
        self.registry.remove(self.pid);
    }
}

/// Describes an exit status the way users expect: `exited with code 3`
/// (Windows reports an exit code for every exit, a terminated job's is 1).
pub fn describe_exit(status: Option<ExitStatus>) -> String {
    match status.and_then(|s| s.code()) {
        None => "exited".to_owned(),
        Some(code) => format!("exited with code {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_files_are_named_by_extension_in_any_case() {
        for p in [r"C:\n\npx.cmd", r"C:\n\x.BAT", r"C:\n\x.Cmd"] {
            assert!(is_batch_file(std::path::Path::new(p)), "{p}");
        }
        for p in [r"C:\n\node.exe", r"C:\n\cmd", r"C:\n\x.cmd.exe"] {
            assert!(!is_batch_file(std::path::Path::new(p)), "{p}");
        }
    }
}
