//! A form elicitation of an AHP tool call as an AHP chat input request (AHP
//! 1.0 "Chat channel › Input requests", `SessionChatInputRequest`; MCP
//! 2025-11-25 "Client Features › Elicitation", form mode): the questions
//! built from the `requestedSchema`, in the order of its `properties` (as
//! the server sent them), and the actions that publish, complete and
//! withdraw the request.
//!
//! Question per property (`id` = the property name; `title` = its `title`;
//! `message` = its `description`, else its `title`, else its name;
//! `required` = listed in `required`):
//!
//! | property schema | question |
//! | --- | --- |
//! | `enum` (labels `enumNames`), or `oneOf`/`anyOf` of `{const, title}` | `single-select` (option `id` = the value; `recommended` for the `default`) |
//! | `type: "array"` whose `items` are such an enum | `multi-select` (`min`/`max` = `minItems`/`maxItems`) |
//! | `type: "string"` | `text` (`format`, `min`/`max` = `minLength`/`maxLength`, default) |
//! | `type: "number"` / `"integer"` | `number` / `integer` (`min`/`max` = `minimum`/`maximum`, default) |
//! | `type: "boolean"` | `boolean` (default) |
//! | anything else | `text` |

use std::collections::HashMap;

use ahp_types::actions::{
    ChatInputCompletedAction, ChatInputRequestedAction, SessionInputNeededRemovedAction,
    SessionInputNeededSetAction, StateAction,
};
use ahp_types::state::{
    ChatInputAnswer, ChatInputBooleanQuestion, ChatInputMultiSelectQuestion,
    ChatInputNumberQuestion, ChatInputOption, ChatInputQuestion, ChatInputRequest,
    ChatInputResponseKind, ChatInputSingleSelectQuestion, ChatInputTextQuestion,
    SessionChatInputRequest, SessionInputRequest,
};
use serde_json::{Map, Value};

use crate::requests::url_elicitation::UrlElicitation;

/// What kind of value one property of a `requestedSchema` takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    /// A string (`type: "string"`, or an unknown type).
    Text,
    /// A number.
    Number,
    /// An integer.
    Integer,
    /// A boolean.
    Boolean,
    /// One of these values (id, label).
    Single(Vec<(String, String)>),
    /// Some of these values (id, label).
    Multi(Vec<(String, String)>),
}

impl Field {
    /// The field a property schema describes (see the module table).
    pub(crate) fn of(property: &Value) -> Self {
        if let Some(options) = options(property) {
            return Self::Single(options);
        }
        match property.get("type").and_then(Value::as_str) {
            Some("array") => property
                .get("items")
                .and_then(options)
                .map_or(Self::Text, Self::Multi),
            Some("number") => Self::Number,
            Some("integer") => Self::Integer,
            Some("boolean") => Self::Boolean,
            _ => Self::Text,
        }
    }
}

/// The enum values (with labels) of a property schema, if it is an enum.
fn options(schema: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        let options = values.iter().enumerate().filter_map(|(i, v)| {
            let id = v.as_str()?.to_owned();
            let label = names
                .and_then(|n| n.get(i))
                .and_then(Value::as_str)
                .map_or_else(|| id.clone(), str::to_owned);
            Some((id, label))
        });
        return Some(options.collect());
    }
    let titled = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let options = titled.iter().filter_map(|o| {
        let id = o.get("const")?.as_str()?.to_owned();
        let label = o
            .get("title")
            .and_then(Value::as_str)
            .map_or_else(|| id.clone(), str::to_owned);
        Some((id, label))
    });
    Some(options.collect())
}

/// The `properties` of a `requestedSchema`, in the order the server sent them.
pub(crate) fn properties(schema: &Value) -> impl Iterator<Item = (&String, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::iter)
}

/// The `required` property names of a `requestedSchema`.
pub(crate) fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The chat input request `id` for an elicitation with `message` and
/// `requested_schema` (one question per property, see the module table).
pub fn input_request(id: &str, message: &str, requested_schema: &Value) -> ChatInputRequest {
    let required = required(requested_schema);
    let questions = properties(requested_schema)
        .map(|(name, property)| question(name, property, required.contains(&name.as_str())))
        .collect();
    ChatInputRequest {
        id: id.to_owned(),
        message: Some(message.to_owned()),
        url: None,
        questions: Some(questions),
        answers: None,
    }
}

