//! Tests of the stdout monitor's decode check (`decode`); the reports as
//! the stdio transport drives them are in `crate::transport::stdio` (`report_tests`).

use super::decode;
use serde_json::json;

/// What `check` says about one line (`None`: rmcp decodes it).
fn verdict(line: &[u8]) -> Option<(Vec<serde_json::Value>, String)> {
    decode::check(line).map(|bad| (bad.ids, bad.what))
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

#[test]
fn the_top_level_id_of_a_line_that_is_not_json_is_found_wherever_it_is() {
    let id = |line: &str| decode::top_level_id(line.as_bytes());
    assert_eq!(id(r#"{"id":1,"result":{"t":"\x"}}"#), Some(json!(1)));
    assert_eq!(id(r#"{"result":{"t":"\x"},"id":"a"}"#), Some(json!("a")));
    assert_eq!(
        id(r#"{"result":{"id":2,"t":"\x"}, "id" : 3 }"#),
        Some(json!(3))
    );
    assert_eq!(
        id(r#"{"result":{"t":"\"id\":4"},"id":-5.5"#),
        Some(json!(-5.5))
    );
    assert_eq!(id(r#"{"t":"\x","id":6,"method":"m"}"#), None);
    assert_eq!(id(r#"{"t":"\x","id":null}"#), None);
    assert_eq!(id(r#"{"t":"\x","x":"id","y":{"id":7}}"#), None);
    assert_eq!(id(r#"{"t":"\x","id":"#), None);
    assert_eq!(id(r#"{"t":["id",1],"id":8"#), Some(json!(8)));
}

/// The nesting a full parse sees: the depth of `value`'s containers.
fn tree_depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Array(items) => 1 + items.iter().map(tree_depth).max().unwrap_or(0),
        serde_json::Value::Object(members) => {
            1 + members.values().map(tree_depth).max().unwrap_or(0)
        }
        _ => 0,
    }
}

#[test]
fn the_depth_scan_counts_only_containers_outside_strings() {
    let texts = [
        r#"{"a":"{[{[","b":[1,{"c":"]]}}"}]}"#,
        r#"{"a":"quote \" then {{{","b":{"c":{"d":[]}}}"#,
        r#"{"a":"ends in a backslash \\","b":[[["x"]]]}"#,
        r#"["\\\"[[[", {"k\"{": ["\u005b"]}]"#,
        r#""just a string {[""#,
        r#"{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{}}}]}"#,
        "[]",
        "3",
    ];
    for text in texts {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let scanned = super::framer::max_depth(text.as_bytes());
        assert_eq!(scanned, tree_depth(&value), "{text}");
    }
    // Not JSON: a string that never closes hides what follows it.
    assert_eq!(super::framer::max_depth(br#"{"a":"[[[ {"#), 1);
    assert_eq!(super::framer::max_depth(br#"[["\"#), 2);
}
