//! The AHP actions of a form elicitation inside a chat tool call, replayed
//! through `ahp`'s chat and session reducers, against real servers:
//! `__test__/fixtures/modern-server.mjs` (TypeScript SDK v2, MRTR
//! `input_required` rounds) and `__test__/fixtures/elicit-server.mjs`
//! (SDK v1, `elicitation/create` inside the tool).
//!
//! The harness side (`chat/toolCallStart`, `chat/toolCallReady`) is applied
//! by the test on the chat of AHP fixture 243 (an active turn `turn-1`).
//! Every envelope the host emits (its own and the echoes of the client's
//! dispatches, unless refused) is then applied: chat-channel ones with
//! `apply_action_to_chat`, session ones with `apply_action_to_session`, and
//! each must be `Applied`. The session replay must end in the host's state.

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ahp::reducers::{apply_action_to_chat, apply_action_to_session, ReduceOutcome};
use ahp_mcp_host::events::HostEvent;
use ahp_mcp_host::host::{AddServer, CallTool, ChatCall, Host, HostConfig, HostDeps, ToolRef};
use ahp_mcp_host::limits::Limits;
use ahp_mcp_host::requests::{HandlerRequest, RequestHandler, ServerRequestKind};
use ahp_mcp_host::session::empty_session_state;
use ahp_types::actions::{ActionOrigin, StateAction};
use ahp_types::state::{ChatState, McpServerState, SessionState};
use futures::future::BoxFuture;
use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio_util::sync::CancellationToken;

const SESSION: &str = "ahp-session:/inputs";
const CHAT: &str = "ahp-chat:/c1";
const WAIT: Duration = Duration::from_secs(60);
/// `SessionStatus.InputNeeded` (AHP 1.0: 16 | 8).
const INPUT_NEEDED: u32 = 24;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("__test__/fixtures")
        .join(name)
}

fn new_host(handler: Option<Arc<dyn RequestHandler>>) -> (Arc<Host>, Replay, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("tempdir");
    let options = HostConfig {
        session: SESSION.into(),
        data_dir: data.path().into(),
        chat_elicitation: true,
        limits: Limits {
            startup_timeout_ms: 60_000,
            ..Limits::default()
        },
        ..HostConfig::default()
    };
    let (tx, rx) = unbounded_channel();
    let deps = HostDeps {
        requests: handler,
        ..HostDeps::default()
    };
    let host = Arc::new(Host::with_handlers(options, Arc::new(tx), deps));
    (host, Replay::new(rx), data)
}

/// A handler that answers every elicitation at once with `{name: "Ada"}`
/// (or the first property of the form), counting the requests that came
/// with a chat input request.
struct Answers(AtomicUsize);

impl RequestHandler for Answers {
    fn handles(&self, kind: ServerRequestKind) -> bool {
        kind == ServerRequestKind::Elicitation
    }
    fn request(&self, request: HandlerRequest) -> BoxFuture<'static, Result<Value, String>> {
        if request.chat_input.is_some() {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        let field = request.params["requestedSchema"]["properties"]
            .as_object()
            .and_then(|p| p.keys().next().cloned())
            .unwrap_or_default();
        let value = if field == "color" { "teal" } else { "Ada" };
        Box::pin(async move { Ok(json!({"action": "accept", "content": {field: value}})) })
    }
}

/// The chat of AHP fixture 243: an active turn `turn-1`.
fn chat_with_active_turn() -> ChatState {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ahp/243-toolcallauthrequired-full-lifecycle-running-authrequired-running-completed.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    serde_json::from_value(fixture["initial"].clone()).unwrap()
}

/// Applies every envelope the host emitted, in `serverSeq` order.
struct Replay {
    rx: UnboundedReceiver<HostEvent>,
    chat: ChatState,
    session: SessionState,
    last_seq: u64,
    /// The type of every applied envelope (`chat/inputCompleted:<response>`).
    types: Vec<String>,
    /// The highest chat and session status seen (to see InputNeeded raised).
    statuses: Vec<(u32, u32)>,
}

impl Replay {
    fn new(rx: UnboundedReceiver<HostEvent>) -> Self {
        Self {
            rx,
            chat: chat_with_active_turn(),
            session: empty_session_state(),
            last_seq: 0,
            types: Vec::new(),
            statuses: Vec::new(),
        }
    }

