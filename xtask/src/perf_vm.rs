//! `cargo xtask perf-vm [--quick]`: the measured report, PERFORMANCE.md. Boots the `vm-test` VM
//! (same kernel, initramfs, QEMU TCG) with the driver in its `--perf` mode, where pawl and
//! its peers — a minimal C forwarder (`contrib/perf/forwarder.c`), kanata and xremap from
//! crates.io, built static — each handle their own uhid MX Master 3S through the same
//! workloads, measured from `/proc`; adds `cargo xtask bench-instructions`; writes
//! `PERFORMANCE.md` at the repository root.
//!
//! The VM runs the HID-BPF tier's kernel (Debian's newest packaged kernel with
//! `CONFIG_HID_BPF=y`, [`kernels::hid_bpf_kernel`], 7.3.4 today) for every row: pawl's
//! kernel mode exists only there, and one boot keeps every row comparable. The
//! driver also measures the kernel-side cost of pawl's HID-BPF program (guest instructions
//! per input report with the program attached and without it, `PERF-KCOST` lines).
//!
//! The `vm-test` userland boot's Debian root ([`userland::ensure_root`], cached) is attached
//! read-only over virtio 9p (tag [`DEBIAN_ROOT_TAG`]): the driver runs sway from it and
//! measures pawl with `[[app]]` tables on sway's IPC beside the other rows (`pawl-apps`).
//! Without the root that row is reported unavailable and the rest runs as before.
//!
//! `--quick` (a trial of the machinery): 5 % of the frames, 10 s of idle, and the report
//! goes to `target/perf-vm/PERFORMANCE.md` instead.
//!
//! Peers are built once and cached under `target/peers/bin` (delete it to rebuild); one
//! that cannot be built or cannot forward the mouse is reported as such and the run goes
//! on. Environment: `PAWL_VM_TIMEOUT_SECS` (default 1500) bounds the VM run.
//!
//! QEMU runs with `-icount shift=0,sleep=on` ([`QEMU_ARGS`]): guest time is guest
//! instructions while the vCPU runs, so the CPU figures count instructions and do not
//! depend on the host's load (callgrind for `bench-instructions` runs meanwhile).
//!
//! A benchmark, not a test: it fails only when the VM run breaks or pawl's output checks
//! fail (except the stress at equal priority, which is reported), never because a target
//! is missed (the report says by how much).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::cpio::Cpio;
use crate::vm;
use crate::{kernels, userland, util};

/// Peers from crates.io: name and pinned version (pinned so reruns compare like with like).
const CRATES_PEERS: &[(&str, &str)] = &[("kanata", "1.11.0"), ("xremap", "0.15.17")];

/// The C forwarder's source.
const FORWARDER_SOURCE: &str = "contrib/perf/forwarder.c";

/// Debian packages beyond the VM's: the C forwarder's compiler and static libc.
const PACKAGES: &[&str] = &["gcc", "libc6-dev"];

/// logiops, the HID++ peer: Debian's package and version (bookworm's; pinned so reruns
/// compare like with like).
const LOGIOPS: (&str, &str) = ("logiops", "0.3.1-1");

/// Fetched with `apt-get download` beside logiops and unpacked with it (never installed on
/// the host): the libraries of `logid` and the system bus it needs (`dbus-daemon`) that a
/// Debian 12 host may lack. Every other library `ldd` names is the host's (the same
/// release's packages).
const LOGIOPS_DEBS: &[&str] = &[
    "libconfig++9v5",
    "libevdev2",
    "libglib2.0-0",
    "dbus-daemon",
    "libdbus-1-3",
    "libexpat1",
];

/// The multiarch library directory of the guest's dynamic binaries (logid, dbus-daemon).
const GUEST_LIB_DIR: &str = "lib/x86_64-linux-gnu";

/// QEMU arguments beyond `vm-test`'s: with `-icount shift=0` the guest clock advances
/// exactly 1 ns per executed guest instruction while the vCPU runs (and with real time while
/// it sleeps, `sleep=on`), so CPU time measured in the guest is a count of instructions,
/// independent of how busy the host is (a shared host otherwise shows up as guest CPU).
const QEMU_ARGS: &[&str] = &["-icount", "shift=0,sleep=on"];

/// The 9p mount tag of the Debian root in the guest (`pawl-vm-driver --perf --debian-root`).
const DEBIAN_ROOT_TAG: &str = "debian";

/// The targets the report holds pawl to.
const TARGET_RSS_KIB: f64 = 4096.0;
const TARGET_THREADS: f64 = 2.0;
const TARGET_INSTRUCTIONS: f64 = 150.0;
const TARGET_CPU_RATIO: f64 = 0.5;

pub fn perf_vm(args: &[String]) -> anyhow::Result<()> {
    let total = Instant::now();
    let root = util::project_root()?;
    let quick = match args {
        [] => false,
        [a] if a == "--quick" => true,
        _ => bail!("usage: cargo xtask perf-vm [--quick]"),
    };
    let mut timings: Vec<(String, f64)> = Vec::new();
    let mut timed = |name: &str, f: &mut dyn FnMut() -> anyhow::Result<()>| {
        let t = Instant::now();
        let res = util::step(name, f);
        timings.push((name.to_string(), t.elapsed().as_secs_f64()));
        res
    };

    let mut packages: Vec<&str> = vm::PACKAGES.to_vec();
    packages.extend_from_slice(PACKAGES);
    timed("debian packages", &mut || {
        util::ensure_debian_packages(&packages)
    })?;
    let target = vm::target_dir(&root);
    let mut kernel = None;
    timed("HID-BPF kernel (Debian package, cached)", &mut || {
        kernel = Some(kernels::hid_bpf_kernel(&target)?);
        Ok(())
    })?;
    let kernel = kernel.expect("step ran");
    timed(
        "static build of pawl, pawl-vm-driver and pawl-kernel-attach",
        &mut vm::build_static,
    )?;
    let bin_dir = target.join(vm::TARGET).join("release");
    let (pawl, driver) = (bin_dir.join("pawl"), bin_dir.join("pawl-vm-driver"));

    let peers_dir = target.join("peers");
    let mut peers: Vec<PeerBuild> = Vec::new();
    timed("peers (C forwarder, kanata, xremap, logiops)", &mut || {
        peers = build_peers(&root, &peers_dir);
        Ok(())
    })?;

    let mut debian_root = None;
    timed("Debian userland root with sway (cached)", &mut || {
        match userland::ensure_root(&target) {
            Ok(r) => debian_root = Some(r),
            Err(e) => eprintln!("perf-vm: no Debian root, so no pawl-apps row: {e:#}"),
        }
        Ok(())
    })?;

    // Callgrind runs on the host while the VM runs: with `-icount` the guest's figures do
    // not depend on the host's load, and the two together take the time of the longer.
    let bench_started = Instant::now();
    let bench_thread = std::thread::spawn(bench_instructions);

    let out_dir = target.join("perf-vm");
    std::fs::create_dir_all(&out_dir)?;
    let initramfs = out_dir.join("initramfs.cpio");
    let recordings = vm::recordings_dir(&root)?;
    let (scale, idle) = if quick { ("0.05", "10") } else { ("1", "150") };
    let mut driver_args: Vec<String> = [
        "--perf",
        "--peers",
        "/peers",
        "--idle-secs",
        idle,
        "--scale",
        scale,
    ]
    .map(String::from)
    .to_vec();
    if debian_root.is_some() {
        driver_args.extend(["--debian-root".to_string(), DEBIAN_ROOT_TAG.to_string()]);
    }
    timed("initramfs", &mut || {
        let mut bytes = vm::initramfs_bytes_with(
            &kernel,
            &pawl,
            &driver,
            &recordings,
            &driver_args,
            vm::USERLAND_MODULES,
        )?;
        // A second archive appended to the first: the kernel unpacks both.
        let mut c = Cpio::default();
        for d in ["peers", "lib", GUEST_LIB_DIR, "lib64", "run"] {
            c.dir(d, 0o755);
        }
        for p in &peers {
            let Ok(bin) = &p.binary else { continue };
            let name = bin.file_name().unwrap_or_default().to_string_lossy();
            let data = std::fs::read(bin).with_context(|| format!("read {}", bin.display()))?;
            c.file(&format!("peers/{name}"), 0o755, &data);
            for (guest, host) in &p.extra {
                // Symbolic links on the host (libfoo.so.1 → libfoo.so.1.2.3) become the
                // file itself under the name the binary asks for.
                let data =
                    std::fs::read(host).with_context(|| format!("read {}", host.display()))?;
                c.file(guest, 0o755, &data);
            }
        }
        bytes.extend_from_slice(&c.finish());
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
        .map_or(Duration::from_secs(1500), Duration::from_secs);
    let serial_log = out_dir.join("serial.log");
    let load_at_start = load_average();
    let mut qemu_args: Vec<String> = QEMU_ARGS.iter().map(|a| a.to_string()).collect();
    if let Some(root) = &debian_root {
        qemu_args.extend(["-virtfs".to_string(), vm::virtfs(root, DEBIAN_ROOT_TAG)]);
    }
    let qemu_args: Vec<&str> = qemu_args.iter().map(String::as_str).collect();
    let mut run = None;
    timed("qemu (perf run)", &mut || {
        run = Some(vm::boot_with(
            &kernel,
            &initramfs,
            &serial_log,
            timeout,
            &qemu_args,
        )?);
        Ok(())
    })?;
    let run = run.expect("boot ran");
    let bench = bench_thread
        .join()
        .unwrap_or_else(|_| "(bench-instructions panicked)".into());
    timings.push((
        "cargo xtask bench-instructions (during the VM run)".into(),
        bench_started.elapsed().as_secs_f64(),
    ));
    let serial = std::fs::read_to_string(&serial_log)
        .with_context(|| format!("read {}", serial_log.display()))?;
    let results = Results::parse(&serial);

    let env = Env {
        commit: git(&root, &["rev-parse", "--short=12", "HEAD"]),
        dirty: !git(&root, &["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        date: command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        host_cpu: host_cpu(),
        qemu: command_line("qemu-system-x86_64", &["--version"]),
        kernel: kernel.version.clone(),
        boot_secs: run.boot.map(|d| d.as_secs_f64()),
        vm_secs: run.total.as_secs_f64(),
        quick,
        host_load: (load_at_start, load_average()),
    };
    timings.push(("perf-vm total".into(), total.elapsed().as_secs_f64()));
    let report = render(&env, &peers, &results, &bench, &timings);
    let report_path = if quick {
        out_dir.join("PERFORMANCE.md")
    } else {
        root.join("PERFORMANCE.md")
    };
    std::fs::write(&report_path, &report)
        .with_context(|| format!("write {}", report_path.display()))?;
    eprintln!("perf-vm: wrote {}", report_path.display());
    for line in headlines(&results) {
        eprintln!("perf-vm: {line}");
    }
    eprintln!(
        "perf-vm: total {:.0} s (VM {:.0} s); serial log {}",
        total.elapsed().as_secs_f64(),
        run.total.as_secs_f64(),
        serial_log.display()
    );

    ensure!(
        !run.timed_out,
        "the VM run timed out (PAWL_VM_TIMEOUT_SECS)"
    );
    ensure!(
        results.ended,
        "the driver did not finish the measurements (see {})",
        serial_log.display()
    );
    let failed: Vec<String> = results
        .rows
        .iter()
        .filter(|r| {
            PAWLS.contains(&r.tool.as_str()) && r.workload != "stress-equal" && r.check != "ok"
        })
        .map(|r| format!("{} {}: {}", r.tool, r.workload, r.check))
        .chain(results.errors.iter().filter(|e| is_pawl_error(e)).cloned())
        .collect();
    ensure!(failed.is_empty(), "{}", failed.join("\n"));
    Ok(())
}

/// Whether a `PERF-ERROR` line (after its prefix) is one of pawl's rows.
fn is_pawl_error(e: &str) -> bool {
    PAWLS.iter().any(|p| e.starts_with(&format!("tool={p} ")))
}

/// A peer binary for the VM, or why there is none.
#[derive(Debug)]
struct PeerBuild {
    name: String,
    /// What was built: version or source.
    what: String,
    binary: Result<PathBuf, String>,
    /// More files for the guest: path in the initramfs (no leading `/`), host file.
    extra: Vec<(String, PathBuf)>,
}

fn build_peers(root: &Path, dir: &Path) -> Vec<PeerBuild> {
    let bin = dir.join("bin");
    let mut out = Vec::new();
    let forwarder = bin.join("forwarder");
    let built = std::fs::create_dir_all(&bin)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            let log = dir.join("forwarder-build.log");
            run_logged(
                Command::new("gcc")
                    .args(["-O2", "-static", "-Wall", "-o"])
                    .arg(&forwarder)
                    .arg(root.join(FORWARDER_SOURCE)),
                &log,
            )
        })
        .map(|()| forwarder);
    out.push(PeerBuild {
        name: "c-forwarder".into(),
        what: format!("{FORWARDER_SOURCE}, gcc -O2 -static"),
        binary: built,
        extra: Vec::new(),
    });
    for (name, version) in CRATES_PEERS {
        let exe = bin.join(name);
        let stamp = dir.join(format!("{name}.version"));
        let cached =
            exe.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|v| v.trim() == *version);
        let binary = if cached {
            eprintln!("{name} {version}: cached at {}", exe.display());
            Ok(exe)
        } else {
            eprintln!("{name} {version}: cargo install (static, {})", vm::TARGET);
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let log = dir.join(format!("{name}-build.log"));
            run_logged(
                Command::new(cargo)
                    .env("RUSTFLAGS", "-C target-feature=+crt-static")
                    .args(["install", "--locked", "--root"])
                    .arg(dir)
                    .args(["--target", vm::TARGET, "--version", version, name]),
                &log,
            )
            .and_then(|()| {
                ensure_file(&exe)?;
                std::fs::write(&stamp, version).map_err(|e| e.to_string())?;
                Ok(exe)
            })
        };
        if let Err(e) = &binary {
            eprintln!("{name}: not available: {e}");
        }
        out.push(PeerBuild {
            name: name.to_string(),
            what: format!("{name} {version} from crates.io, `cargo install --locked`, static"),
            binary,
            extra: Vec::new(),
        });
    }
    out.push(logiops(dir));
    out
}

/// logiops for the guest: [`LOGIOPS`] and [`LOGIOPS_DEBS`] fetched with `apt-get download`
/// into `dir/logiops/debs` and unpacked with `dpkg -x` into `dir/logiops/root` (cached:
/// delete the directory to fetch again); `logid` and `dbus-daemon` go to `/peers`, every
/// shared library `ldd` lists for them (the unpacked ones first, then the host's) to
/// `/lib/x86_64-linux-gnu`, the dynamic loader to `/lib64`.
fn logiops(dir: &Path) -> PeerBuild {
    let (package, version) = LOGIOPS;
    let base = dir.join("logiops");
    let root = base.join("root");
    let stamp = base.join("version");
    let fetched = if std::fs::read_to_string(&stamp).is_ok_and(|v| v.trim() == version)
        && root.join("usr/bin/logid").is_file()
    {
        eprintln!("{package} {version}: cached at {}", root.display());
        Ok(())
    } else {
        fetch_debs(&base, &root, package, version)
            .and_then(|()| std::fs::write(&stamp, version).map_err(|e| e.to_string()))
    };
    let mut extra = Vec::new();
    let binary = fetched.and_then(|()| {
        let logid = root.join("usr/bin/logid");
        let dbus = root.join("usr/bin/dbus-daemon");
        ensure_file(&logid)?;
        ensure_file(&dbus)?;
        extra.push(("peers/dbus-daemon".to_string(), dbus.clone()));
        let mut libs = BTreeMap::new();
        for bin in [&logid, &dbus] {
            for (guest, host) in shared_libraries(bin, &root)? {
                libs.insert(guest, host);
            }
        }
        extra.extend(libs);
        Ok(logid)
    });
    if let Err(e) = &binary {
        eprintln!("{package}: not available: {e}");
    }
    PeerBuild {
        name: "logiops".into(),
        what: format!(
            "Debian's `{package}` {version} (`apt-get download`, `dpkg -x`; not installed on the host), `logid` with its shared libraries and `dbus-daemon`"
        ),
        binary,
        extra,
    }
}

/// `apt-get download` of `package`=`version` and [`LOGIOPS_DEBS`] into `base/debs`, each
/// unpacked into `root`.
fn fetch_debs(base: &Path, root: &Path, package: &str, version: &str) -> Result<(), String> {
    let debs = base.join("debs");
    let _ = std::fs::remove_dir_all(&debs);
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(&debs).map_err(|e| format!("{}: {e}", debs.display()))?;
    let log = base.join("download.log");
    run_logged(
        Command::new("apt-get")
            .arg("download")
            .arg(format!("{package}={version}"))
            .args(LOGIOPS_DEBS)
            .current_dir(&debs),
        &log,
    )
    .map_err(|e| format!("{e} (is `apt-get update` done?)"))?;
    let files = std::fs::read_dir(&debs).map_err(|e| e.to_string())?;
    for deb in files.flatten().map(|e| e.path()) {
        if deb.extension().is_some_and(|x| x == "deb") {
            run_logged(
                Command::new("dpkg").arg("-x").arg(&deb).arg(root),
                &base.join("dpkg.log"),
            )?;
        }
    }
    Ok(())
}

/// The shared libraries `bin` loads (`ldd`, with the unpacked `root`'s library
/// directories searched first): `(path in the initramfs, host file)`, the dynamic loader
/// under `lib64/`, every other library under [`GUEST_LIB_DIR`] by the name it is asked for.
fn shared_libraries(bin: &Path, root: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let search = [
        root.join("usr/lib/x86_64-linux-gnu"),
        root.join("lib/x86_64-linux-gnu"),
    ]
    .map(|p| p.display().to_string())
    .join(":");
    let out = Command::new("ldd")
        .arg(bin)
        .env("LD_LIBRARY_PATH", search)
        .output()
        .map_err(|e| format!("cannot run ldd: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "ldd {} exited with {}: {}",
            bin.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse_ldd(&String::from_utf8_lossy(&out.stdout))
        .map_err(|e| format!("ldd {}: {e}", bin.display()))
}

/// `ldd`'s output as `(path in the initramfs, host file)`; a library it did not find is
/// an error naming it.
fn parse_ldd(text: &str) -> Result<Vec<(String, PathBuf)>, String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some((name, rest)) = line.split_once(" => ") {
            if rest.starts_with("not found") {
                return Err(format!("{name} not found"));
            }
            let host = rest.split(" (").next().unwrap_or(rest).trim();
            out.push((format!("{GUEST_LIB_DIR}/{name}"), PathBuf::from(host)));
        } else if let Some(path) = line.split(" (").next()
            && path.starts_with('/')
        {
            // The dynamic loader, by the absolute path the binaries name.
            out.push((
                path.trim_start_matches('/').to_string(),
                PathBuf::from(path),
            ));
        }
    }
    Ok(out)
}

fn ensure_file(p: &Path) -> Result<(), String> {
    if p.is_file() {
        Ok(())
    } else {
        Err(format!("{} missing after the build", p.display()))
    }
}

/// Runs `cmd` with its output in `log`; an error quotes the last lines.
fn run_logged(cmd: &mut Command, log: &Path) -> Result<(), String> {
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let status = cmd
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file)
        .status()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("error"))
        .take(5)
        .collect();
    Err(format!(
        "{:?} exited with {status}: {} (full log {})",
        cmd.get_program(),
        tail.join(" | "),
        log.display()
    ))
}

