//! HID++ 2.0 feature ids and the function numbers pawl uses.
//!
//! A feature is addressed by its index in the device's feature table, which the device
//! reports through Root (0x0000) `getFeature`; ids are fixed by Logitech. Sources: the
//! feature list in Logitech's HID++ 2.0 documentation (`hidpp20/README`), the kernel's
//! `drivers/hid/hid-logitech-hidpp.c` (`HIDPP_PAGE_ROOT`, `HIDPP_PAGE_HIRES_WHEEL`,
//! `HIDPP_PAGE_WIRELESS_DEVICE_STATUS` …), Solaar `hidpp20_constants.py`.

/// Root: feature index 0 on every HID++ 2.0 device.
pub const ROOT: u16 = 0x0000;
/// Feature set: enumerates the feature table.
pub const FEATURE_SET: u16 = 0x0001;
/// Device name and type.
pub const DEVICE_NAME: u16 = 0x0005;
/// Battery status (level and next level, the MX Master 3's battery feature).
pub const BATTERY_STATUS: u16 = 0x1000;
/// Unified battery (state of charge, the MX Master 3S's battery feature).
pub const UNIFIED_BATTERY: u16 = 0x1004;
/// Reprogrammable controls v4 ("Keyboard reprogrammable keys and mouse buttons 5"): the
/// control list and diversion.
pub const REPROG_CONTROLS_V4: u16 = 0x1B04;
/// Wireless device status: broadcast after a (re)connection.
pub const WIRELESS_DEVICE_STATUS: u16 = 0x1D4B;
/// High-resolution wheel (the kernel's `hid-logitech-hidpp` owns its mode bits).
pub const HIRES_WHEEL: u16 = 0x2121;
/// Thumb wheel.
pub const THUMB_WHEEL: u16 = 0x2150;
/// Adjustable DPI: the sensor's resolution (Solaar `SupportedFeature.ADJUSTABLE_DPI`).
pub const ADJUSTABLE_DPI: u16 = 0x2201;
/// SmartShift: the wheel's ratchet and its auto-disengage threshold (MX Master 3, 3S).
pub const SMART_SHIFT: u16 = 0x2110;
/// SmartShift enhanced: the same settings at other function numbers (MX Master 4;
/// Solaar `SMART_SHIFT_ENHANCED`). pawl uses it when a device has both.
pub const SMART_SHIFT_ENHANCED: u16 = 0x2111;

/// Haptic feedback (MX Master 4): plays the waveforms of its haptic motor. Not published by
/// Logitech; reverse engineered by Solaar (`hidpp20_constants.SupportedFeature.HAPTIC`,
/// `settings_templates.HapticLevel` / `PlayHapticWaveForm`) and OpenLogi
/// (`haptic_feedback.rs`).
pub const HAPTIC: u16 = 0x19B0;

/// The Root feature is always at index 0.
pub const ROOT_INDEX: u8 = 0;

/// Root functions.
pub mod root {
    /// `getFeature(featureId u16) → index, type, version`; index 0 = absent.
    pub const GET_FEATURE: u8 = 0;
    /// `getProtocolVersion(0, 0, ping) → major, minor, ping`. A HID++ 1.0 device answers
    /// with HID++ 1.0 error "invalid sub id" (kernel `hidpp_root_get_protocol_version`).
    pub const GET_PROTOCOL_VERSION: u8 = 1;
}

/// Device name (0x0005) functions.
pub mod device_name {
    /// `getDeviceNameCount() → length`.
    pub const GET_COUNT: u8 = 0;
    /// `getDeviceName(charIndex) → up to 16 bytes of the name`.
    pub const GET_NAME: u8 = 1;
}

/// Reprogrammable controls v4 (0x1B04) functions and events.
pub mod reprog {
    /// `getCount() → count`.
    pub const GET_COUNT: u8 = 0;
    /// `getCidInfo(index) → cid u16, tid u16, flags, pos, group, gmask, additional flags`.
    pub const GET_CID_INFO: u8 = 1;
    /// `getCidReporting(cid u16) → cid u16, flags, remap u16`.
    pub const GET_CID_REPORTING: u8 = 2;
    /// `setCidReporting(cid u16, flags, remap u16)`; the reply echoes the parameters.
    pub const SET_CID_REPORTING: u8 = 3;
    /// Event 0: the diverted controls held now (up to 4 CIDs, u16 each, 0 = none).
    pub const EVENT_DIVERTED_BUTTONS: u8 = 0;
    /// Event 1: raw pointer motion while a raw-XY-diverted control is held (dx, dy i16).
    pub const EVENT_RAW_XY: u8 = 1;
}

