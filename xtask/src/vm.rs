//! `cargo xtask vm-test [--kernel K] [FILTER...]`: the end-to-end tier. Runs the driver's
//! scenarios in QEMU (TCG) on two kernels — Debian's installed one (`/boot`, 6.1 on
//! bookworm) and Debian's newest packaged kernel with `CONFIG_HID_BPF=y`, fetched into
//! `target/` ([`crate::kernels`]) — and prints one line per kernel,
//! `vm-test [<kernel release>]: N of M scenarios passed`. It fails on any `FAIL` line, a
//! missing result, or a timeout.
//!
//! Each kernel gets up to three boots (`--set base|userland|systemd` picks some):
//! - the base scenarios boot an initramfs holding busybox, the HID/input modules, static
//!   `pawl` and `pawl-vm-driver` binaries and the recordings;
//! - the userland scenarios (udev, libinput, sway reading pawl's output) boot a Debian root
//!   file system ([`crate::userland`], cached under `target/`) over virtio 9p, read-only,
//!   with a second 9p share at `/pawl-vm` holding the binaries, the recordings,
//!   `contrib/70-pawl.rules` and the userland's init; a tiny initramfs loads the modules
//!   (the root has none for these kernels) and switches to it. If that root cannot be built,
//!   the run fails (it never skips);
//! - on the HID-BPF tier only, the systemd scenarios (kernel mode under what a user's
//!   machine runs) boot the same root with systemd as PID 1: its initramfs also mounts
//!   tmpfs on the places the read-only root must have writable (`/run`, `/tmp`, `/var/…`,
//!   `/usr/libexec/pawl` with the loader), writes the boot's units into
//!   `/run/systemd/system` and execs `/lib/systemd/systemd --unit=pawl-vm.target`; the
//!   driver runs from `pawl-vm.service` after `multi-user.target` (udevd's real unit and
//!   coldplug, dbus, logind, getty@tty1) and powers off.
//!
//! `--kernel K` (or `PAWL_VM_KERNEL=K`) runs one kernel: `installed`, `hid-bpf`, or a
//! substring of a release (`6.1`, `7.3`). Filters select scenarios by name on every kernel.
//!
//! Environment: `PAWL_VM_TIMEOUT_SECS` (default 600 s; 1500 s for the systemd boot) bounds
//! each VM run; `PAWL_VM_LANES` (default: the host's cores) is how many kernels boot at
//! once, one QEMU each; `PAWL_VM_DEBUG=1` runs pawl with `--debug` (a failing scenario prints the tail of pawl's log);
//! `PAWL_VM_VERBOSE=1` prints every scenario's notes (frames seen, syscall counts);
//! `PAWL_VM_USERLAND_ALL=1` runs the base scenarios in the userland boot too (one boot per
//! kernel, to measure that option).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::cpio::Cpio;
use crate::kernels::{self, Kernel, find_kernel};
use crate::userland;
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

/// What the userland boot loads on top of [`MODULES`] before it switches to the 9p root:
/// virtio PCI and 9p over virtio (modules on Debian's kernels; built-ins are skipped).
pub(crate) const USERLAND_MODULES: &[&str] = &["virtio_pci", "9pnet_virtio", "9p"];

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

/// Guest memory of the userland boot (sway, udev and libinput beside the scenarios).
const USERLAND_MEMORY_MB: &str = "1024";

/// Which scenarios a boot runs (`pawl-vm-driver --set`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    Base,
    Userland,
    /// The Debian root booted with systemd as PID 1 (udevd's real sandbox, logind): the
    /// kernel-mode scenarios that need them; the HID-BPF tier only.
    Systemd,
    All,
}

impl Set {
    fn flag(self) -> &'static str {
        match self {
            Set::Base => "base",
            Set::Userland => "userland",
            Set::Systemd => "systemd",
            Set::All => "all",
        }
    }

    /// How long one boot of the set may run when `PAWL_VM_TIMEOUT_SECS` is unset: 600 s;
    /// 1500 s for the systemd boot, whose seven scenarios took 35–170 s each under TCG
    /// (383 s in all here, over 600 s on a loaded CI machine).
    fn default_timeout(self) -> Duration {
        match self {
            Set::Systemd => Duration::from_secs(1500),
            Set::Base | Set::Userland | Set::All => Duration::from_secs(600),
        }
    }

    /// `--set` `flag`'s set (`all` is `PAWL_VM_USERLAND_ALL`'s, not a flag).
    fn from_flag(flag: &str) -> anyhow::Result<Set> {
        [Set::Base, Set::Userland, Set::Systemd]
            .into_iter()
            .find(|s| s.flag() == flag)
            .with_context(|| format!("--set {flag}: want base, userland or systemd"))
    }
}

/// `vm-test`'s arguments: filters, the kernel selection and the boots (`--set`, repeatable;
/// none: every set).
#[derive(Debug, Default)]
struct Args {
    filters: Vec<String>,
    kernel: Option<String>,
    sets: Vec<Set>,
}

