//! Tests of the error type and its JSON details.

use super::*;
use serde_json::json;

fn err(detail: ErrorDetail) -> HostError {
    HostError::new(ErrorCode::AuthRequired, "x").with_detail(detail)
}

#[test]
fn every_detail_has_its_documented_json_data() {
    let resource: ahp_types::state::ProtectedResourceMetadata =
        serde_json::from_value(json!({ "resource": "https://r.example/mcp" }))
            .unwrap_or_else(|e| panic!("{e}"));
    let rows = [
        (ErrorDetail::None, None),
        (
            ErrorDetail::JsonRpc {
                code: -32002,
                data: None,
            },
            Some(json!({ "code": -32002, "data": null })),
        ),
        (
            ErrorDetail::Ahp {
                rpc_code: JSONRPC_INVALID_PARAMS,
                resources: Some(vec![resource]),
            },
            Some(json!({ "code": -32602, "resources": [{ "resource": "https://r.example/mcp" }] })),
        ),
        (
            ErrorDetail::Ahp {
                rpc_code: JSONRPC_INVALID_PARAMS,
                resources: None,
            },
            Some(json!({ "code": -32602 })),
        ),
        (
            ErrorDetail::Challenge {
                insufficient_scope: true,
                required_scopes: vec!["admin".into()],
            },
            Some(json!({ "code": -32007, "insufficientScope": true, "requiredScopes": ["admin"] })),
        ),
        (
            ErrorDetail::Timeout {
                kind: TimeoutKind::Total,
                ms: 5,
            },
            Some(json!({ "kind": "total", "ms": 5 })),
        ),
        (
            ErrorDetail::Stale {
                reason: StaleReason::Changed,
                tool: Some(("srv".into(), "echo".into())),
            },
            Some(json!({ "reason": "changed", "serverId": "srv", "toolName": "echo" })),
        ),
        (
            ErrorDetail::Stale {
                reason: StaleReason::Removed,
                tool: None,
            },
            Some(json!({ "reason": "removed" })),
        ),
    ];
    for (detail, data) in rows {
        assert_eq!(detail.data(), data, "{detail:?}");
    }
}

#[test]
fn only_ahp_details_carry_an_rpc_code_and_only_insufficient_scope_is_step_up() {
    let ahp = ErrorDetail::Ahp {
        rpc_code: AHP_AUTH_REQUIRED,
        resources: None,
    };
    assert_eq!(err(ahp).rpc_code(), Some(-32007));
    let refused = ErrorDetail::Challenge {
        insufficient_scope: false,
        required_scopes: Vec::new(),
    };
    let step_up = ErrorDetail::Challenge {
        insufficient_scope: true,
        required_scopes: Vec::new(),
    };
    assert_eq!(err(refused.clone()).rpc_code(), Some(-32007));
    assert!(!err(refused).is_step_up());
    assert!(err(step_up.clone()).is_step_up());
    let not_auth = HostError::new(ErrorCode::Timeout, "x").with_detail(step_up);
    assert!(!not_auth.is_step_up());
    let rpc = ErrorDetail::JsonRpc {
        code: -32602,
        data: None,
    };
    assert_eq!(err(rpc).rpc_code(), None);
    assert_eq!(err(ErrorDetail::None).rpc_code(), None);
}
