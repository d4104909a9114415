//! The scroll pipeline for one wheel axis, on v120 units:
//! spike damping → EMA smoothing → max-step clamp → inversion → fractional carry, with lo-res
//! detents derived from the accumulated v120 output, and optional inertia.
//!
//! State is constant-size: no history that grows with use.

use crate::config::{Inertia, ScrollSettings, Smoothing};
use crate::frame::WheelOut;
use crate::units::{Micros, V120_PER_DETENT};

/// Below this glide velocity (v120 units per tick: a tenth of a detent) the glide stops.
const GLIDE_STOP_V120: f32 = 12.0;

/// One axis of the scroll pipeline. `Default` is the state at rest.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScrollAxis {
    /// Exponential moving average of the (spike-damped) input, v120 per event; 0 at the
    /// start of a gesture.
    ema: f32,
    /// Sub-unit remainder of the output, v120 units, |carry| < 1.
    carry: f32,
    /// Output v120 not yet turned into a whole detent, |lores| < 120.
    lores: i32,
    /// Time of the last input event of the current gesture.
    last: Option<Micros>,
    /// Sign of the current gesture's input (-1, 0, 1).
    sign: i8,
    /// Travel held back by smoothing/clamping (inertia `carry`), v120, pre-inversion.
    held_back: f32,
    /// Glide velocity, v120 per tick, post-inversion; 0 = not gliding.
    glide_velocity: f32,
    /// When the next glide tick is due.
    glide_deadline: Option<Micros>,
}

impl ScrollAxis {
    /// Runs one input event of `v120` units at `now` through the pipeline; `invert` flips the
    /// output sign. Returns the output step (possibly zero while the carry fills up).
    pub fn step(&mut self, s: &ScrollSettings, invert: bool, v120: i32, now: Micros) -> WheelOut {
        if v120 == 0 {
            return WheelOut::default();
        }
        let sign = v120.signum() as i8;
        let new_gesture = match self.last {
            None => true,
            Some(last) => now.since(last) > s.gesture_gap_us || sign != self.sign,
        };
        if new_gesture {
            *self = ScrollAxis {
                sign,
                ..ScrollAxis::default()
            };
        }
        self.last = Some(now);
        self.glide_deadline = None;

        let raw = v120 as f32;
        // Spike damping: limit to spike_ratio × the current average magnitude.
        let mut v = raw;
        let level = self.ema.abs();
        if level > 0.0 && v.abs() > s.spike_ratio * level {
            v = v.signum() * s.spike_ratio * level;
        }
        // EMA smoothing, seeded with the first event of a gesture so it responds at once.
        let factor = match s.smoothing {
            Smoothing::Ema(f) => f,
            Smoothing::None => 1.0,
        };
        self.ema = if new_gesture {
            v
        } else {
            self.ema + factor * (v - self.ema)
        };
        let smoothed = match s.smoothing {
            Smoothing::Ema(_) => self.ema,
            Smoothing::None => v,
        };
        // Max-step clamp.
        let max = s.max_step * V120_PER_DETENT as f32;
        let mut stepped = smoothed.clamp(-max, max);
        // Inertia `carry`: bank what was held back, release it with later input.
        if let Inertia::Carry { limit } = s.inertia {
            let bound = limit * V120_PER_DETENT as f32;
            self.held_back = (self.held_back + (raw - stepped)).clamp(-bound, bound);
            if self.held_back * stepped > 0.0 {
                let room = max - stepped.abs();
                let release = self.held_back.abs().min(room.max(0.0));
                stepped += release * stepped.signum();
                self.held_back -= release * stepped.signum();
            }
        }
        // Inversion.
        if invert {
            stepped = -stepped;
        }
        let out = self.emit(stepped);
        if let Inertia::Glide { interval_us, .. } = s.inertia {
            self.glide_velocity = stepped;
            self.glide_deadline = Some(now.plus(interval_us.max(1)));
        }
        out
    }

    /// Fractional carry and lo-res derivation for an output of `v` v120 units.
    fn emit(&mut self, v: f32) -> WheelOut {
        let total = v + self.carry;
        let whole = total.trunc();
        self.carry = total - whole;
        let v120 = whole as i32;
        self.lores += v120;
        let detents = self.lores / V120_PER_DETENT;
        self.lores -= detents * V120_PER_DETENT;
        WheelOut { v120, detents }
    }

