//! Sampling with tools (SEP-1577; MCP 2025-11-25 "Client Features ›
//! Sampling": "Tools in Sampling", "Message Content Constraints", "Error
//! Handling"): what the host checks on a `sampling/createMessage` before
//! the app's `sampling` handler sees it, and on the handler's answer
//! before the server does.
//!
//! The host declares `sampling: {tools: {}}` only when the app's handler
//! says it supports tools ([`super::RequestHandler::sampling_tools`], JS
//! `handlers: {sampling: {handler, tools: true}}`). Then `tools`,
//! `toolChoice`, `tool_use` and `tool_result` content pass through to the
//! handler and back unchanged.
//!
//! A request is refused ([`check_request`], sent back as JSON-RPC `-32602`
//! Invalid params, the code the spec gives for malformed tool messages)
//! when:
//! - it has `tools` or `toolChoice`, or `tool_use` / `tool_result`
//!   content, and the host did not declare `sampling.tools` ("Servers MUST
//!   NOT send tool-enabled sampling requests to Clients that have not
//!   declared support");
//! - a `tool_use` block is in a user message or a `tool_result` block in an
//!   assistant message;
//! - a message with `tool_result` content holds anything else;
//! - a `tool_result` answers no earlier `tool_use`, or a `tool_use` is left
//!   without its `tool_result` ("Tool Use and Result Balance").
//!
//! The last three are rmcp's `CreateMessageRequestParams::validate`. The
//! handler's answer is refused ([`check_result`], `-32603` to the server)
//! when its role is not `assistant`, it holds `tool_result` content, or a
//! `tool_use` block the request did not allow (no `tools`, `toolChoice:
//! {mode: "none"}`, a name not among the request's tools, an empty or
//! repeated id).

#![allow(deprecated)] // sampling: SEP-2577 deprecates it; servers still send it

use std::collections::HashSet;

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, SamplingMessageContentBlock as Block,
    ToolChoiceMode,
};

/// Checks a `sampling/createMessage` request; `tools_declared` says whether
/// the host declared `sampling.tools`.
///
/// # Errors
/// Why the request is refused (the message of the `-32602` answer).
pub fn check_request(
    params: &CreateMessageRequestParams,
    tools_declared: bool,
) -> Result<(), String> {
    if !tools_declared {
        let named = match (&params.tools, &params.tool_choice) {
            (Some(_), _) => Some("`tools`"),
            (None, Some(_)) => Some("`toolChoice`"),
            (None, None) => None,
        };
        let content = params.messages.iter().flat_map(|m| m.content.iter());
        let tool_content = content
            .filter_map(|block| match block {
                Block::ToolUse(_) => Some("`tool_use` content"),
                Block::ToolResult(_) => Some("`tool_result` content"),
                _ => None,
            })
            .next();
        if let Some(what) = named.or(tool_content) {
            return Err(format!(
                "the request has {what}, but this client did not declare the sampling.tools \
                 capability (SEP-1577)"
            ));
        }
    }
    params.validate()
}

