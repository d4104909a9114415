//! Swipe style (`[gesture] style = "swipe"`): a held drag of the gesture button
//! becomes a multi-finger swipe on pawl's virtual touchpad. Checked here by reading the
//! touchpad's evdev node directly (what libinput reads); `userland/swipe.rs` checks it
//! through libinput itself.

use std::time::Duration;

use anyhow::{Context, ensure};
use pawl_evdev::codes::{
    ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_SLOT, ABS_MT_TRACKING_ID, BTN_FORWARD,
    BTN_TOOL_QUADTAP, BTN_TOOL_TRIPLETAP, BTN_TOUCH, EV_ABS, EV_KEY, EV_REL,
};

use crate::evdev::{self, EvdevNode, Frame};
use crate::hid::{GESTURE_BUTTON, MX_MASTER_3S_BT};
use crate::scenarios::Scenario;
use crate::scenarios::rig::{Rig, expect_keys, expect_no_pointer_output};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    swipe_gesture_touchpad_frames_follow_the_drag,
    swipe_gesture_vertical_touchpad_frames_move_up,
    swipe_click_without_motion_passes_through,
    swipe_unplug_mid_swipe_lifts_fingers,
];

/// The virtual touchpad's name and phys (`pawl_linux::touchpad`).
pub(crate) const TOUCHPAD_NAME: &str = "pawl virtual touchpad";
pub(crate) const TOUCHPAD_PHYS: &str = "pawl/touchpad";

/// Swipe style with the desktop's finger count.
pub(crate) const SWIPE_CONFIG: &str = "[gesture]\nstyle = \"swipe\"\n";

/// Per-slot touch state as a reader of the node sees it (the input core drops repeated
/// values, so state carries over between frames).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) id: i32,
    pub(crate) x: i32,
    pub(crate) y: i32,
}

/// The touchpad's state after each frame: the active touches (slot order), `BTN_TOUCH`,
/// and the `BTN_TOOL_*` codes down.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pad {
    slot: usize,
    slots: [Option<Slot>; 4],
    touch: bool,
    tools: Vec<u16>,
}

impl Pad {
    fn apply(&mut self, frame: &Frame) {
        for e in frame {
            match (e.type_, e.code) {
                (EV_ABS, ABS_MT_SLOT) => self.slot = (e.value as usize).min(3),
                (EV_ABS, ABS_MT_TRACKING_ID) => {
                    self.slots[self.slot] = (e.value >= 0).then(|| Slot {
                        id: e.value,
                        ..self.slots[self.slot].unwrap_or_default()
                    })
                }
                (EV_ABS, ABS_MT_POSITION_X) => {
                    if let Some(s) = &mut self.slots[self.slot] {
                        s.x = e.value;
                    }
                }
                (EV_ABS, ABS_MT_POSITION_Y) => {
                    if let Some(s) = &mut self.slots[self.slot] {
                        s.y = e.value;
                    }
                }
                (EV_KEY, BTN_TOUCH) => self.touch = e.value != 0,
                (EV_KEY, code) if e.value != 0 => self.tools.push(code),
                (EV_KEY, code) => self.tools.retain(|c| *c != code),
                _ => {}
            }
        }
    }

    pub(crate) fn active(&self) -> Vec<Slot> {
        self.slots.iter().flatten().copied().collect()
    }
}

/// The states after each of `frames`.
pub(crate) fn states(frames: &[Frame]) -> Vec<Pad> {
    let mut pad = Pad::default();
    frames
        .iter()
        .map(|f| {
            pad.apply(f);
            pad.clone()
        })
        .collect()
}

/// Starts the rig with swipe style under `desktop` and opens the virtual touchpad.
pub(crate) fn start(
    ctx: &mut Ctx,
    config: &str,
    desktop: &str,
) -> anyhow::Result<(Rig, EvdevNode)> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, config, desktop)?;
    let pad = rig.pawl.wait_node(TOUCHPAD_NAME, T_DEVICE, |n| {
        n.name == TOUCHPAD_NAME && n.phys == TOUCHPAD_PHYS
    })?;
    ensure!(
        pad.is_free_to_grab()?,
        "pawl grabbed its own virtual touchpad"
    );
    Ok((rig, pad))
}

