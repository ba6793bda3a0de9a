//! The rmcp `ClientHandler` of one server connection: our `clientInfo`,
//! server-initiated requests forwarded to the app's handlers (counted in
//! [`ServerRequestWaits`] while they wait; an elicitation of an AHP tool
//! call is also published to AHP clients, see [`crate::chat::input_publisher`]), and
//! server notifications routed to the server's actor or to `log` events
//! (changes through [`HostClient::changed`], see [`super::listen`]). Log
//! messages and free-standing change notifications are acted on in arrival
//! order, by the connection's transport wrapper
//! ([`crate::transport::ordered`], [`InOrder`]), not in rmcp's
//! per-notification tasks.

use std::sync::Arc;

use futures::FutureExt as _;

use rmcp::handler::client::ClientHandler;
#[allow(deprecated)] // MCP logging (SEP-2577 deprecates it; servers still send it)
use rmcp::model::{
    ClientConfig, GetMeta, LoggingLevel, LoggingMessageNotificationParam, ServerNotification,
};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

#[allow(deprecated)] // sampling and roots: SEP-2577 deprecates them; servers still send them
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ErrorData,
    ListRootsResult,
};
use rmcp::service::RequestContext;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::apps::channels::AppChannels;
use crate::apps::policy;
use crate::chat::input_publisher::InFlightCalls;
use crate::events::{log, server_log, EventSink, HostEvent, LogLevel};
use crate::limits::MAX_OPEN_INPUTS_PER_CALL;
use crate::requests::roots::check_handler_answer;
use crate::requests::url_elicitation::{completed_id, ELICITATION_COMPLETE_METHOD};
use crate::requests::{
    apply_elicitation_defaults, HandlerRequest, RequestHandler, ServerRequestKind,
};
use crate::transport::ordered::{InOrder, Observed, Seen};

mod bounds;
pub(crate) use bounds::Bounds;
mod url_mode;
mod url_waits;
pub(crate) use url_waits::UrlWaits;

/// How many server-initiated requests (elicitation, sampling, roots) of one
/// connection are waiting on the app's handler right now. While any is, the
/// inactivity clocks of that connection's tool calls stand still (see
/// [`super::tool_call::call_tool`]): time spent waiting on the user is not
/// the server being inactive.
#[derive(Clone, Default)]
pub struct ServerRequestWaits(Arc<tokio::sync::watch::Sender<usize>>);

impl ServerRequestWaits {
    /// Counts one request as waiting until the returned guard is dropped.
    fn begin(&self) -> WaitGuard {
        self.0.send_modify(|n| *n += 1);
        WaitGuard(self.0.clone())
    }

    /// Watches the count.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<usize> {
        self.0.subscribe()
    }
}

/// One request waiting on the app (see [`ServerRequestWaits::begin`]).
struct WaitGuard(Arc<tokio::sync::watch::Sender<usize>>);

impl Drop for WaitGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A change a server announced (either era).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
    /// `notifications/resources/updated` for this URI.
    Resource(String),
}

/// A server notification the actor acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/resources/list_changed` (skills are resources: the
    /// actor re-lists them when the server declared the extension).
    ResourcesChanged,
}

/// Per-connection client handler.
#[derive(Clone)]
pub struct HostClient {
    pub(crate) info: ClientConfig,
    pub(crate) server_id: String,
    pub(crate) notices: mpsc::UnboundedSender<Notice>,
    pub(crate) sink: Arc<dyn EventSink>,
    pub(crate) requests: Option<Arc<dyn RequestHandler>>,
    /// Routes `notifications/progress` to the waiting call.
    pub(crate) progress: super::progress::ProgressRoutes,
    /// The requests now waiting on the app (shared with the live connection).
    pub(crate) waits: ServerRequestWaits,
    /// The connection's response cache (change notifications invalidate it).
    pub(crate) cache: super::cache::ResponseCache,
    /// The connection's `tools/call` requests in flight, with the AHP tool
    /// call each runs as (which call an elicitation belongs to).
    pub(crate) calls: InFlightCalls,
    /// The host's `mcp://` channels (with `mcpApps`): list changes the
    /// server's channel advertises go to it ([`HostClient::to_app`]).
    pub(crate) app_channels: Option<Arc<AppChannels>>,
    /// The connection's flood bounds: log pacing, dropped notifications,
    /// the cap on server requests waiting on the app ([`Bounds`]).
    pub(crate) bounds: Bounds,
    /// The server's chosen log level, asked for in each request's `_meta`
    /// at 2026-07-28 ([`InOrder::log_level`], [`super::log_level`]).
    pub(crate) log_level: super::log_level::LogLevelCell,
    /// URL-mode elicitations waiting for `notifications/elicitation/complete`.
    pub(crate) url_waits: UrlWaits,
}