/// The output of `cargo xtask bench-instructions` (run as a child of this xtask), or why
/// there is none.
fn bench_instructions() -> String {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return format!("(not run: {e})"),
    };
    match Command::new(exe)
        .arg("bench-instructions")
        .stderr(Stdio::inherit())
        .output()
    {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim_end().to_string(),
        Ok(o) => format!(
            "(failed: {})\n{}",
            o.status,
            String::from_utf8_lossy(&o.stdout).trim_end()
        ),
        Err(e) => format!("(not run: {e})"),
    }
}

fn git(root: &Path, args: &[&str]) -> String {
    Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// The host's 1-minute load average (`/proc/loadavg`).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn host_cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown", |(_, v)| v.trim())
        .to_string();
    let cores = info.lines().filter(|l| l.starts_with("processor")).count();
    format!("{model}, {cores} logical CPUs")
}

/// Facts about the run for the report's environment section.
#[derive(Debug)]
struct Env {
    commit: String,
    dirty: bool,
    date: String,
    host_cpu: String,
    qemu: String,
    kernel: String,
    boot_secs: Option<f64>,
    vm_secs: f64,
    quick: bool,
    /// The host's 1-minute load average when the VM started and when it ended
    /// (`/proc/loadavg`).
    host_load: (Option<f64>, Option<f64>),
}

/// One `PERF` line.
#[derive(Clone, Debug, Default)]
struct Row {
    tool: String,
    workload: String,
    fields: BTreeMap<String, String>,
    /// `ok` or `FAIL <reason>`.
    check: String,
}

impl Row {
    fn num(&self, key: &str) -> f64 {
        self.fields
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    }
}

/// Everything the driver printed.
#[derive(Debug, Default)]
struct Results {
    env: BTreeMap<String, String>,
    /// `PERF-TOOL` lines: tool → (fields, note).
    tools: BTreeMap<String, (BTreeMap<String, String>, String)>,
    rows: Vec<Row>,
    /// `PERF-ERROR` lines (after the prefix).
    errors: Vec<String>,
    /// `PERF-STOP`: tool → status.
    stops: BTreeMap<String, String>,
    /// `PERF-KCOST` lines: the kernel-side cost of pawl's HID-BPF program.
    kcost: Vec<Row>,
    /// Why the kernel-side cost was not measured (`PERF-KCOST status=unavailable`).
    kcost_unavailable: Option<String>,
    ended: bool,
}

fn fields(s: &str) -> BTreeMap<String, String> {
    s.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl Results {
    fn parse(serial: &str) -> Results {
        let mut r = Results::default();
        for line in serial.lines().map(str::trim_end) {
            if let Some(rest) = line.strip_prefix("PERF-ENV ") {
                r.env = fields(rest);
            } else if let Some(rest) = line.strip_prefix("PERF-TOOL ") {
                let (head, note) = rest.split_once(" note=").unwrap_or((rest, ""));
                let f = fields(head);
                let tool = f.get("tool").cloned().unwrap_or_default();
                r.tools.insert(tool, (f, note.to_string()));
            } else if let Some(rest) = line.strip_prefix("PERF ") {
                let (head, check) = rest
                    .split_once(" check=")
                    .unwrap_or((rest, "FAIL no check"));
                let f = fields(head);
                r.rows.push(Row {
                    tool: f.get("tool").cloned().unwrap_or_default(),
                    workload: f.get("workload").cloned().unwrap_or_default(),
                    check: check.to_string(),
                    fields: f,
                });
            } else if let Some(rest) = line.strip_prefix("PERF-KCOST ") {
                if let Some(note) = rest.strip_prefix("status=unavailable note=") {
                    r.kcost_unavailable = Some(note.to_string());
                    continue;
                }
                let (head, check) = rest
                    .split_once(" check=")
                    .unwrap_or((rest, "FAIL no check"));
                let f = fields(head);
                r.kcost.push(Row {
                    tool: f.get("program").cloned().unwrap_or_default(),
                    workload: f.get("report").cloned().unwrap_or_default(),
                    check: check.to_string(),
                    fields: f,
                });
            } else if let Some(rest) = line.strip_prefix("PERF-ERROR ") {
                r.errors.push(rest.to_string());
            } else if let Some(rest) = line.strip_prefix("PERF-STOP ") {
                let f = fields(rest.split(" note=").next().unwrap_or(rest));
                if let (Some(t), Some(s)) = (f.get("tool"), f.get("status")) {
                    r.stops.insert(t.clone(), s.clone());
                }
            } else if line.trim() == "PERF-END" {
                r.ended = true;
            }
        }
        r
    }

    fn row(&self, tool: &str, workload: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.tool == tool && r.workload == workload)
    }

    /// The `PERF-KCOST` line of `report` (`motion`, `wheel`) with the program `on`/`off`.
    fn kcost(&self, report: &str, program: &str) -> Option<&Row> {
        self.kcost
            .iter()
            .find(|r| r.workload == report && r.tool == program)
    }
}

