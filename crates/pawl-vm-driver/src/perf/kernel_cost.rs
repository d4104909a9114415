//! The kernel-side cost of pawl's HID-BPF program: what one input
//! report costs the kernel from the uhid write to the evdev node, with the program
//! attached and without it, on an emulated MX Master 3S bound by hid-logitech-hidpp (the
//! wheel in hi-res mode), with a reader on its evdev node as a compositor has.
//!
//! The kernel handles a uhid `UHID_INPUT2` write synchronously, in the writer's system call
//! (`uhid_dev_input2` → `hid_input_report` → HID-BPF's `hid_bpf_device_event`, where the
//! program runs → hid-logitech-hidpp → hid-input → evdev), so the writer thread's CPU time
//! around each write (`CLOCK_THREAD_CPUTIME_ID`: under `-icount shift=0` guest nanoseconds
//! are guest instructions) is that path's cost plus a constant: the two clock reads. The
//! difference of the two runs is what the program adds. The program's own figures come
//! from the kernel's BPF statistics (`kernel.bpf_stats_enabled` = 1: `run_cnt` and
//! `run_time_ns` of the program, `bpf_prog_info`; its time is also the guest clock).
//!
//! Only the loader is needed, not pawl: `pawl-kernel-attach add <HID> --uid 0` attaches the
//! program, `remove` detaches it; between the two the settings map is written as pawl's
//! daemon writes it: first pass-through (the wheel transform off: the program sees every
//! report and changes none), then pawl's defaults (the wheel inverted and smoothed). One
//! `PERF-KCOST` line per report kind and program state:
//! `PERF-KCOST report=motion|wheel program=off|pass|on reports=N writer_ns=… frames_out=…
//! prog_runs=… prog_ns=… check=ok|FAIL reason`, or `PERF-KCOST status=unavailable note=…`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use pawl_bpf::maps::FLAG_WHEEL;
use pawl_bpf::pins::KernelDevice;
use pawl_hidpp::feature::hires_wheel;

use crate::evdev::{Frame, NodeInfo};
use crate::hid::{HidMouse, MX_MASTER_3S_BT};
use crate::perf::attach::{hid_name, loader};
use crate::perf::tools::{Output, motion_of};
use crate::perf::workloads::{MOTION_HZ, WHEEL_HZ, motion_at, notch_at, paced};
use crate::scenarios::{T_DEVICE, T_EVENT};

/// The sysctl that makes the kernel count each BPF program's runs and time.
const BPF_STATS: &str = "/proc/sys/kernel/bpf_stats_enabled";
/// The program's name as the kernel keeps it (`BPF_OBJ_NAME_LEN` 16: 15 characters of
/// `pawl_device_event`, pawl-bpf's `struct_ops/hid_device_event` program).
const PROG_NAME: &str = "pawl_device_eve";

/// Reports of each kind sent, unmeasured, before the first measurement.
const WARM_UP: usize = 50;

/// Sizes: motion reports at 200 Hz and wheel reports at 120 Hz per program state.
#[derive(Clone, Copy, Debug)]
pub struct CostPlan {
    /// Motion reports per state.
    pub motion: usize,
    /// Wheel reports (one detent each) per state.
    pub wheel: usize,
}

/// The measured mouse: created with the others, before any program starts.
#[derive(Debug)]
pub struct CostMouse {
    mouse: HidMouse,
    info: NodeInfo,
}

impl CostMouse {
    /// Creates the mouse (root's nodes, 0600: no measured program can open them).
    pub fn create(recordings: &Path) -> anyhow::Result<CostMouse> {
        let mouse = HidMouse::create(MX_MASTER_3S_BT, recordings, "perf-kernel-cost")?;
        let info = mouse.wait_node(T_DEVICE)?;
        Ok(CostMouse { mouse, info })
    }
}

/// Measures, prints the `PERF-KCOST` lines.
pub fn run(m: &CostMouse, plan: CostPlan) {
    if let Err(e) = measure(m, plan) {
        println!(
            "PERF-KCOST status=unavailable note={}",
            format!("{e:#}").replace('\n', " | ")
        );
    }
}

