//! Tests of [`super::Catalogue`]: names, changes, digests, filters and
//! the reuse of entries across renames.

use serde_json::json;

use super::*;
use crate::limits::Limits;

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[test]
fn app_only_tools_stay_out_of_the_model_catalogue() {
    let raw = vec![
        json!({"name": "view", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": ["app"]}}}),
        json!({"name": "both", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": ["model", "app"]}}}),
    ];
    let mut c = Catalogue::default();
    assert!(c.set_server(
        "s",
        Some(Arc::new(
            ServerTools::build("s", raw, &Limits::default()).unwrap()
        ))
    ));
    let names: Vec<String> = c.entries().iter().map(|e| e.name.clone()).collect();
    assert_eq!(names, ["mcp__s__both"]);
    assert!(c.server("s").unwrap().get("view").is_some());
}

#[test]
fn entries_keep_the_server_key_order_in_js_and_ahp() {
    let raw = vec![json!({
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"url": {}, "thought": {}, "a": {}, "zeta": {}, "b": {}}},
        "_meta": {"z/last": 1, "a/first": 2},
    })];
    let mut c = Catalogue::default();
    c.set_server(
        "s",
        Some(Arc::new(
            ServerTools::build("s", raw, &Limits::default()).unwrap(),
        )),
    );
    let entry = c.by_model_name("mcp__s__t").unwrap();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let order = ["url", "thought", "a", "zeta", "b"];
    assert_eq!(keys(&entry.to_json()["inputSchema"]["properties"]), order);
    assert!(entry
        .json()
        .contains(r#""properties":{"url":{},"thought":{},"a":{},"zeta":{},"b":{}}"#));
    let published = serde_json::to_value(entry.definition()).unwrap();
    assert_eq!(keys(&published["inputSchema"]["properties"]), order);
    assert_eq!(
        keys(&published["_meta"]),
        ["z/last", "a/first", "ahp-mcp-host/source"]
    );
}

#[test]
fn catalogue_reports_changes_and_digests_follow_definitions() {
    let mut c = Catalogue::default();
    let build = |raw| {
        Some(Arc::new(
            ServerTools::build("s", raw, &Limits::default()).unwrap(),
        ))
    };
    assert!(c.set_server("s", build(vec![tool("a")])));
    let d1 = c
        .by_model_name("mcp__s__a")
        .unwrap()
        .tool
        .digest()
        .to_owned();
    assert!(!c.set_server("s", build(vec![tool("a")])));
    assert!(c.set_server(
        "s",
        build(vec![
            json!({"name": "a", "inputSchema": {"type": "object", "properties": {"x": {}}}})
        ])
    ));
    assert_ne!(c.by_model_name("mcp__s__a").unwrap().tool.digest(), d1);
    assert!(c.set_server("s", None));
    assert!(c.entries().is_empty());
}

#[test]
fn filters_outlive_listings_switch_at_run_time_and_are_diagnosed() {
    let build = |names: &[&str]| {
        let raw = names.iter().map(|n| tool(n)).collect();
        Some(Arc::new(
            ServerTools::build("s", raw, &Limits::default()).unwrap(),
        ))
    };
    let names = |c: &Catalogue| -> Vec<String> {
        c.entries()
            .iter()
            .map(|e| e.tool.tool_name.clone())
            .collect()
    };
    let strings = |l: &[&str]| -> Vec<String> { l.iter().map(|s| (*s).to_owned()).collect() };
    let filter = ToolFilter::new(
        Some(&strings(&["read_*", "echo"])),
        &strings(&["read_secret"]),
    )
    .unwrap();
    let mut c = Catalogue::default();
    assert!(!c.set_filter("s", Some(&filter)), "nothing listed yet");
    assert!(c.set_server("s", build(&["echo", "read_file", "read_secret", "write"])));
    assert_eq!(names(&c), ["echo", "read_file"]);
    let filtered: Vec<(String, DiagnosticAction, String)> = c
        .diagnostics()
        .into_iter()
        .map(|d| (d.tool, d.action, d.reason))
        .collect();
    assert_eq!(
        filtered,
        [
            (
                "read_secret".to_owned(),
                DiagnosticAction::Filtered,
                "matches excludeTools pattern \"read_secret\"".to_owned()
            ),
            (
                "write".to_owned(),
                DiagnosticAction::Filtered,
                "matches no includeTools pattern".to_owned()
            ),
        ]
    );
    assert!(c.why_disabled("s", "write").is_some());
    assert!(c.why_disabled("other", "write").is_none());
    // A stop and a new listing (a restart, a list_changed) keep the filter.
    assert!(c.set_server("s", None));
    assert!(c.set_server("s", build(&["echo", "read_new", "write"])));
    assert_eq!(names(&c), ["echo", "read_new"]);
    // Switches win over the lists and are kept when the lists are set again.
    assert!(c.switch_tool("s", "write", true).unwrap());
    assert!(!c.switch_tool("s", "write", true).unwrap(), "no change");
    assert!(c.switch_tool("s", "echo", false).unwrap());
    assert_eq!(names(&c), ["read_new", "write"]);
    assert!(
        !c.switch_tool("s", "unlisted", false).unwrap(),
        "not listed"
    );
    assert!(!c.set_filter("s", Some(&filter)));
    assert_eq!(names(&c), ["read_new", "write"]);
    // A removed server's filter is forgotten.
    assert!(c.set_filter("s", None));
    assert_eq!(names(&c), ["echo", "read_new", "write"]);
    assert!(c.diagnostics().is_empty());
}

#[test]
fn a_rename_reuses_every_unchanged_entry_wherever_it_moved() {
    let limits = Limits::default();
    let mut c = Catalogue::default();
    let build = |names: &[&str]| {
        let raw = names.iter().map(|n| tool(n)).collect();
        Some(Arc::new(ServerTools::build("a", raw, &limits).unwrap()))
    };
    c.set_server("a", build(&["x", "y"]));
    let z = ServerTools::build("b", vec![tool("z")], &limits).unwrap();
    c.set_server("b", Some(Arc::new(z)));
    let before = c.entries();
    // A new tool in front of server a's: every later entry moves by one.
    assert!(c.set_server("a", build(&["w", "x", "y"])));
    let after = c.entries();
    let names: Vec<&str> = after.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["mcp__a__w", "mcp__a__x", "mcp__a__y", "mcp__b__z"]);
    for (old, new) in before.iter().zip(&after[1..]) {
        assert!(Arc::ptr_eq(old, new), "{} reused", old.name);
    }
    // The same listing again: the same entries, no change reported.
    assert!(!c.set_server("a", build(&["w", "x", "y"])));
    assert!(after
        .iter()
        .zip(c.entries().iter())
        .all(|(a, b)| Arc::ptr_eq(a, b)));
}
