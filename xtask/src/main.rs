//! Project automation, run as `cargo xtask <task>` (the cargo-xtask convention: only cargo
//! and rustc needed, external programs started without a shell).
//!
//! Tasks:
//! - `ci` — everything CI runs: fmt check, clippy, tests, and the tasks below as they exist.
//! - `vm-test [FILTER...]` — the end-to-end scenarios in a QEMU VM on the installed Debian
//!   kernel (`vm.rs`); filters select scenarios by name substring.

mod cpio;
mod util;
mod vm;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("");
    let rest = &args[args.len().min(1)..];
    let res = match task {
        "ci" => ci(rest),
        "vm-test" => vm::vm_test(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\ntasks:\n  ci                   fmt check, clippy, every test\n  vm-test [FILTER...]  end-to-end scenarios in a QEMU VM"
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
        util::cargo(&["fmt", "--all", "--", "--check"])
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
    util::step("cargo xtask vm-test", || vm::vm_test(&[]))?;
    Ok(())
}
