//! Linux: a server's descendants that left its process group (`setsid()`,
//! `setpgid()`, a double fork), found by walking the `children` links of
//! `/proc/<pid>/task/<tid>/children` down from the server, and signalled
//! through a pidfd so a reused pid is never hit.
//!
//! Why this mechanism (and not the others Linux has):
//!
//! - `PR_SET_CHILD_SUBREAPER` would have to be set on the app's own Node
//!   process: every orphan of the app (not only of MCP servers) would then
//!   be reparented to it and stay a zombie unless reaped, and reaping with
//!   `waitpid(-1)` would steal the exit statuses of libuv's children. Not
//!   used.
//! - A cgroup v2 per server would catch everything (`cgroup.kill`), but it
//!   needs a delegated, writable cgroup of the app's own, which a desktop
//!   app, a container or a CI runner rarely has (cgroup v1 hosts have none).
//!   Not used.
//! - The `children` links need no privilege and see every descendant whose
//!   parent chain to the server is alive when the walk runs (e.g. a browser
//!   an automation server starts detached). A descendant orphaned before a
//!   walk saw it (a double fork whose middle process already exited) is
//!   reparented to init or a subreaper, so the walk no longer reaches it.
//! - So each server is also started with a mark in its environment
//!   (`PROCESS_MARK_VAR` = a value unique to that start, `process_mark`),
//!   which its descendants inherit; before each stop signal (and in the
//!   watchdog, when the host dies) every process whose
//!   `/proc/<pid>/environ` holds the mark is ended too
//!   ([`marked_processes`]), wherever it was reparented. Only a descendant
//!   that both was orphaned between two walks and cleared or replaced its
//!   environment (`env -i`, `execve` with a new one) escapes.
//!
//! A process is named by its pid and its start time (`/proc/<pid>/stat`
//! field 22, clock ticks since boot), so a pid reused by another process is
//! never taken for it. Signals go through `pidfd_open(2)` (Linux 5.3) after
//! the start time is checked on the opened pidfd's process, then
//! `pidfd_send_signal(2)`; a kernel without pidfds gets the start-time check
//! and `kill(2)`.

use std::collections::{HashSet, VecDeque};
use std::io::Read;

#[cfg(test)]
use super::unix::process_mark;
use super::unix::PROCESS_MARK_VAR;

/// One process, named so that a reuse of its pid is told apart: the pid
/// and the start time (`/proc/<pid>/stat` field 22, clock ticks since boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessId {
    /// The process id.
    pub pid: i32,
    /// When it started (clock ticks since boot).
    pub start: u64,
}

/// The fields of `/proc/<pid>/stat` the walk needs.
struct Stat {
    pgrp: i32,
    start: u64,
    /// `PF_KTHREAD` is set in its flags (field 9): a kernel thread, which
    /// has no environment.
    kernel: bool,
}

/// `PF_KTHREAD` of `include/linux/sched.h`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// `/proc/<pid>/stat`: process group (field 5) and start time (field 22).
/// The command name (field 2) may hold spaces and parentheses, so fields
/// are counted after its last `") "`.
fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(") ")? + 2..];
    // Field 3 (state) is index 0 here, so field n is index n - 3.
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    let flags: u64 = fields.get(6)?.parse().ok()?;
    Some(Stat {
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        kernel: flags & PF_KTHREAD != 0,
    })
}

/// The children of every thread of `pid` (`/proc/<pid>/task/*/children`).
fn children(pid: i32, out: &mut Vec<i32>) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for task in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        out.extend(
            text.split_ascii_whitespace()
                .filter_map(|s| s.parse::<i32>().ok()),
        );
    }
}

