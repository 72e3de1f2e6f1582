//! libFuzzer entry of the `trace` target (`ggpnet_tools::fuzz::trace`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet_tools::fuzz::trace(data));
