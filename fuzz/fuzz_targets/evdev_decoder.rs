#![no_main]
//! See `pawl_fuzz::decoder`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pawl_fuzz::decoder::run(data));
