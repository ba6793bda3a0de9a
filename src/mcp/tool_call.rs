//! MCP `tools/call` on a ready server (MCP 2025-11-25 "Server Features ›
//! Tools › Calling Tools"), with progress ("Utilities › Progress"), an
//! inactivity timeout that progress resets and that stands still while the
//! server waits on the app (this module's clock), an absolute cap (also
//! this module's: both clocks are armed when the request is issued, and
//! rmcp gets neither), caller cancellation (`notifications/cancelled`,
//! "Utilities › Cancellation"), result bounds, and immediate rejection when
//! the server crashes mid-call. (AHP chat actions for a call are built in
//! [`crate::chat`].)

use std::sync::Arc;
use std::time::Duration;

use futures::{FutureExt, Stream, StreamExt};
use rmcp::model::{ProgressNotificationParam, ServerResult};
use rmcp::service::{PeerRequestOptions, RequestHandle, RoleClient, ServiceError};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

mod pacing;
mod url_required;

use pacing::Paced;

use super::mrtr;
pub use super::progress::Progress;
use super::request::{self, CallTimeouts, InFlight, RequestFailure};
use super::task;
use super::{ServerLive, Session};
use crate::auth::{AuthChallenge, ChallengeStatus};
use crate::chat::input_publisher::ChatCallInputs;
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult, TimeoutKind};
use crate::json::{check_text_bounds, JsonText};
use crate::limits::Limits;

/// How long a call that saw the transport close waits for the crash reason.
/// (A settle time of this module's own; not a user-tunable limit.)
const REASON_SETTLE: Duration = Duration::from_secs(1);

/// One tool call.
#[derive(Debug, Clone)]
pub struct CallRequest {
    /// The tool's name exactly as the server listed it.
    pub name: String,
    /// Arguments object (`arguments` of `tools/call`).
    pub arguments: Option<Map<String, Value>>,
    /// Inactivity limit: reset by each `notifications/progress` of this
    /// call; stands still while a request of the server waits on the app
    /// (see [`call_tool`]).
    pub timeout: Duration,
    /// Absolute limit; progress never extends it.
    pub max_total: Duration,
    /// Time the call spent before this request (waiting for a lazy
    /// server's start: `crate::host`'s `wake`), counted against
    /// `max_total`. The inactivity limit starts afresh with the request.
    pub waited: Duration,
    /// The AHP tool call this call runs as, if any: its elicitations
    /// (2025-era `elicitation/create` and MRTR input requests) are published
    /// to AHP clients too ([`crate::chat::input_publisher`]).
    pub chat: Option<Arc<ChatCallInputs>>,
    /// What to do when the server answers with a task (SEP-2663, [`task`]).
    pub task: task::TaskOptions,
}

impl ServerLive {
    /// MCP `tools/call` on this server's session (see
    /// [`call_tool`] for the progress, task and MRTR handling and
    /// the errors); a refusal's challenge is recorded here.
    ///
    /// # Errors
    /// `server_not_ready`, `timeout`, `cancelled`, `server_exited`,
    /// `protocol_error`, `limit_exceeded`, `redirect_refused`, `auth_required`,
    /// `url_elicitation_required`.
    pub async fn call_tool(
        &self,
        server_id: &str,
        req: &CallRequest,
        (limits, cancel): (&Limits, CancellationToken),
        on_progress: &mut (dyn FnMut(Progress) + Send),
    ) -> HostResult<JsonText> {
        call_tool(self, server_id, req, limits, cancel, on_progress).await
    }
}

