//! libFuzzer entry of the `realtime` target (`ggpnet_tools::fuzz::realtime`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ggpnet_tools::fuzz::realtime(data));
