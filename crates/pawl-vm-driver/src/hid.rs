//! MX Master mice as uhid devices built from the real report descriptors in
//! `../shared/recordings`, and their input report 2 layouts.
//!
//! Layouts, from `hidreport--rdescs-decoded.txt`:
//! - MX Master 3S over Bluetooth (0005:046d:b034): report id 2, 16 buttons (1 bit each),
//!   X and Y 12-bit relative (−2047..2047), Wheel 8-bit, AC Pan 8-bit: 8 bytes.
//! - Logi Bolt receiver (0003:046d:c548), mouse interface: report id 2, 16 buttons, X and Y
//!   16-bit relative (−32767..32767), Wheel 8-bit, AC Pan 8-bit: 9 bytes.
//!
//! hid-input maps Button N of a mouse application to `BTN_MOUSE + N - 1`
//! (`hidinput_configure_usage`, `HID_UP_BUTTON`), so bit n of the button field is pawl's
//! button n: bit 3 `BTN_SIDE` (back), bit 4 `BTN_EXTRA` (forward), bit 5 `BTN_FORWARD` (the
//! default gesture button). Wheel and AC Pan become `REL_WHEEL_HI_RES` ±120 per detent with
//! `REL_WHEEL` ±1 (and the `HWHEEL` pair), as the descriptors have no Resolution Multiplier.
//!
//! With the kernel's Logitech drivers loaded (as on a user's machine), hid-logitech-hidpp
//! binds the MX Master 3S (its module alias `hid:b0005g*v0000046Dp0000B034`), probes it over
//! HID++ and sets the 0x2121 wheel to high resolution: the wheel field then counts 1/15
//! detents and the driver makes `REL_WHEEL_HI_RES` 8 per count, `REL_WHEEL` at half a
//! detent (`hidpp_scroll_counter_handle_scroll`). A model with [`MouseModel::hidpp`] gets
//! the HID++ device model (`pawl_hidpp::emulator`) answering on the uhid device's own
//! thread from creation on ([`crate::hidpp_emu`]), and [`HidMouse::wheel`] sends what the
//! real mouse sends in the wheel mode the driver set. hid-generic keeps every other device
//! (the Bolt receiver: no Debian kernel's hid-logitech-dj lists c548).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use pawl_evdev::codes::{EV_REL, REL_X};

use crate::evdev::{self, NodeInfo};
use crate::hidpp_emu::{self, BLUETOOTH, HidppShared};
use crate::uhid::{BUS_BLUETOOTH, BUS_USB, UhidDevice, UhidSpec};
use pawl_hidpp::emulator::Emulator;
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing};

/// A mouse model: descriptor file, identity and report layout.
#[derive(Clone, Copy, Debug)]
pub struct MouseModel {
    /// File name under the recordings directory.
    pub rdesc_file: &'static str,
    /// HID device name.
    pub name: &'static str,
    /// `BUS_*`.
    pub bus: u16,
    /// Vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// Bits of each of X and Y in report 2 (12 or 16).
    pub xy_bits: u32,
    /// Speaks HID++: the device model that answers on its report 0x11, made for a
    /// Bluetooth node (long reports only, device index 0xFF). The kernel's
    /// hid-logitech-hidpp binds it where its table lists the product id.
    pub hidpp: Option<fn(Framing, u8) -> Emulator>,
}

/// MX Master 3S over Bluetooth LE. The name is what the mouse advertises over BLE.
pub const MX_MASTER_3S_BT: MouseModel = MouseModel {
    rdesc_file: "hidreport--libinput-issue996-0005-046D-B034-0.rdesc",
    name: "MX Master 3S",
    bus: BUS_BLUETOOTH,
    vendor: 0x046d,
    product: 0xb034,
    xy_bits: 12,
    hidpp: Some(Emulator::mx_master_3s),
};

/// MX Master 4 over Bluetooth LE (046d:b042, Solaar's `MX Master 4.text`), with the 3S's
/// Bluetooth descriptor: no descriptor of the 4 is recorded. The name is the one its HID++
/// 0x0005 gives (Solaar's record).
pub const MX_MASTER_4_BT: MouseModel = MouseModel {
    rdesc_file: "hidreport--libinput-issue996-0005-046D-B034-0.rdesc",
    name: "MX Master 4",
    bus: BUS_BLUETOOTH,
    vendor: 0x046d,
    product: 0xb042,
    xy_bits: 12,
    hidpp: Some(Emulator::mx_master_4),
};

