//! Tests of the stdout monitor: pass-through, rate limits, discarded ids
//! and the decode check (`decode`).

use super::decode;
use super::*;
use crate::events::HostEvent;
use serde_json::json;
use tokio::io::AsyncReadExt;

#[tokio::test]
async fn passes_bytes_through_and_rate_limits_warnings() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let mut input = String::from("Server running on stdio\n{\"jsonrpc\":\"2.0\"}\n");
    for i in 0..10 {
        input.push_str(&format!("banner {i}\n"));
    }
    let mut w = StdoutMonitor::new(
        std::io::Cursor::new(input.clone().into_bytes()),
        "s".into(),
        Arc::new(tx),
    );
    let mut out = String::new();
    w.read_to_string(&mut out).await.unwrap_or_default();
    assert_eq!(out, input);
    let mut warnings = Vec::new();
    while let Ok(HostEvent::Log(r)) = rx.try_recv() {
        warnings.push(r.message);
    }
    assert_eq!(warnings.len(), STDOUT_NOISE_WARNINGS_PER_WINDOW as usize);
    assert!(
        warnings[0].contains("Server running on stdio"),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn reports_the_id_of_oversize_lines() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let (ids, mut got) = tokio::sync::broadcast::channel(4);
    let big = "x".repeat(500);
    let input = format!(
        "{{\"result\":{{\"t\":\"{big}\"}},\"jsonrpc\":\"2.0\",\"id\":7}}\n{{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"result\":\"{big}\"}}\n{{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{{}}}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":\"{big}\"}}\n"
    );
    let mut w = StdoutMonitor::new(
        std::io::Cursor::new(input.clone().into_bytes()),
        "s".into(),
        Arc::new(tx),
    )
    .with_discards(300, ids);
    let mut out = String::new();
    w.read_to_string(&mut out).await.unwrap();
    assert_eq!(out, input);
    assert_eq!(got.try_recv().unwrap().id, serde_json::json!(7));
    assert_eq!(got.try_recv().unwrap().id, serde_json::json!("s-1"));
    assert!(
        got.try_recv().is_err(),
        "the short line and the id-less notification report no id"
    );
    let mut warnings = 0;
    while let Ok(HostEvent::Log(r)) = rx.try_recv() {
        assert!(
            r.message
                .contains("more than the stdio message limit (300 bytes)"),
            "{}",
            r.message
        );
        warnings += 1;
    }
    assert_eq!(warnings, 3);
}

#[tokio::test]
async fn reports_messages_too_deep_to_parse() {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let (ids, mut got) = tokio::sync::broadcast::channel(4);
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let strings = format!("\"{}\"", "[\\\"".repeat(300));
    let input = format!("{{\"result\":{deep},\"jsonrpc\":\"2.0\",\"id\":3}}\n{{\"result\":{strings},\"jsonrpc\":\"2.0\",\"id\":4}}\n");
    let mut w = StdoutMonitor::new(
        std::io::Cursor::new(input.into_bytes()),
        "s".into(),
        Arc::new(tx),
    )
    .with_discards(1 << 20, ids);
    let mut out = String::new();
    w.read_to_string(&mut out).await.unwrap();
    let Discarded { id, reason, .. } = got.try_recv().unwrap();
    assert_eq!(id, serde_json::json!(3));
    assert!(reason.contains("201 levels"), "{reason}");
    assert!(
        got.try_recv().is_err(),
        "brackets inside strings do not count"
    );
}

/// What `check` says about one line (`None`: rmcp decodes it).
fn verdict(line: &[u8]) -> Option<(Vec<serde_json::Value>, String)> {
    let head = &line[..line.len().min(crate::limits::OVERSIZE_ID_WINDOW_BYTES)];
    decode::check(line, (head, &[])).map(|bad| (bad.ids, bad.what))
}

#[test]
fn what_rmcp_decodes_is_not_reported() {
    for line in [
        &br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"caf\u00e9"}]}}"#[..],
        br#"{"result":{},"jsonrpc":"2.0","id":"a"}"#,
        br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#,
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
        br#"{"jsonrpc":"2.0","id":5,"method":"roots/list"}"#,
        b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
        b"  {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"café\"}}".as_bytes(),
    ] {
        assert_eq!(verdict(line), None, "{}", String::from_utf8_lossy(line));
    }
}

#[test]
fn undecodable_lines_name_the_problem_and_the_response_ids() {
    let mut utf8 =
        br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"caf"#.to_vec();
    utf8.extend_from_slice(b"\xB0\xA1\"}]}}");

    let cases: Vec<(&[u8], Vec<serde_json::Value>, &str)> = vec![
        (
            &utf8,
            vec![json!(3)],
            "not valid UTF-8 (byte 0xB0 at offset 71)",
        ),
        (
            b"{\"result\":{\"t\":\"\xB0\"},\"jsonrpc\":\"2.0\",\"id\":\"x\"}",
            vec![json!("x")],
            "not valid UTF-8",
        ),
        (
            br#"{"jsonrpc":"2.0","id":4,"result":{content:[]}}"#,
            vec![json!(4)],
            "not JSON (key must be a string",
        ),
        (
            br#"{"jsonrpc":"2.0","id":5}"#,
            vec![json!(5)],
            "a response with neither `result` nor `error`",
        ),
        (
            br#"{"jsonrpc":"2.0","id":6,"result":{},"error":{"code":1,"message":"m"}}"#,
            vec![json!(6)],
            "both `result` and `error`",
        ),
        (
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":"E","message":"m"}}"#,
            vec![json!(7)],
            "`code` is not an integer",
        ),
        (
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":1.5,"message":"m"}}"#,
            vec![json!(7)],
            "`code` is not an integer",
        ),
    ];
    assert_reported(cases);
}

