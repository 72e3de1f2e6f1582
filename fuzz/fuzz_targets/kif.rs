//! libFuzzer entry of the `kif` target (`ggpnet::fuzz::kif`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet::fuzz::kif(data));
