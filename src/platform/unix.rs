//! The Unix implementation of [`crate::platform`] (Linux and macOS); the
//! Linux-only parent-death signal is gated on `target_os = "linux"`.

use std::fs::{DirBuilder, FileType, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(target_os = "linux")]
use super::ProcessId;

/// Signal numbers the transport sends or names (`signal(7)`).
pub use libc::{SIGABRT, SIGINT, SIGKILL, SIGSEGV, SIGSTOP, SIGTERM};

/// Sends `signal` to every process in group `pgid` (`kill(2)` on `-pgid`;
/// signal `0` only checks that the group exists). Returns false when the
/// group no longer exists or `pgid` is not a group the host may signal
/// (`<= 1`).
pub fn kill_group(pgid: i32, signal: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: plain syscall on a process group we created.
    unsafe { libc::kill(-pgid, signal) == 0 }
}

/// The signal that ended a process, if a signal did.
pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    status.signal()
}

/// Linux: the child gets SIGKILL when the thread that spawned it dies
/// (`prctl(PR_SET_PDEATHSIG)`, set between fork and exec). Elsewhere a
/// no-op: the watchdog of [`spawn_watchdog`] covers host death.
pub fn set_parent_death_signal(cmd: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Starts the watchdog that SIGKILLs group `pgid` when the returned pipe
/// closes (host exit, crash or `SIGKILL`): a `/bin/sh` in its own process
/// group reading the pipe. Each line `<pid> <start time>` the host writes
/// first ([`watchdog_add`]) names a descendant outside the group, which is
/// SIGKILLed too if `/proc/<pid>/stat` still shows that start time (so a
/// reused pid is spared). With `mark` (the group's [`process_mark`]),
/// every process whose `/proc/<pid>/environ` holds it is ended last
/// (`grep -l` over `/proc/*/environ`; nothing where there is no `/proc`):
/// each one found is stopped (`SIGSTOP`), the search repeats while it finds
/// new ones (at most 16 times), then all are SIGKILLed.
/// Returns `None` where no `/bin/sh` exists.
pub fn spawn_watchdog(pgid: i32, mark: Option<&str>) -> Option<std::process::ChildStdin> {
    // No `--`: dash's built-in kill rejects it; `-KILL -<pgid>` works in every POSIX sh.
    // `${20}` after the last ") " of /proc/<pid>/stat is field 22, the start time.
    // A mark is fixed-width (`process_mark`), so `NAME=<mark>` matches it only.
    const SCRIPT: &str = r#"g=$1; m=$2; l=; while read -r p t; do l="$l $p:$t"; done
kill -KILL -"$g" 2>/dev/null
for e in $l; do p=${e%%:*}; t=${e#*:}
read -r s 2>/dev/null </proc/"$p"/stat || continue; s=${s##*) }; set -- $s
[ "${20}" = "$t" ] && kill -KILL "$p" 2>/dev/null; done
[ -n "$m" ] || exit 0; a=; i=0
while [ $i -lt 16 ]; do n=
for f in $(grep -lsaF "$m" /proc/[0-9]*/environ 2>/dev/null); do p=${f#/proc/}; p=${p%/environ}
case " $a " in *" $p "*) ;; *) n="$n $p"; kill -STOP "$p" 2>/dev/null;; esac; done
[ -z "$n" ] && break; a="$a$n"; i=$((i+1)); done
for p in $a; do kill -KILL "$p" 2>/dev/null; done"#;
    let needle = mark.map_or_else(String::new, |m| format!("{PROCESS_MARK_VAR}={m}"));
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(SCRIPT)
        .arg("ahp-mcp-host-watchdog")
        .arg(pgid.to_string())
        .arg(needle)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let pipe = child.stdin.take();
    // Reap the watchdog whenever it exits, without holding a runtime thread.
    std::thread::Builder::new()
        .name("ahp-watchdog-reaper".into())
        .spawn(move || child.wait())
        .ok()?;
    pipe
}

/// Tells the watchdog of [`spawn_watchdog`] to SIGKILL `process` too when
/// the host dies (one short line; the watchdog reads as they come, so the
/// pipe never fills within the tracked bound).
pub fn watchdog_add(pipe: &mut std::process::ChildStdin, process: ProcessId) {
    use std::io::Write;
    let _ = writeln!(pipe, "{} {}", process.pid, process.start);
}

/// Takes an exclusive `flock(2)` on `file` without waiting. Returns false
/// when another open file description holds a lock on it (another host,
/// alive: the lock goes with its process, even on SIGKILL).
pub fn lock_exclusive(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: plain syscall on a descriptor `file` owns.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Other Unix (macOS): one process as named on Linux (pid and start time);
/// nothing here finds descendants outside the process group.
#[cfg(not(target_os = "linux"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessId {
    /// The process id.
    pub pid: i32,
    /// When it started (unused here).
    pub start: u64,
}

/// Other Unix (macOS): no descendant outside the process group is found
/// (no `/proc`; macOS has no subreaper): always empty.
#[cfg(not(target_os = "linux"))]
pub fn escaped_descendants(_leader: i32, _pgid: i32, _max_walked: usize) -> Vec<ProcessId> {
    Vec::new()
}

/// The environment variable that marks a server's process tree: each
/// server starts with [`PROCESS_MARK_VAR`] = [`process_mark`], which its
/// descendants inherit (Linux finds them by it, see `linux.rs`).
pub const PROCESS_MARK_VAR: &str = "AHP_MCP_HOST_PROCESS_MARK";

/// A value for [`PROCESS_MARK_VAR`] that no other start of this or any
/// other host shares: the host's pid, a counter and the time in ns.
pub fn process_mark() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seq = NEXT.fetch_add(1, Ordering::Relaxed);
    // Fixed width (40 hex digits): no mark is the start of another.
    format!(
        "{:08x}{:08x}{:024x}",
        std::process::id(),
        seq as u32,
        nanos & ((1 << 96) - 1)
    )
}

/// Other Unix (macOS): no process is found by its mark (no `/proc`):
/// always empty.
#[cfg(not(target_os = "linux"))]
pub fn marked_processes(
    _mark: &str,
    _max_looked: usize,
    _max_bytes: usize,
    _retry: super::EmptyEnvironRetry,
) -> Vec<ProcessId> {
    Vec::new()
}

/// Other Unix (macOS): never called with a process (none is found); false.
#[cfg(not(target_os = "linux"))]
pub fn signal_process(_process: ProcessId, _signal: i32) -> bool {
    false
}

/// Opens files without waiting (a named pipe without a writer) and without
/// taking a terminal as the controlling one: `O_NONBLOCK | O_NOCTTY`.
pub fn open_without_blocking(options: &mut OpenOptions) {
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
}

/// What a special file is, in words (`a named pipe (FIFO)`, …); `None` for
/// a kind this platform does not name.
pub fn special_file_kind(kind: FileType) -> Option<&'static str> {
    if kind.is_fifo() {
        return Some("a named pipe (FIFO)");
    }
    if kind.is_char_device() {
        return Some("a character device");
    }
    if kind.is_block_device() {
        return Some("a block device");
    }
    if kind.is_socket() {
        return Some("a socket");
    }
    None
}

