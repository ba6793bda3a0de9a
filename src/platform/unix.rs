//! The Unix implementation of [`crate::platform`] (Linux and macOS); the
//! Linux-only parent-death signal is gated on `target_os = "linux"`.

use std::fs::{DirBuilder, FileType, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ExitStatus, Stdio};

/// Signal numbers the transport sends or names (`signal(7)`).
pub use libc::{SIGABRT, SIGINT, SIGKILL, SIGSEGV, SIGTERM};

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
/// group reading the pipe. Returns `None` where no `/bin/sh` exists.
pub fn spawn_watchdog(pgid: i32) -> Option<std::process::ChildStdin> {
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        // No `--`: dash's built-in kill rejects it; `-KILL -<pgid>` works in every POSIX sh.
        .arg("read -r _; kill -KILL -\"$1\" 2>/dev/null")
        .arg("ahp-mcp-host-watchdog")
        .arg(pgid.to_string())
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

/// Files `options` creates are private to the user (mode `0600`).
pub fn private_file(options: &mut OpenOptions) {
    options.mode(0o600);
}

/// Directories `builder` creates are private to the user (mode `0700`).
pub fn private_dir(builder: &mut DirBuilder) {
    builder.mode(0o700);
}