/// Guest instructions per report of a `PERF-KCOST` line: `(writer's, the program's own
/// per run)`.
fn kcost_per_report(r: &Row) -> (f64, f64) {
    (
        r.num("writer_ns") / r.num("reports"),
        r.num("prog_ns") / r.num("prog_runs"),
    )
}

/// One sentence: what pawl in kernel mode costs itself per motion frame, per wheel frame
/// (gesture button up) and per gesture-drag notification (button held).
fn kernel_mode_summary(res: &Results) -> Option<String> {
    let parts: Vec<String> = [
        ("movement", "motion frame"),
        ("scroll", "wheel frame"),
        ("gesture-drag", "gesture-drag notification"),
    ]
    .iter()
    .filter_map(|(workload, what)| {
        let r = res.row("pawl-kernel", workload)?;
        let p = per_frame(r);
        Some(format!(
            "per {what} {} reads, {} writes, {} context switches, {} k instructions (check {})",
            f(p.reads, 3),
            f(p.writes, 3),
            f(p.vcsw + p.ivcsw, 3),
            f(p.cpu_us, 2),
            r.check
        ))
    })
    .collect();
    (!parts.is_empty()).then(|| format!("pawl in kernel mode: {}", parts.join("; ")))
}

/// One sentence: pawl with `[[app]]` tables on sway, idle, per motion and wheel frame against
/// the defaults, and per focus change.
fn per_app_summary(res: &Results) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(r) = res.row("pawl-apps", "idle") {
        parts.push(format!(
            "idle {} s: {} context switches, {} reads, {} ticks",
            f(r.num("secs"), 0),
            r.num("vcsw") + r.num("ivcsw"),
            r.num("syscr"),
            r.num("cpu_ticks")
        ));
    }
    for (workload, what) in [("movement", "motion"), ("scroll", "wheel")] {
        let Some(a) = res.row("pawl-apps", workload) else {
            continue;
        };
        let p = per_frame(a);
        let base = res.row("pawl", workload).map(per_frame);
        parts.push(format!(
            "per {what} frame {} reads + {} writes, {} k instructions ({} pawl's defaults; check {})",
            f(p.reads, 3),
            f(p.writes, 3),
            f(p.cpu_us, 2),
            base.map_or("–".into(), |b| ratio(p.cpu_us, b.cpu_us)),
            a.check
        ));
    }
    if let Some(r) = res.row("pawl-apps", "focus-change") {
        let p = per_frame(r);
        parts.push(format!(
            "per focus change {} context switches, {} reads (check {})",
            f(p.vcsw + p.ivcsw, 2),
            f(p.reads, 2),
            r.check
        ));
    }
    (!parts.is_empty()).then(|| format!("pawl with `[[app]]` tables on sway: {}", parts.join("; ")))
}

/// One sentence: what the HID-BPF program adds to the kernel per motion and wheel report.
fn kcost_summary(res: &Results) -> Option<String> {
    let parts: Vec<String> = ["motion", "wheel"]
        .iter()
        .filter_map(|report| {
            let (off, _) = kcost_per_report(res.kcost(report, "off")?);
            let (on, own) = kcost_per_report(res.kcost(report, "on")?);
            Some(format!(
                "{:+.0} guest instructions per {report} report ({} instead of {}: {}; its own run {})",
                on - off,
                f(on, 0),
                f(off, 0),
                ratio(on, off),
                f(own, 0)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "The HID-BPF program, attached, costs the kernel (uhid write to evdev): {}",
            parts.join("; ")
        )
    })
}

/// What the HID-BPF program costs the kernel per input report: the
/// writer's instructions per report without and with the program, the difference, and the
/// program's own run time from the kernel's BPF statistics.
fn kernel_cost_section(w: &mut String, res: &Results) {
    let _ = writeln!(
        w,
        "## Kernel mode: what the HID-BPF program costs the kernel\n"
    );
    if let Some(note) = &res.kcost_unavailable {
        let _ = writeln!(w, "Not measured in this run: {note}.\n");
        return;
    }
    if res.kcost.is_empty() {
        let _ = writeln!(w, "Not measured in this run (no `PERF-KCOST` line).\n");
        return;
    }
    let _ = writeln!(
        w,
        "pawl's program (crates/pawl-bpf, `struct_ops/hid_device_event`) attached by the loader alone (`pawl-kernel-attach add <HID> --uid 0`; no pawl running), on an MX Master 3S of its own, before any measured program starts, with a reader on its evdev node as a compositor has; its settings written as pawl's daemon writes them: first pass-through (the wheel transform off: the program reads every report and changes none, as the loader leaves it until pawl starts), then pawl's defaults (the wheel inverted and smoothed in the kernel). The kernel handles a uhid input report synchronously in the writer's `write` (uhid → `hid_input_report` → HID-BPF, where the program runs → hid-logitech-hidpp → hid-input → evdev), so the writer thread's CPU time around each write (`CLOCK_THREAD_CPUTIME_ID`; under `-icount` guest instructions) is that whole path plus the two clock reads; the difference from the run without the program is what the program adds. \"program's own\" is the kernel's BPF statistics (`kernel.bpf_stats_enabled`: `run_time_ns` / `run_cnt` of the program, the same guest clock, its trampoline's entry and exit included). Reports paced as a mouse sends them (motion at 200 Hz, one-detent wheel reports at 120 Hz, 100 down then 100 up).\n"
    );
    let _ = writeln!(
        w,
        "| report | reports | without the program: instr./report | attached, pass-through | attached, transforming | added: pass-through | added: transforming | program's own, instr./run: pass-through / transforming | frames out: without / pass-through / transforming | checks |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    for (report, label) in [("motion", "motion"), ("wheel", "wheel (one detent)")] {
        let (Some(off), Some(on)) = (res.kcost(report, "off"), res.kcost(report, "on")) else {
            continue;
        };
        let pass = res.kcost(report, "pass");
        let (off_w, _) = kcost_per_report(off);
        let (on_w, on_own) = kcost_per_report(on);
        let (pass_w, pass_own) = pass.map_or((f64::NAN, f64::NAN), kcost_per_report);
        let added = |x: f64| {
            if x.is_finite() {
                format!("{:+.0} ({})", x - off_w, ratio(x, off_w))
            } else {
                "–".into()
            }
        };
        let checks = [Some(off), pass, Some(on)]
            .iter()
            .flatten()
            .map(|r| format!("{} {}", r.tool, r.check))
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(
            w,
            "| {label} | {} | {} | {} | {} | {} | {} | {} / {} | {} / {} / {} | {checks} |",
            on.num("reports"),
            f(off_w, 0),
            f(pass_w, 0),
            f(on_w, 0),
            added(pass_w),
            added(on_w),
            f(pass_own, 0),
            f(on_own, 0),
            off.num("frames_out"),
            pass.map_or("–".into(), |p| p.num("frames_out").to_string()),
            on.num("frames_out"),
        );
    }
    let _ = writeln!(w);
}

/// Measured tools in report order.
const TOOLS: &[&str] = &[
    "pawl",
    "pawl-apps",
    "pawl-hidpp-off",
    "pawl-kernel",
    "c-forwarder",
    "kanata",
    "xremap",
    "logiops",
];

/// pawl's rows: its defaults (grab + HID++), with `[hidpp] enabled = false` (grab only),
/// in kernel mode (HID-BPF), and with `[[app]]` tables on sway (grab + HID++).
const PAWLS: &[&str] = &["pawl", "pawl-hidpp-off", "pawl-kernel", "pawl-apps"];
/// The peers a user would pick instead of pawl (the C forwarder is a baseline).
const PEERS: &[&str] = &["kanata", "xremap"];

/// Per-frame figures of one row.
#[derive(Clone, Copy, Debug)]
struct PerFrame {
    cpu_us: f64,
    reads: f64,
    writes: f64,
    vcsw: f64,
    ivcsw: f64,
}

fn per_frame(r: &Row) -> PerFrame {
    let n = r.num("frames_in");
    PerFrame {
        cpu_us: r.num("runtime_ns") / 1000.0 / n,
        reads: r.num("syscr") / n,
        writes: r.num("syscw") / n,
        vcsw: r.num("vcsw") / n,
        ivcsw: r.num("ivcsw") / n,
    }
}

/// The best (lowest CPU per frame) peer's row of `workload`.
fn best_peer<'a>(res: &'a Results, workload: &str) -> Option<&'a Row> {
    PEERS
        .iter()
        .filter_map(|t| res.row(t, workload))
        .filter(|r| r.check == "ok" && per_frame(r).cpu_us.is_finite())
        .min_by(|a, b| per_frame(a).cpu_us.total_cmp(&per_frame(b).cpu_us))
}

fn ratio(a: f64, b: f64) -> String {
    if a.is_finite() && b.is_finite() && b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "–".into()
    }
}

fn f(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "–".into()
    }
}

fn kib_to_mib(k: f64) -> String {
    f(k / 1024.0, 2)
}

/// One line per headline figure (for the terminal and the issue note).
fn headlines(res: &Results) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) = res.row("pawl", "idle") {
        out.push(format!(
            "idle {} s: pawl CPU {} ns ({} ticks), context switches {}, syscalls {}",
            f(r.num("secs"), 0),
            r.num("runtime_ns"),
            r.num("cpu_ticks"),
            r.num("vcsw") + r.num("ivcsw"),
            r.num("syscr") + r.num("syscw")
        ));
    }
    if let Some(r) = res.row("pawl", "movement") {
        let p = per_frame(r);
        let mut line = format!(
            "movement {} frames: pawl {} read + {} write per frame, {} µs CPU per frame (TCG), {} context switches per frame, VmHWM {} MiB, {} thread(s), check {}",
            r.num("frames_in"),
            f(p.reads, 3),
            f(p.writes, 3),
            f(p.cpu_us, 1),
            f(p.vcsw + p.ivcsw, 2),
            kib_to_mib(r.num("hwm_kib")),
            r.num("threads"),
            r.check
        );
        if let Some(c) = res.row("c-forwarder", "movement") {
            let _ = write!(
                line,
                "; {} the C forwarder",
                ratio(p.cpu_us, per_frame(c).cpu_us)
            );
        }
        if let Some(b) = best_peer(res, "movement") {
            let _ = write!(
                line,
                "; {} the best peer ({})",
                ratio(p.cpu_us, per_frame(b).cpu_us),
                b.tool
            );
        }
        out.push(line);
    }
    for w in ["gesture-held", "scroll", "stress"] {
        if let Some(r) = res.row("pawl", w) {
            out.push(format!("{w}: pawl check {}", r.check));
        }
    }
    if let Some(cost) = hidpp_cost(res) {
        out.push(cost);
    }
    if let Some(a) = per_app_summary(res) {
        out.push(a);
    }
    if let Some(k) = kernel_mode_summary(res) {
        out.push(k);
    }
    if let Some(k) = kcost_summary(res) {
        out.push(k);
    }
    if let Some(r) = res.row("logiops", "movement") {
        let p = per_frame(r);
        out.push(format!(
            "movement: logiops {} reads + {} writes, {} context switches, {} k instructions per frame, check {}",
            f(p.reads, 3),
            f(p.writes, 3),
            f(p.vcsw + p.ivcsw, 3),
            f(p.cpu_us, 1),
            r.check
        ));
    }
    out
}

