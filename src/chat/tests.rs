//! Unit tests of the tool-call actions. The `OLD_*` strings are the JSON
//! the previous builder (`json!` + `serde_json::from_value::<StateAction>`)
//! produced for the same inputs, captured before the typed rewrite: the
//! typed builders must serialize to exactly these bytes, except that what
//! the server sent (an unknown block, `structuredContent`) keeps the
//! server's key order (issue 10; the old builder sorted it).

use ahp_types::state::{McpServerAuthRequiredState, ToolCallResult};
use serde::Deserialize;
use serde_json::{json, Value};

use super::*;
use crate::error::{ErrorCode, ErrorDetail, HostError};

const OLD_PROGRESS_WITH_TOTAL: &str = r#"{"type":"chat/toolCallContentChanged","turnId":"turn-1","toolCallId":"call-1","_meta":{"progress":{"message":"step 2","progress":2.0,"total":5.0}},"content":[{"type":"text","text":"2/5 step 2"}]}"#;
const OLD_PROGRESS_BARE: &str = r#"{"type":"chat/toolCallContentChanged","turnId":"turn-1","toolCallId":"call-1","_meta":{"progress":{"message":null,"progress":0.5,"total":null}},"content":[{"type":"text","text":"0.5"}]}"#;
const OLD_PROGRESS_EMPTY_MESSAGE: &str = r#"{"type":"chat/toolCallContentChanged","turnId":"turn-1","toolCallId":"call-1","_meta":{"progress":{"message":"","progress":3.0,"total":1000000000000000.0}},"content":[{"type":"text","text":"3/1000000000000000"}]}"#;
const OLD_AUTH_REQUIRED_FULL: &str = r#"{"type":"chat/toolCallAuthRequired","turnId":"turn-1","toolCallId":"call-1","auth":{"reason":"insufficientScope","oauthClient":{"clientId":"app"},"resource":{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"],"scopes_supported":["read","write"]},"requiredScopes":["read","write"],"description":"need write"}}"#;
const OLD_AUTH_REQUIRED_MINIMAL: &str = r#"{"type":"chat/toolCallAuthRequired","turnId":"turn-1","toolCallId":"call-1","auth":{"reason":"required","resource":{"resource":"https://mcp.example/mcp"}}}"#;
const OLD_AUTH_RESOLVED: &str =
    r#"{"type":"chat/toolCallAuthResolved","turnId":"turn-1","toolCallId":"call-1"}"#;
const OLD_INPUT_NEEDED_SET: &str = r#"{"type":"session/inputNeededSet","request":{"kind":"toolAuthentication","id":"toolAuthentication:ahp-chat:/c1:turn-1:call-1","chat":"ahp-chat:/c1","turnId":"turn-1","toolCall":{"toolCallId":"call-1","toolName":"write_file","displayName":"Write file","contributor":{"kind":"mcp","customizationId":"plug/srv"},"invocationMessage":"Calling Write file","confirmed":"not-needed","status":"auth-required","auth":{"reason":"insufficientScope","oauthClient":{"clientId":"app"},"resource":{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"],"scopes_supported":["read","write"]},"requiredScopes":["read","write"],"description":"need write"}}}}"#;
const OLD_INPUT_NEEDED_REMOVED: &str =
    r#"{"type":"session/inputNeededRemoved","id":"toolAuthentication:ahp-chat:/c1:turn-1:call-1"}"#;
