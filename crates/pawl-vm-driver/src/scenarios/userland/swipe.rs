//! Swipe style through libinput (the userland boot): `GESTURE_SWIPE_*` from `libinput
//! debug-events` on pawl's virtual touchpad, what GNOME and KDE act on. The touchpad's
//! own frames are read in `base/swipe.rs`, whose helpers this uses.

use std::time::Duration;

use anyhow::{Context, ensure};
use pawl_evdev::codes::EV_KEY;

use crate::evdev;
use crate::hid::GESTURE_BUTTON;
use crate::scenarios::rig::{Rig, expect_keys, expect_no_pointer_output, wait_gone};
use crate::scenarios::userland_tools::{DebugEvents, settle, udev_info};
use crate::scenarios::{Ctx, T_EVENT};

use crate::scenarios::Scenario;
use crate::scenarios::base::swipe::{SWIPE_CONFIG, TOUCHPAD_NAME, TOUCHPAD_PHYS, start, states};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    swipe_gesture_libinput_sees_three_finger_swipe,
    swipe_gesture_vertical_is_overview_swipe,
    swipe_gesture_libinput_sees_four_finger_swipe_on_kde,
    swipe_gesture_libinput_no_jump_when_pawl_held_up,
    swipe_exit_mid_swipe_ends_the_libinput_swipe,
    swipe_reload_to_shortcut_mid_swipe_ends_the_libinput_swipe,
];

/// How often the paced drags below report motion: 8 ms, a Logi Bolt receiver's 125 Hz (the
/// rate a user's MX Master reports at; a hand's drag is never one burst of reports).
const MOUSE_INTERVAL: Duration = Duration::from_millis(8);

/// libinput's unaccelerated gesture units per touchpad unit: it normalizes a touchpad's
/// deltas to a 1000 dpi mouse (`(1000 / 25.4) / resolution`, 40 units/mm here:
/// `pawl_engine::swipe::TOUCHPAD_RES`) and slows them by its touchpad constant, 0.9 ×
/// `TP_MAGIC_SLOWDOWN` 0.2968 (`filter-touchpad.c`, `touchpad_constant_filter`, 1.22).
const LIBINPUT_UNITS_PER_TOUCHPAD_UNIT: f64 = 1000.0 / 25.4 / 40.0 * 0.9 * 0.2968;

/// One gesture event of `libinput debug-events` (1.22, `tools/libinput-debug-events.c`):
/// `-event7   GESTURE_SWIPE_UPDATE    +1.234s\t3  1.23/ 0.00 ( 1.23/ 0.00 unaccelerated)`;
/// `… GESTURE_SWIPE_BEGIN  +1.200s\t3`; `… GESTURE_SWIPE_END  +1.300s\t3 cancelled`.
#[derive(Clone, Debug, PartialEq)]
struct GestureLine {
    /// `GESTURE_SWIPE_BEGIN`, `GESTURE_HOLD_END`, …
    kind: String,
    fingers: u32,
    /// Accelerated and unaccelerated delta of an `_UPDATE` (zero otherwise).
    delta: (f64, f64),
    unaccel: (f64, f64),
    cancelled: bool,
}

/// The event type of a `debug-events` event line: its second word (`-event7` or `event7`
/// first); libinput's own log lines (`event7  - gesture state …`) have `-` there.
fn event_type(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace();
    let dev = words.next()?;
    dev.trim_start_matches('-')
        .starts_with("event")
        .then(|| words.next())
        .flatten()
}

