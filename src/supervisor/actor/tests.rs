//! The actor driven through a fake [`Connector`]: no processes, no network.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ahp_types::actions::{SessionCustomizationUpdatedAction, StateAction};
use ahp_types::state::{Customization, McpServerState};
use rmcp::model::ClientConfig;
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::super::connector::{BoxFuture, Connector, Discovered, ServerConnection};
use super::super::{Command, Credentials, HostShared, ServerHandle};
use crate::auth::store::MemorySecretStore;
use crate::auth::AuthChallenge;
use crate::config::launch::EnvPolicy;
use crate::config::HttpConfig;
use crate::error::{ErrorCode, HostError};
use crate::events::{HostEvent, LogLevel};
use crate::limits::Limits;
use crate::mcp::client::Notice;
use crate::mcp::connect::HttpAuth;
use crate::mcp::request::RequestFailure;
use crate::mcp::{Opener, OpenerParts, ServerSpec, ServerTasks, Session, TransportSpec};
use crate::publisher::{Publishing, SessionPublisher};
use crate::session::{mcp_server_entry, SessionStore};
use crate::transport::http::BearerCell;

mod apps;
mod fake;
mod relist;

use fake::*;

const ID: &str = "srv";

/// A host with server `srv` (an HTTP entry in `starting`) and its event stream.
fn host(limits: Limits) -> (Arc<HostShared>, mpsc::UnboundedReceiver<HostEvent>) {
    let (sink, events) = mpsc::unbounded_channel();
    (host_with(limits, Arc::new(sink), false), events)
}

/// [`host`] with the given sink and `mcp_apps` setting.
fn host_with(
    limits: Limits,
    sink: Arc<dyn crate::events::EventSink>,
    mcp_apps: bool,
) -> Arc<HostShared> {
    let publishing = Publishing {
        server_tools: false,
        mcp_apps,
    };
    let store = SessionStore::new("ahp-session:/test");
    let opener = Opener::new(OpenerParts {
        client_info: ClientConfig::default(),
        limits,
        publisher: Arc::new(SessionPublisher::new(store, sink, publishing)),
        requests: None,
        header_provider: None,
        network: Arc::default(),
        eras: Default::default(),
        tool_cache: Default::default(),
        base_env: Vec::new(),
        env_policy: EnvPolicy::AllowList,
    });
    let credentials = Credentials::new(Arc::new(MemorySecretStore::default()));
    let shared = Arc::new(HostShared::new(opener, credentials));
    let starting = McpServerState::Starting(Default::default());
    let entry = mcp_server_entry(ID, "https://mcp.example.test/mcp", ID, None, starting);
    let customization = Customization::McpServer(Box::new(entry));
    shared
        .publisher()
        .emit(StateAction::SessionCustomizationUpdated(Box::new(
            SessionCustomizationUpdatedAction { customization },
        )));
    shared
}

fn spawn(shared: &Arc<HostShared>, fake: &Arc<Fake>) -> ServerHandle {
    let transport = TransportSpec::StreamableHttp(HttpConfig {
        url: url::Url::parse("https://mcp.example.test/mcp").unwrap_or_else(|e| panic!("{e}")),
        headers: BTreeMap::new(),
        transport: Default::default(),
    });
    let spec = ServerSpec {
        id: ID.to_owned(),
        transport,
        startup_timeout: Duration::from_secs(5),
        oauth_client: None,
        protocol: Default::default(),
        secret_values: Vec::new(),
        tool_filter: Default::default(),
        call_limits: Default::default(),
        start: Default::default(),
        sandbox: None,
    };
    ServerHandle::start_with(shared.clone(), spec, fake.clone(), super::Begin::Start)
}

