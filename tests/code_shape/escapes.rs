//! The ways around the other shape rules, refused outright:
//!
//! - source from outside the measured folders or in another module's
//!   place: `include!` (by any path or name), a `#[path]` that leaves the
//!   file's own folder or names a `lib.rs`/`mod.rs`, any `path` in a
//!   `cfg_attr` (a sibling file, as `transport/mod.rs` takes
//!   `process_windows.rs`, stays allowed); a glob import of the core's
//!   root (`use ahp_mcp_host::*`) in the binding;
//! - a second name for a crate root, which hides every path through it
//!   from the graph: `extern crate …`, `use crate as x`, `use super::super
//!   as x`, `use ahp_mcp_host as x` (a module alias such as `use
//!   crate::mcp as m` is fine: the `use` itself is the edge);
//! - `napi` depended on by any package but the binding crate, as cargo
//!   reads the manifests (`cargo metadata`: any table, spelling, rename or
//!   workspace inheritance), and the binding turning on the core's
//!   `fuzzing` feature (its API is not public) by any feature path.

use std::path::Path;

use syn::visit::Visit;

use super::{checked_files, parse, shown, use_paths};

/// What a file does that the rules refuse (see the module docs).
/// What is wrong with attribute `a` of a `mod`, if anything: a `#[path]`
/// out of the file's folder or onto a `lib.rs`/`mod.rs` (which would take
/// another module's place in the graph), or any `path` inside `cfg_attr`.
fn path_attribute_fault(a: &syn::Attribute) -> Option<&'static str> {
    if a.path().is_ident("cfg_attr") {
        let tokens = match &a.meta {
            syn::Meta::List(list) => super::files::token_paths(list.tokens.clone()),
            _ => Vec::new(),
        };
        return tokens
            .iter()
            .any(|p| p == &["path"])
            .then_some("#[cfg_attr(…, path = …)]");
    }
    let syn::Meta::NameValue(nv) = &a.meta else {
        return None;
    };
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(value),
        ..
    }) = &nv.value
    else {
        return None;
    };
    let value = value.value();
    if !nv.path.is_ident("path") {
        None
    } else if value.contains(['/', '\\']) {
        Some("#[path] out of the folder")
    } else if value == "lib.rs" || value == "mod.rs" {
        Some("#[path] onto a lib.rs or mod.rs")
    } else {
        None
    }
}

#[derive(Default)]
struct Escapes {
    found: Vec<String>,
}

/// The names that stand for a crate root in a `use`.
const ROOTS: [&str; 4] = ["crate", "self", "super", "ahp_mcp_host"];

impl<'ast> Visit<'ast> for Escapes {
    fn visit_item_extern_crate(&mut self, e: &'ast syn::ItemExternCrate) {
        self.found.push(format!("extern crate {}", e.ident));
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        for a in &m.attrs {
            if let Some(why) = path_attribute_fault(a) {
                self.found.push(format!("{why} on mod {}", m.ident));
            }
        }
        syn::visit::visit_item_mod(self, m);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.segments.last().is_some_and(|s| s.ident == "include") {
            self.found.push("include!(…)".to_owned());
        }
        syn::visit::visit_macro(self, m);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for (mut path, alias, glob) in use_paths(&u.tree) {
            if path.last().is_some_and(|l| l == "include") {
                self.found.push(format!("use {}", path.join("::")));
            }
            if glob && path == ["ahp_mcp_host"] {
                self.found.push("use ahp_mcp_host::*".to_owned());
            }
            let Some(alias) = alias.filter(|_| !glob) else {
                continue;
            };
            // `use a::{self as b}` renames `a`.
            if path.last().is_some_and(|l| l == "self") && path.len() > 1 {
                path.pop();
            }
            let last = path.last().map_or("", String::as_str);
            if alias != last && ROOTS.contains(&last) {
                self.found
                    .push(format!("use {} as {alias}", path.join("::")));
            }
        }
        syn::visit::visit_item_use(self, u);
    }
}

#[test]
fn no_source_escapes_the_shape_checks() {
    let mut found = Vec::new();
    for path in checked_files() {
        let (_, file) = parse(&path);
        let mut v = Escapes::default();
        v.visit_file(&file);
        found.extend(
            v.found
                .into_iter()
                .map(|f| format!("{}: {f}", shown(&path))),
        );
    }
    assert!(
        found.is_empty(),
        "refused (tests/code_shape/escapes.rs): {found:#?}"
    );
}

