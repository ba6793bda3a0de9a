//! What a Streamable HTTP endpoint answered when the handshake failed with
//! `connect_failed` (MCP 2025-11-25 "Transports › Streamable HTTP": the
//! client POSTs JSON-RPC and accepts `application/json` or
//! `text/event-stream`).
//!
//! rmcp keeps little of a refused POST (a 5xx keeps its status only, a
//! wrong content type loses the body) and words it its own way, so after a
//! failed handshake the host POSTs the `initialize` request once more, with
//! the same client (proxy, trust roots, redirect policy) and headers, and
//! reads the answer: its HTTP status, content type, and a preview of the
//! body (at most [`MAX_HTTP_ERROR_BODY_BYTES`] read, [`MAX_HTTP_ERROR_PREVIEW_CHARS`]
//! shown, control characters and runs of white space collapsed; an HTML
//! page by its `<title>`; every secret value the host holds, among them the
//! configured header values, the bearer token and the URL's query and
//! fragment, replaced by `[redacted]` before it is cut: `crate::redact`),
//! within [`HTTP_DIAGNOSTIC_TIMEOUT_MS`].
//! The message names the origin only (never the path or query) and says
//! what to do: a 405 may be a legacy HTTP+SSE server (whose GET on the
//! same URL failed too: `super::http_open::refused_post`), a 404 a wrong path, a
//! web page a URL that is not the MCP endpoint. An answer that is an MCP
//! one (a 2xx JSON or event stream), or no answer, gives `None`: the caller
//! keeps its transport-level text.

use std::borrow::Cow;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};

use crate::config::HttpConfig;
use crate::limits::{
    HTTP_DIAGNOSTIC_TIMEOUT_MS, MAX_HTTP_ERROR_BODY_BYTES, MAX_HTTP_ERROR_PREVIEW_CHARS,
};
use crate::redact::origin;

/// What the endpoint answered to a POST of `initialize`.
#[derive(Debug, PartialEq)]
pub(super) struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The `Content-Type` header (its media type only), if any.
    pub content_type: Option<String>,
    /// A bounded, redacted preview of the body (empty when there was none).
    pub preview: String,
}

/// POSTs `initialize` to `cfg.url` with `client`, the configured headers and
/// `bearer`, and reads the answer (see the module documentation); `None`
/// when there is no HTTP answer within the time, or when it is an MCP one.
pub(super) async fn ask(
    client: &reqwest::Client,
    cfg: &HttpConfig,
    bearer: Option<&str>,
    body: Vec<u8>,
) -> Option<Answer> {
    let mut request = client
        .post(cfg.url.clone())
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in &cfg.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    if let Some(token) = bearer {
        request = request.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    let limit = Duration::from_millis(HTTP_DIAGNOSTIC_TIMEOUT_MS);
    tokio::time::timeout(limit, async {
        let response = request.send().await.ok()?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .filter(|v| !v.is_empty());
        let mcp_type = content_type
            .as_deref()
            .is_some_and(|t| t == "application/json" || t == "text/event-stream");
        if (200..300).contains(&status) && mcp_type {
            return None;
        }
        let bytes = read_prefix(response).await;
        let preview = preview(&bytes, content_type.as_deref());
        Some(Answer {
            status,
            content_type,
            preview,
        })
    })
    .await
    .ok()
    .flatten()
}

/// At most [`MAX_HTTP_ERROR_BODY_BYTES`] of the body (what arrived of it).
async fn read_prefix(response: reqwest::Response) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        let room = MAX_HTTP_ERROR_BODY_BYTES - bytes.len();
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if bytes.len() >= MAX_HTTP_ERROR_BODY_BYTES {
            break;
        }
    }
    bytes
}

/// The body as one short line: an HTML page's `<title>`, else the text with
/// control characters and white space runs collapsed, the secret values
/// the host holds redacted (before it is cut, so none is left half shown),
/// at most [`MAX_HTTP_ERROR_PREVIEW_CHARS`] characters.
fn preview(bytes: &[u8], content_type: Option<&str>) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    if content_type.is_some_and(|t| t.contains("html")) {
        if let Some(title) = html_title(&text) {
            text = title;
        }
    }
    if let Cow::Owned(hidden) = crate::redact::hidden_cut(&text) {
        text = hidden;
    }
    let line = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut shown: String = line.chars().take(MAX_HTTP_ERROR_PREVIEW_CHARS).collect();
    if shown.len() < line.len() {
        shown.push('…');
    }
    shown
}

