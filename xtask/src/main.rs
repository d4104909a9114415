//! Project automation, run as `cargo xtask <task>` (the cargo-xtask convention: only cargo
//! and rustc needed, external programs started without a shell).
//!
//! Tasks:
//! - `ci` — everything CI runs: fmt check, clippy, tests, and the tasks below as they exist.
//! - `check-macos` — type-check and clippy of the macOS build for both Apple targets, on
//!   Linux ([`check_macos`]).
//! - `man`, `completions` — regenerate the committed man pages (`contrib/man/`) and shell
//!   completions (`contrib/completions/`) from the clap definition (`cargo test` fails while
//!   they are stale).
//! - `bench-instructions` — instructions per input frame of the hot path, counted by
//!   callgrind ([`bench_instructions`]); a report, not part of `ci`.
//! - `vm-test [FILTER...]` — the end-to-end scenarios in a QEMU VM on the installed Debian
//!   kernel (`vm.rs`); filters select scenarios by name substring.
//! - `fuzz [--time SECS] [--runs N] [TARGET...]` — the cargo-fuzz targets of `fuzz/`, each
//!   for a bounded time on its corpus ([`fuzz`]); `ci` runs a short pass.
//! - `perf-vm [--quick]` — PERFORMANCE.md: pawl and its peers measured from /proc in the
//!   same VM ([`perf_vm`]); a report, not part of `ci` (about 15 minutes).

mod bench_instructions;
mod check_macos;
mod cpio;
mod fuzz;
mod perf_vm;
mod util;
mod vm;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("");
    let rest = &args[args.len().min(1)..];
    let res = match task {
        "ci" => ci(rest),
        "check-macos" => check_macos::check_macos(rest),
        "man" | "completions" => generated(),
        "bench-instructions" => bench_instructions::bench_instructions(rest),
        "vm-test" => vm::vm_test(rest),
        "perf-vm" => perf_vm::perf_vm(rest),
        "fuzz" => fuzz::fuzz(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\ntasks:\n  ci                   fmt check, clippy, every test\n  check-macos          type-check and clippy the macOS build (both Apple targets)\n  man                  regenerate contrib/man and contrib/completions\n  completions          the same\n  bench-instructions   instructions per input frame (callgrind)\n  vm-test [FILTER...]  end-to-end scenarios in a QEMU VM (filters: name substrings)\n  perf-vm [--quick]    measure pawl and its peers in the VM, write PERFORMANCE.md\n  fuzz [--time SECS] [--runs N] [TARGET...]\n                       run the fuzz targets (default 60 s each)"
            );
            return ExitCode::from(2);
        }
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {task}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The README's test command: every check and test, in order of cost.
fn ci(_args: &[String]) -> anyhow::Result<()> {
    util::project_root()?;
    util::step("cargo fmt --check", || {
        util::cargo(&["fmt", "--all", "--", "--check"])?;
        // The fuzz targets are a workspace of their own.
        util::cargo(&[
            "fmt",
            "--all",
            "--manifest-path",
            "fuzz/Cargo.toml",
            "--",
            "--check",
        ])
    })?;
    util::step("cargo clippy", || {
        util::cargo(&[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ])
    })?;
    util::step("cargo test", || util::cargo(&["test", "--workspace"]))?;
    util::step("cargo xtask check-macos", || check_macos::check_macos(&[]))?;
    util::step("cargo xtask fuzz --time 20", || {
        fuzz::fuzz(&["--time".into(), "20".into()])
    })?;
    util::step("cargo xtask vm-test", || vm::vm_test(&[]))?;
    Ok(())
}

/// Rewrites the generated man pages and completions: the staleness test in
/// `crates/pawl/src/generated.rs`, run in update mode.
fn generated() -> anyhow::Result<()> {
    util::project_root()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    util::run(
        std::process::Command::new(cargo)
            .args(["test", "--quiet", "-p", "pawl", "--", "generated::"])
            .env("PAWL_UPDATE_GENERATED", "1"),
    )
}
