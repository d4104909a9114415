//! The scroll pipeline as a user sees it through the engine: inversion, smoothing, clamp,
//! bursts, lo-res detents, inertia. The exact rules are in `pawl_engine::scroll`.

use expect_test::expect;

use crate::script::check;

#[test]
fn default_inverts_the_vertical_wheel_only() {
    check(
        "",
        "
        W=1
        300ms W=-1
        300ms H=1
        ",
        expect![[r#"
            W=1 => w=-120/-1
            300ms W=-1 => w=120/1
            300ms H=1 => h=120/1
        "#]],
    );
}

#[test]
fn horizontal_inversion_is_independent_of_vertical() {
    check(
        "[scroll]\ninvert_vertical = false\ninvert_horizontal = true\n",
        "
        W=1
        H=1
        ",
        expect![[r#"
            W=1 => w=120/1
            H=1 => h=-120/-1
        "#]],
    );
}

#[test]
fn hires_steps_add_up_to_lores_detents_of_the_output() {
    // The MX Master 3S on Bolt: multiples of 8 (mx3s-bolt-hires-wheel.events).
    check(
        "[scroll]\nsmoothing = \"none\"\n",
        "
        w=16
        36ms w=16
        8ms w=24
        12ms w=40
        12ms w=24
        264ms w=16
        66ms w=16
        6ms w=24
        ",
        expect![[r#"
            w=16 => w=-16/0
            36ms w=16 => w=-16/0
            8ms w=24 => w=-24/0
            12ms w=40 => w=-40/0
            12ms w=24 => w=-24/-1
            264ms w=16 => w=-16/0
            66ms w=16 => w=-16/0
            6ms w=24 => w=-24/0
        "#]],
    );
}

#[test]
fn ema_smooths_speed_changes_within_a_gesture() {
    check(
        "",
        "
        w=120
        10ms w=120
        10ms w=360
        10ms w=360
        10ms w=120
        ",
        expect![[r#"
            w=120 => w=-120/-1
            10ms w=120 => w=-120/-1
            10ms w=360 => w=-204/-1
            10ms w=360 => w=-258/-2
            10ms w=120 => w=-210/-2
        "#]],
    );
}

#[test]
fn max_step_limits_every_event() {
    check(
        "[scroll]\nmax_step = 2\nsmoothing = \"none\"\n",
        "
        W=10
        10ms W=3
        10ms w=-1000
        ",
        expect![[r#"
            W=10 => w=-240/-2
            10ms W=3 => w=-240/-2
            10ms w=-1000 => w=240/2
        "#]],
    );
}

#[test]
fn a_spike_is_damped_to_four_times_the_running_average() {
    check(
        "[scroll]\ninvert_vertical = false\n",
        "
        w=30
        10ms w=30
        10ms w=7560
        10ms w=30
        ",
        expect![[r#"
            w=30 => w=30/0
            10ms w=30 => w=30/0
            10ms w=7560 => w=61/1
            10ms w=30 => w=50/0
        "#]],
    );
}

#[test]
fn free_spin_burst_never_exceeds_one_max_step() {
    check(
        "[scroll]\ninvert_vertical = false\n",
        "
        W=2
        8ms W=2
        8ms W=2
        1ms W=63
        1ms W=63
        1ms W=63
        1ms W=63
        1ms W=63
        1ms W=63
        ",
        expect![[r#"
            W=2 => w=240/2
            8ms W=2 => w=240/2
            8ms W=2 => w=240/2
            1ms W=63 => w=360/3
            1ms W=63 => w=600/5
            1ms W=63 => nothing
            1ms W=63 => w=600/5
            1ms W=63 => nothing
            1ms W=63 => w=600/5
        "#]],
    );
}

#[test]
fn reversal_answers_at_once() {
    check(
        "[scroll]\ninvert_vertical = false\n",
        "
        W=3
        10ms W=3
        10ms W=3
        10ms W=-1
        ",
        expect![[r#"
            W=3 => w=360/3
            10ms W=3 => w=360/3
            10ms W=3 => w=360/3
            10ms W=-1 => w=-120/-1
        "#]],
    );
}

#[test]
fn a_slow_trickle_of_tiny_steps_still_moves() {
    check(
        "[scroll]\ninvert_vertical = false\n",
        "
        w=1
        50ms w=1
        50ms w=1
        500ms w=1
        ",
        expect![[r#"
            w=1 => w=1/0
            50ms w=1 => w=1/0
            50ms w=1 => w=1/0
            500ms w=1 => w=1/0
        "#]],
    );
}

#[test]
fn carry_inertia_releases_what_the_clamp_held_back_with_later_input() {
    check(
        "[scroll]\ninvert_vertical = false\nsmoothing = \"none\"\nmax_step = 1\ninertia = \"carry\"\ncarry_limit = 2\n",
        "
        W=4
        1000ms w=30
        10ms w=30
        10ms w=30
        10ms w=30
        ",
        expect![[r#"
            W=4 => w=120/1
            1000ms w=30 => w=120/1
            10ms w=30 => w=120/1
            10ms w=30 => w=90/0
            10ms w=30 => w=30/1
        "#]],
    );
}

#[test]
fn glide_adds_a_decaying_tail_after_a_fast_scroll() {
    check(
        "[scroll]\ninvert_vertical = false\nsmoothing = \"none\"\ninertia = \"glide\"\nglide_decay = 0.6\nglide_interval_ms = 16\n",
        "
        W=1
        8ms W=1
        8ms W=1
        glide
        ",
        expect![[r#"
            W=1 => w=120/1
            8ms W=1 => w=120/1 (tick at 24ms)
            8ms W=1 => w=120/1 (tick at 32ms)
            glide => [144@32 86@48 52@64 31@80 19@96]
        "#]],
    );
}

#[test]
fn glide_tail_is_cut_short_by_new_input_and_by_cancel() {
    check(
        "[scroll]\nsmoothing = \"none\"\ninertia = \"glide\"\n",
        "
        W=1
        8ms W=1
        tick
        W=1
        cancel
        tick
        ",
        expect![[r#"
            W=1 => w=-120/-1
            8ms W=1 => w=-120/-1 (tick at 24ms)
            tick @24ms => w=-204/-1 (tick at 40ms)
            W=1 => w=-120/-1 (tick at 56ms)
            cancel => nothing
            tick => no deadline
        "#]],
    );
}

#[test]
fn scroll_of_a_device_out_of_scope_is_forwarded_untouched() {
    use pawl_engine::{Config, DeviceEngine, FrameIn, FrameOut, Platform, Verdict, WheelIn};
    let config = Config::default_for(Platform::Linux);
    let mut engine = DeviceEngine::with_profile(&config, false, config.scroll);
    let frame = FrameIn {
        wheel: WheelIn {
            v120: 120,
            detents: 1,
        },
        ..FrameIn::default()
    };
    assert_eq!(
        engine.frame(&frame, &mut FrameOut::default()),
        Verdict::Forward
    );
}