fn measure(m: &CostMouse, plan: CostPlan) -> anyhow::Result<()> {
    if !pawl_bpf::attach::has_hid_bpf() {
        bail!(
            "kernel {} has no HID-BPF (struct hid_bpf_ops)",
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
        );
    }
    let hidpp = m.mouse.hidpp().context("the 3S speaks HID++")?;
    let deadline = std::time::Instant::now() + T_DEVICE;
    while hidpp.lock().emu.wheel_mode() != hires_wheel::MODE_RESOLUTION {
        ensure!(
            std::time::Instant::now() < deadline,
            "hid-logitech-hidpp never set the wheel to hi-res"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let name = hid_name(&m.info)?;
    // The compositor's reader: evdev delivers only to open handles.
    let out = Output::open(&m.info)?;
    std::fs::write(BPF_STATS, "1").with_context(|| format!("write {BPF_STATS}"))?;
    // Unmeasured first: the path's first reports do one-time work (the reader's first
    // wake-ups, lazily allocated buffers) that would count against the first state.
    cost_of(&m.mouse, &out, Report::Motion, WARM_UP)?;
    cost_of(&m.mouse, &out, Report::Wheel, WARM_UP)?;
    for state in [State::Off, State::PassThrough, State::On] {
        let attached = state != State::Off;
        if state == State::PassThrough {
            let text = loader(&["add", &name, "--uid", "0"])?;
            println!("# kernel cost: loader add {name}: {text}");
        }
        if attached {
            // The transform off (pass-through: the program sees every report and changes
            // none, as the loader leaves it until pawl's daemon starts), then on (pawl's
            // default settings, as the daemon writes them).
            let kd = KernelDevice::open(&name).map_err(|e| anyhow::format_err!("{e}"))?;
            let mut s = kd.settings().map_err(|e| anyhow::format_err!("{e}"))?;
            if state == State::On {
                s.flags |= FLAG_WHEEL;
            } else {
                s.flags &= !FLAG_WHEEL;
            }
            kd.write_settings(&s)
                .map_err(|e| anyhow::format_err!("{e}"))?;
        }
        let before = prog_stats()?;
        let motion = cost_of(&m.mouse, &out, Report::Motion, plan.motion)?;
        let mid = prog_stats()?;
        let wheel = cost_of(&m.mouse, &out, Report::Wheel, plan.wheel)?;
        let after = prog_stats()?;
        for (c, runs) in [(motion, mid.since(before)), (wheel, after.since(mid))] {
            let check = c.check(state, runs);
            println!(
                "PERF-KCOST report={} program={} reports={} writer_ns={} frames_out={} prog_runs={} prog_ns={} check={}",
                c.report.name(),
                state.name(),
                c.reports,
                c.writer_ns,
                c.frames_out,
                runs.runs,
                runs.ns,
                match check {
                    Ok(()) => "ok".to_string(),
                    Err(e) => format!("FAIL {e}"),
                }
            );
        }
        if state == State::On {
            loader(&["remove", &name])?;
        }
    }
    Ok(())
}

/// The program's state during one measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not attached.
    Off,
    /// Attached with the wheel transform off (`FLAG_WHEEL` clear).
    PassThrough,
    /// Attached with pawl's default settings: the wheel inverted and smoothed.
    On,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Off => "off",
            State::PassThrough => "pass",
            State::On => "on",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Report {
    Motion,
    Wheel,
}

impl Report {
    fn name(self) -> &'static str {
        match self {
            Report::Motion => "motion",
            Report::Wheel => "wheel",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Cost {
    report: Report,
    reports: usize,
    writer_ns: u64,
    frames_out: usize,
}

impl Cost {
    /// Every report came out as one frame (with the program, wheel frames as its pipeline
    /// makes them: a report whose smoothed output rounds to zero brings none), and the
    /// program ran once per report exactly when attached.
    fn check(&self, state: State, runs: ProgStats) -> Result<(), String> {
        let attached = state != State::Off;
        let smoothed = state == State::On && self.report == Report::Wheel;
        let complete = if smoothed {
            self.frames_out > 0 && self.frames_out <= self.reports
        } else {
            self.frames_out == self.reports
        };
        if !complete {
            return Err(format!(
                "{} frames out for {} reports",
                self.frames_out, self.reports
            ));
        }
        let want = if attached { self.reports as u64 } else { 0 };
        if runs.runs != want {
            return Err(format!(
                "the program ran {} times for {} reports (attached: {attached})",
                runs.runs, self.reports
            ));
        }
        Ok(())
    }
}

/// The calling thread's CPU time, ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one timespec into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Writes `n` reports of `kind` paced as a mouse sends them, summing the writer's CPU time
/// around each write; counts the frames that reach the evdev reader.
fn cost_of(mouse: &HidMouse, out: &Output, kind: Report, n: usize) -> anyhow::Result<Cost> {
    let _ = out.take();
    let mut writer_ns = 0u64;
    let hz = match kind {
        Report::Motion => MOTION_HZ,
        Report::Wheel => WHEEL_HZ,
    };
    paced(n, hz, |i| {
        let t0 = thread_cpu_ns();
        match kind {
            Report::Motion => {
                let (dx, dy) = motion_at(i);
                mouse.motion(dx, dy)?;
            }
            Report::Wheel => mouse.wheel(notch_at(i))?,
        }
        writer_ns += thread_cpu_ns() - t0;
        Ok(())
    })?;
    let is_out = |f: &Frame| match kind {
        Report::Motion => motion_of(f).is_some(),
        Report::Wheel => f.iter().any(|e| {
            e.type_ == pawl_evdev::codes::EV_REL
                && e.code == pawl_evdev::codes::REL_WHEEL_HI_RES
                && e.value != 0
        }),
    };
    out.wait(
        |frames| frames.iter().filter(|f| is_out(f)).count() >= n,
        Duration::from_millis(500),
        T_EVENT,
    );
    let frames_out = out.take().frames.iter().filter(|f| is_out(f)).count();
    Ok(Cost {
        report: kind,
        reports: n,
        writer_ns,
        frames_out,
    })
}

/// Runs and run time of pawl's program(s), summed (one program is attached at a time here).
#[derive(Clone, Copy, Debug, Default)]
struct ProgStats {
    runs: u64,
    ns: u64,
}

impl ProgStats {
    fn since(self, earlier: ProgStats) -> ProgStats {
        ProgStats {
            runs: self.runs.saturating_sub(earlier.runs),
            ns: self.ns.saturating_sub(earlier.ns),
        }
    }
}

fn prog_stats() -> anyhow::Result<ProgStats> {
    let mut s = ProgStats::default();
    for p in libbpf_rs::query::ProgInfoIter::default() {
        if p.name.to_str() == Some(PROG_NAME) {
            s.runs += p.run_cnt;
            s.ns += p.run_time_ns;
        }
    }
    Ok(s)
}
