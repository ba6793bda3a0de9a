//! Upstream AHP reducer fixtures (`tests/fixtures/ahp/`, see its README for
//! provenance) run through the `ahp` 1.0.0 reducers the host uses.
//!
//! Session fixtures go through `ahp::reducers::apply_action_to_session`, the
//! exact call `ahp_mcp_host::session::SessionStore::emit` makes (the store
//! itself always starts from an empty state, so it cannot take a fixture's
//! `initial`). Chat fixtures go through `apply_action_to_chat`.

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use ahp::reducers::{apply_action_to_chat, apply_action_to_session};
use ahp_types::actions::StateAction;
use ahp_types::state::{ChatState, SessionState};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Number of fixture files the repository carries; a missing or extra file fails.
const EXPECTED_FIXTURES: usize = 60;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ahp")
}

fn fixture_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", fixtures_dir().display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Removes every object key whose value is `null`, recursively (array items
/// that are `null` stay).
fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// First path where `a` and `b` differ, for readable failure messages.
fn first_diff(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(l), Some(r)) => first_diff(&format!("{path}.{k}"), l, r),
                (l, r) => Some(format!("{path}.{k}: got {l:?}, expected {r:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (l, r))| first_diff(&format!("{path}[{i}]"), l, r)),
        _ if a == b => None,
        _ => Some(format!("{path}: got {a}, expected {b}")),
    }
}

fn compare(what: &str, got: Value, expected: &Value) -> Result<(), String> {
    let got = strip_nulls(got);
    let expected = strip_nulls(expected.clone());
    // serde_json's Map equality ignores key order (BTreeMap or IndexMap alike).
    if got == expected {
        Ok(())
    } else {
        Err(format!(
            "{what}: {}",
            first_diff("$", &got, &expected).unwrap_or_else(|| "values differ".to_owned())
        ))
    }
}

/// Loads `initial`, checks its round trip, applies `actions` with `reduce`,
/// compares with `expected`.
fn run_with<S, F>(fixture: &Value, mut reduce: F) -> Result<(), String>
where
    S: Serialize + DeserializeOwned,
    F: FnMut(&mut S, &StateAction),
{
    let initial = fixture.get("initial").ok_or("missing \"initial\"")?;
    let mut state: S = serde_json::from_value(initial.clone())
        .map_err(|e| format!("initial: cannot deserialize: {e}"))?;
    let round_trip =
        serde_json::to_value(&state).map_err(|e| format!("initial: cannot serialize: {e}"))?;
    compare("initial round trip", round_trip, initial)?;

    let actions = fixture
        .get("actions")
        .and_then(Value::as_array)
        .ok_or("missing \"actions\" array")?;
    for (i, raw) in actions.iter().enumerate() {
        let action: StateAction = serde_json::from_value(raw.clone())
            .map_err(|e| format!("actions[{i}]: cannot deserialize: {e}"))?;
        reduce(&mut state, &action);
    }

    let expected = fixture.get("expected").ok_or("missing \"expected\"")?;
    let got =
        serde_json::to_value(&state).map_err(|e| format!("final state: cannot serialize: {e}"))?;
    compare("final state", got, expected)
}

fn run_fixture(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let fixture: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    match fixture.get("reducer").and_then(Value::as_str) {
        Some("session") => run_with::<SessionState, _>(&fixture, |s, a| {
            // Return value deliberately ignored (see README: "no-op" cases may report Applied).
            let _ = apply_action_to_session(s, a);
        }),
        Some("chat") => run_with::<ChatState, _>(&fixture, |s, a| {
            let _ = apply_action_to_chat(s, a);
        }),
        other => Err(format!("unsupported reducer {other:?}")),
    }
}

#[test]
fn fixture_directory_holds_all_60_files() {
    let files = fixture_files();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files.len(),
        EXPECTED_FIXTURES,
        "fixture files in {}: {names:#?}",
        fixtures_dir().display()
    );
    assert!(
        fixtures_dir().join("README.md").is_file(),
        "the fixtures README (provenance, licence) must travel with them"
    );
}

#[test]
fn every_fixture_passes_through_the_ahp_reducers() {
    let files = fixture_files();
    assert_eq!(
        files.len(),
        EXPECTED_FIXTURES,
        "expected {EXPECTED_FIXTURES} fixture files in {}",
        fixtures_dir().display()
    );
    let mut failures = Vec::new();
    let mut by_reducer = std::collections::BTreeMap::<String, usize>::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                let r = v
                    .get("reducer")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned();
                *by_reducer.entry(r).or_default() += 1;
            }
        }
        if let Err(message) = run_fixture(path) {
            failures.push(format!("{name}: {message}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    // Both reducers were exercised (guards against a fixture set that silently shrank to one kind).
    assert!(
        by_reducer.get("session").copied().unwrap_or(0) > 0
            && by_reducer.get("chat").copied().unwrap_or(0) > 0,
        "{by_reducer:?}"
    );
}

#[test]
fn strip_nulls_keeps_array_nulls_and_drops_object_nulls() {
    let v = serde_json::json!({"a": null, "b": [null, {"c": null, "d": 1}], "e": {"f": null}});
    assert_eq!(
        strip_nulls(v),
        serde_json::json!({"b": [null, {"d": 1}], "e": {}})
    );
}
