//! `pawl-vm-driver`: the test driver that `cargo xtask vm-test` runs inside its VM (as the
//! workhorse of `/init`).
//!
//! It creates input devices the way hardware does — through `/dev/uhid` with the real MX
//! Master report descriptors, so the kernel's HID stack builds the evdev nodes, and through
//! `/dev/uinput` for synthetic ones (touchpad, other mice) — starts the `pawl` binary, injects
//! input, reads pawl's virtual devices and prints exactly one line per scenario:
//! `PASS <name>` or `FAIL <name>: <reason>`. Diagnostics are printed as lines starting with
//! `# ` (a scenario's notes when it fails, or always with `--verbose`). The exit status is non-zero when any scenario failed.
//!
//! Usage: `pawl-vm-driver [--pawl BIN] [--recordings DIR] [--work DIR] [--pawl-debug]
//! [--verbose] [--list] [--set base|userland|systemd|all] [FILTER...]`;
//! a filter that is a scenario's full name runs that scenario, any other runs every scenario
//! whose name contains it (all run without filters).
//! `--list` prints the selected names and touches no device (xtask uses it on the host to
//! know how many result lines to expect).
//!
//! Scenarios live in `scenarios/`, one folder per boot: `--set base` (default) runs
//! [`scenarios::base::SCENARIOS`], `--set userland` [`scenarios::userland::SCENARIOS`]
//! (udev, libinput and sway reading pawl's output: the Debian userland boot), `--set
//! systemd` [`scenarios::systemd::SCENARIOS`] (kernel mode under systemd-udevd.service and
//! logind: the Debian root with systemd as PID 1), `--set all` base and userland.
//!
//! `--wayland-window APP_ID` maps one Wayland window with that `app_id` and serves it
//! ([`wayland_window`]): the application of the per-application scenarios on sway.
//!
//! `--perf [FLAGS]` (last) runs the measurements of `cargo xtask perf-vm` instead ([`perf`]).

#[cfg(target_os = "linux")]
mod evdev;
#[cfg(target_os = "linux")]
mod hid;
#[cfg(target_os = "linux")]
mod hidpp_emu;
#[cfg(target_os = "linux")]
mod hidpp_mouse;
#[cfg(target_os = "linux")]
mod pawl;
#[cfg(target_os = "linux")]
mod perf;
#[cfg(target_os = "linux")]
mod receiver;
#[cfg(target_os = "linux")]
mod scenarios;
#[cfg(target_os = "linux")]
mod sys;
#[cfg(target_os = "linux")]
mod uhid;
#[cfg(target_os = "linux")]
mod uinput;
#[cfg(target_os = "linux")]
mod watch;
#[cfg(target_os = "linux")]
mod wayland_window;

use std::process::ExitCode;

#[cfg(target_os = "linux")]
fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(code) => code,
        Err(e) => {
            println!("pawl-vm-driver: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> ExitCode {
    eprintln!("pawl-vm-driver runs only on Linux, inside the `cargo xtask vm-test` VM");
    ExitCode::from(2)
}

#[cfg(target_os = "linux")]
fn run(args: Vec<String>) -> anyhow::Result<ExitCode> {
    use std::path::PathBuf;

    use anyhow::{Context, bail};

    let mut opts = scenarios::Options {
        pawl: PathBuf::from("/bin/pawl"),
        recordings: PathBuf::from("/recordings"),
        work: PathBuf::from("/tmp/pawl-vm"),
        pawl_debug: false,
        verbose: false,
    };
    let mut list = false;
    let mut set = "base".to_owned();
    let mut filters = Vec::new();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().with_context(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--pawl" => opts.pawl = value("--pawl")?.into(),
            "--recordings" => opts.recordings = value("--recordings")?.into(),
            "--work" => opts.work = value("--work")?.into(),
            "--list" => list = true,
            "--set" => set = value("--set")?,
            "--pawl-debug" => opts.pawl_debug = true,
            "--verbose" => opts.verbose = true,
            // `cargo xtask perf-vm`: measurements instead of scenarios; the rest are its flags.
            "--perf" => return perf::run(&opts, it.collect()),
            // A scenario's helper, run as a user: which of a device's pins it can open.
            "--open-pins" => {
                return Ok(scenarios::systemd::seat::open_pins_main(
                    std::path::Path::new(&value("--open-pins")?),
                ));
            }
            // A scenario's helper, run as the desktop user: one window on sway.
            "--wayland-window" => {
                wayland_window::run(&value("--wayland-window")?)?;
                return Ok(ExitCode::SUCCESS);
            }
            flag if flag.starts_with("--") => bail!("unknown flag {flag}"),
            _ => filters.push(arg),
        }
    }
    let table: Vec<scenarios::Scenario> = match set.as_str() {
        "base" => scenarios::base::SCENARIOS.concat(),
        "userland" => scenarios::userland::SCENARIOS.concat(),
        "systemd" => scenarios::systemd::SCENARIOS.concat(),
        "all" => [scenarios::base::SCENARIOS, scenarios::userland::SCENARIOS]
            .concat()
            .concat(),
        other => bail!("--set {other}: want base, userland, systemd or all"),
    };
    let selected = scenarios::select_from(&table, &filters);
    if list {
        for s in &selected {
            println!("{}", s.name);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if selected.is_empty() {
        bail!("no scenario matches {filters:?}");
    }
    let failed = scenarios::run_all(&opts, &selected);
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
