//! The per-server state machine as data: where a server's actor is
//! ([`Phase`]), what can happen to it ([`Input`]: a [`super::Command`] or an
//! event of the current phase) and what the actor then does ([`Effect`]).
//! [`transition`] is the one pure function between them; the actor
//! (`actor.rs`) only waits for the next input and runs the effects.
//!
//! ```text
//! stopped ──Start──▶ starting ──initialize ok──▶ ready ──crash──▶ error ──backoff──▶ starting …
//!                     │   │                       │ │               └─restart limit─▶ error (until Start)
//!                     │   └──fail/timeout──▶ error  │ └──Stop──▶ stopped
//!                     └──401/403──▶ authRequired ◀──┘ (a refused refresh)
//!                                   └──authenticate / sign-in──▶ starting (state stays authRequired)
//! ```
//!
//! Restart policy (AHP `McpServerState`; host option `limits`): only a crash
//! after `ready` restarts automatically, after
//! [`Limits::restart_delay_ms`]`(n)` (`restart_backoff_ms * 2^(n-1)`,
//! capped), at most `max_restarts` times in a row; the counter resets once
//! the server stayed up `restart_reset_after_ms`, and on a start request or
//! a sign-in while ready, backing off, stopped or failed (not while a start
//! is in flight or `authRequired` waits).
//! A failed start (bad command, handshake failure, timeout) stays in `error`
//! until a start request. A server the user stopped is never restarted.
//!
//! Authentication (MCP 2025-11-25 "Authorization", AHP `authRequired` /
//! `authenticate`): a 401/403 challenge leads to RFC 9728 discovery; stored
//! credentials of an earlier sign-in are tried once; otherwise the server
//! waits in `authRequired`. A retry after `authenticate` or a sign-in keeps
//! showing `authRequired` until it succeeds. `authenticate` while not
//! waiting is refused with -32602; a sign-in superseded by a newer one is
//! answered `cancelled`.

use std::time::{Duration, Instant};

use ahp_types::state::{McpServerAuthRequiredState, McpServerState, ProtectedResourceMetadata};

pub use crate::auth::step_up::Leaving;
use crate::error::{
    ErrorCode, ErrorDetail, HostError, HostResult, AHP_AUTH_REQUIRED, JSONRPC_INVALID_PARAMS,
};
use crate::events::LogLevel;
use crate::limits::Limits;

mod step;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_blocking;
#[cfg(test)]
mod tests_lazy;
#[cfg(test)]
mod tests_policy;
#[cfg(test)]
mod tests_provider;

use step::Step;

/// A secret string (a bearer token): compared, never shown by `Debug`.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() {
            "Secret(\"\")"
        } else {
            "Secret(…)"
        })
    }
}

/// Where a server's actor is. `crashes` counts crashes after `ready` since
/// the last reset (see the restart policy above).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Phase {
    /// Not running; the state is `stopped`. A new actor starts from here
    /// with [`Input::Start`].
    #[default]
    Stopped,
    /// Not running after a failure; the state is `error`.
    Failed,
    /// A connection attempt is in flight: spawn or connect, `initialize`,
    /// the first `tools/list`.
    Starting {
        /// Crashes so far.
        crashes: u32,
    },
    /// Serving a connection, up since `since`.
    Ready {
        /// Crashes so far.
        crashes: u32,
        /// When the server became `ready`.
        since: Instant,
    },
    /// The connection crashed and is being discarded (no commands are read
    /// until it is gone: [`Input::Discarded`] follows at once).
    Crashed {
        /// Crashes before this one.
        crashes: u32,
        /// When the server became `ready`.
        since: Instant,
        /// The exit status and stderr tail.
        reason: String,
    },
    /// The server answered 401/403: RFC 9728 discovery (and, with
    /// `restore`, a try of stored credentials) runs; no commands are read
    /// until [`Input::Discovered`] follows.
    Challenged {
        /// Crashes so far.
        crashes: u32,
        /// The `WWW-Authenticate` header.
        header: String,
        /// Stored credentials are tried when the metadata is found.
        restore: bool,
    },
    /// Waiting in `authRequired` for `authenticate`, a sign-in, a start or a stop.
    AuthRequired {
        /// Crashes so far.
        crashes: u32,
    },
    /// Waiting to restart after crash number `crashes`.
    BackingOff {
        /// Crashes so far (this restart is number `crashes`).
        crashes: u32,
    },
    /// The actor ended.
    Exited,
}

/// What the machine remembers about credentials (the tokens themselves stay
/// with the actor, except a pushed bearer token).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Creds {
    /// The bearer token pushed with `authenticate` or a step-up.
    pub token: Option<Secret>,
    /// A host-run sign-in's authorization manager is in use (it wins over `token`).
    pub oauth: bool,
    /// Stored credentials were already tried since the last `ready`.
    pub restore_tried: bool,
}

