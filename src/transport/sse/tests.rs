//! The transport against a scripted client (no network): the `endpoint`
//! wait, POSTs in order to the live endpoint, a lost stream failing the
//! requests waiting for answers, the reconnect schedule and the new
//! session's `initialize`. Paused time: waits cost nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, InitializeRequest, InitializeRequestParams, PingRequest,
    RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use rmcp::transport::Transport;
use serde_json::json;
use sse_stream::Sse;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::*;
use crate::limits::{MAX_SSE_EVENT_BYTES, SSE_ENDPOINT_WAIT_MS, SSE_RECONNECT_ATTEMPTS};

type Events = mpsc::UnboundedSender<Result<Sse, SseError>>;

/// What the scripted server saw and holds.
#[derive(Default)]
struct Script {
    /// GETs so far.
    gets: usize,
    /// GETs that fail (from the n-th on).
    refuse_gets_from: Option<usize>,
    /// Send no `endpoint` event.
    silent: bool,
    /// (endpoint, method or "response", headers) of each POST.
    posts: Vec<(String, String, HashMap<HeaderName, HeaderValue>)>,
    /// The open stream.
    stream: Option<Events>,
    /// Answer requests other than `initialize` (else they wait).
    answer_all: bool,
}

#[derive(Clone, Default)]
struct Fake(Arc<Mutex<Script>>);

fn event(name: Option<&str>, data: &str) -> Result<Sse, SseError> {
    Ok(Sse {
        event: name.map(str::to_owned),
        data: Some(data.to_owned()),
        ..Default::default()
    })
}

impl Fake {
    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.0.lock().unwrap()
    }

    /// Ends the open stream (`Some(error)`: with that error first).
    fn drop_stream(&self, error: Option<&str>) {
        let stream = self.script().stream.take().unwrap();
        if let Some(text) = error {
            let _ = stream.send(Err(SseError::Body(Box::new(std::io::Error::other(
                text.to_owned(),
            )))));
        }
    }

    fn methods(&self) -> Vec<(String, String)> {
        let posts = &self.script().posts;
        posts
            .iter()
            .map(|(e, m, _)| (e.clone(), m.clone()))
            .collect()
    }
}

fn method_of(message: &ClientJsonRpcMessage) -> String {
    let value = serde_json::to_value(message).unwrap();
    value["method"].as_str().unwrap_or("response").to_owned()
}

impl StreamableHttpClient for Fake {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        _session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut script = self.script();
        let method = method_of(&message);
        script
            .posts
            .push((uri.to_string(), method.clone(), headers));
        if let ClientJsonRpcMessage::Request(r) = &message {
            let answer = match method.as_str() {
                "initialize" => json!({"protocolVersion": "2024-11-05", "capabilities": {},
                    "serverInfo": {"name": "fake", "version": "1"}}),
                _ if script.answer_all => json!({}),
                _ => return Ok(StreamableHttpPostResponse::Accepted),
            };
            let id = serde_json::to_value(&r.id).unwrap();
            let text = json!({"jsonrpc": "2.0", "id": id, "result": answer}).to_string();
            if let Some(stream) = &script.stream {
                let _ = stream.send(event(Some("message"), &text));
            }
        }
        Ok(StreamableHttpPostResponse::Accepted)
    }

    async fn delete_session(
        &self,
        _uri: Arc<str>,
        _session: Arc<str>,
        _auth: Option<String>,
        _headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        Ok(())
    }

    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _auth: Option<String>,
        _headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<futures::stream::BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let mut script = self.script();
        script.gets += 1;
        if script.refuse_gets_from.is_some_and(|n| script.gets >= n) {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = tx.send(event(
            Some("message"),
            r#"{"jsonrpc":"2.0","method":"early"}"#,
        ));
        if !script.silent {
            let path = format!("/messages?sessionId=s{}", script.gets);
            let _ = tx.send(event(Some("endpoint"), &path));
        }
        script.stream = Some(tx);
        Ok(tokio_stream_of(rx))
    }
}

