//! `completion/complete` and `logging/setLevel` on a ready [`Session`]
//! (MCP 2025-11-25 "Utilities › Completion", "Utilities › Logging"), sent
//! as rmcp's typed requests through the one request path
//! ([`request::send_on`]: bounded send, cancellation, error mapping), each
//! only when the server declared the capability it needs
//! ([`super::capabilities`]). How the level travels in each era: see
//! [`super::log_level`].

#![allow(deprecated)] // MCP logging: SEP-2577 deprecates it; servers still offer it

use std::time::Duration;

use rmcp::model::{
    ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult, LoggingLevel,
    SetLevelRequest, SetLevelRequestParams,
};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;

use super::log_level::{level_name, stateless};
use super::request;
use super::{Sending, Session};
use crate::error::{ErrorCode, HostError, HostResult};
use crate::json::check_bounds;
use crate::limits::Limits;

impl Session {
    /// Sends typed `request` to server `server_id` within `sending` and
    /// bounds its result object ([`check_bounds`]).
    ///
    /// # Errors
    /// `protocol_error`, `timeout`, `server_exited`, `auth_required`,
    /// `limit_exceeded`, `cancelled` (see [`request::send_on`]).
    async fn send_typed(
        &self,
        server_id: &str,
        request: ClientRequest,
        limits: &Limits,
        sending: Sending<'_>,
    ) -> HostResult<Value> {
        let method = request.method().to_owned();
        let mut wire = self.wire();
        wire.abort = sending.abort;
        let options = PeerRequestOptions::with_timeout(sending.timeout);
        let result = request::send_on(wire, server_id, request, options)
            .await
            .map_err(|e| e.into_error(server_id, &method))?;
        check_bounds(&format!("{method} on {server_id}"), &result, limits)?;
        Ok(result)
    }

    /// MCP `completion/complete` with `params` (rmcp's typed
    /// `CompleteRequest`): the server's `CompleteResult`, checked (at most
    /// 100 `values`, MCP "Utilities › Completion › Completion Results").
    ///
    /// # Errors
    /// `not_supported` (nothing sent) when the server did not declare
    /// `completions`; `protocol_error` also for a result that is not a
    /// `CompleteResult` or has more than 100 values; those of the request.
    pub async fn complete(
        &self,
        server_id: &str,
        params: CompleteRequestParams,
        limits: &Limits,
        sending: Sending<'_>,
    ) -> HostResult<CompleteResult> {
        const METHOD: &str = "completion/complete";
        self.require(server_id, METHOD)?;
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        let value = self.send_typed(server_id, request, limits, sending).await?;
        let bad = |what: String| {
            HostError::new(
                ErrorCode::ProtocolError,
                format!("{METHOD} on {server_id}: {what}"),
            )
        };
        let result: CompleteResult = serde_json::from_value(value)
            .map_err(|e| bad(format!("the result is not a CompleteResult: {e}")))?;
        result.completion.validate().map_err(bad)?;
        Ok(result)
    }

    /// Sets the server's log level (see [`super::log_level`]): at 2025-era
    /// revisions one `logging/setLevel` (rmcp's typed `SetLevelRequest`);
    /// at 2026-07-28 nothing is sent. Either way, once it succeeded the
    /// level is this server's (kept for its next connections and, at
    /// 2026-07-28, sent in the `_meta` of each request).
    ///
    /// # Errors
    /// `not_supported` (nothing sent, nothing kept) when the server did not
    /// declare `logging`; those of the request (the level is then not kept).
    pub async fn set_log_level(
        &self,
        server_id: &str,
        level: LoggingLevel,
        limits: &Limits,
        sending: Sending<'_>,
    ) -> HostResult<()> {
        self.require(server_id, "logging/setLevel")?;
        if !stateless(&self.peer) {
            self.send_level(server_id, level, limits, sending).await?;
        }
        self.handler.log_level.set(level);
        Ok(())
    }

    /// A new connection of a server whose app set `level` before: sends
    /// `logging/setLevel` again (2025 era), within `timeout`. Returns whether
    /// a request was sent (`false` at 2026-07-28, where the level travels
    /// in each request's `_meta`).
    ///
    /// # Errors
    /// `not_supported` when this connection's server no longer declares
    /// `logging`; those of the request.
    pub async fn reapply_log_level(
        &self,
        server_id: &str,
        level: LoggingLevel,
        limits: &Limits,
        timeout: Duration,
    ) -> HostResult<bool> {
        self.require(server_id, "logging/setLevel")?;
        if stateless(&self.peer) {
            return Ok(false);
        }
        let sending = Sending {
            timeout,
            abort: None,
        };
        self.send_level(server_id, level, limits, sending).await?;
        Ok(true)
    }

    /// One typed `logging/setLevel` of `level`.
    async fn send_level(
        &self,
        server_id: &str,
        level: LoggingLevel,
        limits: &Limits,
        sending: Sending<'_>,
    ) -> HostResult<()> {
        let name = level_name(&level);
        let params = SetLevelRequestParams::new(level);
        let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(params));
        self.send_typed(server_id, request, limits, sending)
            .await
            .map_err(|mut e| {
                e.message = format!("{} (level {name:?})", e.message);
                e
            })
            .map(drop)
    }
}