/// Reads touchpad frames until every finger is up again.
pub(crate) fn until_lift(pad: &mut EvdevNode, what: &str) -> anyhow::Result<Vec<Frame>> {
    until_lift_from(pad, what, Pad::default())
}

/// [`until_lift`] with the state of frames read before.
pub(crate) fn until_lift_from(
    pad: &mut EvdevNode,
    what: &str,
    state: Pad,
) -> anyhow::Result<Vec<Frame>> {
    // `frames_until` takes a `Fn`: the state it carries between frames is in a cell.
    let state = std::cell::RefCell::new(state);
    pad.frames_until(T_EVENT, what, |f| {
        let mut state = state.borrow_mut();
        let was_down = !state.active().is_empty();
        state.apply(f);
        was_down && state.active().is_empty()
    })
}

/// Checks one swipe of `fingers` fingers whose offset ends at `(dx, dy)` from where the
/// fingers went down, every finger moving alike and the lift ending it.
pub(crate) fn check_swipe(
    frames: &[Frame],
    fingers: usize,
    dx: i32,
    dy: i32,
) -> anyhow::Result<()> {
    let s = states(frames);
    let tool = if fingers == 3 {
        BTN_TOOL_TRIPLETAP
    } else {
        BTN_TOOL_QUADTAP
    };
    let first = s.first().context("no touchpad frame")?;
    ensure!(
        first.active().len() == fingers && first.touch && first.tools == [tool],
        "first frame: want {fingers} fingers down with BTN_TOUCH and {tool:#x}, got {first:?}; frames {}",
        evdev::show(frames)
    );
    let start = first.active();
    let last_down = s
        .iter()
        .rev()
        .find(|p| !p.active().is_empty())
        .context("no frame with fingers down")?;
    let end = last_down.active();
    ensure!(
        end.len() == fingers,
        "fingers lost mid-swipe: {last_down:?}"
    );
    for (a, b) in start.iter().zip(&end) {
        ensure!(
            a.id == b.id && (b.x - a.x, b.y - a.y) == (dx, dy),
            "finger moved {:?}, want ({dx}, {dy}) (scale 1.0: touchpad units = px); frames {}",
            (b.x - a.x, b.y - a.y),
            evdev::show(frames)
        );
    }
    // Positions follow the drag monotonically along its axis.
    let xs: Vec<i32> = s
        .iter()
        .filter_map(|p| p.active().first().map(|t| t.x))
        .collect();
    let ys: Vec<i32> = s
        .iter()
        .filter_map(|p| p.active().first().map(|t| t.y))
        .collect();
    let monotone = |v: &[i32], d: i32| v.windows(2).all(|w| (w[1] - w[0]) * d.signum() >= 0);
    ensure!(
        monotone(&xs, dx) && monotone(&ys, dy),
        "positions do not follow the drag: x {xs:?} y {ys:?}"
    );
    let last = s.last().context("no frame")?;
    ensure!(
        last.active().is_empty() && !last.touch && last.tools.is_empty(),
        "the last frame does not lift every finger: {last:?}"
    );
    Ok(())
}

/// `swipe_gesture_touchpad_frames_follow_the_drag`: with swipe style the held drag goes to
/// the virtual touchpad: the desktop's fingers (GNOME 3, KDE 4) go down together, move by
/// the drag (scale 1.0), lift at the release; the clone gets no motion and no gesture
/// click, the keyboard no chord.
pub fn swipe_gesture_touchpad_frames_follow_the_drag(ctx: &mut Ctx) -> anyhow::Result<()> {
    for (desktop, fingers) in [("GNOME", 3), ("KDE", 4)] {
        let (mut rig, mut pad) = start(ctx, SWIPE_CONFIG, desktop)?;
        rig.gesture(300, 0, 10)?;
        let frames = until_lift(&mut pad, "lift after the drag")
            .with_context(|| format!("{desktop}: pawl log: {}", rig.pawl.log()))?;
        check_swipe(&frames, fingers, 300, 0).with_context(|| desktop.to_owned())?;
        let clone = rig.sentinel()?;
        expect_no_pointer_output(&clone, "a swipe")?;
        expect_keys(&mut rig.keyboard, &[])?;
        rig.stop()?;
    }
    Ok(())
}

