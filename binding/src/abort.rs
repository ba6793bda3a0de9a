//! Requests the JS side can abort (an `AbortSignal` or `timeoutMs` in their
//! `RequestOptions`): `callTool`, `readResource`, `getPrompt`, the list
//! walks, `subscribeResource` / `unsubscribeResource`, `readAppResource`
//! and `authorize`. Each takes a JS request id, returns at once, and
//! answers later with a `response` item of the event batch (`{r: requestId,
//! v: value}` for a value passed on as text, `{r: requestId, a: envelope}`
//! with the `{ok, …}` envelope of `super::respond` otherwise; one wrapper
//! object, not three, for `JSON.parse` to build): one JS callback settles every
//! request answered since the last drain, as it delivers events, instead of
//! one threadsafe-function call per request. `cancel(id)` gives a request
//! up. `callTool` with progress wanted also passes each progress
//! notification of the call to JS, as a `progress` item of the event batch
//! (queued before the call's `response`).
//!
//! The request's cancellation token is registered under its id
//! synchronously, while the JS call is still on the stack, before the
//! method returns and before any of its work runs on the async
//! runtime. So an abort at any moment after the call started (even in the
//! same tick) finds the token: the request fails with `cancelled`, is not
//! sent if it has not been yet, and otherwise the server is sent
//! `notifications/cancelled` for it once (MCP 2025-11-25 "Utilities ›
//! Cancellation"). The entry is dropped when the request settles.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use ahp_mcp_host::error::{ErrorCode, HostError, HostResult};
use ahp_mcp_host::host::{CallTool, JsonText, OnProgress, Progress};
use napi_derive::napi;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::options::{JsAuthorizeArgs, JsCallToolArgs};
use super::{failure, parse, run, JsSink, NativeHost};

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
    /// the async runtime; its response envelope (see [`super::respond`])
    /// goes to the event outbox as a `response` item (see
    /// [`response_item`]), so one JS callback settles every request
    /// answered since the last drain, after the items the request queued
    /// before (its progress).
    pub(super) fn abortable<T, F>(
        &self,
        id: u32,
        command: impl FnOnce(CancellationToken) -> F + Send + 'static,
    ) where
        T: Serialize,
        F: Future<Output = HostResult<T>> + Send + 'static,
    {
        self.answer_later(id, move |token| {
            let answering = command(token);
            async move { response_item(id, &run(answering).await) }
        });
    }

    /// Registers request `id` now and runs `command` (given its token) on
    /// the async runtime; the `response` item it resolves to goes to the
    /// event outbox.
    fn answer_later<F>(
        &self,
        id: u32,
        command: impl FnOnce(CancellationToken) -> F + Send + 'static,
    ) where
        F: Future<Output = String> + Send + 'static,
    {
        let registered = self.cancels.register(id);
        let sink = self.sink.clone();
        // The request's future (a whole `callTool` state machine, kilobytes)
        // is made and boxed on the runtime's thread: the task spawned here
        // holds only the closure's captures and then a box, so the JS thread
        // never copies the large future (each move by value was a memmove
        // there; docs/benchmark.md, "Issue 28").
        napi::bindgen_prelude::spawn(async move {
            let answering = Box::pin(command(registered.token.clone()));
            let item = answering.await;
            drop(registered);
            sink.push(item);
        });
    }
}

