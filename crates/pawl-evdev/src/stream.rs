//! Rules about a source device's evdev stream that the Linux pipeline (`pawl-linux`'s
//! `pipeline.rs`) and `pawl replay` ([`crate::replay`]) both apply, so a replay shows what
//! the daemon writes: the kernel's "release every key" frame, and the wheel codes a clone
//! has but its source lacks.

use pawl_engine::frame::{FrameIn, FrameOut, Verdict, WheelOut};
use pawl_engine::units::V120_PER_DETENT;

use crate::codes::{EV_KEY, EV_SYN, REL_HWHEEL, REL_HWHEEL_HI_RES, REL_WHEEL, REL_WHEEL_HI_RES};
use crate::frames::EVENT_SIZE;

/// Whether a frame is the kernel's "release every key" (`input_dev_release_keys`, sent when
/// a device is unregistered or reset on resume): only `EV_KEY` releases, without the
/// `MSC_SCAN` that hid-input puts before every real key change. Meaningful only for a
/// source that reports `MSC_SCAN`; such a frame is a cancel, never a click.
#[inline]
pub fn is_kernel_release(raw: &[u8]) -> bool {
    let mut any = false;
    for chunk in raw.chunks_exact(EVENT_SIZE) {
        let ty = u16::from_ne_bytes([chunk[16], chunk[17]]);
        let value = i32::from_ne_bytes([chunk[20], chunk[21], chunk[22], chunk[23]]);
        match ty {
            EV_SYN => {}
            EV_KEY if value == 0 => any = true,
            _ => return false,
        }
    }
    any
}

/// Which wheel code a source lacks, `[(lo-res missing, hi-res missing)]` per axis
/// `[vertical, horizontal]`, given whether it has a `REL_*` code: an axis with only
/// `REL_WHEEL` lacks `REL_WHEEL_HI_RES` and the other way round; an axis with both or
/// neither lacks nothing. The input of [`WheelFixup::new`].
pub fn missing_wheel_codes(has: impl Fn(u16) -> bool) -> [(bool, bool); 2] {
    let axis = |lores, hires| match (has(lores), has(hires)) {
        (true, false) => (false, true),
        (false, true) => (true, false),
        _ => (false, false),
    };
    [
        axis(REL_WHEEL, REL_WHEEL_HI_RES),
        axis(REL_HWHEEL, REL_HWHEEL_HI_RES),
    ]
}

/// Fixes wheel codes the clone has but the source lacks (the clone always has both
/// lo-res and hi-res codes of an axis), for frames whose scroll the engine does not
/// transform: a lo-res-only source gets `REL_*_HI_RES` = detents × 120; a hi-res-only
/// source gets lo-res detents derived from the accumulated hi-res travel (like the
/// kernel's hid-input: a detent per 120 units, the remainder reset on direction change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WheelFixup {
    axes: [AxisFixup; 2],
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum AxisFixup {
    #[default]
    Nothing,
    SynthesizeHires,
    DeriveLores {
        remainder: i32,
    },
}

impl WheelFixup {
    /// The fixup for a source that lacks, per axis `[vertical, horizontal]`, `(lo-res code,
    /// hi-res code)` while having the other one (`pawl-linux`'s `Caps::missing_wheel_codes`,
    /// or [`crate::record::Recording::missing_wheel_codes`]).
    pub fn new(missing: [(bool, bool); 2]) -> WheelFixup {
        let mut f = WheelFixup::default();
        for (axis, (lores_missing, hires_missing)) in missing.into_iter().enumerate() {
            f.axes[axis] = match (lores_missing, hires_missing) {
                (false, true) => AxisFixup::SynthesizeHires,
                (true, false) => AxisFixup::DeriveLores { remainder: 0 },
                _ => AxisFixup::Nothing,
            };
        }
        f
    }

    /// Settles what is written for a frame after the engine's `verdict` on it: returns
    /// `true` when `out` is to be encoded and written — a rewritten frame (its wheel codes
    /// fixed), or a forwarded frame whose missing wheel code now has a value (copied into
    /// `out` and fixed; no actions) — and `false` when the frame's raw bytes are written
    /// unchanged. Nothing is fixed while the engine transforms scroll: its output always
    /// carries both codes. The forwarded fast path costs one check when nothing is missing.
    #[inline]
    pub fn settle(
        &mut self,
        verdict: Verdict,
        transform_scroll: bool,
        frame: &FrameIn,
        out: &mut FrameOut,
    ) -> bool {
        match verdict {
            Verdict::Rewrite => {
                if !transform_scroll {
                    self.apply([&mut out.wheel, &mut out.hwheel]);
                }
                true
            }
            Verdict::Forward => {
                if transform_scroll || self.is_nothing() {
                    return false;
                }
                *out = FrameOut::unchanged(frame);
                self.apply([&mut out.wheel, &mut out.hwheel])
            }
        }
    }

