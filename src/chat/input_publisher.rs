//! Elicitations of AHP tool calls (form mode, and URL mode: SEP-1036, an
//! input request with `url` and no questions), published the AHP way (AHP 1.0
//! "Chat channel › Input requests", "Aggregated input requests") and
//! answered by whichever comes first: the app's `elicitation` handler or an
//! AHP client's `chat/inputCompleted`.
//!
//! - [`ChatCallInputs`]: one AHP tool call's inputs (made by `callTool` when
//!   the call has `chat`, `turnId`, `toolCallId`). [`ChatCallInputs::open`]
//!   registers an input request in the host's [`ChatInputs`] and emits
//!   `chat/inputRequested` (chat channel) and `session/inputNeededSet` of
//!   kind `chatInput`; [`ChatCallInputs::end`] (the call ended) withdraws
//!   what is still open.
//! - Which call an elicitation belongs to ([`attribute`]): an MRTR input
//!   request is its own call's (a [`MrtrChatCall`] on its request context);
//!   a 2025-era `elicitation/create` over Streamable HTTP is the call whose
//!   POST response stream carried it (rmcp's `InboundStreamOrigin`); with no
//!   such link (stdio, or the standalone GET stream) it is the connection's
//!   only `tools/call` in flight, when that call runs as an AHP tool call.
//!   Otherwise it is not published.
//! - [`race`]: the app handler's answer against the AHP client's. Whoever
//!   takes the pending entry out of [`ChatInputs`] first (under its lock)
//!   wins. The AHP side of an app answer gets `chat/inputCompleted` (the
//!   app's action and content as answers) and `session/inputNeededRemoved`;
//!   an app handler that lost is dropped (its JS `context.signal` aborts; a
//!   later answer is ignored). A withdrawn request (call ended, the server
//!   cancelled it) completes with `cancel`.
//!
//! Lock order: chat inputs, then the session (every emit here happens under
//! the chat inputs lock, so an answer and its withdrawal never both happen).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ahp_types::actions::{
    ActionEnvelope, ActionOrigin, ChatInputAnswerChangedAction, ChatInputCompletedAction,
    StateAction,
};
use ahp_types::state::{ChatInputAnswer, ChatInputRequest, ChatInputResponseKind};
use futures::future::BoxFuture;
use rmcp::model::RequestId;
use rmcp::service::{InboundStreamOrigin, RequestContext, RoleClient};
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;

use crate::chat::{answers, input, ChatContext};
use crate::limits::MAX_OPEN_INPUTS_PER_CALL;
use crate::publisher::SessionPublisher;
use crate::requests::url_elicitation::UrlElicitation;
use crate::requests::ChatInputRef;

/// The AHP input requests of this host now waiting on an answer, by
/// `ChatInputRequest.id` (unique in the host). Owned by the host; lock
/// order: before the session.
#[derive(Default)]
pub struct ChatInputs {
    next: AtomicU64,
    pending: Mutex<HashMap<String, Pending>>,
}

/// One open input request.
struct Pending {
    /// Chat channel URI.
    chat: String,
    /// The [`ChatCallInputs::call`] it belongs to.
    call: u64,
    /// The elicitation's `requestedSchema` (`null` for URL mode).
    schema: Value,
    /// A URL-mode elicitation (SEP-1036): no questions, answered `{action}`.
    url: bool,
    /// Answers synced by `chat/inputAnswerChanged`, by question id.
    drafts: HashMap<String, ChatInputAnswer>,
    /// Where the MCP `ElicitResult` of an AHP answer goes.
    answer: oneshot::Sender<Value>,
}

/// How a client's `chat/inputAnswerChanged` / `chat/inputCompleted` was taken.
enum Verdict {
    /// Applied: echoed on the request's chat.
    Applied { chat: String },
    /// Refused: echoed with this reason on the request's chat (or, for an
    /// unknown request, the session channel).
    Refused {
        chat: Option<String>,
        reason: String,
    },
}