/// The gesture lines of `lines`, parsed; a line that does not parse is an error naming it.
fn gesture_lines(lines: &[String]) -> anyhow::Result<Vec<GestureLine>> {
    let mut out = Vec::new();
    for line in lines {
        let Some(kind) = event_type(line).filter(|t| t.starts_with("GESTURE_")) else {
            continue;
        };
        let parse = || -> Option<GestureLine> {
            let rest = line.split_once(kind)?.1;
            // The time (`+1.234s`), then the finger count and the rest.
            let rest = rest.trim_start().split_once('s')?.1;
            let numbers: Vec<f64> = rest
                .replace(['/', '(', ')'], " ")
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            let fingers = *numbers.first()? as u32;
            let (delta, unaccel) = if kind.ends_with("_UPDATE") {
                let n = &numbers[1..];
                if n.len() < 4 {
                    return None;
                }
                ((n[0], n[1]), (n[2], n[3]))
            } else {
                ((0.0, 0.0), (0.0, 0.0))
            };
            Some(GestureLine {
                kind: kind.to_owned(),
                fingers,
                delta,
                unaccel,
                cancelled: rest.contains("cancelled"),
            })
        };
        out.push(parse().with_context(|| format!("cannot parse libinput's line {line:?}"))?);
    }
    Ok(out)
}

/// pawl stopped (SIGSTOP) mid-drag while the mouse goes on reporting, then let go on
/// (SIGCONT): it reads the reports queued meanwhile at once, as a pawl held up by a loaded
/// machine does.
#[derive(Clone, Copy, Debug)]
struct HoldUp {
    /// Reports of the drag before pawl is stopped.
    after: i32,
    /// Reports sent while it is stopped (each `interval` apart): they queue in pawl's evdev
    /// client buffer, which must hold them (128 events for the 3S's node: the kernel's
    /// `evdev_compute_buffer_size`, 8 packets of 14 events rounded up; 2 events a report
    /// here), else the kernel drops them (`SYN_DROPPED`) and the swipe is cancelled.
    reports: i32,
}

/// Holds the gesture button and drags `(dx, dy)` px in `steps` equal reports, one per
/// `interval` (none: as fast as they can be written, as pawl reads a backlog after it was
/// held up), with pawl stopped for `hold_up`'s reports, then releases.
fn drag(
    rig: &mut Rig,
    (dx, dy): (i32, i32),
    steps: i32,
    interval: Option<Duration>,
    hold_up: Option<HoldUp>,
) -> anyhow::Result<()> {
    let pause = || interval.map(std::thread::sleep);
    rig.mouse.press(GESTURE_BUTTON)?;
    pause();
    let mut stopped = false;
    let mut moved = || -> anyhow::Result<()> {
        for i in 0..steps {
            if let Some(h) = hold_up {
                if i == h.after {
                    rig.pawl.hold_up(true)?;
                    stopped = true;
                } else if i == h.after + h.reports {
                    rig.pawl.hold_up(false)?;
                    stopped = false;
                }
            }
            rig.mouse.motion(dx / steps, dy / steps)?;
            pause();
        }
        Ok(())
    };
    let r = moved();
    if stopped {
        rig.pawl.hold_up(false)?;
    }
    r?;
    rig.mouse.release(GESTURE_BUTTON)
}

/// What one libinput-read swipe must show.
struct SwipeCheck<'a> {
    desktop: &'a str,
    config: &'a str,
    fingers: u32,
    /// The drag, mouse px, and the fingers' expected travel per px (`swipe_scale`, sign
    /// included: with `invert_desktop` on, a drag right moves the fingers right).
    drag: (i32, i32),
    scale: (f64, f64),
    /// Time between the drag's reports (`None`: a burst), and how many there are.
    interval: Option<Duration>,
    steps: i32,
    /// pawl stopped for a part of the drag.
    hold_up: Option<HoldUp>,
    /// How much of the drag libinput's updates may miss, mm of finger travel: the 2–2.5 mm
    /// it spends deciding the gesture (both touches past 2 mm, 2.5 with 4 fingers:
    /// `tp_gesture_handle_state_unknown`) and the frame that crosses it. Every swipe also
    /// gets at least half of the drag and at most 5 % more.
    short_mm: f64,
}

