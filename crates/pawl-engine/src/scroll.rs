//! The scroll pipeline for one wheel axis, on v120 units, in this order:
//! spike damping → EMA smoothing → max-step clamp → inversion → fractional carry, with lo-res
//! detents derived from the accumulated v120 output, and optional inertia.
//!
//! State is constant-size ([`ScrollAxis`] is `Copy`, a few words): no history that grows.
//! The arithmetic is **integer fixed point only** (no `f32`/`f64` on the event path), so that
//! a HID-BPF program (no floats in BPF) can compute exactly what the engine computes: the
//! [fixed-point specification](#fixed-point-specification) below is the contract.
//!
//! # The rules, precisely
//!
//! A *gesture* is a run of input events of one sign with no pause longer than
//! [`ScrollParams::gesture_gap_us`]. Per input event of `v` v120 units at time `t`:
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
//! (before inversion): the seeded EMA is a convex combination of values of magnitude ≥ 1
//! (rounded to nearest, so still ≥ 1), spike damping never limits below `|EMA|`, and the
//! clamp is at least 1 unit (12 from the config: 0.1 detent). Sub-unit remainders are kept
//! in the carry and dropped only on a reversal (< 1 unit each time). With smoothing, spike
//! damping and clamping off, Σ out = Σ in exactly. What EMA lag and the clamp hold back is
//! not output with inertia off (it is with `carry`).
//!
//! # Inertia
//!
//! - `carry`: what the EMA and the clamp held back (`damped − step`, not the spike excess)
//!   is banked, bounded by `carry_limit` detents, and released with later input of the same
//!   direction, within the room left under the max step. No timer. A reversal drops it.
//! - `glide`: after each event the engine estimates the wheel's speed from its input (the
//!   spike-damped travel ÷ time since the previous event, kept as v120 per glide tick; not
//!   the smoothed output, which lags behind a slowing wheel): the mean of the previous
//!   estimate and the newest inter-event speed (weight ½ each), never faster than the last
//!   inter-event speed, so a wheel that slows down glides slowly (or not at all) instead of
//!   speeding up again. When the wheel then stops, a tail follows: one step per
//!   `glide_interval` of `speed × interval`, multiplied by `glide_decay` per tick, each ≤
//!   max step, until a tick would move less than [`GLIDE_STOP_V120`]. The tail starts
//!   `max(interval, 2 × last event spacing)` after the last event, so steady scrolling gets
//!   no extra steps between its events; slow scrolling is below the stop speed and arms no
//!   timer at all. [`ScrollAxis::next_deadline`] is `None` whenever no tick is due: at rest
//!   no timer is ever armed, and every tick that runs emits a step.
//!
//! # Fixed-point specification
//!
//! Everything below is exact integer arithmetic; a C implementation that follows it step by
//! step produces bit-identical output. `Q16` means a signed 64-bit integer counting
//! 1/65536 v120 units (`ONE = 1 << 16` is one v120 unit). `>>` is applied only to
//! non-negative values (so arithmetic and logical shift agree: it is `floor`).
//!
//! **Direction space.** Every gesture has one input sign `sign ∈ {−1, 1}` and one output
//! direction `dir = invert ? −sign : sign`; a change of either is a *reversal*. The
//! pipeline computes on magnitudes (`x = |v|`) and emits `dir × whole`: the negated input
//! stream runs through bit-identical state and gives exactly the negated output, and
//! inversion is an exact negation. All state below is ≥ 0 except `bank`.
//!
//! **Parameters** ([`ScrollParams::new`], once per config load; floats rounded to nearest,
//! ties away from zero, then clamped; this is the only place a float is read):
//!
//! | field | from | range |
//! |---|---|---|
//! | `factor_q16` | `round(smoothing_factor × 65536)`, `none` → 65536 | 1 ..= 65536 |
//! | `max_v120` | `floor(max_step × 120)` (in `f32`, as before) | 1 ..= [`V120_LIMIT`] |
//! | `spike_ratio_q16` | `round(spike_ratio × 65536)`, 0 = off | 0 ..= 128 × 65536 |
//! | `carry_limit_q16` | `round(carry_limit × 120 × 65536)` | 0 ..= `V120_LIMIT` × 65536 |
//! | `glide_decay_q16` | `round(glide_decay × 65536)` | 0 ..= 65535 |
//! | `glide_interval_us` | as configured | 1 ..= 2²⁰ |
//! | `quantum_v120` | [`ScrollParams::with_quantum`]; 1 from the config | 1 ..= 120 |
//!
//! The defaults convert to: factor 0.35 → 22938 (0.350006…; 0.35 has no finite binary
//! expansion, so no binary fixed point holds it exactly), max_step 5 → 600 (exact),
//! spike_ratio 4 → 262144 (exact), carry_limit 3 → 360 × 65536 (exact), glide_decay 0.85 →
//! 55706 (0.850006…), glide_interval 16 ms → 16000 (exact). Config-file values (validated:
//! factor 0.01..=1, max_step 0.1..=100, spike_ratio 0 or 1..=100, carry_limit 0..=50,
//! decay 0.05..=0.99, interval 4..=100 ms) are never clamped.
//!
//! **Output quantum.** `quantum_v120 = q` is the smallest output step the consumer can
//! express: 1 for grab mode (a virtual device takes any v120), 8 for an HID++ wheel in hi-res
//! mode whose reports the kernel's hid-logitech-hidpp scales (multiplier 15: one device unit
//! is REL_WHEEL_HI_RES 120 / 15 = 8), 120 for a lo-res-only device (one unit = one detent).
//! Every output is a whole multiple of `q`; what is below `q` stays in the carry. With `q = 1`
//! the pipeline is exactly the one without a quantum (the golden vectors pin it).
//! [`ScrollParams::with_quantum`] also rounds `max_v120` down to a multiple of `q` (at least
//! `q`), so that no output exceeds the max step.
//!
//! **State** per axis, all zero at rest and after a reset: `sign`, `dir`, `out_sign` (i8:
//! −1, 0, 1); `last`, `burst_start`, `deadline` (u64 µs; `deadline` also "none");
//! `ema`, `carry`, `burst_used`, `bank`, `speed`, `glide` (i64 Q16); `lores` (i32 v120).
//!
//! **Per input event** `v` (i32, ≠ 0; `v = 0` returns nothing and changes nothing) at `now`
//! (u64 µs); `MAX = max_v120 << 16`, `HALF = 1 << 15`:
//!
//! 1. `sign = signum(v)`, `dir = invert ? −sign : sign`,
//!    `x = min(|v|, V120_LIMIT) << 16` (|v| as u32, so `i32::MIN` is fine; `x ≤ 2³⁹`).
//!    `dt = now ⊖ last` (saturating: 0 if `now < last`). `reversed = sign ≠ state.sign ∨ dir
//!    ≠ state.dir`; `new = reversed ∨ dt > gesture_gap_us`. Store `sign`, `dir`,
//!    `last = now`, `deadline = none`. If `reversed`: `carry = bank = glide = 0`.
//! 2. Spike: if `¬new ∧ spike_ratio_q16 ≠ 0`: `damped = min(x, (spike_ratio_q16 × ema) >>
//!    16)`, else `damped = x`.
//! 3. EMA: `ema = new ? damped : (factor_q16 × damped + (65536 − factor_q16) × ema + HALF)
//!    >> 16` (a convex combination, rounded to nearest, halves up).
//! 4. Burst and clamp: if `reversed ∨ now ⊖ burst_start ≥ 2000`: `burst_start = now`,
//!    `burst_used = 0`. `room = max(MAX − burst_used, 0)`, `step = min(ema, room)`.
//!    Carry inertia only: `bank = clamp(bank + damped − step, −carry_limit_q16,
//!    carry_limit_q16)`; if `bank > 0`: `r = min(bank, room − step)`, `step += r`,
//!    `bank −= r`. Then `burst_used += step`.
//! 5. Glide inertia only (speed in Q16 v120 per tick, `I = glide_interval_us`): if `new`:
//!    `speed = glide = 0`, done. Else `inst = (damped × I) / max(dt, 2000)` (unsigned 64-bit
//!    division, truncating: the one division by a runtime value, glide only);
//!    `speed = (speed == 0) ? inst : (speed + inst) >> 1`; `p = min(inst, speed, MAX)`;
//!    if `(p × glide_decay_q16) >> 16 < 12 << 16`: `glide = 0`, done. Else `glide = p`,
//!    `deadline = last + min(max(I, 2 × dt), gesture_gap_us)` (saturating).
//! 6. Emit `step` (below).
//!
//! **Emit** `m` (Q16, `0 ≤ m ≤ MAX`): `t = m + carry`, `whole = t >> 16`, then
//! `whole −= whole % q` (unsigned remainder; nothing happens when `q = 1`), `carry = t −
//! (whole << 16)` (so `0 ≤ carry < q << 16`; with `q = 1` this is `t & 0xFFFF`; `whole ≤
//! max_v120`, a multiple of `q`: never above the max step). `out = dir × whole` (i32). Lo-res: if `out ≠ 0 ∧ signum(out) ≠ out_sign`: `out_sign = signum(out)`,
//! `lores = 0`. `lores += out`; `detents = lores / 120` (C division, truncating toward zero:
//! a constant divisor), `lores −= detents × 120`. Output `(out, detents)`.
//!
//! **Glide tick** at `now` (glide inertia, `deadline` set, `now ≥ deadline`; otherwise
//! nothing): `glide = (glide × glide_decay_q16) >> 16`; `m = glide`; if `(m ×
//! glide_decay_q16) >> 16 < 12 << 16`: `glide = 0`, `deadline = none`; else `deadline =
//! max(deadline + I, now)`. Emit `m`.
//!
//! **Overflow bounds** (i64, |values| < 2⁶³): `x, ema, damped ≤ 2³⁹` (`V120_LIMIT = 2²³`;
//! the EMA is a convex combination of such values); `spike_ratio_q16 × ema ≤ 2²³ × 2³⁹ =
//! 2⁶²`; the EMA's two products ≤ 2¹⁶ × 2³⁹ each, sum < 2⁵⁶; `MAX ≤ 2³⁹`, `burst_used ≤ MAX`
//! (each step ≤ the room left); `|bank| ≤ carry_limit_q16 ≤ 2³⁹`, so `bank + damped ≤ 2⁴⁰`;
//! `damped × I ≤ 2³⁹ × 2²⁰ = 2⁵⁹`; `speed, inst ≤ 2⁵⁹`, their sum ≤ 2⁶⁰; `glide ≤ MAX`,
//! `glide × decay ≤ 2⁵⁵`; `m + carry < MAX + 120 × 2¹⁶`, `whole ≤ 2²³` fits i32; `lores` stays
//! within ±(119 + 2²³). Inputs beyond ±`V120_LIMIT` saturate there (a real wheel sends at most
//! a few thousand per event: 63 detents = 7560 from a free-spinning MX Master); times
//! saturate at `u64::MAX`.
//!
//! **Versus the former `f32` pipeline** (kept in the tests as the reference model): the same
//! rules; the output v120 of an event differs by at most two units where the carries lie
//! within rounding distance of a whole unit (on opposite sides of it; the next event makes
//! up for it), and the output summed over one direction stays within 2 v120 units, plus what the factor's conversion
//! moves (the Q16 factor is within 2⁻¹⁷ of the `f32` one: at most `spike_ratio × 2⁻¹⁷ × M`
//! per event, M the largest input of the direction, e.g. 0.37 units at the default ratio 4
//! and a 63-detent spike; the properties allow twice that per event and summed); a glide tail has the same length
//! within one tick, each tick within 2 units and its total within `T × 2⁻¹⁶ / (1 − decay)`
//! (+ 2) of the float tail's total `T`, since the Q16 decay is within 2⁻¹⁷ of the `f32` one
//! (0.03 % of a tail at the default decay 0.85; all tested by properties). Replaying every
//! recording in `shared/recordings` and `examples/` gave identical frames except in
//! `free-spin-burst.events`, where 18 wheel frames move one unit (running sum within 1).

