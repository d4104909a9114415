//! The "rig" most pawl scenarios start from — a uhid mouse, a running pawl that handles it,
//! pawl's clone and virtual keyboard — and the checks on what comes out of them: key chords,
//! leaked pointer input, wheel frames.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use pawl_evdev::codes::{
    EV_KEY, EV_REL, REL_HWHEEL, REL_HWHEEL_HI_RES, REL_WHEEL, REL_WHEEL_HI_RES, REL_X, REL_Y,
};

use crate::evdev::{self, EvdevNode, Event, Frame, NodeInfo};
use crate::hid::{GESTURE_BUTTON, HidMouse, MouseModel};
use crate::pawl::{Pawl, PawlOptions};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT};

/// A uhid mouse, a running pawl that handles it, pawl's clone of it and pawl's virtual
/// keyboard, both opened before any input is injected.
#[derive(Debug)]
pub struct Rig {
    /// The mouse.
    pub mouse: HidMouse,
    /// The kernel's evdev node of the mouse.
    pub source: NodeInfo,
    /// pawl.
    pub pawl: Pawl,
    /// pawl's clone of the mouse.
    pub clone: EvdevNode,
    /// pawl's virtual keyboard.
    pub keyboard: EvdevNode,
}

impl Rig {
    /// Creates the mouse, starts pawl with `config` under `desktop`, and waits until the
    /// clone and the virtual keyboard exist.
    pub fn start(
        ctx: &mut Ctx,
        model: MouseModel,
        config: &str,
        desktop: &str,
    ) -> anyhow::Result<Rig> {
        let phys = ctx.phys(if model.bus == crate::uhid::BUS_USB {
            "usb"
        } else {
            "bt"
        });
        let mouse = HidMouse::create(model, &ctx.recordings, &phys)?;
        let source = mouse.wait_node(T_DEVICE)?;
        let dir = ctx.subdir(&format!("pawl-{}", ctx.seq))?;
        let mut pawl = Pawl::start(
            &ctx.pawl,
            &dir,
            &PawlOptions {
                config,
                desktop,
                run_args: &[],
                debug: ctx.pawl_debug,
            },
        )?;
        let clone = pawl.wait_clone(&source, T_DEVICE)?;
        let keyboard = pawl.wait_keyboard(T_DEVICE)?;
        let mut rig = Rig {
            mouse,
            source,
            pawl,
            clone,
            keyboard,
        };
        // Readiness: a motion that comes out of the clone proves the grab and the loop are
        // in place (nothing injected before this point can be lost).
        rig.sentinel()
            .context("pawl does not forward motion after start")?;
        Ok(rig)
    }

    /// Injects a motion report that must come out of the clone unchanged and returns the
    /// frames that came before it (what pawl emitted for the input injected earlier).
    pub fn sentinel(&mut self) -> anyhow::Result<Vec<Frame>> {
        const DX: i32 = 7;
        const DY: i32 = -5;
        self.mouse.motion(DX, DY)?;
        let want = vec![Event::new(EV_REL, REL_X, DX), Event::new(EV_REL, REL_Y, DY)];
        let mut frames = self
            .clone
            .frames_until(T_EVENT, "sentinel motion", |f| *f == want)
            .with_context(|| format!("pawl log: {}", self.pawl.log()))?;
        frames.pop();
        Ok(frames)
    }

    /// Sends SIGTERM and requires exit status 0: pawl releases, ungrabs and exits 0. The mouse
    /// stays.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        let status = self.pawl.terminate(Duration::from_secs(5))?;
        ensure!(
            status.success(),
            "pawl exited with {status} on SIGTERM; log: {}",
            self.pawl.log()
        );
        Ok(())
    }

    /// Holds the gesture button, moves `(dx, dy)` in `steps` equal reports, releases.
    pub fn gesture(&mut self, dx: i32, dy: i32, steps: i32) -> anyhow::Result<()> {
        self.mouse.press(GESTURE_BUTTON)?;
        for _ in 0..steps {
            self.mouse.motion(dx / steps, dy / steps)?;
        }
        self.mouse.release(GESTURE_BUTTON)
    }
}