#[test]
fn the_escape_check_sees_each_escape() {
    let file = syn::parse_file(
        r#"
        extern crate alloc as a;
        #[path = "../x.rs"] mod x;
        #[path = "sibling.rs"] mod y;
        #[path = "mod.rs"] mod z;
        #[cfg_attr(unix, path = "w.rs")] mod w;
        use crate as root;
        use super::super as top;
        use crate::mcp as m;
        fn f() { include!("../y.rs"); core::include!("../z.rs"); }
        use std::include as inc;
        use ahp_mcp_host::*;
        "#,
    )
    .unwrap();
    let mut v = Escapes::default();
    v.visit_file(&file);
    assert_eq!(
        v.found,
        [
            "extern crate alloc",
            "#[path] out of the folder on mod x",
            "#[path] onto a lib.rs or mod.rs on mod z",
            "#[cfg_attr(…, path = …)] on mod w",
            "use crate as root",
            "use super::super as top",
            "include!(…)",
            "include!(…)",
            "use std::include",
            "use ahp_mcp_host::*",
        ]
    );
}

/// `cargo metadata --no-deps` of the manifest `manifest` (relative to the
/// root): the packages as cargo resolved their manifests, whatever the
/// TOML spelling (quotes, renames, workspace inheritance, any table).
fn metadata(manifest: &str) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(root.join(manifest))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata {manifest}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata JSON")
}

/// What the packages of `meta` break: a `napi…` package depended on (any
/// kind, any target, renamed or not) by a package other than the binding,
/// and the binding's dependency on the core reaching its `fuzzing` feature
/// (directly, through another feature, or through `default`).
fn manifest_faults(meta: &serde_json::Value) -> Vec<String> {
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let core_features = packages
        .iter()
        .find(|p| p["name"] == "ahp-mcp-host")
        .map(|p| p["features"].clone());
    let mut faults = Vec::new();
    for package in &packages {
        let name = package["name"].as_str().unwrap_or("?");
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or("");
            if dep_name.starts_with("napi") && name != "ahp-mcp-host-napi" {
                faults.push(format!("{name} depends on {dep_name}"));
            }
            if dep_name == "ahp-mcp-host" && name == "ahp-mcp-host-napi" {
                let mut todo: Vec<String> = (dep["features"].as_array().into_iter().flatten())
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect();
                if dep["uses_default_features"] != false {
                    todo.push("default".to_owned());
                }
                let mut seen = std::collections::BTreeSet::new();
                while let Some(f) = todo.pop() {
                    if seen.insert(f.clone()) {
                        let next = core_features
                            .as_ref()
                            .and_then(|c| c[&f].as_array().cloned());
                        todo.extend(
                            next.into_iter()
                                .flatten()
                                .filter_map(|v| v.as_str().map(str::to_owned)),
                        );
                    }
                }
                if seen.contains("fuzzing") {
                    faults.push(format!("{name} turns on the core's fuzzing feature"));
                }
            }
        }
    }
    faults
}

#[test]
fn napi_is_a_dependency_of_the_binding_crate_only() {
    let workspace = metadata("Cargo.toml");
    let names: Vec<&str> = (workspace["packages"].as_array().into_iter().flatten())
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        names.contains(&"ahp-mcp-host") && names.contains(&"ahp-mcp-host-napi"),
        "workspace packages: {names:?}"
    );
    let binding_has_napi = (workspace["packages"].as_array().into_iter().flatten())
        .filter(|p| p["name"] == "ahp-mcp-host-napi")
        .flat_map(|p| p["dependencies"].as_array().cloned().unwrap_or_default())
        .any(|d| d["name"] == "napi");
    assert!(binding_has_napi, "the binding crate declares no napi");
    let mut faults = manifest_faults(&workspace);
    // The fuzz crate is a workspace of its own (fuzz/Cargo.toml).
    faults.extend(manifest_faults(&metadata("fuzz/Cargo.toml")));
    assert!(faults.is_empty(), "manifests: {faults:#?}");
}

#[test]
fn the_manifest_check_sees_each_fault() {
    let meta = serde_json::json!({"packages": [
        {"name": "ahp-mcp-host", "features": {"fuzzing": [], "internals": ["fuzzing"], "default": []},
         "dependencies": [{"name": "napi-derive", "features": []}]},
        {"name": "ahp-mcp-host-napi", "features": {},
         "dependencies": [{"name": "ahp-mcp-host", "features": ["internals"], "uses_default_features": true},
                          {"name": "napi", "features": []}]},
        {"name": "ahp-reducers-json", "features": {},
         "dependencies": [{"name": "napi-build", "rename": "js", "kind": "build", "features": []}]},
    ]});
    assert_eq!(
        manifest_faults(&meta),
        [
            "ahp-mcp-host depends on napi-derive",
            "ahp-mcp-host-napi turns on the core's fuzzing feature",
            "ahp-reducers-json depends on napi-build",
        ]
    );
}
