//! Scroll events in and out: the usable delta of a `kCGEventScrollWheel` event as v120
//! units, and the engine's output written back into the same event.
//!
//! A scroll event carries each axis three times: whole lines (`DeltaAxisN`), 16.16
//! fixed-point lines (`FixedPtDeltaAxisN`) and pixels (`PointDeltaAxisN`), the last two
//! with the system's scroll acceleration applied. pawl reads the most precise non-zero one
//! (point → fixed-point → line). Setting the line delta makes CoreGraphics recompute the
//! other two, so the line delta is written first, then fixed-point and point.
//!
//! Signs: vertical positive = up on both sides; horizontal positive = left on macOS and
//! right in the engine (evdev's convention), so the horizontal axis is negated.

use pawl_engine::units::V120_PER_DETENT;
use pawl_engine::{WheelIn, WheelOut};

use crate::cg::{Field, PIXELS_PER_LINE};
use crate::tap::TapEvent;

/// The three fields of one axis.
struct Axis {
    line: Field,
    fixed: Field,
    point: Field,
}

const VERTICAL: Axis = Axis {
    line: Field::SCROLL_DELTA_AXIS1,
    fixed: Field::SCROLL_FIXED_PT_DELTA_AXIS1,
    point: Field::SCROLL_POINT_DELTA_AXIS1,
};

const HORIZONTAL: Axis = Axis {
    line: Field::SCROLL_DELTA_AXIS2,
    fixed: Field::SCROLL_FIXED_PT_DELTA_AXIS2,
    point: Field::SCROLL_POINT_DELTA_AXIS2,
};

/// The vertical and horizontal wheel of a scroll event, in the engine's units and signs.
pub fn read(event: &impl TapEvent) -> (WheelIn, WheelIn) {
    let wheel = read_axis(event, &VERTICAL);
    let hwheel = read_axis(event, &HORIZONTAL);
    (
        wheel,
        WheelIn {
            v120: -hwheel.v120,
            detents: -hwheel.detents,
        },
    )
}

/// Writes the engine's output into `event`: both line deltas first, then both fixed-point
/// deltas, then both point deltas. A non-zero output is at least ±1 line and ±1 px.
pub fn write(event: &mut impl TapEvent, wheel: WheelOut, hwheel: WheelOut) {
    let vertical = wheel.v120;
    let horizontal = -hwheel.v120;
    event.set_integer(VERTICAL.line, i64::from(lines(vertical)));
    event.set_integer(HORIZONTAL.line, i64::from(lines(horizontal)));
    event.set_double(VERTICAL.fixed, fixed_lines(vertical));
    event.set_double(HORIZONTAL.fixed, fixed_lines(horizontal));
    event.set_integer(VERTICAL.point, i64::from(points(vertical)));
    event.set_integer(HORIZONTAL.point, i64::from(points(horizontal)));
}

/// Whether the event belongs to a pixel-precise device or a system gesture: continuous
/// (trackpad, Magic Mouse), or with a scroll or momentum phase.
pub fn is_continuous(event: &impl TapEvent) -> bool {
    event.integer(Field::SCROLL_IS_CONTINUOUS) != 0 || has_phase(event)
}

/// Whether the event has a scroll phase (a trackpad gesture) or a momentum phase (the
/// system's inertia tail).
pub fn has_phase(event: &impl TapEvent) -> bool {
    event.integer(Field::SCROLL_PHASE) != 0 || event.integer(Field::SCROLL_MOMENTUM_PHASE) != 0
}

fn read_axis(event: &impl TapEvent, axis: &Axis) -> WheelIn {
    let line = event.integer(axis.line);
    let detents = clamp_i32(line);
    let point = event.integer(axis.point);
    if point != 0 {
        let v = point as f64 * f64::from(V120_PER_DETENT) / PIXELS_PER_LINE;
        return WheelIn {
            v120: clamp_i32(v.round() as i64),
            detents,
        };
    }
    let fixed = event.double(axis.fixed);
    if fixed != 0.0 && fixed.is_finite() {
        let v = (fixed * f64::from(V120_PER_DETENT)).round() as i64;
        let v = if v == 0 { fixed.signum() as i64 } else { v };
        return WheelIn {
            v120: clamp_i32(v),
            detents,
        };
    }
    WheelIn {
        v120: clamp_i32(line.saturating_mul(i64::from(V120_PER_DETENT))),
        detents,
    }
}

