//! One error type for the whole host, with stable string codes.
//!
//! Every failure that reaches JavaScript carries [`HostError::code`], a
//! `snake_case` string that never changes between releases, and a message
//! that names the field, server or bound involved. Messages never contain
//! secrets (tokens, client secrets, configured header values).

use std::fmt;

/// Stable error codes. The string form (see [`ErrorCode::as_str`]) is what JS
/// sees as `err.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// A command argument is missing or malformed (`invalid_argument`).
    InvalidArgument,
    /// `mcp.json` failed top-level validation (`invalid_config`).
    InvalidConfig,
    /// One server entry failed validation (`invalid_entry`).
    InvalidEntry,
    /// No customization or server with that id (`not_found`).
    NotFound,
    /// A plugin or server with that id already exists (`already_exists`).
    AlreadyExists,
    /// The server is not `ready`, so the request cannot be served (`server_not_ready`).
    ServerNotReady,
    /// The server process exited or the connection closed (`server_exited`).
    ServerExited,
    /// `initialize` did not complete within the startup timeout (`startup_timeout`).
    StartupTimeout,
    /// The process could not be spawned (`spawn_failed`).
    SpawnFailed,
    /// A bare or `./` command could not be resolved to an executable (`command_not_found`).
    CommandNotFound,
    /// A `./` command resolves outside the plugin root (`command_outside_root`).
    CommandOutsideRoot,
    /// A Streamable HTTP connection failed (`connect_failed`).
    ConnectFailed,
    /// A redirect to another origin was refused (`redirect_refused`).
    RedirectRefused,
    /// OAuth discovery found no usable metadata (`auth_discovery_failed`).
    AuthDiscoveryFailed,
    /// A host-run sign-in failed (discovery, registration, PKCE, token
    /// exchange, `state`/`iss` mismatch) (`auth_failed`).
    AuthFailed,
    /// The user or the authorization server refused consent (`auth_denied`).
    AuthDenied,
    /// AHP `AuthRequired` (JSON-RPC -32007): the token was refused or does
    /// not cover the required scopes; `data` is `{resources}` (`auth_required`).
    AuthRequired,
    /// AHP/JSON-RPC `InvalidParams` (-32602), e.g. `authenticate` for a
    /// resource this host never advertised (`invalid_params`).
    InvalidParams,
    /// The MCP handshake or a request failed at the protocol level (`protocol_error`).
    ProtocolError,
    /// The request was cancelled by the caller (`cancelled`).
    Cancelled,
    /// The request exceeded its time limit (`timeout`).
    Timeout,
    /// A bound from `limits.rs` was exceeded (`limit_exceeded`).
    LimitExceeded,
    /// The tool changed or disappeared since the caller read the catalogue;
    /// the call was not sent (`stale_tool`).
    StaleTool,
    /// A client action was refused (`rejected`).
    Rejected,
    /// The host was disposed (`disposed`).
    Disposed,
    /// A bug or an unexpected condition inside the host (`internal`).
    Internal,
}

impl ErrorCode {
    /// Every code, in declaration order (`tests/error_codes.rs` checks it
    /// against the variants, [`ErrorCode::as_str`] and the `HostErrorCode`
    /// union in `index.d.ts`).
    pub const ALL: [Self; 26] = [
        Self::InvalidArgument,
        Self::InvalidConfig,
        Self::InvalidEntry,
        Self::NotFound,
        Self::AlreadyExists,
        Self::ServerNotReady,
        Self::ServerExited,
        Self::StartupTimeout,
        Self::SpawnFailed,
        Self::CommandNotFound,
        Self::CommandOutsideRoot,
        Self::ConnectFailed,
        Self::RedirectRefused,
        Self::AuthDiscoveryFailed,
        Self::AuthFailed,
        Self::AuthDenied,
        Self::AuthRequired,
        Self::InvalidParams,
        Self::ProtocolError,
        Self::Cancelled,
        Self::Timeout,
        Self::LimitExceeded,
        Self::StaleTool,
        Self::Rejected,
        Self::Disposed,
        Self::Internal,
    ];

    /// The stable wire string of this code.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "invalid_argument",
            Self::InvalidConfig => "invalid_config",
            Self::InvalidEntry => "invalid_entry",
            Self::NotFound => "not_found",
            Self::AlreadyExists => "already_exists",
            Self::ServerNotReady => "server_not_ready",
            Self::ServerExited => "server_exited",
            Self::StartupTimeout => "startup_timeout",
            Self::SpawnFailed => "spawn_failed",
            Self::CommandNotFound => "command_not_found",
            Self::CommandOutsideRoot => "command_outside_root",
            Self::ConnectFailed => "connect_failed",
            Self::RedirectRefused => "redirect_refused",
            Self::AuthDiscoveryFailed => "auth_discovery_failed",
            Self::AuthRequired => "auth_required",
            Self::AuthFailed => "auth_failed",
            Self::AuthDenied => "auth_denied",
            Self::InvalidParams => "invalid_params",
            Self::ProtocolError => "protocol_error",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
            Self::LimitExceeded => "limit_exceeded",
            Self::Rejected => "rejected",
            Self::StaleTool => "stale_tool",
            Self::Disposed => "disposed",
            Self::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with a stable [`ErrorCode`], a human-readable message and optional
/// JSON `data` (for example a JSON-RPC error's `data`).
#[derive(Debug, Clone, PartialEq)]
pub struct HostError {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// Message naming the field, server or bound involved. Never contains secrets.
    pub message: String,
    /// Extra structured detail, e.g. `{ "code": -32602, "data": … }` of a JSON-RPC error.
    pub data: Option<serde_json::Value>,
}

impl HostError {
    /// Builds an error with no `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches structured `data`.
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for HostError {}

/// Result alias used across the crate.
pub type HostResult<T> = Result<T, HostError>;
