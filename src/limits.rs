//! Every bound the host enforces, in one place: defaults and hard caps.
//!
//! Times are milliseconds, sizes are bytes. A host option may lower or raise
//! a default, but [`Limits::clamped`] keeps it within the hard caps.

use serde::Deserialize;

/// Hard cap on pages followed by one `tools/list` discovery.
pub const MAX_LIST_PAGES: usize = 100;
/// Hard cap on the byte length of one pagination cursor.
pub const MAX_CURSOR_BYTES: usize = 4 * 1024;
/// Hard cap on tools kept per server; further tools are dropped with a warning.
pub const MAX_TOOLS_PER_SERVER: usize = 5_000;
/// Longest stdio line (one JSON-RPC message) accepted from a server: 16 MiB.
/// Longer lines are discarded without being buffered.
pub const MAX_STDIO_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes of stderr kept per server for error messages (the tail).
pub const STDERR_TAIL_BYTES: usize = 4 * 1024;
/// Longest stderr line forwarded as one `log` event; longer lines are split.
pub const STDERR_LINE_BYTES: usize = 8 * 1024;
/// At most this many "non-JSON stdout line" warnings per server per window.
pub const STDOUT_NOISE_WARNINGS_PER_WINDOW: u32 = 3;
/// Length of the window for [`STDOUT_NOISE_WARNINGS_PER_WINDOW`].
pub const STDOUT_NOISE_WINDOW_MS: u64 = 10_000;
/// Debounce applied to `notifications/tools/list_changed` before re-listing.
pub const LIST_CHANGED_DEBOUNCE_MS: u64 = 100;
/// Grace after closing stdin before SIGTERM is sent to the process group.
pub const STOP_STDIN_GRACE_MS: u64 = 2_000;
/// Grace after SIGTERM before SIGKILL is sent to the process group.
pub const STOP_TERM_GRACE_MS: u64 = 2_000;
/// Largest OAuth metadata document (RFC 9728 / RFC 8414) accepted: 64 KiB.
pub const MAX_AUTH_METADATA_BYTES: usize = 64 * 1024;
/// Time allowed for each OAuth metadata request.
pub const AUTH_METADATA_TIMEOUT_MS: u64 = 10_000;
/// Hard cap for any configurable timeout: 24 h.
pub const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// Tunable limits (host option `limits`). Every field is optional in JS;
/// missing fields take the defaults of [`Limits::default`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Limits {
    /// Time allowed for spawn/connect plus the `initialize` handshake (ms). Default 30 000.
    pub startup_timeout_ms: u64,
    /// Default per-call timeout for `tools/call` (ms). Default 60 000.
    pub call_timeout_ms: u64,
    /// Automatic restarts after a crash before the server stays in `error`. Default 3.
    pub max_restarts: u32,
    /// First restart delay (ms); doubles on each consecutive crash. Default 1 000.
    pub restart_backoff_ms: u64,
    /// Upper bound of the restart delay (ms). Default 30 000.
    pub restart_backoff_max_ms: u64,
    /// Uptime after which the crash counter and backoff reset (ms). Default 60 000.
    pub restart_reset_after_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            startup_timeout_ms: 30_000,
            call_timeout_ms: 60_000,
            max_restarts: 3,
            restart_backoff_ms: 1_000,
            restart_backoff_max_ms: 30_000,
            restart_reset_after_ms: 60_000,
        }
    }
}

impl Limits {
    /// Returns a copy with every value inside its hard cap (timeouts 1 ms ..= 24 h,
    /// at most 100 restarts).
    pub fn clamped(self) -> Self {
        let t = |v: u64| v.clamp(1, MAX_TIMEOUT_MS);
        Self {
            startup_timeout_ms: t(self.startup_timeout_ms),
            call_timeout_ms: t(self.call_timeout_ms),
            max_restarts: self.max_restarts.min(100),
            restart_backoff_ms: t(self.restart_backoff_ms),
            restart_backoff_max_ms: t(self.restart_backoff_max_ms).max(t(self.restart_backoff_ms)),
            restart_reset_after_ms: t(self.restart_reset_after_ms),
        }
    }

    /// Delay before restart attempt `attempt` (1-based): `backoff * 2^(attempt-1)`,
    /// capped at `restart_backoff_max_ms`.
    pub fn restart_delay_ms(&self, attempt: u32) -> u64 {
        let shift = attempt.saturating_sub(1).min(30);
        self.restart_backoff_ms.saturating_mul(1u64 << shift).min(self.restart_backoff_max_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let l = Limits { restart_backoff_ms: 100, restart_backoff_max_ms: 350, ..Default::default() };
        assert_eq!([1, 2, 3, 4].map(|a| l.restart_delay_ms(a)), [100, 200, 350, 350]);
    }

    #[test]
    fn clamped_enforces_caps() {
        let l = Limits { startup_timeout_ms: 0, call_timeout_ms: u64::MAX, max_restarts: 1000, ..Default::default() }.clamped();
        assert_eq!((l.startup_timeout_ms, l.call_timeout_ms, l.max_restarts), (1, MAX_TIMEOUT_MS, 100));
    }
}
