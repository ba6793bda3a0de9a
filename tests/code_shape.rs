//! The code-shape rules of `docs/architecture.md`, checked on every
//! `cargo test` by parsing `src/` with `syn`:
//!
//! - no file under `src/`, `binding/src/` (the napi binding crate),
//!   `tests/`, `reducers/src/`, `bench/floor/src/` or `fuzz/fuzz_targets/`
//!   is longer than [`MAX_FILE_LINES`] lines;
//! - no function, method, closure or `macro_rules!` body there (tests
//!   included) is longer than [`MAX_FN_LINES`] lines, from its signature
//!   to its closing brace;
//! - the top-level modules of `src/` form no dependency cycle: a module's
//!   `crate::…`/`super::…` paths outside `#[cfg(test)]` items are its edges,
//!   and the graph must be acyclic (`lib.rs` may use anything).
//!
//! The failure message lists every offender, so a red run says what to split.

// Test code: a failed unwrap or expect is a failed test (the workspace
// lints deny both outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

#[path = "code_shape/escapes.rs"]
mod escapes;
#[path = "code_shape/files.rs"]
mod files;
#[path = "code_shape/rules.rs"]
mod rules;

/// Longest allowed source file, in lines.
const MAX_FILE_LINES: usize = 600;
/// Longest allowed function, in lines (signature to closing brace).
const MAX_FN_LINES: usize = 80;

/// The `.rs` files under `src/` (the core crate).
fn src_files() -> Vec<PathBuf> {
    rs_files("src")
}

/// The files the escape rules apply to: the core's and the binding crate's.
fn checked_files() -> Vec<PathBuf> {
    let mut files = src_files();
    files.extend(rs_files("binding/src"));
    files
}

/// The files the size rules apply to: those of [`checked_files`] and the
/// integration tests (`tests/`), the benchmark floor and the reducers.
fn sized_files() -> Vec<PathBuf> {
    let mut files = checked_files();
    for dir in [
        "tests",
        "reducers/src",
        "bench/floor/src",
        "binding/build.rs",
        "build.rs",
        "fuzz/fuzz_targets",
    ] {
        if !Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).exists() {
            continue;
        }
        files.extend(rs_files(dir));
    }
    files
}

/// The `.rs` files under `dir` (relative to the crate root), sorted; `dir`
/// itself when it is a file.
fn rs_files(dir: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    if path.is_file() {
        return vec![path];
    }
    let mut out = Vec::new();
    walk(&path, &mut out);
    out
}

/// `path` relative to the crate root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string()
}

fn parse(path: &Path) -> (String, syn::File) {
    let text = std::fs::read_to_string(path).expect("read source");
    let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (text, file)
}

/// `src/supervisor/actor.rs` → `["supervisor", "actor"]`; `mod.rs` names its folder.
fn module_path(path: &Path) -> Vec<String> {
    let rel = path
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

struct FnLengths {
    file: String,
    found: Vec<(usize, String)>,
}

impl FnLengths {
    /// Records one function: from its signature (doc comments and attributes
    /// not counted) to the closing brace of its body.
    fn record(&mut self, sig: &syn::Signature, body: &syn::Block) {
        self.record_span(sig.span().start().line, body.span().end().line, &sig.ident);
    }

    fn record_span(&mut self, start: usize, end: usize, what: &dyn std::fmt::Display) {
        self.found
            .push((end - start + 1, format!("{}:{start} {what}", self.file)));
    }
}

impl<'ast> Visit<'ast> for FnLengths {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.record(&f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.record(&f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = &f.default {
            self.record(&f.sig, body);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
    // A closure is a function too (`static F: fn() = || { … }` has no `fn`).
    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        let (start, end) = (c.span().start().line, c.body.span().end().line);
        self.record_span(start, end, &"closure");
        syn::visit::visit_expr_closure(self, c);
    }
    // A `macro_rules!` body is code written once and expanded: it is held to
    // the function limit. The items an item macro is given (`m! { fn … }`)
    // are measured as items.
    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        if m.mac.path.is_ident("macro_rules") {
            let (start, end) = (m.span().start().line, m.span().end().line);
            let name = m.ident.as_ref().map_or("?".to_owned(), ToString::to_string);
            self.record_span(start, end, &format!("macro_rules! {name}"));
        } else if let Ok(items) = syn::parse2::<syn::File>(m.mac.tokens.clone()) {
            self.visit_file(&items);
        }
        syn::visit::visit_item_macro(self, m);
    }
    // Any macro invocation that is given a `fn` (in an impl, a trait, a
    // `const` block, with tokens that do not parse as items) is held to the
    // limit as a whole.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        fn has_fn(tokens: proc_macro2::TokenStream) -> bool {
            tokens.into_iter().any(|t| match t {
                proc_macro2::TokenTree::Ident(i) => i == "fn",
                proc_macro2::TokenTree::Group(g) => has_fn(g.stream()),
                _ => false,
            })
        }
        if has_fn(m.tokens.clone()) {
            let (start, end) = (
                m.path.span().start().line,
                m.delimiter.span().close().end().line,
            );
            self.record_span(start, end, &"a macro given a fn");
        }
        syn::visit::visit_macro(self, m);
    }
}

