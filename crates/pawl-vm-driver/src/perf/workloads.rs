//! The workloads of `cargo xtask perf-vm`, each run on one [`Tool`] and measured by the growth of its
//! `/proc` counters between the first injected report and the last expected output frame
//! (plus [`SETTLE_AFTER`], so the program is back waiting when the counters are read).
//!
//! Every workload prints one `PERF` line ([`Row::print`]); `check=ok` means the output was
//! what a pass-through (peers) or pawl's rules require, otherwise `check=FAIL <reason>`.

use std::cell::Cell;
use std::time::{Duration, Instant};

use anyhow::Context;
use pawl_evdev::codes::{BTN_FORWARD, EV_KEY, EV_REL, REL_WHEEL, REL_WHEEL_HI_RES};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;
use pawl_hidpp::emulator::Motion;

use crate::evdev::Frame;
use crate::hid::GESTURE_BUTTON;
use crate::perf::procfs::{self, Counters, Memory};
use crate::perf::tools::{Kind, Received, Tool, check_motion, motion_of};

/// Pause after the last expected frame before the counters are read.
pub const SETTLE_AFTER: Duration = Duration::from_millis(300);
/// A workload's output is complete when nothing more arrives for this long.
const QUIET: Duration = Duration::from_secs(3);

/// Sizes of the workloads, smaller with `--scale` for trial runs.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Motion frames at [`MOTION_HZ`], gesture button up.
    pub movement: usize,
    /// Motion frames while the gesture button is held.
    pub held: usize,
    /// Wheel frames at [`WHEEL_HZ`].
    pub scroll: usize,
    /// Motion frames of the stress, written as fast as possible.
    pub stress_motion: usize,
    /// Wheel frames written concurrently with the stress motion.
    pub stress_wheel: usize,
}

/// A mouse's report rate while moving (Logitech Bolt/Bluetooth mice report at 125–200 Hz;
/// the report measures at 200 Hz).
pub const MOTION_HZ: f64 = 200.0;
/// Wheel report rate of the scroll workload.
pub const WHEEL_HZ: f64 = 120.0;

impl Plan {
    /// The sizes of the full report.
    pub const FULL: Plan = Plan {
        movement: 12_000,
        held: 200,
        scroll: 2_000,
        stress_motion: 4_000,
        stress_wheel: 1_000,
    };

    /// [`Plan::FULL`] scaled by `f` (at least 10 frames each; `held` stays 200).
    pub fn scaled(f: f64) -> Plan {
        let s = |n: usize| ((n as f64 * f) as usize).max(10);
        Plan {
            movement: s(Plan::FULL.movement),
            held: Plan::FULL.held,
            scroll: s(Plan::FULL.scroll),
            stress_motion: s(Plan::FULL.stress_motion),
            stress_wheel: s(Plan::FULL.stress_wheel),
        }
    }
}

