//! A HID++ 2.0 device model for tests: answers Root, feature set, device name, battery,
//! 0x1B04, 0x2121 and 0x2150 requests like an MX Master 4, 3S, 3 or 2S, keeps each control's
//! temporary diversion and the wheel mode, and produces the notifications a diverted
//! control and raw-XY motion send. The VM driver puts it behind a uhid device
//! (`pawl-vm-driver`'s `hidpp_emu`), where the kernel's `hid-logitech-hidpp` probes it as
//! it probes the real mouse; the unit tests put it behind a [`crate::Session`] directly.
//!
//! # Source of the tables
//!
//! The feature tables (index, id, version, flags) and the 0x1B04 control lists (CID, task,
//! flags, position, group, group mask) are what Solaar recorded from real mice, in
//! `docs/devices/` of pwr-Solaar/Solaar (read at 8a941c55531fee06e5528291913970d0ebbc0b14):
//! - MX Master 3S over Bluetooth: `MX Master 3S B034.txt` (Solaar 1.1.7, firmware RBM
//!   22.00.B0003): 36 features with versions, 8 controls, 0x2121 multiplier 15 with invert
//!   and ratchet switch (free wheel when recorded), battery 25 % discharging (0x1004 V3).
//! - MX Master 3 through a Unifying receiver: `MX Master 3 Wireless Mouse 4082.txt` (34
//!   features) and over Bluetooth `MX Master 3 Wireless Mouse B023.txt` (30 features;
//!   Solaar 1.1.4, firmware MPM 19.01.B0015). That Solaar printed no versions: the
//!   emulator answers version 0 for them. Battery 100 %, next level 50 % (0x1000).
//! - MX Master 4 over Bluetooth: `MX Master 4.text` (Solaar 1.1.16, firmware RBM
//!   27.00.B0015): 46 features with versions (0x2111, not 0x2110; 0x19B0 haptics), 9
//!   controls with the Sense Panel 0x01A0, battery 45 % discharging (0x1004 V5).
//! - MX Master 2S over Bluetooth: `Wireless Mouse MX Master 2S B019.txt` (Solaar 1.1.3,
//!   firmware MPM 12.01.B0006): 29 features, no 0x2150, 0x2121 multiplier 8, 8 controls,
//!   battery 50 %, next level 20 % (0x1000).
//!
//! Feature flags: Solaar `hidpp20_constants.FeatureFlag` (internal 0x20, hidden 0x40,
//! obsolete 0x80; its `unknown:000010` / `unknown:000008` are bits 0x10 / 0x08). Control
//! flags: Solaar `hidpp20.KeyFlag`, parameters 4 and 8 of `getCidInfo` read as one field
//! (see [`crate::controls::info_flags`], [`crate::controls::additional_flags`]); tasks:
//! Solaar `special_keys.Task`. Functions a feature has but the emulator does not model, and
//! every function of the features it does not model (0x0003, 0x2250, the internal ones…),
//! answer HID++ 2.0 error 0x07 (invalid function id), the error a device gives for a
//! function it does not have.
//!
//! # The mouse's own settings
//!
//! 0x2201 (adjustable DPI) answers `getSensorCount` (1), `getSensorDpiList`,
//! `getSensorDpi` and `setSensorDpi`; a dpi not in the list, or a sensor other than 0, is
//! refused with HID++ 2.0 error 0x02 (invalid argument). Lists: 200..=8000 in steps of 50
//! for the 3S, 200..=4000 in steps of 50 for the 3 (Logitech's product specifications;
//! the Solaar records show the feature and the 3S's 1000 dpi in force, not the list).
//! SmartShift answers at 0x2110 (both records have it; 0x2111 where a table passed to
//! [`Emulator::with_features`] has it instead): get → mode, auto-disengage threshold,
//! its default; set writes each non-zero byte and answers the new state. The modes in
//! force when recorded: 3S free spinning (threshold 1 as its record shows the "ratchet
//! speed"), 3 not recorded (taken as ratcheted, threshold 10). The defaults (threshold
//! 10) are not recorded. [`Emulator::reset`] brings the firmware's defaults back (1000
//! dpi, the recorded SmartShift), the case where pawl has to apply the settings again.
//!
//! The thumb wheel answers like logid reports an MX Master 3's (18 ratchets per turn
//! natively, 120 increments diverted; PixlOne/logiops#145), and its one direction setting
//! (default direction, invert bit) applies to both reporting modes: a turn has the same
//! sign as an AC Pan count and as a diverted increment (see `pawl_hidpp::session`, "Thumb
//! wheel").
//!
//! # Haptics and the Sense Panel (MX Master 4)
//!
//! 0x19B0 answers `getCapabilities` (supported waveforms 0–14 and 27, the ids Solaar's
//! `HapticWaveForms` lists; the mask itself is not recorded), `getConfiguration` and
//! `setConfiguration` (enabled, level 0–100; not recorded, taken as enabled at 50) and
//! `playWaveform`, which it acknowledges with an empty reply and records
//! ([`Emulator::haptic_plays`]); a waveform outside the mask is refused with error 0x02.
//! Devices whose table lacks 0x19B0 answer none of it. The Sense Panel 0x01A0 is one
//! more divertable control: diverted, [`Emulator::set_held`] of it sends the
//! diverted-buttons event with its CID.
//!
//! # Battery
//!
//! 0x1004 answers `getCapabilities` (levels critical to full, rechargeable, state of
//! charge in %: the records show percentages) and `getStatus`; [`Emulator::set_battery`]
//! changes it and gives the status event the device broadcasts. 0x1000 answers
//! `getBatteryLevelStatus` and `getBatteryCapability`.
//!
//! # Wheel
//!
//! 0x2121 `setWheelMode` is obeyed: in high-resolution mode (bit 1, what the kernel's
//! driver sets during its probe) the wheel field of the HID mouse report counts
//! 1/multiplier detents ([`Emulator::wheel_counts`]); in low-resolution mode, detents.

use crate::controls::{self, ControlInfo, Reporting, additional_flags, info_flags};
use crate::error::{HIDPP10_ERROR, HIDPP10_INVALID_SUBID, HIDPP20_ERROR};
use crate::feature::{
    self, adjustable_dpi, battery_status, device_name, haptic, hires_wheel, receiver, reprog, root,
    smart_shift, thumb_wheel, unified_battery, wireless_status,
};
use crate::report::{DEVICE_INDEX_DIRECT, Framing, LONG_PARAMS, Message};

/// An error the emulator is told to answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// HID++ 1.0 error reply (sub id 0x8F) with this code.
    V10(u8),
    /// HID++ 2.0 error reply (feature index 0xFF) with this code.
    V20(u8),
}