/// MX Master 2S over Bluetooth LE (046d:b019, Solaar's `Wireless Mouse MX Master 2S
/// B019.txt`), with the 3S's Bluetooth descriptor: no descriptor of the 2S over Bluetooth
/// is recorded. The name is the one its HID++ 0x0005 gives.
pub const MX_MASTER_2S_BT: MouseModel = MouseModel {
    rdesc_file: "hidreport--libinput-issue996-0005-046D-B034-0.rdesc",
    name: "Wireless Mouse MX Master 2S",
    bus: BUS_BLUETOOTH,
    vendor: 0x046d,
    product: 0xb019,
    xy_bits: 12,
    hidpp: Some(Emulator::mx_master_2s),
};

/// Logi Bolt receiver, mouse interface, as hid-generic sees it (no hid-logitech-dj). The
/// name is the receiver's USB manufacturer + product strings.
pub const BOLT_RECEIVER: MouseModel = MouseModel {
    rdesc_file: "hidreport--libinput-issue996-0003-046D-C548-0.rdesc",
    name: "Logitech USB Receiver",
    bus: BUS_USB,
    vendor: 0x046d,
    product: 0xc548,
    xy_bits: 16,
    hidpp: None,
};

/// Pawl's default gesture button (0-based: `BTN_FORWARD - BTN_MOUSE`).
pub const GESTURE_BUTTON: u8 = 5;

/// The fields of input report 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MouseReport {
    /// Button bitmap, bit n = pawl button n.
    pub buttons: u16,
    /// Motion, device units (px).
    pub dx: i32,
    /// Motion, device units (px); negative is up.
    pub dy: i32,
    /// Wheel detents; positive is away from the user (scroll up).
    pub wheel: i8,
    /// AC Pan detents; positive is right.
    pub pan: i8,
}

impl MouseModel {
    /// The bytes of report 2 for `r`.
    pub fn encode(&self, r: &MouseReport) -> anyhow::Result<Vec<u8>> {
        let max = (1i32 << (self.xy_bits - 1)) - 1;
        if r.dx.abs() > max || r.dy.abs() > max {
            bail!(
                "motion ({}, {}) outside ±{max} of {}-bit X/Y",
                r.dx,
                r.dy,
                self.xy_bits
            );
        }
        let mut out = vec![0x02];
        out.extend_from_slice(&r.buttons.to_le_bytes());
        match self.xy_bits {
            12 => {
                let packed = (r.dx as u32 & 0xfff) | ((r.dy as u32 & 0xfff) << 12);
                out.extend_from_slice(&packed.to_le_bytes()[..3]);
            }
            16 => {
                out.extend_from_slice(&(r.dx as i16).to_le_bytes());
                out.extend_from_slice(&(r.dy as i16).to_le_bytes());
            }
            bits => bail!("no layout for {bits}-bit X/Y"),
        }
        out.push(r.wheel as u8);
        out.push(r.pan as u8);
        Ok(out)
    }
}

/// A uhid mouse of a [`MouseModel`] with its button state.
#[derive(Debug)]
pub struct HidMouse {
    dev: UhidDevice,
    model: MouseModel,
    buttons: u16,
    hidpp: Option<HidppShared>,
}

impl HidMouse {
    /// Creates the uhid device from the model's descriptor in `recordings`, with `phys`.
    pub fn create(model: MouseModel, recordings: &Path, phys: &str) -> anyhow::Result<HidMouse> {
        let path = recordings.join(model.rdesc_file);
        let rdesc = std::fs::read(&path).with_context(|| format!("read {}", path.display()))?;
        let hidpp = model
            .hidpp
            .map(|make| hidpp_emu::shared(make(BLUETOOTH, DEVICE_INDEX_DIRECT)));
        let responder = hidpp.clone().map(hidpp_emu::responder);
        let dev = UhidDevice::create_with(
            UhidSpec {
                name: model.name.into(),
                phys: phys.into(),
                uniq: String::new(),
                bus: model.bus,
                vendor: model.vendor.into(),
                product: model.product.into(),
                version: 0x0001,
                rdesc,
            },
            responder,
        )?;
        Ok(HidMouse {
            dev,
            model,
            buttons: 0,
            hidpp,
        })
    }

    /// The HID++ device model behind the mouse, if it speaks HID++.
    pub fn hidpp(&self) -> Option<&HidppShared> {
        self.hidpp.as_ref()
    }

