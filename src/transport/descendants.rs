//! A stdio server's descendants that left its process group (`setsid()`,
//! `setpgid()`, a double fork: browsers started by automation servers do
//! this), which signalling the group does not reach.
//!
//! While the server runs, its process tree is walked every
//! [`DESCENDANT_SCAN_MS`] (and again right before every stop signal, and by
//! the synchronous kill of `dispose()`); each descendant found outside the
//! group is remembered by pid and start time (at most
//! [`MAX_TRACKED_DESCENDANTS`]) and named to the host-death watchdog, so it
//! is signalled with the group on stop, on dispose, when the leader
//! crashed, and by the watchdog when the host itself dies (even SIGKILL).
//! A remembered process keeps being ended after it was orphaned (its parent
//! exited), and a reused pid is never signalled.
//!
//! Each server also starts with a mark in its environment
//! (`platform::PROCESS_MARK_VAR`, unique to that start), which descendants
//! inherit: right before each stop signal and by the synchronous kill
//! ([`Escaped::sweep`]), and by the watchdog, every process holding the
//! mark is ended too, wherever it was reparented, so a descendant that
//! left the group and lost its parent within one scan interval (a fast
//! double fork) is found as well, unless it also dropped its environment.
//!
//! What each platform finds is in `crate::platform` (Linux: the `/proc`
//! `children` links and `/proc/<pid>/environ`; macOS and other Unix:
//! nothing outside the group).

use std::process::{ChildStdin, ExitStatus};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use crate::events::{log, EventSink, LogLevel};
use crate::limits::{
    DESCENDANT_SCAN_MS, MARK_SCAN_EMPTY_RETRIES, MARK_SCAN_RETRY_MS, MAX_DESCENDANT_WALK,
    MAX_ENVIRON_READ_BYTES, MAX_KILL_SWEEPS, MAX_MARK_SCAN_PROCESSES, MAX_TRACKED_DESCENDANTS,
};
use crate::platform::{self, ProcessId};

/// The escaped descendants of one server (pid = process group id `pgid`).
#[derive(Debug)]
pub struct Escaped {
    pgid: i32,
    /// The group's `platform::PROCESS_MARK_VAR` value, if it has one.
    mark: Option<String>,
    inner: Mutex<Inner>,
    /// Held through a final kill ([`Escaped::kill_all`]): two at once (a
    /// `disposeSync()` beside the drop of the connection) would interleave,
    /// and killing part of a stopped group makes the kernel continue the
    /// rest (an orphaned process group with stopped members gets SIGCONT).
    killing: Mutex<()>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Found outside the group and not yet seen gone.
    known: Vec<ProcessId>,
    /// The write end of the group's watchdog pipe (closing it arms the watchdog).
    watchdog: Option<ChildStdin>,
}

