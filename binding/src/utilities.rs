//! MCP "Utilities" methods of [`NativeHost`] (see `host/utilities.rs`):
//! `complete` and `setLogLevel`, requests whose answer is a `response`
//! item of the event batch; `cancel(requestId)` aborts them.

use ahp_mcp_host::host::Complete;
use napi_derive::napi;

use super::{parse, NativeHost};

#[napi]
impl NativeHost {
    /// `complete(requestId, argsJson)` with `{serverId, ref, argument,
    /// context?}`: answers with the server's `CompleteResult` (MCP
    /// `completion/complete`); a wrong field is `invalid_argument` naming
    /// `params.<field>`.
    #[napi]
    pub fn complete(&self, request_id: u32, args_json: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            let args = parse::<Complete>("params", &args_json)?;
            host.complete(&args, Some(&token)).await
        })
    }

    /// `setLogLevel(requestId, serverId, level)`: answers with `null` once
    /// the level is set (MCP `logging/setLevel`, or kept for each request's
    /// `_meta` at 2026-07-28).
    #[napi]
    pub fn set_log_level(&self, request_id: u32, server_id: String, level: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            host.set_log_level(&server_id, &level, Some(&token)).await
        })
    }
}
