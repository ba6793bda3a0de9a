//! The AHP tool-call actions the host emits for a chat tool call, applied
//! through `ahp`'s chat and session reducers, against real servers:
//! `__test__/fixtures/slow-server.mjs` (stdio: progress, rich content,
//! cancellation) and `__test__/fixtures/stepup-server.mjs` (Streamable HTTP
//! with two static bearer tokens: a 403 `insufficient_scope` mid-call).
//!
//! The harness side (`chat/toolCallStart`, `chat/toolCallReady`, with the
//! MCP contributor) is applied by the test, as an agent harness would; every
//! envelope the host emits on the chat channel is then applied with
//! `apply_action_to_chat`, and the tool call's status is recorded after
//! each. The expected sequences are those of the AHP fixtures (243, 253,
//! 084): running → auth-required → running → completed; running → completed
//! with content; running → completed (cancelled).

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ahp::reducers::{apply_action_to_chat, apply_action_to_session};
use ahp_mcp_host::error::HostResult;
use ahp_mcp_host::events::HostEvent;
use ahp_mcp_host::host::{
    AddServer, AuthenticateArgs, CallTool, ChatCall, Host, HostConfig, ToolRef,
};
use ahp_mcp_host::limits::Limits;
use ahp_mcp_host::session::empty_session_state;
use ahp_types::actions::{ActionEnvelope, ActionOrigin, StateAction};
use ahp_types::state::{ChatState, McpServerState, SessionState};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio_util::sync::CancellationToken;

const SESSION: &str = "ahp-session:/toolcalls";
const CHAT: &str = "ahp-chat:/c1";
const WAIT: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("__test__/fixtures")
        .join(name)
}

fn new_host() -> (Arc<Host>, UnboundedReceiver<HostEvent>, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("tempdir");
    let options = HostConfig {
        session: SESSION.into(),
        data_dir: data.path().into(),
        limits: Limits {
            startup_timeout_ms: 60_000,
            ..Limits::default()
        },
        ..HostConfig::default()
    };
    let (tx, rx) = unbounded_channel();
    (Arc::new(Host::new(options, Arc::new(tx))), rx, data)
}

/// The chat state of AHP fixture 243 (an active turn `turn-1`).
fn chat_with_active_turn() -> ChatState {
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ahp/243-toolcallauthrequired-full-lifecycle-running-authrequired-running-completed.json")).unwrap();
    let fixture: Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(fixture["initial"].clone()).unwrap()
}

/// What the harness dispatches before the host runs the call.
fn harness_start(chat: &mut ChatState, tool_call_id: &str, server_id: &str) {
    for action in [
        json!({"type": "chat/toolCallStart", "turnId": "turn-1", "toolCallId": tool_call_id, "toolName": "t", "displayName": "T",
               "contributor": {"kind": "mcp", "customizationId": server_id}}),
        json!({"type": "chat/toolCallReady", "turnId": "turn-1", "toolCallId": tool_call_id, "invocationMessage": "Calling T", "confirmed": "not-needed"}),
    ] {
        let action: StateAction = serde_json::from_value(action).unwrap();
        apply_action_to_chat(chat, &action);
    }
    assert_eq!(status(chat, tool_call_id), "running");
}

