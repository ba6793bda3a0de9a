//! When a write to a server's stdin has stalled: no byte accepted for
//! [`STDIN_WRITE_TIMEOUT_MS`](crate::limits::STDIN_WRITE_TIMEOUT_MS). Each
//! `write` and `flush` of a batch is bounded by it (`writer`); a send
//! waiting for the writer waits while the batch before it makes progress,
//! and is given up with it when it stalls (a slow reader is not a stalled
//! one).

use std::time::Duration;

/// The error of a send abandoned because stdin took nothing for `stall`.
pub(super) fn stalled(stall: Duration) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!(
            "the server did not read its stdin for {} ms",
            stall.as_millis()
        ),
    )
}