#[test]
fn undecodable_shapes_name_the_problem_and_the_response_ids() {
    let cases: Vec<(&[u8], Vec<serde_json::Value>, &str)> = vec![
        (
            br#"{"jsonrpc":"2.0","id":8,"error":{"code":1}}"#,
            vec![json!(8)],
            "`message` is not a string",
        ),
        (
            br#"{"jsonrpc":"2.0","id":8,"error":"boom"}"#,
            vec![json!(8)],
            "`error` is not an object",
        ),
        (
            br#"[{"jsonrpc":"2.0","id":9,"result":{}},{"jsonrpc":"2.0","id":10,"result":{}}]"#,
            vec![json!(9), json!(10)],
            "a batch (JSON array)",
        ),
        (
            br#"{"jsonrpc":"1.0","id":11,"result":{}}"#,
            vec![json!(11)],
            "`jsonrpc` is not \"2.0\"",
        ),
        (
            br#"{"id":12,"result":{}}"#,
            vec![json!(12)],
            "`jsonrpc` is not \"2.0\"",
        ),
        (
            br#"{"jsonrpc":"2.0","result":{}}"#,
            vec![],
            "without a string or number `id`",
        ),
        (br#"{"ok":1}"#, vec![], "`jsonrpc` is not \"2.0\""),
        (
            br#"{"jsonrpc":"2.0"}"#,
            vec![],
            "neither `result` nor `error`",
        ),
        (
            br#"{"jsonrpc":"2.0","id":13,"method":"sampling/createMessage","params":7}"#,
            vec![],
            "a request `sampling/createMessage` of the server",
        ),
        (
            br#"{"jsonrpc":"2.0","method":7}"#,
            vec![],
            "a notification whose `method` is not a string",
        ),
        (
            br#"{"jsonrpc":"2.0","id":14,"method":"x","result":{"#,
            vec![],
            "not JSON",
        ),
    ];
    assert_reported(cases);
}

/// Asserts that each line is reported with its ids and a description
/// containing the text.
fn assert_reported(cases: Vec<(&[u8], Vec<serde_json::Value>, &str)>) {
    for (line, ids, what) in cases {
        let got = verdict(line);
        let text = String::from_utf8_lossy(line);
        let Some((got_ids, got_what)) = got else {
            panic!("not reported: {text}")
        };
        assert_eq!(got_ids, ids, "{text}: {got_what}");
        assert!(got_what.contains(what), "{text}: {got_what}");
    }
}

#[tokio::test]
async fn undecodable_responses_fail_their_request_with_protocol_error() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let (ids, mut got) = tokio::sync::broadcast::channel(8);
    let mut input = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"t\":\"\xB0\xA1\"}}\n".to_vec();
    input.extend_from_slice(b"{\"ok\":1}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n");
    let mut w = StdoutMonitor::new(
        std::io::Cursor::new(input.clone()),
        "srv-1".into(),
        Arc::new(tx),
    )
    .with_discards(1 << 20, ids);
    let mut out = Vec::new();
    w.read_to_end(&mut out).await.unwrap();
    assert_eq!(out, input);
    let first = got.try_recv().unwrap();
    assert_eq!(first.id, serde_json::json!(3));
    assert_eq!(first.code, crate::error::ErrorCode::ProtocolError);
    assert!(
        first.reason.starts_with("not valid UTF-8"),
        "{}",
        first.reason
    );
    assert!(
        got.try_recv().is_err(),
        "the id-less line and the good response report no id"
    );
    let mut warnings = Vec::new();
    while let Ok(HostEvent::Log(r)) = rx.try_recv() {
        assert_eq!(r.server_id.as_deref(), Some("srv-1"));
        warnings.push(r.message);
    }
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("discarded the response to request 3: not valid UTF-8"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[0].contains("the line starts {\"jsonrpc\":\"2.0\",\"id\":3"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("discarded a message") && warnings[1].contains("{\"ok\":1}"),
        "{}",
        warnings[1]
    );
}

#[tokio::test]
async fn a_line_just_over_the_limit_counts_its_newline_as_rmcp_does() {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel::<HostEvent>();
    let (ids, mut got) = tokio::sync::broadcast::channel(4);
    let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
    let input = format!("{line}\n");
    let mut w = StdoutMonitor::new(
        std::io::Cursor::new(input.into_bytes()),
        "s".into(),
        Arc::new(tx),
    )
    .with_discards(line.len(), ids);
    let mut out = String::new();
    w.read_to_string(&mut out).await.unwrap();
    let d = got.try_recv().unwrap();
    assert_eq!(
        (d.id, d.code),
        (serde_json::json!(1), crate::error::ErrorCode::LimitExceeded)
    );
}
