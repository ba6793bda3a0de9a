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

    // 1: stop. Echo with origin, applied; then the host's authoritative `stopped`.
    let sent1 = stop_action(&id);
    let e1 = host
        .dispatch(sent1.clone(), origin(1))
        .expect("dispatch stop");
    assert_echo(&e1, &sent1, 1, false);
    let stopped = events
        .wait_action(
            e1.server_seq,
            "host `stopped` after the stop request",
            |e| host_state_change(e, &id, is_stopped),
        )
        .await;
    let no_ready_between = events
        .actions
        .iter()
        .filter(|e| e.server_seq > e1.server_seq && e.server_seq < stopped.server_seq)
        .all(|e| !host_state_change(e, &id, is_ready));
    assert!(
        no_ready_between,
        "server reported ready between the stop request and `stopped`:\n{}",
        events.dump_actions()
    );
    let err = echo(&host, &id, "while stopped")
        .await
        .expect_err("a stopped server must not serve calls");
    assert_eq!(err.code, ErrorCode::ServerNotReady, "{}", err.message);

    // 2: start. Echo applied (reducer: `starting`), then the host's `ready`, no error on the way.
    let sent2 = start_action(&id);
    let e2 = host
        .dispatch(sent2.clone(), origin(2))
        .expect("dispatch start");
    assert_echo(&e2, &sent2, 2, false);
    let ready = events
        .wait_action(e2.server_seq, "host `ready` after the start request", |e| {
            host_state_change(e, &id, is_ready)
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
    wait_server(&host, &mut events, &id, "ready", is_ready).await;

    // 3 and 4: refused while the server is ready and idle: echoed with
    // rejectionReason, state untouched. Idle once its tools are published
    // too (`session/serverToolsChanged` follows `ready`).
    wait_tools_published(&host).await;
    let before = host.state();
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
    let sent4 = forged_state_change(&id);
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

    // The prefix up to the refusals replays to the snapshot; had the refused
    // host-only action been applied, the server would read `error`.
    events.drain();
    let prefix: Vec<&ActionEnvelope> = events
        .actions
        .iter()
        .filter(|e| e.server_seq <= e4.server_seq)
        .collect();
    assert_same_state(
        "replay up to clientSeq 4 vs snapshot",
        &replay(prefix.iter().copied(), false),
        &after,
    );
    let wrongly = replay(prefix.iter().copied(), true);
    assert!(
        matches!(server_state(&wrongly, &id), Some(McpServerState::Error(_))),
        "control: applying the refused action must change the state, else the check above proves nothing"
    );

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &[id.as_str()]);

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

/// The same four dispatches back to back, without waiting in between: the
/// stop still ends in the host's `stopped`, the start in a later `ready`,
/// and the replay still matches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_to_back_client_actions_still_replay_to_host_state() {
    let (host, mut events, _data) = new_host();
    let id = add_everything(&host, "everything").await;
    wait_server(&host, &mut events, &id, "ready", is_ready).await;
    assert_eq!(echo(&host, &id, "hi").await.expect("echo"), "Echo: hi");

    let sent = [
        stop_action(&id),
        start_action(&id),
        start_action("nope"),
        forged_state_change(&id),
    ];
    let echoes: Vec<ActionEnvelope> = sent
        .iter()
        .enumerate()
        .map(|(i, a)| {
            host.dispatch(a.clone(), origin(i as i64 + 1))
                .expect("dispatch")
        })
        .collect();
    for (i, (e, a)) in echoes.iter().zip(&sent).enumerate() {
        assert_echo(e, a, i as i64 + 1, i >= 2);
    }

    let stopped = events
        .wait_action(
            echoes[0].server_seq,
            "host `stopped` after the stop request",
            |e| host_state_change(e, &id, is_stopped),
        )
        .await;
    let ready = events
        .wait_action(
            stopped.server_seq.max(echoes[1].server_seq),
            "host `ready` after the start request",
            |e| host_state_change(e, &id, is_ready),
        )
        .await;
    assert!(ready.server_seq > echoes[1].server_seq);
    wait_server(&host, &mut events, &id, "ready", is_ready).await;
    assert_eq!(
        echo(&host, &id, "again").await.expect("echo after restart"),
        "Echo: again"
    );

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &[id.as_str()]);
}

// ---------------------------------------------------------------------------
// b. Sibling isolation inside one plugin
// ---------------------------------------------------------------------------

