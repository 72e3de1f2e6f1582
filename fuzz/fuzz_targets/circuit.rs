//! libFuzzer entry of the `circuit` target (`ggpnet::fuzz::circuit`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet::fuzz::circuit(data));
