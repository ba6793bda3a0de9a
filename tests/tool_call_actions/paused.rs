//! AHP tool calls paused on auth: a second refusal, the server leaving while paused, an expired token (the tests of `tool_call_actions.rs` that did not fit in one file).

use super::*;

/// The origin of the UI client's dispatches.
fn ui_origin() -> ActionOrigin {
    serde_json::from_value(json!({"clientId": "ui", "clientSeq": 1})).unwrap()
}

/// Step 1: `tc-b` pauses, the pushed token still lacks the scope, so the retry's 403 fails the call.
async fn a_second_refusal_fails_the_call(
    host: &Arc<Host>,
    server: &StepUpServer,
    replay: &mut Replay,
    (id, resource): (&str, &str),
) {
    // 1. The "new" token still lacks the scope: the retry's 403 fails the call (no loop).
    harness_start(&mut replay.chat, "tc-b", id);
    let call = spawn_call(
        host,
        chat_call(id, "admin", json!({}), "tc-b"),
        CancellationToken::new(),
    );
    replay
        .until("tc-b", "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
        })
        .await;
    host.authenticate(token_for(resource, "base-canary-token"))
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
}

/// The UI completes the paused `tc-c`: a success is refused, a cancellation is accepted on the chat.
fn client_completes_paused_call(host: &Host) {
    let origin = ui_origin();
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_refusal_fails_and_client_cancel_completes_as_cancelled() {
    let server = StepUpServer::start().await;
    let (host, rx, _data) = new_host();
    let (id, resource) = stepup_ready(&host, &server).await;
    let mut replay = Replay::new(rx);
    replay.drain("tc-b");
    a_second_refusal_fails_the_call(&host, &server, &mut replay, (&id, &resource)).await;

    // 2. The client cancels a call waiting in auth-required: a successful
    // completion is refused, a failed one cancels it.
    let mut replay2 = replay.next_turn();
    let call = pause_admin_call(&host, &mut replay2, &id, "tc-c").await;
    client_completes_paused_call(&host);
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

/// Makes server `id` leave `ready` the way `how` says.
async fn leave_ready(host: &Host, how: Leave, id: &str) {
    let origin = ui_origin();
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
        Leave::Remove => host.remove(id).await.unwrap(),
    }
}

/// Checks the actions after `types[before]`: the input-needed removal and the
/// completion, in that order, before the server's state change.
fn assert_settled_before_state_change(replay: &Replay, before: usize) {
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
    let call = pause_admin_call(&host, &mut replay, &id, "tc-l").await;
    let before = replay.types.len();
    leave_ready(&host, how, &id).await;
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
    assert_settled_before_state_change(&replay, before);
    // Nobody waits for the resource any more.
    let late = token_for(&resource, "admin-canary-token");
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

/// Checks the paused `tc-e` and the replayed server both read `expired`, with one input-needed entry.
fn assert_paused_as_expired(replay: &Replay, resource: &str, id: &str) {
    let auth = tool_call(&replay.chat, "tc-e")["auth"].clone();
    assert_eq!(auth["reason"], "expired");
    assert_eq!(auth["resource"]["resource"], resource);
    let needed = replay.input_needed();
    assert_eq!(needed.len(), 1, "{needed:?}");
    assert_eq!(needed[0]["kind"], "toolAuthentication");
    assert_eq!(needed[0]["toolCall"]["toolCallId"], "tc-e");
    assert_eq!(needed[0]["toolCall"]["auth"]["reason"], "expired");
    let state = replayed_server(&replay.session, id);
    assert_eq!(state["reason"], "expired", "{state}");
}

/// Checks `tc-e` completed after the reconnect, the server reads `ready`, and the fixture saw one expiry.
async fn assert_completed_after_reconnect(replay: &Replay, server: &StepUpServer, id: &str) {
    assert_eq!(replay.statuses, ["auth-required", "running", "completed"]);
    assert_eq!(tool_call(&replay.chat, "tc-e")["success"], true);
    assert!(
        replay.input_needed().is_empty(),
        "inputNeeded entry removed"
    );
    assert_eq!(replayed_server(&replay.session, id)["kind"], "ready");
    let stats = server.stats().await;
    assert_eq!(stats["calls"]["read"].as_u64(), Some(2));
    assert_eq!(stats["expired"].as_u64(), Some(1));
}

/// Checks `tc-f` failed with `auth_required`, the server stays `authRequired`, and nothing waits or leaks.
fn assert_failed_with_nothing_waiting(replay2: &Replay, host: &Host, id: &str) {
    assert_eq!(replay2.statuses, ["auth-required", "completed"]);
    let done = tool_call(&replay2.chat, "tc-f");
    assert_eq!(
        (done["success"].as_bool(), done["error"]["code"].as_str()),
        (Some(false), Some("auth_required"))
    );
    assert_eq!(
        replayed_server(&replay2.session, id)["kind"],
        "authRequired"
    );
    assert!(host.state().input_needed.is_none_or(|n| n.is_empty()));
    let completes = replay2
        .chat_actions
        .iter()
        .filter(|e| matches!(e.action, StateAction::ChatToolCallComplete(_)))
        .count();
    assert_eq!(completes, 2, "one completion per call");
    assert_no_token_leak(&replay2.chat_actions);
}

/// The new token expires too; the expired one is refused on reconnect: the
/// paused `tc-f` fails with `auth_required` and nothing is left waiting.
async fn a_refused_token_fails_the_next_call(
    host: &Arc<Host>,
    mut replay2: Replay,
    id: &str,
    resource: &str,
) {
    harness_start(&mut replay2.chat, "tc-f", id);
    let call = spawn_call(
        host,
        chat_call(id, "read", json!({}), "tc-f"),
        CancellationToken::new(),
    );
    replay2
        .until("tc-f", "auth-required", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
        })
        .await;
    let refused = host
        .authenticate(token_for(resource, "base-canary-token"))
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
    assert_failed_with_nothing_waiting(&replay2, host, id);
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
    let call = spawn_call(
        &host,
        chat_call(&id, "read", json!({}), "tc-e"),
        CancellationToken::new(),
    );
    replay
        .until("tc-e", "auth-required and the server authRequired", |r| {
            r.statuses.last().map(String::as_str) == Some("auth-required")
                && !r.input_needed().is_empty()
                && replayed_server(&r.session, &id)["kind"] == "authRequired"
        })
        .await;
    assert_paused_as_expired(&replay, &resource, &id);
    assert!(!call.is_finished(), "the call is still in flight");
    host.authenticate(token_for(&resource, "admin-canary-token"))
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
    assert_completed_after_reconnect(&replay, &server, &id).await;

    // The new token expires too; the expired one is refused on reconnect:
    // the paused call fails with auth_required and nothing is left waiting.
    a_refused_token_fails_the_next_call(&host, replay.next_turn(), &id, &resource).await;
    drop(server.child);
}
