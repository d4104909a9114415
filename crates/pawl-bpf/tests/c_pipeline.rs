//! The C scroll pipeline (`src/bpf/scroll.h`, the code the HID-BPF program runs, here built
//! natively) equals the engine's fixed-point pipeline: on every wheel stream of every
//! recording, frame by frame, and on random event streams and parameters; with glide
//! inertia, the ticks too (run at the deadlines the engine gives, on time or late) give the
//! same outputs and the same next deadlines. The program's
//! in-kernel half of the proof is the VM scenario `kernel_mode_wheel_transformed_in_kernel`.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};

use pawl_bpf::scroll::{ScrollAxisC, ScrollParamsC, native};
use pawl_engine::config::{Inertia, ScrollSettings, Smoothing};
use pawl_engine::scroll::{ScrollAxis, ScrollParams};
use pawl_engine::units::Micros;
use pawl_evdev::frames::{Decoded, Decoder};
use pawl_evdev::record;
use proptest::prelude::*;

use pawl_recordings::dir as recordings_dir;

/// Every replayable stream: `*.events`, `*.json` (DOM wheel traces) and `*.yaml` (libinput
/// record) of the recordings and `examples/`.
fn streams() -> Vec<PathBuf> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut res = Vec::new();
    for dir in [recordings_dir(), examples] {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (set PAWL_RECORDINGS)", dir.display()));
        for e in entries {
            let p = e.unwrap().path();
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            if matches!(ext, "events" | "json" | "yaml") {
                res.push(p);
            }
        }
    }
    res.sort();
    res
}

/// The wheel input of each frame of a recording: `(µs, vertical v120, horizontal v120)`, as
/// pawl's decoder makes it (hi-res travel, else detents × 120).
fn wheel_frames(path: &Path) -> Vec<(u64, i32, i32)> {
    let text = std::fs::read_to_string(path).unwrap();
    let rec = record::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let bytes: Vec<u8> = rec.events.iter().flat_map(|e| e.to_bytes()).collect();
    let mut res = Vec::new();
    Decoder::new(rec.wheel_caps()).decode(&bytes, |d| {
        if let Decoded::Frame(f, _) = d
            && (f.wheel.v120 != 0 || f.hwheel.v120 != 0)
        {
            res.push((f.time.0, f.wheel.v120, f.hwheel.v120));
        }
    });
    res
}

/// The parameter sets the recordings run under: the defaults, carry inertia with a small max
/// step, no shaping, heavy smoothing with a short glide, the config's documented glide
/// (decay 0.85, 16 ms), each with the output quanta 1 (grab mode), 8 (HID++ hi-res units)
/// and 120 (lo-res).
fn parameter_sets() -> Vec<ScrollParams> {
    let d = ScrollSettings::default();
    let settings = [
        d,
        ScrollSettings {
            inertia: Inertia::Carry { limit: 3.0 },
            max_step: 1.0,
            invert_horizontal: true,
            ..d
        },
        ScrollSettings {
            smoothing: Smoothing::None,
            spike_ratio: 0.0,
            invert_vertical: false,
            ..d
        },
        ScrollSettings {
            smoothing: Smoothing::Ema(0.1),
            spike_ratio: 1.5,
            max_step: 0.5,
            inertia: Inertia::Glide {
                decay: 0.5,
                interval_us: 4_000,
            },
            ..d
        },
        ScrollSettings {
            inertia: Inertia::Glide {
                decay: 0.85,
                interval_us: 16_000,
            },
            ..d
        },
    ];
    let mut res = Vec::new();
    for s in &settings {
        for q in [1, 8, 120] {
            res.push(ScrollParams::new(s).with_quantum(q));
        }
    }
    res
}

/// What one call gave: `(v120, detents)` and the next glide deadline (µs).
type Output = ((i32, i32), Option<u64>);

/// Where the two pipelines first differ: what ran (`"event i"` or `"tick after event i at
/// t µs"`), the engine's output, C's.
type Difference = (String, Output, Output);

/// Longest glide tail a stream may leave (ticks): a tail's step decays by at least 1/65536
/// per tick from at most the max step, so this bounds every config-range tail many times.
const TAIL_LIMIT: usize = 100_000;

