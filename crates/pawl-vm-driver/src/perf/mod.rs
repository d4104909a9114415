//! `pawl-vm-driver … --perf [--peers DIR] [--idle-secs N] [--scale F] [--debian-root TAG]`:
//! the measurement run of `cargo xtask perf-vm`, in the same VM as the scenarios.
//!
//! Each program — pawl (defaults, and with `[hidpp] enabled = false`) and every peer found
//! in `--peers` (`forwarder`, `kanata`, `xremap`, `logid`) — gets its own uhid MX Master 3S
//! (the real Bluetooth report descriptor, bound by the kernel's hid-logitech-hidpp and
//! answered over HID++ by the emulator, as on a user's machine), all created before any
//! program starts, so no device appears while anything is measured. logid needs a system
//! bus: `--peers` also holds `dbus-daemon`, started before the programs (its own process,
//! not counted as logid's). With `--debian-root TAG` (the userland boot's Debian root as a
//! 9p share), sway runs from it with two windows before any program starts, and pawl with
//! `[[app]]` tables on it is measured too (`pawl-apps`, [`apps`]). Then:
//! 0. with no program running yet, the kernel-side cost of pawl's HID-BPF program
//!    ([`kernel_cost`]: `PERF-KCOST` lines) on a mouse of its own;
//! 1. every program starts and must forward a sentinel motion (else `PERF-TOOL … status=
//!    unavailable note=<why>` and it is left out);
//! 2. after [`SETTLE`], strict idle for `--idle-secs` (default 150) with all programs at
//!    once;
//! 3. program by program: movement, gesture-held (not in kernel mode), gesture-drag (the
//!    programs that divert the gesture button), scroll, stress ([`workloads`]); for
//!    `pawl-apps` movement, scroll and focus-change ([`apps::focus_changes`]) only.
//!
//! Output lines (the host parses them from the serial console): `PERF-ENV key=value…`,
//! `PERF-TOOL tool=… status=ok|unavailable [note=…]`, one `PERF tool=… workload=… …` per
//! measurement ([`workloads::Row::print`]), `PERF-STOP tool=… status=…`, and `PERF-END`.

mod apps;
mod attach;
mod kernel_cost;
mod procfs;
mod tools;
mod workloads;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::scenarios::Options;
use tools::{Kind, Tool};
use workloads::{Contention, Plan};

/// Quiet time between the last program's start and the idle window: lazy start-up work
/// (threads, first timers) is over by then.
const SETTLE: Duration = Duration::from_secs(5);

