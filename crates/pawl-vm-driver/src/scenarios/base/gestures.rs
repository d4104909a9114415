//! Gestures on the chosen device and what pawl leaves alone: `pawl run` on the real kernel
//! with uhid MX Masters, a touchpad and another mouse (drags, clicks, inverted direction,
//! wheel and motion through the clone, other devices untouched, a bad config).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, ensure};
use pawl_evdev::codes::{
    BTN_EXTRA, BTN_FORWARD, BTN_LEFT, BTN_MIDDLE, BTN_RIGHT, BTN_SIDE, EV_KEY, EV_MSC, EV_REL,
    MSC_SCAN, REL_WHEEL, REL_WHEEL_HI_RES, REL_X, REL_Y,
};

use crate::evdev::{self, EvdevNode, Event, Frame};
use crate::hid::{BOLT_RECEIVER, GESTURE_BUTTON, HidMouse, MX_MASTER_3S_BT, MouseModel};
use crate::pawl::{Pawl, PawlOptions, VIRTUAL_KEYBOARD_NAME, clone_phys};
use crate::scenarios::Scenario;
use crate::scenarios::base::kernel::recorded_touchpad;
use crate::scenarios::rig::keys::{A, CTRL, LEFT, META, PAGE_DOWN, PAGE_UP, RIGHT, W};
use crate::scenarios::rig::{
    Rig, check_wheel, expect_keys, expect_no_pointer_output, holds_open, wait_gone,
};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT, abs_x_track, motion_frame};
use crate::sys::InputId;
use crate::uinput::{UinputDevice, UinputSpec};
use crate::watch::{FsWatch, IN_CREATE, IN_OPEN};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    uhid_mx_master_3s_bluetooth,
    uhid_bolt_receiver,
    gesture_right_switches_desktop,
    gesture_left_switches_desktop,
    gesture_up_opens_overview,
    gesture_down_opens_app_expose,
    gesture_below_threshold_does_nothing,
    gesture_click_passes_through,
    inverted_desktop_direction,
    touchpad_untouched,
    other_mouse_untouched,
    bad_config_grabs_nothing,
];

/// Time between wheel notches of a hand-turned wheel.
const NOTCH_GAP: Duration = Duration::from_millis(10);

/// The default configuration: an empty file.
const DEFAULT_CONFIG: &str = "";

/// Travel of a gesture drag, px: past two 220 px default thresholds, so a second fire within
/// one hold (which must not happen without `repeat`) would show.
const DRAG: i32 = 600;

/// `uhid_mx_master_3s_bluetooth`: the real MX Master 3S Bluetooth descriptor → the kernel's
/// evdev node → pawl grabs it and clones it (same name, id and capabilities, phys
/// `pawl/<phys>`); motion comes out bit-exact, one frame per report; wheel reports come out
/// inverted (vertical) and smoothed with hi-res/lo-res consistent, AC Pan not inverted;
/// SIGTERM ungrabs, removes the clone and exits 0.
pub fn uhid_mx_master_3s_bluetooth(ctx: &mut Ctx) -> anyhow::Result<()> {
    let motions = [
        (1, 0),
        (0, -1),
        (5, -3),
        (-2047, 2047),
        (2047, -2047),
        (-1, 1),
        (300, 12),
        (-17, -900),
    ];
    scroll_and_motion(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, &motions)
}

/// `uhid_bolt_receiver`: the same through the Logi Bolt receiver's descriptor (16-bit X/Y).
/// The kernel names it "Logitech USB Receiver …", so the default config leaves it alone; a
/// device rule `id = "046d:c548"`, `mx_master = true` takes it.
pub fn uhid_bolt_receiver(ctx: &mut Ctx) -> anyhow::Result<()> {
    let motions = [
        (1, 0),
        (0, -1),
        (-32767, 32767),
        (32767, -32767),
        (2048, -2049),
        (-300, 4000),
    ];
    let config = "[[device]]\nid = \"046d:c548\"\nmx_master = true\n";
    scroll_and_motion(ctx, BOLT_RECEIVER, config, &motions)
}

