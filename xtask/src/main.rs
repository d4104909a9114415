//! Project automation, run as `cargo xtask <task>` (the cargo-xtask convention: only cargo
//! and rustc needed, external programs started without a shell).
//!
//! Tasks:
//! - `ci` — everything CI runs: fmt check, clippy, tests, and the tasks below as they exist.
//! - `check-macos` — type-check and clippy of the macOS build (aarch64), a link
//!   of `pawl` for each and the check of its framework imports, on Linux ([`check_macos`]).
//! - `man`, `completions` — regenerate the committed man pages (`contrib/man/`) and shell
//!   completions (`contrib/completions/`) from the clap definition (`cargo test` fails while
//!   they are stale).
//! - `bench-instructions` — instructions per input frame of the hot path, counted by
//!   callgrind ([`bench_instructions`]); a report, not part of `ci`.
//! - `vm-test [--kernel K] [FILTER...]` — the end-to-end scenarios in a QEMU VM on the
//!   installed Debian kernel and Debian's newest HID-BPF kernel (`vm.rs`, `kernels.rs`),
//!   with a Debian userland boot for the udev/libinput/sway scenarios (`userland.rs`);
//!   filters select scenarios by name substring on every kernel.
//! - `vm-root` — builds (when missing) that userland's cached root file system and prints
//!   its path.
//! - `fuzz [--time SECS] [--runs N] [TARGET...]` — the cargo-fuzz targets of `fuzz/`, each
//!   for a bounded time on its corpus ([`fuzz`]); `ci` runs a short pass.
//! - `perf-vm [--quick]` — PERFORMANCE.md: pawl and its peers measured from /proc in the
//!   same VM ([`perf_vm`]); a report, not part of `ci` (about 15 minutes).
//! - `mutants [--timeout SECS] [--baseline] [FILE...]` — cargo-mutants on the core files
//!   and a score per file ([`mutants`]); a report, not part of `ci`.
//! - `dist deb [--test]` — the Debian package, lintian-clean; `--test` installs, runs and
//!   purges it in a Debian chroot ([`dist`]).

mod bench_instructions;
mod check_macos;
mod cpio;
mod dist;
mod fuzz;
mod kernels;
mod macho;
mod macos_link;
mod mutants;
mod perf_vm;
mod userland;
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
        "vm-root" => vm::vm_root(rest),
        "dist" => dist::dist(rest),
        "fuzz" => fuzz::fuzz(rest),
        "mutants" => mutants::mutants(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>

tasks:
  ci                   fmt check, clippy, every test
  check-macos          clippy (aarch64) and link (both Apple targets) the macOS build, check
                       its imports (--link-only: no clippy)
  man                  regenerate contrib/man and contrib/completions
  completions          the same
  bench-instructions   instructions per input frame (callgrind)
  vm-test [--kernel K] [FILTER...]
                       end-to-end scenarios in QEMU on both kernels (K: installed, hid-bpf)
  vm-root              build the cached Debian root of the userland boot
  perf-vm [--quick]    measure pawl and its peers in the VM, write PERFORMANCE.md
  dist deb [--test]    the Debian package (cargo-deb, lintian); --test: install and purge it in a chroot
  fuzz [--time SECS] [--runs N] [TARGET...]
                       run the fuzz targets (default 60 s each)
  mutants [--timeout SECS] [--baseline] [FILE...]
                       cargo-mutants per core file and a score table (default: the list in
                       xtask/src/mutants.rs)"
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
    util::step(
        "build and test packages (clang for the BPF program, libelf, zlib, dbus-daemon)",
        || {
            util::ensure_debian_packages(util::BPF_BUILD_PACKAGES)?;
            util::ensure_debian_packages(util::TEST_PACKAGES)
        },
    )?;
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
    // A short pass: the corpus in target/ grows between runs; long runs are by hand.
    util::step("cargo xtask fuzz --time 8", || {
        fuzz::fuzz(&["--time".into(), "8".into()])
    })?;
    util::step("cargo xtask vm-test", || vm::vm_test(&[]))?;
    util::step("cargo xtask dist deb --test", || {
        dist::dist(&["deb".into(), "--test".into()])
    })?;
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