/// The machine's whole state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Machine {
    /// Where the actor is.
    pub phase: Phase,
    /// Credentials in use.
    pub creds: Creds,
    /// The `authRequired` state last published, as long as it is the
    /// server's shown state (a sign-in failure is described on it).
    pub shown_auth: Option<Box<McpServerAuthRequiredState>>,
    /// A client backgrounded the start in progress: `starting` is shown
    /// with `blocking: false` until the server leaves `starting`.
    pub backgrounded: bool,
}

/// What [`transition`] needs to know about the server.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Restart policy (`max_restarts`, `restart_backoff*`, `restart_reset_after_ms`).
    pub limits: Limits,
    /// The Streamable HTTP endpoint; `None` for stdio (which never needs authorization).
    pub endpoint: Option<url::Url>,
    /// The pre-registered OAuth client id, advertised in `authRequired`.
    pub client_id: Option<String>,
    /// A Streamable HTTP server whose headers come from the app's provider
    /// (host option `headers`): a 401 on a ready connection reconnects,
    /// which asks the provider again, instead of waiting in `authRequired`.
    pub headers_provider: bool,
    /// The server is `required` ([`crate::mcp::StartPolicy`]): its
    /// `starting` is published with `blocking: true` unless backgrounded.
    pub required: bool,
    /// The server is lazy ([`crate::mcp::StartPolicy::lazy`]): a stop or
    /// an idle stop keeps its tools published; a toggle off drops them.
    pub lazy: bool,
}

/// What an RFC 9728 discovery found.
#[derive(Debug, Clone, PartialEq)]
pub enum Discovery {
    /// Stored credentials of an earlier sign-in were found and adopted.
    Restored,
    /// The protected resource metadata (no usable stored credentials).
    Resource(ProtectedResourceMetadata),
    /// Discovery failed (`auth_discovery_failed`, …).
    Failed(HostError),
}

/// Something that happened to a server: a command (first group) or an
/// event of the current phase.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// [`super::Command::Start`].
    Start,
    /// [`super::Command::Stop`].
    Stop,
    /// [`super::Command::SetEnabled`].
    SetEnabled(bool),
    /// [`super::Command::Background`].
    Background,
    /// A lazy server's first step when the host published its cached
    /// tools and created it `stopped`: stay so (no state is published)
    /// until a call starts it.
    Dormant,
    /// Ready: a lazy server had no request for its idle time.
    IdleElapsed,
    /// The first step of a server the app's policy denied when it was
    /// added (`crate::policy`): the host published it in `error`
    /// (`policy_denied`); stay so (no state is published) until a start.
    Blocked,
    /// [`Command::Deny`](variant@super::Command::Deny): the policy now
    /// denies the server (`setPolicy`). Whatever runs ends and it shows
    /// `error` with this error (`policy_denied`) until a start.
    Denied(HostError),
    /// [`super::Command::Shutdown`], and why (`remove`: [`Leaving::Removed`];
    /// host shutdown: [`Leaving::ShutDown`]).
    Shutdown(Leaving),
    /// [`super::Command::UseOAuth`] (the manager stays with the actor).
    UseOAuth,
    /// [`Command::ConnectionFailed`](variant@super::Command::ConnectionFailed).
    ConnectionFailed {
        /// Why the session is unusable.
        error: HostError,
        /// The `WWW-Authenticate` header, if any.
        challenge: Option<String>,
    },
    /// [`Command::StepUpToken`](variant@super::Command::StepUpToken).
    StepUpToken(Secret),
    /// [`super::Command::Authenticate`] (empty = revoke).
    Authenticate(Secret),
    /// [`super::Command::AuthFailed`] with its description.
    AuthFailed(String),
    /// Every command sender is gone (the host dropped the handle).
    CommandsClosed,
    /// Starting: the connection is up, its tools listed and published in
    /// the catalogue (`tools_changed`: the model catalogue changed).
    Opened {
        /// When.
        at: Instant,
        /// Whether the catalogue must be published.
        tools_changed: bool,
    },
    /// Starting: the attempt failed.
    OpenFailed(HostError),
    /// Starting: the server answered 401/403 with this `WWW-Authenticate` header.
    Challenged(String),
    /// Challenged: what discovery found.
    Discovered(Discovery),
    /// Ready: a list the host re-lists changed (`notifications/tools/list_changed`;
    /// `notifications/resources/list_changed` from a server with skills).
    ListChanged,
    /// Ready: a scheduled re-list is due.
    RelistDue,
    /// Ready: the connection ended on its own (exit status, stderr tail).
    Crashed(String),
    /// Crashed: the connection is discarded (at `at`).
    Discarded {
        /// When.
        at: Instant,
    },
    /// Backing off: the restart delay passed.
    BackoffElapsed,
    /// The host was disposed: end at once, without any state.
    Disposed,
}

