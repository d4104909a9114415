//! The per-frame work of pawl's Linux hot path over a fixed synthetic stream, for
//! `cargo xtask bench-instructions` (callgrind counts the instructions of [`measure`] only).
//!
//! Usage: `hot_path <motion|held|scroll> <engine|path> <frames>`.
//!
//! - `motion`: `REL_X`, `REL_Y`, `SYN_REPORT` frames 1 ms apart, gesture button up.
//! - `held`: the same after one frame pressing the gesture button (motion is swallowed).
//! - `scroll`: `REL_WHEEL_HI_RES` (+ `REL_WHEEL` at each whole detent) frames 8 ms apart on
//!   an in-scope MX Master with the default scroll settings (EMA, inversion, clamp).
//!
//! `engine` measures `DeviceEngine::frame` on already decoded frames; `path` measures what
//! the daemon does per read buffer minus the syscalls: `Decoder::decode` of the raw
//! `input_event` bytes, the engine, and `encode_frame` into the write buffer for a rewritten
//! frame (a forwarded frame is written straight from the read buffer: no copy).

use std::hint::black_box;

use pawl_engine::units::Micros;
use pawl_engine::{Config, DeviceEngine, FrameIn, FrameOut, Platform, Verdict};
use pawl_evdev::codes::*;
use pawl_evdev::{Decoded, Decoder, EVENT_SIZE, Event, MAX_OUT_EVENTS, WheelCaps, encode_frame};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(scenario), Some(mode), Some(n)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: hot_path <motion|held|scroll> <engine|path> <frames>");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("frames is a number");
    let bytes = stream(scenario, n);
    let caps = WheelCaps {
        hires_wheel: true,
        hires_hwheel: true,
    };
    let config = Config::default_for(Platform::Linux);
    let mut engine = DeviceEngine::with_profile(&config, true, config.scroll);
    let written = match mode.as_str() {
        "engine" => {
            let mut frames = Vec::with_capacity(n + 1);
            Decoder::new(caps).decode(&bytes, |d| {
                if let Decoded::Frame(f, _) = d {
                    frames.push(f);
                }
            });
            measure_engine(&mut engine, &frames)
        }
        "path" => {
            let mut out_buf = vec![0u8; MAX_OUT_EVENTS * EVENT_SIZE];
            measure(&mut engine, Decoder::new(caps), &bytes, &mut out_buf)
        }
        m => panic!("unknown mode {m:?}"),
    };
    println!("{scenario} {mode} {n} frames: {written} bytes written");
}

/// The synthetic `input_event` stream: one setup frame (a press of the gesture button for
/// `held`, an empty frame otherwise), then `n` frames.
fn stream(scenario: &str, n: usize) -> Vec<u8> {
    let mut events = Vec::with_capacity(3 * n + 2);
    let mut push = |t: u64, type_: u16, code: u16, value: i32| {
        events.push(Event {
            time: Micros(t),
            type_,
            code,
            value,
        });
    };
    if scenario == "held" {
        push(0, EV_KEY, BTN_FORWARD, 1);
    }
    push(0, EV_SYN, SYN_REPORT, 0);
    let mut acc = 0;
    for i in 0..n {
        match scenario {
            "motion" | "held" => {
                let t = 1_000 * (i as u64 + 1);
                push(t, EV_REL, REL_X, (i % 7) as i32 - 3);
                push(t, EV_REL, REL_Y, (i % 5) as i32 - 2);
                push(t, EV_SYN, SYN_REPORT, 0);
            }
            "scroll" => {
                let t = 8_000 * (i as u64 + 1);
                let v = [15, 30, 45, 30][i % 4];
                push(t, EV_REL, REL_WHEEL_HI_RES, v);
                let before = acc / 120;
                acc += v;
                if acc / 120 != before {
                    push(t, EV_REL, REL_WHEEL, 1);
                }
                push(t, EV_SYN, SYN_REPORT, 0);
            }
            s => panic!("unknown scenario {s:?}"),
        }
    }
    events.iter().flat_map(|e| e.to_bytes()).collect()
}

/// The engine alone: one `frame` call per decoded frame.
#[inline(never)]
fn measure_engine(engine: &mut DeviceEngine, frames: &[FrameIn]) -> usize {
    let mut out = FrameOut::default();
    let mut rewritten = 0;
    for f in frames {
        if engine.frame(black_box(f), &mut out) == Verdict::Rewrite {
            rewritten += 1;
        }
        black_box(&out);
    }
    rewritten
}

/// Decode → engine → write buffer, as the Linux loop does per read.
#[inline(never)]
fn measure(engine: &mut DeviceEngine, mut decoder: Decoder, bytes: &[u8], out: &mut [u8]) -> usize {
    let mut written = 0;
    let mut frame_out = FrameOut::default();
    decoder.decode(black_box(bytes), |d| {
        if let Decoded::Frame(f, raw) = d {
            let n = match engine.frame(&f, &mut frame_out) {
                // The daemon writes the bytes it read, straight from the read buffer.
                Verdict::Forward => black_box(raw).len(),
                Verdict::Rewrite => {
                    let n = encode_frame(&frame_out, raw, out);
                    black_box(&out[..n]).len()
                }
            };
            written += n;
        }
    });
    written
}