use crate::config::{Inertia, InertiaMode, ScrollSettings, Smoothing};
use crate::frame::WheelOut;
use crate::units::{Micros, V120_PER_DETENT};

/// Events arriving within this many µs of a burst's first event form one burst and share one
/// max step. Source: the free-spin definition (events < 2 ms apart); a 1 kHz mouse
/// reporting every 1 ms gets two events per burst, so steady fast scrolling is unaffected.
pub const BURST_US: u64 = 2_000;

/// A glide stops when a tick would move less than this: a tenth of a detent, v120 units.
pub const GLIDE_STOP_V120: i32 = 12;

/// Input magnitudes above this many v120 units per event saturate here: 2²³ (69,905
/// detents), so that every product in the pipeline stays below 2⁶³ (see the module's
/// overflow bounds). Far beyond any wheel: a free-spinning MX Master sends 63 detents.
pub const V120_LIMIT: i32 = 1 << 23;

/// Fraction bits of the pipeline's fixed point: values are in 1/65536 v120 units (Q16).
pub const FRAC_BITS: u32 = 16;

/// One v120 unit in the pipeline's fixed point (Q16).
const ONE: i64 = 1 << FRAC_BITS;
/// Half a unit, for rounding to nearest.
const HALF: i64 = ONE >> 1;
/// [`GLIDE_STOP_V120`] in Q16.
const GLIDE_STOP: i64 = (GLIDE_STOP_V120 as i64) << FRAC_BITS;
/// Largest `glide_interval_us` the arithmetic allows (2²⁰ µs, about 1 s).
const GLIDE_INTERVAL_LIMIT_US: u64 = 1 << 20;
/// Largest output quantum, v120 units: one detent (a lo-res-only device).
pub const QUANTUM_LIMIT_V120: u32 = V120_PER_DETENT as u32;
/// Largest spike ratio the arithmetic allows, Q16 (128).
const SPIKE_RATIO_LIMIT_Q16: u32 = 128 << FRAC_BITS;

