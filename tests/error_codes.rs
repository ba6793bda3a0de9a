//! The three lists of stable error codes agree: the `ErrorCode` variants
//! (read from `src/error.rs` with `syn`), `ErrorCode::ALL` with each
//! `as_str` string, and the `HostErrorCode` union in `index.d.ts` (read as
//! text). A code added in one place and not the others fails here.

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;

use ahp_mcp_host::error::ErrorCode;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The variant names of `enum ErrorCode` in `src/error.rs`, in order.
fn declared_variants() -> Vec<String> {
    let file = syn::parse_file(&read("src/error.rs")).unwrap_or_else(|e| panic!("parse: {e}"));
    let found = file.items.iter().find_map(|item| match item {
        syn::Item::Enum(e) if e.ident == "ErrorCode" => Some(e),
        _ => None,
    });
    let Some(error_code) = found else {
        panic!("no enum ErrorCode in src/error.rs")
    };
    error_code
        .variants
        .iter()
        .map(|v| v.ident.to_string())
        .collect()
}

/// The string members of `export type HostErrorCode = | '…' | …` in `index.d.ts`.
fn typescript_union() -> Vec<String> {
    let text = read("index.d.ts");
    let start = text
        .find("export type HostErrorCode =")
        .unwrap_or_else(|| panic!("index.d.ts declares no HostErrorCode"));
    let body = &text[start + "export type HostErrorCode =".len()..];
    let mut members = Vec::new();
    for line in body.lines().skip_while(|l| l.trim().is_empty()) {
        let Some(member) = line.trim().strip_prefix('|') else {
            break;
        };
        let member = member.trim();
        let quoted = member
            .strip_prefix('\'')
            .and_then(|m| m.strip_suffix('\''))
            .unwrap_or_else(|| panic!("HostErrorCode member is not a string literal: {member}"));
        members.push(quoted.to_owned());
    }
    members
}

fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[test]
fn all_lists_every_variant_once_in_declaration_order() {
    let all: Vec<String> = ErrorCode::ALL.iter().map(|c| format!("{c:?}")).collect();
    assert_eq!(all, declared_variants());
}

#[test]
fn each_code_string_is_its_variant_in_snake_case_and_unique() {
    let mut seen = BTreeSet::new();
    for code in ErrorCode::ALL {
        let s = code.as_str();
        assert_eq!(s, snake_case(&format!("{code:?}")), "{code:?}");
        assert_eq!(code.to_string(), s);
        assert!(seen.insert(s), "{s} used twice");
    }
}

#[test]
fn index_d_ts_host_error_code_lists_exactly_the_rust_codes() {
    let union = typescript_union();
    let ts: BTreeSet<&str> = union.iter().map(String::as_str).collect();
    assert_eq!(
        ts.len(),
        union.len(),
        "HostErrorCode repeats a member: {union:?}"
    );
    let rust: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let missing: Vec<_> = rust.difference(&ts).collect();
    let extra: Vec<_> = ts.difference(&rust).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "index.d.ts HostErrorCode lacks {missing:?} and has unknown {extra:?}"
    );
}

#[test]
fn not_supported_is_a_stable_code_in_rust_and_typescript() {
    assert_eq!(ErrorCode::NotSupported.as_str(), "not_supported");
    assert!(ErrorCode::ALL.contains(&ErrorCode::NotSupported));
    assert!(typescript_union().iter().any(|c| c == "not_supported"));
}