/// Checks the app handler's `result` to the request `params`.
///
/// # Errors
/// Why the answer is refused (the message of the `-32603` answer).
pub fn check_result(
    params: &CreateMessageRequestParams,
    result: &CreateMessageResult,
) -> Result<(), String> {
    result.validate()?;
    let offered: Option<HashSet<&str>> = params
        .tools
        .as_ref()
        .map(|tools| tools.iter().map(|t| t.name.as_ref()).collect());
    let none = params
        .tool_choice
        .as_ref()
        .is_some_and(|c| c.mode == Some(ToolChoiceMode::None));
    let mut ids = HashSet::new();
    for block in result.message.content.iter() {
        match block {
            Block::ToolResult(_) => {
                return Err("an assistant message cannot hold `tool_result` content".to_owned())
            }
            Block::ToolUse(_) if offered.is_none() => {
                return Err("`tool_use` content, but the request offered no tools".to_owned())
            }
            Block::ToolUse(_) if none => {
                return Err("`tool_use` content, but the request's toolChoice is `none`".to_owned())
            }
            Block::ToolUse(u)
                if !offered
                    .as_ref()
                    .is_some_and(|o| o.contains(u.name.as_str())) =>
            {
                return Err(format!(
                    "`tool_use` of {:?}, a tool the request did not offer",
                    u.name
                ))
            }
            Block::ToolUse(u) if u.id.is_empty() || !ids.insert(u.id.as_str()) => {
                return Err(format!("`tool_use` id {:?} is empty or repeated", u.id))
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn params(v: Value) -> CreateMessageRequestParams {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    fn result(v: Value) -> CreateMessageResult {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    fn weather() -> Value {
        json!({"name": "get_weather", "inputSchema": {"type": "object"}})
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": {"type": "text", "text": text}})
    }

    #[test]
    fn tools_need_the_declared_capability() {
        let with_tools =
            params(json!({"messages": [user("hi")], "maxTokens": 5, "tools": [weather()]}));
        let refused = check_request(&with_tools, false);
        assert!(refused.is_err_and(|m| m.contains("`tools`") && m.contains("sampling.tools")));
        assert_eq!(check_request(&with_tools, true), Ok(()));
        let choice = params(
            json!({"messages": [user("hi")], "maxTokens": 5, "toolChoice": {"mode": "auto"}}),
        );
        assert!(check_request(&choice, false).is_err_and(|m| m.contains("`toolChoice`")));
        let plain = params(json!({"messages": [user("hi")], "maxTokens": 5}));
        assert_eq!(check_request(&plain, false), Ok(()));
    }

    #[test]
    fn tool_results_must_answer_tool_uses_and_stand_alone() {
        let use_then = |results: Value| {
            params(json!({"maxTokens": 5, "tools": [weather()], "messages": [
                user("weather?"),
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "a", "name": "get_weather", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "get_weather", "input": {}}]},
                {"role": "user", "content": results}]}))
        };
        let result = |id: &str| json!({"type": "tool_result", "toolUseId": id, "content": []});
        assert_eq!(
            check_request(&use_then(json!([result("a"), result("b")])), true),
            Ok(())
        );
        let missing = check_request(&use_then(json!([result("a")])), true);
        assert!(
            missing.is_err_and(|m| m.contains("not balanced")),
            "one result missing"
        );
        let stray = check_request(
            &use_then(json!([result("a"), result("b"), result("c")])),
            true,
        );
        assert!(stray.is_err_and(|m| m.contains("no matching ToolUse")));
        let mixed = json!([result("a"), result("b"), {"type": "text", "text": "and"}]);
        assert!(check_request(&use_then(mixed), true).is_err_and(|m| m.contains("MUST NOT")));
        let without = check_request(&use_then(json!([result("a"), result("b")])), false);
        assert!(without.is_err_and(|m| m.contains("sampling.tools")));
    }

    #[test]
    fn an_answer_may_use_only_offered_tools() {
        let request =
            params(json!({"messages": [user("hi")], "maxTokens": 5, "tools": [weather()]}));
        let answer = |content: Value| {
            result(
                json!({"role": "assistant", "model": "m", "stopReason": "toolUse", "content": content}),
            )
        };
        let call =
            |id: &str, name: &str| json!({"type": "tool_use", "id": id, "name": name, "input": {}});
        assert_eq!(
            check_result(&request, &answer(json!([call("1", "get_weather")]))),
            Ok(())
        );
        let other = check_result(&request, &answer(json!([call("1", "rm_rf")])));
        assert!(other.is_err_and(|m| m.contains("did not offer")));
        let twice = answer(json!([call("1", "get_weather"), call("1", "get_weather")]));
        assert!(check_result(&request, &twice).is_err_and(|m| m.contains("repeated")));
        let plain = params(json!({"messages": [user("hi")], "maxTokens": 5}));
        let uses = check_result(&plain, &answer(json!([call("1", "get_weather")])));
        assert!(uses.is_err_and(|m| m.contains("offered no tools")));
        let none = params(
            json!({"messages": [user("hi")], "maxTokens": 5, "tools": [weather()],
            "toolChoice": {"mode": "none"}}),
        );
        let refused = check_result(&none, &answer(json!([call("1", "get_weather")])));
        assert!(refused.is_err_and(|m| m.contains("`none`")));
        let from_user =
            result(json!({"role": "user", "model": "m", "content": {"type": "text", "text": "x"}}));
        assert!(check_result(&plain, &from_user).is_err());
    }
}