/// The report.
fn render(
    env: &Env,
    peers: &[PeerBuild],
    res: &Results,
    bench: &str,
    timings: &[(String, f64)],
) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "# PERFORMANCE\n");
    let _ = writeln!(
        w,
        "Generated by `cargo xtask perf-vm` ({}); the file is its output, not edited by hand. \
         Every figure below comes from one boot of the test VM, with pawl and its peers \
         handling the same virtual MX Master 3S through the same workloads.\n",
        if env.quick {
            "`--quick` trial: scaled-down workloads, not the published report"
        } else {
            "full run"
        }
    );
    let _ = writeln!(
        w,
        "**The VM runs under QEMU TCG (software emulation), which is much slower than \
         hardware: read the counts (system calls, context switches per frame) and the ratios \
         between programs measured in the same run, not absolute times.** With `-icount \
         shift=0` the guest clock advances exactly 1 ns per guest instruction while the vCPU \
         runs, so a \"CPU µs\" below is a count of guest instructions (kernel work on the \
         program's behalf included) in thousands — independent of the host's load. \
         Instructions are not time: on hardware, system-call entry and exit, context switches \
         and cache misses cost more than their instruction counts say.\n"
    );

    // Environment.
    let _ = writeln!(w, "## Environment\n");
    let _ = writeln!(w, "| | |\n|---|---|");
    let _ = writeln!(
        w,
        "| commit | `{}`{} |",
        env.commit,
        if env.dirty {
            " (with uncommitted changes)"
        } else {
            ""
        }
    );
    let _ = writeln!(w, "| date | {} |", env.date);
    let _ = writeln!(w, "| host CPU | {} |", env.host_cpu);
    let cpus = env
        .host_cpu
        .rsplit_once(", ")
        .and_then(|(_, n)| n.split_whitespace().next()?.parse::<f64>().ok());
    let load = |l: Option<f64>| l.map_or("?".into(), |l| f(l, 2));
    let loaded = match (env.host_load, cpus) {
        ((Some(a), Some(b)), Some(n)) if a.max(b) >= n => {
            " — **the host was loaded** (other work shared its CPUs): the wall-clock times in this table are longer than on a quiet host; the guest-instruction counts (`-icount`) and the syscall and context-switch counts are not affected"
        }
        ((Some(_), Some(_)), Some(_)) => " (a quiet host)",
        _ => "",
    };
    let _ = writeln!(
        w,
        "| host load | 1-minute load average {} when the VM started, {} when it ended{loaded} |",
        load(env.host_load.0),
        load(env.host_load.1)
    );
    let _ = writeln!(
        w,
        "| QEMU | {}; `-accel tcg -cpu max -m 512 {}`, {} vCPU |",
        env.qemu,
        QEMU_ARGS.join(" "),
        res.env.get("cpus").map_or("?", String::as_str)
    );
    let _ = writeln!(
        w,
        "| guest Meltdown mitigation | {} |",
        res.env
            .get("meltdown")
            .map_or("?".into(), |m| m.replace('_', " "))
    );
    let _ = writeln!(
        w,
        "| guest kernel | {} (Debian's newest packaged kernel with `CONFIG_HID_BPF=y`, from {}: `cargo xtask vm-test`'s HID-BPF tier; every row runs on it, since pawl's kernel mode needs HID-BPF and one boot keeps the rows comparable) |",
        res.env
            .get("kernel")
            .map_or(env.kernel.as_str(), String::as_str),
        kernels::SUITE
    );
    let _ = writeln!(
        w,
        "| guest CPU model | {} |",
        res.env
            .get("cpu_model")
            .map_or("?".into(), |m| m.replace('_', " "))
    );
    let _ = writeln!(
        w,
        "| clock tick | {} Hz (`utime`+`stime` resolution {} ms) |",
        res.env.get("clk_tck").map_or("?", String::as_str),
        res.env
            .get("clk_tck")
            .and_then(|h| h.parse::<f64>().ok())
            .map_or("?".into(), |h| f(1000.0 / h, 0))
    );
    let _ = writeln!(
        w,
        "| VM boot | {} s to the driver; VM run {} s |",
        env.boot_secs.map_or("?".into(), |b| f(b, 1)),
        f(env.vm_secs, 0)
    );
    let steps: Vec<String> = timings
        .iter()
        .map(|(n, t)| format!("{n} {t:.0} s"))
        .collect();
    let _ = writeln!(w, "| perf-vm steps | {} |\n", steps.join("; "));

    // Configuration.
    let _ = writeln!(w, "## Configuration\n");
    let _ = writeln!(
        w,
        "Each program gets its own uhid device built from the real MX Master 3S Bluetooth \
         report descriptor (`hidreport--libinput-issue996-0005-046D-B034-0.rdesc`, \
         0005:046d:b034), bound by the kernel's hid-logitech-hidpp as on a user's machine: \
         the driver's HID++ probe (ping, name, battery, 0x2121 set to high resolution) is \
         answered by the emulated MX Master 3S (`pawl_hidpp::emulator`, its feature table \
         from Solaar's record of a real 3S), the event node is \"Logitech MX Master 3S\", \
         and the wheel reports 1/15 detents that the driver turns into `REL_WHEEL_HI_RES` \
         8 each. All mice exist before any program starts, and all are the same mouse; \
         each program stays on its own by ownership, as a seat's udev rule decides on a \
         user's machine: pawl (both rows) and logid run as users of their own that own \
         exactly their mouse's evdev and hidraw nodes (every other node is root's, 0600), \
         the grabbing peers run as root and open only the node they are given. The \
         grabbing programs re-emit through uinput; logid grabs nothing (the pointer goes \
         from the kernel to the compositor), so its output is the mouse's own event node. \
         A reader thread in the driver reads each output device as soon as anything \
         arrives and checks every frame. Counters are read \
         from `/proc/PID` of the program: `stat` (`utime`+`stime`, clock ticks), \
         `task/*/schedstat` (CPU time in ns, summed over threads: the \"CPU\" columns), \
         `task/*/status` (voluntary and involuntary context switches, summed over threads), \
         `io` (`syscr`/`syscw`: read- and write-like system calls; `epoll_wait`, `poll`, \
         `select` and `ioctl` are not counted), `status` (`VmRSS`, `VmHWM`, `Threads`; \
         the first two come from approximate counters (split or per-CPU, folded in \
         batches), so they can show too little for a small process) and `smaps_rollup` (`Rss` from the page \
         tables, exact when read). A \
         workload's figures are the growth from its first report to its last expected \
         output frame plus 300 ms.\n"
    );
    let _ = writeln!(w, "| program | build | configuration |\n|---|---|---|");
    let _ = writeln!(
        w,
        "| pawl | `cargo build --release`, static (`+crt-static`) | `pawl run`, defaults (an empty config file): the MX Master's pointer node grabbed (its scroll is transformed) and, with `[hidpp] enabled = true`, its HID++ endpoint (`/dev/hidrawN`) read for the gesture button, 0x00C3 diverted with raw XY |"
    );
    let _ = writeln!(
        w,
        "| pawl-hidpp-off | the same binary | `pawl run` with `[hidpp] enabled = false`: the pointer node grabbed, no hidraw |"
    );
    let kernel_status = match res.tools.get("pawl-kernel") {
        Some((t, note)) if t.get("status").map(String::as_str) != Some("ok") => {
            format!(" **not measured**: {}", short_note(note))
        }
        None => " **not measured** (no result from the VM)".into(),
        _ => String::new(),
    };
    let _ = writeln!(
        w,
        "| pawl-kernel | the same binary, and `pawl-kernel-attach` (static) | kernel mode: `pawl-kernel-attach add <HID> --uid <pawl's user>` attaches pawl's HID-BPF program to the mouse (as the udev rule does), then `pawl run` with the defaults: the wheel transformed in the kernel, the gesture's HID++ notifications on the program's ring, nothing grabbed (the output is the mouse's own node), hidraw opened only to divert 0x00C3 |{kernel_status}"
    );
    let apps_status = match res.tools.get("pawl-apps") {
        Some((t, note)) if t.get("status").map(String::as_str) != Some("ok") => {
            format!(" **not measured**: {}", short_note(note))
        }
        None => " **not measured** (no result from the VM)".into(),
        _ => String::new(),
    };
    let _ = writeln!(
        w,
        "| pawl-apps | the same binary | `pawl run` with the defaults plus two `[[app]]` tables (README's examples: `pawl-game` changes scroll, `pawl-browser` gestures and buttons), as sway's user with `SWAYSOCK` set: grab + HID++ as the defaults, and the focus backend is sway's IPC; sway runs headless beside it with the windows `pawl-game` and `pawl-browser`, the browser focused |{apps_status}"
    );
    for p in peers {
        let config = match p.name.as_str() {
            "c-forwarder" => "`forwarder /dev/input/eventN`: grab, blocking `read`, one `write` per frame".to_string(),
            "kanata" => "`kanata --nodelay --no-wait -c kanata.kbd` with `(defcfg linux-dev /dev/input/eventN process-unmapped-keys no) (defsrc esc) (deflayer base esc)`: nothing mapped, so motion and buttons go through `write_raw` and the wheel through its `scroll`".to_string(),
            "xremap" => "`xremap --mouse --device /dev/input/eventN xremap.yml` with `enable_wheel: true`, empty `keymap` and `modmap`".to_string(),
            "logiops" => format!(
                "`logid -c logid.cfg` (version {}): the gesture button (`cid: 0xc3`) does `Gestures` (left/right/up/down: a key chord, none: nothing), so logid diverts 0x00C3 with raw XY as pawl does; logid 0.3.1 needs a D-Bus system bus, so a `dbus-daemon` from the same download runs beside it (its own process, not counted); logid grabs nothing",
                res.tools
                    .get("logiops")
                    .and_then(|(t, _)| t.get("version"))
                    .map_or("?", String::as_str)
            ),
            _ => String::new(),
        };
        let status = match (&p.binary, res.tools.get(&p.name)) {
            (Err(e), _) => format!("**not built**: {e}"),
            (Ok(_), Some((t, note))) if t.get("status").map(String::as_str) != Some("ok") => {
                format!("**could not forward the mouse**: {note}")
            }
            (Ok(_), None) => "**not started** (no result from the VM)".into(),
            _ => String::new(),
        };
        let _ = writeln!(w, "| {} | {} | {config} {status} |", p.name, p.what);
    }
    let _ = writeln!(w);
    let e = &res.env;
    let g = |k: &str| e.get(k).map_or("?", String::as_str).to_string();
    let _ = writeln!(
        w,
        "Workloads (in this order, one program at a time after the idle window; the paced ones on an absolute schedule, but never two reports less than half a period apart, as a device never sends them: a writer stalled by a loaded host would otherwise catch up in bursts):\n"
    );
    let _ = writeln!(
        w,
        "- **idle**: {} s of VM time with nothing happening, all programs at once, 5 s after the last one started;",
        g("idle_secs")
    );
    let _ = writeln!(
        w,
        "- **movement**: {} motion reports at 200 Hz, gesture button up, every frame different from its neighbours (±1…50 px); every frame must come out exactly once, unchanged, in order;",
        g("movement")
    );
    let _ = writeln!(
        w,
        "- **gesture-held**: gesture button (5, `BTN_FORWARD`, as a plain button in the mouse report, not a HID++ notification) down, {} motions of 1 px (below the 220 px threshold) at 200 Hz, button up; pawl must fire nothing, move nothing, pass the click through on release and keep running; the grabbing peers have no gesture and pass everything through, and logid, which acts on the diverted 0x00C3 notification only, leaves the plain button and the motion to the kernel;",
        g("held")
    );
    let _ = writeln!(
        w,
        "- **gesture-drag** (the programs that divert the gesture button: pawl's defaults, pawl in kernel mode, logid): the button as the 3S sends it once diverted — a 0x1B04 diverted-buttons notification (0x00C3 down), {} raw-XY notifications of 1 px at 200 Hz, a diverted-buttons notification (released); nothing may reach the pointer and pawl must fire nothing (below the 220 px threshold) and keep running; per injected notification;",
        g("held")
    );
    let _ = writeln!(
        w,
        "- **scroll**: {} wheel reports at 120 Hz, 100 notches down then 100 up, each 15 counts of the high-resolution wheel (the driver makes each a `REL_WHEEL_HI_RES` ±120 + `REL_WHEEL` ±1 frame); one wheel frame out per report — pawl's inverted and smoothed (its defaults), the peers' unchanged;",
        g("scroll")
    );
    let _ = writeln!(
        w,
        "- **stress**: {} motion reports and, from a second thread at the same time, {} wheel reports, both as fast as the driver can write, the writer threads under `SCHED_IDLE` (they get the CPU the program and the reader leave, as hardware input does: a woken program preempts them at once; nice 19 did that on 6.1's CFS but not on the EEVDF scheduler of 6.6+, where a running writer keeps its slice and fills the grabbed device's evdev buffer first); nothing may be lost and the output's reader must see no `SYN_DROPPED`;",
        g("stress_motion"),
        g("stress_wheel")
    );
    let _ = writeln!(
        w,
        "- **stress-equal**: the same with the writers at the programs' priority: two greedy writers against one program on one vCPU, where whether the grabbed device's evdev buffer in the kernel (128 events, about 40 motion frames) overflows depends on the scheduler as much as on the program; the same check, reported without failing the run;"
    );
    let _ = writeln!(
        w,
        "- **focus-change** (pawl-apps only, after its movement and scroll): `swaymsg '[app_id=…] focus'` {} times, alternately to `pawl-game` and `pawl-browser`, 250 ms apart; per focus change; afterwards `pawl status` must name the last window and its profile.\n",
        res.row("pawl-apps", "focus-change")
            .map_or("20".into(), |r| r.num("frames_in").to_string())
    );

    // Targets.
    let _ = writeln!(w, "## Targets\n");
    let _ = writeln!(w, "| target | measured (pawl) | verdict |\n|---|---|---|");
    for (target, measured, verdict) in targets(res, bench) {
        let _ = writeln!(w, "| {target} | {measured} | {verdict} |");
    }
    let _ = writeln!(w);

    gesture_button_section(w, res);
    kernel_cost_section(w, res);
    per_app_section(w, res);

    // Idle table.
    let _ = writeln!(w, "## Idle\n");
    let _ = writeln!(
        w,
        "Growth of each counter over the idle window (target: 0 for CPU, context switches and system calls).\n"
    );
    let _ = writeln!(
        w,
        "| program | window s | CPU ns | CPU ticks | voluntary cs | involuntary cs | syscr | syscw | VmRSS MiB | Rss (smaps) MiB | threads | check |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for t in TOOLS {
        if let Some(r) = res.row(t, "idle") {
            let _ = writeln!(
                w,
                "| {t} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                f(r.num("secs"), 1),
                r.num("runtime_ns"),
                r.num("cpu_ticks"),
                r.num("vcsw"),
                r.num("ivcsw"),
                r.num("syscr"),
                r.num("syscw"),
                kib_to_mib(r.num("rss_kib")),
                kib_to_mib(r.num("rss_smaps_kib")),
                r.num("threads"),
                r.check
            );
        }
    }
    let _ = writeln!(w);

    for (workload, title, note) in [
        (
            "movement",
            "Movement",
            "Per motion frame. Ratios are CPU per frame against the C forwarder (the least a grabbing forwarder does) and against the best peer (kanata or xremap, whichever used less).",
        ),
        (
            "gesture-held",
            "Gesture held",
            "Per injected report (button down, the motions, button up). pawl swallows the motions; the peers forward them.",
        ),
        (
            "gesture-drag",
            "Gesture drag (HID++)",
            "Per injected notification (button down, the raw-XY reports, button up), for the programs that divert the gesture button. Grab + HID++ pawl and logid read each from hidraw; kernel-mode pawl is woken through the program's ring (a ring buffer read from shared memory after `epoll_wait`, neither of which `syscr` counts).",
        ),
        ("scroll", "Scroll", "Per wheel report."),
        (
            "stress",
            "Stress",
            "Per injected report, writers under `SCHED_IDLE`. A program reads several frames per `read` when reports queue up, so reads per frame can fall below 1. pawl's wheel output is fewer frames than reports by design: its burst rule (wheel events within 2 ms of a burst's first share one max step, 5 detents) limits a free-spinning wheel, and this wheel spins far faster than any real one; its check requires inverted output within the max step instead of a count.",
        ),
        (
            "stress-equal",
            "Stress at equal priority",
            "Per injected report, writers at the programs' priority (the same check as the stress; a failure here is reported, it does not fail `perf-vm`).",
        ),
    ] {
        workload_table(w, res, workload, title, note);
    }

    let _ = writeln!(
        w,
        "## Instructions per frame (`cargo xtask bench-instructions`)\n"
    );
    let _ = writeln!(w, "```text\n{bench}\n```\n");

    let _ = writeln!(w, "## Conclusion\n");
    for line in conclusion(res, bench) {
        let _ = writeln!(w, "- {line}");
    }
    let stops: Vec<String> = res.stops.iter().map(|(t, s)| format!("{t} {s}")).collect();
    if !stops.is_empty() {
        let _ = writeln!(
            w,
            "\nExit statuses on SIGTERM at the end: {}.",
            stops.join(", ")
        );
    }
    if !res.errors.is_empty() {
        let _ = writeln!(w, "\nErrors during the run:\n");
        for e in &res.errors {
            let _ = writeln!(w, "- `{e}`");
        }
    }
    if !res.ended {
        let _ = writeln!(
            w,
            "\n**The run did not finish** (no `PERF-END` from the driver): tables are partial."
        );
    }
    s
}