/// [`ScrollSettings`] converted to the pipeline's fixed point, once per config load
/// ([`ScrollParams::new`]); what [`ScrollAxis`] reads per event. Integers (two flags and a
/// mode besides), so the same values can be handed to a BPF program. Ranges and the conversion: the module's
/// [fixed-point specification](self#fixed-point-specification).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScrollParams {
    /// Invert the vertical wheel.
    pub invert_vertical: bool,
    /// Invert the horizontal wheel.
    pub invert_horizontal: bool,
    /// EMA factor, Q16 (1/65536): 1 ..= 65536, 65536 = no smoothing.
    pub factor_q16: u32,
    /// Largest output step per event, whole v120 units: 1 ..= [`V120_LIMIT`].
    pub max_v120: u32,
    /// Spike ratio, Q16: 0 = off, else ≤ 128 × 65536.
    pub spike_ratio_q16: u32,
    /// A pause longer than this (µs) starts a new gesture.
    pub gesture_gap_us: u64,
    /// Which inertia runs.
    pub inertia: InertiaMode,
    /// Carry inertia's bank bound, Q16 v120 units (`carry_limit` detents × 120 × 65536).
    pub carry_limit_q16: i64,
    /// Glide velocity kept per tick, Q16: 0 ..= 65535 (< 1, so every glide ends).
    pub glide_decay_q16: u32,
    /// Glide tick period, µs: 1 ..= 2²⁰.
    pub glide_interval_us: u64,
    /// Output quantum, v120 units: 1 ..= 120. Every output step is a whole multiple of it,
    /// the remainder carried. 1 = grab mode (any v120); 8 = an HID++ wheel in hi-res mode
    /// behind hid-logitech-hidpp (multiplier 15: 120 / 15); 120 = a lo-res-only device.
    /// Set with [`ScrollParams::with_quantum`]; [`ScrollParams::new`] gives 1.
    pub quantum_v120: u32,
}

/// `round(f × scale)` (nearest, ties away from zero), clamped to `lo..=hi`; NaN gives `lo`.
fn to_fixed(f: f32, scale: f64, lo: i64, hi: i64) -> i64 {
    let v = (f64::from(f) * scale).round();
    if v.is_nan() {
        lo
    } else {
        // `as` saturates at the i64 range; then clamp.
        (v as i64).clamp(lo, hi)
    }
}

impl ScrollParams {
    /// Converts `s` (the config's floats) to fixed point: rounded to nearest and clamped to
    /// the ranges of the module's specification. Config-time only.
    pub fn new(s: &ScrollSettings) -> ScrollParams {
        let one = ONE as f64;
        let factor_q16 = match s.smoothing {
            Smoothing::Ema(f) => to_fixed(f, one, 1, ONE) as u32,
            Smoothing::None => ONE as u32,
        };
        // In f32 as the float pipeline did, so the same max results (0.1 → 12).
        let max = f64::from((s.max_step * V120_PER_DETENT as f32).floor());
        let max_v120 = to_fixed(max as f32, 1.0, 1, i64::from(V120_LIMIT)) as u32;
        let spike_ratio_q16 = if s.spike_ratio > 0.0 {
            to_fixed(s.spike_ratio, one, 1, i64::from(SPIKE_RATIO_LIMIT_Q16)) as u32
        } else {
            0
        };
        let (inertia, carry_limit_q16, glide_decay_q16, glide_interval_us) = match s.inertia {
            Inertia::Off => (InertiaMode::Off, 0, 0, 1),
            Inertia::Carry { limit } => (
                InertiaMode::Carry,
                to_fixed(
                    limit,
                    V120_PER_DETENT as f64 * one,
                    0,
                    i64::from(V120_LIMIT) << FRAC_BITS,
                ),
                0,
                1,
            ),
            Inertia::Glide { decay, interval_us } => (
                InertiaMode::Glide,
                0,
                to_fixed(decay, one, 0, ONE - 1) as u32,
                interval_us.clamp(1, GLIDE_INTERVAL_LIMIT_US),
            ),
        };
        ScrollParams {
            invert_vertical: s.invert_vertical,
            invert_horizontal: s.invert_horizontal,
            factor_q16,
            max_v120,
            spike_ratio_q16,
            gesture_gap_us: s.gesture_gap_us,
            inertia,
            carry_limit_q16,
            glide_decay_q16,
            glide_interval_us,
            quantum_v120: 1,
        }
    }

