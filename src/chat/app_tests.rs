//! The tool-call actions of an App tool call (MCP Apps, SEP-1865): each
//! carries the tool's `_meta.ui` verbatim, and replaying the whole call
//! through `ahp`'s chat reducer (from the harness's `chat/toolCallStart`
//! with the MCP contributor and `_meta.ui`) keeps `_meta.ui` on the tool
//! call after every step, progress included.

use std::sync::Arc;

use ahp::reducers::apply_action_to_chat;
use ahp_types::state::ChatState;
use serde_json::{json, Value};

use super::*;
use crate::error::ErrorCode;

fn ui() -> Value {
    json!({"resourceUri": "ui://get-time/mcp-app.html", "visibility": ["model", "app"], "z": {"b": 1, "a": 2}})
}

fn app_ctx() -> ChatContext {
    let Value::Object(meta) = json!({ "ui": ui() }) else {
        panic!("an object")
    };
    ChatContext {
        chat: "ahp-chat:/c1".into(),
        turn_id: "turn-1".into(),
        tool_call_id: "call-1".into(),
        customization_id: "apps".into(),
        meta: Some(Arc::new(meta)),
    }
}

fn meta_of(action: &StateAction) -> Value {
    serde_json::to_value(action).unwrap_or_else(|e| panic!("{e}"))["_meta"].clone()
}

fn requirement() -> McpAuthRequirement {
    serde_json::from_value(
        json!({"reason": "required", "resource": {"resource": "https://x.test/mcp"}}),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_tool_call_action_of_an_app_call_carries_ui_verbatim() {
    let c = app_ctx();
    let ok = Ok(json!({"content": [{"type": "text", "text": "ok"}]}));
    let failed = Err(HostError::new(ErrorCode::ServerStopped, "stopped"));
    for action in [
        complete_action(&c, "Get Time", &ok),
        complete_action(&c, "Get Time", &failed),
        auth_required(&c, &requirement()),
        auth_resolved_action(&c),
    ] {
        assert_eq!(meta_of(&action), json!({"ui": ui()}));
        // Verbatim: the server's key order too.
        let text = serde_json::to_string(&action).unwrap_or_default();
        assert!(text.contains(r#""z":{"b":1,"a":2}"#), "{text}");
    }
    let progress = progress_action(&c, 1.0, Some(2.0), Some("half"));
    assert_eq!(
        meta_of(&progress),
        json!({"progress": {"message": "half", "progress": 1.0, "total": 2.0}, "ui": ui()})
    );
    let call = PausedToolCall {
        tool_name: "get-time",
        display_name: "Get Time",
        invocation_message: "Calling Get Time",
    };
    let set = serde_json::to_value(input_needed_set(&c, &call, &requirement())).unwrap_or_default();
    assert_eq!(set["request"]["toolCall"]["_meta"], json!({"ui": ui()}));
}

#[test]
fn an_ordinary_call_has_no_ui() {
    let c = ChatContext {
        meta: None,
        ..app_ctx()
    };
    assert_eq!(meta_of(&auth_resolved_action(&c)), Value::Null);
    assert_eq!(
        meta_of(&complete_action(&c, "E", &Ok(json!({})))),
        Value::Null
    );
    let progress = progress_action(&c, 1.0, None, None);
    assert_eq!(
        meta_of(&progress),
        json!({"progress": {"message": null, "progress": 1.0, "total": null}})
    );
}

/// The chat of AHP fixture 243 (an active turn `turn-1`), with the
/// harness's start of an App tool call applied.
fn started_chat() -> ChatState {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/ahp/243-toolcallauthrequired-full-lifecycle-running-authrequired-running-completed.json"
    );
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut chat: ChatState =
        serde_json::from_value(fixture["initial"].clone()).unwrap_or_else(|e| panic!("{e}"));
    for action in [
        json!({"type": "chat/toolCallStart", "turnId": "turn-1", "toolCallId": "call-1", "toolName": "get-time",
               "displayName": "Get Time", "contributor": {"kind": "mcp", "customizationId": "apps"},
               "_meta": {"ui": ui()}}),
        json!({"type": "chat/toolCallReady", "turnId": "turn-1", "toolCallId": "call-1",
               "invocationMessage": "Calling Get Time", "confirmed": "not-needed"}),
    ] {
        let action: StateAction = serde_json::from_value(action).unwrap_or_else(|e| panic!("{e}"));
        apply_action_to_chat(&mut chat, &action);
    }
    chat
}

fn tool_call(chat: &ChatState) -> Value {
    let v = serde_json::to_value(chat).unwrap_or_default();
    v["activeTurn"]["responseParts"][0]["toolCall"].clone()
}

#[test]
fn replayed_through_the_chat_reducer_the_call_keeps_ui_at_every_step() {
    let c = app_ctx();
    let mut chat = started_chat();
    let steps = [
        progress_action(&c, 1.0, Some(2.0), None),
        auth_required(&c, &requirement()),
        auth_resolved_action(&c),
        progress_action(&c, 2.0, Some(2.0), None),
        complete_action(&c, "Get Time", &Ok(json!({"content": []}))),
    ];
    let mut statuses = Vec::new();
    for action in steps {
        apply_action_to_chat(&mut chat, &action);
        let call = tool_call(&chat);
        assert_eq!(call["_meta"]["ui"], ui(), "after {}", call["status"]);
        assert_eq!(call["contributor"]["customizationId"], "apps");
        statuses.push(call["status"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(
        statuses,
        [
            "running",
            "auth-required",
            "running",
            "running",
            "completed"
        ]
    );
}
