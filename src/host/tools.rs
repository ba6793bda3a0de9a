//! `listTools`, `toolDiagnostics` and `callTool`: the model tool catalogue
//! (see [`crate::catalogue`]) and calls of its tools, with the AHP
//! execution-phase actions of a chat tool call (see [`crate::toolcall`])
//! and its pause on a step-up challenge.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::auth::step_up::{AuthWaitEnd, CallKey};
use crate::catalogue::{CatalogueEntry, ToolDiagnostic};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::supervisor::tool_call::{call_tool, CallRequest, Progress};
use crate::supervisor::{Command, HostShared, ServerHandle, TransportSpec};
use crate::toolcall::{self, ChatContext};

pub use crate::catalogue::read_view::ToolRef;

/// One `callTool`, checked (built from the JS `CallToolArgs` by `TryFrom`,
/// which also makes it deserializable from that JSON shape).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "super::options::CallToolArgs")]
pub struct CallTool {
    /// The tool: a catalogue name, or a server id plus original name.
    pub target: ToolRef,
    /// `arguments` of MCP `tools/call`.
    pub arguments: Option<Map<String, Value>>,
    /// Inactivity limit, reset by each progress notification (1 ms ..= 24 h);
    /// `None`: `limits.callTimeoutMs`.
    pub timeout: Option<Duration>,
    /// Absolute limit that progress never extends (1 ms ..= 24 h); `None`:
    /// `limits.callMaxTotalMs`.
    pub max_total: Option<Duration>,
    /// The `digest` the caller validated the arguments against; `None`: the
    /// digest as of the last `listTools`.
    pub digest: Option<String>,
    /// The AHP tool call this call runs as, if any.
    pub chat: Option<ChatCall>,
    /// Display name for AHP messages; `None`: the tool's `title`, else its name.
    pub display_name: Option<String>,
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

    fn context(&self, server_id: &str) -> ChatContext {
        ChatContext {
            chat: self.chat.clone(),
            turn_id: self.turn_id.clone(),
            tool_call_id: self.tool_call_id.clone(),
            customization_id: server_id.to_owned(),
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
                .emit(toolcall::input_needed_removed_action(self.ctx));
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

    /// [`Host::list_tools`] as a JSON array text (no per-call conversion:
    /// each entry's JSON is built once when the catalogue changes).
    pub fn list_tools_json(&self) -> String {
        let entries = self.read_catalogue();
        let mut out =
            String::with_capacity(entries.iter().map(|e| e.json.len() + 1).sum::<usize>() + 2);
        out.push('[');
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&e.json);
        }
        out.push(']');
        out
    }

    /// The catalogue now, recorded as what the caller has read.
    fn read_catalogue(&self) -> Arc<Vec<Arc<CatalogueEntry>>> {
        self.read_view.read(&self.shared.catalogue)
    }

    /// What the host normalized, dropped or left out of the catalogue, for
    /// every listed server.
    pub fn tool_diagnostics(&self) -> Vec<ToolDiagnostic> {
        self.shared
            .catalogue
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .diagnostics()
    }

    /// Calls a tool (MCP `tools/call`); resolves to the MCP `CallToolResult`
    /// JSON (an `isError` result resolves too).
    ///
    /// With [`CallTool::chat`] the call runs as that AHP tool call and the
    /// host emits its execution-phase actions (see `crate::toolcall`):
    /// progress, a mid-call step-up (403 `insufficient_scope` →
    /// `chat/toolCallAuthRequired` and `session/inputNeededSet`; after
    /// `authenticate` → resolved, retried once), and `chat/toolCallComplete`
    /// (failed for every error below).
    ///
    /// # Errors
    /// `not_found`, `stale_tool` (see
    /// `crate::catalogue::read_view::ReadCatalogue::resolve`), `cancelled`,
    /// `disposed`, and those of `crate::supervisor::tool_call::call_tool`.
    pub async fn call_tool(&self, call: CallTool, cancel: CancellationToken) -> HostResult<Value> {
        self.check_live()?;
        let tool =
            self.read_view
                .resolve(&self.shared.catalogue, &call.target, call.digest.as_deref())?;
        let handle = self.server(&tool.server_id)?;
        let ctx = call.chat.as_ref().map(|c| c.context(&tool.server_id));
        let display = call
            .display_name
            .or(tool.title)
            .unwrap_or_else(|| tool.tool_name.clone());
        let limits = self.shared.limits;
        let req = CallRequest {
            name: tool.tool_name,
            arguments: call.arguments,
            timeout: (call.timeout).unwrap_or(Duration::from_millis(limits.call_timeout_ms)),
            max_total: (call.max_total).unwrap_or(Duration::from_millis(limits.call_max_total_ms)),
        };
        // Set once the AHP tool call was completed by someone else (the
        // client, or the server's actor ending the wait).
        let completed = AtomicBool::new(false);
        let run = async {
            Ok(self
                .run_call(&handle, req, &cancel, ctx.as_ref(), &display, &completed)
                .await)
        };
        let result = self.until_disposed(run).await.unwrap_or_else(Err);
        let completed = completed.load(Ordering::SeqCst);
        if let Some(ctx) = ctx.as_ref().filter(|_| !completed) {
            self.shared
                .emit_on(&ctx.chat, toolcall::complete_action(ctx, &display, &result));
        }
        if let Err(e) = &result {
            // A refused refresh (401) or a refused redirect makes the session
            // unusable: the server leaves `ready` (step-up 403s do not).
            match e.code {
                ErrorCode::AuthRequired if !e.is_step_up() => {
                    handle.send(Command::ConnectionFailed {
                        error: e.clone(),
                        challenge: handle.live.challenge(),
                    })
                }
                ErrorCode::RedirectRefused => handle.send(Command::ConnectionFailed {
                    error: e.clone(),
                    challenge: None,
                }),
                _ => {}
            }
        }
        result
    }

