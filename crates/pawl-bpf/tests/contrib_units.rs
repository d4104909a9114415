//! The files that run the loader agree with each other and with the loader: the udev rule
//! and the reseat service run the executable where the package installs it, the rule at
//! coldplug and at bind, the service runs `reseat` only while the loader's bpffs exists,
//! the path unit watches the file the loader reads the seat user from, and the bpffs mount
//! unit mounts where the loader pins. (Read as text: `systemd-analyze verify` needs a
//! systemd, which a build machine may lack; the VM checks the units with it.)
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};

use pawl_bpf::{attach, pins};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The values of `key=` in `[section]` of a systemd unit's text, in order.
fn unit_values(text: &str, section: &str, key: &str) -> Vec<String> {
    let mut current = "";
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name;
        } else if current == section
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            out.push(v.trim().to_owned());
        }
    }
    out
}

/// Where the package installs each of its assets whose source ends in `source_tail`:
/// the destination (a directory ending in `/` gets the source's file name), absolute.
fn installed(source_tail: &str) -> Vec<String> {
    let manifest: toml::Table = read("crates/pawl/Cargo.toml").parse().unwrap();
    let assets = manifest["package"]["metadata"]["deb"]["assets"]
        .as_array()
        .expect("cargo-deb assets");
    assets
        .iter()
        .filter_map(|a| {
            let a = a.as_array()?;
            let (src, dest) = (a.first()?.as_str()?, a.get(1)?.as_str()?);
            let name = src.rsplit('/').next()?;
            src.ends_with(source_tail).then(|| {
                if dest.ends_with('/') {
                    format!("/{dest}{name}")
                } else {
                    format!("/{dest}")
                }
            })
        })
        .collect()
}

#[test]
fn the_udev_rule_and_the_reseat_service_run_the_loader_the_package_installs() {
    let loader = installed("target/release/pawl-kernel-attach");
    assert_eq!(
        loader,
        ["/usr/libexec/pawl/pawl-kernel-attach"],
        "one loader"
    );
    let loader = &loader[0];

    let rule = read("contrib/71-pawl-kernel-mode.rules");
    let runs: Vec<&str> = rule
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split("RUN+=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        runs,
        [format!("{loader} add %k"), format!("{loader} remove %k")],
        "the udev rule's RUN"
    );

    let service = read("contrib/pawl-kernel-reseat.service");
    assert_eq!(
        unit_values(&service, "Service", "ExecStart"),
        [format!("{loader} reseat")]
    );
    assert_eq!(unit_values(&service, "Service", "Type"), ["oneshot"]);
    // Skipped, at no cost, while the loader's bpffs is not there: nothing is attached.
    assert_eq!(
        unit_values(&service, "Unit", "ConditionPathIsDirectory"),
        [pins::PIN_ROOT]
    );
}

#[test]
fn the_path_unit_watches_the_seat_file_the_loader_reads_and_starts_the_reseat_service() {
    let path = read("contrib/pawl-kernel-reseat.path");
    assert_eq!(
        unit_values(&path, "Path", "PathChanged"),
        [
            attach::SEAT0_STATE.to_owned(),
            format!("{}/", attach::SEATS_DIR)
        ]
    );
    assert_eq!(
        attach::seat_state_path(attach::DEFAULT_SEAT),
        std::path::Path::new(attach::SEAT0_STATE)
    );
    for other in [
        "PathExists",
        "PathExistsGlob",
        "PathModified",
        "DirectoryNotEmpty",
    ] {
        assert!(unit_values(&path, "Path", other).is_empty(), "{other}=");
    }
    // No Unit=: a path unit starts the service of its own name.
    assert!(unit_values(&path, "Path", "Unit").is_empty());
    assert!(repo().join("contrib/pawl-kernel-reseat.service").is_file());
    assert_eq!(unit_values(&path, "Install", "WantedBy"), ["paths.target"]);
}

#[test]
fn the_package_installs_the_kernel_mode_units_as_system_units() {
    for unit in [
        "run-pawl-bpf.mount",
        "pawl-kernel-reseat.path",
        "pawl-kernel-reseat.service",
    ] {
        assert_eq!(
            installed(&format!("contrib/{unit}")),
            [format!("/usr/lib/systemd/system/{unit}")]
        );
    }
}

#[test]
fn the_bpffs_mount_unit_mounts_where_the_loader_pins_readable_by_the_seat_user() {
    let unit = read("contrib/run-pawl-bpf.mount");
    assert_eq!(unit_values(&unit, "Mount", "Where"), [pins::PIN_ROOT]);
    assert_eq!(unit_values(&unit, "Mount", "Type"), ["bpf"]);
    // A mount unit's name is its escaped path (systemd.mount(5)).
    assert_eq!(
        pins::PIN_ROOT.trim_start_matches('/').replace('/', "-") + ".mount",
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
    let rules = read("contrib/71-pawl-kernel-mode.rules");
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
    let remove = rule("remove");
    assert!(
        remove.starts_with(r#"ACTION=="remove", SUBSYSTEM=="hid""#),
        "{remove}"
    );
}