    /// These parameters with output quantum `q` v120 units (clamped to 1 ..= 120): every
    /// output step becomes a whole multiple of `q`, and `max_v120` is rounded down to a
    /// multiple of `q` (at least `q`) so that no step exceeds the max. `q = 1` changes
    /// nothing. See the module's specification, "Output quantum".
    #[must_use]
    pub fn with_quantum(self, q: u32) -> ScrollParams {
        let q = q.clamp(1, QUANTUM_LIMIT_V120);
        ScrollParams {
            quantum_v120: q,
            max_v120: (self.max_v120 - self.max_v120 % q).max(q),
            ..self
        }
    }
}

impl From<&ScrollSettings> for ScrollParams {
    fn from(s: &ScrollSettings) -> ScrollParams {
        ScrollParams::new(s)
    }
}

impl From<ScrollSettings> for ScrollParams {
    fn from(s: ScrollSettings) -> ScrollParams {
        ScrollParams::new(&s)
    }
}

impl Default for ScrollParams {
    /// [`ScrollSettings::default`], converted.
    fn default() -> ScrollParams {
        ScrollParams::new(&ScrollSettings::default())
    }
}

/// One axis of the scroll pipeline. `Default` is the state at rest. All travel is Q16 v120
/// units in direction space (see the module's specification).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScrollAxis {
    /// Sign of the current gesture's input (-1, 1), 0 before the first event.
    sign: i8,
    /// Output direction of the current gesture (`sign`, negated when inverted), 0 before.
    dir: i8,
    /// Sign of the last non-zero output v120 (-1, 1), 0 before the first.
    out_sign: i8,
    /// Time of the last input event.
    last: Micros,
    /// Exponential moving average of the spike-damped input magnitude, Q16 v120, ≥ 0.
    ema: i64,
    /// Remainder of the output magnitude below one quantum, Q16, `0 ≤ carry < q << 16`.
    carry: i64,
    /// Output v120 of the current output direction not yet turned into a detent,
    /// |lores| < 120.
    lores: i32,
    /// Start of the current burst window.
    burst_start: Micros,
    /// Output magnitude used in the current burst window, Q16, `≤ max`.
    burst_used: i64,
    /// Travel held back by EMA and clamp (inertia `carry`), Q16, signed in direction space.
    bank: i64,
    /// Wheel speed estimate for glide, Q16 v120 per glide tick, ≥ 0.
    speed: i64,
    /// Current glide step magnitude, Q16 v120 per tick; 0 = not gliding.
    glide: i64,
    /// When the next glide tick is due; `None` at rest.
    deadline: Option<Micros>,
}

impl ScrollAxis {
    /// Runs one input event of `v120` units at `now` through the pipeline; `invert` flips the
    /// output sign. Returns the output step (zero only while a burst's max step is used up or
    /// a sub-unit carry is filling). Integer arithmetic only, no allocation.
    pub fn step(&mut self, p: &ScrollParams, invert: bool, v120: i32, now: Micros) -> WheelOut {
        if v120 == 0 {
            return WheelOut::default();
        }
        // 1. Direction, magnitude, gesture.
        let sign: i8 = if v120 > 0 { 1 } else { -1 };
        let dir = if invert { -sign } else { sign };
        let x = i64::from(v120.unsigned_abs().min(V120_LIMIT as u32)) << FRAC_BITS;
        let dt = now.since(self.last);
        let reversed = sign != self.sign || dir != self.dir;
        let new_gesture = reversed || dt > p.gesture_gap_us;
        self.sign = sign;
        self.dir = dir;
        self.last = now;
        self.deadline = None;
        if reversed {
            self.carry = 0;
            self.bank = 0;
            self.glide = 0;
        }
        let max = i64::from(p.max_v120) << FRAC_BITS;

        // 2. Spike damping against the running level (none at the start of a gesture).
        let damped = if !new_gesture && p.spike_ratio_q16 != 0 {
            x.min((i64::from(p.spike_ratio_q16) * self.ema) >> FRAC_BITS)
        } else {
            x
        };
        // 3. EMA, seeded with the first event of a gesture; rounded to nearest.
        self.ema = if new_gesture {
            damped
        } else {
            let f = i64::from(p.factor_q16);
            (f * damped + (ONE - f) * self.ema + HALF) >> FRAC_BITS
        };
        // 4. Clamp to the max step, shared by the events of a burst.
        if reversed || now.since(self.burst_start) >= BURST_US {
            self.burst_start = now;
            self.burst_used = 0;
        }
        let room = (max - self.burst_used).max(0);
        let mut stepped = self.ema.min(room);
        if p.inertia == InertiaMode::Carry {
            let bound = p.carry_limit_q16;
            self.bank = (self.bank + (damped - stepped)).clamp(-bound, bound);
            if self.bank > 0 {
                let release = self.bank.min(room - stepped);
                stepped += release;
                self.bank -= release;
            }
        }
        self.burst_used += stepped;
        // 5. Glide speed estimate and tail.
        if p.inertia == InertiaMode::Glide {
            self.arm_glide(p, max, damped, dt, new_gesture);
        }
        // 6. Inversion (in `dir`), fractional carry and lo-res detents.
        self.emit(p.quantum_v120, stepped)
    }

