//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, MCP
//! 2026-07-28 "Tasks"): a server may answer `tools/call` with a task handle
//! (`resultType: "task"`) instead of the result. The host then follows the
//! task until it ends: it polls `tasks/get` at the server's
//! `pollIntervalMs` (clamped to [`TASK_POLL_MIN_MS`] ..= [`TASK_POLL_MAX_MS`],
//! [`TASK_POLL_DEFAULT_MS`] without a hint), answers the task's
//! `inputRequests` through the connection's handlers (the same path as MRTR
//! input requests, [`super::mrtr`]: JS handlers and AHP chat input
//! requests) and delivers the answers with `tasks/update`, reports each new
//! status or `statusMessage` as a progress update, and sends `tasks/cancel`
//! once when the caller cancels. Nothing runs while no task is followed:
//! the polling lives in the call's own future.
//!
//! Bounds: each `tasks/get` / `tasks/update` / `tasks/cancel` request is
//! bounded by the call's inactivity timeout; following one task is bounded
//! by [`TASK_MAX_LIFETIME_MS`] (then `timeout`, kind `total`, and
//! `tasks/cancel`); at most [`MAX_TASK_INPUT_REQUESTS`] input requests are
//! answered per task.
//!
//! Outcomes: `completed` → the `CallToolResult` (an `isError` result too);
//! `failed` → `task_failed` (data `{code, data}`: the task's JSON-RPC
//! error); `cancelled` (by the server) → `task_cancelled`; a task the
//! server no longer knows (`tasks/get` answered -32602) → `task_expired`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, CreateTaskResult, GetTaskResult, Task, TaskPayload, TaskStatus,
    TASKS_EXTENSION_ID,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::progress::Progress;
use super::request::{self, RequestFailure};
use super::Session;
use crate::chat::input_publisher::ChatCallInputs;
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult, TimeoutKind};
use crate::limits::{
    Limits, MAX_TASK_INPUT_REQUESTS, TASK_MAX_LIFETIME_MS, TASK_POLL_DEFAULT_MS, TASK_POLL_MAX_MS,
    TASK_POLL_MIN_MS,
};

/// JSON-RPC "Invalid params": a server's answer for an unknown or purged task.
const INVALID_PARAMS: i64 = -32602;

/// Declares the Tasks extension in `capabilities` (no settings: an empty
/// object).
pub fn declare_extension(capabilities: &mut ClientCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(TASKS_EXTENSION_ID.to_owned(), Map::new());
}

/// The per-request `_meta` that declares the Tasks extension on a request
/// (`tools/call`, `tasks/*`) to a 2026-07-28 server: the client
/// capabilities rmcp sends on every request (`client`'s), plus the
/// extension (SEP-2663 "Capability Negotiation": per-request capabilities).
/// `None` at 2025-11-25, which has no SEP-2663 (its experimental core tasks
/// are another wire; nothing is declared there).
pub(super) fn declaring_meta(
    peer: &rmcp::service::Peer<rmcp::service::RoleClient>,
    handler: &super::client::HostClient,
) -> Option<rmcp::model::RequestMetaObject> {
    let modern = peer
        .peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize());
    if !modern {
        return None;
    }
    let mut capabilities = handler.info.capabilities.clone();
    declare_extension(&mut capabilities);
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.set_client_capabilities(capabilities);
    Some(meta)
}

/// Whether a `tools/call` result is a task handle (`resultType: "task"`).
pub fn is_task(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("task")
}

/// Records the tasks a host follows, so a later host can find them
/// (see `crate::host::tasks`). Never given tokens or arguments.
pub trait TaskJournal: Send + Sync {
    /// Task `task` (its seed state) was created and is now followed.
    fn started(&self, task: &Task);
    /// Task `task_id` ended (any outcome) or was given up.
    fn ended(&self, task_id: &str);
    /// Whether a task started and has not ended (a call dropped mid-task,
    /// e.g. by dispose, leaves its task recorded).
    fn outstanding(&self) -> bool;
    /// Whether the call was completed elsewhere (an AHP client cancelled it)
    /// while its task ran.
    fn completed_elsewhere(&self) -> bool {
        false
    }
}

