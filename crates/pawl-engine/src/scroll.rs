//! The scroll pipeline for one wheel axis, on v120 units, in this order:
//! spike damping → EMA smoothing → max-step clamp → inversion → fractional carry, with lo-res
//! detents derived from the accumulated v120 output, and optional inertia.
//!
//! State is constant-size ([`ScrollAxis`] is `Copy`, a few words): no history that grows.
//!
//! # The rules, precisely
//!
//! A *gesture* is a run of input events of one sign with no pause longer than
//! [`ScrollSettings::gesture_gap_us`]. Per input event of `v` v120 units at time `t`:
//!
//! 1. **Gesture.** A sign change (reversal) or a pause longer than the gap starts a new
//!    gesture: the EMA is seeded with the event itself (so the first event is not slowed).
//!    A reversal also drops the fractional carry, the inertia bank and any glide, so the
//!    reversal answers at once.
//! 2. **Spike damping.** Within a gesture, `|v|` is limited to `spike_ratio × |EMA|`
//!    (`spike_ratio = 0`: off).
//! 3. **EMA.** `ema += factor × (damped − ema)` (`smoothing = "none"`: factor 1).
//! 4. **Clamp.** `|step| ≤ max_step` detents, and a *burst* — events that arrive within
//!    [`BURST_US`] (2 ms) of the burst's first event, as a free-spinning wheel or a macOS
//!    ScrollPoint burst produces them — shares one `max_step` between all its events: a burst
//!    never moves more than one max step, so it never jumps the page.
//! 5. **Inversion** flips the sign exactly.
//! 6. **Fractional carry.** The step is truncated to whole v120 units; the remainder
//!    (`|carry| < 1`) is added to the next step of the same direction. Lo-res detents are
//!    the whole detents of the v120 output accumulated since the output last changed
//!    direction: `Σ detents = trunc(Σ v120 / 120)` over every run of one output sign.
//!
//! **No input is swallowed by rounding:** outside a burst whose max step is used up, every
//! input event with `v ≠ 0` moves the output by at least one v120 unit in its direction
//! (before inversion): the seeded EMA is a convex combination of values of magnitude ≥ 1,
//! spike damping never limits below `|EMA|`, and the clamp is at least 12 units (0.1
//! detent). Sub-unit remainders are kept in the carry and dropped only on a reversal (< 1
//! unit each time). With smoothing, spike damping and clamping off, Σ out = Σ in exactly.
//! What EMA lag and the clamp hold back is not output with inertia off (it is with
//! `carry`).
//!
//! # Inertia
//!
//! - `carry`: what the EMA and the clamp held back (`damped − step`, not the spike excess)
//!   is banked, bounded by `carry_limit` detents, and released with later input of the same
//!   direction, within the room left under the max step. No timer. A reversal drops it.
//! - `glide`: after each event the engine estimates the wheel's speed from its input (the
//!   spike-damped travel ÷ time since the previous event, v120 per µs; not the smoothed
//!   output, which lags behind a slowing wheel): an EMA weighted toward the newest event
//!   ([`GLIDE_SPEED_WEIGHT`]), never faster than the last inter-event speed, so a wheel that
//!   slows down glides slowly (or not at all) instead of speeding up again. When the wheel
//!   then stops, a tail follows: one step per `glide_interval` of `speed × interval`,
//!   multiplied by `glide_decay` per tick, each ≤ max step, until a tick would move less
//!   than [`GLIDE_STOP_V120`]. The tail starts
//!   `max(interval, 2 × last event spacing)` after the last event, so steady scrolling gets
//!   no extra steps between its events; slow scrolling is below the stop speed and arms no
//!   timer at all. [`ScrollAxis::next_deadline`] is `None` whenever no tick is due: at rest
//!   no timer is ever armed, and every tick that runs emits a step.

use crate::config::{Inertia, ScrollSettings, Smoothing};
use crate::frame::WheelOut;
use crate::units::{Micros, V120_PER_DETENT};

/// Events arriving within this many µs of a burst's first event form one burst and share one
/// max step. Source: the free-spin definition (events < 2 ms apart); a 1 kHz mouse
/// reporting every 1 ms gets two events per burst, so steady fast scrolling is unaffected.
pub const BURST_US: u64 = 2_000;

/// A glide stops when a tick would move less than this: a tenth of a detent, v120 units.
pub const GLIDE_STOP_V120: f32 = 12.0;

