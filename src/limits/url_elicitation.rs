//! The bounds of URL-mode elicitation (SEP-1036; MCP 2025-11-25 "Client
//! Features › Elicitation › URL Mode"; see `requests::url_elicitation` and
//! `mcp::tool_call::url_required`).

/// Longest `url` of a URL-mode elicitation the host shows (bytes): 8 KiB.
/// A longer one is refused: `elicitation/create` with JSON-RPC `-32602`, a
/// `tools/call` answered `-32042` with `protocol_error`.
pub const MAX_ELICITATION_URL_BYTES: usize = 8 * 1024;
/// URL elicitations in the `data.elicitations` of one `-32042` "URL
/// elicitation required" error (a count): 8. More fail the call
/// (`protocol_error`, nothing is shown to the user).
pub const MAX_REQUIRED_URL_ELICITATIONS: usize = 8;
/// URL elicitations of one server connection waiting for their
/// `notifications/elicitation/complete` (a count): 64, the bound of server
/// requests waiting on the app. Past it an elicitation is still shown, but
/// its completion is not watched (a `-32042` call is then sent again as
/// soon as the user accepted it).
pub const MAX_AWAITED_URL_ELICITATIONS: usize = super::MAX_PENDING_SERVER_REQUESTS;
/// How often a `tools/call` answered `-32042` is sent again after the
/// user completed its URL elicitations (a count): 1. A second `-32042`
/// fails the call with `url_elicitation_required`. The wait for the
/// completions is bounded by the call's total limit (`callMaxTotalMs`).
pub const URL_ELICITATION_RETRIES: usize = 1;