/// The living descendants of `leader` outside process group `pgid`, found
/// by walking the `children` links (at most `max_walked` processes are
/// looked at). Empty when `/proc` has no `children` files (a kernel built
/// without `CONFIG_PROC_CHILDREN`).
pub fn escaped_descendants(leader: i32, pgid: i32, max_walked: usize) -> Vec<ProcessId> {
    let mut found = Vec::new();
    let mut seen = HashSet::from([leader]);
    let mut queue = VecDeque::from([leader]);
    let mut kids = Vec::new();
    while let Some(pid) = queue.pop_front() {
        kids.clear();
        children(pid, &mut kids);
        for &child in &kids {
            if seen.len() >= max_walked || !seen.insert(child) {
                continue;
            }
            let Some(st) = stat(child) else { continue };
            if st.pgrp != pgid {
                found.push(ProcessId {
                    pid: child,
                    start: st.start,
                });
            }
            queue.push_back(child);
        }
    }
    found
}

/// Bytes of an environment read at a time by [`environ_of`].
const ENVIRON_CHUNK_BYTES: usize = 64 * 1024;

/// What a read of `/proc/<pid>/environ` found.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Environ {
    /// It holds the entry.
    Holds,
    /// It does not, or cannot be read.
    Lacks,
    /// It read empty: a process between the old memory of an `execve` and
    /// its new one reads so for a moment (besides one started with no
    /// environment at all).
    Empty,
}

/// Whether the environment `/proc/<pid>/environ` holds the entry
/// `needle` (`NAME=value`), reading at most `max_bytes` of it, a chunk at
/// a time (`buf` holds one chunk and the end of the one before).
fn environ_of(pid: i32, needle: &[u8], max_bytes: usize, buf: &mut Vec<u8>) -> Environ {
    let Ok(file) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
        return Environ::Lacks;
    };
    // An entry is `\0NAME=value\0` (the first one has no NUL before it).
    let mut entry = Vec::with_capacity(needle.len() + 2);
    entry.push(0);
    entry.extend_from_slice(needle);
    entry.push(0);
    let finder = memchr::memmem::Finder::new(&entry);
    let mut file = file.take(max_bytes as u64);
    buf.clear();
    buf.push(0);
    let mut chunk = vec![0u8; ENVIRON_CHUNK_BYTES];
    let mut read = 0;
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        read += n;
        buf.extend_from_slice(&chunk[..n]);
        if finder.find(buf).is_some() {
            return Environ::Holds;
        }
        let keep = buf.len().saturating_sub(entry.len());
        buf.drain(..keep);
    }
    // The last entry may end without a NUL.
    buf.push(0);
    match (finder.find(buf).is_some(), read) {
        (true, _) => Environ::Holds,
        (false, 0) => Environ::Empty,
        (false, _) => Environ::Lacks,
    }
}

/// The living processes whose environment holds `PROCESS_MARK_VAR=mark`
/// (at most `max_looked` processes of `/proc` are looked at, at most
/// `max_environ_bytes` of each environment read). A process the host may
/// not read (another user's, or one that made itself non-dumpable) is not
/// found. A process whose environment reads empty (one in the middle of
/// `execve`: a marked child of a shell about to become its command) is
/// read again up to `retry.rounds` times, `retry.wait` apart.
pub fn marked_processes(
    mark: &str,
    max_looked: usize,
    max_environ_bytes: usize,
    retry: super::EmptyEnvironRetry,
) -> Vec<ProcessId> {
    let needle = format!("{PROCESS_MARK_VAR}={mark}").into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut buf = Vec::new();
    let mut look = |pid: i32| -> Environ {
        // The start time before and after the read: a pid reused between
        // them is not taken for the process that held the mark.
        let Some(before) = stat(pid).filter(|s| !s.kernel) else {
            return Environ::Lacks;
        };
        let environ = environ_of(pid, &needle, max_environ_bytes, &mut buf);
        let same = || stat(pid).is_some_and(|after| after.start == before.start);
        if environ == Environ::Holds && same() {
            found.push(ProcessId {
                pid,
                start: before.start,
            });
        }
        environ
    };
    let pids = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()));
    let mut unsettled: Vec<i32> = pids
        .take(max_looked)
        .filter(|&pid| look(pid) == Environ::Empty)
        .collect();
    for _ in 0..retry.rounds {
        if unsettled.is_empty() {
            break;
        }
        std::thread::sleep(retry.wait);
        unsettled.retain(|&pid| look(pid) == Environ::Empty);
    }
    found
}

