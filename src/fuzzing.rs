//! Fuzzing entry points (cargo feature `fuzzing`, off by default).
//!
//! Each function takes arbitrary bytes and drives one real code path of the
//! host the way a misbehaving server or a broken file would: the targets in
//! `fuzz/fuzz_targets/` call them, and the regression tests in
//! `tests/fuzz_regressions.rs` replay the inputs fuzzing found. They are
//! thin on purpose: a change inside a module keeps its entry point working
//! as long as the module's crate-internal API stays. A panic (or a broken
//! invariant asserted here) is a finding; returning is a pass.
//! `docs/reliability.md` lists the targets, the commands and the figures.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::StreamExt;
use rmcp::model::{ServerJsonRpcMessage, ServerResult};
use rmcp::transport::Transport as _;
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use crate::auth::AuthChallenge;
use crate::catalogue::{Catalogue, ServerTools};
use crate::config::{parse_mcp_json, validate_entry_value, ServerConfig};
use crate::events::{EventSink, HostEvent};
use crate::limits::Limits;
use crate::transport::stdio::{fast, StdioTransport};
use crate::transport::stdout_monitor::Reporter;

/// `mcp.json` bytes: the file parse with its two-stage validation
/// ([`parse_mcp_json`]), then every valid stdio entry's `${…}` expansion;
/// and, when the bytes are a JSON object, the entry validation of the JS
/// `addServer` path ([`validate_entry_value`]) on it and on each member.
pub fn mcp_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // the host reads the file as UTF-8 and reports the error
    };
    if let Ok(file) = parse_mcp_json(text, "/plugins/fuzz/mcp.json") {
        let vars = crate::config::PluginVars {
            plugin_root: "/plugins/fuzz".into(),
            plugin_data: "/data/fuzz".into(),
        };
        for entry in &file.servers {
            if let Ok(ServerConfig::Stdio(stdio)) = &entry.config {
                for s in stdio.args.iter().chain(stdio.env.values()) {
                    let _ = crate::config::expand(s, &vars);
                }
            }
        }
    }
    if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(data) {
        let _ = validate_entry_value("fuzz", &Value::Object(map.clone()));
        for (name, value) in &map {
            let _ = validate_entry_value(name, value);
        }
    }
}

/// A server's stdout, read by the stdio transport ([`StdioTransport`]) with
/// a line limit (from the first byte: 1..=256 bytes, so the oversize and
/// id-window paths run) in reads whose size comes from the second byte;
/// each line is also decoded on the `tools/call` fast path and by rmcp's
/// decode.
///
/// # Panics
/// When the fast path and rmcp's decode disagree on a line.
pub fn stdout_lines(data: &[u8]) {
    let [a, b, rest @ ..] = data else { return };
    let max_line = usize::from(*a) + 1;
    let chunk = usize::from(*b % 64) + 1;
    let sink: Arc<dyn EventSink> = Arc::new(NoSink);
    let (ids, _keep) = tokio::sync::broadcast::channel(16);
    let reader = Chunked { data: rest, chunk };
    let reporter = Reporter::new("fuzz/srv".to_owned(), sink, max_line, Some(ids));
    let mut transport = StdioTransport::new((reader, tokio::io::sink()), reporter);
    // A runtime with a timer: the transport's writes (its `Invalid Request`
    // answers) are bounded in time.
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        return; // no runtime (out of resources): nothing to fuzz
    };
    runtime.block_on(async { while transport.receive().await.is_some() {} });
    for line in rest.split(|b| *b == b'\n') {
        let fast = format!("{:?}", fast::decode(line));
        assert_eq!(fast, format!("{:?}", fast::full_decode(line)), "fast path");
    }
}

