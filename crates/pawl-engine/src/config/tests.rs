//! The config format's specification: defaults, every kind of error and where it is
//! reported, device decisions.

use super::*;
use crate::action::{Action, Desktop};
use crate::device::{Bus, DeviceInfo, LOGITECH};
use crate::units::Button;

fn parse(text: &str) -> Result<Config, ConfigErrors> {
    Config::parse(text, "config.toml", Platform::Linux)
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn empty_file_gives_the_documented_defaults() {
    let c = parse("").unwrap();
    assert_eq!(c, Config::default_for(Platform::Linux));
    assert_eq!(c.gesture.button, Button(5));
    assert_eq!(c.buttons.back, Button(3));
    assert_eq!(c.buttons.forward, Button(4));
    assert_eq!(c.gesture.threshold, 220);
    assert_eq!(c.actions.backend, ActionBackend::Keys);
    assert!(c.gesture.invert_desktop);
    assert_eq!(c.scope, Scope::MxMasterOnly);
    assert!(c.scroll.invert_vertical);
    assert!(!c.scroll.invert_horizontal);
    assert_eq!(c.scroll.smoothing, Smoothing::Ema(0.35));
    assert_eq!(c.scroll.max_step, 5.0);
    let mac = Config::default_for(Platform::MacOs);
    assert_eq!(mac.actions.backend, ActionBackend::SystemEvents);
    assert_eq!(mac.buttons.on_back, Action::Back);
}

#[test]
fn hidpp_is_on_by_default_and_can_be_switched_off() {
    for platform in [Platform::Linux, Platform::MacOs] {
        assert!(Config::default_for(platform).hidpp.enabled);
        let c = Config::parse("[hidpp]\nenabled = false\n", "c.toml", platform).unwrap();
        assert!(!c.hidpp.enabled);
        let text = default_config_text(platform);
        assert!(text.contains("\n[hidpp]\n"), "{text}");
        assert!(text.contains("\nenabled = true\n"), "{text}");
    }
    let e = Config::parse("[hidpp]\nenable = false\n", "c.toml", Platform::Linux).unwrap_err();
    assert!(e.to_string().contains("c.toml:2:"), "{e}");
}

#[test]
fn hidpp_thumb_wheel_is_on_by_default_and_can_be_left_to_the_kernel() {
    let default = Config::default_for(Platform::Linux);
    assert!(default.hidpp.thumb_wheel);
    let c = Config::parse(
        "[hidpp]\nenabled = true\nthumb_wheel = false\n",
        "c.toml",
        Platform::Linux,
    )
    .unwrap();
    assert!(c.hidpp.enabled && !c.hidpp.thumb_wheel);
    let e = Config::parse("[hidpp]\nthumb_wheel = 1\n", "c.toml", Platform::Linux).unwrap_err();
    assert!(e.to_string().contains("c.toml:2:15"), "{e}");
    let text = default_config_text(Platform::Linux);
    assert!(text.contains("\nthumb_wheel = true\n"), "{text}");
}

#[test]
fn default_config_text_parses_to_the_defaults_on_each_platform() {
    for p in [Platform::Linux, Platform::MacOs] {
        let c = Config::parse(&default_config_text(p), "default", p).unwrap();
        // Every scroll key is written out, so they are all recorded as set.
        assert!(c.scroll_keys.smoothing_factor.is_some());
        let c = Config {
            scroll_keys: ScrollOverrides::default(),
            ..c
        };
        assert_eq!(c, Config::default_for(p));
    }
}

#[test]
fn unknown_key_is_an_error_with_line_and_column() {
    let e = err("[gesture]\nthreshold = 100\nthresold = 5\n");
    assert!(e.starts_with("config.toml:3:1: "), "{e}");
    assert!(e.contains("thresold"), "{e}");
}

#[test]
fn out_of_range_value_names_key_range_and_position() {
    let e = err("[scroll]\nmax_step = 0.0\n");
    assert_eq!(
        e,
        "config.toml:2:12: scroll.max_step: 0 is out of range: allowed 0.1..=100 detents"
    );
    let e = err("[gesture]\n  threshold = -4\n");
    assert_eq!(
        e,
        "config.toml:2:15: gesture.threshold: -4 is out of range: allowed 1..=10000 px"
    );
}

#[test]
fn every_range_error_is_reported_not_just_the_first() {
    let e = parse("[gesture]\nbutton = 40\n[scroll]\nspike_ratio = 0.5\n").unwrap_err();
    assert_eq!(e.0.len(), 2);
    assert_eq!(e.0[0].key, "gesture.button");
    assert_eq!(e.0[1].key, "scroll.spike_ratio");
}

#[test]
fn actions_parse_as_names_chords_and_commands() {
    let c = parse(
        "[gesture]\nleft = { key = \"Super+Page_Up\" }\nright = { command = [\"swaymsg\", \"workspace\", \"next\"] }\nup = \"show-desktop\"\n",
    )
    .unwrap();
    assert_eq!(c.gesture.left, Action::Key(0));
    assert_eq!(c.chords[0].to_string(), "Super+Page_Up");
    assert_eq!(c.gesture.right, Action::Command(0));
    assert_eq!(c.commands[0], vec!["swaymsg", "workspace", "next"]);
    assert_eq!(c.gesture.up, Action::ShowDesktop);
}

#[test]
fn unknown_key_name_in_a_chord_is_located() {
    let e = err("[gesture]\nleft = { key = \"Super+Pgup\" }\n");
    assert!(
        e.starts_with("config.toml:2:16: gesture.left: unknown key name \"Pgup\""),
        "{e}"
    );
}

#[test]
fn unknown_action_lists_the_allowed_ones() {
    let e = err("[buttons]\non_back = \"go-back\"\n");
    assert!(e.contains("unknown action \"go-back\""), "{e}");
    assert!(e.contains("\"desktop-left\""), "{e}");
}

#[test]
fn scope_accepts_names_and_matchers() {
    let c = parse("[scroll]\nscope = \"all-wheels\"\n").unwrap();
    assert_eq!(c.scope, Scope::AllWheels);
    let c = parse(
        "[scroll]\nscope = [{ id = \"046d:b034\" }, { name = \"*Master*\", bus = \"usb\" }]\n",
    )
    .unwrap();
    let Scope::Matchers(ms) = c.scope else {
        panic!("not matchers")
    };
    assert_eq!(ms[0].product, Some(0xb034));
    assert_eq!(ms[1].bus, Some(Bus::USB));
    assert!(err("[scroll]\nscope = \"everything\"\n").contains("unknown scope"));
}

fn info(name: &str, vendor: u16, product: u16, touchpad: bool) -> DeviceInfo {
    DeviceInfo {
        name: name.into(),
        bus: Bus::USB,
        vendor,
        product,
        has_wheel: !touchpad,
        is_touchpad: touchpad,
    }
}

#[test]
fn another_mouse_is_taken_by_all_wheels_or_a_device_rule() {
    let generic = info("Generic Mouse", LOGITECH, 0xc077, false);
    for text in [
        "[scroll]\nscope = \"all-wheels\"\n",
        "[[device]]\nname = \"Generic Mouse\"\ntransform_scroll = true\n",
    ] {
        let d = parse(text).unwrap().decide(&generic);
        assert!(d.handle && d.transform_scroll, "{text}");
    }
    let d = parse("[[device]]\nname = \"Generic Mouse\"\nhandle = true\n")
        .unwrap()
        .decide(&generic);
    assert!(
        d.handle && !d.transform_scroll,
        "the buttons, not the wheel"
    );
}

#[test]
fn default_scope_handles_mx_masters_and_nothing_else() {
    let c = Config::default_for(Platform::Linux);
    let mx = c.decide(&info("Logitech MX Master 3S", LOGITECH, 0xb034, false));
    assert!(mx.handle && mx.transform_scroll);
    let other = c.decide(&info("PixArt USB Optical Mouse", 0x093a, 0x2510, false));
    assert!(!other.handle);
    let tp = c.decide(&info("SynPS/2 Synaptics TouchPad", 2, 7, true));
    assert!(!tp.handle && !tp.transform_scroll);
}

#[test]
fn device_rule_overrides_scroll_settings_and_handling() {
    let c = parse(
        "[[device]]\nid = \"046d:c548\"\nmx_master = true\n[device.scroll]\ninvert_vertical = false\nmax_step = 2\n\n[[device]]\nname = \"PixArt*\"\nhandle = false\n",
    )
    .unwrap();
    let bolt = c.decide(&info("Logitech USB Receiver", LOGITECH, 0xc548, false));
    assert!(bolt.handle && bolt.transform_scroll);
    assert!(!bolt.scroll.invert_vertical);
    assert_eq!(bolt.scroll.max_step, 2.0);
    assert_eq!(bolt.reason, "[[device]] at line 1");
    let all =
        parse("[scroll]\nscope = \"all-wheels\"\n[[device]]\nname = \"PixArt*\"\nhandle = false\n")
            .unwrap();
    assert!(!all.decide(&info("PixArt Mouse", 1, 2, false)).handle);
    assert!(all.decide(&info("Other Mouse", 1, 3, false)).handle);
}

#[test]
fn scope_none_keeps_gestures_on_mx_master_but_passes_scroll() {
    let c = parse("[scroll]\nscope = \"none\"\n").unwrap();
    let d = c.decide(&info("Logitech MX Master 3S", LOGITECH, 0xb034, false));
    assert!(d.handle && !d.transform_scroll);
}

#[test]
fn inertia_modes_parse_with_their_parameters() {
    let c = parse("[scroll]\ninertia = \"glide\"\nglide_decay = 0.9\nglide_interval_ms = 10\n")
        .unwrap();
    assert_eq!(
        c.scroll.inertia,
        Inertia::Glide {
            decay: 0.9,
            interval_us: 10_000
        }
    );
    let c = parse("[scroll]\ninertia = \"carry\"\ncarry_limit = 2\n").unwrap();
    assert_eq!(c.scroll.inertia, Inertia::Carry { limit: 2.0 });
}

#[test]
fn malformed_toml_is_located() {
    let e = err("[gesture\nbutton = 5\n");
    assert!(e.starts_with("config.toml:1:"), "{e}");
}

fn errors(text: &str, platform: Platform) -> Vec<String> {
    Config::parse(text, "c.toml", platform)
        .unwrap_err()
        .0
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_later_device_rule_overrides_only_the_scroll_keys_it_sets() {
    let mx = info("Logitech MX Master 3S", LOGITECH, 0xb034, false);
    // The second rule sets no scroll key: the first rule's stay.
    let c = parse("[[device]]\nname = \"*MX Master*\"\n[device.scroll]\ninvert_vertical = false\n\n[[device]]\nid = \"046d:b034\"\nhandle = true\n").unwrap();
    assert!(!c.decide(&mx).scroll.invert_vertical);
    // The second rule sets max_step only: invert_vertical from the first stays, the
    // global smoothing factor too.
    let c = parse("[scroll]\nsmoothing = \"none\"\nsmoothing_factor = 0.5\n[[device]]\nname = \"*MX Master*\"\n[device.scroll]\ninvert_vertical = false\ninertia = \"glide\"\n\n[[device]]\nid = \"046d:b034\"\n[device.scroll]\nmax_step = 2\nsmoothing = \"ema\"\nglide_interval_ms = 8\n").unwrap();
    let d = c.decide(&mx);
    assert!(!d.scroll.invert_vertical);
    assert_eq!(d.scroll.max_step, 2.0);
    assert_eq!(d.scroll.smoothing, Smoothing::Ema(0.5));
    assert_eq!(
        d.scroll.inertia,
        Inertia::Glide {
            decay: 0.85,
            interval_us: 8_000
        }
    );
    // A device no rule matches keeps the global settings.
    let other = c.decide(&info("Other", 1, 2, false));
    assert_eq!(other.scroll, c.scroll);
    assert_eq!(other.scroll.smoothing, Smoothing::None);
}

#[test]
fn type_errors_name_the_key_and_the_expected_type_in_words() {
    assert_eq!(
        errors("[gesture]\nthreshold = \"220\"\n", Platform::Linux),
        ["c.toml:2:13: gesture.threshold: expected an integer (px), found a string \"220\""]
    );
    assert_eq!(
        errors("gesture = 5\n", Platform::Linux),
        ["c.toml:1:11: gesture: expected a table ([gesture]), found an integer (5)"]
    );
    assert_eq!(
        errors(
            "[gesture]\nrepeat = \"yes\"\n[scroll]\nmax_step = \"big\"\n",
            Platform::Linux
        ),
        [
            "c.toml:2:10: gesture.repeat: expected true or false, found a string \"yes\"",
            "c.toml:4:12: scroll.max_step: expected a number (detents), found a string \"big\""
        ]
    );
}

#[test]
fn problems_in_every_section_are_reported_in_one_run() {
    let e = errors(
        "[gesture]\nthresold = 5\nbutton = \"5\"\n[buttons]\nback = 99\n[actions]\nbackend = \"osascript\"\n[scroll]\nmax_step = 0\n[[device]]\nid = \"zz\"\n[device.scroll]\nspike_ratio = 0.5\n",
        Platform::Linux,
    );
    let keys: Vec<&str> = e.iter().map(|l| l.split(": ").nth(1).unwrap()).collect();
    assert_eq!(
        keys,
        [
            "gesture.thresold",
            "gesture.button",
            "buttons.back",
            "actions.backend",
            "scroll.max_step",
            "device[0].id",
            "device[0].scroll.spike_ratio"
        ],
        "{e:#?}"
    );
}

#[test]
fn map_chord_and_command_errors_point_at_the_bad_entry() {
    let text = "# my config\n\n[buttons.map]\n6 = \"show-desktop\"\n7 = { key = \"Super+Nope\" }\n8 = \"bogus\"\nx = \"back\"\n\n[actions.commands]\noverview = [\"ok\"]\ndesktop-left = []\nfly = [\"x\"]\n[actions.chords]\noverview = 5\n";
    let e = errors(text, Platform::Linux);
    let at: Vec<(&str, &str)> = e
        .iter()
        .map(|l| {
            let mut parts = l.splitn(3, ": ");
            (parts.next().unwrap(), parts.next().unwrap())
        })
        .collect();
    assert_eq!(
        at,
        [
            ("c.toml:5:13", "buttons.map.7"),
            ("c.toml:6:5", "buttons.map.8"),
            ("c.toml:7:1", "buttons.map.x"),
            ("c.toml:11:16", "actions.commands.desktop-left"),
            ("c.toml:12:1", "actions.commands.fly"),
            ("c.toml:14:12", "actions.chords.overview"),
        ],
        "{e:#?}"
    );
}

#[test]
fn scope_matcher_errors_point_at_the_bad_item() {
    let e = errors(
        "[scroll]\nscope = [\n  { id = \"046d:b034\" },\n  { name = 5 },\n  { bus = \"serial\" },\n  { vendor = \"046d\" },\n  \"mx\",\n]\n",
        Platform::Linux,
    );
    assert_eq!(
        e,
        [
            "c.toml:4:12: scroll.scope[1].name: expected a string, found an integer (5)",
            "c.toml:5:11: scroll.scope[2].bus: unknown bus \"serial\": allowed \"usb\", \"bluetooth\", \"i2c\", \"i8042\", \"virtual\" or a number",
            "c.toml:6:5: scroll.scope[3].vendor: unknown key: allowed name, id, bus",
            "c.toml:7:3: scroll.scope[4]: expected a matcher like { id = \"046d:b034\" } or { name = \"*MX Master*\" }, found a string \"mx\"",
        ]
    );
}

#[test]
fn button_numbers_are_limited_to_what_the_platform_decodes() {
    let e = errors("[gesture]\nbutton = 16\n", Platform::Linux);
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with(
            "c.toml:2:10: gesture.button: 16 is out of range: allowed 0..=15 on Linux"
        ),
        "{e:?}"
    );
    assert!(
        errors("[buttons.map]\n16 = \"back\"\n", Platform::Linux)[0]
            .contains("allowed 0..=15 on Linux")
    );
    let mac = Config::parse("[gesture]\nbutton = 31\n", "c.toml", Platform::MacOs).unwrap();
    assert_eq!(mac.gesture.button, Button(31));
    assert!(
        errors("[gesture]\nbutton = 32\n", Platform::MacOs)[0].contains("allowed 0..=31 on macOS")
    );
    assert!(default_config_text(Platform::Linux).contains("0..=15 on Linux"));
    assert!(default_config_text(Platform::MacOs).contains("0..=31 on macOS"));
}

#[test]
fn settings_only_another_platform_uses_are_errors_naming_what_this_one_allows() {
    assert_eq!(
        errors("[actions]\nbackend = \"cg-event\"\n", Platform::Linux),
        [
            "c.toml:2:11: actions.backend: \"cg-event\" only works on macOS: allowed on Linux \"keys\", \"command\""
        ]
    );
    assert!(
        errors("[actions]\nbackend = \"system-events\"\n", Platform::Linux)[0]
            .contains("only works on macOS")
    );
    assert!(
        errors("[actions]\ndesktop = \"macos\"\n", Platform::Linux)[0]
            .contains("allowed on Linux \"auto\", \"gnome\", \"kde\"")
    );
    assert!(
        errors("[actions]\ndesktop = \"kde\"\n", Platform::MacOs)[0]
            .contains("allowed on macOS \"auto\", \"macos\"")
    );
    assert!(
        errors("[actions]\nbackend = \"keys\"\n", Platform::MacOs)[0]
            .contains("only works on Linux")
    );
    // Valid on the platform that uses them.
    for (text, p) in [
        (
            "[actions]\nbackend = \"cg-event\"\ndesktop = \"macos\"\n",
            Platform::MacOs,
        ),
        (
            "[actions]\nbackend = \"command\"\ndesktop = \"kde\"\n",
            Platform::Linux,
        ),
    ] {
        Config::parse(text, "c.toml", p).unwrap();
    }
}

#[test]
fn chords_with_keys_the_platform_cannot_press_are_rejected() {
    assert_eq!(
        errors("[gesture]\nup = { key = \"Fn+F11\" }\n", Platform::Linux),
        [
            "c.toml:2:14: gesture.up: chord \"Fn+F11\": Fn has no key code on Linux (the keyboard's firmware handles it)"
        ]
    );
    Config::parse(
        "[gesture]\nup = { key = \"Fn+F11\" }\n",
        "c.toml",
        Platform::MacOs,
    )
    .unwrap();
    assert!(
        errors(
            "[actions.chords]\noverview = \"XF86AudioPlay\"\n",
            Platform::MacOs
        )[0]
        .contains("XF86AudioPlay has no key code on macOS")
    );
    parse("[actions.chords]\noverview = \"XF86AudioPlay\"\nback = \"Ctrl+KP_Enter\"\n").unwrap();
}

#[test]
fn scope_inside_a_device_scroll_table_is_rejected_as_global() {
    let e = errors(
        "[[device]]\nname = \"*MX*\"\n[device.scroll]\nscope = \"all-wheels\"\n",
        Platform::Linux,
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("c.toml:4:1: device[0].scroll.scope: scope is global"),
        "{e:?}"
    );
}

#[test]
fn gesture_on_the_left_button_is_rejected() {
    assert_eq!(
        errors("[gesture]\nbutton = 0\n", Platform::Linux)[0],
        "c.toml:2:10: gesture.button: 0 is the left button: holding it for gestures would swallow every left drag (selecting text, moving windows); choose an extra button (5 is the MX Master's thumb button)"
    );
}

#[test]
fn back_and_forward_on_one_button_is_rejected_naming_both_lines() {
    assert_eq!(
        errors("[buttons]\nback = 6\nforward = 6\n", Platform::Linux),
        [
            "c.toml:3:11: buttons.forward: 6 is also buttons.back (line 2): back and forward must be different buttons"
        ]
    );
    assert_eq!(
        errors("[buttons]\nforward = 3\n", Platform::Linux),
        [
            "c.toml:2:11: buttons.forward: 3 is also buttons.back (default): back and forward must be different buttons"
        ]
    );
}

#[test]
fn an_unreachable_back_action_on_the_gesture_button_is_rejected() {
    let e = errors(
        "[gesture]\nbutton = 3\n[buttons]\non_back = \"back\"\n",
        Platform::Linux,
    );
    assert_eq!(
        e,
        [
            "c.toml:2:10: gesture.button: gesture.button (line 2) and buttons.back (default) are both button 3: buttons.on_back = \"back\" (line 4) would never fire, because the gesture button takes the button; set buttons.on_back = \"pass-through\" or use different buttons"
        ]
    );
    // With the back action left at its default, the gesture button takes precedence.
    let c = Config::parse("[gesture]\nbutton = 3\n", "c.toml", Platform::MacOs).unwrap();
    assert_eq!(c.gesture.button, Button(3));
    assert_eq!(c.buttons.on_back, Action::Back);
    parse("[gesture]\nbutton = 4\n[buttons]\non_forward = \"pass-through\"\n").unwrap();
}

#[test]
fn map_entries_that_could_never_fire_or_would_kill_the_left_click_are_rejected() {
    let e = errors(
        "[gesture]\nbutton = 6\n[buttons.map]\n0 = \"none\"\n3 = \"overview\"\n6 = \"show-desktop\"\n7 = \"back\"\n07 = \"forward\"\n",
        Platform::Linux,
    );
    assert_eq!(
        e,
        [
            "c.toml:4:1: buttons.map.0: 0 is the left button: mapping it would make clicking impossible",
            "c.toml:5:1: buttons.map.3: button 3 is buttons.back (default): this mapping would never fire; set buttons.on_back instead",
            "c.toml:6:1: buttons.map.6: button 6 is gesture.button (line 2): this mapping would never fire; the gesture takes it",
            "c.toml:8:1: buttons.map.07: button 7 is already mapped (line 7)",
        ]
    );
    parse("[buttons.map]\n0 = \"pass-through\"\n7 = \"back\"\n").unwrap();
    let e = errors("[buttons]\nback = 0\non_back = \"back\"\n", Platform::Linux);
    assert!(
        e[0].starts_with("c.toml:2:8: buttons.back: 0 is the left button"),
        "{e:?}"
    );
}

#[test]
fn duplicate_tables_name_the_duplicate_key() {
    let e = errors(
        "[gesture]\nbutton = 5\n[gesture]\nbutton = 6\n",
        Platform::Linux,
    );
    assert!(e[0].contains("duplicate key `gesture`"), "{e:?}");
}

// ---- Odd and hostile configs: refused with a short, located error ----

#[test]
fn a_device_rule_without_a_match_key_is_rejected_as_matching_every_device() {
    let e = errors("[[device]]\nhandle = false\n", Platform::Linux);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("c.toml:1:1: device[0]: this [[device]] rule matches every device"),
        "{e:?}"
    );
    // Meaning it is written out.
    parse("[[device]]\nname = \"*\"\nhandle = false\n").unwrap();
}