/// Runs `check`'s drag with libinput reading the virtual touchpad and checks what libinput
/// made of it: one `GESTURE_SWIPE_BEGIN` with the finger count, `GESTURE_SWIPE_UPDATE`s
/// whose unaccelerated deltas point the drag's way and add up to its size less at most
/// `check.short_mm` (what libinput spends deciding the gesture: 2–2.5 mm, and the frame
/// that crosses it), one `GESTURE_SWIPE_END` not
/// cancelled; no `POINTER_MOTION`, no touch jump, no complaint about the device. Returns
/// libinput's lines.
fn libinput_swipe(ctx: &mut Ctx, check: &SwipeCheck) -> anyhow::Result<Vec<String>> {
    let (mut rig, mut pad) = start(ctx, check.config, check.desktop)?;
    settle()?;
    let udev = udev_info(&pad.info().path)?;
    ensure!(
        udev.is_set("ID_INPUT_TOUCHPAD"),
        "udev does not take the virtual touchpad for a touchpad: {:?}",
        udev.input_ids()
    );
    let li = DebugEvents::start(&pad.info().path)?;
    let (dx, dy) = check.drag;
    drag(
        &mut rig,
        check.drag,
        check.steps,
        check.interval,
        check.hold_up,
    )?;
    let lines = li
        .wait_for("GESTURE_SWIPE_END", T_EVENT, |ls| {
            ls.iter()
                .any(|l| event_type(l) == Some("GESTURE_SWIPE_END"))
        })
        .with_context(|| format!("{}: pawl log: {}", check.desktop, rig.pawl.log()))?;
    // Anything libinput says after the end (a late pointer motion) counts too.
    std::thread::sleep(Duration::from_millis(200));
    let lines = li.lines().into_iter().chain(lines).collect::<Vec<_>>();
    let lines = {
        let mut seen = std::collections::HashSet::new();
        lines
            .into_iter()
            .filter(|l| seen.insert(l.clone()))
            .collect::<Vec<_>>()
    };
    let shown = || lines.join("\n");
    let bad: Vec<&String> = lines
        .iter()
        .filter(|l| {
            l.contains("kernel bug") || l.contains("Touch jump") || l.contains("libinput bug")
        })
        .collect();
    ensure!(
        bad.is_empty(),
        "libinput complains about the virtual touchpad: {bad:?}; it printed:\n{}",
        shown()
    );
    ensure!(
        !lines
            .iter()
            .any(|l| event_type(l) == Some("POINTER_MOTION")),
        "the virtual touchpad moved the pointer; libinput printed:\n{}",
        shown()
    );
    let gestures: Vec<GestureLine> = gesture_lines(&lines)?
        .into_iter()
        .filter(|g| g.kind.starts_with("GESTURE_SWIPE"))
        .collect();
    let kinds: Vec<&str> = gestures.iter().map(|g| g.kind.as_str()).collect();
    let updates: Vec<&GestureLine> = gestures
        .iter()
        .filter(|g| g.kind == "GESTURE_SWIPE_UPDATE")
        .collect();
    ensure!(
        kinds.first() == Some(&"GESTURE_SWIPE_BEGIN")
            && kinds.last() == Some(&"GESTURE_SWIPE_END")
            && kinds
                .iter()
                .filter(|k| **k == "GESTURE_SWIPE_BEGIN")
                .count()
                == 1
            && kinds.iter().filter(|k| **k == "GESTURE_SWIPE_END").count() == 1
            && updates.len() >= 2,
        "want one GESTURE_SWIPE_BEGIN, updates, one GESTURE_SWIPE_END; libinput printed:\n{}",
        shown()
    );
    ensure!(
        gestures.iter().all(|g| g.fingers == check.fingers),
        "want {} fingers in every swipe event, got {:?}",
        check.fingers,
        gestures.iter().map(|g| g.fingers).collect::<Vec<_>>()
    );
    ensure!(
        !gestures.last().is_some_and(|g| g.cancelled),
        "libinput cancelled the swipe:\n{}",
        shown()
    );
    // Direction and size, on the drag's axis; the other axis stays (nearly) still.
    let want = (
        f64::from(dx) * check.scale.0 * LIBINPUT_UNITS_PER_TOUCHPAD_UNIT,
        f64::from(dy) * check.scale.1 * LIBINPUT_UNITS_PER_TOUCHPAD_UNIT,
    );
    let sum = updates
        .iter()
        .fold((0.0, 0.0), |s, g| (s.0 + g.unaccel.0, s.1 + g.unaccel.1));
    let horizontal = want.0.abs() >= want.1.abs();
    let (main, cross, main_want) = if horizontal {
        (sum.0, sum.1, want.0)
    } else {
        (sum.1, sum.0, want.1)
    };
    // What the touchpad wrote (first finger's offset after each frame), and libinput's
    // events (not its debug log), for the report.
    let written = states(&pad.drain()?);
    let origin = written
        .iter()
        .find_map(|p| p.active().first().copied())
        .unwrap_or_default();
    ctx.notes.push(format!(
        "{}: touchpad frames (first finger's offset): {:?}",
        check.desktop,
        written
            .iter()
            .map(|p| p.active().first().map(|t| (t.x - origin.x, t.y - origin.y)))
            .collect::<Vec<_>>()
    ));
    ctx.notes.push(format!(
        "{}: libinput events:\n{}",
        check.desktop,
        lines
            .iter()
            .filter(|l| event_type(l).is_some_and(|t| t != "-"))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    ));
    ctx.notes.push(format!(
        "{}: {} updates, unaccelerated sum ({:.1}, {:.1}), the drag is ({:.1}, {:.1}) libinput units",
        check.desktop,
        updates.len(),
        sum.0,
        sum.1,
        want.0,
        want.1
    ));
    let along = |g: &&GestureLine| {
        let v = if horizontal { g.unaccel.0 } else { g.unaccel.1 };
        v * main_want.signum() >= 0.0
    };
    ensure!(
        updates.iter().all(along),
        "an update points against the drag ({want:?}); libinput printed:\n{}",
        shown()
    );
    ensure!(
        main * main_want.signum() >= 0.5 * main_want.abs()
            && main.abs() <= 1.05 * main_want.abs()
            && cross.abs() <= 0.1 * main_want.abs(),
        "libinput's unaccelerated swipe adds up to ({:.1}, {:.1}), the drag to ({:.1}, {:.1}); it printed:\n{}",
        sum.0,
        sum.1,
        want.0,
        want.1,
        shown()
    );
    let mm = check.short_mm;
    let slack = mm * f64::from(pawl_engine::swipe::TOUCHPAD_RES) * LIBINPUT_UNITS_PER_TOUCHPAD_UNIT;
    ensure!(
        main_want.abs() - main * main_want.signum() <= slack,
        "libinput's unaccelerated swipe adds up to {main:.1} of the drag's {main_want:.1} \
         libinput units: more than {mm} mm ({slack:.1}) short; it printed:\n{}",
        shown()
    );
    expect_no_pointer_output(&rig.sentinel()?, "a swipe")?;
    expect_keys(&mut rig.keyboard, &[])?;
    rig.stop()?;
    Ok(lines)
}

