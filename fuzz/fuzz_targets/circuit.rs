//! libFuzzer entry of the `circuit` target (`ggpnet_tools::fuzz::circuit`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet_tools::fuzz::circuit(data));