/// One valid stdio entry and one with an unknown field: the plugin loads
/// `degraded` naming the bad entry, the bad entry gets no child, and the
/// valid sibling starts and serves calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_sibling_degrades_plugin_but_valid_server_reaches_ready() {
    let (host, mut events, _data) = new_host();
    let plugin = tempfile::tempdir().expect("plugin dir");
    let mcp = json!({
        "mcpServers": {
            "good": everything_config(),
            "bad": {"type": "stdio", "command": "node", "args": ["x.js"], "timeout": 5},
        }
    });
    std::fs::write(
        plugin.path().join("mcp.json"),
        serde_json::to_string_pretty(&mcp).unwrap(),
    )
    .unwrap();

    let opts = AddPlugin {
        name: Some("plug".into()),
        ..AddPlugin::new(plugin.path())
    };
    let added = host.add_plugin(opts).await.expect("add_plugin");
    assert_eq!(added.id, "plug");
    assert_eq!(
        added.servers,
        vec!["plug/good".to_owned()],
        "only the valid entry is started"
    );
    let message = match &added.load {
        CustomizationLoadState::Degraded(d) => d.message.clone(),
        other => panic!("plugin load must be degraded, got {other:?}"),
    };
    assert!(
        message.contains("server \"bad\""),
        "degraded message must name the bad server: {message}"
    );
    assert!(
        message.contains("\"timeout\""),
        "degraded message must name the bad field: {message}"
    );
    assert!(
        !message.contains("\"good\""),
        "degraded message must not blame the valid sibling: {message}"
    );

    wait_server(&host, &mut events, "plug/good", "ready", is_ready).await;

    // The published plugin matches what add_plugin returned.
    let state = host.state();
    let plug = state
        .customizations
        .iter()
        .flatten()
        .find_map(|c| match c {
            Customization::Plugin(p) if p.id == "plug" => Some(p.clone()),
            _ => None,
        })
        .expect("plugin customization");
    assert_eq!(plug.load.as_ref(), Some(&added.load));
    let child_ids: Vec<String> = plug
        .children
        .iter()
        .flatten()
        .map(|c| {
            serde_json::to_value(c).unwrap()["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(child_ids, vec!["plug/good".to_owned()]);
    assert!(
        server_state(&state, "plug/bad").is_none(),
        "an invalid entry must not become a server"
    );

    events.drain();
    assert!(
        events
            .logs
            .iter()
            .any(|l| l.level == LogLevel::Warn && l.message.contains("\"bad\"")),
        "the skipped entry must be logged as a warning:\n{}",
        events.dump_logs()
    );

    assert_eq!(
        echo(&host, "plug/good", "sibling")
            .await
            .expect("echo on the valid sibling"),
        "Echo: sibling"
    );
    let tools = host.list_tools();
    assert!(
        tools
            .iter()
            .any(|t| t["customizationId"] == "plug/good" && t["toolName"] == "echo"),
        "echo of plug/good missing from list_tools: {tools:?}"
    );

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &["plug/good"]);
}

// ---------------------------------------------------------------------------
// Known host bug (see the report): kept runnable with `--ignored`
// ---------------------------------------------------------------------------

/// When `PLUGIN_DATA` cannot be created (here `dataDir` is a regular file),
/// MCP is disabled for that plugin only: `add_plugin` resolves with load
/// `error` naming PLUGIN_DATA, the published plugin is not left `loading`,
/// no server is started, and the plugin can be removed again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unwritable_plugin_data_ends_in_load_error_not_loading() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let not_a_dir = scratch.path().join("data-file");
    std::fs::write(&not_a_dir, b"not a directory").unwrap();
    let options = HostConfig {
        session: CHANNEL.into(),
        data_dir: not_a_dir,
        ..HostConfig::default()
    };
    let (tx, rx) = unbounded_channel::<HostEvent>();
    let host = Host::new(options, Arc::new(tx));
    let mut events = Events {
        rx,
        actions: Vec::new(),
        logs: Vec::new(),
    };

    let plugin = tempfile::tempdir().expect("plugin dir");
    std::fs::write(
        plugin.path().join("mcp.json"),
        json!({"mcpServers": {"good": everything_config()}}).to_string(),
    )
    .unwrap();
    let opts = AddPlugin {
        name: Some("plug".into()),
        ..AddPlugin::new(plugin.path())
    };
    let added = host
        .add_plugin(opts)
        .await
        .expect("a plugin-level failure is reported in its load state");
    assert!(
        added.servers.is_empty(),
        "no server may start without PLUGIN_DATA: {:?}",
        added.servers
    );
    match &added.load {
        CustomizationLoadState::Error(e) => {
            assert!(e.message.contains("PLUGIN_DATA"), "{}", e.message)
        }
        other => panic!("expected load error, got {other:?}"),
    }

    let state = host.state();
    let load = state.customizations.iter().flatten().find_map(|c| match c {
        Customization::Plugin(p) if p.id == "plug" => Some(p.load.clone()),
        _ => None,
    });
    events.drain();
    assert!(
        matches!(load, Some(Some(CustomizationLoadState::Error(_)))),
        "the published plugin must show the error, not stay `loading`: {load:?}\nactions:\n{}",
        events.dump_actions()
    );
    host.remove("plug")
        .await
        .expect("the plugin can be removed");
    assert!(host
        .state()
        .customizations
        .iter()
        .flatten()
        .all(|c| !matches!(c, Customization::Plugin(p) if p.id == "plug")));
    host.shutdown().await;
}

