//! Tests of [`super::ServerTools::build_after`].

use serde_json::json;

use super::*;

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[test]
fn display_title_is_title_then_annotations_title() {
    let raw = vec![
        json!({"name": "both", "title": "Title", "annotations": {"title": "Annotation"}, "inputSchema": {"type": "object"}}),
        json!({"name": "browser_tabs", "annotations": {"title": "Manage tabs"}, "inputSchema": {"type": "object"}}),
        json!({"name": "empty", "title": "", "annotations": {"title": "Fallback"}, "inputSchema": {"type": "object"}}),
        json!({"name": "bare", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object"}}),
    ];
    let st = ServerTools::build("s", raw, &Limits::default()).unwrap();
    let titles: Vec<Option<&str>> = st.tools.iter().map(|t| t.display_title()).collect();
    assert_eq!(
        titles,
        [Some("Title"), Some("Manage tabs"), Some("Fallback"), None]
    );
}

#[test]
fn definitions_keep_the_server_key_order() {
    let raw = vec![json!({
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"url": {}, "thought": {}, "a": {}, "zeta": {}, "b": {}}},
        "outputSchema": {"type": "object", "properties": {"zulu": {}, "alpha": {}}},
        "_meta": {"z/last": 1, "a/first": 2},
    })];
    let st = ServerTools::build("s", raw, &Limits::default()).unwrap();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let d = &st.tools[0].definition();
    assert_eq!(
        keys(&d["inputSchema"]["properties"]),
        ["url", "thought", "a", "zeta", "b"]
    );
    assert_eq!(keys(&d["outputSchema"]["properties"]), ["zulu", "alpha"]);
    assert_eq!(keys(&d["_meta"]), ["z/last", "a/first"]);
}

#[test]
fn duplicates_keep_the_first_with_a_diagnostic() {
    let raw = vec![
        json!({"name": "d", "description": "first", "inputSchema": {"type": "object"}}),
        json!({"name": "d", "description": "second", "inputSchema": {"type": "object"}}),
    ];
    let st = ServerTools::build("s", raw, &Limits::default()).unwrap();
    assert_eq!(st.tools.len(), 1);
    assert_eq!(st.tools[0].definition()["description"], "first");
    assert_eq!(st.diagnostics[0].action, DiagnosticAction::Duplicate);
}

#[test]
fn bad_tools_cost_only_themselves() {
    let raw = vec![
        json!({"name": "bad", "inputSchema": {"type": "string"}}),
        json!({"name": "out", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
        json!(5),
        tool("ok"),
    ];
    let st = ServerTools::build("s", raw, &Limits::default()).unwrap();
    let names: Vec<&str> = st.tools.iter().map(|t| t.tool_name.as_str()).collect();
    assert_eq!(names, ["out", "ok"]);
    assert!(!st.tools[0].definition().contains_key("outputSchema"));
    let actions: Vec<DiagnosticAction> = st.diagnostics.iter().map(|d| d.action).collect();
    assert_eq!(
        actions,
        [
            DiagnosticAction::Omitted,
            DiagnosticAction::OutputSchemaDropped,
            DiagnosticAction::Omitted
        ]
    );
}

#[test]
fn aggregate_bounds_fail_the_listing() {
    let limits = Limits {
        max_tools_per_server: 2,
        ..Limits::default()
    };
    let e = ServerTools::build("srv", vec![tool("a"), tool("b"), tool("c")], &limits).unwrap_err();
    assert_eq!(e.code, ErrorCode::LimitExceeded);
    assert!(e.message.contains("srv") && e.message.contains("maxToolsPerServer"));
    let limits = Limits {
        max_total_schema_bytes: 40,
        ..Limits::default()
    };
    let e = ServerTools::build("srv", vec![tool("a"), tool("b"), tool("c")], &limits).unwrap_err();
    assert!(e.message.contains("maxTotalSchemaBytes"));
}

#[test]
fn per_tool_bounds_omit_or_truncate() {
    let limits = Limits {
        max_tool_name_bytes: 8,
        max_tool_description_bytes: 5,
        max_json_depth: 3,
        ..Limits::default()
    };
    let raw = vec![
        tool("a-very-long-name"),
        json!({"name": "desc", "description": "ééééé", "inputSchema": {"type": "object"}}),
        json!({"name": "deep", "inputSchema": {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {}}}}}}),
    ];
    let st = ServerTools::build("s", raw, &limits).unwrap();
    assert_eq!(st.tools.len(), 1);
    assert_eq!(st.tools[0].definition()["description"], "éé");
    assert!(st
        .diagnostics
        .iter()
        .any(|d| d.reason.contains("maxToolNameBytes")));
    assert!(st
        .diagnostics
        .iter()
        .any(|d| d.tool == "deep" && d.reason.contains("maxJsonDepth")));
}