#[test]
fn an_empty_scope_matcher_is_rejected_as_matching_every_device() {
    let e = errors("[scroll]\nscope = [{}]\n", Platform::Linux);
    assert_eq!(
        e,
        [
            "c.toml:2:10: scroll.scope[0]: an empty matcher matches every device: give it name, id or bus, or write scope = \"all-wheels\""
        ]
    );
}

#[test]
fn a_nul_byte_in_a_command_is_rejected_at_the_argument() {
    let e = errors(
        "[gesture]\nleft = { command = [\"echo\", \"a\\u0000b\"] }\n",
        Platform::Linux,
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("c.toml:2:29: gesture.left.command[1]: \"a\\0b\" contains a NUL byte"),
        "{e:?}"
    );
}

#[test]
fn commands_are_limited_in_argument_count_and_length() {
    let many = vec!["\"x\""; MAX_COMMAND_ARGS + 1].join(",");
    let e = errors(
        &format!("[actions.commands]\noverview = [{many}]\n"),
        Platform::Linux,
    );
    assert_eq!(
        e,
        [
            "c.toml:2:12: actions.commands.overview: a command of 257 strings: at most 256 (program and arguments)"
        ]
    );
    let long = "a".repeat(MAX_COMMAND_ARG_BYTES + 1);
    let e = errors(
        &format!("[actions.commands]\noverview = [\"sh\", \"{long}\"]\n"),
        Platform::Linux,
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("is 4097 bytes long: at most 4096"), "{e:?}");
    assert!(e[0].len() < 200, "the argument is not echoed whole: {e:?}");
    let fine = vec!["\"x\""; MAX_COMMAND_ARGS].join(",");
    parse(&format!("[actions.commands]\noverview = [{fine}]\n")).unwrap();
}

