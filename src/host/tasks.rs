//! Task-based tool calls (Tasks extension `io.modelcontextprotocol/tasks`,
//! SEP-2663) as the host runs them, and tasks that outlive the app: the
//! options of one call (handle or follow; see [`crate::supervisor::task`]
//! for the following itself), the record of the outstanding tasks of AHP
//! tool calls under `dataDir`, and their re-attachment by a later host.
//!
//! The record (`<dataDir>/tasks.json`, mode `0600`, rewritten whole through
//! a temporary file and a rename) holds per task only the task id, the
//! server id, the tool name, the AHP call (chat, turn id, tool call id,
//! display name), when it was recorded and the task's `ttlMs`: never
//! arguments, results or tokens. Only calls that run as AHP tool calls are
//! recorded (a plain `callTool`'s promise does not outlive its host). A task
//! is recorded when the server created it and removed when it ended, when
//! the call gave it up (cancel, error) or when a later host settled it; a
//! host disposed mid-task leaves it recorded and its AHP tool call running.
//!
//! A host made on the same `dataDir` reads the record at creation; when a
//! recorded task's server is added (same id) it follows the task again as
//! soon as the server is `ready` (the readiness is looked at every
//! [`TASK_RESUME_POLL_MS`], only while such a task waits), publishes its
//! status as `chat/toolCallContentChanged` and its inputs as chat input
//! requests, and completes the AHP tool call with the result, or failed:
//! `task_expired` when the server no longer knows the task or its `ttlMs`
//! passed since it was recorded, else the task's error.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{Task, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::limits::{MAX_RECORDED_TASKS, TASK_MAX_LIFETIME_MS, TASK_RESUME_POLL_MS};
use crate::supervisor::chat_input::{ChatCallInputs, ChatInputs};
use crate::supervisor::task::{self, Follow, TaskJournal, TaskOptions};
use crate::supervisor::tool_call::Progress;
use crate::supervisor::{HostShared, ServerHandle};
use crate::toolcall::{self, ChatContext};

/// The file under `dataDir` that records outstanding tasks.
const FILE_NAME: &str = "tasks.json";

/// One outstanding task of an AHP tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    task_id: String,
    server_id: String,
    tool: String,
    chat: String,
    turn_id: String,
    tool_call_id: String,
    display_name: String,
    /// When it was recorded (ms since the Unix epoch).
    recorded_at_ms: u64,
    /// The task's `ttlMs` when created (`None`: unlimited).
    ttl_ms: Option<u64>,
}

/// The file's shape.
#[derive(Default, Serialize, Deserialize)]
struct RecordFile {
    version: u32,
    tasks: Vec<Record>,
}

/// The outstanding tasks of this host's `dataDir` (a leaf lock).
pub(super) struct TaskRecords {
    path: PathBuf,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tasks: Vec<Record>,
    /// Task ids a resumption is under way for.
    resuming: HashSet<String>,
    /// The AHP tool calls (turn id, tool call id) whose task this host
    /// follows now: their chat and what cancels them.
    running: HashMap<(String, String), Running>,
}

/// An AHP tool call whose task is followed: an AHP client's cancel fires
/// `cancel` and sets `completed`.
struct Running {
    chat: String,
    cancel: CancellationToken,
    completed: Arc<AtomicBool>,
}

