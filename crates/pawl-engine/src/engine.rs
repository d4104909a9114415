//! The per-device engine: gesture recognition, button mapping and the scroll pipeline,
//! one frame in, one decision out.

use crate::action::Action;
use crate::config::{
    AppKey, ButtonsConfig, Config, GNOME_SWIPE_FINGERS, GestureConfig, GestureStyle, ScrollSettings,
};
use crate::device::DeviceInfo;
use crate::frame::{Actions, Buttons, FrameIn, FrameOut, Verdict};
use crate::scroll::{ScrollAxis, ScrollParams};
use crate::swipe::{SWIPE_SLOP_PX, SwipeFingers};
use crate::units::{Button, ButtonSet, Micros};

/// A gesture direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Dragged left.
    Left,
    /// Dragged right.
    Right,
    /// Dragged up.
    Up,
    /// Dragged down.
    Down,
}

/// The gesture recognizer's state while the gesture button is held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Held {
    /// Accumulated motion since the press (or the last repeat fire), px.
    x: i64,
    y: i64,
    /// Whether an action fired during this hold (swipe style: whether the fingers are
    /// down).
    fired: bool,
}

/// Settings resolved for one device from a [`Config`]; `Copy` so the hot path reads them
/// without indirection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    /// Gesture settings.
    pub gesture: GestureConfig,
    /// Whether the wheel is transformed.
    pub transform_scroll: bool,
    /// Scroll settings.
    pub scroll: ScrollSettings,
    /// `scroll` in the pipeline's fixed point, converted once here (the event path reads no
    /// floats).
    pub scroll_fixed: ScrollParams,
    /// Buttons with a mapping other than pass-through (excluding the gesture button), as a
    /// mask for a cheap check.
    mapped: ButtonSet,
    /// Fingers of a swipe: `gesture.fingers`, or [`GNOME_SWIPE_FINGERS`] when the
    /// backend did not resolve the desktop's ([`GestureConfig::swipe_fingers`]).
    pub fingers: u8,
}

/// One resolved profile with its button table.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Slot {
    profile: Profile,
    /// Button actions: index = button number; only entries in `profile.mapped` are read.
    button_actions: [Action; 32],
}

impl Slot {
    fn new(
        gesture: GestureConfig,
        buttons: &ButtonsConfig,
        transform_scroll: bool,
        scroll: ScrollSettings,
    ) -> Slot {
        let mut button_actions = [Action::PassThrough; 32];
        let mut mapped = ButtonSet::default();
        for n in 0..=Button::MAX {
            let b = Button(n);
            if b == gesture.button {
                continue;
            }
            if let Some(a) = buttons.action(b) {
                button_actions[n as usize] = a;
                if a != Action::PassThrough {
                    mapped.set(b, true);
                }
            }
        }
        Slot {
            profile: Profile {
                gesture,
                transform_scroll,
                scroll,
                scroll_fixed: ScrollParams::new(&scroll),
                mapped,
                fingers: gesture.fingers.unwrap_or(GNOME_SWIPE_FINGERS),
            },
            button_actions,
        }
    }
}

/// Which profile a [`DeviceEngine`] runs: its device profile or one of an application's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileId {
    /// The device's own profile (no `[[app]]` table applies to the focused app).
    Device,
    /// The profile of the `[[app]]` tables naming this application.
    App(AppKey),
}

/// The engine for one handled device. Deterministic: the same frames and times give the
/// same output.
///
/// It holds every profile it can run, resolved when it is made: its device profile and
/// one per application that an `[[app]]` table applies to for this device.
/// [`DeviceEngine::set_app`] switches between them by index.
#[derive(Clone, Debug)]
pub struct DeviceEngine {
    /// The profile in force (a copy of `slots[active]`, read on the hot path).
    profile: Profile,
    /// Button actions of the profile in force.
    button_actions: [Action; 32],
    /// Slot 0: the device profile; then one per application with a profile of its own.
    slots: Box<[Slot]>,
    /// Per [`AppKey`]: its slot, 0 when no `[[app]]` table applies to this device.
    app_slots: Box<[u16]>,
    /// The slot in force.
    active: u16,
    /// The slot asked for while a gesture was held: it takes over when the gesture ends.
    pending: Option<u16>,
    /// The slot whose scroll settings are in force when the application under the pointer
    /// decides scroll ([`DeviceEngine::set_scroll_app`]); `None`: the active slot's.
    scroll_from: Option<u16>,
    /// The application asked for last.
    app: ProfileId,
    held: Option<Held>,
    /// Buttons pressed on the virtual device (so releases match presses and a cancel
    /// releases everything).
    pressed_out: ButtonSet,
    wheel: ScrollAxis,
    hwheel: ScrollAxis,
    /// The swipe style's fingers while they are down (from the slop until they lift, which
    /// may be a little after the release: [`SwipeFingers`]).
    fingers: Option<SwipeFingers>,
}

impl DeviceEngine {
    /// The engine for `device` under `config`, `None` when the config does not handle it.
    pub fn new(config: &Config, device: &DeviceInfo) -> Option<DeviceEngine> {
        let decision = config.decide(device);
        if !decision.handle {
            return None;
        }
        let mut engine =
            DeviceEngine::with_profile(config, decision.transform_scroll, decision.scroll);
        engine.add_app_profiles(config, device);
        Some(engine)
    }

    /// The engine with explicit scroll handling and no application profiles (for
    /// `pawl replay` and tests; [`DeviceEngine::add_app_profiles`] adds them).
    pub fn with_profile(
        config: &Config,
        transform_scroll: bool,
        scroll: ScrollSettings,
    ) -> DeviceEngine {
        let slot = Slot::new(config.gesture, &config.buttons, transform_scroll, scroll);
        DeviceEngine {
            profile: slot.profile,
            button_actions: slot.button_actions,
            slots: Box::new([slot]),
            app_slots: Box::new([]),
            active: 0,
            pending: None,
            scroll_from: None,
            app: ProfileId::Device,
            held: None,
            pressed_out: ButtonSet::default(),
            wheel: ScrollAxis::default(),
            hwheel: ScrollAxis::default(),
            fingers: None,
        }
    }

    /// The resolved settings in force.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Resolves the profile of every application of `config` that an `[[app]]` table
    /// applies to for `device` ([`Config::app_settings`]), replacing any added before. The
    /// device profile (and whether the wheel is transformed) stays as made; the engine
    /// returns to it.
    pub fn add_app_profiles(&mut self, config: &Config, device: &DeviceInfo) {
        let transform = self.slots[0].profile.transform_scroll;
        let mut slots = vec![self.slots[0]];
        let mut app_slots = vec![0u16; config.app_key_count()];
        for (i, slot) in app_slots.iter_mut().enumerate() {
            let Some(s) = config.app_settings(device, AppKey(i as u16)) else {
                continue;
            };
            let new = Slot::new(s.gesture, &s.buttons, transform, s.scroll);
            // Applications with the same settings share a slot.
            *slot = match slots.iter().position(|old| *old == new) {
                Some(k) => k as u16,
                None => {
                    slots.push(new);
                    (slots.len() - 1) as u16
                }
            };
        }
        self.slots = slots.into_boxed_slice();
        self.app_slots = app_slots.into_boxed_slice();
        self.app = ProfileId::Device;
        self.pending = None;
        self.scroll_from = None;
        self.active = u16::MAX;
        self.switch_to(0);
    }

