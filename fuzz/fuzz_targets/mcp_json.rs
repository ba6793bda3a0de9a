#![no_main]
//! `cargo fuzz run mcp_json`: see `ahp_mcp_host::fuzzing::mcp_json`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ahp_mcp_host::fuzzing::mcp_json(data));