    fn drain(&mut self) {
        while let Ok(event) = self.rx.try_recv() {
            let Some(e) = event.envelope() else {
                continue;
            };
            assert_eq!(e.server_seq, self.last_seq + 1, "serverSeq is gapless");
            self.last_seq = e.server_seq;
            if e.rejection_reason.is_some() {
                continue;
            }
            let action = serde_json::to_value(&e.action).unwrap();
            let mut kind = action["type"].as_str().unwrap().to_owned();
            if let Some(response) = action["response"].as_str() {
                kind = format!("{kind}:{response}");
            }
            let outcome = if e.channel == CHAT {
                apply_action_to_chat(&mut self.chat, &e.action)
            } else {
                assert_eq!(e.channel, SESSION);
                apply_action_to_session(&mut self.session, &e.action)
            };
            if kind.contains("nput") {
                assert_eq!(outcome, ReduceOutcome::Applied, "{kind} applies");
            }
            self.types.push(kind);
            self.statuses.push((self.chat.status, self.session.status));
        }
    }

    /// What the harness dispatches before the host runs tool call `id` on
    /// `server_id`, once that server's tools are published: the host
    /// publishes `session/serverToolsChanged` just after the server's
    /// `ready` state, so without this wait it could land among the call's
    /// actions.
    async fn start_call(&mut self, id: &str, server_id: &str) {
        let source = |t: &ahp_types::state::ToolDefinition| {
            let meta = t.meta.as_ref()?.get("ahp-mcp-host/source")?;
            meta.get("customizationId")?.as_str().map(str::to_owned)
        };
        self.until("the server's tools published", |r| {
            let tools = r.session.server_tools.iter().flatten();
            tools.filter_map(source).any(|c| c == server_id)
        })
        .await;
        for action in [
            json!({"type": "chat/toolCallStart", "turnId": "turn-1", "toolCallId": id, "toolName": "t", "displayName": "T",
                   "contributor": {"kind": "mcp", "customizationId": server_id}}),
            json!({"type": "chat/toolCallReady", "turnId": "turn-1", "toolCallId": id, "invocationMessage": "Calling T", "confirmed": "not-needed"}),
        ] {
            let action: StateAction = serde_json::from_value(action).unwrap();
            assert_eq!(
                apply_action_to_chat(&mut self.chat, &action),
                ReduceOutcome::Applied
            );
        }
        self.types.clear();
    }