/// `swipe_gesture_libinput_sees_three_finger_swipe`: on GNOME a drag right of the gesture
/// button reaches libinput as GNOME's workspace swipe: `GESTURE_SWIPE_BEGIN` with 3
/// fingers, updates to the right adding up to the drag × `swipe_scale` (1.5 here; at most
/// 3 mm short), the end not cancelled, no pointer motion.
pub fn swipe_gesture_libinput_sees_three_finger_swipe(ctx: &mut Ctx) -> anyhow::Result<()> {
    libinput_swipe(
        ctx,
        &SwipeCheck {
            desktop: "GNOME",
            config: "[gesture]\nstyle = \"swipe\"\nswipe_scale = 1.5\n",
            fingers: 3,
            drag: (400, 0),
            scale: (1.5, 1.5),
            interval: Some(MOUSE_INTERVAL),
            steps: 20,
            hold_up: None,
            short_mm: 3.0,
        },
    )
    .map(drop)
}

/// `swipe_gesture_libinput_sees_four_finger_swipe_on_kde`: on KDE a drag left is a 4-finger
/// swipe to the left (Plasma 6's virtual desktop and Overview gestures), scale 1.0 — here
/// with the mouse's reports in one burst (pawl read them late): pawl spreads the frames as
/// a touchpad would send them, so libinput sees no touch jump; the updates add up to the
/// drag less at most 5 mm (libinput decides a 4-finger swipe after 2.5 mm, two of the
/// burst's 2.2 mm frames).
pub fn swipe_gesture_libinput_sees_four_finger_swipe_on_kde(ctx: &mut Ctx) -> anyhow::Result<()> {
    libinput_swipe(
        ctx,
        &SwipeCheck {
            desktop: "KDE",
            config: SWIPE_CONFIG,
            fingers: 4,
            drag: (-800, 0),
            scale: (1.0, 1.0),
            interval: None,
            steps: 20,
            hold_up: None,
            short_mm: 5.0,
        },
    )
    .map(drop)
}

