//! `cargo xtask vm-test [FILTER...]`: the end-to-end tier. Boots the installed Debian kernel
//! in QEMU (TCG) with an initramfs holding busybox, the HID/input modules, static `pawl` and
//! `pawl-vm-driver` binaries and the recordings, runs the driver's scenarios in one boot
//! and fails on any `FAIL` line, a missing result, or a timeout.
//!
//! Environment: `PAWL_VM_TIMEOUT_SECS` (default 600) bounds the VM run; `PAWL_VM_DEBUG=1`
//! runs pawl with `--debug` (a failing scenario prints the tail of pawl's log);
//! `PAWL_VM_VERBOSE=1` prints every scenario's notes (frames seen, syscall counts).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::cpio::Cpio;
use crate::util;

/// Debian packages the VM needs (the `cpio` tool is not used: xtask writes the archive).
pub(crate) const PACKAGES: &[&str] = &[
    "qemu-system-x86",
    "linux-image-amd64",
    "busybox-static",
    "cpio",
];

/// The kernel modules the scenarios need; their dependencies are added from `modules.dep`.
/// The Logitech drivers are there because a user's machine has them: hid-logitech-hidpp
/// binds the MX Master (`hid:b0005g*v0000046Dp0000B034`), hid-logitech-dj the Unifying
/// receiver (c52b; not the Bolt receiver c548 on Debian's kernels).
const MODULES: &[&str] = &[
    "hid",
    "hid-generic",
    "hid-logitech-dj",
    "hid-logitech-hidpp",
    "uhid",
    "evdev",
    "uinput",
];

/// The target the static binaries are built for (a separate target directory, so host
/// builds are not invalidated by the different RUSTFLAGS).
pub(crate) const TARGET: &str = "x86_64-unknown-linux-gnu";

/// Printed by `/init` right before it starts the driver: the end of the boot.
const DRIVER_START: &str = "pawl-vm: driver starting";
/// Printed by `/init` after the driver: `… status N`.
const DRIVER_EXIT: &str = "pawl-vm: driver exit status ";

/// Recordings copied into the VM (by extension: descriptors and evemu files; the browser
/// JSON traces are not needed there).
const RECORDING_EXTENSIONS: &[&str] = &["rdesc", "desc", "events"];

/// Runs the VM tests; `args` are scenario name filters (substrings).
pub fn vm_test(args: &[String]) -> anyhow::Result<()> {
    let total = Instant::now();
    let root = util::project_root()?;
    for f in args {
        ensure!(
            !f.is_empty()
                && f.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "filter {f:?}: scenario names are lowercase letters, digits and _"
        );
    }
    util::step("debian packages", || util::ensure_debian_packages(PACKAGES))?;
    let kernel = find_kernel()?;
    eprintln!("kernel {} ({})", kernel.version, kernel.vmlinuz.display());
    util::step("static build of pawl and pawl-vm-driver", build_static)?;
    let bin_dir = target_dir(&root).join(TARGET).join("release");
    let pawl = bin_dir.join("pawl");
    let driver = bin_dir.join("pawl-vm-driver");

    let expected = list_scenarios(&driver, args)?;
    ensure!(!expected.is_empty(), "no scenario matches {args:?}");

    let out_dir = target_dir(&root).join("vm-test");
    std::fs::create_dir_all(&out_dir)?;
    let initramfs = out_dir.join("initramfs.cpio");
    let recordings = recordings_dir(&root)?;
    util::step("initramfs", || {
        let bytes = initramfs_bytes(&kernel, &pawl, &driver, &recordings, args)?;
        std::fs::write(&initramfs, &bytes)
            .with_context(|| format!("write {}", initramfs.display()))?;
        eprintln!(
            "{} ({:.1} MiB)",
            initramfs.display(),
            bytes.len() as f64 / (1024.0 * 1024.0)
        );
        Ok(())
    })?;

    let timeout = std::env::var("PAWL_VM_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(Duration::from_secs(600), Duration::from_secs);
    let serial_log = out_dir.join("serial.log");
    let mut run = None;
    util::step("qemu", || {
        run = Some(boot(&kernel, &initramfs, &serial_log, timeout)?);
        Ok(())
    })?;
    let run = run.expect("boot returned");
    let res = judge(&run, &expected);
    let boot = run.boot.map_or("driver never started".into(), |d| {
        format!("{:.1} s", d.as_secs_f64())
    });
    eprintln!(
        "vm-test: VM boot (qemu start → driver start) {boot}, scenarios {:.1} s, VM total {:.1} s, vm-test total {:.1} s; serial log {}",
        run.scenarios.map_or(0.0, |d| d.as_secs_f64()),
        run.total.as_secs_f64(),
        total.elapsed().as_secs_f64(),
        serial_log.display()
    );
    res
}

/// An installed kernel: version, image, modules directory.
#[derive(Debug)]
pub(crate) struct Kernel {
    pub(crate) version: String,
    vmlinuz: PathBuf,
    modules: PathBuf,
}

/// The newest kernel that has both `/boot/vmlinuz-<v>` and `/lib/modules/<v>/modules.dep`.
pub(crate) fn find_kernel() -> anyhow::Result<Kernel> {
    let mut found: Vec<Kernel> = std::fs::read_dir("/lib/modules")
        .context("read /lib/modules (is linux-image-amd64 installed?)")?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().into_owned();
            let vmlinuz = PathBuf::from(format!("/boot/vmlinuz-{version}"));
            let modules = e.path();
            (vmlinuz.is_file() && modules.join("modules.dep").is_file()).then_some(Kernel {
                version,
                vmlinuz,
                modules,
            })
        })
        .collect();
    found.sort_by_key(|k| version_key(&k.version));
    found
        .pop()
        .context("no kernel with both /boot/vmlinuz-<version> and /lib/modules/<version>")
}

