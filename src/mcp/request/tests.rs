//! Tests of the request path: error mapping, timeouts, cursors, bounds.

use super::*;
use crate::limits::Limits;
use serde_json::json;

#[test]
fn json_rpc_errors_keep_code_and_data() {
    let e = ServiceError::McpError(rmcp::model::ErrorData::new(
        rmcp::model::ErrorCode(-32002),
        "resource not found",
        Some(json!({ "uri": "file:///x" })),
    ));
    let RequestFailure::Failed(e) = map_service_error("resources/read on s", e, None) else {
        panic!("not a failure")
    };
    assert_eq!(e.code, ErrorCode::ProtocolError);
    assert_eq!(
        e.message,
        "resources/read on s failed: resource not found (JSON-RPC error -32002)"
    );
    assert_eq!(
        e.detail.data(),
        Some(json!({ "code": -32002, "data": { "uri": "file:///x" } }))
    );
    assert_eq!(
        server_error_message("resources/read on s", &e),
        Some("resource not found")
    );
    assert_eq!(server_error_message("tools/call on s", &e), None);
    let plain = HostError::new(ErrorCode::ProtocolError, "resources/read on s failed: x");
    assert_eq!(server_error_message("resources/read on s", &plain), None);
}

#[test]
fn timeouts_name_their_kind_only_for_calls() {
    let timeout = |ms| ServiceError::Timeout {
        timeout: Duration::from_millis(ms),
    };
    let call = CallTimeouts {
        inactivity: Duration::from_millis(100),
        total: Duration::from_millis(500),
    };
    let failed = |f| match f {
        RequestFailure::Failed(e) => e,
        RequestFailure::Auth(_) => panic!("not a failure"),
    };
    let plain = failed(map_service_error("prompts/get on s", timeout(100), None));
    assert_eq!(plain.message, "prompts/get on s timed out after 100 ms");
    assert_eq!(plain.detail.data(), None);
    let total = failed(map_service_error("c", timeout(500), Some(call)));
    assert_eq!(total.message, "c timed out after 500 ms in total");
    assert_eq!(
        total.detail.data(),
        Some(json!({ "kind": "total", "ms": 500 }))
    );
    let idle = failed(map_service_error("c", timeout(100), Some(call)));
    assert_eq!(idle.message, "c timed out after 100 ms without progress");
    assert_eq!(
        idle.detail.data(),
        Some(json!({ "kind": "inactivity", "ms": 100 }))
    );
}

#[test]
fn results_over_the_bounds_are_refused() {
    let limits = Limits {
        max_result_bytes: 10,
        ..Limits::default()
    };
    assert!(crate::json::check_bounds("c", &json!([1, 2]), &limits).is_ok());
    let e = crate::json::check_bounds("c", &json!({ "text": "far too long" }), &limits)
        .err()
        .unwrap_or_else(|| panic!("not refused"));
    assert_eq!(e.code, ErrorCode::LimitExceeded);
    assert!(e.message.starts_with("c: the result is "), "{}", e.message);
}

/// A write to a stdio server's closed stdin (killed between two calls) is
/// `server_exited`; over Streamable HTTP a send error stays `protocol_error`.
#[test]
fn a_broken_stdin_pipe_is_server_exited() {
    let broken = || {
        ServiceError::TransportSend(rmcp::transport::DynamicTransportError::from_parts(
            "stdio",
            std::any::TypeId::of::<()>(),
            Box::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        ))
    };
    let mapped = |e| match map_service_error("tools/call on s", e, None) {
        RequestFailure::Failed(e) => e,
        RequestFailure::Auth(_) => panic!("not a failure"),
    };
    let stdio = mapped(pipe_closed(broken(), true));
    assert_eq!(stdio.code, ErrorCode::ServerExited);
    assert!(
        stdio.message.contains("the connection closed"),
        "{}",
        stdio.message
    );
    assert_eq!(
        mapped(pipe_closed(broken(), false)).code,
        ErrorCode::ProtocolError
    );
}