impl ChatInputs {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client's `chat/inputAnswerChanged` (AHP `dispatchAction`): the
    /// draft is kept for the request's completion and echoed on its chat;
    /// refused (echoed with `rejectionReason`) when no request of this host
    /// with that id is waiting or its form has no such question.
    pub fn answer_changed(
        &self,
        publisher: &SessionPublisher,
        a: &ChatInputAnswerChangedAction,
        origin: ActionOrigin,
    ) -> ActionEnvelope {
        let mut pending = self.lock();
        let verdict = match pending.get_mut(&a.request_id) {
            None => not_waiting(&a.request_id),
            Some(p) if !input::properties(&p.schema).any(|(name, _)| *name == a.question_id) => {
                Verdict::Refused {
                    chat: Some(p.chat.clone()),
                    reason: format!("the form has no question {:?}", a.question_id),
                }
            }
            Some(p) => {
                match &a.answer {
                    Some(answer) => p.drafts.insert(a.question_id.clone(), answer.clone()),
                    None => p.drafts.remove(&a.question_id),
                };
                Verdict::Applied {
                    chat: p.chat.clone(),
                }
            }
        };
        let action = StateAction::ChatInputAnswerChanged(a.clone());
        echo(publisher, action, origin, verdict)
    }

    /// A client's `chat/inputCompleted`: with `accept`, its answers (the
    /// synced drafts, replaced by `answers`) must fit the requested schema
    /// ([`answers::content_from_answers`]); `decline` and `cancel` go to the
    /// server as they are. Taken: echoed on the request's chat, then
    /// `session/inputNeededRemoved`, and the elicitation is answered (the
    /// app's handler, if still running, is withdrawn). Refused (echoed with
    /// `rejectionReason`, the request stays open) for an unknown request or
    /// answers that do not fit.
    pub fn completed(
        &self,
        publisher: &SessionPublisher,
        a: &ChatInputCompletedAction,
        origin: ActionOrigin,
    ) -> ActionEnvelope {
        let mut pending = self.lock();
        let action = StateAction::ChatInputCompleted(a.clone());
        let Some(p) = pending.get(&a.request_id) else {
            return echo(publisher, action, origin, not_waiting(&a.request_id));
        };
        let mut final_answers = p.drafts.clone();
        final_answers.extend(a.answers.clone().unwrap_or_default());
        let result = if p.url {
            answers::url_elicit_result(a.response, &final_answers)
        } else {
            answers::elicit_result(&p.schema, a.response, &final_answers)
        };
        let result = match result {
            Ok(result) => result,
            Err(reason) => {
                let chat = Some(p.chat.clone());
                return echo(publisher, action, origin, Verdict::Refused { chat, reason });
            }
        };
        let Some(p) = pending.remove(&a.request_id) else {
            return echo(publisher, action, origin, not_waiting(&a.request_id));
        };
        let chat = p.chat.clone();
        let envelope = echo(publisher, action, origin, Verdict::Applied { chat });
        publisher.emit(input::input_needed_removed(&p.chat, &a.request_id));
        let _ = p.answer.send(result);
        envelope
    }

    /// Takes request `request_id` out (it is answered or withdrawn) and
    /// emits `chat/inputCompleted` (`response`, `answers`) and
    /// `session/inputNeededRemoved`; `false` when it was no longer open.
    fn close(
        pending: &mut HashMap<String, Pending>,
        publisher: &SessionPublisher,
        request_id: &str,
        response: ChatInputResponseKind,
        answers: Option<HashMap<String, ChatInputAnswer>>,
    ) -> bool {
        let Some(p) = pending.remove(request_id) else {
            return false;
        };
        let completed = input::input_completed_action(request_id, response, answers);
        publisher.emit_on(&p.chat, completed);
        publisher.emit(input::input_needed_removed(&p.chat, request_id));
        true
    }
}

