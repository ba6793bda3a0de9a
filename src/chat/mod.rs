//! AHP execution-phase actions of an MCP tool call (AHP 1.0 "Chat channel ›
//! Tool calls", "Tool-call-level authentication"), built from what the MCP
//! call did.
//!
//! The agent harness owns the chat and dispatches `chat/toolCallStart` /
//! `chat/toolCallReady` (with contributor `{kind: "mcp", customizationId}`).
//! When a call is made with `chat`, `turnId` and `toolCallId`, the host emits
//! on that chat channel:
//!
//! - `chat/toolCallContentChanged` for each `notifications/progress`
//!   (content: one text block `"<progress>/<total> <message>"`; the raw
//!   numbers in `_meta.progress`);
//! - `chat/toolCallAuthRequired` (plus `session/inputNeededSet` of kind
//!   `toolAuthentication` on the session) when the server answers 403
//!   `insufficient_scope` mid-call, and `chat/toolCallAuthResolved` (plus
//!   `session/inputNeededRemoved`) once `authenticate` supplied a token;
//! - `chat/inputRequested` (plus `session/inputNeededSet` of kind
//!   `chatInput`) for a form elicitation of the call ([`input`]), completed
//!   by the client's `chat/inputCompleted`, or by the host's
//!   `chat/inputCompleted` when the app's handler answered first or the
//!   request was withdrawn (then `session/inputNeededRemoved`); answers are
//!   mapped to MCP content by [`answers`];
//! - `chat/toolCallComplete` with the MCP result mapped by [`map_result`],
//!   or a failed result for a protocol error, timeout or cancellation;
//!   within the model-facing output budget ([`complete_within`]: text past
//!   it cut with a marker, see [`budget`]; the whole result kept in a
//!   private file under `dataDir`, see [`spill`]).
//!
//! An App tool call (MCP Apps, SEP-1865: the tool's `_meta.ui` links a
//! `ui://` resource; host option `mcpApps`) carries the tool's `_meta.ui`
//! verbatim ([`ChatContext::meta`]) on every one of these tool-call actions
//! and on the paused call of `session/inputNeededSet`, so the AHP client
//! finds the View to render (AHP "MCP Apps › Identifying an App tool
//! call"). The reducers replace a tool call's `_meta` with an action's, so
//! a progress action's `_meta` is then `{progress, ui}`.
//!
//! Every action is built from the `ahp-types` structs (`ahp_types::actions`,
//! `ahp_types::state`), so building one cannot fail.

pub mod answers;
#[cfg(test)]
mod app_tests;
pub mod budget;
#[cfg(test)]
mod budget_tests;
pub mod input;
pub mod input_publisher;
#[cfg(test)]
mod input_tests;
mod result;
pub mod spill;
#[cfg(test)]
mod tests;

use ahp_types::actions::{
    ChatToolCallAuthRequiredAction, ChatToolCallAuthResolvedAction, ChatToolCallCompleteAction,
    ChatToolCallContentChangedAction, SessionInputNeededRemovedAction, SessionInputNeededSetAction,
    StateAction,
};
use ahp_types::common::StringOrMarkdown;
use ahp_types::state::{
    McpAuthRequirement, McpServerAuthRequiredState, SessionInputRequest,
    SessionToolAuthenticationRequest, ToolCallAuthRequiredState, ToolCallConfirmationReason,
    ToolCallContributor, ToolCallMcpContributor, ToolCallStatus, ToolResultContent,
    ToolResultTextContent,
};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::HostError;

pub use result::{failed_result, map_result};
pub use spill::ToolResults;

/// Where a tool call runs: its chat, turn and id, and the MCP server that
/// contributes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatContext {
    /// Chat channel URI (envelopes of this call are stamped with it).
    pub chat: String,
    /// The chat's active turn.
    pub turn_id: String,
    /// The tool call's id in that turn.
    pub tool_call_id: String,
    /// The MCP server's customization id (`ToolCallContributor.customizationId`).
    pub customization_id: String,
    /// The `_meta` members every tool-call action of this call carries:
    /// `{ui}` for an App tool call (the tool's `_meta.ui`, verbatim and
    /// bounded; see the module doc), `None` for an ordinary one.
    pub meta: Option<Arc<Map<String, Value>>>,
}

impl ChatContext {
    /// The `session/inputNeeded` entry id of this call's auth wait:
    /// `toolAuthentication:<chat>:<turnId>:<toolCallId>`.
    pub fn input_id(&self) -> String {
        format!(
            "toolAuthentication:{}:{}:{}",
            self.chat, self.turn_id, self.tool_call_id
        )
    }

    /// The `_meta` of this call's tool-call actions ([`ChatContext::meta`]
    /// as an owned object).
    pub fn action_meta(&self) -> Option<Map<String, Value>> {
        self.meta.as_deref().cloned()
    }

