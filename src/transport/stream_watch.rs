//! Knowing when a Streamable HTTP session's standalone GET stream is open
//! (MCP 2025-11-25 "Transports › Streamable HTTP › Listening for Messages
//! from the Server").
//!
//! rmcp opens that stream in a task of its own after the handshake. A
//! server may send requests (an `elicitation/create` during a tool call)
//! on it, and some servers drop such a message while no GET stream is
//! registered. So the host reports a server `ready` only once the first GET
//! got its answer (the stream, or a refusal such as 405), bounded by
//! [`crate::limits::GET_STREAM_WAIT_MS`]; without a session (2026-07-28, or
//! a stateless 2025 server) rmcp opens none and there is nothing to wait for.
//! [`Watched`] wraps any rmcp `StreamableHttpClient` and records both facts.
//!
//! It also notes the tool names of every `tools/list` result as the server
//! sent it, before rmcp's transport drops the tools whose `x-mcp-header`
//! annotations are invalid (SEP-2243, MCP 2026-07-28): the catalogue compares
//! them with what it received and reports each dropped tool as a diagnostic
//! ([`StreamWatch::take_listed`]).
//!
//! And it notes a POST's SSE event that rmcp refused for being over its
//! maximum event size ("SSE event exceeded the maximum size of N bytes"):
//! rmcp then ends that response stream, and the request it answered would
//! read as a closed stream; [`StreamWatch::take_oversized`] tells the
//! supervisor it was an answer over the limit (`limit_exceeded`).
//!
//! And it notes the `execution` member of each tool of a `tools/list`
//! result sent as an SSE event, which rmcp's typed `Tool` drops
//! ([`StreamWatch::take_executions`], see [`crate::transport::raw_tools`]).
//!
//! And it reads the SSE answer to a `tools/list` POST raw, handing rmcp a
//! stand-in to decode instead ([`raw_lists`], [`StreamWatch::take_raw_list`]).

mod raw_lists;

pub use raw_lists::is_stand_in;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use tokio::sync::watch;

/// What the [`Watched`] client saw: a session id on a POST, a GET answered.
#[derive(Debug)]
pub struct StreamWatch {
    session: AtomicBool,
    answered: watch::Sender<bool>,
    listed: Mutex<Vec<String>>,
    oversized: Mutex<VecDeque<(RequestId, usize)>>,
    executions: Mutex<VecDeque<Executions>>,
    raw_lists: raw_lists::RawLists,
}

/// The `execution` members (by tool name) of one `tools/list` response.
type Executions = (RequestId, Vec<(String, serde_json::Value)>);

