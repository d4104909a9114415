//! libinput reading pawl's output (userland boot): `libinput debug-events` on the path
//! backend (`--device`), with Debian's udev database behind it, as a Wayland compositor
//! reads the clone and the virtual keyboard; `libinput quirks list` for the device quirks.

use std::process::Command;

use anyhow::{Context, bail, ensure};
use pawl_evdev::codes::{
    BTN_LEFT, BTN_TASK, EV_REL, MSC_SCAN, REL_WHEEL, REL_WHEEL_HI_RES, REL_X, REL_Y,
};

use crate::evdev::{EvdevNode, Event, Frame};
use crate::hid::MX_MASTER_3S_BT;
use crate::pawl::{Pawl, PawlOptions};
use crate::scenarios::Scenario;
use crate::scenarios::rig::Rig;
use crate::scenarios::userland_tools::{DebugEvents, MX_MASTER_3_USB, output, settle};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT, motion_frame};
use crate::sys::InputId;
use crate::uinput::{UinputDevice, UinputSpec, evemu_frames};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    libinput_reads_clone_wheel_v120,
    libinput_reads_clone_buttons,
    libinput_reads_virtual_keyboard_chord,
    libinput_quirks_apply_to_clone_as_to_mouse,
];

/// A real MX Master 3S's hi-res wheel as evdev reports it with the kernel's Logitech driver
/// in hi-res mode (v120 steps of 16–40, `REL_WHEEL` once per 120), recorded
/// (`../shared/recordings/SOURCES.md`).
const HIRES_RECORDING: &str = "mx3s-bolt-hires-wheel.events";

/// What libinput logs when a device announces hi-res scrolling but sends lo-res events
/// alone (`evdev-fallback.c`; libinput then ignores the hi-res axis).
const LOWRES_ONLY_BUG: &str = "only low-resolution events";

/// The `v120` values of libinput's `POINTER_SCROLL_WHEEL` lines on the vertical axis
/// (`vert <value>/<v120>` with a `*` on an axis that changed); zero ones left out.
fn wheel_v120(lines: &[String]) -> Vec<f64> {
    lines
        .iter()
        .filter(|l| l.contains("POINTER_SCROLL_WHEEL"))
        .filter_map(|l| {
            let rest = l.split("vert ").nth(1)?;
            let token = rest.split_whitespace().next()?;
            token.split('/').nth(1)?.trim_end_matches('*').parse().ok()
        })
        .filter(|v: &f64| *v != 0.0)
        .collect()
}

/// `(name, pressed)` of libinput's `prefix` lines (`POINTER_BUTTON`, `KEYBOARD_KEY`):
/// `… BTN_LEFT (272) pressed, seat count: 1` / `… KEY_LEFTMETA (125) released`.
fn key_lines(lines: &[String], prefix: &str, kind: &str) -> Vec<(String, bool)> {
    lines
        .iter()
        .filter(|l| l.contains(prefix))
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let name = words.iter().find(|w| w.starts_with(kind))?;
            let pressed = words.iter().any(|w| w.trim_end_matches(',') == "pressed");
            Some(((*name).to_owned(), pressed))
        })
        .collect()
}

/// The `REL_WHEEL_HI_RES` values the clone emitted.
fn clone_hires(frames: &[Frame]) -> Vec<i32> {
    frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_REL && e.code == REL_WHEEL_HI_RES)
        .map(|e| e.value)
        .collect()
}

/// A uinput "Logitech MX Master 3S" (Bluetooth ids, so pawl handles it) with a hi-res
/// wheel, pawl running on it (default config) and pawl's clone, motion through it checked.
struct HiresRig {
    mouse: UinputDevice,
    clone: EvdevNode,
    _pawl: Pawl,
}

impl HiresRig {
    fn start(ctx: &mut Ctx) -> anyhow::Result<HiresRig> {
        let spec = UinputSpec {
            name: "Logitech MX Master 3S".into(),
            id: InputId {
                bustype: 0x05,
                vendor: 0x046d,
                product: 0xb034,
                version: 0x0001,
            },
            phys: ctx.phys("bt"),
            props: Vec::new(),
            keys: (BTN_LEFT..=BTN_TASK).collect(),
            rels: vec![REL_X, REL_Y, REL_WHEEL, REL_WHEEL_HI_RES],
            mscs: vec![MSC_SCAN],
            abs: Vec::new(),
        };
        let mouse = UinputDevice::create(&spec)?;
        let source = mouse.info()?;
        let dir = ctx.subdir("pawl-hires")?;
        let mut pawl = Pawl::start(
            &ctx.pawl,
            &dir,
            &PawlOptions {
                config: "",
                desktop: "GNOME",
                run_args: &[],
                debug: ctx.pawl_debug,
            },
        )?;
        let clone = pawl.wait_clone(&source, T_DEVICE)?;
        let mut rig = HiresRig {
            mouse,
            clone,
            _pawl: pawl,
        };
        rig.sentinel()?;
        Ok(rig)
    }

