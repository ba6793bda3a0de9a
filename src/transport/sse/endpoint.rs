//! The `endpoint` event of a legacy HTTP+SSE stream (MCP 2024-11-05
//! "Transports › HTTP with SSE": "When a client connects, the server MUST
//! send an `endpoint` event containing a URI for the client to use for
//! sending messages"), checked before anything is POSTed to it: resolved
//! against the SSE URL (servers send a path such as
//! `/messages?sessionId=…`), at most [`MAX_SSE_ENDPOINT_BYTES`], and on the
//! SSE URL's origin (scheme, host and port), since every POST carries the
//! configured headers and the token.

use url::Url;

use crate::error::{ErrorCode, HostError};
use crate::limits::MAX_SSE_ENDPOINT_BYTES;
use crate::redact::origin;

/// The URL the `endpoint` event's `data` names, resolved against `sse_url`.
///
/// # Errors
///
/// `protocol_error` for data that is empty, longer than
/// [`MAX_SSE_ENDPOINT_BYTES`] or not a URL reference; `redirect_refused`
/// for a URL on another origin than `sse_url` (the message names both
/// origins, never a path or query).
pub fn resolve(sse_url: &Url, data: &str) -> Result<Url, HostError> {
    let text = data.trim();
    if text.is_empty() {
        return Err(refused("the SSE endpoint event is empty"));
    }
    if text.len() > MAX_SSE_ENDPOINT_BYTES {
        return Err(refused(&format!(
            "the SSE endpoint event is longer than {MAX_SSE_ENDPOINT_BYTES} bytes"
        )));
    }
    let endpoint = sse_url
        .join(text)
        .map_err(|e| refused(&format!("the SSE endpoint event is not a URL ({e})")))?;
    if endpoint.origin() != sse_url.origin() {
        return Err(HostError::new(
            ErrorCode::RedirectRefused,
            format!(
                "connect failed: the SSE endpoint event of {} names another origin ({}); \
                 configured headers and tokens are never sent to another origin",
                origin(sse_url),
                origin(&endpoint)
            ),
        ));
    }
    Ok(endpoint)
}

fn refused(what: &str) -> HostError {
    HostError::new(ErrorCode::ProtocolError, format!("connect failed: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse() -> Url {
        Url::parse("http://127.0.0.1:8123/sse?token=CANARY").unwrap()
    }

    #[test]
    fn a_path_is_resolved_against_the_sse_url() {
        let url = resolve(&sse(), "/messages?sessionId=abc").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:8123/messages?sessionId=abc");
        let url = resolve(&sse(), " messages/?session_id=1\n").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:8123/messages/?session_id=1");
        let url = resolve(&sse(), "http://127.0.0.1:8123/m").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:8123/m");
    }

    #[test]
    fn another_scheme_host_or_port_is_refused_naming_origins_only() {
        for other in [
            "http://127.0.0.1:8124/messages?sessionId=x",
            "https://127.0.0.1:8123/messages",
            "http://localhost:8123/messages",
            "//evil.example/messages",
            "http://evil.example/m?k=CANARY2",
            "file:///etc/passwd",
            "data:text/plain,x",
        ] {
            let err = resolve(&sse(), other).unwrap_err();
            assert_eq!(err.code, ErrorCode::RedirectRefused, "{other}: {err:?}");
            assert!(
                err.message.contains("http://127.0.0.1:8123"),
                "{}",
                err.message
            );
            assert!(!err.message.contains("CANARY"), "{}", err.message);
            assert!(!err.message.contains("/messages"), "{}", err.message);
        }
    }

    #[test]
    fn the_endpoint_length_is_bounded_at_the_edge() {
        let path = |n: usize| format!("/{}", "a".repeat(n - 1));
        assert!(resolve(&sse(), &path(MAX_SSE_ENDPOINT_BYTES)).is_ok());
        let err = resolve(&sse(), &path(MAX_SSE_ENDPOINT_BYTES + 1)).unwrap_err();
        assert_eq!(err.code, ErrorCode::ProtocolError);
        assert!(err.message.contains("longer than"), "{}", err.message);
    }

    #[test]
    fn empty_or_broken_data_is_a_protocol_error() {
        assert_eq!(
            resolve(&sse(), " ").unwrap_err().code,
            ErrorCode::ProtocolError
        );
        let err = resolve(&sse(), "http://[::1").unwrap_err();
        assert_eq!(err.code, ErrorCode::ProtocolError);
    }
}
