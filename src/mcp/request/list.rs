//! List walks (MCP 2025-11-25 "Utilities › Pagination"): every page of a
//! list method, following `nextCursor`, each page through the response
//! cache. Items come back as trees or as the text the server sent for each
//! ([`ListItem`]; text is what the catalogue reads a `tools/list` walk
//! as): a page the transport handed on as text
//! ([`Answer::Text`]) is read one level deep, never as a tree.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::service::PeerRequestOptions;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{send_cached, Answer, RequestFailure, Wire};
use crate::error::{ErrorCode, HostError};
use crate::json::ListPage;
use crate::limits::Limits;
use crate::mcp::capabilities;

/// What a list walk hands back each item as: a tree ([`Value`]), or its
/// JSON text ([`Box<RawValue>`]: as the server wrote it when the transport
/// kept the page as text, else written from the tree).
pub trait ListItem: Sized {
    /// The item from a page the transport decoded.
    ///
    /// # Errors
    /// Why it cannot be had (a `protocol_error`'s detail).
    fn from_tree(item: Value) -> Result<Self, String>;
    /// The item from a page kept as text (read one level deep).
    ///
    /// # Errors
    /// Why it cannot be had (a `protocol_error`'s detail).
    fn from_text(item: &RawValue) -> Result<Self, String>;
}

impl ListItem for Value {
    fn from_tree(item: Value) -> Result<Self, String> {
        Ok(item)
    }
    fn from_text(item: &RawValue) -> Result<Self, String> {
        serde_json::from_str(item.get()).map_err(|e| format!("an item is not valid JSON ({e})"))
    }
}

impl ListItem for Box<RawValue> {
    fn from_tree(item: Value) -> Result<Self, String> {
        serde_json::value::to_raw_value(&item).map_err(|e| format!("an item is not JSON ({e})"))
    }
    fn from_text(item: &RawValue) -> Result<Self, String> {
        Ok(item.to_owned())
    }
}

/// Walks every page of list method `method` (items under `key`), following
/// `nextCursor`, each page through the response cache
/// ([`super::send_cached`]), and returns every item as a `T` (a tree or
/// its text, [`ListItem`]). A list of a capability the server did not
/// declare is empty, without a request (see [`capabilities`]).
///
/// Each page may take `limits.callTimeoutMs`. `max_items` is `(count, name
/// of the bound)`, e.g. `(5000, "maxToolsPerServer")`.
///
/// # Errors
///
/// Those of [`super::send_bounded`]; `protocol_error` when a page has no
/// `key` array, a non-string `nextCursor` or an item that is not valid
/// JSON; `limit_exceeded` when the walk passes `maxListPages`, a cursor is
/// longer than `maxCursorBytes` or repeats, or there are more than
/// `max_items` items.
pub async fn list_all<T: ListItem>(
    wire: Wire<'_>,
    server_id: &str,
    method: &str,
    key: &str,
    limits: &Limits,
    (max_items, bound): (usize, &str),
) -> Result<Vec<T>, RequestFailure> {
    if !capabilities::allows(wire.peer, method) {
        return Ok(Vec::new());
    }
    let fail =
        |code, what: String| HostError::new(code, format!("{method} on {server_id}: {what}"));
    let mut all = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..limits.max_list_pages {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(Duration::from_millis(limits.call_timeout_ms));
        let page: Answer = send_cached(wire, server_id, method, params, options)
            .await
            .inspect_err(|_| forget_pages(wire, method, cursor.is_some()))?;
        let no_array = || {
            fail(
                ErrorCode::ProtocolError,
                format!("the result has no `{key}` array"),
            )
        };
        let next = match page {
            Answer::Tree(mut page) => {
                let Some(Value::Array(found)) = page.get_mut(key).map(Value::take) else {
                    return Err(no_array().into());
                };
                take_items(
                    &mut all,
                    found.into_iter().map(T::from_tree),
                    (max_items, bound),
                )
                .map_err(|(code, what)| fail(code, what))?;
                next_cursor(page.get("nextCursor").cloned(), limits, &mut seen)
            }
            Answer::Text(text) => {
                let page = ListPage::read(&text, key).ok_or_else(no_array)?;
                let found = page.items.ok_or_else(no_array)?;
                take_items(
                    &mut all,
                    found.into_iter().map(T::from_text),
                    (max_items, bound),
                )
                .map_err(|(code, what)| fail(code, what))?;
                let cursor = page.cursor.map(|c| serde_json::from_str(c.get()));
                match cursor {
                    Some(Err(_)) => Err((ErrorCode::ProtocolError, NOT_A_STRING.to_owned())),
                    parsed => next_cursor(parsed.and_then(Result::ok), limits, &mut seen),
                }
            }
        };
        match next {
            Ok(None) => return Ok(all),
            Ok(Some(next)) => cursor = Some(next),
            Err((code, what)) => return Err(fail(code, what).into()),
        }
    }
    let what = format!("more than maxListPages ({}) pages", limits.max_list_pages);
    Err(fail(ErrorCode::LimitExceeded, what).into())
}