/// `gesture_right_switches_desktop`: hold the gesture button (5, `BTN_FORWARD`) and drag
/// right past the threshold. With the default `invert_desktop = true` that is
/// "desktop-left": GNOME Super+Page_Up, KDE Ctrl+Meta+Left. Fires once per hold; nothing of
/// the drag or the button reaches the clone.
pub fn gesture_right_switches_desktop(ctx: &mut Ctx) -> anyhow::Result<()> {
    gesture_case(ctx, "GNOME", DEFAULT_CONFIG, (DRAG, 0), &[META, PAGE_UP])?;
    gesture_case(ctx, "KDE", DEFAULT_CONFIG, (DRAG, 0), &[CTRL, META, LEFT])
}

/// `gesture_left_switches_desktop`: drag left → (inverted) "desktop-right": GNOME
/// Super+Page_Down, KDE Ctrl+Meta+Right.
pub fn gesture_left_switches_desktop(ctx: &mut Ctx) -> anyhow::Result<()> {
    gesture_case(ctx, "GNOME", DEFAULT_CONFIG, (-DRAG, 0), &[META, PAGE_DOWN])?;
    gesture_case(ctx, "KDE", DEFAULT_CONFIG, (-DRAG, 0), &[CTRL, META, RIGHT])
}

/// `gesture_up_opens_overview`: drag up → overview: GNOME Super, KDE Meta+W.
pub fn gesture_up_opens_overview(ctx: &mut Ctx) -> anyhow::Result<()> {
    gesture_case(ctx, "GNOME", DEFAULT_CONFIG, (0, -DRAG), &[META])?;
    gesture_case(ctx, "KDE", DEFAULT_CONFIG, (0, -DRAG), &[META, W])
}

/// `gesture_down_opens_app_expose`: drag down → app exposé: GNOME Super+A (the GNOME
/// "show applications" default).
pub fn gesture_down_opens_app_expose(ctx: &mut Ctx) -> anyhow::Result<()> {
    gesture_case(ctx, "GNOME", DEFAULT_CONFIG, (0, DRAG), &[META, A])
}

/// `inverted_desktop_direction`: with `invert_desktop = false` dragging right is
/// "desktop-right" (GNOME Super+Page_Down) and left is "desktop-left" (Super+Page_Up): the
/// opposite of the default, checked by the two gesture scenarios above.
pub fn inverted_desktop_direction(ctx: &mut Ctx) -> anyhow::Result<()> {
    let config = "[gesture]\ninvert_desktop = false\n";
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, config, "GNOME")?;
    rig.gesture(DRAG, 0, 10)?;
    rig.gesture(-DRAG, 0, 10)?;
    let frames = rig.sentinel()?;
    expect_no_pointer_output(&frames, "gesture drags")?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_DOWN], &[META, PAGE_UP]])?;
    rig.stop()
}

/// `gesture_below_threshold_does_nothing`: a 200 px drag (threshold 220) fires no action and
/// moves no pointer; the release passes the original click through, as a
/// release without a fired gesture does.
pub fn gesture_below_threshold_does_nothing(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    rig.gesture(200, 0, 10)?;
    rig.gesture(0, -200, 10)?;
    let frames = rig.sentinel()?;
    expect_only_clicks(&frames, 2)?;
    expect_keys(&mut rig.keyboard, &[])?;
    rig.stop()
}

/// `gesture_click_passes_through`: press and release of the gesture button without motion
/// comes out of the clone as a `BTN_FORWARD` click, and no key is pressed.
pub fn gesture_click_passes_through(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    rig.gesture(0, 0, 1)?;
    let frames = rig.sentinel()?;
    expect_only_clicks(&frames, 1)?;
    expect_keys(&mut rig.keyboard, &[])?;
    rig.stop()
}

/// `touchpad_untouched`: a touchpad (the recorded Synaptics description, uinput) next to an
/// MX Master: pawl neither grabs nor holds it open, makes no clone of it, and replaying the
/// recorded two-finger scroll costs pawl no syscall; a plain reader sees every event.
pub fn touchpad_untouched(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (touchpad, frames) = recorded_touchpad(ctx)?;
    let rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    untouched(rig, &touchpad, &frames, |got| {
        let (want, got) = (abs_x_track(&frames), abs_x_track(got));
        ensure!(want == got, "touchpad reader: ABS_X {got:?}, want {want:?}");
        Ok(())
    })
}