/// The text of the first `<title>` of an HTML page.
fn html_title(page: &str) -> Option<String> {
    let lower = page.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    Some(page.get(start..end)?.trim().to_owned()).filter(|t| !t.is_empty())
}

/// What to do about `answer`, for the message.
fn advice(answer: &Answer) -> &'static str {
    let page = answer
        .content_type
        .as_deref()
        .is_some_and(|t| t.contains("html"));
    match answer.status {
        405 => {
            "the endpoint does not take POST: it may be a legacy HTTP+SSE server \
             (MCP 2024-11-05) whose event stream is at another URL (often /sse): give that \
             URL with type \"sse\""
        }
        404 | 410 => "nothing is served at this path: check the URL's path (often /mcp)",
        401 | 403 => "the server refused access: configure its credentials (headers)",
        400..=499 => "the server refused the request: check that the URL is its MCP endpoint",
        500..=599 => "the server failed: try again later or look at its logs",
        _ if page => "the URL serves a web page, not an MCP endpoint: check the URL",
        _ => "the answer is not MCP: check that the URL is the server's MCP endpoint",
    }
}

/// The `connect_failed` message for `answer` from `url`'s origin.
pub(super) fn message(url: &url::Url, answer: &Answer) -> String {
    let kind = answer.content_type.as_deref().unwrap_or("no content type");
    let reason = reqwest::StatusCode::from_u16(answer.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    let body = match answer.preview.as_str() {
        "" => "an empty body".to_owned(),
        text => format!("{text:?}"),
    };
    format!(
        "connect failed: {} answered the MCP POST with HTTP {}{reason} ({kind}): {body}; {}",
        origin(url),
        answer.status,
        advice(answer)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_is_one_short_redacted_line_and_a_page_shows_its_title() {
        let _kept = crate::redact::KeptSecret::new("CANARY-123");
        let body = b"error:\n\n  key CANARY-123 is\tnot valid\x07 here";
        let shown = preview(body, Some("text/plain"));
        assert_eq!(shown, "error: key [redacted] is not valid here");
        let page = b"<html><head><TITLE> Welcome to nginx </TITLE></head><body>x</body></html>";
        assert_eq!(preview(page, Some("text/html")), "Welcome to nginx");
        let long = "x".repeat(MAX_HTTP_ERROR_PREVIEW_CHARS + 10);
        let shown = preview(long.as_bytes(), None);
        assert_eq!(shown.chars().count(), MAX_HTTP_ERROR_PREVIEW_CHARS + 1);
    }

    #[test]
    fn the_url_query_and_fragment_are_redacted_in_the_preview() {
        let url = "http://127.0.0.1:9/p/mcp?api_key=CANARY1&x=1#CANARY2"
            .parse()
            .unwrap();
        let mut values = crate::redact::url_secrets(&url);
        values.extend(crate::redact::header_secrets("Token CANARY3"));
        values.push("CANARY4".into());
        let _kept = crate::redact::KeptSecret::all(values.iter().map(String::as_str));
        let body = b"no /p/mcp?api_key=CANARY1&x=1#CANARY2 for CANARY3 or CANARY4; CANARY1";
        let shown = preview(body, Some("text/plain"));
        assert!(
            !shown.contains("CANARY") && !shown.contains("api_key"),
            "{shown}"
        );
        assert!(shown.starts_with("no /p/mcp?[redacted]"), "{shown}");
    }

    #[test]
    fn the_message_names_the_origin_status_type_and_what_to_do() {
        let url: url::Url = "http://127.0.0.1:9/secret/mcp?token=CANARY"
            .parse()
            .unwrap();
        let answer = Answer {
            status: 405,
            content_type: Some("text/plain".into()),
            preview: "Method Not Allowed".into(),
        };
        let text = message(&url, &answer);
        assert_eq!(
            text,
            "connect failed: http://127.0.0.1:9 answered the MCP POST with HTTP 405 Method Not \
             Allowed (text/plain): \"Method Not Allowed\"; the endpoint does not take POST: it \
             may be a legacy HTTP+SSE server (MCP 2024-11-05) whose event stream is at another \
             URL (often /sse): give that URL with type \"sse\""
        );
    }
}