const OLD_COMPLETE_CONTENT: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":true,"pastTenseMessage":"Called Echo","content":[{"type":"text","text":"hi"},{"type":"embeddedResource","data":"AAA=","contentType":"image/png"},{"type":"embeddedResource","data":"BBB=","contentType":"application/octet-stream"},{"type":"embeddedResource","data":"YWJj","contentType":"text/markdown"},{"type":"embeddedResource","data":"AQID","contentType":"application/octet-stream"},{"type":"embeddedResource","data":"eA==","contentType":"text/plain"},{"type":"resource","uri":"file:///l.txt","sizeHint":3,"contentType":"text/plain"},{"type":"resource","uri":"file:///m.txt"},{"type":"widget","payload":{"z":1,"a":2}}],"structuredContent":{"ok":true,"n":1}}}"#;
const OLD_COMPLETE_IS_ERROR: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":false,"pastTenseMessage":"Failed: Echo","content":[{"type":"text","text":"it broke"},{"type":"text","text":"badly"}],"error":{"code":"tool_error","message":"it broke\nbadly"}}}"#;
const OLD_COMPLETE_IS_ERROR_EMPTY: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":false,"pastTenseMessage":"Failed: Echo","error":{"code":"tool_error","message":"the tool reported an error"}}}"#;
const OLD_COMPLETE_EMPTY: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":true,"pastTenseMessage":"Called Echo"}}"#;
const OLD_COMPLETE_HOST_ERROR: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":false,"pastTenseMessage":"Failed: Echo","error":{"code":"auth_required","data":{"code":-32007,"insufficientScope":true,"requiredScopes":["admin"]},"message":"refused"}}}"#;
const OLD_COMPLETE_CANCELLED: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":false,"pastTenseMessage":"Cancelled Echo","error":{"code":"cancelled","message":"aborted"}}}"#;
const OLD_COMPLETE_TIMEOUT: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":false,"pastTenseMessage":"Timed out: Echo","error":{"code":"timeout","message":"too slow"}}}"#;
/// The unparseable embedded resource (neither `blob` nor `text`) block, as
/// the old builder emitted it (verbatim, as unknown AHP content), in the
/// server's key order.
const OLD_COMPLETE_BARE_RESOURCE: &str = r#"{"type":"chat/toolCallComplete","turnId":"t","toolCallId":"x","result":{"success":true,"pastTenseMessage":"Called E","content":[{"type":"resource","resource":{"uri":"file:///e"}}]}}"#;

/// A call of a tool that has only `annotations.title` (the Playwright
/// server's `browser_tabs`), shown by that title (issue 10).
const GOLDEN_COMPLETE_ANNOTATIONS_TITLE: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":true,"pastTenseMessage":"Called Manage tabs","content":[{"type":"text","text":"ok"}]}}"#;
const GOLDEN_FAILED_ANNOTATIONS_TITLE: &str = r#"{"type":"chat/toolCallComplete","turnId":"turn-1","toolCallId":"call-1","result":{"success":false,"pastTenseMessage":"Timed out: Manage tabs","error":{"code":"timeout","message":"slow"}}}"#;
const GOLDEN_INPUT_NEEDED_ANNOTATIONS_TITLE: &str = r#"{"type":"session/inputNeededSet","request":{"kind":"toolAuthentication","id":"toolAuthentication:ahp-chat:/c1:turn-1:call-1","chat":"ahp-chat:/c1","turnId":"turn-1","toolCall":{"toolCallId":"call-1","toolName":"browser_tabs","displayName":"Manage tabs","contributor":{"kind":"mcp","customizationId":"plug/srv"},"invocationMessage":"Calling Manage tabs","confirmed":"not-needed","status":"auth-required","auth":{"reason":"required","resource":{"resource":"https://mcp.example/mcp"}}}}}"#;

fn ctx() -> ChatContext {
    ChatContext {
        chat: "ahp-chat:/c1".into(),
        turn_id: "turn-1".into(),
        tool_call_id: "call-1".into(),
        customization_id: "plug/srv".into(),
        meta: None,
    }
}

fn wire(action: &StateAction) -> String {
    serde_json::to_string(action).unwrap_or_else(|e| panic!("serialize: {e}"))
}

/// The requirement of the golden step-up actions, as JSON.
fn step_up_json() -> Value {
    json!({"reason": "insufficientScope", "oauthClient": {"clientId": "app"},
           "resource": {"resource": "https://mcp.example/mcp", "authorization_servers": ["https://as.example"], "scopes_supported": ["read", "write"]},
           "requiredScopes": ["read", "write"], "description": "need write"})
}