/// The `response` item of JS request `request_id`: `{"r":<requestId>,
/// "a":<envelope>}`, the response envelope spliced in as it is (no second
/// encoding).
fn response_item(request_id: u32, response: &str) -> String {
    format!(r#"{{"r":{request_id},"a":{response}}}"#)
}

/// The `response` item of a request answered with a JSON text:
/// `{"r":<requestId>,"v":<text>}` (a success: no envelope), written around
/// the text in one buffer (the text is copied once, not encoded again); a
/// failure is a [`response_item`].
fn text_response_item(request_id: u32, answer: HostResult<JsonText>) -> String {
    let text = match answer {
        Ok(text) => text,
        Err(e) => return response_item(request_id, &failure(&e)),
    };
    let id = request_id.to_string();
    let (head, mid, tail) = (r#"{"r":"#, r#","v":"#, "}");
    let text = text.as_str();
    let mut item =
        String::with_capacity(head.len() + id.len() + mid.len() + text.len() + tail.len());
    for part in [head, &id, mid, text, tail] {
        item.push_str(part);
    }
    item
}

/// Runs `work` until it ends or `token` is cancelled (then `cancelled`;
/// `work` is dropped, which ends what it owns, e.g. a sign-in's loopback
/// redirect listener).
async fn until_cancelled<T>(
    token: &CancellationToken,
    what: &str,
    work: impl Future<Output = HostResult<T>>,
) -> HostResult<T> {
    tokio::select! {
        r = work => r,
        () = token.cancelled() => Err(HostError::new(
            ErrorCode::Cancelled,
            format!("{what} was cancelled"),
        )),
    }
}

/// A `progress` item of the event batch for JS request `request_id`:
/// `{event: "progress", payload: {requestId, progress, total?, message?}}`.
fn progress_item(request_id: u32, p: &Progress) -> Option<String> {
    let mut payload = serde_json::json!({ "requestId": request_id, "progress": p.progress });
    if let Some(total) = p.total {
        payload["total"] = total.into();
    }
    if let Some(message) = &p.message {
        payload["message"] = message.clone().into();
    }
    let item = serde_json::json!({ "event": "progress", "payload": payload });
    serde_json::to_string(&item).ok()
}

/// The progress listener of JS request `request_id`: each notification
/// goes to the event outbox.
fn progress_to(sink: Arc<JsSink>, request_id: u32) -> OnProgress {
    Arc::new(move |p: &Progress| {
        if let Some(item) = progress_item(request_id, p) {
            sink.push(item);
        }
    })
}

#[napi]
impl NativeHost {
    /// `callTool(requestId, argsJson, withProgress)` answers (a `response` item of the event batch) with
    /// the `CallToolResult`; `cancel(requestId)` aborts it. With
    /// `withProgress`, each `notifications/progress` of the call arrives in
    /// the event batch as `{event: "progress", payload: {requestId,
    /// progress, total?, message?}}` before the call resolves (JS drains the
    /// outbox with `takeEvents` when it settles).
    #[napi]
    pub fn call_tool(&self, request_id: u32, args_json: String, with_progress: Option<bool>) {
        let host = self.host.clone();
        let on_progress =
            (with_progress == Some(true)).then(|| progress_to(self.sink.clone(), request_id));
        self.answer_later(request_id, move |token| async move {
            let answer = async {
                let args = parse::<JsCallToolArgs>("options", &args_json)?;
                host.call_tool_json(CallTool::try_from(args)?, token, on_progress)
                    .await
            };
            text_response_item(request_id, answer.await)
        })
    }

    /// Every event item pending in the outbox, as one JSON array (`[]` when
    /// none), taken now rather than on the next drain.
    #[napi(catch_unwind)]
    pub fn take_events(&self) -> String {
        self.sink.outbox.take_batch()
    }

    /// One MCP list, every page, of a server answers (a `response` item of the event batch) with the
    /// items: `list` is `resources` (`resources/list`), `resourceTemplates`
    /// (`resources/templates/list`) or `prompts` (`prompts/list`);
    /// `cancel(requestId)` aborts it. Another `list`: `invalid_argument`.
    #[napi]
    pub fn list(&self, request_id: u32, server_id: String, list: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            let abort = Some(&token);
            match list.as_str() {
                "resources" => host.list_resources(&server_id, abort).await,
                "resourceTemplates" => host.list_resource_templates(&server_id, abort).await,
                "prompts" => host.list_prompts(&server_id, abort).await,
                other => Err(HostError::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "list: unknown list {other:?} (resources, resourceTemplates or prompts)"
                    ),
                )),
            }
        })
    }

    /// `subscribeResource(requestId, serverId, uri)` answers (a `response` item of the event batch) with
    /// `null`; `cancel(requestId)` aborts it (see `Host::subscribe_resource`).
    #[napi]
    pub fn subscribe_resource(&self, request_id: u32, server_id: String, uri: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            host.subscribe_resource(&server_id, &uri, Some(&token))
                .await
        })
    }

    /// `unsubscribeResource(requestId, serverId, uri)` answers (a `response` item of the event batch) with
    /// `null`; `cancel(requestId)` aborts the request in flight (see
    /// `Host::unsubscribe_resource`).
    #[napi]
    pub fn unsubscribe_resource(&self, request_id: u32, server_id: String, uri: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            host.unsubscribe_resource(&server_id, &uri, Some(&token))
                .await
        })
    }

    /// `readAppResource(requestId, serverId, uri)` answers (a `response` item of the event batch) with the
    /// `ReadResourceResult`; `cancel(requestId)` aborts it.
    #[napi]
    pub fn read_app_resource(&self, request_id: u32, server_id: String, uri: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            host.read_app_resource(&server_id, &uri, Some(&token)).await
        })
    }

    /// `authorize(requestId, serverId, argsJson)`: host-run OAuth sign-in;
    /// answers (a `response` item of the event batch) with `null`;
    /// `cancel(requestId)` ends it (`cancelled`):
    /// the wait for the user ends and the loopback redirect listener closes.
    #[napi]
    pub fn authorize(&self, request_id: u32, server_id: String, args_json: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            let args = parse::<JsAuthorizeArgs>("options", &args_json)?;
            let what = format!("the sign-in to {server_id}");
            // Boxed: the sign-in's future is large (kept out of this task's own state).
            let signing_in = Box::pin(host.authorize(&server_id, args.into()));
            until_cancelled(&token, &what, signing_in).await
        })
    }

    /// `completeAuthorization(requestId, serverId, callbackUrl)`: hands the
    /// callback URL of a host-run sign-in back (a pasted URL, or one the
    /// app's redirect URI received); answers (a `response` item of the
    /// event batch) with `null` once the sign-in completed, or with its
    /// error; `cancel(requestId)` stops waiting (the sign-in goes on).
    #[napi]
    pub fn complete_authorization(&self, request_id: u32, server_id: String, callback_url: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            let what = format!("the sign-in to {server_id}");
            let completing = Box::pin(host.complete_authorization(&server_id, &callback_url));
            until_cancelled(&token, &what, completing).await
        })
    }

    /// `resources/read`: answers (a `response` item of the event batch) with the `ReadResourceResult`; `cancel(requestId)` aborts it.
    #[napi]
    pub fn read_resource(&self, request_id: u32, server_id: String, uri: String) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            host.read_resource(&server_id, &uri, Some(&token)).await
        })
    }

    /// `prompts/get` with `argumentsJson` (an object of strings, or `null`):
    /// answers (a `response` item of the event batch) with the `GetPromptResult`; `cancel(requestId)` aborts it.
    #[napi]
    pub fn get_prompt(
        &self,
        request_id: u32,
        server_id: String,
        name: String,
        arguments_json: String,
    ) {
        let host = self.host.clone();
        self.abortable(request_id, |token| async move {
            let arguments = parse::<Option<Map<String, Value>>>("args", &arguments_json)?;
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