fn not_waiting(request_id: &str) -> Verdict {
    Verdict::Refused {
        chat: None,
        reason: format!("no input request {request_id:?} of this host is waiting for an answer"),
    }
}

/// Echoes a client's chat input action with `origin`.
fn echo(
    publisher: &SessionPublisher,
    action: StateAction,
    origin: ActionOrigin,
    verdict: Verdict,
) -> ActionEnvelope {
    match verdict {
        Verdict::Applied { chat } => publisher.envelope_on(&chat, action, Some(origin), None),
        Verdict::Refused { chat, reason } => {
            let channel = chat.unwrap_or_else(|| publisher.channel());
            publisher.envelope_on(&channel, action, Some(origin), Some(reason))
        }
    }
}

/// The inputs of one AHP tool call (see the module doc).
pub struct ChatCallInputs {
    publisher: Arc<SessionPublisher>,
    inputs: Arc<ChatInputs>,
    ctx: ChatContext,
    /// Unique in the host: ties the call's requests to it.
    call: u64,
    /// Set by [`ChatCallInputs::end`]: nothing more is published.
    ended: AtomicBool,
    /// Its [`PendingInput`]s alive now (at most [`MAX_OPEN_INPUTS_PER_CALL`]).
    open_inputs: AtomicUsize,
}

impl std::fmt::Debug for ChatCallInputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatCallInputs")
            .field("ctx", &self.ctx)
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

impl ChatCallInputs {
    /// The inputs of the AHP tool call `ctx`, published through `publisher`
    /// and registered in `inputs`.
    pub fn new(
        publisher: Arc<SessionPublisher>,
        inputs: Arc<ChatInputs>,
        ctx: ChatContext,
    ) -> Arc<Self> {
        let call = inputs.next.fetch_add(1, Ordering::Relaxed);
        Arc::new(Self {
            publisher,
            inputs,
            ctx,
            call,
            ended: AtomicBool::new(false),
            open_inputs: AtomicUsize::new(0),
        })
    }

    /// Publishes a form elicitation (`message`, `requested_schema`) of this
    /// call: `chat/inputRequested` on the chat, `session/inputNeededSet` of
    /// kind `chatInput`. Its id is `<toolCallId>/elicitation/<n>`. Once the
    /// call ended nothing is published and the input is already withdrawn.
    ///
    /// `None` when the call has [`MAX_OPEN_INPUTS_PER_CALL`] open already
    /// (nothing is published).
    pub fn open(self: &Arc<Self>, message: &str, requested_schema: &Value) -> Option<PendingInput> {
        let request = |id: &str| input::input_request(id, message, requested_schema);
        self.open_request(request, requested_schema)
    }

    /// [`ChatCallInputs::open`] for a URL-mode elicitation (SEP-1036): the
    /// input request carries its `url` and no questions
    /// ([`input::url_input_request`]); answered `{action}` alone.
    pub fn open_url(self: &Arc<Self>, url: &UrlElicitation) -> Option<PendingInput> {
        let request = |id: &str| input::url_input_request(id, url);
        self.open_request(request, &Value::Null)
    }

