//! Answers of an AHP chat input request ↔ the `content` of an MCP
//! `ElicitResult` (form mode), for the questions [`super::input`] built from
//! a `requestedSchema`.
//!
//! An AHP client's answers become content checked against the requested
//! schema's types ([`content_from_answers`]); an answer given by the app's
//! `elicitation` handler becomes AHP answers for the transcript
//! ([`answers_from_content`]).

use std::collections::HashMap;

use ahp_types::state::{
    ChatInputAnswer, ChatInputAnswerValue, ChatInputAnswered, ChatInputBooleanAnswerValue,
    ChatInputNumberAnswerValue, ChatInputResponseKind, ChatInputSelectedAnswerValue,
    ChatInputSelectedManyAnswerValue, ChatInputTextAnswerValue,
};
use serde_json::{json, Map, Value};

use super::input::{properties, required, Field};
use crate::requests::apply_elicitation_defaults;

/// The MCP `ElicitResult` for an AHP client's `chat/inputCompleted`:
/// `decline` and `cancel` as they are; `accept` with the content of
/// [`content_from_answers`].
///
/// # Errors
/// The reason the answers do not fit the schema (see [`content_from_answers`]).
pub fn elicit_result(
    requested_schema: &Value,
    response: ChatInputResponseKind,
    answers: &HashMap<String, ChatInputAnswer>,
) -> Result<Value, String> {
    Ok(match response {
        ChatInputResponseKind::Decline => json!({ "action": "decline" }),
        ChatInputResponseKind::Cancel => json!({ "action": "cancel" }),
        ChatInputResponseKind::Accept => {
            let content = content_from_answers(requested_schema, answers)?;
            json!({ "action": "accept", "content": content })
        }
    })
}

/// The MCP `ElicitResult` for an AHP client's `chat/inputCompleted` of a
/// URL-mode elicitation (SEP-1036): `{action}` alone, `accept` meaning the
/// user consented to open the URL (the spec leaves `content` out).
///
/// # Errors
/// The request has no questions: any answer is refused.
pub fn url_elicit_result(
    response: ChatInputResponseKind,
    answers: &HashMap<String, ChatInputAnswer>,
) -> Result<Value, String> {
    if let Some(question) = answers.keys().next() {
        return Err(format!(
            "a URL elicitation has no questions (answer {question:?} refused): complete it with \
             accept, decline or cancel alone"
        ));
    }
    let action = match response {
        ChatInputResponseKind::Accept => "accept",
        ChatInputResponseKind::Decline => "decline",
        ChatInputResponseKind::Cancel => "cancel",
    };
    Ok(json!({ "action": action }))
}

/// The `content` of an accepted elicitation from AHP answers (draft and
/// submitted answers count; skipped ones are left out), members in the
/// schema's property order. Each value must have its property's type: a
/// string (`text`), a number, an integer (a whole `number`), a boolean, one
/// of the enum values (`selected`), or enum values (`selected-many`). Then
/// the schema's defaults fill missing properties (SEP-1034) and every
/// `required` property must be present.
///
/// # Errors
/// A message naming the property: an answer to a question the form does not
/// have, a value of the wrong type, a value outside the enum, or a missing
/// required property.
pub fn content_from_answers(
    requested_schema: &Value,
    answers: &HashMap<String, ChatInputAnswer>,
) -> Result<Map<String, Value>, String> {
    let schema_properties: Vec<_> = properties(requested_schema).collect();
    if let Some(unknown) = answers
        .keys()
        .find(|id| !schema_properties.iter().any(|(name, _)| name == id))
    {
        return Err(format!("the form has no question {unknown:?}"));
    }
    let mut content = Map::new();
    for (name, property) in schema_properties {
        let value = match answers.get(name) {
            Some(ChatInputAnswer::Draft(a) | ChatInputAnswer::Submitted(a)) => &a.value,
            Some(ChatInputAnswer::Skipped(_)) | None => continue,
        };
        let value = convert(&Field::of(property), value)
            .map_err(|expected| format!("the answer to {name:?} must be {expected}"))?;
        content.insert(name.clone(), value);
    }
    apply_elicitation_defaults(requested_schema, &mut content);
    if let Some(missing) = required(requested_schema)
        .into_iter()
        .find(|r| !content.contains_key(*r))
    {
        return Err(format!("{missing:?} is required"));
    }
    Ok(content)
}