#[test]
fn a_chord_naming_a_key_twice_is_rejected() {
    assert_eq!(
        errors(
            "[gesture]\nleft = { key = \"Super+Super+Super\" }\n",
            Platform::Linux
        ),
        [
            "c.toml:2:16: gesture.left: chord \"Super+Super+Super\" names Super twice: each key is pressed once"
        ]
    );
    // Two spellings of one key are one key.
    assert_eq!(
        errors(
            "[actions.chords]\noverview = \"ctrl+Control\"\n",
            Platform::Linux
        ),
        [
            "c.toml:2:12: actions.chords.overview: chord \"ctrl+Control\" names Ctrl twice: each key is pressed once"
        ]
    );
}

#[test]
fn a_huge_chord_gives_a_short_error() {
    let chord = vec!["Super"; 5000].join("+");
    let e = errors(
        &format!("[gesture]\nleft = {{ key = \"{chord}\" }}\n"),
        Platform::Linux,
    );
    assert_eq!(e.len(), 1);
    assert!(e[0].contains("has 5000 keys, at most 6"), "{e:?}");
    assert!(e[0].len() < 200, "{} bytes: {}", e[0].len(), e[0]);
}

#[test]
fn device_scroll_settings_under_handle_false_are_rejected() {
    let e = errors(
        "[[device]]\nname = \"PixArt*\"\nhandle = false\ntransform_scroll = true\n[device.scroll]\ninvert_vertical = false\n",
        Platform::Linux,
    );
    assert_eq!(
        e,
        [
            "c.toml:4:1: device[0].transform_scroll: transform_scroll = true would never apply: handle = false (line 3) means pawl never touches the device; remove one of them",
            "c.toml:5:9: device[0].scroll: its [device.scroll] settings would never apply: handle = false (line 3) means pawl never touches the device; remove one of them",
        ]
    );
    parse("[[device]]\nname = \"PixArt*\"\nhandle = false\ntransform_scroll = false\n").unwrap();
}