/// HID++ 2.0 error "invalid function id": what a device answers for a function it does not
/// have (Solaar `hidpp20_constants.ErrorCode.INVALID_FUNCTION_ID`).
pub const ERR_INVALID_FUNCTION: u8 = 0x07;

/// HID++ 2.0 error "invalid argument": what a device answers for a value it does not take
/// (Solaar `hidpp20_constants.ErrorCode.INVALID_ARGUMENT`).
pub const ERR_INVALID_ARGUMENT: u8 = 0x02;

/// The MX Master 3S's dpi list as `getSensorDpiList` sends it: 200, step 50, 8000.
pub const MX_MASTER_3S_DPI_LIST: [u16; 3] = [200, 0xE000 | 50, 8000];
/// The MX Master 3's dpi list: 200, step 50, 4000.
pub const MX_MASTER_3_DPI_LIST: [u16; 3] = [200, 0xE000 | 50, 4000];
/// The dpi in force after a power cycle (the 3S record shows 1000).
pub const DEFAULT_DPI: u16 = 1000;

/// One entry of a device's feature table, at its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureEntry {
    /// Feature id.
    pub id: u16,
    /// Feature version (Root `getFeature` byte 2).
    pub version: u8,
    /// Feature flags (Root `getFeature` byte 1): 0x20 internal, 0x40 hidden, 0x80 obsolete.
    pub flags: u8,
}

const fn f(id: u16, version: u8, flags: u8) -> FeatureEntry {
    FeatureEntry { id, version, flags }
}

/// Feature flag bits as Solaar prints them: "internal" 0x20, "hidden" 0x40, and the
/// "unknown:000010" / "unknown:000008" bits.
const IH: u8 = 0x60;
const IH10: u8 = 0x70;
const IH08: u8 = 0x68;
const H: u8 = 0x40;

/// The MX Master 3S's 36 features, index = position (Solaar `MX Master 3S B034.txt`).
pub const MX_MASTER_3S_FEATURES: [FeatureEntry; 36] = [
    f(0x0000, 0, 0),
    f(0x0001, 0, 0),
    f(0x0003, 4, 0),
    f(0x0005, 0, 0),
    f(0x1D4B, 0, 0),
    f(0x0020, 0, 0),
    f(0x0021, 1, 0),
    f(0x0007, 0, 0),
    f(0x1004, 3, 0),
    f(0x1B04, 5, 0),
    f(0x1814, 1, 0),
    f(0x1815, 2, 0),
    f(0x2250, 1, 0),
    f(0x2201, 2, 0),
    f(0x2110, 0, 0),
    f(0x2121, 1, 0),
    f(0x2150, 0, 0),
    f(0x2251, 0, 0),
    f(0x00C3, 0, 0),
    f(0x1802, 0, IH10),
    f(0x1803, 0, IH10),
    f(0x1806, 8, IH10),
    f(0x1816, 0, IH10),
    f(0x1805, 0, IH),
    f(0x1830, 0, IH10),
    f(0x1891, 7, IH08),
    f(0x18A1, 0, IH10),
    f(0x1E00, 0, H),
    f(0x1E02, 0, IH),
    f(0x1602, 0, 0),
    f(0x1EB0, 0, IH10),
    f(0x1861, 1, IH10),
    f(0x9300, 0, IH10),
    f(0x9001, 0, IH10),
    f(0x1E22, 0, IH10),
    f(0x9205, 0, IH10),
];

/// The MX Master 3's 34 features through a Unifying receiver (Solaar `MX Master 3
/// Wireless Mouse 4082.txt`; versions not recorded).
pub const MX_MASTER_3_UNIFYING_FEATURES: [FeatureEntry; 34] = [
    f(0x0000, 0, 0),
    f(0x0001, 0, 0),
    f(0x0003, 0, 0),
    f(0x0005, 0, 0),
    f(0x1D4B, 0, 0),
    f(0x0020, 0, 0),
    f(0x0021, 0, 0),
    f(0x0007, 0, 0),
    f(0x1000, 0, 0),
    f(0x1B04, 0, 0),
    f(0x1814, 0, 0),
    f(0x2250, 0, 0),
    f(0x2201, 0, 0),
    f(0x2110, 0, 0),
    f(0x2121, 0, 0),
    f(0x2150, 0, 0),
    f(0x2251, 0, 0),
    f(0x00C2, 0, 0),
    f(0x1802, 0, IH),
    f(0x1803, 0, IH),
    f(0x1806, 0, IH),
    f(0x1813, 0, IH),
    f(0x1805, 0, IH),
    f(0x1830, 0, IH),
    f(0x1890, 0, IH),
    f(0x1891, 0, IH),
    f(0x18A1, 0, IH),
    f(0x1DF3, 0, IH),
    f(0x1E00, 0, H),
    f(0x1EB0, 0, IH),
    f(0x1861, 0, IH),
    f(0x9001, 0, IH),
    f(0x9203, 0, IH),
    f(0x9205, 0, IH),
];

/// The MX Master 3's 30 features over Bluetooth (Solaar `MX Master 3 Wireless Mouse
/// B023.txt`; versions not recorded).
pub const MX_MASTER_3_BT_FEATURES: [FeatureEntry; 30] = [
    f(0x0000, 0, 0),
    f(0x0001, 0, 0),
    f(0x0003, 0, 0),
    f(0x0005, 0, 0),
    f(0x1D4B, 0, 0),
    f(0x0020, 0, 0),
    f(0x0021, 0, 0),
    f(0x0007, 0, 0),
    f(0x1000, 0, 0),
    f(0x1B04, 0, 0),
    f(0x1814, 0, 0),
    f(0x2250, 0, 0),
    f(0x2201, 0, 0),
    f(0x2110, 0, 0),
    f(0x2121, 0, 0),
    f(0x2150, 0, 0),
    f(0x2251, 0, 0),
    f(0x00C2, 0, 0),
    f(0x1802, 0, IH),
    f(0x1803, 0, IH),
    f(0x1806, 0, IH),
    f(0x1813, 0, IH),
    f(0x1805, 0, IH),
    f(0x1830, 0, IH),
    f(0x18A1, 0, IH),
    f(0x1E00, 0, H),
    f(0x1EB0, 0, IH),
    f(0x1861, 0, IH),
    f(0x9001, 0, IH),
    f(0x9205, 0, IH),
];