    /// The focused application changed to `app` (`None`: an application no `[[app]]`
    /// table names, or none known). An index lookup, no allocation.
    ///
    /// The rule for a change in the middle of something: while the gesture button is held
    /// or a swipe's fingers are down, the profile in force stays until the gesture ends
    /// (its release fires what the old profile says); otherwise the new profile applies at
    /// once. When the scroll settings in force change, scroll state is reset (smoothing
    /// starts afresh, a glide stops: ask [`DeviceEngine::next_deadline`] again). Buttons held
    /// through a change are released as they were pressed: a press sent on is released, a
    /// swallowed (mapped) press stays swallowed.
    pub fn set_app(&mut self, app: Option<AppKey>) {
        let slot = app
            .and_then(|k| self.app_slots.get(usize::from(k.0)))
            .copied()
            .unwrap_or(0);
        self.app = match app {
            Some(k) if slot != 0 => ProfileId::App(k),
            _ => ProfileId::Device,
        };
        if self.held.is_some() || self.fingers.is_some() {
            self.pending = Some(slot);
        } else {
            self.pending = None;
            self.switch_to(slot);
        }
    }

    /// The application under the pointer changed to `app` (`None`: one no `[[app]]` table
    /// names): from now on its profile's scroll settings apply, whichever application is
    /// focused (the device's when no table applies to it). Buttons and gestures still
    /// follow [`DeviceEngine::set_app`]. A platform calls it once per scroll gesture, where
    /// it can tell the application under the pointer without polling; else it never does
    /// and the focused application decides scroll. When the scroll settings change, scroll
    /// state is reset (a glide stops). An index lookup, no allocation.
    pub fn set_scroll_app(&mut self, app: Option<AppKey>) {
        let slot = app
            .and_then(|k| self.app_slots.get(usize::from(k.0)))
            .copied()
            .unwrap_or(0);
        self.scroll_from = Some(slot);
        self.apply_scroll(slot, self.profile.scroll_fixed);
    }

    /// The focused application decides scroll again (undoes
    /// [`DeviceEngine::set_scroll_app`]).
    pub fn scroll_follows_focus(&mut self) {
        self.scroll_from = None;
        self.apply_scroll(self.active, self.profile.scroll_fixed);
    }

    /// Puts slot `slot`'s scroll settings in force; resets scroll state when they differ
    /// from `before`, the ones in force until now.
    fn apply_scroll(&mut self, slot: u16, before: ScrollParams) {
        let from = self.slots[usize::from(slot)].profile;
        self.profile.scroll = from.scroll;
        self.profile.scroll_fixed = from.scroll_fixed;
        if from.scroll_fixed != before {
            self.wheel.reset();
            self.hwheel.reset();
        }
    }

    /// The profile asked for by the last [`DeviceEngine::set_app`] (in force, or waiting
    /// for the gesture to end: [`DeviceEngine::switch_pending`]).
    pub fn app_profile(&self) -> ProfileId {
        self.app
    }

    /// Whether a profile change waits for the held gesture to end.
    pub fn switch_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// How many distinct profiles the engine holds (1 = the device profile only).
    pub fn profile_count(&self) -> usize {
        self.slots.len()
    }

    fn switch_to(&mut self, slot: u16) {
        if slot == self.active {
            return;
        }
        let before = self.profile.scroll_fixed;
        let s = self.slots[usize::from(slot)];
        self.profile = s.profile;
        self.button_actions = s.button_actions;
        self.active = slot;
        // The application under the pointer, when one was set, keeps deciding scroll.
        self.apply_scroll(self.scroll_from.unwrap_or(slot), before);
    }

    /// Applies a pending profile once no gesture is in progress.
    #[inline]
    fn settle(&mut self) {
        if self.pending.is_some() && self.held.is_none() && self.fingers.is_none() {
            let slot = self.pending.take().unwrap_or(0);
            self.switch_to(slot);
        }
    }

    /// Whether the gesture button is held (motion is being swallowed).
    pub fn gesture_held(&self) -> bool {
        self.held.is_some()
    }

    /// Buttons currently pressed on the virtual device.
    pub fn pressed_out(&self) -> ButtonSet {
        self.pressed_out
    }

    /// Processes one input frame. On [`Verdict::Forward`] `out` is untouched; on
    /// [`Verdict::Rewrite`] `out` holds the whole output frame and the actions fired.
    ///
    /// A swipe's touchpad frames are paced against the frame's own time (`input.time`):
    /// right where the frames are written as they are read, one at a time (`pawl replay`,
    /// HID++ reports, tests). A backend that may read a backlog of frames at once and write
    /// their output together passes the time of the write: [`DeviceEngine::frame_at`].
    #[inline]
    pub fn frame(&mut self, input: &FrameIn, out: &mut FrameOut) -> Verdict {
        self.frame_at(input, input.time, out)
    }

    /// [`DeviceEngine::frame`] with the swipe's touchpad frames paced against `write_time`,
    /// µs on the clock of `input.time` and of [`DeviceEngine::tick`]: when the output of
    /// this frame is written (for the Linux daemon, `CLOCK_MONOTONIC` read once when it
    /// woke up; the kernel stamps the touchpad's frames with the time of their write, and
    /// libinput judges a step by the time between those stamps, see [`crate::swipe`]).
    /// Frames read in one burst share one `write_time`: the first may write a touchpad
    /// frame, the rest is carried to the next frame due (a later report, or the deadline).
    /// The scroll pipeline and everything else use `input.time`, whatever `write_time` is.
    /// `write_time` must not go back from one call to the next (with `tick`'s `now`).
    #[inline]
    pub fn frame_at(&mut self, input: &FrameIn, write_time: Micros, out: &mut FrameOut) -> Verdict {
        // Fast path: plain motion (and untransformed wheel) with the gesture button up.
        if input.buttons.is_empty()
            && self.held.is_none()
            && (!self.profile.transform_scroll || (input.wheel.v120 == 0 && input.hwheel.v120 == 0))
        {
            return Verdict::Forward;
        }
        self.frame_slow(input, write_time, out)
    }

    /// Whether [`DeviceEngine::frame_at`] of `input` reads its `write_time`: swipe style
    /// with the gesture button held or fingers down, or a button change in `input` (a press
    /// with motion in the same frame puts the fingers down). Otherwise `write_time` is
    /// unused and a backend need not read the clock for it.
    #[inline]
    pub fn paces_touch(&self, input: &FrameIn) -> bool {
        self.profile.gesture.style == GestureStyle::Swipe
            && (self.held.is_some() || self.fingers.is_some() || !input.buttons.is_empty())
    }

