#![no_main]
//! `cargo fuzz run sse_response`: see `ahp_mcp_host::fuzzing::sse_response`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ahp_mcp_host::fuzzing::sse_response(data));