fn parse_args(args: &[String]) -> anyhow::Result<Args> {
    let mut out = Args {
        kernel: std::env::var("PAWL_VM_KERNEL")
            .ok()
            .filter(|k| !k.is_empty()),
        ..Args::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--kernel" {
            out.kernel = Some(it.next().context("--kernel needs a value")?.clone());
        } else if let Some(k) = a.strip_prefix("--kernel=") {
            out.kernel = Some(k.to_owned());
        } else if a == "--set" {
            out.sets
                .push(Set::from_flag(it.next().context("--set needs a value")?)?);
        } else if let Some(k) = a.strip_prefix("--set=") {
            out.sets.push(Set::from_flag(k)?);
        } else {
            ensure!(
                !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "filter {a:?}: scenario names are lowercase letters, digits and _"
            );
            out.filters.push(a.clone());
        }
    }
    Ok(out)
}

/// Whether `--kernel` `want` selects `kernel` of `tier` (`installed` / `hid-bpf`).
fn kernel_selected(want: Option<&str>, tier: &str, release: Option<&str>) -> bool {
    match want {
        None => true,
        Some(w) if w == tier => true,
        Some(w) => release.is_some_and(|r| r.contains(w)),
    }
}

/// What one kernel's boots gave.
#[derive(Debug)]
struct KernelResult {
    release: String,
    passed: usize,
    /// Accepted `SKIP`s: scenarios that do not apply to this kernel (HID-BPF or not).
    skipped: usize,
    expected: usize,
    problems: Vec<String>,
    wall: Duration,
}

impl KernelResult {
    /// `N of M scenarios passed`, with the accepted skips named when there are any.
    fn summary(&self) -> String {
        let mut s = format!(
            "vm-test [{}]: {} of {} scenarios passed",
            self.release, self.passed, self.expected
        );
        if self.skipped > 0 {
            s += &format!(", {} not applicable on this kernel", self.skipped);
        }
        s
    }
}

/// `cargo xtask vm-test --help`.
const VM_TEST_USAGE: &str = "usage: cargo xtask vm-test [--kernel K] [--set S] [FILTER...]

Boots each kernel in QEMU and runs the scenarios whose name contains a FILTER (lowercase
letters, digits and _; none: every scenario), printing one
`vm-test [<kernel release>]: N of M scenarios passed` line per kernel.

  --kernel K   one kernel: installed, hid-bpf, or a release substring such as 7.3
               (also PAWL_VM_KERNEL)
  --set S      one boot (repeatable): base (initramfs), userland (Debian root, shell init),
               systemd (Debian root, systemd as PID 1; HID-BPF kernel only)

Environment: PAWL_VM_VERBOSE=1 prints what each scenario saw, PAWL_VM_DEBUG=1 runs pawl
with --debug, PAWL_VM_TIMEOUT_SECS (default 600, systemd 1500) bounds each VM run; PAWL_VM_LANES (default: cores) kernels boot at once. Serial logs: target/vm-test/<release>/serial.log (serial-userland.log, serial-systemd.log).";

