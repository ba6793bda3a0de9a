//! Every operating-system-specific call of the crate, behind `cfg` gates, so
//! that the rest of the code compiles unchanged on each supported target.
//!
//! | call | Linux | macOS (other Unix) |
//! | --- | --- | --- |
//! | [`kill_group`] (`kill(2)` on `-pgid`), [`exit_signal`] | yes | yes |
//! | [`set_parent_death_signal`] (`PR_SET_PDEATHSIG` = SIGKILL) | yes | no-op (the watchdog covers host death) |
//! | [`spawn_watchdog`] (`/bin/sh` in its own process group) | yes | yes |
//! | [`open_without_blocking`] (`O_NONBLOCK \| O_NOCTTY`), [`special_file_kind`] | yes | yes |
//! | [`private_dir`] (mode `0700`), [`private_file`] (mode `0600`) | yes | yes |
//!
//! Only Unix targets are supported: the stdio transport stops a server by
//! signalling its process group and cleans up after a dead host with a
//! `/bin/sh` watchdog (`src/transport/process.rs`); a Windows port would
//! need Job Objects instead, which are not written. Building for a
//! non-Unix target stops here with one clear error first (`compile_error!`;
//! the unresolved `transport::process` imports that follow are its echo).

#[cfg(not(unix))]
compile_error!(
    "ahp-mcp-host supports Unix targets only (Linux, macOS): the stdio \
     transport relies on POSIX process groups and signals (src/platform/)"
);

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{
    exit_signal, kill_group, open_without_blocking, private_dir, private_file,
    set_parent_death_signal, spawn_watchdog, special_file_kind, SIGABRT, SIGINT, SIGKILL, SIGSEGV,
    SIGTERM,
};