/// High-resolution wheel (0x2121) functions and events.
pub mod hires_wheel {
    /// `getWheelCapability() → multiplier, flags`.
    pub const GET_CAPABILITY: u8 = 0;
    /// `getWheelMode() → mode` (bit 0 target, bit 1 resolution, bit 2 invert).
    pub const GET_MODE: u8 = 1;
    /// `setWheelMode(mode)`. pawl only ever writes it with the resolution and invert bits
    /// it read (see `session::wheel_mode_with_target`).
    pub const SET_MODE: u8 = 2;
    /// Mode bit 0: wheel reports go to HID++ (diverted) instead of HID.
    pub const MODE_TARGET: u8 = 0x01;
    /// Mode bit 1: high resolution. Owned by the kernel's `hid-logitech-hidpp`.
    pub const MODE_RESOLUTION: u8 = 0x02;
    /// Mode bit 2: inverted. Owned by the kernel / the user's other tools.
    pub const MODE_INVERT: u8 = 0x04;
    /// `getRatchetSwitchState() → state` (0 free wheel, 1 ratcheted).
    pub const GET_RATCHET_SWITCH: u8 = 3;
    /// Event 0: wheel movement (byte 0: bit 4 hi-res, bits 0–3 periods; bytes 1–2 delta i16).
    pub const EVENT_WHEEL: u8 = 0;
}

/// Thumb wheel (0x2150) functions and events. Layouts: Logitech's `x2150_thumbwheel_v0`
/// definition as Logitech's own test framework encodes it (`pyhid.hidpp.features.mouse.
/// thumbwheel`: `getThumbwheelInfo`, `getThumbwheelStatus`, `setThumbwheelReporting`,
/// `thumbwheelEvent`); logiops `backend/hidpp20/features/ThumbWheel.cpp` reads the same
/// bytes.
pub mod thumb_wheel {
    /// `getThumbwheelInfo() → nativeRes u16, divertedRes u16, defaultDirection (bit 0),
    /// capabilities, timeUnit u16`. `nativeRes`: ratchets per turn in native (HID) mode,
    /// one AC Pan count each; `divertedRes`: rotation increments per turn when diverted.
    pub const GET_INFO: u8 = 0;
    /// `getThumbwheelStatus() → reportingMode (0 HID, 1 HID++), status (bit 0 invert,
    /// bit 1 touch, bit 2 proximity)`.
    pub const GET_STATUS: u8 = 1;
    /// `setThumbwheelReporting(reportingMode, invert (bit 0))`; the reply carries no data.
    pub const SET_REPORTING: u8 = 2;
    /// Event 0: rotation i16 (diverted increments), timestamp u16, rotation status
    /// (0 inactive, 1 start, 2 active, 3 stop), flags (bit 3 single tap, bit 2 proximity,
    /// bit 1 touch).
    pub const EVENT_ROTATION: u8 = 0;
    /// `reportingMode` 1: rotation comes as HID++ events instead of HID reports.
    pub const MODE_DIVERTED: u8 = 1;
    /// `defaultDirection` / status / `setThumbwheelReporting` bit 0: in the info, positive
    /// rotation is toward the right or front of the device (0: left or back); in the
    /// status and the request, the direction is inverted relative to that default.
    pub const DIRECTION_BIT: u8 = 0x01;
}

/// Adjustable DPI (0x2201) functions, as Solaar's `hidpp20.py` and `settings_templates.py`
/// (`AdjustableDpi`) use them: function numbers (Solaar writes the address byte,
/// `function << 4`: 0x10, 0x20, 0x30). Values are big-endian u16 dpi.
pub mod adjustable_dpi {
    /// `getSensorCount() → count`.
    pub const GET_SENSOR_COUNT: u8 = 0;
    /// `getSensorDpiList(sensor) → sensor, then u16 values up to a 0 terminator`; a value
    /// with the top three bits set (`0xE000 | step`) between two values means "every
    /// `step` from the one before to the one after" ([`crate::settings::DpiList`]).
    pub const GET_DPI_LIST: u8 = 1;
    /// `getSensorDpi(sensor) → sensor, dpi u16, default dpi u16`.
    pub const GET_DPI: u8 = 2;
    /// `setSensorDpi(sensor, dpi u16) → sensor, dpi u16` (echoed).
    pub const SET_DPI: u8 = 3;
    /// The sensor pawl addresses: 0, the only one of an MX Master.
    pub const SENSOR: u8 = 0;
    /// Top bits of a list value that is a step, not a dpi (Solaar: `val >> 13 == 0b111`).
    pub const STEP_MARK: u16 = 0xE000;
}

/// SmartShift (0x2110) and SmartShift enhanced (0x2111) functions. Both carry `mode (1
/// free, 2 ratchet), autoDisengage (1..=254, 255 = always ratchet), autoDisengageDefault`;
/// in a set request 0 means "leave unchanged" (Solaar `settings_templates.SmartShift`).
/// Function numbers; Solaar writes the address bytes (0x2110: 0x00, 0x10; 0x2111: 0x10,
/// 0x20).
pub mod smart_shift {
    /// 0x2110 `getRatchetControlMode`.
    pub const GET: u8 = 0;
    /// 0x2110 `setRatchetControlMode(mode, autoDisengage, autoDisengageDefault)`.
    pub const SET: u8 = 1;
    /// 0x2111 get (same reply layout).
    pub const ENHANCED_GET: u8 = 1;
    /// 0x2111 set (same parameters).
    pub const ENHANCED_SET: u8 = 2;
}