/// `6.1.0-57-amd64` → [6, 1, 0, 57] for ordering.
fn version_key(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// `$PAWL_RECORDINGS` when set (as the test suites read it), else
/// `<workspace root>/../shared/recordings`; in a git worktree elsewhere, the same path next
/// to the main checkout (from `git rev-parse --git-common-dir`).
pub(crate) fn recordings_dir(root: &Path) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PAWL_RECORDINGS") {
        return Ok(PathBuf::from(dir));
    }
    let beside_root = root.join("../shared/recordings");
    if beside_root.is_dir() {
        return Ok(beside_root);
    }
    let common = Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(main) = common.as_deref().and_then(Path::parent) {
        let beside_main = main.join("../shared/recordings");
        if beside_main.is_dir() {
            return Ok(beside_main);
        }
    }
    bail!(
        "no recordings at {} (the recorded data lives next to the repository)",
        beside_root.display()
    )
}

pub(crate) fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

pub(crate) fn build_static() -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    util::run(
        Command::new(cargo)
            .env("RUSTFLAGS", "-C target-feature=+crt-static")
            .args(["build", "--release", "--target", TARGET])
            .args(["-p", "pawl", "-p", "pawl-vm-driver"]),
    )
}

/// The scenario names the driver will run for `filters` (`--list` touches no device).
fn list_scenarios(driver: &Path, filters: &[String]) -> anyhow::Result<Vec<String>> {
    let out = Command::new(driver)
        .arg("--list")
        .args(filters)
        .output()
        .with_context(|| format!("cannot run {} --list", driver.display()))?;
    ensure!(
        out.status.success(),
        "{} --list: {}",
        driver.display(),
        String::from_utf8_lossy(&out.stdout)
    );
    Ok(String::from_utf8(out.stdout)?
        .lines()
        .map(str::to_owned)
        .collect())
}

/// The `/init` script: mounts, loads the modules in dependency order, runs the driver and
/// powers off (if poweroff fails, init exits, the kernel panics and `panic=-1` with
/// `-no-reboot` ends QEMU).
const INIT: &str = r#"#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
# Keep kernel messages off the console so they cannot split result lines.
echo 1 > /proc/sys/kernel/printk
for m in $(cat /etc/pawl-vm/modules); do
    insmod "/lib/modules/$m" || echo "pawl-vm: insmod $m failed"
done
echo "pawl-vm: driver starting"
/bin/pawl-vm-driver --pawl /bin/pawl --recordings /recordings --work /tmp/pawl-vm $(cat /etc/pawl-vm/args)
echo "pawl-vm: driver exit status $?"
poweroff -f
"#;

