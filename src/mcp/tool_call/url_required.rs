//! A `tools/call` answered with `-32042` "URL elicitation required" (MCP
//! 2025-11-25 "Client Features › Elicitation › URL Elicitation Required
//! Error", SEP-1036): the error's `data.elicitations` go through the same
//! flow as a URL-mode `elicitation/create` (an AHP input request with `url`
//! for a chat call, the app's URL handler, see
//! [`crate::mcp::client::HostClient::url_answer`]), then the call is sent
//! again, once ([`URL_ELICITATION_RETRIES`]).
//!
//! What the host does, in order:
//! 1. Each elicitation is checked (`http`/`https`, no userinfo, bounded; at
//!    most [`crate::limits::MAX_REQUIRED_URL_ELICITATIONS`]). A `-32042`
//!    without such a list is not acted on: the call fails `protocol_error`
//!    as for any other JSON-RPC error (its `data` with each URL shown as its
//!    origin), and a `warn` log (target `host.requests`) says why.
//! 2. All of them are shown at once. Nobody to show them to (not an AHP
//!    chat call and no URL `elicitation` handler): the call fails
//!    `url_elicitation_required` (reason `unanswerable`) at once.
//! 3. The first `decline` or `cancel` (or a failed handler) fails the call
//!    `url_elicitation_required` (reason `decline` / `cancel`); the other
//!    requests are withdrawn.
//! 4. `accept` means consent, not completion: the host then waits for the
//!    server's `notifications/elicitation/complete` of each one (one that
//!    arrives before the user answered counts as `accept`). When every one
//!    completed, the call is sent again with the same arguments. The wait
//!    is bounded by the call's total limit (`callMaxTotalMs`, then
//!    `timeout`) and ends with the caller's cancellation (the AbortSignal,
//!    or an AHP client cancelling the tool call): the spec's "manual
//!    controls". An elicitation whose completion cannot be watched (no
//!    `elicitationId` slot left) counts as completed once accepted.
//! 5. A second `-32042` fails the call `url_elicitation_required` (reason
//!    `requiredAgain`): the host never loops.
//!
//! Errors and logs name each elicitation's id, message and origin, never
//! its URL (whose query may hold a secret).

use std::time::Duration;

use rmcp::model::{ErrorData, ServerResult};
use rmcp::service::ServiceError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Call;
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult};
use crate::events::{log, LogLevel};
use crate::limits::URL_ELICITATION_RETRIES;
use crate::requests::url_elicitation::{required, UrlElicitation, URL_ELICITATION_REQUIRED};

/// The `-32042` error of a round's outcome, if that is what it is.
pub(super) fn of(outcome: &Result<ServerResult, ServiceError>) -> Option<&ErrorData> {
    match outcome {
        Err(ServiceError::McpError(e)) if e.code.0 == URL_ELICITATION_REQUIRED => Some(e),
        _ => None,
    }
}

impl Call<'_> {
    /// Steps 1 to 5 of the module doc for one `-32042` answer: `Ok(true)`
    /// when the call is to be sent again (`retries` counts the retries so
    /// far), `Ok(false)` when the error lists no usable elicitations (step
    /// 1: the caller fails the call as for any JSON-RPC error).
    ///
    /// # Errors
    /// `url_elicitation_required`, `limit_exceeded` (the call's open input
    /// requests), `timeout` (total), `cancelled`.
    pub(super) async fn complete_url_elicitations(
        &self,
        error: &ErrorData,
        retries: &mut usize,
        left: Duration,
        cancel: &CancellationToken,
    ) -> HostResult<bool> {
        let context = &self.context;
        let list = match required(error.data.as_ref()) {
            Ok(list) => list,
            Err(why) => {
                let what = format!(
                    "{context}: the server answered -32042 (URL elicitation required), but {why}: \
                     nothing was shown"
                );
                let sink = &self.conn.handler.sink;
                sink.send(log(
                    LogLevel::Warn,
                    "host.requests",
                    Some(self.server_id),
                    what,
                ));
                return Ok(false);
            }
        };
        if *retries >= URL_ELICITATION_RETRIES {
            let why = "needs URL elicitations again after they were completed";
            return Err(self.not_completed(&list, "requiredAgain", why));
        }
        *retries += 1;
        let client = &self.conn.handler;
        let mut asked = Vec::with_capacity(list.len());
        let mut watches = Vec::with_capacity(list.len());
        for url in &list {
            let watch = client.url_waits.watch(&url.elicitation_id);
            let done = watch.as_ref().map(|w| w.done());
            match client.url_answer(url, self.chat, done.clone()) {
                Ok(Some(answer)) => asked.push(answer),
                Ok(None) => {
                    let why = "needs URL elicitations, and neither an AHP client (a chat call) \
                               nor a URL elicitation handler can show them";
                    return Err(self.not_completed(&list, "unanswerable", why));
                }
                Err(why) => {
                    let what = format!("{context}: {why}");
                    return Err(HostError::new(ErrorCode::LimitExceeded, what));
                }
            }
            watches.push((watch, done));
        }
        let answered = futures::future::try_join_all(asked.into_iter().map(|answer| async {
            match answer.await {
                Ok(a) if a.get("action").and_then(Value::as_str) == Some("accept") => Ok(()),
                Ok(a) if a.get("action").and_then(Value::as_str) == Some("decline") => {
                    Err(("decline", "was declined".to_owned()))
                }
                Ok(_) => Err(("cancel", "was cancelled".to_owned())),
                Err(why) => Err(("cancel", format!("failed: the handler said {why}"))),
            }
        }));
        let completed = async {
            if let Err((reason, what)) = answered.await {
                let why = format!("needs URL elicitations; one {what}");
                return Err(self.not_completed(&list, reason, &why));
            }
            for (_, done) in &watches {
                if let Some(done) = done {
                    done.cancelled().await;
                }
            }
            Ok(())
        };
        self.between_rounds(completed, left, cancel).await?;
        Ok(true)
    }

    /// `url_elicitation_required` for `list` (`reason` in its data, `why`
    /// in its message after the call's context; each elicitation's origin).
    fn not_completed(&self, list: &[UrlElicitation], reason: &'static str, why: &str) -> HostError {
        let origins: Vec<&str> = list.iter().map(|u| u.origin.as_str()).collect();
        let message = format!("{} {why} (sites: {})", self.context, origins.join(", "));
        HostError::new(ErrorCode::UrlElicitationRequired, message).with_detail(
            ErrorDetail::UrlElicitations {
                reason,
                elicitations: list.iter().map(UrlElicitation::shown).collect(),
            },
        )
    }
}
