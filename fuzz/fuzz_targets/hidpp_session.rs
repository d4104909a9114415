#![no_main]
//! See `pawl_fuzz::hidpp`.

libfuzzer_sys::fuzz_target!(|script: pawl_fuzz::hidpp::Script| pawl_fuzz::hidpp::run(&script));
