//! Device discovery from sysfs, without opening a device: `/sys/class/input/eventN/device/`
//! holds the name, phys, ids and capability bitmaps of every evdev node, readable by
//! anyone. pawl decides from these which nodes it may open (pointers only) and which it
//! handles, so a keyboard's node is never opened.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use pawl_engine::{Bus, DeviceInfo};

use crate::caps::{Caps, Kind, parse_sysfs_bitmap};

/// Where the kernel lists evdev nodes.
pub const SYS_CLASS_INPUT: &str = "/sys/class/input";
/// Where the device nodes live.
pub const DEV_INPUT: &str = "/dev/input";
/// The `phys` prefix of pawl's own virtual devices (`pawl/<source phys>`, `pawl/keyboard`):
/// pawl never opens them, and other tools can recognize them.
pub const PAWL_PHYS_PREFIX: &str = "pawl/";

/// What sysfs says about one evdev node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysDevice {
    /// The node name, `eventN`.
    pub node: String,
    /// The device name (`device/name`).
    pub name: String,
    /// The physical path (`device/phys`), e.g. `usb-0000:00:14.0-2/input0`; may be empty.
    pub phys: String,
    /// Bus (`device/id/bustype`).
    pub bus: u16,
    /// Vendor id (`device/id/vendor`).
    pub vendor: u16,
    /// Product id (`device/id/product`).
    pub product: u16,
    /// Version (`device/id/version`).
    pub version: u16,
    /// Capability bitmaps (`device/capabilities/*`, `device/properties`).
    pub caps: Caps,
}

impl SysDevice {
    /// Whether the node belongs to one of pawl's own virtual devices.
    pub fn is_pawl_device(&self) -> bool {
        self.phys.starts_with(PAWL_PHYS_PREFIX)
    }

    /// The pointer classification of its capabilities.
    pub fn kind(&self) -> Kind {
        self.caps.kind()
    }

    /// The identity the engine's config matches against.
    pub fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.name.clone(),
            bus: Bus(self.bus),
            vendor: self.vendor,
            product: self.product,
            has_wheel: self.caps.has_wheel(),
            is_touchpad: self.kind() == Kind::AbsolutePointer,
        }
    }

    /// The device node path, `/dev/input/eventN`.
    pub fn dev_path(&self) -> PathBuf {
        Path::new(DEV_INPUT).join(&self.node)
    }
}