/// The next `mcpServerStateChanged` state's kind (`ready`, `error`, …),
/// failing after 10 s; log messages seen on the way are collected.
async fn next_state(
    events: &mut mpsc::UnboundedReceiver<HostEvent>,
    logs: &mut Vec<String>,
) -> McpServerState {
    let wait = async {
        while let Some(event) = events.recv().await {
            match event {
                HostEvent::Action(envelope) => {
                    if let StateAction::SessionMcpServerStateChanged(a) = envelope.action {
                        return a.state;
                    }
                }
                HostEvent::Log(record) if record.level != LogLevel::Debug => {
                    logs.push(record.message)
                }
                _ => {}
            }
        }
        panic!("the event stream ended")
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no state change within 10 s"))
}

fn kind(state: &McpServerState) -> &'static str {
    match state {
        McpServerState::Starting(_) => "starting",
        McpServerState::Ready(_) => "ready",
        McpServerState::AuthRequired(_) => "authRequired",
        McpServerState::Error(_) => "error",
        McpServerState::Stopped(_) => "stopped",
        _ => "other",
    }
}

async fn kinds(events: &mut mpsc::UnboundedReceiver<HostEvent>, n: usize) -> Vec<&'static str> {
    let mut logs = Vec::new();
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(kind(&next_state(events, &mut logs).await));
    }
    out
}

