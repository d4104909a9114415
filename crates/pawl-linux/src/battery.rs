//! Logitech mice's batteries as the kernel reports them: `hid-logitech-hidpp` registers a
//! power supply `hidpp_battery_N` under the mouse's HID device
//! (`/sys/class/power_supply/hidpp_battery_*/`, files `capacity` or `capacity_level`,
//! `status`, `model_name`, and the `device` link to the HID device). pawl only reads
//! them: it never asks the mouse over HID++ (the kernel's driver owns the battery
//! features there).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where the kernel lists power supplies.
pub const SYS_CLASS_POWER_SUPPLY: &str = "/sys/class/power_supply";
/// The most bytes read from one attribute file (64: a capacity, status or model name is
/// far shorter).
pub const MAX_ATTR_BYTES: u64 = 64;
/// The most power supplies looked at (256).
pub const MAX_SUPPLIES: usize = 256;
/// The kernel's name prefix of a HID++ battery (`hid-logitech-hidpp.c`, `"hidpp_battery_%ld"`).
pub const HIDPP_BATTERY_PREFIX: &str = "hidpp_battery_";

/// One HID++ battery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Battery {
    /// The power supply's name (`hidpp_battery_0`).
    pub supply: String,
    /// `model_name` (the mouse's name), empty if absent.
    pub model: String,
    /// `capacity`, percent (0..=100), when the mouse reports percentages.
    pub capacity: Option<u8>,
    /// `capacity_level` (`Critical`, `Low`, `Normal`, `High`, `Full`) when it reports levels.
    pub level: Option<String>,
    /// `status`: `Charging`, `Discharging`, `Full`, `Not charging` or `Unknown`.
    pub status: Option<String>,
    /// The HID device the supply belongs to (its `device` link resolved).
    pub hid_dir: Option<PathBuf>,
}

impl Battery {
    /// A battery from its attribute files' contents (`None`: file absent or unreadable).
    /// A capacity that is not a number 0..=100 and a level of `Unknown` count as absent.
    pub fn parse(
        supply: &str,
        capacity: Option<&str>,
        level: Option<&str>,
        status: Option<&str>,
        model: Option<&str>,
    ) -> Battery {
        let clean = |s: Option<&str>| {
            s.map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s.chars().filter(|c| !c.is_control()).collect::<String>())
        };
        Battery {
            supply: supply.to_owned(),
            model: clean(model).unwrap_or_default(),
            capacity: capacity
                .and_then(|c| c.trim().parse::<u8>().ok())
                .filter(|&c| c <= 100),
            level: clean(level).filter(|l| l != "Unknown"),
            status: clean(status),
            hid_dir: None,
        }
    }
}

/// The battery of the device behind `dev_path` (`/dev/hidrawN` or `/dev/input/eventN`)
/// among `batteries` ([`scan`]): the one whose HID device holds the node in sysfs (its
/// `hid_dir` an ancestor of `<sys>/class/hidraw/hidrawN` or `<sys>/class/input/eventN`
/// resolved). `sys` is normally `/sys`. `None` for another path, a node sysfs does not
/// know, or a device without a HID++ battery (one behind a receiver has its own, under
/// the receiver's child device).
pub fn for_node<'a>(sys: &Path, batteries: &'a [Battery], dev_path: &str) -> Option<&'a Battery> {
    let name = Path::new(dev_path).file_name()?.to_str()?;
    let class = if dev_path.starts_with("/dev/hidraw") {
        "hidraw"
    } else if dev_path.starts_with("/dev/input/event") {
        "input"
    } else {
        return None;
    };
    let node = fs::canonicalize(sys.join("class").join(class).join(name)).ok()?;
    batteries
        .iter()
        .find(|b| b.hid_dir.as_ref().is_some_and(|h| node.starts_with(h)))
}

