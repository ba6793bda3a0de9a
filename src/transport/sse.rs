//! The legacy HTTP+SSE transport (MCP 2024-11-05 "Transports › HTTP with
//! SSE") as an rmcp client transport, [`SseTransport`], over any rmcp
//! `StreamableHttpClient` (the host's pooled reqwest client with its
//! redirect policy, proxy and trust roots; a bearer token, rmcp's OAuth
//! `AuthClient` or the DPoP client on top), so a legacy server gets the
//! same HTTP policy and credentials as a Streamable HTTP one.
//!
//! - Opening ([`SseTransport::connect`]): a GET of the SSE URL with
//!   `Accept: text/event-stream` (rmcp's `get_stream`: the event stream is
//!   parsed by `sse-stream`, each event bounded to [`MAX_SSE_EVENT_BYTES`]),
//!   then the `endpoint` event, awaited at most [`SSE_ENDPOINT_WAIT_MS`]
//!   and checked by [`endpoint::resolve`] (same origin: configured headers
//!   and tokens never go to another origin).
//! - Sending: each JSON-RPC message is POSTed to the endpoint (rmcp's
//!   `post_message`: a 401/403 challenge is an `AuthRequired` /
//!   `InsufficientScope` error, as on Streamable HTTP), one at a time in the
//!   order rmcp sent them (a server reads `notifications/initialized` before
//!   the next request).
//! - Receiving: `message` events of the stream (and an answer a server
//!   puts in a POST's body instead).
//! - Losing the stream (it ends, breaks, or carries an event over the
//!   limit): the requests waiting for an answer fail at once ([`lost`]:
//!   `server_exited`, or `limit_exceeded` for an event over the limit), and
//!   the stream is opened again after a backoff ([`SSE_RECONNECT_INITIAL_MS`]
//!   doubling to [`SSE_RECONNECT_MAX_MS`], at most [`SSE_RECONNECT_ATTEMPTS`]
//!   attempts). A new stream is a new session, so the transport initializes
//!   it again with the connection's own `initialize` request (its answer is
//!   not passed on: the client already has one), then
//!   `notifications/initialized`, before any other message is sent; as rmcp's
//!   Streamable HTTP transport does after an expired session. When every
//!   attempt failed, or the server refused the new session, the transport
//!   closes and the server's restart policy takes over.

mod endpoint;
#[cfg(test)]
mod tests;
mod worker;

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode as RpcCode, ErrorData, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::{ErrorCode, HostError};
#[cfg(doc)]
use crate::limits::{
    MAX_SSE_EVENT_BYTES, SSE_ENDPOINT_WAIT_MS, SSE_RECONNECT_ATTEMPTS, SSE_RECONNECT_INITIAL_MS,
    SSE_RECONNECT_MAX_MS,
};

/// rmcp's error of an HTTP exchange with the host's reqwest-based clients.
pub type HttpError = StreamableHttpError<reqwest::Error>;

/// The `data` member that marks a JSON-RPC error the transport made up for
/// a request whose answer can no longer come (see [`lost`]); its value is
/// the host error code.
const LOST_MARKER: &str = "ahp-mcp-host/sseStreamLost";

/// Messages from the server waiting for rmcp's receive loop (a count);
/// past it the stream is not read.
const INCOMING_QUEUE: usize = 16;

/// Where an SSE server lives and what every request to it carries.
#[derive(Clone)]
pub struct SseConfig {
    /// The SSE URL (the configured `url`): the GET opens the event stream.
    pub url: url::Url,
    /// The configured headers (values marked sensitive), sent with the GET
    /// and every POST, all on the SSE URL's origin.
    pub headers: HashMap<HeaderName, HeaderValue>,
}

/// Why [`SseTransport::connect`] failed.
#[derive(Debug)]
pub enum SseOpenError {
    /// The GET of the SSE URL failed (an authorization challenge, a status,
    /// a content type that is not an event stream, a network error).
    Http(HttpError),
    /// The stream gave no usable `endpoint` event: none in time, the stream
    /// ended or broke first (`connect_failed`), or one that is refused
    /// (`protocol_error`, `redirect_refused`: see `endpoint::resolve`).
    Endpoint(HostError),
}

