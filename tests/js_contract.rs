//! The lists `index.js` keeps agree with the Rust ones they mirror (read as
//! text): the request handler names (`REQUEST_KINDS`) are exactly
//! `ServerRequestKind::ALL` by `name()`. (Which errors carry an AHP JSON-RPC
//! number is decided in Rust: `HostError::rpc_code`, sent as `rpcCode`.)

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use ahp_mcp_host::requests::ServerRequestKind;

fn index_js() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("index.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The single-quoted strings of `const <name> = new Set([…])` in index.js.
fn js_set(text: &str, name: &str) -> Vec<String> {
    let head = format!("const {name} = new Set([");
    let start = text
        .find(&head)
        .unwrap_or_else(|| panic!("index.js has no `{head}`"))
        + head.len();
    let end = text[start..]
        .find("])")
        .unwrap_or_else(|| panic!("{name} is not closed"))
        + start;
    text[start..end]
        .split(',')
        .map(|m| {
            let m = m.trim();
            m.strip_prefix('\'')
                .and_then(|m| m.strip_suffix('\''))
                .unwrap_or_else(|| panic!("{name} member is not a string literal: {m}"))
                .to_owned()
        })
        .collect()
}

#[test]
fn request_kinds_in_index_js_are_the_rust_handler_names() {
    let js = js_set(&index_js(), "REQUEST_KINDS");
    let rust: Vec<&str> = ServerRequestKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(js, rust);
}
