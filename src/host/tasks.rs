//! Task-based tool calls (Tasks extension `io.modelcontextprotocol/tasks`,
//! SEP-2663) as the host runs them, and tasks that outlive the app: the
//! options of one call (handle or follow; see [`crate::mcp::task`]
//! for the following itself), the record of the outstanding tasks of AHP
//! tool calls under `dataDir`, and their re-attachment by a later host.
//!
//! The record (one file per host instance under `<dataDir>/.tasks/`, mode
//! `0600`, rewritten whole through a new temporary file and a rename, off
//! the JS thread; see [`store`] for the layout, the sharing between hosts
//! on one `dataDir` and the bounds) holds per task only the task id, the
//! server id, the tool name, the AHP call (chat, turn id, tool call id,
//! display name), when it was recorded and the task's `ttlMs`: never
//! arguments, results or tokens. Only calls that run as AHP tool calls are
//! recorded (a plain `callTool`'s promise does not outlive its host). A task
//! is recorded when the server created it and removed when it ended, when
//! the call gave it up (cancel, error) or when a later host settled it; a
//! host disposed mid-task leaves it recorded and its AHP tool call running.
//!
//! A host made on the same `dataDir` adopts the records of hosts no longer
//! running, on a thread of its own started at creation (never on the JS
//! thread; waited for at most `configReadTimeoutMs`); when a
//! recorded task's server is added (same id) it follows the task again as
//! soon as the server is `ready` (the readiness is looked at every
//! [`TASK_RESUME_POLL_MS`], only while such a task waits), publishes its
//! status as `chat/toolCallContentChanged` and its inputs as chat input
//! requests, and completes the AHP tool call with the result, or failed:
//! `task_expired` when the server no longer knows the task or its `ttlMs`
//! passed since it was recorded, else the task's error.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{Task, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::chat::input_publisher::{ChatCallInputs, ChatInputs};
use crate::chat::{self, ChatContext};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::limits::{MAX_RECORDED_TASKS, TASK_MAX_LIFETIME_MS, TASK_RESUME_POLL_MS};
use crate::mcp::task::{self, Follow, TaskJournal, TaskOptions};
use crate::mcp::tool_call::Progress;
use crate::supervisor::{HostShared, ServerHandle};

mod store;