/// A `tools/list` result: decoded as rmcp decodes a server result, its
/// `tools` array checked into [`ServerTools`] and named in a [`Catalogue`]
/// next to a second server listing the same tools (so cross-server naming
/// runs), every entry's JSON and AHP definition built.
///
/// # Panics
/// When a catalogue name is not model-safe or two entries share a name.
pub fn tools_list(data: &[u8]) {
    let Ok(result) = serde_json::from_slice::<ServerResult>(data) else {
        return;
    };
    let Ok(mut value) = serde_json::to_value(result) else {
        return;
    };
    let Some(Value::Array(raw)) = value.get_mut("tools").map(Value::take) else {
        return;
    };
    let limits = Limits::default();
    let mut catalogue = Catalogue::default();
    for id in ["fuzz/a", "fuzz/b"] {
        if let Ok(tools) = ServerTools::build(id, raw.clone(), &limits) {
            catalogue.set_server(id, Some(Arc::new(tools)));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for entry in catalogue.entries().iter() {
        assert!(model_safe(&entry.name), "not model-safe: {:?}", entry.name);
        assert!(
            seen.insert(entry.name.clone()),
            "named twice: {:?}",
            entry.name
        );
        let _ = entry.definition();
        let _ = entry.to_json();
    }
    let _ = catalogue.diagnostics();
}

/// `^[A-Za-z0-9_-]{1,64}$`, what model APIs accept (`catalogue::names`).
fn model_safe(name: &str) -> bool {
    (1..=crate::limits::MAX_MODEL_TOOL_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A `WWW-Authenticate` header value (bytes as reqwest hands them over,
/// decoded lossily) classified into an [`AuthChallenge`] against a fixed
/// endpoint, and its scopes split.
pub fn www_authenticate(data: &[u8]) {
    let header = String::from_utf8_lossy(data);
    let Ok(base) = url::Url::parse("https://mcp.example.test/mcp") else {
        return; // not reached: a constant, valid URL
    };
    let challenge = AuthChallenge::from_header(&header, &base);
    let _ = challenge.scopes();
}

/// A Streamable HTTP response body: the first byte sets the chunk size the
/// body arrives in, the rest is parsed as an SSE stream (`sse-stream`, as
/// rmcp parses it), each event's data decoded as rmcp's
/// `ServerJsonRpcMessage`, and each result bounded by the host's checks
/// ([`crate::json::check_bounds`], [`crate::json::check_list_bounds`]) and
/// mapped as a tool call result.
pub fn sse_response(data: &[u8]) {
    let [a, rest @ ..] = data else { return };
    let chunk = usize::from(*a % 32) + 1;
    let chunks: Vec<Result<hyper::body::Bytes, std::io::Error>> = rest
        .chunks(chunk)
        .map(|c| Ok(hyper::body::Bytes::copy_from_slice(c)))
        .collect();
    let mut events = sse_stream::SseStream::from_bytes_stream(futures::stream::iter(chunks));
    let limits = Limits::default();
    futures::executor::block_on(async {
        while let Some(event) = events.next().await {
            let Ok(event) = event else { break };
            let Some(payload) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            if let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(&payload) {
                check_message(message, &limits);
            }
        }
    });
}

/// The host's checks on one decoded server message.
fn check_message(message: ServerJsonRpcMessage, limits: &Limits) {
    let ServerJsonRpcMessage::Response(response) = message else {
        return;
    };
    let Ok(value) = serde_json::to_value(response.result) else {
        return;
    };
    if crate::json::check_bounds("fuzz", &value, limits).is_ok() {
        let _ = crate::chat::map_result("fuzz", &value);
    }
    if let Some(Value::Array(items)) = value.get("tools") {
        let _ = crate::json::check_list_bounds("fuzz", items, limits);
    }
}

/// An event sink that drops everything.
struct NoSink;

impl EventSink for NoSink {
    fn send(&self, _event: HostEvent) {}
}

/// An in-memory reader handing out at most `chunk` bytes per read.
struct Chunked<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self.chunk.min(self.data.len()).min(buf.remaining());
        let (head, tail) = self.data.split_at(n);
        buf.put_slice(head);
        self.data = tail;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests;