/// One result line.
#[derive(Debug)]
pub struct Row {
    /// Program name.
    pub tool: &'static str,
    /// Workload name.
    pub workload: &'static str,
    /// Reports injected.
    pub frames_in: usize,
    /// Frames that came out.
    pub frames_out: usize,
    /// VM time from the first report to the last expected frame, s.
    pub secs: f64,
    /// Counter growth.
    pub delta: Counters,
    /// Memory and threads at the end.
    pub mem: Memory,
    /// `SYN_DROPPED` seen by the reader of the output.
    pub dropped: u32,
    /// Workload-specific figures.
    pub extra: Vec<(&'static str, String)>,
    /// The output check.
    pub check: Result<(), String>,
}

impl Row {
    /// Prints `PERF key=value … check=ok|FAIL reason` (the reason is the rest of the line).
    pub fn print(&self) {
        let d = &self.delta;
        let m = &self.mem;
        let extra: String = self
            .extra
            .iter()
            .map(|(k, v)| format!(" {k}={v}"))
            .collect();
        let check = match &self.check {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("FAIL {}", e.replace('\n', " | ")),
        };
        println!(
            "PERF tool={} workload={} frames_in={} frames_out={} secs={:.3} cpu_ticks={} runtime_ns={} vcsw={} ivcsw={} syscr={} syscw={} rss_kib={} hwm_kib={} rss_smaps_kib={} threads={} dropped={}{extra} check={check}",
            self.tool,
            self.workload,
            self.frames_in,
            self.frames_out,
            self.secs,
            d.cpu_ticks,
            d.runtime_ns,
            d.vcsw,
            d.ivcsw,
            d.syscr,
            d.syscw,
            m.rss_kib,
            m.hwm_kib,
            m.rss_smaps_kib,
            m.threads,
            self.dropped
        );
    }
}

/// The motion of workload frame `i`: never zero on either axis, small (no acceleration
/// artefacts, below any gesture threshold), and different from its neighbours, so a lost,
/// doubled or reordered frame shows.
pub fn motion_at(i: usize) -> (i32, i32) {
    (1 + (i % 50) as i32, -1 - (i % 37) as i32)
}

/// Vertical wheel detents of scroll frame `i`: 100 notches one way, 100 the other.
pub fn notch_at(i: usize) -> i8 {
    if (i / 100).is_multiple_of(2) { -1 } else { 1 }
}

/// Injects with `inject`, waits until `done` holds for the output (or it stays quiet for
/// [`QUIET`]), and measures.
fn measured(
    tool: &mut Tool,
    workload: &'static str,
    frames_in: usize,
    done: impl Fn(&[Frame]) -> bool,
    inject: impl FnOnce(&mut Tool) -> anyhow::Result<()>,
) -> anyhow::Result<(Received, Row)> {
    let _ = tool.out.take();
    let pid = tool.pid();
    let before = procfs::counters(pid)?;
    let start = Instant::now();
    inject(tool)?;
    let limit = Duration::from_secs(120) + start.elapsed();
    tool.out.wait(&done, QUIET, limit);
    let secs = start.elapsed().as_secs_f64();
    std::thread::sleep(SETTLE_AFTER);
    let after = procfs::counters(pid)?;
    let mem = procfs::memory(pid)?;
    let received = tool.out.take();
    let row = Row {
        tool: tool.kind.name(),
        workload,
        frames_in,
        frames_out: received.frames.len(),
        secs,
        delta: after.since(&before),
        mem,
        dropped: received.dropped,
        extra: Vec::new(),
        check: Ok(()),
    };
    Ok((received, row))
}

/// Calls `f(i)` for `i` in `0..n` at `hz`, on an absolute schedule (a late call does not
/// delay the later ones), but never two calls less than half a period apart: a device
/// reporting at `hz` never sends a burst, whereas a writer that fell behind (the VM's clock
/// jumps with the host's clock while the guest is idle, `-icount sleep=on`, so a loaded
/// host stalls it) would otherwise catch up with reports back to back — which pawl's
/// scroll burst rule (`pawl_engine::scroll::BURST_US`) rightly clamps, and which no real
/// wheel at 120 Hz produces.
pub fn paced(
    n: usize,
    hz: f64,
    mut f: impl FnMut(usize) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let min_gap = Duration::from_secs_f64(0.5 / hz);
    let mut last: Option<Instant> = None;
    for i in 0..n {
        let mut due = start + Duration::from_secs_f64(i as f64 / hz);
        if let Some(l) = last {
            due = due.max(l + min_gap);
        }
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        last = Some(Instant::now());
        f(i)?;
    }
    Ok(())
}

/// An incremental counter of frames that satisfy `pred`, for [`measured`]'s `done`
/// (the output is re-examined on every arrival: counting from the start each time would
/// be quadratic).
struct Tally<P: Fn(&Frame) -> bool> {
    seen: Cell<usize>,
    count: Cell<usize>,
    pred: P,
}

impl<P: Fn(&Frame) -> bool> Tally<P> {
    fn new(pred: P) -> Self {
        Tally {
            seen: Cell::new(0),
            count: Cell::new(0),
            pred,
        }
    }

