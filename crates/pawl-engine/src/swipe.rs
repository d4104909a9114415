//! The swipe style's touchpad: its geometry, the swipe's shape and its pacing, shared by the
//! engine (which decides the finger offsets and when each touchpad frame is due), the Linux
//! backend (which creates the virtual touchpad with these ranges) and `pawl replay` (which
//! shows the frames).
//!
//! Units: touchpad units, [`TOUCHPAD_RES`] per mm on both axes (libinput divides by the
//! `ABS_X`/`ABS_Y` resolution to get mm). With `swipe_scale = 1.0` one mouse px is one
//! touchpad unit: 40 units/mm ≈ 1016 dpi, about a 1000 dpi mouse's count, so the fingers
//! move as far as the hand does. GNOME's swipe tracker moves one workspace per 400 of
//! libinput's unaccelerated gesture units (`TOUCHPAD_BASE_WIDTH` in gnome-shell's
//! `js/ui/swipeTracker.js`); libinput makes a touchpad's mm 1000 / 25.4 × 0.9 × 0.2968
//! of them (`touchpad_constant_filter`), so a workspace is about 38 mm of finger travel,
//! 1500 px at scale 1.0. KWin switches a desktop when the drag passed its own threshold.
//!
//! Pacing ([`SwipeFingers`]): libinput (`evdev-mt-touchpad.c`, `tp_detect_jumps`) discards
//! a touch step as a "touch jump" when it is more than 20 mm, or more than 7 mm longer than
//! the step before, once normalized to a 12 ms frame (`mm × 12 ms / Δt`, for Δt ≤ 30 ms),
//! and Δt is the time between the kernel's timestamps of the frames: when each was written.
//! A mouse reports up to 1000 times a second, and a burst of its reports read at once
//! would be touch frames microseconds apart. So a swipe's frames follow a real touchpad's
//! timing: at most one per [`FRAME_INTERVAL_US`], each step at most
//! [`MAX_SPEED_UNITS_PER_MS`] × Δt long (3.6 mm per 12 ms: half the 7 mm rule, so a frame
//! written up to half its interval late is still no jump). Motion that comes sooner or
//! faster is kept and written by the next frame that is due; while the fingers lag behind
//! the hand the engine has a deadline (the one timer of a swipe in progress), and none
//! otherwise.
//!
//! The time pacing counts is the time of the writes, not the mouse's: a pawl held up (load,
//! a stopped process) reads the reports queued meanwhile at once, with timestamps 1–8 ms
//! apart, and writes what they make at one instant; paced by those timestamps they would
//! be several frames microseconds apart in the kernel's stamps. So the Linux daemon passes
//! the clock it read when it woke up ([`crate::DeviceEngine::frame_at`], and `tick`'s
//! `now`): a backlog writes at most one frame, the rest is carried. A write can also be
//! held up after that clock was read (a loaded machine deschedules the daemon between the
//! two), which would bring it closer to the next frame in the kernel's stamps; so the daemon
//! reads the clock again when the write returns ([`SwipeFingers::written`]) and the next
//! step is timed from then. `pawl replay` and the tests, which write as they read, use the
//! recorded time for all three.

use crate::frame::TouchOut;
use crate::units::Micros;

