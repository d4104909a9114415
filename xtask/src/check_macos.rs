//! `cargo xtask check-macos`: type-checks, lints and links the macOS build of pawl on a Linux
//! host, and checks every framework symbol it imports against a reviewed list.
//!
//! No macOS SDK is needed to type-check: Debian's `rustc-web` toolchain (rustc at
//! `/usr/bin/rustc`) ships the standard library sources (`rust-web-src`), so cargo can build
//! `std` for an Apple target with `-Zbuild-std` (allowed on a stable compiler by
//! `RUSTC_BOOTSTRAP=1`). The link ([`crate::macos_link`]) uses LLVM's Mach-O linker and a
//! fake SDK made here. Nothing runs: this proves the macOS code compiles against Apple's
//! generated bindings (`objc2-*`), is clippy-clean, links into a Mach-O for each target,
//! and imports no framework symbol newer than its deployment target — not that it works
//! on a Mac.

use std::process::Command;

use crate::{macos_link, util};

/// The Debian packages that provide the toolchain: rustc and cargo with the std sources,
/// and clippy built for the same compiler.
const PACKAGES: &[&str] = &["rustc-web", "cargo-web", "rust-web-src", "rust-web-clippy"];

/// Debian's compiler and cargo (not rustup's: build-std needs the std sources of the
/// compiler that builds them).
const RUSTC: &str = "/usr/bin/rustc";
const CARGO: &str = "/usr/bin/cargo";

/// Both Apple targets pawl supports.
const TARGETS: &[&str] = &["aarch64-apple-darwin", "x86_64-apple-darwin"];

/// The workspace crates that build on macOS (`pawl-linux` is a Linux-only dependency of
/// `pawl`; `xtask` is host-only).
const PACKAGES_ON_MACOS: &[&str] = &["pawl", "pawl-engine", "pawl-evdev", "pawl-macos"];

/// Separate from the host's `target/` so the host build stays warm.
const TARGET_DIR: &str = "target/macos-check";

/// The target clippy lints. pawl has no `target_arch` code, so the two Apple targets see
/// the same source; the x86_64 link still compiles (and so type-checks) everything for its
/// own target.
const CLIPPY_TARGET: &str = "aarch64-apple-darwin";

/// Runs clippy (which type-checks every target: lib, bin, tests) with `-D warnings` for
/// [`CLIPPY_TARGET`], then links `pawl` for each Apple target and checks its framework
/// imports. `--link-only` skips clippy (while working on the link or the symbol list).
pub fn check_macos(args: &[String]) -> anyhow::Result<()> {
    util::project_root()?;
    util::ensure_debian_packages(PACKAGES)?;
    util::ensure_debian_packages(macos_link::PACKAGES)?;
    let link_only = args.iter().any(|a| a == "--link-only");
    if !link_only {
        let target = CLIPPY_TARGET;
        util::step(&format!("clippy --target {target}"), || {
            let mut cmd = debian_cargo();
            cmd.args(["clippy", "--quiet", "--all-targets", "--locked"]);
            cmd.args(["-Zbuild-std=std,panic_abort", "--target", target]);
            cmd.args(["--target-dir", TARGET_DIR]);
            for p in PACKAGES_ON_MACOS {
                cmd.args(["-p", p]);
            }
            cmd.args(["--", "-D", "warnings"]);
            util::run(&mut cmd)
        })?;
    }
    macos_link::link_and_check(TARGETS, debian_cargo)
}

/// Debian's cargo with Debian's rustc, `/usr/bin` first in `PATH` (so `cargo clippy` finds
/// Debian's `cargo-clippy`, not rustup's proxy) and no rustup or outer-cargo settings that
/// would point it at another toolchain.
fn debian_cargo() -> Command {
    let mut cmd = Command::new(CARGO);
    let path = std::env::var("PATH").unwrap_or_default();
    cmd.env("PATH", format!("/usr/bin:{path}"))
        .env("RUSTC", RUSTC)
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET");
    cmd
}
