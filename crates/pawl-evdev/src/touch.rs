//! The swipe style's virtual touchpad frames: [`pawl_engine::TouchOut`] → the events of one
//! uinput write (type B multitouch: `ABS_MT_SLOT`, `ABS_MT_TRACKING_ID`,
//! `ABS_MT_POSITION_X/Y`, plus the single-touch `ABS_X/Y` of the first finger, `BTN_TOUCH`
//! and the `BTN_TOOL_*` of the finger count, as a touchpad's kernel driver writes them).
//! Positions come from [`pawl_engine::swipe::finger_position`].

use pawl_engine::TouchOut;
use pawl_engine::swipe::{MAX_FINGERS, MAX_OFFSET, finger_position};

use crate::codes::*;
use crate::frames::EventWriter;

/// The most events one [`TouchOut`] encodes to (down, moved and lift frames of 4 fingers:
/// 21 + 15 + 11 = 47), rounded up.
pub const MAX_TOUCH_EVENTS: usize = 48;

/// `(dx, dy)` clamped to [`MAX_OFFSET`], as [`finger_position`] places the fingers.
fn clamp_offset(dx: i32, dy: i32) -> (i32, i32) {
    (
        dx.clamp(-MAX_OFFSET.0, MAX_OFFSET.0),
        dy.clamp(-MAX_OFFSET.1, MAX_OFFSET.1),
    )
}

/// The `BTN_TOOL_*` code of `fingers` touches (1..=4).
pub fn tool_code(fingers: u8) -> u16 {
    match fingers {
        0 | 1 => BTN_TOOL_FINGER,
        2 => BTN_TOOL_DOUBLETAP,
        3 => BTN_TOOL_TRIPLETAP,
        _ => BTN_TOOL_QUADTAP,
    }
}

/// Encodes touchpad frames and hands out tracking ids (a new one per finger per swipe, as
/// the kernel's `input_mt` does; 0..=65535, wrapping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TouchEncoder {
    next_id: i32,
    /// Fingers currently down (0 = none), so a lift lifts exactly those.
    down: u8,
    /// The fingers' offset as last written (clamped), so unchanged axes are not written.
    at: (i32, i32),
}

impl TouchEncoder {
    /// Whether fingers are down on the touchpad.
    pub fn fingers_down(&self) -> bool {
        self.down > 0
    }

    /// Encodes `t` into `buf` as up to three frames (fingers down at the press point,
    /// moved, lifted), each ending in `SYN_REPORT`; returns the bytes written (0 for an
    /// empty `t`). A `down` while fingers are down, or a `moved`/`lift` while none are,
    /// is ignored, so the device never sees an unbalanced touch.
    pub fn encode(&mut self, t: &TouchOut, buf: &mut [u8]) -> usize {
        let mut w = EventWriter::new(buf);
        let n = t.fingers.clamp(1, MAX_FINGERS);
        if t.down && self.down == 0 {
            self.down = n;
            self.at = (0, 0);
            for i in 0..n {
                let (x, y) = finger_position(i, n, 0, 0);
                w.push(EV_ABS, ABS_MT_SLOT, i32::from(i));
                w.push(EV_ABS, ABS_MT_TRACKING_ID, self.next_id);
                self.next_id = (self.next_id + 1) & 0xffff;
                w.push(EV_ABS, ABS_MT_POSITION_X, x);
                w.push(EV_ABS, ABS_MT_POSITION_Y, y);
            }
            w.push(EV_KEY, BTN_TOUCH, 1);
            w.push(EV_KEY, tool_code(n), 1);
            let (x, y) = finger_position(0, n, 0, 0);
            w.push(EV_ABS, ABS_X, x);
            w.push(EV_ABS, ABS_Y, y);
            w.syn();
        }
        let n = self.down;
        if n == 0 {
            return w.len();
        }
        let at = clamp_offset(t.dx, t.dy);
        if t.moved && at != self.at {
            // Only the axes that changed (the input core would drop the others anyway).
            let (mx, my) = (at.0 != self.at.0, at.1 != self.at.1);
            self.at = at;
            for i in 0..n {
                let (x, y) = finger_position(i, n, at.0, at.1);
                w.push(EV_ABS, ABS_MT_SLOT, i32::from(i));
                if mx {
                    w.push(EV_ABS, ABS_MT_POSITION_X, x);
                }
                if my {
                    w.push(EV_ABS, ABS_MT_POSITION_Y, y);
                }
            }
            let (x, y) = finger_position(0, n, at.0, at.1);
            if mx {
                w.push(EV_ABS, ABS_X, x);
            }
            if my {
                w.push(EV_ABS, ABS_Y, y);
            }
            w.syn();
        }
        if t.lift {
            w.push_lift(n);
            self.down = 0;
        }
        w.len()
    }

    /// Encodes a lift of every finger down (exit, device gone); 0 bytes when none is.
    pub fn lift(&mut self, buf: &mut [u8]) -> usize {
        let mut w = EventWriter::new(buf);
        if self.down > 0 {
            w.push_lift(self.down);
            self.down = 0;
        }
        w.len()
    }
}