/// Linux key codes of the chords the issue names (`input-event-codes.h`).
pub mod keys {
    /// `KEY_LEFTCTRL`.
    pub const CTRL: u16 = 29;
    /// `KEY_LEFTMETA` (Super / Meta).
    pub const META: u16 = 125;
    /// `KEY_PAGEUP`.
    pub const PAGE_UP: u16 = 104;
    /// `KEY_PAGEDOWN`.
    pub const PAGE_DOWN: u16 = 109;
    /// `KEY_LEFT`.
    pub const LEFT: u16 = 105;
    /// `KEY_RIGHT`.
    pub const RIGHT: u16 = 106;
    /// `KEY_W`.
    pub const W: u16 = 17;
    /// `KEY_A`.
    pub const A: u16 = 30;
}

/// The `EV_KEY` events (code, value) of `frames`, in order.
pub fn key_events(frames: &[Frame]) -> Vec<(u16, i32)> {
    frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_KEY)
        .map(|e| (e.code, e.value))
        .collect()
}

/// The key events of `chord`: press in order, release in reverse.
pub fn chord_events(chord: &[u16]) -> Vec<(u16, i32)> {
    chord
        .iter()
        .map(|&k| (k, 1))
        .chain(chord.iter().rev().map(|&k| (k, 0)))
        .collect()
}

/// Requires that everything the virtual keyboard emitted so far is exactly `chords`, one
/// after the other. Call after [`Rig::sentinel`]: pawl performs a frame's actions before it
/// reads the next frame, so nothing of the earlier input can still be on its way.
pub fn expect_keys(keyboard: &mut EvdevNode, chords: &[&[u16]]) -> anyhow::Result<()> {
    let want: Vec<(u16, i32)> = chords.iter().flat_map(|c| chord_events(c)).collect();
    let mut frames = keyboard.drain()?;
    // The keyboard write may land a moment after the clone write; wait for what is missing.
    let deadline = Instant::now() + T_EVENT;
    while key_events(&frames).len() < want.len() && Instant::now() < deadline {
        match keyboard.next_frame(deadline.saturating_duration_since(Instant::now()))? {
            Some(f) => frames.push(f),
            None => break,
        }
    }
    frames.extend(keyboard.drain()?);
    let got = key_events(&frames);
    ensure!(
        got == want,
        "virtual keyboard: want {}, got {}",
        show_keys(&want),
        show_keys(&got)
    );
    Ok(())
}

