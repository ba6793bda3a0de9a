//! The bounds of server policy and trust on first use (issue 32; see
//! `crate::policy`).

/// Most rules in one list of a policy (`allow` or `deny`; a count): 1 000.
/// A policy with more is refused (`invalid_argument` naming the list).
pub const MAX_POLICY_RULES: usize = 1_000;
/// Longest pattern or label of a policy rule (bytes): 2 KiB. A longer one
/// is refused (`invalid_argument` naming the field).
pub const MAX_POLICY_PATTERN_BYTES: usize = 2 * 1024;
/// Most `args` patterns of one policy rule (a count): 256.
pub const MAX_POLICY_ARGS: usize = 256;
/// Most remembered trust decisions in `<dataDir>/mcp-trust.json` (a count):
/// 1 024; writing one more drops the oldest decisions first.
pub const MAX_TRUST_ENTRIES: usize = 1_024;
/// Longest server id whose trust decision is written to the trust store
/// (bytes): 1 KiB. A decision about a server with a longer id is held for
/// the host's lifetime only.
pub const MAX_TRUST_SERVER_ID_BYTES: usize = 1024;
/// Largest `mcp-trust.json` read (bytes): 2 MiB (a full store of
/// [`MAX_TRUST_ENTRIES`] entries with the longest ids fits). A larger file
/// counts as empty: every server is asked again.
pub const MAX_TRUST_FILE_BYTES: usize = 2 * 1024 * 1024;
/// Longest read of `mcp-trust.json` (ms; then it counts as empty): 2 s.
pub const TRUST_STORE_READ_TIMEOUT_MS: u64 = 2_000;
/// Default `limits.trustTimeoutMs` (ms): 5 minutes. The app's `trust`
/// callback not answering within it is a refusal (`trust_failed`).
pub const DEFAULT_TRUST_TIMEOUT_MS: u64 = 5 * 60 * 1000;
