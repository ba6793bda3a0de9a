//! Form → AHP questions and AHP answers ↔ MCP content.

use std::collections::HashMap;

use ahp_types::state::{ChatInputAnswer, ChatInputResponseKind};
use serde_json::{json, Value};

use super::answers::{answers_from_content, content_from_answers, elicit_result, response_kind};
use super::input::{input_needed_set, input_request};

fn form() -> Value {
    // Keys deliberately not in alphabetical order.
    json!({
        "type": "object",
        "properties": {
            "zip": {"type": "string", "minLength": 5, "maxLength": 5, "description": "Post code"},
            "count": {"type": "integer", "minimum": 1, "default": 2},
            "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"], "default": "m"},
            "extras": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "Extra X"}]}, "maxItems": 1},
            "ok": {"type": "boolean", "title": "OK?"},
            "ratio": {"type": "number", "maximum": 1.5}
        },
        "required": ["zip", "ok"]
    })
}

fn answers(value: Value) -> HashMap<String, ChatInputAnswer> {
    serde_json::from_value(value).unwrap_or_default()
}

#[test]
fn questions_follow_the_property_order_with_their_constraints() {
    let request = serde_json::to_value(input_request("r1", "Order", &form())).unwrap_or_default();
    assert_eq!(
        request,
        json!({
            "id": "r1",
            "message": "Order",
            "questions": [
                {"kind": "text", "id": "zip", "message": "Post code", "required": true, "min": 5, "max": 5},
                {"kind": "integer", "id": "count", "message": "count", "required": false, "min": 1.0, "defaultValue": 2.0},
                {"kind": "single-select", "id": "size", "message": "size", "required": false, "options": [
                    {"id": "s", "label": "Small"}, {"id": "m", "label": "Medium", "recommended": true}]},
                {"kind": "multi-select", "id": "extras", "message": "extras", "required": false,
                 "options": [{"id": "x", "label": "Extra X"}], "max": 1},
                {"kind": "boolean", "id": "ok", "title": "OK?", "message": "OK?", "required": true},
                {"kind": "number", "id": "ratio", "message": "ratio", "required": false, "max": 1.5}
            ]
        })
    );
}

#[test]
fn the_session_entry_mirrors_the_request_under_a_chat_scoped_id() {
    let request = input_request("tc/elicitation/1", "Hi", &form());
    let action =
        serde_json::to_value(input_needed_set("ahp-chat:/c", &request)).unwrap_or_default();
    assert_eq!(action["type"], "session/inputNeededSet");
    assert_eq!(action["request"]["kind"], "chatInput");
    assert_eq!(
        action["request"]["id"],
        "chatInput:ahp-chat:/c:tc/elicitation/1"
    );
    assert_eq!(action["request"]["chat"], "ahp-chat:/c");
    assert_eq!(action["request"]["request"]["id"], "tc/elicitation/1");
}

#[test]
fn typed_answers_become_content_in_schema_order_with_defaults() {
    let given = answers(json!({
        "ok": {"state": "draft", "value": {"kind": "boolean", "value": false}},
        "zip": {"state": "submitted", "value": {"kind": "text", "value": "12345"}},
        "extras": {"state": "submitted", "value": {"kind": "selected-many", "value": ["x"]}},
        "ratio": {"state": "skipped"},
        "size": {"state": "submitted", "value": {"kind": "selected", "value": "s"}}
    }));
    let content = content_from_answers(&form(), &given).unwrap_or_default();
    assert_eq!(
        serde_json::to_string(&content).unwrap_or_default(),
        r#"{"zip":"12345","size":"s","extras":["x"],"ok":false,"count":2}"#
    );
    let result = elicit_result(&form(), ChatInputResponseKind::Accept, &given);
    assert_eq!(result.map(|r| r["action"].clone()), Ok(json!("accept")));
}