/// Whole lines for `v120`, rounded to nearest, at least ±1 when non-zero.
fn lines(v120: i32) -> i32 {
    if v120 == 0 {
        return 0;
    }
    let n = (f64::from(v120) / f64::from(V120_PER_DETENT)).round() as i32;
    if n == 0 { v120.signum() } else { n }
}

/// Lines as a double (the fixed-point field).
fn fixed_lines(v120: i32) -> f64 {
    f64::from(v120) / f64::from(V120_PER_DETENT)
}

/// Pixels for `v120`, at least ±1 when non-zero.
fn points(v120: i32) -> i32 {
    if v120 == 0 {
        return 0;
    }
    let n = (f64::from(v120) * PIXELS_PER_LINE / f64::from(V120_PER_DETENT)).round() as i32;
    if n == 0 { v120.signum() } else { n }
}

fn clamp_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeEvent;

    #[test]
    fn point_delta_is_read_before_fixed_point_and_line() {
        let ev = FakeEvent::scroll(1, 1.5, 20);
        assert_eq!(read(&ev).0.v120, 240);
        let ev = FakeEvent::scroll(1, 1.5, 0);
        assert_eq!(read(&ev).0.v120, 180);
        let ev = FakeEvent::scroll(2, 0.0, 0);
        assert_eq!(
            read(&ev).0,
            WheelIn {
                v120: 240,
                detents: 2
            }
        );
    }

    #[test]
    fn horizontal_axis_is_negated_to_the_engine_convention() {
        let mut ev = FakeEvent::default();
        ev.set_integer(Field::SCROLL_DELTA_AXIS2, 1);
        assert_eq!(
            read(&ev).1,
            WheelIn {
                v120: -120,
                detents: -1
            }
        );
    }

    #[test]
    fn line_delta_is_written_first_then_fixed_point_then_point() {
        let mut ev = FakeEvent::default();
        write(
            &mut ev,
            WheelOut {
                v120: -180,
                detents: -1,
            },
            WheelOut::default(),
        );
        let order: Vec<u32> = ev.writes.iter().map(|(f, _)| f.0).collect();
        assert_eq!(order, vec![11, 12, 93, 94, 96, 97]);
        assert_eq!(ev.integer(Field::SCROLL_DELTA_AXIS1), -2);
        assert_eq!(ev.double(Field::SCROLL_FIXED_PT_DELTA_AXIS1), -1.5);
        assert_eq!(ev.integer(Field::SCROLL_POINT_DELTA_AXIS1), -15);
    }

    #[test]
    fn non_zero_output_is_at_least_one_line_and_one_pixel() {
        let mut ev = FakeEvent::default();
        write(
            &mut ev,
            WheelOut {
                v120: 8,
                detents: 0,
            },
            WheelOut {
                v120: -3,
                detents: 0,
            },
        );
        assert_eq!(ev.integer(Field::SCROLL_DELTA_AXIS1), 1);
        assert_eq!(ev.integer(Field::SCROLL_POINT_DELTA_AXIS1), 1);
        assert_eq!(ev.integer(Field::SCROLL_DELTA_AXIS2), 1);
        assert_eq!(ev.integer(Field::SCROLL_POINT_DELTA_AXIS2), 1);
        let mut ev = FakeEvent::default();
        write(&mut ev, WheelOut::default(), WheelOut::default());
        assert_eq!(ev.integer(Field::SCROLL_DELTA_AXIS1), 0);
    }

    #[test]
    fn write_then_read_round_trips_whole_lines() {
        for v in [-600, -120, 120, 360] {
            let mut ev = FakeEvent::default();
            write(
                &mut ev,
                WheelOut {
                    v120: v,
                    detents: 0,
                },
                WheelOut {
                    v120: v,
                    detents: 0,
                },
            );
            let (w, h) = read(&ev);
            assert_eq!((w.v120, h.v120), (v, v));
        }
    }

    #[test]
    fn trackpad_and_momentum_events_are_continuous() {
        let mut ev = FakeEvent::scroll(1, 1.0, 10);
        assert!(!is_continuous(&ev));
        ev.set_integer(Field::SCROLL_MOMENTUM_PHASE, 2);
        assert!(is_continuous(&ev) && has_phase(&ev));
        let mut ev = FakeEvent::scroll(1, 1.0, 10);
        ev.set_integer(Field::SCROLL_IS_CONTINUOUS, 1);
        assert!(is_continuous(&ev) && !has_phase(&ev));
    }
}
