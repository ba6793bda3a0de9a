//! The file-level dependency graph of `src/`: which file uses which.
//!
//! Every `crate::…`, `super::…`, `self::…` or child-module path outside
//! `#[cfg(test)]` items is resolved to the file that defines the item it
//! names: the longest module prefix that is a file, then, when the next
//! segment is not an item of that file, through the file's re-exports
//! (`pub use a::B`, `pub use a::*`) to where the item lives. So a path
//! through a re-export is an edge to the defining file, never to the file
//! that only re-exports it, and a `pub use` itself is no edge of the file
//! holding it.

use std::collections::{BTreeMap, BTreeSet};
use syn::visit::Visit;

use super::{is_cfg_test, module_path, parse, src_files, use_paths};

/// Module path → what that file holds.
pub type Files = BTreeMap<Vec<String>, FileItems>;

/// What one file defines and re-exports.
#[derive(Default)]
pub struct FileItems {
    /// Names of its top-level items (and inline modules).
    defined: BTreeSet<String>,
    /// `use` names (re-exports and private imports) → the absolute path
    /// they stand for.
    named: BTreeMap<String, Vec<String>>,
    /// `use m::*` (public or not) → the absolute module path `m`.
    globs: Vec<Vec<String>>,
    /// Every path it uses outside tests, absolute.
    pub uses: Vec<Vec<String>>,
    /// The first segments of the relative paths it uses outside tests
    /// (`Phase` of `Phase::new()`): those that a `use` of the file brings
    /// in (a re-export it also uses itself, a name of a glob import) are
    /// edges too ([`graph`]).
    bare: BTreeSet<String>,
}

