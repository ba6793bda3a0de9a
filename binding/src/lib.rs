//! The JavaScript binding (crate `ahp-mcp-host-napi`, built into
//! `ahp-mcp-host.<platform>.node`): the only crate that knows about
//! Node-API. It uses only the public API of the core (`ahp_mcp_host`); the
//! JS-shaped arguments are parsed here (`options.rs`, `parse`) and
//! converted into the core's typed parameters.
//!
//! `NativeHost` is the internal class behind the public `McpHost` wrapper in
//! `index.js`. Events leave as one JSON string per batch through a weak
//! threadsafe function ("drain on wake": at most one queued JS call; the
//! callback takes everything pending). Commands take and return JSON text:
//! every async command resolves `{"ok":true,"value":…}` or
//! `{"ok":false,"code":…,"message":…,"data":…}`, and the wrapper turns the
//! latter into a `HostError` with a stable `code`.

// `clippy --all-targets` also builds this crate's (empty) test harness,
// where napi-derive registers no export: the `#[napi]` functions then
// look unused.
#![cfg_attr(test, allow(dead_code))]

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use ahp_mcp_host::config::HeaderProvider;
use ahp_mcp_host::error::{ErrorCode, HostError, HostResult};
use ahp_mcp_host::events::{EventSink, HostEvent};
use ahp_mcp_host::host::{field_error, Host, HostDeps};
use ahp_mcp_host::requests::roots::{parse_roots, Root};
use ahp_mcp_host::requests::{RequestHandler, ServerRequestKind};
use ahp_mcp_host::{OsSecretStore, SecretStore};
use ahp_types::actions::ActionOrigin;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde::Serialize;
use serde_json::{json, Value};

use outbox::{Item, Outbox};
mod abort;
mod apps;
mod callbacks;
mod events;
mod import;
mod limits;
mod options;
mod outbox;
mod policy;
mod reducers;
mod runtime;
mod sandbox;
mod server_options;
mod skills;
mod tool_search;
mod utilities;

use callbacks::{JsHeaders, JsRequests, JsSecrets};
use options::{JsAddPlugin, JsAuthenticateArgs, JsHostOptions, JsSetToolEnabled};
use server_options::JsAddServer;

type EventsFn = ThreadsafeFunction<(), (), String, Status, false, true, 0>;
/// A JS callback taking one JSON text and resolving one JSON text.
pub(crate) type RequestFn =
    ThreadsafeFunction<String, Promise<String>, String, Status, false, true, 0>;

/// A weak threadsafe function of JS callback `f` when `used` (and given).
fn callback(
    used: bool,
    f: Option<&Function<String, Promise<String>>>,
) -> Result<Option<Arc<RequestFn>>> {
    let Some(f) = f.filter(|_| used) else {
        return Ok(None);
    };
    let tsfn: RequestFn = f
        .build_threadsafe_function::<String>()
        .callee_handled::<false>()
        .weak::<true>()
        .build()?;
    Ok(Some(Arc::new(tsfn)))
}

/// The `roots` option (`null`: not given), checked and encoded.
fn initial_roots(json: &str) -> HostResult<Option<Vec<Root>>> {
    match parse::<Value>("roots", json)? {
        Value::Null => Ok(None),
        value => parse_roots(&value).map(Some),
    }
}

fn handled_kinds(methods: &[String]) -> Result<Vec<ServerRequestKind>> {
    methods
        .iter()
        .map(|m| {
            ServerRequestKind::from_name(m).ok_or_else(|| {
                Error::new(
                    Status::InvalidArg,
                    format!("invalid_argument: unknown request handler {m:?}"),
                )
            })
        })
        .collect()
}

struct JsSink {
    outbox: Arc<Outbox>,
    tsfn: Arc<EventsFn>,
    /// The last id given to a question for JS (a server request, a trust
    /// question: JS `requestId`, increasing, one space for both).
    requests: std::sync::atomic::AtomicU64,
}

impl EventSink for JsSink {
    fn send(&self, event: HostEvent) {
        // Written now or when drained (see `outbox`).
        if let HostEvent::EncodedAction(encoded) = event {
            return self.wake_for(Item::Envelope(encoded));
        }
        let kind = events::kind_of(&event);
        let json = events::encoded(&event);
        let Ok(json) = json else { return };
        if self.outbox.bound().admit(kind, &json) {
            self.push(json);
        }
    }
}