/// Touchpad units per mm, both axes (`ABS_X`/`ABS_Y`/`ABS_MT_POSITION_*` resolution); real
/// touchpads have 12–75 (libinput 1.22's test devices: the Synaptics T440 42, the ALPS
/// `alps-3fg` 37 × 26).
pub const TOUCHPAD_RES: i32 = 40;
/// Width of the virtual touchpad, touchpad units: 162 mm, an Apple Magic Trackpad 2's
/// (libinput 1.22 `quirks/50-system-apple.quirks`, `AttrSizeHint=162x115`), the largest
/// touchpad libinput describes, so a long drag reaches far before a finger meets the edge.
pub const TOUCHPAD_WIDTH: i32 = 162 * TOUCHPAD_RES;
/// Height of the virtual touchpad, touchpad units (115 mm, as [`TOUCHPAD_WIDTH`]).
pub const TOUCHPAD_HEIGHT: i32 = 115 * TOUCHPAD_RES;
/// Distance between neighbouring fingers, touchpad units (15 mm: a relaxed hand; libinput
/// takes touches within about 40 mm of each other as one gesture).
pub const FINGER_SPACING: i32 = 15 * TOUCHPAD_RES;
/// The most fingers a swipe has (`BTN_TOOL_QUADTAP`).
pub const MAX_FINGERS: u8 = 4;
/// The fewest fingers of a swipe (libinput's swipe gestures have 3 or more; 2 is scroll).
pub const MIN_FINGERS: u8 = 3;
/// Mouse travel (px, the larger axis) while the gesture button is held before the fingers
/// go down: a click with a few px of jitter stays a click (3 px).
pub const SWIPE_SLOP_PX: u64 = 3;

/// Where the fingers go down: the middle of the pad (the press point; the pointer's
/// screen position is not the touchpad's business), touchpad units.
pub const ORIGIN: (i32, i32) = (TOUCHPAD_WIDTH / 2, TOUCHPAD_HEIGHT / 2);

/// The furthest the swipe's offset goes from [`ORIGIN`] on each axis, touchpad units:
/// every finger stays on the pad (a finger held at the edge stops moving): 2000 (50 mm)
/// horizontally, about 1.3 GNOME workspaces (526 of libinput's gesture units, 400 a
/// workspace), and 2260 (56.5 mm) vertically. The engine keeps the hand's drag within the
/// px that reach it, so the way back from past the edge moves the fingers at once.
pub const MAX_OFFSET: (i32, i32) = (
    TOUCHPAD_WIDTH / 2 - FINGER_SPACING * 2 - TOUCHPAD_RES,
    TOUCHPAD_HEIGHT / 2 - TOUCHPAD_RES,
);

/// Position of finger `i` (0-based) of `fingers` at swipe offset `(dx, dy)` (clamped to
/// [`MAX_OFFSET`]), touchpad units: the fingers in a row across the pad, centred on
/// [`ORIGIN`].
pub fn finger_position(i: u8, fingers: u8, dx: i32, dy: i32) -> (i32, i32) {
    let dx = dx.clamp(-MAX_OFFSET.0, MAX_OFFSET.0);
    let dy = dy.clamp(-MAX_OFFSET.1, MAX_OFFSET.1);
    // Twice the offset from the row's centre, so odd and even counts stay integers.
    let twice = 2 * i32::from(i) - (i32::from(fingers) - 1);
    (ORIGIN.0 + dx + twice * FINGER_SPACING / 2, ORIGIN.1 + dy)
}

/// The shortest time between two frames of a swipe, µs: 7 ms (≈ 143 Hz), a touchpad's scan
/// interval (libinput's `MSC_TIMESTAMP` example in `evdev-mt-touchpad.c` has a 7.3 ms
/// hardware interval); a 125 Hz mouse (8 ms) gets one frame per report.
pub const FRAME_INTERVAL_US: u64 = 7_000;

/// The fastest the fingers move, touchpad units per ms: 12 (300 mm/s; 12 000 px/s with
/// `swipe_scale = 1.0`, about 8 GNOME workspaces a second). libinput's jump rule is 7 mm
/// more than the previous step per 12 ms; this is 3.6 mm per 12 ms, so even from rest a
/// step is half of it.
pub const MAX_SPEED_UNITS_PER_MS: u64 = 12;

/// The longest Δt a step's length grows with, µs: past 30 ms libinput does not look for
/// jumps (`tdelta > 2.5 × 12 ms`), and a step after a pause needs no more.
const STEP_WINDOW_US: u64 = 30_000;

