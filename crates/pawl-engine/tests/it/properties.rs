//! Property tests of the scroll pipeline and the engine.

use pawl_engine::config::{Inertia, ScrollSettings, Smoothing};
use pawl_engine::engine::buttons;
use pawl_engine::scroll::{ScrollAxis, ScrollParams};
use pawl_engine::units::{ButtonSet, Micros};
use pawl_engine::{Config, DeviceEngine, FrameIn, FrameOut, Platform, Verdict, WheelIn};
use proptest::prelude::*;

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
        any::<bool>(),
        any::<bool>(),
        smoothing,
        0.1f32..=100.0,
        spike,
        10_000u64..=10_000_000,
        inertia,
    )
        .prop_map(
            |(iv, ih, smoothing, max_step, spike_ratio, gesture_gap_us, inertia)| ScrollSettings {
                invert_vertical: iv,
                invert_horizontal: ih,
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
    let value = prop_oneof![-12_000i32..=12_000, -130i32..=130, Just(0)];
    prop::collection::vec((gap, value), 0..120)
}

/// Steps one axis through `events` (running due glide ticks before each event and at the
/// end); returns every output step.
fn outputs(s: &ScrollSettings, invert: bool, events: &[(u64, i32)]) -> Vec<(i32, i32)> {
    outputs_q(&ScrollParams::new(s), invert, events)
}

/// [`outputs`] with fixed-point parameters (e.g. an output quantum).
fn outputs_q(s: &ScrollParams, invert: bool, events: &[(u64, i32)]) -> Vec<(i32, i32)> {
    let mut axis = ScrollAxis::default();
    let mut now = Micros(0);
    let mut res = Vec::new();
    for &(gap, v) in events {
        now = now.plus(gap);
        while let Some(t) = axis.next_deadline().filter(|t| *t <= now) {
            let o = axis.tick(s, t);
            res.push((o.v120, o.detents));
        }
        let o = axis.step(s, invert, v, now);
        res.push((o.v120, o.detents));
    }
    while let Some(t) = axis.next_deadline() {
        let o = axis.tick(s, t);
        res.push((o.v120, o.detents));
        assert!(res.len() < 100_000, "glide never ends");
    }
    res
}

proptest! {
    #[test]
    fn output_step_never_exceeds_the_max_step(s in settings(), events in wheel_events()) {
        let max = (s.max_step * 120.0).floor() as i32;
        for (v120, _) in outputs(&s, false, &events) {
            prop_assert!(v120.abs() <= max, "step {v120} above max {max}");
        }
    }

    #[test]
    fn with_an_output_quantum_every_step_is_a_whole_multiple_within_the_max(
        s in settings(), q in prop_oneof![Just(8u32), Just(120u32), 1u32..=120], events in wheel_events(),
    ) {
        let p = ScrollParams::new(&s).with_quantum(q);
        let max = (s.max_step * 120.0).floor() as i32;
        prop_assert_eq!(p.max_v120 % q, 0);
        for (v120, _) in outputs_q(&p, false, &events) {
            prop_assert_eq!(v120 % q as i32, 0, "step {} not a multiple of {}", v120, q);
            prop_assert!(v120.abs() <= max.max(q as i32), "step {v120} above max {max}");
        }
    }

    #[test]
    fn with_an_output_quantum_and_no_shaping_the_sum_lags_the_input_by_less_than_one_quantum(
        q in 1u32..=120,
        sign in prop_oneof![Just(1i32), Just(-1i32)],
        events in prop::collection::vec((2_000u64..1_000_000, 1i32..=11_880), 0..100),
    ) {
        let s = ScrollSettings {
            smoothing: Smoothing::None,
            spike_ratio: 0.0,
            max_step: 100.0,
            inertia: Inertia::Off,
            ..ScrollSettings::default()
        };
        let p = ScrollParams::new(&s).with_quantum(q);
        // One direction (a reversal drops the carry), events ≥ 2 ms apart (no shared burst),
        // each below the max step rounded down to a multiple of any quantum (≥ 11,880).
        let events: Vec<(u64, i32)> = events.iter().map(|(g, v)| (*g, sign * v)).collect();
        let sum_in: i64 = events.iter().map(|(_, v)| i64::from(*v)).sum();
        let sum_out: i64 = outputs_q(&p, false, &events).iter().map(|(v, _)| i64::from(*v)).sum();
        prop_assert!((sum_in - sum_out) * i64::from(sign) >= 0);
        prop_assert!((sum_in - sum_out).abs() < i64::from(q), "in {sum_in} out {sum_out}");
    }

    #[test]
    fn inversion_flips_the_sign_exactly(s in settings(), events in wheel_events()) {
        let plain = outputs(&s, false, &events);
        let inverted: Vec<(i32, i32)> =
            outputs(&s, true, &events).iter().map(|(v, d)| (-v, -d)).collect();
        prop_assert_eq!(plain, inverted);
    }

    #[test]
    fn without_smoothing_spike_damping_and_clamp_the_sum_out_is_the_sum_in(
        events in prop::collection::vec((0u64..1_000_000, -12_000i32..=12_000), 0..100),
    ) {
        let s = ScrollSettings {
            smoothing: Smoothing::None,
            spike_ratio: 0.0,
            max_step: 100.0,
            inertia: Inertia::Off,
            ..ScrollSettings::default()
        };
        // Bursts share one max step: keep events at least 2 ms apart.
        let events: Vec<(u64, i32)> = events.iter().map(|(g, v)| (g + 2_000, *v)).collect();
        let out = outputs(&s, false, &events);
        let sum_in: i64 = events.iter().map(|(_, v)| i64::from(*v)).sum();
        let sum_out: i64 = out.iter().map(|(v, _)| i64::from(*v)).sum();
        prop_assert_eq!(sum_in, sum_out);
    }

    #[test]
    fn lores_is_always_the_whole_detents_of_the_accumulated_hires_output(
        s in settings(),
        events in wheel_events(),
    ) {
        // Per run of one output direction: Σ detents = trunc(Σ v120 / 120) after every step.
        let (mut acc, mut detents, mut sign) = (0i64, 0i64, 0i32);
        for (v120, d) in outputs(&s, false, &events) {
            if v120 != 0 && v120.signum() != sign {
                sign = v120.signum();
                acc = 0;
                detents = 0;
            }
            acc += i64::from(v120);
            detents += i64::from(d);
            prop_assert_eq!(detents, acc / 120, "after v120 {} detents {}", v120, d);
        }
    }

    #[test]
    fn every_glide_tick_moves_and_every_glide_ends(
        s in settings(),
        events in wheel_events(),
        decay in 0.05f32..=0.99,
        interval_us in 4_000u64..=100_000,
    ) {
        let s = ScrollParams::new(&ScrollSettings { inertia: Inertia::Glide { decay, interval_us }, ..s });
        let mut axis = ScrollAxis::default();
        let mut now = Micros(0);
        let mut ticks = 0;
        for (gap, v) in events {
            now = now.plus(gap);
            while let Some(t) = axis.next_deadline().filter(|t| *t <= now) {
                prop_assert!(t > Micros(0));
                prop_assert!(axis.tick(&s, t).v120 != 0, "a wake-up that moves nothing");
                ticks += 1;
            }
            axis.step(&s, false, v, now);
        }
        while let Some(t) = axis.next_deadline() {
            prop_assert!(axis.tick(&s, t).v120 != 0, "a wake-up that moves nothing");
            ticks += 1;
            prop_assert!(ticks < 100_000, "glide never ends");
        }
    }

    #[test]
    fn every_input_moves_the_output_outside_bursts(
        events in prop::collection::vec((2_000u64..1_000_000, prop_oneof![1i32..=2000, -2000i32..=-1]), 1..80),
        factor in 0.01f32..=1.0,
        spike in prop_oneof![Just(0.0f32), 1.0f32..=100.0],
    ) {
        let s = ScrollSettings {
            smoothing: Smoothing::Ema(factor),
            spike_ratio: spike,
            ..ScrollSettings::default()
        };
        let s = ScrollParams::new(&s);
        let mut axis = ScrollAxis::default();
        let mut now = Micros(0);
        for (gap, v) in events {
            now = now.plus(gap);
            let out = axis.step(&s, false, v, now);
            prop_assert!(out.v120 != 0 && out.v120.signum() == v.signum(), "{v} gave {}", out.v120);
        }
    }
}

/// A motion or wheel value: mostly ordinary, sometimes the `i32` extremes (a decoder
/// saturates sums there).
fn value(ordinary: i32) -> impl Strategy<Value = i32> {
    prop_oneof![
        8 => -ordinary..ordinary,
        1 => any::<i32>(),
        1 => prop_oneof![Just(i32::MIN), Just(i32::MAX), Just(i32::MIN + 1)],
    ]
}

fn frame() -> impl Strategy<Value = FrameIn> {
    (
        0u64..400_000,
        value(3000),
        value(3000),
        prop_oneof![Just(0), value(1000)],
        prop_oneof![Just(0), value(1000)],
        prop::collection::vec((0u8..40, any::<bool>()), 0..4),
    )
        .prop_map(|(t, dx, dy, w, h, b)| FrameIn {
            time: Micros(t),
            dx,
            dy,
            wheel: WheelIn {
                v120: w,
                detents: w / 120,
            },
            hwheel: WheelIn {
                v120: h,
                detents: h / 120,
            },
            buttons: buttons(&b),
        })
}

proptest! {
    #[test]
    fn motion_with_the_gesture_button_up_passes_through_bit_exact(
        frames in prop::collection::vec(frame(), 0..60),
        transform in any::<bool>(),
    ) {
        let config = Config::default_for(Platform::Linux);
        let mut engine = DeviceEngine::with_profile(&config, transform, config.scroll);
        let mut t = 0;
        for mut f in frames {
            // Keep the gesture button (5) out of it; times increase.
            let kept: Vec<(u8, bool)> = f.buttons.as_slice().iter()
                .filter(|c| c.button.0 != 5)
                .map(|c| (c.button.0, c.pressed))
                .collect();
            f.buttons = buttons(&kept);
            t += f.time.0;
            f.time = Micros(t);
            let mut out = FrameOut::default();
            match engine.frame(&f, &mut out) {
                Verdict::Forward => {}
                Verdict::Rewrite => prop_assert_eq!((out.dx, out.dy), (f.dx, f.dy)),
            }
            if f.buttons.is_empty() && (!transform || (f.wheel.v120 == 0 && f.hwheel.v120 == 0)) {
                // Plain motion takes the fast path.
                let mut out = FrameOut::default();
                let plain = FrameIn { buttons: Default::default(), ..f };
                prop_assert_eq!(engine.frame(&plain, &mut out), Verdict::Forward);
            }
        }
    }

    #[test]
    fn no_input_sequence_panics(
        frames in prop::collection::vec((frame(), 0u8..8), 0..80),
        s in settings(),
        repeat in any::<bool>(),
        threshold in 1u32..=10_000,
    ) {
        let mut config = Config::default_for(Platform::Linux);
        config.gesture.repeat = repeat;
        config.gesture.threshold = threshold;
        let mut engine = DeviceEngine::with_profile(&config, true, s);
        let mut out = FrameOut::default();
        for (mut f, op) in frames {
            // Times may go backwards (spliced recordings) and jump far ahead.
            f.time = Micros(f.time.0.wrapping_mul(u64::from(op) + 1));
            match op {
                0 => { engine.cancel(&mut out); }
                1 => { engine.resync(ButtonSet(f.dx as u32), &mut out); }
                2 => {
                    if let Some(t) = engine.next_deadline() {
                        engine.tick(t, &mut out);
                    }
                }
                _ => { engine.frame(&f, &mut out); }
            }
            // Whatever happened, a cancel leaves nothing pressed.
            if op == 0 {
                prop_assert!(engine.pressed_out().is_empty());
                prop_assert!(!engine.gesture_held());
                prop_assert_eq!(engine.next_deadline(), None);
            }
        }
        let extreme = FrameIn {
            time: Micros(u64::MAX),
            dx: i32::MIN,
            dy: i32::MAX,
            wheel: WheelIn { v120: i32::MIN, detents: i32::MIN },
            hwheel: WheelIn { v120: i32::MAX, detents: i32::MAX },
            buttons: buttons(&[(5, true), (255, true), (0, false)]),
        };
        engine.frame(&extreme, &mut out);
        engine.frame(&extreme, &mut out);
    }

    #[test]
    fn repeat_fires_at_most_the_action_cap_per_frame_for_any_motion(
        motion in prop::collection::vec((any::<i32>(), any::<i32>()), 1..40),
        threshold in 1u32..=10_000,
        none in any::<bool>(),
    ) {
        let mut config = Config::default_for(Platform::Linux);
        config.gesture.repeat = true;
        config.gesture.threshold = threshold;
        if none {
            config.gesture.left = pawl_engine::Action::None;
        }
        let mut engine = DeviceEngine::with_profile(&config, true, config.scroll);
        let mut out = FrameOut::default();
        engine.frame(&FrameIn { buttons: buttons(&[(5, true)]), ..FrameIn::default() }, &mut out);
        for (dx, dy) in motion {
            let f = FrameIn { dx, dy, ..FrameIn::default() };
            prop_assert_eq!(engine.frame(&f, &mut out), Verdict::Rewrite);
            prop_assert!(out.actions.len() <= pawl_engine::frame::Actions::CAP);
            prop_assert_eq!((out.dx, out.dy), (0, 0), "motion while held is swallowed");
        }
    }
}

proptest! {
    /// Whatever the drag, a swipe-style hold puts the fingers down at most once, lifts them
    /// exactly once when they went down (release or cancel), writes no pointer motion, and
    /// every touchpad frame has the configured finger count.
    #[test]
    fn swipe_fingers_go_down_once_and_always_lift(
        moves in prop::collection::vec((-400i32..=400, -400i32..=400), 0..40),
        fingers in 3u8..=4,
        cancel in any::<bool>(),
    ) {
        let mut c = Config::default_for(Platform::Linux);
        c.gesture.style = pawl_engine::config::GestureStyle::Swipe;
        c.gesture.fingers = Some(fingers);
        let mut e = DeviceEngine::with_profile(&c, true, c.scroll);
        let mut out = FrameOut::default();
        let (mut downs, mut lifts) = (0usize, 0usize);
        let count = |out: &FrameOut, downs: &mut usize, lifts: &mut usize| {
            if !out.touch.is_empty() {
                assert_eq!(out.touch.fingers, fingers);
            }
            *downs += usize::from(out.touch.down);
            *lifts += usize::from(out.touch.lift);
        };
        let press = FrameIn { buttons: buttons(&[(5, true)]), ..FrameIn::default() };
        e.frame(&press, &mut out);
        count(&out, &mut downs, &mut lifts);
        for (i, (dx, dy)) in moves.iter().enumerate() {
            let f = FrameIn { time: Micros(i as u64 * 8_000), dx: *dx, dy: *dy, ..FrameIn::default() };
            out.clear();
            if e.frame(&f, &mut out) == Verdict::Rewrite {
                prop_assert_eq!((out.dx, out.dy), (0, 0));
            }
            count(&out, &mut downs, &mut lifts);
        }
        let went_down = downs == 1;
        let end = Micros(moves.len() as u64 * 8_000);
        if cancel {
            e.cancel(&mut out);
        } else {
            let release = FrameIn { time: end, buttons: buttons(&[(5, false)]), ..FrameIn::default() };
            out.clear();
            e.frame(&release, &mut out);
        }
        count(&out, &mut downs, &mut lifts);
        // After the release the fingers may still catch up and lift on the timer; every
        // deadline is in the future of the one before, and the last is within the tap guard.
        let mut last = end;
        while let Some(d) = e.next_deadline() {
            prop_assert!(d >= last && d.since(end) <= pawl_engine::swipe::TAP_GUARD_US + 8_000 * 40);
            last = Micros(d.0 + 1);
            e.tick(d, &mut out);
            count(&out, &mut downs, &mut lifts);
        }
        prop_assert!(downs <= 1);
        prop_assert_eq!(lifts, usize::from(went_down));
        prop_assert!(!e.swiping());
    }

    /// Whatever the drag and its timing, a swipe's touchpad frames are what libinput takes for
    /// a touchpad's: a move at least `FRAME_INTERVAL_US` after the frame before, no longer than
    /// `MAX_SPEED_UNITS_PER_MS` × Δt; and a drag whose fingers catch up in time ends where the
    /// hand did (scale 1.0, within the pad).
    #[test]
    fn swipe_frames_are_paced_like_a_touchpad_and_end_where_the_hand_did(
        moves in prop::collection::vec((-60i32..=60, -60i32..=60, 1u64..=20_000), 1..60),
    ) {
        use pawl_engine::swipe::{CATCH_UP_US, FRAME_INTERVAL_US, MAX_OFFSET, MAX_SPEED_UNITS_PER_MS};
        let mut c = Config::default_for(Platform::Linux);
        c.gesture.style = pawl_engine::config::GestureStyle::Swipe;
        c.gesture.fingers = Some(3);
        let mut e = DeviceEngine::with_profile(&c, true, c.scroll);
        let mut out = FrameOut::default();
        let mut frames: Vec<(u64, pawl_engine::TouchOut)> = Vec::new();
        let mut now = 0u64;
        e.frame(&FrameIn { buttons: buttons(&[(5, true)]), ..FrameIn::default() }, &mut out);
        let ticks = |e: &mut DeviceEngine, until: u64, frames: &mut Vec<(u64, pawl_engine::TouchOut)>| {
            while let Some(d) = e.next_deadline().filter(|d| d.0 < until) {
                let mut out = FrameOut::default();
                e.tick(d, &mut out);
                if !out.touch.is_empty() {
                    frames.push((d.0, out.touch));
                }
            }
        };
        let (mut hx, mut hy) = (0i32, 0i32);
        for (dx, dy, gap) in &moves {
            now += gap;
            ticks(&mut e, now, &mut frames);
            hx += dx;
            hy += dy;
            out.clear();
            e.frame(&FrameIn { time: Micros(now), dx: *dx, dy: *dy, ..FrameIn::default() }, &mut out);
            if !out.touch.is_empty() {
                frames.push((now, out.touch));
            }
        }
        now += 1;
        out.clear();
        e.frame(&FrameIn { time: Micros(now), buttons: buttons(&[(5, false)]), ..FrameIn::default() }, &mut out);
        if !out.touch.is_empty() {
            frames.push((now, out.touch));
        }
        ticks(&mut e, u64::MAX, &mut frames);
        prop_assert!(!e.swiping());
        let mut last: Option<(u64, (i32, i32))> = None;
        for (t, f) in &frames {
            if f.down {
                last = Some((*t, (0, 0)));
            }
            if f.moved {
                let (lt, (lx, ly)) = last.expect("moved after the down");
                let dt = t - lt;
                prop_assert!(dt >= FRAME_INTERVAL_US, "{} µs apart", dt);
                let len = f64::from(f.dx - lx).hypot(f64::from(f.dy - ly));
                prop_assert!(len <= (MAX_SPEED_UNITS_PER_MS * dt.min(30_000)) as f64 / 1000.0 + 1.0);
                last = Some((*t, (f.dx, f.dy)));
            }
        }
        if let Some((t, f)) = frames.last() {
            prop_assert!(f.lift);
            let want = (hx.clamp(-MAX_OFFSET.0, MAX_OFFSET.0), hy.clamp(-MAX_OFFSET.1, MAX_OFFSET.1));
            // Short of the hand only when the catch-up time ran out.
            if (f.dx, f.dy) != want {
                prop_assert!(t - now >= CATCH_UP_US, "lifted at {:?}, the hand at {:?}", (f.dx, f.dy), want);
            }
        }
    }
}

proptest! {
    /// Whatever backlogs pawl reads at once (it was held up, then read every report queued
    /// meanwhile in one wake-up, all written at that instant), a swipe's touchpad frames are
    /// paced in the time of their writes — a move at least `FRAME_INTERVAL_US` after the
    /// frame before, no longer than `MAX_SPEED_UNITS_PER_MS` × Δt, so at most one per
    /// wake-up — the fingers lift once, last, and where the hand ended (nothing of the drag
    /// is lost: these drags are short enough to catch up within `CATCH_UP_US`).
    #[test]
    fn swipe_backlogs_read_at_once_are_paced_by_the_write_time_and_lose_no_travel(
        moves in prop::collection::vec(
            (-10i32..=10, -10i32..=10, 1u64..=8_000, prop_oneof![3 => Just(0u64), 1 => 0u64..=150_000]),
            1..36,
        ),
        release_after in 1u64..=20_000,
        release_delay in prop_oneof![Just(0u64), 0u64..=150_000],
    ) {
        use pawl_engine::swipe::{FRAME_INTERVAL_US, MAX_SPEED_UNITS_PER_MS};
        let mut c = Config::default_for(Platform::Linux);
        c.gesture.style = pawl_engine::config::GestureStyle::Swipe;
        c.gesture.fingers = Some(3);
        let mut e = DeviceEngine::with_profile(&c, true, c.scroll);
        // (write time, touchpad part)
        let mut frames: Vec<(u64, pawl_engine::TouchOut)> = Vec::new();
        // The time of the last write: reads and ticks never go back.
        let mut written = 0u64;
        let run = |e: &mut DeviceEngine, f: Option<FrameIn>, read_at: u64, written: &mut u64, frames: &mut Vec<(u64, pawl_engine::TouchOut)>| {
            // The timer's ticks due before this read, each at its deadline (or at the last
            // write, when the deadline had passed by then).
            while let Some(d) = e.next_deadline().filter(|d| d.0 < read_at) {
                let at = d.0.max(*written);
                *written = at;
                let mut out = FrameOut::default();
                e.tick(Micros(at), &mut out);
                if !out.touch.is_empty() {
                    frames.push((at, out.touch));
                }
            }
            let Some(f) = f else { return };
            *written = read_at;
            let mut out = FrameOut::default();
            e.frame_at(&f, Micros(read_at), &mut out);
            if !out.touch.is_empty() {
                frames.push((read_at, out.touch));
            }
        };
        run(&mut e, Some(FrameIn { buttons: buttons(&[(5, true)]), ..FrameIn::default() }), 0, &mut written, &mut frames);
        let (mut t, mut read_at) = (0u64, 0u64);
        let (mut hx, mut hy) = (0i32, 0i32);
        for (dx, dy, gap, delay) in &moves {
            t += gap;
            // Read when pawl gets to it: not before the report exists, not before the reads
            // of the reports before it (a held-up pawl reads the queue in one go).
            read_at = read_at.max(t + delay);
            hx += dx;
            hy += dy;
            run(&mut e, Some(FrameIn { time: Micros(t), dx: *dx, dy: *dy, ..FrameIn::default() }), read_at, &mut written, &mut frames);
        }
        t += release_after;
        read_at = read_at.max(t + release_delay);
        run(&mut e, Some(FrameIn { time: Micros(t), buttons: buttons(&[(5, false)]), ..FrameIn::default() }), read_at, &mut written, &mut frames);
        // The ticks after the release, until the fingers lifted.
        run(&mut e, None, u64::MAX, &mut written, &mut frames);
        prop_assert!(!e.swiping());
        let mut last: Option<(u64, (i32, i32))> = None;
        for (at, f) in &frames {
            if f.down {
                prop_assert!(last.is_none(), "down twice: {:?}", frames);
                last = Some((*at, (0, 0)));
            }
            if f.moved {
                let (lt, (lx, ly)) = last.expect("moved after the down");
                let dt = at - lt;
                prop_assert!(dt >= FRAME_INTERVAL_US, "{} µs apart in write time: {:?}", dt, frames);
                let len = f64::from(f.dx - lx).hypot(f64::from(f.dy - ly));
                prop_assert!(len <= (MAX_SPEED_UNITS_PER_MS * dt.min(30_000)) as f64 / 1000.0 + 1.0);
                last = Some((*at, (f.dx, f.dy)));
            }
        }
        if last.is_some() {
            let lifts: Vec<usize> = frames.iter().enumerate().filter(|(_, (_, f))| f.lift).map(|(i, _)| i).collect();
            prop_assert_eq!(lifts, vec![frames.len() - 1], "one lift, the last frame: {:?}", frames);
            let (_, f) = frames.last().unwrap();
            prop_assert_eq!((f.dx, f.dy), (hx, hy), "the whole drag: {:?}", frames);
        } else {
            prop_assert!(frames.is_empty());
        }
    }
}
