//! The gate of MCP Apps UI resources (SEP-1865 "UI Resource"): what the
//! host lets through of a `resources/read` of a `ui://` URI, on an
//! `mcp://` channel or through `readAppResource`. Pure checks, no I/O.
//!
//! A UI resource is returned only when
//! 1. a tool of that server links it from `_meta.ui.resourceUri` (app-only
//!    tools included; [`check_linked`], else `not_found`, nothing sent);
//! 2. every content item has the App MIME type `text/html;profile=mcp-app`
//!    ([`check_contents`], else `protocol_error` naming the type found);
//! 3. its contents (`text`, or `blob` as sent in base64) add up to at most
//!    `maxUiResourceBytes` (else `limit_exceeded`).
//!
//! The result is otherwise untouched: the contents' `_meta.ui` (`csp`,
//! `permissions`, `domain`, `prefersBorder`) is for the client to enforce.

use serde_json::Value;

use super::capabilities::{links_ui_resource, UI_SCHEME};
use super::APP_MIME_TYPE;
use crate::catalogue::ServerTools;
use crate::error::{ErrorCode, HostError, HostResult};

/// Whether `uri` names a UI resource (`ui://…`).
#[must_use]
pub fn is_ui_uri(uri: &str) -> bool {
    uri.starts_with(UI_SCHEME)
}

/// Checks that `uri` is linked from `_meta.ui.resourceUri` of one of
/// `tools` (server `server_id`'s checked tools; `None`: none listed).
///
/// # Errors
/// `not_found`, naming the server and the URI.
pub fn check_linked(server_id: &str, uri: &str, tools: Option<&ServerTools>) -> HostResult<()> {
    if tools.is_some_and(|t| links_ui_resource(t, uri)) {
        return Ok(());
    }
    Err(HostError::new(
        ErrorCode::NotFound,
        format!(
            "no tool of server {server_id} links the UI resource {uri:?} from \
             _meta.ui.resourceUri"
        ),
    ))
}

/// Checks a `ReadResourceResult` of UI resource `uri` on `server_id`:
/// at least one content item, each with mimeType
/// [`APP_MIME_TYPE`], their `text` / `blob` within `max_bytes` together.
///
/// # Errors
/// `protocol_error` (no contents; a content item without the App MIME
/// type, naming the type found), `limit_exceeded` (over `max_bytes`,
/// `maxUiResourceBytes`).
pub fn check_contents(
    server_id: &str,
    uri: &str,
    result: &Value,
    max_bytes: usize,
) -> HostResult<()> {
    let what = format!("UI resource {uri:?} of server {server_id}");
    let contents = match result.get("contents").and_then(Value::as_array) {
        Some(c) if !c.is_empty() => c,
        _ => {
            return Err(HostError::new(
                ErrorCode::ProtocolError,
                format!("{what} has no contents"),
            ))
        }
    };
    let mut bytes = 0usize;
    for item in contents {
        match item.get("mimeType") {
            Some(Value::String(m)) if m == APP_MIME_TYPE => {}
            found => {
                let found = match found {
                    Some(Value::String(m)) => format!("MIME type {m:?}"),
                    _ => "no MIME type".to_owned(),
                };
                return Err(HostError::new(
                    ErrorCode::ProtocolError,
                    format!("{what} has {found}, not the MCP App type {APP_MIME_TYPE:?}"),
                ));
            }
        }
        let body = item
            .get("text")
            .or_else(|| item.get("blob"))
            .and_then(Value::as_str);
        bytes = bytes.saturating_add(body.map_or(0, str::len));
    }
    if bytes > max_bytes {
        return Err(HostError::new(
            ErrorCode::LimitExceeded,
            format!("{what} is {bytes} bytes, more than maxUiResourceBytes ({max_bytes})"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use serde_json::json;

    fn tools() -> ServerTools {
        let raw = vec![
            json!({"name": "show", "inputSchema": {"type": "object"},
                   "_meta": {"ui": {"resourceUri": "ui://show/view.html"}}}),
            json!({"name": "hidden", "inputSchema": {"type": "object"},
                   "_meta": {"ui": {"resourceUri": "ui://hidden/view.html",
                                    "visibility": ["app"]}}}),
        ];
        ServerTools::build("s", raw, &Limits::default()).unwrap()
    }

    fn html(text: &str) -> Value {
        json!({"contents": [{"uri": "ui://show/view.html", "mimeType": APP_MIME_TYPE,
                             "text": text, "_meta": {"ui": {"prefersBorder": true}}}]})
    }

    #[test]
    fn only_linked_ui_resources_pass() {
        let t = tools();
        assert!(check_linked("s", "ui://show/view.html", Some(&t)).is_ok());
        assert!(check_linked("s", "ui://hidden/view.html", Some(&t)).is_ok());
        let e = check_linked("s", "ui://other/view.html", Some(&t)).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(e.message.contains("ui://other/view.html"), "{}", e.message);
        let e = check_linked("s", "ui://show/view.html", None).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(is_ui_uri("ui://show/view.html"));
        assert!(!is_ui_uri("https://show/view.html"));
    }

    #[test]
    fn every_content_item_needs_the_app_mime_type() {
        assert!(check_contents("s", "ui://x", &html("<p>hi</p>"), 100).is_ok());
        let wrong = json!({"contents": [
            {"uri": "ui://x", "mimeType": APP_MIME_TYPE, "text": "a"},
            {"uri": "ui://x", "mimeType": "text/html", "text": "b"}]});
        let e = check_contents("s", "ui://x", &wrong, 100).unwrap_err();
        assert_eq!(e.code, ErrorCode::ProtocolError);
        assert!(
            e.message.contains("MIME type \"text/html\""),
            "{}",
            e.message
        );
        let none = json!({"contents": [{"uri": "ui://x", "text": "a"}]});
        let e = check_contents("s", "ui://x", &none, 100).unwrap_err();
        assert!(e.message.contains("no MIME type"), "{}", e.message);
        let empty = json!({"contents": []});
        let e = check_contents("s", "ui://x", &empty, 100).unwrap_err();
        assert_eq!(e.code, ErrorCode::ProtocolError);
    }

    #[test]
    fn contents_are_bounded_together() {
        assert!(check_contents("s", "ui://x", &html("12345"), 5).is_ok());
        let e = check_contents("s", "ui://x", &html("123456"), 5).unwrap_err();
        assert_eq!(e.code, ErrorCode::LimitExceeded);
        assert!(
            e.message.contains("maxUiResourceBytes (5)"),
            "{}",
            e.message
        );
        let two = json!({"contents": [
            {"uri": "ui://x", "mimeType": APP_MIME_TYPE, "text": "123"},
            {"uri": "ui://x", "mimeType": APP_MIME_TYPE, "blob": "456"}]});
        assert!(check_contents("s", "ui://x", &two, 6).is_ok());
        assert!(check_contents("s", "ui://x", &two, 5).is_err());
    }
}