/// Reads at most [`MAX_ATTR_BYTES`] of `path`; `None` when it cannot be read.
fn read_attr(path: &Path) -> Option<String> {
    let mut buf = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(MAX_ATTR_BYTES)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The HID++ batteries under `root` (normally [`SYS_CLASS_POWER_SUPPLY`]), sorted by
/// name; at most [`MAX_SUPPLIES`] entries of `root` are looked at. Unreadable entries are
/// skipped; a missing `root` gives none.
pub fn scan(root: &Path) -> Vec<Battery> {
    let Ok(dir) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut res: Vec<Battery> = dir
        .take(MAX_SUPPLIES)
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            if !name.starts_with(HIDPP_BATTERY_PREFIX) {
                return None;
            }
            let d = e.path();
            let attr = |f: &str| read_attr(&d.join(f));
            let mut b = Battery::parse(
                &name,
                attr("capacity").as_deref(),
                attr("capacity_level").as_deref(),
                attr("status").as_deref(),
                attr("model_name").as_deref(),
            );
            b.hid_dir = fs::canonicalize(d.join("device")).ok();
            Some(b)
        })
        .collect();
    res.sort_by(|a, b| a.supply.cmp(&b.supply));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn supply(root: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let d = root.join(name);
        fs::create_dir_all(&d).unwrap();
        for (f, text) in files {
            fs::write(d.join(f), text).unwrap();
        }
        d
    }

    #[test]
    fn hidpp_batteries_are_read_with_their_device_and_others_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("power_supply");
        let hid = tmp.path().join("devices/0005:046D:B034.0001");
        fs::create_dir_all(&hid).unwrap();
        let d = supply(
            &root,
            "hidpp_battery_0",
            &[
                ("capacity", "80\n"),
                ("status", "Discharging\n"),
                ("model_name", "MX Master 3S\n"),
            ],
        );
        std::os::unix::fs::symlink(&hid, d.join("device")).unwrap();
        supply(
            &root,
            "hidpp_battery_1",
            &[("capacity_level", "Normal\n"), ("status", "Charging\n")],
        );
        supply(&root, "BAT0", &[("capacity", "50\n")]);
        let b = scan(&root);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].model, "MX Master 3S");
        assert_eq!(b[0].capacity, Some(80));
        assert_eq!(b[0].status.as_deref(), Some("Discharging"));
        assert_eq!(b[0].hid_dir, Some(fs::canonicalize(&hid).unwrap()));
        assert_eq!(b[1].level.as_deref(), Some("Normal"));
        assert_eq!(b[1].status.as_deref(), Some("Charging"));
        assert_eq!(b[1].hid_dir, None);
        assert!(scan(&tmp.path().join("absent")).is_empty());
    }

    #[test]
    fn a_node_finds_the_battery_of_the_hid_device_that_holds_it() {
        // sysfs as the kernel lays it out: the class links point into the HID device's
        // directory (hidraw and input nodes under it), the supply's `device` link at it.
        let tmp = tempfile::tempdir().unwrap();
        let sys = tmp.path().join("sys");
        let hid = sys.join("devices/virtual/misc/uhid/0005:046D:B034.0001");
        let other = sys.join("devices/virtual/misc/uhid/0003:093A:2510.0002");
        for d in [
            hid.join("hidraw/hidraw0"),
            hid.join("input/input5/event3"),
            other.join("input/input6/event4"),
        ] {
            fs::create_dir_all(d).unwrap();
        }
        fs::create_dir_all(sys.join("class/hidraw")).unwrap();
        fs::create_dir_all(sys.join("class/input")).unwrap();
        let link = |target: PathBuf, at: &str| {
            std::os::unix::fs::symlink(target, sys.join("class").join(at)).unwrap()
        };
        link(hid.join("hidraw/hidraw0"), "hidraw/hidraw0");
        link(hid.join("input/input5/event3"), "input/event3");
        link(other.join("input/input6/event4"), "input/event4");
        let root = sys.join("class/power_supply");
        let d = supply(&root, "hidpp_battery_0", &[("capacity", "45\n")]);
        std::os::unix::fs::symlink(&hid, d.join("device")).unwrap();
        let batteries = scan(&root);
        let found = |p: &str| for_node(&sys, &batteries, p).map(|b| b.supply.as_str());
        assert_eq!(found("/dev/hidraw0"), Some("hidpp_battery_0"));
        assert_eq!(found("/dev/input/event3"), Some("hidpp_battery_0"));
        assert_eq!(found("/dev/input/event4"), None, "another device");
        assert_eq!(found("/dev/input/event9"), None, "not in sysfs");
        assert_eq!(found("/tmp/hidraw0"), None, "not a device node");
    }

    #[test]
    fn a_long_or_odd_attribute_is_read_only_as_far_as_the_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let long = "x".repeat(4096);
        supply(
            tmp.path(),
            "hidpp_battery_7",
            &[("model_name", &long), ("capacity", "250\n")],
        );
        let b = &scan(tmp.path())[0];
        assert_eq!(b.model.len(), MAX_ATTR_BYTES as usize);
        assert_eq!(b.capacity, None, "250 % is not a capacity");
        assert_eq!((b.capacity, &b.level), (None, &None));
    }

    #[test]
    fn unknown_levels_and_control_characters_are_dropped() {
        let b = Battery::parse(
            "hidpp_battery_0",
            None,
            Some("Unknown\n"),
            Some("Full\n"),
            Some("MX\x1b[31m Master\n"),
        );
        assert_eq!(b.level, None);
        assert_eq!(b.model, "MX[31m Master");
        assert_eq!(b.status.as_deref(), Some("Full"));
    }
}
