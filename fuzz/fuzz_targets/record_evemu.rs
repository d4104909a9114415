#![no_main]
//! See `pawl_fuzz::recording`.

use pawl_fuzz::recording::{Format, run};

libfuzzer_sys::fuzz_target!(|data: &[u8]| run(Format::Evemu, data));
