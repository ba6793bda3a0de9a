//! The bounds of tool search and deferred tool definitions (`searchTools`,
//! `listToolSummaries`, `getToolDefinitions`; see `catalogue::search`).

/// Longest `searchTools` query (bytes): 1 KiB. A longer one is refused with
/// `invalid_argument`.
pub const MAX_TOOL_SEARCH_QUERY_BYTES: usize = 1024;
/// Words of a `searchTools` query that are matched (a count): 16. Later
/// words are ignored.
pub const MAX_TOOL_SEARCH_WORDS: usize = 16;
/// Results of `searchTools` when `limit` is not given: 20.
pub const DEFAULT_TOOL_SEARCH_LIMIT: usize = 20;
/// Largest `limit` of `searchTools`: 1 000. A larger one (or 0) is refused
/// with `invalid_argument`.
pub const MAX_TOOL_SEARCH_LIMIT: usize = 1_000;
/// Server ids in `searchTools`' `serverIds` (a count): 1 000. A longer list
/// is refused with `invalid_argument`.
pub const MAX_TOOL_SEARCH_SERVER_IDS: usize = 1_000;
/// Names given to one `getToolDefinitions` (a count): 1 000. A longer list
/// is refused with `invalid_argument`.
pub const MAX_TOOL_DEFINITION_NAMES: usize = 1_000;
/// Characters of a tool's description that the search index keeps (the
/// first ones): 2 048. Title and name are indexed whole (they are bounded
/// by `maxToolNameBytes` and the schema bound).
pub const MAX_TOOL_SEARCH_DESCRIPTION_CHARS: usize = 2_048;
/// Characters of a summary's one-line description (`listToolSummaries`,
/// `searchTools`): 200; a longer first line is cut and ends with `…`.
pub const MAX_TOOL_SUMMARY_DESCRIPTION_CHARS: usize = 200;
