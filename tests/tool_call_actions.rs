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
            let HostEvent::Action(e) = event else {
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
                self.chat_actions.push(*e);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_then_cancelled_sends_one_cancellation() {
    let (host, rx, data) = new_host();
    let log = data.path().join("log.jsonl");
    let id = add_slow_server(&host, &log).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-p");
    harness_start(&mut replay.chat, "tc-p", &id);
    let cancel = CancellationToken::new();
    let call = {
        let (host, cancel, id) = (host.clone(), cancel.clone(), id.clone());
        tokio::spawn(async move {
            host.call_tool(
                chat_call(
                    &id,
                    "progress",
                    json!({"steps": 3, "intervalMs": 50, "thenWaitMs": 60_000}),
                    "tc-p",
                ),
                cancel,
            )
            .await
        })
    };
    replay
        .until("tc-p", "three progress updates", |r| {
            r.chat_actions.len() >= 3
        })
        .await;
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
    let deadline = tokio::time::Instant::now() + WAIT;
    let lines = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.iter().any(|l| l.get("reason").is_some()) || tokio::time::Instant::now() > deadline
        {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_pauses_resumes_and_completes() {
    let server = StepUpServer::start().await;
    let (host, rx, _data) = new_host();
    let (id, resource) = stepup_ready(&host, &server).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-a");
    harness_start(&mut replay.chat, "tc-a", &id);
    let call = {
        let (host, id) = (host.clone(), id.clone());
        tokio::spawn(async move {
            host.call_tool(
                chat_call(&id, "admin", json!({}), "tc-a"),
                CancellationToken::new(),
            )
            .await
        })
    };
    replay
        .until("tc-a", "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
        })
        .await;
    let auth = tool_call(&replay.chat, "tc-a")["auth"].clone();
    assert_eq!(auth["reason"], "insufficientScope");
    assert_eq!(auth["resource"]["resource"], resource);
    assert_eq!(auth["requiredScopes"], json!(["mcp:read", "mcp:admin"]));
    let needed = replay.input_needed();
    assert_eq!(needed[0]["kind"], "toolAuthentication");
    assert_eq!(needed[0]["chat"], CHAT);
    assert_eq!(needed[0]["toolCall"]["toolCallId"], "tc-a");
    // The server stays ready and other calls keep working meanwhile.
    assert!(server_ready(&host, &id));
    let read = host
        .call_tool(original(&id, "read"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(read["content"][0]["text"], "read-ok");
    // Scopes that do not cover the requirement are refused without a retry.
    let short = AuthenticateArgs {
        resource: resource.clone(),
        token: "admin-canary-token".into(),
        expires_in: None,
        scopes: Some(vec!["mcp:read".into()]),
    };
    assert_eq!(
        host.authenticate(short).await.unwrap_err().code.as_str(),
        "auth_required"
    );
    host.authenticate(AuthenticateArgs {
        resource,
        token: "admin-canary-token".into(),
        expires_in: None,
        scopes: None,
    })
    .await
    .unwrap();
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["content"][0]["text"], "admin-ok");
    replay
        .until("tc-a", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
        })
        .await;
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
    assert!(server_ready(&host, &id));
    // No token in any emitted action.
    for e in &replay.chat_actions {
        let text = serde_json::to_string(e).unwrap();
        assert!(!text.contains("canary-token"), "token leaked: {text}");
    }
    assert!(!serde_json::to_string(&host.state())
        .unwrap()
        .contains("canary-token"));
    drop(server.child);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_refusal_fails_and_client_cancel_completes_as_cancelled() {
    let server = StepUpServer::start().await;
    let (host, rx, _data) = new_host();
    let (id, resource) = stepup_ready(&host, &server).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-b");
    // 1. The "new" token still lacks the scope: the retry's 403 fails the call (no loop).
    harness_start(&mut replay.chat, "tc-b", &id);
    let call = {
        let (host, id) = (host.clone(), id.clone());
        tokio::spawn(async move {
            host.call_tool(
                chat_call(&id, "admin", json!({}), "tc-b"),
                CancellationToken::new(),
            )
            .await
        })
    };
    replay
        .until("tc-b", "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
        })
        .await;
    host.authenticate(AuthenticateArgs {
        resource: resource.clone(),
        token: "base-canary-token".into(),
        expires_in: None,
        scopes: None,
    })
    .await
    .unwrap();
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.code.as_str(), "auth_required");
    replay
        .until("tc-b", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
        })
        .await;
    assert_eq!(tool_call(&replay.chat, "tc-b")["success"], false);
    assert_eq!(server.stats().await["forbidden"].as_u64(), Some(2));

    // 2. The client cancels a call waiting in auth-required: a successful
    // completion is refused, a failed one cancels it.
    let mut replay2 = Replay {
        statuses: Vec::new(),
        chat: chat_with_active_turn(),
        ..replay
    };
    harness_start(&mut replay2.chat, "tc-c", &id);
    let call = {
        let (host, id) = (host.clone(), id.clone());
        tokio::spawn(async move {
            host.call_tool(
                chat_call(&id, "admin", json!({}), "tc-c"),
                CancellationToken::new(),
            )
            .await
        })
    };
    replay2
        .until("tc-c", "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
        })
        .await;
    let origin: ActionOrigin =
        serde_json::from_value(json!({"clientId": "ui", "clientSeq": 1})).unwrap();
    let ok = json!({"type": "chat/toolCallComplete", "turnId": "turn-1", "toolCallId": "tc-c", "result": {"success": true, "pastTenseMessage": "done"}});
    let echo = host.dispatch(ok, origin.clone()).unwrap();
    assert!(
        echo.rejection_reason.is_some(),
        "a successful completion of an auth-required call is refused"
    );
    let cancel = json!({"type": "chat/toolCallComplete", "turnId": "turn-1", "toolCallId": "tc-c",
                        "result": {"success": false, "pastTenseMessage": "Cancelled", "error": {"code": "cancelled", "message": "User declined to authenticate"}}});
    let echo = host.dispatch(cancel, origin).unwrap();
    assert_eq!(
        (echo.channel.as_str(), echo.rejection_reason.is_none()),
        (CHAT, true)
    );
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.code.as_str(), "cancelled");
    replay2
        .until("tc-c", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
                && r.input_needed().is_empty()
        })
        .await;
    assert_eq!(replay2.statuses, ["auth-required", "completed"]);
    assert_eq!(
        tool_call(&replay2.chat, "tc-c")["error"]["code"],
        "cancelled"
    );
    // The host emitted no completion of its own after the client's.
    let completes = replay2
        .chat_actions
        .iter()
        .filter(|e| matches!(e.action, StateAction::ChatToolCallComplete(_)) && e.origin.is_none())
        .count();
    assert_eq!(completes, 1, "only the first call's host completion");
    assert!(server_ready(&host, &id));
    drop(server.child);
}

