//! The bounds of per-server tool filters (`includeTools`, `excludeTools`,
//! `setToolEnabled`; see `catalogue::filter`).

use super::{HARD_MAX_TOOLS_PER_SERVER, HARD_MAX_TOOL_NAME_BYTES};

/// Patterns in one `includeTools` or `excludeTools` list (a count): 1 000.
/// A longer list is refused with `invalid_argument`.
pub const MAX_TOOL_FILTER_PATTERNS: usize = 1_000;
/// Longest pattern of a tool filter, and longest tool name given to
/// `setToolEnabled` (bytes): the hard cap of `maxToolNameBytes`, 1 KiB.
pub const MAX_TOOL_FILTER_PATTERN_BYTES: usize = HARD_MAX_TOOL_NAME_BYTES;
/// Tools of one server switched on or off by `setToolEnabled` that the
/// host remembers (a count): the hard cap of `maxToolsPerServer`, 50 000.
/// Past it a new name is refused with `limit_exceeded`; switching a
/// remembered one again is always taken.
pub const MAX_TOOL_TOGGLES_PER_SERVER: usize = HARD_MAX_TOOLS_PER_SERVER;