    /// A motion that must come out unchanged; the frames before it.
    fn sentinel(&mut self) -> anyhow::Result<Vec<Frame>> {
        let want = motion_frame(7, -5);
        let mut frames = Vec::new();
        let deadline = std::time::Instant::now() + T_EVENT;
        loop {
            self.mouse.emit(&want)?;
            while let Some(f) = self
                .clone
                .next_frame(std::time::Duration::from_millis(200))?
            {
                if f == want {
                    return Ok(frames);
                }
                frames.push(f);
            }
            if std::time::Instant::now() >= deadline {
                bail!("no motion through pawl's clone; frames {frames:?}");
            }
        }
    }
}

/// `libinput_reads_clone_wheel_v120`: libinput reads pawl's clone of the MX Master as a
/// hi-res wheel: `POINTER_SCROLL_WHEEL` events carry v120 values below a detent, together
/// they add up to what the clone emitted on `REL_WHEEL_HI_RES` (libinput's vertical axis
/// points down, evdev's up), and libinput never complains that the device announces hi-res
/// scrolling but sends only lo-res events. The input: a real MX Master 3S's hi-res wheel
/// ([`HIRES_RECORDING`]) played up, then the same down (pawl inverts and smooths it).
pub fn libinput_reads_clone_wheel_v120(ctx: &mut Ctx) -> anyhow::Result<()> {
    let recorded = evemu_frames(&ctx.recording(HIRES_RECORDING)?)?;
    let negated: Vec<Vec<Event>> = recorded
        .iter()
        .map(|f| {
            f.iter()
                .map(|e| Event::new(e.type_, e.code, -e.value))
                .collect()
        })
        .collect();
    let mut rig = HiresRig::start(ctx)?;
    settle()?;
    let li = DebugEvents::start(&rig.clone.info().path)?;
    for frame in recorded.iter().chain(&negated) {
        rig.mouse.emit(frame)?;
    }
    let frames = rig.sentinel()?;
    let emitted = clone_hires(&frames);
    let want: i64 = emitted.iter().map(|&v| -i64::from(v)).sum();
    let up_then_down: i64 = emitted.iter().map(|&v| i64::from(v).abs()).sum();
    ensure!(
        up_then_down > 0,
        "pawl's clone emitted no REL_WHEEL_HI_RES for the recorded wheel"
    );
    // libinput may hold back a small first movement; wait until it has reported what the
    // clone emitted in both directions.
    let lines = li
        .wait_for("scroll of both signs", T_EVENT, |ls| {
            let v = wheel_v120(ls);
            v.iter().any(|&x| x < 0.0) && v.iter().any(|&x| x > 0.0)
        })
        .with_context(|| format!("the clone emitted REL_WHEEL_HI_RES {emitted:?}"))?;
    // Let the last events arrive, then read everything.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let lines = {
        let later = li.lines();
        if later.len() > lines.len() {
            later
        } else {
            lines
        }
    };
    let got = wheel_v120(&lines);
    ctx.notes
        .push(format!("clone REL_WHEEL_HI_RES {emitted:?}"));
    ctx.notes.push(format!("libinput v120 {got:?}"));
    let bug: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains(LOWRES_ONLY_BUG) || l.contains("kernel bug"))
        .collect();
    ensure!(
        bug.is_empty(),
        "libinput complains about the clone: {bug:?}"
    );
    let sum: f64 = got.iter().sum();
    let total: f64 = got.iter().map(|v| v.abs()).sum();
    ensure!(
        (sum - want as f64).abs() < 0.5 && (total - up_then_down as f64).abs() < 0.5,
        "libinput's v120 {got:?} (Σ {sum}, Σ|·| {total}) do not add up to the clone's REL_WHEEL_HI_RES {emitted:?} (want Σ {want}, Σ|·| {up_then_down})"
    );
    ensure!(
        got.iter().any(|v| v.abs() < 120.0),
        "libinput reports only whole detents {got:?}: it reads the lo-res wheel, not v120"
    );
    Ok(())
}