/// `swipe_gesture_libinput_no_jump_when_pawl_held_up`: pawl is stopped
/// (SIGSTOP) for 25 reports of a 250 Hz drag (≥ 100 ms) while the mouse goes on, then
/// continued: it reads the backlog at once and paces its touchpad frames by the time of
/// its writes, so libinput sees no touch jump, the updates still add up to the drag (at
/// most 3 mm short: the 2–2.5 mm libinput spends deciding the gesture, and rounding), and
/// the swipe ends, not cancelled. Paced by the reports' own timestamps (4 ms apart), the
/// backlog's dozen frames would be written microseconds apart, each step a jump.
pub fn swipe_gesture_libinput_no_jump_when_pawl_held_up(ctx: &mut Ctx) -> anyhow::Result<()> {
    libinput_swipe(
        ctx,
        &SwipeCheck {
            desktop: "GNOME",
            config: SWIPE_CONFIG,
            fingers: 3,
            // 45 reports of 16 px: 4 px/ms, a brisk swipe, 18 mm at scale 1.0, in about 25
            // touchpad frames (the driver's own reader of the touchpad, read after the
            // swipe, holds 256 events: 32 frames of 8).
            drag: (720, 0),
            scale: (1.0, 1.0),
            interval: Some(Duration::from_millis(4)),
            steps: 45,
            hold_up: Some(HoldUp {
                after: 10,
                reports: 25,
            }),
            short_mm: 3.0,
        },
    )
    .map(drop)
}

/// `swipe_gesture_vertical_is_overview_swipe`: a drag up is, to libinput, a 3-finger swipe
/// up (GNOME's overview gesture): updates with negative dy adding up to the drag (at most
/// 3 mm short), x still.
pub fn swipe_gesture_vertical_is_overview_swipe(ctx: &mut Ctx) -> anyhow::Result<()> {
    libinput_swipe(
        ctx,
        &SwipeCheck {
            desktop: "GNOME",
            config: SWIPE_CONFIG,
            fingers: 3,
            drag: (0, -300),
            scale: (1.0, 1.0),
            interval: Some(MOUSE_INTERVAL),
            steps: 20,
            hold_up: None,
            short_mm: 3.0,
        },
    )
    .map(drop)
}

/// How a swipe in progress is cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    /// pawl gets SIGTERM: it lifts the fingers and destroys the touchpad as it exits.
    Exit,
    /// The config is switched to shortcut style and pawl gets SIGHUP: it lifts the fingers
    /// and destroys the touchpad, and goes on running.
    ReloadToShortcut,
}