/// Whether `name` is an evdev node name (`event` followed by digits).
pub fn is_event_node(name: &str) -> bool {
    name.strip_prefix("event")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The `eventN` names under `class_dir` (normally [`SYS_CLASS_INPUT`]), sorted by number.
///
/// Errors: `class_dir` cannot be listed (sysfs not mounted).
pub fn event_nodes(class_dir: &Path) -> io::Result<Vec<String>> {
    let mut nodes: Vec<String> = fs::read_dir(class_dir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| is_event_node(n))
        .collect();
    nodes.sort_by_key(|n| n[5..].parse::<u32>().unwrap_or(u32::MAX));
    Ok(nodes)
}

/// Reads `class_dir/<node>/device/…`.
///
/// Errors: a file is missing or unreadable (the device vanished while being read), or a
/// value is malformed (`InvalidData`, naming the file).
pub fn read_device(class_dir: &Path, node: &str) -> io::Result<SysDevice> {
    let dev = class_dir.join(node).join("device");
    let text = |rel: &str| -> io::Result<String> {
        let s = fs::read_to_string(dev.join(rel))?;
        Ok(s.trim_end_matches('\n').to_owned())
    };
    let hex = |rel: &str| -> io::Result<u16> {
        let s = text(rel)?;
        u16::from_str_radix(s.trim(), 16).map_err(|_| bad(&dev.join(rel), &s))
    };
    let long_bits = usize::BITS;
    let bitmap_text = |rel: &str| -> io::Result<String> {
        match text(rel) {
            // Only some capability files exist on older kernels; absent means empty.
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
            r => r,
        }
    };
    macro_rules! bitmap {
        ($rel:expr) => {{
            let s = bitmap_text($rel)?;
            parse_sysfs_bitmap(&s, long_bits).ok_or_else(|| bad(&dev.join($rel), &s))?
        }};
    }
    let caps = Caps {
        ev: bitmap!("capabilities/ev"),
        key: bitmap!("capabilities/key"),
        rel: bitmap!("capabilities/rel"),
        abs: bitmap!("capabilities/abs"),
        msc: bitmap!("capabilities/msc"),
        props: bitmap!("properties"),
    };
    Ok(SysDevice {
        node: node.to_owned(),
        name: text("name")?,
        phys: match text("phys") {
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            r => r?,
        },
        bus: hex("id/bustype")?,
        vendor: hex("id/vendor")?,
        product: hex("id/product")?,
        version: hex("id/version")?,
        caps,
    })
}

/// The `eventN` node of the input device `inputN` (a uinput device's sysname, from
/// `UI_GET_SYSNAME`), from `class_dir/<inputN>/`.
pub fn event_node_of(class_dir: &Path, input: &str) -> Option<String> {
    fs::read_dir(class_dir.join(input))
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .find(|n| is_event_node(n))
}

fn bad(path: &Path, value: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("unexpected value {value:?} in {}", path.display()),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pawl_evdev::codes::*;

    /// Writes a fake `/sys/class/input/<node>` with the given files.
    pub(crate) fn fixture(class_dir: &Path, node: &str, files: &[(&str, &str)]) {
        let dev = class_dir.join(node).join("device");
        for (rel, content) in files {
            let p = dev.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, format!("{content}\n")).unwrap();
        }
    }

    /// An MX Master 3S over Bluetooth as hid-generic presents it: mouse buttons, motion,
    /// both wheels with hi-res, MSC_SCAN, and some consumer keys on the same node.
    pub(crate) const MX_MASTER_3S: &[(&str, &str)] = &[
        ("name", "Logitech MX Master 3S"),
        ("phys", "00:1a:7d:da:71:13"),
        ("id/bustype", "0005"),
        ("id/vendor", "046d"),
        ("id/product", "b034"),
        ("id/version", "0017"),
        ("capabilities/ev", "17"),
        ("capabilities/key", "ff0000 0 0 1000002000000 0"),
        ("capabilities/rel", "1943"),
        ("capabilities/abs", "0"),
        ("capabilities/msc", "10"),
        ("properties", "0"),
    ];

    pub(crate) const KEYBOARD: &[(&str, &str)] = &[
        ("name", "AT Translated Set 2 keyboard"),
        ("phys", "isa0060/serio0/input0"),
        ("id/bustype", "0011"),
        ("id/vendor", "0001"),
        ("id/product", "0001"),
        ("id/version", "ab41"),
        ("capabilities/ev", "120013"),
        (
            "capabilities/key",
            "402000000 3803078f800d001 feffffdfffefffff fffffffffffffffe",
        ),
        ("capabilities/rel", "0"),
        ("capabilities/abs", "0"),
        ("capabilities/msc", "10"),
        ("properties", "0"),
    ];

    pub(crate) const TOUCHPAD: &[(&str, &str)] = &[
        ("name", "SynPS/2 Synaptics TouchPad"),
        ("phys", "isa0060/serio1/input0"),
        ("id/bustype", "0011"),
        ("id/vendor", "0002"),
        ("id/product", "0007"),
        ("id/version", "01b1"),
        ("capabilities/ev", "b"),
        ("capabilities/key", "e520 10000 0 0 0 0"),
        ("capabilities/rel", "0"),
        ("capabilities/abs", "660800011000003"),
        ("properties", "5"),
    ];

    #[test]
    fn reads_an_mx_master_from_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path(), "event7", MX_MASTER_3S);
        let d = read_device(dir.path(), "event7").unwrap();
        assert_eq!(d.name, "Logitech MX Master 3S");
        assert_eq!(
            (d.bus, d.vendor, d.product, d.version),
            (5, 0x046d, 0xb034, 0x17)
        );
        assert_eq!(d.kind(), Kind::Mouse);
        assert!(d.caps.key.get(BTN_LEFT) && d.caps.key.get(BTN_TASK));
        assert!(d.caps.rel.get(REL_WHEEL_HI_RES) && d.caps.rel.get(REL_HWHEEL_HI_RES));
        assert!(d.caps.msc.get(MSC_SCAN));
        let info = d.info();
        assert!(info.has_wheel && !info.is_touchpad);
        assert_eq!(info.bus, Bus::BLUETOOTH);
        assert_eq!(d.dev_path(), Path::new("/dev/input/event7"));
    }

    #[test]
    fn keyboard_from_sysfs_is_not_a_pointer_and_touchpad_is_absolute() {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path(), "event3", KEYBOARD);
        fixture(dir.path(), "event12", TOUCHPAD);
        assert_eq!(
            read_device(dir.path(), "event3").unwrap().kind(),
            Kind::Other
        );
        let tp = read_device(dir.path(), "event12").unwrap();
        assert_eq!(tp.kind(), Kind::AbsolutePointer);
        assert!(tp.info().is_touchpad);
        // The touchpad has no msc file: absent capability files mean empty.
        assert!(tp.caps.msc.is_empty());
    }

    #[test]
    fn event_nodes_are_listed_in_numeric_order_without_other_entries() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["event10", "event2", "mouse0", "input5", "event", "eventX"] {
            fs::create_dir_all(dir.path().join(n)).unwrap();
        }
        assert_eq!(event_nodes(dir.path()).unwrap(), vec!["event2", "event10"]);
    }

    #[test]
    fn pawl_devices_are_recognized_by_phys() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = MX_MASTER_3S.to_vec();
        files[1] = ("phys", "pawl/00:1a:7d:da:71:13");
        fixture(dir.path(), "event9", &files);
        assert!(read_device(dir.path(), "event9").unwrap().is_pawl_device());
        fixture(dir.path(), "event7", MX_MASTER_3S);
        assert!(!read_device(dir.path(), "event7").unwrap().is_pawl_device());
    }

    #[test]
    fn malformed_id_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = MX_MASTER_3S.to_vec();
        files[4] = ("id/product", "mouse");
        fixture(dir.path(), "event7", &files);
        let err = read_device(dir.path(), "event7").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("id/product"), "{err}");
    }

    #[test]
    fn uinput_sysname_leads_to_its_event_node() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("input42/event17")).unwrap();
        fs::create_dir_all(dir.path().join("input42/mouse3")).unwrap();
        assert_eq!(
            event_node_of(dir.path(), "input42").as_deref(),
            Some("event17")
        );
        assert_eq!(event_node_of(dir.path(), "input43"), None);
    }
}