    /// Updates the speed estimate from this event's input travel `moved` (Q16 magnitude)
    /// and arms the glide tail for after this event, if fast enough.
    fn arm_glide(&mut self, p: &ScrollParams, max: i64, moved: i64, dt: u64, new_gesture: bool) {
        if new_gesture {
            // One event says nothing about speed.
            self.speed = 0;
            self.glide = 0;
            return;
        }
        let interval = p.glide_interval_us;
        // moved ≤ 2^39, interval ≤ 2^20: the product fits; dt ≤ gesture gap here.
        let instant = ((moved as u64 * interval) / dt.max(BURST_US)) as i64;
        self.speed = if self.speed == 0 {
            instant
        } else {
            (self.speed + instant) >> 1
        };
        // Never glide faster than the wheel last moved: a slowing wheel glides slowly.
        let per_tick = instant.min(self.speed).min(max);
        if (per_tick * i64::from(p.glide_decay_q16)) >> FRAC_BITS < GLIDE_STOP {
            self.glide = 0;
            return;
        }
        self.glide = per_tick;
        let wait = interval.max(dt.saturating_mul(2)).min(p.gesture_gap_us);
        self.deadline = Some(self.last.plus(wait));
    }

    /// Fractional carry and lo-res derivation for an output of magnitude `m` (Q16,
    /// `0 ≤ m ≤ max`), emitted in direction `dir`, in whole multiples of `quantum`.
    #[inline]
    fn emit(&mut self, quantum: u32, m: i64) -> WheelOut {
        let total = m + self.carry;
        let mut whole = total >> FRAC_BITS;
        if quantum > 1 {
            whole -= whole % i64::from(quantum);
        }
        self.carry = total - (whole << FRAC_BITS);
        // ≤ max_v120 ≤ V120_LIMIT: fits an i32.
        let whole = whole as i32;
        let v120 = if self.dir < 0 { -whole } else { whole };
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
    pub fn tick(&mut self, p: &ScrollParams, now: Micros) -> WheelOut {
        let Some(deadline) = self.deadline else {
            return WheelOut::default();
        };
        if p.inertia != InertiaMode::Glide || now < deadline {
            return WheelOut::default();
        }
        let decay = i64::from(p.glide_decay_q16);
        self.glide = (self.glide * decay) >> FRAC_BITS;
        let m = self.glide;
        self.deadline = if (m * decay) >> FRAC_BITS < GLIDE_STOP {
            self.glide = 0;
            None
        } else {
            Some(deadline.plus(p.glide_interval_us).max(now))
        };
        self.emit(p.quantum_v120, m)
    }

    /// Forgets everything (device lost, SYN_DROPPED): the next event starts afresh, no glide
    /// continues, no lo-res remainder is kept.
    pub fn reset(&mut self) {
        *self = ScrollAxis::default();
    }
}

#[cfg(test)]
mod reference;

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
        let p = ScrollParams::new(s);
        events
            .iter()
            .map(|&(ms, v)| a.step(&p, invert, v, Micros(ms * 1000)).v120)
            .collect()
    }

    #[test]
    fn parameters_from_borrowed_settings_are_those_settings() {
        // Kernel mode builds its parameters through this `From`; every field differs
        // from the defaults, so returning the defaults cannot pass.
        let s = ScrollSettings {
            invert_vertical: false,
            invert_horizontal: true,
            smoothing: Smoothing::Ema(0.8),
            max_step: 2.0,
            spike_ratio: 9.0,
            gesture_gap_us: 120_000,
            inertia: Inertia::Off,
        };
        assert_eq!(ScrollParams::from(&s), ScrollParams::new(&s));
        assert_ne!(ScrollParams::from(&s), ScrollParams::default());
    }

    #[test]
    fn a_pause_of_exactly_the_gesture_gap_continues_the_gesture() {
        // A pause longer than the gap starts a new gesture; one exactly as long does not.
        // Continued: 600 is damped to 4 x 120 = 480, then the EMA gives
        // 0.35 x 480 + 0.65 x 120 = 246. New gesture: the EMA is seeded with 600.
        let s = ema();
        assert_eq!(run(&s, false, &[(0, 120), (300, 600)]), [120, 246]);
        assert_eq!(run(&s, false, &[(0, 120), (301, 600)]), [120, 600]);
    }

    #[test]
    fn inversion_flipped_mid_gesture_starts_a_new_gesture() {
        // A reload can flip `invert` while the wheel keeps turning the same way: the
        // output reverses, so the EMA starts again from the new event (600, not the
        // continued gesture's damped 246), as for a reversal of the wheel itself.
        let s = ema();
        let p = ScrollParams::new(&s);
        let mut a = ScrollAxis::default();
        assert_eq!(a.step(&p, false, 120, Micros(0)).v120, 120);
        assert_eq!(a.step(&p, true, 600, Micros(10_000)).v120, -600);
    }

    #[test]
    fn one_detent_in_is_one_detent_out_without_smoothing() {
        let mut a = ScrollAxis::default();
        let out = a.step(&plain().into(), false, 120, Micros(0));
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
        let out = a.step(&plain().into(), true, 120, Micros(0));
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
            .map(|(i, v)| a.step(&plain().into(), false, *v, Micros(i as u64 * 10_000)))
            .collect();
        let detents: Vec<_> = outs.iter().map(|o| o.detents).collect();
        assert_eq!(detents, vec![0, 0, 0, 0, 1]);
        assert_eq!(outs.iter().map(|o| o.v120).sum::<i32>(), 120);
    }

    #[test]
    fn carry_never_rounds_a_step_above_the_max() {
        // The f32 pipeline needed a guard here (2617 + 0.99995 is 2618.0 in f32); in fixed
        // point a carry just under one unit plus the max step truncates to the max.
        let mut a = ScrollAxis {
            sign: 1,
            dir: 1,
            carry: ONE - 1,
            ..ScrollAxis::default()
        };
        assert_eq!(a.emit(1, 2617 << FRAC_BITS).v120, 2617);
        assert_eq!(a.carry, ONE - 1);
    }

    #[test]
    fn lores_remainder_survives_a_pause_but_not_a_reversal() {
        let mut a = ScrollAxis::default();
        let s = ScrollParams::new(&plain());
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
        let s = ScrollParams::new(&ema());
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
        let s = ScrollParams::new(&s);
        let mut a = ScrollAxis::default();
        // A fraction: a 3-unit average decaying towards 1 emits whole units, carry < 1.
        let outs: Vec<i32> = [3, 1, 1, 1, 1, 1]
            .iter()
            .enumerate()
            .map(|(i, v)| a.step(&s, false, *v, Micros(i as u64 * 1000)).v120)
            .collect();
        assert!(outs.iter().all(|v| *v >= 1), "{outs:?}");
        assert!((0..ONE).contains(&a.carry));
    }

    #[test]
    fn carry_inertia_releases_held_back_travel_with_later_input_only() {
        let s = ScrollSettings {
            max_step: 1.0,
            inertia: Inertia::Carry { limit: 3.0 },
            ..plain()
        };
        let s = ScrollParams::new(&s);
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
        let s = ScrollParams::new(&s);
        let mut a = ScrollAxis::default();
        a.step(&s, false, 12_000, Micros(0));
        assert_eq!(a.bank, 240 << FRAC_BITS, "bounded by carry_limit");
        assert_eq!(a.step(&s, false, -12, Micros(10_000)).v120, -12);
        assert_eq!(a.bank, 0);
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
        let s = ScrollParams::new(&glide());
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
        let s = &ScrollParams::new(s);
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
        let s = ScrollParams::new(&glide());
        let mut a = ScrollAxis::default();
        for i in 0..5 {
            a.step(&s, false, 120, Micros(i * 150_000));
            assert_eq!(a.next_deadline(), None);
        }
    }

    #[test]
    fn glide_waits_twice_the_event_spacing_so_steady_scrolling_gets_no_extra_steps() {
        let s = ScrollParams::new(&glide());
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
        let s = ScrollParams::new(&glide());
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
        let s = ScrollParams::new(&glide());
        let mut a = ScrollAxis::default();
        a.step(&s, false, 120, Micros(0));
        a.step(&s, false, 100, Micros(8_000));
        a.reset();
        assert_eq!(a, ScrollAxis::default());
    }
}

