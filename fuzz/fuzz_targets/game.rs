//! libFuzzer entry of the `game` target (`ggpnet::fuzz::game`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet::fuzz::game(data));
