//! The two tasks of an [`super::SseTransport`]: the reader (the event
//! stream: messages in, a lost stream opened again and its new session
//! initialized) and the writer (one POST at a time to the live endpoint).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, InitializedNotification, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::common::client_side_sse::{ExponentialBackoff, SseRetryPolicy};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;
use tokio::sync::{mpsc, oneshot, watch};
use url::Url;

use super::{endpoint, lost_answer, HttpError, SseConfig, SseOpenError};
use crate::error::{ErrorCode, HostError};
use crate::limits::{
    MAX_SSE_EVENT_BYTES, SSE_ENDPOINT_WAIT_MS, SSE_RECONNECT_ATTEMPTS, SSE_RECONNECT_INITIAL_MS,
    SSE_RECONNECT_MAX_MS,
};
use crate::redact::origin;
use crate::transport::too_large::response_limit;

/// The event stream of one GET.
pub(super) type Events = BoxStream<'static, Result<Sse, SseError>>;

/// One message for the writer, and where its POST's outcome goes.
pub(super) struct Post {
    /// The message rmcp sends.
    pub message: ClientJsonRpcMessage,
    /// The POST's outcome (rmcp's `send` waits for it).
    pub done: oneshot::Sender<Result<(), HttpError>>,
}

/// Where POSTs go now.
#[derive(Clone, Debug, PartialEq)]
enum Live {
    /// The endpoint of the live session.
    Endpoint(Arc<str>),
    /// The stream was lost; a new session is being opened.
    Reconnecting,
    /// The transport is closed.
    Closed,
}

/// How the stream was lost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Loss {
    /// The server ended it.
    Ended,
    /// It broke (a network error).
    Broken,
    /// An event went over this many bytes.
    Oversized(usize),
}

impl Loss {
    /// The error code and message of a request whose answer was lost so.
    pub(super) fn answer(self) -> (ErrorCode, String) {
        let again = "the host opens a new session (legacy HTTP+SSE)";
        match self {
            Self::Ended => (
                ErrorCode::ServerExited,
                format!("the SSE stream ended before the answer; {again}"),
            ),
            Self::Broken => (
                ErrorCode::ServerExited,
                format!("the SSE stream broke before the answer; {again}"),
            ),
            Self::Oversized(limit) => (
                ErrorCode::LimitExceeded,
                format!(
                    "an SSE event over the legacy HTTP+SSE event limit ({limit} bytes) ended \
                     the stream before the answer; {again}"
                ),
            ),
        }
    }
}

/// What the reader and the writer share.
pub(super) struct Shared<C> {
    client: C,
    config: SseConfig,
    endpoint: watch::Sender<Live>,
    /// Requests POSTed whose answer has not come.
    pending: Mutex<HashSet<RequestId>>,
    /// The connection's `initialize` request, sent again to a new session.
    initialize: Mutex<Option<ClientJsonRpcMessage>>,
}