pub(crate) fn initramfs_bytes(
    kernel: &Kernel,
    pawl: &Path,
    driver: &Path,
    recordings: &Path,
    filters: &[String],
) -> anyhow::Result<Vec<u8>> {
    let read = |p: &Path| std::fs::read(p).with_context(|| format!("read {}", p.display()));
    let mut c = Cpio::default();
    for d in [
        "bin",
        "dev",
        "proc",
        "sys",
        "tmp",
        "etc",
        "etc/pawl-vm",
        "lib",
        "lib/modules",
        "recordings",
    ] {
        c.dir(d, 0o755);
    }
    c.file("init", 0o755, INIT.as_bytes());
    c.file("bin/busybox", 0o755, &read(Path::new("/bin/busybox"))?);
    c.symlink("bin/sh", "busybox");
    c.file("bin/pawl", 0o755, &read(pawl)?);
    c.file("bin/pawl-vm-driver", 0o755, &read(driver)?);

    let modules = resolve_modules(kernel)?;
    let mut order = String::new();
    for m in &modules {
        let name = format!("{}.ko", module_name(m));
        c.file(&format!("lib/modules/{name}"), 0o644, &module_bytes(m)?);
        order.push_str(&name);
        order.push('\n');
    }
    eprintln!(
        "modules: {}",
        order.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    c.file("etc/pawl-vm/modules", 0o644, order.as_bytes());
    c.file(
        "etc/pawl-vm/hid-aliases",
        0o644,
        logitech_hid_aliases(kernel)?.as_bytes(),
    );
    let mut args: Vec<&str> = filters.iter().map(String::as_str).collect();
    if std::env::var("PAWL_VM_DEBUG").is_ok_and(|v| v == "1") {
        args.insert(0, "--pawl-debug");
    }
    if std::env::var("PAWL_VM_VERBOSE").is_ok_and(|v| v == "1") {
        args.insert(0, "--verbose");
    }
    c.file("etc/pawl-vm/args", 0o644, args.join(" ").as_bytes());

    let mut copied = 0;
    for e in
        std::fs::read_dir(recordings).with_context(|| format!("read {}", recordings.display()))?
    {
        let path = e?.path();
        let keep = path
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| RECORDING_EXTENSIONS.contains(&x));
        if keep {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            c.file(&format!("recordings/{name}"), 0o644, &read(&path)?);
            copied += 1;
        }
    }
    ensure!(
        copied > 0,
        "no recordings found in {}",
        recordings.display()
    );
    Ok(c.finish())
}

/// The kernel's `modules.alias` lines for Logitech HID ids (`alias hid:b0003g*v0000046D…
/// hid_logitech_dj`): the VM's driver scenarios read them to know which driver this kernel
/// binds to each emulated device (e.g. whether hid-logitech-dj takes the Bolt receiver).
fn logitech_hid_aliases(kernel: &Kernel) -> anyhow::Result<String> {
    let path = kernel.modules.join("modules.alias");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| l.starts_with("alias hid:") && l.contains("v0000046D"))
        .map(|l| format!("{l}\n"))
        .collect())
}

/// `kernel/drivers/hid/hid-generic.ko.xz` → `hid-generic`.
fn module_name(path: &str) -> &str {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.split(".ko").next().unwrap_or(base)
}

/// Normalizes `-` and `_`, which module names use interchangeably.
fn same_module(a: &str, b: &str) -> bool {
    a.replace('-', "_") == b.replace('-', "_")
}

/// [`MODULES`] and their dependencies from `modules.dep`, dependencies first, as paths
/// relative to the modules directory; modules built into the kernel are left out.
fn resolve_modules(kernel: &Kernel) -> anyhow::Result<Vec<String>> {
    let dep_path = kernel.modules.join("modules.dep");
    let deps_text = std::fs::read_to_string(&dep_path)
        .with_context(|| format!("read {}", dep_path.display()))?;
    let deps: BTreeMap<&str, Vec<&str>> = deps_text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(m, d)| (m.trim(), d.split_whitespace().collect()))
        .collect();
    let builtin =
        std::fs::read_to_string(kernel.modules.join("modules.builtin")).unwrap_or_default();
    let mut order: Vec<String> = Vec::new();
    for want in MODULES {
        match deps.keys().find(|p| same_module(module_name(p), want)) {
            Some(path) => add_with_deps(path, &deps, &mut order),
            None if builtin.lines().any(|l| same_module(module_name(l), want)) => {}
            None => bail!(
                "module {want} is neither in {} nor built in",
                dep_path.display()
            ),
        }
    }
    Ok(order
        .into_iter()
        .map(|p| kernel.modules.join(p).to_string_lossy().into_owned())
        .collect())
}