impl TaskRecords {
    /// Reads `<data_dir>/tasks.json`; a missing file is no tasks, an
    /// unreadable one is no tasks with a `warn` log (target `host.tasks`).
    pub(super) fn load(data_dir: &Path, shared: &HostShared) -> Self {
        let path = data_dir.join(FILE_NAME);
        let tasks = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<RecordFile>(&bytes) {
                Ok(file) => file.tasks,
                Err(e) => {
                    let message = format!("{}: not a task record ({e}); ignored", path.display());
                    shared.log(log(LogLevel::Warn, "host.tasks", None, message));
                    Vec::new()
                }
            },
            Err(_) => Vec::new(),
        };
        Self {
            path,
            inner: Mutex::new(Inner {
                tasks,
                ..Inner::default()
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `record` (false when [`MAX_RECORDED_TASKS`] are recorded).
    fn add(&self, record: Record) -> bool {
        let mut inner = self.lock();
        if inner.tasks.len() >= MAX_RECORDED_TASKS {
            return false;
        }
        inner.tasks.retain(|r| r.task_id != record.task_id);
        inner.tasks.push(record);
        self.save(&inner.tasks);
        true
    }

    /// Removes task `task_id`.
    fn remove(&self, task_id: &str) {
        let mut inner = self.lock();
        let before = inner.tasks.len();
        inner.tasks.retain(|r| r.task_id != task_id);
        inner.resuming.remove(task_id);
        if inner.tasks.len() != before {
            self.save(&inner.tasks);
        }
    }

    /// The recorded tasks of `server_ids` no resumption runs for yet, now
    /// marked as resuming.
    fn take_for(&self, server_ids: &[String]) -> Vec<Record> {
        let mut inner = self.lock();
        let found: Vec<Record> = inner
            .tasks
            .iter()
            .filter(|r| server_ids.contains(&r.server_id) && !inner.resuming.contains(&r.task_id))
            .cloned()
            .collect();
        inner
            .resuming
            .extend(found.iter().map(|r| r.task_id.clone()));
        found
    }

    /// An AHP client's failed `chat/toolCallComplete` for tool call
    /// `tool_call_id` of turn `turn_id`: when this host follows its task,
    /// the call is cancelled (`tasks/cancel` follows) and marked completed,
    /// and its chat is returned; `None` otherwise.
    pub(super) fn cancel_running(&self, turn_id: &str, tool_call_id: &str) -> Option<String> {
        let inner = self.lock();
        let running = inner
            .running
            .get(&(turn_id.to_owned(), tool_call_id.to_owned()))?;
        running.completed.store(true, Ordering::SeqCst);
        running.cancel.cancel();
        Some(running.chat.clone())
    }

    fn set_running(&self, key: (String, String), running: Option<Running>) {
        let mut inner = self.lock();
        match running {
            Some(running) => inner.running.insert(key, running),
            None => inner.running.remove(&key),
        };
    }

    /// Writes the file (under the lock: writes never interleave); a
    /// failure is left for the next write.
    fn save(&self, tasks: &[Record]) {
        let file = RecordFile {
            version: 1,
            tasks: tasks.to_vec(),
        };
        let Ok(bytes) = serde_json::to_vec_pretty(&file) else {
            return;
        };
        let tmp = self.path.with_extension("json.tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        crate::platform::private_file(&mut options);
        let written = options
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()));
        if written.is_ok() {
            let _ = std::fs::rename(&tmp, &self.path);
        }
    }
}

/// The journal of one AHP tool call: records its task while it runs.
struct CallJournal {
    records: Arc<TaskRecords>,
    /// The record, without the task fields.
    template: Record,
    /// The task started and not ended.
    outstanding: Mutex<Option<String>>,
    /// The call's cancellation (the JS caller's, or an AHP client's).
    cancel: CancellationToken,
    /// Set when an AHP client completed (cancelled) the call.
    completed: Arc<AtomicBool>,
}

impl CallJournal {
    fn key(&self) -> (String, String) {
        (
            self.template.turn_id.clone(),
            self.template.tool_call_id.clone(),
        )
    }
}

impl TaskJournal for CallJournal {
    fn started(&self, task: &Task) {
        let record = Record {
            task_id: task.task_id.clone(),
            recorded_at_ms: now_ms(),
            ttl_ms: task.ttl_ms,
            ..self.template.clone()
        };
        if self.records.add(record) {
            *self
                .outstanding
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(task.task_id.clone());
        }
        let running = Running {
            chat: self.template.chat.clone(),
            cancel: self.cancel.clone(),
            completed: self.completed.clone(),
        };
        self.records.set_running(self.key(), Some(running));
    }

    fn ended(&self, task_id: &str) {
        self.outstanding
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.records.set_running(self.key(), None);
        self.records.remove(task_id);
    }

    fn outstanding(&self) -> bool {
        self.outstanding
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    fn completed_elsewhere(&self) -> bool {
        self.completed.load(Ordering::SeqCst)
    }
}

/// Whether the AHP tool call of a call that ended with `result` is not to
/// be completed by it: an AHP client cancelled it (its echo completed it),
/// or the host was disposed while the task was outstanding (left for a
/// later host).
pub(super) fn settled(options: &TaskOptions, result: &HostResult<Value>) -> bool {
    let Some(journal) = options.journal.as_ref() else {
        return false;
    };
    journal.completed_elsewhere()
        || (matches!(result, Err(e) if e.code == ErrorCode::Disposed) && journal.outstanding())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Host {
    /// What a call of `tool` on `server_id` does with a task answer:
    /// `handle` returns the task handle; otherwise the task is followed,
    /// and recorded when the call runs as an AHP tool call (`ctx`). Also
    /// returns the call's cancellation: for an AHP tool call a child of
    /// `cancel` that an AHP client's cancel fires while the task runs.
    pub(super) fn task_options(
        &self,
        handle: bool,
        (server_id, tool): (&str, &str),
        ctx: Option<&ChatContext>,
        (display, cancel): (&str, CancellationToken),
    ) -> (TaskOptions, CancellationToken) {
        let Some(ctx) = ctx.filter(|_| !handle) else {
            let journal = None;
            return (TaskOptions { handle, journal }, cancel);
        };
        let cancel = cancel.child_token();
        let journal = {
            let template = Record {
                task_id: String::new(),
                server_id: server_id.to_owned(),
                tool: tool.to_owned(),
                chat: ctx.chat.clone(),
                turn_id: ctx.turn_id.clone(),
                tool_call_id: ctx.tool_call_id.clone(),
                display_name: display.to_owned(),
                recorded_at_ms: 0,
                ttl_ms: None,
            };
            Arc::new(CallJournal {
                records: self.task_records.clone(),
                template,
                outstanding: Mutex::new(None),
                cancel: cancel.clone(),
                completed: Arc::default(),
            }) as Arc<dyn TaskJournal>
        };
        let journal = Some(journal);
        (TaskOptions { handle, journal }, cancel)
    }

    /// An AHP client's failed `chat/toolCallComplete` for a tool call whose
    /// task this host follows: cancels the call (`tasks/cancel` follows)
    /// and returns its chat (the echo goes there, applied); `None` when no
    /// such task runs.
    pub(super) fn cancel_task_call(&self, turn_id: &str, tool_call_id: &str) -> Option<String> {
        self.task_records.cancel_running(turn_id, tool_call_id)
    }

    /// Follows again the recorded tasks of servers `server_ids` (just
    /// added), each in its own task ended by dispose.
    pub(super) fn resume_tasks(&self, server_ids: &[String]) {
        let found = self.task_records.take_for(server_ids);
        for record in found {
            let Ok(handle) = self.server(&record.server_id) else {
                continue;
            };
            let resume = Resume {
                shared: self.shared.clone(),
                inputs: self.chat_inputs.clone(),
                records: self.task_records.clone(),
                handle,
                record,
            };
            let disposed = self.shared.disposed.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = resume.run() => {}
                    () = disposed.cancelled() => {}
                }
            });
        }
    }
}

/// One recorded task being followed again.
struct Resume {
    shared: Arc<HostShared>,
    inputs: Arc<ChatInputs>,
    records: Arc<TaskRecords>,
    handle: Arc<ServerHandle>,
    record: Record,
}

impl Resume {
    async fn run(self) {
        let r = &self.record;
        let ctx = ChatContext {
            chat: r.chat.clone(),
            turn_id: r.turn_id.clone(),
            tool_call_id: r.tool_call_id.clone(),
            customization_id: r.server_id.clone(),
            meta: None,
        };
        let context = format!("tools/call {:?} on {}", r.tool, r.server_id);
        let inputs = ChatCallInputs::new(self.shared.clone(), self.inputs.clone(), ctx.clone());
        // An AHP client's failed `chat/toolCallComplete` cancels it, as for a call in flight.
        let key = (r.turn_id.clone(), r.tool_call_id.clone());
        let (cancel, completed) = (CancellationToken::new(), Arc::new(AtomicBool::new(false)));
        let running = Running {
            chat: r.chat.clone(),
            cancel: cancel.clone(),
            completed: completed.clone(),
        };
        self.records.set_running(key.clone(), Some(running));
        let result = self.follow(&context, (&ctx, &inputs), &cancel).await;
        self.records.set_running(key, None);
        inputs.end();
        let message = match &result {
            Ok(_) => format!("{context}: re-attached task {:?} completed", r.task_id),
            Err(e) => format!(
                "{context}: re-attached task {:?} failed: {}",
                r.task_id, e.message
            ),
        };
        self.shared.log(log(
            LogLevel::Info,
            "host.tasks",
            Some(&r.server_id),
            message,
        ));
        if !completed.load(Ordering::SeqCst) {
            let action = toolcall::complete_action(&ctx, &r.display_name, &result);
            self.shared.emit_on(&ctx.chat, action);
        }
        self.records.remove(&r.task_id);
    }

