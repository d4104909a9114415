//! Bit-exact test vectors of the fixed-point scroll pipeline (`scroll.rs`'s specification):
//! deterministic event streams under several parameter sets, every output written to
//! `golden/scroll-fixed-point.vectors`. They pin the arithmetic (a change of rounding shows
//! as a diff) and are what another implementation of the specification — the HID-BPF
//! program — must reproduce line for line. `UPDATE_EXPECT=1` rewrites them.

use std::fmt::Write;

use pawl_engine::config::{Inertia, ScrollSettings, Smoothing};
use pawl_engine::scroll::{ScrollAxis, ScrollParams};
use pawl_engine::units::Micros;

/// A 64-bit LCG (Knuth's MMIX constants): the same stream on every machine, no dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }

    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// `n` events `(µs since the previous, v120)`: runs of one direction at a steady or changing
/// pace, bursts under 2 ms, pauses beyond the gesture gap, hi-res and whole-detent values,
/// spikes, and now and then an `i32` extreme.
fn stream(seed: u64, n: usize) -> Vec<(u64, i32)> {
    let mut r = Lcg(seed);
    let mut sign = 1;
    let mut res = Vec::with_capacity(n);
    while res.len() < n {
        if r.below(4) == 0 {
            sign = -sign;
        }
        let pace: u32 = [500, 1_000, 8_000, 12_000, 30_000][r.below(5) as usize];
        let base: i32 = [8, 15, 24, 120, 240, 600][r.below(6) as usize];
        for _ in 0..(2 + r.below(12)) {
            let v = match r.below(20) {
                0 => 63 * 120,
                1 => [i32::MAX, i32::MIN, 1][r.below(3) as usize],
                _ => base + (r.below(base as u32) as i32 - base / 2),
            };
            let v = if v == i32::MIN { v } else { sign * v.max(1) };
            res.push((u64::from(pace) + u64::from(r.below(2_000)), v));
        }
        if r.below(3) == 0 {
            res.push((400_000 + u64::from(r.below(200_000)), sign * base));
        }
    }
    res.truncate(n);
    res
}

/// One parameter set's vectors: the parameters, then `E time v120 -> v120 detents` per event
/// and `T time -> v120 detents` per glide tick (ticks due before an event run first; after
/// the last event the glide runs out).
/// `quantum` is the output quantum (v120); the header names it only when it is not 1, so
/// that the quantum-1 vectors are the ones written before the quantum existed.
fn vectors(
    out: &mut String,
    name: &str,
    s: &ScrollSettings,
    quantum: u32,
    invert: bool,
    seed: u64,
) {
    let p = ScrollParams::new(s).with_quantum(quantum);
    let q = if quantum == 1 {
        String::new()
    } else {
        format!(" quantum_v120 {}", p.quantum_v120)
    };
    writeln!(
        out,
        "# {name}: invert {invert} factor_q16 {} max_v120 {} spike_ratio_q16 {} gap_us {} \
         inertia {:?} carry_limit_q16 {} glide_decay_q16 {} glide_interval_us {}{q}",
        p.factor_q16,
        p.max_v120,
        p.spike_ratio_q16,
        p.gesture_gap_us,
        p.inertia,
        p.carry_limit_q16,
        p.glide_decay_q16,
        p.glide_interval_us
    )
    .unwrap();
    let mut a = ScrollAxis::default();
    let mut now = Micros(0);
    for (gap, v) in stream(seed, 150) {
        now = now.plus(gap);
        while let Some(t) = a.next_deadline().filter(|t| *t <= now) {
            let o = a.tick(&p, t);
            writeln!(out, "T {} -> {} {}", t.0, o.v120, o.detents).unwrap();
        }
        let o = a.step(&p, invert, v, now);
        writeln!(out, "E {} {v} -> {} {}", now.0, o.v120, o.detents).unwrap();
    }
    while let Some(t) = a.next_deadline() {
        let o = a.tick(&p, t);
        writeln!(out, "T {} -> {} {}", t.0, o.v120, o.detents).unwrap();
    }
}

/// The parameter sets of the golden vectors.
fn parameter_sets() -> [(&'static str, ScrollSettings); 5] {
    let d = ScrollSettings::default();
    [
        ("defaults", d),
        (
            "glide 0.85 every 16 ms",
            ScrollSettings {
                inertia: Inertia::Glide {
                    decay: 0.85,
                    interval_us: 16_000,
                },
                ..d
            },
        ),
        (
            "carry 3 detents, max step 1",
            ScrollSettings {
                inertia: Inertia::Carry { limit: 3.0 },
                max_step: 1.0,
                ..d
            },
        ),
        (
            "no smoothing, no spike damping",
            ScrollSettings {
                smoothing: Smoothing::None,
                spike_ratio: 0.0,
                ..d
            },
        ),
        (
            "heavy smoothing 0.1, spike 1.5, max 0.1, glide 0.5 every 4 ms",
            ScrollSettings {
                smoothing: Smoothing::Ema(0.1),
                spike_ratio: 1.5,
                max_step: 0.1,
                inertia: Inertia::Glide {
                    decay: 0.5,
                    interval_us: 4_000,
                },
                ..d
            },
        ),
    ]
}

#[test]
fn the_fixed_point_pipeline_reproduces_its_test_vectors() {
    let mut out = String::new();
    for (i, (name, s)) in parameter_sets().iter().enumerate() {
        for invert in [true, false] {
            vectors(&mut out, name, s, 1, invert, 1 + i as u64);
        }
    }
    expect_test::expect_file!["golden/scroll-fixed-point.vectors"].assert_eq(&out);
}

/// Quantum 8 (an HID++ hi-res wheel behind hid-logitech-hidpp) and 120 (a lo-res-only
/// device): the same streams and parameter sets, every output a whole multiple.
#[test]
fn the_fixed_point_pipeline_with_an_output_quantum_reproduces_its_test_vectors() {
    let mut out = String::new();
    for quantum in [8, 120] {
        for (i, (name, s)) in parameter_sets().iter().enumerate() {
            vectors(&mut out, name, s, quantum, true, 1 + i as u64);
        }
    }
    let mut q = 0;
    for line in out.lines() {
        if let Some((_, n)) = line.split_once("quantum_v120 ") {
            q = n.parse().unwrap();
            continue;
        }
        let (_, o) = line.split_once("-> ").unwrap();
        let v: i32 = o.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(v % q, 0, "not a multiple of the quantum {q}: {line}");
    }
    expect_test::expect_file!["golden/scroll-fixed-point-quantum.vectors"].assert_eq(&out);
}
