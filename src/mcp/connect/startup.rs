//! The start-up race of one stdio server, and the first real cause of a
//! failed start (MCP 2025-11-25 "Lifecycle › Initialization"; AHP
//! `McpServerErrorState.error.errorType` is the cause's stable code).
//!
//! `initialize` races the process's exit and the startup timeout. Whatever
//! happens first is the cause, and what follows it (the exit after the host
//! closed stdin, the end of stdout after an exit) never replaces it:
//!
//! - a JSON-RPC error answering `initialize`, or an answer that is not an
//!   `InitializeResult`: `protocol_error`, even when the server exits next
//!   (also when it wrote the answer and exited before the host read it);
//! - an exit before any answer: `server_exited` with the exit status;
//! - the timeout with the process still running: `startup_timeout`; an exit
//!   seen at the same moment wins (it says more);
//! - an answer the stdout reader discarded (too long or too deep:
//!   `limit_exceeded`; not a JSON-RPC message rmcp can decode:
//!   `protocol_error`, saying what was wrong), at once rather than at the
//!   timeout; with `auto`, a discarded answer to the `server/discover` probe
//!   makes the caller connect again with `initialize`.

use std::future::Future;
use std::process::ExitStatus;
use std::time::Duration;

use rmcp::service::ClientInitializeError;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use super::connection::changed;
use crate::error::strip_type_names;
use crate::error::{ErrorCode, ErrorDetail, HostError};
use crate::transport::stdout_monitor::Discarded;

/// How long, after the process exited, `initialize` may still end with the
/// answer the server wrote before exiting (its stdout ends with the exit
/// unless a descendant holds it). A settle time of this module's own.
pub(super) const ANSWER_SETTLE: Duration = Duration::from_millis(500);

/// At most this many characters of a server-chosen text go into a message.
const MAX_EXCERPT_CHARS: usize = 300;

/// Why a stdio start did not complete `initialize`, first cause first.
#[derive(Debug)]
pub(super) enum StartFailure {
    /// `initialize` failed (an answer, or the transport ending) while the
    /// process was not yet seen to exit.
    Refused(ClientInitializeError),
    /// The process exited first; with how `initialize` ended within
    /// [`ANSWER_SETTLE`] after (the answer the server wrote before exiting).
    Exited(Option<ClientInitializeError>),
    /// The startup timeout passed with the process still running.
    TimedOut,
    /// The stdout reader discarded the answer to a handshake request.
    Discarded(Discarded),
}

/// The first response the stdout reader discards: during the handshake
/// every response answers a handshake request. Pending once the reader is
/// gone.
///
/// # Cancel safety
///
/// Cancel safe: a notice is consumed only when this resolves.
pub(super) async fn first_discard(rx: &mut broadcast::Receiver<Discarded>) -> Discarded {
    loop {
        match rx.recv().await {
            Ok(gone) => return gone,
            Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return std::future::pending().await,
        }
    }
}

/// With `auto`: whether `gone` answered the `server/discover` probe, the
/// connection's first request (rmcp numbers a connection's requests from 0).
pub(super) fn answered_probe(gone: &Discarded) -> bool {
    gone.id == serde_json::json!(0)
}

/// The error of a handshake `method` of `server_id` whose answer the stdout
/// reader discarded: its code (`protocol_error` or `limit_exceeded`) and
/// what was wrong.
pub(super) fn discarded_answer(server_id: &str, method: &str, gone: &Discarded) -> HostError {
    let how = match gone.code {
        ErrorCode::LimitExceeded => "a response the host discarded",
        _ => "a response that cannot be decoded",
    };
    HostError::new(
        gone.code,
        format!(
            "server {server_id:?} answered {method} with {how}: {}",
            excerpt(&gone.reason)
        ),
    )
}

/// Races `handshake` (rmcp's `initialize`) against the process exit watch
/// and the startup `deadline` (spawn time plus the startup timeout); see the
/// module documentation for which wins.
///
/// # Errors
///
/// The [`StartFailure`] that came first.
pub(super) async fn race<S>(
    handshake: impl Future<Output = Result<S, ClientInitializeError>>,
    exit: &mut watch::Receiver<Option<ExitStatus>>,
    deadline: Instant,
) -> Result<S, StartFailure> {
    tokio::pin!(handshake);
    let exit_seen = tokio::select! {
        biased;
        served = &mut handshake => return served.map_err(StartFailure::Refused),
        _ = changed(exit) => true,
        _ = tokio::time::sleep_until(deadline) => false,
    };
    if !exit_seen && exit.borrow().is_none() {
        return Err(StartFailure::TimedOut);
    }
    let answer = tokio::time::timeout(ANSWER_SETTLE, &mut handshake).await;
    Err(StartFailure::Exited(answer.ok().and_then(Result::err)))
}