/// Runs the VM tests; `args` are `--kernel K` and scenario name filters (substrings).
pub fn vm_test(args: &[String]) -> anyhow::Result<()> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{VM_TEST_USAGE}");
        return Ok(());
    }
    let total = Instant::now();
    let root = util::project_root()?;
    let args = parse_args(args)?;
    util::step("debian packages", || util::ensure_debian_packages(PACKAGES))?;
    let target = target_dir(&root);
    let want = args.kernel.as_deref();
    let mut kernels = Vec::new();
    let installed = find_kernel()?;
    if kernel_selected(want, "installed", Some(&installed.version)) {
        kernels.push(installed);
    }
    // The HID-BPF tier's release: there, a scenario may not SKIP for want of HID-BPF.
    let mut hid_bpf_release = None;
    if want.is_none_or(|w| w != "installed") {
        let mut k = None;
        util::step("HID-BPF kernel (Debian package)", || {
            k = Some(kernels::hid_bpf_kernel(&target)?);
            Ok(())
        })?;
        let k = k.expect("step returned");
        hid_bpf_release = Some(k.version.clone());
        if kernel_selected(want, "hid-bpf", Some(&k.version)) {
            kernels.push(k);
        }
    }
    ensure!(!kernels.is_empty(), "no kernel matches --kernel {want:?}");
    for k in &kernels {
        eprintln!("kernel {} ({})", k.version, k.vmlinuz.display());
    }
    util::step(
        "static build of pawl, pawl-vm-driver and pawl-kernel-attach",
        build_static,
    )?;
    let bin_dir = target.join(TARGET).join("release");
    let pawl = bin_dir.join("pawl");
    let driver = bin_dir.join("pawl-vm-driver");

    let all_in_userland = std::env::var("PAWL_VM_USERLAND_ALL").is_ok_and(|v| v == "1");
    let mut boots: Vec<(Set, Vec<String>)> = Vec::new();
    if all_in_userland {
        boots.push((Set::All, list_scenarios(&driver, Set::All, &args.filters)?));
    } else {
        boots.push((
            Set::Base,
            list_scenarios(&driver, Set::Base, &args.filters)?,
        ));
        boots.push((
            Set::Userland,
            list_scenarios(&driver, Set::Userland, &args.filters)?,
        ));
        boots.push((
            Set::Systemd,
            list_scenarios(&driver, Set::Systemd, &args.filters)?,
        ));
    }
    if !args.sets.is_empty() {
        boots.retain(|(set, _)| args.sets.contains(set));
    }
    boots.retain(|(_, names)| !names.is_empty());
    ensure!(!boots.is_empty(), "no scenario matches {:?}", args.filters);

    let recordings = recordings_dir(&root)?;
    // A root that cannot be built fails its scenarios (on every kernel); the base boots
    // still run.
    let mut debian_root = Err("not needed".to_owned());
    if boots.iter().any(|(set, _)| *set != Set::Base) {
        let built = util::step("Debian root file system (debootstrap, cached)", || {
            debian_root = Ok(userland::ensure_root(&target)?);
            Ok(())
        });
        if let Err(e) = built {
            debian_root = Err(format!("{e:#}"));
        }
    }

    let timeout_override: Option<u64> = std::env::var("PAWL_VM_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok());
    let run_kernel = |kernel: &Kernel| -> anyhow::Result<KernelResult> {
        let started = Instant::now();
        let out_dir = target.join("vm-test").join(&kernel.version);
        std::fs::create_dir_all(&out_dir)?;
        let mut result = KernelResult {
            release: kernel.version.clone(),
            passed: 0,
            skipped: 0,
            expected: 0,
            problems: Vec::new(),
            wall: Duration::ZERO,
        };
        let hid_bpf = hid_bpf_release.as_deref() == Some(kernel.version.as_str());
        for (set, expected) in &boots {
            // The systemd boot's scenarios are all kernel mode: it runs where HID-BPF is
            // (its scenarios are not counted elsewhere).
            if *set == Set::Systemd && !hid_bpf {
                eprintln!(
                    "vm-test [{}]: the systemd boot runs on the HID-BPF tier only",
                    kernel.version
                );
                continue;
            }
            let timeout =
                timeout_override.map_or_else(|| set.default_timeout(), Duration::from_secs);
            let run = match set {
                Set::Base => base_boot(
                    kernel,
                    &pawl,
                    &driver,
                    &recordings,
                    &args.filters,
                    &out_dir,
                    timeout,
                ),
                Set::Userland | Set::Systemd | Set::All => match &debian_root {
                    Ok(debian_root) => userland_boot(
                        kernel,
                        debian_root,
                        &root,
                        (&pawl, &driver),
                        &recordings,
                        (*set, &args.filters),
                        &out_dir,
                        timeout,
                    ),
                    Err(e) => Err(anyhow::format_err!(
                        "the Debian userland could not be built, so {} did not run: {e}",
                        expected.join(", ")
                    )),
                },
            };
            let (passed, problems) = match run {
                Ok(run) => {
                    let judged = judge(&run, expected, hid_bpf);
                    if judged.1.is_empty() {
                        result.skipped += run
                            .results
                            .iter()
                            .filter(|l| l.starts_with("SKIP "))
                            .count();
                    }
                    judged
                }
                Err(e) => (0, vec![format!("{e:#}")]),
            };
            result.passed += passed;
            result.expected += expected.len();
            result.problems.extend(
                problems
                    .into_iter()
                    .map(|p| format!("[{} {}] {p}", kernel.version, set.flag())),
            );
        }
        result.wall = started.elapsed();
        eprintln!("{} ({:.1} s)", result.summary(), result.wall.as_secs_f64());
        Ok(result)
    };
    // Each kernel's boots run in a lane of their own: a TCG guest keeps one host core busy,
    // so two kernels on two cores take the time of the longer one.
    let lanes = std::env::var("PAWL_VM_LANES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let results: Vec<KernelResult> = if lanes > 1 && kernels.len() > 1 {
        let mut results = Vec::new();
        for chunk in kernels.chunks(lanes) {
            let chunk_results = std::thread::scope(|scope| {
                let lanes: Vec<_> = chunk
                    .iter()
                    .map(|kernel| scope.spawn(|| run_kernel(kernel)))
                    .collect();
                lanes
                    .into_iter()
                    .map(|lane| {
                        lane.join()
                            .unwrap_or_else(|_| Err(anyhow::format_err!("a VM lane panicked")))
                    })
                    .collect::<anyhow::Result<Vec<_>>>()
            })?;
            results.extend(chunk_results);
        }
        results
    } else {
        kernels
            .iter()
            .map(run_kernel)
            .collect::<anyhow::Result<_>>()?
    };
    eprintln!("vm-test total {:.1} s", total.elapsed().as_secs_f64());
    for r in &results {
        println!("{}", r.summary());
    }
    let problems: Vec<&String> = results.iter().flat_map(|r| &r.problems).collect();
    if problems.is_empty() {
        return Ok(());
    }
    bail!(
        "{}",
        problems
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// The base scenarios' boot: everything in one initramfs.
fn base_boot(
    kernel: &Kernel,
    pawl: &Path,
    driver: &Path,
    recordings: &Path,
    filters: &[String],
    out_dir: &Path,
    timeout: Duration,
) -> anyhow::Result<Run> {
    let initramfs = out_dir.join("initramfs.cpio");
    let mut args = vec!["--set".to_owned(), Set::Base.flag().to_owned()];
    args.extend(filters.iter().cloned());
    util::step(&format!("initramfs ({})", kernel.version), || {
        let bytes = initramfs_bytes(kernel, pawl, driver, recordings, &args)?;
        std::fs::write(&initramfs, &bytes)
            .with_context(|| format!("write {}", initramfs.display()))?;
        eprintln!(
            "{} ({:.1} MiB)",
            initramfs.display(),
            bytes.len() as f64 / (1024.0 * 1024.0)
        );
        Ok(())
    })?;
    let serial_log = out_dir.join("serial.log");
    let mut run = None;
    util::step(
        &format!("qemu ({}, base scenarios)", kernel.version),
        || {
            run = Some(boot(kernel, &initramfs, &serial_log, timeout)?);
            Ok(())
        },
    )?;
    let run = run.expect("boot returned");
    report_times(&run, &serial_log);
    Ok(run)
}

fn report_times(run: &Run, serial_log: &Path) {
    let boot = run.boot.map_or("driver never started".into(), |d| {
        format!("{:.1} s", d.as_secs_f64())
    });
    eprintln!(
        "vm-test: VM boot (qemu start → driver start) {boot}, scenarios {:.1} s, VM total {:.1} s; serial log {}",
        run.scenarios.map_or(0.0, |d| d.as_secs_f64()),
        run.total.as_secs_f64(),
        serial_log.display()
    );
}

/// `cargo xtask vm-root`: builds (when missing) the cached Debian root of the userland boot
/// and prints its path.
pub fn vm_root(args: &[String]) -> anyhow::Result<()> {
    ensure!(args.is_empty(), "usage: cargo xtask vm-root");
    let root = util::project_root()?;
    let mut dir = None;
    util::step("Debian root file system (debootstrap, cached)", || {
        dir = Some(userland::ensure_root(&target_dir(&root))?);
        Ok(())
    })?;
    println!("{}", dir.expect("step returned").display());
    Ok(())
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
    util::ensure_debian_packages(util::BPF_BUILD_PACKAGES)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    util::run(
        Command::new(cargo)
            .env("RUSTFLAGS", "-C target-feature=+crt-static")
            // libbpf-sys links libelf.a and libz.a (libelf-dev, zlib1g-dev) from here.
            .env("LIBBPF_SYS_LIBRARY_PATH", STATIC_LIB_DIR)
            .args(["build", "--release", "--target", TARGET])
            .args(["-p", "pawl", "-p", "pawl-vm-driver", "-p", "pawl-bpf"])
            .args(["--features", "pawl-bpf/static"]),
    )
}

/// The `SKIP` reason a scenario gives on a kernel without HID-BPF (the driver's
/// `kernel_mode::NEEDS_HID_BPF`).
const SKIP_OUTSIDE_HID_BPF: &str = "needs HID-BPF:";
/// The `SKIP` reason of a scenario for kernels without HID-BPF, on one with it (the
/// driver's `kernel_mode::NEEDS_NO_HID_BPF`).
const SKIP_ON_HID_BPF: &str = "needs a kernel without HID-BPF:";

/// Where Debian's static libelf and zlib are (multiarch directory of [`TARGET`]).
const STATIC_LIB_DIR: &str = "/usr/lib/x86_64-linux-gnu";

/// Where the kernel-mode loader is installed in the guest (as the package installs it:
/// root-owned, in directories only root can write).
pub(crate) const KERNEL_ATTACH_IN_GUEST: &str = "usr/libexec/pawl/pawl-kernel-attach";

/// The scenario names of `set` the driver will run for `filters` (`--list` touches no
/// device).
fn list_scenarios(driver: &Path, set: Set, filters: &[String]) -> anyhow::Result<Vec<String>> {
    let out = Command::new(driver)
        .args(["--list", "--set", set.flag()])
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
# The initramfs root is 1777; a real / is 0755 (pawl-kernel-attach refuses to run as root
# from under a directory others can write).
chmod 755 /
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
    initramfs_bytes_with(kernel, pawl, driver, recordings, filters, &[])
}

/// [`initramfs_bytes`] with `extra_modules` loaded before [`MODULES`] (`perf-vm` adds
/// [`USERLAND_MODULES`] to mount the Debian root over 9p).
pub(crate) fn initramfs_bytes_with(
    kernel: &Kernel,
    pawl: &Path,
    driver: &Path,
    recordings: &Path,
    filters: &[String],
    extra_modules: &[&str],
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
    // The kernel-mode loader, built beside pawl by `build_static`.
    for d in ["usr", "usr/libexec", "usr/libexec/pawl"] {
        c.dir(d, 0o755);
    }
    c.file(
        KERNEL_ATTACH_IN_GUEST,
        0o755,
        &read(&pawl.with_file_name("pawl-kernel-attach"))?,
    );
    // The examples' wheel streams, for the kernel-mode equality scenario.
    c.dir("examples", 0o755);
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    for e in std::fs::read_dir(&examples).with_context(|| format!("read {}", examples.display()))? {
        let path = e?.path();
        if path.extension().is_some_and(|x| x == "events") {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            c.file(&format!("examples/{name}"), 0o644, &read(&path)?);
        }
    }

    let wanted: Vec<&str> = extra_modules.iter().chain(MODULES).copied().collect();
    let modules = resolve_modules(kernel, &wanted)?;
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
    c.file("etc/pawl-vm/args", 0o644, driver_args(filters).as_bytes());
    for (name, data) in recording_files(recordings)? {
        c.file(&format!("recordings/{name}"), 0o644, &data);
    }
    Ok(c.finish())
}

/// The driver's arguments after the paths: `filters` (and `--set …`) with the flags
/// `PAWL_VM_DEBUG` and `PAWL_VM_VERBOSE` ask for.
fn driver_args(filters: &[String]) -> String {
    let mut args: Vec<&str> = filters.iter().map(String::as_str).collect();
    if std::env::var("PAWL_VM_DEBUG").is_ok_and(|v| v == "1") {
        args.insert(0, "--pawl-debug");
    }
    if std::env::var("PAWL_VM_VERBOSE").is_ok_and(|v| v == "1") {
        args.insert(0, "--verbose");
    }
    args.join(" ")
}

/// The recordings the VM needs (file name, bytes); at least one.
fn recording_files(recordings: &Path) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
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
            let data = std::fs::read(&path).with_context(|| format!("read {}", path.display()))?;
            files.push((name.into_owned(), data));
        }
    }
    ensure!(
        !files.is_empty(),
        "no recordings found in {}",
        recordings.display()
    );
    Ok(files)
}

