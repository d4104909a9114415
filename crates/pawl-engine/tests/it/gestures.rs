//! The gesture button: hold and drag to fire an action per direction, repeat, click, cancel.

use expect_test::expect;

use crate::script::check;

#[test]
fn drag_right_fires_desktop_left_with_the_default_inverted_desktop() {
    check(
        "",
        "
        +5
        8ms x=120 y=4
        8ms x=120 y=-2
        8ms x=200
        -5
        ",
        expect![[r#"
            +5 => nothing
            8ms x=120 y=4 => nothing
            8ms x=120 y=-2 => action desktop-left
            8ms x=200 => nothing
            -5 => nothing
        "#]],
    );
}

#[test]
fn each_direction_fires_its_action_without_inversion() {
    let config = "[gesture]\ninvert_desktop = false\n";
    check(
        config,
        "
        +5
        x=-230
        -5
        +5
        x=230
        -5
        +5
        y=-230
        -5
        +5
        y=230
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=-230 => action desktop-left
            -5 => nothing
            +5 => nothing
            x=230 => action desktop-right
            -5 => nothing
            +5 => nothing
            y=-230 => action overview
            -5 => nothing
            +5 => nothing
            y=230 => action app-expose
            -5 => nothing
        "#]],
    );
}

#[test]
fn the_dominant_axis_decides_the_direction() {
    check(
        "",
        "
        +5
        x=150 y=-200
        y=-30
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=150 y=-200 => nothing
            y=-30 => action overview
            -5 => nothing
        "#]],
    );
}

#[test]
fn actions_per_direction_are_configurable() {
    check(
        r#"
        [gesture]
        left = "show-desktop"
        right = { key = "Super+A" }
        up = { command = ["notify-send", "up"] }
        down = "none"
        invert_desktop = false
        "#,
        "
        +5
        x=-300
        -5
        +5
        x=300
        -5
        +5
        y=-300
        -5
        +5
        y=300
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=-300 => action show-desktop
            -5 => nothing
            +5 => nothing
            x=300 => action key Super+A
            -5 => nothing
            +5 => nothing
            y=-300 => action command notify-send up
            -5 => nothing
            +5 => nothing
            y=300 => nothing
            -5 => nothing
        "#]],
    );
}

#[test]
fn fires_once_per_hold_without_repeat() {
    check(
        "",
        "
        +5
        x=250
        x=250
        x=250
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=250 => action desktop-left
            x=250 => nothing
            x=250 => nothing
            -5 => nothing
        "#]],
    );
}

#[test]
fn repeat_fires_again_every_further_threshold() {
    check(
        "[gesture]\nrepeat = true\n",
        "
        +5
        x=200
        x=30
        x=200
        x=100
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=200 => nothing
            x=30 => action desktop-left
            x=200 => nothing
            x=100 => action desktop-left
            -5 => nothing
        "#]],
    );
}

#[test]
fn repeat_fires_for_every_threshold_crossed_in_one_frame() {
    check(
        "[gesture]\nrepeat = true\nthreshold = 100\n",
        "
        +5
        x=-350
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=-350 => action desktop-right action desktop-right action desktop-right
            -5 => nothing
        "#]],
    );
}

#[test]
fn repeat_keeps_the_rest_of_a_leftward_drag_in_its_direction() {
    // -250 px is two thresholds and -50 px left over; -40 px more is -90 (nothing),
    // -10 px more reaches -100 and fires again.
    check(
        "[gesture]\nrepeat = true\nthreshold = 100\n",
        "
        +5
        x=-250
        x=-40
        x=-10
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=-250 => action desktop-right action desktop-right
            x=-40 => nothing
            x=-10 => action desktop-right
            -5 => nothing
        "#]],
    );
}

#[test]
fn repeat_keeps_the_rest_of_an_upward_drag_in_its_direction() {
    // As leftward: -250 px up fires twice and keeps -50 px; -40 px more is -90, and
    // -10 px more fires once.
    check(
        "[gesture]\nrepeat = true\nthreshold = 100\n",
        "
        +5
        y=-250
        y=-40
        y=-10
        -5
        ",
        expect![[r#"
            +5 => nothing
            y=-250 => action overview action overview
            y=-40 => nothing
            y=-10 => action overview
            -5 => nothing
        "#]],
    );
}

#[test]
fn repeat_fires_at_most_four_times_per_frame_and_drops_the_rest_of_a_flick() {
    // 1050 px is ten thresholds: four fire, the other six are dropped with their travel
    // (50 px stays), so the next small motion fires nothing.
    check(
        "[gesture]\nrepeat = true\nthreshold = 100\ninvert_desktop = false\n",
        "
        +5
        x=1050
        x=40
        x=10
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=1050 => action desktop-right action desktop-right action desktop-right action desktop-right
            x=40 => nothing
            x=10 => action desktop-right
            -5 => nothing
        "#]],
    );
}

#[test]
fn repeat_with_none_actions_and_extreme_motion_consumes_the_travel_at_once() {
    // Each frame crosses 2^31 thresholds of 1 px: the fires are counted, not looped over,
    // and `none` fills the per-frame cap like any action (nothing is queued).
    check(
        "[gesture]\nrepeat = true\nthreshold = 1\nleft = \"none\"\nright = \"none\"\nup = \"none\"\ndown = \"none\"\n",
        "
        +5
        x=2147483647
        x=2147483647
        x=-2147483648
        y=2147483647
        y=-2147483648
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=2147483647 => nothing
            x=2147483647 => nothing
            x=-2147483648 => nothing
            y=2147483647 => nothing
            y=-2147483648 => nothing
            -5 => nothing
        "#]],
    );
}

#[test]
fn release_below_threshold_passes_the_click_through() {
    check(
        "",
        "
        +5
        x=100 y=50
        -5
        ",
        expect![[r#"
            +5 => nothing
            x=100 y=50 => nothing
            -5 => +5 -5
        "#]],
    );
}

#[test]
fn click_action_fires_when_released_without_a_gesture() {
    check(
        "[gesture]\nclick = \"overview\"\n",
        "
        +5
        -5
        +5
        x=300
        -5
        ",
        expect![[r#"
            +5 => nothing
            -5 => action overview
            +5 => nothing
            x=300 => action desktop-left
            -5 => nothing
        "#]],
    );
}

#[test]
fn click_none_swallows_the_click() {
    check(
        "[gesture]\nclick = \"none\"\n",
        "
        +5
        -5
        ",
        expect![[r#"
            +5 => nothing
            -5 => nothing
        "#]],
    );
}

#[test]
fn motion_while_held_is_swallowed_and_flows_again_after_release() {
    check(
        "",
        "
        x=3 y=-1
        +5
        x=10
        -5 x=5
        x=7
        ",
        expect![[r#"
            x=3 y=-1 => forward
            +5 => nothing
            x=10 => nothing
            -5 x=5 => +5 -5
            x=7 => forward
        "#]],
    );
}

#[test]
fn cancel_fires_nothing_and_leaves_nothing_pressed() {
    check(
        "",
        "
        +0
        +5
        x=150
        cancel
        x=150
        -5
        -0
        ",
        expect![[r#"
            +0 => forward
            +5 => nothing
            x=150 => nothing
            cancel => -0
            x=150 => forward
            -5 => nothing
            -0 => nothing
        "#]],
    );
}

#[test]
fn other_buttons_and_the_wheel_work_while_the_gesture_button_is_held() {
    check(
        "",
        "
        +5
        +0
        -0
        W=1
        -5
        ",
        expect![[r#"
            +5 => nothing
            +0 => forward
            -0 => forward
            W=1 => w=-120/-1
            -5 => +5 -5
        "#]],
    );
}

#[test]
fn gesture_button_is_configurable() {
    check(
        "[gesture]\nbutton = 2\n",
        "
        +5
        -5
        +2
        x=-300
        -2
        ",
        expect![[r#"
            +5 => forward
            -5 => forward
            +2 => nothing
            x=-300 => action desktop-right
            -2 => nothing
        "#]],
    );
}
