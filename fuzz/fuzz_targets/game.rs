//! libFuzzer entry of the `game` target (`ggpnet_tools::fuzz::game`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet_tools::fuzz::game(data));