/// Runs the measurements; `args` are the flags after `--perf`.
pub fn run(opts: &Options, args: Vec<String>) -> anyhow::Result<ExitCode> {
    let mut peers = PathBuf::from("/peers");
    let mut idle = Duration::from_secs(150);
    let mut scale = 1.0f64;
    let mut debian_root: Option<String> = None;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().with_context(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--peers" => peers = value("--peers")?.into(),
            "--idle-secs" => idle = Duration::from_secs(value("--idle-secs")?.parse()?),
            "--scale" => scale = value("--scale")?.parse()?,
            "--debian-root" => debian_root = Some(value("--debian-root")?),
            other => bail!("unknown perf flag {other}"),
        }
    }
    let plan = Plan::scaled(scale);
    print_env(&plan, idle);

    let work = opts.work.join("perf");
    let bins: Vec<(Kind, PathBuf)> = Kind::ALL
        .iter()
        .map(|&k| {
            let bin = match k {
                Kind::Pawl | Kind::PawlHidppOff | Kind::PawlKernel | Kind::PawlApps => {
                    opts.pawl.clone()
                }
                Kind::Logiops => peers.join("logid"),
                Kind::Forwarder => peers.join("forwarder"),
                Kind::Kanata => peers.join("kanata"),
                Kind::Xremap => peers.join("xremap"),
            };
            (k, bin)
        })
        .collect();

    // pawl and logid run as users of their own (`Kind::user`): they create their output
    // devices through /dev/uinput as a seat user does.
    std::fs::set_permissions(
        "/dev/uinput",
        std::os::unix::fs::PermissionsExt::from_mode(0o666),
    )
    .context("chmod /dev/uinput")?;
    // dbus-daemon looks every connecting user up (its groups) and drops one it cannot
    // find: the programs' users get entries.
    tools::add_users().context("/etc/passwd and /etc/group")?;
    let mut _bus = None;
    let dbus_daemon = peers.join("dbus-daemon");
    if bins.iter().any(|(k, b)| *k == Kind::Logiops && b.is_file()) && dbus_daemon.is_file() {
        match tools::SystemBus::start(&dbus_daemon, &work.join("dbus")) {
            Ok(bus) => {
                println!("# system bus: dbus-daemon pid {}", bus.pid());
                _bus = Some(bus);
            }
            Err(e) => println!("# system bus: {}", format!("{e:#}").replace('\n', " | ")),
        }
    }

    // sway before the mice: it opens no input device (headless outputs only), and nothing
    // it starts appears in /dev/input.
    let sway = match &debian_root {
        None => Err("no Debian root attached (--debian-root)".to_string()),
        Some(tag) => apps::start_sway(&work.join("sway"), tag).map_err(|e| {
            format!(
                "sway did not start: {}",
                format!("{e:#}").replace('\n', " | ")
            )
        }),
    };

    // All mice first: nothing appears in /dev/input once the programs run.
    let mut mice = Vec::new();
    for (seq, (kind, bin)) in bins.iter().enumerate() {
        if let (Kind::PawlApps, Err(why)) = (kind, &sway) {
            println!(
                "PERF-TOOL tool={} status=unavailable note={why}",
                kind.name()
            );
            continue;
        }
        if *kind == Kind::PawlKernel && !pawl_bpf::attach::has_hid_bpf() {
            println!(
                "PERF-TOOL tool={} status=unavailable note=the kernel has no HID-BPF (struct hid_bpf_ops)",
                kind.name()
            );
            continue;
        }
        if !bin.is_file() {
            println!(
                "PERF-TOOL tool={} status=unavailable note=no binary at {} (see the host's build log)",
                kind.name(),
                bin.display()
            );
            continue;
        }
        let (mouse, source) = tools::create_mouse(*kind, &opts.recordings, seq)?;
        mice.push((*kind, bin.clone(), mouse, source));
    }
    let cost_mouse = kernel_cost::CostMouse::create(&opts.recordings)?;
    println!("# kernel cost: the HID-BPF program attached vs not, before any program runs");
    kernel_cost::run(
        &cost_mouse,
        kernel_cost::CostPlan {
            motion: plan.movement / 6,
            wheel: plan.scroll / 2,
        },
    );

    let mut running: Vec<Tool> = Vec::new();
    for (kind, bin, mouse, source) in mice {
        let version = match kind {
            Kind::Forwarder => "contrib/perf/forwarder.c".to_string(),
            Kind::Logiops => format!("logid_{}", version(&bin)),
            _ => version(&bin),
        };
        let socket = sway.as_ref().map(|s| s.socket.clone()).unwrap_or_default();
        let env: &[(&str, &std::path::Path)] = if kind == Kind::PawlApps {
            &[("SWAYSOCK", &socket)]
        } else {
            &[]
        };
        match Tool::start(kind, &bin, &work.join(kind.name()), mouse, source, env) {
            Ok(tool) => {
                println!(
                    "PERF-TOOL tool={} status=ok source={} version={version}",
                    kind.name(),
                    tool.source.path.display()
                );
                running.push(tool);
            }
            Err(e) => println!(
                "PERF-TOOL tool={} status=unavailable version={version} note={}",
                kind.name(),
                format!("{e:#}").replace('\n', " | ")
            ),
        }
    }
    if !running.iter().any(|t| t.kind.is_pawl()) {
        bail!("pawl did not start; nothing to measure");
    }

    // Who holds which input node: an event on a node costs the writer a delivery per
    // open file, so a program that keeps other programs' devices open makes them dearer.
    for tool in &running {
        println!("# {} holds {}", tool.kind.name(), input_fds(tool.pid()));
    }
    std::thread::sleep(SETTLE);
    println!(
        "# idle: {} s with {} programs",
        idle.as_secs(),
        running.len()
    );
    for row in workloads::idle(&mut running, idle)? {
        row.print();
    }

    let mut pawl_failed = false;
    for tool in &mut running {
        let name = tool.kind.name();
        type Workload = fn(&mut Tool, &Plan) -> anyhow::Result<workloads::Row>;
        let steps: [(&str, Workload); 6] = [
            ("movement", |t, p| workloads::movement(t, p.movement)),
            ("gesture-held", |t, p| workloads::gesture_held(t, p.held)),
            ("gesture-drag", |t, p| workloads::gesture_drag(t, p.held)),
            ("scroll", |t, p| workloads::scroll(t, p.scroll)),
            ("stress", |t, p| {
                workloads::stress(t, p.stress_motion, p.stress_wheel, Contention::Yielding)
            }),
            ("stress-equal", |t, p| {
                workloads::stress(t, p.stress_motion, p.stress_wheel, Contention::Equal)
            }),
        ];
        for (workload, f) in steps {
            // A drag arrives as HID++ notifications only where the button is diverted.
            if workload == "gesture-drag" && !tool.kind.diverts_gesture() {
                continue;
            }
            // The 3S's gesture button in kernel mode is the diverted one (gesture-drag);
            // the plain-button variant is grab mode's.
            if workload == "gesture-held" && tool.kind == Kind::PawlKernel {
                continue;
            }
            // `[[app]]` tables change what the engine does per frame, not how a frame
            // reaches it: motion and wheel frames say what they cost.
            if tool.kind == Kind::PawlApps && !matches!(workload, "movement" | "scroll") {
                continue;
            }
            println!("# {name}: {workload}");
            // Each workload starts from a program that forwards (a failed one may have left
            // it stuck).
            let ready = tool.sentinel();
            match ready.and_then(|()| f(tool, &plan)) {
                Ok(row) => {
                    if row.check.is_err() {
                        print_log_tail(tool);
                    }
                    // stress-equal is reported, not required (see `Contention::Equal`).
                    pawl_failed |=
                        tool.kind.is_pawl() && workload != "stress-equal" && row.check.is_err();
                    row.print();
                }
                Err(e) => {
                    pawl_failed |= tool.kind.is_pawl();
                    println!(
                        "PERF-ERROR tool={name} workload={workload} note={}",
                        format!("{e:#}").replace('\n', " | ")
                    );
                }
            }
        }
        if let (Kind::PawlApps, Ok(sway)) = (tool.kind, &sway) {
            println!("# {name}: focus-change");
            match apps::focus_changes(tool, sway, &opts.pawl, apps::FOCUS_CHANGES) {
                Ok(row) => {
                    pawl_failed |= row.check.is_err();
                    row.print();
                }
                Err(e) => {
                    pawl_failed = true;
                    println!(
                        "PERF-ERROR tool={name} workload=focus-change note={}",
                        format!("{e:#}").replace('\n', " | ")
                    );
                }
            }
        }
        if let Some(reason) = tool.out.closed() {
            println!("# {name}: output reader stopped: {reason}");
        }
    }

    for tool in &mut running {
        match tool.stop() {
            Ok(s) => println!(
                "PERF-STOP tool={} status={}",
                tool.kind.name(),
                exit_word(s)
            ),
            Err(e) => println!(
                "PERF-STOP tool={} status=error note={}",
                tool.kind.name(),
                format!("{e:#}").replace('\n', " | ")
            ),
        }
    }
    println!("PERF-END");
    Ok(if pawl_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The `/dev/input`, `/dev/uinput` and `/dev/hidraw*` files process `pid` has open, with
/// their names.
fn input_fds(pid: u32) -> String {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return "?".into();
    };
    let nodes = crate::evdev::scan();
    let mut held: Vec<String> = dir
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|t| {
            t.starts_with("/dev/input")
                || t.starts_with("/dev/uinput")
                || t.to_string_lossy().starts_with("/dev/hidraw")
        })
        .map(|t| match nodes.iter().find(|n| n.path == t) {
            Some(n) => format!("{} ({:?})", t.display(), n.name),
            None => t.display().to_string(),
        })
        .collect();
    held.sort();
    held.join(", ")
}

