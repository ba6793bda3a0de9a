//! Where the time of a 1000-tool catalogue goes, stage by stage (ignored:
//! a measurement, never an assertion on time). Run it on a release build:
//!
//! ```text
//! cargo test --release --lib publisher::perf -- --ignored --nocapture
//! ```
//!
//! Stages, each the median of several rounds: rmcp's decode of the
//! `tools/list` response line (untagged `ServerJsonRpcMessage`) and its
//! re-encoding into a `Value`, a plain `Value` decode, the line read as
//! the transport and the list walk read it (each entry's text, no tree:
//! [`entry_texts`]), [`ServerTools::build_after_text`] (bounds, schema
//! normalization, digests), [`Catalogue::set_server`] (names, the JSON for
//! JS), re-lists, and the publication (`session/serverToolsChanged`
//! through the reducer, serialized).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ahp_types::actions::{SessionServerToolsChangedAction, StateAction};
use serde_json::{json, Value};

use super::tools_envelope::{CatalogueTools, ToolsEnvelope};
use crate::catalogue::{Catalogue, ServerTools};
use crate::events::EnvelopeText;
use crate::limits::Limits;
use crate::session::SessionStore;

/// `n` tools like the benchmark server's, every tenth one richer (title,
/// annotations, an output schema, `_meta`), as a JSON-RPC response line.
fn response_line(n: usize) -> String {
    let tools: Vec<Value> = (0..n)
        .map(|i| {
            let mut t = json!({
                "name": format!("tool_{i:04}"),
                "description": format!("Benchmark filler tool number {i:04}"),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "what to look for"},
                        "limit": {"type": "integer", "minimum": 1}
                    },
                    "required": ["query"]
                }
            });
            if i % 10 == 0 {
                t["title"] = json!(format!("Tool {i}"));
                t["annotations"] = json!({"readOnlyHint": true, "openWorldHint": false});
                t["outputSchema"] = json!({"type": "object", "properties": {"hits": {"type": "array", "items": {"type": "string"}}}});
                t["_meta"] = json!({"example.com/origin": "bench"});
            }
            t
        })
        .collect();
    json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": tools}}).to_string()
}

/// Median of `rounds` runs of `f`.
fn median(rounds: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[rounds / 2]
}

fn raw_tools(line: &str) -> Vec<Value> {
    let mut v: Value = serde_json::from_str(line).unwrap();
    match v["result"]["tools"].take() {
        Value::Array(a) => a,
        _ => unreachable!(),
    }
}

/// The floor of a re-list that would read each entry as text and check
/// only the entries whose text changed: the line's entries borrowed
/// (`RawValue`, the parser validates but builds no tree) and SHA-256 of
/// each entry's bytes. Returns the digests.
fn raw_entry_digests(line: &str) -> Vec<[u8; 32]> {
    use sha2::{Digest, Sha256};
    #[derive(serde::Deserialize)]
    struct Response<'a> {
        #[serde(borrow)]
        result: Page<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Page<'a> {
        #[serde(borrow)]
        tools: Vec<&'a serde_json::value::RawValue>,
    }
    let page: Response = serde_json::from_str(line).unwrap();
    (page.result.tools.iter())
        .map(|t| Sha256::digest(t.get().as_bytes()).into())
        .collect()
}

/// The line's entries as the host reads them: the answer's result text
/// copied out (as `transport::raw_text::read_answer` does, without its
/// depth and escape scans), its members one level deep and each entry's
/// text copied out (what `mcp::request::list_all` of `Box<RawValue>` returns).
fn entry_texts(line: &str) -> Vec<Box<serde_json::value::RawValue>> {
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: &'a serde_json::value::RawValue,
    }
    let answer: Answer = serde_json::from_str(line).unwrap();
    let text = answer.result.get().to_owned();
    let page = crate::json::Members::of(&text).unwrap();
    let tools: Vec<&serde_json::value::RawValue> =
        serde_json::from_str(page.get("tools").unwrap().get()).unwrap();
    tools.into_iter().map(ToOwned::to_owned).collect()
}

