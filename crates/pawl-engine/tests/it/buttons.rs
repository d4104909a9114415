//! Back/forward and other mapped buttons.

use expect_test::expect;
use pawl_engine::Platform;

use crate::script::{check, check_on};

#[test]
fn back_and_forward_pass_through_on_linux_by_default() {
    check(
        "",
        "
        +3
        -3
        +4
        -4
        ",
        expect![[r#"
            +3 => forward
            -3 => forward
            +4 => forward
            -4 => forward
        "#]],
    );
}

#[test]
fn back_and_forward_fire_navigation_on_macos_by_default() {
    check_on(
        Platform::MacOs,
        "",
        "
        +3
        -3
        +4
        -4
        ",
        expect![[r#"
            +3 => action back
            -3 => nothing
            +4 => action forward
            -4 => nothing
        "#]],
    );
}

#[test]
fn back_and_forward_map_to_any_action() {
    check(
        r#"
        [buttons]
        on_back = "desktop-left"
        on_forward = { key = "Alt+Right" }
        "#,
        "
        +3
        -3
        +4
        -4
        ",
        expect![[r#"
            +3 => action desktop-left
            -3 => nothing
            +4 => action key Alt+Right
            -4 => nothing
        "#]],
    );
}

#[test]
fn back_and_forward_button_numbers_are_configurable() {
    check(
        "[buttons]\nback = 6\nforward = 7\non_back = \"back\"\n",
        "
        +6
        -6
        +3
        -3
        ",
        expect![[r#"
            +6 => action back
            -6 => nothing
            +3 => forward
            -3 => forward
        "#]],
    );
}

#[test]
fn any_other_button_may_map_to_an_action() {
    check(
        r#"
        [buttons.map]
        2 = "overview"
        6 = { command = ["playerctl", "play-pause"] }
        7 = "none"
        "#,
        "
        +2
        -2
        +6
        -6
        +7
        -7
        +1
        -1
        ",
        expect![[r#"
            +2 => action overview
            -2 => nothing
            +6 => action command playerctl play-pause
            -6 => nothing
            +7 => nothing
            -7 => nothing
            +1 => forward
            -1 => forward
        "#]],
    );
}

#[test]
fn release_of_a_button_pressed_before_pawl_is_dropped() {
    check(
        "",
        "
        -0
        +0
        -0
        ",
        expect![[r#"
            -0 => nothing
            +0 => forward
            -0 => forward
        "#]],
    );
}

#[test]
fn resync_releases_only_buttons_no_longer_down() {
    check(
        "",
        "
        +0
        +1
        resync +1
        -1
        ",
        expect![[r#"
            +0 => forward
            +1 => forward
            resync +1 => -0
            -1 => forward
        "#]],
    );
}

#[test]
fn a_mapped_press_and_a_plain_press_in_one_frame() {
    check(
        "[buttons]\non_back = \"back\"\n",
        "
        +3 +0 x=2
        -3 -0
        ",
        expect![[r#"
            +3 +0 x=2 => +0 x=2 action back
            -3 -0 => -0
        "#]],
    );
}

#[test]
fn macos_back_and_forward_are_cmd_brackets() {
    use pawl_engine::{Action, Desktop, Key};
    assert_eq!(
        Desktop::MacOs.default_chord(Action::Back),
        Some(&[Key::Super, Key::BracketLeft][..])
    );
    assert_eq!(
        Desktop::MacOs.default_chord(Action::Forward),
        Some(&[Key::Super, Key::BracketRight][..])
    );
    assert_eq!(Key::parse("Cmd"), Some(Key::Super));
}

#[test]
fn the_engine_reports_the_buttons_it_holds_down_and_a_held_gesture_button() {
    use pawl_engine::units::{Button, Micros};
    use pawl_engine::{Config, DeviceEngine, FrameIn, FrameOut};
    let config = Config::default_for(Platform::Linux);
    let mut engine = DeviceEngine::with_profile(&config, true, config.scroll);
    let mut step = |button: u8, pressed: bool, ms: u64| {
        let mut input = FrameIn {
            time: Micros(ms * 1000),
            ..FrameIn::default()
        };
        input.buttons.push(Button(button), pressed);
        engine.frame(&input, &mut FrameOut::default());
        (
            engine.pressed_out().iter().collect::<Vec<_>>(),
            engine.gesture_held(),
        )
    };
    // Left goes through and is down on the virtual device; 5, the gesture button, is held
    // by the engine and never reaches it.
    assert_eq!(step(0, true, 0), (vec![Button(0)], false));
    assert_eq!(step(5, true, 10), (vec![Button(0)], true));
    assert_eq!(step(5, false, 20), (vec![Button(0)], false));
    assert_eq!(step(0, false, 30), (vec![], false));
}
