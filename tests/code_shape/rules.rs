//! The file-level rules: no dependency circle between the files of one
//! top-level module, the binding crate on the core's public API only, and
//! the layer ranks of `docs/architecture.md` equal to the measured ones.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::visit::Visit;

use super::{files, find_cycle, module_graph, parse, rs_files, shown};

/// `a::b` for a module path (`lib` for the crate root).
fn named(module: &[String]) -> String {
    if module.is_empty() {
        "lib".to_owned()
    } else {
        module.join("::")
    }
}

#[test]
fn no_file_circle_inside_a_top_level_module() {
    let files = files::read();
    let graph = files::graph(&files);
    let mut circles = Vec::new();
    let tops: BTreeSet<String> = graph.keys().filter_map(|m| m.first().cloned()).collect();
    for top in &tops {
        let inside = |m: &Vec<String>| m.first() == Some(top);
        let sub: BTreeMap<String, BTreeSet<String>> = graph
            .iter()
            .filter(|(m, _)| inside(m))
            .map(|(m, uses)| {
                (
                    named(m),
                    uses.iter()
                        .filter(|u| inside(u))
                        .map(|u| named(u))
                        .collect(),
                )
            })
            .collect();
        circles.extend(find_cycle(&sub));
    }
    assert!(
        graph
            .get(&vec!["supervisor".to_owned(), "actor".to_owned()])
            .is_some_and(|e| !e.is_empty()),
        "the file graph found no edge of supervisor::actor: {:?}",
        graph.keys().take(5).collect::<Vec<_>>()
    );
    assert!(circles.is_empty(), "file circles: {circles:#?}");
}

/// The first segment of every `ahp_mcp_host::…` path in `file`.
struct CoreUses(BTreeSet<String>);

impl<'ast> Visit<'ast> for CoreUses {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for (path, _, _) in super::use_paths(&u.tree) {
            if path.first().map(String::as_str) == Some("ahp_mcp_host") {
                self.0.extend(path.get(1).cloned());
            }
        }
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let mut segments = p.segments.iter().map(|s| s.ident.to_string());
        if segments.next().as_deref() == Some("ahp_mcp_host") {
            self.0.extend(segments.next());
        }
        syn::visit::visit_path(self, p);
    }
}

/// What `lib.rs` makes public: `pub mod`s not `#[doc(hidden)]`, and the
/// names of its `pub use`s.
fn public_api() -> BTreeSet<String> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let (_, file) = parse(&lib);
    let hidden = |attrs: &[syn::Attribute]| {
        attrs.iter().any(|a| {
            a.path().is_ident("doc") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "hidden")
        })
    };
    let mut api = BTreeSet::new();
    for item in &file.items {
        match item {
            syn::Item::Mod(m)
                if matches!(m.vis, syn::Visibility::Public(_)) && !hidden(&m.attrs) =>
            {
                api.insert(m.ident.to_string());
            }
            syn::Item::Use(u) if matches!(u.vis, syn::Visibility::Public(_)) => {
                api.extend(
                    super::use_paths(&u.tree)
                        .into_iter()
                        .filter_map(|(_, name, _)| name),
                );
            }
            _ => {}
        }
    }
    api
}

#[test]
fn the_binding_crate_uses_only_the_public_api_of_the_core() {
    let api = public_api();
    assert!(
        api.contains("host") && !api.contains("fuzzing"),
        "public API: {api:?}"
    );
    let mut outside = Vec::new();
    let mut used = BTreeSet::new();
    for path in rs_files("binding/src") {
        let (_, file) = parse(&path);
        let mut uses = CoreUses(BTreeSet::new());
        uses.visit_file(&file);
        for name in uses.0 {
            if !api.contains(&name) {
                outside.push(format!("{}: ahp_mcp_host::{name}", shown(&path)));
            }
            used.insert(name);
        }
    }
    assert!(
        used.contains("host"),
        "no use of the core found in binding/src: {used:?}"
    );
    assert!(
        outside.is_empty(),
        "the binding reaches past the public API: {outside:#?}"
    );
}

/// Each module's rank: 0 for one that uses no other module, else one more
/// than the highest rank of those it uses (the graph is acyclic: another
/// test checks it).
fn ranks(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, usize> {
    fn rank(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        memo: &mut BTreeMap<String, usize>,
        depth: usize,
    ) -> usize {
        if let Some(&r) = memo.get(m) {
            return r;
        }
        let uses = graph.get(m).into_iter().flatten();
        let r = match depth > graph.len() {
            true => 0, // a cycle: reported by the cycle test
            false => uses
                .map(|u| rank(u, graph, memo, depth + 1) + 1)
                .max()
                .unwrap_or(0),
        };
        memo.insert(m.to_owned(), r);
        r
    }
    let mut memo = BTreeMap::new();
    for m in graph.keys() {
        rank(m, graph, &mut memo, 0);
    }
    memo
}

/// The ```` ```layers ```` block of `docs/architecture.md`: `rank: modules`.
fn documented_layers() -> Vec<String> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("read docs/architecture.md");
    let start = doc
        .find("```layers\n")
        .expect("docs/architecture.md has a ```layers block")
        + 10;
    let end = start + doc[start..].find("```").expect("the layers block ends");
    doc[start..end]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_documented_layers_are_the_measured_ones() {
    let ranks = ranks(&module_graph());
    let mut by_rank: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (module, rank) in &ranks {
        by_rank.entry(*rank).or_default().push(module);
    }
    let measured: Vec<String> = by_rank
        .iter()
        .rev()
        .map(|(rank, modules)| format!("{rank}: {}", modules.join(" ")))
        .collect();
    assert_eq!(
        documented_layers(),
        measured,
        "the ```layers block of docs/architecture.md is not the measured graph; measured:\n{}",
        measured.join("\n")
    );
}
