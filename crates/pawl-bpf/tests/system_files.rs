//! The files the package installs beside the loader agree with the loader: the bpffs
//! mount unit mounts where the loader pins, the udev rule runs the loader at coldplug and
//! at bind.

use std::path::Path;

fn contrib(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contrib")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// `key=value` lines of a unit file's section `[section]`.
fn unit_values(text: &str, section: &str, key: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
        } else if inside && let Some(v) = line.strip_prefix(&format!("{key}=")) {
            out.push(v.to_owned());
        }
    }
    out
}

#[test]
fn the_bpffs_mount_unit_mounts_where_the_loader_pins_readable_by_the_seat_user() {
    let unit = contrib("run-pawl-bpf.mount");
    assert_eq!(
        unit_values(&unit, "Mount", "Where"),
        [pawl_bpf::pins::PIN_ROOT]
    );
    assert_eq!(unit_values(&unit, "Mount", "Type"), ["bpf"]);
    // A mount unit's name is its escaped path (systemd.mount(5)).
    assert_eq!(
        pawl_bpf::pins::PIN_ROOT
            .trim_start_matches('/')
            .replace('/', "-")
            + ".mount",
        "run-pawl-bpf.mount"
    );
    // 0755: the seat user walks into their own 0700 device directory; nobody else may
    // write (the loader's check_pin_dir refuses a group- or other-writable root).
    let options = unit_values(&unit, "Mount", "Options").join(",");
    assert!(options.split(',').any(|o| o == "mode=0755"), "{options}");
    // Mounted before udev's coldplug replays `add` for the mice already bound.
    let before = unit_values(&unit, "Unit", "Before").join(" ");
    assert!(before.contains("systemd-udev-trigger.service"), "{before}");
    assert_eq!(
        unit_values(&unit, "Install", "WantedBy"),
        ["local-fs.target"]
    );
}

#[test]
fn the_udev_rule_attaches_at_coldplug_and_at_bind_and_detaches_at_remove() {
    let rules = contrib("71-pawl-kernel-mode.rules");
    let rule = |verb: &str| {
        rules
            .lines()
            .find(|l| !l.starts_with('#') && l.contains(&format!("pawl-kernel-attach {verb} %k")))
            .unwrap_or_else(|| panic!("no rule runs `{verb}`"))
            .to_owned()
    };
    let add = rule("add");
    assert!(
        add.starts_with(r#"ACTION=="add|bind", SUBSYSTEM=="hid", DRIVER=="logitech-hidpp-device""#),
        "{add}"
    );
    assert!(
        add.contains(r#"RUN+="/usr/libexec/pawl/pawl-kernel-attach add %k""#),
        "{add}"
    );
    let remove = rule("remove");
    assert!(
        remove.starts_with(r#"ACTION=="remove", SUBSYSTEM=="hid""#),
        "{remove}"
    );
}
