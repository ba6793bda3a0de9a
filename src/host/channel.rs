//! The MCP Apps `mcp://` side channel (AHP "MCP Servers › MCP Apps", the
//! `mcp://` channel; JS `sendChannelMessage`, the `channelMessage` event)
//! and `readAppResource`.
//!
//! An AHP client sends MCP JSON-RPC requests and notifications, each with a
//! top-level `channel` (the `McpServerCustomization.channel` of a ready
//! server). The host admits a message synchronously, in the order they are
//! sent ([`Host::send_channel_message`]):
//!
//! 1. at most `maxChannelMessageBytes` of JSON (else -32600 `limit_exceeded`);
//! 2. JSON-RPC 2.0 shape (else -32600 `invalid_argument`, see [`message`]);
//! 3. an open channel of a ready server (else -32000 `server_not_ready`:
//!    an unknown channel, a stale one of an earlier connection, a server
//!    that is not ready; nothing reaches any server);
//! 4. a method the channel serves ([`crate::apps::policy`]; else -32601
//!    `not_supported`, naming the served methods);
//! 5. `tools/call` of a tool whose `_meta.ui.visibility` is given without
//!    `"app"`: -32602 `invalid_argument`; of a tool the server's tool filter
//!    leaves out: -32602 `tool_disabled`; `resources/read` of a `ui://` URI
//!    no tool of the server links: -32602 `not_found` (`data.uri`);
//! 6. one of `maxChannelRequests` in-flight slots of the channel (else
//!    -32600 `limit_exceeded`); an id already in flight on the channel is
//!    -32600 `invalid_argument`.
//!
//! Then it is served ([`serve`]) within `channelRequestTimeoutMs` (-32001
//! `timeout`; the request is cancelled upstream) and answered with the
//! client's own `id`. A refused notification is never answered: it is
//! logged (`warn`, target `host.mcpApp`). `notifications/message` of the
//! App (with `logging`) becomes a `log` record (target `host.mcpApp`);
//! `notifications/cancelled` cancels one of the channel's requests
//! upstream and its response is not sent. A `tools/call` through the
//! channel is not an AHP chat tool call: no chat actions, and app-only
//! tools are callable.

mod calls;
mod message;
mod serve;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use calls::ChannelCalls;

use super::Host;
use crate::apps::channels::ChannelRef;
use crate::apps::policy::{self, Route};
use crate::apps::ui_resource::{check_contents, check_linked, is_ui_uri};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, HostEvent, LogLevel};
use crate::mcp::Session;
use message::{Bad, Incoming, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, SERVER_NOT_READY};