/// How a test makes the paused call's server leave `ready`.
enum Leave {
    Stop,
    ToggleOff,
    Remove,
}

/// Issue 9: a chat tool call paused in `auth-required` on the step-up
/// fixture, then the server leaves `ready` (`how`): in that step the
/// input-needed entry is removed, the call completes as failed with `code`
/// (before the server's state changes), `callTool` rejects with `code`, and
/// a later `authenticate` for the resource is refused with `invalid_params`.
async fn paused_call_settles_when(how: Leave, code: &str) {
    let server = StepUpServer::start().await;
    let (host, rx, _data) = new_host();
    let (id, resource) = stepup_ready(&host, &server).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-l");
    harness_start(&mut replay.chat, "tc-l", &id);
    let call = {
        let (host, id) = (host.clone(), id.clone());
        tokio::spawn(async move {
            host.call_tool(
                chat_call(&id, "admin", json!({}), "tc-l"),
                CancellationToken::new(),
            )
            .await
        })
    };
    replay
        .until("tc-l", "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
        })
        .await;
    let before = replay.types.len();
    let origin: ActionOrigin =
        serde_json::from_value(json!({"clientId": "ui", "clientSeq": 1})).unwrap();
    match how {
        Leave::Stop => {
            let stop = json!({"type": "session/mcpServerStopRequested", "id": id});
            host.dispatch(stop, origin).unwrap();
        }
        Leave::ToggleOff => {
            let off = json!({"type": "session/customizationToggled", "id": id,
                             "enablement": [{"kind": "session", "enabled": false}]});
            host.dispatch(off, origin).unwrap();
        }
        Leave::Remove => host.remove(&id).await.unwrap(),
    }
    let err = tokio::time::timeout(WAIT, call)
        .await
        .expect("the paused call never ended");
    assert_eq!(err.unwrap().unwrap_err().code.as_str(), code);
    replay
        .until("tc-l", "completion and the state change", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
                && r.types[before..].contains(&"session/mcpServerStateChanged".to_owned())
        })
        .await;
    // Settled: no input-needed entry without a live wait, no call left
    // auth-required on a server that waits for nothing.
    assert_eq!(replay.statuses, ["auth-required", "completed"]);
    assert!(
        replay.input_needed().is_empty(),
        "{:?}",
        replay.input_needed()
    );
    assert!(host.state().input_needed.is_none_or(|n| n.is_empty()));
    let done = tool_call(&replay.chat, "tc-l");
    assert_eq!(
        (done["success"].as_bool(), done["error"]["code"].as_str()),
        (Some(false), Some(code))
    );
    // In the same step, in this order, before the state change.
    let after: Vec<&str> = replay.types[before..]
        .iter()
        .map(String::as_str)
        .filter(|t| !t.starts_with("session/customizationToggled") && !t.ends_with("StopRequested"))
        .collect();
    assert_eq!(
        after[..2],
        ["session/inputNeededRemoved", "chat/toolCallComplete"],
        "{after:?}"
    );
    assert!(
        after[2..].contains(&"session/mcpServerStateChanged"),
        "{after:?}"
    );
    // Nobody waits for the resource any more.
    let late = AuthenticateArgs {
        resource,
        token: "admin-canary-token".into(),
        expires_in: None,
        scopes: None,
    };
    let refused = host.authenticate(late).await.unwrap_err();
    assert_eq!(refused.code.as_str(), "invalid_params");
    assert_eq!(server.stats().await["calls"]["admin"].as_u64(), Some(0));
    drop(server.child);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_request_settles_the_paused_call() {
    paused_call_settles_when(Leave::Stop, "server_stopped").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toggle_off_settles_the_paused_call() {
    paused_call_settles_when(Leave::ToggleOff, "server_disabled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_settles_the_paused_call() {
    paused_call_settles_when(Leave::Remove, "server_removed").await;
}

/// The server state of `id` as the replayed session shows it.
fn replayed_server(session: &SessionState, id: &str) -> Value {
    let server = ahp_mcp_host::session::mcp_servers(session)
        .into_iter()
        .find(|s| s.id == id)
        .map(|s| serde_json::to_value(&s.state).unwrap());
    server.unwrap_or(Value::Null)
}

/// Issue 9: a chat tool call whose pushed token expires mid-turn (the
/// fixture's `EXPIRE_AFTER=1`: the token's second `tools/call` gets 401
/// `invalid_token`) pauses in `auth-required` (reason `expired`) with a
/// `toolAuthentication` input-needed entry while its server goes
/// `authRequired` (`expired`); `authenticate` with a new token reconnects
/// the server and the call completes; a refused token fails the next
/// paused call with `auth_required`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_pauses_the_call_until_authenticate() {
    let server = StepUpServer::start_with(&[("EXPIRE_AFTER", "1")]).await;
    let (host, rx, _data) = new_host();
    let (id, resource) = stepup_ready(&host, &server).await;
    let read = original(&id, "read");
    let first = host
        .call_tool(read, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        first["content"][0]["text"], "read-ok",
        "the token works once"
    );
    let mut replay = Replay::new(rx);
    replay.drain("tc-e");
    harness_start(&mut replay.chat, "tc-e", &id);
    let call = {
        let (host, id) = (host.clone(), id.clone());
        tokio::spawn(async move {
            host.call_tool(
                chat_call(&id, "read", json!({}), "tc-e"),
                CancellationToken::new(),
            )
            .await
        })
    };
    replay
        .until("tc-e", "auth-required and the server authRequired", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
                && replayed_server(&r.session, &id)["kind"] == "authRequired"
        })
        .await;
    let auth = tool_call(&replay.chat, "tc-e")["auth"].clone();
    assert_eq!(auth["reason"], "expired");
    assert_eq!(auth["resource"]["resource"], resource);
    let needed = replay.input_needed();
    assert_eq!(needed.len(), 1, "{needed:?}");
    assert_eq!(needed[0]["kind"], "toolAuthentication");
    assert_eq!(needed[0]["toolCall"]["toolCallId"], "tc-e");
    assert_eq!(needed[0]["toolCall"]["auth"]["reason"], "expired");
    let state = replayed_server(&replay.session, &id);
    assert_eq!(state["reason"], "expired", "{state}");
    assert!(!call.is_finished(), "the call is still in flight");
    host.authenticate(AuthenticateArgs {
        resource: resource.clone(),
        token: "admin-canary-token".into(),
        expires_in: None,
        scopes: None,
    })
    .await
    .unwrap();
    assert!(server_ready(&host, &id), "authenticate resolves once ready");
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["content"][0]["text"], "read-ok");
    replay
        .until("tc-e", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
        })
        .await;
    assert_eq!(replay.statuses, ["auth-required", "running", "completed"]);
    assert_eq!(tool_call(&replay.chat, "tc-e")["success"], true);
    assert!(
        replay.input_needed().is_empty(),
        "inputNeeded entry removed"
    );
    assert_eq!(replayed_server(&replay.session, &id)["kind"], "ready");
    let stats = server.stats().await;
    assert_eq!(stats["calls"]["read"].as_u64(), Some(2));
    assert_eq!(stats["expired"].as_u64(), Some(1));

    // The new token expires too; the expired one is refused on reconnect:
    // the paused call fails with auth_required and nothing is left waiting.
    let mut replay2 = Replay {
        statuses: Vec::new(),
        chat: chat_with_active_turn(),
        ..replay
    };
    harness_start(&mut replay2.chat, "tc-f", &id);
    let call = {
        let (host, id) = (host.clone(), id.clone());
        tokio::spawn(async move {
            host.call_tool(
                chat_call(&id, "read", json!({}), "tc-f"),
                CancellationToken::new(),
            )
            .await
        })
    };
    replay2
        .until("tc-f", "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
        })
        .await;
    let refused = host
        .authenticate(AuthenticateArgs {
            resource,
            token: "base-canary-token".into(),
            expires_in: None,
            scopes: None,
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code.as_str(), "auth_required");
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.code.as_str(), "auth_required");
    replay2
        .until("tc-f", "completion", |r| {
            r.statuses.last().map(String::as_str) == Some("completed")
                && r.input_needed().is_empty()
        })
        .await;
    assert_eq!(replay2.statuses, ["auth-required", "completed"]);
    let done = tool_call(&replay2.chat, "tc-f");
    assert_eq!(
        (done["success"].as_bool(), done["error"]["code"].as_str()),
        (Some(false), Some("auth_required"))
    );
    assert_eq!(
        replayed_server(&replay2.session, &id)["kind"],
        "authRequired"
    );
    assert!(host.state().input_needed.is_none_or(|n| n.is_empty()));
    let completes = replay2
        .chat_actions
        .iter()
        .filter(|e| matches!(e.action, StateAction::ChatToolCallComplete(_)))
        .count();
    assert_eq!(completes, 2, "one completion per call");
    for e in &replay2.chat_actions {
        let text = serde_json::to_string(e).unwrap();
        assert!(!text.contains("canary-token"), "token leaked: {text}");
    }
    drop(server.child);
}
