#![no_main]
//! See `pawl_fuzz::descriptor`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pawl_fuzz::descriptor::run(data));