fn workload_table(w: &mut String, res: &Results, workload: &str, title: &str, note: &str) {
    let Some(pawl) = res.row("pawl", workload) else {
        let _ = writeln!(w, "## {title}\n\nNo result for pawl.\n");
        return;
    };
    let _ = writeln!(
        w,
        "## {title} ({} reports, {} s of VM time for pawl)\n\n{note}\n",
        pawl.num("frames_in"),
        f(pawl.num("secs"), 1)
    );
    let base = res.row("c-forwarder", workload).map(per_frame);
    let best = best_peer(res, workload);
    let extra_keys: Vec<&String> = pawl
        .fields
        .keys()
        .filter(|k| ["motion_out", "hires_out", "lores_out", "wheel_out"].contains(&k.as_str()))
        .collect();
    let mut header = "| program | frames out | CPU µs/frame (k instr.) | × C forwarder | × best peer | ticks | reads/frame | writes/frame | vol. cs/frame | invol. cs/frame | SYN_DROPPED".to_string();
    for k in &extra_keys {
        let _ = write!(header, " | {}", k.replace('_', " "));
    }
    let _ = writeln!(
        w,
        "{header} | VmHWM MiB | Rss (smaps) MiB | threads | check |"
    );
    let cols = 14 + extra_keys.len();
    let _ = writeln!(w, "|{}", "---|".repeat(cols + 1));
    for t in TOOLS {
        let Some(r) = res.row(t, workload) else {
            continue;
        };
        let p = per_frame(r);
        let mut line = format!(
            "| {t} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}",
            r.num("frames_out"),
            f(p.cpu_us, 1),
            base.map_or("–".into(), |b| ratio(p.cpu_us, b.cpu_us)),
            best.map_or("–".into(), |b| ratio(p.cpu_us, per_frame(b).cpu_us)),
            r.num("cpu_ticks"),
            f(p.reads, 3),
            f(p.writes, 3),
            f(p.vcsw, 3),
            f(p.ivcsw, 3),
            r.num("dropped")
        );
        for k in &extra_keys {
            let _ = write!(line, " | {}", r.fields.get(*k).map_or("–", String::as_str));
        }
        let _ = writeln!(
            line,
            " | {} | {} | {} | {} |",
            kib_to_mib(r.num("hwm_kib")),
            kib_to_mib(r.num("rss_smaps_kib")),
            r.num("threads"),
            r.check
        );
        w.push_str(&line);
    }
    if let Some(b) = best {
        let _ = writeln!(w, "\nBest peer here: {}.", b.tool);
    }
    let _ = writeln!(w);
}

/// The rows of the gesture-button comparison, in order: grab only, grab + HID++, logiops,
/// and pawl's kernel mode once `perf-vm` measures it under that name.
const GESTURE_WAYS: &[(&str, &str)] = &[
    (
        "pawl-hidpp-off",
        "pawl, grab only (`[hidpp] enabled = false`)",
    ),
    ("pawl", "pawl, grab + HID++ (defaults)"),
    ("logiops", "logiops 0.3.1 (HID++, no grab)"),
    ("pawl-kernel", "pawl, kernel mode (HID-BPF)"),
];

/// What HID++ adds to pawl per motion frame: pawl's defaults against `[hidpp] enabled =
/// false`, both on the real driver in the same run.
fn hidpp_cost(res: &Results) -> Option<String> {
    let on = per_frame(res.row("pawl", "movement")?);
    let off = per_frame(res.row("pawl-hidpp-off", "movement")?);
    Some(format!(
        "HID++ (`[hidpp] enabled = true`, the default) costs pawl, per motion frame with the gesture button up: {:+.3} reads ({} instead of {}), {:+.3} writes, {:+.3} context switches ({} instead of {}) and {:+.1} k guest instructions ({} instead of {}: {})",
        on.reads - off.reads,
        f(on.reads, 3),
        f(off.reads, 3),
        on.writes - off.writes,
        (on.vcsw + on.ivcsw) - (off.vcsw + off.ivcsw),
        f(on.vcsw + on.ivcsw, 3),
        f(off.vcsw + off.ivcsw, 3),
        on.cpu_us - off.cpu_us,
        f(on.cpu_us, 1),
        f(off.cpu_us, 1),
        ratio(on.cpu_us, off.cpu_us)
    ))
}

/// What `[[app]]` tables with sway running cost pawl: idle, per motion and wheel frame
/// against pawl's defaults without them (the same run), and per focus change.
fn per_app_section(w: &mut String, res: &Results) {
    let _ = writeln!(w, "## Per-application settings on sway\n");
    if !res.rows.iter().any(|r| r.tool == "pawl-apps") {
        let why = res
            .tools
            .get("pawl-apps")
            .map_or("no result from the VM".to_string(), |(_, note)| {
                short_note(note).to_string()
            });
        let _ = writeln!(w, "Not measured in this run: {why}.\n");
        return;
    }
    let _ = writeln!(
        w,
        "pawl-apps is pawl with its defaults and two `[[app]]` tables, run with `SWAYSOCK` set, so its focus backend is sway's IPC (`subscribe [\"window\"]`). sway is Debian 12's, run headless from the `vm-test` userland boot's Debian root (attached over 9p, chrooted), with two Wayland windows of this driver. sway opens no input device here, so it adds no reader to any program's output. The window `pawl-browser` has focus during the idle window, movement and scroll. Its table changes gestures and buttons only, so the scroll rules and the output checks are the defaults'. The pawl rows beside it are pawl's defaults with no `[[app]]` table and no sway connection, in the same run. Counts are summed over all of pawl's threads.\n"
    );
    if let Some(r) = res.row("pawl-apps", "idle") {
        let _ = writeln!(
            w,
            "Idle, {} s with the tables and sway running: {} voluntary and {} involuntary context switches, {} reads, {} writes, {} CPU ticks ({} ns; check {}). The target is 0 for each.\n",
            f(r.num("secs"), 0),
            r.num("vcsw"),
            r.num("ivcsw"),
            r.num("syscr"),
            r.num("syscw"),
            r.num("cpu_ticks"),
            r.num("runtime_ns"),
            r.check
        );
    }
    let _ = writeln!(
        w,
        "| frame | program | k instr./frame | reads/frame | writes/frame | cs/frame | check |\n|---|---|---|---|---|---|---|"
    );
    for (workload, what) in [("movement", "motion"), ("scroll", "wheel")] {
        let base = res.row("pawl", workload);
        let apps = res.row("pawl-apps", workload);
        for (name, r) in [("pawl", base), ("pawl-apps", apps)] {
            let Some(r) = r else { continue };
            let p = per_frame(r);
            let _ = writeln!(
                w,
                "| {what} | {name} | {} | {} | {} | {} | {} |",
                f(p.cpu_us, 2),
                f(p.reads, 3),
                f(p.writes, 3),
                f(p.vcsw + p.ivcsw, 3),
                r.check
            );
        }
        if let (Some(b), Some(a)) = (base, apps) {
            let (b, a) = (per_frame(b), per_frame(a));
            let _ = writeln!(
                w,
                "| {what} | added by the tables and sway | {:+.2} ({}) | {:+.3} | {:+.3} | {:+.3} | |",
                a.cpu_us - b.cpu_us,
                ratio(a.cpu_us, b.cpu_us),
                a.reads - b.reads,
                a.writes - b.writes,
                (a.vcsw + a.ivcsw) - (b.vcsw + b.ivcsw)
            );
        }
    }
    let _ = writeln!(w);
    if let Some(r) = res.row("pawl-apps", "focus-change") {
        let n = r.num("frames_in");
        let p = per_frame(r);
        let _ = writeln!(
            w,
            "One focus change is one `swaymsg '[app_id=…] focus'`, alternately to `pawl-game` and `pawl-browser`, 250 ms apart. Over {n} changes in {} s pawl made {} voluntary and {} involuntary context switches, {} reads and {} writes.\n",
            f(r.num("secs"), 1),
            r.num("vcsw"),
            r.num("ivcsw"),
            r.num("syscr"),
            r.num("syscw")
        );
        let _ = writeln!(
            w,
            "| per focus change | vol. cs | invol. cs | reads | writes | k instr. | check |\n|---|---|---|---|---|---|---|\n| pawl-apps | {} | {} | {} | {} | {} | {} |\n",
            f(p.vcsw, 2),
            f(p.ivcsw, 2),
            f(p.reads, 2),
            f(p.writes, 2),
            f(p.cpu_us, 1),
            r.check
        );
    }
}