impl HostClient {
    /// Forwards server notification `method` (a list change) to the
    /// server's open `mcp://` channel as a `channelMessage` `{jsonrpc,
    /// method, channel}`, when its advertised capability has `listChanged:
    /// true` ([`policy::forwards`]).
    pub(crate) fn to_app(&self, method: &str) {
        let Some(channels) = &self.app_channels else {
            return;
        };
        let open = channels.uri_of(&self.server_id);
        let Some(channel) = open.and_then(|uri| channels.resolve(&uri)) else {
            return;
        };
        if policy::forwards(channel.capabilities.as_ref(), method) {
            let message =
                serde_json::json!({ "jsonrpc": "2.0", "method": method, "channel": channel.uri });
            self.sink.send(HostEvent::ChannelMessage(Box::new(message)));
        }
    }

    /// The registered handler for `kind`, if any.
    fn handler(&self, kind: ServerRequestKind) -> Option<&Arc<dyn RequestHandler>> {
        self.requests.as_ref().filter(|h| h.handles(kind))
    }

    /// Forwards a request to the app's handler and decodes its answer.
    async fn forward<T: DeserializeOwned>(
        &self,
        handler: &Arc<dyn RequestHandler>,
        kind: ServerRequestKind,
        params: Value,
        context: &RequestContext<RoleClient>,
    ) -> Result<T, ErrorData> {
        let answer = self.ask(handler, kind, params, context).await?;
        decode(kind, answer)
    }

    /// The app handler's raw answer. Counted in [`ServerRequestWaits`] while
    /// it waits; given up when the server cancels its request
    /// (`notifications/cancelled`, e.g. because the tool call it belongs to
    /// ended).
    async fn ask(
        &self,
        handler: &Arc<dyn RequestHandler>,
        kind: ServerRequestKind,
        params: Value,
        context: &RequestContext<RoleClient>,
    ) -> Result<Value, ErrorData> {
        let request = HandlerRequest::new(self.server_id.clone(), kind, params);
        let answer = handler.request(request);
        self.wait_on_user(kind, answer, context).await
    }

    /// Waits for `answer` (the app's or an AHP client's), counted in
    /// [`ServerRequestWaits`]; given up when the server cancels its request.
    async fn wait_on_user(
        &self,
        kind: ServerRequestKind,
        answer: impl std::future::Future<Output = Result<Value, String>>,
        context: &RequestContext<RoleClient>,
    ) -> Result<Value, ErrorData> {
        let _waiting = self.waits.begin();
        let answer = tokio::select! {
            answer = answer => answer,
            _ = context.ct.cancelled() => Err("the server cancelled the request".to_owned()),
        };
        answer.map_err(|message| {
            ErrorData::internal_error(format!("{} handler failed: {message}", kind.method()), None)
        })
    }

    /// A form elicitation's raw answer. When it belongs to an AHP tool call
    /// ([`crate::chat::input_publisher::attribute`]) it is published the AHP way too and the
    /// first answer wins, the app handler's or an AHP client's (without a
    /// handler only the AHP client answers, until the call ends); otherwise
    /// the app's handler answers, and without one it is declined.
    async fn elicit(
        &self,
        params: Value,
        context: &RequestContext<RoleClient>,
    ) -> Result<Value, ErrorData> {
        let kind = ServerRequestKind::Elicitation;
        let handler = self.handler(kind);
        let chat = crate::chat::input_publisher::attribute(&self.calls, context);
        let form = chat
            .as_ref()
            .zip(crate::chat::input_publisher::form(&params));
        let Some((call, (message, schema))) = form else {
            return match handler {
                Some(handler) => self.ask(handler, kind, params, context).await,
                None => Ok(serde_json::json!({ "action": "decline" })),
            };
        };
        let Some(mut pending) = call.open(message, schema) else {
            return Err(ErrorData::internal_error(
                format!(
                    "elicitation/create declined: tool call {} already has {MAX_OPEN_INPUTS_PER_CALL} \
                     open input requests (the host's bound of {MAX_OPEN_INPUTS_PER_CALL} open input \
                     requests per tool call, MAX_OPEN_INPUTS_PER_CALL)",
                    call.tool_call_id()
                ),
                None,
            ));
        };
        let mut request = HandlerRequest::new(self.server_id.clone(), kind, params.clone());
        request.chat_input = Some(pending.chat_input_ref());
        let app = handler.map(|h| h.request(request));
        let answer = crate::chat::input_publisher::race(&mut pending, app);
        self.wait_on_user(kind, answer, context).await
    }
}

