//! The scroll pipeline's settings and per-axis state as the BPF program holds them: the
//! `#[repr(C)]` twins of `struct pawl_scroll_params` and `struct pawl_scroll_axis` in
//! `src/bpf/scroll.h` (layouts asserted by the tests), and the native build of that header
//! ([`native`]) that the equality tests run against the engine.
//!
//! The C pipeline is the engine's [`ScrollAxis::step`](pawl_engine::scroll::ScrollAxis::step),
//! [`tick`](pawl_engine::scroll::ScrollAxis::tick) and
//! [`next_deadline`](pawl_engine::scroll::ScrollAxis::next_deadline), glide inertia
//! included: in kernel mode the program runs the glide's ticks from a BPF timer.

use pawl_engine::config::InertiaMode;
use pawl_engine::scroll::ScrollParams;

/// `PAWL_INERTIA_OFF`: no inertia.
pub const INERTIA_OFF: u8 = 0;
/// `PAWL_INERTIA_CARRY`: carry inertia (runs in the program).
pub const INERTIA_CARRY: u8 = 1;
/// `PAWL_INERTIA_GLIDE`: glide inertia (runs in the program: the tail's ticks from a BPF
/// timer).
pub const INERTIA_GLIDE: u8 = 2;

/// The engine's [`ScrollParams`] as the program's settings map holds them:
/// `struct pawl_scroll_params`, 48 bytes, no implicit padding. Units as in [`ScrollParams`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScrollParamsC {
    /// EMA factor, Q16: 1 ..= 65536.
    pub factor_q16: u32,
    /// Largest output step per event, v120 (a multiple of `quantum_v120`).
    pub max_v120: u32,
    /// Spike ratio, Q16, 0 = off.
    pub spike_ratio_q16: u32,
    /// Output quantum, v120: 1 ..= 120.
    pub quantum_v120: u32,
    /// A pause longer than this starts a new gesture, µs.
    pub gesture_gap_us: u64,
    /// Carry inertia's bank bound, Q16 v120.
    pub carry_limit_q16: i64,
    /// Invert the vertical wheel: 0 / 1.
    pub invert_vertical: u8,
    /// Invert the horizontal wheel: 0 / 1.
    pub invert_horizontal: u8,
    /// [`INERTIA_OFF`], [`INERTIA_CARRY`] or [`INERTIA_GLIDE`].
    pub inertia: u8,
    /// Zero.
    pub pad: u8,
    /// Glide velocity kept per tick, Q16: 0 ..= 65535 (`ScrollParams::glide_decay_q16`).
    pub glide_decay_q16: u32,
    /// Glide tick period, µs: 1 ..= 2²⁰ (`ScrollParams::glide_interval_us`).
    pub glide_interval_us: u64,
}

impl From<&ScrollParams> for ScrollParamsC {
    fn from(p: &ScrollParams) -> ScrollParamsC {
        ScrollParamsC {
            factor_q16: p.factor_q16,
            max_v120: p.max_v120,
            spike_ratio_q16: p.spike_ratio_q16,
            quantum_v120: p.quantum_v120,
            gesture_gap_us: p.gesture_gap_us,
            carry_limit_q16: p.carry_limit_q16,
            invert_vertical: u8::from(p.invert_vertical),
            invert_horizontal: u8::from(p.invert_horizontal),
            inertia: match p.inertia {
                InertiaMode::Off => INERTIA_OFF,
                InertiaMode::Carry => INERTIA_CARRY,
                InertiaMode::Glide => INERTIA_GLIDE,
            },
            pad: 0,
            glide_decay_q16: p.glide_decay_q16,
            glide_interval_us: p.glide_interval_us,
        }
    }
}

impl ScrollParamsC {
    /// The struct's bytes, as a map value.
    pub fn to_bytes(&self) -> [u8; size_of::<ScrollParamsC>()] {
        let mut b = [0u8; size_of::<ScrollParamsC>()];
        b[0..4].copy_from_slice(&self.factor_q16.to_ne_bytes());
        b[4..8].copy_from_slice(&self.max_v120.to_ne_bytes());
        b[8..12].copy_from_slice(&self.spike_ratio_q16.to_ne_bytes());
        b[12..16].copy_from_slice(&self.quantum_v120.to_ne_bytes());
        b[16..24].copy_from_slice(&self.gesture_gap_us.to_ne_bytes());
        b[24..32].copy_from_slice(&self.carry_limit_q16.to_ne_bytes());
        b[32] = self.invert_vertical;
        b[33] = self.invert_horizontal;
        b[34] = self.inertia;
        b[36..40].copy_from_slice(&self.glide_decay_q16.to_ne_bytes());
        b[40..48].copy_from_slice(&self.glide_interval_us.to_ne_bytes());
        b
    }

