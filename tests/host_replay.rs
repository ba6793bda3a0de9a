//! End-to-end tests of `ahp_mcp_host::host::Host` against the real MCP server
//! `@modelcontextprotocol/server-everything` (from `node_modules`, run as
//! `node dist/index.js stdio`).
//!
//! The central property: the session state the host reports is exactly what
//! the `ahp` session reducer makes from the envelopes it emitted (every
//! envelope without `rejectionReason`, in `serverSeq` order, which is gapless
//! from 1). A client replaying the stream therefore ends in the host's state.
//!
//! Deterministic by construction: every wait is "until a condition holds, or
//! fail after a generous timeout"; nothing asserts on durations.

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ahp::reducers::apply_action_to_session;
use ahp_mcp_host::error::ErrorCode;
use ahp_mcp_host::events::{HostEvent, LogLevel, LogRecord};
use ahp_mcp_host::host::{AddPlugin, AddServer, CallTool, Host, HostConfig, ToolRef};
use ahp_mcp_host::limits::Limits;
use ahp_mcp_host::session::{empty_session_state, find, Found};
use ahp_types::actions::{ActionEnvelope, ActionOrigin, StateAction};
use ahp_types::state::{Customization, CustomizationLoadState, McpServerState, SessionState};
use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio_util::sync::CancellationToken;

const CHANNEL: &str = "ahp-session:/test";
/// Upper bound for any single wait (server start on a loaded 2-core CI box).
const WAIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn everything_js() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        p.is_file(),
        "{} is missing: run `npm ci` in the crate root",
        p.display()
    );
    p
}

fn everything_config() -> Value {
    json!({"type": "stdio", "command": "node", "args": [everything_js(), "stdio"]})
}

/// A host with a channel sink, its event collector and the temp data dir (kept alive).
fn new_host() -> (Host, Events, tempfile::TempDir) {
    new_host_with(false)
}

/// [`new_host`], with `mcpApps` (the AHP client declared MCP Apps) when asked.
fn new_host_with(mcp_apps: bool) -> (Host, Events, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("tempdir");
    let options = HostConfig {
        session: CHANNEL.into(),
        data_dir: data.path().into(),
        limits: Limits {
            startup_timeout_ms: 60_000,
            ..Limits::default()
        },
        mcp_apps,
        ..HostConfig::default()
    };
    let (tx, rx) = unbounded_channel::<HostEvent>();
    let host = Host::new(options, Arc::new(tx));
    (
        host,
        Events {
            rx,
            actions: Vec::new(),
            logs: Vec::new(),
        },
        data,
    )
}

fn origin(seq: i64) -> ActionOrigin {
    serde_json::from_value(json!({"clientId": "c1", "clientSeq": seq})).expect("ActionOrigin")
}

/// Everything the host sent to its sink, in arrival order.
struct Events {
    rx: UnboundedReceiver<HostEvent>,
    actions: Vec<ActionEnvelope>,
    logs: Vec<LogRecord>,
}

impl Events {
    fn push(&mut self, event: HostEvent) {
        match event {
            HostEvent::Action(e) => self.actions.push(*e),
            HostEvent::EncodedAction(e) => self.actions.push(e.0.envelope()),
            HostEvent::Log(l) => self.logs.push(l),
            // No OAuth server in these tests.
            HostEvent::AuthorizationUrl { .. }
            | HostEvent::ToolsChanged { .. }
            | HostEvent::ListChanged { .. }
            | HostEvent::ResourceUpdated { .. }
            | HostEvent::ChannelMessage(_) => {}
        }
    }

    /// Takes every event already queued.
    fn drain(&mut self) {
        while let Ok(event) = self.rx.try_recv() {
            self.push(event);
        }
    }