/// `LEFTMETA↓ PAGEUP↓ PAGEUP↑ LEFTMETA↑`.
pub fn show_keys(keys: &[(u16, i32)]) -> String {
    if keys.is_empty() {
        return "nothing".into();
    }
    keys.iter()
        .map(|&(c, v)| {
            let name = pawl_evdev::codes::code_name(EV_KEY, c)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("key {c}"));
            let arrow = match v {
                0 => "↑",
                1 => "↓",
                _ => "↻",
            };
            format!("{name}{arrow}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Requires that `frames` carry no pointer input: no `EV_REL` and no `EV_KEY` events.
pub fn expect_no_pointer_output(frames: &[Frame], what: &str) -> anyhow::Result<()> {
    let leaked: Vec<&Frame> = frames
        .iter()
        .filter(|f| f.iter().any(|e| e.type_ == EV_REL || e.type_ == EV_KEY))
        .collect();
    ensure!(
        leaked.is_empty(),
        "{what}: pawl's clone emitted {}",
        leaked
            .iter()
            .map(|f| format!("{f:?}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(())
}

/// Σ `REL_WHEEL_HI_RES` over `frames`, v120.
pub fn hires_total(frames: &[Frame]) -> i32 {
    frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_REL && e.code == REL_WHEEL_HI_RES)
        .map(|e| e.value)
        .sum()
}

/// Checks the wheel frames pawl emitted for `inputs` (v120 per input report, one sign, one
/// scroll gesture) on one axis:
/// - one output frame per input report, each with a non-zero hi-res value;
/// - the hi-res and lo-res codes come together, in the order `HWHEEL_HI_RES, HWHEEL,
///   WHEEL_HI_RES, WHEEL`, and never a lo-res code alone;
/// - every output has the input's sign (`invert` false) or the opposite (`invert` true);
/// - the lo-res detents are derived from the accumulated hi-res value: after every frame,
///   Σ lo-res = trunc(Σ hi-res / 120);
/// - smoothing: no output is larger than the largest input, and a last input larger than
///   every earlier one (a jump) comes out strictly smaller.
pub fn check_wheel(
    frames: &[Frame],
    vertical: bool,
    inputs: &[i32],
    invert: bool,
) -> anyhow::Result<()> {
    let (hi, lo) = if vertical {
        (REL_WHEEL_HI_RES, REL_WHEEL)
    } else {
        (REL_HWHEEL_HI_RES, REL_HWHEEL)
    };
    let axis = if vertical { "vertical" } else { "horizontal" };
    let order = [REL_HWHEEL_HI_RES, REL_HWHEEL, REL_WHEEL_HI_RES, REL_WHEEL];
    let mut outputs = Vec::new();
    let (mut sum_hi, mut sum_lo) = (0i64, 0i64);
    for f in frames {
        let rels: Vec<&Event> = f.iter().filter(|e| e.type_ == EV_REL).collect();
        let ranks: Vec<usize> = rels
            .iter()
            .filter_map(|e| order.iter().position(|&c| c == e.code))
            .collect();
        ensure!(
            ranks.windows(2).all(|w| w[0] < w[1]),
            "wheel codes out of order (want HWHEEL_HI_RES, HWHEEL, WHEEL_HI_RES, WHEEL): {f:?}"
        );
        let hi_v = rels.iter().find(|e| e.code == hi).map(|e| e.value);
        let lo_v = rels.iter().find(|e| e.code == lo).map(|e| e.value);
        match (hi_v, lo_v) {
            (None, None) => continue,
            (None, Some(_)) => bail!("{axis} lo-res without hi-res in one frame: {f:?}"),
            (Some(h), l) => {
                sum_hi += i64::from(h);
                sum_lo += i64::from(l.unwrap_or(0));
                ensure!(
                    sum_lo == sum_hi / 120,
                    "{axis} lo-res not derived from hi-res: after {f:?} Σhi-res = {sum_hi}, Σlo-res = {sum_lo} (want {})",
                    sum_hi / 120
                );
                outputs.push(h);
            }
        }
    }
    ensure!(
        outputs.len() == inputs.len(),
        "{axis}: {} wheel reports in, {} wheel frames out: {}",
        inputs.len(),
        outputs.len(),
        evdev::show(frames)
    );
    let sign = if invert { -1 } else { 1 };
    for (i, (&inp, &out)) in inputs.iter().zip(&outputs).enumerate() {
        ensure!(
            out != 0 && out.signum() == sign * inp.signum(),
            "{axis} report {i}: in {inp} v120, out {out} (want the {} sign)",
            if invert { "opposite" } else { "same" }
        );
    }
    let max_in = inputs.iter().map(|v| v.abs()).max().unwrap_or(0);
    ensure!(
        outputs.iter().all(|o| o.abs() <= max_in),
        "{axis}: output {outputs:?} exceeds the largest input {max_in}"
    );
    if let Some((&last_in, earlier)) = inputs.split_last() {
        let jump = earlier.iter().all(|v| v.abs() < last_in.abs());
        let last_out = outputs[outputs.len() - 1];
        ensure!(
            earlier.is_empty() || !jump || last_out.abs() < last_in.abs(),
            "{axis}: the jump to {last_in} v120 came out as {last_out}: not smoothed (outputs {outputs:?})"
        );
    }
    Ok(())
}

/// Waits until no evdev node satisfies `pred` (a device being removed).
pub fn wait_gone(what: &str, pred: impl Fn(&NodeInfo) -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + T_DEVICE;
    while evdev::scan().iter().any(&pred) {
        if Instant::now() >= deadline {
            bail!("{what} still present after {T_DEVICE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// Whether `path` appears among pawl's open files.
pub fn holds_open(files: &[PathBuf], path: &Path) -> bool {
    files.iter().any(|f| f == path)
}