fn add_with_deps(path: &str, deps: &BTreeMap<&str, Vec<&str>>, order: &mut Vec<String>) {
    if order.iter().any(|p| p == path) {
        return;
    }
    for d in deps.get(path).into_iter().flatten() {
        add_with_deps(d, deps, order);
    }
    order.push(path.to_owned());
}

/// The module's ELF bytes, decompressed when the distribution compresses modules.
fn module_bytes(path: &str) -> anyhow::Result<Vec<u8>> {
    let tool = if path.ends_with(".ko.xz") {
        Some("xz")
    } else if path.ends_with(".ko.zst") {
        Some("zstd")
    } else if path.ends_with(".ko.gz") {
        Some("gzip")
    } else {
        None
    };
    let Some(tool) = tool else {
        return std::fs::read(path).with_context(|| format!("read {path}"));
    };
    let out = Command::new(tool)
        .args(["-dc", path])
        .output()
        .with_context(|| format!("cannot run {tool} to decompress {path}"))?;
    ensure!(out.status.success(), "{tool} -dc {path} failed");
    Ok(out.stdout)
}

/// What one VM run printed.
#[derive(Debug)]
pub(crate) struct Run {
    /// From QEMU's start to the driver's start.
    pub(crate) boot: Option<Duration>,
    /// From the driver's start to its exit.
    pub(crate) scenarios: Option<Duration>,
    /// QEMU's whole run.
    pub(crate) total: Duration,
    /// `PASS`/`FAIL` lines in order.
    results: Vec<String>,
    /// The driver's exit status as `/init` printed it.
    pub(crate) driver_status: Option<i32>,
    pub(crate) timed_out: bool,
}

pub(crate) fn boot(
    kernel: &Kernel,
    initramfs: &Path,
    serial_log: &Path,
    timeout: Duration,
) -> anyhow::Result<Run> {
    boot_with(kernel, initramfs, serial_log, timeout, &[])
}

/// [`boot`] with extra QEMU arguments (`perf-vm` adds `-icount`).
pub(crate) fn boot_with(
    kernel: &Kernel,
    initramfs: &Path,
    serial_log: &Path,
    timeout: Duration,
    qemu_args: &[&str],
) -> anyhow::Result<Run> {
    let mut log = std::fs::File::create(serial_log)
        .with_context(|| format!("create {}", serial_log.display()))?;
    let start = Instant::now();
    let mut child = Command::new("qemu-system-x86_64")
        .args(["-accel", "tcg", "-cpu", "max", "-m", "512", "-nographic"])
        .arg("-kernel")
        .arg(&kernel.vmlinuz)
        .arg("-initrd")
        .arg(initramfs)
        .args(["-append", "console=ttyS0 quiet panic=-1", "-no-reboot"])
        .args(qemu_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start qemu-system-x86_64")?;
    let (tx, rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let tx_err = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n').map_while(Result::ok) {
            let line = String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_owned();
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx_err.send(format!("qemu: {line}")).is_err() {
                break;
            }
        }
    });

    let mut run = Run {
        boot: None,
        scenarios: None,
        total: Duration::ZERO,
        results: Vec::new(),
        driver_status: None,
        timed_out: false,
    };
    let deadline = start + timeout;
    let mut driver_started = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                writeln!(log, "{line}")?;
                if line.contains(DRIVER_START) {
                    let now = Instant::now();
                    run.boot = Some(now - start);
                    driver_started = Some(now);
                    eprintln!("VM booted in {:.1} s", (now - start).as_secs_f64());
                    continue;
                }
                if let Some(rest) = line.split(DRIVER_EXIT).nth(1) {
                    run.driver_status = rest.trim().parse().ok();
                    run.scenarios = driver_started.map(|s| s.elapsed());
                }
                if driver_started.is_some() || line.starts_with("qemu: ") {
                    eprintln!("{line}");
                }
                if line.starts_with("PASS ") || line.starts_with("FAIL ") {
                    run.results.push(line);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                run.timed_out = true;
                let _ = child.kill();
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = child.wait();
    run.total = start.elapsed();
    Ok(run)
}