impl JsSink {
    /// A sink queueing in `outbox` and waking JS through `tsfn`.
    fn new(outbox: Arc<Outbox>, tsfn: Arc<EventsFn>) -> Self {
        let requests = Default::default();
        Self {
            outbox,
            tsfn,
            requests,
        }
    }

    /// The id of the next question for JS (see [`JsSink::requests`]).
    fn next_request(&self) -> u64 {
        self.requests.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Queues one `{event, payload}` item (JSON) and wakes JS once per drain.
    fn push(&self, json: String) {
        self.wake_for(Item::Text(json));
    }

    /// Queues `item` and wakes JS once per drain.
    fn wake_for(&self, item: Item) {
        if self.outbox.push(item) {
            let _ = self.tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// The threadsafe function that wakes JS to drain `outbox` (`onEvents`
/// gets the drain's text); a drain that left items behind wakes JS again.
fn events_fn(on_events: &Function<(), ()>, outbox: &Arc<Outbox>) -> Result<Arc<EventsFn>> {
    // Set once the function exists; weak, so no cycle keeps it alive.
    let rewake = Arc::new(std::sync::OnceLock::<std::sync::Weak<EventsFn>>::new());
    let (drain, again) = (outbox.clone(), rewake.clone());
    let tsfn: EventsFn = on_events
        .build_threadsafe_function::<()>()
        .callee_handled::<false>()
        .weak::<true>()
        .build_callback(move |_ctx| {
            let (text, more) = drain.take_drain();
            if more && drain.schedule() {
                if let Some(tsfn) = again.get().and_then(std::sync::Weak::upgrade) {
                    let _ = tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
                }
            }
            Ok(text)
        })?;
    let tsfn = Arc::new(tsfn);
    let _ = rewake.set(Arc::downgrade(&tsfn));
    Ok(tsfn)
}

/// Internal native class; use `McpHost` from `index.js`.
#[napi]
pub struct NativeHost {
    host: Arc<Host>,
    cancels: abort::Cancels,
    /// The event outbox, also carrying `callTool` progress (see `abort`).
    sink: Arc<JsSink>,
}

/// The response envelope of a command: `{"ok":true,"value":…}` or
/// `{"ok":false,"code":…,"message":…,"data":…}`.
fn respond<T: Serialize>(result: HostResult<T>) -> String {
    /// `{"ok":true,"value":…}`, the value serialized once, in place.
    #[derive(Serialize)]
    struct Answer<'a, T: Serialize> {
        ok: bool,
        value: &'a T,
    }
    let value = match result {
        Ok(value) => serde_json::to_string(&Answer {
            ok: true,
            value: &value,
        }),
        Err(e) => return failure(&e),
    };
    value.unwrap_or_else(|e| {
        let message = format!("cannot encode the answer: {e}");
        failure(&HostError::new(ErrorCode::Internal, message))
    })
}

/// `{"ok":false,"code":…,"message":…,"data":…,"rpcCode":…}` of `e`.
fn failure(e: &HostError) -> String {
    json!({
        "ok": false,
        "code": e.code.as_str(),
        "message": e.message,
        "data": e.detail.data(),
        "rpcCode": e.rpc_code(),
    })
    .to_string()
}

/// Runs one async command to its response envelope (see [`respond`]): every
/// async method of [`NativeHost`] is `run(async move { … }).await`, with
/// argument parsing inside so its errors answer the same way.
async fn run<T: Serialize>(command: impl Future<Output = HostResult<T>>) -> String {
    respond(command.await)
}

/// Parses a JSON argument; the error starts with the parameter and the path
/// of the offending field, e.g. `options.timeoutMs: invalid value: integer
/// \`-5\`, expected u64` or `options.limits: unknown field \`x\`, …` →
/// `options.limits.x: unknown field …` (see [`field_error`]).
///
/// Valid input is decoded once, straight (the path-tracking decode, slower
/// on every field, runs only to word an error).
fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> HostResult<T> {
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde_json appends " at line L column C" (positions in an internal text): drop it.
        let inner = inner
            .rsplit_once(" at line ")
            .map_or(inner.as_str(), |(head, _)| head)
            .to_owned();
        HostError::new(ErrorCode::InvalidArgument, field_error(what, &path, &inner))
    })
}

#[napi]
impl NativeHost {
    /// `optionsJson`: JSON of the host options; `onEvents` receives one JSON
    /// text per batch of `{event: "action" | "log", payload}` items (an
    /// action item also carries `serverSeq`, written before `payload`): an
    /// array, or the item itself when the batch holds one (not copied into
    /// an array).
    /// `handled` lists the server-initiated requests with a JS handler
    /// (`"elicitation"`, `"sampling"`, `"roots"`); `onRequest` receives
    /// `{serverId, method, params, requestId, chatInput?}` as JSON and
    /// resolves the result as JSON; a request withdrawn before it answered
    /// arrives in `onEvents` as `{event: "requestWithdrawn", payload:
    /// {requestId}}`.
    /// `rootsJson`: the `roots` option as JSON (`null`: not given).
    /// `samplingTools`: the `sampling` handler takes SEP-1577 tools.
    /// `elicitationUrl`: the `elicitation` handler takes URL mode (SEP-1036).
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "optionsJson: string, onEvents: (batchJson: string) => void, handled: string[], onRequest: (requestJson: string) => Promise<string>, useCredentials: boolean, onCredentials: (opJson: string) => Promise<string>, rootsJson: string"
    )]
    #[allow(clippy::too_many_arguments)] // one per JS constructor argument
    pub fn new(
        options_json: String,
        on_events: Function<(), ()>,
        handled: Vec<String>,
        on_request: Function<String, Promise<String>>,
        use_credentials: bool,
        on_credentials: Function<String, Promise<String>>,
        roots_json: String,
        use_headers: Option<bool>,
        on_headers: Option<Function<String, Promise<String>>>,
        sampling_tools: Option<bool>,
        elicitation_url: Option<bool>,
        use_trust: Option<bool>,
        on_trust: Option<Function<String, Promise<String>>>,
    ) -> Result<Self> {
        let refused =
            |e: HostError| Error::new(Status::InvalidArg, format!("{}: {}", e.code, e.message));
        let roots = initial_roots(&roots_json)
            .map_err(|e| HostError::new(e.code, format!("options.{}", e.message)))
            .map_err(refused)?;
        let options: JsHostOptions = parse("options", &options_json).map_err(refused)?;
        let os_keychain = options.os_keychain();
        let outbox = Arc::new(Outbox::default());
        let tsfn = events_fn(&on_events, &outbox)?;
        let sink = Arc::new(JsSink::new(outbox, tsfn));
        let handled = handled_kinds(&handled)?;
        let requests: Option<Arc<dyn RequestHandler>> = if handled.is_empty() {
            None
        } else {
            let tsfn: RequestFn = on_request
                .build_threadsafe_function::<String>()
                .callee_handled::<false>()
                .weak::<true>()
                .build()?;
            Some(Arc::new(JsRequests {
                tsfn: Arc::new(tsfn),
                handled,
                sampling_tools: sampling_tools.unwrap_or(false),
                elicitation_url: elicitation_url.unwrap_or(false),
                sink: sink.clone(),
            }))
        };
        let secrets: Option<Arc<dyn SecretStore>> = if os_keychain {
            // Opened at its first use (a sign-in, a reconnect), never here.
            Some(Arc::new(OsSecretStore::new()))
        } else {
            match callback(use_credentials, Some(&on_credentials))? {
                Some(tsfn) => Some(Arc::new(JsSecrets { tsfn })),
                None => None,
            }
        };
        let header_provider: Option<Arc<dyn HeaderProvider>> =
            match callback(use_headers.unwrap_or(false), on_headers.as_ref())? {
                Some(tsfn) => Some(Arc::new(JsHeaders { tsfn })),
                None => None,
            };
        let trust = callback(use_trust.unwrap_or(false), on_trust.as_ref())?;
        let deps = HostDeps {
            requests,
            secrets,
            roots,
            header_provider,
            trust: trust.map(|tsfn| policy::JsTrust::asker(tsfn, &sink)),
        };
        let config = policy::JsPolicy::host_config(options).map_err(refused)?;
        let host = Host::with_handlers(config, sink.clone(), deps);
        Ok(Self {
            host: Arc::new(host),
            cancels: abort::Cancels::default(),
            sink,
        })
    }

    /// `addPlugin(optionsJson)` → response JSON with `PluginAdded`.
    #[napi]
    pub async fn add_plugin(&self, options_json: String) -> String {
        let host = self.host.clone();
        run(async move {
            let opts = parse::<JsAddPlugin>("options", &options_json)?;
            host.add_plugin(opts.try_into()?).await
        })
        .await
    }

    /// `addServer(optionsJson)` → response JSON with the server id.
    #[napi]
    pub async fn add_server(&self, options_json: String) -> String {
        let host = self.host.clone();
        run(async move {
            let opts = parse::<JsAddServer>("options", &options_json)?;
            host.add_server(opts.try_into()?).await
        })
        .await
    }

    /// `remove(id)` → response JSON with `null`.
    #[napi]
    pub async fn remove(&self, id: String) -> String {
        let host = self.host.clone();
        run(async move { host.remove(&id).await }).await
    }

    /// `dispatch(actionJson, clientId, clientSeq)` → response JSON with the echoed envelope.
    /// `clientSeq` is taken as a JS number and must be a non-negative safe
    /// integer (`invalid_argument` naming `origin.clientSeq` otherwise; never
    /// rounded or clamped, see `client_seq_of`).
    #[napi(catch_unwind)]
    pub fn dispatch(&self, action_json: String, client_id: String, client_seq: f64) -> String {
        let result = options::client_seq_of(client_seq).and_then(|client_seq| {
            let action = parse::<Value>("action", &action_json)?;
            self.host.dispatch(
                action,
                ActionOrigin {
                    client_id,
                    client_seq,
                },
            )
        });
        respond(result)
    }

    /// `authenticate(argsJson)` (AHP `authenticate`) → response JSON with `null`.
    #[napi]
    pub async fn authenticate(&self, args_json: String) -> String {
        let host = self.host.clone();
        run(async move {
            let args = parse::<JsAuthenticateArgs>("params", &args_json)?;
            host.authenticate(args.into()).await
        })
        .await
    }

    /// `setRoots(rootsJson)` → response JSON with `null` (see [`Host::set_roots`]).
    #[napi]
    pub async fn set_roots(&self, roots_json: String) -> String {
        let host = self.host.clone();
        run(async move {
            let value = parse::<Value>("roots", &roots_json)?;
            host.set_roots(parse_roots(&value)?).await
        })
        .await
    }

    /// The session state snapshot as JSON.
    #[napi(catch_unwind)]
    pub fn get_state(&self) -> String {
        self.host.state_json()
    }

    /// `{serverSeq, state}` as JSON: the session state and the `serverSeq`
    /// of the last envelope it reflects, read together (used by
    /// `whenReady`, which settles only once that envelope was delivered).
    #[napi(catch_unwind)]
    pub fn get_state_at(&self) -> String {
        self.host.state_at_json()
    }

    /// `serverInfo(serverId)` → response JSON with the server's identity or `null`.
    #[napi(catch_unwind)]
    pub fn server_info(&self, server_id: String) -> String {
        respond(self.host.server_info(&server_id))
    }

    /// The tool catalogue as JSON.
    #[napi(catch_unwind)]
    pub fn list_tools(&self) -> String {
        self.host.list_tools_json()
    }

    /// Whether JS has an `action` listener: while it has none, a
    /// `session/serverToolsChanged` (the whole catalogue) is drained as
    /// `{"event":"action","serverSeq":N}`, its payload never written
    /// (`outbox`). Called by `index.js` whenever its `action` listeners
    /// change.
    #[napi(catch_unwind)]
    pub fn set_action_payloads(&self, wanted: bool) {
        self.sink.outbox.set_action_payloads(wanted);
    }

    /// `setToolEnabled(argsJson)` → response JSON with whether the
    /// catalogue changed (see [`Host::set_tool_enabled`]).
    #[napi(catch_unwind)]
    pub fn set_tool_enabled(&self, args_json: String) -> String {
        respond(
            parse::<JsSetToolEnabled>("options", &args_json)
                .and_then(|a| self.host.set_tool_enabled(&a.server_id, &a.tool, a.enabled)),
        )
    }

    /// What the catalogue normalized or left out, as JSON (`ToolDiagnostic[]`).
    #[napi(catch_unwind)]
    pub fn tool_diagnostics(&self) -> String {
        serde_json::to_string(&self.host.tool_diagnostics()).unwrap_or_else(|_| "[]".to_owned())
    }

    /// Stops every server gracefully, then disposes.
    #[napi]
    pub async fn shutdown(&self) {
        let host = self.host.clone();
        host.shutdown().await;
    }

    /// Kills every server's process group now and settles everything pending.
    /// Synchronous and idempotent.
    #[napi(catch_unwind)]
    pub fn dispose(&self) {
        self.host.dispose_sync();
    }

    /// Number of live server process groups (diagnostics and tests).
    #[napi(catch_unwind)]
    pub fn process_count(&self) -> u32 {
        self.host.process_count() as u32
    }
}
