//! Per-application profiles: `[[app]]` tables resolved per device, switched by
//! `DeviceEngine::set_app`, and the rule for a switch in the middle of a gesture.

use expect_test::expect;
use pawl_engine::engine::buttons;
use pawl_engine::units::Micros;
use pawl_engine::{Config, DeviceEngine, FrameIn, FrameOut, Platform};
use proptest::prelude::*;

use crate::script::{check, test_mouse};

/// A game without inversion or smoothing, a browser with its own gesture and buttons.
const APPS: &str = r#"
    [scroll]
    smoothing = "none"

    [[app]]
    app_id = ["steam_app_1", "org.remmina.Remmina"]
    [app.scroll]
    invert_vertical = false

    [[app]]
    app_id = "firefox"
    [app.gesture]
    left = { key = "Alt+Left" }
    right = { key = "Alt+Right" }
    [app.buttons]
    on_back = { key = "Ctrl+W" }
    [app.buttons.map]
    6 = "overview"
"#;

#[test]
fn the_focused_app_picks_its_scroll_settings() {
    check(
        APPS,
        "
        W=1
        app steam_app_1
        W=1
        app org.remmina.Remmina
        W=1
        app some-editor
        W=1
        ",
        expect![[r#"
            W=1 => w=-120/-1
            app steam_app_1 => profile of steam_app_1
            W=1 => w=120/1
            app org.remmina.Remmina => profile of org.remmina.Remmina
            W=1 => w=120/1
            app some-editor => device profile
            W=1 => w=-120/-1
        "#]],
    );
}

#[test]
fn the_focused_app_picks_its_gesture_and_button_actions() {
    check(
        APPS,
        "
        app firefox
        +5
        x=-300
        -5
        +3
        -3
        +6
        -6
        app -
        +5
        x=-300
        -5
        +3
        -3
        +6
        -6
        ",
        expect![[r#"
            app firefox => profile of firefox
            +5 => nothing
            x=-300 => action key Alt+Left
            -5 => nothing
            +3 => action key Ctrl+W
            -3 => nothing
            +6 => action overview
            -6 => nothing
            app - => device profile
            +5 => nothing
            x=-300 => action desktop-right
            -5 => nothing
            +3 => forward
            -3 => forward
            +6 => forward
            -6 => forward
        "#]],
    );
}

#[test]
fn a_focus_change_during_a_gesture_applies_when_it_ends() {
    check(
        APPS,
        "
        +5
        app firefox
        x=-300
        -5
        +5
        x=300
        -5
        ",
        expect![[r#"
            +5 => nothing
            app firefox => profile of firefox (pending)
            x=-300 => action desktop-right
            -5 => nothing
            +5 => nothing
            x=300 => action key Alt+Right
            -5 => nothing
        "#]],
    );
}

#[test]
fn a_button_held_through_a_focus_change_is_released_as_it_was_pressed() {
    check(
        APPS,
        "
        +3
        app firefox
        -3
        +3
        app -
        -3
        ",
        expect![[r#"
            +3 => forward
            app firefox => profile of firefox
            -3 => forward
            +3 => action key Ctrl+W
            app - => device profile
            -3 => nothing
        "#]],
    );
}

#[test]
fn a_focus_change_stops_a_glide_and_restarts_smoothing() {
    check(
        r#"
        [scroll]
        inertia = "glide"
        [[app]]
        app_id = "game"
        [app.scroll]
        inertia = "off"
        "#,
        "
        W=3
        10ms W=3
        app game
        tick
        W=1
        ",
        expect![[r#"
            W=3 => w=-360/-3
            10ms W=3 => w=-360/-3 (tick at 30ms)
            app game => profile of game
            tick => no deadline
            W=1 => w=-120/-1
        "#]],
    );
}

#[test]
fn the_app_under_the_pointer_decides_scroll_and_the_focused_app_the_buttons() {
    check(
        APPS,
        "
        app firefox
        pointer steam_app_1
        W=1
        +3
        -3
        app some-editor
        W=1
        pointer some-editor
        W=1
        pointer steam_app_1
        app firefox
        pointer focus
        W=1
        ",
        expect![[r#"
            app firefox => profile of firefox
            pointer steam_app_1 => scroll of steam_app_1
            W=1 => w=120/1
            +3 => action key Ctrl+W
            -3 => nothing
            app some-editor => device profile
            W=1 => w=120/1
            pointer some-editor => scroll of the device
            W=1 => w=-120/-1
            pointer steam_app_1 => scroll of steam_app_1
            app firefox => profile of firefox
            pointer focus => scroll follows focus
            W=1 => w=-120/-1
        "#]],
    );
}

#[test]
fn a_title_table_applies_while_the_focused_window_has_that_title() {
    check(
        r#"
        [scroll]
        smoothing = "none"
        [[app]]
        app_id = "firefox"
        title = "(?i)youtube"
        [app.scroll]
        invert_vertical = false
        "#,
        "
        app firefox Example Domain
        W=1
        app firefox Cats - YouTube
        W=1
        app firefox
        W=1
        ",
        expect![[r#"
            app firefox Example Domain => device profile
            W=1 => w=-120/-1
            app firefox Cats - YouTube => profile of firefox
            W=1 => w=120/1
            app firefox => device profile
            W=1 => w=-120/-1
        "#]],
    );
}

#[test]
fn an_app_table_narrowed_to_another_device_does_not_apply() {
    check(
        r#"
        [[app]]
        app_id = "game"
        device = "*Trackball*"
        [app.scroll]
        invert_vertical = false
        "#,
        "
        app game
        W=1
        ",
        expect![[r#"
            app game => device profile
            W=1 => w=-120/-1
        "#]],
    );
}

#[test]
fn an_app_table_narrowed_to_this_device_applies() {
    check(
        r#"
        [[app]]
        app_id = "game"
        device = { id = "046d:b034" }
        [app.scroll]
        invert_vertical = false
        smoothing = "none"
        "#,
        "
        app game
        W=1
        ",
        expect![[r#"
            app game => profile of game
            W=1 => w=120/1
        "#]],
    );
}

#[test]
fn later_app_tables_override_earlier_ones_key_by_key() {
    let config = Config::parse(
        r#"
        [[app]]
        app_id = ["a", "b"]
        [app.scroll]
        invert_vertical = false
        max_step = 2.0
        [[app]]
        app_id = "b"
        [app.scroll]
        max_step = 9.0
        "#,
        "t.toml",
        Platform::Linux,
    )
    .unwrap();
    let b = config.app_key("b", None).unwrap();
    let s = config.app_settings(&test_mouse(), b).unwrap();
    assert!(!s.scroll.invert_vertical);
    assert_eq!(s.scroll.max_step, 9.0);
    assert_eq!(s.lines, vec![2, 7]);
    let a = config.app_key("a", None).unwrap();
    assert_eq!(
        config
            .app_settings(&test_mouse(), a)
            .unwrap()
            .scroll
            .max_step,
        2.0
    );
    assert_eq!(
        config.app_key("B", None),
        None,
        "app ids match case-sensitively"
    );
}

#[test]
fn apps_with_the_same_settings_share_one_profile() {
    let config = Config::parse(APPS, "t.toml", Platform::Linux).unwrap();
    let engine = DeviceEngine::new(&config, &test_mouse()).unwrap();
    // The device profile, the two games' one, firefox's.
    assert_eq!(engine.profile_count(), 3);
}

proptest! {
    #[test]
    fn a_focus_change_never_leaves_a_button_pressed(
        steps in prop::collection::vec(
            (0u8..6, prop::collection::vec((0u8..10, any::<bool>()), 0..3), -400i32..400),
            0..60,
        ),
    ) {
        let config = Config::parse(APPS, "t.toml", Platform::Linux).unwrap();
        let mut engine = DeviceEngine::new(&config, &test_mouse()).unwrap();
        let apps = [None, config.app_key("firefox", None), config.app_key("steam_app_1", None)];
        let mut down = [false; 10];
        let mut out = FrameOut::default();
        let mut t = 0u64;
        for (op, changes, dx) in steps {
            t += 10_000;
            if op < 3 {
                engine.set_app(apps[usize::from(op)]);
                continue;
            }
            if op == 4 {
                // The application under the pointer takes over scroll.
                engine.set_scroll_app(apps[(dx.unsigned_abs() % 3) as usize]);
                continue;
            }
            if op == 5 {
                engine.scroll_follows_focus();
                continue;
            }
            // Real devices alternate press and release per button.
            let changes: Vec<(u8, bool)> = changes
                .into_iter()
                .filter(|&(b, p)| down[usize::from(b)] != p)
                .collect();
            let mut seen = [false; 10];
            let changes: Vec<(u8, bool)> = changes
                .into_iter()
                .filter(|&(b, _)| !std::mem::replace(&mut seen[usize::from(b)], true))
                .collect();
            for &(b, p) in &changes {
                down[usize::from(b)] = p;
            }
            let f = FrameIn { time: Micros(t), dx, buttons: buttons(&changes), ..FrameIn::default() };
            engine.frame(&f, &mut out);
            for b in engine.pressed_out().iter() {
                prop_assert!(down[usize::from(b.0)], "button {} pressed out but not held", b.0);
            }
        }
        let release: Vec<(u8, bool)> = (0..10u8).filter(|&b| down[usize::from(b)]).map(|b| (b, false)).collect();
        t += 10_000;
        engine.frame(&FrameIn { time: Micros(t), buttons: buttons(&release), ..FrameIn::default() }, &mut out);
        prop_assert!(engine.pressed_out().is_empty());
        prop_assert!(!engine.gesture_held());
        prop_assert!(!engine.switch_pending());
    }
}

#[test]
fn an_app_table_can_turn_swipe_style_into_shortcuts_for_its_app() {
    // Swipe style for every app but the browser, whose table fires its own keys. Elsewhere
    // the drag is a swipe: no action, and the fingers' pacing ticks (their touch frames
    // are checked in the engine's own tests).
    let config = r#"
        [gesture]
        style = "swipe"
        fingers = 3

        [[app]]
        app_id = "firefox"
        [app.gesture]
        style = "shortcut"
        right = { key = "Alt+Right" }
    "#;
    check(
        config,
        "
        app firefox
        +5
        x=300
        -5
        app -
        +5
        x=300
        -5
        ",
        expect![[r#"
            app firefox => profile of firefox
            +5 => nothing
            x=300 => action key Alt+Right
            -5 => nothing
            app - => device profile
            +5 => nothing
            x=300 => nothing (tick at 20ms)
            -5 => nothing (tick at 7ms)
        "#]],
    );
}