/// The `protocol_error` for a server whose answer to `initialize` was the
/// failure: a JSON-RPC error (message naming `server_id`, the error's code
/// and message; detail [`ErrorDetail::JsonRpc`]) or a response that is not
/// an `InitializeResult`. `None` when the failure is not an answer (the
/// transport closed, was cancelled, …).
///
/// `method` names the handshake request the host sent: `initialize`, or
/// `server/discover` with `protocol: "2026-07-28"` (no `initialize` then).
pub(super) fn initialize_refusal(
    server_id: &str,
    e: &ClientInitializeError,
    method: &str,
) -> Option<HostError> {
    use ClientInitializeError as E;
    match e {
        E::JsonRpcError(err) => Some(
            HostError::new(
                ErrorCode::ProtocolError,
                format!(
                    "server {server_id:?} answered {method} with JSON-RPC error {}: {}",
                    err.code.0,
                    excerpt(&err.message)
                ),
            )
            .with_detail(ErrorDetail::JsonRpc {
                code: err.code.0.into(),
                data: err.data.clone(),
            }),
        ),
        E::ExpectedInitResponse(_)
        | E::ExpectedInitResult(_)
        | E::ConflictInitResponseId(..)
        | E::UncorrelatedErrorResponse { .. }
        | E::NoCompatibleProtocolVersion { .. } => Some(HostError::new(
            ErrorCode::ProtocolError,
            format!(
                "server {server_id:?} answered {method} with an invalid response: {}",
                excerpt(&strip_type_names(&e.to_string()))
            ),
        )),
        E::LegacyFallbackFailed { fallback, .. } => {
            initialize_refusal(server_id, fallback, "initialize")
        }
        _ => None,
    }
}

/// With the `auto` lifecycle: `Some(what went wrong)` when the
/// `server/discover` probe left the connection unusable, so the caller
/// connects again with `initialize`:
/// - the probe got a success that is not a discover result (a server
///   answering `{}` to any method);
/// - a server slower to start than rmcp's probe time (10 s; e.g. `npx`
///   fetching a package) answered the probe late, after rmcp had moved on to
///   `initialize`: the late answer carries the probe's id.
///
/// A failed fallback `initialize` arrives wrapped as `LegacyFallbackFailed`
/// and is not matched.
pub(super) fn probe_unusable(e: &ClientInitializeError) -> Option<String> {
    use ClientInitializeError as E;
    match e {
        E::ExpectedInitResult(Some(answer)) => Some(excerpt(&format!(
            "a result that is not a discover result ({})",
            strip_type_names(&format!("{answer:?}"))
        ))),
        E::ExpectedInitResult(None) | E::ExpectedInitResponse(_) => {
            Some("something that is not a discover result".to_owned())
        }
        E::UncorrelatedErrorResponse { .. } | E::ConflictInitResponseId(..) => Some(
            "an answer after the probe time (the server was slow to start), while initialize \
             was waiting"
                .to_owned(),
        ),
        _ => None,
    }
}

/// The first [`MAX_EXCERPT_CHARS`] characters of `text`, with `…` when cut.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The handshake request `lifecycle` sends first that can be refused:
/// `server/discover` when it is the only one, else `initialize`.
pub(super) fn handshake_method(lifecycle: &rmcp::service::ClientLifecycleMode) -> &'static str {
    match lifecycle {
        rmcp::service::ClientLifecycleMode::Discover { .. } => "server/discover",
        _ => "initialize",
    }
}

#[cfg(test)]
mod tests {
    use std::future::{pending, poll_fn};
    use std::task::Poll;

    use rmcp::model::ErrorData;

    use super::*;

    /// A real child's exit status: `sh -c 'exit <code>'`.
    fn real_exit(code: i32) -> ExitStatus {
        std::process::Command::new("sh")
            .args(["-c", &format!("exit {code}")])
            .status()
            .expect("sh runs")
    }

    fn json_rpc_error() -> ClientInitializeError {
        ClientInitializeError::JsonRpcError(ErrorData::new(
            rmcp::model::ErrorCode(-32042),
            "license expired for tenant acme",
            Some(serde_json::json!({"tenant": "acme"})),
        ))
    }