fn tool_call(chat: &ChatState, id: &str) -> Value {
    let v = serde_json::to_value(chat).unwrap();
    v["activeTurn"]["responseParts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["toolCall"].clone())
        .find(|t| t["toolCallId"] == id)
        .unwrap_or(Value::Null)
}

fn status(chat: &ChatState, id: &str) -> String {
    tool_call(chat, id)["status"]
        .as_str()
        .unwrap_or("absent")
        .to_owned()
}

/// Applies every queued host envelope: chat-channel ones to `chat` (recording
/// the status of `id` after each), session ones to `session`.
struct Replay {
    rx: UnboundedReceiver<HostEvent>,
    chat: ChatState,
    session: SessionState,
    statuses: Vec<String>,
    chat_actions: Vec<ActionEnvelope>,
    last_seq: u64,
    /// Every applied envelope's action type, in `serverSeq` order.
    types: Vec<String>,
}

impl Replay {
    fn new(rx: UnboundedReceiver<HostEvent>) -> Self {
        Self {
            rx,
            chat: chat_with_active_turn(),
            session: empty_session_state(),
            statuses: Vec::new(),
            chat_actions: Vec::new(),
            last_seq: 0,
            types: Vec::new(),
        }
    }

    fn drain(&mut self, id: &str) {
        while let Ok(event) = self.rx.try_recv() {
            let Some(e) = event.envelope() else {
                continue;
            };
            assert_eq!(
                e.server_seq,
                self.last_seq + 1,
                "serverSeq is gapless across channels"
            );
            self.last_seq = e.server_seq;
            if e.rejection_reason.is_some() {
                continue;
            }
            let action = serde_json::to_value(&e.action).unwrap();
            self.types.push(action["type"].as_str().unwrap().to_owned());
            if e.channel == CHAT {
                apply_action_to_chat(&mut self.chat, &e.action);
                let s = status(&self.chat, id);
                if self.statuses.last() != Some(&s) {
                    self.statuses.push(s);
                }
                self.chat_actions.push(e);
            } else {
                assert_eq!(e.channel, SESSION);
                apply_action_to_session(&mut self.session, &e.action);
            }
        }
    }

    async fn until(&mut self, id: &str, what: &str, pred: impl Fn(&Self) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            self.drain(id);
            if pred(self) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; statuses {:?}",
                self.statuses
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The same stream on a fresh chat (the fixture's active turn), for a second call.
    fn next_turn(self) -> Self {
        Self {
            statuses: Vec::new(),
            chat: chat_with_active_turn(),
            ..self
        }
    }

    fn input_needed(&self) -> Vec<Value> {
        serde_json::to_value(&self.session.input_needed)
            .unwrap()
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

fn server_ready(host: &Host, id: &str) -> bool {
    let state = host.state();
    matches!(
        ahp_mcp_host::session::mcp_servers(&state)
            .into_iter()
            .find(|s| s.id == id)
            .map(|s| &s.state),
        Some(McpServerState::Ready(_))
    )
}

async fn wait_ready(host: &Host, id: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !server_ready(host, id) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{id} never became ready: {:?}",
            ahp_mcp_host::session::mcp_servers(&host.state())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A plain `callTool` of `server`'s tool `name` (no arguments, no chat).
fn original(server: &str, name: &str) -> CallTool {
    CallTool::new(ToolRef::Original {
        server_id: server.into(),
        tool_name: name.into(),
    })
}

fn chat_call(server: &str, name: &str, arguments: Value, tool_call_id: &str) -> CallTool {
    let chat = ChatCall::new(CHAT.into(), "turn-1".into(), tool_call_id.into()).unwrap();
    CallTool {
        arguments: arguments.as_object().cloned(),
        chat: Some(chat),
        ..CallTool::new(ToolRef::Original {
            server_id: server.into(),
            tool_name: name.into(),
        })
    }
}

/// Runs `host.call_tool(call, cancel)` on its own task, for a call the test settles meanwhile.
fn spawn_call(
    host: &Arc<Host>,
    call: CallTool,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<HostResult<Value>> {
    let host = host.clone();
    tokio::spawn(async move { host.call_tool(call, cancel).await })
}

/// Starts an AHP tool call `tc` of the step-up server's `admin` tool on
/// `replay`'s chat and waits until it is paused in `auth-required` with an
/// input request; the call's task is returned.
async fn pause_admin_call(
    host: &Arc<Host>,
    replay: &mut Replay,
    id: &str,
    tc: &str,
) -> tokio::task::JoinHandle<HostResult<Value>> {
    harness_start(&mut replay.chat, tc, id);
    let call = spawn_call(
        host,
        chat_call(id, "admin", json!({}), tc),
        CancellationToken::new(),
    );
    replay
        .until(tc, "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
        })
        .await;
    call
}

/// `authenticate` arguments pushing `token` for `resource` (no expiry, no scopes).
fn token_for(resource: &str, token: &str) -> AuthenticateArgs {
    AuthenticateArgs {
        resource: resource.to_owned(),
        token: token.into(),
        expires_in: None,
        scopes: None,
    }
}

/// Checks no emitted chat action carries a token.
fn assert_no_token_leak(actions: &[ActionEnvelope]) {
    for e in actions {
        let text = serde_json::to_string(e).unwrap();
        assert!(!text.contains("canary-token"), "token leaked: {text}");
    }
}

async fn add_slow_server(host: &Host, log: &std::path::Path) -> String {
    let config = json!({"type": "stdio", "command": "node", "args": [fixture("slow-server.mjs")], "env": {"CANCEL_LOG": log}});
    let id = host
        .add_server(AddServer::new("slow", config))
        .await
        .unwrap();
    wait_ready(host, &id).await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completed_with_mapped_content() {
    let (host, rx, data) = new_host();
    let id = add_slow_server(&host, &data.path().join("log.jsonl")).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-rich");
    harness_start(&mut replay.chat, "tc-rich", &id);
    let result = host
        .call_tool(
            chat_call(&id, "rich", json!({}), "tc-rich"),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(result["content"].as_array().unwrap().len(), 5);
    replay
        .until("tc-rich", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
        })
        .await;
    assert_eq!(replay.statuses, ["completed"]);
    let done = tool_call(&replay.chat, "tc-rich");
    assert_eq!(done["success"], true);
    let kinds: Vec<&str> = done["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "text",
            "embeddedResource",
            "embeddedResource",
            "embeddedResource",
            "resource"
        ]
    );
    assert_eq!(done["content"][1]["contentType"], "image/png");
    assert_eq!(done["structuredContent"], json!({"ok": true}));
    assert_eq!(
        done["contributor"],
        json!({"kind": "mcp", "customizationId": id})
    );
}

/// Checks the three progress updates arrived in order and the tool call shows the last.
fn assert_progress_in_order(replay: &Replay) {
    let texts: Vec<String> = replay
        .chat_actions
        .iter()
        .map(|e| {
            serde_json::to_value(&e.action).unwrap()["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        texts,
        ["1/3 step 1", "2/3 step 2", "3/3 step 3"],
        "progress arrives in order"
    );
    assert_eq!(
        tool_call(&replay.chat, "tc-p")["content"][0]["text"],
        "3/3 step 3"
    );
}

/// The slow server's log lines, once one records a cancellation (or after [`WAIT`]).
async fn cancel_log_lines(log: &std::path::Path) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.iter().any(|l| l.get("reason").is_some()) || tokio::time::Instant::now() > deadline
        {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_then_cancelled_sends_one_cancellation() {
    let (host, rx, data) = new_host();
    let log = data.path().join("log.jsonl");
    let id = add_slow_server(&host, &log).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-p");
    harness_start(&mut replay.chat, "tc-p", &id);
    let cancel = CancellationToken::new();
    let args = json!({"steps": 3, "intervalMs": 50, "thenWaitMs": 60_000});
    let call = spawn_call(
        &host,
        chat_call(&id, "progress", args, "tc-p"),
        cancel.clone(),
    );
    replay
        .until("tc-p", "three progress updates", |r| {
            r.chat_actions.len() >= 3
        })
        .await;
    assert_progress_in_order(&replay);
    cancel.cancel();
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.code.as_str(), "cancelled");
    replay
        .until("tc-p", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
        })
        .await;
    assert_eq!(replay.statuses, ["running", "completed"]);
    let done = tool_call(&replay.chat, "tc-p");
    assert_eq!(done["success"], false);
    assert_eq!(done["error"]["code"], "cancelled");
    // Exactly one notifications/cancelled, naming the request.
    let lines = cancel_log_lines(&log).await;
    let call_id = lines.iter().find(|l| l["call"] == "progress").unwrap()["requestId"].clone();
    let cancels: Vec<&Value> = lines.iter().filter(|l| l.get("reason").is_some()).collect();
    assert_eq!(cancels.len(), 1, "{lines:?}");
    assert_eq!(cancels[0]["requestId"], call_id);
    // The server stays usable.
    let ok = host
        .call_tool(original(&id, "rich"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(ok["content"][0]["text"], "hello");
}

struct StepUpServer {
    child: tokio::process::Child,
    url: String,
}

impl StepUpServer {
    async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// The fixture with extra environment (e.g. `EXPIRE_AFTER`).
    async fn start_with(env: &[(&str, &str)]) -> Self {
        let mut child = tokio::process::Command::new("node")
            .arg(fixture("stepup-server.mjs"))
            .env("BASE_TOKEN", "base-canary-token")
            .env("ADMIN_TOKEN", "admin-canary-token")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let port = loop {
            let line = tokio::time::timeout(WAIT, lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .expect("stepup-server ended");
            if let Some(p) = line.strip_prefix("LISTENING ") {
                break p.trim().to_owned();
            }
        };
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    async fn stats(&self) -> Value {
        let url = self.url.replace("/mcp", "/__stats");
        reqwest::get(url).await.unwrap().json().await.unwrap()
    }
}

/// A server signed in with the read-only token: ready, for step-up tests.
async fn stepup_ready(host: &Host, server: &StepUpServer) -> (String, String) {
    let id = host
        .add_server(AddServer::new(
            "stepup",
            json!({"type": "streamable-http", "url": server.url}),
        ))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    let resource = loop {
        let s = ahp_mcp_host::session::mcp_servers(&host.state())
            .into_iter()
            .find(|s| s.id == id)
            .map(|s| s.state.clone());
        if let Some(McpServerState::AuthRequired(req)) = s {
            break req.resource.resource.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never authRequired: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    host.authenticate(AuthenticateArgs {
        resource: resource.clone(),
        token: "base-canary-token".into(),
        expires_in: None,
        scopes: None,
    })
    .await
    .unwrap();
    wait_ready(host, &id).await;
    (id, resource)
}

/// Checks the paused `tc-a` asks for the admin scope on `resource`, with a `toolAuthentication` entry.
fn assert_paused_for_admin_scope(replay: &Replay, resource: &str) {
    let auth = tool_call(&replay.chat, "tc-a")["auth"].clone();
    assert_eq!(auth["reason"], "insufficientScope");
    assert_eq!(auth["resource"]["resource"], resource);
    assert_eq!(auth["requiredScopes"], json!(["mcp:read", "mcp:admin"]));
    let needed = replay.input_needed();
    assert_eq!(needed[0]["kind"], "toolAuthentication");
    assert_eq!(needed[0]["chat"], CHAT);
    assert_eq!(needed[0]["toolCall"]["toolCallId"], "tc-a");
}

/// Checks the server stays ready and serves `read` while a call is paused.
async fn assert_other_calls_work(host: &Host, id: &str) {
    // The server stays ready and other calls keep working meanwhile.
    assert!(server_ready(host, id));
    let read = host
        .call_tool(original(id, "read"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(read["content"][0]["text"], "read-ok");
}

/// Checks the step-up completed: statuses, success, no input-needed entry, one 403, one admin call.
async fn assert_step_up_completed(replay: &Replay, server: &StepUpServer) {
    assert_eq!(
        replay.statuses,
        ["auth-required", "running", "completed"],
        "running → auth-required → running → completed"
    );
    assert_eq!(tool_call(&replay.chat, "tc-a")["success"], true);
    assert!(
        replay.input_needed().is_empty(),
        "inputNeeded entry removed"
    );
    let stats = server.stats().await;
    assert_eq!(
        (
            stats["forbidden"].as_u64(),
            stats["calls"]["admin"].as_u64()
        ),
        (Some(1), Some(1))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_pauses_resumes_and_completes() {
    let server = StepUpServer::start().await;
    let (host, rx, _data) = new_host();
    let (id, resource) = stepup_ready(&host, &server).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-a");
    let call = pause_admin_call(&host, &mut replay, &id, "tc-a").await;
    assert_paused_for_admin_scope(&replay, &resource);
    assert_other_calls_work(&host, &id).await;
    // Scopes that do not cover the requirement are refused without a retry.
    let short = AuthenticateArgs {
        scopes: Some(vec!["mcp:read".into()]),
        ..token_for(&resource, "admin-canary-token")
    };
    assert_eq!(
        host.authenticate(short).await.unwrap_err().code.as_str(),
        "auth_required"
    );
    host.authenticate(token_for(&resource, "admin-canary-token"))
        .await
        .unwrap();
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["content"][0]["text"], "admin-ok");
    replay
        .until("tc-a", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
        })
        .await;
    assert_step_up_completed(&replay, &server).await;
    assert!(server_ready(&host, &id));
    // No token in any emitted action.
    assert_no_token_leak(&replay.chat_actions);
    assert!(!serde_json::to_string(&host.state())
        .unwrap()
        .contains("canary-token"));
    drop(server.child);
}

#[path = "tool_call_actions/paused.rs"]
mod paused;