/// Weight of the newest inter-event speed in the glide's speed estimate: half, so the
/// estimate follows a change of pace within two or three events while one irregularly
/// timed event (Bluetooth reports bunch up) moves it only halfway.
pub const GLIDE_SPEED_WEIGHT: f32 = 0.5;

/// One axis of the scroll pipeline. `Default` is the state at rest.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScrollAxis {
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

impl ScrollAxis {
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

    /// Forgets everything (device lost, SYN_DROPPED): the next event starts afresh, no glide
    /// continues, no lo-res remainder is kept.
    pub fn reset(&mut self) {
        *self = ScrollAxis::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No smoothing, no spike damping, no effective clamp: output = input.
    fn plain() -> ScrollSettings {
        ScrollSettings {
            invert_vertical: false,
            invert_horizontal: false,
            smoothing: Smoothing::None,
            max_step: 100.0,
            spike_ratio: 0.0,
            gesture_gap_us: 300_000,
            inertia: Inertia::Off,
        }
    }

    fn ema() -> ScrollSettings {
        ScrollSettings {
            smoothing: Smoothing::Ema(0.35),
            spike_ratio: 4.0,
            max_step: 5.0,
            ..plain()
        }
    }

    /// Runs `(ms, v120)` events; returns the output v120 steps.
    fn run(s: &ScrollSettings, invert: bool, events: &[(u64, i32)]) -> Vec<i32> {
        let mut a = ScrollAxis::default();
        events
            .iter()
            .map(|&(ms, v)| a.step(s, invert, v, Micros(ms * 1000)).v120)
            .collect()
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
    fn carry_never_rounds_a_step_above_the_max() {
        // Found by the max-step property: 2617 + 0.99995 is 2618.0 in f32.
        let mut a = ScrollAxis {
            sign: 1,
            carry: 0.99995,
            ..ScrollAxis::default()
        };
        assert_eq!(a.emit(2617.0, 2617.0).v120, 2617);
    }

    #[test]
    fn lores_remainder_survives_a_pause_but_not_a_reversal() {
        let mut a = ScrollAxis::default();
        let s = plain();
        assert_eq!(a.step(&s, false, 60, Micros(0)).detents, 0);
        // A long pause starts a new gesture, but the half detent still counts.
        assert_eq!(a.step(&s, false, 60, Micros(5_000_000)).detents, 1);
        assert_eq!(a.step(&s, false, 100, Micros(5_010_000)).detents, 0);
        // Reversal: the 100 pending are dropped, -120 is a detent at once.
        assert_eq!(a.step(&s, false, -120, Micros(5_020_000)).detents, -1);
    }

    #[test]
    fn max_step_clamps_each_event() {
        let s = ScrollSettings {
            max_step: 1.0,
            ..plain()
        };
        assert_eq!(run(&s, false, &[(0, 1200), (10, 1200)]), vec![120, 120]);
    }

    #[test]
    fn first_event_of_a_gesture_is_not_slowed_by_smoothing() {
        assert_eq!(run(&ema(), false, &[(0, 120)]), vec![120]);
    }

    #[test]
    fn ema_smooths_a_sudden_speed_up() {
        assert_eq!(
            run(&ema(), false, &[(0, 120), (10, 120), (20, 240)]),
            vec![120, 120, 162]
        );
    }

    #[test]
    fn direction_change_responds_at_once() {
        let mut events: Vec<(u64, i32)> = (0..5).map(|i| (i * 10, 600)).collect();
        events.push((60, -120));
        assert_eq!(run(&ema(), false, &events)[5], -120);
    }

    #[test]
    fn pause_longer_than_the_gesture_gap_reseeds_the_average() {
        // Without the pause the EMA would still be far above 120.
        let out = run(&ema(), false, &[(0, 600), (10, 600), (400, 120)]);
        assert_eq!(out[2], 120);
        let out = run(&ema(), false, &[(0, 600), (10, 600), (20, 120)]);
        assert!(out[2] > 400, "{out:?}");
    }

    #[test]
    fn spike_is_limited_to_ratio_times_the_average() {
        // Level 24 per event, then a 63-detent glitch: at most 4 × 24 = 96 goes in.
        let out = run(&ema(), false, &[(0, 24), (10, 24), (20, 63 * 120)]);
        assert_eq!(out, vec![24, 24, 24 + (0.35f32 * 72.0) as i32]);
    }

    #[test]
    fn spike_damping_off_lets_a_spike_through_up_to_the_clamp() {
        let s = ScrollSettings {
            spike_ratio: 0.0,
            ..ema()
        };
        let out = run(&s, false, &[(0, 24), (10, 24), (20, 63 * 120)]);
        assert_eq!(
            out[2], 600,
            "the EMA jumps to 2661, the clamp holds it at 5 detents"
        );
    }

    #[test]
    fn free_spin_burst_moves_at_most_one_max_step_per_two_ms() {
        // A burst of ±63-detent jumps 0.1 ms apart, after fast scrolling at 5 detents.
        let mut events: Vec<(u64, i32)> = (0..5).map(|i| (i * 8_000, 600)).collect();
        for i in 0..40 {
            let v = if i % 3 == 0 { 63 * 120 } else { 600 };
            events.push((50_000 + i * 100, v));
        }
        let mut a = ScrollAxis::default();
        let s = ema();
        let mut burst_total = 0;
        for &(us, v) in &events {
            let out = a.step(&s, false, v, Micros(us));
            assert!(out.v120.abs() <= 600, "step {} above max", out.v120);
            if (50_000..52_000).contains(&us) {
                burst_total += out.v120;
            }
        }
        assert!(burst_total <= 600, "burst moved {burst_total}");
        assert!(burst_total > 0);
    }

    #[test]
    fn tiny_steps_are_carried_not_dropped() {
        // 0.35 of a unit per event after smoothing still adds up.
        let s = ScrollSettings {
            smoothing: Smoothing::Ema(0.35),
            ..plain()
        };
        let out = run(&s, false, &[(0, 1), (1, 1), (2, 1), (3, 1)]);
        assert_eq!(out, vec![1, 1, 1, 1]);
        let mut a = ScrollAxis::default();
        // A fraction: a 3-unit average decaying towards 1 emits whole units, carry < 1.
        let outs: Vec<i32> = [3, 1, 1, 1, 1, 1]
            .iter()
            .enumerate()
            .map(|(i, v)| a.step(&s, false, *v, Micros(i as u64 * 1000)).v120)
            .collect();
        assert!(outs.iter().all(|v| *v >= 1), "{outs:?}");
        assert!(a.carry.abs() < 1.0);
    }

    #[test]
    fn carry_inertia_releases_held_back_travel_with_later_input_only() {
        let s = ScrollSettings {
            max_step: 1.0,
            inertia: Inertia::Carry { limit: 3.0 },
            ..plain()
        };
        let mut a = ScrollAxis::default();
        // 3 detents in, 1 out: 2 banked.
        assert_eq!(a.step(&s, false, 360, Micros(0)).v120, 120);
        assert_eq!(a.next_deadline(), None, "carry never arms a timer");
        // A small later event gets the bank on top, up to the max step.
        assert_eq!(a.step(&s, false, 24, Micros(500_000)).v120, 120);
        assert_eq!(a.step(&s, false, 24, Micros(510_000)).v120, 120);
        assert_eq!(a.step(&s, false, 24, Micros(520_000)).v120, 72);
        assert_eq!(a.step(&s, false, 24, Micros(530_000)).v120, 24);
    }

    #[test]
    fn carry_inertia_is_bounded_and_dropped_on_reversal() {
        let s = ScrollSettings {
            max_step: 1.0,
            inertia: Inertia::Carry { limit: 2.0 },
            ..plain()
        };
        let mut a = ScrollAxis::default();
        a.step(&s, false, 12_000, Micros(0));
        assert_eq!(a.bank, 240.0, "bounded by carry_limit");
        assert_eq!(a.step(&s, false, -12, Micros(10_000)).v120, -12);
        assert_eq!(a.bank, 0.0);
    }

    fn glide() -> ScrollSettings {
        ScrollSettings {
            inertia: Inertia::Glide {
                decay: 0.5,
                interval_us: 16_000,
            },
            ..plain()
        }
    }

    #[test]
    fn glide_tail_follows_a_fast_scroll_and_then_stops() {
        let s = glide();
        let mut a = ScrollAxis::default();
        assert_eq!(a.next_deadline(), None);
        // 120 every 8 ms = 15 v120/ms = 240 per 16 ms tick.
        for i in 0..4 {
            a.step(&s, false, 120, Micros(i * 8_000));
        }
        let last = 24_000;
        assert_eq!(a.next_deadline(), Some(Micros(last + 16_000)));
        let mut tail = Vec::new();
        while let Some(t) = a.next_deadline() {
            tail.push(a.tick(&s, t).v120);
        }
        assert_eq!(tail, vec![120, 60, 30, 15]);
        assert_eq!(a.next_deadline(), None, "no deadline at rest");
    }

    /// Runs `(µs, v120)` events and then the whole glide; returns (event outputs, ticks).
    fn glide_run(s: &ScrollSettings, events: &[(u64, i32)]) -> (Vec<i32>, Vec<i32>) {
        let mut a = ScrollAxis::default();
        let outs = events
            .iter()
            .map(|&(us, v)| a.step(s, false, v, Micros(us)).v120)
            .collect();
        let mut ticks = Vec::new();
        while let Some(t) = a.next_deadline() {
            ticks.push(a.tick(s, t).v120);
        }
        (outs, ticks)
    }

    #[test]
    fn a_slowing_wheel_glides_no_faster_than_it_last_moved() {
        let s = ScrollSettings {
            smoothing: Smoothing::Ema(0.35),
            inertia: Inertia::Glide {
                decay: 0.85,
                interval_us: 16_000,
            },
            ..plain()
        };
        // examples/hires-scroll.events: the wheel speeds up to 64 v120 per 12 ms and slows
        // to 8. The smoothed output still moves 22 per event when it stops; the last input
        // speed (8 per 12 ms = 11 per tick, under the stop speed) arms no glide at all.
        let ramp = [8, 16, 24, 40, 48, 56, 64, 56, 48, 40, 32, 24, 16, 8];
        let events: Vec<(u64, i32)> = ramp
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64 * 12_000, *v))
            .collect();
        let (outs, ticks) = glide_run(&s, &events);
        assert_eq!(ticks, Vec::<i32>::new(), "outputs {outs:?}");
        let sum_in: i32 = ramp.iter().sum();
        assert!(outs.iter().sum::<i32>() <= sum_in);
        // Fast, then slowing: 240, 200, 160, 120 per 8 ms. The tail starts from the last
        // speed (120 per 8 ms = 240 per tick, times decay), not from the faster average.
        let events = [
            (0, 240),
            (8_000, 240),
            (16_000, 200),
            (24_000, 160),
            (32_000, 120),
        ];
        let (_, ticks) = glide_run(&s, &events);
        assert_eq!(ticks[0], 204, "{ticks:?}");
        assert!(ticks.windows(2).all(|w| w[1] < w[0]), "{ticks:?}");
    }