/// `other_mouse_untouched`: a plain USB mouse with a wheel next to an MX Master is out of the
/// default scroll scope and has no gesture handling: not grabbed, not held open, no clone,
/// its events reach a plain reader unchanged (wheel not inverted) and cost pawl no syscall.
pub fn other_mouse_untouched(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("usb-0000:00:14.0-2/input0");
    let spec = UinputSpec {
        name: "PixArt USB Optical Mouse".into(),
        id: InputId {
            bustype: 0x03,
            vendor: 0x093a,
            product: 0x2510,
            version: 0x0111,
        },
        phys,
        props: Vec::new(),
        keys: vec![BTN_LEFT, BTN_RIGHT, BTN_MIDDLE, BTN_SIDE, BTN_EXTRA],
        rels: vec![REL_X, REL_Y, REL_WHEEL, REL_WHEEL_HI_RES],
        mscs: vec![MSC_SCAN],
        abs: Vec::new(),
    };
    let mouse = UinputDevice::create(&spec)?;
    let frames: Vec<Frame> = vec![
        motion_frame(5, -3),
        vec![
            Event::new(EV_REL, REL_WHEEL_HI_RES, 120),
            Event::new(EV_REL, REL_WHEEL, 1),
        ],
        vec![
            Event::new(EV_MSC, MSC_SCAN, 0x90004),
            Event::new(EV_KEY, BTN_SIDE, 1),
        ],
        vec![
            Event::new(EV_MSC, MSC_SCAN, 0x90004),
            Event::new(EV_KEY, BTN_SIDE, 0),
        ],
        motion_frame(-2, 9),
    ];
    let rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    untouched(rig, &mouse, &frames, |got| {
        ensure!(
            got == frames.as_slice(),
            "other mouse reader\n want {}\n  got {}",
            evdev::show(&frames),
            evdev::show(got)
        );
        Ok(())
    })
}

/// `bad_config_grabs_nothing`: a config with an out-of-range value makes `pawl run` exit
/// non-zero with `file:line:column` and the key, before it opens any input device or
/// `/dev/uinput` (so nothing can have been grabbed, and no virtual device made); the mouse
/// keeps working for everyone else.
pub fn bad_config_grabs_nothing(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("bt");
    let mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    let mut reader = EvdevNode::open(&source.path)?;
    let watch = FsWatch::new(&[
        (Path::new("/dev/input"), IN_OPEN | IN_CREATE),
        (Path::new("/dev/uinput"), IN_OPEN),
    ])?;
    let dir = ctx.subdir("pawl")?;
    let mut pawl = Pawl::start(
        &ctx.pawl,
        &dir,
        &PawlOptions {
            config: "[gesture]\nthreshold = 0\n",
            desktop: "GNOME",
            run_args: &[],
            debug: ctx.pawl_debug,
        },
    )?;
    let status = pawl.wait_exit(T_EVENT)?;
    let log = pawl.log();
    ctx.notes.push(format!("pawl output: {log}"));
    ensure!(!status.success(), "pawl exited 0 with a bad config");
    let location = format!("{}:2:", pawl.config_path().display());
    ensure!(
        log.contains(&location) && log.contains("threshold"),
        "the error does not name {location}<column> and the key `threshold`: {log:?}"
    );
    let touched: Vec<String> = watch
        .events()?
        .into_iter()
        .filter(|e| e.path != Path::new("/dev/input"))
        .map(|e| {
            let what = if e.mask & IN_CREATE != 0 {
                "created"
            } else {
                "opened"
            };
            format!("{what} {}", e.path.display())
        })
        .collect();
    ensure!(
        touched.is_empty(),
        "pawl touched devices before rejecting the config: {}",
        touched.join(", ")
    );
    let strays: Vec<_> = evdev::scan()
        .into_iter()
        .filter(|n| n.phys.starts_with("pawl/") || n.name == VIRTUAL_KEYBOARD_NAME)
        .collect();
    ensure!(
        strays.is_empty(),
        "virtual devices left behind: {}",
        evdev::describe(&strays)
    );
    mouse.motion(3, 4)?;
    let got = reader.frames(1, T_EVENT)?;
    ensure!(
        got == vec![motion_frame(3, 4)],
        "the mouse after pawl's exit: {}",
        evdev::show(&got)
    );
    Ok(())
}