impl EventWriter<'_> {
    fn push_lift(&mut self, n: u8) {
        for i in 0..n {
            self.push(EV_ABS, ABS_MT_SLOT, i32::from(i));
            self.push(EV_ABS, ABS_MT_TRACKING_ID, -1);
        }
        self.push(EV_KEY, BTN_TOUCH, 0);
        self.push(EV_KEY, tool_code(n), 0);
        self.syn();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{EVENT_SIZE, Event};
    use pawl_engine::swipe::ORIGIN;

    fn events(buf: &[u8]) -> Vec<(u16, u16, i32)> {
        buf.chunks_exact(EVENT_SIZE)
            .map(|c| {
                let e = Event::from_bytes(c.try_into().unwrap());
                (e.type_, e.code, e.value)
            })
            .collect()
    }

    fn touch(down: bool, moved: bool, lift: bool, dx: i32, dy: i32) -> TouchOut {
        TouchOut {
            fingers: 3,
            down,
            moved,
            lift,
            dx,
            dy,
        }
    }

    #[test]
    fn a_swipe_is_three_fingers_down_moved_together_and_lifted() {
        let mut enc = TouchEncoder::default();
        let mut buf = [0u8; MAX_TOUCH_EVENTS * EVENT_SIZE];
        let n = enc.encode(&touch(true, true, false, 40, 0), &mut buf);
        let ev = events(&buf[..n]);
        let syns: Vec<usize> = ev
            .iter()
            .enumerate()
            .filter(|(_, e)| e.0 == EV_SYN)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(syns.len(), 2, "down frame and moved frame: {ev:?}");
        let down = &ev[..syns[0]];
        let ids: Vec<i32> = down
            .iter()
            .filter(|e| e.1 == ABS_MT_TRACKING_ID)
            .map(|e| e.2)
            .collect();
        assert_eq!(ids, vec![0, 1, 2]);
        assert!(down.contains(&(EV_KEY, BTN_TOOL_TRIPLETAP, 1)));
        assert!(down.contains(&(EV_KEY, BTN_TOUCH, 1)));
        assert!(down.contains(&(EV_ABS, ABS_Y, ORIGIN.1)));
        let moved = &ev[syns[0] + 1..syns[1]];
        let xs: Vec<i32> = moved
            .iter()
            .filter(|e| e.1 == ABS_MT_POSITION_X)
            .map(|e| e.2)
            .collect();
        let s = pawl_engine::swipe::FINGER_SPACING;
        assert_eq!(
            xs,
            vec![ORIGIN.0 + 40 - s, ORIGIN.0 + 40, ORIGIN.0 + 40 + s]
        );
        assert!(enc.fingers_down());
        let n = enc.encode(&touch(false, true, true, 50, 0), &mut buf);
        let ev = events(&buf[..n]);
        let lifted: Vec<_> = ev.iter().filter(|e| e.1 == ABS_MT_TRACKING_ID).collect();
        assert_eq!(lifted.len(), 3);
        assert!(lifted.iter().all(|e| e.2 == -1));
        assert!(ev.ends_with(&[
            (EV_KEY, BTN_TOUCH, 0),
            (EV_KEY, BTN_TOOL_TRIPLETAP, 0),
            (EV_SYN, SYN_REPORT, 0)
        ]));
        assert!(!enc.fingers_down());
        // The next swipe gets new tracking ids.
        let n = enc.encode(&touch(true, false, false, 0, 0), &mut buf);
        assert!(events(&buf[..n]).contains(&(EV_ABS, ABS_MT_TRACKING_ID, 3)));
    }

    #[test]
    fn a_move_to_where_the_fingers_are_writes_nothing() {
        let mut enc = TouchEncoder::default();
        let mut buf = [0u8; MAX_TOUCH_EVENTS * EVENT_SIZE];
        enc.encode(&touch(true, true, false, 9, 0), &mut buf);
        assert_eq!(enc.encode(&touch(false, true, false, 9, 0), &mut buf), 0);
        // Past the edge the fingers stay put.
        enc.encode(&touch(false, true, false, 1 << 20, 0), &mut buf);
        assert_eq!(
            enc.encode(&touch(false, true, false, 1 << 21, 0), &mut buf),
            0
        );
    }

    #[test]
    fn lift_without_fingers_down_writes_nothing() {
        let mut enc = TouchEncoder::default();
        let mut buf = [0u8; MAX_TOUCH_EVENTS * EVENT_SIZE];
        assert_eq!(enc.lift(&mut buf), 0);
        assert_eq!(enc.encode(&touch(false, true, true, 9, 9), &mut buf), 0);
    }

    #[test]
    fn four_finger_frames_fit_the_buffer() {
        let mut enc = TouchEncoder::default();
        let mut buf = [0u8; MAX_TOUCH_EVENTS * EVENT_SIZE];
        let t = TouchOut {
            fingers: 4,
            ..touch(true, true, true, 1 << 24, -(1 << 24))
        };
        let n = enc.encode(&t, &mut buf);
        let ev = events(&buf[..n]);
        assert_eq!(ev.len(), 47, "both axes changed: every event");
        assert_eq!(ev.last(), Some(&(EV_SYN, SYN_REPORT, 0)));
        assert!(
            ev.iter()
                .filter(|e| e.1 == ABS_MT_POSITION_X)
                .all(|e| (0..pawl_engine::swipe::TOUCHPAD_WIDTH).contains(&e.2))
        );
    }
}
