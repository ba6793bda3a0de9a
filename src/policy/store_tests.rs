use super::*;

const D1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const D2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

#[tokio::test]
async fn a_decision_survives_a_new_store_and_a_changed_digest_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let store = TrustStore::in_dir(dir.path());
    assert_eq!(store.known("a", D1).await, (Known::New, None));
    store.remember("a", D1, true, true).await;
    store.remember("b", D1, false, true).await;
    let again = TrustStore::in_dir(dir.path());
    assert_eq!(again.known("a", D1).await.0, Known::Decided(true));
    assert_eq!(again.known("b", D1).await.0, Known::Decided(false));
    assert_eq!(again.known("a", D2).await.0, Known::Changed);
    // Held by this host only.
    again.remember("c", D1, true, false).await;
    assert_eq!(again.known("c", D1).await.0, Known::Decided(true));
    assert_eq!(
        TrustStore::in_dir(dir.path()).known("c", D1).await.0,
        Known::New
    );
    // Forgotten everywhere.
    assert_eq!(again.forget(Some("a")).await, 1);
    assert_eq!(
        TrustStore::in_dir(dir.path()).known("a", D1).await.0,
        Known::New
    );
    assert_eq!(again.forget(None).await, 2, "b in the file, c in memory");
    let text = std::fs::read_to_string(dir.path().join(TRUST_FILE)).unwrap();
    assert_eq!(text, r#"{"version":1,"entries":[]}"#);
}

/// Two hosts' stores on one data folder.
fn two_stores() -> (tempfile::TempDir, TrustStore, TrustStore) {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (
        TrustStore::in_dir(dir.path()),
        TrustStore::in_dir(dir.path()),
    );
    (dir, one, two)
}

#[tokio::test]
async fn bounded_and_merged_with_another_host() {
    let (dir, one, two) = two_stores();
    assert_eq!(one.known("x", D1).await.0, Known::New); // loaded before two writes
    two.remember("y", D1, true, true).await;
    one.remember("x", D1, true, true).await;
    let fresh = TrustStore::in_dir(dir.path());
    assert_eq!(fresh.known("y", D1).await.0, Known::Decided(true), "kept");
    assert_eq!(fresh.known("x", D1).await.0, Known::Decided(true));
    for i in 0..MAX_TRUST_ENTRIES + 3 {
        one.remember(&format!("s{i}"), D2, true, true).await;
    }
    let text = std::fs::read_to_string(dir.path().join(TRUST_FILE)).unwrap();
    let file: TrustFile = serde_json::from_str(&text).unwrap();
    assert_eq!(file.entries.len(), MAX_TRUST_ENTRIES);
}

#[cfg(unix)]
#[tokio::test]
async fn a_loose_or_linked_file_is_not_used_and_never_followed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = TrustStore::in_dir(dir.path());
    store.remember("a", D1, true, true).await;
    let path = dir.path().join(TRUST_FILE);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (known, warning) = TrustStore::in_dir(dir.path()).known("a", D1).await;
    assert_eq!(known, Known::New);
    assert!(warning.unwrap().contains("is not used"));
    // A planted link is replaced by the next write, the target untouched.
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "keep").unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let linked = TrustStore::in_dir(dir.path());
    assert_eq!(linked.known("a", D1).await.0, Known::New);
    linked.remember("a", D1, true, true).await;
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    assert!(std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_file());
}

#[tokio::test]
async fn a_decision_another_host_forgot_is_not_written_back() {
    let (dir, a, b) = two_stores();
    a.remember("x", D1, true, true).await;
    assert_eq!(b.known("x", D1).await.0, Known::Decided(true)); // b holds x
    assert_eq!(a.forget(Some("x")).await, 1);
    b.remember("y", D1, true, true).await; // b writes its own change only
    let c = TrustStore::in_dir(dir.path());
    assert_eq!(c.known("x", D1).await.0, Known::New, "x stays forgotten");
    assert_eq!(c.known("y", D1).await.0, Known::Decided(true));
    assert_eq!(b.known("x", D1).await.0, Known::New, "b saw the forget");
    // A refusal another host forgot is not written back either.
    b.remember("z", D2, false, true).await;
    assert_eq!(a.forget(None).await, 2);
    b.remember("w", D1, true, true).await;
    let d = TrustStore::in_dir(dir.path());
    assert_eq!(d.known("z", D2).await.0, Known::New);
    assert_eq!(d.known("y", D1).await.0, Known::New);
}