    /// Waits for the server's connection (bounded by the task's `ttlMs`
    /// since it was recorded, else [`TASK_MAX_LIFETIME_MS`]), then follows
    /// the task.
    async fn follow(
        &self,
        context: &str,
        (ctx, inputs): (&ChatContext, &Arc<ChatCallInputs>),
        cancel: &CancellationToken,
    ) -> HostResult<Value> {
        let r = &self.record;
        let lifetime = r.ttl_ms.unwrap_or(TASK_MAX_LIFETIME_MS);
        let expires = r.recorded_at_ms.saturating_add(lifetime);
        let expired = || {
            HostError::new(
                ErrorCode::TaskExpired,
                format!(
                    "{context}: task {:?} outlived its ttlMs ({lifetime} ms) before this host \
                     could follow it again",
                    r.task_id
                ),
            )
        };
        let conn = loop {
            if now_ms() >= expires {
                return Err(expired());
            }
            if let Some(conn) = self.handle.live.connection() {
                break conn;
            }
            if cancel.is_cancelled() {
                return Err(HostError::new(
                    ErrorCode::Cancelled,
                    format!("{context} was cancelled"),
                ));
            }
            tokio::time::sleep(Duration::from_millis(TASK_RESUME_POLL_MS)).await;
        };
        let limits = self.shared.limits;
        let follow = Follow {
            context,
            server_id: &r.server_id,
            conn: &conn,
            chat: Some(inputs),
            request_timeout: Duration::from_millis(limits.call_timeout_ms),
            limits: &limits,
        };
        let seed = Task::new(r.task_id.clone(), TaskStatus::Working, "", "");
        let shared = &self.shared;
        let mut on_progress = |p: Progress| {
            let action = toolcall::progress_action(ctx, p.progress, p.total, p.message.as_deref());
            shared.emit_on(&ctx.chat, action);
        };
        task::follow(&follow, seed, cancel, &mut on_progress).await
    }
}
