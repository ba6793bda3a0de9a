//! Tests of the stdio transport (framing, reports, rmcp's answers, writes)
//! and of the `tools/call` fast path (same answer as rmcp's decode).

use rmcp::model::JsonRpcMessage;
use serde_json::json;
use tokio::io::AsyncReadExt;

use super::fast;
use super::test_support::receive_all;
use super::*;
use crate::events::HostEvent;

/// Results of every `ServerResult` kind (and of none), as a server sends
/// them in `result`.
fn result_corpus() -> Vec<String> {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let task = r#""taskId":"t1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null"#;
    let mut corpus: Vec<String> = [
        r#"{"content":[{"type":"text","text":"hi"}]}"#,
        r#"{"content":[{"type":"text","text":"caf\u00e9 \"q\"","annotations":{"audience":["user"],"priority":0.5}}],"isError":false}"#,
        r#"{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"structuredContent":{"a":[1,2.5,-3,"x",null,true]}}"#,
        r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"resource","resource":{"uri":"file:///b","text":"b"}}]}"#,
        r#"{"content":[{"type":"audio","data":"aGk=","mimeType":"audio/wav"}],"_meta":{"k":1}}"#,
        r#"{"structuredContent":null}"#,
        r#"{"structuredContent":{"n":18446744073709551615,"f":1e400}}"#,
        r#"{"isError":true}"#,
        r#"{"isError":null,"content":null}"#,
        r#"{"content":[],"resultType":"complete"}"#,
        r#"{"content":[],"resultType":"complete","_meta":{"x":1}}"#,
        r#"{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}"#,
        r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"s"}}"#,
        r#"{"content":[],"_meta":{"io.modelcontextprotocol/subscriptionId":1}}"#,
        r#"{"content":[],"resultType":"input_required"}"#,
        r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}"#,
        r#"{"resultType":"task"}"#,
        r#"{"content":[],"resultType":"task"}"#,
        r#"{"content":{"a":1}}"#,
        r#"{"content":[{"type":"nope"}]}"#,
        r#"{"content":[],"content":[]}"#,
        r#"{"content":[],"extra":1}"#,
        r#"{"c\u006fntent":[{"type":"text","text":"escaped key"}]}"#,
        r#"{}"#,
        r#"{"_meta":{}}"#,
        r#"[]"#,
        r#""text""#,
        r#"null"#,
        r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c"}"#,
        r#"{"tools":[]}"#,
        r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
        r#"{"completion":{"values":["a"]}}"#,
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}"#,
        r#"{"prompts":[]}"#,
        r#"{"resources":[]}"#,
        r#"{"resourceTemplates":[]}"#,
        r#"{"contents":[{"uri":"file:///a","text":"a"}]}"#,
        r#"{"action":"accept","content":{"a":1}}"#,
        r#"{"action":"decline"}"#,
        r#"{"skills":[]}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    corpus.push(format!(r#"{{"resultType":"task",{task}}}"#));
    corpus.push(format!(r#"{{"resultType":"complete",{task}}}"#));
    corpus.push(format!(r#"{{"content":[],{task}}}"#));
    for n in [100, 124, 125, 126, 127] {
        corpus.push(format!(
            r#"{{"content":[],"structuredContent":{}}}"#,
            deep(n)
        ));
    }
    corpus
}

/// Whole lines: each result in several envelopes, and other messages.
fn line_corpus() -> Vec<String> {
    let mut lines = Vec::new();
    for result in result_corpus() {
        lines.push(format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#));
        lines.push(format!(
            r#"{{"result":{result},"jsonrpc":"2.0","id":"s-1"}}"#
        ));
        lines.push(format!(
            r#" {{ "id" : 7 , "result" : {result} , "jsonrpc" : "2.0" }} "#
        ));
    }
    let good = r#"{"content":[]}"#;
    for envelope in [
        r#"{"jsonrpc":"2.0","id":1,"result":R,"extra":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"result":R}"#,
        r#"{"jsonrpc":"2.0","id":null,"result":R}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"result":R}"#,
        r#"{"jsonrpc":"1.0","id":1,"result":R}"#,
        r#"{"id":1,"result":R}"#,
        r#"{"jsonrpc":"2.0","result":R}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","result":R}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":R,"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"res\u0075lt":R}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":R} x"#,
        r#"{"jsonrpc":"2.0","id":1,"result":R"#,
    ] {
        lines.push(envelope.replace('R', good));
    }
    lines.extend(
        [
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/custom","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"roots/list"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}"#,
            r#"[{"jsonrpc":"2.0","id":9,"result":{}}]"#,
            "not json",
            "",
        ]
        .map(str::to_owned),
    );
    lines
}

#[test]
fn the_fast_path_decodes_as_rmcp_does() {
    let mut fast_hits = 0;
    for line in line_corpus() {
        let bytes = line.as_bytes();
        let full = fast::full_decode(bytes);
        let fast_decode = fast::decode(bytes);
        assert_eq!(format!("{fast_decode:?}"), format!("{full:?}"), "{line}");
        if let Some(message) = fast::call_tool_response(bytes) {
            fast_hits += 1;
            let full =
                full.unwrap_or_else(|e| panic!("fast path took a line rmcp rejects: {line}: {e}"));
            assert_eq!(format!("{message:?}"), format!("{full:?}"), "{line}");
        }
    }
    assert!(fast_hits >= 40, "{fast_hits} lines on the fast path");
}

#[test]
fn the_fast_path_takes_plain_tool_results_and_leaves_the_rest() {
    let took = |line: &str| fast::call_tool_response(line.as_bytes()).is_some();
    assert!(took(
        r#"{"result":{"content":[{"type":"text","text":"x"}]},"jsonrpc":"2.0","id":3}"#
    ));
    assert!(took(
        r#"{"jsonrpc":"2.0","id":"a","result":{"content":[],"isError":true,"_meta":{}}}"#
    ));
    for other in [
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    ] {
        assert!(!took(other), "{other}");
    }
}

#[test]
fn the_nesting_limit_is_the_same_on_both_paths() {
    // envelope (1) + result (2) + n arrays: the parser stops at 128 levels.
    for (n, decodes) in [(125, true), (126, false), (127, false)] {
        let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[],"structuredContent":{deep}}}}}"#
        );
        assert_eq!(
            fast::decode(line.as_bytes()).is_ok(),
            decodes,
            "depth {}",
            n + 2
        );
        assert_eq!(
            fast::full_decode(line.as_bytes()).is_ok(),
            decodes,
            "depth {}",
            n + 2
        );
    }
}