/// Holds the gesture button and drags until libinput has begun the swipe, then `cut`s it
/// with the button still held: libinput must end the swipe (`GESTURE_SWIPE_END`, from
/// pawl's lift or from the device's removal, whichever it reads first: a reader that has
/// not read the lift before the node goes gets `ENODEV`, and libinput's removal lifts every
/// touch, `tp_clear_state`), begin no other, and report no pointer motion or complaint.
fn libinput_swipe_cut(ctx: &mut Ctx, cut: Cut) -> anyhow::Result<()> {
    let (mut rig, pad) = start(ctx, SWIPE_CONFIG, "GNOME")?;
    settle()?;
    let li = DebugEvents::start(&pad.info().path)?;
    let is =
        |kind: &'static str| move |ls: &[String]| ls.iter().any(|l| event_type(l) == Some(kind));
    rig.mouse.press(GESTURE_BUTTON)?;
    for _ in 0..12 {
        rig.mouse.motion(20, 0)?;
        std::thread::sleep(MOUSE_INTERVAL);
    }
    li.wait_for("GESTURE_SWIPE_BEGIN", T_EVENT, is("GESTURE_SWIPE_BEGIN"))
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    match cut {
        Cut::Exit => {
            let status = rig.pawl.terminate(Duration::from_secs(5))?;
            ensure!(
                status.success(),
                "pawl exited with {status} on SIGTERM mid-swipe; log: {}",
                rig.pawl.log()
            );
        }
        Cut::ReloadToShortcut => {
            std::fs::write(rig.pawl.config_path(), "[gesture]\nstyle = \"shortcut\"\n")?;
            rig.pawl.signal(libc::SIGHUP)?;
            wait_gone("the virtual touchpad after SIGHUP to shortcut style", |n| {
                n.name == TOUCHPAD_NAME && n.phys == TOUCHPAD_PHYS
            })
            .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
        }
    }
    li.wait_for("GESTURE_SWIPE_END", T_EVENT, is("GESTURE_SWIPE_END"))
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    // Anything libinput says after the end counts too.
    std::thread::sleep(Duration::from_millis(200));
    let lines = li.lines();
    let shown = || lines.join("\n");
    let count = |kind: &str| lines.iter().filter(|l| event_type(l) == Some(kind)).count();
    ensure!(
        count("GESTURE_SWIPE_BEGIN") == 1 && count("GESTURE_SWIPE_END") == 1,
        "want one swipe begun and ended; libinput printed:\n{}",
        shown()
    );
    ensure!(
        count("POINTER_MOTION") == 0
            && !lines
                .iter()
                .any(|l| l.contains("kernel bug") || l.contains("Touch jump")),
        "pointer motion or a complaint; libinput printed:\n{}",
        shown()
    );
    ensure!(
        gesture_lines(&lines)?
            .iter()
            .filter(|g| g.kind.starts_with("GESTURE_SWIPE"))
            .all(|g| g.fingers == 3),
        "want 3 fingers in every swipe event; libinput printed:\n{}",
        shown()
    );
    let end_at = lines
        .iter()
        .position(|l| event_type(l) == Some("GESTURE_SWIPE_END"));
    // libinput logs "device removed" (`evdev_device_remove`) before the removal lifts the
    // touches; an end before that line is pawl's lift.
    let removed_at = lines.iter().position(|l| l.contains("device removed"));
    ctx.notes.push(format!(
        "{cut:?}: libinput ended the swipe {}:\n{}",
        match (end_at, removed_at) {
            (Some(e), Some(r)) if e > r => "at the device's removal (pawl's lift not read in time)",
            (_, Some(_)) => "on pawl's lift, before the device's removal",
            (_, None) => "on pawl's lift (no removal logged)",
        },
        lines
            .iter()
            .filter(|l| event_type(l).is_some_and(|t| t != "-"))
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    ));
    if cut == Cut::ReloadToShortcut {
        // The button still held goes up under the new config: no click, no chord; pawl
        // runs on and forwards motion again.
        rig.mouse.release(GESTURE_BUTTON)?;
        let out = rig.sentinel()?;
        ensure!(
            !out.iter()
                .flatten()
                .any(|e| e.type_ == EV_KEY && e.value == 1),
            "a press came out of the clone after the reload: {}",
            evdev::show(&out)
        );
        expect_keys(&mut rig.keyboard, &[])?;
        rig.stop()?;
    }
    Ok(())
}