/// Fails on a timeout, a driver error, any `FAIL`, or results that differ from `expected`.
fn judge(run: &Run, expected: &[String]) -> anyhow::Result<()> {
    let mut problems = Vec::new();
    if run.timed_out {
        problems.push(format!(
            "timed out after {:.0} s (PAWL_VM_TIMEOUT_SECS)",
            run.total.as_secs_f64()
        ));
    }
    if run.boot.is_none() {
        problems.push("the driver never started (see the serial log)".into());
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for line in &run.results {
        let name = line[5..].split(':').next().unwrap_or("").trim();
        *seen.entry(name).or_default() += 1;
        if line.starts_with("FAIL ") {
            problems.push(line.clone());
        }
    }
    for name in expected {
        match seen.get(name.as_str()) {
            None => problems.push(format!("no result for {name}")),
            Some(1) => {}
            Some(n) => problems.push(format!("{n} results for {name}")),
        }
    }
    for name in seen.keys() {
        if !expected.iter().any(|e| e == name) {
            problems.push(format!("unexpected result for {name}"));
        }
    }
    match run.driver_status {
        Some(0) => {}
        Some(s) if problems.is_empty() => problems.push(format!("the driver exited with {s}")),
        Some(_) => {}
        None if !run.timed_out => problems.push("the driver's exit was not reported".into()),
        None => {}
    }
    let passed = run
        .results
        .iter()
        .filter(|l| l.starts_with("PASS "))
        .count();
    eprintln!("vm-test: {passed} of {} scenarios passed", expected.len());
    if problems.is_empty() {
        return Ok(());
    }
    bail!("{}", problems.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_drop_directory_and_compression_suffix() {
        assert_eq!(
            module_name("kernel/drivers/hid/hid-generic.ko"),
            "hid-generic"
        );
        assert_eq!(module_name("kernel/drivers/hid/uhid.ko.zst"), "uhid");
        assert!(same_module("hid_generic", "hid-generic"));
    }

    #[test]
    fn dependencies_load_first_and_once() {
        let deps: BTreeMap<&str, Vec<&str>> = [
            ("a/hid.ko", vec![]),
            ("a/uhid.ko", vec!["a/hid.ko"]),
            ("a/hid-generic.ko", vec!["a/hid.ko"]),
        ]
        .into_iter()
        .collect();
        let mut order = Vec::new();
        add_with_deps("a/uhid.ko", &deps, &mut order);
        add_with_deps("a/hid-generic.ko", &deps, &mut order);
        assert_eq!(order, ["a/hid.ko", "a/uhid.ko", "a/hid-generic.ko"]);
    }

    #[test]
    fn kernel_versions_order_numerically() {
        assert!(version_key("6.10.0-1-amd64") > version_key("6.9.0-5-amd64"));
        assert!(version_key("6.1.0-57-amd64") > version_key("6.1.0-9-amd64"));
    }

    #[test]
    fn a_fail_or_a_missing_result_fails_the_run() {
        let run = |results: &[&str]| Run {
            boot: Some(Duration::from_secs(1)),
            scenarios: Some(Duration::from_secs(1)),
            total: Duration::from_secs(2),
            results: results.iter().map(|s| s.to_string()).collect(),
            driver_status: Some(0),
            timed_out: false,
        };
        let expected = vec!["a".to_string(), "b".to_string()];
        assert!(judge(&run(&["PASS a", "PASS b"]), &expected).is_ok());
        assert!(judge(&run(&["PASS a", "FAIL b: x"]), &expected).is_err());
        assert!(judge(&run(&["PASS a"]), &expected).is_err());
        assert!(judge(&run(&["PASS a", "PASS b", "PASS c"]), &expected).is_err());
    }
}
