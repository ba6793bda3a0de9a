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
    /// `pub use` names → the absolute path they re-export.
    named: BTreeMap<String, Vec<String>>,
    /// `pub use m::*` → the absolute module path `m`.
    globs: Vec<Vec<String>>,
    /// Every path it uses outside tests, absolute.
    pub uses: Vec<Vec<String>>,
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
        "self" => rest = &rest[1..],
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
        };
        refs.visit_file(&file);
        items.uses = refs.found;
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
        syn::Item::Mod(i) if i.content.is_some() => Some(i.ident.to_string()),
        syn::Item::Macro(i) => i.ident.as_ref().map(ToString::to_string),
        syn::Item::Use(u) if !matches!(u.vis, syn::Visibility::Inherited) => {
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
}

impl Paths<'_> {
    fn add(&mut self, segments: &[String]) {
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
        let glob = items.globs.iter().find(|g| {
            files
                .get(*g)
                .is_some_and(|f| f.defined.contains(name) || f.named.contains_key(name))
        });
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

/// `file → files it uses`, each edge resolved by [`defining_file`], self
/// edges left out, and so are the edges of a module's root file to its own
/// submodules' files: the root declares them and may use them, the way a
/// submodule uses what its root defines (what the rule forbids is any
/// other circle: between siblings, or through a file outside the subtree).
pub fn graph(files: &Files) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph = BTreeMap::new();
    for (module, items) in files {
        let edges: BTreeSet<Vec<String>> = items
            .uses
            .iter()
            .filter_map(|p| defining_file(files, p))
            .filter(|target| target != module && !target.starts_with(module))
            .collect();
        graph.insert(module.clone(), edges);
    }
    graph
}