/// The MX Master 4's 46 features over Bluetooth, index = position (Solaar `MX Master
/// 4.text`, Solaar 1.1.16, firmware RBM 27.00.B0015). Solaar prints an unknown feature's
/// id byte-swapped in braces (`unknown:19B0 {B019}`); the id here is the name's.
pub const MX_MASTER_4_FEATURES: [FeatureEntry; 46] = [
    f(0x0000, 0, 0),
    f(0x0001, 0, 0),
    f(0x0003, 8, 0),
    f(0x0005, 5, 0),
    f(0x1D4B, 0, 0),
    f(0x0020, 1, 0),
    f(0x0021, 1, 0),
    f(0x0007, 0, 0),
    f(0x0011, 0, 0),
    f(0x1004, 5, 0),
    f(0x1701, 0, 0),
    f(0x19B0, 0, 0),
    f(0x19C0, 0, 0),
    f(0x1B04, 6, 0),
    f(0x1814, 2, 0),
    f(0x1815, 2, 0),
    f(0x2250, 1, 0),
    f(0x2111, 0, 0),
    f(0x2121, 1, 0),
    f(0x2150, 0, 0),
    f(0x2201, 2, 0),
    f(0x2251, 0, 0),
    f(0x00D1, 0, 0),
    f(0x1802, 0, 0),
    f(0x1803, 0, IH10),
    f(0x1807, 0, IH10),
    f(0x1816, 0, IH10),
    f(0x1805, 0, 0),
    f(0x1830, 0, IH10),
    f(0x1891, 0, IH08),
    f(0x18A1, 0, IH10),
    f(0x1E00, 0, H),
    f(0x1E02, 0, IH),
    f(0x1E22, 0, IH10),
    f(0x1E30, 0, IH10),
    f(0x1602, 0, 0),
    f(0x1EB0, 0, IH10),
    f(0x1861, 0, IH10),
    f(0x9205, 0, IH10),
    f(0x9201, 0, IH10),
    f(0x9300, 0, IH10),
    f(0x9401, 0, IH10),
    f(0x9402, 0, IH10),
    f(0x9001, 0, IH10),
    f(0x18B1, 0, IH10),
    f(0x18C0, 0, IH10),
];

/// The MX Master 2S's 29 features over Bluetooth (Solaar `Wireless Mouse MX Master 2S
/// B019.txt`, Solaar 1.1.3, firmware MPM 12.01.B0006; versions not recorded). No 0x2150:
/// its thumb wheel is a plain HID AC Pan, native only.
pub const MX_MASTER_2S_BT_FEATURES: [FeatureEntry; 29] = [
    f(0x0000, 0, 0),
    f(0x0001, 0, 0),
    f(0x0003, 0, 0),
    f(0x0005, 0, 0),
    f(0x1D4B, 0, 0),
    f(0x0020, 0, 0),
    f(0x0021, 0, 0),
    f(0x1000, 0, 0),
    f(0x1806, 0, IH),
    f(0x1814, 0, 0),
    f(0x1B04, 0, 0),
    f(0x2201, 0, 0),
    f(0x2100, 0, 0),
    f(0x2110, 0, 0),
    f(0x2121, 0, 0),
    f(0x6501, 0, 0),
    f(0x1813, 0, IH),
    f(0x1830, 0, IH),
    f(0x18A1, 0, IH),
    f(0x18C0, 0, IH),
    f(0x1DF3, 0, IH),
    f(0x1E00, 0, H),
    f(0x1EB0, 0, IH),
    f(0x1803, 0, IH),
    f(0x1861, 0, IH),
    f(0x9001, 0, IH),
    f(0x9200, 0, IH),
    f(0x9202, 0, IH),
    f(0x1805, 0, IH),
];

const fn c(cid: u16, task: u16, flags: u8, group: u8, group_mask: u8, more: u8) -> ControlInfo {
    ControlInfo {
        cid,
        task,
        flags,
        pos: 0,
        group,
        group_mask,
        additional_flags: more,
    }
}

use additional_flags::{ANALYTICS_KEY_EVENTS as AKE, FORCE_RAW_XY as FRXY, RAW_XY as RXY};
use info_flags::{DIVERTABLE as DIV, MOUSE as MSE, REPROGRAMMABLE as REP, VIRTUAL as VIR};

/// The MX Master 3S's 8 controls (Solaar `MX Master 3S B034.txt`, "Has 8 reprogrammable
/// keys"): every physical one "mse" with analytics key events, none persistently
/// divertable; the virtual gesture button 0x00D7 (task 0x00B4) divertable with forced
/// raw XY, group 3.
pub const MX_MASTER_3S_CONTROLS: [ControlInfo; 8] = [
    c(0x0050, 0x0038, MSE, 1, 0x01, AKE),
    c(0x0051, 0x0039, MSE, 1, 0x01, AKE),
    c(0x0052, 0x003A, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x0053, 0x003C, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x0056, 0x003E, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x00C3, 0x00A9, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x00C4, 0x009D, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x00D7, 0x00B4, DIV | VIR, 3, 0x00, RXY | FRXY),
];

/// The MX Master 3's 8 controls (Solaar `MX Master 3 Wireless Mouse 4082.txt`): as the
/// 3S's, but the middle, gesture and Smart Shift buttons in group 3 (mask g1–g3) and the
/// virtual gesture button in group 4.
pub const MX_MASTER_3_CONTROLS: [ControlInfo; 8] = [
    c(0x0050, 0x0038, MSE, 1, 0x01, AKE),
    c(0x0051, 0x0039, MSE, 1, 0x01, AKE),
    c(0x0052, 0x003A, MSE | REP | DIV, 3, 0x07, RXY | AKE),
    c(0x0053, 0x003C, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x0056, 0x003E, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x00C3, 0x00A9, MSE | REP | DIV, 3, 0x07, RXY | AKE),
    c(0x00C4, 0x009D, MSE | REP | DIV, 3, 0x07, RXY | AKE),
    c(0x00D7, 0x00B4, DIV | VIR, 4, 0x00, RXY | FRXY),
];

/// The MX Master 4's 9 controls (Solaar `MX Master 4.text`, "Has 9 reprogrammable keys"):
/// left and right in group 1 with an empty mask; the others divertable with raw XY in
/// group 2 (mask g1, g2), among them the gesture button 0x00C3 (task 0x009C "Gesture
/// Button", not the 3S's 0x00A9) and the Sense Panel 0x01A0 ("Haptic", task 0x0109); the
/// virtual gesture button 0x00D7 in group 3.
pub const MX_MASTER_4_CONTROLS: [ControlInfo; 9] = [
    c(0x0050, 0x0038, MSE, 1, 0x00, AKE),
    c(0x0051, 0x0039, MSE, 1, 0x00, AKE),
    c(0x0052, 0x003A, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x0053, 0x003C, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x0056, 0x003E, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x00C3, 0x009C, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x00C4, 0x009D, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x01A0, 0x0109, MSE | REP | DIV, 2, 0x03, RXY | AKE),
    c(0x00D7, 0x00B4, DIV | VIR, 3, 0x00, RXY | FRXY),
];