/// Two concurrent `add_server` calls with one name: exactly one may succeed,
/// the other must fail with `already_exists`.
///
/// Fails with the current host (about 1 round in 6 on a 2-core box): in
/// `src/host.rs` `reserve_id` only *checks* the registry under its lock and
/// `add_server` inserts the id much later (`spawn_actors`), so both callers
/// pass the check; the second `spawn_actors` overwrites the first handle and
/// both publish a customization with the same id. Probabilistic as a
/// reproduction, but a correct host passes every round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_add_server_with_one_name_admits_only_one() {
    let cfg =
        json!({"type": "stdio", "command": "node", "args": ["-e", "setTimeout(() => {}, 1e9)"]});
    let mut both = 0;
    for _ in 0..200 {
        let (host, _events, _data) = new_host();
        let host = Arc::new(host);
        let add = |h: Arc<Host>, c: Value| {
            tokio::spawn(async move {
                let opts = AddServer::new("x", c);
                h.add_server(opts).await.map_err(|e| e.code)
            })
        };
        let (a, b) = (
            add(host.clone(), cfg.clone()),
            add(host.clone(), cfg.clone()),
        );
        let (a, b) = (a.await.expect("task"), b.await.expect("task"));
        match (&a, &b) {
            (Ok(_), Err(ErrorCode::AlreadyExists)) | (Err(ErrorCode::AlreadyExists), Ok(_)) => {}
            (Ok(_), Ok(_)) => both += 1,
            other => panic!("unexpected outcome {other:?}"),
        }
        host.dispose_sync();
    }
    assert_eq!(
        both, 0,
        "both concurrent add_server calls for one name succeeded in {both} of 200 rounds"
    );
}

// ---------------------------------------------------------------------------
// e. MCP Apps: mcpApp and the mcp:// channel replay like any other state
// ---------------------------------------------------------------------------

/// The real MCP Apps example server (`@modelcontextprotocol/server-basic-vanillajs`).
fn vanilla_config() -> Value {
    let js = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    assert!(js.is_file(), "run `npm install` first: {}", js.display());
    json!({"type": "stdio", "command": "node", "args": [js, "--stdio"]})
}

/// `(mcpApp present, channel)` of server `id` in `state`.
fn app_fields(state: &SessionState, id: &str) -> (bool, Option<String>) {
    match find(state, id) {
        Some(Found::McpServer(s, _)) => (s.mcp_app.is_some(), s.channel.clone()),
        _ => panic!("no server {id}"),
    }
}

/// With `mcpApps`, the App server's customization carries `mcpApp` and, while
/// ready, a `channel` (a new one after a restart, none while stopped); an
/// ordinary server gets no `mcpApp`. At every step the replay of the emitted
/// envelopes through `ahp`'s session reducer is the host's state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_apps_state_replays_to_host_state_across_stop_and_start() {
    let (host, mut events, _data) = new_host_with(true);
    let opts = AddServer::new("vanilla", vanilla_config());
    let app = host.add_server(opts).await.expect("add_server");
    let plain = add_everything(&host, "everything").await;
    wait_server(&host, &mut events, &app, "ready", is_ready).await;
    wait_server(&host, &mut events, &plain, "ready", is_ready).await;
    assert_replay_settles(&host, &mut events, "both ready").await;
    let (has_app, first) = app_fields(&host.state(), &app);
    assert!(has_app, "the App server has mcpApp");
    let first = first.expect("a ready App server has a channel");
    assert!(first.starts_with("mcp:/"), "{first}");
    assert!(
        !app_fields(&host.state(), &plain).0,
        "no mcpApp without Apps"
    );

    let stop = host.dispatch(stop_action(&app), origin(1)).expect("stop");
    let stopped = events
        .wait_action(stop.server_seq, "stopped", |e| {
            host_state_change(e, &app, is_stopped)
        })
        .await;
    assert_eq!(
        app_fields(&host.state(), &app),
        (true, None),
        "stopped: no channel"
    );
    assert_replay_settles(&host, &mut events, "App server stopped").await;

    host.dispatch(start_action(&app), origin(2)).expect("start");
    events
        .wait_action(stopped.server_seq, "ready again", |e| {
            host_state_change(e, &app, is_ready)
        })
        .await;
    let (_, second) = app_fields(&host.state(), &app);
    let second = second.expect("ready again: a channel");
    assert_ne!(first, second, "a restart gives a new channel URI");
    assert_replay_settles(&host, &mut events, "App server restarted").await;

    host.shutdown().await;
    assert_final_replay(&host, &mut events, &[&app, &plain]);
    assert_eq!(
        app_fields(&host.state(), &app).1,
        None,
        "no channel after shutdown"
    );
}