/// `swipe_exit_mid_swipe_ends_the_libinput_swipe`: pawl gets SIGTERM with the gesture
/// button held mid-swipe: it exits 0 and libinput ends the 3-finger swipe (one
/// `GESTURE_SWIPE_END`), with no pointer motion.
pub fn swipe_exit_mid_swipe_ends_the_libinput_swipe(ctx: &mut Ctx) -> anyhow::Result<()> {
    libinput_swipe_cut(ctx, Cut::Exit)
}

/// `swipe_reload_to_shortcut_mid_swipe_ends_the_libinput_swipe`: the config switched to
/// shortcut style and SIGHUP mid-swipe: the virtual touchpad goes, libinput ends the
/// swipe (one `GESTURE_SWIPE_END`, no pointer motion), and the held button's release makes
/// no click and no chord; pawl runs on.
pub fn swipe_reload_to_shortcut_mid_swipe_ends_the_libinput_swipe(
    ctx: &mut Ctx,
) -> anyhow::Result<()> {
    libinput_swipe_cut(ctx, Cut::ReloadToShortcut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gesture_lines_parse_libinput_1_22_debug_events_output() {
        // As `tools/libinput-debug-events.c` (1.22) prints them: `%c%-7s  %-23s `, the time
        // `%+6.3fs\t`, then `%d %5.2f/%5.2f (%5.2f/%5.2f unaccelerated)`.
        let lines: Vec<String> = [
            "-event5   DEVICE_ADDED            pawl virtual touchpad             seat0 default group1  cap:pg  size 162x115mm tap(dl off) left scroll-nat scroll-2fg-edge dwt-on",
            "event5  - gesture state GESTURE_STATE_UNKNOWN → GESTURE_EVENT_SWIPE → GESTURE_STATE_SWIPE",
            "-event5   GESTURE_SWIPE_BEGIN     +0.000s\t3",
            " event5   GESTURE_SWIPE_UPDATE    +0.008s\t3 12.50/-0.25 ( 9.84/-0.20 unaccelerated)",
            " event5   GESTURE_SWIPE_UPDATE    +0.016s\t3 -1.00/ 0.00 (-1.00/ 0.00 unaccelerated)",
            " event5   GESTURE_SWIPE_END       +0.024s\t3 cancelled",
            " event5   GESTURE_HOLD_END        +0.030s\t4",
        ]
        .map(str::to_owned)
        .to_vec();
        let g = gesture_lines(&lines).unwrap();
        let kinds: Vec<&str> = g.iter().map(|g| g.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "GESTURE_SWIPE_BEGIN",
                "GESTURE_SWIPE_UPDATE",
                "GESTURE_SWIPE_UPDATE",
                "GESTURE_SWIPE_END",
                "GESTURE_HOLD_END"
            ]
        );
        assert_eq!(g[1].fingers, 3);
        assert_eq!((g[1].delta, g[1].unaccel), ((12.5, -0.25), (9.84, -0.2)));
        assert_eq!(g[2].unaccel, (-1.0, 0.0));
        assert!(g[3].cancelled && !g[0].cancelled);
        assert_eq!(g[4].fingers, 4);
        assert_eq!(event_type(&lines[1]), Some("-"));
        assert_eq!(event_type(&lines[0]), Some("DEVICE_ADDED"));
    }

    #[test]
    fn a_gesture_line_that_does_not_parse_is_an_error() {
        let lines = vec![" event5   GESTURE_SWIPE_UPDATE    +0.008s\t3 garbage".to_owned()];
        assert!(gesture_lines(&lines).is_err());
    }
}