fn tokio_stream_of(
    mut rx: mpsc::UnboundedReceiver<Result<Sse, SseError>>,
) -> futures::stream::BoxStream<'static, Result<Sse, SseError>> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
}

fn config() -> SseConfig {
    let mut value = HeaderValue::from_static("CANARY-key");
    value.set_sensitive(true);
    SseConfig {
        url: url::Url::parse("http://127.0.0.1:9/sse?k=CANARY").unwrap(),
        headers: [(HeaderName::from_static("x-key"), value)].into(),
    }
}

fn request(id: i64, request: ClientRequest) -> ClientJsonRpcMessage {
    ClientJsonRpcMessage::request(request, RequestId::Number(id))
}

fn initialize(id: i64) -> ClientJsonRpcMessage {
    let params = InitializeRequestParams::default();
    request(
        id,
        ClientRequest::InitializeRequest(InitializeRequest::new(params)),
    )
}

fn ping(id: i64) -> ClientJsonRpcMessage {
    request(id, ClientRequest::PingRequest(PingRequest::default()))
}

fn answer_id(message: &ServerJsonRpcMessage) -> i64 {
    let value = serde_json::to_value(message).unwrap();
    value["id"].as_i64().unwrap()
}

async fn opened(fake: &Fake) -> SseTransport {
    let tracker = TaskTracker::new();
    match SseTransport::connect(
        fake.clone(),
        config(),
        (&tracker, &CancellationToken::new()),
    )
    .await
    {
        Ok(t) => t,
        Err(e) => panic!("{e:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn messages_go_to_the_endpoint_in_order_with_the_headers_and_answers_come_back() {
    let fake = Fake::default();
    let mut transport = opened(&fake).await;
    transport.send(initialize(0)).await.unwrap();
    let init = transport.receive().await.unwrap();
    assert_eq!(
        answer_id(&init),
        0,
        "the early message before the endpoint was dropped"
    );
    fake.script().answer_all = true;
    let sends = [transport.send(ping(1)), transport.send(ping(2))];
    for send in sends {
        send.await.unwrap();
    }
    let ids = [
        transport.receive().await.unwrap(),
        transport.receive().await.unwrap(),
    ];
    assert_eq!(ids.iter().map(answer_id).collect::<Vec<_>>(), [1, 2]);
    let endpoint = "http://127.0.0.1:9/messages?sessionId=s1".to_owned();
    assert_eq!(
        fake.methods(),
        [
            (endpoint.clone(), "initialize".into()),
            (endpoint.clone(), "ping".into()),
            (endpoint, "ping".into())
        ]
    );
    let script = fake.script();
    let key = HeaderName::from_static("x-key");
    assert!(script.posts.iter().all(|(_, _, h)| h[&key] == "CANARY-key"));
}

#[tokio::test(start_paused = true)]
async fn no_endpoint_event_in_time_is_connect_failed_naming_the_origin_only() {
    let fake = Fake::default();
    fake.script().silent = true;
    let started = tokio::time::Instant::now();
    let err = SseTransport::connect(
        fake.clone(),
        config(),
        (&TaskTracker::new(), &CancellationToken::new()),
    )
    .await;
    let Err(SseOpenError::Endpoint(err)) = err else {
        panic!("connected without an endpoint")
    };
    assert_eq!(err.code, ErrorCode::ConnectFailed);
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(SSE_ENDPOINT_WAIT_MS)
    );
    assert!(
        err.message
            .contains("http://127.0.0.1:9 sent no endpoint event"),
        "{}",
        err.message
    );
    assert!(!err.message.contains("CANARY"), "{}", err.message);
}

#[tokio::test(start_paused = true)]
async fn a_lost_stream_fails_the_waiting_request_and_a_new_session_is_initialized() {
    let fake = Fake::default();
    let mut transport = opened(&fake).await;
    transport.send(initialize(0)).await.unwrap();
    transport.receive().await.unwrap();
    transport.send(ping(1)).await.unwrap();
    fake.drop_stream(None);
    let gone = transport.receive().await.unwrap();
    assert_eq!(answer_id(&gone), 1);
    let ServerJsonRpcMessage::Error(e) = &gone else {
        panic!("{gone:?}")
    };
    let host = lost("ping on s", &e.error).unwrap();
    assert_eq!(host.code, ErrorCode::ServerExited);
    assert!(
        host.message
            .starts_with("ping on s failed: the SSE stream ended"),
        "{}",
        host.message
    );
    // After the first backoff: a new GET, initialize again (its answer kept
    // from rmcp), `initialized`, then the next message on the new endpoint.
    fake.script().answer_all = true;
    transport.send(ping(2)).await.unwrap();
    let next = transport.receive().await.unwrap();
    assert_eq!(answer_id(&next), 2);
    let new = "http://127.0.0.1:9/messages?sessionId=s2";
    let after: Vec<(String, String)> = fake.methods().into_iter().skip(2).collect();
    let expected = ["initialize", "notifications/initialized", "ping"];
    assert_eq!(after, expected.map(|m| (new.to_owned(), m.to_owned())));
    assert_eq!(fake.script().gets, 2);
}

#[tokio::test(start_paused = true)]
async fn an_oversized_event_fails_the_waiting_request_with_limit_exceeded() {
    let fake = Fake::default();
    let mut transport = opened(&fake).await;
    transport.send(ping(7)).await.unwrap();
    let over = format!("SSE event exceeded the maximum size of {MAX_SSE_EVENT_BYTES} bytes");
    fake.drop_stream(Some(&over));
    let ServerJsonRpcMessage::Error(e) = transport.receive().await.unwrap() else {
        panic!("not an error")
    };
    let host = lost("tools/call on s", &e.error).unwrap();
    assert_eq!(host.code, ErrorCode::LimitExceeded);
    assert!(
        host.message.contains(&MAX_SSE_EVENT_BYTES.to_string()),
        "{}",
        host.message
    );
}

#[tokio::test(start_paused = true)]
async fn reconnects_are_bounded_then_the_transport_closes() {
    let fake = Fake::default();
    let mut transport = opened(&fake).await;
    fake.script().refuse_gets_from = Some(2);
    fake.drop_stream(None);
    let started = tokio::time::Instant::now();
    assert!(transport.receive().await.is_none());
    let attempts = SSE_RECONNECT_ATTEMPTS as usize;
    assert_eq!(fake.script().gets, 1 + attempts);
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(500 + 1000 + 2000 + 4000 + 8000)
    );
    let refused = transport.send(ping(1)).await.unwrap_err();
    assert!(
        matches!(refused, StreamableHttpError::TransportChannelClosed),
        "{refused}"
    );
}

#[test]
fn the_backoff_doubles_up_to_its_cap_for_the_bounded_attempts() {
    let policy = worker::backoff();
    let delays: Vec<Option<Duration>> = (0..=SSE_RECONNECT_ATTEMPTS as usize)
        .map(|n| rmcp::transport::common::client_side_sse::SseRetryPolicy::retry(&policy, n))
        .collect();
    let ms = |n| Some(Duration::from_millis(n));
    assert_eq!(
        delays,
        [ms(500), ms(1000), ms(2000), ms(4000), ms(8000), None]
    );
}

#[test]
fn an_error_the_server_sent_is_not_taken_for_a_lost_answer() {
    let data = Some(json!({"ahp-mcp-host/sseStreamLost": "limit_exceeded"}));
    let spoofed = ErrorData::new(RpcCode::INTERNAL_ERROR, "x", data);
    assert!(lost("c", &spoofed).is_none());
    let plain = ErrorData::new(RpcCode::INTERNAL_ERROR, "x", None);
    assert!(lost("c", &plain).is_none());
}