/// The start of both userland initramfs `/init`s: busybox's applets, `/proc`, `/sys` and
/// `/dev`, the modules, the Debian root and the share mounted over 9p (read-only) at
/// `/newroot` and `/newroot/pawl-vm`.
macro_rules! initramfs_prologue {
    () => {
        r#"#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo 1 > /proc/sys/kernel/printk
for m in $(cat /etc/pawl-vm/modules); do
    insmod "/lib/modules/$m" || echo "pawl-vm: insmod $m failed"
done
opts=trans=virtio,version=9p2000.L,msize=524288,cache=loose,ro
mkdir -p /newroot
mount -t 9p -o $opts root /newroot || echo "pawl-vm: cannot mount the 9p root"
mount -t 9p -o $opts share /newroot/pawl-vm || echo "pawl-vm: cannot mount the 9p share"
"#
    };
}

/// The userland boot's `/init` in its initramfs: loads the modules, mounts the Debian root
/// and the share over 9p (read-only) and switches to the share's init.
const USERLAND_INITRAMFS_INIT: &str = concat!(
    initramfs_prologue!(),
    r#"mount --move /dev /newroot/dev
umount /sys
umount /proc
exec switch_root /newroot /pawl-vm/init
"#
);

/// The userland's init (Debian's `/bin/sh`, from the share): the usual mounts with every
/// writable place on tmpfs, kernel mode's loader in `/usr/libexec/pawl` (root-owned, on a
/// tmpfs, as in the systemd boot; no rule runs it: the scenarios do), systemd-udevd (no systemd as PID 1), a trigger of what exists
/// so far, the driver, power off.
const USERLAND_INIT: &str = r#"#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var/tmp
# Kernel mode's loader, root-owned where the package installs it.
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /usr/libexec/pawl
cp /pawl-vm/pawl-kernel-attach /usr/libexec/pawl/
chmod 755 /usr/libexec/pawl/pawl-kernel-attach
echo 1 > /proc/sys/kernel/printk
echo "pawl-vm: userland up at $(cut -d' ' -f1 /proc/uptime) s of uptime"
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add --subsystem-match=input --subsystem-match=misc
udevadm settle --timeout=60
echo "pawl-vm: udev settled at $(cut -d' ' -f1 /proc/uptime) s of uptime"
echo "pawl-vm: driver starting"
/pawl-vm/pawl-vm-driver --pawl /pawl-vm/pawl --recordings /pawl-vm/recordings --work /tmp/pawl-vm $(cat /pawl-vm/args)
echo "pawl-vm: driver exit status $?"
/pawl-vm/busybox poweroff -f
"#;