/// The body of the two uhid scenarios.
fn scroll_and_motion(
    ctx: &mut Ctx,
    model: MouseModel,
    config: &str,
    motions: &[(i32, i32)],
) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, model, config, "GNOME")?;
    let source = rig.source.clone();

    // The clone: same name, id and capabilities. (Other nodes of the same HID device, like
    // the Bolt receiver's Consumer Control, share the phys; they are noted, not judged.)
    let clones: Vec<_> = evdev::scan()
        .into_iter()
        .filter(|n| n.phys == clone_phys(&source))
        .collect();
    ctx.notes
        .push(format!("pawl's clones: {}", evdev::describe(&clones)));
    let clone_info = rig.clone.info().clone();
    ensure!(
        clone_info.name == source.name && clone_info.id == source.id,
        "clone {:?} {:?} differs from the source {:?} {:?}",
        clone_info.name,
        clone_info.id,
        source.name,
        source.id
    );
    let src_node = EvdevNode::open(&source.path)?;
    for (ty, max) in [(EV_REL, 0x0f), (EV_KEY, 0x2ff), (EV_MSC, 0x07)] {
        let want: Vec<u16> = (0..=max).filter(|&c| src_node.has(ty, c)).collect();
        let got: Vec<u16> = (0..=max).filter(|&c| rig.clone.has(ty, c)).collect();
        ensure!(
            want == got,
            "clone capabilities of type {ty}: {got:x?}, source {want:x?}"
        );
    }

    // A plain reader of the source sees nothing while pawl holds the grab.
    let mut src_reader = EvdevNode::open(&source.path)?;

    // Motion: bit-exact, one frame per report, one write() per frame (events and
    // SYN_REPORT in one write) and no more evdev reads than frames (one read takes all
    // available), plus at most one hidraw read per report for a HID++ mouse.
    let before = settled_syscalls(&rig.pawl)?;
    for &(dx, dy) in motions {
        rig.mouse.motion(dx, dy)?;
    }
    let got = rig.clone.frames(motions.len(), T_EVENT)?;
    let want: Vec<Frame> = motions.iter().map(|&(x, y)| motion_frame(x, y)).collect();
    ensure!(
        got == want,
        "motion through pawl\n want {}\n  got {}",
        evdev::show(&want),
        evdev::show(&got)
    );
    let extra = rig.sentinel()?;
    ensure!(
        extra.is_empty(),
        "extra frames after the motion: {}",
        evdev::show(&extra)
    );
    let after = settled_syscalls(&rig.pawl)?;
    let frames = motions.len() as u64 + 1;
    let (reads, writes) = (after.0 - before.0, after.1 - before.1);
    ctx.notes.push(format!(
        "{frames} motion frames: {reads} read-like and {writes} write-like syscalls"
    ));
    // With HID++ on (the default) the kernel hands each report of an MX Master to pawl's
    // hidraw reader too: one more read per frame, dropped after one byte compare.
    let reads_per_frame = if model.hidpp.is_some() { 2 } else { 1 };
    ensure!(
        writes == frames && (1..=reads_per_frame * frames).contains(&reads),
        "{frames} motion frames cost pawl {reads} reads and {writes} writes (want 1 write per frame, at most {reads_per_frame} reads per frame)"
    );

    // Wheel: five detents then a jump of four, up; then two detents of AC Pan right. The
    // reports come 10 ms apart, as a hand turns a wheel: reports within 2 ms are a
    // free-spin burst that shares one max step (pawl-engine `BURST_US`).
    let vertical = [1i8, 1, 1, 1, 1, 4];
    for &d in &vertical {
        rig.mouse.wheel(d)?;
        std::thread::sleep(NOTCH_GAP);
    }
    let horizontal = [1i8, 1];
    for &d in &horizontal {
        rig.mouse.pan(d)?;
        std::thread::sleep(NOTCH_GAP);
    }
    let frames = rig.sentinel()?;
    ctx.notes
        .push(format!("wheel frames out: {}", evdev::show(&frames)));
    let v120 = |ds: &[i8]| ds.iter().map(|&d| i32::from(d) * 120).collect::<Vec<_>>();
    check_wheel(&frames, true, &v120(&vertical), true)?;
    check_wheel(&frames, false, &v120(&horizontal), false)?;

    let leaked = src_reader.drain()?;
    ensure!(
        leaked.is_empty(),
        "the source is not grabbed: a plain reader got {}",
        evdev::show(&leaked)
    );

    // SIGTERM: exit 0, clone gone, source free.
    let clone_path = rig.clone.info().path.clone();
    let phys = clone_phys(&source);
    drop(src_reader);
    rig.stop()?;
    wait_gone(&format!("clone {}", clone_path.display()), |n| {
        n.phys == phys
    })?;
    ensure!(
        EvdevNode::open(&source.path)?.is_free_to_grab()?,
        "the source is still grabbed after pawl exited"
    );
    Ok(())
}