/// The chat input request `id` for a URL-mode elicitation (SEP-1036): its
/// `url` as the server sent it (the user must open it; the host never
/// does), no questions, and the server's message followed by the URL's
/// origin ([`UrlElicitation::ahp_message`]).
pub fn url_input_request(id: &str, url: &UrlElicitation) -> ChatInputRequest {
    ChatInputRequest {
        id: id.to_owned(),
        message: Some(url.ahp_message()),
        url: Some(url.url.clone()),
        questions: None,
        answers: None,
    }
}

/// One question for property `id`.
fn question(id: &str, property: &Value, required: bool) -> ChatInputQuestion {
    let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
    let int = |key: &str| property.get(key).and_then(Value::as_i64);
    let float = |key: &str| property.get(key).and_then(Value::as_f64);
    let id = id.to_owned();
    let title = text("title");
    let message = text("description")
        .or_else(|| title.clone())
        .unwrap_or_else(|| id.clone());
    let required = Some(required);
    let number = |id, title, message| ChatInputNumberQuestion {
        id,
        title,
        message,
        required,
        min: float("minimum"),
        max: float("maximum"),
        default_value: float("default"),
    };
    match Field::of(property) {
        Field::Single(options) => {
            let default = text("default");
            ChatInputQuestion::SingleSelect(ChatInputSingleSelectQuestion {
                id,
                title,
                message,
                required,
                options: chat_options(options, default.as_deref()),
                allow_freeform_input: None,
            })
        }
        Field::Multi(options) => ChatInputQuestion::MultiSelect(ChatInputMultiSelectQuestion {
            id,
            title,
            message,
            required,
            options: chat_options(options, None),
            allow_freeform_input: None,
            min: int("minItems"),
            max: int("maxItems"),
        }),
        Field::Number => ChatInputQuestion::Number(number(id, title, message)),
        Field::Integer => ChatInputQuestion::Integer(number(id, title, message)),
        Field::Boolean => ChatInputQuestion::Boolean(ChatInputBooleanQuestion {
            id,
            title,
            message,
            required,
            default_value: property.get("default").and_then(Value::as_bool),
        }),
        Field::Text => ChatInputQuestion::Text(ChatInputTextQuestion {
            id,
            title,
            message,
            required,
            format: text("format"),
            min: int("minLength"),
            max: int("maxLength"),
            default_value: text("default"),
        }),
    }
}

fn chat_options(options: Vec<(String, String)>, default: Option<&str>) -> Vec<ChatInputOption> {
    options
        .into_iter()
        .map(|(id, label)| ChatInputOption {
            recommended: (default == Some(id.as_str())).then_some(true),
            id,
            label,
            description: None,
        })
        .collect()
}

/// The `session/inputNeeded` entry id of chat input request `request_id`
/// on `chat`: `chatInput:<chat>:<requestId>`.
pub fn input_entry_id(chat: &str, request_id: &str) -> String {
    format!("chatInput:{chat}:{request_id}")
}

/// `chat/inputRequested` (chat channel): the input request part appears in
/// the chat's active turn.
pub fn input_requested_action(request: &ChatInputRequest) -> StateAction {
    StateAction::ChatInputRequested(ChatInputRequestedAction {
        request: request.clone(),
    })
}

/// `session/inputNeededSet` of kind `chatInput` (id [`input_entry_id`]):
/// the request mirrored on the session for clients that watch only it.
pub fn input_needed_set(chat: &str, request: &ChatInputRequest) -> StateAction {
    let entry = SessionChatInputRequest {
        id: input_entry_id(chat, &request.id),
        chat: chat.to_owned(),
        request: request.clone(),
    };
    StateAction::SessionInputNeededSet(Box::new(SessionInputNeededSetAction {
        request: SessionInputRequest::ChatInput(entry),
    }))
}

/// `session/inputNeededRemoved` for chat input request `request_id` on `chat`.
pub fn input_needed_removed(chat: &str, request_id: &str) -> StateAction {
    StateAction::SessionInputNeededRemoved(SessionInputNeededRemovedAction {
        id: input_entry_id(chat, request_id),
    })
}

/// `chat/inputCompleted` emitted by the host (chat channel): the request
/// was answered by the app's `elicitation` handler (`response` its action,
/// `answers` its content), or withdrawn because its tool call or the
/// server's request ended (`cancel`, no answers).
pub fn input_completed_action(
    request_id: &str,
    response: ChatInputResponseKind,
    answers: Option<HashMap<String, ChatInputAnswer>>,
) -> StateAction {
    StateAction::ChatInputCompleted(ChatInputCompletedAction {
        request_id: request_id.to_owned(),
        response,
        answers: answers.filter(|a| !a.is_empty()),
    })
}