/// The systemd boot's `/init` in its initramfs: as [`USERLAND_INITRAMFS_INIT`], then tmpfs
/// where the read-only root needs writable places (`/run` — systemd skips mounting an
/// already mounted one —, `/tmp`, `/var/…`, and `/usr/libexec/pawl`, where the loader goes
/// root-owned as the package installs it), the boot's units in `/run/systemd/system`, and
/// systemd as PID 1 starting `pawl-vm.target` (multi-user plus the driver's service).
const SYSTEMD_INITRAMFS_INIT: &str = concat!(
    initramfs_prologue!(),
    r#"mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run
for d in tmp var/tmp; do
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/$d
done
for d in var/log var/lib/systemd var/cache usr/libexec/pawl; do
    mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/$d
done
cp /newroot/pawl-vm/pawl-kernel-attach /newroot/usr/libexec/pawl/
chmod 755 /newroot/usr/libexec/pawl/pawl-kernel-attach
mkdir -p /newroot/run/systemd/system
cp -a /newroot/pawl-vm/systemd/. /newroot/run/systemd/system/
echo "pawl-vm: initramfs done at $(cut -d' ' -f1 /proc/uptime) s of uptime"
mount --move /dev /newroot/dev
umount /sys
umount /proc
exec switch_root /newroot /lib/systemd/systemd --unit=pawl-vm.target --show-status=false --log-level=warning
"#
);