fn step_up() -> McpAuthRequirement {
    McpAuthRequirement::deserialize(&step_up_json()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn progress_actions_match_the_old_json() {
    let c = ctx();
    assert_eq!(
        wire(&progress_action(&c, 2.0, Some(5.0), Some("step 2"))),
        OLD_PROGRESS_WITH_TOTAL
    );
    assert_eq!(
        wire(&progress_action(&c, 0.5, None, None)),
        OLD_PROGRESS_BARE
    );
    assert_eq!(
        wire(&progress_action(&c, 3.0, Some(1e15), Some(""))),
        OLD_PROGRESS_EMPTY_MESSAGE
    );
}

#[test]
fn auth_required_actions_match_the_old_json() {
    let c = ctx();
    assert_eq!(wire(&auth_required(&c, &step_up())), OLD_AUTH_REQUIRED_FULL);
    let minimal: McpAuthRequirement = serde_json::from_value(
        json!({"reason": "required", "resource": {"resource": "https://mcp.example/mcp"}}),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        wire(&auth_required(&c, &minimal)),
        OLD_AUTH_REQUIRED_MINIMAL
    );
}

#[test]
fn auth_requirement_of_a_server_state_keeps_every_field() {
    // What the host has: the server's authRequired state (with its `kind` tag
    // living on the enum, not here).
    let state: McpServerAuthRequiredState =
        serde_json::from_value(step_up_json()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(auth_requirement(&state), step_up());
    assert_eq!(
        wire(&auth_required(&ctx(), &auth_requirement(&state))),
        OLD_AUTH_REQUIRED_FULL
    );
}

#[test]
fn auth_resolved_and_input_needed_actions_match_the_old_json() {
    let c = ctx();
    assert_eq!(wire(&auth_resolved_action(&c)), OLD_AUTH_RESOLVED);
    let call = PausedToolCall {
        tool_name: "write_file",
        display_name: "Write file",
        invocation_message: "Calling Write file",
    };
    assert_eq!(
        wire(&input_needed_set(&c, &call, &step_up())),
        OLD_INPUT_NEEDED_SET
    );
    assert_eq!(
        wire(&input_needed_removed_action(&c)),
        OLD_INPUT_NEEDED_REMOVED
    );
}

#[test]
fn complete_actions_for_results_match_the_old_json() {
    let c = ctx();
    let ok = json!({
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAA=", "mimeType": "image/png"},
            {"type": "audio", "data": "BBB="},
            {"type": "resource", "resource": {"uri": "file:///r.txt", "mimeType": "text/markdown", "text": "abc"}},
            {"type": "resource", "resource": {"uri": "file:///r.bin", "blob": "AQID"}},
            {"type": "resource", "resource": {"uri": "file:///t.txt", "text": "x"}},
            {"type": "resource_link", "uri": "file:///l.txt", "name": "l", "mimeType": "text/plain", "size": 3},
            {"type": "resource_link", "uri": "file:///m.txt", "name": "m"},
            {"type": "widget", "payload": {"z": 1, "a": 2}},
        ],
        "structuredContent": {"ok": true, "n": 1},
    });
    assert_eq!(
        wire(&complete_action(&c, "Echo", &Ok(ok))),
        OLD_COMPLETE_CONTENT
    );
    let broke = json!({"content": [{"type": "text", "text": "it broke"}, {"type": "text", "text": "badly"}], "isError": true});
    assert_eq!(
        wire(&complete_action(&c, "Echo", &Ok(broke))),
        OLD_COMPLETE_IS_ERROR
    );
    let bare_error = json!({"isError": true, "structuredContent": [1]});
    assert_eq!(
        wire(&complete_action(&c, "Echo", &Ok(bare_error))),
        OLD_COMPLETE_IS_ERROR_EMPTY
    );
    assert_eq!(
        wire(&complete_action(&c, "Echo", &Ok(json!({})))),
        OLD_COMPLETE_EMPTY
    );
    let c2 = ChatContext {
        chat: "c".into(),
        turn_id: "t".into(),
        tool_call_id: "x".into(),
        customization_id: "s".into(),
        meta: None,
    };
    let bare = json!({"content": [{"type": "resource", "resource": {"uri": "file:///e"}}]});
    assert_eq!(
        wire(&complete_action(&c2, "E", &Ok(bare))),
        OLD_COMPLETE_BARE_RESOURCE
    );
}

#[test]
fn complete_actions_for_host_errors_match_the_old_json() {
    let c = ctx();
    let refused =
        HostError::new(ErrorCode::AuthRequired, "refused").with_detail(ErrorDetail::Challenge {
            insufficient_scope: true,
            required_scopes: vec!["admin".to_owned()],
        });
    assert_eq!(
        wire(&complete_action(&c, "Echo", &Err(refused))),
        OLD_COMPLETE_HOST_ERROR
    );
    let cancelled = HostError::new(ErrorCode::Cancelled, "aborted");
    assert_eq!(
        wire(&complete_action(&c, "Echo", &Err(cancelled))),
        OLD_COMPLETE_CANCELLED
    );
    let slow = HostError::new(ErrorCode::Timeout, "too slow");
    assert_eq!(
        wire(&complete_action(&c, "Echo", &Err(slow))),
        OLD_COMPLETE_TIMEOUT
    );
}

/// Every golden action reads back as the same typed action (the reducers'
/// types accept what the host emits).
#[test]
fn golden_actions_round_trip_through_ahp_types() {
    for text in [
        OLD_PROGRESS_WITH_TOTAL,
        OLD_AUTH_REQUIRED_FULL,
        OLD_AUTH_RESOLVED,
        OLD_INPUT_NEEDED_SET,
        OLD_INPUT_NEEDED_REMOVED,
        OLD_COMPLETE_CONTENT,
        OLD_COMPLETE_HOST_ERROR,
        OLD_COMPLETE_BARE_RESOURCE,
    ] {
        let action: StateAction =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(wire(&action), text);
    }
}

#[test]
fn maps_every_content_kind() {
    let r = json!({
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAA=", "mimeType": "image/png"},
            {"type": "audio", "data": "BBB=", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///r.txt", "mimeType": "text/plain", "text": "abc"}},
            {"type": "resource_link", "uri": "file:///l.txt", "name": "l", "mimeType": "text/plain", "size": 3},
        ],
        "structuredContent": {"ok": true},
    });
    let typed = map_result("echo", &r);
    let m = serde_json::to_value(&typed).unwrap_or_default();
    assert_eq!(m["success"], true);
    assert_eq!(
        m["content"][1],
        json!({"type": "embeddedResource", "data": "AAA=", "contentType": "image/png"})
    );
    assert_eq!(m["content"][3]["data"], "YWJj");
    assert_eq!(
        m["content"][4],
        json!({"type": "resource", "uri": "file:///l.txt", "contentType": "text/plain", "sizeHint": 3})
    );
    assert_eq!(m["structuredContent"], json!({"ok": true}));
    // The reducer's types accept it.
    let back: ToolCallResult = serde_json::from_value(m).unwrap();
    assert_eq!(back, typed);
}

#[test]
fn is_error_becomes_failed_result() {
    let m = serde_json::to_value(map_result(
        "t",
        &json!({"content": [{"type": "text", "text": "it broke"}], "isError": true}),
    ))
    .unwrap_or_default();
    assert_eq!(m["success"], false);
    assert_eq!(
        m["error"],
        json!({"code": "tool_error", "message": "it broke"})
    );
}

#[test]
fn progress_text() {
    let ctx = ChatContext {
        chat: "c".into(),
        turn_id: "t".into(),
        tool_call_id: "x".into(),
        customization_id: "s".into(),
        meta: None,
    };
    let v = serde_json::to_value(progress_action(&ctx, 2.0, Some(5.0), Some("step 2"))).unwrap();
    assert_eq!(v["content"][0]["text"], "2/5 step 2");
}

/// The display name of AHP tool-call messages, as the host resolves it from
/// the listed tool (`title`, then `annotations.title`, then `name`).
fn shown_as(raw: Value) -> String {
    let name = raw["name"].as_str().unwrap_or_default().to_owned();
    let listed = crate::catalogue::ServerTools::build("plug/srv", vec![raw], &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let tool = listed
        .get(&name)
        .unwrap_or_else(|| panic!("{name} not listed"));
    tool.display_title().unwrap_or(&name).to_owned()
}

#[test]
fn tool_call_messages_show_title_then_annotations_title_then_name() {
    let tabs = json!({"name": "browser_tabs", "annotations": {"title": "Manage tabs", "readOnlyHint": false},
                      "inputSchema": {"type": "object"}});
    let display = shown_as(tabs);
    let c = ctx();
    let ok = json!({"content": [{"type": "text", "text": "ok"}]});
    assert_eq!(
        wire(&complete_action(&c, &display, &Ok(ok))),
        GOLDEN_COMPLETE_ANNOTATIONS_TITLE
    );
    let slow = HostError::new(ErrorCode::Timeout, "slow");
    assert_eq!(
        wire(&complete_action(&c, &display, &Err(slow))),
        GOLDEN_FAILED_ANNOTATIONS_TITLE
    );
    let call = PausedToolCall {
        tool_name: "browser_tabs",
        display_name: &display,
        invocation_message: &format!("Calling {display}"),
    };
    let required: McpAuthRequirement = serde_json::from_value(
        json!({"reason": "required", "resource": {"resource": "https://mcp.example/mcp"}}),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        wire(&input_needed_set(&c, &call, &required)),
        GOLDEN_INPUT_NEEDED_ANNOTATIONS_TITLE
    );
    // `title` wins over `annotations.title`; the name is the last resort.
    let both = json!({"name": "t", "title": "Title", "annotations": {"title": "Annotation"}});
    assert_eq!(shown_as(both), "Title");
    assert_eq!(shown_as(json!({"name": "plain"})), "plain");
}