/// The MX Master 2S's 8 controls (Solaar `Wireless Mouse MX Master 2S B019.txt`): as the
/// 3's, without analytics key events (the 2S's firmware lists none).
pub const MX_MASTER_2S_CONTROLS: [ControlInfo; 8] = [
    c(0x0050, 0x0038, MSE, 1, 0x01, 0),
    c(0x0051, 0x0039, MSE, 1, 0x01, 0),
    c(0x0052, 0x003A, MSE | REP | DIV, 3, 0x07, RXY),
    c(0x0053, 0x003C, MSE | REP | DIV, 2, 0x03, RXY),
    c(0x0056, 0x003E, MSE | REP | DIV, 2, 0x03, RXY),
    c(0x00C3, 0x00A9, MSE | REP | DIV, 3, 0x07, RXY),
    c(0x00C4, 0x009D, MSE | REP | DIV, 3, 0x07, RXY),
    c(0x00D7, 0x00B4, DIV | VIR, 4, 0x00, RXY | FRXY),
];

/// One control of the emulated device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmulatedControl {
    /// Its control list entry.
    pub info: ControlInfo,
    /// Its current temporary reporting.
    pub reporting: Reporting,
    /// Physically held now.
    pub held: bool,
}

/// What a motion of the emulated device becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// A raw-XY notification (a control diverted with raw XY is held).
    RawXy(Message),
    /// An ordinary HID mouse report (the caller sends it).
    Hid,
}

/// The emulated device.
#[derive(Clone, Debug)]
pub struct Emulator {
    framing: Framing,
    device: u8,
    features: &'static [FeatureEntry],
    name: &'static str,
    controls: Vec<EmulatedControl>,
    wheel_multiplier: u8,
    wheel_flags: u8,
    ratchet: u8,
    wheel_mode: u8,
    wheel_mode_writes: u32,
    persistent_writes: u32,
    battery: [u8; 4],
    thumb_diverted: bool,
    thumb_inverted: bool,
    /// Firmware that takes `setThumbwheelReporting`'s mode but not its invert bit.
    thumb_invert_ignored: bool,
    thumb_info: [u8; 8],
    hidpp10_only: bool,
    failures: Vec<(u16, u8, Failure)>,
    /// Root `getFeature` lookups of these feature ids fail.
    lookup_failures: Vec<(u16, Failure)>,
    requests: u32,
    dpi_list: &'static [u16],
    dpi: u16,
    dpi_writes: u32,
    /// SmartShift: mode, auto-disengage threshold, its default.
    smart_shift: [u8; 3],
    smart_shift_recorded: [u8; 3],
    smart_shift_writes: u32,
    /// 0x19B0 configuration: enabled, level 0–100.
    haptic: [u8; 2],
    /// The waveforms played (0x19B0 `playWaveform`), in order.
    haptic_plays: Vec<u8>,
}

/// The waveforms the emulated 0x19B0 takes: 0–14 and 27 (Solaar `HapticWaveForms`).
pub const HAPTIC_WAVEFORM_MASK: u32 = 0x0800_7FFF;

impl Emulator {
    /// An MX Master 3S at `device` index on a node declaring `framing` (Bluetooth: long
    /// only, index 0xFF; behind a Bolt receiver: both, index 1–6). Tables: see the module
    /// docs.
    pub fn mx_master_3s(framing: Framing, device: u8) -> Emulator {
        Emulator::new(
            framing,
            device,
            &MX_MASTER_3S_FEATURES,
            "MX Master 3S",
            &MX_MASTER_3S_CONTROLS,
        )
        // Free wheel when recorded; 25 %, level "good", discharging.
        .with_ratchet(0)
        .with_battery([25, 0x04, 0, 0])
        .with_dpi_list(&MX_MASTER_3S_DPI_LIST)
        .with_smart_shift([1, 1, 10])
    }