#[test]
fn actions_commands_apply_with_the_keys_backend_but_not_beside_a_chord_for_the_same_action() {
    // Documented meaning: an override applies with every backend.
    let c = parse(
        "[actions.commands]\noverview = [\"niri\", \"msg\", \"action\", \"toggle-overview\"]\n",
    )
    .unwrap();
    assert_eq!(c.actions.backend, ActionBackend::Keys);
    assert_eq!(c.actions.commands, [(Action::Overview, 0)]);
    assert!(default_config_text(Platform::Linux).contains("it applies with every backend"));
    // Two overrides for one action would depend on the backend: refused.
    let e = errors(
        "[actions.chords]\noverview = \"Super+W\"\n[actions.commands]\noverview = [\"x\"]\n",
        Platform::Linux,
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with(
            "c.toml:4:1: actions.commands.overview: overview has a chord in [actions.chords] too"
        ),
        "{e:?}"
    );
}

#[test]
fn invalid_utf8_is_located_at_its_line_and_column() {
    let e = Config::parse_bytes(
        b"[gesture]\nthreshold = 5\n# caf\xe9\n",
        "c.toml",
        Platform::Linux,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "c.toml:3:6: byte 0xe9 is not UTF-8: a config is UTF-8 text"
    );
}

#[test]
fn deep_nesting_is_a_located_error_in_plain_words() {
    let deep = format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let e = errors(&deep, Platform::Linux);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("c.toml:1:"), "{e:?}");
    assert!(
        e[0].ends_with("arrays or inline tables are nested too deeply"),
        "{e:?}"
    );
}

#[test]
fn huge_numbers_are_echoed_short() {
    assert_eq!(
        errors("[scroll]\nmax_step = 1e308\n", Platform::Linux),
        ["c.toml:2:12: scroll.max_step: 1e308 is out of range: allowed 0.1..=100 detents"]
    );
    let digits = format!("1{}", "0".repeat(300));
    assert_eq!(
        errors(&format!("[scroll]\nmax_step = {digits}\n"), Platform::Linux),
        ["c.toml:2:12: scroll.max_step: 1e300 is out of range: allowed 0.1..=100 detents"]
    );
    assert_eq!(
        errors(
            &format!("[gesture]\nthreshold = {digits}\n"),
            Platform::Linux
        ),
        ["c.toml:2:13: gesture.threshold: 1e300 is out of range: allowed 1..=10000 px"]
    );
}

#[test]
fn a_config_larger_than_the_limit_is_one_error() {
    let big = format!("# {}\n", "x".repeat(MAX_CONFIG_BYTES));
    assert_eq!(
        errors(&big, Platform::Linux),
        [format!(
            "c.toml:1:1: the config is larger than the 1 MiB limit ({} bytes)",
            big.len()
        )]
    );
}

#[test]
fn swipe_style_keys_default_to_shortcut_with_the_desktops_fingers() {
    let c = parse("").unwrap();
    assert_eq!(c.gesture.style, GestureStyle::Shortcut);
    assert_eq!(c.gesture.fingers, None);
    assert_eq!(c.gesture.swipe_scale_milli, 1000);
    assert_eq!(c.gesture.swipe_fingers(Desktop::Gnome), 3);
    assert_eq!(c.gesture.swipe_fingers(Desktop::Kde), 4);
    let c = parse("[gesture]\nstyle = \"swipe\"\nfingers = 4\nswipe_scale = 1.5\n").unwrap();
    assert_eq!(c.gesture.style, GestureStyle::Swipe);
    assert_eq!(c.gesture.swipe_fingers(Desktop::Gnome), 4);
    assert_eq!(c.gesture.swipe_scale_milli, 1500);
    let c = parse("[gesture]\nfingers = \"auto\"\n").unwrap();
    assert_eq!(c.gesture.fingers, None);
}

#[test]
fn auto_fingers_follow_the_desktop_the_config_names_before_the_detected_one() {
    let c = parse("[gesture]\nstyle = \"swipe\"\n[actions]\ndesktop = \"kde\"\n").unwrap();
    assert_eq!(c.swipe_fingers(Desktop::Gnome), 4, "actions.desktop wins");
    let c = parse("[gesture]\nstyle = \"swipe\"\n[actions]\ndesktop = \"gnome\"\n").unwrap();
    assert_eq!(c.swipe_fingers(Desktop::Kde), 3);
    let c = parse("[gesture]\nstyle = \"swipe\"\n").unwrap();
    assert_eq!(
        c.swipe_fingers(Desktop::Kde),
        4,
        "no desktop named: the detected one"
    );
    let c = parse("[gesture]\nfingers = 3\n[actions]\ndesktop = \"kde\"\n").unwrap();
    assert_eq!(c.swipe_fingers(Desktop::Kde), 3, "an explicit count wins");
}