/// An rmcp client transport over a legacy HTTP+SSE server (see the module
/// documentation). Dropping or closing it ends its tasks and the stream.
pub struct SseTransport {
    posts: mpsc::UnboundedSender<worker::Post>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    cancel: CancellationToken,
}

impl SseTransport {
    /// Opens the event stream of `config.url` with `client`, waits for its
    /// `endpoint` event and starts the transport's reader and writer on
    /// `tracker`; they end when the transport is closed or dropped, or when
    /// `parent` (the server's token) is cancelled.
    ///
    /// # Errors
    ///
    /// [`SseOpenError`]; nothing is left running.
    pub async fn connect<C>(
        client: C,
        config: SseConfig,
        (tracker, parent): (&TaskTracker, &CancellationToken),
    ) -> Result<Self, SseOpenError>
    where
        C: StreamableHttpClient<Error = reqwest::Error> + Clone + Send + Sync + 'static,
    {
        let (stream, endpoint) = worker::open_stream(&client, &config).await?;
        let cancel = parent.child_token();
        let (incoming_tx, incoming) = mpsc::channel(INCOMING_QUEUE);
        let (posts, posts_rx) = mpsc::unbounded_channel();
        let shared = worker::Shared::new(client, config, endpoint);
        let (reader, writer) = (shared.clone(), shared);
        let weak = incoming_tx.downgrade();
        let stop = cancel.clone();
        tracker.spawn(async move {
            tokio::select! {
                () = reader.clone().read(stream, incoming_tx) => {}
                () = stop.cancelled() => {}
            }
            reader.close();
        });
        let stop = cancel.clone();
        tracker.spawn(async move {
            tokio::select! {
                () = writer.write(posts_rx, weak) => {}
                () = stop.cancelled() => {}
            }
        });
        Ok(Self {
            posts,
            incoming,
            cancel,
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = HttpError;

    fn name() -> Cow<'static, str> {
        "legacy HTTP+SSE".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (done, answer) = oneshot::channel();
        let queued = self.posts.send(worker::Post {
            message: item,
            done,
        });
        async move {
            queued.map_err(|_| StreamableHttpError::TransportChannelClosed)?;
            answer
                .await
                .unwrap_or(Err(StreamableHttpError::TransportChannelClosed))
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.cancel.cancel();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// The JSON-RPC error the transport answers request `id` with when its
/// answer can no longer arrive: the stream was lost (`code`
/// `server_exited`) or carried an event over the limit (`limit_exceeded`);
/// `why` says which, for the message. Marked with a token of this process,
/// so a server cannot make one up.
fn lost_answer(id: rmcp::model::RequestId, code: ErrorCode, why: &str) -> ServerJsonRpcMessage {
    let mark = serde_json::json!({"code": code.as_str(), "token": process_token()});
    let mut data = serde_json::Map::new();
    data.insert(LOST_MARKER.to_owned(), mark);
    let error = ErrorData::new(RpcCode::INTERNAL_ERROR, why.to_owned(), Some(data.into()));
    ServerJsonRpcMessage::error(error, Some(id))
}

/// A random number of this process (the mark of [`lost_answer`]).
fn process_token() -> u64 {
    use std::hash::BuildHasher;
    static TOKEN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TOKEN.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(LOST_MARKER))
}

/// The host error of `context` for a JSON-RPC error the transport made up
/// ([`lost_answer`]: `server_exited` or `limit_exceeded`, with its text);
/// `None` for any other error (one a server sent).
pub fn lost(context: &str, error: &ErrorData) -> Option<HostError> {
    let mark = error.data.as_ref()?.get(LOST_MARKER)?;
    if mark.get("token").and_then(Value::as_u64) != Some(process_token()) {
        return None;
    }
    let code = match mark.get("code").and_then(Value::as_str)? {
        "limit_exceeded" => ErrorCode::LimitExceeded,
        _ => ErrorCode::ServerExited,
    };
    Some(HostError::new(
        code,
        format!("{context} failed: {}", error.message),
    ))
}