/// Sends `signal` to `process` if it is still that process (same start
/// time). Returns false when it is gone (or its pid now names another
/// process).
pub fn signal_process(process: ProcessId, signal: i32) -> bool {
    if process.pid <= 1 {
        return false;
    }
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, process.pid, 0) };
    let same = || stat(process.pid).is_some_and(|s| s.start == process.start);
    if fd < 0 {
        // No pidfd (Linux < 5.3): the start time is checked just before kill(2).
        // SAFETY: plain syscall on a pid whose start time was just checked.
        return same() && unsafe { libc::kill(process.pid, signal) == 0 };
    }
    let fd = fd as libc::c_int;
    // The pidfd pins the process: once its start time matches, the signal
    // reaches it or nothing (a reused pid gets a new process, not this fd's).
    let sent = same()
        // SAFETY: `fd` is the pidfd opened above; no siginfo, no flags.
        && unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd,
                signal,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            ) == 0
        };
    // SAFETY: `fd` was opened above and is closed once.
    unsafe { libc::close(fd) };
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the host reads (`crate::limits`).
    const RETRY: super::super::EmptyEnvironRetry = super::super::EmptyEnvironRetry {
        rounds: 3,
        wait: std::time::Duration::from_millis(2),
    };

    #[test]
    fn a_marked_process_is_found_wherever_it_is_and_others_are_not() {
        let mark = process_mark();
        assert_ne!(mark, process_mark(), "every mark is new");
        // A double fork: the marked `sleep` is orphaned (reparented) at once.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("sleep 30 >/dev/null 2>&1 & exit 0")
            .env(PROCESS_MARK_VAR, &mark)
            .status()
            .unwrap();
        assert!(status.success());
        let mut unmarked = std::process::Command::new("sleep")
            .arg("32")
            .spawn()
            .unwrap();
        let found = marked_processes(&mark, 1 << 16, 1 << 20, RETRY);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_ne!(found[0].pid, unmarked.id() as i32);
        assert!(signal_process(found[0], libc::SIGKILL));
        unmarked.kill().unwrap();
        unmarked.wait().unwrap();
        assert!(marked_processes(&format!("{mark}x"), 1 << 16, 1 << 20, RETRY).is_empty());
    }

    #[test]
    fn a_setsid_child_is_found_and_a_same_group_child_is_not() {
        let me = std::process::id() as i32;
        let pgid = unsafe { libc::getpgrp() };
        let mut plain = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let mut detached = {
            use std::os::unix::process::CommandExt;
            let mut cmd = std::process::Command::new("sleep");
            cmd.arg("31");
            // SAFETY: setsid is async-signal-safe.
            unsafe {
                cmd.pre_exec(|| {
                    libc::setsid();
                    Ok(())
                });
            }
            cmd.spawn().unwrap()
        };
        let found = escaped_descendants(me, pgid, 4096);
        let pids: Vec<i32> = found.iter().map(|p| p.pid).collect();
        assert!(pids.contains(&(detached.id() as i32)), "{pids:?}");
        assert!(!pids.contains(&(plain.id() as i32)), "{pids:?}");
        let entry = found
            .iter()
            .find(|p| p.pid == detached.id() as i32)
            .copied()
            .unwrap();
        let stale = ProcessId {
            start: entry.start + 1,
            ..entry
        };
        assert!(
            !signal_process(stale, libc::SIGKILL),
            "a reused pid is not signalled"
        );
        assert!(signal_process(entry, libc::SIGKILL));
        assert!(detached.wait().unwrap().code().is_none());
        plain.kill().unwrap();
        plain.wait().unwrap();
    }
}