#[test]
fn swipe_key_errors_are_located_and_say_what_is_allowed() {
    let e = err("[gesture]\nstyle = \"slide\"\nfingers = 2\nswipe_scale = 0\n");
    assert!(
        e.contains("config.toml:2:9: gesture.style: unknown value \"slide\": allowed \"shortcut\", \"swipe\""),
        "{e}"
    );
    assert!(
        e.contains("config.toml:3:11: gesture.fingers: 2 is out of range: allowed 3..=4 fingers"),
        "{e}"
    );
    assert!(
        e.contains("config.toml:4:15: gesture.swipe_scale: 0 is out of range: allowed 0.1..=10"),
        "{e}"
    );
    let e = err("[gesture]\nfingers = \"five\"\n");
    assert!(
        e.contains(
            "config.toml:2:11: gesture.fingers: unknown value \"five\": allowed \"auto\" or 3..=4"
        ),
        "{e}"
    );
    let e = err("[gesture]\nfingers = true\n");
    assert!(
        e.contains("gesture.fingers: expected \"auto\" or an integer (fingers), found a boolean"),
        "{e}"
    );
}

#[test]
fn swipe_style_is_a_linux_setting() {
    let e = Config::parse("[gesture]\nstyle = \"swipe\"\n", "c.toml", Platform::MacOs)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("c.toml:2:9: gesture.style: \"swipe\" only works on Linux"),
        "{e}"
    );
}

#[test]
fn hidpp_kernel_mode_is_auto_by_default_and_off_forces_grab_mode() {
    let default = Config::default_for(Platform::Linux);
    assert_eq!(default.hidpp.kernel_mode, KernelMode::Auto);
    let c = Config::parse(
        "[hidpp]\nkernel_mode = \"off\"\n",
        "c.toml",
        Platform::Linux,
    )
    .unwrap();
    assert_eq!(c.hidpp.kernel_mode, KernelMode::Off);
    let e = Config::parse("[hidpp]\nkernel_mode = \"on\"\n", "c.toml", Platform::Linux)
        .unwrap_err()
        .to_string();
    assert!(e.contains("c.toml:2:15"), "{e}");
    assert!(e.contains("\"auto\", \"off\""), "{e}");
    let text = default_config_text(Platform::Linux);
    assert!(text.contains("\nkernel_mode = \"auto\"\n"), "{text}");
}

#[test]
fn app_tables_parse_with_their_overrides_and_a_sorted_id_list() {
    let c = parse(
        r#"
[[app]]
app_id = ["firefox", "chromium"]
device = "*MX Master*"
[app.scroll]
invert_vertical = false
[app.gesture]
left = "back"
[app.buttons]
on_forward = { key = "Ctrl+Tab" }
[app.buttons.map]
7 = "overview"

[[app]]
app_id = "steam"
device = { id = "046d:b034" }
"#,
    )
    .unwrap();
    assert_eq!(c.app_ids, vec!["chromium", "firefox", "steam"]);
    assert_eq!(c.app_key("firefox", None), Some(AppKey(1)));
    assert_eq!(c.app_key("Firefox", None), None);
    assert_eq!(c.app_name(AppKey(2)), "steam");
    let a = &c.apps[0];
    assert_eq!(a.line, 2);
    assert_eq!(a.scroll.invert_vertical, Some(false));
    assert_eq!(a.gesture.left, Some(Action::Back));
    assert!(matches!(a.buttons.on_forward, Some(Action::Key(_))));
    assert_eq!(a.buttons.map, vec![(Button(7), Action::Overview)]);
    assert_eq!(
        c.apps[1].device.as_ref().and_then(|m| m.product),
        Some(0xb034)
    );
    let mx = info("Logitech MX Master 3S", LOGITECH, 0xb034, false);
    let other = info("Other", 1, 2, false);
    let ff = c.app_key("firefox", None).unwrap();
    assert!(
        c.app_settings(&other, ff).is_none(),
        "narrowed to MX Masters"
    );
    let s = c.app_settings(&mx, ff).unwrap();
    assert!(!s.scroll.invert_vertical);
    assert_eq!(s.gesture.left, Action::Back);
    assert_eq!(s.gesture.right, c.gesture.right);
}

#[test]
fn app_table_errors_are_located() {
    let e = errors(
        r#"
[[app]]
app_id = ""
[app.gesture]
button = 3
left = "nowhere"

[[app]]
device = "*"

[[app]]
app_id = ["a", "a", 3]
title = "Mozilla(.*"
[app.scroll]
scope = "all-wheels"
[app.buttons.map]
5 = "overview"
0 = "back"
"#,
        Platform::Linux,
    );
    let want = [
        "c.toml:3:10: app[0].app_id: application id \"\" is empty",
        "c.toml:5:1: app[0].gesture.button: unknown key",
        "c.toml:6:8: app[0].gesture.left: unknown action \"nowhere\"",
        "c.toml:8:1: app[1]: this [[app]] table names no application",
        "c.toml:12:16: app[2].app_id: application id \"a\" is listed twice",
        "c.toml:12:21: app[2].app_id: expected a string, found an integer (3)",
        "c.toml:13:9: app[2].title: not a valid pattern: ",
        "c.toml:15:1: app[2].scroll.scope: scope is global",
        "c.toml:17:1: app[2].buttons.map.5: button 5 cannot be mapped here: it is the gesture button",
        "c.toml:18:1: app[2].buttons.map.0: button 0 cannot be mapped here: 0 is the left button",
    ];
    assert_eq!(e.len(), want.len(), "{e:#?}");
    for (got, want) in e.iter().zip(want) {
        assert!(
            got.starts_with(want),
            "{got}\n  does not start with\n{want}"
        );
    }
}

#[test]
fn a_button_mapped_twice_in_an_app_table_is_refused() {
    let e = errors(
        "[[app]]\napp_id = \"a\"\n[app.buttons.map]\n7 = \"back\"\n07 = \"forward\"\n",
        Platform::Linux,
    );
    assert_eq!(
        e,
        ["c.toml:5:1: app[0].buttons.map.07: button 7 is already mapped (line 4)"]
    );
    // Each table has its own map: a later table may map the button again.
    let c = parse(
        "[[app]]\napp_id = \"a\"\n[app.buttons.map]\n7 = \"back\"\n\
         [[app]]\napp_id = \"a\"\n[app.buttons.map]\n07 = \"forward\"\n",
    )
    .unwrap();
    assert_eq!(c.apps[0].buttons.map, vec![(Button(7), Action::Back)]);
    assert_eq!(c.apps[1].buttons.map, vec![(Button(7), Action::Forward)]);
}

#[test]
fn an_unknown_key_under_app_scroll_lists_only_keys_it_takes() {
    let e = errors(
        "[[app]]\napp_id = \"a\"\n[app.scroll]\nscope = \"all-wheels\"\nspeed = 2\n",
        Platform::Linux,
    );
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(e[0].starts_with("c.toml:4:1: app[0].scroll.scope: scope is global"));
    assert_eq!(
        e[1],
        "c.toml:5:1: app[0].scroll.speed: unknown key: allowed invert_vertical, invert_horizontal, smoothing, smoothing_factor, max_step, spike_ratio, gesture_gap_ms, inertia, carry_limit, glide_decay, glide_interval_ms"
    );
    let e = errors(
        "[[device]]\nname = \"*\"\n[device.scroll]\nspeed = 2\n",
        Platform::Linux,
    );
    assert!(!e[0].contains("scope"), "{e:#?}");
}

