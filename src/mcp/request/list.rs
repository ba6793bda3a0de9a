//! List walks (MCP 2025-11-25 "Utilities › Pagination"): every page of a
//! list method, following `nextCursor`, each page through the response
//! cache. Items come back as trees ([`list_all`]) or as the text the
//! server sent for each ([`list_texts`], what the catalogue reads a
//! `tools/list` walk as): a page the transport handed on as text
//! ([`Answer::Text`]) is read one level deep, never as a tree.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::service::PeerRequestOptions;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{send_cached_answer, Answer, RequestFailure, Wire};
use crate::error::{ErrorCode, HostError};
use crate::json::ListPage;
use crate::limits::Limits;
use crate::mcp::capabilities;

/// The items of one page, as the page came.
enum Items<'a> {
    Tree(Vec<Value>),
    Text(Vec<&'a RawValue>),
}

/// Walks every page of list method `method` (items under `key`), following
/// `nextCursor`, each page through the response cache
/// ([`super::send_cached`]). A list of a capability the server did not
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
pub async fn list_all(
    wire: Wire<'_>,
    server_id: &str,
    method: &str,
    key: &str,
    limits: &Limits,
    max_items: (usize, &str),
) -> Result<Vec<Value>, RequestFailure> {
    let mut all = Vec::new();
    walk(wire, (server_id, method, key), limits, max_items, |items| {
        match items {
            Items::Tree(found) => all.extend(found),
            Items::Text(found) => {
                for item in found {
                    all.push(
                        serde_json::from_str(item.get())
                            .map_err(|e| format!("an item is not valid JSON ({e})"))?,
                    );
                }
            }
        }
        Ok(())
    })
    .await?;
    Ok(all)
}

/// [`list_all`] with each item as its JSON text: as the server wrote it
/// when the transport kept the page as text, else written from the tree.
///
/// # Errors
/// Those of [`list_all`].
pub async fn list_texts(
    wire: Wire<'_>,
    server_id: &str,
    method: &str,
    key: &str,
    limits: &Limits,
    max_items: (usize, &str),
) -> Result<Vec<Box<RawValue>>, RequestFailure> {
    let mut all = Vec::new();
    walk(wire, (server_id, method, key), limits, max_items, |items| {
        match items {
            Items::Tree(found) => {
                all.extend(
                    found
                        .iter()
                        .filter_map(|v| serde_json::value::to_raw_value(v).ok()),
                );
            }
            Items::Text(found) => all.extend(found.into_iter().map(ToOwned::to_owned)),
        }
        Ok(())
    })
    .await?;
    Ok(all)
}

/// The walk of [`list_all`]: each page's items handed to `take` (which may
/// refuse them with a reason, a `protocol_error`).
async fn walk(
    wire: Wire<'_>,
    (server_id, method, key): (&str, &str, &str),
    limits: &Limits,
    (max_items, bound): (usize, &str),
    mut take: impl FnMut(Items<'_>) -> Result<(), String>,
) -> Result<(), RequestFailure> {
    if !capabilities::allows(wire.peer, method) {
        return Ok(());
    }
    let fail =
        |code, what: String| HostError::new(code, format!("{method} on {server_id}: {what}"));
    let mut count = 0;
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..limits.max_list_pages {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(Duration::from_millis(limits.call_timeout_ms));
        let page = send_cached_answer(wire, server_id, method, params, options)
            .await
            .inspect_err(|_| forget_pages(wire, method, cursor.is_some()))?;
        // Checked before a page's items are taken (copied, parsed).
        let too_many = |count: usize| match count > max_items {
            true => Err(fail(
                ErrorCode::LimitExceeded,
                format!("more than {bound} ({max_items}) items"),
            )),
            false => Ok(()),
        };
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
                count += found.len();
                too_many(count)?;
                take(Items::Tree(found)).map_err(|what| fail(ErrorCode::ProtocolError, what))?;
                next_cursor(page.get("nextCursor").cloned(), limits, &mut seen)
            }
            Answer::Text(text) => {
                let page = ListPage::read(&text, key).ok_or_else(no_array)?;
                let found = page.items.ok_or_else(no_array)?;
                count += found.len();
                too_many(count)?;
                take(Items::Text(found)).map_err(|what| fail(ErrorCode::ProtocolError, what))?;
                let cursor = page.cursor.map(|c| serde_json::from_str(c.get()));
                match cursor {
                    Some(Err(_)) => Err((ErrorCode::ProtocolError, NOT_A_STRING.to_owned())),
                    parsed => next_cursor(parsed.and_then(Result::ok), limits, &mut seen),
                }
            }
        };
        match next {
            Ok(None) => return Ok(()),
            Ok(Some(next)) => cursor = Some(next),
            Err((code, what)) => return Err(fail(code, what).into()),
        }
    }
    let what = format!("more than maxListPages ({}) pages", limits.max_list_pages);
    Err(fail(ErrorCode::LimitExceeded, what).into())
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
