//! libFuzzer entry of the `trace` target (`ggpnet::fuzz::trace`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet::fuzz::trace(data));