    fn update(&self, frames: &[Frame]) -> usize {
        let new = frames[self.seen.get()..]
            .iter()
            .filter(|f| (self.pred)(f))
            .count();
        self.count.set(self.count.get() + new);
        self.seen.set(frames.len());
        self.count.get()
    }
}

/// Movement: `n` motion frames at 200 Hz, gesture button up. Every frame must come out
/// exactly once, unchanged, in order.
pub fn movement(tool: &mut Tool, n: usize) -> anyhow::Result<Row> {
    let want: Vec<(i32, i32)> = (0..n).map(motion_at).collect();
    let tally = Tally::new(|f: &Frame| motion_of(f).is_some());
    let (got, mut row) = measured(
        tool,
        "movement",
        n,
        |f| tally.update(f) >= n,
        |t| paced(n, MOTION_HZ, |i| t.mouse.motion(want[i].0, want[i].1)),
    )?;
    row.check = check_motion(&got.frames, &want)
        .and_then(|()| no_drop(got.dropped))
        .map_err(|e| format!("{e:#}"));
    Ok(row)
}

/// Gesture held: gesture button down, `n` motions of 1 px right (below the 220 px
/// threshold), button up, at 200 Hz. The button is bit 5 of the mouse report
/// (`BTN_FORWARD`, as firmware that reports the gesture button as a plain button sends it),
/// not a HID++ notification. pawl must fire no action, move no pointer and pass the click
/// through on release, and keep running; the peers pass everything through (the grabbing
/// ones have no gesture; logid acts on the diverted 0x00C3 notification only, so the plain
/// button and the motion reach the mouse's node untouched).
pub fn gesture_held(tool: &mut Tool, n: usize) -> anyhow::Result<Row> {
    let released = |f: &Frame| {
        f.iter()
            .any(|e| e.type_ == EV_KEY && e.code == BTN_FORWARD && e.value == 0)
    };
    let (got, mut row) = measured(
        tool,
        "gesture-held",
        n + 2,
        |frames| frames.iter().rev().any(released),
        |t| {
            t.mouse.press(GESTURE_BUTTON)?;
            std::thread::sleep(Duration::from_secs_f64(1.0 / MOTION_HZ));
            paced(n, MOTION_HZ, |_| t.mouse.motion(1, 0))?;
            std::thread::sleep(Duration::from_secs_f64(1.0 / MOTION_HZ));
            t.mouse.release(GESTURE_BUTTON)
        },
    )?;
    let keys: Vec<(u16, i32)> = got
        .frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_KEY)
        .map(|e| (e.code, e.value))
        .collect();
    let motions = got.frames.iter().filter_map(motion_of).count();
    let click = vec![(BTN_FORWARD, 1), (BTN_FORWARD, 0)];
    row.extra.push(("motion_out", motions.to_string()));
    row.check = (|| -> anyhow::Result<()> {
        no_drop(got.dropped)?;
        anyhow::ensure!(keys == click, "button events out {keys:?}, want {click:?}");
        if tool.kind.is_pawl() {
            anyhow::ensure!(
                motions == 0,
                "{motions} motion frames leaked while the gesture button was held"
            );
            let kb = tool
                .keyboard
                .as_mut()
                .expect("pawl has a keyboard")
                .drain()?;
            let fired: Vec<_> = kb.iter().flatten().filter(|e| e.type_ == EV_KEY).collect();
            anyhow::ensure!(fired.is_empty(), "an action fired: {fired:?}");
            if let Some(s) = tool.exited()? {
                anyhow::bail!("pawl exited ({s})");
            }
        } else {
            anyhow::ensure!(motions == n, "{motions} of {n} motion frames forwarded");
        }
        Ok(())
    })()
    .map_err(|e| format!("{e:#}"));
    Ok(row)
}

/// Gesture drag: the gesture button as the MX Master 3S sends it once a program diverted
/// it (0x1B04 with raw XY): a diverted-buttons notification (0x00C3 down), `n` raw-XY
/// notifications of 1 px right (below the 220 px threshold) at 200 Hz, a diverted-buttons
/// notification (none held). Only for the programs that divert the button
/// ([`Kind::diverts_gesture`]). Nothing may reach the pointer (the notifications are not
/// pointer motion); pawl must fire no action and keep running.
pub fn gesture_drag(tool: &mut Tool, n: usize) -> anyhow::Result<Row> {
    let hidpp = tool
        .mouse
        .hidpp()
        .cloned()
        .context("the mouse speaks no HID++")?;
    let send = |t: &Tool, m: &pawl_hidpp::report::Message| {
        let (bytes, len) = m.encode();
        t.mouse.uhid().input(&bytes[..len])
    };
    let (got, mut row) = measured(
        tool,
        "gesture-drag",
        n + 2,
        // Nothing is expected out: the workload ends when the output stays quiet.
        |_| false,
        |t| {
            let down = hidpp
                .lock()
                .emu
                .set_held(CID_GESTURE_BUTTON, true)
                .context("the gesture button is not diverted")?;
            send(t, &down)?;
            std::thread::sleep(Duration::from_secs_f64(1.0 / MOTION_HZ));
            paced(n, MOTION_HZ, |_| {
                let m = hidpp.lock().emu.motion(1, 0);
                match m {
                    Motion::RawXy(m) => send(t, &m),
                    Motion::Hid => anyhow::bail!("raw XY is not enabled for the gesture button"),
                }
            })?;
            std::thread::sleep(Duration::from_secs_f64(1.0 / MOTION_HZ));
            let up = hidpp
                .lock()
                .emu
                .set_held(CID_GESTURE_BUTTON, false)
                .context("the gesture button is not diverted")?;
            send(t, &up)
        },
    )?;
    let motions = got.frames.iter().filter_map(motion_of).count();
    row.extra.push(("motion_out", motions.to_string()));
    row.check = (|| -> anyhow::Result<()> {
        no_drop(got.dropped)?;
        anyhow::ensure!(
            motions == 0,
            "{motions} pointer motion frames out for a diverted drag"
        );
        if tool.kind.is_pawl() {
            let kb = tool
                .keyboard
                .as_mut()
                .expect("pawl has a keyboard")
                .drain()?;
            let fired: Vec<_> = kb.iter().flatten().filter(|e| e.type_ == EV_KEY).collect();
            anyhow::ensure!(fired.is_empty(), "an action fired: {fired:?}");
        }
        if let Some(s) = tool.exited()? {
            anyhow::bail!("exited ({s})");
        }
        Ok(())
    })()
    .map_err(|e| format!("{e:#}"));
    Ok(row)
}