/// One gesture run under `desktop`: two identical drags (fresh pawl, fresh mouse); each
/// fires `chord` exactly once and leaks nothing to the clone.
fn gesture_case(
    ctx: &mut Ctx,
    desktop: &str,
    config: &str,
    (dx, dy): (i32, i32),
    chord: &[u16],
) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, config, desktop)
        .with_context(|| format!("XDG_CURRENT_DESKTOP={desktop}"))?;
    for _ in 0..2 {
        rig.gesture(dx, dy, 10)?;
        let frames = rig.sentinel()?;
        expect_no_pointer_output(&frames, "gesture drag")
            .with_context(|| format!("XDG_CURRENT_DESKTOP={desktop}"))?;
        expect_keys(&mut rig.keyboard, &[chord])
            .with_context(|| format!("XDG_CURRENT_DESKTOP={desktop}"))?;
    }
    rig.stop()
}

/// Requires `frames` to hold exactly `n` gesture-button clicks (press then release of
/// `BTN_FORWARD`) and no motion or other button.
fn expect_only_clicks(frames: &[Frame], n: usize) -> anyhow::Result<()> {
    let pointer: Vec<(u16, u16, i32)> = frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_REL || e.type_ == EV_KEY)
        .map(|e| (e.type_, e.code, e.value))
        .collect();
    let click = [(EV_KEY, BTN_FORWARD, 1), (EV_KEY, BTN_FORWARD, 0)];
    let want: Vec<(u16, u16, i32)> = click.iter().copied().cycle().take(2 * n).collect();
    ensure!(
        pointer == want,
        "want {n} BTN_FORWARD click(s) (button {GESTURE_BUTTON}) and nothing else, got {}",
        evdev::show(frames)
    );
    Ok(())
}

/// The checks shared by the "untouched" scenarios: `device` is not grabbed, not held open,
/// not cloned; injecting `frames` into it costs pawl no syscall, and a plain reader's frames
/// pass `check`.
fn untouched(
    mut rig: Rig,
    device: &UinputDevice,
    frames: &[Frame],
    check: impl Fn(&[Frame]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let info = device.info()?;
    let cloned: Vec<_> = evdev::scan()
        .into_iter()
        .filter(|n| n.phys == clone_phys(&info))
        .collect();
    ensure!(
        cloned.is_empty(),
        "pawl cloned {:?}: {}",
        info.name,
        evdev::describe(&cloned)
    );
    ensure!(
        !holds_open(&rig.pawl.open_files()?, device.node()),
        "pawl holds {} ({:?}) open",
        device.node().display(),
        info.name
    );
    let mut reader = EvdevNode::open(device.node())?;
    ensure!(
        reader.is_free_to_grab()?,
        "{:?} is grabbed by someone",
        info.name
    );
    let before = settled_syscalls(&rig.pawl)?;
    // A uinput write delivers to every reader before it returns: drain after each frame so
    // the reader's buffer never overflows.
    let mut got = Vec::new();
    for f in frames {
        device.emit(f)?;
        got.extend(reader.drain()?);
    }
    check(&got)?;
    // Give pawl the chance to (wrongly) wake up before looking at its counters.
    std::thread::sleep(Duration::from_millis(300));
    let after = rig.pawl.syscalls()?;
    ensure!(
        before == after,
        "pawl made syscalls while only {:?} had input: (syscr, syscw) {before:?} → {after:?}",
        info.name
    );
    let clone_frames = rig.clone.drain()?;
    ensure!(
        clone_frames.is_empty(),
        "the MX Master clone emitted {}",
        evdev::show(&clone_frames)
    );
    // pawl still serves the MX Master.
    rig.sentinel()?;
    rig.stop()
}

/// pawl's `(syscr, syscw)` once they stopped moving (two equal samples 100 ms apart): the
/// tail of earlier work (a last read that finds nothing) must not count against a check.
fn settled_syscalls(pawl: &Pawl) -> anyhow::Result<(u64, u64)> {
    let mut last = pawl.syscalls()?;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        let now = pawl.syscalls()?;
        if now == last {
            return Ok(now);
        }
        last = now;
    }
    anyhow::bail!("pawl's syscall counters never settle: {last:?} (busy while idle?)")
}