/// The fixed-point pipeline against the former `f32` pipeline ([`reference::FloatAxis`]),
/// and its own guarantees on extreme input.
#[cfg(test)]
mod fixed_point {
    use super::reference::FloatAxis;
    use super::*;
    use proptest::prelude::*;

    /// Config-range settings (the validator's ranges), any inertia.
    fn settings() -> impl Strategy<Value = ScrollSettings> {
        let smoothing = prop_oneof![
            Just(Smoothing::None),
            (0.01f32..=1.0).prop_map(Smoothing::Ema)
        ];
        let inertia = prop_oneof![
            Just(Inertia::Off),
            (0.0f32..=50.0).prop_map(|limit| Inertia::Carry { limit }),
            (0.05f32..=0.99, 4_000u64..=100_000)
                .prop_map(|(decay, interval_us)| Inertia::Glide { decay, interval_us }),
        ];
        let spike = prop_oneof![Just(0.0f32), 1.0f32..=100.0];
        (
            smoothing,
            0.1f32..=100.0,
            spike,
            10_000u64..=10_000_000,
            inertia,
        )
            .prop_map(
                |(smoothing, max_step, spike_ratio, gesture_gap_us, inertia)| ScrollSettings {
                    invert_vertical: false,
                    invert_horizontal: false,
                    smoothing,
                    max_step,
                    spike_ratio,
                    gesture_gap_us,
                    inertia,
                },
            )
    }

    /// Wheel events: (µs since the previous event, v120), including bursts and long pauses.
    fn wheel_events() -> impl Strategy<Value = Vec<(u64, i32)>> {
        let gap = prop_oneof![0u64..2_000, 2_000u64..50_000, 50_000u64..2_000_000];
        let value = prop_oneof![-12_000i32..=12_000, -130i32..=130];
        prop::collection::vec((gap, value), 0..120)
    }

    /// Event outputs only (no glide ticks) of the fixed and the float pipeline, checked
    /// against the bound. Two sources of difference: rounding (a carry within rounding
    /// distance of a whole unit moves one unit between neighbouring events, and the two
    /// carries may cross it on opposite sides: 2 per event, 2 per running sum, as both drop
    /// a sub-unit carry at a reversal), and the conversion of
    /// the factor (the Q16 factor is within 2⁻¹⁷ of the `f32` one), which moves the EMA by at
    /// most `2⁻¹⁷ × M` (M: the largest input of the direction so far) and, through the
    /// spike limit, by `spike_ratio` times that. Allowed: twice the latter per event, and
    /// their sum over the direction's run.
    fn assert_within_bound(s: &ScrollSettings, events: &[(u64, i32)]) -> Result<(), TestCaseError> {
        let p = ScrollParams::new(s);
        let (mut a, mut f) = (ScrollAxis::default(), FloatAxis::default());
        let mut now = Micros(0);
        let (mut sum_fixed, mut sum_float, mut sign) = (0i64, 0i64, 0);
        let (mut largest, mut drift) = (0f64, 0f64);
        let gain = f64::from(s.spike_ratio.max(1.0)) * 2f64.powi(-16);
        for (i, &(gap, v)) in events.iter().enumerate() {
            now = now.plus(gap);
            let fixed = a.step(&p, false, v, now).v120;
            let float = f.step(s, false, v, now).v120;
            if v != 0 && v.signum() != sign {
                sign = v.signum();
                (sum_fixed, sum_float, largest, drift) = (0, 0, 0.0, 0.0);
            }
            largest = largest.max(f64::from(v.unsigned_abs()));
            let conversion = gain * largest;
            drift += conversion;
            prop_assert!(
                f64::from((fixed - float).abs()) <= 2.0 + conversion,
                "event {}: {} vs {}",
                i,
                fixed,
                float
            );
            sum_fixed += i64::from(fixed);
            sum_float += i64::from(float);
            prop_assert!(
                ((sum_fixed - sum_float).abs() as f64) <= 2.0 + drift,
                "after event {}: Σ {} vs {}",
                i,
                sum_fixed,
                sum_float
            );
        }
        Ok(())
    }