/// The vertical wheel values of a frame: `(hi-res, lo-res)`, `None` when it has neither.
fn wheel_of(f: &Frame) -> Option<(Option<i32>, Option<i32>)> {
    let find = |code| {
        f.iter()
            .find(|e| e.type_ == EV_REL && e.code == code)
            .map(|e| e.value)
    };
    let (hi, lo) = (find(REL_WHEEL_HI_RES), find(REL_WHEEL));
    (hi.is_some() || lo.is_some()).then_some((hi, lo))
}

/// Scroll: `n` wheel reports of one detent each at 120 Hz, 100 notches one way then 100 the
/// other. The kernel's hid-logitech-hidpp has set the wheel to high resolution, so each
/// report carries 15 counts (1/15 detent each) and the driver emits `REL_WHEEL_HI_RES` 8
/// per count, ±120, with `REL_WHEEL` ±1 (lo-res at half a detent: every whole-detent
/// report crosses it once; `hidpp_scroll_counter_handle_scroll`). One wheel frame out per
/// report.
/// pawl: every output non-zero with the inverted sign (its default `invert_vertical`);
/// peers: unchanged.
pub fn scroll(tool: &mut Tool, n: usize) -> anyhow::Result<Row> {
    let tally = Tally::new(|f: &Frame| wheel_of(f).is_some());
    let (got, mut row) = measured(
        tool,
        "scroll",
        n,
        |f| tally.update(f) >= n,
        |t| paced(n, WHEEL_HZ, |i| t.mouse.wheel(notch_at(i))),
    )?;
    let wheels: Vec<(Option<i32>, Option<i32>)> = got.frames.iter().filter_map(wheel_of).collect();
    let hires = wheels.iter().filter(|w| w.0.is_some()).count();
    let lores = wheels.iter().filter(|w| w.1.is_some()).count();
    row.extra.push(("hires_out", hires.to_string()));
    row.extra.push(("lores_out", lores.to_string()));
    row.check = check_scroll(tool.kind, &wheels, n, got.dropped).map_err(|e| format!("{e:#}"));
    Ok(row)
}

fn check_scroll(
    kind: Kind,
    wheels: &[(Option<i32>, Option<i32>)],
    n: usize,
    dropped: u32,
) -> anyhow::Result<()> {
    no_drop(dropped)?;
    anyhow::ensure!(
        wheels.len() == n,
        "{} wheel frames out for {n} reports (the first out: {:?})",
        wheels.len(),
        &wheels[..wheels.len().min(12)]
    );
    for (i, &(hi, lo)) in wheels.iter().enumerate() {
        let notch = i32::from(notch_at(i));
        if kind.is_pawl() {
            let v = hi.unwrap_or(0);
            anyhow::ensure!(
                v != 0 && v.signum() == -notch,
                "wheel frame {i}: hi-res {hi:?} lo-res {lo:?} for a notch of {notch} (want non-zero hi-res, inverted)"
            );
        } else {
            anyhow::ensure!(
                hi == Some(120 * notch) && lo == Some(notch),
                "wheel frame {i}: hi-res {hi:?} lo-res {lo:?}, want {} and {notch} (unchanged)",
                120 * notch
            );
        }
    }
    Ok(())
}