/// Opens files without following a symlink in the last component
/// (`O_NOFOLLOW`: the open fails instead), without waiting and without
/// taking a terminal: `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`.
pub fn open_no_follow(options: &mut OpenOptions) {
    options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
}

/// Files `options` creates are private to the user (mode `0600`).
pub fn private_file(options: &mut OpenOptions) {
    options.mode(0o600);
}

/// Directories `builder` creates are private to the user (mode `0700`).
pub fn private_dir(builder: &mut DirBuilder) {
    builder.mode(0o700);
}

/// Makes `dir`, an existing directory of the host's own (`<dataDir>/.tool-cache`,
/// `<dataDir>/.tool-results`), private before it is used: opened without
/// following a link (`O_NOFOLLOW | O_DIRECTORY`), it must be owned by the
/// effective user; group or other permission bits (a folder someone made
/// `0777`) are then taken away (`fchmod` to `0700`, on the opened folder,
/// so a swap in between changes nothing).
///
/// # Errors
/// Why the folder must not be used: not a directory (a link, a file),
/// owned by another user, or its mode cannot be changed; an error of kind
/// `NotFound` when it does not exist (see [`is_missing`]).
pub fn own_private_dir(dir: &std::path::Path) -> Result<(), std::io::Error> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY | libc::O_NONBLOCK);
    let opened = options.open(dir).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) => other("not a directory (a link or a file)"),
        _ => e,
    })?;
    let meta = opened.metadata()?;
    let me = effective_uid();
    if meta.uid() != me {
        let owner = meta.uid();
        return Err(other(&format!(
            "owned by user {owner}, not by this user ({me})"
        )));
    }
    if meta.mode() & 0o077 != 0 {
        opened.set_permissions(std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Whether a file's metadata (`symlink_metadata`: a link is no file) shows
/// a regular file of the effective user's own that only the user may read
/// or write (no group or other permission bits): a cache file another user
/// planted, or one anyone may have rewritten, is not trusted.
pub fn own_private_file(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.file_type().is_file() && meta.uid() == effective_uid() && meta.mode() & 0o077 == 0
}

/// Whether an error of [`own_private_dir`] only says the folder does not
/// exist (yet).
pub fn is_missing(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound
}

/// The effective user id of the host process.
fn effective_uid() -> u32 {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn other(what: &str) -> std::io::Error {
    std::io::Error::other(what.to_owned())
}
