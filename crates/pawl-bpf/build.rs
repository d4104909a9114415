//! Builds, for Linux targets only: the native C model of the scroll pipeline
//! (`src/bpf/scroll.h` through `src/bpf/scroll_native.c`, with the host's C compiler), which
//! the equality tests call.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=src/bpf");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    cc::Build::new()
        .file("src/bpf/scroll_native.c")
        .include("src/bpf")
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Wconversion")
        .flag_if_supported("-Wno-sign-conversion")
        .compile("pawl_scroll_native");
}
