//! Regression tests for the fuzzing entry points: every committed seed
//! (`fuzz/seeds/<target>/`) passes through its target, and each input that
//! fuzzing once crashed on is replayed here as a plain test
//! (docs/reliability.md lists them).

use std::path::Path;

/// Runs `target` on every file of `fuzz/seeds/<name>/`; returns how many.
fn seeds(name: &str, target: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(name);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        target(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
        n += 1;
    }
    n
}

#[test]
fn every_seed_passes_its_target() {
    assert!(seeds("mcp_json", super::mcp_json) > 0);
    assert!(seeds("stdout_lines", super::stdout_lines) > 0);
    assert!(seeds("tools_list", super::tools_list) > 0);
    assert!(seeds("www_authenticate", super::www_authenticate) > 0);
    assert!(seeds("sse_response", super::sse_response) > 0);
}

#[test]
fn empty_and_short_inputs_pass() {
    for data in [&b""[..], b"\0", b"\n\n", b"{", b"\xff\xfe"] {
        super::mcp_json(data);
        super::stdout_lines(data);
        super::tools_list(data);
        super::www_authenticate(data);
        super::sse_response(data);
    }
}
