//! Unit tests of [`super::StepUpWaits`].

use super::*;
use serde_json::json;

fn key(id: &str) -> CallKey {
    CallKey {
        chat: "ahp-chat:/c".into(),
        turn_id: "turn-1".into(),
        tool_call_id: id.into(),
    }
}

fn resource(url: &str) -> ProtectedResourceMetadata {
    serde_json::from_value(json!({
        "resource": url,
        "authorization_servers": ["https://as.example"],
    }))
    .unwrap()
}

fn scopes(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| (*s).to_owned()).collect()
}

const R: &str = "https://mcp.example/mcp";

#[tokio::test]
async fn register_then_resolve_wakes_the_waiter_with_token() {
    let waits = StepUpWaits::default();
    let wait = waits.register(key("a"), ("srv", "A"), resource(R), scopes(&["admin"]));
    let granted = scopes(&["read", "admin"]);
    let done = waits.take_for_resource(R, "tok", Some(&granted)).unwrap();
    let installed: Vec<&str> = done.iter().map(|c| c.server_id.as_str()).collect();
    assert_eq!(installed, ["srv"]);
    assert!(waits.lock().is_empty(), "taken out of the waits");
    done.into_iter().for_each(ResumableCall::resume);
    let end = wait.wait(&CancellationToken::new()).await;
    assert_eq!(end, AuthWaitEnd::Token);
    assert!(waits.lock().is_empty());
}

#[tokio::test]
async fn missing_scopes_are_auth_required_and_wake_nobody() {
    let waits = StepUpWaits::default();
    let _wait = waits.register(
        key("a"),
        ("srv", "A"),
        resource(R),
        scopes(&["read", "admin"]),
    );
    let granted = scopes(&["read"]);
    let err = waits
        .take_for_resource(R, "tok", Some(&granted))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::AuthRequired);
    assert!(err.message.contains("\"admin\""), "{}", err.message);
    let data = err.detail.data().unwrap();
    assert_eq!(data["code"], -32007);
    assert_eq!(data["resources"][0]["resource"], R);
    assert_eq!(
        data["resources"][0]["authorization_servers"],
        json!(["https://as.example"])
    );
    assert_eq!(waits.lock().len(), 1, "the call keeps waiting");
}

#[tokio::test]
async fn an_unknown_resource_or_an_empty_token_does_nothing() {
    let waits = StepUpWaits::default();
    let _wait = waits.register(key("a"), ("srv", "A"), resource(R), Vec::new());
    let unknown = waits.take_for_resource("https://other/mcp", "tok", None);
    assert!(unknown.unwrap().is_empty());
    let revoke = waits.take_for_resource(R, "", None);
    assert!(revoke.unwrap().is_empty());
    assert_eq!(waits.lock().len(), 1);
}

#[tokio::test]
async fn cancel_call_ends_a_failed_completion_and_refuses_the_rest() {
    let waits = StepUpWaits::default();
    let wait = waits.register(key("a"), ("srv", "A"), resource(R), Vec::new());
    let refused = waits.cancel_call("turn-1", "a", true, Clone::clone);
    assert!(
        matches!(&refused, CallCompletion::Refused { chat, .. } if chat == "ahp-chat:/c"),
        "{refused:?}"
    );
    let other = waits.cancel_call("turn-1", "zz", false, Clone::clone);
    assert!(
        matches!(other, CallCompletion::NotWaiting { .. }),
        "{other:?}"
    );
    assert_eq!(waits.lock().len(), 1, "still waiting after two refusals");
    let echoed = waits.cancel_call("turn-1", "a", false, Clone::clone);
    assert_eq!(
        echoed,
        CallCompletion::Cancelled {
            chat: "ahp-chat:/c".into()
        }
    );
    let end = wait.wait(&CancellationToken::new()).await;
    assert_eq!(end, AuthWaitEnd::ClientCancelled);
}

#[tokio::test]
async fn resume_server_touches_only_that_server() {
    let waits = StepUpWaits::default();
    let a = waits.register(key("a"), ("one", "A"), resource(R), Vec::new());
    let b = waits.register(key("b"), ("two", "B"), resource(R), Vec::new());
    waits.resume_server("one");
    assert_eq!(a.wait(&CancellationToken::new()).await, AuthWaitEnd::Token);
    let keys: Vec<CallKey> = waits.lock().keys().cloned().collect();
    assert_eq!(keys, [key("b")]);
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(b.wait(&cancel).await, AuthWaitEnd::Gone);
    assert!(waits.lock().is_empty(), "an ended wait is unregistered");
}

#[tokio::test]
async fn end_server_settles_that_servers_calls_once_and_wakes_them() {
    let waits = StepUpWaits::default();
    let a = waits.register(key("a"), ("one", "A"), resource(R), Vec::new());
    let b = waits.register(key("b"), ("two", "B"), resource(R), Vec::new());
    let mut settled = Vec::new();
    let ended = waits.end_server("one", Leaving::Stopped, |k, display| {
        settled.push((k.tool_call_id.clone(), display.display_name.clone()));
    });
    assert_eq!(ended, 1);
    assert_eq!(settled, [("a".to_owned(), "A".to_owned())]);
    let cancel = CancellationToken::new();
    cancel.cancel();
    // Already decided: a cancel racing with the end still sees the end.
    assert_eq!(a.wait(&cancel).await, AuthWaitEnd::Ended(Leaving::Stopped));
    let taken = waits.take_for_resource(R, "tok", None).unwrap();
    let servers: Vec<&str> = taken.iter().map(|c| c.server_id.as_str()).collect();
    assert_eq!(servers, ["two"], "only the other server's call still waits");
    assert_eq!(waits.end_server("one", Leaving::Stopped, |_, _| {}), 0);
    drop(taken);
    assert_eq!(b.wait(&CancellationToken::new()).await, AuthWaitEnd::Gone);
}

#[test]
fn advertised_resources_lists_each_waiting_resource() {
    let waits = StepUpWaits::default();
    let _a = waits.register(key("a"), ("one", "A"), resource(R), Vec::new());
    let listed = waits.advertised_resources();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].resource, R);
    assert_eq!(
        listed[0],
        resource(R),
        "the whole metadata object, as in the server states"
    );
}

#[tokio::test]
async fn an_expired_wait_is_announced_once_registered_and_can_be_refused() {
    let waits = StepUpWaits::default();
    let mut announced = false;
    let wait = waits.register_expired(key("a"), ("srv", "A"), resource(R), Vec::new(), || {
        announced = true;
    });
    assert!(announced);
    let step_up = waits.register(key("b"), ("srv", "B"), resource(R), Vec::new());
    let mut taken = waits.take_for_resource(R, "tok", None).unwrap();
    taken.sort_by_key(|c| !c.reconnect);
    let flags: Vec<bool> = taken.iter().map(|c| c.reconnect).collect();
    assert_eq!(
        flags,
        [true, false],
        "only the refused-token call reconnects"
    );
    let refused = HostError::new(ErrorCode::AuthRequired, "refused again");
    let mut taken = taken.into_iter();
    taken.next().unwrap().refuse(refused.clone());
    taken.next().unwrap().resume();
    let cancel = CancellationToken::new();
    assert_eq!(wait.wait(&cancel).await, AuthWaitEnd::Refused(refused));
    assert_eq!(step_up.wait(&cancel).await, AuthWaitEnd::Token);
}
