//! `listTools`, `toolDiagnostics` and `callTool`: the model tool catalogue
//! (see [`crate::catalogue`]) and calls of its tools, with the AHP
//! execution-phase actions of a chat tool call (see [`crate::chat`])
//! and its pause on a step-up challenge.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod failures;
mod output;

use failures::{is_refused_token, paused_requirement, report_unusable};

use super::Host;
use crate::apps::capabilities::{call_ui, CallUi};
use crate::auth::step_up::{AuthWaitEnd, CallKey, Shown};
use crate::catalogue::{CatalogueEntry, ToolDiagnostic};
use crate::chat::input_publisher::ChatCallInputs;
use crate::chat::{self, ChatContext};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::json::JsonText;
use crate::mcp::tool_call::{CallRequest, Progress};
use crate::supervisor::{HostShared, ServerHandle};

pub use crate::catalogue::read_view::ToolRef;

/// Receives each progress notification of one call (see [`Host::call_tool_with`]).
pub type OnProgress = Arc<dyn Fn(&Progress) + Send + Sync>;

/// One `callTool`, checked (the binding builds it from the JS arguments
/// by `TryFrom`, with [`ChatCall::from_parts`] and [`ToolRef::named`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CallTool {
    /// The tool: a catalogue name, or a server id plus original name.
    pub target: ToolRef,
    /// `arguments` of MCP `tools/call`.
    pub arguments: Option<Map<String, Value>>,
    /// Inactivity limit, reset by each progress notification (1 ms ..= 24 h);
    /// `None`: the server's `callTimeoutMs`, else `limits.callTimeoutMs`.
    /// It bounds the wait for a lazy server's start too (nothing comes from
    /// the server meanwhile), and starts afresh when the request is sent.
    pub timeout: Option<Duration>,
    /// Absolute limit that progress never extends (1 ms ..= 24 h), from the
    /// call to its answer, the wait for a lazy server's start included;
    /// `None`: the server's `callMaxTotalMs`, else `limits.callMaxTotalMs`.
    pub max_total: Option<Duration>,
    /// The model-facing output budget of a chat call (characters, 1 ..=
    /// `HARD_MAX_MODEL_OUTPUT_CHARS`; see `crate::chat::budget`); `None`:
    /// the server's `modelOutputMaxChars`, else `limits.modelOutputMaxChars`.
    pub output_max_chars: Option<usize>,
    /// The `digest` the caller validated the arguments against; `None`: the
    /// digest as of the last `listTools`.
    pub digest: Option<String>,
    /// The AHP tool call this call runs as, if any.
    pub chat: Option<ChatCall>,
    /// Display name for AHP messages; `None`: the tool's `title`, else its
    /// `annotations.title`, else its name.
    pub display_name: Option<String>,
    /// When the server answers with a task (SEP-2663): resolve with its
    /// handle instead of following it to the end.
    pub task_handle: bool,
}

impl CallTool {
    /// A call of `target` without arguments, limits of its own, digest,
    /// chat or display name, following a task to its end.
    pub fn new(target: ToolRef) -> Self {
        Self {
            target,
            arguments: None,
            timeout: None,
            max_total: None,
            output_max_chars: None,
            digest: None,
            chat: None,
            display_name: None,
            task_handle: false,
        }
    }
}

/// The AHP tool call a `callTool` runs as: chat channel URI, turn id and
/// tool call id, none of them empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatCall {
    chat: String,
    turn_id: String,
    tool_call_id: String,
}

impl ChatCall {
    /// # Errors
    /// `invalid_argument` when one of the three is empty.
    pub fn new(chat: String, turn_id: String, tool_call_id: String) -> HostResult<Self> {
        if chat.is_empty() || turn_id.is_empty() || tool_call_id.is_empty() {
            return Err(HostError::new(
                ErrorCode::InvalidArgument,
                "chat, turnId and toolCallId must not be empty",
            ));
        }
        Ok(Self {
            chat,
            turn_id,
            tool_call_id,
        })
    }

    /// Chat channel URI.
    pub fn chat(&self) -> &str {
        &self.chat
    }

    /// The chat's active turn.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The AHP tool call id.
    pub fn tool_call_id(&self) -> &str {
        &self.tool_call_id
    }

