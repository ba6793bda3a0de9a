//! The OS keychain store over keyring-core's mock store: calls on the
//! blocking pool, errors naming the store, the value bound, the call
//! timeout. (The real Secret Service: `__test__/keychain.test.mjs`.)

use std::sync::Arc;
use std::time::Duration;

use keyring_core::{mock, CredentialStore, Error};
use rmcp::transport::auth::{CredentialStore as _, StoredCredentials};

use super::*;
use crate::auth::store::BridgedCredentialStore;

fn open_mock() -> Result<Arc<CredentialStore>, Error> {
    let store: Arc<CredentialStore> = mock::Store::new()?;
    Ok(store)
}

fn open_nothing() -> Result<Arc<CredentialStore>, Error> {
    Err(Error::PlatformFailure(
        "org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided by any .service files".into(),
    ))
}

fn open_slowly() -> Result<Arc<CredentialStore>, Error> {
    std::thread::sleep(Duration::from_millis(500));
    open_mock()
}

#[tokio::test]
async fn values_round_trip_under_the_key_scheme_through_the_bridge() {
    let os = OsSecretStore::with(open_mock, "Test", 64);
    let secrets: Arc<dyn SecretStore> = Arc::new(os);
    let bridge = BridgedCredentialStore::new(
        secrets.clone(),
        Arc::default(),
        "https://as.test/",
        "https://mcp.test/mcp",
    );
    let saved = StoredCredentials::new("client-1".into(), None, vec!["a".into()], Some(1));
    bridge.save(saved).await.unwrap_or_else(|e| panic!("{e}"));
    let key = "ahp-mcp-host/oauth/v1 https://as.test https://mcp.test/mcp".to_owned();
    let json = secrets
        .get(key.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let json = json.unwrap_or_else(|| panic!("stored under the key"));
    assert!(
        json.len() > 64,
        "split into parts and read back whole: {json}"
    );
    let loaded = bridge.load().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.map(|c| c.client_id).as_deref(), Some("client-1"));
    bridge.clear().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(secrets.get(key).await, Ok(None));
}

#[tokio::test]
async fn an_unreachable_keychain_is_an_error_naming_it_every_time() {
    let os = OsSecretStore::with(open_nothing, "Secret Service", KEYCHAIN_PART_BYTES);
    for _ in 0..2 {
        let err = os.get("k".into()).await.err().unwrap_or_default();
        assert!(
            err.starts_with("OS keychain (Secret Service) is not reachable: org.freedesktop.DBus.Error.ServiceUnknown"),
            "{err}"
        );
        let err = os
            .set("k".into(), "v".into())
            .await
            .err()
            .unwrap_or_default();
        assert!(err.contains("is not reachable"), "{err}");
    }
    // The bridge's error (what a sign-in fails with) names it too.
    let bridge =
        BridgedCredentialStore::new(Arc::new(os), Arc::default(), "https://as", "https://r");
    let err = bridge
        .load()
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("credential store: OS keychain (Secret Service) is not reachable"),
        "{err}"
    );
}

#[tokio::test]
async fn a_value_over_the_bound_is_refused_and_nothing_is_written() {
    let os = OsSecretStore::with(open_mock, "Test", KEYCHAIN_PART_BYTES);
    os.set("k".into(), "old".into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let big = "v".repeat(MAX_KEYCHAIN_VALUE_BYTES + 1);
    let err = os.set("k".into(), big).await.err().unwrap_or_default();
    assert!(
        err.contains(&format!("over the {MAX_KEYCHAIN_VALUE_BYTES}-byte limit")),
        "{err}"
    );
    assert_eq!(os.get("k".into()).await, Ok(Some("old".to_owned())));
    // At the bound: kept.
    let edge = "v".repeat(MAX_KEYCHAIN_VALUE_BYTES);
    os.set("k".into(), edge.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(os.get("k".into()).await, Ok(Some(edge)));
}

#[tokio::test]
async fn a_keychain_that_does_not_answer_fails_within_the_call_timeout() {
    let mut os = OsSecretStore::with(open_slowly, "Test", KEYCHAIN_PART_BYTES);
    if let Some(keychain) = Arc::get_mut(&mut os.keychain) {
        keychain.timeout = Duration::from_millis(50);
    }
    let started = std::time::Instant::now();
    let err = os.get("k".into()).await.err().unwrap_or_default();
    assert_eq!(
        err,
        "OS keychain (Test): reading failed: no answer within 50 ms"
    );
    assert!(started.elapsed() < Duration::from_millis(400));
}

#[test]
fn errors_never_show_the_bytes_a_keyring_error_carries() {
    let secret = b"canary-secret-bytes".to_vec();
    for e in [
        Error::BadEncoding(secret.clone()),
        Error::BadDataFormat(secret.clone(), "bad".into()),
    ] {
        let text = failure_text("Test", Op::Read, &Failure::Call(e));
        assert!(!text.contains("canary"), "{text}");
    }
}
