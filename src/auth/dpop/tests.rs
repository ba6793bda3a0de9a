use super::*;

use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};

fn claims_of(proof: &str, key: &DpopKey) -> serde_json::Value {
    let header = decode_header(proof).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
    assert_eq!(header.alg, Algorithm::ES256);
    let jwk = header.jwk.unwrap_or_else(|| panic!("no jwk header"));
    assert_eq!(
        jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
            .ok(),
        Some(key.thumbprint())
    );
    let public = serde_json::to_value(&jwk).unwrap_or_default();
    assert!(
        public.get("d").is_none(),
        "the proof carries the private key: {public}"
    );
    assert_eq!(public["kty"], "EC");
    assert_eq!(public["crv"], "P-256");
    let mut validation = Validation::new(Algorithm::ES256);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    let decoding = DecodingKey::from_jwk(&jwk).unwrap_or_else(|e| panic!("{e}"));
    decode::<serde_json::Value>(proof, &decoding, &validation)
        .unwrap_or_else(|e| panic!("the proof does not verify: {e}"))
        .claims
}

#[test]
fn a_proof_is_a_signed_dpop_jwt_with_the_rfc_9449_claims() {
    let key = DpopKey::generate().unwrap_or_else(|e| panic!("{e}"));
    let proof = key
        .proof(
            "POST",
            "https://mcp.example.test/mcp?x=1#frag",
            Some("the-token"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let claims = claims_of(&proof, &key);
    assert_eq!(claims["htm"], "POST");
    assert_eq!(claims["htu"], "https://mcp.example.test/mcp");
    // ath = base64url(SHA-256("the-token")), computed independently (openssl dgst -sha256).
    assert_eq!(claims["ath"], "wqc_z2HfvcrceaELozCy7162b8Cmc17Wm3lrs8l7l64");
    assert!(claims["iat"].as_u64().is_some_and(|t| t > 1_700_000_000));
    assert_eq!(claims["jti"].as_str().map(str::len), Some(22));
    assert!(claims.get("nonce").is_none());
    let again = claims_of(
        &key.proof("POST", "https://mcp.example.test/mcp", None)
            .unwrap_or_default(),
        &key,
    );
    assert_ne!(again["jti"], claims["jti"], "a proof was reused");
    assert!(again.get("ath").is_none());
}

#[test]
fn nonces_are_remembered_per_origin_and_sent_in_later_proofs() {
    let key = DpopKey::generate().unwrap_or_else(|e| panic!("{e}"));
    assert!(key.remember_nonce("https://as.example.test/token", "n-1"));
    assert!(!key.remember_nonce("https://as.example.test/other", "n-1"));
    let proof = |url: &str| claims_of(&key.proof("POST", url, None).unwrap_or_default(), &key);
    assert_eq!(proof("https://as.example.test/token")["nonce"], "n-1");
    assert!(proof("https://mcp.example.test/mcp").get("nonce").is_none());
    assert!(key.remember_nonce("https://as.example.test/token", "n-2"));
    assert_eq!(proof("https://as.example.test/token")["nonce"], "n-2");
}

#[test]
fn keys_are_per_server_and_never_shown() {
    let keys = DpopKeys::default();
    let a = keys
        .key_for("https://a.example.test/mcp")
        .unwrap_or_else(|e| panic!("{e}"));
    let again = keys
        .key_for("https://a.example.test/mcp")
        .unwrap_or_else(|e| panic!("{e}"));
    let b = keys
        .key_for("https://b.example.test/mcp")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(Arc::ptr_eq(&a, &again));
    assert_ne!(a.thumbprint(), b.thumbprint());
    assert_eq!(format!("{a:?}"), "DpopKey { .. }");
}

#[test]
fn recognises_dpop_metadata_tokens_and_nonce_challenges() {
    let metadata = |algs: serde_json::Value| -> AuthorizationMetadata {
        serde_json::from_value(serde_json::json!({
            "authorization_endpoint": "https://as.example.test/authorize",
            "token_endpoint": "https://as.example.test/token",
            "dpop_signing_alg_values_supported": algs,
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    };
    assert!(supported_by(&metadata(serde_json::json!([
        "RS256", "ES256"
    ]))));
    assert!(!supported_by(&metadata(serde_json::json!(["RS256"]))));
    assert!(!supported_by(&metadata(serde_json::json!("ES256"))));
    let token = |kind: &str| -> OAuthTokenResponse {
        serde_json::from_value(serde_json::json!({"access_token": "t", "token_type": kind}))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert!(is_bound(&token("DPoP")) && is_bound(&token("dpop")));
    assert!(!is_bound(&token("Bearer")));
    let url = Url::parse("https://mcp.example.test/mcp").unwrap_or_else(|e| panic!("{e}"));
    assert!(is_nonce_challenge(
        r#"DPoP error="use_dpop_nonce", resource_metadata="https://mcp.example.test/prm""#,
        &url
    ));
    assert!(!is_nonce_challenge(
        r#"Bearer error="use_dpop_nonce""#,
        &url
    ));
    assert!(!is_nonce_challenge(
        r#"DPoP error="invalid_token", error_description="use_dpop_nonce""#,
        &url
    ));
}