/// The last lines of a program's log, as `#` lines (after a failed check).
fn print_log_tail(tool: &Tool) {
    let log = tool.log();
    let lines: Vec<&str> = log.lines().collect();
    for line in &lines[lines.len().saturating_sub(8)..] {
        println!("# {} log: {line}", tool.kind.name());
    }
}

/// `0`, `1`, … or `signal-15`: an exit status as one word.
fn exit_word(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => c.to_string(),
        (None, Some(sig)) => format!("signal-{sig}"),
        (None, None) => "unknown".into(),
    }
}

/// `PERF-ENV`: the VM's kernel, CPUs, clock ticks and the plan.
fn print_env(plan: &Plan, idle: Duration) {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpus = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown", |(_, v)| v.trim())
        .replace(' ', "_");
    // With page-table isolation (the Meltdown mitigation) every system call switches page
    // tables: it changes what a system call costs relative to everything else.
    let meltdown = std::fs::read_to_string("/sys/devices/system/cpu/vulnerabilities/meltdown")
        .map_or("unknown".into(), |s| s.trim().replace(' ', "_"));
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    println!(
        "PERF-ENV kernel={} cpus={cpus} cpu_model={model} clk_tck={hz} meltdown={meltdown} idle_secs={} movement={} held={} scroll={} stress_motion={} stress_wheel={}",
        kernel.trim(),
        idle.as_secs(),
        plan.movement,
        plan.held,
        plan.scroll,
        plan.stress_motion,
        plan.stress_wheel
    );
}

/// The first line of `bin --version`, spaces replaced by `_` (`unknown` when it fails).
fn version(bin: &std::path::Path) -> String {
    std::process::Command::new(bin)
        .arg("--version")
        .env_clear()
        .output()
        .ok()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout);
            text.lines().next().unwrap_or("").trim().replace(' ', "_")
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