/// Re-lists as the actor makes them (read, build after the server's
/// current tools, set), of an unchanged listing and of one whose every
/// description changed (the bench's `touch_tools`).
fn report_relists(
    catalogue: &mut Catalogue,
    line: &str,
    rounds: usize,
    report: &impl Fn(&str, Duration),
) {
    let limits = Limits::default();
    let relist = |catalogue: &mut Catalogue, line: &str| {
        let previous = catalogue.server("bench");
        let raw = entry_texts(line);
        let tools = ServerTools::build_after_text("bench", &raw, &limits, previous.as_deref());
        catalogue.set_server("bench", Some(Arc::new(tools.unwrap())))
    };
    relist(catalogue, line);
    report(
        "refresh, unchanged: read + build_after_text + set_server",
        median(rounds, || {
            std::hint::black_box(relist(catalogue, line));
        }),
    );
    // Every description changed (only the labels are checked again), or
    // every schema (each tool checked in full).
    let changes = [
        (
            "refresh, all descriptions changed",
            "Benchmark filler",
            "Changed filler",
        ),
        (
            "refresh, all schemas changed",
            "what to look for",
            "what to find",
        ),
    ];
    for (what, from, to) in changes {
        let other = line.replace(from, to);
        let mut round = 0;
        report(
            &format!("{what}: read + build_after_text + set_server"),
            median(rounds, || {
                round += 1;
                let next = if round % 2 == 1 { &other } else { line };
                std::hint::black_box(relist(catalogue, next));
            }),
        );
    }
}

/// The decodes of the response line: rmcp's, a plain `Value`, and the
/// entries read as borrowed text and hashed ([`raw_entry_digests`]).
fn report_decodes(line: &str, rounds: usize, report: &impl Fn(&str, Duration)) {
    report(
        "rmcp decode (ServerJsonRpcMessage) + to_value",
        median(rounds, || {
            let m: rmcp::model::ServerJsonRpcMessage = serde_json::from_str(line).unwrap();
            let rmcp::model::ServerJsonRpcMessage::Response(r) = m else {
                panic!("not a response")
            };
            std::hint::black_box(serde_json::to_value(r.result).unwrap());
        }),
    );
    report(
        "plain Value decode",
        median(rounds, || {
            std::hint::black_box(raw_tools(line));
        }),
    );
    report(
        "raw entries (borrowed) + SHA-256 of each entry's text",
        median(rounds, || {
            std::hint::black_box(raw_entry_digests(line));
        }),
    );
    report(
        "entries read as the host reads them (entry_texts)",
        median(rounds, || {
            std::hint::black_box(entry_texts(line));
        }),
    );
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture on a release build"]
fn catalogue_of_1000_tools_stage_by_stage() {
    const ROUNDS: usize = 15;
    let line = response_line(1000);
    let limits = Limits::default();
    let report = |stage: &str, d: Duration| {
        println!("{stage:<58} {:>9.3} ms", d.as_secs_f64() * 1e3);
    };
    println!(
        "response line: {} bytes, {ROUNDS} rounds, medians",
        line.len()
    );
    report_decodes(&line, ROUNDS, &report);
    let build = || {
        let raw = entry_texts(&line);
        Arc::new(ServerTools::build_after_text("bench", &raw, &limits, None).unwrap())
    };
    report(
        "read + ServerTools::build_after_text (new server)",
        median(ROUNDS, || {
            std::hint::black_box(build());
        }),
    );
    report(
        "build + Catalogue::set_server (new server: names, JSON)",
        median(ROUNDS, || {
            let mut c = Catalogue::default();
            std::hint::black_box(c.set_server("bench", Some(build())));
        }),
    );
    let mut catalogue = Catalogue::default();
    report_relists(&mut catalogue, &line, ROUNDS, &report);
    catalogue.set_server("bench", Some(build()));
    let entries = catalogue.entries();
    let mut session = SessionStore::new("ahp-session:/perf");
    report(
        "publish: definitions (built from the checked tools)",
        median(ROUNDS, || {
            let tools: Vec<_> = entries.iter().map(|e| e.definition()).collect();
            std::hint::black_box(tools);
        }),
    );
    let mut bytes = 0;
    report(
        "publish: definitions + reducer + envelope JSON",
        median(ROUNDS, || {
            let tools = entries.iter().map(|e| e.definition()).collect();
            let action =
                StateAction::SessionServerToolsChanged(SessionServerToolsChangedAction { tools });
            let envelope = session.emit(action);
            let json = serde_json::to_string(&envelope).unwrap();
            bytes = json.len();
        }),
    );
    println!("(the envelope is {bytes} bytes)");
    let mut text_bytes = 0;
    report(
        "publish: envelope text from the entries (what the host does)",
        median(ROUNDS, || {
            let tools = Arc::new(CatalogueTools::new(entries.clone()));
            let seq = session.emit_published_tools(tools.clone());
            let mut out = Vec::new();
            ToolsEnvelope::new(session.channel(), seq, tools).write_json(&mut out);
            text_bytes = out.len();
        }),
    );
    println!("(its text is {text_bytes} bytes)");
}