/// What a caller wants done with a task-based answer.
#[derive(Clone, Default)]
pub struct TaskOptions {
    /// Resolve with the task handle (the `CreateTaskResult`) instead of
    /// following the task.
    pub handle: bool,
    /// Where a followed task is recorded.
    pub journal: Option<Arc<dyn TaskJournal>>,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("handle", &self.handle)
            .field("journal", &self.journal.is_some())
            .finish()
    }
}

/// The connection and context a task is followed on.
pub struct Follow<'a> {
    /// `tools/call "<tool>" on <server>`, the start of every message.
    pub context: &'a str,
    /// The server's id (names the server in request errors).
    pub server_id: &'a str,
    /// The ready connection.
    pub conn: &'a Session,
    /// The AHP tool call it runs as (its form elicitations are published).
    pub chat: Option<&'a Arc<ChatCallInputs>>,
    /// Bound of each `tasks/*` request.
    pub request_timeout: Duration,
    /// Result bounds.
    pub limits: &'a Limits,
}

/// Reads the task handle of a `tools/call` answer.
///
/// # Errors
/// `protocol_error` when it is not a valid `CreateTaskResult`.
pub fn created(context: &str, result: Value) -> HostResult<Task> {
    serde_json::from_value::<CreateTaskResult>(result)
        .map(|r| r.task)
        .map_err(|e| {
            HostError::new(
                ErrorCode::ProtocolError,
                format!("{context}: invalid task handle: {e}"),
            )
        })
}

