//! The ways around the other shape rules, refused outright:
//!
//! - source from outside the measured folders: `include!(…)`, and a
//!   `#[path]` that leaves the file's own folder (a sibling file, as
//!   `transport/mod.rs` takes `process_windows.rs`, stays measured);
//! - a second name for a crate root, which hides every path through it
//!   from the graph: `extern crate …`, `use crate as x`, `use super::super
//!   as x`, `use ahp_mcp_host as x` (a module alias such as `use
//!   crate::mcp as m` is fine: the `use` itself is the edge);
//! - `napi` in any manifest but `binding/Cargo.toml`, in any table
//!   (`[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`,
//!   `[target.….dependencies]`), and the binding turning on the core's
//!   `fuzzing` feature (its API is not public).

use std::path::Path;

use syn::visit::Visit;

use super::{checked_files, parse, shown, use_paths};

/// What a file does that the rules refuse (see the module docs).
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
            if let syn::Meta::NameValue(nv) = &a.meta {
                if nv.path.is_ident("path") {
                    let leaves = matches!(&nv.value, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })
                        if s.value().contains(['/', '\\']));
                    if leaves {
                        self.found
                            .push(format!("#[path] out of the folder on mod {}", m.ident));
                    }
                }
            }
        }
        syn::visit::visit_item_mod(self, m);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.is_ident("include") {
            self.found.push("include!(…)".to_owned());
        }
        syn::visit::visit_macro(self, m);
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for (mut path, alias, glob) in use_paths(&u.tree) {
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
        use crate as root;
        use super::super as top;
        use crate::mcp as m;
        fn f() { include!("../y.rs"); }
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
            "use crate as root",
            "use super::super as top",
            "include!(…)",
        ]
    );
}

/// Whether manifest line `line` declares a `napi` crate: a key `napi…`
/// (`napi = …`, `napi-derive = …`, `napi.workspace = …`), a table
/// `[….napi…]`, or `package = "napi…"`.
fn declares_napi(line: &str) -> bool {
    let line = line.trim();
    let key = line.split(['=', ' ', '.']).next().unwrap_or("");
    let header = line.starts_with('[')
        && line
            .trim_matches(['[', ']'])
            .split('.')
            .any(|part| part.trim_matches('"').starts_with("napi"));
    key.starts_with("napi") || header || line.replace(' ', "").contains("package=\"napi")
}

/// The workspace's manifests (relative to the root): every `Cargo.toml`
/// outside `target/` and `node_modules/`.
fn manifests() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules"
            {
                walk(&path, out);
            } else if name == "Cargo.toml" {
                out.push(shown(&path));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(root, &mut out);
    out.sort();
    out
}

#[test]
fn napi_is_a_dependency_of_the_binding_crate_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = manifests();
    assert!(
        found.contains(&"Cargo.toml".to_owned())
            && found.contains(&"binding/Cargo.toml".to_owned()),
        "manifests found: {found:?}"
    );
    let mut wrong = Vec::new();
    for manifest in &found {
        let text = std::fs::read_to_string(root.join(manifest)).expect("read manifest");
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("");
            if manifest != "binding/Cargo.toml" && declares_napi(line) {
                wrong.push(format!("{manifest}:{}: {}", n + 1, line.trim()));
            }
            if manifest == "binding/Cargo.toml" && line.contains("fuzzing") {
                wrong.push(format!("{manifest}:{}: the core's fuzzing API", n + 1));
            }
        }
    }
    let binding = std::fs::read_to_string(root.join("binding/Cargo.toml")).expect("read");
    assert!(
        binding.lines().any(declares_napi),
        "binding/Cargo.toml declares no napi"
    );
    assert!(
        wrong.is_empty(),
        "napi outside the binding crate: {wrong:#?}"
    );
}

#[test]
fn the_manifest_check_sees_each_napi_form() {
    for line in [
        "napi = \"3\"",
        "napi-derive = { version = \"3\" }",
        "napi.workspace = true",
        "[dev-dependencies.napi]",
        "[target.'cfg(unix)'.dependencies.napi-build]",
        "js = { package = \"napi\", version = \"3\" }",
    ] {
        assert!(declares_napi(line), "{line}");
    }
    for line in ["[dependencies]", "serde = \"1\"", "name = \"ahp-mcp-host\""] {
        assert!(!declares_napi(line), "{line}");
    }
}