/// Decodes an app handler's answer to a `kind` request.
fn decode<T: DeserializeOwned>(kind: ServerRequestKind, answer: Value) -> Result<T, ErrorData> {
    serde_json::from_value(answer).map_err(|e| {
        ErrorData::internal_error(
            format!("{} handler returned an invalid result: {e}", kind.method()),
            None,
        )
    })
}

impl ClientHandler for HostClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let schema = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => serde_json::to_value(requested_schema).unwrap_or(Value::Null),
            // URL mode (SEP-1036): url_mode.rs.
            _ => return self.elicit_url(&request, &context).await,
        };
        let _slot = self.bounds.request_slot(ServerRequestKind::Elicitation)?;
        let params = serde_json::to_value(&request)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut answer = self.elicit(params, &context).await?;
        if answer.get("action").and_then(Value::as_str) == Some("accept") {
            if let Some(content) = crate::chat::input_publisher::content_mut(&mut answer) {
                apply_elicitation_defaults(&schema, content);
            }
        }
        decode(ServerRequestKind::Elicitation, answer)
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(handler) = self.handler(ServerRequestKind::Sampling) else {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "sampling/createMessage is not supported by this client",
                None,
            ));
        };
        // SEP-1577: tools only when declared; tool results answer tool uses.
        let tools = handler.sampling_tools();
        crate::requests::sampling::check_request(&params, tools).map_err(|why| {
            ErrorData::invalid_params(format!("sampling/createMessage refused: {why}"), None)
        })?;
        let _slot = self.bounds.request_slot(ServerRequestKind::Sampling)?;
        let raw = serde_json::to_value(&params)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let result: CreateMessageResult = self
            .forward(handler, ServerRequestKind::Sampling, raw, &context)
            .await?;
        crate::requests::sampling::check_result(&params, &result).map_err(|why| {
            let what = format!("sampling/createMessage handler returned an invalid result: {why}");
            ErrorData::internal_error(what, None)
        })?;
        Ok(result)
    }

    /// `roots/list`: the host's roots once set, else the app's `roots`
    /// handler, whose answer is percent-encoded with every root that is not
    /// a `file://` URI dropped (one `warn` log each, target `host.roots`).
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let Some(handler) = self.handler(ServerRequestKind::Roots) else {
            return Ok(ListRootsResult::default());
        };
        if let Some(roots) = handler.host_roots() {
            roots.record_reader(&self.server_id, context.peer.clone());
        }
        let _slot = self.bounds.request_slot(ServerRequestKind::Roots)?;
        let params = Value::Object(Default::default());
        let answer = self
            .ask(handler, ServerRequestKind::Roots, params, &context)
            .await?;
        let (answer, dropped) = check_handler_answer(answer);
        for why in dropped {
            let message = format!("roots/list: left out a root of the roots handler: {why}");
            self.sink.send(log(
                LogLevel::Warn,
                "host.roots",
                Some(&self.server_id),
                message,
            ));
        }
        decode(ServerRequestKind::Roots, answer)
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if !observed(&context) {
            self.notified(Change::Tools, &context);
        }
    }

    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        if !observed(&context) {
            self.notified(Change::Resources, &context);
        }
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        if !observed(&context) {
            self.notified(Change::Prompts, &context);
        }
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        if !observed(&context) {
            self.notified(Change::Resource(params.uri), &context);
        }
    }

    /// Progress: routed in arrival order by [`InOrder::observe`]; here only
    /// a notification that did not pass it.
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        if !observed(&context) {
            self.progress.handle_notification(params).await;
        }
    }

    /// MCP logging: acted on in arrival order by [`InOrder::observe`];
    /// here only a message that did not pass it.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        if !observed(&context) {
            self.logged(
                level_text(&params.level),
                params.logger.as_deref(),
                &params.data,
            );
        }
    }
}

/// Whether the notification was acted on in arrival order already.
fn observed(context: &NotificationContext<RoleClient>) -> bool {
    context.extensions.get::<Observed>().is_some()
}