    fn frame_slow(&mut self, input: &FrameIn, write_time: Micros, out: &mut FrameOut) -> Verdict {
        out.clear();
        // Buttons first: a press in this frame gates this frame's motion.
        let (mut changed, release_gesture) = self.buttons_in(input, out);
        let swipe = self.profile.gesture.style == GestureStyle::Swipe;
        changed |= if swipe {
            self.swipe_motion_in(input, write_time, out)
        } else {
            self.shortcut_motion_in(input, out)
        };
        if release_gesture {
            self.release_gesture(swipe, write_time, out);
        }
        // A profile change waiting for the gesture to end takes over now that it has.
        self.settle();
        changed |= self.wheel_in(input, out);
        if changed || !out.actions.is_empty() {
            Verdict::Rewrite
        } else {
            Verdict::Forward
        }
    }

    /// The button changes of `input`: the gesture button starts a hold (its release is
    /// returned, to be handled after the motion), mapped buttons push their action, the
    /// rest pass through. Returns (whether the frame changed, whether the gesture button
    /// was released).
    fn buttons_in(&mut self, input: &FrameIn, out: &mut FrameOut) -> (bool, bool) {
        let mut changed = false;
        let mut release_gesture = false;
        let gesture_button = self.profile.gesture.button;
        for change in input.buttons.as_slice() {
            let b = change.button;
            if b == gesture_button {
                changed = true;
                if change.pressed {
                    if self.held.is_none() {
                        self.held = Some(Held::default());
                        // The last swipe's fingers, still catching up: they lift now.
                        if let Some(f) = self.fingers.take() {
                            f.lift(&mut out.touch);
                        }
                    }
                } else {
                    release_gesture = true;
                }
                continue;
            }
            if change.pressed {
                if self.profile.mapped.contains(b) {
                    changed = true;
                    let action = self.button_actions[b.0 as usize];
                    if action != Action::None {
                        out.actions.push(action);
                    }
                } else {
                    self.pressed_out.set(b, true);
                    out.buttons.push(b, true);
                }
            } else if self.pressed_out.contains(b) {
                self.pressed_out.set(b, false);
                out.buttons.push(b, false);
            } else {
                // The press was swallowed (mapped) or happened before pawl took the device.
                changed = true;
            }
        }
        (changed, release_gesture)
    }

    /// Motion in swipe style: with the gesture button held it moves the virtual fingers
    /// (down once past [`SWIPE_SLOP_PX`]); otherwise it passes through. Returns whether
    /// the frame changed.
    fn swipe_motion_in(&mut self, input: &FrameIn, write_time: Micros, out: &mut FrameOut) -> bool {
        let Some(held) = &mut self.held else {
            out.dx = input.dx;
            out.dy = input.dy;
            return false;
        };
        if input.dx == 0 && input.dy == 0 {
            return false;
        }
        held.x = held.x.saturating_add(i64::from(input.dx));
        held.y = held.y.saturating_add(i64::from(input.dy));
        // Dragged past the pad's edge, the fingers stay there and the way back moves them
        // at once, as fingers held against a real pad's edge.
        let (rx, ry) = swipe_reach_px(&self.profile);
        held.x = held.x.clamp(-rx, rx);
        held.y = held.y.clamp(-ry, ry);
        if !held.fired
            && !out.touch.lift
            && held.x.unsigned_abs().max(held.y.unsigned_abs()) >= SWIPE_SLOP_PX
        {
            // The fingers go down now; they move in the next frame that is due.
            held.fired = true;
            self.fingers = Some(SwipeFingers::down(
                self.profile.fingers,
                write_time,
                &mut out.touch,
            ));
        }
        if held.fired
            && let Some(f) = &mut self.fingers
        {
            let (dx, dy) = swipe_offset(held, &self.profile);
            f.aim(dx, dy, write_time);
            if f.advance(write_time, &mut out.touch) {
                self.fingers = None;
            }
        }
        true
    }

    /// Motion in shortcut style: with the gesture button held it adds to the drag and fires
    /// the direction's action at each threshold; otherwise it passes through. Returns
    /// whether the frame changed.
    fn shortcut_motion_in(&mut self, input: &FrameIn, out: &mut FrameOut) -> bool {
        let Some(held) = &mut self.held else {
            out.dx = input.dx;
            out.dy = input.dy;
            return false;
        };
        let mut changed = false;
        if input.dx != 0 || input.dy != 0 {
            changed = true;
            held.x = held.x.saturating_add(i64::from(input.dx));
            held.y = held.y.saturating_add(i64::from(input.dy));
        }
        // With `repeat`, one large frame may cross several thresholds: fire for each, at
        // most as many as the frame's action list has room for (`none` counts).
        let room = Actions::CAP - out.actions.len();
        if let Some((dir, fires)) = fire(held, &self.profile.gesture, room) {
            changed = true;
            held.fired = true;
            let action = direction_action(&self.profile.gesture, dir);
            if action != Action::None {
                for _ in 0..fires {
                    out.actions.push(action);
                }
            }
        }
        changed
    }

    /// The gesture button's release, after this frame's motion: a swipe's fingers lift
    /// once they are where the hand is (the desktop decides from the swipe's distance and
    /// speed whether it commits or springs back); a hold that fired nothing is a click.
    fn release_gesture(&mut self, swipe: bool, write_time: Micros, out: &mut FrameOut) {
        let Some(held) = self.held.take() else {
            return;
        };
        if !held.fired {
            match self.profile.gesture.click {
                Action::PassThrough => {
                    let b = self.profile.gesture.button;
                    out.buttons.push(b, true);
                    out.buttons.push(b, false);
                }
                Action::None => {}
                a => {
                    out.actions.push(a);
                }
            }
        } else if swipe && let Some(f) = &mut self.fingers {
            f.release(write_time);
            if f.advance(write_time, &mut out.touch) {
                self.fingers = None;
            }
        }
    }

    /// The wheel of `input`: through the scroll pipeline when this profile transforms
    /// scroll, else as it came. Returns whether the frame changed.
    fn wheel_in(&mut self, input: &FrameIn, out: &mut FrameOut) -> bool {
        if !self.profile.transform_scroll {
            out.wheel = input.wheel.into();
            out.hwheel = input.hwheel.into();
            return false;
        }
        let s = &self.profile.scroll_fixed;
        let mut changed = false;
        if input.wheel.v120 != 0 {
            changed = true;
            out.wheel = self
                .wheel
                .step(s, s.invert_vertical, input.wheel.v120, input.time);
        }
        if input.hwheel.v120 != 0 {
            changed = true;
            out.hwheel = self
                .hwheel
                .step(s, s.invert_horizontal, input.hwheel.v120, input.time);
        }
        changed
    }

