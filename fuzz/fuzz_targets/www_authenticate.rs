#![no_main]
//! `cargo fuzz run www_authenticate`: see `ahp_mcp_host::fuzzing::www_authenticate`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ahp_mcp_host::fuzzing::www_authenticate(data));
