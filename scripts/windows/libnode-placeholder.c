/*
 * A placeholder libnode.dll for napi-rs's build script on windows-gnu
 * (napi-build panics unless it finds a libnode.dll in LIBNODE_PATH, LIBPATH
 * or PATH). The addon links nothing from it: with napi-sys's default
 * `dyn-symbols` feature every Node-API function is resolved from the host
 * process when the addon loads, so the built .node file's import table names
 * only system DLLs. Built by scripts/build-windows.js with the mingw-w64
 * compiler; never shipped.
 */
__declspec(dllexport) int ahp_libnode_placeholder(void) { return 0; }
