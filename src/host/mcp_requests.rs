//! MCP requests passed through to one ready server: resources and prompts
//! (MCP 2025-11-25 "Server Features › Resources", "› Prompts"), with every
//! page of a list walked and every result bounded by the limits, and the
//! app's resource subscriptions (see [`crate::mcp::listen`]).
//!
//! Lists and reads go through the connection's response cache (SEP-2549,
//! [`crate::mcp::cache`]): within a result's `ttlMs`, and until a
//! change notification makes it stale, the same list page or read is
//! answered without a request.
//!
//! ## Errors
//!
//! The host follows the capabilities the server declared (see
//! [`crate::mcp::capabilities`]): a list of an undeclared capability
//! is empty and `resources/read` / `prompts/get` fail with `not_supported`,
//! both without a request.
//!
//! Every method here fails with `not_found` (no such server),
//! `server_not_ready` (also once the connection is closing),
//! `server_exited` (the connection closed under the request),
//! `protocol_error` (a JSON-RPC error carries its code
//! in `data.code`; a "resource not found" answer to `resources/read` is
//! `not_found`, see [`Host::read_resource`]), `timeout` (one
//! request or page took longer than `callTimeoutMs`), `auth_required`,
//! `limit_exceeded` (pages, cursor, `maxListItems`, or `maxResultBytes` for
//! the result or for all items of a list together) or `disposed`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::Host;
use crate::error::{ErrorCode, ErrorDetail, HostError, HostResult};
use crate::json::check_list_bounds;
use crate::limits::MAX_SUBSCRIBED_URI_BYTES;
use crate::mcp::{Sending, Session};

impl Host {
    /// The live connection of ready server `server_id`.
    ///
    /// # Errors
    /// `not_found`, `server_not_ready`, `disposed`.
    pub(super) fn ready_connection(&self, server_id: &str) -> HostResult<Arc<Session>> {
        self.check_live()?;
        let handle = self.server(server_id)?;
        handle.live.session().ok_or_else(|| {
            HostError::new(
                ErrorCode::ServerNotReady,
                format!("server {server_id} is not ready"),
            )
        })
    }

    /// Walks every page of `method` on `server_id` and returns the items
    /// under `key` (MCP 2025-11-25 "Utilities › Pagination").
    ///
    /// # Errors
    /// See the module doc.
    /// Once `abort` is cancelled the walk is given up: the page in flight
    /// is cancelled (`notifications/cancelled`), no further page is asked
    /// for, and it fails with `cancelled`.
    async fn list_items(
        &self,
        server_id: &str,
        (method, key): (&str, &str),
        abort: Option<&CancellationToken>,
    ) -> HostResult<Vec<Value>> {
        // In flight: a lazy server's idle stop waits for it.
        let handle = self.server(server_id)?;
        let _busy = handle.live.activity().begin();
        let conn = self.ready_connection(server_id)?;
        let limits = self.shared.limits();
        let walk = async {
            let bound = (limits.max_list_items, "maxListItems");
            (conn
                .list_all(server_id, (method, key), (limits, bound), abort)
                .await)
                .map_err(|e| e.into_error(server_id, method))
        };
        let items = self.until_disposed(walk).await?;
        check_list_bounds(&format!("{method} on {server_id}"), &items, limits)?;
        Ok(items)
    }