    fn context(&self, server_id: &str, meta: Option<Arc<Map<String, Value>>>) -> ChatContext {
        ChatContext {
            chat: self.chat.clone(),
            turn_id: self.turn_id.clone(),
            tool_call_id: self.tool_call_id.clone(),
            customization_id: server_id.to_owned(),
            meta,
        }
    }
}

/// Outcome of [`Host::await_step_up`].
enum StepUp {
    /// Retry the request.
    Resolved,
    /// The call fails; `callTool` emits its completion.
    Failed(HostError),
    /// The call fails and was already completed on the chat channel (by the
    /// client's `chat/toolCallComplete`, or by the server's actor when the
    /// server left the state the wait depended on).
    Completed(HostError),
}

/// The `session/inputNeeded` entry of a paused call while it is shown:
/// dropped (the wait ended, or `callTool` was dropped by `dispose`), it
/// emits `session/inputNeededRemoved` unless someone else already did.
struct InputNeeded<'a> {
    shared: &'a HostShared,
    ctx: &'a ChatContext,
    shown: bool,
}

impl Drop for InputNeeded<'_> {
    fn drop(&mut self) {
        if self.shown {
            self.shared
                .publisher()
                .emit(chat::input_needed_removed_action(self.ctx));
        }
    }
}

impl Host {
    /// The model tool catalogue (see `crate::catalogue`): every ready
    /// server's tools as AHP `ToolDefinition` objects with model-safe names,
    /// plus `customizationId`, `toolName` (the server's original name) and
    /// `digest`. Records what the caller has now read, for stale-tool checks
    /// of later calls.
    pub fn list_tools(&self) -> Vec<Value> {
        self.read_catalogue().iter().map(|e| e.to_json()).collect()
    }

    /// [`Host::list_tools`] as a JSON array text, spliced from each
    /// entry's definition text (no tree; see
    /// [`CatalogueEntry::write_json`]).
    pub fn list_tools_json(&self) -> String {
        json_array(self.read_catalogue().iter().map(|e| &**e))
    }

    /// The catalogue now, recorded as what the caller has read.
    fn read_catalogue(&self) -> Arc<Vec<Arc<CatalogueEntry>>> {
        self.read_view.read(self.shared.publisher().catalogue())
    }

    /// What the host normalized, dropped or left out of the catalogue, for
    /// every listed server.
    pub fn tool_diagnostics(&self) -> Vec<ToolDiagnostic> {
        self.shared
            .publisher()
            .catalogue()
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .diagnostics()
    }

    /// Calls a tool (MCP `tools/call`); resolves to the MCP `CallToolResult`
    /// JSON (an `isError` result resolves too).
    ///
    /// With [`CallTool::chat`] the call runs as that AHP tool call and the
    /// host emits its execution-phase actions (see `crate::chat`):
    /// progress, the server's form elicitations as chat input requests
    /// (`chat/inputRequested` and `session/inputNeededSet` of kind
    /// `chatInput`, answered by the app's handler or an AHP client, see
    /// `crate::chat::input_publisher`; those still open when the call ends
    /// are withdrawn first), a mid-call step-up (403 `insufficient_scope` →
    /// `chat/toolCallAuthRequired` and `session/inputNeededSet`; after
    /// `authenticate` → resolved, retried once), and `chat/toolCallComplete`
    /// (failed for every error below). A token a Streamable HTTP server
    /// refuses mid-call (401 `invalid_token`) pauses the call the same way
    /// (reason `expired`) while the server goes `authRequired`; after
    /// `authenticate` reconnected the server with a new token the call is
    /// retried once (issue 9; AHP 1.0 "Tool-call-level authentication").
    ///
    /// # Errors
    /// `not_found`, `tool_disabled` (the server's tool filter leaves the
    /// tool out: nothing is sent), `stale_tool` (see
    /// `crate::catalogue::read_view::ReadCatalogue::resolve`), `cancelled`
    /// (`cancel` fired: a call not yet sent is not sent, a sent one gets
    /// `notifications/cancelled` once), `disposed`, and those of
    /// `crate::mcp::tool_call::call_tool`.
    pub async fn call_tool(&self, call: CallTool, cancel: CancellationToken) -> HostResult<Value> {
        self.call_tool_with(call, cancel, None).await
    }