/// Haptic feedback (0x19B0) functions and waveforms, as Solaar (`settings_templates.py`:
/// `HapticLevel` reads 0x10 and writes 0x20, `PlayHapticWaveForm` writes 0x40) and
/// OpenLogi (`haptic_feedback.rs`) use them.
pub mod haptic {
    /// `getCapabilities() → …, supported waveform mask u32 at bytes 4–7 (bit N: waveform
    /// N)`.
    pub const GET_CAPABILITIES: u8 = 0;
    /// `getConfiguration() → enabled (bit 0), level 0–100`.
    pub const GET_CONFIG: u8 = 1;
    /// `setConfiguration(enabled, level 0–100)`. pawl never writes it: the level stays the
    /// user's.
    pub const SET_CONFIG: u8 = 2;
    /// `playWaveform(waveform, 0, 0)`; the device answers an empty acknowledgment.
    pub const PLAY: u8 = 4;
    /// Waveform "damp state change" (Solaar `HapticWaveForms`, OpenLogi
    /// `DampStateChange = 1`): what OpenLogi plays when an action fires.
    pub const WAVEFORM_DAMP_STATE_CHANGE: u8 = 1;
    /// Waveform "subtle collision" (Solaar `HapticWaveForms`, OpenLogi
    /// `SubtleCollision = 4`).
    pub const WAVEFORM_SUBTLE_COLLISION: u8 = 4;
}

/// Battery status (0x1000) functions, as the kernel's `hid-logitech-hidpp` reads them
/// (`hidpp20_batterylevel_get_battery_capacity` / `_info`).
pub mod battery_status {
    /// `getBatteryLevelStatus() → level %, next level %, status (0 discharging)`.
    pub const GET_LEVEL_STATUS: u8 = 0;
    /// `getBatteryCapability() → number of levels, flags (bit 1 mileage: percentages)`.
    pub const GET_CAPABILITY: u8 = 1;
}

/// Unified battery (0x1004) functions, as the kernel's `hid-logitech-hidpp` reads them
/// (`hidpp20_unifiedbattery_get_capabilities` / `_get_status`).
pub mod unified_battery {
    /// `getCapabilities() → supported levels (bit 0 critical, 1 low, 2 good, 3 full), flags
    /// (bit 0 rechargeable, bit 1 state of charge in %)`.
    pub const GET_CAPABILITIES: u8 = 0;
    /// `getStatus() → state of charge %, level, charging status (0 discharging), external
    /// power`.
    pub const GET_STATUS: u8 = 1;
    /// Event 0: the status broadcast a device sends when its battery changes, with the
    /// payload of `getStatus` (the kernel's `EVENT_UNIFIED_BATTERY_STATUS_EVENT`).
    pub const EVENT_STATUS: u8 = 0;
    /// `getCapabilities` flags bit 1: `getStatus` byte 0 is a state of charge in % (the
    /// kernel's `FLAG_UNIFIED_BATTERY_FLAGS_STATE_OF_CHARGE`).
    pub const FLAG_STATE_OF_CHARGE: u8 = 0x02;
}

/// Wireless device status (0x1D4B) events.
pub mod wireless_status {
    /// Event 0: status broadcast (status 1 = reconnection, request 1 = software
    /// reconfiguration needed, reason 1 = power switch).
    pub const EVENT_STATUS: u8 = 0;
}

/// HID++ 1.0 receiver notifications (sub ids).
pub mod receiver {
    /// Device disconnection (unpairing). Source: Solaar `hidpp10_constants`
    /// (`NOTIFICATION.DJ_PAIRING`… `0x40`), kernel `REPORT_TYPE_NOTIF_DEVICE_UNPAIRED`.
    pub const DEVICE_DISCONNECTION: u8 = 0x40;
    /// Device connection: byte 4 bit 6 set = link not established. Source: kernel
    /// `hidpp_report_is_connect_event` (sub id 0x41), Solaar `notifications.py`.
    pub const DEVICE_CONNECTION: u8 = 0x41;
    /// Bit of the connection notification's first parameter: link *not* established.
    pub const LINK_NOT_ESTABLISHED: u8 = 0x40;
}

/// A human name for the features pawl knows, for logs and `pawl devices`.
pub fn name(id: u16) -> &'static str {
    match id {
        ROOT => "Root",
        FEATURE_SET => "Feature set",
        DEVICE_NAME => "Device name",
        BATTERY_STATUS => "Battery status",
        UNIFIED_BATTERY => "Unified battery",
        REPROG_CONTROLS_V4 => "Reprogrammable controls v4",
        WIRELESS_DEVICE_STATUS => "Wireless device status",
        HIRES_WHEEL => "High-resolution wheel",
        THUMB_WHEEL => "Thumb wheel",
        ADJUSTABLE_DPI => "Adjustable DPI",
        SMART_SHIFT => "SmartShift",
        SMART_SHIFT_ENHANCED => "SmartShift enhanced",
        HAPTIC => "Haptic feedback",
        _ => "feature",
    }
}
