//! The stdout reports of the stdio transport (the stdout monitor's
//! `Reporter` as the transport drives it): noise warnings and their rate
//! limit, oversize and too-deep lines, undecodable responses, and the line
//! limit counting the newline as rmcp's codec does.

use serde_json::json;

use super::test_support::receive_all;
use crate::error::ErrorCode::{LimitExceeded, ProtocolError};
use crate::limits::STDOUT_NOISE_WARNINGS_PER_WINDOW;

#[tokio::test]
async fn rate_limits_noise_warnings() {
    let mut input = String::from("Server running on stdio\n{\"jsonrpc\":\"2.0\"}\n");
    for i in 0..10 {
        input.push_str(&format!("banner {i}\n"));
    }
    let (messages, discarded, warnings, _) = receive_all(input.as_bytes(), 5, 1 << 20).await;
    assert!(messages.is_empty(), "{messages:?}");
    assert!(discarded.is_empty(), "no response id among them");
    assert_eq!(warnings.len(), STDOUT_NOISE_WARNINGS_PER_WINDOW as usize);
    assert!(
        warnings[0].contains("Server running on stdio"),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn reports_the_id_of_oversize_lines() {
    let big = "x".repeat(500);
    let input = format!(
        "{{\"result\":{{\"t\":\"{big}\"}},\"jsonrpc\":\"2.0\",\"id\":7}}\n{{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"result\":\"{big}\"}}\n{{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{{}}}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":\"{big}\"}}\n"
    );
    let (messages, discarded, warnings, _) = receive_all(input.as_bytes(), 64, 300).await;
    let ids: Vec<_> = discarded.iter().map(|d| (d.id.clone(), d.code)).collect();
    assert_eq!(
        ids,
        vec![(json!(7), LimitExceeded), (json!("s-1"), LimitExceeded)],
        "the short line and the id-less notification report no id"
    );
    assert_eq!(messages.len(), 1, "the short response is delivered");
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    for w in &warnings {
        assert!(
            w.contains("more than the stdio message limit (300 bytes)"),
            "{w}"
        );
    }
}

#[tokio::test]
async fn reports_messages_too_deep_to_parse() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let strings = format!("\"{}\"", "[\\\"".repeat(300));
    let input = format!("{{\"result\":{deep},\"jsonrpc\":\"2.0\",\"id\":3}}\n{{\"result\":{strings},\"jsonrpc\":\"2.0\",\"id\":4}}\n");
    let (messages, discarded, _, _) = receive_all(input.as_bytes(), 1 << 16, 1 << 20).await;
    assert_eq!(discarded.len(), 1, "brackets inside strings do not count");
    assert_eq!(discarded[0].id, json!(3));
    assert!(
        discarded[0].reason.contains("201 levels"),
        "{}",
        discarded[0].reason
    );
    assert_eq!(messages.len(), 1, "the response with the long string");
}

#[tokio::test]
async fn undecodable_responses_fail_their_request_with_protocol_error() {
    let mut input = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"t\":\"\xB0\xA1\"}}\n".to_vec();
    input.extend_from_slice(b"{\"ok\":1}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n");
    let (messages, discarded, warnings, _) = receive_all(&input, 1 << 16, 1 << 20).await;
    assert_eq!(
        discarded.len(),
        1,
        "the id-less line and the good response report no id"
    );
    assert_eq!(discarded[0].id, json!(3));
    assert_eq!(discarded[0].code, ProtocolError);
    assert!(
        discarded[0].reason.starts_with("not valid UTF-8"),
        "{}",
        discarded[0].reason
    );
    assert_eq!(messages.len(), 1, "response 4 is delivered");
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
    let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
    let input = format!("{line}\n");
    let (messages, discarded, _, _) = receive_all(input.as_bytes(), 1 << 16, line.len()).await;
    assert!(messages.is_empty(), "{messages:?}");
    assert_eq!(discarded.len(), 1);
    assert_eq!(
        (discarded[0].id.clone(), discarded[0].code),
        (json!(1), LimitExceeded)
    );
    let (messages, discarded, _, _) = receive_all(input.as_bytes(), 1 << 16, line.len() + 1).await;
    assert_eq!(
        (messages.len(), discarded.len()),
        (1, 0),
        "one byte more fits"
    );
}

#[tokio::test]
async fn a_lone_surrogate_escape_is_read_as_the_replacement_character() {
    // As the TypeScript SDK writes a text cut mid-emoji: `result` first.
    let input = concat!(
        r#"{"result":{"content":[{"type":"text","text":"ab\ud83d rest"}]},"jsonrpc":"2.0","id":3}"#,
        "\n",
        r#"{"result":{"content":[{"type":"text","text":"ab\ud83d"}]},"jsonrpc":"2.0","id":4}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"t","description":"\udc00\ud83d\ude00","inputSchema":{"type":"object"}}]}}"#,
        "\n",
    );
    let (messages, discarded, warnings, _) = receive_all(input.as_bytes(), 7, 1 << 20).await;
    assert!(discarded.is_empty(), "{discarded:?}");
    assert!(warnings.is_empty(), "{warnings:?}");
    let texts: Vec<String> = messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap().to_string())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts[0].contains("\"ab\u{FFFD} rest\""), "{}", texts[0]);
    assert!(texts[1].contains("\"ab\u{FFFD}\""), "{}", texts[1]);
    assert!(texts[2].contains("\"\u{FFFD}😀\""), "{}", texts[2]);
}

#[tokio::test]
async fn a_line_that_is_not_json_fails_the_request_whose_id_it_carries_wherever_it_is() {
    let input = concat!(
        // The id last, in a line shorter than the id window.
        r#"{"result":{"t":"a\x"},"jsonrpc":"2.0","id":3}"#,
        "\n",
        // The id in the middle, after a string with escapes and braces.
        r#"{"jsonrpc":"2.0","result":{"t":"}\"id\":9,{"},"id":"s-4","extra":[1,{"id":8}],"x":tru}"#,
        "\n",
        // A lone surrogate and another fault: still discarded, at once.
        r#"{"result":{"t":"\ud83d"},"jsonrpc":"2.0","id":5,}"#,
        "\n",
        // A request of the server: its id is not the host's.
        r#"{"params":{"t":"\q"},"jsonrpc":"2.0","id":6,"method":"x"}"#,
        "\n",
    );
    let (messages, discarded, _, _) = receive_all(input.as_bytes(), 1 << 16, 1 << 20).await;
    assert!(messages.is_empty(), "{messages:?}");
    let ids: Vec<_> = discarded.iter().map(|d| (d.id.clone(), d.code)).collect();
    assert_eq!(
        ids,
        vec![
            (json!(3), ProtocolError),
            (json!("s-4"), ProtocolError),
            (json!(5), ProtocolError)
        ]
    );
    assert!(discarded[0].reason.starts_with("not JSON"), "{discarded:?}");
}
