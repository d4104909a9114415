#![no_main]
//! See `pawl_fuzz::config`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pawl_fuzz::config::run(data));