#[tokio::test]
async fn receives_lines_across_reads_and_reports_the_rest() {
    let big = "x".repeat(400);
    let mut input = b"Server running on stdio\n\r\n".to_vec();
    input.extend_from_slice(b"{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"}]},\"jsonrpc\":\"2.0\",\"id\":1}\r\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"t\":\"\xB0\"}}\n");
    input.extend_from_slice(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"{big}\"}}\n").as_bytes(),
    );
    input.extend_from_slice(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}");
    for chunk in [1, 7, 64, 1 << 16] {
        let (messages, discarded, warnings, written) = receive_all(&input, chunk, 300).await;
        assert_eq!(messages.len(), 2, "chunk {chunk}: {messages:?}");
        assert!(matches!(
            &messages[0],
            JsonRpcMessage::Response(r) if matches!(r.result, rmcp::model::ServerResult::CallToolResult(_))
        ));
        assert!(matches!(&messages[1], JsonRpcMessage::Notification(_)));
        let ids: Vec<_> = discarded.iter().map(|d| (d.id.clone(), d.code)).collect();
        use crate::error::ErrorCode::{LimitExceeded, ProtocolError};
        assert_eq!(
            ids,
            vec![(json!(3), ProtocolError), (json!(4), LimitExceeded)]
        );
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings[0].contains("Server running on stdio"),
            "{warnings:?}"
        );
        assert!(
            warnings[2].contains("more than the stdio message limit (300 bytes)"),
            "{warnings:?}"
        );
        assert!(written.is_empty(), "{written}");
    }
}

