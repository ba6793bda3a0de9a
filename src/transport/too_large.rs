//! Telling rmcp's "over the size limit" errors of a Streamable HTTP answer
//! apart from other transport failures.
//!
//! rmcp's reqwest client reads a JSON response body and each SSE event up
//! to a byte limit (`StreamableHttpClientTransportConfig::max_json_response_size`
//! and `max_sse_event_size`, 16 MiB each, the host's
//! [`crate::limits::MAX_STDIO_MESSAGE_BYTES`]) and ends the request (JSON)
//! or the response stream (SSE) with an error saying "exceeded the maximum
//! size of N bytes". The SSE error type is private to rmcp, so the error
//! chain is read for that sentence.

/// rmcp's words for a response body or SSE event over its limit.
const OVER_LIMIT: &str = "exceeded the maximum size of ";

/// The limit (bytes) `e` or an error in its source chain says an HTTP
/// response body or SSE event went over; `None` for any other failure.
pub fn response_limit(e: &(dyn std::error::Error + 'static)) -> Option<usize> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        let text = err.to_string();
        if let Some(at) = text.find(OVER_LIMIT) {
            let digits: String = text[at + OVER_LIMIT.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(limit) = digits.parse() {
                return Some(limit);
            }
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::streamable_http_client::StreamableHttpError;

    #[test]
    fn rmcp_s_body_limit_error_is_recognised_and_nothing_else_is() {
        let e = StreamableHttpError::<std::io::Error>::ResponseBodyTooLarge { max_size: 16 };
        assert_eq!(response_limit(&e), Some(16));
        let other = StreamableHttpError::<std::io::Error>::UnexpectedEndOfStream;
        assert_eq!(response_limit(&other), None);
    }
}