    /// [`Host::call_tool`], with each `notifications/progress` of the call
    /// (MCP 2025-11-25 "Utilities › Progress"; every request carries a
    /// `_meta.progressToken`) also passed to `on_progress`, in order, as
    /// the call's AHP progress actions are (see `run_call`).
    ///
    /// # Errors
    /// Those of [`Host::call_tool`].
    pub async fn call_tool_with(
        &self,
        call: CallTool,
        cancel: CancellationToken,
        on_progress: Option<OnProgress>,
    ) -> HostResult<Value> {
        self.call_tool_json(call, cancel, on_progress)
            .await?
            .to_value()
    }

    /// [`Host::call_tool_with`], resolving to the `CallToolResult` as its
    /// JSON text ([`JsonText`]): the server's result encoded once, for a
    /// caller that passes it on as text (the JS binding) rather than
    /// reading it.
    ///
    /// # Errors
    /// Those of [`Host::call_tool`].
    pub async fn call_tool_json(
        &self,
        call: CallTool,
        cancel: CancellationToken,
        on_progress: Option<OnProgress>,
    ) -> HostResult<JsonText> {
        self.check_live()?;
        let publisher = self.shared.publisher();
        let tool =
            (self.read_view).resolve(publisher.catalogue(), call.target, call.digest.as_deref())?;
        let handle = self.server(&tool.server_id)?;
        let ctx = call.chat.as_ref().map(|c| {
            let meta = self.app_call_meta(&tool.server_id, &tool.tool_name);
            c.context(&tool.server_id, meta)
        });
        let display = call
            .display_name
            .or(tool.title)
            .unwrap_or_else(|| tool.tool_name.clone());
        let (timeout, max_total) = self.call_limits((call.timeout, call.max_total), &handle);
        let budget = self.output_budget(call.output_max_chars, &handle);
        let inputs = (ctx.as_ref()).map(|ctx| {
            ChatCallInputs::new(publisher.clone(), self.chat_inputs.clone(), ctx.clone())
        });
        // For an AHP tool call, `cancel` becomes a child the AHP client's cancel can fire too.
        let (task, cancel) = self.task_options(
            call.task_handle,
            (&tool.server_id, &tool.tool_name),
            ctx.as_ref(),
            (&display, cancel),
        );
        let req = CallRequest {
            name: tool.tool_name,
            arguments: call.arguments,
            timeout,
            max_total,
            waited: Duration::ZERO,
            chat: inputs.clone(),
            task: task.clone(),
        };
        let end = CallEnd::default();
        let run = async {
            let mut req = req;
            let _busy = match self.before_send(&handle, &mut req, &cancel).await {
                Ok(busy) => busy,
                Err(e) => return Ok(Err(e)),
            };
            Ok(self
                .run_call(
                    &handle,
                    req,
                    &cancel,
                    (ctx.as_ref(), &display),
                    &end,
                    on_progress.as_ref(),
                )
                .await)
        };
        let result = self.until_disposed(run).await.unwrap_or_else(Err);
        // Input requests still open are withdrawn before the call completes.
        if let Some(inputs) = &inputs {
            inputs.end();
        }
        // A task left for a later host (dispose mid-task) stays running on AHP;
        // one the AHP client cancelled was completed by its echo.
        let completed =
            end.completed.load(Ordering::SeqCst) || super::tasks::settled(&task, &result);
        if let Some(ctx) = ctx.as_ref().filter(|_| !completed) {
            let server = ("host.tools", handle.id.as_str());
            let shown = output::value_of(&result);
            chat::publish_complete(publisher, (ctx, &display), &shown, &budget, server).await;
        }
        match &result {
            // A refused token paused the call and already told the actor.
            Err(_) if end.reported.load(Ordering::SeqCst) => {}
            Err(e) => report_unusable(&handle, e),
            Ok(_) => {}
        }
        result
    }

    /// The inactivity and absolute limits of a call on `handle`'s server:
    /// the call's own (`timeout`, `max_total`), else the server's
    /// (`callTimeoutMs`, `callMaxTotalMs`), else the host's (`limits`).
    fn call_limits(
        &self,
        (timeout, max_total): (Option<Duration>, Option<Duration>),
        handle: &ServerHandle,
    ) -> (Duration, Duration) {
        let (limits, own) = (self.shared.limits(), handle.spec.call_limits);
        let timeout = timeout.or(own.timeout);
        let max_total = max_total.or(own.max_total);
        (
            timeout.unwrap_or(Duration::from_millis(limits.call_timeout_ms)),
            max_total.unwrap_or(Duration::from_millis(limits.call_max_total_ms)),
        )
    }