/// How the stress writers compete with the program under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contention {
    /// The writer threads run under `SCHED_IDLE`: they take only the CPU the program and
    /// the output's reader leave, as hardware input does (a mouse does not compete with
    /// the daemon for the CPU): a woken normal task preempts an idle-policy one at once.
    /// Nice 19 no longer does that on the EEVDF scheduler (Linux 6.6+): a running task
    /// keeps its slice (run to parity), in which a writer at TCG speed fills the grabbed
    /// device's evdev buffer before the program runs. Nothing may be lost.
    Yielding,
    /// The writer threads at the program's priority: two greedy writers against one
    /// reader on the VM's single vCPU: whether the grabbed device's evdev buffer in the
    /// kernel (128 events, about 40 motion frames) overflows depends on the scheduler as
    /// much as on the program.
    Equal,
}

/// Stress: `n` motion reports and, from a second thread at the same time, `m` wheel
/// reports (one detent down each), both as fast as the driver can write. Nothing may be
/// lost: every motion frame out once and in order, no `SYN_DROPPED` at the output's reader,
/// the program alive; the peers pass every wheel frame through unchanged, pawl's wheel
/// output follows its burst rule ([`check_burst_wheel`]). The same check for both
/// [`Contention`]s; with [`Contention::Equal`] a loss is the VM's scheduling as much as the
/// program's, and `cargo xtask perf-vm` reports it without failing.
pub fn stress(tool: &mut Tool, n: usize, m: usize, contention: Contention) -> anyhow::Result<Row> {
    let want: Vec<(i32, i32)> = (0..n).map(motion_at).collect();
    let motions = Tally::new(|f: &Frame| motion_of(f).is_some());
    let wheels = Tally::new(|f: &Frame| wheel_of(f).is_some());
    let name = match contention {
        Contention::Yielding => "stress",
        Contention::Equal => "stress-equal",
    };
    let writer_nice = |c: Contention| {
        if c == Contention::Yielding {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: sched_setscheduler on the calling thread's own id with a valid param.
            unsafe { libc::sched_setscheduler(libc::gettid(), libc::SCHED_IDLE, &param) };
        }
    };
    let (got, mut row) = measured(
        tool,
        name,
        n + m,
        |f| {
            let a = motions.update(f);
            let b = wheels.update(f);
            a >= n && b >= m
        },
        |t| {
            let mouse = &t.mouse;
            std::thread::scope(|s| {
                let scroller = s.spawn(|| -> anyhow::Result<()> {
                    writer_nice(contention);
                    for _ in 0..m {
                        mouse.wheel(-1)?;
                    }
                    Ok(())
                });
                let mover = s.spawn(|| -> anyhow::Result<()> {
                    writer_nice(contention);
                    want.iter().try_for_each(|&(dx, dy)| mouse.motion(dx, dy))
                });
                let moved = mover.join().expect("motion thread");
                let scrolled = scroller.join().expect("scroll thread");
                moved.and(scrolled)
            })
        },
    )?;
    let motion_out = got.frames.iter().filter(|f| motion_of(f).is_some()).count();
    let wheel_out = got.frames.iter().filter(|f| wheel_of(f).is_some()).count();
    row.extra.push(("motion_out", motion_out.to_string()));
    row.extra.push(("wheel_out", wheel_out.to_string()));
    row.check = (|| -> anyhow::Result<()> {
        no_drop(got.dropped)?;
        if let Some(s) = tool.exited()? {
            anyhow::bail!("exited ({s})");
        }
        check_motion(&got.frames, &want)?;
        let wheels: Vec<_> = got.frames.iter().filter_map(wheel_of).collect();
        if tool.kind.is_pawl() {
            check_burst_wheel(&wheels, m)
        } else {
            anyhow::ensure!(
                wheel_out == m && wheels.iter().all(|&w| w == (Some(-120), Some(-1))),
                "{wheel_out} wheel frames out for {m} wheel reports of one detent down (want each unchanged)"
            );
            Ok(())
        }
    })()
    .map_err(|e| format!("{e:#}"));
    Ok(row)
}