    /// Whether nothing is ever fixed.
    pub fn is_nothing(&self) -> bool {
        self.axes.iter().all(|a| *a == AxisFixup::Nothing)
    }

    /// Fixes `wheels` (`[vertical, horizontal]`; `v120` already holds the travel, as the
    /// decoder and engine fill it). Returns whether the frame must be rewritten because a
    /// code the source lacks now has a value.
    #[inline]
    pub fn apply(&mut self, wheels: [&mut WheelOut; 2]) -> bool {
        let mut rewrite = false;
        for (fix, wheel) in self.axes.iter_mut().zip(wheels) {
            match fix {
                AxisFixup::Nothing => {}
                AxisFixup::SynthesizeHires => rewrite |= wheel.v120 != 0,
                AxisFixup::DeriveLores { remainder } => {
                    if wheel.v120 != 0 {
                        if (*remainder > 0) != (wheel.v120 > 0) {
                            *remainder = 0;
                        }
                        // |remainder| < 120 before: saturates only on a bogus i32 extreme.
                        *remainder = remainder.saturating_add(wheel.v120);
                        let detents = *remainder / V120_PER_DETENT;
                        *remainder -= detents * V120_PER_DETENT;
                        wheel.detents = detents;
                        rewrite |= detents != 0;
                    }
                }
            }
        }
        rewrite
    }

    /// Forgets accumulated travel (resync, cancel).
    pub fn reset(&mut self) {
        for a in &mut self.axes {
            if let AxisFixup::DeriveLores { remainder } = a {
                *remainder = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::*;
    use crate::frames::Event;

    fn bytes(events: &[(u16, u16, i32)]) -> Vec<u8> {
        events
            .iter()
            .flat_map(|(t, c, v)| Event::new(*t, *c, *v).to_bytes())
            .collect()
    }

    #[test]
    fn kernel_release_frames_are_recognized_by_shape() {
        assert!(is_kernel_release(&bytes(&[
            (EV_KEY, BTN_LEFT, 0),
            (EV_SYN, SYN_REPORT, 0)
        ])));
        assert!(!is_kernel_release(&bytes(&[
            (EV_MSC, MSC_SCAN, 0x90001),
            (EV_KEY, BTN_LEFT, 0),
            (EV_SYN, SYN_REPORT, 0)
        ])));
        assert!(!is_kernel_release(&bytes(&[
            (EV_KEY, BTN_LEFT, 1),
            (EV_SYN, SYN_REPORT, 0)
        ])));
        assert!(!is_kernel_release(&bytes(&[
            (EV_REL, REL_X, 1),
            (EV_SYN, SYN_REPORT, 0)
        ])));
        assert!(!is_kernel_release(&bytes(&[(EV_SYN, SYN_REPORT, 0)])));
    }

    /// A hi-res-only vertical wheel.
    const HIRES_ONLY: [(bool, bool); 2] = [(true, false), (false, false)];

    #[test]
    fn derived_lores_restarts_on_direction_change() {
        let mut f = WheelFixup::new(HIRES_ONLY);
        let mut step = |v120| {
            let mut w = WheelOut { v120, detents: 0 };
            let mut h = WheelOut::default();
            f.apply([&mut w, &mut h]);
            w.detents
        };
        // Without the reset the way back would first cancel the 100 carried upward, and
        // the detent would come one step late: [0, 0, 0, -1].
        assert_eq!(
            [step(100), step(-100), step(-100), step(-100)],
            [0, 0, -1, -1]
        );
    }

    #[test]
    fn derived_lores_saturates_on_extreme_travel() {
        let mut f = WheelFixup::new(HIRES_ONLY);
        let mut w = WheelOut {
            v120: 100,
            detents: 0,
        };
        f.apply([&mut w, &mut WheelOut::default()]);
        let mut w = WheelOut {
            v120: i32::MAX,
            detents: 0,
        };
        assert!(f.apply([&mut w, &mut WheelOut::default()]));
        assert_eq!(w.detents, i32::MAX / 120);
    }

    #[test]
    fn lores_only_axis_is_rewritten_only_when_it_moves() {
        let mut f = WheelFixup::new([(false, false), (false, true)]);
        assert!(!f.is_nothing());
        let mut h = WheelOut {
            v120: -240,
            detents: -2,
        };
        assert!(f.apply([&mut WheelOut::default(), &mut h]));
        assert!(!f.apply([&mut WheelOut::default(), &mut WheelOut::default()]));
        assert!(WheelFixup::new([(false, false); 2]).is_nothing());
    }
}