    /// Reads the struct back from a map value of exactly its size; `None` otherwise.
    pub fn from_bytes(b: &[u8]) -> Option<ScrollParamsC> {
        if b.len() != size_of::<ScrollParamsC>() {
            return None;
        }
        let u32_at = |i: usize| u32::from_ne_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_ne_bytes(b[i..i + 8].try_into().unwrap());
        Some(ScrollParamsC {
            factor_q16: u32_at(0),
            max_v120: u32_at(4),
            spike_ratio_q16: u32_at(8),
            quantum_v120: u32_at(12),
            gesture_gap_us: u64_at(16),
            carry_limit_q16: u64_at(24) as i64,
            invert_vertical: b[32],
            invert_horizontal: b[33],
            inertia: b[34],
            pad: 0,
            glide_decay_q16: u32_at(36),
            glide_interval_us: u64_at(40),
        })
    }
}

/// One axis's pipeline state as the program keeps it: `struct pawl_scroll_axis`, 80 bytes;
/// all zero at rest. The engine's [`ScrollAxis`](pawl_engine::scroll::ScrollAxis) field for
/// field (its `Option` deadline as `deadline` + `has_deadline`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScrollAxisC {
    /// µs of the last input event.
    pub last: u64,
    /// µs of the current burst's start.
    pub burst_start: u64,
    /// EMA of the damped input magnitude, Q16 v120.
    pub ema: i64,
    /// Output remainder below one quantum, Q16.
    pub carry: i64,
    /// Output used in the current burst, Q16.
    pub burst_used: i64,
    /// Carry inertia's bank, Q16.
    pub bank: i64,
    /// Output v120 not yet a detent.
    pub lores: i32,
    /// Input sign of the gesture: −1, 0, 1.
    pub sign: i8,
    /// Output direction of the gesture: −1, 0, 1.
    pub dir: i8,
    /// Sign of the last non-zero output: −1, 0, 1.
    pub out_sign: i8,
    /// 1: a glide tick is due at `deadline`; 0: none.
    pub has_deadline: u8,
    /// Glide speed estimate, Q16 v120 per tick, ≥ 0.
    pub speed: i64,
    /// The glide tail's current step, Q16 v120 per tick; 0 = not gliding.
    pub glide: i64,
    /// µs of the next glide tick (valid while `has_deadline` is 1).
    pub deadline: u64,
}

impl ScrollAxisC {
    /// When the next glide tick is due, µs; `None` at rest: the engine's
    /// [`ScrollAxis::next_deadline`](pawl_engine::scroll::ScrollAxis::next_deadline).
    pub fn next_deadline(&self) -> Option<u64> {
        (self.has_deadline != 0).then_some(self.deadline)
    }
}

/// `src/bpf/scroll.h` compiled natively (host C compiler, by the build script): the very
/// code the BPF program runs, callable from Rust for the equality tests.
pub mod native {
    use super::{ScrollAxisC, ScrollParamsC};

    unsafe extern "C" {
        fn pawl_scroll_step_native(
            a: *mut ScrollAxisC,
            p: *const ScrollParamsC,
            invert: i32,
            v: i32,
            now: u64,
            detents: *mut i32,
        ) -> i32;
    }

    /// `pawl_scroll_step(a, p, invert, v120, now_us)`: returns `(v120, detents)`.
    pub fn step(
        a: &mut ScrollAxisC,
        p: &ScrollParamsC,
        invert: bool,
        v120: i32,
        now_us: u64,
    ) -> (i32, i32) {
        let mut detents = 0;
        // SAFETY: both pointers come from references valid for the call; the C function
        // reads `p`, reads and writes `a` and writes `detents`, and keeps no pointer.
        let v =
            unsafe { pawl_scroll_step_native(a, p, i32::from(invert), v120, now_us, &mut detents) };
        (v, detents)
    }

