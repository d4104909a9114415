//! The harness's own ground truth: what the kernel makes of the uhid MX Master 3S, without
//! pawl. Every pawl scenario relies on these mappings.

use std::time::Duration;

use anyhow::{Context, ensure};
use pawl_evdev::codes::{
    ABS_MT_POSITION_X, ABS_X, BTN_FORWARD, BTN_LEFT, BTN_SIDE, BTN_TOOL_FINGER, BTN_TOUCH, EV_ABS,
    EV_KEY, EV_MSC, EV_REL, MSC_SCAN, REL_HWHEEL, REL_HWHEEL_HI_RES, REL_WHEEL, REL_WHEEL_HI_RES,
    REL_X, REL_Y,
};

use crate::evdev::{EvdevNode, Event, Frame};
use crate::hid::{BOLT_RECEIVER, GESTURE_BUTTON, HidMouse, MX_MASTER_3S_BT};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT, abs_x_track, motion_frame};
use crate::uinput::{UinputDevice, UinputSpec, evemu_frames};

/// The recorded touchpad: evemu description and a two-finger vertical scroll.
pub const TOUCHPAD_DESC: &str = "evemu-devices--SynPS2 Synaptics TouchPad.desc";
/// See [`TOUCHPAD_DESC`].
pub const TOUCHPAD_EVENTS: &str =
    "evemu-devices--SynPS2 Synaptics TouchPad.two-finger-vert-scroll.events";
use crate::scenarios::Scenario;
use crate::uhid::{BUS_BLUETOOTH, BUS_USB, UhidEvent};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    uhid_mx_master_3s_creates_evdev_node,
    uhid_bolt_receiver_creates_evdev_nodes,
    uinput_touchpad_replays_recording,
    static_pawl_runs_in_vm,
];

/// The uhid MX Master 3S (real Bluetooth descriptor), bound by hid-logitech-hidpp, becomes
/// an evdev mouse named "Logitech " + its HID++ name, 0005:046d:b034, with the 16 buttons, motion, and both wheels with hi-res codes;
/// report bits map to the codes pawl's button numbering assumes.
pub fn uhid_mx_master_3s_creates_evdev_node(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("bt");
    let mut mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let info = mouse.wait_node(T_DEVICE)?;
    ctx.notes.push(format!(
        "kernel node: {} {:?} phys {:?}",
        info.path.display(),
        info.name,
        info.phys
    ));
    let want_name = format!("Logitech {}", MX_MASTER_3S_BT.name);
    ensure!(
        info.name == want_name,
        "name {:?}, want {want_name:?} (hid-logitech-hidpp names it from 0x0005)",
        info.name,
    );
    ensure!(
        (info.id.bustype, info.id.vendor, info.id.product) == (BUS_BLUETOOTH, 0x046d, 0xb034),
        "id {:04x}:{:04x}:{:04x}, want 0005:046d:b034",
        info.id.bustype,
        info.id.vendor,
        info.id.product
    );
    let mut node = EvdevNode::open(&info.path)?;
    let rels = [
        REL_X,
        REL_Y,
        REL_WHEEL,
        REL_WHEEL_HI_RES,
        REL_HWHEEL,
        REL_HWHEEL_HI_RES,
    ];
    for code in rels {
        ensure!(
            node.has(EV_REL, code),
            "no {:?}",
            Event::new(EV_REL, code, 0)
        );
    }
    for code in BTN_LEFT..BTN_LEFT + 16 {
        ensure!(
            node.has(EV_KEY, code),
            "no {:?}",
            Event::new(EV_KEY, code, 0)
        );
    }
    ensure!(node.has(EV_MSC, MSC_SCAN), "no MSC_SCAN");

    // The device side saw the driver bind (UHID_START) and, with our reader holding the
    // evdev node, the HID device opened (UHID_OPEN last). The driver's HID++ requests were
    // answered on the device's thread and are not among these events.
    let mut events = Vec::new();
    while let Some(ev) = mouse.uhid().next_event(Duration::from_millis(200))? {
        events.push(ev);
    }
    ensure!(
        matches!(events.first(), Some(UhidEvent::Start(_)))
            && events.last() == Some(&UhidEvent::Open),
        "uhid events {events:?}, want UHID_START first and UHID_OPEN last"
    );

    // Button page usage N arrives as MSC_SCAN 0x9000N with BTN_MOUSE + N - 1.
    let scan = |bit: u8| Event::new(EV_MSC, MSC_SCAN, 0x90000 + i32::from(bit) + 1);
    mouse.motion(-2047, 2047)?;
    // One detent: 15 counts in the high-resolution mode the driver set.
    mouse.wheel(1)?;
    mouse.pan(-1)?;
    mouse.press(GESTURE_BUTTON)?;
    mouse.release(GESTURE_BUTTON)?;
    mouse.press(3)?;
    mouse.release(3)?;
    let want = vec![
        motion_frame(-2047, 2047),
        // hid-logitech-hidpp (`hidpp_scroll_counter_handle_scroll`) emits the hi-res code
        // first; AC Pan goes through hid-input (6.1 `hidinput_handle_scroll`), lo-res first.
        vec![
            Event::new(EV_REL, REL_WHEEL_HI_RES, 120),
            Event::new(EV_REL, REL_WHEEL, 1),
        ],
        vec![
            Event::new(EV_REL, REL_HWHEEL, -1),
            Event::new(EV_REL, REL_HWHEEL_HI_RES, -120),
        ],
        vec![scan(GESTURE_BUTTON), Event::new(EV_KEY, BTN_FORWARD, 1)],
        vec![scan(GESTURE_BUTTON), Event::new(EV_KEY, BTN_FORWARD, 0)],
        vec![scan(3), Event::new(EV_KEY, BTN_SIDE, 1)],
        vec![scan(3), Event::new(EV_KEY, BTN_SIDE, 0)],
    ];
    let got = node.frames(want.len(), T_EVENT)?;
    ensure!(
        got == want,
        "kernel frames\n want {}\n  got {}",
        crate::evdev::show(&want),
        crate::evdev::show(&got)
    );

    // The grab probe the pawl scenarios use: while one fd holds the grab, another sees it
    // taken and receives nothing.
    ensure!(node.is_free_to_grab()?, "someone grabs the fresh device");
    let mut other = EvdevNode::open(&info.path)?;
    node.grab()?;
    ensure!(!other.is_free_to_grab()?, "the probe misses a grab");
    mouse.motion(1, 1)?;
    let got = node.frames(1, T_EVENT)?;
    ensure!(
        got == vec![motion_frame(1, 1)],
        "grabbing reader got {got:?}"
    );
    let leaked = other.drain()?;
    ensure!(leaked.is_empty(), "a grab let {leaked:?} through");
    Ok(())
}

