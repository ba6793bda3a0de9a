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
    /// The server did not declare the capability the request needs (MCP
    /// 2025-11-25 "Lifecycle › Capability Negotiation"), e.g. `prompts/get`
    /// on a server without `prompts`; the request was not sent. The message
    /// names the server and the capability (`not_supported`). Also a device
    /// authorization grant asked of an authorization server that advertises
    /// no `device_authorization_endpoint` (RFC 8628 §4).
    NotSupported,
    /// The server process exited or the connection closed (`server_exited`).
    ServerExited,
    /// A stop request stopped the server while something waited on it, e.g.
    /// a chat tool call paused for authentication (`server_stopped`).
    ServerStopped,
    /// The server was disabled (toggled off) while something waited on it
    /// (`server_disabled`).
    ServerDisabled,
    /// The server was removed while something waited on it (`server_removed`).
    ServerRemoved,
    /// A start request restarted the server while something waited on it
    /// (`server_restarted`).
    ServerRestarted,
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
    /// The credential store could not keep or give back OAuth credentials
    /// (`credential_store_failed`): the OS keychain of `credentials: 'os'`
    /// is not reachable (no Secret Service on the D-Bus session bus, a
    /// locked or refusing keychain, no answer within
    /// `limits::KEYCHAIN_CALL_TIMEOUT_MS`), a value is over
    /// `limits::MAX_KEYCHAIN_VALUE_BYTES`, or the app's store threw. The
    /// message names the store (`credential store: OS keychain (Secret
    /// Service) is not reachable: …`); nothing falls back to memory.
    CredentialStoreFailed,
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
    /// A skill file failed verification against its skill entry (SEP-2640
    /// "Integrity and Verification": size, `sha256:` digest, or the
    /// `SKILL.md` frontmatter); the skill was not loaded and no further file
    /// was read. The message names the file; `data` is `{serverId, uri,
    /// file, reason: "size" | "digest" | "frontmatter"}`
    /// (`skill_verification_failed`).
    SkillVerificationFailed,
    /// A task-based tool call (Tasks extension, SEP-2663) ended `failed`:
    /// `data` is the task's JSON-RPC error `{code, data}` (`task_failed`).
    TaskFailed,
    /// The server cancelled a task-based tool call (status `cancelled`
    /// without the caller asking) (`task_cancelled`).
    TaskCancelled,
    /// The server no longer knows a task (expired or purged: `tasks/get`
    /// answered -32602), or a recorded task outlived its `ttlMs` before a
    /// host could follow it again (`task_expired`).
    TaskExpired,
    /// The tool is filtered out for its server (`includeTools`,
    /// `excludeTools` or `setToolEnabled`): the call was not sent; `data` is
    /// `{serverId, toolName, reason}` (`tool_disabled`).
    ToolDisabled,
    /// A `tools/call` the server answered with `-32042` "URL elicitation
    /// required" (MCP 2025-11-25 "Elicitation › URL Elicitation Required
    /// Error") could not go on: nobody could show the URL (no AHP chat call,
    /// no URL `elicitation` handler), the user declined or cancelled it, or
    /// the call retried once after completion was answered `-32042` again.
    /// `data` is `{reason, elicitations: [{elicitationId, message,
    /// origin}]}`, never a URL (`url_elicitation_required`).
    UrlElicitationRequired,
    /// The app's server policy refuses the server (host option `policy`,
    /// `setPolicy`; issue 32): a deny rule matched, or an allow list is set
    /// and no rule of it matched. The server never starts: it is published
    /// in `error` with this code, the message naming the rule (`deny[0]`,
    /// its label) (`policy_denied`).
    PolicyDenied,
    /// The app's `trust` callback refused the server's configuration (now,
    /// or earlier and remembered under `dataDir`): the server is `stopped`
    /// and never started (`trust_refused`).
    TrustRefused,
    /// The app's `trust` callback threw, answered something else than a
    /// boolean or `{trust}`, or did not answer within
    /// `limits.trustTimeoutMs`: a refusal that is not remembered; the
    /// server is `stopped` (`trust_failed`).
    TrustFailed,
    /// A sandboxed stdio server failed because its sandbox refused
    /// something: it exited before answering `initialize` with a
    /// permission error on stderr (`EACCES`, `EPERM`, "Permission
    /// denied"), or executing its program was refused
    /// (`sandbox_denied`).
    SandboxDenied,
    /// A server's sandbox cannot be set up as asked: `enforce: 'required'`
    /// on a platform or kernel that cannot enforce every part of the
    /// profile (the message lists them), or the rules or the proxy could
    /// not be made (`sandbox_unavailable`). The server does not run.
    SandboxUnavailable,
}

