//! Reprogrammable controls v4 (HID++ 2.0 feature 0x1B04): control ids (CIDs), the control
//! list entries, and the reporting flags that divert a control to HID++.
//!
//! Sources for the bit layouts: Logitech's HID++ 2.0 feature list (0x1B04 "Keyboard
//! reprogrammable keys and mouse buttons 5"), logiops `ReprogControls.h`
//! (`ControlInfoFlags`, `ControlReportingFlags`), Solaar `hidpp20.py` / `special_keys.py`
//! (`KEY_FLAG`, `MAPPING_FLAG`, CID names).

use crate::report::Message;

/// The MX Master gesture button (thumb button). Source: Solaar `special_keys.CONTROL`
/// ("Mouse_Gesture_Button", 0x00C3); logiops' MX Master configs.
pub const CID_GESTURE_BUTTON: u16 = 0x00C3;
/// The MX Master mode-shift (SmartShift) button behind the wheel. Source: Solaar
/// `special_keys.CONTROL` (0x00C4).
pub const CID_SMART_SHIFT: u16 = 0x00C4;
/// The MX Master 4's Sense Panel (its Actions Ring button, with haptic feedback). Source:
/// Solaar `special_keys.CONTROL` ("Haptic", 0x01A0); Solaar's `MX Master 4.text` lists it
/// divertable with raw XY.
pub const CID_SENSE_PANEL: u16 = 0x01A0;
/// Middle button. Source: Solaar `special_keys.CONTROL` (0x0052).
pub const CID_MIDDLE: u16 = 0x0052;
/// Back button. Source: Solaar `special_keys.CONTROL` (0x0053).
pub const CID_BACK: u16 = 0x0053;
/// Forward button. Source: Solaar `special_keys.CONTROL` (0x0056).
pub const CID_FORWARD: u16 = 0x0056;

/// A human name for the CIDs of MX Master mice, for logs and `pawl devices`.
pub fn cid_name(cid: u16) -> &'static str {
    match cid {
        0x0050 => "left button",
        0x0051 => "right button",
        CID_MIDDLE => "middle button",
        CID_BACK => "back button",
        CID_FORWARD => "forward button",
        CID_GESTURE_BUTTON => "gesture button",
        CID_SMART_SHIFT => "smart shift button",
        CID_SENSE_PANEL => "Sense Panel",
        _ => "control",
    }
}

/// `getCidInfo` flags byte (parameter 4).
pub mod info_flags {
    /// A mouse button.
    pub const MOUSE: u8 = 0x01;
    /// Reprogrammable.
    pub const REPROGRAMMABLE: u8 = 0x10;
    /// Can be diverted temporarily (until the device resets or the host says otherwise).
    pub const DIVERTABLE: u8 = 0x20;
    /// Can be diverted persistently (stored in the device; pawl never does).
    pub const PERSISTENTLY_DIVERTABLE: u8 = 0x40;
    /// A virtual control (no physical key).
    pub const VIRTUAL: u8 = 0x80;
}

/// `getCidInfo` additional flags byte (parameter 8). Solaar `hidpp20.KeyFlag` reads
/// parameters 4 and 8 as one 16-bit field: these are its bits 8–10.
pub mod additional_flags {
    /// Motion can be diverted as raw XY while the control is held.
    pub const RAW_XY: u8 = 0x01;
    /// Raw XY can be forced (virtual controls).
    pub const FORCE_RAW_XY: u8 = 0x02;
    /// The control can report analytics key events.
    pub const ANALYTICS_KEY_EVENTS: u8 = 0x04;
}

/// `setCidReporting` / `getCidReporting` flags byte: a value bit and, for `set`, a "valid"
/// bit saying the value bit is meant.
pub mod reporting_flags {
    /// Temporarily diverted.
    pub const DIVERT: u8 = 0x01;
    /// The [`DIVERT`] bit is to be applied.
    pub const DIVERT_VALID: u8 = 0x02;
    /// Persistently diverted (pawl never sets this or its valid bit).
    pub const PERSIST: u8 = 0x04;
    /// The [`PERSIST`] bit is to be applied.
    pub const PERSIST_VALID: u8 = 0x08;
    /// Raw XY diverted while the control is held.
    pub const RAW_XY: u8 = 0x10;
    /// The [`RAW_XY`] bit is to be applied.
    pub const RAW_XY_VALID: u8 = 0x20;
}

/// One entry of the control list (`getCidInfo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlInfo {
    /// Control id.
    pub cid: u16,
    /// Task id (what the control does natively).
    pub task: u16,
    /// [`info_flags`] bits.
    pub flags: u8,
    /// Position (0 for mice: Solaar shows `pos:0` for every MX Master control).
    pub pos: u8,
    /// The control's group (1–8; 0 = none): controls can be remapped to tasks of groups in
    /// their [`ControlInfo::group_mask`].
    pub group: u8,
    /// Bit n−1 set: may be remapped to a control of group n.
    pub group_mask: u8,
    /// [`additional_flags`] bits.
    pub additional_flags: u8,
}