/// The three ways to get the MX Master's gesture button side by side:
/// per motion frame and per wheel frame with the button up, and idle.
fn gesture_button_section(w: &mut String, res: &Results) {
    let _ = writeln!(
        w,
        "## The gesture button: grab only, grab + HID++, logiops, kernel mode\n"
    );
    let _ = writeln!(
        w,
        "The MX Master 3S sends nothing for its gesture button unless a program diverts it over HID++ (0x1B04, control 0x00C3); pawl with HID++ off sees it only on firmware that reports it as a plain button. Per frame, from the movement and scroll workloads (gesture button up), the gesture-drag workload (button held: per HID++ notification) and the idle window of this run; \"k instr.\" is thousands of guest instructions (the -icount clock: the program's user and kernel work). Rss is `smaps_rollup`'s, the largest of the program's rows.\n"
    );
    let _ = writeln!(
        w,
        "| way | motion: k instr. | reads | writes | cs | wheel: k instr. | reads | writes | cs | drag: k instr. | reads | writes | cs | idle: CPU ns | syscalls | Rss MiB | threads | checks |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let cell = |r: Option<&Row>| -> [String; 4] {
        match r {
            Some(r) => {
                let p = per_frame(r);
                [
                    f(p.cpu_us, 1),
                    f(p.reads, 3),
                    f(p.writes, 3),
                    f(p.vcsw + p.ivcsw, 3),
                ]
            }
            None => ["–".into(), "–".into(), "–".into(), "–".into()],
        }
    };
    let mut kernel_mode = false;
    for (tool, label) in GESTURE_WAYS {
        let rows: Vec<&Row> = res.rows.iter().filter(|r| r.tool == *tool).collect();
        if rows.is_empty() {
            continue;
        }
        kernel_mode |= *tool == "pawl-kernel";
        let [mc, mr, mw, ms] = cell(res.row(tool, "movement"));
        let [wc, wr, ww, ws] = cell(res.row(tool, "scroll"));
        let [dc, dr, dw, ds] = cell(res.row(tool, "gesture-drag"));
        let (idle_ns, idle_sc) = res.row(tool, "idle").map_or(("–".into(), "–".into()), |r| {
            (
                format!("{}", r.num("runtime_ns")),
                format!("{}", r.num("syscr") + r.num("syscw")),
            )
        });
        let rss = rows
            .iter()
            .map(|r| r.num("rss_smaps_kib"))
            .filter(|v| v.is_finite())
            .fold(f64::NAN, f64::max);
        let threads = rows
            .iter()
            .map(|r| r.num("threads"))
            .filter(|v| v.is_finite())
            .fold(f64::NAN, f64::max);
        let checks: Vec<String> = ["idle", "movement", "scroll", "gesture-drag"]
            .iter()
            .filter_map(|wl| res.row(tool, wl))
            .map(|r| {
                if r.check == "ok" {
                    format!("{} ok", r.workload)
                } else {
                    format!("{} {}", r.workload, r.check)
                }
            })
            .collect();
        let _ = writeln!(
            w,
            "| {label} | {mc} | {mr} | {mw} | {ms} | {wc} | {wr} | {ww} | {ws} | {dc} | {dr} | {dw} | {ds} | {idle_ns} | {idle_sc} | {} | {} | {} |",
            kib_to_mib(rss),
            f(threads, 0),
            checks.join("; ")
        );
    }
    let _ = writeln!(w);
    if let Some(cost) = hidpp_cost(res) {
        let _ = writeln!(w, "{cost}.\n");
    }
    let _ = writeln!(
        w,
        "logid grabs nothing: the pointer's motion and wheel go from the kernel straight to the compositor, and logid is woken by the copy of every report that its hidraw node hands it (HID++ notifications are the only ones it uses). pawl grabs the pointer node because it transforms the MX Master's scroll by default (with `[scroll] scope = \"none\"` and nothing mapped it grabs nothing either, see README).\n"
    );
    if kernel_mode {
        let _ = writeln!(
            w,
            "In kernel mode pawl grabs nothing either: its HID-BPF program transforms the wheel in the kernel (the output is the mouse's own node), so neither motion nor the wheel reaches pawl with the gesture button up; the gesture's HID++ notifications come on the program's ring, read from shared memory after `epoll_wait` (`syscr` counts neither: a woken pawl shows as a context switch, not a read).\n"
        );
    }
    if !kernel_mode {
        let _ = writeln!(
            w,
            "pawl itself in kernel mode (HID-BPF: the wheel transformed in the kernel, pawl woken only by the gesture) is not measured in this run; its row (`pawl-kernel`) goes in this table when it is. What the program costs the kernel is measured (next section).\n"
        );
    }
}

/// Instructions per motion frame (engine) from bench-instructions' target line.
fn engine_instructions(bench: &str) -> Option<f64> {
    let line = bench
        .lines()
        .find(|l| l.starts_with("target:") && l.contains("motion"))?;
    let inner = line.rsplit_once('(')?.1.trim_end_matches(')');
    inner.trim().parse().ok()
}

fn verdict(met: bool, miss: String) -> String {
    if met {
        "met".into()
    } else {
        format!("**missed**: {miss}")
    }
}

/// `(target, measured, verdict)` rows.
fn targets(res: &Results, bench: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if let Some(r) = res.row("pawl", "idle") {
        let cpu = r.num("runtime_ns");
        let ticks = r.num("cpu_ticks");
        let cs = r.num("vcsw") + r.num("ivcsw");
        let sc = r.num("syscr") + r.num("syscw");
        out.push((
            format!(
                "idle growth 0 (CPU, context switches, syscalls) over {} s",
                f(r.num("secs"), 0)
            ),
            format!("CPU {cpu} ns ({ticks} ticks), {cs} context switches, {sc} syscalls"),
            verdict(
                cpu == 0.0 && ticks == 0.0 && cs == 0.0 && sc == 0.0,
                format!("by {cpu} ns CPU, {cs} context switches, {sc} syscalls"),
            ),
        ));
    }
    if let Some(r) = res.row("pawl-apps", "idle") {
        let (cs, reads, ticks) = (
            r.num("vcsw") + r.num("ivcsw"),
            r.num("syscr"),
            r.num("cpu_ticks"),
        );
        out.push((
            format!(
                "idle with `[[app]]` tables and sway running: 0 context switches, 0 reads, 0 CPU ticks over {} s (all threads)",
                f(r.num("secs"), 0)
            ),
            format!("{cs} context switches, {reads} reads, {ticks} ticks"),
            verdict(
                cs == 0.0 && reads == 0.0 && ticks == 0.0 && r.check == "ok",
                format!(
                    "by {cs} context switches, {reads} reads, {ticks} ticks (check {})",
                    r.check
                ),
            ),
        ));
    }
    for (tool, what) in [
        ("pawl", "defaults, `[hidpp] enabled = true`"),
        ("pawl-hidpp-off", "`[hidpp] enabled = false`"),
    ] {
        let Some(r) = res.row(tool, "movement") else {
            continue;
        };
        let p = per_frame(r);
        let extra_reads = r.num("syscr") - r.num("frames_in");
        let why = if tool == "pawl" && extra_reads > 0.0 {
            ": the kernel hands every input report to each hidraw reader, so every motion report is read a second time from the HID++ endpoint"
        } else {
            ""
        };
        out.push((
            format!("exactly 1 read + 1 write per forwarded frame (movement; {what})"),
            format!(
                "{} reads + {} writes per frame",
                f(p.reads, 3),
                f(p.writes, 3)
            ),
            verdict(
                r.num("syscr") == r.num("frames_in") && r.num("syscw") == r.num("frames_in"),
                format!(
                    "by {:+} reads and {:+} writes over {} frames{why}",
                    extra_reads,
                    r.num("syscw") - r.num("frames_in"),
                    r.num("frames_in")
                ),
            ),
        ));
    }
    out.extend(["movement", "scroll"].map(|w| kernel_mode_target(res, w)));
    match engine_instructions(bench) {
        Some(i) => out.push((
            format!("≤ {TARGET_INSTRUCTIONS} engine instructions per motion event"),
            format!("{} (callgrind)", f(i, 1)),
            verdict(
                i <= TARGET_INSTRUCTIONS,
                format!("by {} instructions", f(i - TARGET_INSTRUCTIONS, 1)),
            ),
        )),
        None => out.push((
            format!("≤ {TARGET_INSTRUCTIONS} engine instructions per motion event"),
            "no figure (see the bench-instructions section)".into(),
            "unknown".into(),
        )),
    }
    let pawl_rows: Vec<&Row> = res.rows.iter().filter(|r| r.tool == "pawl").collect();
    if !pawl_rows.is_empty() {
        let max = |key: &str| {
            pawl_rows
                .iter()
                .map(|r| r.num(key))
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max)
        };
        let (hwm, smaps) = (max("hwm_kib"), max("rss_smaps_kib"));
        let peak = hwm.max(smaps);
        out.push((
            "RSS ≤ 4 MiB".into(),
            format!(
                "VmHWM (peak) {} MiB, largest page-table Rss (smaps_rollup) {} MiB",
                kib_to_mib(hwm),
                kib_to_mib(smaps)
            ),
            verdict(
                peak <= TARGET_RSS_KIB,
                format!("by {} MiB", kib_to_mib(peak - TARGET_RSS_KIB)),
            ),
        ));
        let threads = pawl_rows
            .iter()
            .map(|r| r.num("threads"))
            .fold(0.0, f64::max);
        out.push((
            "≤ 2 threads".into(),
            format!("{threads}"),
            verdict(
                threads <= TARGET_THREADS,
                format!("by {}", threads - TARGET_THREADS),
            ),
        ));
    }
    if let (Some(r), Some(b)) = (res.row("pawl", "movement"), best_peer(res, "movement")) {
        let (p, q) = (per_frame(r).cpu_us, per_frame(b).cpu_us);
        let mut floor = res
            .row("c-forwarder", "movement")
            .map_or(String::new(), |c| {
                format!(" (the C forwarder: {})", ratio(per_frame(c).cpu_us, q))
            });
        if let Some(g) = res.row("pawl-hidpp-off", "movement") {
            let _ = write!(
                floor,
                "; pawl with HID++ off {} µs: {}",
                f(per_frame(g).cpu_us, 1),
                ratio(per_frame(g).cpu_us, q)
            );
        }
        out.push((
            format!("CPU per frame ≤ {TARGET_CPU_RATIO}× the best peer (movement)"),
            format!(
                "{} µs vs {} {} µs: {}{floor}",
                f(p, 1),
                b.tool,
                f(q, 1),
                ratio(p, q)
            ),
            verdict(
                p <= TARGET_CPU_RATIO * q,
                format!(
                    "by {} µs per frame ({} instead of ≤ {TARGET_CPU_RATIO}×)",
                    f(p - TARGET_CPU_RATIO * q, 1),
                    ratio(p, q)
                ),
            ),
        ));
    }
    out
}

/// A `PERF-TOOL` note without the program's log (the serial log has it whole).
fn short_note(note: &str) -> &str {
    note.split("; log").next().unwrap_or(note)
}