impl ErrorCode {
    /// Every code, in declaration order (`tests/error_codes.rs` checks it
    /// against the variants, [`ErrorCode::as_str`] and the `HostErrorCode`
    /// union in `index.d.ts`).
    pub const ALL: [Self; 43] = [
        Self::InvalidArgument,
        Self::InvalidConfig,
        Self::InvalidEntry,
        Self::NotFound,
        Self::AlreadyExists,
        Self::ServerNotReady,
        Self::NotSupported,
        Self::ServerExited,
        Self::ServerStopped,
        Self::ServerDisabled,
        Self::ServerRemoved,
        Self::ServerRestarted,
        Self::StartupTimeout,
        Self::SpawnFailed,
        Self::CommandNotFound,
        Self::CommandOutsideRoot,
        Self::ConnectFailed,
        Self::RedirectRefused,
        Self::AuthDiscoveryFailed,
        Self::AuthFailed,
        Self::AuthDenied,
        Self::CredentialStoreFailed,
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
        Self::SkillVerificationFailed,
        Self::TaskFailed,
        Self::TaskCancelled,
        Self::TaskExpired,
        Self::ToolDisabled,
        Self::UrlElicitationRequired,
        Self::PolicyDenied,
        Self::TrustRefused,
        Self::TrustFailed,
        Self::SandboxDenied,
        Self::SandboxUnavailable,
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
            Self::NotSupported => "not_supported",
            Self::ServerExited => "server_exited",
            Self::ServerStopped => "server_stopped",
            Self::ServerDisabled => "server_disabled",
            Self::ServerRemoved => "server_removed",
            Self::ServerRestarted => "server_restarted",
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
            Self::CredentialStoreFailed => "credential_store_failed",
            Self::InvalidParams => "invalid_params",
            Self::ProtocolError => "protocol_error",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
            Self::LimitExceeded => "limit_exceeded",
            Self::Rejected => "rejected",
            Self::StaleTool => "stale_tool",
            Self::Disposed => "disposed",
            Self::Internal => "internal",
            Self::SkillVerificationFailed => "skill_verification_failed",
            Self::TaskFailed => "task_failed",
            Self::TaskCancelled => "task_cancelled",
            Self::TaskExpired => "task_expired",
            Self::ToolDisabled => "tool_disabled",
            Self::UrlElicitationRequired => "url_elicitation_required",
            Self::PolicyDenied => "policy_denied",
            Self::TrustRefused => "trust_refused",
            Self::TrustFailed => "trust_failed",
            Self::SandboxDenied => "sandbox_denied",
            Self::SandboxUnavailable => "sandbox_unavailable",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with a stable [`ErrorCode`], a human-readable message and a
/// typed [`ErrorDetail`]. Only the napi layer turns the detail into the JSON
/// `data` JS sees (see [`ErrorDetail::data`]); inside the crate, code
/// branches on the detail's variants, never on JSON keys.
#[derive(Debug, Clone, PartialEq)]
pub struct HostError {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// Message naming the field, server or bound involved. Never contains secrets.
    pub message: String,
    /// Structured detail (JSON `data` at the JS edge).
    pub detail: ErrorDetail,
}

impl HostError {
    /// Builds an error with no detail. Every `http(s)` URL in `message` is
    /// shown without userinfo, query and fragment, and every secret value
    /// the host holds is replaced by `[redacted]` (`crate::redact::shown`):
    /// a library's error text may carry a URL's path and query, and a
    /// server's may echo a header value or the query it was sent.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        let message = match crate::redact::shown(&message) {
            std::borrow::Cow::Borrowed(_) => message,
            std::borrow::Cow::Owned(shown) => shown,
        };
        Self {
            code,
            message,
            detail: ErrorDetail::None,
        }
    }

