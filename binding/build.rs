//! Build script of the addon: the link settings napi-rs needs
//! (`napi_build::setup`).

fn main() {
    napi_build::setup();
}