    /// Runs the MCP request, pausing once for a step-up token when the call
    /// runs in a chat. Sets `completed` when the AHP tool call was completed
    /// by someone else while it was paused (the client's failed
    /// `chat/toolCallComplete`, or the server's actor when the server left
    /// the state the pause depended on).
    async fn run_call(
        &self,
        handle: &ServerHandle,
        req: CallRequest,
        cancel: &CancellationToken,
        ctx: Option<&ChatContext>,
        display: &str,
        completed: &AtomicBool,
    ) -> HostResult<Value> {
        let mut stepped_up = false;
        loop {
            let shared = &self.shared;
            let mut on_progress = |p: Progress| {
                if let Some(ctx) = ctx {
                    shared.emit_on(
                        &ctx.chat,
                        toolcall::progress_action(ctx, p.progress, p.total, p.message.as_deref()),
                    );
                }
            };
            let result = call_tool(
                &handle.live,
                &handle.id,
                req.clone(),
                &self.shared.limits,
                cancel.clone(),
                &mut on_progress,
            )
            .await;
            let step_up = matches!(&result, Err(e) if e.is_step_up());
            let Some(ctx) = ctx.filter(|_| step_up && !stepped_up) else {
                return result;
            };
            stepped_up = true;
            match self
                .await_step_up(handle, ctx, &req.name, display, cancel)
                .await
            {
                StepUp::Resolved => continue,
                StepUp::Failed(e) => return Err(e),
                StepUp::Completed(e) => {
                    completed.store(true, Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
    }

    /// Pauses a chat tool call on a step-up challenge until `authenticate`
    /// supplies a token for the advertised resource, the client completes the
    /// call as failed, the caller cancels, or the absolute limit passes.
    async fn await_step_up(
        &self,
        handle: &ServerHandle,
        ctx: &ChatContext,
        tool_name: &str,
        display: &str,
        cancel: &CancellationToken,
    ) -> StepUp {
        let TransportSpec::StreamableHttp(cfg) = &handle.spec.transport else {
            return StepUp::Failed(HostError::new(
                ErrorCode::AuthRequired,
                format!("{} asked for more scopes over stdio", handle.id),
            ));
        };
        let header = handle.live.challenge().unwrap_or_default();
        let challenge = crate::auth::AuthChallenge::from_header(&header, &cfg.url);
        let resource = match crate::auth::discover(&cfg.url, &challenge).await {
            Ok(r) => r,
            Err(e) => return StepUp::Failed(e),
        };
        let client_id = handle
            .spec
            .oauth_client
            .as_ref()
            .map(|c| c.client_id.as_str());
        let requirement =
            crate::auth::requirement(&challenge, /* had_token */ true, resource, client_id);
        let auth = toolcall::auth_requirement(&requirement);
        let key = CallKey {
            chat: ctx.chat.clone(),
            turn_id: ctx.turn_id.clone(),
            tool_call_id: ctx.tool_call_id.clone(),
        };
        let required_scopes = requirement.required_scopes.unwrap_or_default();
        let wait = self.shared.step_up.register(
            key,
            (&handle.id, display),
            requirement.resource,
            required_scopes,
        );
        self.shared
            .emit_on(&ctx.chat, toolcall::auth_required(ctx, &auth));
        let message = format!("Calling {display}");
        let call = toolcall::PausedToolCall {
            tool_name,
            display_name: display,
            invocation_message: &message,
        };
        let needed = toolcall::input_needed_set(ctx, &call, &auth);
        self.shared.emit(needed);
        let mut entry = InputNeeded {
            shared: &self.shared,
            ctx,
            shown: true,
        };
        let end = wait.wait(cancel).await;
        // Ended by the server's actor: it removed the entry and completed the call.
        entry.shown = !matches!(end, AuthWaitEnd::Ended(_));
        drop(entry);
        let (server, call) = (&handle.id, format!("tools/call {tool_name:?}"));
        match end {
            AuthWaitEnd::Token => {
                self.shared
                    .emit_on(&ctx.chat, toolcall::auth_resolved_action(ctx));
                StepUp::Resolved
            }
            AuthWaitEnd::Ended(why) => StepUp::Completed(why.error(server)),
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