    /// Attaches a structured detail.
    pub fn with_detail(mut self, detail: ErrorDetail) -> Self {
        self.detail = detail;
        self
    }

    /// Whether this is a mid-call step-up challenge (403
    /// `insufficient_scope`, MCP 2025-11-25 "Authorization › Scope
    /// challenge handling"): the connection stays usable and a chat tool
    /// call may pause for a token.
    pub fn is_step_up(&self) -> bool {
        self.code == ErrorCode::AuthRequired
            && matches!(
                self.detail,
                ErrorDetail::Challenge {
                    insufficient_scope: true,
                    ..
                }
            )
    }

    /// The AHP JSON-RPC error number (AHP 1.0 "Errors"): -32007
    /// `AuthRequired`, -32602 `InvalidParams`; `None` for other errors. JS
    /// sees it as `err.rpcCode`.
    pub fn rpc_code(&self) -> Option<i64> {
        match &self.detail {
            ErrorDetail::Ahp { rpc_code, .. } => Some(*rpc_code),
            ErrorDetail::Challenge { .. } => Some(AHP_AUTH_REQUIRED),
            _ => None,
        }
    }
}

/// AHP JSON-RPC error number `AuthRequired` (AHP 1.0 "Errors").
pub const AHP_AUTH_REQUIRED: i64 = -32007;
/// JSON-RPC error number `InvalidParams` (JSON-RPC 2.0 §5.1).
pub const JSONRPC_INVALID_PARAMS: i64 = -32602;

/// Which limit a request hit (`timeout` errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    /// No response and no progress for the inactivity limit (`"inactivity"`).
    Inactivity,
    /// The absolute limit that progress never extends (`"total"`).
    Total,
}

/// Why a tool is stale (`stale_tool` errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaleReason {
    /// The definition changed since the caller read it (`"changed"`).
    Changed,
    /// The tool is gone (`"removed"`).
    Removed,
}