    fn open_request(
        self: &Arc<Self>,
        request: impl FnOnce(&str) -> ChatInputRequest,
        schema: &Value,
    ) -> Option<PendingInput> {
        if self.open_inputs.fetch_add(1, Ordering::AcqRel) >= MAX_OPEN_INPUTS_PER_CALL {
            self.open_inputs.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let n = self.inputs.next.fetch_add(1, Ordering::Relaxed);
        let request_id = format!("{}/elicitation/{n}", self.ctx.tool_call_id);
        let (tx, rx) = oneshot::channel();
        let mut pending = self.inputs.lock();
        // Under the lock: `end` either ran before (nothing is published) or runs after.
        if !self.ended.load(Ordering::SeqCst) {
            let request = request(&request_id);
            pending.insert(
                request_id.clone(),
                Pending {
                    chat: self.ctx.chat.clone(),
                    call: self.call,
                    schema: schema.clone(),
                    url: request.url.is_some(),
                    drafts: HashMap::new(),
                    answer: tx,
                },
            );
            let chat = &self.ctx.chat;
            self.publisher
                .emit_on(chat, input::input_requested_action(&request));
            self.publisher.emit(input::input_needed_set(chat, &request));
        }
        drop(pending);
        Some(PendingInput {
            call: self.clone(),
            request_id,
            schema: schema.clone(),
            answer: rx,
        })
    }

    /// The AHP tool call id (for error texts).
    pub fn tool_call_id(&self) -> &str {
        &self.ctx.tool_call_id
    }

    /// The call ended: every input request of it still open is withdrawn
    /// (`chat/inputCompleted` `cancel`, `session/inputNeededRemoved`) and
    /// its elicitation answered `cancel`; later ones are not published.
    pub fn end(&self) {
        let mut pending = self.inputs.lock();
        self.ended.store(true, Ordering::SeqCst);
        let mine: Vec<String> = pending
            .iter()
            .filter(|(_, p)| p.call == self.call)
            .map(|(id, _)| id.clone())
            .collect();
        for id in mine {
            let cancel = ChatInputResponseKind::Cancel;
            ChatInputs::close(&mut pending, &self.publisher, &id, cancel, None);
        }
    }
}

impl Drop for ChatCallInputs {
    fn drop(&mut self) {
        self.end();
    }
}

/// One published input request, waiting for its answer. Dropped while
/// still open, it is withdrawn (`chat/inputCompleted` `cancel`,
/// `session/inputNeededRemoved`).
pub struct PendingInput {
    call: Arc<ChatCallInputs>,
    request_id: String,
    schema: Value,
    answer: oneshot::Receiver<Value>,
}

impl PendingInput {
    /// What the app's handler is told about the AHP side (JS `context.chatInput`).
    pub fn chat_input_ref(&self) -> ChatInputRef {
        let ctx = &self.call.ctx;
        ChatInputRef {
            chat: ctx.chat.clone(),
            turn_id: ctx.turn_id.clone(),
            tool_call_id: ctx.tool_call_id.clone(),
            request_id: self.request_id.clone(),
        }
    }