impl<C> Shared<C>
where
    C: StreamableHttpClient<Error = reqwest::Error> + Clone + Send + Sync + 'static,
{
    /// The state of a transport whose session POSTs to `endpoint`.
    pub(super) fn new(client: C, config: SseConfig, endpoint: Url) -> Arc<Self> {
        let live = Live::Endpoint(endpoint.as_str().into());
        Arc::new(Self {
            client,
            config,
            endpoint: watch::Sender::new(live),
            pending: Mutex::new(HashSet::new()),
            initialize: Mutex::new(None),
        })
    }

    /// Marks the transport closed: POSTs waiting for a session fail.
    pub(super) fn close(&self) {
        self.endpoint.send_replace(Live::Closed);
    }

    /// The writer: POSTs each message in turn (see [`Shared::post`]).
    pub(super) async fn write(
        self: Arc<Self>,
        mut posts: mpsc::UnboundedReceiver<Post>,
        incoming: mpsc::WeakSender<ServerJsonRpcMessage>,
    ) {
        while let Some(post) = posts.recv().await {
            let result = self.post(post.message, &incoming).await;
            let _ = post.done.send(result);
        }
    }

    /// POSTs `message` to the live endpoint, waiting while a new session is
    /// opened; a request is noted as waiting for its answer first (the
    /// answer may come on the stream before the POST returns). An answer in
    /// the POST's body (not the legacy way, but harmless) is passed on.
    async fn post(
        &self,
        message: ClientJsonRpcMessage,
        incoming: &mpsc::WeakSender<ServerJsonRpcMessage>,
    ) -> Result<(), HttpError> {
        let closed = || StreamableHttpError::TransportChannelClosed;
        let endpoint = self.live().await.ok_or_else(closed)?;
        let id = request_id(&message);
        if is_initialize(&message) {
            *lock(&self.initialize) = Some(message.clone());
        }
        if let Some(id) = &id {
            lock(&self.pending).insert(id.clone());
        }
        let headers = self.config.headers.clone();
        let sent = self
            .client
            .post_message(endpoint, message, None, None, headers)
            .await;
        match sent {
            Ok(StreamableHttpPostResponse::Json(answer, _)) => {
                if let Some(tx) = incoming.upgrade() {
                    self.deliver(answer, &tx).await;
                }
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => {
                if let Some(id) = id {
                    lock(&self.pending).remove(&id);
                }
                Err(e)
            }
        }
    }

    /// The live endpoint, once there is one; `None` once closed.
    async fn live(&self) -> Option<Arc<str>> {
        let mut rx = self.endpoint.subscribe();
        let live = rx
            .wait_for(|l| *l != Live::Reconnecting)
            .await
            .ok()?
            .clone();
        match live {
            Live::Endpoint(endpoint) => Some(endpoint),
            _ => None,
        }
    }

    /// Passes `message` on to rmcp; an answer is no longer waited for.
    /// `false` once rmcp is gone.
    async fn deliver(
        &self,
        message: ServerJsonRpcMessage,
        incoming: &mpsc::Sender<ServerJsonRpcMessage>,
    ) -> bool {
        if let Some(id) = answer_id(&message) {
            lock(&self.pending).remove(id);
        }
        incoming.send(message).await.is_ok()
    }

    /// The reader: passes the stream's messages on; when the stream is
    /// lost, fails the requests waiting for answers and opens a new session
    /// ([`Shared::reconnect`]). Ends when rmcp is gone or no new session
    /// could be opened.
    pub(super) async fn read(
        self: Arc<Self>,
        mut stream: Events,
        incoming: mpsc::Sender<ServerJsonRpcMessage>,
    ) {
        loop {
            let Some(loss) = self.pump(&mut stream, &incoming).await else {
                return;
            };
            self.endpoint.send_replace(Live::Reconnecting);
            let (code, why) = loss.answer();
            let waiting: Vec<RequestId> = lock(&self.pending).drain().collect();
            for id in waiting {
                if incoming.send(lost_answer(id, code, &why)).await.is_err() {
                    return;
                }
            }
            match self.reconnect().await {
                Some(next) => stream = next,
                None => return,
            }
        }
    }

    /// Reads `stream` until it is lost (`Some(how)`) or rmcp is gone
    /// (`None`). Only `message` events (or events without a name) carry
    /// JSON-RPC; others (a second `endpoint`, pings) and data that is not a
    /// server message are skipped, as rmcp's Streamable HTTP client does.
    async fn pump(
        &self,
        stream: &mut Events,
        incoming: &mpsc::Sender<ServerJsonRpcMessage>,
    ) -> Option<Loss> {
        loop {
            let event = match stream.next().await {
                None => return Some(Loss::Ended),
                Some(Err(e)) => return Some(loss_of(&e)),
                Some(Ok(event)) => event,
            };
            let Some(message) = message_of(&event) else {
                continue;
            };
            if !self.deliver(message, incoming).await {
                return None;
            }
        }
    }

    /// Opens the stream again with backoff (see the module documentation)
    /// and initializes the new session; `None` when every attempt failed, a
    /// challenge or a refused endpoint came, or the session was refused.
    async fn reconnect(&self) -> Option<Events> {
        let policy = backoff();
        let mut attempt = 0;
        while let Some(delay) = policy.retry(attempt) {
            attempt += 1;
            tokio::time::sleep(delay).await;
            match open_stream(&self.client, &self.config).await {
                Ok((mut stream, endpoint)) => {
                    let endpoint: Arc<str> = endpoint.as_str().into();
                    self.reinitialize(&mut stream, &endpoint).await?;
                    self.endpoint.send_replace(Live::Endpoint(endpoint));
                    return Some(stream);
                }
                Err(SseOpenError::Http(e)) if e.auth_challenge().is_some() => return None,
                Err(SseOpenError::Endpoint(e)) if e.code == ErrorCode::RedirectRefused => {
                    return None
                }
                Err(_) => {}
            }
        }
        None
    }

    /// Sends the connection's `initialize` request to the new session at
    /// `endpoint`, waits (at most [`SSE_ENDPOINT_WAIT_MS`]) for its answer
    /// on `stream` (not passed on), then sends `notifications/initialized`.
    /// `None` when any of it fails or the server answers with an error.
    async fn reinitialize(&self, stream: &mut Events, endpoint: &Arc<str>) -> Option<()> {
        let Some(init) = lock(&self.initialize).clone() else {
            return Some(()); // the first handshake had not begun
        };
        let id = request_id(&init)?;
        let headers = self.config.headers.clone();
        let post = self
            .client
            .post_message(endpoint.clone(), init, None, None, headers);
        let answer = match post.await.ok()? {
            StreamableHttpPostResponse::Json(answer, _) => answer,
            _ => {
                let wait = Duration::from_millis(SSE_ENDPOINT_WAIT_MS);
                tokio::time::timeout(wait, answer_on(stream, &id))
                    .await
                    .ok()??
            }
        };
        if matches!(answer, ServerJsonRpcMessage::Error(_)) {
            return None;
        }
        let initialized = ClientJsonRpcMessage::notification(
            ClientNotification::InitializedNotification(InitializedNotification::default()),
        );
        let headers = self.config.headers.clone();
        let post = self
            .client
            .post_message(endpoint.clone(), initialized, None, None, headers);
        post.await.ok().map(|_| ())
    }
}

/// Opens the event stream of `config.url` (a GET with `Accept:
/// text/event-stream`, events bounded to [`MAX_SSE_EVENT_BYTES`]) and reads
/// it up to its `endpoint` event (at most [`SSE_ENDPOINT_WAIT_MS`]),
/// resolved and checked by [`endpoint::resolve`].
pub(super) async fn open_stream<C>(
    client: &C,
    config: &SseConfig,
) -> Result<(Events, Url), SseOpenError>
where
    C: StreamableHttpClient<Error = reqwest::Error>,
{
    let uri: Arc<str> = config.url.as_str().into();
    let headers = config.headers.clone();
    let mut stream = client
        .get_stream_with_max_sse_event_size(uri, None, None, None, headers, MAX_SSE_EVENT_BYTES)
        .await
        .map_err(SseOpenError::Http)?;
    let failed = |what: String| {
        let text = format!(
            "connect failed: the SSE stream of {} {what}",
            origin(&config.url)
        );
        SseOpenError::Endpoint(HostError::new(ErrorCode::ConnectFailed, text))
    };
    let wait = Duration::from_millis(SSE_ENDPOINT_WAIT_MS);
    let data = match tokio::time::timeout(wait, endpoint_data(&mut stream)).await {
        Err(_) => {
            return Err(failed(format!(
                "sent no endpoint event within {SSE_ENDPOINT_WAIT_MS} ms (is it a legacy \
                 HTTP+SSE endpoint?)"
            )))
        }
        Ok(Err(loss)) => return Err(failed(loss)),
        Ok(Ok(data)) => data,
    };
    let endpoint = endpoint::resolve(&config.url, &data).map_err(SseOpenError::Endpoint)?;
    Ok((stream, endpoint))
}

/// The `data` of the first `endpoint` event of `stream`; other events
/// before it are dropped. `Err` says how the stream ended first.
async fn endpoint_data(stream: &mut Events) -> Result<String, String> {
    loop {
        match stream.next().await {
            None => return Err("ended before its endpoint event".into()),
            Some(Err(e)) => {
                return Err(match loss_of(&e) {
                    Loss::Oversized(limit) => {
                        format!("sent an event over {limit} bytes before its endpoint event")
                    }
                    _ => "broke before its endpoint event".into(),
                })
            }
            Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                return Ok(event.data.unwrap_or_default())
            }
            Some(Ok(_)) => {}
        }
    }
}

