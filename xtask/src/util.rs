//! Small helpers shared by tasks: running cargo and programs, installing Debian packages.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

/// Changes to the workspace root (the parent of `xtask/`) and returns it.
pub fn project_root() -> anyhow::Result<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask has no parent directory")?
        .to_owned();
    std::env::set_current_dir(&root)?;
    Ok(root)
}

/// Runs `f` as a named step, printing its name and duration.
pub fn step(name: &str, f: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    eprintln!("==> {name}");
    let start = Instant::now();
    let res = f();
    let secs = start.elapsed().as_secs_f64();
    match &res {
        Ok(()) => eprintln!("==> {name}: ok ({secs:.1} s)"),
        Err(e) => eprintln!("==> {name}: FAILED ({secs:.1} s): {e:#}"),
    }
    res.with_context(|| format!("step {name:?} failed"))
}

/// Runs cargo (the one that runs xtask, from `$CARGO`) with `args`.
pub fn cargo(args: &[&str]) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo).args(args))
}

/// Runs a command to completion; non-zero exit is an error naming the command.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} exited with {status}");
    }
    Ok(())
}

/// What building `pawl-bpf` needs beyond Rust: clang for the BPF target (Debian 12's
/// clang-22; its build script also takes clang-14 or `$PAWL_BPF_CLANG`), libelf and zlib
/// headers and archives for libbpf-sys (which builds its vendored libbpf with make and
/// pkg-config).
pub const BPF_BUILD_PACKAGES: &[&str] =
    &["clang-22", "libelf-dev", "zlib1g-dev", "pkg-config", "make"];

/// What `cargo test` needs beyond the build: `dbus-daemon` for the private session buses of
/// the GNOME and KDE focus backend's tests (`crates/pawl-linux/src/focus/shell.rs`).
pub const TEST_PACKAGES: &[&str] = &["dbus-daemon"];

/// How long an `apt-get` of [`ensure_debian_packages`] waits for dpkg's lock (s): an
/// unattended upgrade or a second xtask may hold it for minutes.
const APT_LOCK_WAIT_SECS: u32 = 600;

/// Installs the Debian packages among `packages` that are not installed yet (`dpkg -s`),
/// with `apt-get` (through `sudo` when not root). Both apt-get runs wait up to
/// [`APT_LOCK_WAIT_SECS`] for dpkg's lock, which another apt-get may hold.
#[allow(dead_code, reason = "used by vm-test and check-macos")]
pub fn ensure_debian_packages(packages: &[&str]) -> anyhow::Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| {
            !Command::new("dpkg")
                .args(["-s", p])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("installing Debian packages: {}", missing.join(" "));
    let root = rustix_like_is_root();
    let mut update = if root {
        Command::new("apt-get")
    } else {
        sudo("apt-get")
    };
    let lock_wait = format!("DPkg::Lock::Timeout={APT_LOCK_WAIT_SECS}");
    run(update.args(["-o", &lock_wait, "update", "-qq"]))?;
    let mut install = if root {
        Command::new("apt-get")
    } else {
        sudo("apt-get")
    };
    install
        .env("DEBIAN_FRONTEND", "noninteractive")
        .args(["-o", &lock_wait, "install", "-y", "-qq"])
        .args(&missing);
    run(&mut install)
}

/// `program` run as root: directly when xtask is root, else through `sudo`.
pub fn privileged(program: &str) -> Command {
    if rustix_like_is_root() {
        Command::new(program)
    } else {
        sudo(program)
    }
}

#[allow(dead_code, reason = "used by ensure_debian_packages")]
fn sudo(program: &str) -> Command {
    let mut c = Command::new("sudo");
    c.arg(program);
    c
}

#[allow(dead_code, reason = "used by ensure_debian_packages")]
fn rustix_like_is_root() -> bool {
    // `id -u` keeps xtask free of libc bindings.
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `program` run as root: directly when xtask is root, else through `sudo`.
pub fn as_root(program: &str) -> Command {
    if rustix_like_is_root() {
        Command::new(program)
    } else {
        sudo(program)
    }
}