/// No mouse report for this long while the fingers lag behind the hand means the hand has
/// stopped: the fingers catch up on the timer, µs (20 ms: a moving mouse reports at 60 Hz
/// or more; the lag exists only for a mouse faster than [`FRAME_INTERVAL_US`] or a drag faster
/// than [`MAX_SPEED_UNITS_PER_MS`]). While reports keep coming they write the frames, and
/// the timer stays out of their way.
pub const HAND_STILL_US: u64 = 20_000;

/// How long the fingers may still catch up with the hand after the release before they lift
/// where they are, µs (100 ms; only a flick faster than [`MAX_SPEED_UNITS_PER_MS`] needs any).
pub const CATCH_UP_US: u64 = 100_000;

/// Travel below which a swipe could be a tap, touchpad units: libinput's tap motion
/// threshold, 1.3 mm (`DEFAULT_TAP_MOVE_THRESHOLD` in `evdev-mt-touchpad-tap.c`).
pub const TAP_MOVE_UNITS: i32 = 13 * TOUCHPAD_RES / 10;

/// Fingers that moved less than [`TAP_MOVE_UNITS`] stay down at least this long, µs: past
/// libinput's tap timeout (180 ms, `DEFAULT_TAP_TIMEOUT_PERIOD`) a lift is no tap, so a
/// short drag never becomes a three-finger tap (a middle click where tapping is on).
pub const TAP_GUARD_US: u64 = 200_000;

/// The fingers of one swipe and the pacing of its frames (see the module docs): where the
/// hand wants them (the target), where the last frame put them, and when. Pure; time is
/// the caller's: when the frame is written (the daemon's clock at the wake-up, the
/// deadline's tick; in replay the recorded timestamp), never going back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwipeFingers {
    fingers: u8,
    /// Offset the hand has dragged to, touchpad units, clamped to [`MAX_OFFSET`].
    target: (i32, i32),
    /// Offset as last written.
    at: (i32, i32),
    /// When the last frame (down or move) was written.
    last: Micros,
    /// When the hand last moved ([`SwipeFingers::aim`]).
    aimed: Micros,
    down_at: Micros,
    /// The fingers went [`TAP_MOVE_UNITS`] or more from where they went down.
    far: bool,
    /// When the gesture button was released: the fingers lift once caught up.
    released: Option<Micros>,
}

impl SwipeFingers {
    /// `fingers` go down at offset (0, 0) at `now`; `out` gets the down frame.
    pub fn down(fingers: u8, now: Micros, out: &mut TouchOut) -> SwipeFingers {
        out.fingers = fingers;
        out.down = true;
        out.dx = 0;
        out.dy = 0;
        SwipeFingers {
            fingers,
            target: (0, 0),
            at: (0, 0),
            last: now,
            aimed: now,
            down_at: now,
            far: false,
            released: None,
        }
    }

    /// Where the hand has dragged to at `now` (offset from the press point, touchpad units;
    /// clamped to [`MAX_OFFSET`], where a finger meets the edge).
    pub fn aim(&mut self, dx: i32, dy: i32, now: Micros) {
        self.aimed = now;
        self.target = (
            dx.clamp(-MAX_OFFSET.0, MAX_OFFSET.0),
            dy.clamp(-MAX_OFFSET.1, MAX_OFFSET.1),
        );
    }

    /// The gesture button was released at `now`: the fingers lift once they have caught up
    /// (or [`CATCH_UP_US`] has passed) and, after a short drag, [`TAP_GUARD_US`] after
    /// they went down.
    pub fn release(&mut self, now: Micros) {
        self.released.get_or_insert(now);
    }

