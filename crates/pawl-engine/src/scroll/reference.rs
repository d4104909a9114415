//! The scroll pipeline as it was before the fixed-point rewrite, in `f32`: the reference
//! model the fixed-point [`super::ScrollAxis`] is compared with (tests only, never on the
//! event path). Same rules, same order; see `super`'s docs.

use crate::config::{Inertia, ScrollSettings, Smoothing};
use crate::frame::WheelOut;
use crate::units::{Micros, V120_PER_DETENT};

use super::BURST_US;

/// A glide stops when a tick would move less than this, v120 units.
const GLIDE_STOP_V120: f32 = 12.0;
/// Weight of the newest inter-event speed in the glide's speed estimate.
const GLIDE_SPEED_WEIGHT: f32 = 0.5;

/// One axis of the float pipeline. `Default` is the state at rest.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FloatAxis {
    /// Sign of the current gesture's input (-1, 1), 0 before the first event.
    sign: i8,
    /// Sign of the last non-zero output v120 (-1, 1), 0 before the first.
    out_sign: i8,
    /// Time of the last input event.
    last: Micros,
    /// Exponential moving average of the spike-damped input, v120 per event.
    ema: f32,
    /// Sub-unit remainder of the output, v120 units, |carry| < 1, post-inversion.
    carry: f32,
    /// Output v120 of the current output direction not yet turned into a detent,
    /// |lores| < 120.
    lores: i32,
    /// Start of the current burst window.
    burst_start: Micros,
    /// Output magnitude used in the current burst window, v120.
    burst_used: f32,
    /// Travel held back by EMA and clamp (inertia `carry`), v120, pre-inversion.
    bank: f32,
    /// Wheel speed estimate for glide, v120 per µs, pre-inversion.
    speed: f32,
    /// Current glide step, v120 per tick, post-inversion; 0 = not gliding.
    glide: f32,
    /// When the next glide tick is due; `None` at rest.
    deadline: Option<Micros>,
}

impl FloatAxis {
    /// Runs one input event of `v120` units at `now` through the pipeline; `invert` flips the
    /// output sign. Returns the output step (zero only while a burst's max step is used up or
    /// a sub-unit carry is filling).
    pub fn step(&mut self, s: &ScrollSettings, invert: bool, v120: i32, now: Micros) -> WheelOut {
        if v120 == 0 {
            return WheelOut::default();
        }
        let sign = if v120 > 0 { 1 } else { -1 };
        let dt = now.since(self.last);
        let reversed = sign != self.sign;
        let new_gesture = reversed || dt > s.gesture_gap_us;
        self.sign = sign;
        self.last = now;
        self.deadline = None;
        if reversed {
            self.carry = 0.0;
            self.bank = 0.0;
            self.glide = 0.0;
        }
        // Whole v120 units, so that step + carry (< 1) never truncates to above the max.
        let max = (s.max_step * V120_PER_DETENT as f32).floor();

        // 1–2. Spike damping against the running level (none at the start of a gesture).
        let raw = v120 as f32;
        let limit = s.spike_ratio * self.ema.abs();
        let damped = if !new_gesture && s.spike_ratio > 0.0 && raw.abs() > limit {
            limit * raw.signum()
        } else {
            raw
        };
        // 3. EMA, seeded with the first event of a gesture.
        let factor = match s.smoothing {
            Smoothing::Ema(f) => f,
            Smoothing::None => 1.0,
        };
        self.ema = if new_gesture {
            damped
        } else {
            self.ema + factor * (damped - self.ema)
        };
        // 4. Clamp to the max step, shared by the events of a burst.
        if reversed || now.since(self.burst_start) >= BURST_US {
            self.burst_start = now;
            self.burst_used = 0.0;
        }
        let room = (max - self.burst_used).max(0.0);
        let mut stepped = self.ema.clamp(-room, room);
        if let Inertia::Carry { limit } = s.inertia {
            let bound = limit * V120_PER_DETENT as f32;
            self.bank = (self.bank + (damped - stepped)).clamp(-bound, bound);
            if self.bank * raw > 0.0 {
                let release = self.bank.abs().min(room - stepped.abs());
                stepped += release * raw.signum();
                self.bank -= release * raw.signum();
            }
        }
        self.burst_used += stepped.abs();
        if let Inertia::Glide { decay, interval_us } = s.inertia {
            self.arm_glide(s, max, invert, damped, dt, new_gesture, decay, interval_us);
        }
        // 5. Inversion.
        if invert {
            stepped = -stepped;
        }
        // 6. Fractional carry and lo-res detents.
        self.emit(stepped, max)
    }

