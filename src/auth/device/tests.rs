use super::*;

fn metadata(extra: serde_json::Value) -> AuthorizationMetadata {
    let mut doc = serde_json::json!({
        "issuer": "https://as.example.test",
        "authorization_endpoint": "https://as.example.test/auth",
        "token_endpoint": "https://as.example.test/token",
    });
    for (k, v) in extra.as_object().unwrap() {
        doc[k] = v.clone();
    }
    serde_json::from_value(doc).unwrap()
}

const DEVICE: &str = "https://as.example.test/device/auth";

#[test]
fn the_flow_rule_of_rfc_8628() {
    let plain = metadata(serde_json::json!({}));
    let device = metadata(serde_json::json!({ "device_authorization_endpoint": DEVICE }));
    let device_only = metadata(serde_json::json!({
        "device_authorization_endpoint": DEVICE,
        "grant_types_supported": [DEVICE_CODE_GRANT, "refresh_token"],
    }));
    let no_code_response = metadata(serde_json::json!({
        "device_authorization_endpoint": DEVICE,
        "response_types_supported": ["none"],
    }));
    // The default: the browser, unless the server can only do the device grant.
    assert!(!chosen(UserFlow::AuthorizationCode, &plain).unwrap());
    assert!(!chosen(UserFlow::AuthorizationCode, &device).unwrap());
    assert!(chosen(UserFlow::AuthorizationCode, &device_only).unwrap());
    assert!(chosen(UserFlow::AuthorizationCode, &no_code_response).unwrap());
    // auto: the device grant whenever it is advertised.
    assert!(chosen(UserFlow::Auto, &device).unwrap());
    assert!(!chosen(UserFlow::Auto, &plain).unwrap());
    // deviceCode: required.
    assert!(chosen(UserFlow::DeviceCode, &device).unwrap());
    let e = chosen(UserFlow::DeviceCode, &plain).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotSupported);
    assert!(
        e.message.contains("device_authorization_endpoint"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("https://as.example.test"),
        "{}",
        e.message
    );
}

#[test]
fn verification_uris_are_https_or_loopback_and_bounded() {
    assert!(shown_uri("https://as.example.test/device").is_ok());
    assert!(shown_uri("http://127.0.0.1:4000/device").is_ok());
    for bad in [
        "http://as.example.test/device",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "not a url",
    ] {
        assert_eq!(
            shown_uri(bad).unwrap_err().code,
            ErrorCode::AuthFailed,
            "{bad}"
        );
    }
    let long = format!(
        "https://as.example.test/{}",
        "d".repeat(MAX_DEVICE_VERIFICATION_URI_BYTES)
    );
    assert!(shown_uri(&long).is_err());
}

#[test]
fn a_refusal_never_echoes_the_device_or_user_code() {
    let secrets = ["dc-7f3a9e1b2c4d".to_owned(), "WDJB-MJHT".to_owned()];
    let e = refused(
        "the device token request",
        "invalid_grant: device code dc-7f3a9e1b2c4d for WDJB-MJHT is unknown",
        &secrets,
    );
    assert_eq!(e.code, ErrorCode::AuthFailed);
    for s in &secrets {
        assert!(!e.message.contains(s.as_str()), "{}", e.message);
    }
    assert!(e.message.contains("invalid_grant"), "{}", e.message);
}