/// Follows task `seed` until it ends (see the module documentation),
/// passing each new status or `statusMessage` to `on_progress` as a
/// [`Progress`] whose `progress` counts the task's updates (1, 2, …) and
/// whose `message` is the `statusMessage` (else the status).
///
/// # Errors
/// `task_failed`, `task_cancelled`, `task_expired`; `cancelled` (the
/// caller's token fired: `tasks/cancel` was sent); `timeout` (kind `total`,
/// [`TASK_MAX_LIFETIME_MS`]); `limit_exceeded` (the result passed the
/// result bounds, or more than [`MAX_TASK_INPUT_REQUESTS`] input
/// requests); those of the `tasks/get` / `tasks/update` requests
/// (`server_exited`, `protocol_error`, `timeout`, …).
pub async fn follow(
    f: &Follow<'_>,
    seed: Task,
    cancel: &CancellationToken,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> HostResult<Value> {
    let lifetime = Duration::from_millis(TASK_MAX_LIFETIME_MS);
    let task_id = seed.task_id.clone();
    let run = poll(f, seed, cancel, on_progress);
    let outcome = tokio::select! {
        outcome = run => outcome,
        () = tokio::time::sleep(lifetime) => {
            Err(request::call_timeout(f.context, TimeoutKind::Total, lifetime))
        }
        () = cancel.cancelled() => Err(HostError::new(
            ErrorCode::Cancelled,
            format!("{} was cancelled", f.context),
        )),
    };
    if let Err(e) = &outcome {
        if matches!(e.code, ErrorCode::Cancelled | ErrorCode::Timeout) {
            send_cancel(f, &task_id).await;
        }
    }
    outcome
}

/// Sends `tasks/cancel` once (its answer only acknowledges the intent; a
/// failure is ignored: the call already failed).
async fn send_cancel(f: &Follow<'_>, task_id: &str) {
    let _ = send(f, "tasks/cancel", json!({ "taskId": task_id })).await;
}

/// One `tasks/*` request, bounded by the call's inactivity timeout.
async fn send(f: &Follow<'_>, method: &str, params: Value) -> HostResult<Value> {
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(f.request_timeout);
    options.meta = declaring_meta(&f.conn.peer, &f.conn.handler);
    let wire = (
        f.conn.discarded.as_ref(),
        f.conn.stream_watch.as_deref(),
        None,
    );
    request::send_bounded(&f.conn.peer, f.server_id, method, params, options, wire)
        .await
        .map_err(|e| match e {
            RequestFailure::Failed(e) => e,
            RequestFailure::Auth(_) => HostError::new(
                ErrorCode::AuthRequired,
                format!("{}: {method} was refused (authorization)", f.context),
            ),
        })
}

/// The polling loop: `tasks/get` until a terminal status.
async fn poll(
    f: &Follow<'_>,
    seed: Task,
    cancel: &CancellationToken,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> HostResult<Value> {
    let task_id = seed.task_id.clone();
    let mut seen = Seen::default();
    seen.report(&seed, on_progress);
    let mut interval = poll_interval(seed.poll_interval_ms);
    let mut answered: HashSet<String> = HashSet::new();
    loop {
        tokio::time::sleep(interval).await;
        let got = send(f, "tasks/get", json!({ "taskId": task_id }))
            .await
            .map_err(|e| expired_or(f, &task_id, e))?;
        let got: GetTaskResult = serde_json::from_value(got).map_err(|e| {
            HostError::new(
                ErrorCode::ProtocolError,
                format!(
                    "{}: invalid tasks/get result for task {task_id:?}: {e}",
                    f.context
                ),
            )
        })?;
        let detailed = got.task;
        seen.report(&detailed.task, on_progress);
        interval = poll_interval(detailed.task.poll_interval_ms);
        let message = detailed.task.status_message.clone();
        match detailed.payload {
            TaskPayload::Working => {}
            TaskPayload::InputRequired { input_requests } => {
                let fresh: Vec<_> = input_requests
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if fresh.is_empty() {
                    continue;
                }
                if answered.len() + fresh.len() > MAX_TASK_INPUT_REQUESTS {
                    return Err(HostError::new(
                        ErrorCode::LimitExceeded,
                        format!(
                            "{}: task {task_id:?} asked for more than {MAX_TASK_INPUT_REQUESTS} \
                             inputs",
                            f.context
                        ),
                    ));
                }
                answered.extend(fresh.iter().map(|(k, _)| k.clone()));
                let answers = answer(f, fresh, cancel).await?;
                let params = json!({ "taskId": task_id, "inputResponses": answers });
                send(f, "tasks/update", params).await?;
                // Look again at once: the server may already have moved on.
                interval = Duration::from_millis(TASK_POLL_MIN_MS);
            }
            TaskPayload::Completed { result } => {
                let result = Value::Object(result);
                crate::json::check_bounds(f.context, &result, f.limits)?;
                return Ok(super::mrtr::finished(result));
            }
            TaskPayload::Failed { error } => return Err(failed(f, &task_id, error, message)),
            TaskPayload::Cancelled => {
                let why = message.map(|m| format!(": {m}")).unwrap_or_default();
                return Err(HostError::new(
                    ErrorCode::TaskCancelled,
                    format!("{}: the server cancelled task {task_id:?}{why}", f.context),
                ));
            }
            _ => {}
        }
    }
}

/// Answers the task's input requests (concurrently) through the
/// connection's handlers, as MRTR input requests are.
async fn answer(
    f: &Follow<'_>,
    requests: Vec<(String, rmcp::model::InputRequest)>,
    cancel: &CancellationToken,
) -> HostResult<Map<String, Value>> {
    let with = (&f.conn.handler, &f.conn.peer);
    let all = futures::future::try_join_all(
        requests
            .into_iter()
            .map(|(key, request)| super::mrtr::fulfil(f.context, with, key, request, f.chat)),
    );
    tokio::select! {
        answers = all => Ok(answers?.into_iter().collect()),
        () = cancel.cancelled() => Err(HostError::new(
            ErrorCode::Cancelled,
            format!("{} was cancelled", f.context),
        )),
    }
}

/// A `tasks/get` error: -32602 (the server no longer knows the task: it
/// expired or was purged) is `task_expired`; anything else stays as it is.
fn expired_or(f: &Follow<'_>, task_id: &str, e: HostError) -> HostError {
    match &e.detail {
        ErrorDetail::JsonRpc { code, .. } if *code == INVALID_PARAMS => HostError::new(
            ErrorCode::TaskExpired,
            format!(
                "{}: the server no longer knows task {task_id:?} (expired or purged): {}",
                f.context, e.message
            ),
        )
        .with_detail(e.detail.clone()),
        _ => e,
    }
}

/// `task_failed` for a `failed` task, with its JSON-RPC error.
fn failed(
    f: &Follow<'_>,
    task_id: &str,
    error: Map<String, Value>,
    status_message: Option<String>,
) -> HostError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let text = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or(status_message)
        .unwrap_or_else(|| "no message".to_owned());
    HostError::new(
        ErrorCode::TaskFailed,
        format!(
            "{}: task {task_id:?} failed: {text} (JSON-RPC error {code})",
            f.context
        ),
    )
    .with_detail(ErrorDetail::JsonRpc {
        code,
        data: error.get("data").cloned(),
    })
}

/// The pause before the next `tasks/get`: the server's hint, clamped.
fn poll_interval(hint: Option<u64>) -> Duration {
    Duration::from_millis(
        hint.unwrap_or(TASK_POLL_DEFAULT_MS)
            .clamp(TASK_POLL_MIN_MS, TASK_POLL_MAX_MS),
    )
}

/// The status updates passed on so far.
#[derive(Default)]
struct Seen {
    count: u32,
    last: Option<(TaskStatus, Option<String>)>,
}

impl Seen {
    /// Passes `task`'s status on when it or its message changed.
    fn report(&mut self, task: &Task, on_progress: &mut (dyn FnMut(Progress) + Send)) {
        let now = (task.status, task.status_message.clone());
        if self.last.as_ref() == Some(&now) {
            return;
        }
        self.count += 1;
        let message = task
            .status_message
            .clone()
            .unwrap_or_else(|| status_name(task.status).to_owned());
        self.last = Some(now);
        on_progress(Progress {
            progress: f64::from(self.count),
            total: None,
            message: Some(message),
        });
    }
}

/// The wire name of a status.
fn status_name(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_interval_honours_the_hint_within_bounds() {
        assert_eq!(
            poll_interval(None),
            Duration::from_millis(TASK_POLL_DEFAULT_MS)
        );
        assert_eq!(
            poll_interval(Some(0)),
            Duration::from_millis(TASK_POLL_MIN_MS)
        );
        assert_eq!(
            poll_interval(Some(u64::MAX)),
            Duration::from_millis(TASK_POLL_MAX_MS)
        );
        assert_eq!(poll_interval(Some(700)), Duration::from_millis(700));
    }

    #[test]
    fn a_task_handle_is_result_type_task_only() {
        assert!(is_task(&json!({"resultType": "task", "taskId": "t"})));
        assert!(!is_task(&json!({"resultType": "complete"})));
        assert!(!is_task(&json!({"content": []})));
    }

    #[test]
    fn the_extension_is_declared_with_no_settings() {
        let mut caps = ClientCapabilities::default();
        declare_extension(&mut caps);
        let json = serde_json::to_value(&caps).unwrap();
        assert_eq!(json["extensions"][TASKS_EXTENSION_ID], json!({}));
    }

    #[test]
    fn each_new_status_or_message_is_one_update() {
        let mut seen = Seen::default();
        let mut got = Vec::new();
        let mut push = |p: Progress| got.push((p.progress, p.message));
        let task = Task::new("t", TaskStatus::Working, "a", "a");
        seen.report(&task, &mut push);
        seen.report(&task, &mut push);
        seen.report(&task.clone().with_status_message("half"), &mut push);
        assert_eq!(
            got,
            [
                (1.0, Some("working".to_owned())),
                (2.0, Some("half".to_owned()))
            ]
        );
    }

    #[test]
    fn a_created_task_is_read_from_its_handle() {
        let handle = json!({"resultType": "task", "taskId": "t1", "status": "working",
            "createdAt": "x", "lastUpdatedAt": "x", "ttlMs": null, "pollIntervalMs": 5});
        let task = created("c", handle).unwrap();
        assert_eq!(
            (task.task_id.as_str(), task.poll_interval_ms),
            ("t1", Some(5))
        );
        let err = created("c", json!({"resultType": "complete"})).unwrap_err();
        assert_eq!(err.code, ErrorCode::ProtocolError);
    }
}