/// Kernel mode's aim: with the gesture button up, neither pointer motion nor
/// the wheel (transformed in the kernel) reaches pawl — 0 reads, 0 writes, 0 context
/// switches per frame of `workload` (`movement`, `scroll`).
fn kernel_mode_target(res: &Results, workload: &str) -> (String, String, String) {
    let what = if workload == "scroll" {
        "wheel"
    } else {
        "motion"
    };
    let target = format!(
        "kernel mode: 0 reads + 0 writes + 0 context switches per {what} frame, gesture button up ({workload}; `pawl-kernel`)"
    );
    let Some(r) = res.row("pawl-kernel", workload) else {
        let why = res.tools.get("pawl-kernel").map_or(
            "the daemon does not run in kernel mode yet (the program's kernel-side cost is measured: see \"Kernel mode: what the HID-BPF program costs the kernel\")".to_string(),
            |(_, note)| short_note(note).to_string(),
        );
        return (
            target,
            format!("not measured in this run: {why}"),
            "not measured".into(),
        );
    };
    let (reads, writes, cs) = (
        r.num("syscr"),
        r.num("syscw"),
        r.num("vcsw") + r.num("ivcsw"),
    );
    let n = r.num("frames_in");
    (
        target,
        format!(
            "{} reads + {} writes + {} context switches over {n} frames",
            reads, writes, cs
        ),
        verdict(
            reads == 0.0 && writes == 0.0 && cs == 0.0 && r.check == "ok",
            format!(
                "by {reads} reads, {writes} writes, {cs} context switches (check {})",
                r.check
            ),
        ),
    )
}