    #[test]
    fn slow_scrolling_arms_no_glide_timer() {
        let s = glide();
        let mut a = ScrollAxis::default();
        for i in 0..5 {
            a.step(&s, false, 120, Micros(i * 150_000));
            assert_eq!(a.next_deadline(), None);
        }
    }

    #[test]
    fn glide_waits_twice_the_event_spacing_so_steady_scrolling_gets_no_extra_steps() {
        let s = glide();
        let mut a = ScrollAxis::default();
        a.step(&s, false, 240, Micros(0));
        a.step(&s, false, 240, Micros(30_000));
        assert_eq!(a.next_deadline(), Some(Micros(90_000)));
        // Not due yet: nothing moves.
        assert_eq!(a.tick(&s, Micros(60_000)).v120, 0);
        // The next event cancels the pending tail.
        a.step(&s, false, 240, Micros(60_000));
        assert_eq!(a.next_deadline(), Some(Micros(120_000)));
    }

    #[test]
    fn glide_is_inverted_with_the_wheel_and_reversal_stops_it() {
        let s = glide();
        let mut a = ScrollAxis::default();
        a.step(&s, true, 120, Micros(0));
        a.step(&s, true, 120, Micros(8_000));
        let t = a.next_deadline().unwrap();
        assert!(a.tick(&s, t).v120 < 0);
        a.step(&s, true, -120, t.plus(1_000));
        assert_eq!(a.next_deadline(), None);
    }

    #[test]
    fn reset_forgets_everything() {
        let s = glide();
        let mut a = ScrollAxis::default();
        a.step(&s, false, 120, Micros(0));
        a.step(&s, false, 100, Micros(8_000));
        a.reset();
        assert_eq!(a, ScrollAxis::default());
    }
}
