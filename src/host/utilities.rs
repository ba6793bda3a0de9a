//! `complete` and `setLogLevel`: MCP "Utilities" passed through to one
//! ready server, each only when the server declared the capability it
//! needs (`completions`, `logging`; see [`crate::mcp::capabilities`]).
//!
//! - [`Host::complete`]: MCP `completion/complete` (MCP 2025-06-18+
//!   "Utilities › Completion": `ref/prompt` and `ref/resource`, the
//!   argument being completed, and `context.arguments`, the values already
//!   chosen).
//! - [`Host::set_log_level`]: MCP `logging/setLevel` (RFC 5424 levels). The
//!   level is remembered per server and set again on each new connection
//!   (reconnect, restart, crash recovery); at 2026-07-28, which has no
//!   `logging/setLevel`, it travels in the `_meta` of each request instead
//!   (see [`crate::mcp::log_level`]).
//!
//! ## Errors
//!
//! Both fail with `invalid_argument` (naming the field), `not_found` (no
//! such server), `server_not_ready`, `not_supported` (the server did not
//! declare the capability; nothing sent), `protocol_error`, `timeout`
//! (`callTimeoutMs`), `server_exited`, `auth_required`, `limit_exceeded`,
//! `cancelled` or `disposed`.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{ArgumentInfo, CompleteRequestParams, CompletionContext, Reference};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::error::{ErrorCode, HostError, HostResult};
use crate::mcp::log_level::parse_level;
use crate::mcp::Sending;

/// What to complete (JS `host.complete({serverId, ref, argument, context?})`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Complete {
    /// Customization id of the server.
    pub server_id: String,
    /// The prompt or resource template whose argument is completed.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument being completed and what the user typed so far.
    pub argument: CompletionArgument,
    /// Values of the other arguments already chosen (MCP 2025-06-18+
    /// `context.arguments`).
    #[serde(default)]
    pub context: Option<CompletionContextArgs>,
}

/// `ref` of `completion/complete` (JS `{type: 'ref/prompt', name}` or
/// `{type: 'ref/resource', uri}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum CompletionRef {
    /// A prompt's argument (`ref/prompt`).
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
    },
    /// A resource template's URI variable (`ref/resource`).
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template's URI (e.g. `file:///{path}`).
        uri: String,
    },
}

/// `argument` of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// What is typed so far (may be empty).
    pub value: String,
}

/// `context` of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionContextArgs {
    /// Already chosen arguments, name → value.
    #[serde(default)]
    pub arguments: Option<BTreeMap<String, String>>,
}

impl Complete {
    /// rmcp's typed `completion/complete` parameters.
    ///
    /// # Errors
    /// `invalid_argument` for an empty `serverId`, `ref.name`, `ref.uri` or
    /// `argument.name`.
    fn params(&self) -> HostResult<CompleteRequestParams> {
        let empty = |field: &str| {
            HostError::new(
                ErrorCode::InvalidArgument,
                format!("params.{field}: must be a non-empty string"),
            )
        };
        let reference = match &self.reference {
            CompletionRef::Prompt { name } if name.is_empty() => return Err(empty("ref.name")),
            CompletionRef::Resource { uri } if uri.is_empty() => return Err(empty("ref.uri")),
            CompletionRef::Prompt { name } => Reference::for_prompt(name),
            CompletionRef::Resource { uri } => Reference::for_resource(uri),
        };
        if self.argument.name.is_empty() {
            return Err(empty("argument.name"));
        }
        if self.server_id.is_empty() {
            return Err(empty("serverId"));
        }
        let argument = ArgumentInfo::new(&self.argument.name, &self.argument.value);
        let mut params = CompleteRequestParams::new(reference, argument);
        if let Some(arguments) = self.context.as_ref().and_then(|c| c.arguments.clone()) {
            let context = CompletionContext::with_arguments(arguments.into_iter().collect());
            params = params.with_context(context);
        }
        Ok(params)
    }
}

impl Host {
    /// MCP `completion/complete` on ready server `request.server_id`: the
    /// server's `CompleteResult` (`{completion: {values, total?,
    /// hasMore?}}`, at most 100 values). Once `abort` is cancelled the
    /// request is given up (`notifications/cancelled`).
    ///
    /// # Errors
    /// See the module doc; `not_supported` when the server did not declare
    /// `completions`.
    pub async fn complete(
        &self,
        request: &Complete,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Value> {
        let params = request.params()?;
        let server_id = request.server_id.as_str();
        let handle = self.server(server_id)?;
        let _busy = handle.live.activity().begin();
        let conn = self.ready_connection(server_id)?;
        let limits = self.shared.limits();
        let sending = Sending {
            timeout: Duration::from_millis(limits.call_timeout_ms),
            abort,
        };
        let result = self
            .until_disposed(conn.complete(server_id, params, limits, sending))
            .await?;
        serde_json::to_value(result).map_err(|e| {
            let what = format!("completion/complete on {server_id}: cannot encode result: {e}");
            HostError::new(ErrorCode::Internal, what)
        })
    }

    /// Sets the log level of ready server `server_id` to `level` (`debug`,
    /// `info`, `notice`, `warning`, `error`, `critical`, `alert`,
    /// `emergency`): MCP `logging/setLevel` (2025 era); at 2026-07-28
    /// nothing is sent and the level goes in each later request's `_meta`.
    /// The level is remembered for the server and set again after each
    /// reconnect or restart (a `warn` log, target `host.logging`, when that
    /// fails). The server's log messages arrive as `log` events
    /// (`target: "server.log"`).
    ///
    /// # Errors
    /// See the module doc; `invalid_argument` for another level;
    /// `not_supported` when the server did not declare `logging`.
    pub async fn set_log_level(
        &self,
        server_id: &str,
        level: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<()> {
        let level = parse_level(level)?;
        let handle = self.server(server_id)?;
        let _busy = handle.live.activity().begin();
        let conn = self.ready_connection(server_id)?;
        let limits = self.shared.limits();
        let sending = Sending {
            timeout: Duration::from_millis(limits.call_timeout_ms),
            abort,
        };
        self.until_disposed(conn.set_log_level(server_id, level, limits, sending))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(json: Value) -> Result<Complete, String> {
        serde_json::from_value(json).map_err(|e| e.to_string())
    }

    #[test]
    fn a_prompt_ref_with_context_becomes_rmcp_params() {
        let request = complete(serde_json::json!({
            "serverId": "docs",
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "city", "value": "Pa"},
            "context": {"arguments": {"country": "FR"}}
        }));
        let params = request.and_then(|r| r.params().map_err(|e| e.message));
        let wire = params.map(|p| serde_json::to_value(p).unwrap_or_default());
        assert_eq!(
            wire,
            Ok(serde_json::json!({
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "city", "value": "Pa"},
                "context": {"arguments": {"country": "FR"}}
            }))
        );
    }

    #[test]
    fn bad_arguments_name_their_field() {
        let tool_ref = complete(serde_json::json!({
            "serverId": "s", "ref": {"type": "ref/tool", "name": "x"},
            "argument": {"name": "a", "value": ""}
        }));
        assert!(tool_ref.is_err_and(|e| e.contains("ref/tool")));
        let empty = complete(serde_json::json!({
            "serverId": "s", "ref": {"type": "ref/resource", "uri": ""},
            "argument": {"name": "a", "value": ""}
        }))
        .map(|r| r.params().map_err(|e| e.message));
        assert_eq!(
            empty,
            Ok(Err("params.ref.uri: must be a non-empty string".to_owned()))
        );
    }
}
