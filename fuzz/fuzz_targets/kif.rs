//! libFuzzer entry of the `kif` target (`ggpnet_tools::fuzz::kif`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet_tools::fuzz::kif(data));
