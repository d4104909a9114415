//! Device rules: which devices pawl handles and with which scroll settings.

use pawl_engine::config::{Scope, Smoothing};
use pawl_engine::device::{Family, LOGITECH, MX_MASTER_FAMILY, family, is_mx_master};
use pawl_engine::{Bus, Config, DeviceEngine, DeviceInfo, Platform};

fn parse(text: &str) -> Config {
    Config::parse(text, "test.toml", Platform::Linux).unwrap_or_else(|e| panic!("{e}"))
}

fn mouse(name: &str, vendor: u16, product: u16, bus: Bus) -> DeviceInfo {
    DeviceInfo {
        name: name.into(),
        bus,
        vendor,
        product,
        has_wheel: true,
        is_touchpad: false,
    }
}

fn touchpad() -> DeviceInfo {
    DeviceInfo {
        name: "SynPS/2 Synaptics TouchPad".into(),
        bus: Bus::I8042,
        vendor: 2,
        product: 7,
        has_wheel: false,
        is_touchpad: true,
    }
}

#[test]
fn every_mx_master_in_the_family_table_is_handled_and_transformed_by_default() {
    let config = Config::default_for(Platform::Linux);
    for (product, fam) in MX_MASTER_FAMILY {
        let d = config.decide(&mouse("Logitech Mouse", LOGITECH, *product, Bus::USB));
        match fam {
            Family::MxMaster(_) => assert!(d.handle && d.transform_scroll, "{product:04x}"),
            Family::Receiver(_) => assert!(!d.handle, "{product:04x}: receiver named plainly"),
        }
    }
}

#[test]
fn family_table_covers_the_documented_products() {
    let mx: Vec<u16> = [
        0xb012, 0xb017, 0xb01e, 0x4041, 0x4060, 0x4071, 0x4069, 0xb019, 0x4082, 0xb023, 0xb028,
        0xb034, 0xb042, 0xb048,
    ]
    .to_vec();
    for p in &mx {
        assert!(
            matches!(family(LOGITECH, *p), Some(Family::MxMaster(_))),
            "{p:04x}"
        );
    }
    for p in [0xc52b, 0xc532, 0xc548] {
        assert!(
            matches!(family(LOGITECH, p), Some(Family::Receiver(_))),
            "{p:04x}"
        );
    }
    assert_eq!(MX_MASTER_FAMILY.len(), mx.len() + 3);
}

#[test]
fn receiver_counts_when_its_name_says_mx_master() {
    let named = mouse("Logitech MX Master 3S", LOGITECH, 0xc548, Bus::USB);
    assert!(is_mx_master(&named));
    assert!(
        Config::default_for(Platform::Linux)
            .decide(&named)
            .transform_scroll
    );
}

#[test]
fn touchpads_are_never_handled_even_with_all_wheels() {
    let config = parse("[scroll]\nscope = \"all-wheels\"\n");
    let d = config.decide(&touchpad());
    assert!(!d.handle && !d.transform_scroll);
    assert_eq!(d.reason, "touchpad");
}

#[test]
fn other_mice_are_left_alone_by_default_and_taken_with_all_wheels() {
    let pixart = mouse("PixArt USB Optical Mouse", 0x093a, 0x2510, Bus::USB);
    assert!(!Config::default_for(Platform::Linux).decide(&pixart).handle);
    assert!(DeviceEngine::new(&Config::default_for(Platform::Linux), &pixart).is_none());
    let all = parse("[scroll]\nscope = \"all-wheels\"\n").decide(&pixart);
    assert!(all.handle && all.transform_scroll);
}

#[test]
fn rules_match_by_name_glob_id_and_bus() {
    let config = parse(
        r#"
        [[device]]
        name = "*optical*"
        handle = true
        [device.scroll]
        max_step = 1

        [[device]]
        id = "093a:2510"
        bus = "bluetooth"
        handle = false
        "#,
    );
    let usb = config.decide(&mouse("PixArt USB Optical Mouse", 0x093a, 0x2510, Bus::USB));
    assert!(usb.handle);
    assert!(
        !usb.transform_scroll,
        "handled for buttons, scroll stays out of scope"
    );
    assert_eq!(usb.scroll.max_step, 1.0);
    assert_eq!(usb.reason, "[[device]] at line 2");
    let bt = config.decide(&mouse(
        "PixArt USB Optical Mouse",
        0x093a,
        0x2510,
        Bus::BLUETOOTH,
    ));
    assert!(!bt.handle, "the later rule wins");
}

