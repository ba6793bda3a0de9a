//! The bounds of lazy start and its persisted tool cache (issue 29 item 2;
//! see `mcp::tool_cache` and `host::lazy`).

/// Largest tool cache file written or read (bytes): 8 MiB. A listing whose
/// file would be larger is not cached (the server then starts at once next
/// time); a larger file is ignored.
pub const MAX_TOOL_CACHE_FILE_BYTES: usize = 8 * 1024 * 1024;
/// Files kept in the tool cache folder (a count): 512. Writing one more
/// removes the least recently written first.
pub const MAX_TOOL_CACHE_FILES: usize = 512;
/// Total bytes of the tool cache folder: 64 MiB. Writing past it removes
/// the least recently written files first.
pub const MAX_TOOL_CACHE_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// How long a cached listing is used (ms): 30 days since it was written.
/// An older one is ignored (the server starts at once and lists again).
pub const TOOL_CACHE_TTL_MS: u64 = 30 * 24 * 60 * 60 * 1000;
/// Time a tool cache file read may take (ms): 5 s; then the cache counts
/// as missing.
pub const TOOL_CACHE_READ_TIMEOUT_MS: u64 = 5_000;
/// Default `limits.idleStopMs` (ms): 10 minutes. A lazy server with no
/// request in flight for this long is stopped; its tools stay published.
pub const DEFAULT_IDLE_STOP_MS: u64 = 10 * 60 * 1000;