impl Escaped {
    /// Nothing found yet for the group led by `pgid`, started with `mark`,
    /// whose watchdog reads `watchdog` (see `platform::spawn_watchdog`).
    pub fn new(pgid: i32, mark: Option<String>, watchdog: Option<ChildStdin>) -> Self {
        Self {
            pgid,
            mark,
            killing: Mutex::new(()),
            inner: Mutex::new(Inner {
                known: Vec::new(),
                watchdog,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Walks the tree below the leader now: remembers (and names to the
    /// watchdog) each descendant outside the group not known yet, at most
    /// [`MAX_TRACKED_DESCENDANTS`]. Returns those newly remembered, and
    /// every one this walk found.
    pub fn scan(&self) -> (Vec<ProcessId>, Vec<ProcessId>) {
        let found = platform::escaped_descendants(self.pgid, self.pgid, MAX_DESCENDANT_WALK);
        self.remember(found)
    }

    /// [`Escaped::scan`], then every process holding the group's mark that
    /// is not the leader (found wherever it was reparented; at most
    /// [`MAX_MARK_SCAN_PROCESSES`] looked at): what a stop signal is sent
    /// to besides the group. Returns what [`Escaped::scan`] returns.
    pub fn sweep(&self) -> (Vec<ProcessId>, Vec<ProcessId>) {
        let mut found = platform::escaped_descendants(self.pgid, self.pgid, MAX_DESCENDANT_WALK);
        if let Some(mark) = &self.mark {
            let retry = platform::EmptyEnvironRetry {
                rounds: MARK_SCAN_EMPTY_RETRIES,
                wait: Duration::from_millis(MARK_SCAN_RETRY_MS),
            };
            let marked = platform::marked_processes(
                mark,
                MAX_MARK_SCAN_PROCESSES,
                MAX_ENVIRON_READ_BYTES,
                retry,
            );
            for process in marked {
                if process.pid != self.pgid && !found.contains(&process) {
                    found.push(process);
                }
            }
        }
        self.remember(found)
    }

    /// The final kill: stops (`SIGSTOP`) the group and every process a
    /// sweep finds, sweeps again while a sweep finds one not stopped yet (at
    /// most [`MAX_KILL_SWEEPS`] sweeps, until two in a row find nothing new:
    /// a stopped process cannot fork, so a descendant that keeps handing
    /// itself on to a new pid is caught), then SIGKILLs the group and all
    /// of them.
    pub fn kill_all(&self) {
        let _one_at_a_time = self.killing.lock().unwrap_or_else(PoisonError::into_inner);
        platform::kill_group(self.pgid, platform::SIGSTOP);
        let mut stopped = std::collections::HashSet::new();
        // Two quiet sweeps in a row, 1 ms apart: a child whose fork was under
        // way when its parent was stopped shows up only once the fork is done.
        let mut quiet = 0;
        for _ in 0..MAX_KILL_SWEEPS {
            let (_, found) = self.sweep();
            let new: Vec<ProcessId> = found.into_iter().filter(|p| !stopped.contains(p)).collect();
            if new.is_empty() {
                quiet += 1;
                if quiet == 2 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
            quiet = 0;
            for process in new {
                platform::signal_process(process, platform::SIGSTOP);
                stopped.insert(process);
            }
        }
        platform::kill_group(self.pgid, platform::SIGKILL);
        let stopped: Vec<ProcessId> = stopped.into_iter().collect();
        self.signal(platform::SIGKILL, &stopped);
    }

    /// Remembers (and names to the watchdog) each of `found` not known yet,
    /// at most [`MAX_TRACKED_DESCENDANTS`]: returns those and `found`.
    fn remember(&self, found: Vec<ProcessId>) -> (Vec<ProcessId>, Vec<ProcessId>) {
        let mut inner = self.lock();
        let mut new = Vec::new();
        for &process in &found {
            if inner.known.contains(&process) || inner.known.len() >= MAX_TRACKED_DESCENDANTS {
                continue;
            }
            inner.known.push(process);
            if let Some(pipe) = inner.watchdog.as_mut() {
                platform::watchdog_add(pipe, process);
            }
            new.push(process);
        }
        (new, found)
    }

    /// Sends `signal` to every remembered descendant still running (the
    /// same process: pid and start time) and to each of `also` (found by a
    /// walk just now), and forgets those gone.
    pub fn signal(&self, signal: i32, also: &[ProcessId]) {
        let mut inner = self.lock();
        inner
            .known
            .retain(|&process| platform::signal_process(process, 0));
        for process in inner.known.iter().chain(also) {
            platform::signal_process(*process, signal);
        }
    }

    /// Whether a remembered descendant still runs.
    pub fn any_alive(&self) -> bool {
        let mut inner = self.lock();
        inner
            .known
            .retain(|&process| platform::signal_process(process, 0));
        !inner.known.is_empty()
    }

    /// Closes the watchdog pipe: the watchdog then SIGKILLs the group and
    /// the descendants named to it, and exits.
    pub fn close_watchdog(&self) {
        self.lock().watchdog.take();
    }
}

/// Walks the tree of `escaped` every [`DESCENDANT_SCAN_MS`] until the
/// leader exits (`exit` holds its status); each newly found descendant is
/// an `info` log (target `host.process`) naming its pid.
pub async fn watch(
    escaped: Arc<Escaped>,
    mut exit: watch::Receiver<Option<ExitStatus>>,
    server_id: String,
    sink: Arc<dyn EventSink>,
) {
    let every = Duration::from_millis(DESCENDANT_SCAN_MS);
    loop {
        if exit.borrow().is_some() {
            return;
        }
        let scanning = escaped.clone();
        let Ok((found, _)) = tokio::task::spawn_blocking(move || scanning.scan()).await else {
            return;
        };
        for process in found {
            let message = format!(
                "process {} left the server's process group (setsid or a double fork); it is \
                 ended with the server",
                process.pid
            );
            sink.send(log(
                LogLevel::Info,
                "host.process",
                Some(&server_id),
                message,
            ));
        }
        tokio::select! {
            changed = exit.changed() => if changed.is_err() { return },
            () = tokio::time::sleep(every) => {}
        }
    }
}
