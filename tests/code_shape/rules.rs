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

/// Every `ahp_mcp_host::…` path in a file, without the crate's name: in
/// `use`s, in code and in macro arguments (`format!(…)`), and the paths
/// through a name the file imported from the core (`use
/// ahp_mcp_host::host;` then `host::x`).
struct CoreUses(BTreeSet<Vec<String>>, BTreeMap<String, Vec<String>>);

impl CoreUses {
    /// A file's core paths (two passes: its imports, then its paths).
    fn of(file: &syn::File) -> BTreeSet<Vec<String>> {
        let mut imports = BTreeMap::new();
        for item in &file.items {
            if let syn::Item::Use(u) = item {
                for (path, alias, glob) in super::use_paths(&u.tree) {
                    if let (Some(alias), false) = (alias, glob) {
                        if path.first().map(String::as_str) == Some("ahp_mcp_host") {
                            imports.insert(alias, path[1..].to_vec());
                        }
                    }
                }
            }
        }
        let mut uses = CoreUses(BTreeSet::new(), imports);
        uses.visit_file(file);
        uses.0
    }

    fn add(&mut self, path: &[String]) {
        let Some(first) = path.first() else {
            return;
        };
        if first == "ahp_mcp_host" && path.len() > 1 {
            self.0.insert(path[1..].to_vec());
        } else if let Some(imported) = self.1.get(first).filter(|i| !i.is_empty()) {
            let mut full = imported.clone();
            full.extend(path[1..].iter().cloned());
            self.0.insert(full);
        }
    }
}

impl<'ast> Visit<'ast> for CoreUses {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for (path, _, _) in super::use_paths(&u.tree) {
            self.add(&path);
        }
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.add(&segments);
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        for path in files::token_paths(m.tokens.clone()) {
            self.add(&path);
        }
        syn::visit::visit_macro(self, m);
    }
}

/// Whether `attrs` hold `#[doc(hidden)]`.
fn hidden(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "hidden")
    })
}

/// The absolute paths of the core's `#[doc(hidden)]` items (top-level
/// items of its files and of their inline modules, `pub use`s included):
/// public to the compiler, not part of the API.
fn hidden_items() -> BTreeSet<Vec<String>> {
    fn walk(module: &[String], items: &[syn::Item], out: &mut BTreeSet<Vec<String>>) {
        for item in items {
            let (attrs, names): (&[syn::Attribute], Vec<String>) = match item {
                syn::Item::Fn(i) => (&i.attrs, vec![i.sig.ident.to_string()]),
                syn::Item::Struct(i) => (&i.attrs, vec![i.ident.to_string()]),
                syn::Item::Enum(i) => (&i.attrs, vec![i.ident.to_string()]),
                syn::Item::Const(i) => (&i.attrs, vec![i.ident.to_string()]),
                syn::Item::Static(i) => (&i.attrs, vec![i.ident.to_string()]),
                syn::Item::Type(i) => (&i.attrs, vec![i.ident.to_string()]),
                syn::Item::Trait(i) => (&i.attrs, vec![i.ident.to_string()]),
                syn::Item::Mod(i) => {
                    if let Some((_, inner)) = &i.content {
                        let mut inside = module.to_vec();
                        inside.push(i.ident.to_string());
                        walk(&inside, inner, out);
                    }
                    (&i.attrs, vec![i.ident.to_string()])
                }
                syn::Item::Use(u) => (
                    &u.attrs,
                    super::use_paths(&u.tree)
                        .into_iter()
                        .filter_map(|(_, n, _)| n)
                        .collect(),
                ),
                _ => continue,
            };
            if hidden(attrs) {
                for name in names {
                    let mut path = module.to_vec();
                    path.push(name);
                    out.insert(path);
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    for path in super::src_files() {
        let (_, file) = parse(&path);
        walk(&super::module_path(&path), &file.items, &mut out);
    }
    out
}

/// What `lib.rs` makes public: `pub mod`s not `#[doc(hidden)]`, and the
/// names of its `pub use`s.
fn public_api() -> BTreeSet<String> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let (_, file) = parse(&lib);
    let mut api = BTreeSet::new();
    for item in &file.items {
        match item {
            syn::Item::Mod(m)
                if matches!(m.vis, syn::Visibility::Public(_)) && !hidden(&m.attrs) =>
            {
                api.insert(m.ident.to_string());
            }
            syn::Item::Use(u)
                if matches!(u.vis, syn::Visibility::Public(_)) && !hidden(&u.attrs) =>
            {
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
    let hidden = hidden_items();
    let mut outside = Vec::new();
    let mut used = BTreeSet::new();
    for path in rs_files("binding/src") {
        let (_, file) = parse(&path);
        for core_path in CoreUses::of(&file) {
            let name = core_path[0].clone();
            let is_hidden = (1..=core_path.len()).any(|n| hidden.contains(&core_path[..n]));
            if !api.contains(&name) || is_hidden {
                let shown_path = core_path.join("::");
                outside.push(format!("{}: ahp_mcp_host::{shown_path}", shown(&path)));
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
    assert_eq!(
        doc.matches("```layers\n").count(),
        1,
        "docs/architecture.md must have exactly one ```layers block"
    );
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