#[tokio::test]
async fn answers_a_well_formed_message_of_the_wrong_shape_as_rmcp_does() {
    let input =
        b"{\"jsonrpc\":\"2.0\",\"id\":5}\n{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}\nnot json\n";
    let (messages, discarded, _, written) = receive_all(input, 1 << 16, 1 << 20).await;
    // rmcp reads an unknown notification method as a custom notification.
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(matches!(&messages[0], JsonRpcMessage::Notification(_)));
    assert_eq!(discarded.len(), 1);
    let answers: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 1, "{written}");
    assert_eq!(answers[0]["error"]["code"], json!(-32600));
}

#[tokio::test]
async fn sends_each_message_as_one_line() {
    let (stdin, mut server_in) = tokio::io::duplex(1 << 16);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let read = tokio::io::empty();
    let mut transport = StdioTransport::new(
        (read, stdin),
        Reporter::new("srv".into(), Arc::new(tx), 1 << 20, None),
    );
    for id in 0..3 {
        let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
        let message =
            TxJsonRpcMessage::<RoleClient>::request(ping, rmcp::model::NumberOrString::Number(id));
        transport.send(message).await.unwrap();
    }
    transport.close().await.unwrap();
    let closed = TxJsonRpcMessage::<RoleClient>::error(ErrorData::invalid_request("x", None), None);
    assert!(transport.send(closed).await.is_err());
    let mut written = String::new();
    server_in.read_to_string(&mut written).await.unwrap();
    let lines: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{written}");
    assert_eq!(lines[2]["id"], json!(2));
    assert_eq!(lines[2]["method"], json!("ping"));
    assert!(written.ends_with('\n'));
}

/// Stdin that takes everything and counts its `write` calls.
#[derive(Default)]
struct CountingStdin {
    bytes: Vec<u8>,
    writes: usize,
}

impl tokio::io::AsyncWrite for CountingStdin {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.writes += 1;
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn sends_queued_together_go_out_in_one_write_in_call_order() {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let mut transport = StdioTransport::new(
        (tokio::io::empty(), CountingStdin::default()),
        Reporter::new("srv".into(), Arc::new(tx), 1 << 20, None),
    );
    let ping = |id| {
        let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
        TxJsonRpcMessage::<RoleClient>::request(ping, rmcp::model::NumberOrString::Number(id))
    };
    // As rmcp's service loop does: every send called, then the futures run
    // (each in a task of its own there), the last one first here.
    let mut sends = Vec::new();
    for id in 0..16 {
        sends.push(transport.send(ping(id)));
    }
    sends.reverse();
    for result in futures::future::join_all(sends).await {
        result.expect("written");
    }
    // A lone send after them is a batch of its own.
    transport.send(ping(16)).await.expect("written");
    let writer = transport.writer.lock().await;
    let stdin = writer.stdin().expect("open");
    assert_eq!(stdin.writes, 2, "one write per batch");
    let ids: Vec<serde_json::Value> = std::str::from_utf8(&stdin.bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].clone())
        .collect();
    assert_eq!(ids, (0..17).map(|i| json!(i)).collect::<Vec<_>>());
}