#[test]
fn a_title_written_under_an_app_sub_table_says_it_belongs_to_the_app_table() {
    let e = errors(
        "[[app]]\napp_id = \"firefox\"\n[app.scroll]\ntitle = \"YouTube\"\n\
         [[app]]\napp_id = \"b\"\n[app.gesture]\ndevice = \"*MX*\"\n\
         [[app]]\n[app.buttons]\napp_id = \"c\"\n",
        Platform::Linux,
    );
    assert_eq!(
        e,
        [
            "c.toml:4:1: app[0].scroll.title: title belongs to the [[app]] table itself, as do app_id and device: write it after [[app]], before [app.scroll]",
            "c.toml:8:1: app[1].gesture.device: device belongs to the [[app]] table itself, as do app_id and title: write it after [[app]], before [app.gesture]",
            "c.toml:9:1: app[2]: this [[app]] table names no application: add app_id = \"firefox\" (or a list)",
            "c.toml:11:1: app[2].buttons.app_id: app_id belongs to the [[app]] table itself, as do title and device: write it after [[app]], before [app.buttons]",
        ]
    );
}

#[test]
fn names_that_could_never_match_are_refused_where_they_are_written() {
    let e = errors(
        r#"
[[app]]
app_id = []

[[app]]
app_id = [" firefox", "code ", "   "]
device = ""

[[device]]
name = ""
handle = true

[scroll]
scope = [{ name = "" }]
"#,
        Platform::Linux,
    );
    let want = [
        "c.toml:3:10: app[0].app_id: the list is empty",
        "c.toml:6:11: app[1].app_id: application id \" firefox\" starts or ends with a space: application ids have none (write \"firefox\")",
        "c.toml:6:23: app[1].app_id: application id \"code \" starts or ends with a space",
        "c.toml:6:32: app[1].app_id: application id \"   \" is blank: an application id has characters other than spaces",
        "c.toml:7:10: app[1].device: the name is empty",
        "c.toml:10:8: device[0].name: the name is empty",
        "c.toml:14:19: scroll.scope[0].name: the name is empty",
    ];
    assert_eq!(e.len(), want.len(), "{e:#?}");
    for (got, want) in e.iter().zip(want) {
        assert!(
            got.starts_with(want),
            "{got}\n  does not start with\n{want}"
        );
    }
}

#[test]
fn a_title_table_applies_only_while_the_title_matches_and_layers_in_file_order() {
    let c = parse(
        r#"
[[app]]
app_id = "firefox"
[app.scroll]
invert_vertical = false

[[app]]
app_id = ["firefox", "chromium"]
title = "(?i)youtube"
[app.scroll]
smoothing = "none"

[[app]]
app_id = "chromium"
title = "^Docs"
[app.gesture]
left = "back"
"#,
    )
    .unwrap();
    let mx = info("MX Master 3S", LOGITECH, 0xb034, false);
    // firefox: 1 untitled + 1 titled table → 2 keys; chromium: 2 titled → 4 keys.
    assert_eq!(c.app_first_key, vec![0, 4, 6]);
    assert_eq!(c.app_key_count(), 6);

    let plain = c.app_key("firefox", Some("Example Domain")).unwrap();
    let tube = c.app_key("firefox", Some("Cats - YouTube")).unwrap();
    assert_ne!(plain, tube);
    assert_eq!(
        c.app_key("firefox", None),
        Some(plain),
        "no title: untitled tables only"
    );
    let s = c.app_settings(&mx, plain).unwrap();
    assert!(!s.scroll.invert_vertical);
    assert_eq!(s.scroll.smoothing, c.scroll.smoothing);
    let s = c.app_settings(&mx, tube).unwrap();
    assert!(
        !s.scroll.invert_vertical,
        "the untitled table still applies"
    );
    assert_eq!(s.scroll.smoothing, Smoothing::None);
    assert_eq!(s.lines, vec![2, 7]);
    assert_eq!(
        c.profile_text(Some(tube)),
        "app firefox ([[app]] at line 2, 7)"
    );
    assert_eq!(c.app_name(tube), "firefox");

    // chromium is named only by title tables: no match, no profile.
    assert_eq!(c.app_key("chromium", None), None);
    assert_eq!(c.app_key("chromium", Some("News")), None);
    let docs = c.app_key("chromium", Some("Docs - YouTube")).unwrap();
    let s = c.app_settings(&mx, docs).unwrap();
    assert_eq!(
        s.lines,
        vec![7, 13],
        "both of chromium's title tables match"
    );
    assert_eq!(s.gesture.left, Action::Back);
    let only_docs = c.app_key("chromium", Some("Docs")).unwrap();
    assert_eq!(c.app_settings(&mx, only_docs).unwrap().lines, vec![13]);
    assert_eq!(c.app_name(docs), "chromium");
    assert_eq!(c.app_name(AppKey(6)), "", "a key of another config");
}

#[test]
fn a_case_insensitive_title_ignores_ascii_case_only() {
    let tube = TitlePattern::new("(?i)youtube").unwrap();
    assert!(tube.is_match("Cats - YOUTUBE"));
    let ete = TitlePattern::new("(?i)été").unwrap();
    assert!(ete.is_match("Un été"));
    assert!(ete.is_match("Un éTé"), "the ASCII letter t is folded");
    assert!(!ete.is_match("UN ÉTÉ"), "É is not folded to é");
    for text in [
        default_config_text(Platform::Linux),
        default_config_text(Platform::MacOs),
    ] {
        let prose = text.replace("\n# ", " ");
        assert!(prose.contains("(?i) ignores ASCII case only"), "{text}");
    }
}

#[test]
fn a_title_is_matched_on_its_first_kilobyte() {
    let c = parse("[[app]]\napp_id = \"a\"\ntitle = \"end$\"\n").unwrap();
    let long = format!("{}end", "é".repeat(MAX_TITLE_BYTES));
    assert_eq!(c.app_key("a", Some(&long)), None);
    assert!(c.app_key("a", Some("the end")).is_some());
    let text = default_config_text(Platform::Linux);
    let prose = text.replace("\n# ", " ");
    assert!(
        prose.contains("(only its first 1 KiB is matched)"),
        "{text}"
    );
}

#[test]
fn an_app_tables_device_glob_ignores_case() {
    let c =
        parse("[[app]]\napp_id = \"a\"\ndevice = \"*mx master*\"\n[app.scroll]\nmax_step = 2\n")
            .unwrap();
    let key = c.app_key("a", None).unwrap();
    let mx = info("Logitech MX Master 3S", LOGITECH, 0xb034, false);
    assert_eq!(c.app_settings(&mx, key).unwrap().scroll.max_step, 2.0);
    let other = info("Generic Mouse", LOGITECH, 0xc077, false);
    assert_eq!(c.app_settings(&other, key), None);
    let text = default_config_text(Platform::Linux);
    let prose = text.replace("\n# ", " ");
    assert!(prose.contains("a name glob (case-insensitive"), "{text}");
}

#[test]
fn title_patterns_have_stated_limits() {
    let e = err("[[app]]\napp_id = \"a\"\ntitle = \"\"\n");
    assert!(
        e.contains("config.toml:3:9: app[0].title: the pattern is empty"),
        "{e}"
    );
    let e = err(&format!(
        "[[app]]\napp_id = \"a\"\ntitle = \"{}\"\n",
        "x".repeat(256)
    ));
    assert!(
        e.contains("the pattern is 256 bytes long: at most 255"),
        "{e}"
    );
    let five =
        "[[app]]\napp_id = [\"a\", \"b\"]\ntitle = \"x\"\n".repeat(MAX_TITLE_TABLES_PER_APP + 1);
    let e = err(&five);
    assert!(
        e.contains("app[4].title: application \"a\" already has 4 [[app]] tables with a title"),
        "{e}"
    );
}

