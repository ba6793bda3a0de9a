//! The upstream AHP reducer fixtures (`tests/fixtures/ahp/` of the
//! workspace, 60 files) through [`ahp_reducers_json::reduce`] one action
//! at a time, the state crossing JSON between actions as it does for the
//! JavaScript reducers (napi and WebAssembly) and the state mirror;
//! compared as the workspace's `tests/ahp_fixtures.rs` does (object keys
//! whose value is null dropped, key order ignored).

use std::path::{Path, PathBuf};

use ahp_reducers_json::{reduce, Scope};
use serde_json::Value;

const EXPECTED_FIXTURES: usize = 60;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/ahp")
}

/// Removes every object key whose value is `null`, recursively.
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

/// Runs one fixture; the final state, or why it could not run.
fn run(fixture: &Value) -> Result<Value, String> {
    let scope = match fixture["reducer"].as_str() {
        Some("session") => Scope::Session,
        Some("chat") => Scope::Chat,
        other => return Err(format!("unsupported reducer {other:?}")),
    };
    let mut state = fixture["initial"].to_string();
    for action in fixture["actions"].as_array().ok_or("no actions")? {
        let answer = reduce(scope, &state, &action.to_string()).map_err(|e| e.0)?;
        let mut answer: Value = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
        state = answer["state"].take().to_string();
    }
    serde_json::from_str(&state).map_err(|e| e.to_string())
}

#[test]
fn every_fixture_passes_with_the_state_crossing_json_between_actions() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("the workspace's tests/fixtures/ahp")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), EXPECTED_FIXTURES);
    let mut failures = Vec::new();
    for path in &files {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match run(&fixture) {
            Ok(got) if strip_nulls(got.clone()) == strip_nulls(fixture["expected"].clone()) => {}
            Ok(got) => failures.push(format!("{name}: got {got}")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