    /// The `_meta` of the AHP tool-call actions of a chat call of tool
    /// `tool_name` on `server_id`: with `mcpApps`, `{ui}` when the tool links
    /// a `ui://` resource (its `_meta.ui` verbatim, at most
    /// `limits.maxAppUiMetaBytes`; a larger one is left off with a `warn`
    /// log, target `host.apps`); `None` otherwise.
    fn app_call_meta(&self, server_id: &str, tool_name: &str) -> Option<Arc<Map<String, Value>>> {
        if !self.shared.publisher().mcp_apps() {
            return None;
        }
        let tools = (self.shared.publisher().catalogue().read())
            .unwrap_or_else(PoisonError::into_inner)
            .server(server_id)?;
        let max = self.shared.limits().max_app_ui_meta_bytes;
        match call_ui(tools.get(tool_name)?, max) {
            CallUi::None => None,
            CallUi::Ui(ui) => Some(Arc::new(Map::from_iter([(
                "ui".to_owned(),
                Value::Object(ui),
            )]))),
            CallUi::TooLarge(bytes) => {
                let message = format!(
                    "tool {tool_name:?}: _meta.ui is {bytes} bytes, more than maxAppUiMetaBytes \
                     ({max}); its AHP tool-call actions go without it"
                );
                self.shared.publisher().log(log(
                    LogLevel::Warn,
                    "host.apps",
                    Some(server_id),
                    message,
                ));
                None
            }
        }
    }

