//! The entry layout over keyring-core's mock store (in memory, per service
//! and user, like a real store).

use std::sync::Arc;

use keyring_core::{mock, CredentialStore, Error};

use super::*;

fn store() -> Arc<CredentialStore> {
    mock::Store::new().unwrap_or_else(|e| panic!("{e}"))
}

fn raw(store: &CredentialStore, user: &str) -> Option<String> {
    get(store, user)
        .unwrap_or_else(|e| panic!("{e}"))
        .map(|b| String::from_utf8(b).unwrap_or_else(|e| panic!("{e}")))
}

const KEY: &str = "ahp-mcp-host/oauth/v1 https://as.test https://mcp.test/mcp";

#[test]
fn a_short_value_is_one_entry_under_the_key_as_it_is() {
    let owned = store();
    let store = &*owned;
    assert_eq!(read(store, KEY).ok(), Some(None));
    write(store, KEY, r#"{"client_id":"c"}"#, 16 * 1024).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(raw(store, KEY).as_deref(), Some(r#"{"client_id":"c"}"#));
    assert_eq!(raw(store, &format!("{KEY} #1")), None);
    assert_eq!(
        read(store, KEY).ok().flatten().as_deref(),
        Some(r#"{"client_id":"c"}"#)
    );
    delete(store, KEY).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read(store, KEY).ok(), Some(None));
    // Deleting what is not there is no error.
    delete(store, KEY).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_long_value_is_split_into_parts_named_by_the_key_entry() {
    let owned = store();
    let store = &*owned;
    let value = "é".repeat(40) + "tail"; // 84 bytes, a part boundary inside a character
    write(store, KEY, &value, 10).unwrap_or_else(|e| panic!("{e}"));
    let head = raw(store, KEY).unwrap_or_default();
    assert!(head.starts_with("ahp-mcp-host/parts/v1 9 "), "{head}");
    assert!(get(store, &format!("{KEY} #9")).ok().flatten().is_some());
    assert!(get(store, &format!("{KEY} #10")).ok().flatten().is_none());
    assert_eq!(read(store, KEY).ok().flatten(), Some(value));

    // A shorter value replaces it: one entry again, the parts swept.
    write(store, KEY, "short", 10).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(raw(store, KEY).as_deref(), Some("short"));
    for i in 1..=9 {
        assert_eq!(raw(store, &format!("{KEY} #{i}")), None, "part {i}");
    }
}

#[test]
fn fewer_parts_replace_more_and_a_delete_removes_every_part() {
    let owned = store();
    let store = &*owned;
    write(store, KEY, &"a".repeat(50), 10).unwrap_or_else(|e| panic!("{e}"));
    write(store, KEY, &"b".repeat(25), 10).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read(store, KEY).ok().flatten(), Some("b".repeat(25)));
    assert_eq!(raw(store, &format!("{KEY} #4")), None);
    // A part an interrupted write left past the named ones is swept too.
    write(store, &format!("{KEY} #7"), "stale", 10).unwrap_or_else(|e| panic!("{e}"));
    delete(store, KEY).unwrap_or_else(|e| panic!("{e}"));
    for i in 1..=3 {
        assert_eq!(raw(store, &format!("{KEY} #{i}")), None, "part {i}");
    }
    assert_eq!(raw(store, KEY), None);
}

#[test]
fn a_missing_or_changed_part_reads_as_absent() {
    let owned = store();
    let store = &*owned;
    write(store, KEY, &"x".repeat(30), 10).unwrap_or_else(|e| panic!("{e}"));
    write(store, &format!("{KEY} #2"), "yyyyyyyyyy", 100).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read(store, KEY).ok(), Some(None), "digest mismatch");
    write(store, KEY, &"x".repeat(30), 10).unwrap_or_else(|e| panic!("{e}"));
    remove(store, &format!("{KEY} #3")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read(store, KEY).ok(), Some(None), "part missing");
}

#[test]
fn a_value_that_looks_like_a_parts_entry_is_stored_in_parts() {
    let owned = store();
    let store = &*owned;
    let tricky = "ahp-mcp-host/parts/v1 1 0000";
    write(store, KEY, tricky, 1024).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(raw(store, KEY).as_deref(), Some(tricky));
    assert_eq!(read(store, KEY).ok().flatten().as_deref(), Some(tricky));
    // A malformed parts entry reads as absent, never as its own text.
    write(store, KEY, "x", 1024).unwrap_or_else(|e| panic!("{e}"));
    entry(store, KEY)
        .and_then(|e| e.set_secret(b"ahp-mcp-host/parts/v1 many"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read(store, KEY).ok(), Some(None));
}

#[test]
fn too_many_parts_are_refused_before_anything_is_written() {
    let owned = store();
    let store = &*owned;
    let err = write(store, KEY, &"z".repeat(MAX_KEYCHAIN_PARTS + 1), 1);
    assert!(matches!(err, Err(Error::TooLong(..))), "{err:?}");
    assert_eq!(raw(store, KEY), None);
    assert_eq!(raw(store, &format!("{KEY} #1")), None);
}

#[test]
fn store_errors_pass_through() {
    let owned = store();
    let store = &*owned;
    let e = entry(store, KEY).unwrap_or_else(|e| panic!("{e}"));
    let mock: &mock::Cred = e
        .as_any()
        .downcast_ref()
        .unwrap_or_else(|| panic!("a mock"));
    mock.set_error(Error::NoStorageAccess("locked".into()));
    assert!(matches!(read(store, KEY), Err(Error::NoStorageAccess(_))));
}
