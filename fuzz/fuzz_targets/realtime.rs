//! libFuzzer entry of the `realtime` target (`ggpnet::fuzz::realtime`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet::fuzz::realtime(data));
