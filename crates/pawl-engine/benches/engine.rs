//! `cargo bench -p pawl-engine`: wall-clock nanoseconds per input frame of
//! `DeviceEngine::frame`, for motion with the gesture button up, motion while it is held, and
//! in-scope wheel scroll (default settings: EMA, inversion, clamp), plus a glide tail.
//!
//! A plain `harness = false` bench: each scenario runs 7 times over 1,000,000 frames and the
//! median is printed. Wall-clock numbers vary with the machine; the instruction counts of
//! `cargo xtask bench-instructions` are the stable figure.

use std::hint::black_box;
use std::time::Instant;

use pawl_engine::config::Inertia;
use pawl_engine::engine::buttons;
use pawl_engine::units::Micros;
use pawl_engine::{Config, DeviceEngine, FrameIn, FrameOut, Platform, WheelIn};

const FRAMES: usize = 1_000_000;
const RUNS: usize = 7;

fn motion(n: usize) -> Vec<FrameIn> {
    (0..n)
        .map(|i| FrameIn {
            time: Micros(1_000 * (i as u64 + 1)),
            dx: (i % 7) as i32 - 3,
            dy: (i % 5) as i32 - 2,
            ..FrameIn::default()
        })
        .collect()
}

fn scroll(n: usize) -> Vec<FrameIn> {
    (0..n)
        .map(|i| {
            let v = [15, 30, 45, 30][i % 4];
            FrameIn {
                time: Micros(8_000 * (i as u64 + 1)),
                wheel: WheelIn {
                    v120: v,
                    detents: 0,
                },
                ..FrameIn::default()
            }
        })
        .collect()
}

/// Median ns per frame over `RUNS` runs; `setup` prepares a fresh engine per run.
fn bench(name: &str, frames: &[FrameIn], setup: impl Fn() -> DeviceEngine) {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut engine = setup();
        let mut out = FrameOut::default();
        let start = Instant::now();
        for f in frames {
            black_box(engine.frame(black_box(f), &mut out));
        }
        times.push(start.elapsed().as_nanos() as f64 / frames.len() as f64);
    }
    times.sort_by(f64::total_cmp);
    println!("{name:<40} {:>8.2} ns/frame", times[RUNS / 2]);
}

fn main() {
    let config = Config::default_for(Platform::Linux);
    let engine = || DeviceEngine::with_profile(&config, true, config.scroll);
    println!("DeviceEngine::frame, median of {RUNS} runs of {FRAMES} frames");
    bench("motion, gesture button up", &motion(FRAMES), engine);
    bench("motion, gesture button held", &motion(FRAMES), || {
        let mut e = engine();
        let press = FrameIn {
            buttons: buttons(&[(5, true)]),
            ..FrameIn::default()
        };
        e.frame(&press, &mut FrameOut::default());
        e
    });
    bench("wheel scroll, in scope", &scroll(FRAMES), engine);
    let mut glide = config.scroll;
    glide.inertia = Inertia::Glide {
        decay: 0.85,
        interval_us: 16_000,
    };
    bench(
        "wheel scroll, in scope, glide armed",
        &scroll(FRAMES),
        || DeviceEngine::with_profile(&config, true, glide),
    );
}