    /// For a mouse that speaks HID++: waits until no HID++ request arrived for `quiet`
    /// (the kernel driver's probe is over), at most 10 s. A mouse without HID++ returns at
    /// once.
    pub fn settle(&self, quiet: Duration) {
        let Some(h) = &self.hidpp else { return };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let since = h.lock().last.elapsed();
            if since >= quiet || std::time::Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(quiet - since);
        }
    }

    /// The uhid device (for raw reports and kernel requests).
    pub fn uhid(&self) -> &UhidDevice {
        &self.dev
    }

    /// Waits for the kernel's evdev node of the mouse application: this device's phys,
    /// vendor/product, and `REL_X`.
    pub fn wait_node(&self, timeout: Duration) -> anyhow::Result<NodeInfo> {
        let spec = self.dev.spec();
        let node = evdev::wait_for(
            &format!("uhid {:?} phys {:?}", spec.name, spec.phys),
            timeout,
            |n| {
                n.phys == spec.phys
                    && u32::from(n.id.vendor) == spec.vendor
                    && u32::from(n.id.product) == spec.product
                    && evdev::EvdevNode::open(&n.path).is_ok_and(|d| d.has(EV_REL, REL_X))
            },
        )?;
        Ok(node.info().clone())
    }

    /// Sends one report with the current buttons and these motion/wheel fields.
    pub fn send(&self, dx: i32, dy: i32, wheel: i8, pan: i8) -> anyhow::Result<()> {
        let report = self.model.encode(&MouseReport {
            buttons: self.buttons,
            dx,
            dy,
            wheel,
            pan,
        })?;
        self.dev.input(&report)
    }

    /// Presses pawl button `n` (0-based) in a report of its own.
    pub fn press(&mut self, n: u8) -> anyhow::Result<()> {
        self.buttons |= 1 << n;
        self.send(0, 0, 0, 0)
    }

    /// Releases pawl button `n` in a report of its own.
    pub fn release(&mut self, n: u8) -> anyhow::Result<()> {
        self.buttons &= !(1 << n);
        self.send(0, 0, 0, 0)
    }

    /// A motion report.
    pub fn motion(&self, dx: i32, dy: i32) -> anyhow::Result<()> {
        self.send(dx, dy, 0, 0)
    }

    /// A wheel report of `detents` (positive: scroll up), in the units of the wheel mode
    /// now: for a HID++ mouse in high-resolution mode (set by the kernel's driver),
    /// `detents × 15` counts.
    pub fn wheel(&self, detents: i8) -> anyhow::Result<()> {
        let counts = match &self.hidpp {
            Some(h) => h
                .lock()
                .emu
                .wheel_counts(detents)
                .with_context(|| format!("{detents} detents do not fit one report"))?,
            None => detents,
        };
        self.send(0, 0, counts, 0)
    }

    /// A wheel report of `counts` as they are (1/15 detent each in high-resolution mode).
    pub fn wheel_counts(&self, counts: i8) -> anyhow::Result<()> {
        self.send(0, 0, counts, 0)
    }

    /// An AC Pan report of `detents` (positive: right).
    pub fn pan(&self, detents: i8) -> anyhow::Result<()> {
        self.send(0, 0, 0, detents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mx_master_3s_report_packs_12_bit_xy_little_endian() {
        let r = MouseReport {
            buttons: 1 << GESTURE_BUTTON,
            dx: -1,
            dy: 0x123,
            wheel: -1,
            pan: 1,
        };
        // X = 0xfff, Y = 0x123: 24 bits 0x123fff little-endian.
        assert_eq!(
            MX_MASTER_3S_BT.encode(&r).unwrap(),
            vec![0x02, 0x20, 0x00, 0xff, 0x3f, 0x12, 0xff, 0x01]
        );
    }

    #[test]
    fn bolt_report_has_16_bit_xy() {
        let r = MouseReport {
            dx: -32767,
            dy: 2,
            ..MouseReport::default()
        };
        assert_eq!(
            BOLT_RECEIVER.encode(&r).unwrap(),
            vec![0x02, 0, 0, 0x01, 0x80, 0x02, 0x00, 0, 0]
        );
    }

    #[test]
    fn motion_outside_the_field_is_refused() {
        let r = MouseReport {
            dx: 2048,
            ..MouseReport::default()
        };
        assert!(MX_MASTER_3S_BT.encode(&r).is_err());
    }
}