    /// Waits for the first envelope with `serverSeq > after_seq` matching `pred`.
    async fn wait_action(
        &mut self,
        after_seq: u64,
        what: &str,
        pred: impl Fn(&ActionEnvelope) -> bool,
    ) -> ActionEnvelope {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            self.drain();
            if let Some(e) = self
                .actions
                .iter()
                .find(|e| e.server_seq > after_seq && pred(e))
            {
                return e.clone();
            }
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(event)) => self.push(event),
                Ok(None) => panic!("sink closed while waiting for {what}"),
                Err(_) => panic!(
                    "timed out waiting for {what}; actions so far:\n{}\nlogs:\n{}",
                    self.dump_actions(),
                    self.dump_logs()
                ),
            }
        }
    }

    fn dump_actions(&self) -> String {
        self.actions
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn dump_logs(&self) -> String {
        self.logs
            .iter()
            .map(|l| serde_json::to_string(l).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The state of MCP server `id` in `state`, if it exists.
fn server_state(state: &SessionState, id: &str) -> Option<McpServerState> {
    match find(state, id) {
        Some(Found::McpServer(s, _)) => Some(s.state.clone()),
        _ => None,
    }
}

fn is_ready(s: &McpServerState) -> bool {
    matches!(s, McpServerState::Ready(_))
}

fn is_stopped(s: &McpServerState) -> bool {
    matches!(s, McpServerState::Stopped(_))
}

/// Polls `host.state()` until server `id` satisfies `pred` (fails after [`WAIT`]).
async fn wait_server(
    host: &Host,
    events: &mut Events,
    id: &str,
    what: &str,
    pred: impl Fn(&McpServerState) -> bool,
) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let state = server_state(&host.state(), id);
        if state.as_ref().is_some_and(&pred) {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            events.drain();
            panic!(
                "timed out waiting for {id} to be {what}; now {state:?}\nactions:\n{}\nlogs:\n{}",
                events.dump_actions(),
                events.dump_logs()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the session lists server tools (the catalogue of a ready
/// server is published right after its `ready` state).
async fn wait_tools_published(host: &Host) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while host.state().server_tools.as_ref().is_none_or(Vec::is_empty) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for session/serverToolsChanged"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Host-originated `session/mcpServerStateChanged` for `id` whose state satisfies `pred`.
fn host_state_change(e: &ActionEnvelope, id: &str, pred: impl Fn(&McpServerState) -> bool) -> bool {
    e.origin.is_none()
        && e.rejection_reason.is_none()
        && matches!(&e.action, StateAction::SessionMcpServerStateChanged(a) if a.id == id && pred(&a.state))
}

/// Replays envelopes through the session reducer from an empty session.
/// With `include_rejected` false (the AHP rule) rejected echoes are skipped.
fn replay<'a>(
    envelopes: impl IntoIterator<Item = &'a ActionEnvelope>,
    include_rejected: bool,
) -> SessionState {
    let mut state = empty_session_state();
    for e in envelopes {
        if include_rejected || e.rejection_reason.is_none() {
            let _ = apply_action_to_session(&mut state, &e.action);
        }
    }
    state
}

/// Drains the envelopes until their replay is the host's state. The host
/// emits an envelope right after it changes its state, so one drain can miss
/// the latest envelope (a catalogue published after `ready`, say): a
/// difference that lasts [`WAIT`] fails with both states printed.
async fn assert_replay_settles(host: &Host, events: &mut Events, what: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        events.drain();
        let replayed = replay(&events.actions, false);
        let state = host.state();
        if replayed == state || tokio::time::Instant::now() >= deadline {
            assert_same_state(what, &replayed, &state);
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn assert_same_state(what: &str, got: &SessionState, expected: &SessionState) {
    if got != expected {
        panic!(
            "{what}: states differ\nreplayed:\n{}\nhost:\n{}",
            serde_json::to_string_pretty(got).unwrap(),
            serde_json::to_string_pretty(expected).unwrap()
        );
    }
}

/// `serverSeq` is exactly 1..=n in arrival order and every envelope is on our channel.
fn assert_gapless(actions: &[ActionEnvelope]) {
    assert!(!actions.is_empty(), "no envelopes");
    let seqs: Vec<u64> = actions.iter().map(|e| e.server_seq).collect();
    let want: Vec<u64> = (1..=actions.len() as u64).collect();
    assert_eq!(
        seqs, want,
        "serverSeq must be gapless from 1, in emission order"
    );
    for e in actions {
        assert_eq!(
            e.channel, CHANNEL,
            "envelope {} on the wrong channel",
            e.server_seq
        );
    }
}

async fn echo(
    host: &Host,
    server_id: &str,
    message: &str,
) -> Result<String, ahp_mcp_host::error::HostError> {
    let args = CallTool {
        arguments: json!({"message": message}).as_object().cloned(),
        ..CallTool::new(ToolRef::Original {
            server_id: server_id.into(),
            tool_name: "echo".into(),
        })
    };
    let result = host.call_tool(args, CancellationToken::new()).await?;
    assert_ne!(
        result.get("isError"),
        Some(&Value::Bool(true)),
        "echo failed: {result}"
    );
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("echo result without text content: {result}"));
    Ok(text.to_owned())
}

fn stop_action(id: &str) -> Value {
    json!({"type": "session/mcpServerStopRequested", "id": id})
}

fn start_action(id: &str) -> Value {
    json!({"type": "session/mcpServerStartRequested", "id": id})
}

/// A host-only action a client may not dispatch. If it were applied it would
/// put `id` in a visible `error` state.
fn forged_state_change(id: &str) -> Value {
    json!({
        "type": "session/mcpServerStateChanged",
        "id": id,
        "state": {"kind": "error", "error": {"errorType": "forged", "message": "set by a client"}},
    })
}

/// Checks a dispatch echo: channel, origin, the action itself, and rejection.
fn assert_echo(e: &ActionEnvelope, sent: &Value, seq: i64, rejected: bool) {
    assert_eq!(e.channel, CHANNEL);
    assert_eq!(
        e.origin,
        Some(origin(seq)),
        "echo of clientSeq {seq} must carry its origin"
    );
    assert_eq!(
        serde_json::to_value(&e.action).unwrap(),
        *sent,
        "echo of clientSeq {seq} must carry the dispatched action"
    );
    match (&e.rejection_reason, rejected) {
        (None, false) => {}
        (Some(reason), true) => assert!(!reason.is_empty(), "empty rejectionReason"),
        (r, _) => panic!("clientSeq {seq}: rejectionReason {r:?}, expected rejected = {rejected}"),
    }
}

/// The checks every test ends with, after `shutdown`: all events drained,
/// gapless `serverSeq`, replay equals the host's final state, every server
/// `stopped`, no process left.
fn assert_final_replay(host: &Host, events: &mut Events, server_ids: &[&str]) {
    // `shutdown` emits each `stopped` before it resolves, so everything is queued now.
    events.drain();
    let final_state = host.state();
    assert_gapless(&events.actions);
    assert_same_state(
        "replay of all non-rejected envelopes vs host.state() after shutdown",
        &replay(&events.actions, false),
        &final_state,
    );
    for id in server_ids {
        let s = server_state(&final_state, id);
        assert!(
            s.as_ref().is_some_and(is_stopped),
            "{id} after shutdown: {s:?}"
        );
        let last = events
            .actions
            .iter()
            .rev()
            .find(|e| matches!(&e.action, StateAction::SessionMcpServerStateChanged(a) if a.id == *id))
            .unwrap_or_else(|| panic!("no state change for {id}"));
        assert!(
            host_state_change(last, id, is_stopped),
            "last state change of {id} must be the host's `stopped`: {last:?}"
        );
    }
    assert_eq!(
        host.process_count(),
        0,
        "process groups left after shutdown"
    );
}

async fn add_everything(host: &Host, name: &str) -> String {
    let opts = AddServer::new(name, everything_config());
    host.add_server(opts).await.expect("add_server")
}

// ---------------------------------------------------------------------------
// a. Replay: client actions, echoes, authoritative results
// ---------------------------------------------------------------------------

/// Step 1: dispatches a stop (clientSeq 1), awaits the host's `stopped` and checks calls are refused.
async fn stop_and_wait_stopped(host: &Host, events: &mut Events, id: &str) {
    // 1: stop. Echo with origin, applied; then the host's authoritative `stopped`.
    let sent1 = stop_action(id);
    let e1 = host
        .dispatch(sent1.clone(), origin(1))
        .expect("dispatch stop");
    assert_echo(&e1, &sent1, 1, false);
    let stopped = events
        .wait_action(
            e1.server_seq,
            "host `stopped` after the stop request",
            |e| host_state_change(e, id, is_stopped),
        )
        .await;
    let no_ready_between = events
        .actions
        .iter()
        .filter(|e| e.server_seq > e1.server_seq && e.server_seq < stopped.server_seq)
        .all(|e| !host_state_change(e, id, is_ready));
    assert!(
        no_ready_between,
        "server reported ready between the stop request and `stopped`:\n{}",
        events.dump_actions()
    );
    let err = echo(host, id, "while stopped")
        .await
        .expect_err("a stopped server must not serve calls");
    assert_eq!(err.code, ErrorCode::ServerNotReady, "{}", err.message);
}

/// Step 2: dispatches a start (clientSeq 2) and awaits the host's `ready`, with only `starting` before it.
async fn start_and_wait_ready(host: &Host, events: &mut Events, id: &str) {
    // 2: start. Echo applied (reducer: `starting`), then the host's `ready`, no error on the way.
    let sent2 = start_action(id);
    let e2 = host
        .dispatch(sent2.clone(), origin(2))
        .expect("dispatch start");
    assert_echo(&e2, &sent2, 2, false);
    let ready = events
        .wait_action(e2.server_seq, "host `ready` after the start request", |e| {
            host_state_change(e, id, is_ready)
        })
        .await;
    let clean_start = events
        .actions
        .iter()
        .filter(|e| e.server_seq > e2.server_seq && e.server_seq < ready.server_seq)
        .all(|e| !matches!(&e.action, StateAction::SessionMcpServerStateChanged(a) if a.id == id && !matches!(a.state, McpServerState::Starting(_))));
    assert!(
        clean_start,
        "only `starting` may precede `ready` after a start request:\n{}",
        events.dump_actions()
    );
    wait_server(host, events, id, "ready", is_ready).await;
}

/// Steps 3 and 4: dispatches a start of an unknown id and a forged host-only
/// action; both are echoed rejected. Returns the second echo.
fn dispatch_two_refusals(host: &Host, id: &str) -> ActionEnvelope {
    let sent3 = start_action("nope");
    let e3 = host
        .dispatch(sent3.clone(), origin(3))
        .expect("dispatch start nope");
    assert_echo(&e3, &sent3, 3, true);
    assert!(
        e3.rejection_reason.as_deref().unwrap().contains("nope"),
        "{:?}",
        e3.rejection_reason
    );
    let sent4 = forged_state_change(id);
    let e4 = host
        .dispatch(sent4.clone(), origin(4))
        .expect("dispatch host-only action");
    assert_echo(&e4, &sent4, 4, true);
    assert!(
        e4.rejection_reason
            .as_deref()
            .unwrap()
            .contains("session/mcpServerStateChanged"),
        "{:?}",
        e4.rejection_reason
    );
    e4
}

/// Checks the envelopes up to `last_seq` replay to `snapshot`, and (control)
/// would put `id` in `error` if the rejected ones were applied.
fn assert_prefix_replays_to(events: &mut Events, last_seq: u64, snapshot: &SessionState, id: &str) {
    // The prefix up to the refusals replays to the snapshot; had the refused
    // host-only action been applied, the server would read `error`.
    events.drain();
    let prefix: Vec<&ActionEnvelope> = events
        .actions
        .iter()
        .filter(|e| e.server_seq <= last_seq)
        .collect();
    assert_same_state(
        "replay up to clientSeq 4 vs snapshot",
        &replay(prefix.iter().copied(), false),
        snapshot,
    );
    let wrongly = replay(prefix.iter().copied(), true);
    assert!(
        matches!(server_state(&wrongly, id), Some(McpServerState::Error(_))),
        "control: applying the refused action must change the state, else the check above proves nothing"
    );
}

/// Checks exactly the four dispatches carry an origin, in order, and no host action is rejected.
fn assert_only_our_dispatches_echoed(events: &Events) {
    // Exactly our four dispatches carry an origin, in order.
    let echoed: Vec<(i64, bool)> = events
        .actions
        .iter()
        .filter_map(|e| {
            e.origin
                .as_ref()
                .map(|o| (o.client_seq, e.rejection_reason.is_some()))
        })
        .collect();
    assert_eq!(echoed, vec![(1, false), (2, false), (3, true), (4, true)]);
    assert!(
        events
            .actions
            .iter()
            .filter(|e| e.origin.is_none())
            .all(|e| e.rejection_reason.is_none()),
        "host actions are never rejected"
    );
}

/// Stop, start, a refused start (unknown id) and a refused host-only action,
/// one after the other, each awaited; then shutdown and replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_envelopes_reproduce_host_state_across_client_stop_start_and_refusals() {
    let (host, mut events, _data) = new_host();
    let id = add_everything(&host, "everything").await;
    assert_eq!(id, "everything");
    wait_server(&host, &mut events, &id, "ready", is_ready).await;

    assert_eq!(
        echo(&host, &id, "hi").await.expect("echo while ready"),
        "Echo: hi"
    );

    stop_and_wait_stopped(&host, &mut events, &id).await;
    start_and_wait_ready(&host, &mut events, &id).await;

    // 3 and 4: refused while the server is ready and idle: echoed with
    // rejectionReason, state untouched. Idle once its tools are published
    // too (`session/serverToolsChanged` follows `ready`).
    wait_tools_published(&host).await;
    let before = host.state();
    let e4 = dispatch_two_refusals(&host, &id);
    let after = host.state();
    assert_same_state(
        "host.state() across two refused dispatches",
        &after,
        &before,
    );
    assert!(server_state(&after, &id).as_ref().is_some_and(is_ready));

    // Still the same, ready server.
    wait_server(&host, &mut events, &id, "ready", is_ready).await;
    assert_eq!(
        echo(&host, &id, "again").await.expect("echo after restart"),
        "Echo: again"
    );

    assert_prefix_replays_to(&mut events, e4.server_seq, &after, &id);

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &[id.as_str()]);
    assert_only_our_dispatches_echoed(&events);
}

#[path = "host_replay/plugins.rs"]
mod plugins;
