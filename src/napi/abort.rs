//! Requests the JS side can abort (`callTool`, `readResource`, `getPrompt`
//! with an `AbortSignal`): each takes a JS request id, and `cancel(id)`
//! gives it up.
//!
//! The request's cancellation token is registered under its id
//! synchronously, while the JS call is still on the stack, before the
//! promise is returned and before any of its work runs on the async
//! runtime. So an abort at any moment after the call started (even in the
//! same tick) finds the token: the request fails with `cancelled`, is not
//! sent if it has not been yet, and otherwise the server is sent
//! `notifications/cancelled` for it once (MCP 2025-11-25 "Utilities ›
//! Cancellation"). The entry is dropped when the request settles.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{parse, run, NativeHost};
use crate::error::HostResult;
use crate::host::{CallTool, CallToolArgs};

/// The cancellation tokens of the abortable requests in flight, by JS request id.
#[derive(Clone, Default)]
pub(super) struct Cancels(Arc<Mutex<HashMap<u32, CancellationToken>>>);

impl Cancels {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u32, CancellationToken>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a fresh token under `id` now; it stays until the returned
    /// guard is dropped.
    fn register(&self, id: u32) -> Registered {
        let token = CancellationToken::new();
        self.map().insert(id, token.clone());
        Registered {
            cancels: self.clone(),
            id,
            token,
        }
    }

    /// Cancels the request registered under `id` (no-op when it settled).
    fn cancel(&self, id: u32) {
        if let Some(token) = self.map().remove(&id) {
            token.cancel();
        }
    }
}

/// One registered request: its token, unregistered on drop (settled, or
/// its future dropped).
struct Registered {
    cancels: Cancels,
    id: u32,
    token: CancellationToken,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.cancels.map().remove(&self.id);
    }
}

impl NativeHost {
    /// Registers request `id` now and runs `command` (given its token) on
    /// the async runtime; the promise resolves its response envelope (see
    /// [`super::respond`]).
    fn abortable<'env, T, F>(
        &self,
        env: &'env Env,
        id: u32,
        command: impl FnOnce(CancellationToken) -> F,
    ) -> Result<PromiseRaw<'env, String>>
    where
        T: Serialize,
        F: Future<Output = HostResult<T>> + Send + 'static,
    {
        let registered = self.cancels.register(id);
        let command = command(registered.token.clone());
        env.spawn_future(async move {
            let response = run(command).await;
            drop(registered);
            Ok(response)
        })
    }
}

#[napi]
impl NativeHost {
    /// `callTool(requestId, argsJson)` → response JSON with the
    /// `CallToolResult`; `cancel(requestId)` aborts it.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn call_tool<'env>(
        &self,
        env: &'env Env,
        request_id: u32,
        args_json: String,
    ) -> Result<PromiseRaw<'env, String>> {
        let host = self.host.clone();
        self.abortable(env, request_id, |token| async move {
            let args = parse::<CallToolArgs>("callTool arguments", &args_json)?;
            host.call_tool(CallTool::try_from(args)?, token).await
        })
    }

    /// `resources/read` → response JSON; `cancel(requestId)` aborts it.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn read_resource<'env>(
        &self,
        env: &'env Env,
        request_id: u32,
        server_id: String,
        uri: String,
    ) -> Result<PromiseRaw<'env, String>> {
        let host = self.host.clone();
        self.abortable(env, request_id, |token| async move {
            host.read_resource(&server_id, &uri, Some(&token)).await
        })
    }

    /// `prompts/get` with `argumentsJson` (an object of strings, or `null`)
    /// → response JSON; `cancel(requestId)` aborts it.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn get_prompt<'env>(
        &self,
        env: &'env Env,
        request_id: u32,
        server_id: String,
        name: String,
        arguments_json: String,
    ) -> Result<PromiseRaw<'env, String>> {
        let host = self.host.clone();
        self.abortable(env, request_id, |token| async move {
            let arguments =
                parse::<Option<Map<String, Value>>>("getPrompt arguments", &arguments_json)?;
            host.get_prompt(&server_id, &name, arguments, Some(&token))
                .await
        })
    }

    /// Cancels the pending request with this id (no-op when it settled or
    /// was never started).
    #[napi(catch_unwind)]
    pub fn cancel(&self, request_id: u32) {
        self.cancels.cancel(request_id);
    }
}