    /// When [`DeviceEngine::tick`] must next be called (glide inertia; a swipe's fingers
    /// lagging behind the hand or waiting to lift), `None` at rest.
    pub fn next_deadline(&self) -> Option<Micros> {
        [
            self.wheel.next_deadline(),
            self.hwheel.next_deadline(),
            self.fingers.as_ref().and_then(SwipeFingers::deadline),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs timers due at `now`; returns `true` when `out` holds a pointer frame to write
    /// (a swipe's touchpad frame is in `out.touch`: check [`crate::TouchOut::is_empty`]).
    pub fn tick(&mut self, now: Micros, out: &mut FrameOut) -> bool {
        out.clear();
        let s = self.profile.scroll_fixed;
        out.wheel = self.wheel.tick(&s, now);
        out.hwheel = self.hwheel.tick(&s, now);
        if let Some(f) = &mut self.fingers
            && f.advance(now, &mut out.touch)
        {
            self.fingers = None;
            self.settle();
        }
        !out.pointer_is_empty()
    }

    /// Cancels everything in progress (device lost, SYN_DROPPED, tap disabled): a held
    /// gesture fires nothing, scroll state and glide stop, and `out` receives a release for
    /// every button pressed on the virtual device. Returns `true` when `out` has something
    /// to write.
    pub fn cancel(&mut self, out: &mut FrameOut) -> bool {
        out.clear();
        self.lift_fingers(out);
        self.wheel.reset();
        self.hwheel.reset();
        for b in self.pressed_out.iter() {
            out.buttons.push(b, false);
        }
        self.pressed_out = ButtonSet::default();
        self.settle();
        !out.pointer_is_empty()
    }

    /// Resyncs after lost events (`SYN_DROPPED`): like [`DeviceEngine::cancel`] for the
    /// gesture and scroll state, but only buttons that `down` (the device's real button
    /// state, from `EVIOCGKEY`) shows released get a release in `out`; buttons still held
    /// stay pressed. Returns `true` when `out` has something to write.
    pub fn resync(&mut self, down: ButtonSet, out: &mut FrameOut) -> bool {
        out.clear();
        self.lift_fingers(out);
        self.wheel.reset();
        self.hwheel.reset();
        for b in self.pressed_out.iter() {
            if !down.contains(b) {
                out.buttons.push(b, false);
                self.pressed_out.set(b, false);
            }
        }
        self.settle();
        !out.pointer_is_empty()
    }
}

impl DeviceEngine {
    /// Ends a held gesture without firing anything; a swipe in progress gets its lift in
    /// `out.touch` (the pointer part's return value does not count it: check
    /// [`crate::TouchOut::is_empty`]).
    fn lift_fingers(&mut self, out: &mut FrameOut) {
        self.held = None;
        if let Some(f) = self.fingers.take() {
            f.lift(&mut out.touch);
        }
    }

    /// The touchpad frame of the last call (`out.touch` not empty) was written by `at`:
    /// the clock read after the write returned, µs on the clock of `write_time` and `tick`.
    /// A swipe's next step is timed from it ([`SwipeFingers::written`]), so a write held
    /// up after its frame's time never brings two frames closer in the kernel's stamps
    /// than libinput's jump rule allows. Nothing happens without a swipe in progress.
    pub fn touch_written(&mut self, at: Micros) {
        if let Some(f) = &mut self.fingers {
            f.written(at);
        }
    }

    /// Whether a swipe is in progress (fingers down on the virtual touchpad, also while they
    /// catch up after the release).
    pub fn swiping(&self) -> bool {
        self.fingers.is_some()
    }
}

/// The fingers' offset for the scaled drag of `held`, touchpad units: mouse px ×
/// `swipe_scale`, x flipped when `invert_desktop` is off (with it on, the default, dragging
/// right moves the fingers right: the touchpad's own "desktop on the left", like the
/// shortcut style).
#[inline]
fn swipe_offset(held: &Held, p: &Profile) -> (i32, i32) {
    let scale = i64::from(p.gesture.swipe_scale_milli);
    let unit = |px: i64| (px.saturating_mul(scale) / 1000).clamp(-1 << 24, 1 << 24) as i32;
    let dx = unit(held.x);
    (
        if p.gesture.invert_desktop { dx } else { -dx },
        unit(held.y),
    )
}

/// The drag that takes the fingers to [`crate::swipe::MAX_OFFSET`] (a finger at the pad's
/// edge) at the profile's `swipe_scale`, mouse px on each axis (rounded up); a swipe's
/// accumulated drag is kept within it.
#[inline]
fn swipe_reach_px(p: &Profile) -> (i64, i64) {
    use crate::swipe::MAX_OFFSET;
    let scale = i64::from(p.gesture.swipe_scale_milli.max(1));
    let px = |units: i32| (i64::from(units) * 1000 + scale - 1) / scale;
    (px(MAX_OFFSET.0), px(MAX_OFFSET.1))
}

/// The direction to fire and how many times, if the dominant axis of `held` passed the
/// threshold (and, without `repeat`, nothing fired yet); `room` is the most fires this frame
/// may hold (0: fire nothing now, keep the travel for the next frame).
///
/// Without `repeat`: one fire. With `repeat`: one fire per whole threshold of travel along
/// the dominant axis, computed arithmetically (no loop per threshold, so a huge motion value
/// costs nothing) and capped at `room`; the travel is consumed, leaving the remainder below
/// one threshold on that axis and nothing on the other. Fires beyond the cap are dropped
/// with their travel, so one flick cannot queue fires for later frames.
fn fire(held: &mut Held, g: &GestureConfig, room: usize) -> Option<(Direction, u64)> {
    if room == 0 || (held.fired && !g.repeat) {
        return None;
    }
    let t = u64::from(g.threshold.max(1));
    let (ax, ay) = (held.x.unsigned_abs(), held.y.unsigned_abs());
    let (dir, along) = if ax >= ay && ax >= t {
        let dir = if held.x > 0 {
            Direction::Right
        } else {
            Direction::Left
        };
        (dir, ax)
    } else if ay > ax && ay >= t {
        let dir = if held.y > 0 {
            Direction::Down
        } else {
            Direction::Up
        };
        (dir, ay)
    } else {
        return None;
    };
    if !g.repeat {
        return Some((dir, 1));
    }
    let fires = (along / t).min(room as u64);
    // `along % t < t <= 10_000`: fits any i64.
    let left = (along % t) as i64;
    match dir {
        Direction::Left | Direction::Right => {
            held.x = left * held.x.signum();
            held.y = 0;
        }
        Direction::Up | Direction::Down => {
            held.y = left * held.y.signum();
            held.x = 0;
        }
    }
    Some((dir, fires))
}

/// The action for a fired direction; `invert_desktop` swaps desktop-left and desktop-right.
pub fn direction_action(g: &GestureConfig, dir: Direction) -> Action {
    let a = match dir {
        Direction::Left => g.left,
        Direction::Right => g.right,
        Direction::Up => g.up,
        Direction::Down => g.down,
    };
    match (g.invert_desktop, a) {
        (true, Action::DesktopLeft) => Action::DesktopRight,
        (true, Action::DesktopRight) => Action::DesktopLeft,
        _ => a,
    }
}

/// Builds a [`Buttons`] list from `(button, pressed)` pairs (tests, replay).
pub fn buttons(changes: &[(u8, bool)]) -> Buttons {
    let mut b = Buttons::default();
    for (n, p) in changes {
        b.push(Button(*n), *p);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Platform;
    use crate::frame::{TouchOut, WheelIn};

    fn engine(config: &Config) -> DeviceEngine {
        DeviceEngine::with_profile(config, true, config.scroll)
    }

    fn motion(t: u64, dx: i32, dy: i32) -> FrameIn {
        FrameIn {
            time: Micros(t),
            dx,
            dy,
            ..FrameIn::default()
        }
    }

    fn press(t: u64, b: u8, pressed: bool) -> FrameIn {
        FrameIn {
            time: Micros(t),
            buttons: buttons(&[(b, pressed)]),
            ..FrameIn::default()
        }
    }

    type Run = (String, Vec<Action>, Vec<(u8, bool)>, (i32, i32));

    /// Runs frames; returns (verdicts as F/R, all actions, all output buttons).
    fn run(e: &mut DeviceEngine, frames: &[FrameIn]) -> Run {
        let mut verdicts = String::new();
        let mut actions = Vec::new();
        let mut btns = Vec::new();
        let mut motion = (0, 0);
        for f in frames {
            let mut out = FrameOut::default();
            match e.frame(f, &mut out) {
                Verdict::Forward => {
                    verdicts.push('F');
                    btns.extend(f.buttons.as_slice().iter().map(|c| (c.button.0, c.pressed)));
                    motion.0 += f.dx;
                    motion.1 += f.dy;
                }
                Verdict::Rewrite => {
                    verdicts.push('R');
                    actions.extend_from_slice(out.actions.as_slice());
                    btns.extend(
                        out.buttons
                            .as_slice()
                            .iter()
                            .map(|c| (c.button.0, c.pressed)),
                    );
                    motion.0 += out.dx;
                    motion.1 += out.dy;
                }
            }
        }
        (verdicts, actions, btns, motion)
    }

    fn drag(dx: i32, dy: i32, steps: i32) -> Vec<FrameIn> {
        let mut v = vec![press(0, 5, true)];
        for i in 0..steps {
            v.push(motion(1000 * (i as u64 + 1), dx, dy));
        }
        v.push(press(1_000_000, 5, false));
        v
    }

    #[test]
    fn motion_with_gesture_button_up_is_forwarded_unchanged() {
        let c = Config::default_for(Platform::Linux);
        let mut e = engine(&c);
        let (v, a, b, _) = run(&mut e, &[motion(0, 3, -2), motion(1, 0, 7)]);
        assert_eq!(v, "FF");
        assert!(a.is_empty() && b.is_empty());
    }

    #[test]
    fn drag_right_with_inverted_desktop_switches_desktop_left() {
        let c = Config::default_for(Platform::Linux);
        let mut e = engine(&c);
        let (_, actions, btns, moved) = run(&mut e, &drag(10, 1, 30));
        assert_eq!(actions, vec![Action::DesktopLeft]);
        assert!(btns.is_empty(), "gesture press and release are swallowed");
        assert_eq!(moved, (0, 0), "motion while held is not forwarded");
    }

    #[test]
    fn drag_left_without_inversion_switches_desktop_left() {
        let mut c = Config::default_for(Platform::Linux);
        c.gesture.invert_desktop = false;
        let mut e = engine(&c);
        assert_eq!(run(&mut e, &drag(-10, 0, 30)).1, vec![Action::DesktopLeft]);
    }

    #[test]
    fn drag_up_opens_overview_and_down_app_expose() {
        let c = Config::default_for(Platform::Linux);
        assert_eq!(
            run(&mut engine(&c), &drag(0, -10, 30)).1,
            vec![Action::Overview]
        );
        assert_eq!(
            run(&mut engine(&c), &drag(1, 10, 30)).1,
            vec![Action::AppExpose]
        );
    }

    #[test]
    fn gesture_fires_once_per_hold_without_repeat() {
        let c = Config::default_for(Platform::Linux);
        assert_eq!(run(&mut engine(&c), &drag(10, 0, 100)).1.len(), 1);
    }

    #[test]
    fn gesture_repeats_every_threshold_with_repeat() {
        let mut c = Config::default_for(Platform::Linux);
        c.gesture.repeat = true;
        // 1000 px right = 4 thresholds of 220.
        assert_eq!(
            run(&mut engine(&c), &drag(10, 0, 100)).1,
            vec![Action::DesktopLeft; 4]
        );
    }

    #[test]
    fn below_threshold_release_passes_the_click_through_as_two_transitions() {
        let c = Config::default_for(Platform::Linux);
        let (_, actions, btns, moved) = run(&mut engine(&c), &drag(1, 1, 50));
        assert!(actions.is_empty());
        assert_eq!(btns, vec![(5, true), (5, false)]);
        assert_eq!(moved, (0, 0));
    }

    #[test]
    fn cancel_fires_nothing_and_releases_every_pressed_button() {
        let c = Config::default_for(Platform::Linux);
        let mut e = engine(&c);
        run(
            &mut e,
            &[press(0, 0, true), press(1, 5, true), motion(2, 500, 0)],
        );
        assert!(e.gesture_held());
        let mut out = FrameOut::default();
        assert!(e.cancel(&mut out));
        assert!(out.actions.is_empty());
        assert_eq!(out.buttons.as_slice().len(), 1);
        assert_eq!(
            (
                out.buttons.as_slice()[0].button,
                out.buttons.as_slice()[0].pressed
            ),
            (Button(0), false)
        );
        assert!(!e.gesture_held());
    }

    #[test]
    fn release_of_a_button_pressed_before_pawl_is_dropped() {
        let c = Config::default_for(Platform::Linux);
        let (_, _, btns, _) = run(&mut engine(&c), &[press(0, 0, false)]);
        assert!(btns.is_empty());
    }

    #[test]
    fn mapped_button_fires_its_action_and_swallows_both_transitions() {
        let mut c = Config::default_for(Platform::Linux);
        c.buttons.on_back = Action::Back;
        let (_, actions, btns, _) = run(&mut engine(&c), &[press(0, 3, true), press(1, 3, false)]);
        assert_eq!(actions, vec![Action::Back]);
        assert!(btns.is_empty());
    }

    #[test]
    fn back_and_forward_pass_through_by_default_on_linux() {
        let c = Config::default_for(Platform::Linux);
        let (_, actions, btns, _) = run(&mut engine(&c), &[press(0, 3, true), press(1, 3, false)]);
        assert!(actions.is_empty());
        assert_eq!(btns, vec![(3, true), (3, false)]);
    }

    #[test]
    fn in_scope_wheel_is_inverted() {
        let c = Config::default_for(Platform::Linux);
        let mut e = engine(&c);
        let mut out = FrameOut::default();
        let f = FrameIn {
            wheel: WheelIn {
                v120: 120,
                detents: 1,
            },
            ..FrameIn::default()
        };
        assert_eq!(e.frame(&f, &mut out), Verdict::Rewrite);
        assert_eq!((out.wheel.v120, out.wheel.detents), (-120, -1));
    }

    #[test]
    fn out_of_scope_wheel_is_forwarded() {
        let c = Config::default_for(Platform::Linux);
        let mut e = DeviceEngine::with_profile(&c, false, c.scroll);
        let mut out = FrameOut::default();
        let f = FrameIn {
            wheel: WheelIn {
                v120: 120,
                detents: 1,
            },
            ..FrameIn::default()
        };
        assert_eq!(e.frame(&f, &mut out), Verdict::Forward);
    }

    fn swipe_config() -> Config {
        let mut c = Config::default_for(Platform::Linux);
        c.gesture.style = GestureStyle::Swipe;
        c.gesture.fingers = Some(3);
        c
    }

    /// A touchpad part written at a time (µs), and whether a tick wrote it.
    type Touched = (u64, TouchOut, bool);

    /// Runs frames, and the engine's ticks at its deadlines before each frame and after the
    /// last (as the daemon's timer does); returns every touchpad part that is not empty with
    /// its time and whether a tick wrote it, and the pointer button transitions of every
    /// frame (forwarded or rewritten).
    fn swipe_run(e: &mut DeviceEngine, frames: &[FrameIn]) -> (Vec<Touched>, Vec<(u8, bool)>) {
        let written: Vec<(u64, FrameIn)> = frames.iter().map(|f| (f.time.0, *f)).collect();
        swipe_run_written(e, &written)
    }

    /// [`swipe_run`] with each frame read and its output written at a time of its own (µs,
    /// not decreasing; the daemon's clock when it woke up): ticks run at their deadlines
    /// between the writes, and the touchpad parts carry the write times.
    fn swipe_run_written(
        e: &mut DeviceEngine,
        frames: &[(u64, FrameIn)],
    ) -> (Vec<Touched>, Vec<(u8, bool)>) {
        let mut t = Vec::new();
        let mut btns = Vec::new();
        let ticks = |e: &mut DeviceEngine, until: u64, t: &mut Vec<Touched>| {
            let mut n = 0;
            while let Some(d) = e.next_deadline().filter(|d| d.0 < until) {
                n += 1;
                assert!(n < 10_000, "the deadline {d:?} does not move on");
                let mut out = FrameOut::default();
                e.tick(d, &mut out);
                if !out.touch.is_empty() {
                    t.push((d.0, out.touch, true));
                }
            }
        };
        for (at, f) in frames {
            ticks(e, *at, &mut t);
            let mut out = FrameOut::default();
            let written = match e.frame_at(f, Micros(*at), &mut out) {
                Verdict::Rewrite => out.buttons,
                Verdict::Forward => f.buttons,
            };
            btns.extend(written.as_slice().iter().map(|c| (c.button.0, c.pressed)));
            if !out.touch.is_empty() {
                t.push((*at, out.touch, false));
            }
        }
        ticks(e, u64::MAX, &mut t);
        (t, btns)
    }

    fn touches(e: &mut DeviceEngine, frames: &[FrameIn]) -> (Vec<TouchOut>, Vec<(u8, bool)>) {
        let (t, btns) = swipe_run(e, frames);
        (t.into_iter().map(|(_, t, _)| t).collect(), btns)
    }

    /// A held drag of `steps` reports of `(dx, dy)`, `every` µs apart (press at 0, release
    /// one interval after the last report).
    fn drag_every(dx: i32, dy: i32, steps: u64, every: u64) -> Vec<FrameIn> {
        let mut v = vec![press(0, 5, true)];
        for i in 1..=steps {
            v.push(motion(i * every, dx, dy));
        }
        v.push(press((steps + 1) * every, 5, false));
        v
    }

    /// Every touchpad frame after the down is at least [`FRAME_INTERVAL_US`] after the one
    /// before, and no step is longer than [`MAX_SPEED_UNITS_PER_MS`] × Δt.
    fn assert_paced(t: &[Touched]) {
        use crate::swipe::{FRAME_INTERVAL_US, MAX_SPEED_UNITS_PER_MS};
        let mut last: Option<(u64, (i32, i32))> = None;
        for (time, out, _) in t {
            if out.down {
                last = Some((*time, (0, 0)));
            }
            if out.moved {
                let (lt, (lx, ly)) = last.expect("a move before the down");
                let dt = time - lt;
                assert!(dt >= FRAME_INTERVAL_US, "frames {dt} µs apart: {t:?}");
                let len = f64::from(out.dx - lx).hypot(f64::from(out.dy - ly));
                let max = (MAX_SPEED_UNITS_PER_MS * dt.min(30_000)) as f64 / 1000.0;
                assert!(len <= max + 1.0, "a step of {len} units in {dt} µs: {t:?}");
                last = Some((*time, (out.dx, out.dy)));
            }
        }
    }

    #[test]
    fn swipe_style_turns_a_held_drag_into_touch_frames() {
        let c = swipe_config();
        let mut e = engine(&c);
        // A 125 Hz mouse (8 ms): one touchpad frame per report, written by the report.
        let (t, _) = swipe_run(&mut e, &drag_every(10, 2, 10, 8_000));
        assert_paced(&t);
        // Fingers down at the press point when the slop is passed; each later report moves
        // them by the drag (scale 1.0).
        let (t0, down, _) = t[0];
        assert_eq!(t0, 8_000);
        assert!(down.down && !down.moved && !down.lift);
        assert_eq!((down.fingers, down.dx, down.dy), (3, 0, 0));
        let moves: Vec<(u64, i32, i32, bool)> = t[1..]
            .iter()
            .map(|(time, o, tick)| (*time, o.dx, o.dy, *tick))
            .collect();
        let want: Vec<(u64, i32, i32, bool)> = (2..=10)
            .map(|i| (i * 8_000, 10 * i as i32, 2 * i as i32, false))
            .collect();
        assert_eq!(&moves[..9], &want[..]);
        // The release lifts them where they are (no extra move frame), in its own frame.
        let (tl, lift, tick) = t[10];
        assert!((tl, tick) == (88_000, false) && lift.lift && !lift.down && !lift.moved);
        assert_eq!((lift.dx, lift.dy), (100, 20));
        assert_eq!(t.len(), 11);
        assert!(!e.gesture_held() && !e.swiping() && e.next_deadline().is_none());
    }

    #[test]
    fn a_burst_of_reports_is_spread_over_touchpad_frames_and_lifts_when_caught_up() {
        // 20 reports of 20 px in 20 µs (pawl read them at once), released at once: the
        // fingers go down, catch up on the timer, 7 ms and at most 84 units a step, and
        // lift with the last step.
        let c = swipe_config();
        let mut e = engine(&c);
        let (t, _) = swipe_run(&mut e, &drag_every(20, 0, 20, 1));
        assert_paced(&t);
        assert!(t[0].1.down);
        let last = t.last().unwrap().1;
        assert!(last.moved && last.lift && last.dx == 400, "{t:?}");
        assert!(
            t[1..].iter().all(|(_, _, tick)| *tick),
            "the timer writes them: {t:?}"
        );
        assert_eq!(t.len(), 1 + 5, "400 units in steps of 84: {t:?}");
        assert!(!e.swiping());
    }

    #[test]
    fn a_backlog_read_at_once_is_paced_by_the_time_of_the_writes_not_the_reports() {
        // A 1000 Hz mouse, 5 px a report. pawl is held up from 10 ms to 110 ms and then reads
        // the 100 reports queued meanwhile (timestamps 1 ms apart) at one instant; then one
        // report per wake-up again until the release at 160 ms.
        let c = swipe_config();
        let mut frames = vec![(0, press(0, 5, true))];
        frames.extend((1..=10).map(|i| (i * 1000, motion(i * 1000, 5, 0))));
        frames.extend((11..=110).map(|i| (110_000, motion(i * 1000, 5, 0))));
        frames.extend((111..=160).map(|i| (i * 1000, motion(i * 1000, 5, 0))));
        frames.push((161_000, press(161_000, 5, false)));
        let (t, btns) = swipe_run_written(&mut engine(&c), &frames);
        assert!(btns.is_empty());
        // Paced in the time of the writes: at most one frame from the backlog's wake-up,
        // every move 7 ms or more after the frame before, at most 12 units/ms.
        assert_paced(&t);
        assert!(
            t.iter().filter(|x| x.0 == 110_000).count() <= 1,
            "one touchpad frame per wake-up: {t:?}"
        );
        // Nothing lost: the fingers end where the hand did, and the lift comes last, once.
        let (_, lift, _) = *t.last().unwrap();
        assert!(lift.lift && lift.dx == 5 * 160 && lift.dy == 0, "{t:?}");
        assert_eq!(t.iter().filter(|x| x.1.lift).count(), 1);
        // The reports' own timestamps would have written a dozen frames in that wake-up:
        // steps libinput takes for touch jumps (what `frame` without the write time did).
        let mut e = engine(&c);
        let mut out = FrameOut::default();
        let mut at_once = 0;
        for (at, f) in &frames {
            out.clear();
            e.frame(f, &mut out);
            at_once += usize::from(*at == 110_000 && out.touch.moved);
        }
        assert!(at_once >= 10, "{at_once} frames from the report times");
    }

    #[test]
    fn a_touchpad_write_held_up_times_the_next_frame_from_its_end() {
        // A 1000 Hz mouse, 5 px a report, each frame made at its own time. Every touchpad
        // write returns 5 ms after the frame's time (the writer descheduled meanwhile):
        // the frames' write ends, what the kernel's stamps lie before, are still
        // FRAME_INTERVAL_US apart or more.
        let c = swipe_config();
        let mut e = engine(&c);
        let mut ends = Vec::new();
        let mut frames = vec![press(0, 5, true)];
        frames.extend((1..=60).map(|i| motion(i * 1000, 5, 0)));
        for f in &frames {
            let mut out = FrameOut::default();
            e.frame_at(f, f.time, &mut out);
            if !out.touch.is_empty() {
                let end = f.time.plus(5_000);
                e.touch_written(end);
                ends.push((f.time.0, end.0, out.touch));
            }
        }
        let moves: Vec<_> = ends.iter().filter(|x| x.2.moved).collect();
        assert!(moves.len() >= 4, "{ends:?}");
        for w in ends.windows(2) {
            // The next frame is made 7 ms after the previous write's end.
            assert!(
                w[1].0 >= w[0].1 + crate::swipe::FRAME_INTERVAL_US,
                "{ends:?}"
            );
        }
    }

    #[test]
    fn the_write_time_paces_the_fingers_and_the_wheel_keeps_the_event_time() {
        // The same wheel frames with any write time give the same wheel output (grab
        // mode's scroll pipeline runs on the events' timestamps).
        let c = swipe_config();
        let wheel = |t: u64| FrameIn {
            time: Micros(t),
            wheel: WheelIn {
                v120: 120,
                detents: 1,
            },
            ..FrameIn::default()
        };
        let (mut a, mut b) = (engine(&c), engine(&c));
        for i in 0..20 {
            let f = wheel(i * 3_000);
            let (mut oa, mut ob) = (FrameOut::default(), FrameOut::default());
            assert_eq!(
                a.frame(&f, &mut oa),
                b.frame_at(&f, Micros(1_000_000), &mut ob)
            );
            assert_eq!(oa, ob);
            assert_eq!(a.next_deadline(), b.next_deadline());
        }
        assert!(!a.paces_touch(&wheel(0)), "no gesture: no clock needed");
        assert!(a.paces_touch(&press(0, 5, true)));
        // Held, the fingers not down yet (under the slop): motion may put them down.
        a.frame(&press(0, 5, true), &mut FrameOut::default());
        assert!(a.paces_touch(&motion(1_000, 1, 0)));
    }

    #[test]
    fn a_fast_mouse_writes_a_frame_per_interval_and_no_timer_runs_while_it_moves() {
        // 1000 Hz, 3 px a report for 100 ms, then the hand rests 50 ms, then the release.
        let c = swipe_config();
        let mut e = engine(&c);
        let mut frames = vec![press(0, 5, true)];
        frames.extend((1..=100).map(|i| motion(i * 1000, 3, 0)));
        frames.push(press(150_000, 5, false));
        let (t, _) = swipe_run(&mut e, &frames);
        assert_paced(&t);
        let ticks: Vec<&Touched> = t.iter().filter(|x| x.2).collect();
        // Only once the hand stopped (20 ms after its last report) does a tick write the
        // rest.
        assert!(ticks.len() <= 1, "{ticks:?}");
        assert!(ticks.iter().all(|x| x.0 >= 120_000), "{ticks:?}");
        let moves = t.iter().filter(|x| x.1.moved).count();
        assert!(
            (13..=15).contains(&moves),
            "≈ 100 ms / 7 ms frames, got {moves}"
        );
        let lift = t.last().unwrap();
        assert!(
            lift.1.lift && lift.0 == 150_000 && lift.1.dx == 300,
            "{lift:?}"
        );
    }

    #[test]
    fn fingers_lagging_a_flick_catch_up_for_at_most_the_catch_up_time() {
        use crate::swipe::{CATCH_UP_US, MAX_OFFSET};
        let c = swipe_config();
        let mut e = engine(&c);
        // Two reports that throw the fingers to the pad's edge, then the release.
        let frames = [
            press(0, 5, true),
            motion(1000, 4000, 0),
            motion(2000, 4000, 0),
            press(3000, 5, false),
        ];
        let (t, _) = swipe_run(&mut e, &frames);
        assert_paced(&t);
        let (tl, lift, _) = *t.last().unwrap();
        assert!(lift.lift && tl <= 3000 + CATCH_UP_US, "{t:?}");
        assert!(
            lift.dx > 1000 && lift.dx < MAX_OFFSET.0,
            "dropped the rest: {lift:?}"
        );
        assert!(!e.swiping());
    }

    #[test]
    fn the_drag_that_reaches_the_pads_edge_is_rounded_up_to_whole_px() {
        // MAX_OFFSET is (2000, 2260) units; at scale 1.5 that is 1333.3 and 1506.7 px.
        for (scale, want) in [
            (1000, (2000, 2260)),
            (1500, (1334, 1507)),
            (250, (8000, 9040)),
        ] {
            let mut c = swipe_config();
            c.gesture.swipe_scale_milli = scale;
            assert_eq!(swipe_reach_px(engine(&c).profile()), want, "scale {scale}");
        }
    }

    #[test]
    fn a_drag_past_the_pads_edge_comes_back_at_once() {
        use crate::swipe::MAX_OFFSET;
        for scale in [1000, 1500, 250] {
            let mut c = swipe_config();
            c.gesture.swipe_scale_milli = scale;
            let mut e = engine(&c);
            // Far past the edge at 60 px per 8 ms report (the fingers keep up at scale 1.0
            // and 1.5: ≤ 96 units a frame), then 600 px back, then the release.
            let out_px = 2 * (i64::from(MAX_OFFSET.0) * 1000 / i64::from(scale)) as i32;
            let steps = (out_px / 60) as u64;
            let mut frames = vec![press(0, 5, true)];
            let mut t = 0;
            for _ in 0..steps {
                t += 8_000;
                frames.push(motion(t, 60, 0));
            }
            for _ in 0..10 {
                t += 8_000;
                frames.push(motion(t, -60, 0));
            }
            frames.push(press(t + 8_000, 5, false));
            let (touched, _) = swipe_run(&mut e, &frames);
            assert_paced(&touched);
            let at_edge = touched.iter().map(|(_, o, _)| o.dx).max().unwrap();
            assert_eq!(
                at_edge, MAX_OFFSET.0,
                "scale {scale}: the fingers reach the edge"
            );
            let (_, lift, _) = *touched.last().unwrap();
            let back = (600 * i64::from(scale) / 1000) as i32;
            assert!(lift.lift, "{touched:?}");
            assert!(
                (lift.dx - (MAX_OFFSET.0 - back)).abs() <= 1,
                "scale {scale}: 600 px back from past the edge lift at {}, want {}",
                lift.dx,
                MAX_OFFSET.0 - back
            );
        }
    }

    #[test]
    fn a_short_drag_keeps_the_fingers_down_past_the_tap_timeout() {
        use crate::swipe::TAP_GUARD_US;
        // 20 px then the release at 10 ms: a lift now would be libinput's three-finger tap.
        let c = swipe_config();
        let mut e = engine(&c);
        let frames = [
            press(0, 5, true),
            motion(1000, 20, 0),
            press(10_000, 5, false),
        ];
        let (t, btns) = swipe_run(&mut e, &frames);
        let (tl, lift, tick) = *t.last().unwrap();
        assert!(lift.lift && tick && tl == 1000 + TAP_GUARD_US, "{t:?}");
        assert!(btns.is_empty(), "no click either");
    }

    #[test]
    fn a_new_press_lifts_the_last_swipe_still_catching_up() {
        // Released 1 µs after a 900 px report: the fingers have not moved yet.
        let c = swipe_config();
        let mut e = engine(&c);
        let mut out = FrameOut::default();
        for f in [
            press(0, 5, true),
            motion(1000, 900, 0),
            press(1001, 5, false),
        ] {
            e.frame(&f, &mut out);
        }
        assert!(e.swiping() && e.next_deadline().is_some());
        e.frame(&press(2000, 5, true), &mut out);
        assert!(out.touch.lift && !out.touch.down && out.touch.dx == 0);
        assert!(!e.swiping());
        // The new hold swipes afresh.
        e.frame(&motion(3000, 30, 0), &mut out);
        assert!(out.touch.down && e.swiping());
    }

    #[test]
    fn swipe_writes_no_pointer_motion_buttons_or_actions() {
        let c = swipe_config();
        let (_, actions, btns, moved) = run(&mut engine(&c), &drag(10, 0, 50));
        assert!(actions.is_empty(), "a swipe fires no shortcut: {actions:?}");
        assert!(btns.is_empty());
        assert_eq!(moved, (0, 0));
    }

    #[test]
    fn swipe_release_without_motion_is_the_click() {
        let c = swipe_config();
        let mut e = engine(&c);
        let (t, btns) = touches(&mut e, &[press(0, 5, true), press(1, 5, false)]);
        assert!(t.is_empty());
        assert_eq!(btns, vec![(5, true), (5, false)]);
    }

    #[test]
    fn swipe_jitter_below_the_slop_is_still_the_click() {
        let c = swipe_config();
        let frames = [
            press(0, 5, true),
            motion(1, 1, -1),
            motion(2, 1, 0),
            press(3, 5, false),
        ];
        let (t, _) = touches(&mut engine(&c), &frames);
        assert!(t.is_empty(), "{t:?}");
        assert_eq!(run(&mut engine(&c), &frames).2, vec![(5, true), (5, false)]);
    }

    #[test]
    fn swipe_vertical_drag_moves_the_fingers_vertically() {
        let c = swipe_config();
        let (t, _) = touches(&mut engine(&c), &drag_every(0, -10, 5, 8_000));
        assert_eq!((t[4].dx, t[4].dy), (0, -50));
        assert!(t[5].lift);
    }

    #[test]
    fn swipe_scale_and_invert_desktop_shape_the_offset() {
        let mut c = swipe_config();
        c.gesture.swipe_scale_milli = 2500;
        c.gesture.invert_desktop = false;
        let (t, _) = touches(&mut engine(&c), &drag_every(10, 4, 2, 8_000));
        assert_eq!((t[1].dx, t[1].dy), (-50, 20));
    }

    #[test]
    fn swipe_cancel_lifts_every_finger() {
        let c = swipe_config();
        let mut e = engine(&c);
        touches(
            &mut e,
            &[press(0, 5, true), motion(1, 20, 0), motion(8000, 20, 0)],
        );
        assert!(e.swiping());
        let mut out = FrameOut::default();
        assert!(!e.cancel(&mut out), "nothing for the pointer");
        assert!(out.touch.lift && !out.touch.down);
        assert_eq!((out.touch.fingers, out.touch.dx), (3, 40));
        assert!(!e.swiping());
        // A later release of the button is not a click.
        let (t, btns) = touches(&mut e, &[press(2, 5, false)]);
        assert!(t.is_empty() && btns.is_empty());
    }

    #[test]
    fn swipe_resync_lifts_every_finger() {
        let c = swipe_config();
        let mut e = engine(&c);
        touches(&mut e, &[press(0, 5, true), motion(1, 0, 9)]);
        assert!(e.swiping(), "held: the fingers stay down");
        let mut out = FrameOut::default();
        e.resync(ButtonSet::default(), &mut out);
        assert!(out.touch.lift);
    }

    #[test]
    fn cancel_without_a_swipe_touches_nothing() {
        let c = swipe_config();
        let mut e = engine(&c);
        touches(&mut e, &[press(0, 5, true)]);
        let mut out = FrameOut::default();
        e.cancel(&mut out);
        assert!(out.touch.is_empty());
    }

    #[test]
    fn shortcut_style_never_touches_the_touchpad() {
        let c = Config::default_for(Platform::Linux);
        let (t, _) = touches(&mut engine(&c), &drag(10, 0, 50));
        assert!(t.is_empty());
    }
}
