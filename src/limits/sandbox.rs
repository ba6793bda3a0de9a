//! The bounds of the stdio server sandbox (`sandbox` options; see
//! `config::sandbox` and `transport::sandbox`) and of its host-run
//! HTTP CONNECT proxy.

/// Most entries of one sandbox path list (`filesystem.read` or
/// `filesystem.write`, a count): 64. A longer list is refused
/// (`invalid_argument` naming the field).
pub const MAX_SANDBOX_PATHS: usize = 64;

/// Longest sandbox path entry (bytes): 4096, Linux's `PATH_MAX`.
pub const MAX_SANDBOX_PATH_BYTES: usize = 4096;

/// Most host names of one `network.allowHosts` list (a count): 256.
pub const MAX_SANDBOX_HOSTS: usize = 256;

/// Longest `allowHosts` entry (bytes): 253 for the name (the DNS limit),
/// plus `*.` and `:65535`.
pub const MAX_SANDBOX_HOST_BYTES: usize = 253 + 2 + 6;

/// Most connections one server's sandbox proxy carries at once (a count):
/// 64. A connection past it is closed at once, unanswered.
pub const SANDBOX_PROXY_MAX_CONNECTIONS: usize = 64;

/// Largest `CONNECT` request head the sandbox proxy reads (bytes): 8 KiB.
/// A longer head is answered `431` and closed.
pub const SANDBOX_PROXY_MAX_HEAD_BYTES: usize = 8 * 1024;

/// Time the sandbox proxy gives a client to send its request head, and
/// itself to resolve and connect to the target (ms): 10 s each. Past it
/// the client is answered `504` (target) or closed (head).
pub const SANDBOX_PROXY_HANDSHAKE_TIMEOUT_MS: u64 = 10_000;

/// Most bytes of a sandboxed program's first line read to find its
/// interpreter (`#!`), whose install prefix is then readable: 256.
pub const SANDBOX_SHEBANG_BYTES: usize = 256;
