//! The bounds of the model-facing output budget of a chat tool call (issue
//! 29 item 5; `chat::budget`, `chat::spill`): how much of a tool result goes
//! into the AHP chat state (`chat/toolCallComplete`), and the private files
//! under `dataDir` that keep the whole result when it does not fit.
//!
//! The budget is counted in characters (Unicode scalar values, Rust
//! `char`s; about 4 of them make one model token), not bytes: what a
//! model reads is text, and a cut never splits a character.

use super::HARD_MAX_RESULT_BYTES;

/// Default of [`super::Limits::model_output_max_chars`]: 100 000
/// characters, about 25 000 tokens at ~4 characters a token: Claude Code's
/// default MCP output limit (`MAX_MCP_OUTPUT_TOKENS`, 25 000 tokens), so a
/// result a model sees whole there is seen whole here.
pub const DEFAULT_MODEL_OUTPUT_MAX_CHARS: usize = 100_000;
/// Hard cap of [`super::Limits::model_output_max_chars`] and of the
/// per-server and per-call budgets (characters): 16 Mi, the largest result
/// the host takes ([`HARD_MAX_RESULT_BYTES`]), so a budget this large
/// never cuts.
pub const HARD_MAX_MODEL_OUTPUT_CHARS: usize = HARD_MAX_RESULT_BYTES;
/// Largest spill file (bytes of the whole result's JSON, after redaction):
/// 20 MiB, the largest result the host takes plus room for what redaction
/// and re-encoding add. A larger result is not kept; the marker says so.
pub const MAX_TOOL_RESULT_FILE_BYTES: usize = HARD_MAX_RESULT_BYTES + HARD_MAX_RESULT_BYTES / 4;
/// All spill files of one `dataDir` together (bytes): 256 MiB. Each write
/// removes the oldest files beyond it.
pub const MAX_TOOL_RESULT_FILES_BYTES: u64 = 256 * 1024 * 1024;
/// Spill files kept in one `dataDir` (a count): 1 000. Each write removes
/// the oldest files beyond it.
pub const MAX_TOOL_RESULT_FILES: usize = 1_000;
/// Age after which a spill file is removed (ms, by its modification time):
/// 7 days, long enough for a session to read it back, short enough that
/// results do not pile up.
pub const TOOL_RESULT_FILE_MAX_AGE_MS: u64 = 7 * 24 * 60 * 60 * 1000;
/// Entries of the spill directory one cleanup looks at (a count): 10 000;
/// a directory with more is cleaned over several writes.
pub const MAX_TOOL_RESULT_DIR_ENTRIES: usize = 10_000;
/// Longest wait of a chat tool call's completion for its spill file to be
/// written on the blocking pool (ms): 10 s. Past it the completion is
/// published with a marker saying the whole result was not kept.
pub const TOOL_RESULT_WRITE_WAIT_MS: u64 = 10_000;

// One file alone always fits the total, so a write never removes itself.
const _: () = assert!(MAX_TOOL_RESULT_FILE_BYTES as u64 <= MAX_TOOL_RESULT_FILES_BYTES);

/// A per-server or per-call budget (`modelOutputMaxChars`) within
/// 1 ..= [`HARD_MAX_MODEL_OUTPUT_CHARS`] characters, as
/// [`super::Limits::clamped`] keeps the host's.
pub fn clamped_output_chars(chars: u64) -> usize {
    usize::try_from(chars)
        .unwrap_or(usize::MAX)
        .clamp(1, HARD_MAX_MODEL_OUTPUT_CHARS)
}