/// `segments` as an absolute module path, seen from module `here`; `None`
/// for an extern crate's path (or `Self::`).
fn absolute(
    here: &[String],
    segments: &[String],
    files: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut base = here.to_vec();
    let mut rest = segments;
    match rest.first().map(String::as_str)? {
        "crate" => {
            base.clear();
            rest = &rest[1..];
        }
        "super" => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        "self" => {
            rest = &rest[1..];
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        // A one-segment path (a local, a field) names no child module.
        _ if rest.len() < 2 => return None,
        first => {
            let mut child = base.clone();
            child.push(first.to_owned());
            if !files.iter().any(|f| f.starts_with(&child)) {
                return None;
            }
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Reads every file of `src/`.
pub fn read() -> Files {
    let paths = src_files();
    let modules: BTreeSet<Vec<String>> = paths.iter().map(|p| module_path(p)).collect();
    let mut files = Files::new();
    for path in paths {
        let here = module_path(&path);
        let (_, file) = parse(&path);
        let mut items = FileItems::default();
        for item in &file.items {
            collect(&here, item, &modules, &mut items);
        }
        let mut refs = Paths {
            here: &here,
            modules: &modules,
            inline: Vec::new(),
            found: Vec::new(),
            bare: BTreeSet::new(),
        };
        refs.visit_file(&file);
        items.uses = refs.found;
        items.bare = refs.bare;
        files.insert(here, items);
    }
    files
}

/// Records what top-level `item` defines or re-exports.
fn collect(
    here: &[String],
    item: &syn::Item,
    modules: &BTreeSet<Vec<String>>,
    out: &mut FileItems,
) {
    let name = match item {
        syn::Item::Fn(i) => Some(i.sig.ident.to_string()),
        syn::Item::Struct(i) => Some(i.ident.to_string()),
        syn::Item::Enum(i) => Some(i.ident.to_string()),
        syn::Item::Const(i) => Some(i.ident.to_string()),
        syn::Item::Static(i) => Some(i.ident.to_string()),
        syn::Item::Type(i) => Some(i.ident.to_string()),
        syn::Item::Trait(i) => Some(i.ident.to_string()),
        // Inline or not: `use crate::*` then `supervisor::…` names it.
        syn::Item::Mod(i) => Some(i.ident.to_string()),
        syn::Item::Macro(i) => i.ident.as_ref().map(ToString::to_string),
        // Every `use`, private ones too: a private `use` in a module is
        // visible to its descendants (`crate::X` through a `use` in lib.rs).
        syn::Item::Use(u) if !is_cfg_test(&u.attrs) => {
            for (path, alias, glob) in use_paths(&u.tree) {
                let Some(target) = absolute(here, &path, modules) else {
                    continue;
                };
                match (glob, alias) {
                    (true, _) => out.globs.push(target),
                    (false, Some(alias)) => {
                        out.named.insert(alias, target);
                    }
                    (false, None) => {}
                }
            }
            None
        }
        _ => None,
    };
    out.defined.extend(name);
}

/// The absolute paths a file uses, outside `#[cfg(test)]` items.
struct Paths<'a> {
    here: &'a [String],
    modules: &'a BTreeSet<Vec<String>>,
    inline: Vec<String>,
    found: Vec<Vec<String>>,
    bare: BTreeSet<String>,
}

impl Paths<'_> {
    fn add(&mut self, segments: &[String]) {
        // A name a `use` of this file brought in (`Phase`, `Phase::new`).
        if let Some(first) = segments.first() {
            if !matches!(first.as_str(), "crate" | "super" | "self") {
                self.bare.insert(first.clone());
            }
        }
        let here: Vec<String> = self.here.iter().chain(&self.inline).cloned().collect();
        if let Some(path) = absolute(&here, segments, self.modules) {
            self.found.push(path);
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_cfg_test(&m.attrs) {
            return;
        }
        self.inline.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.inline.pop();
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_cfg_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A re-export routes a name; it is not a use of it (who names it
        // through the re-export gets the edge to the defining file).
        if is_cfg_test(&u.attrs) || !matches!(u.vis, syn::Visibility::Inherited) {
            return;
        }
        for (path, _, _) in use_paths(&u.tree) {
            self.add(&path);
        }
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.add(&segments);
        syn::visit::visit_path(self, p);
    }
    // Macro arguments (`format!(…)`, `matches!(…)`, item macros) are tokens
    // to syn: the paths in them are read from the tokens.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        for path in token_paths(m.tokens.clone()) {
            self.add(&path);
        }
        syn::visit::visit_macro(self, m);
    }
    // A path in an attribute's string (`#[serde(with = "crate::a::b")]`).
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        for path in attribute_string_paths(a) {
            self.add(&path);
        }
    }
}

/// The paths (`a::b::c`, at least one `::`, and one-segment names) written
/// in `tokens`, groups included.
pub fn token_paths(tokens: proc_macro2::TokenStream) -> Vec<Vec<String>> {
    use proc_macro2::{Spacing, TokenTree};
    let mut out = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    let mut colons = 0;
    let flush = |cur: &mut Vec<String>, out: &mut Vec<Vec<String>>| {
        if !cur.is_empty() {
            out.push(std::mem::take(cur));
        }
    };
    for tree in tokens {
        match tree {
            TokenTree::Ident(i) => {
                if colons != 2 {
                    flush(&mut cur, &mut out);
                }
                cur.push(i.to_string());
                colons = 0;
            }
            TokenTree::Punct(p) if p.as_char() == ':' && !cur.is_empty() => {
                colons = match (colons, p.spacing()) {
                    (0, Spacing::Joint) => 1,
                    (1, _) => 2,
                    _ => {
                        flush(&mut cur, &mut out);
                        0
                    }
                };
            }
            TokenTree::Group(g) => {
                flush(&mut cur, &mut out);
                colons = 0;
                out.extend(token_paths(g.stream()));
            }
            _ => {
                flush(&mut cur, &mut out);
                colons = 0;
            }
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// The paths written as string literals in attribute `a` (`"crate::…"`,
/// `"super::…"`, `"self::…"`).
fn attribute_string_paths(a: &syn::Attribute) -> Vec<Vec<String>> {
    fn strings(tokens: proc_macro2::TokenStream, out: &mut Vec<String>) {
        for tree in tokens {
            match tree {
                proc_macro2::TokenTree::Literal(l) => {
                    if let syn::Lit::Str(s) = syn::Lit::new(l) {
                        out.push(s.value());
                    }
                }
                proc_macro2::TokenTree::Group(g) => strings(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    match &a.meta {
        syn::Meta::List(list) => strings(list.tokens.clone(), &mut found),
        syn::Meta::NameValue(nv) => {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                found.push(s.value());
            }
        }
        syn::Meta::Path(_) => {}
    }
    found
        .iter()
        .filter(|s| {
            ["crate::", "super::", "self::"]
                .iter()
                .any(|p| s.starts_with(p))
        })
        .filter_map(|s| syn::parse_str::<syn::Path>(s).ok())
        .map(|p| p.segments.iter().map(|s| s.ident.to_string()).collect())
        .collect()
}

/// The file that defines what absolute `path` names (following re-exports,
/// at most 8 hops); `None` outside `src/`.
pub fn defining_file(files: &Files, path: &[String]) -> Option<Vec<String>> {
    let mut path = path.to_vec();
    for _ in 0..8 {
        let module = (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| files.contains_key(m))?;
        let Some(name) = path.get(module.len()) else {
            return Some(module);
        };
        let items = &files[&module];
        if items.defined.contains(name) {
            return Some(module);
        }
        if let Some(target) = items.named.get(name) {
            let mut next = target.clone();
            next.extend(path[module.len() + 1..].iter().cloned());
            path = next;
            continue;
        }
        let glob = items.globs.iter().find(|g| provides(files, g, name, 8));
        match glob {
            Some(g) => {
                let mut next = g.clone();
                next.extend(path[module.len()..].iter().cloned());
                path = next;
            }
            None => return Some(module),
        }
    }
    None
}

/// Whether module `module` defines `name` or brings it in through a `use`
/// (globs followed at most `depth` deep).
fn provides(files: &Files, module: &[String], name: &str, depth: usize) -> bool {
    let Some(f) = files.get(module) else {
        return false;
    };
    f.defined.contains(name)
        || f.named.contains_key(name)
        || (depth > 0 && f.globs.iter().any(|g| provides(files, g, name, depth - 1)))
}

/// The absolute paths that the one-segment names a file uses stand for,
/// through its own `use`s: a re-export it uses itself, a glob import.
fn bare_uses(files: &Files, items: &FileItems) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for name in &items.bare {
        if let Some(target) = items.named.get(name) {
            out.push(target.clone());
        } else if let Some(g) = items.globs.iter().find(|g| provides(files, g, name, 8)) {
            let mut path = g.clone();
            path.push(name.clone());
            out.push(path);
        }
    }
    out
}

/// `file → files it uses`, each edge resolved by [`defining_file`], self
/// edges left out, and so are the edges of a module's root file to its own
/// submodules' files: the root declares them and may use them, the way a
/// submodule uses what its root defines (what the rule forbids is any
/// other circle: between siblings, or through a file outside the subtree).
pub fn graph(files: &Files) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph = BTreeMap::new();
    for (module, items) in files {
        let bare = bare_uses(files, items);
        let edges: BTreeSet<Vec<String>> = (items.uses.iter().chain(&bare))
            .filter_map(|p| defining_file(files, p))
            .filter(|target| target != module && !target.starts_with(module))
            .collect();
        graph.insert(module.clone(), edges);
    }
    graph
}