/// The paths a `use` tree names: `(path, the name it binds, whether it is
/// a glob)`; `use a::{self, B as C}` gives `([a], a)` and `([a, B], C)`.
fn use_paths(tree: &syn::UseTree) -> Vec<(Vec<String>, Option<String>, bool)> {
    fn walk(
        tree: &syn::UseTree,
        prefix: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, Option<String>, bool)>,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident == "self" => {
                out.push((prefix.clone(), prefix.last().cloned(), false));
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                out.push((full, Some(n.ident.to_string()), false));
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                out.push((full, Some(r.rename.to_string()), false));
            }
            syn::UseTree::Glob(_) => out.push((prefix.clone(), None, true)),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let too_long: Vec<String> = sized_files()
        .iter()
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).expect("read").lines().count();
            (lines > MAX_FILE_LINES).then(|| format!("{} ({lines} lines)", shown(p)))
        })
        .collect();
    assert!(
        too_long.is_empty(),
        "files over {MAX_FILE_LINES} lines: {too_long:#?}"
    );
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let mut all = Vec::new();
    for path in sized_files() {
        let (_, file) = parse(&path);
        let mut v = FnLengths {
            file: shown(&path),
            found: Vec::new(),
        };
        v.visit_file(&file);
        all.extend(v.found);
    }
    assert!(
        all.len() > 100,
        "the scan found only {} functions",
        all.len()
    );
    all.sort_by_key(|f| std::cmp::Reverse(f.0));
    let longest: Vec<String> = all
        .iter()
        .take(10)
        .map(|(n, f)| format!("{n:>4} {f}"))
        .collect();
    println!("ten longest functions:\n{}", longest.join("\n"));
    let too_long: Vec<_> = all.iter().filter(|(n, _)| *n > MAX_FN_LINES).collect();
    assert!(
        too_long.is_empty(),
        "functions over {MAX_FN_LINES} lines: {too_long:#?}"
    );
}

/// The module graph, `module → modules it uses`, without self-edges: the
/// file graph ([`files::graph`]) by top-level module (`lib.rs` left out:
/// it declares the modules and may name any of them).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = files::read();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, uses) in files::graph(&files) {
        let Some(top) = file.first().cloned() else {
            continue;
        };
        let edges = graph.entry(top.clone()).or_default();
        let targets = uses.into_iter().filter_map(|u| u.first().cloned());
        edges.extend(targets.filter(|m| *m != top));
    }
    graph
}

/// One cycle of `graph`, if any (depth-first search with colours).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut done, &mut Vec::new()))
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn top_level_modules_form_no_dependency_cycle() {
    let graph = module_graph();
    assert!(graph.contains_key("host"), "module scan found {graph:?}");
    assert!(
        graph.get("host").is_some_and(|e| e.contains("session")),
        "edge host → session not found: {graph:?}"
    );
    for (module, uses) in &graph {
        println!(
            "{module} → {}",
            uses.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let cycle = find_cycle(&graph);
    assert!(
        cycle.is_none(),
        "dependency cycle {:?} in module graph {graph:#?}",
        cycle.unwrap_or_default()
    );
}