#[test]
fn app_tables_and_ids_have_stated_limits() {
    let many = "[[app]]\napp_id = \"x\"\n".repeat(MAX_APP_TABLES + 1);
    let e = err(&many);
    assert_eq!(
        e,
        format!(
            "config.toml:{}:1: app: 65 [[app]] tables: at most 64",
            2 * MAX_APP_TABLES + 1
        ),
        "at the first table over the limit"
    );
    let ids: Vec<String> = (0..=MAX_APP_IDS).map(|i| format!("\"a{i}\"")).collect();
    let e = err(&format!("[[app]]\napp_id = [{}]\n", ids.join(", ")));
    assert!(
        e.contains("33 application ids: at most 32 per table"),
        "{e}"
    );
    let e = err(&format!("[[app]]\napp_id = \"{}\"\n", "a".repeat(256)));
    assert!(e.contains("is 256 bytes long: at most 255"), "{e}");
}

#[test]
fn mouse_settings_are_unset_by_default_so_nothing_is_written() {
    let c = parse("").unwrap();
    let mx = info("MX Master 3S", LOGITECH, 0xb034, false);
    assert_eq!(c.mouse_settings(&mx), MouseSettings::default());
    assert!(c.mouse_settings(&mx).is_empty());
}

#[test]
fn dpi_and_smartshift_are_accepted_in_hidpp_and_device_hidpp() {
    let c = parse(
        "[hidpp]\ndpi = 1600\nsmartshift = \"ratchet\"\n\
         [[device]]\nname = \"*MX Master 3S*\"\n[device.hidpp]\nsmartshift = 30\n\
         [[device]]\nname = \"*Other*\"\n[device.hidpp]\ndpi = 800\nsmartshift = \"free\"\n",
    )
    .unwrap();
    assert_eq!(c.hidpp.settings.dpi, Some(1600));
    let mx = info("MX Master 3S", LOGITECH, 0xb034, false);
    // The rule replaces only the key it sets.
    assert_eq!(
        c.mouse_settings(&mx),
        MouseSettings {
            dpi: Some(1600),
            smartshift: Some(SmartShift::Threshold(30)),
            thumb_wheel_invert: None,
        }
    );
    let other = info("Other mouse", LOGITECH, 0x4082, false);
    assert_eq!(
        c.mouse_settings(&other),
        MouseSettings {
            dpi: Some(800),
            smartshift: Some(SmartShift::Free),
            thumb_wheel_invert: None,
        }
    );
    for (text, want) in [("50", 50), ("25600", 25600), ("4000", 4000)] {
        let c = parse(&format!("[hidpp]\ndpi = {text}\n")).unwrap();
        assert_eq!(c.hidpp.settings.dpi, Some(want));
    }
    for (text, want) in [
        ("1", SmartShift::Threshold(1)),
        ("254", SmartShift::Threshold(254)),
        ("\"free\"", SmartShift::Free),
    ] {
        let c = parse(&format!("[hidpp]\nsmartshift = {text}\n")).unwrap();
        assert_eq!(c.hidpp.settings.smartshift, Some(want));
    }
}

#[test]
fn thumb_wheel_invert_is_a_mouse_setting_a_device_rule_may_override() {
    let c = parse(
        "[hidpp]\nthumb_wheel_invert = true\n\
         [[device]]\nname = \"*MX Master 4*\"\n[device.hidpp]\nthumb_wheel_invert = false\n",
    )
    .unwrap();
    let s3 = info("MX Master 3S", LOGITECH, 0xb034, false);
    let m4 = info("MX Master 4", LOGITECH, 0xb042, false);
    assert_eq!(c.mouse_settings(&s3).thumb_wheel_invert, Some(true));
    assert_eq!(c.mouse_settings(&m4).thumb_wheel_invert, Some(false));
    let unset = parse("[hidpp]\ndpi = 800\n").unwrap();
    assert_eq!(unset.mouse_settings(&s3).thumb_wheel_invert, None);
    assert_eq!(
        err("[hidpp]\nthumb_wheel_invert = 1\n"),
        "config.toml:2:22: hidpp.thumb_wheel_invert: expected true or false, found an integer (1)"
    );
}

#[test]
fn out_of_range_dpi_and_smartshift_are_located() {
    assert_eq!(
        err("[hidpp]\ndpi = 25601\n"),
        "config.toml:2:7: hidpp.dpi: 25601 is out of range: allowed 50..=25600 dpi"
    );
    assert!(
        err("[hidpp]\ndpi = 49\n").starts_with("config.toml:2:7: hidpp.dpi: 49 is out of range")
    );
    let e = err("[[device]]\nname = \"*\"\n[device.hidpp]\nsmartshift = 255\n");
    assert!(
        e.starts_with("config.toml:4:14: device[0].hidpp.smartshift: 255 is out of range: allowed \"ratchet\", \"free\" or an integer 1..=254"),
        "{e}"
    );
    let e = err("[hidpp]\nsmartshift = 0\n");
    assert!(
        e.starts_with("config.toml:2:14: hidpp.smartshift: 0 is out of range"),
        "{e}"
    );
    let e = err("[hidpp]\nsmartshift = \"on\"\n");
    assert!(
        e.starts_with(
            "config.toml:2:14: hidpp.smartshift: unknown value \"on\": allowed \"ratchet\""
        ),
        "{e}"
    );
}

#[test]
fn wrong_types_of_dpi_and_smartshift_say_what_is_expected() {
    let e = err("[hidpp]\ndpi = \"1600\"\n");
    assert_eq!(
        e,
        "config.toml:2:7: hidpp.dpi: expected an integer (dots per inch), found a string \"1600\""
    );
    let e = err("[hidpp]\nsmartshift = true\n");
    assert!(
        e.starts_with("config.toml:2:14: hidpp.smartshift: expected \"ratchet\", \"free\" or an integer 1..=254"),
        "{e}"
    );
    let e = err("[[device]]\nname = \"*\"\nhidpp = 3\n");
    assert!(
        e.starts_with("config.toml:3:9: device[0].hidpp: expected a table"),
        "{e}"
    );
}

#[test]
fn device_hidpp_refuses_global_keys_and_handle_false() {
    let e = err("[[device]]\nname = \"*\"\n[device.hidpp]\nthumb_wheel = false\n");
    assert!(
        e.starts_with("config.toml:4:1: device[0].hidpp.thumb_wheel: thumb_wheel is global"),
        "{e}"
    );
    let e = err("[[device]]\nname = \"*\"\nhandle = false\n[device.hidpp]\ndpi = 800\n");
    assert!(
        e.contains("its [device.hidpp] settings would never apply"),
        "{e}"
    );
}

#[test]
fn smartshift_maps_to_the_device_modes_both_ways() {
    for s in [
        SmartShift::Ratchet,
        SmartShift::Free,
        SmartShift::Threshold(30),
    ] {
        let (mode, threshold) = s.to_device();
        let read = if s == SmartShift::Free { 7 } else { threshold };
        assert_eq!(SmartShift::from_device(mode, read), Some(s));
    }
    assert_eq!(SmartShift::Ratchet.to_device(), (2, 255));
    assert_eq!(SmartShift::from_device(0, 5), None);
    assert_eq!(SmartShift::from_device(2, 0), None);
}

#[test]
fn sense_panel_is_unset_by_default_and_takes_a_button_to_map() {
    assert_eq!(Config::default_for(Platform::Linux).hidpp.sense_panel, None);
    let c = parse("[hidpp]\nsense_panel = 8\n[buttons.map]\n8 = \"desktop-left\"\n").unwrap();
    assert_eq!(c.hidpp.sense_panel, Some(Button(8)));
    assert_eq!(c.button_action(Button(8)), Some(Action::DesktopLeft));
}

#[test]
fn sense_panel_refuses_the_left_button_and_numbers_out_of_range_with_their_place() {
    assert_eq!(
        err("[hidpp]\nsense_panel = 0\n"),
        "config.toml:2:15: hidpp.sense_panel: 0 is the left button: the Sense Panel would click, and every mapping of 0 is refused"
    );
    let e = err("[hidpp]\nsense_panel = 16\n");
    assert!(
        e.starts_with("config.toml:2:15: hidpp.sense_panel: 16 is out of range: allowed 0..=15"),
        "{e}"
    );
    let e = err("[hidpp]\nsense_panel = \"top\"\n");
    assert!(e.starts_with("config.toml:2:15: hidpp.sense_panel:"), "{e}");
    let e = err("[[device]]\nname = \"*\"\n[device.hidpp]\nsense_panel = 8\n");
    assert!(
        e.starts_with("config.toml:4:1: device[0].hidpp.sense_panel: sense_panel is global"),
        "{e}"
    );
}