    /// Sends one request to ready server `server_id` (see [`Session::request`];
    /// each send bounded by `callTimeoutMs`), given up once `abort` is
    /// cancelled (not sent when it already is).
    ///
    /// # Errors
    /// See the module doc; `not_supported` (not sent) when the server did
    /// not declare the capability `method` needs; `limit_exceeded` after 10
    /// `input_required` rounds; `cancelled`.
    pub(super) async fn request(
        &self,
        server_id: &str,
        method: &str,
        params: Value,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Value> {
        // In flight: a lazy server's idle stop waits for it.
        let handle = self.server(server_id)?;
        let _busy = handle.live.activity().begin();
        let conn = self.ready_connection(server_id)?;
        let limits = self.shared.limits();
        let sending = Sending {
            timeout: Duration::from_millis(limits.call_timeout_ms),
            abort,
        };
        let request = conn.request(server_id, (method, params), limits, sending);
        self.until_disposed(request).await
    }

    /// MCP `resources/list`, every page: the server's `Resource` objects
    /// (none, without a request, when it did not declare `resources`).
    ///
    /// # Errors
    /// `not_found`, `server_not_ready`, `protocol_error`, `timeout`,
    /// `auth_required`, `limit_exceeded`, `disposed` (see the module doc);
    /// `cancelled` once `abort` is (see `list_items`).
    pub async fn list_resources(
        &self,
        server_id: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Vec<Value>> {
        self.list_items(server_id, ("resources/list", "resources"), abort)
            .await
    }

    /// MCP `resources/templates/list`, every page: `ResourceTemplate`
    /// objects (none, without a request, when it did not declare `resources`).
    ///
    /// # Errors
    /// `not_found`, `server_not_ready`, `protocol_error`, `timeout`,
    /// `auth_required`, `limit_exceeded`, `disposed` (see the module doc);
    /// `cancelled` once `abort` is (see `list_items`).
    pub async fn list_resource_templates(
        &self,
        server_id: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Vec<Value>> {
        let what = ("resources/templates/list", "resourceTemplates");
        self.list_items(server_id, what, abort).await
    }

    /// MCP `resources/read`: the `ReadResourceResult` (`{contents: [...]}`).
    /// Once `abort` is cancelled the read is given up (see `Sending::abort`).
    ///
    /// # Errors
    /// `not_found`, `server_not_ready`, `protocol_error`, `timeout`,
    /// `auth_required`, `limit_exceeded`, `disposed` (see the module doc);
    /// `not_supported` when the server did not declare `resources`;
    /// `not_found` also when the server says the resource does not exist:
    /// JSON-RPC -32602 with `data.uri` = `uri` (SEP-2164, MCP 2026-07-28) or
    /// the 2025-era -32002 (the answer kept as `data` `{code, data}`). Any other JSON-RPC
    /// error is `protocol_error` with `data.code`; `cancelled`.
    pub async fn read_resource(
        &self,
        server_id: &str,
        uri: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Value> {
        self.request(server_id, "resources/read", json!({ "uri": uri }), abort)
            .await
            .map_err(|e| resource_not_found(e, server_id, uri))
    }

    /// MCP `prompts/list`, every page: `Prompt` objects (none, without a
    /// request, when it did not declare `prompts`).
    ///
    /// # Errors
    /// `not_found`, `server_not_ready`, `protocol_error`, `timeout`,
    /// `auth_required`, `limit_exceeded`, `disposed` (see the module doc);
    /// `cancelled` once `abort` is (see `list_items`).
    pub async fn list_prompts(
        &self,
        server_id: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Vec<Value>> {
        self.list_items(server_id, ("prompts/list", "prompts"), abort)
            .await
    }

    /// MCP `prompts/get` with string `arguments`: the `GetPromptResult`.
    /// Once `abort` is cancelled the request is given up (see `Sending::abort`).
    ///
    /// # Errors
    /// `not_found`, `server_not_ready`, `protocol_error`, `timeout`,
    /// `auth_required`, `limit_exceeded`, `disposed` (see the module doc);
    /// `not_supported` when the server did not declare `prompts`; `cancelled`.
    pub async fn get_prompt(
        &self,
        server_id: &str,
        name: &str,
        arguments: Option<Map<String, Value>>,
        abort: Option<&CancellationToken>,
    ) -> HostResult<Value> {
        let mut params = json!({ "name": name });
        if let Some(a) = arguments {
            params["arguments"] = Value::Object(a);
        }
        self.request(server_id, "prompts/get", params, abort).await
    }
}

impl Host {
    /// Follows updates of resource `uri` on `server_id` (MCP
    /// `resources/subscribe` in the 2025 era, a `subscriptions/listen`
    /// stream for it in 2026-07-28); each update becomes a `resourceUpdated`
    /// event. The subscription is kept across reconnects of the server
    /// until [`Host::unsubscribe_resource`]. Subscribing again is a no-op.
    ///
    /// # Errors
    /// `invalid_argument` (empty URI, or longer than
    /// [`MAX_SUBSCRIBED_URI_BYTES`]), `not_found`, `server_not_ready`,
    /// `not_supported` (the server did not declare `resources.subscribe`,
    /// nothing sent; or a 2026-07-28 server did not acknowledge the URI),
    /// `limit_exceeded` (more than [`crate::limits::MAX_RESOURCE_SUBSCRIPTIONS`]),
    /// `protocol_error`, `timeout` (`callTimeoutMs`), `auth_required`, `disposed`.
    ///
    /// Once `abort` is cancelled the subscription is given up and fails with
    /// `cancelled`: a `resources/subscribe` in flight is cancelled
    /// (`notifications/cancelled`), a `subscriptions/listen` stream is
    /// closed, and the URI is not followed.
    pub async fn subscribe_resource(
        &self,
        server_id: &str,
        uri: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<()> {
        check_uri("subscribeResource", uri)?;
        let conn = self.ready_connection(server_id)?;
        conn.require(server_id, "resources/subscribe")?;
        let handle = self.server(server_id)?;
        handle.live.resources.insert(server_id, uri)?;
        let timeout = Duration::from_millis(self.shared.limits().call_timeout_ms);
        let subscribed = self
            .until_disposed(conn.subscribe(uri, (timeout, abort)))
            .await;
        if subscribed.is_err() {
            handle.live.resources.remove(uri);
        }
        subscribed
    }

    /// Stops following resource `uri` on `server_id`: no `resourceUpdated`
    /// for it after this resolves. On a ready server, MCP
    /// `resources/unsubscribe` (2025 era) or the stream is cancelled
    /// (2026-07-28); not subscribed: nothing happens.
    ///
    /// # Errors
    /// `invalid_argument`, `not_found`, `disposed`; in the 2025 era those of
    /// the `resources/unsubscribe` request (`protocol_error`, `timeout`),
    /// the subscription being dropped all the same.
    ///
    /// Once `abort` is cancelled a `resources/unsubscribe` in flight is
    /// cancelled (`notifications/cancelled`) and this fails with
    /// `cancelled`; the subscription is dropped all the same.
    pub async fn unsubscribe_resource(
        &self,
        server_id: &str,
        uri: &str,
        abort: Option<&CancellationToken>,
    ) -> HostResult<()> {
        check_uri("unsubscribeResource", uri)?;
        self.check_live()?;
        let handle = self.server(server_id)?;
        handle.live.resources.remove(uri);
        let Some(conn) = handle.live.session() else {
            return Ok(());
        };
        let timeout = Duration::from_millis(self.shared.limits().call_timeout_ms);
        self.until_disposed(conn.unsubscribe(uri, (timeout, abort)))
            .await
    }
}

/// `e` as `not_found` when it is a server's "resource not found" answer to
/// `resources/read` of `uri` (SEP-2164: -32602 with `data.uri`; 2025 era:
/// -32002); otherwise `e` unchanged.
fn resource_not_found(e: HostError, server_id: &str, uri: &str) -> HostError {
    let ErrorDetail::JsonRpc { code, data } = &e.detail else {
        return e;
    };
    let names_uri = data
        .as_ref()
        .and_then(|d| d.get("uri"))
        .and_then(Value::as_str)
        == Some(uri);
    if !(*code == -32002 || (*code == -32602 && names_uri)) {
        return e;
    }
    HostError {
        code: ErrorCode::NotFound,
        message: format!("server {server_id} has no resource {uri:?} ({})", e.message),
        detail: e.detail,
    }
}

/// Checks a resource URI argument of `method`.
///
/// # Errors
/// `invalid_argument` when empty or longer than [`MAX_SUBSCRIBED_URI_BYTES`].
fn check_uri(method: &str, uri: &str) -> HostResult<()> {
    if uri.is_empty() || uri.len() > MAX_SUBSCRIBED_URI_BYTES {
        return Err(HostError::new(
            ErrorCode::InvalidArgument,
            format!("{method}: uri must be 1 to {MAX_SUBSCRIBED_URI_BYTES} bytes"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc(code: i64, data: Option<Value>) -> HostError {
        HostError::new(ErrorCode::ProtocolError, "resources/read on s failed")
            .with_detail(ErrorDetail::JsonRpc { code, data })
    }

    #[test]
    fn only_a_resource_not_found_answer_becomes_not_found() {
        let sep_2164 = rpc(-32602, Some(json!({ "uri": "a://x" })));
        let mapped = resource_not_found(sep_2164, "s", "a://x");
        assert_eq!(mapped.code, ErrorCode::NotFound);
        assert!(matches!(
            mapped.detail,
            ErrorDetail::JsonRpc { code: -32602, .. }
        ));
        let legacy = resource_not_found(rpc(-32002, None), "s", "a://x");
        assert_eq!(legacy.code, ErrorCode::NotFound);
        // -32602 about something else (no data.uri, or another URI) stays as it is.
        for other in [
            rpc(-32602, None),
            rpc(-32602, Some(json!({ "uri": "a://y" }))),
            rpc(-32603, None),
        ] {
            assert_eq!(
                resource_not_found(other, "s", "a://x").code,
                ErrorCode::ProtocolError
            );
        }
    }
}