    /// Writes what is due at `now` into `out`: a move toward the target when
    /// [`FRAME_INTERVAL_US`] has passed since the last frame (at most
    /// [`MAX_SPEED_UNITS_PER_MS`] × Δt long), and the lift when it may happen. Returns
    /// `true` when the fingers lifted (the swipe is over).
    pub fn advance(&mut self, now: Micros, out: &mut TouchOut) -> bool {
        if self.released.is_some_and(|r| now.since(r) >= CATCH_UP_US) {
            // Past the catch-up time the rest of the drag is dropped.
            self.target = self.at;
        }
        let dt = now.since(self.last);
        if self.target != self.at && dt >= FRAME_INTERVAL_US {
            let max = (MAX_SPEED_UNITS_PER_MS * dt.min(STEP_WINDOW_US) / 1000) as i64;
            let d = (
                i64::from(self.target.0 - self.at.0),
                i64::from(self.target.1 - self.at.1),
            );
            let len = (d.0 * d.0 + d.1 * d.1).unsigned_abs().isqrt() as i64;
            let step = if len <= max {
                d
            } else {
                (d.0 * max / len, d.1 * max / len)
            };
            self.at = (self.at.0 + step.0 as i32, self.at.1 + step.1 as i32);
            self.last = now;
            self.far |= self.at.0.abs().max(self.at.1.abs()) >= TAP_MOVE_UNITS;
            out.fingers = self.fingers;
            out.moved = true;
            out.dx = self.at.0;
            out.dy = self.at.1;
        }
        if self.may_lift(now) {
            self.lift(out);
            return true;
        }
        false
    }

    fn may_lift(&self, now: Micros) -> bool {
        self.released.is_some()
            && self.target == self.at
            && (self.far || now.since(self.down_at) >= TAP_GUARD_US)
    }

    /// Lifts the fingers where they are (into `out`), caught up or not: the end of the
    /// swipe, or a cancel.
    pub fn lift(&self, out: &mut TouchOut) {
        out.fingers = self.fingers;
        out.lift = true;
        out.dx = self.at.0;
        out.dy = self.at.1;
    }

    /// When [`SwipeFingers::advance`] has something to do, `None` while the fingers are
    /// where the hand is and the button is held (nothing to time then). Lagging behind a
    /// hand that still moves: [`HAND_STILL_US`] after its last report (its next report
    /// writes the frame); after the release: every [`FRAME_INTERVAL_US`] until caught up,
    /// at most [`CATCH_UP_US`]; a short drag waits for [`TAP_GUARD_US`].
    pub fn deadline(&self) -> Option<Micros> {
        let next_step = self.last.plus(FRAME_INTERVAL_US);
        match self.released {
            Some(r) if self.target != self.at => Some(next_step.min(r.plus(CATCH_UP_US))),
            None if self.target != self.at => Some(next_step.max(self.aimed.plus(HAND_STILL_US))),
            // Caught up and released: the lift waits only for the tap guard.
            Some(_) if !self.far => Some(self.down_at.plus(TAP_GUARD_US)),
            Some(_) => Some(self.last),
            None => None,
        }
    }

    /// The frame just made (down or move) was written by `at`: the caller's clock read
    /// after the write returned. The kernel stamped the frame no later than that, so the
    /// next step, timed from `at`, is never closer to it in the kernel's stamps than
    /// [`FRAME_INTERVAL_US`], however long the write was held up after the frame's time.
    /// An earlier `at` changes nothing.
    pub fn written(&mut self, at: Micros) {
        self.last = self.last.max(at);
    }

    /// Where the last frame put the fingers (offset, touchpad units).
    pub fn at(&self) -> (i32, i32) {
        self.at
    }