use store::TaskStore;

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
    data_dir: PathBuf,
    shared: Arc<HostShared>,
    /// Set once the loading thread was started (on first use).
    started: AtomicBool,
    inner: Mutex<Inner>,
    /// This host's record file, once opened by the loading thread.
    store: OnceLock<Arc<TaskStore>>,
    /// Set once the loading thread ended (adopted records merged, or failed).
    loaded: tokio::sync::watch::Sender<bool>,
    /// Set by [`TaskRecords::release`] (dispose): nothing is written after it.
    released: AtomicBool,
    /// The generation of the next write (older writes are skipped).
    generation: AtomicU64,
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
    /// No records yet. On first use (a task recorded, or a server added
    /// that a former host's task may belong to) a thread opens this host's
    /// store under `data_dir` and adopts the records of hosts no longer
    /// running (see [`store`]); each problem found is a `warn` log (target
    /// `host.tasks`). A host that never records a task creates no file.
    pub(super) fn load(data_dir: &Path, shared: &Arc<HostShared>) -> Arc<Self> {
        Arc::new(Self {
            data_dir: data_dir.to_path_buf(),
            shared: shared.clone(),
            started: AtomicBool::new(false),
            inner: Mutex::default(),
            store: OnceLock::new(),
            loaded: tokio::sync::watch::Sender::new(false),
            released: AtomicBool::new(false),
            generation: AtomicU64::new(2),
        })
    }

    /// Starts the loading thread, once.
    fn begin(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        let spawned = std::thread::Builder::new()
            .name("ahp-task-records".into())
            .spawn(move || this.open());
        if spawned.is_err() {
            self.loaded.send_replace(true);
        }
    }

    /// The loading thread: opens the store, merges the adopted records.
    fn open(&self) {
        let shared = &self.shared;
        let warn = |message: String| {
            shared
                .publisher()
                .log(log(LogLevel::Warn, "host.tasks", None, message))
        };
        match TaskStore::open(&self.data_dir) {
            Ok(opened) => {
                opened.warnings.into_iter().for_each(warn);
                let store = Arc::new(opened.store);
                let _ = self.store.set(store.clone());
                let mut inner = self.lock();
                let mine = std::mem::replace(&mut inner.tasks, opened.records);
                for record in mine {
                    inner.tasks.retain(|r| r.task_id != record.task_id);
                    inner.tasks.push(record);
                }
                self.save(&inner.tasks);
                let empty = inner.tasks.is_empty();
                drop(inner);
                if self.released.load(Ordering::SeqCst) {
                    store.release(empty);
                }
            }
            Err(why) => warn(format!("task records: {why}; tasks are not recorded")),
        }
        self.loaded.send_replace(true);
    }

    /// Waits (at most `within`) until the records of former hosts were
    /// read. Returns false on timeout.
    async fn wait_loaded(self: &Arc<Self>, within: Duration) -> bool {
        self.begin();
        let mut loaded = self.loaded.subscribe();
        let done = tokio::time::timeout(within, loaded.wait_for(|done| *done)).await;
        matches!(done, Ok(Ok(_)))
    }

    /// Dispose: nothing further is written, and the records are left to
    /// the next host (this host's lock is dropped; with no records left,
    /// its files are removed).
    pub(super) fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
        if let Some(store) = self.store.get() {
            store.release(self.lock().tasks.is_empty());
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `record` (false when [`MAX_RECORDED_TASKS`] are recorded).
    fn add(self: &Arc<Self>, record: Record) -> bool {
        self.begin();
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

    /// Writes `tasks` as this host's file (called under the lock, so the
    /// generations follow the changes), on the blocking pool when a
    /// runtime runs; before the store is open nothing is written (the
    /// loading thread writes once it is).
    fn save(&self, tasks: &[Record]) {
        let Some(store) = self.store.get().cloned() else {
            return;
        };
        let generation = self.generation.fetch_add(1, Ordering::SeqCst);
        let tasks = tasks.to_vec();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || store.save(generation, &tasks));
            }
            Err(_) => store.save(generation, &tasks),
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
pub(super) fn settled<T>(options: &TaskOptions, result: &HostResult<T>) -> bool {
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
        let handles: HashMap<String, (Arc<ServerHandle>, chat::OutputBudget)> = (server_ids.iter())
            .filter_map(|id| {
                let handle = self.server(id).ok()?;
                let budget = self.output_budget(None, &handle);
                Some((id.clone(), (handle, budget)))
            })
            .collect();
        let (shared, inputs) = (self.shared.clone(), self.chat_inputs.clone());
        let records = self.task_records.clone();
        let within = Duration::from_millis(shared.limits().config_read_timeout_ms);
        let (disposed, ended) = (
            self.shared.disposed().clone(),
            self.shared.disposed().clone(),
        );
        let ids = server_ids.to_vec();
        let resume_all = async move {
            if !records.wait_loaded(within).await {
                let message = format!(
                    "the records of former hosts were not read within configReadTimeoutMs \
                     ({} ms); their tasks are not followed again",
                    within.as_millis()
                );
                shared
                    .publisher()
                    .log(log(LogLevel::Warn, "host.tasks", None, message));
                return;
            }
            for record in records.take_for(&ids) {
                let Some((handle, budget)) = handles.get(&record.server_id).cloned() else {
                    continue;
                };
                let resume = Resume {
                    shared: shared.clone(),
                    inputs: inputs.clone(),
                    records: records.clone(),
                    handle,
                    budget,
                    record,
                };
                let disposed = disposed.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = resume.run() => {}
                        () = disposed.cancelled() => {}
                    }
                });
            }
        };
        tokio::spawn(async move {
            tokio::select! {
                () = resume_all => {}
                () = ended.cancelled() => {}
            }
        });
    }
}

/// One recorded task being followed again.
struct Resume {
    shared: Arc<HostShared>,
    inputs: Arc<ChatInputs>,
    records: Arc<TaskRecords>,
    handle: Arc<ServerHandle>,
    /// The server's output budget (a recorded call has none of its own).
    budget: chat::OutputBudget,
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
        let inputs = ChatCallInputs::new(
            self.shared.publisher().clone(),
            self.inputs.clone(),
            ctx.clone(),
        );
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
        self.shared.publisher().log(log(
            LogLevel::Info,
            "host.tasks",
            Some(&r.server_id),
            message,
        ));
        if !completed.load(Ordering::SeqCst) {
            let publisher = self.shared.publisher();
            let call = (&ctx, r.display_name.as_str());
            let server = ("host.tasks", r.server_id.as_str());
            chat::publish_complete(publisher, call, &result, &self.budget, server).await;
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
            if let Some(conn) = self.handle.live.session() {
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
        let limits = self.shared.limits();
        let follow = Follow {
            context,
            server_id: &r.server_id,
            conn: &conn,
            chat: Some(inputs),
            request_timeout: Duration::from_millis(limits.call_timeout_ms),
            limits,
        };
        let seed = Task::new(r.task_id.clone(), TaskStatus::Working, "", "");
        let shared = &self.shared;
        let mut on_progress = |p: Progress| {
            let action = chat::progress_action(ctx, p.progress, p.total, p.message.as_deref());
            shared.publisher().emit_on(&ctx.chat, action);
        };
        task::follow(&follow, seed, cancel, &mut on_progress).await
    }
}