/// How a ready connection is closed.
#[derive(Debug, Clone, PartialEq)]
pub enum Closing {
    /// Gracefully (stdin, SIGTERM, SIGKILL); calls fail "server was stopped".
    Stopped,
    /// As [`Closing::Stopped`], but the server's tools stay published (a
    /// lazy server's stop or idle stop: the next call starts it again).
    Dormant,
    /// After a crash: kill what is left; calls fail `"server <reason>"`.
    Crashed(String),
}

/// What happens to an earlier pending `authenticate`/sign-in reply when a
/// new one is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Supersede {
    /// Dropped (its caller sees the server as gone).
    Drop,
    /// Answered `cancelled` ("superseded by a newer sign-in").
    Cancel,
}

/// What the actor does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// The server leaves `ready`, `starting`, `authRequired` (or discovery)
    /// for `why`: every chat tool call paused on it for authentication ends
    /// now — `session/inputNeededRemoved`, then `chat/toolCallComplete`
    /// failed with [`Leaving::error`] — before any other effect of the step.
    /// Not on a host-run sign-in or a 401 re-entering `authRequired` (those
    /// calls resume once the server is `ready` again).
    EndToolAuthWaits(Leaving),
    /// Emit `session/mcpServerStateChanged` (a repeated `starting` is not emitted).
    SetState(McpServerState),
    /// A log record from `host.supervisor`.
    Log(LogLevel, String),
    /// Start a connection attempt with the current credentials.
    Open,
    /// Abandon the attempt in flight (its process group is killed).
    CancelOpen,
    /// Close the ready connection, withdraw it from callers and remove the
    /// server's tools from the catalogue (`toolsChanged` reason `stopped`).
    /// After a crash, [`Input::Discarded`] follows.
    Close(Closing),
    /// Record (or clear) the server's `WWW-Authenticate` challenge for callers.
    SetChallenge(Option<String>),
    /// Run discovery for `header` (trying stored credentials with `restore`);
    /// [`Input::Discovered`] follows.
    Discover {
        /// The `WWW-Authenticate` header.
        header: String,
        /// Try stored credentials.
        restore: bool,
    },
    /// Publish the catalogue (`toolsChanged` reason `ready`).
    PublishTools,
    /// Remove the server's tools from the catalogue (`toolsChanged`
    /// reason `stopped`): a lazy server toggled off while not running.
    DropTools,
    /// Re-list tools: at once while the pacing allows (a burst of
    /// `LIST_CHANGED_BURST`), else once it does (one per
    /// `LIST_CHANGED_DEBOUNCE_MS`).
    ScheduleRelist,
    /// Re-list tools now (a failed listing keeps the previous tools).
    Relist,
    /// Restart after this delay.
    ScheduleRestart(Duration),
    /// Switch to the command's authorization manager.
    AdoptOAuth,
    /// Write the token into the live connection's bearer cell.
    WriteBearer,
    /// Keep the command's reply until the next connect attempt ends.
    HoldReply(Supersede),
    /// Answer the command's reply now.
    Reply(HostResult<()>),
    /// Answer the held reply (if any).
    Answer(HostResult<()>),
    /// Tell the command's sender it was handled.
    Ack,
}

/// The one transition: where `machine` goes on `input`, and what the actor
/// does on the way. Pure: no I/O, no clock.
pub fn transition(machine: &Machine, input: Input, rules: &Rules) -> (Machine, Vec<Effect>) {
    let mut step = Step {
        m: machine.clone(),
        fx: Vec::new(),
        rules,
    };
    step.apply(input);
    (step.m, step.fx)
}

/// `authenticate` reached a server that is not waiting for one (-32602).
pub fn not_waiting() -> HostError {
    HostError::new(
        ErrorCode::InvalidParams,
        "the server is not waiting for authentication",
    )
    .with_detail(ErrorDetail::Ahp {
        rpc_code: JSONRPC_INVALID_PARAMS,
        resources: None,
    })
}

/// AHP `AuthRequired` (-32007) for a token the server refused.
pub fn token_refused(requirement: &McpServerAuthRequiredState) -> HostError {
    HostError::new(
        ErrorCode::AuthRequired,
        format!(
            "the server refused the token for {}",
            requirement.resource.resource
        ),
    )
    .with_detail(ErrorDetail::Ahp {
        rpc_code: AHP_AUTH_REQUIRED,
        resources: Some(vec![requirement.resource.clone()]),
    })
}
