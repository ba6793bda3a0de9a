//! Every operating-system-specific call of the crate, behind `cfg` gates, so
//! that the rest of the code compiles unchanged on each supported target.
//!
//! | call | Linux | macOS (other Unix) |
//! | --- | --- | --- |
//! | [`kill_group`] (`kill(2)` on `-pgid`), [`exit_signal`] | yes | yes |
//! | [`set_parent_death_signal`] (`PR_SET_PDEATHSIG` = SIGKILL) | yes | no-op (the watchdog covers host death) |
//! | [`spawn_watchdog`] (`/bin/sh` in its own process group; [`watchdog_add`] names escaped descendants it also ends) | yes | yes (nothing to add) |
//! | [`open_without_blocking`] (`O_NONBLOCK \| O_NOCTTY`), [`open_no_follow`] (also `O_NOFOLLOW`), [`special_file_kind`] | yes | yes |
//! | [`read_regular_bytes`]: a bounded read of a regular file that never waits on a special one (`regular_file.rs`) | yes | yes |
//! | [`private_dir`] (mode `0700`), [`private_file`] (mode `0600`) | yes | yes |
//! | [`own_private_dir`] (the host's folder is the user's own: mode tightened to `0700`, else refused), [`own_private_file`] (the user's own, mode without group or other bits) | yes | yes |
//! | [`escaped_descendants`] (descendants outside the process group: `setsid()`, double fork), [`signal_process`] (pidfd + start time) | yes (`/proc` `children` links, see `linux.rs`) | none found: only the process group is signalled (macOS has no subreaper and no `/proc`) |
//! | [`process_mark`] ([`PROCESS_MARK_VAR`] in each server's environment), [`marked_processes`] (every process holding a mark, wherever it was reparented) | yes (`/proc/<pid>/environ`) | the mark is set, none found |
//! | [`lock_exclusive`] (`flock(2)`, non-blocking) | yes | yes |
//! | the stdio sandbox: `landlock_abi`, `landlock_ruleset` (built in the host), `restrict_child` (`no_new_privs` + `landlock_restrict_self` before `exec`; `sandbox.rs`) | yes (Landlock) | none here: macOS runs the server under `sandbox-exec` (`transport::sandbox::seatbelt`) |
//! | [`release_loader_pages`]: the resident pages of the addon's `.rela.dyn`, applied at load, given back (`madvise(MADV_DONTNEED)`, `loader_pages.rs`) | yes (64-bit) | no-op |
//! | [`open_keychain`]: the OS keychain of `credentials: 'os'` (`keychain.rs`, a `keyring-core` store; Windows: the Credential Manager) | the Secret Service (D-Bus) | the login keychain |
//!
//! On Windows (`windows.rs`) the stdio transport is `transport/process_windows.rs`
//! and the calls are: `wrap_in_job` (process-wrap's Job Object, kill-on-close,
//! `CREATE_NO_WINDOW`); `open_without_blocking` and `special_file_kind`
//! (no-ops there), `device_path_kind` and `opened_kind` (a config read
//! refuses `NUL`, `CON`, `\\.\pipe\…` by name and a non-disk handle by
//! `GetFileType`, so it never waits on them; both are `None` on Unix);
//! `private_dir` and `private_file` (the folder's inherited ACL);
//! `own_private_dir` and `own_private_file` (a folder that is no link, a
//! regular file: no owner or mode bits to check there);
//! `open_no_follow` (`FILE_FLAG_OPEN_REPARSE_POINT`: a link is opened
//! itself, never followed) and `lock_exclusive` (`LockFileEx`, through
//! std's `File::try_lock`). Descendants need no walk there: the Job Object
//! holds the whole tree, detached grandchildren included.
//! Other targets stop here with one clear error (`compile_error!`).

#[cfg(not(any(unix, windows)))]
compile_error!(
    "ahp-mcp-host supports Unix (Linux, macOS) and Windows targets only: the \
     stdio transport needs POSIX process groups or Job Objects (src/platform/)"
);

mod keychain;
pub use keychain::{open_keychain, KEYCHAIN_NAME};
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod loader_pages;
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub use loader_pages::release_loader_pages;
mod regular_file;
pub use regular_file::{read_regular_bytes, RegularReadError};
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod sandbox;
#[cfg(target_os = "linux")]
pub use sandbox::{
    landlock_abi, landlock_ruleset, restrict_child, LandlockRules, LandlockRuleset,
    SANDBOX_SETUP_ERRNO,
};
#[cfg(unix)]
mod unix;
#[cfg(target_os = "linux")]
pub use linux::{escaped_descendants, marked_processes, signal_process, ProcessId};
#[cfg(all(unix, not(target_os = "linux")))]
pub use unix::{escaped_descendants, marked_processes, signal_process, ProcessId};
#[cfg(unix)]
pub use unix::{
    exit_signal, is_missing, kill_group, lock_exclusive, open_no_follow, open_without_blocking,
    own_private_dir, own_private_file, private_dir, private_file, process_mark,
    set_parent_death_signal, spawn_watchdog, special_file_kind, watchdog_add, PROCESS_MARK_VAR,
    SIGABRT, SIGINT, SIGKILL, SIGSEGV, SIGSTOP, SIGTERM,
};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use self::windows::{
    device_path_kind, is_missing, lock_exclusive, open_no_follow, open_without_blocking,
    opened_kind, own_private_dir, own_private_file, private_dir, private_file, special_file_kind,
    wrap_in_job,
};

/// How `marked_processes` reads again a process whose environment read
/// empty (one in the middle of `execve`): `rounds` more reads at most,
/// `wait` apart (the caller's bounds, `crate::limits`).
#[cfg(unix)]
#[derive(Debug, Clone, Copy)]
pub struct EmptyEnvironRetry {
    /// Reads again at most (a count).
    pub rounds: u32,
    /// Between two rounds.
    pub wait: std::time::Duration,
}

/// A config path that names a device or pipe by name: never on Unix (the
/// opened file's type is checked there, see `special_file_kind`).
#[cfg(unix)]
pub fn device_path_kind(path: &std::path::Path) -> Option<&'static str> {
    let _ = path;
    None
}

/// What an opened config file is when it is no disk file: never on Unix
/// (its `FileType` says it, see `special_file_kind`).
#[cfg(unix)]
pub fn opened_kind(file: &std::fs::File) -> Option<&'static str> {
    let _ = file;
    None
}

/// Gives back the resident pages of the addon's relocation table once the
/// loader has applied it (Linux, `loader_pages.rs`); returns the bytes
/// advised. Elsewhere nothing to do: 0.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
pub fn release_loader_pages() -> usize {
    0
}

/// Hands the memory the allocator holds free back to the operating system
/// (glibc `malloc_trim(0)`: the free pages of every arena), so a large
/// catalogue generation that was let go of does not stay in the process's
/// resident set. A no-op elsewhere (other allocators return memory on
/// their own terms).
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes a byte count and only walks the
    // allocator's own free lists; it is safe to call from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
