//! Units the engine speaks: time in µs, wheel travel in v120 units, pointer motion in px,
//! and 0-based button numbers.

/// A point in time, in microseconds, on a monotonic clock chosen by the caller.
///
/// The engine never reads a clock: every event carries one of these. On Linux it is the
/// evdev event timestamp (the backend selects `CLOCK_MONOTONIC` with `EVIOCSCLOCKID`); on
/// macOS it is `CLOCK_UPTIME_RAW` read in the tap callback (`CGEventGetTimestamp` is in machine
/// ticks on Apple silicon, ns on Intel, so pawl-macos does not use it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Micros(pub u64);

impl Micros {
    /// Microseconds from `earlier` to `self`, 0 when `earlier` is later (clocks never go
    /// back, but recorded streams may be spliced).
    #[inline]
    pub fn since(self, earlier: Micros) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// `self` plus `us` microseconds, saturating.
    #[inline]
    pub fn plus(self, us: u64) -> Micros {
        Micros(self.0.saturating_add(us))
    }

    /// Builds a time from milliseconds.
    pub const fn from_millis(ms: u64) -> Micros {
        Micros(ms * 1000)
    }
}

/// Wheel travel per detent in v120 units: 120 = one detent (notch).
///
/// Source: Linux `Documentation/input/event-codes.rst` (REL_WHEEL_HI_RES) and the Windows
/// `WHEEL_DELTA` convention it copies; macOS line deltas are converted at the same scale.
pub const V120_PER_DETENT: i32 = 120;

/// A mouse button, 0-based: 0 left, 1 right, 2 middle, 3 back (`BTN_SIDE`),
/// 4 forward (`BTN_EXTRA`), 5 `BTN_FORWARD`, 6 `BTN_BACK`, 7 `BTN_TASK`, …
///
/// On Linux the number is `code - BTN_MOUSE` (0x110); on macOS it is the CGEvent
/// `kCGMouseEventButtonNumber` field. Numbers above 31 are not representable in
/// [`ButtonSet`] and are rejected by the config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Button(pub u8);

impl Button {
    /// The highest button number pawl tracks (exclusive bound is 32).
    pub const MAX: u8 = 31;
    /// Button 0, primary.
    pub const LEFT: Button = Button(0);
    /// Button 3: back (`BTN_SIDE` on Linux).
    pub const BACK: Button = Button(3);
    /// Button 4: forward (`BTN_EXTRA` on Linux).
    pub const FORWARD: Button = Button(4);
}

/// A set of buttons as a 32-bit mask, bit `n` = [`Button`]`(n)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ButtonSet(pub u32);

impl ButtonSet {
    /// Whether `b` is in the set; buttons above [`Button::MAX`] never are.
    #[inline]
    pub fn contains(self, b: Button) -> bool {
        b.0 <= Button::MAX && self.0 & (1 << b.0) != 0
    }

    /// Adds or removes `b` (ignored above [`Button::MAX`]).
    #[inline]
    pub fn set(&mut self, b: Button, on: bool) {
        if b.0 <= Button::MAX {
            if on {
                self.0 |= 1 << b.0;
            } else {
                self.0 &= !(1 << b.0);
            }
        }
    }

    /// Whether no button is in the set.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The buttons in the set, lowest first.
    pub fn iter(self) -> impl Iterator<Item = Button> {
        (0..=Button::MAX)
            .filter(move |n| self.0 & (1 << n) != 0)
            .map(Button)
    }
}