    /// When the next glide tick is due, `None` at rest (then no timer may be armed).
    pub fn next_deadline(&self) -> Option<Micros> {
        self.glide_deadline
    }

    /// Runs a glide tick due at or before `now`; returns the output step (zero when not
    /// gliding or not yet due).
    pub fn tick(&mut self, s: &ScrollSettings, now: Micros) -> WheelOut {
        let (Inertia::Glide { decay, interval_us }, Some(deadline)) =
            (s.inertia, self.glide_deadline)
        else {
            return WheelOut::default();
        };
        if now < deadline {
            return WheelOut::default();
        }
        self.glide_velocity *= decay;
        if self.glide_velocity.abs() < GLIDE_STOP_V120 {
            self.glide_velocity = 0.0;
            self.glide_deadline = None;
            return WheelOut::default();
        }
        self.glide_deadline = Some(deadline.plus(interval_us.max(1)).max(now));
        let v = self.glide_velocity;
        self.emit(v)
    }

    /// Forgets the gesture (device lost, SYN_DROPPED): the next event starts afresh and no
    /// glide continues.
    pub fn reset(&mut self) {
        *self = ScrollAxis::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> ScrollSettings {
        ScrollSettings {
            invert_vertical: false,
            invert_horizontal: false,
            smoothing: Smoothing::None,
            max_step: 100.0,
            spike_ratio: 100.0,
            gesture_gap_us: 300_000,
            inertia: Inertia::Off,
        }
    }

    #[test]
    fn one_detent_in_is_one_detent_out_without_smoothing() {
        let mut a = ScrollAxis::default();
        let out = a.step(&plain(), false, 120, Micros(0));
        assert_eq!(
            out,
            WheelOut {
                v120: 120,
                detents: 1
            }
        );
    }

    #[test]
    fn inversion_flips_the_sign() {
        let mut a = ScrollAxis::default();
        let out = a.step(&plain(), true, 120, Micros(0));
        assert_eq!(
            out,
            WheelOut {
                v120: -120,
                detents: -1
            }
        );
    }

    #[test]
    fn lores_detents_follow_the_accumulated_hires_output() {
        let mut a = ScrollAxis::default();
        let outs: Vec<_> = [16, 16, 24, 40, 24]
            .iter()
            .enumerate()
            .map(|(i, v)| a.step(&plain(), false, *v, Micros(i as u64 * 10_000)))
            .collect();
        let detents: Vec<_> = outs.iter().map(|o| o.detents).collect();
        assert_eq!(detents, vec![0, 0, 0, 0, 1]);
        assert_eq!(outs.iter().map(|o| o.v120).sum::<i32>(), 120);
    }

    #[test]
    fn max_step_clamps_each_event() {
        let s = ScrollSettings {
            max_step: 1.0,
            ..plain()
        };
        let mut a = ScrollAxis::default();
        assert_eq!(a.step(&s, false, 1200, Micros(0)).v120, 120);
    }

    #[test]
    fn first_event_of_a_gesture_is_not_slowed_by_smoothing() {
        let s = ScrollSettings {
            smoothing: Smoothing::Ema(0.35),
            ..plain()
        };
        let mut a = ScrollAxis::default();
        assert_eq!(a.step(&s, false, 120, Micros(0)).v120, 120);
    }

    #[test]
    fn direction_change_responds_at_once() {
        let s = ScrollSettings {
            smoothing: Smoothing::Ema(0.35),
            ..plain()
        };
        let mut a = ScrollAxis::default();
        for i in 0..5 {
            a.step(&s, false, 600, Micros(i * 10_000));
        }
        assert_eq!(a.step(&s, false, -120, Micros(60_000)).v120, -120);
    }

    #[test]
    fn glide_asks_for_ticks_only_while_gliding() {
        let s = ScrollSettings {
            inertia: Inertia::Glide {
                decay: 0.5,
                interval_us: 16_000,
            },
            ..plain()
        };
        let mut a = ScrollAxis::default();
        assert_eq!(a.next_deadline(), None);
        a.step(&s, false, 120, Micros(0));
        assert_eq!(a.next_deadline(), Some(Micros(16_000)));
        assert_eq!(a.tick(&s, Micros(16_000)).v120, 60);
        assert_eq!(a.tick(&s, Micros(32_000)).v120, 30);
        assert_eq!(a.tick(&s, Micros(48_000)).v120, 15);
        assert_eq!(a.tick(&s, Micros(64_000)).v120, 0);
        assert_eq!(a.next_deadline(), None);
    }
}
