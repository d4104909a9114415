#![no_main]
//! See `pawl_fuzz::pipeline`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pawl_fuzz::pipeline::run(data));