/// Typed detail of a [`HostError`]; [`ErrorDetail::data`] gives its JSON
/// `data` (shapes below are what JS sees in `err.data`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ErrorDetail {
    /// No detail (`data` absent).
    #[default]
    None,
    /// A JSON-RPC error the MCP server answered: `{code, data}` (`data`
    /// `null` when the server sent none).
    JsonRpc {
        /// The server's JSON-RPC error code, e.g. -32602.
        code: i64,
        /// The server's error `data`.
        data: Option<serde_json::Value>,
    },
    /// An AHP error of `authenticate` (AHP 1.0 "Authentication"): `{code,
    /// resources?}` with `code` -32007 or -32602 and the protected
    /// resources (RFC 9728 metadata) concerned or advertised.
    Ahp {
        /// -32007 ([`AHP_AUTH_REQUIRED`]) or -32602 ([`JSONRPC_INVALID_PARAMS`]).
        rpc_code: i64,
        /// The resources; `None` leaves `resources` out.
        resources: Option<Vec<ahp_types::state::ProtectedResourceMetadata>>,
    },
    /// A `WWW-Authenticate` challenge on a request (RFC 6750 §3): `{code:
    /// -32007, insufficientScope, requiredScopes}`.
    Challenge {
        /// `error="insufficient_scope"` (403 step-up) rather than a refused token.
        insufficient_scope: bool,
        /// The challenge's `scope` parameter, split on spaces.
        required_scopes: Vec<String>,
    },
    /// A request limit passed: `{kind: "inactivity" | "total", ms}`.
    Timeout {
        /// Which limit.
        kind: TimeoutKind,
        /// The limit in ms.
        ms: u64,
    },
    /// A stale tool: `{reason: "changed" | "removed", serverId?, toolName?}`.
    Stale {
        /// Why.
        reason: StaleReason,
        /// The tool's server and original name, when known.
        tool: Option<(String, String)>,
    },
    /// A skill file that failed verification: `{serverId, uri, file, reason}`.
    Skill {
        /// The server's id.
        server_id: String,
        /// The skill's `SKILL.md` URI.
        uri: String,
        /// The file that failed.
        file: String,
        /// `"size"`, `"digest"` or `"frontmatter"`.
        reason: &'static str,
    },
    /// A tool its server's filter leaves out: `{serverId, toolName, reason}`.
    ToolDisabled {
        /// The server's id.
        server_id: String,
        /// The tool's original name.
        tool_name: String,
        /// Why, as the `filtered` tool diagnostic says it.
        reason: String,
    },
    /// The URL elicitations a `tools/call` needed: `{reason, elicitations}`
    /// (`reason` `"unanswerable"`, `"decline"`, `"cancel"` or
    /// `"requiredAgain"`; each elicitation `{elicitationId, message,
    /// origin}`, never its URL).
    UrlElicitations {
        /// Why the call did not go on.
        reason: &'static str,
        /// The elicitations as they may be shown.
        elicitations: Vec<serde_json::Value>,
    },
}

impl ErrorDetail {
    /// The JSON `data` of this detail (`None` for [`ErrorDetail::None`]).
    pub fn data(&self) -> Option<serde_json::Value> {
        use serde_json::json;
        Some(match self {
            Self::None => return None,
            Self::JsonRpc { code, data } => json!({ "code": code, "data": data }),
            Self::Ahp {
                rpc_code,
                resources: Some(resources),
            } => json!({ "code": rpc_code, "resources": resources }),
            Self::Ahp { rpc_code, .. } => json!({ "code": rpc_code }),
            Self::Challenge {
                insufficient_scope,
                required_scopes,
            } => json!({
                "code": AHP_AUTH_REQUIRED,
                "insufficientScope": insufficient_scope,
                "requiredScopes": required_scopes,
            }),
            Self::Timeout { kind, ms } => {
                let kind = match kind {
                    TimeoutKind::Inactivity => "inactivity",
                    TimeoutKind::Total => "total",
                };
                json!({ "kind": kind, "ms": ms })
            }
            Self::Stale { reason, tool } => {
                let reason = match reason {
                    StaleReason::Changed => "changed",
                    StaleReason::Removed => "removed",
                };
                match tool {
                    Some((server, tool)) => {
                        json!({ "reason": reason, "serverId": server, "toolName": tool })
                    }
                    None => json!({ "reason": reason }),
                }
            }
            Self::Skill {
                server_id,
                uri,
                file,
                reason,
            } => json!({ "serverId": server_id, "uri": uri, "file": file, "reason": reason }),
            Self::ToolDisabled {
                server_id,
                tool_name,
                reason,
            } => json!({ "serverId": server_id, "toolName": tool_name, "reason": reason }),
            Self::UrlElicitations {
                reason,
                elicitations,
            } => json!({ "reason": reason, "elicitations": elicitations }),
        })
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

/// Removes `[path::Type<…>]` segments (Rust type names) from a library's
/// error text (rmcp's `Display` texts name its types), and collapses white
/// space.
pub(crate) fn strip_type_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('[') {
        let Some(len) = rest[start..].find(']') else {
            break;
        };
        let inner = &rest[start..start + len];
        out.push_str(&rest[..start]);
        if !inner.contains("::") {
            out.push_str(&rest[start..=start + len]);
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