/// Reads `stream` up to the answer to request `id`; other messages are
/// dropped (a new session has nothing else to say). `None` when the stream
/// ends first.
async fn answer_on(stream: &mut Events, id: &RequestId) -> Option<ServerJsonRpcMessage> {
    while let Some(Ok(event)) = stream.next().await {
        if let Some(message) = message_of(&event) {
            if answer_id(&message) == Some(id) {
                return Some(message);
            }
        }
    }
    None
}

/// The JSON-RPC message of a `message` event (or an event without a name),
/// when its data is one; a lone surrogate escape in it is read as U+FFFD
/// (`transport::lone_surrogates`).
fn message_of(event: &Sse) -> Option<ServerJsonRpcMessage> {
    if !matches!(event.event.as_deref(), None | Some("") | Some("message")) {
        return None;
    }
    let data = event.data.as_deref()?;
    serde_json::from_str(data).ok().or_else(|| {
        let repaired = crate::transport::lone_surrogates::replace_str(data)?;
        serde_json::from_str(&repaired).ok()
    })
}

/// How a stream error lost the stream.
fn loss_of(e: &SseError) -> Loss {
    match response_limit(e) {
        Some(limit) => Loss::Oversized(limit),
        None => Loss::Broken,
    }
}

/// The reconnect schedule: [`SSE_RECONNECT_INITIAL_MS`] doubling up to
/// [`SSE_RECONNECT_MAX_MS`], [`SSE_RECONNECT_ATTEMPTS`] attempts.
pub(super) fn backoff() -> ExponentialBackoff {
    let mut policy = ExponentialBackoff::default();
    policy.max_times = Some(SSE_RECONNECT_ATTEMPTS as usize);
    policy.base_duration = Duration::from_millis(SSE_RECONNECT_INITIAL_MS);
    policy.max_delay = Some(Duration::from_millis(SSE_RECONNECT_MAX_MS));
    policy
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r)
        if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

fn answer_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        ServerJsonRpcMessage::Response(r) => Some(&r.id),
        ServerJsonRpcMessage::Error(e) => e.id.as_ref(),
        _ => None,
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