    /// The app answered (`answer`: its `ElicitResult`, or its failure):
    /// the AHP side is completed with it (`chat/inputCompleted` with the
    /// app's action and content, `session/inputNeededRemoved`) and `None`
    /// returned; when an AHP client had already answered, its answer is
    /// returned instead.
    fn settle_by_app(&mut self, answer: &Result<Value, String>) -> Option<Value> {
        let mut pending = self.call.inputs.lock();
        let (response, answers) = match answer {
            Ok(result) => {
                let action = result.get("action").and_then(Value::as_str);
                let content = result.get("content").and_then(Value::as_object);
                let answers = content.map(|c| answers::answers_from_content(&self.schema, c));
                (answers::response_kind(action), answers)
            }
            Err(_) => (ChatInputResponseKind::Cancel, None),
        };
        let publisher = &self.call.publisher;
        if ChatInputs::close(&mut pending, publisher, &self.request_id, response, answers) {
            return None;
        }
        drop(pending);
        self.answer.try_recv().ok()
    }
}

impl Drop for PendingInput {
    fn drop(&mut self) {
        self.call.open_inputs.fetch_sub(1, Ordering::AcqRel);
        let mut pending = self.call.inputs.lock();
        let cancel = ChatInputResponseKind::Cancel;
        ChatInputs::close(
            &mut pending,
            &self.call.publisher,
            &self.request_id,
            cancel,
            None,
        );
    }
}

/// The answer to a published elicitation: the AHP client's or the app
/// handler's (`app`, when there is one), whichever comes first (see the
/// module doc); `{action: "cancel"}` once the call ended. The losing
/// handler future is dropped.
///
/// # Errors
/// The app handler's failure, when it came first.
pub async fn race(
    pending: &mut PendingInput,
    app: Option<BoxFuture<'static, Result<Value, String>>>,
) -> Result<Value, String> {
    let withdrawn = || json!({ "action": "cancel" });
    let Some(app) = app else {
        return Ok((&mut pending.answer).await.unwrap_or_else(|_| withdrawn()));
    };
    tokio::select! {
        biased;
        ahp = &mut pending.answer => Ok(ahp.unwrap_or_else(|_| withdrawn())),
        answer = app => match pending.settle_by_app(&answer) {
            Some(ahp) => Ok(ahp),
            None => answer,
        },
    }
}

/// Marks the request context of an MRTR input request with the AHP tool
/// call it belongs to (see [`attribute`]).
#[derive(Clone)]
pub struct MrtrChatCall(pub Arc<ChatCallInputs>);

/// The `tools/call` requests of one connection now in flight, with the AHP
/// tool call each runs as (if any), for [`attribute`].
#[derive(Clone, Default)]
pub struct InFlightCalls(Arc<Mutex<InFlight>>);

#[derive(Default)]
struct InFlight {
    next: u64,
    calls: Vec<Slot>,
}

struct Slot {
    key: u64,
    id: Option<RequestId>,
    chat: Option<Arc<ChatCallInputs>>,
}

impl InFlightCalls {
    fn lock(&self) -> MutexGuard<'_, InFlight> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a `tools/call` (running as `chat`, if any) as in flight until
    /// the returned guard is dropped. Call before sending the request, and
    /// [`InFlightCall::sent`] with its id right after.
    pub fn begin(&self, chat: Option<Arc<ChatCallInputs>>) -> InFlightCall {
        let mut inner = self.lock();
        inner.next += 1;
        let key = inner.next;
        inner.calls.push(Slot {
            key,
            id: None,
            chat,
        });
        InFlightCall {
            calls: self.clone(),
            key,
        }
    }
}

/// One `tools/call` in flight (see [`InFlightCalls::begin`]).
pub struct InFlightCall {
    calls: InFlightCalls,
    key: u64,
}

impl InFlightCall {
    /// Records the request's JSON-RPC id.
    pub fn sent(&self, id: RequestId) {
        let mut inner = self.calls.lock();
        if let Some(slot) = inner.calls.iter_mut().find(|s| s.key == self.key) {
            slot.id = Some(id);
        }
    }
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        self.calls.lock().calls.retain(|s| s.key != self.key);
    }
}

/// The AHP tool call a server request (`context`) belongs to, by the rule
/// of the module doc; `None`: not published.
pub fn attribute(
    calls: &InFlightCalls,
    context: &RequestContext<RoleClient>,
) -> Option<Arc<ChatCallInputs>> {
    if let Some(MrtrChatCall(call)) = context.extensions.get::<MrtrChatCall>() {
        return Some(call.clone());
    }
    let inner = calls.lock();
    if let Some(InboundStreamOrigin::OutboundRequest(id)) =
        context.extensions.get::<InboundStreamOrigin>()
    {
        if let Some(slot) = inner.calls.iter().find(|s| s.id.as_ref() == Some(id)) {
            return slot.chat.clone();
        }
        // Tied to another request (not a tool call), unless a call's id is
        // not recorded yet (it was sent a moment ago).
        if inner.calls.iter().all(|s| s.id.is_some()) {
            return None;
        }
    }
    match inner.calls.as_slice() {
        [only] => only.chat.clone(),
        _ => None,
    }
}

/// The form elicitation's `message` and `requestedSchema` (as sent, key
/// order kept), from the request's JSON.
pub fn form(params: &Value) -> Option<(&str, &Value)> {
    let schema = params.get("requestedSchema")?;
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    Some((message, schema))
}

/// `{}` when `content` is absent (for decoding an accepted answer).
pub fn content_mut(answer: &mut Value) -> Option<&mut Map<String, Value>> {
    answer
        .as_object_mut()?
        .entry("content")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}