#[test]
fn rule_can_take_a_receiver_as_mx_master_with_its_own_scroll_settings() {
    let config = parse(
        r#"
        [scroll]
        smoothing_factor = 0.5
        [[device]]
        id = "046d:c548"
        mx_master = true
        [device.scroll]
        invert_vertical = false
        smoothing = "none"
        "#,
    );
    let bolt = config.decide(&mouse("Logitech USB Receiver", LOGITECH, 0xc548, Bus::USB));
    assert!(bolt.handle && bolt.transform_scroll);
    assert!(!bolt.scroll.invert_vertical);
    assert_eq!(bolt.scroll.smoothing, Smoothing::None);
    let mx = config.decide(&mouse("MX Master 3S", LOGITECH, 0xb034, Bus::BLUETOOTH));
    assert!(
        mx.scroll.invert_vertical,
        "other devices keep the global settings"
    );
    assert_eq!(mx.scroll.smoothing, Smoothing::Ema(0.5));
}

#[test]
fn rule_can_keep_pawl_off_an_mx_master() {
    let config = parse("[[device]]\nname = \"*MX Master*\"\nhandle = false\n");
    let d = config.decide(&mouse(
        "Logitech MX Master 3S",
        LOGITECH,
        0xb034,
        Bus::BLUETOOTH,
    ));
    assert!(!d.handle && !d.transform_scroll);
}

#[test]
fn transform_scroll_per_device_overrides_the_scope() {
    let config = parse("[[device]]\nid = \"046d:b034\"\ntransform_scroll = false\n");
    let d = config.decide(&mouse("MX Master 3S", LOGITECH, 0xb034, Bus::BLUETOOTH));
    assert!(
        d.handle && !d.transform_scroll,
        "gestures stay, scroll is passed through"
    );
}

#[test]
fn scope_matchers_select_wheels_explicitly() {
    let config = parse("[scroll]\nscope = [{ name = \"*Optical*\", bus = \"usb\" }]\n");
    assert!(matches!(config.scope, Scope::Matchers(_)));
    let d = config.decide(&mouse("PixArt USB Optical Mouse", 0x093a, 0x2510, Bus::USB));
    assert!(d.handle && d.transform_scroll);
    let mx = config.decide(&mouse("MX Master 3S", LOGITECH, 0xb034, Bus::BLUETOOTH));
    assert!(
        mx.handle && !mx.transform_scroll,
        "an MX Master outside the scope keeps gestures"
    );
}

#[test]
fn per_device_scroll_settings_reach_the_engine() {
    let config = parse(
        r#"
        [[device]]
        name = "*MX Master 3S*"
        [device.scroll]
        max_step = 1
        smoothing = "none"
        invert_vertical = false
        "#,
    );
    let mx3s = mouse("Logitech MX Master 3S", LOGITECH, 0xb034, Bus::BLUETOOTH);
    let mx3 = mouse("Logitech MX Master 3", LOGITECH, 0xb023, Bus::BLUETOOTH);
    let script = "W=3\n300ms W=3\n";
    let mut e = DeviceEngine::new(&config, &mx3s).expect("handled");
    expect_test::expect![[r#"
        W=3 => w=120/1
        300ms W=3 => w=120/1
    "#]]
    .assert_eq(&crate::script::run(&config, &mut e, script));
    let mut e = DeviceEngine::new(&config, &mx3).expect("handled");
    expect_test::expect![[r#"
        W=3 => w=-360/-3
        300ms W=3 => w=-360/-3
    "#]]
    .assert_eq(&crate::script::run(&config, &mut e, script));
}