#[test]
fn digest_is_sha256_of_name_nul_definition() {
    // First 64 bits of SHA-256("a\0" + definition JSON): digests are in
    // published state, so the function must not change.
    let st = ServerTools::build("s", vec![tool("a")], &Limits::default()).unwrap();
    assert_eq!(st.tools[0].digest(), "6cd082cc8e9d581b");
}

#[test]
fn task_required_tools_keep_execution_and_get_an_omitted_diagnostic() {
    let mut required = tool("job");
    required["execution"] = json!({"taskSupport": "required"});
    let mut optional = tool("maybe");
    optional["execution"] = json!({"taskSupport": "optional"});
    let built = ServerTools::build("s", vec![required, optional], &Limits::default()).unwrap();
    let job = built.get("job").unwrap();
    assert!(job.task_required);
    assert_eq!(
        job.definition()["execution"],
        json!({"taskSupport": "required"})
    );
    assert!(!built.get("maybe").unwrap().task_required);
    assert_eq!(built.diagnostics.len(), 1);
    assert_eq!(built.diagnostics[0].tool, "job");
    assert_eq!(built.diagnostics[0].action, DiagnosticAction::Omitted);
}

#[test]
fn a_relist_reuses_unchanged_entries_and_equals_a_fresh_build() {
    let long = "x".repeat(40);
    let listing = |changed: &str| {
        vec![
            tool("same"),
            json!({"name": "cut", "description": long, "inputSchema": {"type": "object"},
                   "outputSchema": {"type": "array"}}),
            json!({"name": "edit", "description": changed, "inputSchema": {"type": "object"}}),
            json!({"name": "job", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}),
        ]
    };
    let limits = Limits {
        max_tool_description_bytes: 10,
        ..Limits::default()
    };
    // Undisturbed: a value another test keeps meanwhile has the cut
    // description checked in full, which is right but not what is counted.
    let (first, again) = crate::redact::undisturbed(|| {
        let first = ServerTools::build("s", listing("one"), &limits).unwrap();
        let again = ServerTools::build_after("s", listing("two"), &limits, Some(&first)).unwrap();
        (first, again)
    });
    let fresh = ServerTools::build("s", listing("two"), &limits).unwrap();
    // Unchanged entries are the very same checked tools; the edited one is new.
    let same: Vec<bool> = (0..4)
        .map(|i| Arc::ptr_eq(&first.tools[i], &again.tools[i]))
        .collect();
    assert_eq!(same, [true, true, false, true]);
    assert_eq!(
        again.get("edit").unwrap().definition()["description"],
        "two"
    );
    // Everything else is what a fresh build gives: digests and diagnostics
    // (the reused tools' truncation, dropped output schema, task-required).
    let digests = |st: &ServerTools| -> Vec<String> {
        st.tools.iter().map(|t| t.digest().to_owned()).collect()
    };
    assert_eq!(digests(&again), digests(&fresh));
    assert_eq!(again.diagnostics, fresh.diagnostics);
    assert_eq!(again.diagnostics.len(), 3);
    // A server that now lists a tool twice still gets the duplicate
    // diagnostic, and a reused tool still counts toward maxTotalSchemaBytes.
    let mut twice = listing("one");
    twice.push(tool("same"));
    let dup = ServerTools::build_after("s", twice, &limits, Some(&first)).unwrap();
    assert_eq!(
        dup.diagnostics.last().map(|d| d.action),
        Some(DiagnosticAction::Duplicate)
    );
    let tight = Limits {
        max_total_schema_bytes: 40,
        ..limits
    };
    let e = ServerTools::build_after("s", listing("one"), &tight, Some(&first)).unwrap_err();
    assert!(e.message.contains("maxTotalSchemaBytes"));
}

#[test]
fn a_kept_secret_in_a_text_a_property_name_or_a_number_is_redacted() {
    // Red team of issue 29, F4: texts were redacted, keys and numbers not.
    let secret = "canary-catalogue-key-5be1e0c3";
    let digits = "424242424242424243";
    let _kept = crate::redact::KeptSecret::all([secret, digits]);
    let raw = json!({
        "name": "leaky",
        "description": format!("uses {secret}"),
        "inputSchema": {"type": "object", "properties": {secret: {"type": "integer", "default": 424_242_424_242_424_243_u64}}},
        "_meta": {secret: true},
    });
    let tools = ServerTools::build("srv", vec![raw], &Limits::default()).unwrap();
    let definition = &tools.tools[0].definition_json;
    assert!(
        !definition.contains(secret) && !definition.contains(digits),
        "{definition}"
    );
    let parsed: Value = serde_json::from_str(definition).unwrap();
    assert_eq!(
        parsed["inputSchema"]["properties"]["[redacted]"]["default"],
        "[redacted]"
    );
}
