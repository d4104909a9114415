//! Builds, for Linux targets only:
//! - the HID-BPF program `src/bpf/pawl.bpf.c` with clang for the BPF target, and its libbpf-rs
//!   skeleton (`$OUT_DIR/pawl.skel.rs`, libbpf-cargo). Clang: `$PAWL_BPF_CLANG`, else the
//!   first of `clang`, `clang-22` … `clang-14` on `PATH` (Debian 12: `clang-14` or
//!   `clang-22`; `cargo xtask ci` installs one when none is there);
//! - the native C model of the scroll pipeline (`src/bpf/scroll.h` through
//!   `src/bpf/native.c`, with the host's C compiler), which the equality and layout tests
//!   call.

use std::env;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=src/bpf");
    println!("cargo::rerun-if-env-changed=PAWL_BPF_CLANG");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    cc::Build::new()
        .file("src/bpf/native.c")
        .include("src/bpf")
        .warnings(true)
        .extra_warnings(true)
        .compile("pawl_bpf_native");

    let clang = find_clang().unwrap_or_else(|| {
        panic!(
            "pawl-bpf needs clang (for the BPF target) to build its HID-BPF program: install \
             clang-14 or newer (Debian: apt-get install clang-14; `cargo xtask ci` does), or \
             set PAWL_BPF_CLANG"
        )
    });
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap()).join("pawl.skel.rs");
    libbpf_cargo::SkeletonBuilder::new()
        .source("src/bpf/pawl.bpf.c")
        .clang(&clang)
        .clang_args([
            "-Wall",
            "-Wextra",
            "-Wno-unused-parameter",
            "-Werror",
            "-O2",
            "-g",
        ])
        .build_and_generate(&out)
        .unwrap_or_else(|e| {
            panic!(
                "building src/bpf/pawl.bpf.c with {}: {e:#}",
                clang.display()
            )
        });
}

/// `$PAWL_BPF_CLANG`, else the first clang on `PATH` (unversioned first, then newest).
fn find_clang() -> Option<PathBuf> {
    if let Some(c) = env::var_os("PAWL_BPF_CLANG") {
        return Some(PathBuf::from(c));
    }
    let names =
        std::iter::once("clang".to_string()).chain((14..=22).rev().map(|v| format!("clang-{v}")));
    let path = env::var_os("PATH")?;
    for name in names {
        for dir in env::split_paths(&path) {
            let p = dir.join(&name);
            if is_executable(&p) {
                return Some(p);
            }
        }
    }
    None
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
