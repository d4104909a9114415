//! Device identity and matching: the MX Master family table, device matchers and globs.

/// The bus a device is attached by, with the Linux `BUS_*` numbering
/// (`include/uapi/linux/input.h`), which macOS `Transport` strings are mapped onto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bus(pub u16);

impl Bus {
    /// `BUS_USB` (0x03).
    pub const USB: Bus = Bus(0x03);
    /// `BUS_BLUETOOTH` (0x05), also Bluetooth LE.
    pub const BLUETOOTH: Bus = Bus(0x05);
    /// `BUS_VIRTUAL` (0x06).
    pub const VIRTUAL: Bus = Bus(0x06);
    /// `BUS_I8042` (0x11): PS/2 touchpads and mice.
    pub const I8042: Bus = Bus(0x11);
    /// `BUS_I2C` (0x18): most laptop touchpads.
    pub const I2C: Bus = Bus(0x18);

    /// Parses `usb`, `bluetooth`, `virtual`, `i8042`/`ps2`, `i2c`, or a number
    /// (decimal or `0x` hex).
    pub fn parse(s: &str) -> Option<Bus> {
        let named = match s.to_ascii_lowercase().as_str() {
            "usb" => Some(Bus::USB),
            "bluetooth" | "bt" => Some(Bus::BLUETOOTH),
            "virtual" => Some(Bus::VIRTUAL),
            "i8042" | "ps2" => Some(Bus::I8042),
            "i2c" => Some(Bus::I2C),
            _ => None,
        };
        named.or_else(|| match s.strip_prefix("0x") {
            Some(hex) => u16::from_str_radix(hex, 16).ok().map(Bus),
            None => s.parse().ok().map(Bus),
        })
    }

    /// A short lowercase name (`usb`, `bluetooth`, …) or the number in hex.
    pub fn name(self) -> String {
        match self {
            Bus::USB => "usb".into(),
            Bus::BLUETOOTH => "bluetooth".into(),
            Bus::VIRTUAL => "virtual".into(),
            Bus::I8042 => "i8042".into(),
            Bus::I2C => "i2c".into(),
            Bus(n) => format!("0x{n:02x}"),
        }
    }
}

/// What a platform backend knows about an input device before deciding to handle it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device name (evdev `EVIOCGNAME`, IOKit `Product`).
    pub name: String,
    /// Bus type.
    pub bus: Bus,
    /// USB/Bluetooth vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// Whether the device reports a vertical or horizontal wheel.
    pub has_wheel: bool,
    /// Whether the device is a touchpad or other absolute/multitouch pointer (evdev
    /// `INPUT_PROP_POINTER` with `ABS_X`, or a macOS continuous-scroll device). Touchpads are
    /// never in a wheel scope.
    pub is_touchpad: bool,
}

/// Vendor id of Logitech.
pub const LOGITECH: u16 = 0x046d;

/// Where a product id sits in the MX Master family table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// An MX Master mouse (any generation), directly connected (Bluetooth) or as the child
    /// device of a receiver (Unifying wireless PID).
    MxMaster(&'static str),
    /// A Unifying or Bolt receiver: may hold an MX Master; its evdev node carries the
    /// receiver's id, so it matches only when its name says MX Master or a config rule says so.
    Receiver(&'static str),
}

/// The MX Master family table: (product id, family member). Vendor is always [`LOGITECH`].
///
/// Sources: the Linux kernel `drivers/hid/hid-logitech-hidpp.c` device table and
/// `hid-ids.h` (Bluetooth and receiver ids), Solaar's `descriptors.py` (Unifying
/// wireless PIDs), libinput's `quirks/` files.
pub const MX_MASTER_FAMILY: &[(u16, Family)] = &[
    (0xb012, Family::MxMaster("MX Master")),
    (0xb017, Family::MxMaster("MX Master")),
    (0xb01e, Family::MxMaster("MX Master")),
    (0x4041, Family::MxMaster("MX Master")),
    (0x4060, Family::MxMaster("MX Master")),
    (0x4071, Family::MxMaster("MX Master")),
    (0x4069, Family::MxMaster("MX Master 2S")),
    (0xb019, Family::MxMaster("MX Master 2S")),
    (0x4082, Family::MxMaster("MX Master 3")),
    (0xb023, Family::MxMaster("MX Master 3")),
    (0xb028, Family::MxMaster("MX Master 3 for Business")),
    (0xb034, Family::MxMaster("MX Master 3S")),
    (0xb042, Family::MxMaster("MX Master 4")),
    (0xb048, Family::MxMaster("MX Master 4 for Business")),
    (0xc52b, Family::Receiver("Unifying receiver")),
    (0xc532, Family::Receiver("Unifying receiver")),
    (0xc548, Family::Receiver("Bolt receiver")),
];

/// Looks `vendor:product` up in [`MX_MASTER_FAMILY`].
pub fn family(vendor: u16, product: u16) -> Option<Family> {
    if vendor != LOGITECH {
        return None;
    }
    MX_MASTER_FAMILY
        .iter()
        .find(|(p, _)| *p == product)
        .map(|(_, f)| *f)
}

/// Whether `info` is an MX Master by the family table: a member directly, or a receiver
/// whose device name says "MX Master" (hid-logitech-dj names children after the mouse).
pub fn is_mx_master(info: &DeviceInfo) -> bool {
    match family(info.vendor, info.product) {
        Some(Family::MxMaster(_)) => true,
        Some(Family::Receiver(_)) => info.name.to_ascii_lowercase().contains("mx master"),
        None => false,
    }
}

/// One device matcher from the config: every field that is set must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceMatcher {
    /// Shell-style glob on the device name (`*` any run, `?` one char), case-insensitive.
    pub name: Option<String>,
    /// Vendor id.
    pub vendor: Option<u16>,
    /// Product id; only meaningful with `vendor`.
    pub product: Option<u16>,
    /// Bus.
    pub bus: Option<Bus>,
}

