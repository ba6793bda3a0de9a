//! What the host reports outward: AHP action envelopes and log records.
//!
//! The napi layer turns each [`HostEvent`] into a JS `'action'` or `'log'`
//! event, queued within [`OutboxBound`]; Rust tests collect them with a
//! channel sink.

use ahp_types::actions::ActionEnvelope;
use serde::Serialize;

mod encoded;
mod outbox_bound;

pub use encoded::{EncodedEnvelope, EnvelopeText};
pub use outbox_bound::{OutboxBound, OutboxKind};

/// Severity of a [`LogRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Diagnostic detail.
    Debug,
    /// Normal operation, including each server stderr line.
    Info,
    /// Something was skipped or degraded (e.g. a non-JSON stdout line).
    Warn,
    /// A failure.
    Error,
}

/// One log line: `{level, target, message, serverId?, serverLevel?}` in JS.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRecord {
    /// Severity.
    pub level: LogLevel,
    /// Source: `"server.stderr"` for a server's stderr line, otherwise a host
    /// component (`"host.stdio"`, `"host.supervisor"`, …).
    pub target: &'static str,
    /// The text. Never contains secrets.
    pub message: String,
    /// Customization id of the server concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    /// MCP logging only (target `"server.log"`): the `level` the server sent
    /// in `notifications/message`, verbatim (a string; anything else as its
    /// JSON text). `level` is its nearest [`LogLevel`] ([`LogLevel::nearest`]),
    /// so a level MCP does not define (`verbose`) is delivered, never dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_level: Option<String>,
}

impl LogLevel {
    /// The nearest level for a server's logging level: the RFC 5424 names MCP
    /// uses (MCP 2025-11-25 "Utilities › Logging": `debug`; `info`,
    /// `notice`; `warning`; `error`, `critical`, `alert`, `emergency`) and,
    /// for any other text, the usual names of other logging systems by their
    /// meaning (`trace`, `verbose`, `fine…` → debug; `warn…` → warn; `err…`,
    /// `fatal`, `severe`, `crit…`, `panic` → error); anything else is `info`.
    /// Case is ignored.
    pub fn nearest(level: &str) -> Self {
        let level = level.trim().to_ascii_lowercase();
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| level.starts_with(p));
        if starts(&["debug", "trace", "verbose", "fine", "silly"]) {
            Self::Debug
        } else if starts(&["warn"]) {
            Self::Warn
        } else if starts(&["err", "crit", "alert", "emerg", "fatal", "severe", "panic"]) {
            Self::Error
        } else {
            Self::Info
        }
    }
}

/// Why a server's part of the catalogue changed (JS `toolsChanged.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolsChangeReason {
    /// The server became `ready` and was listed.
    Ready,
    /// The server sent `notifications/tools/list_changed` and was re-listed.
    ListChanged,
    /// The server left `ready` (stopped, crashed, removed).
    Stopped,
    /// `setToolEnabled` switched one of the server's tools on or off.
    Filter,
    /// A lazy server's last known tools were published from the tool
    /// cache, without starting it.
    Cached,
}

/// What the user of a device authorization grant (RFC 8628 §3.3) is
/// shown: JS `deviceCode` `{userCode, verificationUri,
/// verificationUriComplete?, expiresInMs}` of the `authorizationUrl`
/// event. The `user_code` is for the user's eyes only: it is in this event
/// and nowhere else (not in logs, errors, actions or state); `Debug` hides
/// it. The device code itself never leaves the host.
#[derive(Clone, PartialEq, Eq)]
pub struct DeviceCodePrompt {
    /// The code the user enters at `verification_uri`.
    pub user_code: String,
    /// Where the user enters it.
    pub verification_uri: String,
    /// The same page with the code filled in, when the server gives one.
    pub verification_uri_complete: Option<String>,
    /// How long the code is polled for (ms): the server's `expires_in`,
    /// bounded by the host (`MAX_DEVICE_CODE_WAIT_SECS`) and the sign-in's
    /// `timeoutMs`.
    pub expires_in_ms: u64,
}

impl std::fmt::Debug for DeviceCodePrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceCodePrompt")
            .field("user_code", &"…")
            .field("verification_uri", &self.verification_uri)
            .field("expires_in_ms", &self.expires_in_ms)
            .finish()
    }
}