/// One answer value as the JSON value of a `field`; `Err` says what was expected.
fn convert(field: &Field, value: &ChatInputAnswerValue) -> Result<Value, String> {
    let one_of = |options: &[(String, String)]| {
        let ids: Vec<&str> = options.iter().map(|(id, _)| id.as_str()).collect();
        format!("one of {ids:?}")
    };
    let known = |options: &[(String, String)], v: &str| options.iter().any(|(id, _)| id == v);
    match (field, value) {
        (Field::Text, ChatInputAnswerValue::Text(t)) => Ok(Value::from(t.value.clone())),
        (Field::Text, _) => Err("a text".to_owned()),
        (Field::Number, ChatInputAnswerValue::Number(n)) => Ok(json!(n.value)),
        (Field::Number, _) => Err("a number".to_owned()),
        (Field::Integer, ChatInputAnswerValue::Number(n))
            if n.value.fract() == 0.0 && n.value.abs() < 9.0e15 =>
        {
            Ok(Value::from(n.value as i64))
        }
        (Field::Integer, _) => Err("an integer".to_owned()),
        (Field::Boolean, ChatInputAnswerValue::Boolean(b)) => Ok(Value::from(b.value)),
        (Field::Boolean, _) => Err("a boolean".to_owned()),
        (Field::Single(options), ChatInputAnswerValue::Selected(s)) if known(options, &s.value) => {
            Ok(Value::from(s.value.clone()))
        }
        (Field::Single(options), _) => Err(one_of(options)),
        (Field::Multi(options), ChatInputAnswerValue::SelectedMany(s))
            if s.value.iter().all(|v| known(options, v)) =>
        {
            Ok(Value::from(s.value.clone()))
        }
        (Field::Multi(options), _) => Err(format!("a selection of {}", one_of(options))),
    }
}

/// The AHP answers (`submitted`) for the content of an app handler's
/// accepted elicitation: one per property of the schema that `content`
/// has, as the value its question takes; values that fit no answer kind
/// (objects, nested arrays) are left out.
pub fn answers_from_content(
    requested_schema: &Value,
    content: &Map<String, Value>,
) -> HashMap<String, ChatInputAnswer> {
    properties(requested_schema)
        .filter_map(|(name, property)| {
            let value = answer_value(&Field::of(property), content.get(name)?)?;
            let answer = ChatInputAnswer::Submitted(ChatInputAnswered { value });
            Some((name.clone(), answer))
        })
        .collect()
}

fn answer_value(field: &Field, value: &Value) -> Option<ChatInputAnswerValue> {
    Some(match value {
        Value::String(s) if matches!(field, Field::Single(_)) => {
            ChatInputAnswerValue::Selected(ChatInputSelectedAnswerValue {
                value: s.clone(),
                freeform_values: None,
            })
        }
        Value::String(s) => {
            ChatInputAnswerValue::Text(ChatInputTextAnswerValue { value: s.clone() })
        }
        Value::Number(n) => {
            ChatInputAnswerValue::Number(ChatInputNumberAnswerValue { value: n.as_f64()? })
        }
        Value::Bool(b) => ChatInputAnswerValue::Boolean(ChatInputBooleanAnswerValue { value: *b }),
        Value::Array(items) => {
            let value = items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?;
            ChatInputAnswerValue::SelectedMany(ChatInputSelectedManyAnswerValue {
                value,
                freeform_values: None,
            })
        }
        Value::Null | Value::Object(_) => return None,
    })
}

/// The AHP response kind of an MCP `ElicitResult` `action` (`accept`,
/// `decline`; anything else is `cancel`).
pub fn response_kind(action: Option<&str>) -> ChatInputResponseKind {
    match action {
        Some("accept") => ChatInputResponseKind::Accept,
        Some("decline") => ChatInputResponseKind::Decline,
        _ => ChatInputResponseKind::Cancel,
    }
}