impl StreamWatch {
    /// A new watch (nothing seen yet).
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            session: AtomicBool::new(false),
            answered: watch::channel(false).0,
            listed: Mutex::new(Vec::new()),
            oversized: Mutex::new(VecDeque::new()),
            executions: Mutex::new(VecDeque::new()),
            raw_lists: raw_lists::RawLists::default(),
        })
    }

    /// The `result` text of the SSE answer to the `tools/list` request
    /// `id` (rmcp got a stand-in, see [`is_stand_in`]), taken once.
    pub fn take_raw_list(&self, id: &RequestId) -> Option<String> {
        self.raw_lists.take(id)
    }

    /// The tools' `execution` members (tool name, member) of the SSE
    /// `tools/list` response to request `id`, taken once; empty when none.
    pub fn take_executions(&self, id: &RequestId) -> Vec<(String, serde_json::Value)> {
        let mut noted = self
            .executions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match noted.iter().position(|(noted, _)| noted == id) {
            Some(at) => noted.remove(at).map(|(_, found)| found).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// Notes the `execution` members of a `tools/list` response's SSE text;
    /// the oldest note goes past `MAX_EXECUTION_NOTES`.
    fn note_executions(&self, data: &str) {
        let Some(found) = crate::transport::raw_tools::executions(data) else {
            return;
        };
        let mut noted = self
            .executions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if noted.len() >= crate::limits::MAX_EXECUTION_NOTES {
            noted.pop_front();
        }
        noted.push_back(found);
    }

    /// The limit (bytes) an SSE event on the response stream of request
    /// `id` went over, taken once; `None` when none did.
    pub fn take_oversized(&self, id: &RequestId) -> Option<usize> {
        let mut noted = self
            .oversized
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let at = noted.iter().position(|(noted, _)| noted == id)?;
        noted.remove(at).map(|(_, limit)| limit)
    }

    /// Notes that the response stream of request `id` carried an event over
    /// `limit` bytes; the oldest note goes past `MAX_OVERSIZED_NOTES`.
    fn note_oversized(&self, id: RequestId, limit: usize) {
        let mut noted = self
            .oversized
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if noted.len() >= MAX_OVERSIZED_NOTES {
            noted.pop_front();
        }
        noted.push_back((id, limit));
    }

    /// The tool names of the `tools/list` results seen since the last call,
    /// as the server sent them (at most `MAX_LISTED_NAMES`).
    pub fn take_listed(&self) -> Vec<String> {
        std::mem::take(&mut *self.listed.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Notes `names`, up to `MAX_LISTED_NAMES` in all.
    fn note<'a>(&self, names: impl Iterator<Item = &'a str>) {
        let mut listed = self.listed.lock().unwrap_or_else(PoisonError::into_inner);
        let room = MAX_LISTED_NAMES.saturating_sub(listed.len());
        listed.extend(names.take(room).map(str::to_owned));
    }

    /// Notes the tool names of an SSE event's JSON text when it is a
    /// `tools/list` result. Reads only `result.tools[].name` (every other
    /// member is skipped unparsed), and nothing at all from an event that
    /// does not mention `"tools"`.
    fn note_text(&self, data: &str) {
        if !data.contains("\"tools\"") {
            return;
        }
        let parsed = serde_json::from_str::<ListedMessage>(data);
        if let Ok(ListedMessage {
            result: Some(ListedResult { tools: Some(tools) }),
        }) = parsed
        {
            self.note(tools.iter().map(|t| t.name.as_str()));
        }
    }

    /// Notes a POST answer: its JSON message, or each event of its SSE
    /// stream (for the POST of request `id`: an event over the size limit;
    /// when it is a `tools/list` request, its answer read raw).
    fn inspect(
        self: &Arc<Self>,
        (id, list): (Option<RequestId>, bool),
        answer: StreamableHttpPostResponse,
    ) -> StreamableHttpPostResponse {
        match answer {
            StreamableHttpPostResponse::Json(message, session) => {
                if let ServerJsonRpcMessage::Response(response) = &message {
                    if let ServerResult::ListToolsResult(list) = &response.result {
                        self.note(list.tools.iter().map(|t| t.name.as_ref()));
                    }
                }
                StreamableHttpPostResponse::Json(message, session)
            }
            StreamableHttpPostResponse::Sse(stream, session) => {
                let watch = self.clone();
                let list_id = id.clone().filter(|_| list);
                let stream = stream.map(move |event| match event {
                    Ok(mut event) => {
                        // rmcp reads only `message` events (or untyped ones):
                        // nothing else is noted, stashed or repaired.
                        let message = matches!(event.event.as_deref(), None | Some("" | "message"));
                        if message {
                            repair_lone_surrogates(&mut event);
                        }
                        let noted =
                            message.then(|| watch.note_event(list_id.as_ref(), &event.data));
                        if let Some(Some(stand_in)) = noted {
                            event.data = Some(stand_in);
                        }
                        Ok(event)
                    }
                    Err(e) => {
                        let limit = crate::transport::too_large::response_limit(&e);
                        if let (Some(id), Some(limit)) = (id.clone(), limit) {
                            watch.note_oversized(id, limit);
                        }
                        Err(e)
                    }
                });
                StreamableHttpPostResponse::Sse(stream.boxed(), session)
            }
            other => other,
        }
    }

    /// Notes one SSE event's text `data`: the raw answer to the `tools/list`
    /// request `list_id` is stashed and its stand-in returned (the event's
    /// new data; rmcp drops none of its tools, so no name is noted); any
    /// other event is noted as it is (listed names, `execution` members).
    fn note_event(&self, list_id: Option<&RequestId>, data: &Option<String>) -> Option<String> {
        let data = data.as_deref()?;
        if let Some(stand_in) = list_id.and_then(|id| self.raw_lists.stash(id, data)) {
            return Some(stand_in);
        }
        self.note_text(data);
        self.note_executions(data);
        None
    }

    /// Resolves once the first GET stream request got its answer, at most
    /// after `within`; at once when no request carried a session id (no
    /// GET stream will be opened).
    pub async fn settled(&self, within: Duration) {
        if !self.session.load(Ordering::Acquire) {
            return;
        }
        let mut answered = self.answered.subscribe();
        let _ = tokio::time::timeout(within, answered.wait_for(|a| *a)).await;
    }

    fn saw_session(&self, session_id: Option<&Arc<str>>) {
        if session_id.is_some() {
            self.session.store(true, Ordering::Release);
        }
    }
}

/// Rewrites each lone UTF-16 surrogate escape in a `message` event's data
/// as `\ufffd` (`transport::lone_surrogates`), so rmcp, which skips an
/// event it cannot decode, reads the message (U+FFFD in place of the lone
/// surrogate, as over stdio).
fn repair_lone_surrogates(event: &mut sse_stream::Sse) {
    let repaired = event
        .data
        .as_deref()
        .and_then(crate::transport::lone_surrogates::replace_str);
    if let Some(repaired) = repaired {
        event.data = Some(repaired);
    }
}

/// The GET stream with [`repair_lone_surrogates`] on its `message` events.
fn repaired_stream(stream: Stream) -> Stream {
    stream
        .map(|event| {
            event.map(|mut event| {
                if matches!(event.event.as_deref(), None | Some("" | "message")) {
                    repair_lone_surrogates(&mut event);
                }
                event
            })
        })
        .boxed()
}

/// The parts of a JSON-RPC message [`StreamWatch::note_text`] reads.
#[derive(serde::Deserialize)]
struct ListedMessage {
    result: Option<ListedResult>,
}

/// `result.tools` of a `tools/list` result.
#[derive(serde::Deserialize)]
struct ListedResult {
    tools: Option<Vec<ListedTool>>,
}

/// `name` of one listed tool.
#[derive(serde::Deserialize)]
struct ListedTool {
    name: String,
}

/// An rmcp Streamable HTTP client that reports to a [`StreamWatch`].
#[derive(Clone)]
pub struct Watched<C> {
    /// The client doing the work.
    pub inner: C,
    /// Where it reports.
    pub watch: Arc<StreamWatch>,
}

/// Most oversized-event notes kept (one per request whose answer was over
/// the limit and not yet asked about; see [`StreamWatch::take_oversized`]).
const MAX_OVERSIZED_NOTES: usize = crate::limits::MAX_OVERSIZED_EVENT_NOTES;

/// The id of `message` when it is a request, and whether it is a
/// `tools/list` request (typed or the host's `CustomRequest`).
fn request_id(message: &ClientJsonRpcMessage) -> (Option<RequestId>, bool) {
    match message {
        ClientJsonRpcMessage::Request(request) => {
            let list = match &request.request {
                ClientRequest::ListToolsRequest(_) => true,
                ClientRequest::CustomRequest(custom) => custom.method == "tools/list",
                _ => false,
            };
            (Some(request.id.clone()), list)
        }
        _ => (None, false),
    }
}

/// Most tool names kept between two [`StreamWatch::take_listed`] calls.
const MAX_LISTED_NAMES: usize = crate::limits::HARD_MAX_TOOLS_PER_SERVER;

type Stream = futures::stream::BoxStream<
    'static,
    Result<sse_stream::Sse, rmcp::transport::streamable_http_client::SseError>,
>;

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Watched<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        self.watch.saw_session(session_id.as_ref());
        let (inner, id) = (&self.inner, request_id(&message));
        let answer = inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await?;
        Ok(self.watch.inspect(id, answer))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        self.watch.saw_session(session_id.as_ref());
        let (inner, headers) = (&self.inner, custom_headers);
        let id = request_id(&message);
        let answer = inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            )
            .await?;
        Ok(self.watch.inspect(id, answer))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        let inner = &self.inner;
        inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Stream, StreamableHttpError<C::Error>> {
        let inner = &self.inner;
        let answer = inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.watch.answered.send_replace(true);
        answer.map(repaired_stream)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Stream, StreamableHttpError<C::Error>> {
        let (inner, headers, max) = (&self.inner, custom_headers, max_sse_event_size);
        let answer = inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                headers,
                max,
            )
            .await;
        self.watch.answered.send_replace(true);
        answer.map(repaired_stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_list_results_are_noted_and_taken_once() {
        let watch = StreamWatch::new();
        watch.note_text(
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"valid_tool","inputSchema":{}},{"name":"bad_header"}]}}"#,
        );
        // Mentions "tools" but is no tools/list result: nothing noted.
        watch.note_text(
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"\"tools\""}]}}"#,
        );
        assert_eq!(watch.take_listed(), ["valid_tool", "bad_header"]);
        assert!(watch.take_listed().is_empty());
    }

    #[tokio::test]
    async fn only_message_events_answering_a_list_are_read_raw() {
        let watch = StreamWatch::new();
        let id = RequestId::Number(4);
        let answer = |tool: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":4,"result":{{"tools":[{{"name":"{tool}"}}]}}}}"#)
        };
        let event = |kind: Option<&str>, data: String| sse_stream::Sse {
            event: kind.map(str::to_owned),
            data: Some(data),
            ..Default::default()
        };
        let events = vec![
            Ok(event(Some("foo"), answer("from_foo"))),
            Ok(event(Some("message"), answer("from_message"))),
        ];
        let stream = futures::stream::iter(events).boxed();
        let answer = StreamableHttpPostResponse::Sse(stream, None);
        let StreamableHttpPostResponse::Sse(seen, _) =
            watch.inspect((Some(id.clone()), true), answer)
        else {
            panic!("not an SSE answer")
        };
        let seen: Vec<_> = seen.collect().await;
        let data = |i: usize| seen[i].as_ref().unwrap().data.clone().unwrap();
        assert!(data(0).contains("from_foo"), "a foo event passes untouched");
        assert!(raw_lists::is_stand_in(
            &serde_json::from_str::<serde_json::Value>(&data(1)).unwrap()["result"]
        ));
        let raw = watch
            .take_raw_list(&id)
            .expect("the message event was stashed");
        let raw: serde_json::Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(raw["tools"][0]["name"], "from_message");
        assert!(
            watch.take_listed().is_empty(),
            "a stashed listing reaches the catalogue whole: no name noted; a foo event is not read"
        );
    }

    #[test]
    fn an_oversized_event_is_noted_per_request_taken_once_and_bounded() {
        let watch = StreamWatch::new();
        watch.note_oversized(RequestId::Number(7), 16);
        assert_eq!(watch.take_oversized(&RequestId::Number(8)), None);
        assert_eq!(watch.take_oversized(&RequestId::Number(7)), Some(16));
        assert_eq!(watch.take_oversized(&RequestId::Number(7)), None);
        for n in 0..=MAX_OVERSIZED_NOTES {
            watch.note_oversized(RequestId::Number(n as i64), 16);
        }
        assert_eq!(
            watch.take_oversized(&RequestId::Number(0)),
            None,
            "oldest forgotten"
        );
        assert_eq!(watch.take_oversized(&RequestId::Number(1)), Some(16));
    }

    #[tokio::test]
    async fn without_a_session_nothing_is_awaited_and_with_one_the_get_answer_is() {
        let watch = StreamWatch::new();
        // No session: returns at once although no GET was answered.
        tokio::time::timeout(
            Duration::from_secs(5),
            watch.settled(Duration::from_secs(3600)),
        )
        .await
        .unwrap_or_else(|_| panic!("waited without a session"));
        watch.saw_session(Some(&Arc::from("s-1")));
        let waiting = {
            let watch = watch.clone();
            tokio::spawn(async move { watch.settled(Duration::from_secs(3600)).await })
        };
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "waits for the GET answer");
        watch.answered.send_replace(true);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap_or_else(|_| panic!("the GET answer ends the wait"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}