    /// Updates the speed estimate from this event's input travel `moved` (v120,
    /// pre-inversion) and arms the glide tail for after this event, if fast enough.
    #[allow(clippy::too_many_arguments)]
    fn arm_glide(
        &mut self,
        s: &ScrollSettings,
        max: f32,
        invert: bool,
        moved: f32,
        dt: u64,
        new_gesture: bool,
        decay: f32,
        interval_us: u64,
    ) {
        let interval = interval_us.max(1);
        if new_gesture {
            // One event says nothing about speed.
            self.speed = 0.0;
            self.glide = 0.0;
            return;
        }
        let instant = moved / dt.max(BURST_US) as f32;
        self.speed = if self.speed == 0.0 {
            instant
        } else {
            self.speed + GLIDE_SPEED_WEIGHT * (instant - self.speed)
        };
        // Never glide faster than the wheel last moved: a slowing wheel glides slowly.
        let speed = if instant.abs() < self.speed.abs() {
            instant
        } else {
            self.speed
        };
        let per_tick = (speed * interval as f32).clamp(-max, max);
        if (per_tick * decay).abs() < GLIDE_STOP_V120 {
            self.glide = 0.0;
            return;
        }
        self.glide = if invert { -per_tick } else { per_tick };
        let wait = interval.max(dt.saturating_mul(2)).min(s.gesture_gap_us);
        self.deadline = Some(self.last.plus(wait));
    }

    /// Fractional carry and lo-res derivation for an output of `v` v120 units, `|v| ≤ max`
    /// (whole units).
    #[inline]
    fn emit(&mut self, v: f32, max: f32) -> WheelOut {
        let total = v + self.carry;
        let mut whole = total.trunc();
        self.carry = total - whole;
        if whole.abs() > max {
            // f32 rounding of `v + carry` (carry just under 1) can land on the next integer.
            whole = max.copysign(whole);
            self.carry = 0.0;
        }
        let v120 = whole as i32;
        if v120 != 0 {
            let sign = if v120 > 0 { 1 } else { -1 };
            if sign != self.out_sign {
                self.out_sign = sign;
                self.lores = 0;
            }
        }
        self.lores += v120;
        let detents = self.lores / V120_PER_DETENT;
        self.lores -= detents * V120_PER_DETENT;
        WheelOut { v120, detents }
    }

    /// When the next glide tick is due, `None` at rest (then no timer may be armed).
    #[inline]
    pub fn next_deadline(&self) -> Option<Micros> {
        self.deadline
    }

    /// Runs a glide tick due at or before `now`; returns the output step (zero when not
    /// gliding or not yet due).
    pub fn tick(&mut self, s: &ScrollSettings, now: Micros) -> WheelOut {
        let (Inertia::Glide { decay, interval_us }, Some(deadline)) = (s.inertia, self.deadline)
        else {
            return WheelOut::default();
        };
        if now < deadline {
            return WheelOut::default();
        }
        self.glide *= decay;
        let v = self.glide;
        let max = (s.max_step * V120_PER_DETENT as f32).floor();
        self.deadline = if (v * decay).abs() < GLIDE_STOP_V120 {
            self.glide = 0.0;
            None
        } else {
            Some(deadline.plus(interval_us.max(1)).max(now))
        };
        self.emit(v, max)
    }
}