/// The Bolt receiver descriptor (hid-generic, no hid-logitech-dj): one node per HID
/// application — "Logitech USB Receiver Mouse" with 16-bit motion, plus Consumer Control and
/// System Control — so the default config, which takes a receiver only when its name says MX
/// Master, does not take it.
pub fn uhid_bolt_receiver_creates_evdev_nodes(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("usb");
    let mouse = HidMouse::create(BOLT_RECEIVER, &ctx.recordings, &phys)?;
    let info = mouse.wait_node(T_DEVICE)?;
    ensure!(
        info.name == "Logitech USB Receiver Mouse"
            && (info.id.bustype, info.id.vendor, info.id.product) == (BUS_USB, 0x046d, 0xc548),
        "mouse node {info:?}"
    );
    let mut node = EvdevNode::open(&info.path)?;
    let siblings: Vec<String> = crate::evdev::scan()
        .into_iter()
        .filter(|n| n.phys == phys && n.path != info.path)
        .map(|n| n.name)
        .collect();
    ctx.notes
        .push(format!("other nodes of the receiver: {siblings:?}"));
    ensure!(
        siblings.iter().any(|n| n.ends_with("Consumer Control")),
        "no Consumer Control node: {siblings:?}"
    );
    let motions = [(-32767, 32767), (2048, -2049), (1, 0)];
    for (dx, dy) in motions {
        mouse.motion(dx, dy)?;
    }
    let got = node.frames_until(T_EVENT, "the last motion", |f| *f == motion_frame(1, 0))?;
    let want: Vec<Frame> = motions.iter().map(|&(x, y)| motion_frame(x, y)).collect();
    ensure!(got == want, "16-bit motion: {got:?}, want {want:?}");
    Ok(())
}

/// The static `pawl` binary runs in the bare initramfs (no /etc, no libc on disk) and
/// reports a config error with file:line:column (`pawl config check`).
pub fn static_pawl_runs_in_vm(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("config")?;
    let file = dir.join("config.toml");
    std::fs::write(&file, "[gesture]\nthreshold = 0\n")?;
    let out = std::process::Command::new(&ctx.pawl)
        .args(["config", "check"])
        .arg(&file)
        .env_clear()
        .output()
        .with_context(|| format!("cannot run {}", ctx.pawl.display()))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    ensure!(
        !out.status.success() && text.contains(&format!("{}:2:", file.display())),
        "pawl config check of a bad config: {}: {text:?}",
        out.status
    );
    Ok(())
}

/// The recorded Synaptics touchpad description becomes a uinput touchpad with the recorded
/// identity and multitouch axes, and replaying the recorded two-finger scroll reaches a
/// reader.
pub fn uinput_touchpad_replays_recording(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (touchpad, frames) = recorded_touchpad(ctx)?;
    let phys = touchpad.info()?.phys;
    let mut reader = EvdevNode::open(touchpad.node())?;
    let info = reader.info().clone();
    ensure!(
        info.name == "SynPS/2 Synaptics TouchPad"
            && (info.id.bustype, info.id.vendor, info.id.product) == (0x11, 0x0002, 0x0007)
            && info.phys == phys,
        "touchpad node {info:?}"
    );
    for (ty, code) in [
        (EV_ABS, ABS_X),
        (EV_ABS, ABS_MT_POSITION_X),
        (EV_KEY, BTN_TOUCH),
        (EV_KEY, BTN_TOOL_FINGER),
    ] {
        ensure!(reader.has(ty, code), "no {:?}", Event::new(ty, code, 0));
    }
    let mut got = Vec::new();
    for f in &frames {
        touchpad.emit(f)?;
        got.extend(reader.drain()?);
    }
    let (want, got) = (abs_x_track(&frames), abs_x_track(&got));
    ensure!(
        !want.is_empty() && want == got,
        "ABS_X through uinput: {got:?}, want {want:?}"
    );
    Ok(())
}

/// The recorded touchpad as a uinput device, and the recorded two-finger scroll as frames.
/// The axes' fuzz is set to 0: with the recorded fuzz the input core would smooth the
/// replayed values, and the scenarios compare them.
pub fn recorded_touchpad(ctx: &mut Ctx) -> anyhow::Result<(UinputDevice, Vec<Frame>)> {
    let desc = ctx.recording(TOUCHPAD_DESC)?;
    let events = ctx.recording(TOUCHPAD_EVENTS)?;
    let phys = ctx.phys("isa0060/serio1/input0");
    let mut spec = UinputSpec::from_evemu(&desc, &phys)?;
    for (_, axis) in &mut spec.abs {
        axis.fuzz = 0;
    }
    Ok((UinputDevice::create(&spec)?, evemu_frames(&events)?))
}
