//! The bounds of the legacy HTTP+SSE transport (MCP 2024-11-05 "Transports
//! › HTTP with SSE"; see `transport::sse`).

/// Largest SSE event accepted on the stream of a legacy HTTP+SSE server
/// (bytes of the event's `data` lines, as rmcp counts them for Streamable
/// HTTP): 16 MiB, the size of the largest Streamable HTTP answer. A larger
/// event ends the stream unread: the requests waiting for an answer fail
/// with `limit_exceeded`, and the transport reconnects (a new session, see
/// [`SSE_RECONNECT_ATTEMPTS`]).
pub const MAX_SSE_EVENT_BYTES: usize = 16 * 1024 * 1024;
/// Longest `endpoint` event URL (bytes, before it is resolved): 8 KiB. A
/// longer one fails the connection (`protocol_error`).
pub const MAX_SSE_ENDPOINT_BYTES: usize = 8 * 1024;
/// Longest wait for the `endpoint` event after the GET of the SSE stream
/// was answered (ms): 10 s. The spec has the server send it first; a stream
/// that sends none in time fails the connection (`connect_failed`), and
/// other events before it are dropped.
pub const SSE_ENDPOINT_WAIT_MS: u64 = 10_000;
/// First wait before the SSE stream is opened again after it was lost (ms):
/// 500. Each further attempt waits twice as long, up to
/// [`SSE_RECONNECT_MAX_MS`].
pub const SSE_RECONNECT_INITIAL_MS: u64 = 500;
/// Longest wait between two attempts to open a lost SSE stream again (ms): 8 s.
pub const SSE_RECONNECT_MAX_MS: u64 = 8_000;
/// Attempts to open a lost SSE stream again before the connection is given
/// up (a count): 5 (about 15 s of waits). Each successful attempt starts a
/// new session, initialized again; once all failed the connection closes
/// and the server's restart policy takes over (`limits.maxRestarts`).
pub const SSE_RECONNECT_ATTEMPTS: u32 = 5;