/// The level of a typed MCP log message as the server spelled it.
#[allow(deprecated)]
fn level_text(level: &LoggingLevel) -> String {
    match serde_json::to_value(level) {
        Ok(Value::String(s)) => s,
        _ => format!("{level:?}").to_ascii_lowercase(),
    }
}

impl HostClient {
    /// Emits one MCP log message as a `server.log` record: `[logger] data`
    /// (data as text when it is a string, else its JSON), `serverLevel` as
    /// sent, `level` the nearest one ([`LogLevel::nearest`]).
    ///
    /// Paced by [`Bounds::admit_log`]: past the burst a message is counted,
    /// not delivered.
    fn logged(&self, server_level: String, logger: Option<&str>, data: &Value) {
        if !self.bounds.admit_log() {
            return;
        }
        let text = match data {
            Value::String(s) => s.clone(),
            // Hidden before it is JSON text: escaping would change a value.
            other => {
                let mut other = other.clone();
                crate::redact::hidden_in_value(&mut other);
                other.to_string()
            }
        };
        let text = match logger {
            Some(logger) => format!("[{logger}] {text}"),
            None => text,
        };
        self.sink
            .send(server_log(&self.server_id, server_level, text));
    }

    /// `notifications/message` whose params rmcp could not type (a level
    /// MCP does not define, e.g. `verbose`, reaches it as a custom
    /// notification): delivered from the raw params, never dropped.
    fn logged_raw(&self, params: Option<&Value>) {
        let field = |name: &str| params.and_then(|p| p.get(name));
        let level = match field("level") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "info".to_owned(),
        };
        let logger = field("logger").and_then(Value::as_str);
        self.logged(level, logger, field("data").unwrap_or(&Value::Null));
    }
}

/// What must keep the order the server sent it in: log messages and
/// free-standing change notifications (those of a `subscriptions/listen`
/// stream carry a `subscriptionId` and go to their stream, which reads them
/// in order). Progress stays with rmcp's per-notification tasks (see
/// `Call::round`): its subscriber may be slow, and the receive loop must
/// never wait.
impl InOrder for HostClient {
    fn unanswered(&self) {
        self.bounds.unanswered();
    }

    #[allow(deprecated)]
    fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level.get()
    }

    #[allow(deprecated)]
    fn observe(&self, notification: &ServerNotification) -> Seen {
        use ServerNotification as N;
        let change = match notification {
            N::LoggingMessageNotification(n) => {
                let p = &n.params;
                self.logged(level_text(&p.level), p.logger.as_deref(), &p.data);
                return Seen::Done;
            }
            N::CustomNotification(n) if n.method == LOGGING_METHOD => {
                self.logged_raw(n.params.as_ref());
                return Seen::Done;
            }
            // SEP-1036: an unknown or already completed id is ignored.
            N::CustomNotification(n) if n.method == ELICITATION_COMPLETE_METHOD => {
                if let Some(id) = completed_id(n.params.as_ref()) {
                    self.url_waits.complete(id);
                }
                return Seen::Done;
            }
            // To the call's subscriber now, so it has its progress before its
            // response (received after it) and in order; when that
            // subscriber's queue is full, kept aside as its newest (never a
            // task of rmcp's per notification, which could come late).
            N::ProgressNotification(n) if !self.progress.is_live(&n.params.progress_token) => {
                self.bounds.dropped();
                return Seen::Drop;
            }
            N::ProgressNotification(n) => {
                let routed = self.progress.handle_notification(n.params.clone());
                if routed.now_or_never().is_some() {
                    return Seen::Observed;
                }
                self.progress.keep_latest(n.params.clone());
                return Seen::Done;
            }
            _ if notification.get_meta().subscription_id().is_some() => return Seen::Pass,
            N::ToolListChangedNotification(_) => Change::Tools,
            N::ResourceListChangedNotification(_) => Change::Resources,
            N::PromptListChangedNotification(_) => Change::Prompts,
            N::ResourceUpdatedNotification(n) => Change::Resource(n.params.uri.clone()),
            // A method MCP does not define: nothing to act on, no answer due.
            N::CustomNotification(_) => {
                self.bounds.dropped();
                return Seen::Drop;
            }
            _ => return Seen::Pass,
        };
        self.changed(change);
        Seen::Observed
    }
}

/// The method of MCP log messages (MCP 2025-11-25 "Utilities › Logging").
const LOGGING_METHOD: &str = "notifications/message";