/// The systemd boot's units, written to `/run/systemd/system` by its initramfs: the target
/// PID 1 starts, the driver's service (after multi-user: logind, dbus, udevd and the
/// coldplug are up; its output on the serial console), and masks: no getty on the serial
/// console (it would print between result lines), and the two once-after-an-update
/// services that write into `/etc` (read-only here; on an installed system they do not run
/// on an ordinary boot either).
const SYSTEMD_UNITS: &[(&str, &str)] = &[
    (
        "pawl-vm.target",
        "[Unit]
Description=pawl VM scenarios
Requires=multi-user.target
Wants=pawl-vm.service
After=multi-user.target
AllowIsolate=yes
",
    ),
    (
        "pawl-vm.service",
        "[Unit]
Description=pawl-vm-driver: the systemd boot's scenarios, then power off
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/pawl-vm/run-driver
StandardInput=null
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no
",
    ),
];

/// Units the systemd boot masks (see [`SYSTEMD_UNITS`]).
const SYSTEMD_MASKED: &[&str] = &[
    "serial-getty@ttyS0.service",
    "systemd-hwdb-update.service",
    "ldconfig.service",
];

/// The systemd boot's driver script (`pawl-vm.service`'s `ExecStart`): the driver, its
/// status, power off.
const SYSTEMD_RUN_DRIVER: &str = r#"#!/bin/sh
echo "pawl-vm: systemd reached multi-user at $(cut -d' ' -f1 /proc/uptime) s of uptime"
echo "pawl-vm: driver starting"
/pawl-vm/pawl-vm-driver --pawl /pawl-vm/pawl --recordings /pawl-vm/recordings --work /tmp/pawl-vm $(cat /pawl-vm/args)
echo "pawl-vm: driver exit status $?"
/pawl-vm/busybox poweroff -f
"#;

/// `contrib/` files the systemd boot's share carries: the udev rules and pawl's units, which
/// its scenarios install where the package does.
fn contrib_for_systemd(project: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let dir = project.join("contrib");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).with_context(|| format!("read {}", dir.display()))? {
        let path = e?.path();
        let wanted = path
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| matches!(x, "rules" | "service" | "mount" | "path"));
        if wanted && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The userland boot: a tiny initramfs (busybox, modules) that switches to the Debian