    /// Every output, glide ticks included (a tick due before an event runs first).
    fn fixed_outputs(p: &ScrollParams, invert: bool, events: &[(u64, i32)]) -> Vec<WheelOut> {
        let mut a = ScrollAxis::default();
        let mut now = Micros(0);
        let mut res = Vec::new();
        for &(gap, v) in events {
            now = now.plus(gap);
            while let Some(t) = a.next_deadline().filter(|t| *t <= now) {
                res.push(a.tick(p, t));
            }
            res.push(a.step(p, invert, v, now));
        }
        while let Some(t) = a.next_deadline() {
            res.push(a.tick(p, t));
            assert!(res.len() < 1_000_000, "glide never ends");
        }
        res
    }

    #[test]
    fn defaults_convert_to_the_documented_fixed_point_values() {
        let p = ScrollParams::default();
        assert_eq!(p.factor_q16, 22_938, "0.35 × 65536 = 22937.6, rounded");
        assert_eq!(p.max_v120, 600);
        assert_eq!(p.spike_ratio_q16, 4 << 16);
        assert_eq!(p.gesture_gap_us, 300_000);
        assert_eq!(p.inertia, InertiaMode::Off);
        let s = ScrollSettings::default();
        let carry = ScrollParams::new(&ScrollSettings {
            inertia: Inertia::Carry { limit: 3.0 },
            ..s
        });
        assert_eq!(carry.carry_limit_q16, 360 << 16);
        let glide = ScrollParams::new(&ScrollSettings {
            inertia: Inertia::Glide {
                decay: 0.85,
                interval_us: 16_000,
            },
            smoothing: Smoothing::None,
            ..s
        });
        assert_eq!(
            glide.glide_decay_q16, 55_706,
            "0.85 × 65536 = 55705.6, rounded"
        );
        assert_eq!(glide.glide_interval_us, 16_000);
        assert_eq!(glide.factor_q16, 1 << 16, "no smoothing is factor 1");
        // Dyadic values are exact; the smallest config max step is 12 units, as in f32.
        let exact = ScrollParams::new(&ScrollSettings {
            smoothing: Smoothing::Ema(0.5),
            max_step: 0.1,
            spike_ratio: 2.5,
            ..s
        });
        assert_eq!(exact.factor_q16, 32_768);
        assert_eq!(exact.max_v120, 12);
        assert_eq!(exact.spike_ratio_q16, 163_840);
    }

    #[test]
    fn out_of_range_settings_are_clamped_to_what_the_arithmetic_allows() {
        let p = ScrollParams::new(&ScrollSettings {
            smoothing: Smoothing::Ema(f32::NAN),
            max_step: 1e30,
            spike_ratio: 1e30,
            inertia: Inertia::Glide {
                decay: 2.0,
                interval_us: u64::MAX,
            },
            ..ScrollSettings::default()
        });
        assert_eq!(p.factor_q16, 1);
        assert_eq!(p.max_v120, V120_LIMIT as u32);
        assert_eq!(p.spike_ratio_q16, SPIKE_RATIO_LIMIT_Q16);
        assert_eq!(p.glide_decay_q16, 65_535, "below 1, so every glide ends");
        assert_eq!(p.glide_interval_us, GLIDE_INTERVAL_LIMIT_US);
        let p = ScrollParams::new(&ScrollSettings {
            smoothing: Smoothing::Ema(0.0),
            max_step: 0.0,
            spike_ratio: -1.0,
            inertia: Inertia::Carry { limit: 1e30 },
            ..ScrollSettings::default()
        });
        assert_eq!((p.factor_q16, p.max_v120, p.spike_ratio_q16), (1, 1, 0));
        assert_eq!(p.carry_limit_q16, i64::from(V120_LIMIT) << 16);
    }