/// Statements of what was measured, nothing more.
fn conclusion(res: &Results, bench: &str) -> Vec<String> {
    let mut out = Vec::new();
    for tool in PAWLS {
        let checks: Vec<String> = res
            .rows
            .iter()
            .filter(|r| r.tool == *tool && r.workload != "stress-equal")
            .map(|r| {
                if r.check == "ok" {
                    format!("{} ok", r.workload)
                } else {
                    format!("{} {}", r.workload, r.check)
                }
            })
            .collect();
        if !checks.is_empty() {
            out.push(format!("{tool}'s output checks: {}.", checks.join("; ")));
        }
    }
    let missed: Vec<String> = targets(res, bench)
        .into_iter()
        .filter(|(_, _, v)| v != "met")
        .map(|(t, m, v)| format!("{t} ({m}: {v})"))
        .collect();
    let met = targets(res, bench)
        .iter()
        .filter(|(_, _, v)| v == "met")
        .count();
    out.push(if missed.is_empty() {
        format!("All {met} targets met in this run.")
    } else {
        format!("{met} targets met; not met: {}.", missed.join("; "))
    });
    if let Some(r) = res.row("pawl", "movement") {
        let p = per_frame(r);
        let mut cmp = Vec::new();
        for t in [
            "pawl-apps",
            "pawl-hidpp-off",
            "c-forwarder",
            "kanata",
            "xremap",
            "logiops",
        ] {
            if let Some(q) = res.row(t, "movement") {
                let q = per_frame(q);
                cmp.push(format!(
                    "{t} {} µs, {} + {} syscalls, {} context switches per frame (pawl {})",
                    f(q.cpu_us, 1),
                    f(q.reads, 2),
                    f(q.writes, 2),
                    f(q.vcsw + q.ivcsw, 2),
                    ratio(p.cpu_us, q.cpu_us)
                ));
            }
        }
        out.push(format!(
            "Movement, per frame: pawl {} µs of TCG CPU, {} reads + {} writes, {} context switches; {}.",
            f(p.cpu_us, 1),
            f(p.reads, 3),
            f(p.writes, 3),
            f(p.vcsw + p.ivcsw, 2),
            if cmp.is_empty() {
                "no peer measured".into()
            } else {
                cmp.join("; ")
            }
        ));
    }
    if let Some(cost) = hidpp_cost(res) {
        out.push(format!("{cost}."));
    }
    if let Some(a) = per_app_summary(res) {
        out.push(format!("{a}."));
    }
    if let Some(k) = kernel_mode_summary(res) {
        out.push(format!("{k}."));
    }
    if let Some(k) = kcost_summary(res) {
        out.push(format!("{k}."));
    }
    let unavailable: Vec<String> = res
        .tools
        .iter()
        .filter(|(_, (f, _))| f.get("status").map(String::as_str) != Some("ok"))
        .map(|(t, (_, note))| format!("{t} ({note})"))
        .collect();
    if !unavailable.is_empty() {
        out.push(format!("Not measured: {}.", unavailable.join("; ")));
    }
    let equal: Vec<String> = TOOLS
        .iter()
        .filter_map(|t| res.row(t, "stress-equal"))
        .map(|r| {
            format!(
                "{} {} of {}",
                r.tool,
                r.fields.get("motion_out").map_or("?", String::as_str),
                res.env.get("stress_motion").map_or("?", String::as_str)
            )
        })
        .collect();
    if !equal.is_empty() {
        let drops: f64 = TOOLS
            .iter()
            .filter_map(|t| res.row(t, "stress-equal"))
            .map(|r| r.num("dropped"))
            .sum();
        out.push(format!(
            "Stress at equal priority (reported, not required), motion frames out: {}; SYN_DROPPED at the outputs' readers: {drops}. The C forwarder writes every event it reads, so what it lost was dropped by the kernel at the grabbed device.",
            equal.join(", ")
        ));
    }
    let peer_fails: Vec<String> = res
        .rows
        .iter()
        .filter(|r| {
            !PAWLS.contains(&r.tool.as_str()) && r.workload != "stress-equal" && r.check != "ok"
        })
        .map(|r| format!("{} {}: {}", r.tool, r.workload, r.check))
        .collect();
    if !peer_fails.is_empty() {
        out.push(format!(
            "Peers' outputs that were not a faithful pass-through: {}.",
            peer_fails.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERIAL: &str = "\
PERF-ENV kernel=6.1.0-57-amd64 cpus=1 cpu_model=QEMU_TCG_CPU clk_tck=100 idle_secs=150 movement=12000 held=200 scroll=2000 stress_motion=4000 stress_wheel=1000
PERF-TOOL tool=pawl status=ok source=/dev/input/event3 version=pawl_0.0.0
PERF-TOOL tool=kanata status=ok source=/dev/input/event5 version=kanata_1.11.0
PERF-TOOL tool=xremap status=unavailable version=xremap note=exited (exit status: 1) | boom
PERF tool=pawl workload=idle frames_in=0 frames_out=0 secs=150.0 cpu_ticks=0 runtime_ns=0 vcsw=0 ivcsw=0 syscr=0 syscw=0 rss_kib=1800 hwm_kib=1900 threads=1 dropped=0 check=ok
PERF tool=pawl workload=movement frames_in=12000 frames_out=12000 secs=60.0 cpu_ticks=50 runtime_ns=600000000 vcsw=12000 ivcsw=10 syscr=12000 syscw=12000 rss_kib=1800 hwm_kib=1900 threads=1 dropped=0 check=ok
PERF tool=kanata workload=movement frames_in=12000 frames_out=12000 secs=60.0 cpu_ticks=200 runtime_ns=2400000000 vcsw=24000 ivcsw=10 syscr=12000 syscw=48000 rss_kib=5000 hwm_kib=6000 threads=4 dropped=0 check=ok
PERF tool=pawl workload=stress frames_in=5000 frames_out=4990 secs=5.0 cpu_ticks=5 runtime_ns=1 vcsw=1 ivcsw=1 syscr=1 syscw=1 rss_kib=1 hwm_kib=1 threads=1 dropped=2 wheel_out=990 check=FAIL 2 SYN_DROPPED at the output's reader
PERF-STOP tool=pawl status=0
PERF-END
";

    #[test]
    fn driver_lines_parse_into_rows_tools_and_the_end_marker() {
        let r = Results::parse(SERIAL);
        assert!(r.ended);
        assert_eq!(r.env["kernel"], "6.1.0-57-amd64");
        assert_eq!(r.tools["xremap"].1, "exited (exit status: 1) | boom");
        let m = r.row("pawl", "movement").unwrap();
        assert_eq!(m.num("syscw"), 12000.0);
        assert_eq!(
            r.row("pawl", "stress").unwrap().check,
            "FAIL 2 SYN_DROPPED at the output's reader"
        );
        assert_eq!(r.stops["pawl"], "0");
    }

    #[test]
    fn targets_compare_pawl_with_the_best_peer_and_state_misses() {
        let r = Results::parse(SERIAL);
        let bench =
            "target: <= 150 instructions per motion frame with the button up (engine): met (42.0)";
        let t = targets(&r, bench);
        let find = |p: &str| t.iter().find(|(n, _, _)| n.contains(p)).unwrap().2.clone();
        assert_eq!(find("idle growth"), "met");
        assert_eq!(find("1 read + 1 write"), "met");
        assert_eq!(find("instructions"), "met");
        assert_eq!(find("RSS"), "met");
        assert_eq!(find("threads"), "met");
        // 50 µs vs kanata's 200 µs: 0.25×.
        assert_eq!(find("best peer"), "met");
        let report = render(
            &Env {
                commit: "abc".into(),
                dirty: false,
                date: "today".into(),
                host_cpu: "cpu".into(),
                qemu: "QEMU 7.2".into(),
                kernel: "6.1".into(),
                boot_secs: Some(3.0),
                vm_secs: 500.0,
                quick: false,
                host_load: (Some(3.5), Some(1.0)),
            },
            &[],
            &r,
            bench,
            &[],
        );
        assert!(report.contains("| pawl | 12000 | 50.0 |"));
        assert!(report.contains("stress FAIL 2 SYN_DROPPED"));
        assert!(report.contains("Not measured: xremap"));
    }

    /// The gesture-button rows of a run: pawl (grab + HID++), pawl with HID++ off, logiops.
    const GESTURE_SERIAL: &str = "\
PERF-TOOL tool=logiops status=ok source=/dev/input/event9 version=logid_v0.3.1
PERF tool=pawl workload=movement frames_in=1000 frames_out=1000 secs=5.0 cpu_ticks=1 runtime_ns=14000000 vcsw=1000 ivcsw=0 syscr=2000 syscw=1000 rss_kib=1800 hwm_kib=1900 rss_smaps_kib=3200 threads=1 dropped=0 check=ok
PERF tool=pawl-hidpp-off workload=movement frames_in=1000 frames_out=1000 secs=5.0 cpu_ticks=1 runtime_ns=11000000 vcsw=1000 ivcsw=0 syscr=1000 syscw=1000 rss_kib=1700 hwm_kib=1800 rss_smaps_kib=3100 threads=1 dropped=0 check=ok
PERF tool=logiops workload=movement frames_in=1000 frames_out=1000 secs=5.0 cpu_ticks=2 runtime_ns=30000000 vcsw=3000 ivcsw=10 syscr=1000 syscw=0 rss_kib=6000 hwm_kib=6100 rss_smaps_kib=7168 threads=4 dropped=0 check=ok
PERF tool=logiops workload=scroll frames_in=100 frames_out=100 secs=1.0 cpu_ticks=0 runtime_ns=3000000 vcsw=300 ivcsw=0 syscr=100 syscw=0 rss_kib=6000 hwm_kib=6100 rss_smaps_kib=7168 threads=4 dropped=0 check=ok
PERF tool=logiops workload=idle frames_in=0 frames_out=0 secs=150.0 cpu_ticks=0 runtime_ns=0 vcsw=0 ivcsw=0 syscr=0 syscw=0 rss_kib=6000 hwm_kib=6100 rss_smaps_kib=7168 threads=4 dropped=0 check=ok
PERF-END
";

    #[test]
    fn hidpp_cost_is_pawls_defaults_against_hidpp_off_per_motion_frame() {
        let r = Results::parse(GESTURE_SERIAL);
        let cost = hidpp_cost(&r).unwrap();
        assert!(
            cost.contains("+1.000 reads (2.000 instead of 1.000)"),
            "{cost}"
        );
        assert!(cost.contains("+0.000 writes"), "{cost}");
        assert!(
            cost.contains("+3.0 k guest instructions (14.0 instead of 11.0: 1.27×)"),
            "{cost}"
        );
        let t = targets(&r, "");
        let rw: Vec<_> = t
            .iter()
            .filter(|(n, _, _)| n.contains("1 read + 1 write"))
            .collect();
        assert_eq!(rw.len(), 2, "{t:?}");
        assert!(rw[0].0.contains("defaults") && rw[0].2.starts_with("**missed**: by +1000 reads"));
        assert!(rw[0].2.contains("hidraw reader"), "{}", rw[0].2);
        assert!(rw[1].0.contains("enabled = false") && rw[1].2 == "met");
    }

    #[test]
    fn gesture_button_table_shows_every_way_measured_and_keeps_a_place_for_kernel_mode() {
        let r = Results::parse(GESTURE_SERIAL);
        let mut w = String::new();
        gesture_button_section(&mut w, &r);
        assert!(w.contains(
            "| logiops 0.3.1 (HID++, no grab) | 30.0 | 1.000 | 0.000 | 3.010 | 30.0 | 1.000 | 0.000 | 3.000 | – | – | – | – | 0 | 0 | 7.00 | 4 | idle ok; movement ok; scroll ok |"
        ), "{w}");
        assert!(
            w.contains("| pawl, grab + HID++ (defaults) | 14.0 | 2.000 | 1.000 |"),
            "{w}"
        );
        assert!(
            w.contains("| pawl, grab only (`[hidpp] enabled = false`) | 11.0 | 1.000 |"),
            "{w}"
        );
        assert!(
            w.contains("pawl itself in kernel mode (HID-BPF: the wheel")
                && !w.contains("| pawl, kernel mode")
        );
        let with_kernel = GESTURE_SERIAL.replace(
            "PERF-END",
            "PERF tool=pawl-kernel workload=movement frames_in=1000 frames_out=1000 secs=5.0 cpu_ticks=0 runtime_ns=0 vcsw=0 ivcsw=0 syscr=0 syscw=0 rss_kib=1 hwm_kib=1 rss_smaps_kib=1024 threads=1 dropped=0 check=ok\nPERF-END",
        );
        let mut w = String::new();
        gesture_button_section(&mut w, &Results::parse(&with_kernel));
        assert!(
            w.contains("| pawl, kernel mode (HID-BPF) | 0.0 | 0.000 |"),
            "{w}"
        );
        assert!(!w.contains("is not measured in this run"), "{w}");
    }

    #[test]
    fn kernel_cost_is_the_writers_instructions_per_report_with_the_program_against_without() {
        let serial = "\
PERF-KCOST report=motion program=off reports=2000 writer_ns=40000000 frames_out=2000 prog_runs=0 prog_ns=0 check=ok
PERF-KCOST report=wheel program=off reports=1000 writer_ns=30000000 frames_out=1000 prog_runs=0 prog_ns=0 check=ok
PERF-KCOST report=motion program=pass reports=2000 writer_ns=40600000 frames_out=2000 prog_runs=2000 prog_ns=400000 check=ok
PERF-KCOST report=motion program=on reports=2000 writer_ns=41000000 frames_out=2000 prog_runs=2000 prog_ns=800000 check=ok
PERF-KCOST report=wheel program=on reports=1000 writer_ns=31500000 frames_out=990 prog_runs=1000 prog_ns=1200000 check=ok
PERF-END
";
        let r = Results::parse(serial);
        assert_eq!(r.kcost.len(), 5);
        let mut w = String::new();
        kernel_cost_section(&mut w, &r);
        assert!(
            w.contains("| motion | 2000 | 20000 | 20300 | 20500 | +300 (1.01×) | +500 (1.02×) | 200 / 400 | 2000 / 2000 / 2000 | off ok; pass ok; on ok |"),
            "{w}"
        );
        assert!(
            w.contains("| wheel (one detent) | 1000 | 30000 | – | 31500 | – | +1500 (1.05×) | – / 1200 | 1000 / – / 990 |"),
            "{w}"
        );
        let k = kcost_summary(&r).unwrap();
        assert!(
            k.contains("+500 guest instructions per motion report"),
            "{k}"
        );
        let none = Results::parse(
            "PERF-KCOST status=unavailable note=kernel 6.1.0 has no HID-BPF (struct hid_bpf_ops)\nPERF-END\n",
        );
        let mut w = String::new();
        kernel_cost_section(&mut w, &none);
        assert!(
            w.contains("Not measured in this run: kernel 6.1.0 has no HID-BPF"),
            "{w}"
        );
        assert!(kcost_summary(&none).is_none());
        let t = kernel_mode_target(&none, "movement");
        assert_eq!(t.2, "not measured");
    }

    #[test]
    fn kernel_mode_target_is_zero_reads_writes_and_switches_per_motion_frame() {
        let row = |syscr: u32| {
            format!(
                "PERF tool=pawl-kernel workload=movement frames_in=1000 frames_out=1000 secs=5.0 cpu_ticks=0 runtime_ns=0 vcsw=0 ivcsw=0 syscr={syscr} syscw=0 rss_kib=1 hwm_kib=1 rss_smaps_kib=1024 threads=1 dropped=0 check=ok\nPERF-END\n"
            )
        };
        assert_eq!(
            kernel_mode_target(&Results::parse(&row(0)), "movement").2,
            "met"
        );
        let summary = kernel_mode_summary(&Results::parse(&row(0))).unwrap();
        assert!(
            summary.contains("per motion frame 0.000 reads, 0.000 writes, 0.000 context switches"),
            "{summary}"
        );
        let missed = kernel_mode_target(&Results::parse(&row(3)), "movement").2;
        assert!(missed.starts_with("**missed**: by 3 reads"), "{missed}");
    }

    /// pawl's defaults and pawl with `[[app]]` tables on sway, from one run.
    const PER_APP_SERIAL: &str = "\
PERF-TOOL tool=pawl-apps status=ok source=/dev/input/event7 version=pawl_0.1.0
PERF tool=pawl-apps workload=idle frames_in=0 frames_out=0 secs=150.0 cpu_ticks=0 runtime_ns=0 vcsw=0 ivcsw=0 syscr=0 syscw=0 rss_kib=1800 hwm_kib=1900 rss_smaps_kib=3300 threads=1 dropped=0 check=ok
PERF tool=pawl workload=movement frames_in=1000 frames_out=1000 secs=5.0 cpu_ticks=1 runtime_ns=14000000 vcsw=1000 ivcsw=0 syscr=2000 syscw=1000 rss_kib=1800 hwm_kib=1900 rss_smaps_kib=3200 threads=1 dropped=0 check=ok
PERF tool=pawl-apps workload=movement frames_in=1000 frames_out=1000 secs=5.0 cpu_ticks=1 runtime_ns=14500000 vcsw=1000 ivcsw=0 syscr=2000 syscw=1000 rss_kib=1800 hwm_kib=1900 rss_smaps_kib=3300 threads=1 dropped=0 check=ok
PERF tool=pawl workload=scroll frames_in=100 frames_out=100 secs=1.0 cpu_ticks=0 runtime_ns=2000000 vcsw=100 ivcsw=0 syscr=200 syscw=100 rss_kib=1800 hwm_kib=1900 rss_smaps_kib=3200 threads=1 dropped=0 check=ok
PERF tool=pawl-apps workload=scroll frames_in=100 frames_out=100 secs=1.0 cpu_ticks=0 runtime_ns=2100000 vcsw=100 ivcsw=1 syscr=200 syscw=100 rss_kib=1800 hwm_kib=1900 rss_smaps_kib=3300 threads=1 dropped=0 check=ok
PERF tool=pawl-apps workload=focus-change frames_in=20 frames_out=0 secs=6.0 cpu_ticks=0 runtime_ns=600000 vcsw=21 ivcsw=0 syscr=22 syscw=0 rss_kib=1800 hwm_kib=1900 rss_smaps_kib=3300 threads=1 dropped=0 check=ok
PERF-END
";

    #[test]
    fn per_app_rows_sit_beside_pawls_defaults_with_the_difference_and_the_focus_cost() {
        let r = Results::parse(PER_APP_SERIAL);
        let mut w = String::new();
        per_app_section(&mut w, &r);
        assert!(
            w.contains("Idle, 150 s with the tables and sway running: 0 voluntary and 0 involuntary context switches, 0 reads, 0 writes, 0 CPU ticks"),
            "{w}"
        );
        assert!(
            w.contains("| motion | pawl | 14.00 | 2.000 | 1.000 | 1.000 | ok |"),
            "{w}"
        );
        assert!(
            w.contains("| motion | pawl-apps | 14.50 | 2.000 | 1.000 | 1.000 | ok |"),
            "{w}"
        );
        assert!(
            w.contains("| motion | added by the tables and sway | +0.50 (1.04×) | +0.000 | +0.000 | +0.000 | |"),
            "{w}"
        );
        assert!(
            w.contains("| wheel | added by the tables and sway | +1.00 (1.05×) | +0.000 | +0.000 | +0.010 | |"),
            "{w}"
        );
        assert!(
            w.contains("| pawl-apps | 1.05 | 0.00 | 1.10 | 0.00 | 30.0 | ok |"),
            "{w}"
        );
        let t = targets(&r, "");
        let idle = t
            .iter()
            .find(|(n, _, _)| n.contains("sway running"))
            .unwrap();
        assert_eq!(idle.2, "met");
        let summary = per_app_summary(&r).unwrap();
        assert!(
            summary.contains("per focus change 1.05 context switches, 1.10 reads (check ok)"),
            "{summary}"
        );
        // A wake-up while idle misses the target, by how much.
        let woke = PER_APP_SERIAL.replace(
            "workload=idle frames_in=0 frames_out=0 secs=150.0 cpu_ticks=0 runtime_ns=0 vcsw=0 ivcsw=0 syscr=0",
            "workload=idle frames_in=0 frames_out=0 secs=150.0 cpu_ticks=1 runtime_ns=9 vcsw=2 ivcsw=0 syscr=1",
        );
        let t = targets(&Results::parse(&woke), "");
        let idle = t
            .iter()
            .find(|(n, _, _)| n.contains("sway running"))
            .unwrap();
        assert_eq!(
            idle.2,
            "**missed**: by 2 context switches, 1 reads, 1 ticks (check ok)"
        );
    }

    #[test]
    fn per_app_section_says_why_it_was_not_measured() {
        let r = Results::parse(
            "PERF-TOOL tool=pawl-apps status=unavailable note=sway did not start: boom\nPERF-END\n",
        );
        let mut w = String::new();
        per_app_section(&mut w, &r);
        assert!(
            w.contains("Not measured in this run: sway did not start: boom."),
            "{w}"
        );
        assert!(per_app_summary(&r).is_none());
    }

    #[test]
    fn ldd_lines_become_guest_library_paths_and_a_missing_library_is_an_error() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibevdev.so.2 => /t/root/usr/lib/x86_64-linux-gnu/libevdev.so.2 (0x00007f9c)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f9b)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f9a)\n";
        let libs = parse_ldd(text).unwrap();
        assert_eq!(
            libs,
            vec![
                (
                    "lib/x86_64-linux-gnu/libevdev.so.2".to_string(),
                    PathBuf::from("/t/root/usr/lib/x86_64-linux-gnu/libevdev.so.2")
                ),
                (
                    "lib/x86_64-linux-gnu/libc.so.6".to_string(),
                    PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6")
                ),
                (
                    "lib64/ld-linux-x86-64.so.2".to_string(),
                    PathBuf::from("/lib64/ld-linux-x86-64.so.2")
                ),
            ]
        );
        assert_eq!(
            parse_ldd("\tlibconfig++.so.9 => not found\n").unwrap_err(),
            "libconfig++.so.9 not found"
        );
    }

    #[test]
    fn a_missed_target_says_by_how_much() {
        let mut r = Results::parse(SERIAL);
        for row in &mut r.rows {
            if row.tool == "pawl" && row.workload == "movement" {
                row.fields.insert("syscw".into(), "24000".into());
                row.fields.insert("hwm_kib".into(), "5120".into());
            }
        }
        let t = targets(&r, "");
        let find = |p: &str| t.iter().find(|(n, _, _)| n.contains(p)).unwrap().2.clone();
        assert_eq!(
            find("1 read + 1 write"),
            "**missed**: by +0 reads and +12000 writes over 12000 frames"
        );
        assert_eq!(find("RSS"), "**missed**: by 1.00 MiB");
        assert_eq!(find("instructions"), "unknown");
    }
}