    /// An MX Master 3 at `device`: over Bluetooth (index 0xFF) the B023 feature table,
    /// behind a Unifying receiver (index 1–6) the 4082 one. Name as 0x0005 reports it
    /// ("Wireless Mouse MX Master 3", 26 characters, per the Unifying receiver notes).
    pub fn mx_master_3(framing: Framing, device: u8) -> Emulator {
        let features: &'static [FeatureEntry] = if device == DEVICE_INDEX_DIRECT {
            &MX_MASTER_3_BT_FEATURES
        } else {
            &MX_MASTER_3_UNIFYING_FEATURES
        };
        Emulator::new(
            framing,
            device,
            features,
            "Wireless Mouse MX Master 3",
            &MX_MASTER_3_CONTROLS,
        )
        // Ratcheted when recorded ("Normal wheel mode"); 100 %, next level 50 %.
        .with_ratchet(1)
        .with_battery([100, 50, 0, 0])
        .with_dpi_list(&MX_MASTER_3_DPI_LIST)
        .with_smart_shift([2, 10, 10])
    }

    /// An MX Master 4 at `device` (Bluetooth: index 0xFF). Tables: see the module docs.
    /// Ratcheted when recorded, battery 45 % discharging over 0x1004 (level "good"), the
    /// thumb wheel's invert bit set ("Thumb Wheel Direction: True"), 20 ratchets per turn
    /// natively and 120 increments diverted (OpenLogi's `thumbwheel.rs`).
    pub fn mx_master_4(framing: Framing, device: u8) -> Emulator {
        let mut emu = Emulator::new(
            framing,
            device,
            &MX_MASTER_4_FEATURES,
            "MX Master 4",
            &MX_MASTER_4_CONTROLS,
        )
        .with_ratchet(1)
        .with_battery([45, 0x04, 0, 0])
        .with_thumb_resolution(20, 120)
        // 200..=8000 in steps of 50 (logitune's MX Master 4 descriptor); ratcheted with
        // the SmartShift speed 10 the record shows.
        .with_dpi_list(&MX_MASTER_3S_DPI_LIST)
        .with_smart_shift([2, 10, 10]);
        emu.set_thumb_inverted(true);
        emu
    }

    /// An MX Master 2S at `device` (Bluetooth: index 0xFF): its name as 0x0005 reports it
    /// ("Wireless Mouse MX Master 2S"), 0x2121 multiplier 8, ratcheted, battery 50 %
    /// next level 20 % over 0x1000, and no 0x2150 thumb wheel.
    pub fn mx_master_2s(framing: Framing, device: u8) -> Emulator {
        let mut emu = Emulator::new(
            framing,
            device,
            &MX_MASTER_2S_BT_FEATURES,
            "Wireless Mouse MX Master 2S",
            &MX_MASTER_2S_CONTROLS,
        )
        .with_ratchet(1)
        .with_battery([50, 20, 0, 0])
        // 200..=4000 in steps of 50 as the 3 (Logitech's specification; the record shows
        // 1000 in force); SmartShift threshold 16 as recorded.
        .with_dpi_list(&MX_MASTER_3_DPI_LIST)
        .with_smart_shift([2, 16, 16]);
        emu.wheel_multiplier = 8;
        emu
    }

    fn new(
        framing: Framing,
        device: u8,
        features: &'static [FeatureEntry],
        name: &'static str,
        controls: &[ControlInfo],
    ) -> Emulator {
        let controls = controls
            .iter()
            .map(|&info| EmulatedControl {
                info,
                reporting: Reporting {
                    cid: info.cid,
                    divert: false,
                    raw_xy: false,
                },
                held: false,
            })
            .collect();
        Emulator {
            framing,
            device,
            features,
            name,
            controls,
            // Both records: multiplier 15, "has invert", "has ratchet switch" (0x04 | 0x08).
            wheel_multiplier: 15,
            wheel_flags: 0x0C,
            ratchet: 1,
            wheel_mode: 0,
            wheel_mode_writes: 0,
            persistent_writes: 0,
            battery: [0; 4],
            thumb_diverted: false,
            thumb_inverted: false,
            thumb_invert_ignored: false,
            // native 18, diverted 120, default direction right/front, capabilities
            // timestamp | touch | proximity | single tap, time unit 0.
            thumb_info: [0, 18, 0, 120, 1, 0x0F, 0, 0],
            hidpp10_only: false,
            failures: Vec::new(),
            lookup_failures: Vec::new(),
            requests: 0,
            dpi_list: &[],
            dpi: DEFAULT_DPI,
            dpi_writes: 0,
            smart_shift: [0; 3],
            smart_shift_recorded: [0; 3],
            smart_shift_writes: 0,
            haptic: [1, 50],
            haptic_plays: Vec::new(),
        }
    }

    fn with_dpi_list(mut self, list: &'static [u16]) -> Emulator {
        self.dpi_list = list;
        self
    }

    fn with_smart_shift(mut self, state: [u8; 3]) -> Emulator {
        self.smart_shift = state;
        self.smart_shift_recorded = state;
        self
    }

    /// The same device with another feature table (index = position): for a device that
    /// lacks a feature, or has SmartShift enhanced (0x2111) instead of 0x2110.
    pub fn with_features(mut self, features: &'static [FeatureEntry]) -> Emulator {
        self.features = features;
        self
    }

    /// The dpi in force now (0x2201).
    pub fn dpi(&self) -> u16 {
        self.dpi
    }

    /// How many `setSensorDpi` requests were taken (refused ones not counted).
    pub fn dpi_writes(&self) -> u32 {
        self.dpi_writes
    }

    /// SmartShift now: mode (1 free, 2 ratchet), auto-disengage threshold, its default.
    pub fn smart_shift(&self) -> [u8; 3] {
        self.smart_shift
    }

    /// The waveforms played over 0x19B0 (`playWaveform` requests taken), in order.
    pub fn haptic_plays(&self) -> &[u8] {
        &self.haptic_plays
    }

    /// The 0x19B0 configuration now: enabled (0 or 1), level 0–100.
    pub fn haptic_config(&self) -> [u8; 2] {
        self.haptic
    }

    /// How many SmartShift set requests were taken.
    pub fn smart_shift_writes(&self) -> u32 {
        self.smart_shift_writes
    }

    fn dpi_supported(&self, dpi: u16) -> bool {
        let bytes: Vec<u8> = self.dpi_list.iter().flat_map(|v| v.to_be_bytes()).collect();
        crate::settings::DpiList::parse(&bytes).contains(dpi)
    }

    fn with_ratchet(mut self, ratchet: u8) -> Emulator {
        self.ratchet = ratchet;
        self
    }

    fn with_battery(mut self, battery: [u8; 4]) -> Emulator {
        self.battery = battery;
        self
    }

    /// The feature table, index = position.
    pub fn features(&self) -> &'static [FeatureEntry] {
        self.features
    }

    /// The 0x2121 wheel mode now (bit 0 target, bit 1 high resolution, bit 2 invert).
    pub fn wheel_mode(&self) -> u8 {
        self.wheel_mode
    }

    /// What the wheel field of the HID mouse report carries for `detents` (positive: away
    /// from the user): `detents × multiplier` in high-resolution mode, else `detents`;
    /// `None` when that does not fit the 8-bit field. Diverted to HID++ (mode bit 0) is not
    /// modelled: pawl never asks for it.
    pub fn wheel_counts(&self, detents: i8) -> Option<i8> {
        if self.wheel_mode & hires_wheel::MODE_RESOLUTION != 0 {
            i8::try_from(i16::from(detents) * i16::from(self.wheel_multiplier)).ok()
        } else {
            Some(detents)
        }
    }

    /// 1/`multiplier` detent is one high-resolution wheel count.
    pub fn wheel_multiplier(&self) -> u8 {
        self.wheel_multiplier
    }

    /// Makes it a HID++ 1.0 device (answers the ping with "invalid sub id").
    pub fn hidpp10_only(mut self) -> Emulator {
        self.hidpp10_only = true;
        self
    }

    /// Answers every request of `function` of feature `feature_id` with `failure`.
    pub fn fail(&mut self, feature_id: u16, function: u8, failure: Failure) {
        self.failures.push((feature_id, function, failure));
    }

    /// Answers the root `getFeature` lookup of `feature_id` (only that one) with `failure`.
    pub fn fail_lookup(&mut self, feature_id: u16, failure: Failure) {
        self.lookup_failures.push((feature_id, failure));
    }

    /// The device index.
    pub fn device(&self) -> u8 {
        self.device
    }

    /// The index of feature `id` in the emulated feature table.
    pub fn feature_index(&self, id: u16) -> Option<u8> {
        self.features
            .iter()
            .position(|f| f.id == id)
            .map(|i| i as u8)
    }

    /// The controls and their current state.
    pub fn controls(&self) -> &[EmulatedControl] {
        &self.controls
    }

    /// The temporary reporting of `cid`.
    pub fn reporting(&self, cid: u16) -> Option<Reporting> {
        self.control(cid).map(|c| c.reporting)
    }

    /// How many `setWheelMode` (0x2121) requests arrived. pawl must never send one.
    pub fn wheel_mode_writes(&self) -> u32 {
        self.wheel_mode_writes
    }

    /// How many `setCidReporting` requests asked for a persistent change. pawl must never.
    pub fn persistent_writes(&self) -> u32 {
        self.persistent_writes
    }

    /// Whether the thumb wheel is diverted.
    pub fn thumb_diverted(&self) -> bool {
        self.thumb_diverted
    }

    /// Whether the thumb wheel's direction is inverted (0x2150 invert bit).
    pub fn thumb_inverted(&self) -> bool {
        self.thumb_inverted
    }

    /// Makes `setThumbwheelReporting` keep the invert bit as it is (a firmware that
    /// refuses the direction change while it still succeeds).
    pub fn ignore_thumb_invert(&mut self, ignore: bool) {
        self.thumb_invert_ignored = ignore;
    }

    /// Sets the thumb wheel's invert bit, as Logitech's software or Solaar would.
    pub fn set_thumb_inverted(&mut self, inverted: bool) {
        self.thumb_inverted = inverted;
    }

    /// Makes it answer 0x0005 with `name` (the kernel's driver names the HID device
    /// "Logitech " + that name).
    pub fn with_name(mut self, name: &'static str) -> Emulator {
        self.name = name;
        self
    }

    /// Makes the thumb wheel report `native` ratchets and `diverted` increments per turn.
    pub fn with_thumb_resolution(mut self, native: u16, diverted: u16) -> Emulator {
        self.thumb_info[..2].copy_from_slice(&native.to_be_bytes());
        self.thumb_info[2..4].copy_from_slice(&diverted.to_be_bytes());
        self
    }

    /// Makes the thumb wheel's default direction "left or back" (`getThumbwheelInfo`'s
    /// direction bit clear); every recorded MX Master has it set ("right or front").
    pub fn with_thumb_default_left_or_back(mut self) -> Emulator {
        self.thumb_info[4] &= !thumb_wheel::DIRECTION_BIT;
        self
    }

    /// How many HID++ requests arrived.
    pub fn requests(&self) -> u32 {
        self.requests
    }

    /// A power cycle or reconnection: every temporary diversion is forgotten (the thumb
    /// wheel's too; its invert bit is a setting and stays), the wheel is back in
    /// low-resolution HID mode (why the kernel's driver writes 0x2121 again on every
    /// reconnection) and nothing is held.
    pub fn reset(&mut self) {
        self.wheel_mode = 0;
        for c in &mut self.controls {
            c.reporting.divert = false;
            c.reporting.raw_xy = false;
            c.held = false;
        }
        self.thumb_diverted = false;
        self.dpi = DEFAULT_DPI;
        self.smart_shift = self.smart_shift_recorded;
    }

    /// The reply to one report the host wrote (report id first); `None` for reports that
    /// are not HID++ or not for this device index.
    pub fn answer(&mut self, bytes: &[u8]) -> Option<Message> {
        let req = Message::parse(bytes)?;
        if req.device != self.device {
            return None;
        }
        self.requests += 1;
        let mut reply = req;
        reply.long = true;
        reply.params = [0; LONG_PARAMS];
        if self.hidpp10_only {
            return Some(self.error(&req, Failure::V10(HIDPP10_INVALID_SUBID)));
        }
        let Some(feature_id) = self.features.get(usize::from(req.sub_id)).map(|f| f.id) else {
            return Some(self.error(&req, Failure::V20(0x06)));
        };
        let function = req.function();
        if let Some(&(_, _, f)) = self
            .failures
            .iter()
            .find(|(id, func, _)| *id == feature_id && *func == function)
        {
            return Some(self.error(&req, f));
        }
        if (feature_id, function) == (feature::ROOT, root::GET_FEATURE)
            && let Some(&(_, f)) = self
                .lookup_failures
                .iter()
                .find(|(id, _)| *id == req.u16_at(0))
        {
            return Some(self.error(&req, f));
        }
        let p = &mut reply.params;
        match (feature_id, function) {
            (feature::ROOT, root::GET_FEATURE) => {
                // index, flags, version; index 0 = absent.
                let id = req.u16_at(0);
                if let Some(i) = self.features.iter().position(|f| f.id == id) {
                    let e = self.features[i];
                    p[..3].copy_from_slice(&[i as u8, e.flags, e.version]);
                }
            }
            (feature::ROOT, root::GET_PROTOCOL_VERSION) => {
                p[..3].copy_from_slice(&[4, 5, req.params[2]]);
            }
            (feature::FEATURE_SET, 0) => p[0] = (self.features.len() - 1) as u8,
            (feature::FEATURE_SET, 1) => {
                // getFeatureID(index) → id, flags, version.
                let Some(e) = self.features.get(usize::from(req.params[0])).copied() else {
                    return Some(self.error(&req, Failure::V20(0x02)));
                };
                p[..2].copy_from_slice(&e.id.to_be_bytes());
                p[2..4].copy_from_slice(&[e.flags, e.version]);
            }
            (feature::DEVICE_NAME, device_name::GET_COUNT) => p[0] = self.name.len() as u8,
            (feature::DEVICE_NAME, device_name::GET_NAME) => {
                let name = self.name.as_bytes();
                let from = usize::from(req.params[0]).min(name.len());
                let chunk = &name[from..(from + LONG_PARAMS).min(name.len())];
                p[..chunk.len()].copy_from_slice(chunk);
            }
            (feature::REPROG_CONTROLS_V4, reprog::GET_COUNT) => p[0] = self.controls.len() as u8,
            (feature::REPROG_CONTROLS_V4, reprog::GET_CID_INFO) => {
                let Some(c) = self.controls.get(usize::from(req.params[0])) else {
                    return Some(self.error(&req, Failure::V20(0x02)));
                };
                let i = c.info;
                p[..2].copy_from_slice(&i.cid.to_be_bytes());
                p[2..4].copy_from_slice(&i.task.to_be_bytes());
                p[4..9].copy_from_slice(&[
                    i.flags,
                    i.pos,
                    i.group,
                    i.group_mask,
                    i.additional_flags,
                ]);
            }
            (feature::REPROG_CONTROLS_V4, reprog::GET_CID_REPORTING) => {
                let Some(c) = self.control(req.u16_at(0)) else {
                    return Some(self.error(&req, Failure::V20(0x02)));
                };
                let r = c.reporting;
                p[..2].copy_from_slice(&r.cid.to_be_bytes());
                p[2] = (u8::from(r.divert) * controls::reporting_flags::DIVERT)
                    | (u8::from(r.raw_xy) * controls::reporting_flags::RAW_XY);
            }
            (feature::REPROG_CONTROLS_V4, reprog::SET_CID_REPORTING) => {
                use controls::reporting_flags::*;
                let flags = req.params[2];
                if flags & (PERSIST | PERSIST_VALID) != 0 {
                    self.persistent_writes += 1;
                }
                let cid = req.u16_at(0);
                let Some(c) = self.controls.iter_mut().find(|c| c.info.cid == cid) else {
                    return Some(self.error(&req, Failure::V20(0x02)));
                };
                // Diverting a control that cannot be diverted is refused; clearing its
                // diversion (valid bits with divert and raw XY off, as logiops writes for
                // every control at start-up and works with on real mice) changes nothing.
                let diverts = (flags & DIVERT_VALID != 0 && flags & DIVERT != 0)
                    || (flags & RAW_XY_VALID != 0 && flags & RAW_XY != 0);
                if !c.info.divertable() && diverts {
                    return Some(self.error(&req, Failure::V20(0x02)));
                }
                if flags & DIVERT_VALID != 0 {
                    c.reporting.divert = flags & DIVERT != 0;
                }
                if flags & RAW_XY_VALID != 0 {
                    c.reporting.raw_xy = flags & RAW_XY != 0 && c.info.raw_xy();
                }
                p[..5].copy_from_slice(&req.params[..5]);
            }
            (feature::HIRES_WHEEL, hires_wheel::GET_CAPABILITY) => {
                p[..2].copy_from_slice(&[self.wheel_multiplier, self.wheel_flags]);
            }
            (feature::HIRES_WHEEL, hires_wheel::GET_RATCHET_SWITCH) => p[0] = self.ratchet,
            (feature::UNIFIED_BATTERY, unified_battery::GET_CAPABILITIES) => {
                // Levels critical/low/good/full; rechargeable, state of charge in %.
                p[..2].copy_from_slice(&[0x0F, 0x03]);
            }
            (feature::UNIFIED_BATTERY, unified_battery::GET_STATUS) => {
                p[..4].copy_from_slice(&self.battery);
            }
            (feature::BATTERY_STATUS, battery_status::GET_LEVEL_STATUS) => {
                p[..3].copy_from_slice(&self.battery[..3]);
            }
            (feature::BATTERY_STATUS, battery_status::GET_CAPABILITY) => {
                // 4 levels, mileage (percentages), as the record's "100 %, next level
                // 50 %" shows; the flags byte itself is not recorded.
                p[..2].copy_from_slice(&[4, 0x02]);
            }
            (feature::HIRES_WHEEL, hires_wheel::GET_MODE) => p[0] = self.wheel_mode,
            (feature::HIRES_WHEEL, hires_wheel::SET_MODE) => {
                self.wheel_mode_writes += 1;
                self.wheel_mode = req.params[0] & 0x07;
                p[0] = self.wheel_mode;
            }
            (feature::THUMB_WHEEL, thumb_wheel::GET_INFO) => {
                p[..8].copy_from_slice(&self.thumb_info);
            }
            (feature::THUMB_WHEEL, thumb_wheel::GET_STATUS) => {
                p[0] = u8::from(self.thumb_diverted) * thumb_wheel::MODE_DIVERTED;
                p[1] = u8::from(self.thumb_inverted) * thumb_wheel::DIRECTION_BIT;
            }
            (feature::THUMB_WHEEL, thumb_wheel::SET_REPORTING) => {
                // The reply carries no data (Logitech's definition: an empty response).
                self.thumb_diverted = req.params[0] == thumb_wheel::MODE_DIVERTED;
                if !self.thumb_invert_ignored {
                    self.thumb_inverted = req.params[1] & thumb_wheel::DIRECTION_BIT != 0;
                }
            }
            (feature::ADJUSTABLE_DPI, adjustable_dpi::GET_SENSOR_COUNT) => p[0] = 1,
            (feature::ADJUSTABLE_DPI, _) if req.params[0] != adjustable_dpi::SENSOR => {
                return Some(self.error(&req, Failure::V20(ERR_INVALID_ARGUMENT)));
            }
            (feature::ADJUSTABLE_DPI, adjustable_dpi::GET_DPI_LIST) => {
                for (i, v) in self.dpi_list.iter().take(7).enumerate() {
                    p[1 + 2 * i..3 + 2 * i].copy_from_slice(&v.to_be_bytes());
                }
            }
            (feature::ADJUSTABLE_DPI, adjustable_dpi::GET_DPI) => {
                p[1..3].copy_from_slice(&self.dpi.to_be_bytes());
                p[3..5].copy_from_slice(&DEFAULT_DPI.to_be_bytes());
            }
            (feature::ADJUSTABLE_DPI, adjustable_dpi::SET_DPI) => {
                let dpi = req.u16_at(1);
                if !self.dpi_supported(dpi) {
                    return Some(self.error(&req, Failure::V20(ERR_INVALID_ARGUMENT)));
                }
                self.dpi = dpi;
                self.dpi_writes += 1;
                p[..3].copy_from_slice(&req.params[..3]);
            }
            (feature::SMART_SHIFT, smart_shift::GET)
            | (feature::SMART_SHIFT_ENHANCED, smart_shift::ENHANCED_GET) => {
                p[..3].copy_from_slice(&self.smart_shift);
            }
            (feature::SMART_SHIFT, smart_shift::SET)
            | (feature::SMART_SHIFT_ENHANCED, smart_shift::ENHANCED_SET) => {
                let [mode, threshold, default] = [req.params[0], req.params[1], req.params[2]];
                if mode > 2 {
                    return Some(self.error(&req, Failure::V20(ERR_INVALID_ARGUMENT)));
                }
                // 0 = leave unchanged.
                for (slot, v) in self.smart_shift.iter_mut().zip([mode, threshold, default]) {
                    if v != 0 {
                        *slot = v;
                    }
                }
                self.smart_shift_writes += 1;
                p[..3].copy_from_slice(&self.smart_shift);
            }
            (feature::HAPTIC, haptic::GET_CAPABILITIES) => {
                p[4..8].copy_from_slice(&HAPTIC_WAVEFORM_MASK.to_be_bytes());
            }
            (feature::HAPTIC, haptic::GET_CONFIG) => p[..2].copy_from_slice(&self.haptic),
            (feature::HAPTIC, haptic::SET_CONFIG) => {
                if req.params[1] > 100 {
                    return Some(self.error(&req, Failure::V20(ERR_INVALID_ARGUMENT)));
                }
                self.haptic = [req.params[0] & 1, req.params[1]];
                p[..2].copy_from_slice(&self.haptic);
            }
            (feature::HAPTIC, haptic::PLAY) => {
                let waveform = req.params[0];
                if waveform >= 32 || HAPTIC_WAVEFORM_MASK & (1 << waveform) == 0 {
                    return Some(self.error(&req, Failure::V20(ERR_INVALID_ARGUMENT)));
                }
                // An empty acknowledgment.
                self.haptic_plays.push(waveform);
            }
            // 0x0020 CONFIG_CHANGE (in every recorded table at index 5): logiops calls it
            // "Reset" and reads the cookie at start-up. `getConfigurationCookie() → cookie
            // u16` (0: the device's configuration was never marked),
            // `setConfigurationComplete(cookie)` echoes it.
            (0x0020, 0) => {}
            (0x0020, 1) => p[..2].copy_from_slice(&req.params[..2]),
            _ => return Some(self.error(&req, Failure::V20(ERR_INVALID_FUNCTION))),
        }
        Some(reply)
    }

    /// The control `cid` is pressed (`true`) or released. Returns the diverted-buttons
    /// notification when it is diverted; `None` when it is not (the device then reports
    /// it natively — the 3S's gesture button not at all).
    pub fn set_held(&mut self, cid: u16, held: bool) -> Option<Message> {
        let c = self.controls.iter_mut().find(|c| c.info.cid == cid)?;
        c.held = held;
        if !c.reporting.divert {
            return None;
        }
        let mut params = [0u8; LONG_PARAMS];
        let held = self
            .controls
            .iter()
            .filter(|c| c.held && c.reporting.divert)
            .take(4);
        for (i, c) in held.enumerate() {
            params[2 * i..2 * i + 2].copy_from_slice(&c.info.cid.to_be_bytes());
        }
        Some(self.notification(
            feature::REPROG_CONTROLS_V4,
            reprog::EVENT_DIVERTED_BUTTONS,
            &params,
        ))
    }

    /// The mouse moves by (`dx`, `dy`) counts.
    pub fn motion(&self, dx: i16, dy: i16) -> Motion {
        let raw = self
            .controls
            .iter()
            .any(|c| c.held && c.reporting.divert && c.reporting.raw_xy);
        if !raw {
            return Motion::Hid;
        }
        let mut params = [0u8; LONG_PARAMS];
        params[..2].copy_from_slice(&dx.to_be_bytes());
        params[2..4].copy_from_slice(&dy.to_be_bytes());
        Motion::RawXy(self.notification(feature::REPROG_CONTROLS_V4, reprog::EVENT_RAW_XY, &params))
    }

    /// The thumb wheel turns by `increments` (diverted resolution, positive in the default
    /// direction): the rotation notification (rotation status "active", touch) when it is
    /// diverted, `None` when it is not (see [`Emulator::thumb_native`]). The invert bit
    /// flips the sign.
    pub fn thumb(&self, increments: i16) -> Option<Message> {
        if !self.thumb_diverted {
            return None;
        }
        let rotation = if self.thumb_inverted {
            increments.saturating_neg()
        } else {
            increments
        };
        let mut params = [0u8; LONG_PARAMS];
        params[..2].copy_from_slice(&rotation.to_be_bytes());
        params[4] = 2;
        params[5] = 0x02;
        Some(self.notification(feature::THUMB_WHEEL, thumb_wheel::EVENT_ROTATION, &params))
    }

    /// The thumb wheel turns by `ratchets` (native resolution, positive in the default
    /// direction) while it is not diverted: the AC Pan count of the HID mouse report (the
    /// caller sends it); `None` when it is diverted. The invert bit flips the sign, as
    /// for [`Emulator::thumb`].
    pub fn thumb_native(&self, ratchets: i8) -> Option<i8> {
        if self.thumb_diverted {
            return None;
        }
        Some(if self.thumb_inverted {
            ratchets.saturating_neg()
        } else {
            ratchets
        })
    }

    /// Diverted increments per native ratchet of the thumb wheel, as a fraction
    /// (`diverted`, `native`).
    pub fn thumb_resolution(&self) -> (u16, u16) {
        (
            u16::from_be_bytes([self.thumb_info[2], self.thumb_info[3]]),
            u16::from_be_bytes([self.thumb_info[0], self.thumb_info[1]]),
        )
    }

    /// The battery changes to `status` (0x1004 `getStatus` bytes: state of charge %, level
    /// bits, charging status, external power; any bytes, for malformed ones too). Returns
    /// the 0x1004 status event the device broadcasts; `None` for a device without 0x1004
    /// (its 0x1000 level and status are changed silently).
    pub fn set_battery(&mut self, status: [u8; 4]) -> Option<Message> {
        self.battery = status;
        self.feature_index(feature::UNIFIED_BATTERY)?;
        let mut params = [0u8; LONG_PARAMS];
        params[..4].copy_from_slice(&status);
        Some(self.notification(
            feature::UNIFIED_BATTERY,
            unified_battery::EVENT_STATUS,
            &params,
        ))
    }

    /// The battery as `getStatus` answers it now.
    pub fn battery(&self) -> [u8; 4] {
        self.battery
    }

    /// The 0x1D4B status broadcast a device sends after it (re)connects: status 1
    /// (reconnection), request 1 (software reconfiguration needed).
    pub fn wireless_status(&self) -> Message {
        let mut params = [0u8; LONG_PARAMS];
        params[..3].copy_from_slice(&[1, 1, 0]);
        self.notification(
            feature::WIRELESS_DEVICE_STATUS,
            wireless_status::EVENT_STATUS,
            &params,
        )
    }

    /// A receiver's HID++ 1.0 device connection notification (0x41) for this device:
    /// protocol 0x10 (Bolt), link established or not, wireless PID b034.
    pub fn receiver_connection(&self, linked: bool) -> Message {
        let mut params = [0u8; LONG_PARAMS];
        let info = if linked {
            0x02
        } else {
            0x02 | receiver::LINK_NOT_ESTABLISHED
        };
        params[..3].copy_from_slice(&[info, 0x34, 0xB0]);
        Message {
            long: false,
            device: self.device,
            sub_id: receiver::DEVICE_CONNECTION,
            address: 0x10,
            params,
        }
    }

    fn control(&self, cid: u16) -> Option<&EmulatedControl> {
        self.controls.iter().find(|c| c.info.cid == cid)
    }

    fn notification(&self, feature_id: u16, event: u8, params: &[u8; LONG_PARAMS]) -> Message {
        let index = self
            .features
            .iter()
            .position(|f| f.id == feature_id)
            .unwrap_or(0);
        Message {
            long: true,
            device: self.device,
            sub_id: index as u8,
            address: event << 4,
            params: *params,
        }
    }

    fn error(&self, req: &Message, failure: Failure) -> Message {
        let mut params = [0u8; LONG_PARAMS];
        params[0] = req.address;
        match failure {
            Failure::V10(code) => {
                params[1] = code;
                Message {
                    long: req.long && !self.framing.short,
                    device: self.device,
                    sub_id: HIDPP10_ERROR,
                    address: req.sub_id,
                    params,
                }
            }
            Failure::V20(code) => {
                params[1] = code;
                Message {
                    long: true,
                    device: self.device,
                    sub_id: HIDPP20_ERROR,
                    address: req.sub_id,
                    params,
                }
            }
        }
    }
}