    #[test]
    fn extreme_inputs_saturate_without_overflow() {
        // Largest parameters, i32 extremes, time gaps of zero and of u64::MAX.
        let worst = |inertia| {
            ScrollParams::new(&ScrollSettings {
                smoothing: Smoothing::Ema(1e-9),
                max_step: 1e30,
                spike_ratio: 1e30,
                gesture_gap_us: u64::MAX,
                inertia,
                ..ScrollSettings::default()
            })
        };
        for p in [
            worst(Inertia::Off),
            worst(Inertia::Carry { limit: 1e30 }),
            worst(Inertia::Glide {
                decay: 0.99,
                interval_us: u64::MAX,
            }),
        ] {
            let mut a = ScrollAxis::default();
            let times = [
                0,
                0,
                1,
                2_000,
                u64::MAX / 2,
                u64::MAX,
                u64::MAX,
                5,
                u64::MAX,
            ];
            for (i, &t) in times.iter().enumerate() {
                for v in [i32::MAX, i32::MAX, i32::MIN, i32::MIN, 1, i32::MIN + 1] {
                    let out = a.step(&p, i % 2 == 0, v, Micros(t));
                    assert!(out.v120.unsigned_abs() <= V120_LIMIT as u32, "{out:?}");
                    assert!(a.ema <= i64::from(V120_LIMIT) << FRAC_BITS);
                }
                if let Some(d) = a.next_deadline() {
                    a.tick(&p, d);
                }
            }
        }
        // i32::MIN and i32::MAX saturate to the same magnitude: exact mirror images.
        let p = worst(Inertia::Off);
        let (mut a, mut b) = (ScrollAxis::default(), ScrollAxis::default());
        let min = a.step(&p, false, i32::MIN, Micros(0)).v120;
        assert_eq!(min, -V120_LIMIT);
        assert_eq!(min, -b.step(&p, false, i32::MAX, Micros(0)).v120);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Without glide the two pipelines are continuous in their state, so they differ
        /// only by rounding and the factor's conversion (the bound: `assert_within_bound`).
        #[test]
        fn fixed_point_stays_within_the_stated_bound_of_the_float_pipeline(
            s in settings().prop_filter("no glide", |s| !matches!(s.inertia, Inertia::Glide { .. })),
            events in wheel_events(),
        ) {
            assert_within_bound(&s, &events)?;
        }

        /// With glide, the event outputs obey the same bound (the speed estimate changes
        /// only when and how long a tail runs, never an event's step).
        #[test]
        fn fixed_point_event_steps_with_glide_stay_within_the_bound(
            s in settings(),
            decay in 0.05f32..=0.99,
            interval_us in 4_000u64..=100_000,
            events in prop::collection::vec((2_000u64..400_000, -12_000i32..=12_000), 0..120),
        ) {
            // Events only, no ticks in between: the tails' carry does not mix in.
            let s = ScrollSettings { inertia: Inertia::Glide { decay, interval_us }, ..s };
            assert_within_bound(&s, &events)?;
        }

        /// A glide tail after steady scrolling: the same length within one tick (a tick
        /// near the stop speed may fall either side of it), each tick within 2 units (a
        /// rounding difference in the glide moves a whole unit between neighbouring
        /// ticks), the tail's total within its decay's rounding (below).
        #[test]
        fn glide_tails_match_the_float_pipeline(
            smoothing in prop_oneof![Just(Smoothing::None), (0.01f32..=1.0).prop_map(Smoothing::Ema)],
            decay in 0.05f32..=0.99,
            interval_us in 4_000u64..=100_000,
            spacing in 2_000u64..50_000,
            v in 1i32..=2_000,
            n in 2usize..20,
        ) {
            let s = ScrollSettings {
                smoothing,
                inertia: Inertia::Glide { decay, interval_us },
                ..ScrollSettings::default()
            };
            let p = ScrollParams::new(&s);
            let (mut a, mut f) = (ScrollAxis::default(), FloatAxis::default());
            for i in 0..n as u64 {
                a.step(&p, true, v, Micros(i * spacing));
                f.step(&s, true, v, Micros(i * spacing));
            }
            prop_assert_eq!(a.next_deadline().is_some(), f.next_deadline().is_some());
            let (mut ta, mut tf) = (Vec::new(), Vec::new());
            while let Some(t) = a.next_deadline() {
                ta.push(a.tick(&p, t).v120);
            }
            while let Some(t) = f.next_deadline() {
                tf.push(f.tick(&s, t).v120);
            }
            let extra = ta.len().abs_diff(tf.len());
            prop_assert!(extra <= 1, "{:?} vs {:?}", ta, tf);
            for (x, y) in ta.iter().zip(&tf) {
                prop_assert!((x - y).abs() <= 2, "{:?} vs {:?}", ta, tf);
            }
            // The Q16 decay is within 2^-17 of the f32 one, so a tail of total T (about
            // g / (1 - d)) differs by about T × 2^-17 / (1 - d); allowed twice that, plus
            // the carry (2) and a last tick (< 12 / d) that only one of them runs.
            let (sa, sf) = (ta.iter().sum::<i32>(), tf.iter().sum::<i32>());
            let d = f64::from(decay);
            let bound = 2.0
                + f64::from(sf.abs()) * 2f64.powi(-16) / (1.0 - d)
                + extra as f64 * (12.0 / d + 1.0);
            prop_assert!(f64::from((sa - sf).abs()) <= bound, "Σ {} vs {} (bound {})", sa, sf, bound);
        }

        #[test]
        fn negated_input_gives_exactly_negated_output(
            s in settings(),
            invert in any::<bool>(),
            events in wheel_events(),
        ) {
            let p = ScrollParams::new(&s);
            let negated: Vec<(u64, i32)> = events.iter().map(|&(g, v)| (g, -v)).collect();
            let out: Vec<(i32, i32)> =
                fixed_outputs(&p, invert, &events).iter().map(|o| (o.v120, o.detents)).collect();
            let neg: Vec<(i32, i32)> =
                fixed_outputs(&p, invert, &negated).iter().map(|o| (-o.v120, -o.detents)).collect();
            prop_assert_eq!(out, neg);
        }

        #[test]
        fn the_pipeline_is_deterministic(s in settings(), events in wheel_events()) {
            let p = ScrollParams::new(&s);
            prop_assert_eq!(fixed_outputs(&p, true, &events), fixed_outputs(&p, true, &events));
        }

        #[test]
        fn extreme_values_and_gaps_never_panic_and_respect_the_max(
            s in settings(),
            events in prop::collection::vec(
                (prop_oneof![Just(0u64), 0u64..5_000, Just(u64::MAX / 4)],
                 prop_oneof![Just(i32::MIN), Just(i32::MAX), Just(i32::MIN + 1), any::<i32>()]),
                0..60),
        ) {
            let p = ScrollParams::new(&s);
            for o in fixed_outputs(&p, false, &events) {
                prop_assert!(o.v120.unsigned_abs() <= p.max_v120);
            }
        }
    }
}