    /// Pending on its first poll (waking itself), then `Err(json_rpc_error())`:
    /// an answer still in the pipe when the exit is already known.
    fn answer_on_second_poll() -> impl Future<Output = Result<(), ClientInitializeError>> {
        let mut polled = false;
        poll_fn(move |cx| {
            if polled {
                Poll::Ready(Err(json_rpc_error()))
            } else {
                polled = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(3_600)
    }

    /// A deadline that has passed before the race starts.
    fn past() -> Instant {
        Instant::now() - Duration::from_secs(1)
    }

    #[tokio::test]
    async fn an_answer_first_is_the_cause() {
        let (_tx, mut exit) = watch::channel(None);
        let failed = race(async { Err::<(), _>(json_rpc_error()) }, &mut exit, far()).await;
        assert!(
            matches!(
                failed,
                Err(StartFailure::Refused(ClientInitializeError::JsonRpcError(
                    _
                )))
            ),
            "{failed:?}"
        );
    }

    #[tokio::test]
    async fn the_answer_written_before_an_exit_is_kept() {
        let (_tx, mut exit) = watch::channel(Some(real_exit(4)));
        let failed = race(answer_on_second_poll(), &mut exit, far()).await;
        assert!(
            matches!(
                failed,
                Err(StartFailure::Exited(Some(
                    ClientInitializeError::JsonRpcError(_)
                )))
            ),
            "{failed:?}"
        );
    }

    #[tokio::test]
    async fn an_exit_at_the_deadline_is_the_cause_not_the_timeout() {
        let (_tx, mut exit) = watch::channel(Some(real_exit(7)));
        let failed = race(pending::<Result<(), _>>(), &mut exit, past()).await;
        assert!(
            matches!(failed, Err(StartFailure::Exited(None))),
            "{failed:?}"
        );
    }

    #[tokio::test]
    async fn the_deadline_with_the_process_running_is_a_timeout() {
        let (_tx, mut exit) = watch::channel(None);
        let failed = race(pending::<Result<(), _>>(), &mut exit, past()).await;
        assert!(matches!(failed, Err(StartFailure::TimedOut)), "{failed:?}");
    }

    #[test]
    fn a_json_rpc_error_is_a_protocol_error_naming_server_code_and_message() {
        let e =
            initialize_refusal("plug/refuser", &json_rpc_error(), "initialize").expect("an answer");
        assert_eq!(e.code, ErrorCode::ProtocolError);
        assert_eq!(
            e.message,
            "server \"plug/refuser\" answered initialize with JSON-RPC error -32042: \
             license expired for tenant acme"
        );
        assert!(matches!(
            e.detail,
            ErrorDetail::JsonRpc { code: -32042, data: Some(ref d) } if d["tenant"] == "acme"
        ));
    }

    #[test]
    fn a_failed_legacy_fallback_keeps_the_fallback_answer() {
        let e = ClientInitializeError::LegacyFallbackFailed {
            discover: Box::new(ClientInitializeError::Cancelled),
            fallback: Box::new(json_rpc_error()),
        };
        let e = initialize_refusal("s", &e, "initialize").expect("an answer");
        assert_eq!(e.code, ErrorCode::ProtocolError);
        assert!(e.message.contains("-32042"), "{}", e.message);
    }

    #[test]
    fn an_invalid_answer_is_a_protocol_error_cut_to_an_excerpt() {
        let huge = "x".repeat(10_000);
        let e =
            ClientInitializeError::ExpectedInitResult(Some(rmcp::model::ServerResult::empty(())));
        let e = initialize_refusal("s", &e, "initialize").expect("an answer");
        assert_eq!(e.code, ErrorCode::ProtocolError);
        assert!(e.message.contains("invalid response"), "{}", e.message);
        let long = ClientInitializeError::JsonRpcError(ErrorData::new(
            rmcp::model::ErrorCode(-1),
            huge.clone(),
            None,
        ));
        let message = initialize_refusal("s", &long, "initialize")
            .expect("an answer")
            .message;
        assert!(
            message.len() < 1_000 && message.ends_with('…'),
            "{}",
            message.len()
        );
    }

    #[test]
    fn only_a_non_discover_success_makes_the_probe_unusable() {
        let empty =
            ClientInitializeError::ExpectedInitResult(Some(rmcp::model::ServerResult::empty(())));
        assert!(probe_unusable(&empty).is_some_and(|w| w.contains("not a discover result")));
        assert!(probe_unusable(&json_rpc_error()).is_none());
        let fallback = ClientInitializeError::LegacyFallbackFailed {
            discover: Box::new(json_rpc_error()),
            fallback: Box::new(empty),
        };
        assert!(probe_unusable(&fallback).is_none());
        let late = ClientInitializeError::UncorrelatedErrorResponse {
            expected: rmcp::model::NumberOrString::Number(1),
            received: rmcp::model::NumberOrString::Number(0),
        };
        assert!(probe_unusable(&late).is_some_and(|w| w.contains("slow to start")));
    }

    #[test]
    fn a_discover_only_refusal_names_server_discover() {
        let e = initialize_refusal("s", &json_rpc_error(), "server/discover").expect("an answer");
        assert!(
            e.message.contains("answered server/discover"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_closed_transport_is_not_an_answer() {
        let closed = ClientInitializeError::ConnectionClosed("initialize response".into());
        assert!(initialize_refusal("s", &closed, "initialize").is_none());
        let cancelled = ClientInitializeError::Cancelled;
        assert!(initialize_refusal("s", &cancelled, "initialize").is_none());
    }
}
