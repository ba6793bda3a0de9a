//! Build script of the addon: the link settings napi-rs needs
//! (`napi_build::setup`). The code layout of the PGO release build
//! (scripts/link-layout.js, the linker then) is read from the file
//! `AHP_LINK_LAYOUT_FUNCTIONS` names: a change to it links the addon again.

fn main() {
    napi_build::setup();
    println!("cargo:rerun-if-env-changed=AHP_LINK_LAYOUT_FUNCTIONS");
    if let Ok(list) = std::env::var("AHP_LINK_LAYOUT_FUNCTIONS") {
        println!("cargo:rerun-if-changed={list}");
    }
}