#[test]
fn haptic_on_gesture_is_off_by_default_and_a_boolean() {
    assert!(!Config::default_for(Platform::Linux).hidpp.haptic_on_gesture);
    assert!(
        parse("[hidpp]\nhaptic_on_gesture = true\n")
            .unwrap()
            .hidpp
            .haptic_on_gesture
    );
    let e = err("[hidpp]\nhaptic_on_gesture = 1\n");
    assert!(
        e.starts_with("config.toml:2:21: hidpp.haptic_on_gesture:"),
        "{e}"
    );
}

#[test]
fn the_sense_panel_takes_a_number_no_other_button_uses() {
    for n in 1..=4 {
        let e = err(&format!("[hidpp]\nsense_panel = {n}\n"));
        assert!(
            e.starts_with(&format!("config.toml:2:15: hidpp.sense_panel: button {n} cannot be the Sense Panel: it is a button of the mouse itself")),
            "{e}"
        );
    }
    // The gesture button needs raw XY; the panel is diverted without.
    let e = err("[gesture]\nbutton = 7\n[hidpp]\nsense_panel = 7\n");
    assert!(e.contains("it is the gesture button"), "{e}");
    let e = err("[buttons]\nback = 6\nforward = 9\n[hidpp]\nsense_panel = 9\n");
    assert!(e.contains("it is [buttons] back or forward"), "{e}");
    let c = parse("[hidpp]\nsense_panel = 8\n[buttons.map]\n8 = \"overview\"\n").unwrap();
    assert_eq!(c.hidpp.sense_panel, Some(Button(8)));
}

#[test]
fn hidpp_only_keys_are_refused_with_hidpp_off() {
    for key in [
        "dpi = 800",
        "smartshift = 30",
        "thumb_wheel_invert = true",
        "sense_panel = 8",
        "haptic_on_gesture = true",
    ] {
        let e = err(&format!("[hidpp]\nenabled = false\n{key}\n"));
        assert!(
            e.starts_with("config.toml:3:1: hidpp.")
                && e.contains("would never apply: HID++ is off"),
            "{key}: {e}"
        );
    }
    let e = err("[hidpp]\nenabled = false\n[[device]]\nname = \"*\"\n[device.hidpp]\ndpi = 800\n");
    assert!(
        e.starts_with("config.toml:6:1: device[0].hidpp.dpi: dpi would never apply"),
        "{e}"
    );
    // HID++ on, or the keys unset: fine.
    parse("[hidpp]\nenabled = false\nthumb_wheel = false\n").unwrap();
    parse("[hidpp]\ndpi = 800\nhaptic_on_gesture = true\n").unwrap();
}

#[test]
fn a_drag_action_an_app_table_could_never_fire_under_swipe_style_is_refused() {
    let e = errors(
        r#"
[gesture]
style = "swipe"

[[app]]
app_id = "firefox"
[app.gesture]
right = { key = "Alt+Right" }
click = "overview"

[[app]]
app_id = "code"
[app.gesture]
style = "swipe"
left = "none"
"#,
        Platform::Linux,
    );
    let want = [
        "c.toml:8:1: app[0].gesture.right: style = \"swipe\" ([gesture]) makes a drag a touchpad swipe for this app, so a drag never fires an action; add style = \"shortcut\" to this table for its app to fire right",
        "c.toml:15:1: app[1].gesture.left: style = \"swipe\" (the [[app]] table at line 11) makes a drag a touchpad swipe",
    ];
    assert_eq!(e.len(), want.len(), "{e:#?}");
    for (got, want) in e.iter().zip(want) {
        assert!(got.starts_with(want), "{got}\nwant {want}");
    }
    // Styles layer across an app's tables as every key does: a later table's drag fires
    // under an earlier table's shortcut style, also a title table's; a later swipe style
    // that always applies makes an earlier drag dead, one that may not apply does not.
    let layered = "[gesture]\nstyle = \"swipe\"\n\n\
        [[app]]\napp_id = \"firefox\"\n[app.gesture]\nstyle = \"shortcut\"\nleft = \"none\"\n\n\
        [[app]]\napp_id = \"firefox\"\n[app.gesture]\nright = { key = \"Alt+Right\" }\n\n\
        [[app]]\napp_id = \"firefox\"\ntitle = \"(?i)youtube\"\n[app.gesture]\nright = \"none\"\n";
    parse(layered).unwrap();
    let dead = errors(
        "[[app]]\napp_id = \"firefox\"\n[app.gesture]\nstyle = \"shortcut\"\nright = \"none\"\n\n\
         [[app]]\napp_id = [\"firefox\", \"chromium\"]\n[app.gesture]\nstyle = \"swipe\"\n",
        Platform::Linux,
    );
    assert!(
        dead.len() == 1
            && dead[0].starts_with(
                "c.toml:5:1: app[0].gesture.right: style = \"swipe\" (the [[app]] table at line 7)"
            ),
        "{dead:#?}"
    );
    let maybe = "[[app]]\napp_id = \"firefox\"\n[app.gesture]\nright = \"none\"\n\n\
         [[app]]\napp_id = \"firefox\"\ntitle = \"Video\"\n[app.gesture]\nstyle = \"swipe\"\n\n\
         [[app]]\napp_id = \"firefox\"\ndevice = \"*Other*\"\n[app.gesture]\nstyle = \"swipe\"\n";
    parse(maybe).unwrap();
    // A style that is not one is the one error.
    let bogus = errors(
        "[gesture]\nstyle = \"swipe\"\n[[app]]\napp_id = \"firefox\"\n[app.gesture]\nstyle = \"bogus\"\nright = \"none\"\n",
        Platform::Linux,
    );
    assert!(bogus.len() == 1 && bogus[0].contains("bogus"), "{bogus:#?}");
    // With the app's own shortcut style the same table is the browser's gestures, and only
    // the browser leaves swipe style; `click` fires in either style.
    let c = parse(
        "[gesture]\nstyle = \"swipe\"\n\n[[app]]\napp_id = \"firefox\"\n[app.gesture]\n\
         style = \"shortcut\"\nright = { key = \"Alt+Right\" }\n\n\
         [[app]]\napp_id = \"code\"\n[app.gesture]\nclick = \"overview\"\n",
    )
    .unwrap();
    let mx = info("Logitech MX Master 3S", LOGITECH, 0xb034, false);
    let firefox = c
        .app_settings(&mx, c.app_key("firefox", None).unwrap())
        .unwrap();
    assert_eq!(firefox.gesture.style, GestureStyle::Shortcut);
    assert!(
        matches!(firefox.gesture.right, Action::Key(_)),
        "{firefox:?}"
    );
    let code = c
        .app_settings(&mx, c.app_key("code", None).unwrap())
        .unwrap();
    assert_eq!(code.gesture.style, GestureStyle::Swipe);
    assert!(c.uses_swipe());
    // An app's swipe style needs the touchpad too; macOS has no swipe at all.
    let app_swipe =
        parse("[[app]]\napp_id = \"code\"\n[app.gesture]\nstyle = \"swipe\"\n").unwrap();
    assert!(app_swipe.uses_swipe() && !Config::default_for(Platform::Linux).uses_swipe());
    let mac = errors(
        "[[app]]\napp_id = \"com.apple.Safari\"\n[app.gesture]\nstyle = \"swipe\"\n",
        Platform::MacOs,
    );
    assert!(
        mac.len() == 1 && mac[0].contains("\"swipe\" only works on Linux"),
        "{mac:#?}"
    );
}