    unsafe extern "C" {
        fn pawl_scroll_tick_native(
            a: *mut ScrollAxisC,
            p: *const ScrollParamsC,
            now: u64,
            detents: *mut i32,
        ) -> i32;
    }

    /// `pawl_scroll_tick(a, p, now_us)`, the glide tick due at or before `now_us`: returns
    /// `(v120, detents)`, `(0, 0)` when none is due.
    pub fn tick(a: &mut ScrollAxisC, p: &ScrollParamsC, now_us: u64) -> (i32, i32) {
        let mut detents = 0;
        // SAFETY: as in `step`: pointers from references valid for the call, none kept.
        let v = unsafe { pawl_scroll_tick_native(a, p, now_us, &mut detents) };
        (v, detents)
    }

    unsafe extern "C" {
        fn pawl_scroll_with_quantum_native(p: *mut ScrollParamsC, q: u32);
    }

    /// `pawl_scroll_with_quantum(p, q)`: what the program does to the settings per axis.
    pub fn with_quantum(p: &ScrollParamsC, q: u32) -> ScrollParamsC {
        let mut p = *p;
        // SAFETY: `p` is a local the call reads and writes, keeping no pointer.
        unsafe { pawl_scroll_with_quantum_native(&mut p, q) };
        p
    }

    unsafe extern "C" {
        fn pawl_layout_native(out: *mut core::ffi::c_ulong, n: u32) -> u32;
    }

    /// The sizes and offsets `src/bpf/native.c` lists (the C compiler's view of
    /// `src/bpf/pawl.h`), in its order.
    pub fn layout() -> Vec<usize> {
        let mut out = [0 as core::ffi::c_ulong; 64];
        // SAFETY: `out` has room for the 64 values the call may write.
        let n = unsafe { pawl_layout_native(out.as_mut_ptr(), out.len() as u32) };
        out[..n as usize].iter().map(|&v| v as usize).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of};

    #[test]
    fn the_settings_struct_has_the_c_layout() {
        assert_eq!(size_of::<ScrollParamsC>(), 48);
        assert_eq!(align_of::<ScrollParamsC>(), 8);
        assert_eq!(offset_of!(ScrollParamsC, quantum_v120), 12);
        assert_eq!(offset_of!(ScrollParamsC, gesture_gap_us), 16);
        assert_eq!(offset_of!(ScrollParamsC, carry_limit_q16), 24);
        assert_eq!(offset_of!(ScrollParamsC, invert_vertical), 32);
        assert_eq!(offset_of!(ScrollParamsC, inertia), 34);
        assert_eq!(offset_of!(ScrollParamsC, glide_decay_q16), 36);
        assert_eq!(offset_of!(ScrollParamsC, glide_interval_us), 40);
    }

    #[test]
    fn the_axis_state_struct_has_the_c_layout() {
        assert_eq!(size_of::<ScrollAxisC>(), 80);
        assert_eq!(offset_of!(ScrollAxisC, bank), 40);
        assert_eq!(offset_of!(ScrollAxisC, lores), 48);
        assert_eq!(offset_of!(ScrollAxisC, out_sign), 54);
        assert_eq!(offset_of!(ScrollAxisC, has_deadline), 55);
        assert_eq!(offset_of!(ScrollAxisC, speed), 56);
        assert_eq!(offset_of!(ScrollAxisC, deadline), 72);
    }

    #[test]
    fn settings_bytes_round_trip() {
        use pawl_engine::config::{Inertia, ScrollSettings};
        let glide = ScrollSettings {
            inertia: Inertia::Glide {
                decay: 0.85,
                interval_us: 16_000,
            },
            ..ScrollSettings::default()
        };
        for p in [ScrollParams::default(), ScrollParams::new(&glide)] {
            let p = ScrollParamsC::from(&p.with_quantum(8));
            assert_eq!(ScrollParamsC::from_bytes(&p.to_bytes()), Some(p));
        }
        let p = ScrollParamsC::from(&ScrollParams::new(&glide));
        assert_eq!((p.glide_decay_q16, p.glide_interval_us), (55_706, 16_000));
        assert_eq!(ScrollParamsC::from_bytes(&[0; 47]), None);
    }
}
