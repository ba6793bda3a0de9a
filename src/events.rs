//! What the host reports outward: AHP action envelopes and log records.
//!
//! The napi layer turns each [`HostEvent`] into a JS `'action'` or `'log'`
//! event; Rust tests collect them with a channel sink.

use ahp_types::actions::ActionEnvelope;
use serde::Serialize;

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

/// One log line: `{level, target, message, serverId?}` in JS.
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
}

/// Everything the host emits.
#[derive(Debug, Clone, PartialEq)]
pub enum HostEvent {
    /// An AHP action envelope (session channel), in `serverSeq` order.
    Action(Box<ActionEnvelope>),
    /// A log record.
    Log(LogRecord),
    /// A host-run sign-in needs the app to open `url` in a browser
    /// (JS event `authorizationUrl` `{serverId, url}`).
    AuthorizationUrl {
        /// The server being signed in to.
        server_id: String,
        /// The authorization endpoint URL with PKCE challenge and `state`.
        url: String,
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

/// Builds a log record.
pub fn log(
    level: LogLevel,
    target: &'static str,
    server_id: Option<&str>,
    message: impl Into<String>,
) -> HostEvent {
    HostEvent::Log(LogRecord {
        level,
        target,
        message: message.into(),
        server_id: server_id.map(str::to_owned),
    })
}