/// pawl's wheel output for `m` one-detent-down reports written as fast as possible: its
/// burst rule (`pawl_engine::scroll::BURST_US`: events within 2 ms of a burst's
/// first share one max step, 5 detents by default) limits the output by time, so fewer
/// frames than reports are expected. Required: output in the inverted direction (up), no
/// frame above the max step, hi-res with every lo-res, and some output.
fn check_burst_wheel(wheels: &[(Option<i32>, Option<i32>)], m: usize) -> anyhow::Result<()> {
    const MAX_STEP_V120: i32 = 5 * 120;
    anyhow::ensure!(!wheels.is_empty(), "no wheel output for {m} wheel reports");
    for (i, &(hi, lo)) in wheels.iter().enumerate() {
        let v = hi.unwrap_or(0);
        anyhow::ensure!(
            v > 0 && v <= MAX_STEP_V120 && lo.is_none_or(|l| l >= 0),
            "wheel frame {i}: hi-res {hi:?} lo-res {lo:?} (want 1..={MAX_STEP_V120} up: inverted, within the max step)"
        );
    }
    Ok(())
}

fn no_drop(dropped: u32) -> anyhow::Result<()> {
    anyhow::ensure!(dropped == 0, "{dropped} SYN_DROPPED at the output's reader");
    Ok(())
}

/// Idle: the counters of every tool over `secs` of doing nothing (measured together: idle
/// programs do not disturb each other).
pub fn idle(tools: &mut [Tool], secs: Duration) -> anyhow::Result<Vec<Row>> {
    for t in tools.iter() {
        let _ = t.out.take();
    }
    let before: Vec<Counters> = tools
        .iter()
        .map(|t| procfs::counters(t.pid()))
        .collect::<anyhow::Result<_>>()?;
    let start = Instant::now();
    std::thread::sleep(secs);
    let secs = start.elapsed().as_secs_f64();
    let mut rows = Vec::new();
    for (t, before) in tools.iter_mut().zip(&before) {
        let after = procfs::counters(t.pid())?;
        let mem = procfs::memory(t.pid())?;
        let got = t.out.take();
        let alive = t.exited()?.is_none();
        rows.push(Row {
            tool: t.kind.name(),
            workload: "idle",
            frames_in: 0,
            frames_out: got.frames.len(),
            secs,
            delta: after.since(before),
            mem,
            dropped: got.dropped,
            extra: Vec::new(),
            check: if alive && got.frames.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "alive {alive}, {} frames out while idle",
                    got.frames.len()
                ))
            },
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_motion_is_never_zero_and_never_repeats_its_neighbour() {
        for i in 0..20_000 {
            let (x, y) = motion_at(i);
            assert!(x != 0 && y != 0 && x.abs() <= 60 && y.abs() <= 60);
            assert_ne!(motion_at(i), motion_at(i + 1));
        }
    }

    #[test]
    fn scroll_notches_reverse_every_hundred() {
        assert_eq!(notch_at(0), -1);
        assert_eq!(notch_at(99), -1);
        assert_eq!(notch_at(100), 1);
        assert_eq!(notch_at(200), -1);
    }

    #[test]
    fn pawl_burst_output_must_be_inverted_and_within_the_max_step() {
        assert!(check_burst_wheel(&[(Some(600), Some(5)), (Some(120), Some(1))], 50).is_ok());
        assert!(check_burst_wheel(&[], 50).is_err());
        assert!(check_burst_wheel(&[(Some(-120), Some(-1))], 50).is_err());
        assert!(check_burst_wheel(&[(Some(720), Some(6))], 50).is_err());
        assert!(check_burst_wheel(&[(None, Some(1))], 50).is_err());
    }

    #[test]
    fn peers_must_pass_the_wheel_through_and_pawl_must_invert_it() {
        let pass: Vec<_> = (0..3)
            .map(|i| {
                let n = i32::from(notch_at(i));
                (Some(120 * n), Some(n))
            })
            .collect();
        assert!(check_scroll(Kind::Kanata, &pass, 3, 0).is_ok());
        assert!(check_scroll(Kind::Pawl, &pass, 3, 0).is_err());
        let inverted = vec![(Some(42), None), (Some(70), Some(0)), (Some(90), Some(1))];
        assert!(check_scroll(Kind::Pawl, &inverted, 3, 0).is_ok());
        assert!(check_scroll(Kind::Xremap, &[(None, Some(-1))], 1, 0).is_err());
        assert!(check_scroll(Kind::Pawl, &inverted, 3, 1).is_err());
        assert!(check_scroll(Kind::PawlHidppOff, &inverted, 3, 0).is_ok());
        assert!(check_scroll(Kind::PawlHidppOff, &pass, 3, 0).is_err());
        assert!(check_scroll(Kind::Logiops, &pass, 3, 0).is_ok());
    }
}
