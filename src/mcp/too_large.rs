//! A Streamable HTTP answer over the client's response cap, told apart from
//! other transport failures so a request fails `limit_exceeded`, as a stdio
//! message over the stdio message limit does.
//!
//! The detection is [`crate::transport::too_large::response_limit`]: a
//! JSON body over the limit fails the request itself; an SSE event over it
//! ends the response stream, which the connection's `StreamWatch` notes
//! (see [`crate::transport::stream_watch`]).

use crate::error::{ErrorCode, HostError};

pub use crate::transport::too_large::response_limit;

/// The `limit_exceeded` of `context` (e.g. `tools/call "x" on s`) whose
/// answer went over the HTTP response limit of `limit` bytes.
pub fn over_limit(context: &str, limit: usize) -> HostError {
    HostError::new(
        ErrorCode::LimitExceeded,
        format!(
            "{context} failed: the server's answer is larger than the HTTP response limit \
             ({limit} bytes); the host discarded it"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_is_limit_exceeded_naming_the_limit() {
        let text = over_limit("tools/call \"big\" on s", 16);
        assert_eq!(text.code, ErrorCode::LimitExceeded);
        assert!(text.message.contains("(16 bytes)"), "{}", text.message);
    }
}
