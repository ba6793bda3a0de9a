//! Every bound the host enforces, in one place: defaults and hard caps.
//!
//! Times are milliseconds, sizes are bytes. A host option may lower or raise
//! a default, but [`Limits::clamped`] keeps it within the hard caps.

use serde::Deserialize;

/// Longest stdio line (one JSON-RPC message) accepted from a server: 16 MiB.
/// Longer lines are discarded without being buffered; a response discarded
/// this way fails its request with `limit_exceeded`.
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
    /// Absolute cap on one `tools/call` (ms); progress never extends it. Default 600 000.
    pub call_max_total_ms: u64,
    /// Pages followed by one list walk (`tools/list`, `resources/list`, …). Default 100, hard cap 1 000.
    pub max_list_pages: usize,
    /// Longest pagination cursor (bytes). Default 4 KiB, hard cap 16 KiB.
    pub max_cursor_bytes: usize,
    /// Tools per server; more fails the listing. Default 5 000, hard cap 50 000.
    pub max_tools_per_server: usize,
    /// Items per resource/prompt list walk. Default 10 000, hard cap 100 000.
    pub max_list_items: usize,
    /// Longest tool name kept (bytes). Default 256, hard cap 1 KiB.
    pub max_tool_name_bytes: usize,
    /// Longest tool description kept; longer ones are cut (bytes). Default 16 KiB, hard cap 64 KiB.
    pub max_tool_description_bytes: usize,
    /// Input plus output schema of one tool (bytes, serialized). Default 256 KiB, hard cap 1 MiB.
    pub max_tool_schema_bytes: usize,
    /// All schemas of one server's listing (bytes). Default 16 MiB, hard cap 64 MiB.
    pub max_total_schema_bytes: usize,
    /// A tool result, resource read or prompt: all content together (bytes,
    /// serialized). Default 10 000 000, hard cap 16 MiB.
    pub max_result_bytes: usize,
    /// Nesting depth of schemas and results. Default 64, hard cap 128.
    pub max_json_depth: usize,
    /// Object members plus array elements of one schema or result. Default 100 000, hard cap 1 000 000.
    pub max_json_properties: usize,
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
            call_max_total_ms: 600_000,
            max_list_pages: 100,
            max_cursor_bytes: 4 * 1024,
            max_tools_per_server: 5_000,
            max_list_items: 10_000,
            max_tool_name_bytes: 256,
            max_tool_description_bytes: 16 * 1024,
            max_tool_schema_bytes: 256 * 1024,
            max_total_schema_bytes: 16 * 1024 * 1024,
            max_result_bytes: 10_000_000,
            max_json_depth: 64,
            max_json_properties: 100_000,
        }
    }
}

impl Limits {
    /// Returns a copy with every value inside its hard cap (timeouts 1 ms ..= 24 h,
    /// at most 100 restarts, sizes and counts at least 1 and at most the hard
    /// cap named on each field).
    pub fn clamped(self) -> Self {
        let t = |v: u64| v.clamp(1, MAX_TIMEOUT_MS);
        Self {
            startup_timeout_ms: t(self.startup_timeout_ms),
            call_timeout_ms: t(self.call_timeout_ms),
            max_restarts: self.max_restarts.min(100),
            restart_backoff_ms: t(self.restart_backoff_ms),
            restart_backoff_max_ms: t(self.restart_backoff_max_ms).max(t(self.restart_backoff_ms)),
            restart_reset_after_ms: t(self.restart_reset_after_ms),
            call_max_total_ms: t(self.call_max_total_ms),
            max_list_pages: self.max_list_pages.clamp(1, 1_000),
            max_cursor_bytes: self.max_cursor_bytes.clamp(1, 16 * 1024),
            max_tools_per_server: self.max_tools_per_server.clamp(1, 50_000),
            max_list_items: self.max_list_items.clamp(1, 100_000),
            max_tool_name_bytes: self.max_tool_name_bytes.clamp(1, 1024),
            max_tool_description_bytes: self.max_tool_description_bytes.clamp(1, 64 * 1024),
            max_tool_schema_bytes: self.max_tool_schema_bytes.clamp(1, 1024 * 1024),
            max_total_schema_bytes: self.max_total_schema_bytes.clamp(1, 64 * 1024 * 1024),
            max_result_bytes: self.max_result_bytes.clamp(1, MAX_STDIO_MESSAGE_BYTES),
            max_json_depth: self.max_json_depth.clamp(1, 128),
            max_json_properties: self.max_json_properties.clamp(1, 1_000_000),
        }
    }

    /// Delay before restart attempt `attempt` (1-based): `backoff * 2^(attempt-1)`,
    /// capped at `restart_backoff_max_ms`.
    pub fn restart_delay_ms(&self, attempt: u32) -> u64 {
        let shift = attempt.saturating_sub(1).min(30);
        self.restart_backoff_ms
            .saturating_mul(1u64 << shift)
            .min(self.restart_backoff_max_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let l = Limits {
            restart_backoff_ms: 100,
            restart_backoff_max_ms: 350,
            ..Default::default()
        };
        assert_eq!(
            [1, 2, 3, 4].map(|a| l.restart_delay_ms(a)),
            [100, 200, 350, 350]
        );
    }

    #[test]
    fn clamped_enforces_caps() {
        let l = Limits {
            startup_timeout_ms: 0,
            call_timeout_ms: u64::MAX,
            max_restarts: 1000,
            ..Default::default()
        }
        .clamped();
        assert_eq!(
            (l.startup_timeout_ms, l.call_timeout_ms, l.max_restarts),
            (1, MAX_TIMEOUT_MS, 100)
        );
    }
}
