#![no_main]
//! `cargo fuzz run tools_list`: see `ahp_mcp_host::fuzzing::tools_list`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ahp_mcp_host::fuzzing::tools_list(data));