/// A send that finds the writer free writes its line in its first poll:
/// it does not wait for other sends to queue behind it, so the server
/// starts on the request while the client prepares the next (issue 28:
/// waiting one scheduler turn for a batch cost 8–14 % of the calls per
/// second at 16 in flight).
#[tokio::test(flavor = "current_thread")]
async fn a_send_finding_the_writer_free_writes_in_its_first_poll() {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let mut transport = StdioTransport::new(
        (tokio::io::empty(), CountingStdin::default()),
        Reporter::new("srv".into(), Arc::new(tx), 1 << 20, None),
    );
    for id in 0..3 {
        let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
        let message =
            TxJsonRpcMessage::<RoleClient>::request(ping, rmcp::model::NumberOrString::Number(id));
        let mut send = Box::pin(transport.send(message));
        assert!(
            futures::poll!(&mut send).is_ready(),
            "send {id} written in its first poll"
        );
    }
    let writer = transport.writer.lock().await;
    let stdin = writer.stdin().expect("open");
    assert_eq!(stdin.writes, 3, "one write per send");
    assert_eq!(String::from_utf8_lossy(&stdin.bytes).lines().count(), 3);
}

/// rmcp drops `receive` in its `select!` whenever another branch is
/// ready: a cancelled `receive` waiting to answer a bad line must not
/// queue its `Invalid Request` answer again.
#[tokio::test]
async fn a_cancelled_receive_answers_a_bad_line_once() {
    let (stdin, mut server_in) = tokio::io::duplex(16);
    let bad: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":5}\n";
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let reporter = Reporter::new("srv".into(), Arc::new(tx), 1 << 20, None);
    let mut transport = StdioTransport::new((bad, stdin), reporter);
    let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
    let ping =
        TxJsonRpcMessage::<RoleClient>::request(ping, rmcp::model::NumberOrString::Number(1));
    let mut send = Box::pin(transport.send(ping));
    // The first poll takes the writer and fills the pipe.
    assert!(futures::poll!(&mut send).is_pending());
    for _ in 0..3 {
        let mut receive = Box::pin(transport.receive());
        assert!(
            futures::poll!(&mut receive).is_pending(),
            "waits for the writer"
        );
    }
    let reader = tokio::spawn(async move {
        let mut wire = String::new();
        server_in.read_to_string(&mut wire).await.map(|_| wire)
    });
    send.await.expect("written");
    assert!(transport.receive().await.is_none(), "stdout ended");
    transport.close().await.unwrap();
    let wire = reader.await.expect("joined").expect("read");
    let answers = wire.lines().filter(|l| l.contains("-32600")).count();
    assert_eq!(answers, 1, "one answer for one bad line: {wire}");
}

/// `cargo test --release --lib decode_1mib -- --ignored --nocapture`:
/// decoding a 1 MiB `tools/call` result line, the old receive path (a
/// byte-by-byte walk, rmcp's decode twice) against the new (memchr, the
/// fast path once). Prints figures; asserts nothing about time.
#[test]
#[ignore]
fn decode_1mib() {
    let text = "y".repeat(1 << 20);
    let line = format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{text}"}}]}},"jsonrpc":"2.0","id":1}}"#
    );
    let bytes = line.as_bytes();
    let time = |what: &str, f: &dyn Fn()| {
        let mut runs: Vec<f64> = (0..30)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        runs.sort_by(f64::total_cmp);
        println!("{what}: median {:.3} ms (min {:.3})", runs[15], runs[0]);
    };
    time("walk bytes (depth scan)", &|| {
        std::hint::black_box(crate::transport::stdout_monitor::framer::max_depth(bytes));
    });
    time("memchr for the newline", &|| {
        std::hint::black_box(memchr::memchr(b'\n', bytes));
    });
    time("rmcp decode (untagged)", &|| {
        std::hint::black_box(fast::full_decode(bytes).unwrap());
    });
    time("fast path decode", &|| {
        std::hint::black_box(fast::decode(bytes).unwrap());
    });
    time("old path: walk + decode twice", &|| {
        std::hint::black_box(crate::transport::stdout_monitor::framer::max_depth(bytes));
        std::hint::black_box(fast::full_decode(bytes).unwrap());
        std::hint::black_box(fast::full_decode(bytes).unwrap());
    });
    time("new path: memchr + fast decode", &|| {
        std::hint::black_box(memchr::memchr(b'\n', bytes));
        std::hint::black_box(fast::decode(bytes).unwrap());
    });
}