/// A host whose server `srv` (one fake attempt, which succeeds) is `ready`.
async fn ready_server() -> (
    Arc<HostShared>,
    mpsc::UnboundedReceiver<HostEvent>,
    Arc<Fake>,
    ServerHandle,
) {
    let (shared, mut events) = host(Limits::default());
    let fake = Fake::new([Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    (shared, events, fake, handle)
}

#[tokio::test]
async fn starts_and_becomes_ready_without_repeating_starting() {
    let (shared, _events, fake, handle) = ready_server().await;
    assert_eq!(fake.auths(), ["none"]);
    assert_eq!(fake.listings.load(Ordering::SeqCst), 1);
    let tools = shared
        .publisher()
        .catalogue()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .entries()
        .len();
    assert_eq!(tools, 1, "the listed tool is in the catalogue");
    handle.shutdown().await;
}

#[tokio::test]
async fn a_crash_after_ready_is_an_error_then_starting_again_after_the_backoff() {
    let limits = Limits {
        restart_backoff_ms: 100,
        ..Limits::default()
    };
    let (shared, mut events) = host(limits);
    let fake = Fake::new([Attempt::Ready, Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    let _ = fake
        .conn(0)
        .crash
        .send(Some("exited with code 1".to_owned()));
    let mut logs = Vec::new();
    let McpServerState::Error(error) = next_state(&mut events, &mut logs).await else {
        panic!("not an error state")
    };
    assert_eq!(error.error.error_type, "server_exited");
    assert_eq!(error.error.message, "server exited with code 1");
    assert_eq!(*lock(&fake.conn(0).closed), Some("discarded"));
    let started = tokio::time::Instant::now();
    assert_eq!(kind(&next_state(&mut events, &mut logs).await), "starting");
    assert!(
        started.elapsed() >= Duration::from_millis(100),
        "restarted before the backoff"
    );
    assert!(
        logs.iter()
            .any(|l| l == "restarting in 100 ms (restart 1 of 3)"),
        "{logs:?}"
    );
    assert_eq!(kinds(&mut events, 1).await, ["ready"]);
    handle.shutdown().await;
}

#[tokio::test]
async fn stop_while_starting_abandons_the_attempt_and_stops() {
    let (shared, mut events) = host(Limits::default());
    let fake = Fake::new([Attempt::Hang]);
    let handle = spawn(&shared, &fake);
    let attempting = async {
        while fake.auths().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), attempting)
        .await
        .unwrap_or_else(|_| panic!("no attempt"));
    handle.send(Command::Stop);
    assert_eq!(kinds(&mut events, 1).await, ["stopped"]);
    assert_eq!(
        fake.abandoned.load(Ordering::SeqCst),
        1,
        "the attempt is dropped"
    );
    handle.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_acks_and_every_task_ends() {
    let (_shared, mut events, fake, handle) = ready_server().await;
    handle.shutdown().await;
    assert_eq!(*lock(&fake.conn(0).closed), Some("closed"));
    assert_eq!(kinds(&mut events, 1).await, ["stopped"]);
    tokio::time::timeout(Duration::from_secs(5), handle.tasks_ended())
        .await
        .unwrap_or_else(|_| panic!("tasks still running after shutdown"));
}

#[tokio::test]
async fn dispose_ends_the_actor_and_its_tasks() {
    let (shared, _events, fake, handle) = ready_server().await;
    shared.disposed().cancel();
    tokio::time::timeout(Duration::from_secs(5), handle.tasks_ended())
        .await
        .unwrap_or_else(|_| panic!("tasks still running after dispose"));
    assert_eq!(
        *lock(&fake.conn(0).closed),
        None,
        "dispose does not close gracefully"
    );
}

#[tokio::test]
async fn authenticate_while_not_waiting_is_refused() {
    let (_shared, _events, _fake, handle) = ready_server().await;
    let (reply, answer) = oneshot::channel();
    handle.send(Command::Authenticate {
        token: "tok".to_owned(),
        reply,
    });
    let refused = answer.await.unwrap_or_else(|e| panic!("{e}")).err();
    let refused = refused.unwrap_or_else(|| panic!("accepted"));
    assert_eq!(refused.code, ErrorCode::InvalidParams);
    assert_eq!(refused.detail.data(), Some(json!({ "code": -32602 })));
    handle.shutdown().await;
}

#[tokio::test]
async fn authenticate_while_waiting_retries_quietly_with_the_token() {
    let (shared, mut events) = host(Limits::default());
    let fake = Fake::new([Attempt::Challenge, Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["authRequired"]);
    let (reply, answer) = oneshot::channel();
    handle.send(Command::Authenticate {
        token: "tok".to_owned(),
        reply,
    });
    assert_eq!(
        kinds(&mut events, 1).await,
        ["ready"],
        "no starting in between"
    );
    assert_eq!(answer.await.unwrap_or_else(|e| panic!("{e}")), Ok(()));
    assert_eq!(fake.auths(), ["none", "bearer tok"]);
    handle.shutdown().await;
}

#[tokio::test]
async fn a_step_up_token_is_written_by_the_actor() {
    let (_shared, mut events, fake, handle) = ready_server().await;
    handle.step_up_token("stepped".to_owned()).await;
    let cell = fake.conn(0).bearer;
    assert_eq!(
        *cell.read().unwrap_or_else(PoisonError::into_inner),
        Some("stepped".to_owned())
    );
    // Reconnects use it: a start reconnects with the step-up token.
    lock(&fake.script).push_back(Attempt::Ready);
    handle.send(Command::Start);
    assert_eq!(kinds(&mut events, 2).await, ["starting", "ready"]);
    assert_eq!(fake.auths(), ["none", "bearer stepped"]);
    handle.shutdown().await;
}

#[tokio::test]
async fn a_failed_sign_in_is_described_only_while_auth_required() {
    let (shared, mut events) = host(Limits::default());
    let fake = Fake::new([Attempt::Challenge, Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["authRequired"]);
    handle.auth_failed("access_denied".to_owned()).await;
    let Some(McpServerState::AuthRequired(shown)) = server_state(&shared, ID) else {
        panic!("not authRequired")
    };
    assert_eq!(shown.description.as_deref(), Some("access_denied"));
    handle.send(Command::Authenticate {
        token: "tok".to_owned(),
        reply: oneshot::channel().0,
    });
    assert_eq!(kinds(&mut events, 2).await, ["authRequired", "ready"]);
    handle.auth_failed("too late".to_owned()).await;
    assert_eq!(server_state(&shared, ID).as_ref().map(kind), Some("ready"));
    handle.shutdown().await;
}

#[tokio::test]
async fn a_failed_start_stays_in_error_until_started() {
    let (shared, mut events) = host(Limits::default());
    let refused = HostError::new(ErrorCode::ConnectFailed, "connect failed: refused");
    let fake = Fake::new([Attempt::Fail(refused), Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["error"]);
    handle.send(Command::Start);
    assert_eq!(kinds(&mut events, 2).await, ["starting", "ready"]);
    handle.shutdown().await;
}

#[tokio::test]
async fn wakes_for_the_same_shown_state_make_one_start_and_stale_ones_none() {
    let (shared, mut events) = host(Limits::default());
    let refused = HostError::new(ErrorCode::ConnectFailed, "connect failed: refused");
    let fake = Fake::new([Attempt::Fail(refused), Attempt::Ready]);
    let handle = spawn(&shared, &fake);
    assert_eq!(kinds(&mut events, 1).await, ["error"]);
    let seen = handle.live.activity().shown_count();
    // Concurrent calls that read the same failed state, and one that read
    // an older one.
    for wake in [seen, seen - 1, seen, seen] {
        handle.send(Command::Wake { seen: wake });
    }
    assert_eq!(kinds(&mut events, 2).await, ["starting", "ready"]);
    // Read before the start: stale now, not a restart.
    handle.send(Command::Wake { seen });
    handle.send(Command::Stop);
    assert_eq!(kinds(&mut events, 1).await, ["stopped"]);
    assert_eq!(fake.auths().len(), 2, "one attempt after the failed one");
    handle.shutdown().await;
}

#[tokio::test]
async fn list_changed_relists_after_the_debounce() {
    let (_shared, _events, fake, handle) = ready_server().await;
    let notices = fake.conn(0).notices;
    let _ = notices.send(Notice::ToolsChanged);
    let _ = notices.send(Notice::ToolsChanged);
    let relisted = async {
        while fake.listings.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), relisted)
        .await
        .unwrap_or_else(|_| panic!("no relist"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        fake.listings.load(Ordering::SeqCst),
        2,
        "two notices, one relist"
    );
    handle.shutdown().await;
}

#[tokio::test]
async fn resources_list_changed_relists_no_tools() {
    let (_shared, _events, fake, handle) = ready_server().await;
    let notices = fake.conn(0).notices;
    let _ = notices.send(Notice::ResourcesChanged);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        fake.listings.load(Ordering::SeqCst),
        1,
        "resources/list_changed (no skills declared) re-lists no tools"
    );
    let _ = notices.send(Notice::ToolsChanged);
    listed(&fake, 2).await;
    handle.shutdown().await;
}

/// Waits until the fake listed `n` times (failing after 10 s).
async fn listed(fake: &Fake, n: usize) {
    let wait = async {
        while fake.listings.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("not listed {n} times"));
}

#[tokio::test]
async fn a_lone_list_changed_relists_and_a_burst_right_after_once_more() {
    let (_shared, _events, fake, handle) = ready_server().await;
    let notices = fake.conn(0).notices;
    let _ = notices.send(Notice::ToolsChanged);
    listed(&fake, 2).await;
    let _ = notices.send(Notice::ToolsChanged);
    let _ = notices.send(Notice::ToolsChanged);
    listed(&fake, 3).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let n = fake.listings.load(Ordering::SeqCst);
    assert_eq!(n, 3, "three notices, two re-lists");
    handle.shutdown().await;
}

#[test]
fn relists_come_in_a_burst_of_four_then_once_per_interval() {
    let i = Duration::from_millis(100);
    let window = i * 3;
    let t = |ms: u64| Duration::from_millis(ms);
    // Quiet (never re-listed): at once.
    assert_eq!(
        super::waiting::relist_time(None, None, t(5_000), window),
        t(5_000)
    );
    // Notices every 20 ms, each re-listed when due: four at once, then paced.
    let mut tat = None;
    let mut starts = Vec::new();
    let mut now = t(5_000);
    for _ in 0..7 {
        let at = super::waiting::relist_time(None, tat, now, window);
        starts.push(at.as_millis());
        tat = Some(super::waiting::relist_credit(tat, at, i));
        now = at + t(20);
    }
    assert_eq!(starts, [5_000, 5_020, 5_040, 5_060, 5_100, 5_200, 5_300]);
    // After a quiet second the credit is back: at once again.
    assert_eq!(
        super::waiting::relist_time(None, tat, t(6_400), window),
        t(6_400)
    );
    // One already scheduled is kept, never pushed back.
    assert_eq!(
        super::waiting::relist_time(Some(t(5_070)), tat, t(5_060), window),
        t(5_070)
    );
}

/// The current state of MCP server `id` in the session.
fn server_state(shared: &HostShared, id: &str) -> Option<McpServerState> {
    shared.publisher().read_state(|state| {
        crate::session::mcp_servers(state)
            .into_iter()
            .find(|s| s.id == id)
            .map(|s| s.state.clone())
    })
}

/// Issue 9: a crash ends the chat tool calls paused for authentication on
/// the server in the same step, before the state changes: input-needed
/// entry removed, call completed as failed (`server_exited`), waiter woken.
#[tokio::test]
async fn a_crash_ends_the_paused_tool_calls_before_the_state_changes() {
    use crate::auth::step_up::{AuthWaitEnd, CallKey, Leaving};
    let (shared, mut events, fake, handle) = ready_server().await;
    let key = CallKey {
        chat: "ahp-chat:/c".into(),
        turn_id: "turn-1".into(),
        tool_call_id: "tc-1".into(),
    };
    let resource = serde_json::from_value(json!({"resource": "https://mcp.example.test/mcp"}))
        .unwrap_or_else(|e| panic!("{e}"));
    let wait = shared
        .step_up()
        .register(key, (ID, "Admin"), resource, Vec::new());
    let _ = fake
        .conn(0)
        .crash
        .send(Some("exited with code 1".to_owned()));
    let never = CancellationToken::new();
    let end = tokio::time::timeout(Duration::from_secs(10), wait.wait(&never));
    assert_eq!(end.await.ok(), Some(AuthWaitEnd::Ended(Leaving::Crashed)));
    let mut seen = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
        let HostEvent::Action(envelope) = event else {
            continue;
        };
        let action = serde_json::to_value(&envelope.action).unwrap_or_default();
        let what = match &envelope.action {
            StateAction::ChatToolCallComplete(_) => {
                format!("complete {}", action["result"]["error"]["code"])
            }
            StateAction::SessionMcpServerStateChanged(a) => kind(&a.state).to_owned(),
            _ => action["type"].as_str().unwrap_or_default().to_owned(),
        };
        seen.push(what);
        if seen.last().map(String::as_str) == Some("error") {
            break;
        }
    }
    assert_eq!(
        seen,
        [
            "session/inputNeededRemoved",
            "complete \"server_exited\"",
            "error"
        ]
    );
    handle.shutdown().await;
}

/// An actor waiting for its first call (a lazy server's) holds only its
/// own fields: the large states (a ready connection, a close, a
/// discovery, a re-list, one step) are boxed while in use, so 100 lazy
/// servers do not keep 100 copies of the largest one. The bound has room
/// for an unoptimized build (`cargo test`'s profile).
#[test]
fn an_idle_actor_task_is_small() {
    let (shared, _events) = host(Limits::default());
    let fake = Fake::new([Attempt::Ready]);
    let spec = ServerSpec {
        id: ID.to_owned(),
        transport: TransportSpec::StreamableHttp(HttpConfig {
            url: url::Url::parse("https://mcp.example.test/mcp").unwrap_or_else(|e| panic!("{e}")),
            headers: BTreeMap::new(),
            transport: Default::default(),
        }),
        startup_timeout: Duration::from_secs(5),
        oauth_client: None,
        protocol: Default::default(),
        secret_values: Vec::new(),
        tool_filter: Default::default(),
        call_limits: Default::default(),
        start: Default::default(),
        sandbox: None,
    };
    let live = Arc::new(crate::mcp::ServerLive::default());
    let tasks = ServerTasks {
        tracker: tokio_util::task::TaskTracker::new(),
        cancel: CancellationToken::new(),
        log_level: live.log_level().clone(),
    };
    let (_commands, rx) = mpsc::unbounded_channel();
    let actor = super::Actor::new(shared, Arc::new(spec), live, fake, rx, tasks);
    let task = super::run(actor);
    let bytes = std::mem::size_of_val(&task);
    assert!(bytes <= 4096, "an idle actor's task is {bytes} bytes");
}