#[test]
fn answers_that_do_not_fit_are_refused_naming_the_property() {
    let cases = [
        (
            json!({"zip": {"state": "submitted", "value": {"kind": "number", "value": 1.0}}, "ok": {"state": "submitted", "value": {"kind": "boolean", "value": true}}}),
            r#"the answer to "zip" must be a text"#,
        ),
        (
            json!({"zip": {"state": "submitted", "value": {"kind": "text", "value": "1"}}, "ok": {"state": "submitted", "value": {"kind": "boolean", "value": true}},
                "count": {"state": "submitted", "value": {"kind": "number", "value": 1.5}}}),
            r#"the answer to "count" must be an integer"#,
        ),
        (
            json!({"zip": {"state": "submitted", "value": {"kind": "text", "value": "1"}}, "ok": {"state": "submitted", "value": {"kind": "boolean", "value": true}},
                "extras": {"state": "submitted", "value": {"kind": "selected-many", "value": ["y"]}}}),
            r#"the answer to "extras" must be a selection of one of ["x"]"#,
        ),
        (
            json!({"zip": {"state": "submitted", "value": {"kind": "text", "value": "1"}}}),
            r#""ok" is required"#,
        ),
        (
            json!({"nope": {"state": "submitted", "value": {"kind": "text", "value": "1"}}}),
            r#"the form has no question "nope""#,
        ),
    ];
    for (given, reason) in cases {
        assert_eq!(
            content_from_answers(&form(), &answers(given)),
            Err(reason.to_owned())
        );
    }
}

#[test]
fn decline_and_cancel_carry_no_content() {
    let none = HashMap::new();
    let decline = elicit_result(&form(), ChatInputResponseKind::Decline, &none);
    assert_eq!(decline, Ok(json!({"action": "decline"})));
    let cancel = elicit_result(&form(), ChatInputResponseKind::Cancel, &none);
    assert_eq!(cancel, Ok(json!({"action": "cancel"})));
    assert_eq!(response_kind(Some("accept")), ChatInputResponseKind::Accept);
    assert_eq!(
        response_kind(Some("decline")),
        ChatInputResponseKind::Decline
    );
    assert_eq!(response_kind(None), ChatInputResponseKind::Cancel);
}

#[test]
fn an_app_answer_becomes_submitted_answers() {
    let content =
        json!({"zip": "12345", "size": "m", "count": 3, "ok": true, "extras": ["x"], "other": 1});
    let got = answers_from_content(&form(), content.as_object().unwrap_or(&Default::default()));
    let expected = answers(json!({
        "zip": {"state": "submitted", "value": {"kind": "text", "value": "12345"}},
        "size": {"state": "submitted", "value": {"kind": "selected", "value": "m"}},
        "count": {"state": "submitted", "value": {"kind": "number", "value": 3.0}},
        "ok": {"state": "submitted", "value": {"kind": "boolean", "value": true}},
        "extras": {"state": "submitted", "value": {"kind": "selected-many", "value": ["x"]}}
    }));
    assert_eq!(got, expected);
}

#[test]
fn a_url_elicitation_is_a_request_with_its_url_and_site_and_takes_no_answers() {
    use super::answers::url_elicit_result;
    use super::input::url_input_request;
    use crate::requests::url_elicitation::UrlElicitation;
    let url = UrlElicitation::check("Link it", "https://id.example/c?code=s", "e1")
        .unwrap_or_else(|e| panic!("{e}"));
    let request = url_input_request("tc/elicitation/3", &url);
    let shown = serde_json::to_value(&request).unwrap_or_default();
    assert_eq!(
        shown,
        json!({
            "id": "tc/elicitation/3",
            "message": "Link it\n\nSite: https://id.example",
            "url": "https://id.example/c?code=s"
        })
    );
    let set = serde_json::to_value(input_needed_set("ahp-chat:/c", &request)).unwrap_or_default();
    assert_eq!(
        set["request"]["request"]["url"],
        "https://id.example/c?code=s"
    );
    for (kind, action) in [
        (ChatInputResponseKind::Accept, "accept"),
        (ChatInputResponseKind::Decline, "decline"),
        (ChatInputResponseKind::Cancel, "cancel"),
    ] {
        let result = url_elicit_result(kind, &HashMap::new());
        assert_eq!(result, Ok(json!({ "action": action })));
    }
    let given =
        answers(json!({"x": {"state": "submitted", "value": {"kind": "text", "value": "y"}}}));
    let refused = url_elicit_result(ChatInputResponseKind::Accept, &given);
    assert!(refused.is_err_and(|why| why.contains("no questions")));
}