/// Calls a tool and returns the MCP `CallToolResult` as JSON text (a plain
/// result goes from rmcp's typed value to its text once, with no tree in
/// between: see [`Call::finish`]).
///
/// Every request carries a unique `_meta.progressToken`; each progress
/// notification for it is passed to `on_progress` in order and resets the
/// inactivity timeout. On timeout or cancellation exactly one
/// `notifications/cancelled` (with the request id and a reason) is sent, and
/// a response arriving later is dropped. A 401/403 challenge is recorded as
/// the server's challenge ([`ServerLive::challenge`]).
///
/// Waiting on the user: while a request of this server (elicitation,
/// sampling, roots: MCP 2025-11-25 "Client Features") waits on the app's
/// handler, the inactivity clock of every call on the connection stands
/// still, and when the last such request is answered (or withdrawn) it
/// restarts from the full `timeout`. Restarting rather than resuming: the
/// answer reaching the server is activity on the call, like a progress
/// notification, and the server needs time to act on it however long the
/// user took; resuming would leave it only what was left before the
/// question. The absolute cap `max_total` runs on regardless, so an
/// elicitation nobody answers still ends the call (`timeout`, kind `total`).
///
/// # Errors
///
/// `server_not_ready`; `timeout` (data `{kind: "inactivity"|"total", ms}`);
/// `cancelled` (the caller's token fired); `server_exited` (the server
/// crashed or was stopped during the call; message has the exit status and
/// stderr tail); `protocol_error` (JSON-RPC error: `data` is `{code, data}`;
/// a response the stdio reader could not decode, saying what was wrong; a
/// Streamable HTTP response stream that closed before the response while
/// the connection lives on); `limit_exceeded` (the result passed
/// `maxResultBytes`, `maxJsonDepth` or `maxJsonProperties`, or the stdio
/// reader discarded the response as too long or too deep);
/// `redirect_refused`; `auth_required` (data `{code: -32007,
/// insufficientScope, requiredScopes}`); `url_elicitation_required` (the
/// server answered `-32042` and its URL elicitations were not completed,
/// or were needed again after the one retry: see [`url_required`]).
pub async fn call_tool(
    live: &ServerLive,
    server_id: &str,
    req: &CallRequest,
    limits: &Limits,
    cancel: CancellationToken,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> HostResult<JsonText> {
    let conn = live.session().ok_or_else(|| {
        HostError::new(
            ErrorCode::ServerNotReady,
            format!("server {server_id} is not ready"),
        )
    })?;
    let call = Call {
        server_id,
        context: format!("tools/call {:?} on {server_id}", req.name),
        timeouts: CallTimeouts {
            inactivity: req.timeout,
            total: req.max_total,
        },
        live,
        conn: &conn,
        chat: req.chat.as_ref(),
    };
    let now = tokio::time::Instant::now();
    let started = now.checked_sub(req.waited).unwrap_or(now);
    let mut rounds = mrtr::Rounds::default();
    let mut answers = Map::new();
    let mut url_retries = 0;
    loop {
        let mut params = json!({ "name": req.name });
        if let Some(arguments) = &req.arguments {
            params["arguments"] = Value::Object(arguments.clone());
        }
        if let Some(params) = params.as_object_mut() {
            params.append(&mut answers);
        }
        let left = req.max_total.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(call.failure(ServiceError::Timeout {
                timeout: req.max_total,
            }));
        }
        let result = call.round(params, left, &cancel, &mut *on_progress).await?;
        if let Some(error) = url_required::of(&result) {
            let left = req.max_total.saturating_sub(started.elapsed());
            let retries = &mut url_retries;
            if call
                .complete_url_elicitations(error, retries, left, &cancel)
                .await?
            {
                continue;
            }
        }
        let result = match call.finish(result, limits).await? {
            Finished::Text(text) => return Ok(text),
            Finished::Tree(result) => result,
        };
        if task::is_task(&result) {
            // Boxed: following a task is the rare path, and its state would
            // otherwise double the size of every call's future.
            let following = Box::pin(call.task(result, req, limits, &cancel, on_progress));
            let result = following.await?;
            return JsonText::of(&result);
        }
        if !mrtr::is_input_required(&result) {
            return JsonText::of(&mrtr::finished(result));
        }
        let with = (&conn.handler, &conn.peer);
        let answering = rounds.answer(&call.context, result, with, call.chat);
        let left = req.max_total.saturating_sub(started.elapsed());
        answers = call.between_rounds(answering, left, &cancel).await?;
    }
}

/// A response turned into a result ([`Call::finish`]).
enum Finished {
    /// A final `CallToolResult`, as the text passed on.
    Text(JsonText),
    /// Anything else, for the call's next step (task, `input_required`).
    Tree(Value),
}

/// One call's context while it runs.
struct Call<'a> {
    server_id: &'a str,
    /// `tools/call "<tool>" on <server>`, the start of every message.
    context: String,
    timeouts: CallTimeouts,
    live: &'a ServerLive,
    conn: &'a Session,
    /// The AHP tool call it runs as.
    chat: Option<&'a Arc<ChatCallInputs>>,
}