impl ControlInfo {
    /// Parses a `getCidInfo` reply.
    pub fn parse(reply: &Message) -> ControlInfo {
        ControlInfo {
            cid: reply.u16_at(0),
            task: reply.u16_at(2),
            flags: reply.params[4],
            pos: reply.params[5],
            group: reply.params[6],
            group_mask: reply.params[7],
            additional_flags: reply.params[8],
        }
    }

    /// Whether it can be diverted temporarily.
    pub fn divertable(&self) -> bool {
        self.flags & info_flags::DIVERTABLE != 0
    }

    /// Whether its motion can be diverted as raw XY.
    pub fn raw_xy(&self) -> bool {
        self.additional_flags & additional_flags::RAW_XY != 0
    }
}

/// A `setCidReporting` change: temporary diversion only. There is no field for persistent
/// diversion, so pawl cannot write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reporting {
    /// The control.
    pub cid: u16,
    /// Divert it (temporarily) to HID++ notifications.
    pub divert: bool,
    /// Divert motion as raw XY while it is held.
    pub raw_xy: bool,
}

impl Reporting {
    /// The `setCidReporting` parameters: cid, flags (divert + raw XY with their valid bits,
    /// never the persistent bits), remap 0 (unchanged).
    pub fn params(&self) -> [u8; 5] {
        use reporting_flags::*;
        let mut flags = DIVERT_VALID | RAW_XY_VALID;
        if self.divert {
            flags |= DIVERT;
        }
        if self.raw_xy {
            flags |= RAW_XY;
        }
        let [hi, lo] = self.cid.to_be_bytes();
        [hi, lo, flags, 0, 0]
    }

    /// Parses `setCidReporting` parameters (or the echoing reply, or a `getCidReporting`
    /// reply): the control and its diversion as stated.
    pub fn parse(m: &Message) -> Reporting {
        let flags = m.params[2];
        Reporting {
            cid: m.u16_at(0),
            divert: flags & reporting_flags::DIVERT != 0,
            raw_xy: flags & reporting_flags::RAW_XY != 0,
        }
    }
}

/// The diverted controls held now, from a diverted-buttons notification: up to 4 CIDs, in
/// the device's order, 0 = empty slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held(pub [u16; 4]);

impl Held {
    /// Parses a diverted-buttons notification.
    pub fn parse(m: &Message) -> Held {
        Held([m.u16_at(0), m.u16_at(2), m.u16_at(4), m.u16_at(6)])
    }

    /// Whether `cid` is held.
    pub fn contains(&self, cid: u16) -> bool {
        cid != 0 && self.0.contains(&cid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Framing, Message};

    #[test]
    fn divert_request_sets_temporary_divert_and_raw_xy_and_never_the_persistent_bits() {
        let on = Reporting {
            cid: CID_GESTURE_BUTTON,
            divert: true,
            raw_xy: true,
        };
        assert_eq!(on.params(), [0x00, 0xC3, 0x33, 0, 0]);
        let off = Reporting {
            cid: CID_GESTURE_BUTTON,
            divert: false,
            raw_xy: false,
        };
        assert_eq!(off.params(), [0x00, 0xC3, 0x22, 0, 0]);
        for p in [on.params(), off.params()] {
            assert_eq!(
                p[2] & (reporting_flags::PERSIST | reporting_flags::PERSIST_VALID),
                0
            );
        }
    }

    #[test]
    fn control_info_of_the_gesture_button_parses() {
        let framing = Framing {
            short: false,
            long: true,
        };
        // cid 00C3, task 00A9, flags reprogrammable|divertable|persist, pos 0, group 3,
        // gmask 0, additional flags raw XY.
        let m = Message::request(
            framing,
            0xFF,
            5,
            1,
            0x0A,
            &[0x00, 0xC3, 0x00, 0xA9, 0x70, 0, 3, 0, 0x01],
        );
        let info = ControlInfo::parse(&m);
        assert_eq!(info.cid, 0xC3);
        assert!(info.divertable() && info.raw_xy());
    }

    #[test]
    fn held_controls_parse_from_a_notification() {
        let framing = Framing {
            short: false,
            long: true,
        };
        let m = Message::request(framing, 0xFF, 5, 0, 0, &[0x00, 0xC3, 0x00, 0x56]);
        let held = Held::parse(&m);
        assert!(held.contains(0xC3) && held.contains(0x56) && !held.contains(0x53));
        assert!(!held.contains(0));
    }
}