/// Everything the host emits.
#[derive(Debug, Clone, PartialEq)]
pub enum HostEvent {
    /// An AHP action envelope (session channel), in `serverSeq` order.
    Action(Box<ActionEnvelope>),
    /// An AHP action envelope that writes its own JSON (a
    /// `session/serverToolsChanged`), in the same `serverSeq` order as
    /// [`HostEvent::Action`]; [`HostEvent::envelope`] gives it typed.
    EncodedAction(EncodedEnvelope),
    /// A log record.
    Log(LogRecord),
    /// A host-run sign-in needs the app to open `url` in a browser
    /// (JS event `authorizationUrl` `{serverId, url, deviceCode?}`).
    AuthorizationUrl {
        /// The server being signed in to.
        server_id: String,
        /// The authorization endpoint URL with PKCE challenge and `state`;
        /// for a device authorization grant, its `verification_uri_complete`
        /// (else `verification_uri`).
        url: String,
        /// What the user of a device authorization grant (RFC 8628) is
        /// shown; `None` for the authorization code grant.
        device_code: Option<DeviceCodePrompt>,
    },
    /// The model tool catalogue changed because of server `server_id`
    /// (JS event `toolsChanged` `{serverId, reason, tools}`).
    ToolsChanged {
        /// The server whose tools changed.
        server_id: String,
        /// What happened to it.
        reason: ToolsChangeReason,
        /// Entries in the whole catalogue now.
        tools: usize,
    },
    /// A server sent `notifications/resources/list_changed` or
    /// `notifications/prompts/list_changed`, free-standing (2025 era) or on a
    /// `subscriptions/listen` stream (2026-07-28) (JS event `listChanged`
    /// `{serverId, list}`).
    ListChanged {
        /// The server.
        server_id: String,
        /// `resources` or `prompts`.
        list: &'static str,
    },
    /// A resource the app subscribed to changed: `notifications/resources/updated`
    /// (JS event `resourceUpdated` `{serverId, uri}`), in either era.
    ResourceUpdated {
        /// The server.
        server_id: String,
        /// The resource's URI, as the server sent it.
        uri: String,
    },
    /// A message for an AHP client on an MCP Apps `mcp://` channel (JS
    /// event `channelMessage`): a JSON-RPC response to a request sent with
    /// `sendChannelMessage` (`{jsonrpc, id, result | error, channel}`, the
    /// client's own `id`) or a forwarded server notification (`{jsonrpc,
    /// method, params?, channel}`).
    ChannelMessage(Box<serde_json::Value>),
}

impl HostEvent {
    /// The action envelope of an [`HostEvent::Action`] or
    /// [`HostEvent::EncodedAction`] (typed, made for the latter).
    pub fn envelope(&self) -> Option<ActionEnvelope> {
        match self {
            Self::Action(envelope) => Some((**envelope).clone()),
            Self::EncodedAction(encoded) => Some(encoded.0.envelope()),
            _ => None,
        }
    }
}

/// Receives host events. Called from any thread, sometimes while the session
/// lock is held: implementations must be quick and must not call back into
/// the host.
pub trait EventSink: Send + Sync + 'static {
    /// Delivers one event.
    fn send(&self, event: HostEvent);
}

/// A sink that forwards into a tokio unbounded channel (used by tests and the CLI).
impl EventSink for tokio::sync::mpsc::UnboundedSender<HostEvent> {
    fn send(&self, event: HostEvent) {
        let _ = tokio::sync::mpsc::UnboundedSender::send(self, event);
    }
}

/// Builds a log record of the host's own; every `http(s)` URL in `message`
/// is shown without userinfo, query and fragment, and every secret value
/// the host holds is replaced (`crate::redact::shown`).
pub fn log(
    level: LogLevel,
    target: &'static str,
    server_id: Option<&str>,
    message: impl Into<String>,
) -> HostEvent {
    let message = message.into();
    HostEvent::Log(LogRecord {
        level,
        target,
        message: crate::redact::shown(&message).into_owned(),
        server_id: server_id.map(str::to_owned),
        server_level: None,
    })
}

/// Builds the log record of a server's MCP log message (target
/// `"server.log"`): `server_level` as the server sent it, `level` its
/// [`LogLevel::nearest`]; `message` and `server_level` as [`log`] shows a
/// message (`crate::redact::shown`: a server may echo the query or a
/// header value it was sent).
pub fn server_log(server_id: &str, server_level: String, message: String) -> HostEvent {
    let shown = |text: String| match crate::redact::shown(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(shown) => shown,
    };
    let (message, server_level) = (shown(message), shown(server_level));
    HostEvent::Log(LogRecord {
        level: LogLevel::nearest(&server_level),
        target: "server.log",
        message,
        server_id: Some(server_id.to_owned()),
        server_level: Some(server_level),
    })
}

#[cfg(test)]
mod tests {
    use super::LogLevel;

    #[test]
    fn server_levels_map_to_the_nearest_level() {
        let cases = [
            ("debug", LogLevel::Debug),
            ("info", LogLevel::Info),
            ("notice", LogLevel::Info),
            ("warning", LogLevel::Warn),
            ("error", LogLevel::Error),
            ("critical", LogLevel::Error),
            ("alert", LogLevel::Error),
            ("emergency", LogLevel::Error),
            ("verbose", LogLevel::Debug),
            ("TRACE", LogLevel::Debug),
            ("warn", LogLevel::Warn),
            ("fatal", LogLevel::Error),
            ("7", LogLevel::Info),
            ("", LogLevel::Info),
        ];
        for (level, want) in cases {
            assert_eq!(LogLevel::nearest(level), want, "{level}");
        }
    }
}