impl Call<'_> {
    /// A task handle answered the call: returned as it is when the caller
    /// asked for the handle, else followed to its end ([`task::follow`]),
    /// recorded in the caller's journal meanwhile.
    async fn task(
        &self,
        handle: Value,
        req: &CallRequest,
        limits: &Limits,
        cancel: &CancellationToken,
        on_progress: &mut (dyn FnMut(Progress) + Send),
    ) -> HostResult<Value> {
        if req.task.handle {
            return Ok(handle);
        }
        let seed = task::created(&self.context, handle)?;
        let follow = task::Follow {
            context: &self.context,
            server_id: self.server_id,
            conn: self.conn,
            chat: self.chat,
            request_timeout: self.timeouts.inactivity,
            limits,
        };
        let journal = req.task.journal.as_ref();
        let id = seed.task_id.clone();
        if let Some(j) = journal {
            j.started(&seed);
        }
        let outcome = task::follow(&follow, seed, cancel, on_progress).await;
        if let Some(j) = journal {
            j.ended(&id);
        }
        outcome
    }

    /// Waits while the input requests of an `input_required` round are
    /// answered (`answering`): at most `left` of the total limit (then
    /// `timeout`, kind `total`), ended by the caller's cancellation
    /// (`cancelled`). The inactivity clock does not run: nothing is in
    /// flight on the server.
    async fn between_rounds<T>(
        &self,
        answering: impl std::future::Future<Output = HostResult<T>>,
        left: Duration,
        cancel: &CancellationToken,
    ) -> HostResult<T> {
        let context = &self.context;
        tokio::select! {
            answers = answering => answers,
            () = tokio::time::sleep(left) => {
                Err(request::call_timeout(context, TimeoutKind::Total, self.timeouts.total))
            }
            () = cancel.cancelled() => {
                Err(HostError::new(ErrorCode::Cancelled, format!("{context} was cancelled")))
            }
        }
    }

    /// Sends one round of the call (`params`, at most `left` of the total
    /// limit) and waits for its response, passing progress on.
    ///
    /// A progress notification whose `progress` is not above the last one
    /// passed on is dropped (MCP 2025-11-25 "Utilities › Progress": the
    /// value MUST increase): progress normally arrives in order (routed by
    /// the receive loop), but one that found its queue full takes rmcp's
    /// per-notification task and can come late.
    async fn round(
        &self,
        params: Value,
        left: Duration,
        cancel: &CancellationToken,
        on_progress: &mut (dyn FnMut(Progress) + Send),
    ) -> HostResult<Result<ServerResult, ServiceError>> {
        let paced = &mut Paced::new(on_progress);
        // Both clocks are `Call::wait`'s (rmcp's own timeout would await its
        // `notifications/cancelled` write, which a full stdin never finishes).
        let mut options = PeerRequestOptions::no_options();
        let conn = self.conn;
        options.meta = task::declaring_meta(&conn.peer, &conn.handler);
        let discarded = conn.discarded.as_ref();
        // In flight (for attributing the server's elicitations) from before it leaves.
        let in_flight = conn.handler.calls.begin(self.chat.cloned());
        let request = request::custom("tools/call", params);
        let mut sent = InFlight::send(&conn.peer, request, options, discarded)
            .await
            .map_err(|e| self.failure(e))?;
        in_flight.sent(sent.id.clone());
        let mut progress = conn.progress.subscribe(sent.progress_token.clone()).await;
        let outcome = self
            .wait(&mut sent, &mut progress, (cancel, left), paced)
            .await?;
        // A later round's cap is what is left of the total: report it as the total.
        let outcome = outcome.map_err(|e| match e {
            ServiceError::Timeout { timeout } if timeout == left => ServiceError::Timeout {
                timeout: self.timeouts.total,
            },
            e => e,
        });
        if matches!(outcome, Err(ServiceError::TransportClosed)) {
            // Only this response stream closed (HTTP), or the connection.
            let id = sent.id.clone();
            let on = (conn.discarded.is_some(), conn.stream_watch.as_deref());
            if let Some(e) = request::stream_closed(&self.context, &conn.peer, id, on).await {
                return Err(e);
            }
        }
        // Progress sent before the response is queued already (the connection's
        // receive loop routes it as it arrives, `HostClient::observe`): passed
        // on before the result.
        while let Some(Some(p)) = progress.next().now_or_never() {
            paced.offer(p.into());
        }
        paced.flush();
        Ok(outcome)
    }

    /// Waits for the response while passing progress on; ends early on
    /// cancellation, a crash, a discarded response, or inactivity (no
    /// response or progress for `timeouts.inactivity` while no request of
    /// the server waits on the app: see [`call_tool`]) or when `left` (what
    /// is left of the total limit) runs out. Every limit is armed when the
    /// request is issued and none waits for the server to read a
    /// cancellation (see [`request::cancel_in_background`]).
    async fn wait(
        &self,
        sent: &mut InFlight,
        progress: &mut (impl Stream<Item = ProgressNotificationParam> + Unpin),
        (cancel, left): (&CancellationToken, Duration),
        paced: &mut Paced<'_>,
    ) -> HostResult<Result<ServerResult, ServiceError>> {
        let context = &self.context;
        let mut closed = self.conn.closed.clone();
        let limit = self.timeouts.inactivity;
        // One timer for both limits: it is armed for the nearer deadline
        // that counts and, when it fires, either ends the wait or is armed
        // again (progress only moves `idle_at`, no timer is touched).
        let now = tokio::time::Instant::now();
        let total_at = deadline(now, left);
        let mut idle_at = deadline(now, limit);
        let mut waits = self.conn.waits.subscribe();
        let mut on_user = *waits.borrow_and_update() > 0;
        let next = |on_user: bool, idle_at| {
            if on_user {
                total_at
            } else {
                total_at.min(idle_at)
            }
        };
        let clock = tokio::time::sleep_until(next(on_user, idle_at));
        tokio::pin!(clock);
        let mut watching = true;
        loop {
            tokio::select! {
                biased;
                r = &mut sent.response => return Ok(r),
                Some(p) = progress.next() => {
                    paced.offer(p.into());
                    idle_at = deadline(tokio::time::Instant::now(), limit);
                }
                () = tokio::time::sleep_until(paced.due().unwrap_or_else(tokio::time::Instant::now)),
                    if paced.due().is_some() => paced.flush(),
                changed = waits.changed(), if watching => {
                    watching = changed.is_ok();
                    let now_on_user = *waits.borrow_and_update() > 0;
                    if on_user && !now_on_user {
                        idle_at = deadline(tokio::time::Instant::now(), limit);
                    }
                    on_user = now_on_user;
                    clock.as_mut().reset(next(on_user, idle_at));
                }
                () = &mut clock => {
                    let now = tokio::time::Instant::now();
                    let reason = RequestHandle::<RoleClient>::REQUEST_TIMEOUT_REASON;
                    if !on_user && now >= idle_at {
                        request::cancel_in_background(&self.conn.peer, sent.id.clone(), reason);
                        return Err(request::call_timeout(context, TimeoutKind::Inactivity, limit));
                    }
                    if now >= total_at {
                        request::cancel_in_background(&self.conn.peer, sent.id.clone(), reason);
                        return Ok(Err(ServiceError::Timeout { timeout: left }));
                    }
                    clock.as_mut().reset(next(on_user, idle_at));
                }
                _ = cancel.cancelled() => {
                    // rmcp forgets the request when the notification is sent: a late response is dropped.
                    let reason = "cancelled by the client";
                    request::cancel_in_background(&self.conn.peer, sent.id.clone(), reason);
                    return Err(HostError::new(ErrorCode::Cancelled, format!("{context} was cancelled")));
                }
                reason = closed_reason(&mut closed, Duration::MAX) => {
                    return Err(self.exited(&reason.unwrap_or_default()));
                }
                gone = sent.discarded.notice() => {
                    request::abandon(&self.conn.peer, sent.id.clone());
                    return Err(request::discarded_error(context, gone));
                }
            }
        }
    }

    /// Turns the response into the result, checked against the result
    /// bounds of `limits`, or the error into a [`HostError`]. A final
    /// `CallToolResult` (no `resultType`, or `complete`, which is then left
    /// out as [`mrtr::finished`] does) becomes its text at once and is
    /// measured on it; any other answer (a task handle, an `input_required`
    /// round, another shape) becomes a tree for the call's next step.
    async fn finish(
        &self,
        outcome: Result<ServerResult, ServiceError>,
        limits: &Limits,
    ) -> HostResult<Finished> {
        match outcome {
            Ok(ServerResult::CallToolResult(result))
                if result
                    .result_type
                    .as_ref()
                    .is_none_or(|t| t.as_str() == "complete") =>
            {
                let mut text = JsonText::of(&result)?;
                check_text_bounds(&self.context, &text, limits)?;
                // rmcp writes `resultType` first; were it ever elsewhere, the
                // tree path's `mrtr::finished` takes the marker out instead.
                if result.result_type.is_some()
                    && !text.strip_first_member(r#""resultType":"complete""#)
                {
                    return Ok(Finished::Tree(text.to_value()?));
                }
                Ok(Finished::Text(text))
            }
            Ok(result) => {
                let value = serde_json::to_value(result).map_err(|e| {
                    HostError::new(ErrorCode::Internal, format!("cannot encode result: {e}"))
                })?;
                crate::json::check_bounds(&self.context, &value, limits)?;
                Ok(Finished::Tree(value))
            }
            Err(ServiceError::TransportClosed) => {
                let mut closed = self.conn.closed.clone();
                let reason = closed_reason(&mut closed, REASON_SETTLE)
                    .await
                    .unwrap_or_else(|| "connection closed".to_owned());
                Err(self.exited(&reason))
            }
            Err(_)
                if self
                    .conn
                    .redirect_refused
                    .as_ref()
                    .is_some_and(|f| f.load(std::sync::atomic::Ordering::Acquire)) =>
            {
                Err(HostError::new(
                    ErrorCode::RedirectRefused,
                    format!(
                        "{}: {}",
                        self.context,
                        crate::transport::http::CROSS_ORIGIN_REDIRECT
                    ),
                ))
            }
            Err(e) => Err(self.failure(e)),
        }
    }

    /// Maps an rmcp error; a challenge (401 after a failed refresh, or 403
    /// `insufficient_scope` for a step-up) is recorded on the server.
    fn failure(&self, e: ServiceError) -> HostError {
        // rmcp runs only the absolute cap (the inactivity clock is ours).
        // Its `timeout` is what was left of the cap (a later round, a lazy
        // start before the request): the error names the cap.
        if let ServiceError::Timeout { .. } = e {
            return request::call_timeout(&self.context, TimeoutKind::Total, self.timeouts.total);
        }
        match request::map_service_error(&self.context, e, Some(self.timeouts)) {
            RequestFailure::Failed(e) => e,
            RequestFailure::Auth(header) => {
                self.live.set_challenge(Some(header.clone()));
                self.auth_required(&header)
            }
        }
    }

    /// `auth_required` (-32007) for a challenge, saying whether it asks for
    /// more scopes (step-up) or a new sign-in.
    fn auth_required(&self, header: &str) -> HostError {
        let challenge = self
            .conn
            .endpoint
            .as_ref()
            .map(|base| AuthChallenge::from_header(header, base));
        let step_up = challenge
            .as_ref()
            .is_some_and(|c| c.status == ChallengeStatus::InsufficientScope);
        let scopes = challenge.map(|c| c.scopes()).unwrap_or_default();
        let what = if step_up {
            "needs more scopes"
        } else {
            "needs a new sign-in"
        };
        HostError::new(ErrorCode::AuthRequired, format!("{} {what}", self.context)).with_detail(
            ErrorDetail::Challenge {
                insufficient_scope: step_up,
                required_scopes: scopes,
            },
        )
    }

    fn exited(&self, reason: &str) -> HostError {
        HostError::new(
            ErrorCode::ServerExited,
            format!("{} failed: {reason}", self.context),
        )
    }
}

/// `after` from `from`, or about 30 years on when that overflows (as
/// `tokio::time::sleep` does with a duration too long to add).
fn deadline(from: tokio::time::Instant, after: Duration) -> tokio::time::Instant {
    from.checked_add(after)
        .unwrap_or_else(|| from + Duration::from_secs(86_400 * 365 * 30))
}

/// Waits (up to `within`) for the connection's end reason.
///
/// # Cancel safety
///
/// Cancel safe: it only watches `closed`.
async fn closed_reason(
    closed: &mut tokio::sync::watch::Receiver<Option<String>>,
    within: Duration,
) -> Option<String> {
    let wait = async {
        let reason = closed
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|v| v.clone());
        match reason {
            Some(reason) => Some(reason),
            None => std::future::pending().await,
        }
    };
    tokio::time::timeout(within, wait).await.ok().flatten()
}