    async fn until(&mut self, what: &str, pred: impl Fn(&Self) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            self.drain();
            if pred(self) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}; {:?}",
                self.types
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The open `chatInput` request ids on the replayed session.
    fn open_inputs(&self) -> Vec<String> {
        let state = serde_json::to_value(&self.session).unwrap();
        state["inputNeeded"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e["request"]["id"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The input request parts of the chat's active turn, as JSON.
    fn input_parts(&self) -> Vec<Value> {
        let chat = serde_json::to_value(&self.chat).unwrap();
        chat["activeTurn"]["responseParts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["kind"] == "inputRequest")
            .cloned()
            .collect()
    }

    fn tool_call(&self, id: &str) -> Value {
        let chat = serde_json::to_value(&self.chat).unwrap();
        chat["activeTurn"]["responseParts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["toolCall"].clone())
            .find(|t| t["toolCallId"] == id)
            .unwrap_or(Value::Null)
    }
}

async fn add(host: &Host, script: &str, args: &[&str]) -> String {
    let mut all = vec![fixture(script).display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let config = json!({"type": "stdio", "command": "node", "args": all});
    let add = AddServer::new("el", config);
    let id = host.add_server(add).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let ready = ahp_mcp_host::session::mcp_servers(&host.state())
            .into_iter()
            .any(|s| s.id == id && matches!(s.state, McpServerState::Ready(_)));
        if ready {
            return id;
        }
        assert!(tokio::time::Instant::now() < deadline, "{id} never ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn chat_call(server: &str, name: &str, tool_call_id: &str) -> CallTool {
    let chat = ChatCall::new(CHAT.into(), "turn-1".into(), tool_call_id.into()).unwrap();
    CallTool {
        arguments: Some(serde_json::Map::new()),
        chat: Some(chat),
        ..CallTool::new(ToolRef::Original {
            server_id: server.into(),
            tool_name: name.into(),
        })
    }
}

fn origin(seq: i64) -> ActionOrigin {
    serde_json::from_value(json!({"clientId": "c1", "clientSeq": seq})).unwrap()
}

fn spawn_call(
    host: &Arc<Host>,
    call: CallTool,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<Result<Value, String>> {
    let host = host.clone();
    tokio::spawn(async move {
        host.call_tool(call, cancel)
            .await
            .map_err(|e| e.code.as_str().to_owned())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mrtr_rounds_answered_by_an_ahp_client_replay_through_the_reducers() {
    let (host, mut replay, _data) = new_host(None);
    let id = add(&host, "modern-server.mjs", &["stdio"]).await;
    replay.start_call("tc-m", &id).await;
    let call = spawn_call(
        &host,
        chat_call(&id, "survey", "tc-m"),
        CancellationToken::new(),
    );
    for (n, (field, value)) in [("name", "Ada"), ("color", "teal")].into_iter().enumerate() {
        replay
            .until("an open input", |r| r.open_inputs().len() == 1)
            .await;
        let request_id = replay.open_inputs()[0].clone();
        assert_eq!(replay.input_parts().len(), n + 1);
        assert_eq!(
            replay.input_parts()[n]["request"]["questions"][0]["id"],
            field
        );
        let (chat, session) = *replay.statuses.last().unwrap();
        assert_eq!(chat & INPUT_NEEDED, INPUT_NEEDED, "the chat needs input");
        assert_eq!(
            session & INPUT_NEEDED,
            INPUT_NEEDED,
            "the session needs input"
        );
        let action = json!({"type": "chat/inputCompleted", "requestId": request_id, "response": "accept",
                            "answers": {field: {"state": "submitted", "value": {"kind": "text", "value": value}}}});
        let echo = host.dispatch(action, origin(n as i64 + 1)).unwrap();
        assert_eq!(echo.rejection_reason, None);
        replay
            .until("the input closed", |r| {
                !r.open_inputs().contains(&request_id)
            })
            .await;
    }
    assert_eq!(
        call.await.unwrap().unwrap()["content"][0]["text"],
        "Ada likes teal"
    );
    replay
        .until("completion", |r| {
            r.tool_call("tc-m")["status"] == "completed"
        })
        .await;
    let round = [
        "chat/inputRequested",
        "session/inputNeededSet",
        "chat/inputCompleted:accept",
        "session/inputNeededRemoved",
    ];
    let expected: Vec<&str> = round
        .iter()
        .chain(round.iter())
        .copied()
        .chain(["chat/toolCallComplete"])
        .collect();
    assert_eq!(replay.types, expected);
    let parts = replay.input_parts();
    assert_eq!(parts.len(), 2);
    assert!(parts.iter().all(|p| p["response"] == "accept"));
    assert_eq!(
        parts[1]["request"]["answers"]["color"]["value"]["value"],
        "teal"
    );
    let (_, session) = *replay.statuses.last().unwrap();
    assert_eq!(session & 31, 8, "the session is back to in progress");
    assert_eq!(
        replay.session,
        host.state(),
        "the replay ends in the host's state"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_answer_withdraws_the_ahp_input_with_the_app_answers() {
    let handler = Arc::new(Answers(AtomicUsize::new(0)));
    let (host, mut replay, _data) = new_host(Some(handler.clone()));
    let id = add(&host, "elicit-server.mjs", &[]).await;
    replay.start_call("tc-j", &id).await;
    let result = host
        .call_tool(chat_call(&id, "elicit", "tc-j"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        result["content"][0]["text"],
        r#"{"action":"accept","content":{"name":"Ada"}}"#
    );
    assert_eq!(handler.0.load(Ordering::SeqCst), 1);
    replay
        .until("completion", |r| {
            r.tool_call("tc-j")["status"] == "completed"
        })
        .await;
    assert_eq!(
        replay.types,
        [
            "chat/inputRequested",
            "session/inputNeededSet",
            "chat/inputCompleted:accept",
            "session/inputNeededRemoved",
            "chat/toolCallComplete"
        ]
    );
    let parts = replay.input_parts();
    assert_eq!(parts[0]["response"], "accept");
    assert_eq!(
        parts[0]["request"]["answers"],
        json!({"name": {"state": "submitted", "value": {"kind": "text", "value": "Ada"}}})
    );
    assert!(replay.open_inputs().is_empty());
    assert_eq!(replay.session, host.state());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_withdraws_its_input_before_it_completes() {
    let (host, mut replay, _data) = new_host(None);
    let id = add(&host, "elicit-server.mjs", &[]).await;
    replay.start_call("tc-c", &id).await;
    let cancel = CancellationToken::new();
    let call = spawn_call(&host, chat_call(&id, "elicit", "tc-c"), cancel.clone());
    replay
        .until("an open input", |r| r.open_inputs().len() == 1)
        .await;
    cancel.cancel();
    assert_eq!(call.await.unwrap().unwrap_err(), "cancelled");
    replay
        .until("completion", |r| {
            r.tool_call("tc-c")["status"] == "completed"
        })
        .await;
    assert_eq!(
        replay.types,
        [
            "chat/inputRequested",
            "session/inputNeededSet",
            "chat/inputCompleted:cancel",
            "session/inputNeededRemoved",
            "chat/toolCallComplete"
        ]
    );
    assert_eq!(replay.input_parts()[0]["response"], "cancel");
    assert_eq!(replay.tool_call("tc-c")["success"], false);
    assert!(replay.open_inputs().is_empty());
    assert_eq!(replay.session, host.state());
}
