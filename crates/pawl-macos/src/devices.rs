//! The macOS device check: the pointer devices IOHIDManager lists, classified against the
//! MX Master family table. Unifying and Bolt receivers are reported as "receiver, may hold
//! an MX Master": macOS shows the receiver, not the mouse paired to it.
//!
//! `crate::sys` (macOS only) reads the devices; this module classifies and words them.

use std::fmt;

use pawl_engine::device::{Family, family};
use pawl_engine::{Bus, DeviceInfo};

use crate::senders::is_apple_continuous;

/// A HID device as IOHIDManager describes it (`kIOHIDProductKey`, `kIOHIDVendorIDKey`,
/// `kIOHIDProductIDKey`, `kIOHIDTransportKey`, primary usage page and usage).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HidDevice {
    /// Product name (empty when the device has none).
    pub name: String,
    /// Vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// Transport: `USB`, `Bluetooth`, `Bluetooth Low Energy`, `SPI`, …
    pub transport: String,
    /// Primary usage page (1 = Generic Desktop, 0x0D = Digitizer).
    pub usage_page: u32,
    /// Primary usage (2 = Mouse, 1 = Pointer, 5 = Touch Pad on the digitizer page).
    pub usage: u32,
}

/// What a device is to pawl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An MX Master (the table's name for it).
    MxMaster(&'static str),
    /// A Unifying or Bolt receiver: may hold an MX Master.
    Receiver(&'static str),
    /// A trackpad or Magic Mouse: never changed.
    Continuous,
    /// Any other pointer device.
    Other,
}

impl HidDevice {
    /// The bus in the engine's (Linux `BUS_*`) numbering: USB, Bluetooth (also LE), I2C
    /// for built-in SPI/I2C devices, else 0.
    pub fn bus(&self) -> Bus {
        let t = self.transport.to_ascii_lowercase();
        if t == "usb" {
            Bus::USB
        } else if t.starts_with("bluetooth") {
            Bus::BLUETOOTH
        } else if t == "spi" || t == "i2c" || t == "fifo" {
            Bus::I2C
        } else {
            Bus(0)
        }
    }

    /// The engine's view of the device, for [`pawl_engine::Config::decide`].
    pub fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.name.clone(),
            bus: self.bus(),
            vendor: self.vendor,
            product: self.product,
            has_wheel: true,
            is_touchpad: self.usage_page == 0x0D,
        }
    }

    /// Classifies the device.
    pub fn kind(&self) -> Kind {
        let info = self.info();
        match family(self.vendor, self.product) {
            Some(Family::MxMaster(name)) => Kind::MxMaster(name),
            Some(Family::Receiver(name)) => Kind::Receiver(name),
            None if info.is_touchpad || is_apple_continuous(&info) => Kind::Continuous,
            None => Kind::Other,
        }
    }
}

/// Every pointer device found, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceReport {
    /// The devices, in the order given (sorted by the caller).
    pub devices: Vec<(HidDevice, Kind)>,
}

impl DeviceReport {
    /// Classifies `devices`.
    pub fn new(devices: Vec<HidDevice>) -> DeviceReport {
        DeviceReport {
            devices: devices
                .into_iter()
                .map(|d| {
                    let k = d.kind();
                    (d, k)
                })
                .collect(),
        }
    }

    /// Whether an MX Master is connected directly (Bluetooth, USB cable).
    pub fn mx_master_present(&self) -> bool {
        self.devices
            .iter()
            .any(|(_, k)| matches!(k, Kind::MxMaster(_)))
    }

    /// Whether a receiver that may hold an MX Master is connected.
    pub fn receiver_present(&self) -> bool {
        self.devices
            .iter()
            .any(|(_, k)| matches!(k, Kind::Receiver(_)))
    }
}

impl fmt::Display for DeviceReport {
    /// One line per device: bus, vendor:product, name, what it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.devices.is_empty() {
            writeln!(f, "no pointer devices found")?;
        }
        for (d, kind) in &self.devices {
            let what = match kind {
                Kind::MxMaster(name) => format!("MX Master ({name})"),
                Kind::Receiver(name) => format!("receiver, may hold an MX Master ({name})"),
                Kind::Continuous => "trackpad / Magic Mouse: never changed".to_owned(),
                Kind::Other => "not an MX Master".to_owned(),
            };
            let name = if d.name.is_empty() {
                "(no name)"
            } else {
                &d.name
            };
            writeln!(
                f,
                "{:<9} {:04x}:{:04x}  {name}  — {what}",
                d.bus().name(),
                d.vendor,
                d.product
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, vendor: u16, product: u16, transport: &str) -> HidDevice {
        HidDevice {
            name: name.into(),
            vendor,
            product,
            transport: transport.into(),
            usage_page: 1,
            usage: 2,
        }
    }

    #[test]
    fn mx_master_over_bluetooth_is_found() {
        let r = DeviceReport::new(vec![dev(
            "MX Master 3S",
            0x046d,
            0xb034,
            "Bluetooth Low Energy",
        )]);
        assert!(r.mx_master_present());
        let text = r.to_string();
        assert!(
            text.contains("bluetooth 046d:b034  MX Master 3S  — MX Master (MX Master 3S)"),
            "{text}"
        );
    }

    #[test]
    fn bolt_receiver_is_reported_as_may_hold_an_mx_master() {
        let r = DeviceReport::new(vec![dev("USB Receiver", 0x046d, 0xc548, "USB")]);
        assert!(!r.mx_master_present());
        assert!(r.receiver_present());
        assert!(
            r.to_string()
                .contains("receiver, may hold an MX Master (Bolt receiver)")
        );
        let u = DeviceReport::new(vec![dev("USB Receiver", 0x046d, 0xc52b, "USB")]);
        assert!(u.to_string().contains("(Unifying receiver)"));
    }

    #[test]
    fn trackpads_and_other_mice_are_named_as_such() {
        let mut pad = dev("Apple Internal Keyboard / Trackpad", 0x05ac, 0x0342, "SPI");
        pad.usage_page = 0x0D;
        let r = DeviceReport::new(vec![
            pad,
            dev("Magic Mouse", 0x004c, 0x0269, "Bluetooth"),
            dev("USB Optical Mouse", 0x1bcf, 0x0005, "USB"),
        ]);
        let kinds: Vec<Kind> = r.devices.iter().map(|(_, k)| *k).collect();
        assert_eq!(kinds, vec![Kind::Continuous, Kind::Continuous, Kind::Other]);
        assert!(!r.mx_master_present());
        assert_eq!(
            DeviceReport::new(vec![]).to_string(),
            "no pointer devices found\n"
        );
    }
}