impl DeviceMatcher {
    /// Whether every set field matches `info`.
    pub fn matches(&self, info: &DeviceInfo) -> bool {
        self.name
            .as_deref()
            .is_none_or(|g| glob_match(g, &info.name))
            && self.vendor.is_none_or(|v| v == info.vendor)
            && self.product.is_none_or(|p| p == info.product)
            && self.bus.is_none_or(|b| b == info.bus)
    }
}

/// Case-insensitive shell glob: `*` matches any run (also empty), `?` one character,
/// everything else itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().flat_map(char::to_lowercase).collect();
    let t: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
    // Iterative matcher with single backtrack point: linear in practice, no recursion.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, vendor: u16, product: u16, bus: Bus) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            bus,
            vendor,
            product,
            has_wheel: true,
            is_touchpad: false,
        }
    }

    #[test]
    fn every_family_product_is_an_mx_master_or_a_receiver() {
        assert_eq!(MX_MASTER_FAMILY.len(), 17);
        for (pid, fam) in MX_MASTER_FAMILY {
            assert_eq!(family(LOGITECH, *pid), Some(*fam));
            assert_eq!(family(0x1234, *pid), None);
        }
    }

    #[test]
    fn mx_master_3s_bluetooth_is_mx_master() {
        assert!(is_mx_master(&dev(
            "Logitech MX Master 3S Mouse",
            LOGITECH,
            0xb034,
            Bus::BLUETOOTH
        )));
    }

    #[test]
    fn receiver_matches_only_when_name_says_mx_master() {
        assert!(!is_mx_master(&dev(
            "Logitech USB Receiver",
            LOGITECH,
            0xc548,
            Bus::USB
        )));
        assert!(is_mx_master(&dev(
            "Logitech MX Master 3S",
            LOGITECH,
            0xc548,
            Bus::USB
        )));
    }

    #[test]
    fn other_logitech_mice_are_not_mx_master() {
        assert!(!is_mx_master(&dev(
            "Logitech MX Anywhere 3",
            LOGITECH,
            0x4090,
            Bus::USB
        )));
    }

    #[test]
    fn glob_matches_like_a_shell() {
        assert!(glob_match("*MX Master*", "Logitech MX Master 3S Mouse"));
        assert!(glob_match("*mx master*", "Logitech MX Master 3S Mouse"));
        assert!(glob_match("Logitech ?X*", "Logitech MX Master"));
        assert!(!glob_match("*Trackpad", "Logitech MX Master"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }

    #[test]
    fn matcher_requires_every_set_field() {
        let d = dev(
            "Logitech MX Master 3S Mouse",
            LOGITECH,
            0xb034,
            Bus::BLUETOOTH,
        );
        let m = DeviceMatcher {
            vendor: Some(LOGITECH),
            product: Some(0xb034),
            bus: Some(Bus::USB),
            ..Default::default()
        };
        assert!(!m.matches(&d));
        let m = DeviceMatcher {
            bus: Some(Bus::BLUETOOTH),
            ..m
        };
        assert!(m.matches(&d));
    }

    #[test]
    fn bus_names_parse() {
        assert_eq!(Bus::parse("bluetooth"), Some(Bus::BLUETOOTH));
        assert_eq!(Bus::parse("0x18"), Some(Bus::I2C));
        assert_eq!(Bus::parse("3"), Some(Bus::USB));
        assert_eq!(Bus::parse("serial-ish"), None);
    }
}