    /// Runs the MCP request, pausing once for a token when the call runs in
    /// a chat: on a step-up challenge (403 `insufficient_scope`) or, on a
    /// Streamable HTTP server, a refused token (401 `invalid_token`: the
    /// server goes `authRequired` meanwhile). Records in `end` how it ended.
    async fn run_call(
        &self,
        handle: &ServerHandle,
        req: CallRequest,
        cancel: &CancellationToken,
        (ctx, display): (Option<&ChatContext>, &str),
        end: &CallEnd,
        listener: Option<&OnProgress>,
    ) -> HostResult<JsonText> {
        let mut paused = false;
        loop {
            let shared = &self.shared;
            let mut on_progress = |p: Progress| {
                if let Some(listener) = listener {
                    listener(&p);
                }
                if let Some(ctx) = ctx {
                    shared.publisher().emit_on(
                        &ctx.chat,
                        chat::progress_action(ctx, p.progress, p.total, p.message.as_deref()),
                    );
                }
            };
            let bounds = (self.shared.limits(), cancel.clone());
            let result = (handle.live)
                .call_tool(&handle.id, &req, bounds, &mut on_progress)
                .await;
            let pause = match &result {
                Err(e) if e.is_step_up() => Some(None),
                Err(e) if is_refused_token(e) => Some(Some(e)),
                _ => None,
            };
            let (Some(ctx), Some(refused)) = (ctx.filter(|_| !paused), pause) else {
                return result;
            };
            paused = true;
            let call = chat::PausedToolCall {
                tool_name: &req.name,
                display_name: display,
                invocation_message: &format!("Calling {display}"),
            };
            match self
                .await_auth(handle, ctx, &call, refused, cancel, end)
                .await
            {
                StepUp::Resolved => end.reported.store(false, Ordering::SeqCst),
                StepUp::Failed(e) => return Err(e),
                StepUp::Completed(e) => {
                    end.completed.store(true, Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
    }

    /// Pauses a chat tool call on a step-up challenge (`refused` `None`) or
    /// a refused token (`refused`: that error) until `authenticate` supplies
    /// a token for the advertised resource, the client completes the call as
    /// failed, the caller cancels, or the server leaves the state the wait
    /// depends on. For a refused token, the server's actor is told the
    /// connection failed (it goes `authRequired`) right after the call's
    /// `auth-required` actions, and `end.reported` is set.
    async fn await_auth(
        &self,
        handle: &ServerHandle,
        ctx: &ChatContext,
        call: &chat::PausedToolCall<'_>,
        refused: Option<&HostError>,
        cancel: &CancellationToken,
        end: &CallEnd,
    ) -> StepUp {
        let requirement = match paused_requirement(handle, self.shared.opener().network()).await {
            Ok(r) => r,
            // Unannounced: `callTool` reports a refused token as before.
            Err(e) => return StepUp::Failed(refused.cloned().unwrap_or(e)),
        };
        let auth = chat::auth_requirement(&requirement);
        let key = CallKey {
            chat: ctx.chat.clone(),
            turn_id: ctx.turn_id.clone(),
            tool_call_id: ctx.tool_call_id.clone(),
        };
        let required_scopes = requirement.required_scopes.unwrap_or_default();
        let shown = Shown {
            display_name: call.display_name.to_owned(),
            meta: ctx.action_meta(),
        };
        let server = (handle.id.as_str(), shown);
        let announce = || {
            self.shared
                .publisher()
                .emit_on(&ctx.chat, chat::auth_required(ctx, &auth));
            self.shared
                .publisher()
                .emit(chat::input_needed_set(ctx, call, &auth));
        };
        let waits = &self.shared.step_up();
        let wait = match refused {
            None => {
                let wait = waits.register(key, server, requirement.resource, required_scopes);
                announce();
                wait
            }
            Some(error) => {
                let (resource, scopes) = (requirement.resource, required_scopes);
                waits.register_expired(key, server, resource, scopes, || {
                    announce();
                    report_unusable(handle, error);
                    end.reported.store(true, Ordering::SeqCst);
                })
            }
        };
        let mut entry = InputNeeded {
            shared: &self.shared,
            ctx,
            shown: true,
        };
        let ended = wait.wait(cancel).await;
        // Ended by the server's actor: it removed the entry and completed the call.
        entry.shown = !matches!(ended, AuthWaitEnd::Ended(_));
        drop(entry);
        self.wait_outcome(handle, ctx, call.tool_name, ended)
    }

    /// What a paused call does after its wait ended (`chat/toolCallAuthResolved`
    /// when it resumes).
    fn wait_outcome(
        &self,
        handle: &ServerHandle,
        ctx: &ChatContext,
        tool_name: &str,
        ended: AuthWaitEnd,
    ) -> StepUp {
        let (server, call) = (&handle.id, format!("tools/call {tool_name:?}"));
        match ended {
            AuthWaitEnd::Token => {
                self.shared
                    .publisher()
                    .emit_on(&ctx.chat, chat::auth_resolved_action(ctx));
                StepUp::Resolved
            }
            AuthWaitEnd::Ended(why) => StepUp::Completed(why.error(server)),
            AuthWaitEnd::Refused(e) => StepUp::Failed(e),
            AuthWaitEnd::ClientCancelled => StepUp::Completed(HostError::new(
                ErrorCode::Cancelled,
                format!(
                    "{call} on {server}: the client cancelled it while it waited for \
                     authentication"
                ),
            )),
            AuthWaitEnd::Gone => StepUp::Failed(HostError::new(
                ErrorCode::Cancelled,
                format!("{call} on {server} was cancelled while it waited for authentication"),
            )),
        }
    }
}

/// How `run_call` ended, for `call_tool`.
#[derive(Default)]
struct CallEnd {
    /// The AHP tool call was completed by someone else while it was paused
    /// (the client's failed `chat/toolCallComplete`, or the server's actor
    /// when the server left the state the pause depended on).
    completed: AtomicBool,
    /// The server's actor was already told the connection failed (a refused
    /// token paused the call), so `call_tool` does not tell it again.
    reported: AtomicBool,
}

/// The JSON array of `entries`' JS objects ([`CatalogueEntry::write_json`]).
pub(super) fn json_array<'e>(entries: impl Iterator<Item = &'e CatalogueEntry> + Clone) -> String {
    let capacity = entries
        .clone()
        .map(|e| e.json_capacity() + 1)
        .sum::<usize>();
    let mut out = Vec::with_capacity(capacity + 2);
    out.push(b'[');
    for (i, e) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        e.write_json(&mut out);
    }
    out.push(b']');
    // Only UTF-8 went in (see `CatalogueEntry::write_json`).
    String::from_utf8(out).unwrap_or_else(|_| "[]".to_owned())
}