/// Adds a page's items to `all`, each converted as it is taken; refused
/// (`limit_exceeded`) before any is taken when the page would bring `all`
/// past `max_items` (named `bound`), or (`protocol_error`) at the first
/// item that does not convert.
fn take_items<T>(
    all: &mut Vec<T>,
    found: impl ExactSizeIterator<Item = Result<T, String>>,
    (max_items, bound): (usize, &str),
) -> Result<(), (ErrorCode, String)> {
    if all.len() + found.len() > max_items {
        let what = format!("more than {bound} ({max_items}) items");
        return Err((ErrorCode::LimitExceeded, what));
    }
    all.reserve(found.len());
    for item in found {
        all.push(item.map_err(|what| (ErrorCode::ProtocolError, what))?);
    }
    Ok(())
}

/// A page after the first failed: its cursor may have become invalid, so
/// every cached page of `method` goes (SEP-2549 "Interaction with Pagination").
fn forget_pages(wire: Wire<'_>, method: &str, with_cursor: bool) {
    let list = match method {
        "tools/list" => crate::mcp::cache::Invalidation::Tools,
        "prompts/list" => crate::mcp::cache::Invalidation::Prompts,
        _ => crate::mcp::cache::Invalidation::Resources,
    };
    if let (true, Some(cache)) = (with_cursor, wire.cache) {
        cache.invalidate(&list);
    }
}

/// Why a `nextCursor` that is not a string is refused.
const NOT_A_STRING: &str = "nextCursor is not a string";

/// The page's `nextCursor`: `None` at the end, or why it is refused.
fn next_cursor(
    cursor: Option<Value>,
    limits: &Limits,
    seen: &mut HashSet<String>,
) -> Result<Option<String>, (ErrorCode, String)> {
    match cursor {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(next)) if next.len() > limits.max_cursor_bytes => Err((
            ErrorCode::LimitExceeded,
            format!(
                "a cursor of {} bytes is longer than maxCursorBytes ({})",
                next.len(),
                limits.max_cursor_bytes
            ),
        )),
        Some(Value::String(next)) if !seen.insert(next.clone()) => Err((
            ErrorCode::LimitExceeded,
            "the server repeated a cursor (pagination loop)".to_owned(),
        )),
        Some(Value::String(next)) => Ok(Some(next)),
        Some(_) => Err((ErrorCode::ProtocolError, NOT_A_STRING.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_end_advance_or_are_refused() {
        let limits = Limits {
            max_cursor_bytes: 4,
            ..Limits::default()
        };
        let mut seen = HashSet::new();
        assert_eq!(next_cursor(None, &limits, &mut seen), Ok(None));
        assert_eq!(next_cursor(Some(Value::Null), &limits, &mut seen), Ok(None));
        assert_eq!(
            next_cursor(Some(json!("ab")), &limits, &mut seen),
            Ok(Some("ab".to_owned()))
        );
        let mut refused =
            |cursor: Value| next_cursor(Some(cursor), &limits, &mut seen).map_err(|(code, _)| code);
        assert_eq!(refused(json!("ab")), Err(ErrorCode::LimitExceeded));
        assert_eq!(refused(json!("abcde")), Err(ErrorCode::LimitExceeded));
        assert_eq!(refused(json!(7)), Err(ErrorCode::ProtocolError));
    }
}
