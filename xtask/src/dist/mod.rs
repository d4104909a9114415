//! `cargo xtask dist deb [--test]`: the Debian package.
//!
//! Built by cargo-deb (installed with `cargo install cargo-deb --locked` when missing) from
//! `[package.metadata.deb]` in `crates/pawl/Cargo.toml`: `/usr/bin/pawl` (release,
//! stripped), the udev rule, the systemd user unit, `uinput` in modules-load.d, man pages,
//! completions, the GNOME Shell extension (its GNOME 42 to 44 variant), `contrib/debian/copyright` (regenerated here from Cargo.lock, see
//! [`copyright`]), the changelog and the maintainer scripts of `contrib/debian/`. Then
//! `lintian` (installed when missing) must report no error and no warning.
//!
//! `--test` also installs the package in a Debian bookworm chroot, runs it, purges it and
//! checks that nothing is left ([`chroot`]); it fails on a stale copyright file too.

mod chroot;
mod copyright;
mod licenses;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::util;

/// The Debian revision cargo-deb appends (its default, `-1`).
const DEB_REVISION: &str = "1";

/// Runs `dist` with its arguments.
pub fn dist(args: &[String]) -> anyhow::Result<()> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["deb"] => deb(false),
        ["deb", "--test"] => deb(true),
        _ => bail!("usage: cargo xtask dist deb [--test]"),
    }
}

fn deb(test: bool) -> anyhow::Result<()> {
    let root = util::project_root()?;
    util::step("cargo-deb", ensure_cargo_deb)?;
    util::step("contrib/debian/copyright", || {
        let fresh = copyright::generate(&root)?;
        let path = root.join(copyright::PATH);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(fresh.as_str()) {
            return Ok(());
        }
        std::fs::write(&path, &fresh).with_context(|| format!("write {}", path.display()))?;
        ensure!(
            !test,
            "{} was stale (Cargo.lock changed): rewritten, commit it",
            copyright::PATH
        );
        eprintln!("updated {} (commit it)", copyright::PATH);
        Ok(())
    })?;
    check_changelog(&root)?;
    let mut deb = PathBuf::new();
    util::step("cargo deb", || {
        deb = build(&root)?;
        Ok(())
    })?;
    util::run(Command::new("dpkg-deb").arg("--contents").arg(&deb))?;
    util::step("lintian", || lintian(&deb))?;
    if test {
        util::step("chroot test", || chroot::test(&root, &deb))?;
    }
    eprintln!("{}", deb.display());
    Ok(())
}

/// `cargo deb --version`, or install it.
fn ensure_cargo_deb() -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let present = Command::new(&cargo)
        .args(["deb", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!("installing cargo-deb");
    util::cargo(&["install", "cargo-deb", "--locked"])
}

/// The newest entry of `contrib/debian/changelog` must be this version: lintian compares
/// the package's version with it, and a release without an entry is a mistake.
fn check_changelog(root: &Path) -> anyhow::Result<()> {
    let path = root.join("contrib/debian/changelog");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
    let want = format!("pawl ({}-{DEB_REVISION}) ", env!("CARGO_PKG_VERSION"));
    let first = text.lines().next().unwrap_or_default();
    ensure!(
        first.starts_with(&want),
        "{}: the newest entry is {first:?}, not {}: add an entry for this version",
        path.display(),
        want.trim()
    );
    Ok(())
}

/// Builds the package; returns its path (cargo-deb prints it last).
fn build(root: &Path) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The kernel-mode loader is an asset of the package, built by another crate.
    util::ensure_debian_packages(util::BPF_BUILD_PACKAGES)?;
    util::run(
        Command::new(&cargo)
            .current_dir(root)
            .args(["build", "--release", "--locked", "-p", "pawl-bpf"])
            .args(["--bin", "pawl-kernel-attach"]),
    )?;
    let out = Command::new(cargo)
        .current_dir(root)
        // `--strip`: the release profile keeps line tables (for backtraces and
        // profiling), the package ships the binary without them (18 MB → 4 MB).
        .args(["deb", "--locked", "-p", "pawl", "--strip"])
        .args(["--deb-revision", DEB_REVISION])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("run cargo deb")?;
    ensure!(out.status.success(), "cargo deb exited with {}", out.status);
    let stdout = String::from_utf8(out.stdout)?;
    let path = stdout
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.ends_with(".deb"))
        .with_context(|| format!("cargo deb printed no .deb path: {stdout:?}"))?;
    let path = root.join(path);
    ensure!(path.is_file(), "{} does not exist", path.display());
    Ok(path)
}

/// `lintian` on the package: fails on any error or warning (overrides, each with its
/// reason, are in `contrib/debian/lintian-overrides`).
fn lintian(deb: &Path) -> anyhow::Result<()> {
    util::ensure_debian_packages(&["lintian"])?;
    util::run(
        Command::new("lintian")
            .args([
                "--fail-on",
                "error,warning",
                "--display-info",
                "--tag-display-limit",
                "0",
            ])
            .arg(deb),
    )
}