/// Runs `events` `(µs, v120)` through the engine's axis and the C axis, and, whenever the
/// engine gives a glide deadline `d`, the tick at `d + late` µs on both (before the next
/// event when it is due by then, and the whole tail after the last event); returns the
/// first call where the outputs or the next deadlines differ. Also counts the ticks run.
fn first_difference(
    p: &ScrollParams,
    invert: bool,
    late: u64,
    events: impl IntoIterator<Item = (u64, i32)>,
    ticks: &mut usize,
) -> Option<Difference> {
    let c = ScrollParamsC::from(p);
    let mut engine = ScrollAxis::default();
    let mut kernel = ScrollAxisC::default();
    let deadline = |e: &ScrollAxis| e.next_deadline().map(|t| t.0);
    let mut tail = |engine: &mut ScrollAxis,
                    kernel: &mut ScrollAxisC,
                    until: Option<u64>,
                    what: &dyn Fn() -> String|
     -> Option<Difference> {
        let mut n = 0;
        while let Some(d) = deadline(engine) {
            let at = d.saturating_add(late);
            if until.is_some_and(|u| at > u) {
                break;
            }
            let e = engine.tick(p, Micros(at));
            let k = native::tick(kernel, &c, at);
            let (e, k) = (
                ((e.v120, e.detents), deadline(engine)),
                (k, kernel.next_deadline()),
            );
            *ticks += 1;
            if e != k {
                return Some((format!("tick {n} {} at {at} µs", what()), e, k));
            }
            n += 1;
            assert!(n < TAIL_LIMIT, "the glide never ends: {p:?}");
        }
        None
    };
    for (i, (t, v)) in events.into_iter().enumerate() {
        if let Some(d) = tail(&mut engine, &mut kernel, Some(t), &|| {
            format!("before event {i}")
        }) {
            return Some(d);
        }
        let e = engine.step(p, invert, v, Micros(t));
        let k = native::step(&mut kernel, &c, invert, v, t);
        let (e, k) = (
            ((e.v120, e.detents), deadline(&engine)),
            (k, kernel.next_deadline()),
        );
        if e != k {
            return Some((format!("event {i}"), e, k));
        }
    }
    tail(&mut engine, &mut kernel, None, &|| {
        "after the last event".to_owned()
    })
}

#[test]
fn the_c_pipeline_equals_the_engine_on_every_recording() {
    let mut frames_compared = 0;
    let mut ticks = 0;
    let mut streams_with_wheel = 0;
    for path in streams() {
        let frames = wheel_frames(&path);
        if frames.is_empty() {
            continue;
        }
        streams_with_wheel += 1;
        for p in parameter_sets() {
            for (axis, invert) in [(0, p.invert_vertical), (1, p.invert_horizontal)] {
                let events = frames
                    .iter()
                    .map(|&(t, v, h)| (t, if axis == 0 { v } else { h }))
                    .filter(|&(_, v)| v != 0);
                frames_compared += events.clone().count();
                // Ticks on time (a timer), and 3 ms late (a loaded machine).
                for late in [0, 3_000] {
                    if let Some((what, e, k)) =
                        first_difference(&p, invert, late, events.clone(), &mut ticks)
                    {
                        panic!(
                            "{}: axis {axis}, {p:?}, ticks {late} µs late: {what}: engine \
                             {e:?}, C {k:?}",
                            path.display()
                        );
                    }
                }
            }
        }
    }
    eprintln!(
        "{streams_with_wheel} streams, {frames_compared} wheel frames compared (parameter sets × \
         axes), {ticks} glide ticks"
    );
    // Every recording directory has wheel streams; comparing nothing proves nothing.
    assert!(streams_with_wheel >= 6, "only {streams_with_wheel} streams");
    assert!(frames_compared > 1_000, "only {frames_compared} frames");
    // The recordings are mostly slow scrolling (no tail): 199 ticks when written.
    assert!(ticks > 100, "only {ticks} glide ticks");
}

fn settings() -> impl Strategy<Value = ScrollParams> {
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
    let quantum = prop_oneof![Just(1u32), Just(8u32), Just(120u32), 1u32..=120];
    (
        any::<bool>(),
        smoothing,
        0.1f32..=100.0,
        spike,
        10_000u64..=10_000_000,
        inertia,
        quantum,
    )
        .prop_map(
            |(iv, smoothing, max_step, spike_ratio, gesture_gap_us, inertia, q)| {
                ScrollParams::new(&ScrollSettings {
                    invert_vertical: iv,
                    invert_horizontal: !iv,
                    smoothing,
                    max_step,
                    spike_ratio,
                    gesture_gap_us,
                    inertia,
                })
                .with_quantum(q)
            },
        )
}

/// Events `(µs since the previous, v120)`: bursts, steady scrolling, long pauses, hi-res and
/// detent values, the `i32` extremes, and time going backwards (clocks are inputs).
fn events() -> impl Strategy<Value = Vec<(i64, i32)>> {
    let gap = prop_oneof![
        0i64..2_000,
        2_000i64..50_000,
        50_000i64..2_000_000,
        -5_000i64..0
    ];
    let value = prop_oneof![
        -12_000i32..=12_000,
        -130i32..=130,
        (-20i32..=20).prop_map(|u| u * 8),
        Just(0),
        Just(i32::MIN),
        Just(i32::MAX),
    ];
    prop::collection::vec((gap, value), 0..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn the_programs_per_axis_quantum_is_the_engines_with_quantum(p in settings(), q in 0u32..=200) {
        let c = native::with_quantum(&ScrollParamsC::from(&p), q);
        prop_assert_eq!(c, ScrollParamsC::from(&p.with_quantum(q)));
    }

    #[test]
    fn the_c_pipeline_equals_the_engine_on_random_streams_and_parameters(
        p in settings(), invert in any::<bool>(), start in 0u64..u64::MAX / 2, events in events(),
        late in prop_oneof![Just(0u64), 0u64..40_000],
    ) {
        let mut now = start;
        let timed: Vec<(u64, i32)> = events
            .iter()
            .map(|&(gap, v)| {
                now = now.saturating_add_signed(gap);
                (now, v)
            })
            .collect();
        let diff = first_difference(&p, invert, late, timed.iter().copied(), &mut 0);
        prop_assert!(diff.is_none(), "{p:?} invert {invert}: {diff:?} in {timed:?}");
    }
}