    /// Whether the gesture button was released (the fingers are catching up or waiting to
    /// lift).
    pub fn released(&self) -> bool {
        self.released.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The pad is 6480 × 4600 units, so ORIGIN is (3240, 2300), FINGER_SPACING 600 and
    // MAX_OFFSET (3240 − 1200 − 40, 2300 − 40) = (2000, 2260).

    #[test]
    fn three_fingers_sit_in_a_row_15_mm_apart_centred_on_the_origin() {
        let row: Vec<_> = (0..3).map(|i| finger_position(i, 3, 0, 0)).collect();
        assert_eq!(row, [(2640, 2300), (3240, 2300), (3840, 2300)]);
    }

    #[test]
    fn four_fingers_move_together_with_the_offset() {
        let row: Vec<_> = (0..4).map(|i| finger_position(i, 4, 100, -50)).collect();
        assert_eq!(
            row,
            [(2440, 2250), (3040, 2250), (3640, 2250), (4240, 2250)]
        );
    }

    #[test]
    fn the_offset_is_clamped_so_every_finger_stays_on_the_pad() {
        // Four fingers at the clamp: the outer ones 340 units inside the side edges, the
        // row 40 units (1 mm) from the top or bottom edge.
        assert_eq!(finger_position(3, 4, 99_999, -99_999), (6140, 40));
        assert_eq!(finger_position(0, 4, -99_999, 99_999), (340, 4560));
        assert_eq!(MAX_OFFSET, (2000, 2260));
    }

    #[test]
    fn a_step_is_at_most_12_units_per_ms_and_grows_with_at_most_30_ms() {
        let mut out = TouchOut::default();
        let mut f = SwipeFingers::down(3, Micros(0), &mut out);
        assert!(out.down && out.fingers == 3);
        f.aim(1000, 0, Micros(1_000));
        let mut out = TouchOut::default();
        assert!(!f.advance(Micros(7_000), &mut out));
        // 7 ms × 12 units/ms.
        assert_eq!((out.moved, out.dx, out.dy), (true, 84, 0));
        assert_eq!(f.at(), (84, 0));
        // 43 ms later, but a step grows with 30 ms at most: 360 more.
        let mut out = TouchOut::default();
        f.advance(Micros(50_000), &mut out);
        assert_eq!(f.at(), (444, 0));
    }

    #[test]
    fn a_write_held_up_after_the_frame_time_delays_the_next_step() {
        // The frame of 7 ms is written only at 12 ms (the writer was descheduled between
        // reading its clock and the write): the next step waits until 19 ms, so the kernel's
        // stamps of the two frames are 7 ms apart or more, and it is 7 ms × 12 units/ms long.
        let mut out = TouchOut::default();
        let mut f = SwipeFingers::down(3, Micros(0), &mut out);
        f.written(Micros(1_000));
        f.aim(1000, 0, Micros(1_000));
        let mut out = TouchOut::default();
        // 7 ms after the frame time but 6 ms after the down's write: nothing yet.
        f.advance(Micros(7_000), &mut out);
        assert!(!out.moved);
        f.advance(Micros(8_000), &mut out);
        assert_eq!((out.moved, out.dx), (true, 84));
        f.written(Micros(12_000));
        assert_eq!(f.deadline(), Some(Micros(21_000)));
        let mut out = TouchOut::default();
        f.advance(Micros(15_000), &mut out);
        assert!(!out.moved, "3 ms after the write is too soon");
        f.advance(Micros(19_000), &mut out);
        assert_eq!((out.moved, out.dx), (true, 168));
        // A write time before the frame's own changes nothing.
        f.written(Micros(10_000));
        assert_eq!(f.deadline(), Some(Micros(26_000)));
    }

    #[test]
    fn lagging_fingers_wait_for_the_hand_while_held_and_catch_up_after_the_release() {
        let mut out = TouchOut::default();
        let mut f = SwipeFingers::down(3, Micros(0), &mut out);
        f.aim(1000, 0, Micros(1_000));
        f.advance(Micros(7_000), &mut out);
        // Held: the next frame waits until the hand has been still for 20 ms.
        assert!(!f.released());
        assert_eq!(f.deadline(), Some(Micros(21_000)));
        // Released: a frame every 7 ms until caught up.
        f.release(Micros(8_000));
        assert!(f.released());
        assert_eq!(f.deadline(), Some(Micros(14_000)));
    }

    #[test]
    fn a_short_swipe_lifts_only_after_the_tap_guard_and_a_long_one_at_once() {
        // 10 units is under the 52-unit tap motion threshold.
        let mut out = TouchOut::default();
        let mut short = SwipeFingers::down(3, Micros(0), &mut out);
        short.aim(10, 0, Micros(1_000));
        assert!(!short.advance(Micros(7_000), &mut out));
        short.release(Micros(8_000));
        assert_eq!(short.deadline(), Some(Micros(TAP_GUARD_US)));
        let mut out = TouchOut::default();
        assert!(!short.advance(Micros(TAP_GUARD_US - 1), &mut out));
        assert!(short.advance(Micros(TAP_GUARD_US), &mut out));
        assert!(out.lift);

        let mut out = TouchOut::default();
        let mut long = SwipeFingers::down(3, Micros(0), &mut out);
        long.aim(84, 0, Micros(1_000));
        long.advance(Micros(7_000), &mut out);
        long.release(Micros(8_000));
        // Caught up and far: due at once (the last frame's time).
        assert_eq!(long.deadline(), Some(Micros(7_000)));
        let mut out = TouchOut::default();
        assert!(long.advance(Micros(8_000), &mut out));
        assert_eq!((out.lift, out.dx), (true, 84));
    }

    #[test]
    fn no_frame_is_written_before_7_ms_have_passed_since_the_last() {
        let mut out = TouchOut::default();
        let mut f = SwipeFingers::down(3, Micros(0), &mut out);
        f.aim(1000, 0, Micros(1_000));
        let mut out = TouchOut::default();
        assert!(!f.advance(Micros(FRAME_INTERVAL_US - 1), &mut out));
        assert_eq!((out.moved, f.at()), (false, (0, 0)));
        f.advance(Micros(FRAME_INTERVAL_US), &mut out);
        assert_eq!((out.moved, f.at()), (true, (84, 0)));
    }

    #[test]
    fn a_diagonal_step_keeps_the_direction_and_is_scaled_to_the_speed_limit() {
        // 300 × 400 is 500 long; 84 allowed: 300 × 84 / 500 = 50, 400 × 84 / 500 = 67.
        let mut out = TouchOut::default();
        let mut f = SwipeFingers::down(4, Micros(0), &mut out);
        f.aim(300, -400, Micros(1_000));
        let mut out = TouchOut::default();
        f.advance(Micros(7_000), &mut out);
        assert_eq!((out.fingers, out.dx, out.dy), (4, 50, -67));
    }

    #[test]
    fn the_rest_of_the_drag_is_dropped_exactly_100_ms_after_the_first_release() {
        let mut out = TouchOut::default();
        let mut f = SwipeFingers::down(3, Micros(0), &mut out);
        f.aim(1000, 0, Micros(1_000));
        f.release(Micros(1_000));
        // A second release does not move the catch-up window.
        f.release(Micros(90_000));
        f.advance(Micros(7_000), &mut out);
        assert_eq!(f.deadline(), Some(Micros(14_000)));
        let mut out = TouchOut::default();
        assert!(!f.advance(Micros(1_000 + CATCH_UP_US - 1), &mut out));
        assert_eq!(f.at(), (444, 0));
        assert_eq!(f.deadline(), Some(Micros(1_000 + CATCH_UP_US)));
        let mut out = TouchOut::default();
        assert!(f.advance(Micros(1_000 + CATCH_UP_US), &mut out));
        assert_eq!((out.moved, out.lift, out.dx), (false, true, 444));
    }

    #[test]
    fn a_drag_of_exactly_the_tap_motion_threshold_lifts_without_the_tap_guard() {
        let mut out = TouchOut::default();
        let mut far = SwipeFingers::down(3, Micros(0), &mut out);
        far.aim(0, -TAP_MOVE_UNITS, Micros(1_000));
        far.advance(Micros(7_000), &mut out);
        far.release(Micros(8_000));
        assert_eq!(far.deadline(), Some(Micros(7_000)));

        let mut near = SwipeFingers::down(3, Micros(0), &mut out);
        near.aim(0, -(TAP_MOVE_UNITS - 1), Micros(1_000));
        near.advance(Micros(7_000), &mut out);
        near.release(Micros(8_000));
        assert_eq!(near.deadline(), Some(Micros(TAP_GUARD_US)));
    }
}