    /// `own` followed by the call's `_meta` members (`None` when both are
    /// empty).
    fn meta_with(&self, mut own: Map<String, Value>) -> Option<Map<String, Value>> {
        for (k, v) in self.meta.iter().flat_map(|m| m.iter()) {
            own.insert(k.clone(), v.clone());
        }
        (!own.is_empty()).then_some(own)
    }
}

/// The tool call a step-up challenge paused, as `session/inputNeededSet`
/// describes it (AHP `ToolCallAuthRequiredState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PausedToolCall<'a> {
    /// The MCP tool name (`toolName`).
    pub tool_name: &'a str,
    /// The name shown to the user (`displayName`).
    pub display_name: &'a str,
    /// What the call does, e.g. `"Calling <displayName>"` (`invocationMessage`).
    pub invocation_message: &'a str,
}

/// `chat/toolCallContentChanged` for one `notifications/progress` (MCP
/// 2025-11-25 "Utilities › Progress"): content is one text block
/// `"<progress>/<total> <message>"` (integral numbers without a fraction;
/// `/<total>` and ` <message>` only when present and non-empty), and
/// `_meta.progress` carries `{progress, total, message}` as received
/// (`null` when absent); an App tool call's `_meta` also has `ui`.
pub fn progress_action(
    ctx: &ChatContext,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> StateAction {
    let amount = match total {
        Some(t) => format!("{}/{}", num(progress), num(t)),
        None => num(progress),
    };
    let text = match message {
        Some(m) if !m.is_empty() => format!("{amount} {m}"),
        _ => amount,
    };
    // Members in the order this action has always been published in.
    let raw = object([
        ("message", Value::from(message)),
        ("progress", Value::from(progress)),
        ("total", Value::from(total)),
    ]);
    StateAction::ChatToolCallContentChanged(ChatToolCallContentChangedAction {
        turn_id: ctx.turn_id.clone(),
        tool_call_id: ctx.tool_call_id.clone(),
        meta: ctx.meta_with(object([("progress", Value::Object(raw))])),
        content: vec![ToolResultContent::Text(ToolResultTextContent { text })],
    })
}

fn num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

fn object<const N: usize>(members: [(&str, Value); N]) -> Map<String, Value> {
    members
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// The AHP `McpAuthRequirement` (no token) of a server's `authRequired`
/// state: the same `reason`, `oauthClient`, `resource` (RFC 9728 metadata),
/// `requiredScopes` and `description`.
pub fn auth_requirement(state: &McpServerAuthRequiredState) -> McpAuthRequirement {
    McpAuthRequirement {
        reason: state.reason.clone(),
        oauth_client: state.oauth_client.clone(),
        resource: state.resource.clone(),
        required_scopes: state.required_scopes.clone(),
        description: state.description.clone(),
    }
}

/// `chat/toolCallAuthRequired` (AHP 1.0 "Tool-call-level authentication"):
/// the running call pauses on `auth`.
pub fn auth_required(ctx: &ChatContext, auth: &McpAuthRequirement) -> StateAction {
    StateAction::ChatToolCallAuthRequired(ChatToolCallAuthRequiredAction {
        turn_id: ctx.turn_id.clone(),
        tool_call_id: ctx.tool_call_id.clone(),
        meta: ctx.action_meta(),
        auth: auth.clone(),
    })
}

/// `chat/toolCallAuthResolved`: the paused call runs again.
pub fn auth_resolved_action(ctx: &ChatContext) -> StateAction {
    StateAction::ChatToolCallAuthResolved(ChatToolCallAuthResolvedAction {
        turn_id: ctx.turn_id.clone(),
        tool_call_id: ctx.tool_call_id.clone(),
        meta: ctx.action_meta(),
    })
}

/// `session/inputNeededSet` of kind `toolAuthentication` (id
/// [`ChatContext::input_id`]) for the paused call: status `auth-required`,
/// contributor `{kind: "mcp", customizationId}`, confirmed `not-needed`.
pub fn input_needed_set(
    ctx: &ChatContext,
    call: &PausedToolCall<'_>,
    auth: &McpAuthRequirement,
) -> StateAction {
    let tool_call = ToolCallAuthRequiredState {
        tool_call_id: ctx.tool_call_id.clone(),
        tool_name: call.tool_name.to_owned(),
        display_name: call.display_name.to_owned(),
        intention: None,
        contributor: Some(ToolCallContributor::Mcp(ToolCallMcpContributor {
            customization_id: ctx.customization_id.clone(),
        })),
        meta: ctx.action_meta(),
        invocation_message: StringOrMarkdown::Plain(call.invocation_message.to_owned()),
        tool_input: None,
        confirmed: ToolCallConfirmationReason::NotNeeded,
        selected_option: None,
        status: ToolCallStatus::AuthRequired,
        auth: auth.clone(),
        content: None,
    };
    let request = SessionToolAuthenticationRequest {
        id: ctx.input_id(),
        chat: ctx.chat.clone(),
        turn_id: ctx.turn_id.clone(),
        tool_call,
    };
    StateAction::SessionInputNeededSet(Box::new(SessionInputNeededSetAction {
        request: SessionInputRequest::ToolAuthentication(Box::new(request)),
    }))
}

/// `session/inputNeededRemoved` for the call's auth wait (id
/// [`ChatContext::input_id`]).
pub fn input_needed_removed_action(ctx: &ChatContext) -> StateAction {
    StateAction::SessionInputNeededRemoved(SessionInputNeededRemovedAction { id: ctx.input_id() })
}

/// `chat/toolCallComplete` for an outcome: a `CallToolResult` (mapped by
/// [`map_result`]) or a host error (a failed result by [`failed_result`],
/// `error: {code, message, data?}`). No output budget (see
/// [`complete_within`]).
///
/// The result is the server's own output, and a server may print a value
/// the host keeps secret (a tool that dumps its environment, where an
/// imported `${input:…}` token went): in the chat state, which AHP clients
/// and the model read, each such value is `[redacted]`
/// ([`crate::redact::hidden_in_value`]). The JS `callTool` result stays
/// whole.
pub fn complete_action(
    ctx: &ChatContext,
    display_name: &str,
    outcome: &Result<Value, HostError>,
) -> StateAction {
    let result = match outcome {
        Ok(r) => map_result(display_name, &redacted(r)),
        Err(e) => failed_result(display_name, e),
    };
    complete(ctx, result)
}

/// The model-facing output budget of a chat call's completion (issue 29
/// item 5): at most `max_chars` characters of the result go into the chat
/// state ([`budget`]); a result over it is kept whole in `files`.
#[derive(Debug, Clone)]
pub struct OutputBudget {
    /// The budget (characters): the call's own, else its server's, else
    /// `limits.modelOutputMaxChars`.
    pub max_chars: usize,
    /// Where whole results are kept (`<dataDir>/.tool-results`).
    pub files: Arc<ToolResults>,
}

/// [`complete_action`] within `budget`: a result over it is cut with a
/// marker (see [`budget`]) that names, and links to, the spill file
/// holding the whole result after the same redaction ([`spill`]; written on
/// the blocking pool). The second value is the `warn` text when the whole
/// result could not be kept (the marker then says why); the completion is
/// published all the same. The JS `callTool` result stays whole.
pub async fn complete_within(
    ctx: &ChatContext,
    display_name: &str,
    outcome: &Result<Value, HostError>,
    budget: &OutputBudget,
) -> (StateAction, Option<String>) {
    let Ok(whole) = outcome else {
        return (complete_action(ctx, display_name, outcome), None);
    };
    let shown = redacted(whole);
    let mut result = map_result(display_name, &shown);
    let mut warning = None;
    if budget::over_budget(&result, budget.max_chars) {
        let id = ctx.tool_call_id.clone();
        let kept = spill::keep_whole(budget.files.clone(), id, shown).await;
        if let budget::Kept::Not(why) = &kept {
            warning = Some(format!(
                "tool call {:?}: its result is over the model output budget ({} characters) \
                 and the whole result was not kept: {why}",
                ctx.tool_call_id, budget.max_chars
            ));
        }
        budget::cut(&mut result, budget.max_chars, &kept);
    }
    (complete(ctx, result), warning)
}

/// Publishes [`complete_within`]'s `chat/toolCallComplete` on the call's
/// chat, after a `warn` log (`target`, naming `server_id`) when the whole
/// result could not be kept.
pub async fn publish_complete(
    publisher: &crate::publisher::SessionPublisher,
    (ctx, display_name): (&ChatContext, &str),
    outcome: &Result<Value, HostError>,
    budget: &OutputBudget,
    (target, server_id): (&'static str, &str),
) {
    let (action, warning) = complete_within(ctx, display_name, outcome, budget).await;
    if let Some(warning) = warning {
        let level = crate::events::LogLevel::Warn;
        publisher.log(crate::events::log(level, target, Some(server_id), warning));
    }
    publisher.emit_on(&ctx.chat, action);
}

/// A copy of `result` with every kept secret `[redacted]`.
fn redacted(result: &Value) -> Value {
    let mut shown = result.clone();
    crate::redact::hidden_in_value(&mut shown);
    shown
}

fn complete(ctx: &ChatContext, result: ahp_types::state::ToolCallResult) -> StateAction {
    StateAction::ChatToolCallComplete(ChatToolCallCompleteAction {
        turn_id: ctx.turn_id.clone(),
        tool_call_id: ctx.tool_call_id.clone(),
        meta: ctx.action_meta(),
        result,
        requires_result_confirmation: None,
    })
}