/// The work of one admitted channel request: run it on the async runtime
/// (it ends by itself: answered, timed out, cancelled or disposed).
pub type ChannelTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The `log` target of the channel (refused notifications, the App's
/// `notifications/message`).
const TARGET: &str = "host.mcpApp";

/// A message the host answers (or, without an id, logs) instead of serving.
struct Refuse {
    /// The request's id (`Some(null)` for a malformed one); `None`: a
    /// notification, logged.
    id: Option<Value>,
    rpc: i64,
    error: HostError,
    extra: Map<String, Value>,
}

impl Refuse {
    fn new(id: Option<Value>, rpc: i64, code: ErrorCode, message: String) -> Box<Self> {
        Box::new(Self {
            id,
            rpc,
            error: HostError::new(code, message),
            extra: Map::new(),
        })
    }
}

impl Host {
    /// JS `sendChannelMessage`: admits one JSON-RPC message (its JSON text)
    /// sent on an `mcp://` channel (see the module doc) and returns the
    /// task serving it, if it is a request to serve. Every other outcome
    /// is already answered on the channel (a `channelMessage` event) or
    /// logged.
    ///
    /// # Errors
    /// `invalid_argument` when `text` is not a JSON object with a string
    /// `channel`; `disposed`. Nothing else: the rest is answered on the channel.
    pub fn send_channel_message(&self, text: &str) -> HostResult<Option<ChannelTask>> {
        self.check_live()?;
        let object = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => object,
            _ => {
                let what = "sendChannelMessage: the message must be a JSON-RPC object";
                return Err(HostError::new(ErrorCode::InvalidArgument, what));
            }
        };
        let Some(channel) = object.get("channel").and_then(Value::as_str) else {
            let what = "sendChannelMessage: the message has no string `channel`";
            return Err(HostError::new(ErrorCode::InvalidArgument, what));
        };
        match self.admit(channel, text.len(), &object) {
            Ok(task) => Ok(task),
            Err(refuse) => {
                self.refuse(channel, refuse);
                Ok(None)
            }
        }
    }

    /// Answers (a request) or logs (a notification) a refused message.
    fn refuse(&self, channel: &str, r: Box<Refuse>) {
        let r = *r;
        let event = match &r.id {
            Some(id) => {
                let answer = message::host_error(channel, id, r.rpc, &r.error, r.extra);
                HostEvent::ChannelMessage(Box::new(answer))
            }
            None => {
                let server = self.shared.publisher().app_channels().resolve(channel);
                let server_id = server.as_ref().map(|c| c.server_id.as_str());
                let what = format!("{channel}: notification refused: {}", r.error.message);
                log(LogLevel::Warn, TARGET, server_id, what)
            }
        };
        self.shared.publisher().log(event);
    }

    /// Steps 1–6 of the module doc.
    fn admit(
        &self,
        channel: &str,
        bytes: usize,
        object: &Map<String, Value>,
    ) -> Result<Option<ChannelTask>, Box<Refuse>> {
        let max = self.shared.limits().max_channel_message_bytes;
        if bytes > max {
            let id = message::usable_id(object).unwrap_or(Some(Value::Null));
            let what =
                format!("the message is {bytes} bytes, more than maxChannelMessageBytes ({max})");
            return Err(Refuse::new(
                id,
                INVALID_REQUEST,
                ErrorCode::LimitExceeded,
                what,
            ));
        }
        let incoming = match message::parse(channel, object) {
            Ok(incoming) => incoming,
            Err(Bad::Malformed { id, why }) => {
                let what = format!("invalid JSON-RPC message: {why}");
                return Err(Refuse::new(
                    Some(id),
                    INVALID_REQUEST,
                    ErrorCode::InvalidArgument,
                    what,
                ));
            }
            Err(Bad::Response) => {
                let what = "a response: nothing on the channel waits for one".to_owned();
                return Err(Refuse::new(
                    None,
                    INVALID_REQUEST,
                    ErrorCode::InvalidArgument,
                    what,
                ));
            }
        };
        let (target, conn) = self.channel_target(&incoming)?;
        let caps = target.capabilities.as_ref();
        let params = incoming.params.as_ref();
        let route =
            policy::route(caps, &incoming.method, incoming.kind(), params).map_err(|r| {
                Refuse::new(
                    incoming.id.clone(),
                    METHOD_NOT_FOUND,
                    ErrorCode::NotSupported,
                    r.message(),
                )
            })?;
        match route {
            Route::Cancel => {
                if let Some(id) = params.and_then(|p| p.get("requestId")) {
                    self.channel_calls.cancel(channel, id);
                }
                Ok(None)
            }
            Route::Log => {
                self.app_log(&target.server_id, params);
                Ok(None)
            }
            _ => self.begin(incoming, &target, conn, route).map(Some),
        }
    }

    /// The open channel `incoming` names and its server's live connection.
    fn channel_target(
        &self,
        incoming: &Incoming,
    ) -> Result<(ChannelRef, Arc<Session>), Box<Refuse>> {
        let uri = &incoming.channel;
        let not_ready = |what: String| {
            Refuse::new(
                incoming.id.clone(),
                SERVER_NOT_READY,
                ErrorCode::ServerNotReady,
                what,
            )
        };
        let Some(target) = self.shared.publisher().app_channels().resolve(uri) else {
            return Err(not_ready(format!(
                "no open mcp:// channel {uri:?} (unknown, or its server is not ready or was \
                 restarted: read the channel again from its customization)"
            )));
        };
        let server_id = &target.server_id;
        // A connection being closed (stop, crash) is not ready either.
        let live = self.server(server_id).ok().and_then(|h| h.live.session());
        match live {
            Some(conn) => Ok((target, conn)),
            None => Err(not_ready(format!("server {server_id} is not ready"))),
        }
    }

    /// Steps 5 and 6 of the module doc for request `incoming`, then its task.
    fn begin(
        &self,
        incoming: Incoming,
        target: &ChannelRef,
        conn: Arc<Session>,
        route: Route,
    ) -> Result<ChannelTask, Box<Refuse>> {
        let id = incoming.id.clone().unwrap_or(Value::Null);
        let server_id = &target.server_id;
        let params = incoming.params.as_ref();
        if incoming.method == "tools/call" {
            self.check_app_visible(server_id, params)
                .map_err(|(code, what)| {
                    Refuse::new(Some(id.clone()), INVALID_PARAMS, code, what)
                })?;
        }
        if route == Route::ReadUi {
            let uri = params
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let tools = self.server_tools(server_id);
            if let Err(e) = check_linked(server_id, uri, tools.as_deref()) {
                let mut refuse = Refuse::new(Some(id.clone()), INVALID_PARAMS, e.code, e.message);
                refuse.extra.insert("uri".to_owned(), Value::from(uri));
                return Err(refuse);
            }
        }
        let max = self.shared.limits().max_channel_requests;
        let Some(slot) = target.begin_request(max) else {
            let what = format!("{max} requests are in flight on this channel (maxChannelRequests)");
            return Err(Refuse::new(
                Some(id),
                INVALID_REQUEST,
                ErrorCode::LimitExceeded,
                what,
            ));
        };
        let Some(call) = self.channel_calls.register(&incoming.channel, &id) else {
            let what = format!("request id {id} is already in flight on this channel");
            return Err(Refuse::new(
                Some(id),
                INVALID_REQUEST,
                ErrorCode::InvalidArgument,
                what,
            ));
        };
        let job = serve::Job {
            shared: self.shared.clone(),
            conn,
            server_id: server_id.clone(),
            incoming,
            id,
            route,
            _slot: slot,
            call,
        };
        Ok(Box::pin(job.run()))
    }

    /// Server `server_id`'s checked tools (app-only ones included).
    fn server_tools(
        &self,
        server_id: &str,
    ) -> Option<std::sync::Arc<crate::catalogue::ServerTools>> {
        self.shared
            .publisher()
            .catalogue()
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .server(server_id)
    }

    /// MCP Apps: a View may call only tools visible to the App and not
    /// left out by the server's tool filter; `Err` with the code
    /// (`invalid_argument`: the named tool's visibility lacks `"app"`;
    /// `tool_disabled`) and the message (a tool the host did not list is
    /// left to the server).
    fn check_app_visible(
        &self,
        server_id: &str,
        params: Option<&Value>,
    ) -> Result<(), (ErrorCode, String)> {
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Ok(());
        };
        let catalogue =
            (self.shared.publisher().catalogue().read()).unwrap_or_else(PoisonError::into_inner);
        if let Some(why) = catalogue.why_disabled(server_id, name) {
            let what = format!("tool {name:?} on {server_id} is disabled: {why}");
            return Err((ErrorCode::ToolDisabled, what));
        }
        let tools = catalogue.server(server_id);
        match tools.as_deref().and_then(|t| t.get(name)) {
            Some(tool) if !policy::callable_by_app(&tool.definition()) => Err((
                ErrorCode::InvalidArgument,
                format!(
                    "tool {name:?} of server {server_id} is not visible to MCP Apps \
                     (_meta.ui.visibility lacks \"app\")"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The App's `notifications/message` as a `log` record (target
    /// `host.mcpApp`; level from the MCP level: `debug`; `info`, `notice`;
    /// `warning`; the rest `error`).
    fn app_log(&self, server_id: &str, params: Option<&Value>) {
        let level = match params.and_then(|p| p.get("level")).and_then(Value::as_str) {
            Some("debug") => LogLevel::Debug,
            Some("info" | "notice") => LogLevel::Info,
            Some("warning") => LogLevel::Warn,
            _ => LogLevel::Error,
        };
        let data = params.and_then(|p| p.get("data"));
        let text = match data {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let text = match params.and_then(|p| p.get("logger")).and_then(Value::as_str) {
            Some(logger) => format!("[{logger}] {text}"),
            None => text,
        };
        self.shared
            .publisher()
            .log(log(level, TARGET, Some(server_id), text));
    }

    /// JS `readAppResource`: MCP `resources/read` of UI resource `uri`
    /// (`ui://…`) on `server_id`, through the UI resource gate
    /// (`crate::apps::ui_resource`); the result untouched (its `_meta.ui`
    /// included).
    ///
    /// # Errors
    /// `not_supported` (the host was made without `mcpApps`; or the server
    /// did not declare `resources`), `invalid_argument` (not a `ui://`
    /// URI), `not_found` (no such server; no tool of it links `uri`; the
    /// server has no such resource), `server_not_ready`, `protocol_error`
    /// (a content item without the App MIME type, naming the type found; a
    /// JSON-RPC error), `limit_exceeded` (`maxUiResourceBytes`,
    /// `maxResultBytes`), `timeout`, `auth_required`, `disposed`;
    /// `cancelled` once `abort` is (the read in flight is cancelled with
    /// `notifications/cancelled`, see [`Host::read_resource`]).
    pub async fn read_app_resource(
        &self,
        server_id: &str,
        uri: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Value> {
        self.check_live()?;
        if !self.shared.publisher().mcp_apps() {
            let what = "readAppResource: the host was made without mcpApps";
            return Err(HostError::new(ErrorCode::NotSupported, what));
        }
        if !is_ui_uri(uri) {
            let what = format!("readAppResource: {uri:?} is not a ui:// URI");
            return Err(HostError::new(ErrorCode::InvalidArgument, what));
        }
        self.ready_connection(server_id)?;
        check_linked(server_id, uri, self.server_tools(server_id).as_deref())?;
        let result = self.read_resource(server_id, uri, abort).await?;
        let max = self.shared.limits().max_ui_resource_bytes;
        check_contents(server_id, uri, &result, max)?;
        Ok(result)
    }
}