/// `swipe_gesture_vertical_touchpad_frames_move_up`: a drag up moves the same fingers up
/// (GNOME's and KDE's overview swipe), x unchanged.
pub fn swipe_gesture_vertical_touchpad_frames_move_up(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (mut rig, mut pad) = start(ctx, SWIPE_CONFIG, "GNOME")?;
    rig.gesture(0, -240, 8)?;
    let frames = until_lift(&mut pad, "lift after the drag up")
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    check_swipe(&frames, 3, 0, -240)?;
    expect_no_pointer_output(&rig.sentinel()?, "a vertical swipe")?;
    rig.stop()
}

/// `swipe_click_without_motion_passes_through`: a press and release of the gesture button
/// without motion is the click on the clone; the touchpad stays untouched.
pub fn swipe_click_without_motion_passes_through(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (mut rig, mut pad) = start(ctx, SWIPE_CONFIG, "GNOME")?;
    rig.gesture(0, 0, 1)?;
    let frames = rig.sentinel()?;
    let pointer: Vec<(u16, u16, i32)> = frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_REL || e.type_ == EV_KEY)
        .map(|e| (e.type_, e.code, e.value))
        .collect();
    ensure!(
        pointer == [(EV_KEY, BTN_FORWARD, 1), (EV_KEY, BTN_FORWARD, 0)],
        "want one BTN_FORWARD click (button {GESTURE_BUTTON}), got {}",
        evdev::show(&frames)
    );
    let touched = pad.drain()?;
    ensure!(
        touched.is_empty(),
        "a click touched the touchpad: {}",
        evdev::show(&touched)
    );
    rig.stop()
}

/// `swipe_unplug_mid_swipe_lifts_fingers`: the mouse vanishes with the gesture button held
/// mid-swipe: the fingers lift, pawl keeps running and no click comes out.
pub fn swipe_unplug_mid_swipe_lifts_fingers(ctx: &mut Ctx) -> anyhow::Result<()> {
    let (rig, mut pad) = start(ctx, SWIPE_CONFIG, "GNOME")?;
    let Rig {
        mut mouse,
        mut pawl,
        mut clone,
        ..
    } = rig;
    mouse.press(GESTURE_BUTTON)?;
    mouse.motion(40, 0)?;
    mouse.motion(40, 0)?;
    let down = pad
        .frames_until(T_EVENT, "fingers down", |f| {
            f.iter()
                .any(|e| e.type_ == EV_KEY && e.code == BTN_TOUCH && e.value == 1)
        })
        .with_context(|| format!("pawl log: {}", pawl.log()))?;
    let before = states(&down).pop().unwrap_or_default();
    ensure!(
        before.active().len() == 3,
        "want 3 fingers down, got {before:?}"
    );
    drop(mouse);
    let frames = until_lift_from(&mut pad, "lift on unplug", before.clone())
        .with_context(|| format!("pawl log: {}", pawl.log()))?;
    let mut lifted = before;
    for f in &frames {
        lifted.apply(f);
    }
    ensure!(
        lifted.active().is_empty() && !lifted.touch && lifted.tools.is_empty(),
        "fingers, BTN_TOUCH or BTN_TOOL_* still down after the lift: {lifted:?}"
    );
    std::thread::sleep(Duration::from_millis(200));
    let out = clone.drain()?;
    ensure!(
        !out.iter()
            .flatten()
            .any(|e| e.type_ == EV_KEY && e.value == 1),
        "a press came out of the clone on unplug: {}",
        evdev::show(&out)
    );
    ensure!(
        pawl.try_exit()?.is_none(),
        "pawl exited when the mouse vanished; log: {}",
        pawl.log()
    );
    Ok(())
}
