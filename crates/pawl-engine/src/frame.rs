//! Frames: what a backend hands the engine (one evdev SYN_REPORT frame, one CGEvent) and
//! what the engine hands back. Fixed-size, `Copy`, no allocation.

use crate::action::Action;
use crate::units::{Button, Micros};

/// One button transition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ButtonChange {
    /// The button.
    pub button: Button,
    /// `true` = pressed, `false` = released.
    pub pressed: bool,
}

/// Up to [`Buttons::CAP`] button transitions of one frame, in order.
///
/// The same button may appear twice in an output frame (press, then release: a click the
/// engine synthesizes); a backend must put a frame boundary (`SYN_REPORT`) between the two,
/// because libinput folds a press and release within one frame into no change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Buttons {
    len: u8,
    items: [ButtonChange; Buttons::CAP],
}

impl Buttons {
    /// Capacity: more transitions in one frame are dropped (a HID report carries at most
    /// one transition per button; 16 buttons change at once only in a synthetic test).
    pub const CAP: usize = 16;

    /// Appends a transition; returns `false` (and drops it) when full.
    #[inline]
    pub fn push(&mut self, button: Button, pressed: bool) -> bool {
        let n = self.len as usize;
        if n == Buttons::CAP {
            return false;
        }
        self.items[n] = ButtonChange { button, pressed };
        self.len += 1;
        true
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many transitions.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// The transitions, in order.
    #[inline]
    pub fn as_slice(&self) -> &[ButtonChange] {
        &self.items[..self.len as usize]
    }

    /// Removes every transition.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// One wheel axis of an input frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WheelIn {
    /// Travel in v120 units (120 = one detent). Linux: `REL_WHEEL_HI_RES`, or
    /// `REL_WHEEL × 120` for a device without hi-res (or a hi-res device's frame without
    /// hi-res travel: `pawl_evdev`'s decoder). Positive = up (vertical) / right
    /// (horizontal), as evdev.
    pub v120: i32,
    /// Whole detents as the device reported them (`REL_WHEEL`), used only when the frame is
    /// rewritten without transforming scroll.
    pub detents: i32,
}

/// What a backend passes in: one frame of one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameIn {
    /// When the frame happened.
    pub time: Micros,
    /// Pointer motion, px (device counts), positive = right.
    pub dx: i32,
    /// Pointer motion, px, positive = down.
    pub dy: i32,
    /// Vertical wheel.
    pub wheel: WheelIn,
    /// Horizontal wheel.
    pub hwheel: WheelIn,
    /// Button transitions, in order.
    pub buttons: Buttons,
}

/// One wheel axis of an output frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WheelOut {
    /// Travel in v120 units.
    pub v120: i32,
    /// Whole detents, derived from the accumulated v120 output (never independently): the
    /// sum of `detents` over a gesture is the sum of `v120` divided by 120, rounded toward 0.
    pub detents: i32,
}

impl From<WheelIn> for WheelOut {
    /// The same travel and detents, unchanged.
    #[inline]
    fn from(w: WheelIn) -> WheelOut {
        WheelOut {
            v120: w.v120,
            detents: w.detents,
        }
    }
}

impl WheelOut {
    /// Whether nothing moves.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.v120 == 0 && self.detents == 0
    }
}

/// Up to [`Actions::CAP`] actions fired by one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Actions {
    len: u8,
    items: [Action; Actions::CAP],
}

impl Default for Actions {
    fn default() -> Self {
        Actions {
            len: 0,
            items: [Action::None; Actions::CAP],
        }
    }
}

impl Actions {
    /// Capacity (one gesture fire plus mapped buttons; more are dropped).
    pub const CAP: usize = 4;

    /// Appends an action; returns `false` when full.
    #[inline]
    pub fn push(&mut self, a: Action) -> bool {
        let n = self.len as usize;
        if n == Actions::CAP {
            return false;
        }
        self.items[n] = a;
        self.len += 1;
        true
    }

    /// The actions, in firing order.
    #[inline]
    pub fn as_slice(&self) -> &[Action] {
        &self.items[..self.len as usize]
    }

    /// Whether none fired.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many fired.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

/// The swipe style's touchpad part of an output frame: what the fingers do, in order
/// `down` → `moved` → `lift`, each its own touchpad frame (`SYN_REPORT`). Offsets are from
/// where the fingers went down, touchpad units ([`crate::swipe`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TouchOut {
    /// How many fingers (3..=4); 0 when the frame has no touchpad part.
    pub fingers: u8,
    /// The fingers go down at the press point (offset 0, 0).
    pub down: bool,
    /// The fingers move to (`dx`, `dy`).
    pub moved: bool,
    /// The fingers lift (after moving, if `moved`).
    pub lift: bool,
    /// Offset of the fingers from where they went down, touchpad units, positive = right.
    pub dx: i32,
    /// Offset, touchpad units, positive = down.
    pub dy: i32,
}

impl TouchOut {
    /// Whether the touchpad has nothing to do.
    #[inline]
    pub fn is_empty(&self) -> bool {
        !(self.down || self.moved || self.lift)
    }
}

/// What the engine hands back for a frame it rewrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameOut {
    /// Pointer motion, px.
    pub dx: i32,
    /// Pointer motion, px.
    pub dy: i32,
    /// Vertical wheel.
    pub wheel: WheelOut,
    /// Horizontal wheel.
    pub hwheel: WheelOut,
    /// Button transitions for the virtual pointer, in order.
    pub buttons: Buttons,
    /// Actions for the backend to perform after writing the pointer frame.
    pub actions: Actions,
    /// The swipe style's virtual touchpad frames (written after the pointer frame).
    pub touch: TouchOut,
}

impl FrameOut {
    /// The output frame that reproduces `input` unchanged (motion, wheels, buttons; no
    /// actions).
    #[inline]
    pub fn unchanged(input: &FrameIn) -> FrameOut {
        FrameOut {
            dx: input.dx,
            dy: input.dy,
            wheel: input.wheel.into(),
            hwheel: input.hwheel.into(),
            buttons: input.buttons,
            actions: Actions::default(),
            touch: TouchOut::default(),
        }
    }

    /// Whether the pointer part is empty (nothing to write; actions may still be present).
    #[inline]
    pub fn pointer_is_empty(&self) -> bool {
        self.dx == 0
            && self.dy == 0
            && self.wheel.is_zero()
            && self.hwheel.is_zero()
            && self.buttons.is_empty()
    }

    /// Resets to empty.
    #[inline]
    pub fn clear(&mut self) {
        *self = FrameOut::default();
    }
}

/// The engine's decision about one input frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Forward the input frame unchanged, bit-exact (the backend writes the bytes it read).
    /// Nothing is written to the [`FrameOut`], and no action fired.
    Forward,
    /// Write the [`FrameOut`] instead (nothing when [`FrameOut::pointer_is_empty`]), then
    /// perform its actions.
    Rewrite,
}
