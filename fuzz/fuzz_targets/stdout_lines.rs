#![no_main]
//! `cargo fuzz run stdout_lines`: see `ahp_mcp_host::fuzzing::stdout_lines`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ahp_mcp_host::fuzzing::stdout_lines(data));