/// `libinput_reads_clone_buttons`: left, right and middle clicks on the MX Master reach
/// libinput through pawl's clone as `POINTER_BUTTON` presses and releases, in order.
pub fn libinput_reads_clone_buttons(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, "", "GNOME")?;
    settle()?;
    let li = DebugEvents::start(&rig.clone.info().path)?;
    let buttons = [(0u8, "BTN_LEFT"), (1, "BTN_RIGHT"), (2, "BTN_MIDDLE")];
    let mut want = Vec::new();
    for (n, name) in buttons {
        rig.mouse.press(n)?;
        rig.mouse.release(n)?;
        want.push((name.to_owned(), true));
        want.push((name.to_owned(), false));
    }
    rig.sentinel()?;
    let lines = li.wait_for("six POINTER_BUTTON lines", T_EVENT, |ls| {
        key_lines(ls, "POINTER_BUTTON", "BTN_").len() >= want.len()
    })?;
    let got = key_lines(&lines, "POINTER_BUTTON", "BTN_");
    ensure!(got == want, "libinput buttons: want {want:?}, got {got:?}");
    Ok(())
}

/// `libinput_reads_virtual_keyboard_chord`: the chords pawl presses on its virtual keyboard
/// for a drag right and then a drag left (GNOME, inverted by default: Super+Page_Up, then
/// Super+Page_Down) reach libinput as `KEYBOARD_KEY` lines in order: modifier down, key
/// down, key up, modifier up, twice.
pub fn libinput_reads_virtual_keyboard_chord(ctx: &mut Ctx) -> anyhow::Result<()> {
    const DRAG: i32 = 600;
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, "", "GNOME")?;
    settle()?;
    let li = DebugEvents::start(&rig.keyboard.info().path)?;
    rig.gesture(DRAG, 0, 10)?;
    rig.sentinel()?;
    rig.gesture(-DRAG, 0, 10)?;
    rig.sentinel()?;
    // libinput's names for the codes pawl's GNOME chords use (`input-event-codes.h`).
    let want: Vec<(String, bool)> = ["KEY_PAGEUP", "KEY_PAGEDOWN"]
        .into_iter()
        .flat_map(|k| {
            [
                ("KEY_LEFTMETA", true),
                (k, true),
                (k, false),
                ("KEY_LEFTMETA", false),
            ]
        })
        .map(|(k, pressed)| (k.to_owned(), pressed))
        .collect();
    let lines = li.wait_for("eight KEYBOARD_KEY lines", T_EVENT, |ls| {
        key_lines(ls, "KEYBOARD_KEY", "KEY_").len() >= want.len()
    })?;
    let got = key_lines(&lines, "KEYBOARD_KEY", "KEY_");
    ensure!(got == want, "libinput keys: want {want:?}, got {got:?}");
    Ok(())
}

/// `libinput quirks list <node>`: the quirks libinput applies to the device, one per line.
fn quirks(node: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let text = output(Command::new("libinput").args(["quirks", "list"]).arg(node))?;
    Ok(text
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
        .collect())
}

/// `libinput_quirks_apply_to_clone_as_to_mouse`: libinput's device quirks match pawl's
/// clone as they match the mouse itself (the clone copies the bus type, ids and name they
/// are matched on): the MX Master 3 (046d:4082, a libinput 1.22 `[Logitech MX Master 3]`
/// entry) and its clone both get `ModelInvertHorizontalScrolling=1`, and the same list.
pub fn libinput_quirks_apply_to_clone_as_to_mouse(ctx: &mut Ctx) -> anyhow::Result<()> {
    let rig = Rig::start(ctx, MX_MASTER_3_USB, "", "GNOME")?;
    settle()?;
    let mouse = quirks(&rig.source.path)?;
    let clone = quirks(&rig.clone.info().path)?;
    ctx.notes.push(format!("mouse quirks {mouse:?}"));
    ctx.notes.push(format!("clone quirks {clone:?}"));
    ensure!(
        mouse
            .iter()
            .any(|q| q == "ModelInvertHorizontalScrolling=1"),
        "libinput gives the MX Master 3 itself no ModelInvertHorizontalScrolling: {mouse:?}"
    );
    ensure!(
        clone == mouse,
        "libinput's quirks for the clone {clone:?} differ from the mouse's {mouse:?}"
    );
    Ok(())
}