/// `root` over 9p; the binaries, recordings, the udev rule and the init come from a share
/// written fresh into `out_dir/share` (the cached root stays as built).
#[allow(
    clippy::too_many_arguments,
    reason = "one call site, each argument distinct"
)]
fn userland_boot(
    kernel: &Kernel,
    debian_root: &Path,
    project: &Path,
    (pawl, driver): (&Path, &Path),
    recordings: &Path,
    (set, filters): (Set, &[String]),
    out_dir: &Path,
    timeout: Duration,
) -> anyhow::Result<Run> {
    // The systemd boot's files apart from the userland boot's (both may run per kernel).
    let suffix = if set == Set::Systemd {
        "systemd"
    } else {
        "userland"
    };
    let share = out_dir.join(if set == Set::Systemd {
        "share-systemd"
    } else {
        "share"
    });
    let initramfs = out_dir.join(format!("initramfs-{suffix}.cpio"));
    util::step(
        &format!("userland share and initramfs ({})", kernel.version),
        || {
            let _ = std::fs::remove_dir_all(&share);
            std::fs::create_dir_all(share.join("recordings"))?;
            std::fs::create_dir_all(share.join("contrib"))?;
            let copy = |from: &Path, to: &str| {
                std::fs::copy(from, share.join(to))
                    .with_context(|| format!("copy {} to the share", from.display()))
            };
            copy(pawl, "pawl")?;
            copy(driver, "pawl-vm-driver")?;
            copy(Path::new("/bin/busybox"), "busybox")?;
            copy(
                &project.join("contrib/70-pawl.rules"),
                "contrib/70-pawl.rules",
            )?;
            // Kernel mode's loader: the init puts it where the package does.
            copy(
                &pawl.with_file_name("pawl-kernel-attach"),
                "pawl-kernel-attach",
            )?;
            if set == Set::Systemd {
                for f in contrib_for_systemd(project)? {
                    let name = f.file_name().unwrap_or_default().to_string_lossy();
                    copy(&f, &format!("contrib/{name}"))?;
                }
                let units = share.join("systemd");
                std::fs::create_dir_all(&units)?;
                for (name, text) in SYSTEMD_UNITS {
                    std::fs::write(units.join(name), text)?;
                }
                for name in SYSTEMD_MASKED {
                    std::os::unix::fs::symlink("/dev/null", units.join(name))?;
                }
                let run = share.join("run-driver");
                std::fs::write(&run, SYSTEMD_RUN_DRIVER)?;
                std::fs::set_permissions(
                    &run,
                    std::os::unix::fs::PermissionsExt::from_mode(0o755),
                )?;
            }
            for (name, data) in recording_files(recordings)? {
                std::fs::write(share.join("recordings").join(name), data)?;
            }
            let init = share.join("init");
            std::fs::write(&init, USERLAND_INIT)?;
            std::fs::set_permissions(&init, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
            let mut args = vec!["--set".to_owned(), set.flag().to_owned()];
            args.extend(filters.iter().cloned());
            std::fs::write(share.join("args"), driver_args(&args))?;

            let mut c = Cpio::default();
            for d in [
                "bin",
                "dev",
                "proc",
                "sys",
                "etc",
                "etc/pawl-vm",
                "lib",
                "lib/modules",
            ] {
                c.dir(d, 0o755);
            }
            let init = if set == Set::Systemd {
                SYSTEMD_INITRAMFS_INIT
            } else {
                USERLAND_INITRAMFS_INIT
            };
            c.file("init", 0o755, init.as_bytes());
            c.file("bin/busybox", 0o755, &std::fs::read("/bin/busybox")?);
            c.symlink("bin/sh", "busybox");
            let wanted: Vec<&str> = USERLAND_MODULES.iter().chain(MODULES).copied().collect();
            let mut order = String::new();
            for m in resolve_modules(kernel, &wanted)? {
                let name = format!("{}.ko", module_name(&m));
                c.file(&format!("lib/modules/{name}"), 0o644, &module_bytes(&m)?);
                order.push_str(&name);
                order.push('\n');
            }
            c.file("etc/pawl-vm/modules", 0o644, order.as_bytes());
            let bytes = c.finish();
            std::fs::write(&initramfs, &bytes)
                .with_context(|| format!("write {}", initramfs.display()))?;
            eprintln!(
                "{} ({:.1} MiB); modules: {}",
                initramfs.display(),
                bytes.len() as f64 / (1024.0 * 1024.0),
                order.split_whitespace().collect::<Vec<_>>().join(" ")
            );
            Ok(())
        },
    )?;
    let serial_log = out_dir.join(format!("serial-{suffix}.log"));
    let (root_fs, share_fs) = (virtfs(debian_root, "root"), virtfs(&share, "share"));
    let qemu_args = ["-virtfs", &root_fs, "-virtfs", &share_fs, "-nic", "none"];
    let mut run = None;
    util::step(
        &format!(
            "qemu ({}, {} scenarios, Debian userland)",
            kernel.version,
            set.flag()
        ),
        || {
            run = Some(boot_qemu(
                kernel,
                &initramfs,
                &serial_log,
                timeout,
                USERLAND_MEMORY_MB,
                &qemu_args,
            )?);
            Ok(())
        },
    )?;
    let run = run.expect("boot returned");
    report_times(&run, &serial_log);
    Ok(run)
}

/// QEMU's `-virtfs` value sharing the host directory `path` read-only as 9p tag `tag`.
pub(crate) fn virtfs(path: &Path, tag: &str) -> String {
    format!(
        "local,path={},mount_tag={tag},security_model=passthrough,readonly=on",
        path.display()
    )
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

/// `wanted` (e.g. [`MODULES`]) and their dependencies from `modules.dep`, dependencies
/// first, as paths in the modules directory; modules built into the kernel are left out.
fn resolve_modules(kernel: &Kernel, wanted: &[&str]) -> anyhow::Result<Vec<String>> {
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
    for want in wanted {
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
    boot_qemu(kernel, initramfs, serial_log, timeout, "512", qemu_args)
}

/// [`boot_with`] with `memory_mb` of guest memory.
fn boot_qemu(
    kernel: &Kernel,
    initramfs: &Path,
    serial_log: &Path,
    timeout: Duration,
    memory_mb: &str,
    qemu_args: &[&str],
) -> anyhow::Result<Run> {
    let mut log = std::fs::File::create(serial_log)
        .with_context(|| format!("create {}", serial_log.display()))?;
    let start = Instant::now();
    let mut child = Command::new("qemu-system-x86_64")
        .args([
            "-accel",
            "tcg",
            "-cpu",
            "max",
            "-m",
            memory_mb,
            "-nographic",
        ])
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
                if line.starts_with("PASS ")
                    || line.starts_with("FAIL ")
                    || line.starts_with("SKIP ")
                {
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

/// The `PASS` count and the problems of `run`: a timeout, a driver error, any `FAIL`, or
/// results that differ from `expected`.
/// `hid_bpf`: the kernel is the HID-BPF tier's. A `SKIP name: reason` line says a scenario
/// does not apply to this kernel; it is accepted (printed, counted as neither passed nor
/// failed) only when its reason is [`SKIP_OUTSIDE_HID_BPF`] outside that tier or
/// [`SKIP_ON_HID_BPF`] on it, and fails the run otherwise.
fn judge(run: &Run, expected: &[String], hid_bpf: bool) -> (usize, Vec<String>) {
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
        } else if line.starts_with("SKIP ") {
            let reason = line.split_once(": ").map_or("", |(_, r)| r);
            let allowed = if hid_bpf {
                SKIP_ON_HID_BPF
            } else {
                SKIP_OUTSIDE_HID_BPF
            };
            if reason.starts_with(allowed) {
                eprintln!("{line}");
            } else {
                problems.push(format!("{line} (not an accepted skip on this kernel)"));
            }
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
    (passed, problems)
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
    fn kernel_flag_and_filters_are_told_apart() {
        let a = parse_args(&["--kernel".into(), "hid-bpf".into(), "udev".into()]).unwrap();
        assert_eq!(a.kernel.as_deref(), Some("hid-bpf"));
        assert_eq!(a.filters, ["udev"]);
        assert!(parse_args(&["Bad-Filter".into()]).is_err());
        assert!(parse_args(&["--kernel".into()]).is_err());
    }

    #[test]
    fn set_flags_pick_boots_and_unknown_sets_are_refused() {
        let a = parse_args(&["--set".into(), "systemd".into(), "--set=base".into()]).unwrap();
        assert_eq!(a.sets, [Set::Systemd, Set::Base]);
        assert!(a.filters.is_empty());
        assert!(parse_args(&["--set".into(), "all".into()]).is_err());
        assert!(parse_args(&["--set".into()]).is_err());
    }

    #[test]
    fn a_kernel_is_selected_by_tier_or_release_substring() {
        assert!(kernel_selected(None, "installed", Some("6.1.0-57-amd64")));
        assert!(kernel_selected(
            Some("installed"),
            "installed",
            Some("6.1.0-57-amd64")
        ));
        assert!(!kernel_selected(
            Some("hid-bpf"),
            "installed",
            Some("6.1.0-57-amd64")
        ));
        assert!(kernel_selected(
            Some("7.3"),
            "hid-bpf",
            Some("7.3.4+deb13-amd64")
        ));
        assert!(!kernel_selected(
            Some("7.3"),
            "installed",
            Some("6.1.0-57-amd64")
        ));
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
        assert_eq!(
            judge(&run(&["PASS a", "PASS b"]), &expected, true),
            (2, vec![])
        );
        let (passed, problems) = judge(&run(&["PASS a", "FAIL b: x"]), &expected, true);
        assert_eq!((passed, problems.len()), (1, 1));
        assert!(!judge(&run(&["PASS a"]), &expected, true).1.is_empty());
        assert!(
            !judge(&run(&["PASS a", "PASS b", "PASS c"]), &expected, true)
                .1
                .is_empty()
        );
    }

    #[test]
    fn a_skip_is_accepted_only_on_the_kernels_it_names() {
        let run = Run {
            boot: Some(Duration::from_secs(1)),
            scenarios: Some(Duration::from_secs(1)),
            total: Duration::from_secs(2),
            results: vec![
                "PASS a".into(),
                "SKIP b: needs HID-BPF: kernel 6.1 has no struct hid_bpf_ops".into(),
                "SKIP c: needs a kernel without HID-BPF: kernel 7.3.4 has HID-BPF".into(),
            ],
            driver_status: Some(0),
            timed_out: false,
        };
        let expected = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        // Outside the tier b's skip is fine, c's is not; on it, the other way round.
        assert_eq!(judge(&run, &expected, false).1.len(), 1);
        assert_eq!(judge(&run, &expected, true).1.len(), 1);
        assert_eq!(judge(&run, &expected, true).0, 1);
    }
}
