//! A mouse's battery as HID++ 0x1004 (Unified battery) reports it: what the macOS worker
//! shows, where no kernel driver reads it (on Linux the kernel's `hid-logitech-hidpp` owns
//! the battery and pawl reads its power supply instead).
//!
//! Layout, as the kernel reads it (`drivers/hid/hid-logitech-hidpp.c`,
//! `hidpp20_unifiedbattery_get_capabilities`, `_get_status`, `hidpp20_battery_event_1004`):
//! `getCapabilities` answers the supported levels (byte 0: bit 0 critical, 1 low, 2 good,
//! 3 full) and flags (byte 1, bit 1: state of charge in %); `getStatus` and the status
//! event 0 carry the state of charge in % (byte 0, meaningful only with that flag), the
//! level bits (byte 1), the charging status (byte 2: 0 discharging, 1 charging, 2 charging
//! slowly, 3 full, 4 error) and the external power status (byte 3).

use crate::report::Message;

/// What `getCapabilities` says about the status the device reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The level bits the device reports (bit 0 critical, 1 low, 2 good, 3 full).
    pub levels: u8,
    /// The status byte 0 is a state of charge in %.
    pub percent: bool,
}

impl Capabilities {
    /// The capabilities in `getCapabilities`' reply.
    pub fn parse(m: &Message) -> Capabilities {
        Capabilities {
            levels: m.params[0] & LEVEL_BITS,
            percent: m.params[1] & crate::feature::unified_battery::FLAG_STATE_OF_CHARGE != 0,
        }
    }
}

/// The four level bits of `getStatus` byte 1.
const LEVEL_BITS: u8 = 0x0F;

/// The battery's charge level (`getStatus` byte 1, the highest supported bit set), named
/// as the kernel's `capacity_level` names it (`hidpp20_unifiedbattery_map_level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Bit 0.
    Critical,
    /// Bit 1.
    Low,
    /// Bit 2 ("good"; the kernel's `Normal`).
    Normal,
    /// Bit 3.
    Full,
}

impl Level {
    /// The kernel's `capacity_level` text: `Critical`, `Low`, `Normal`, `Full`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Critical => "Critical",
            Level::Low => "Low",
            Level::Normal => "Normal",
            Level::Full => "Full",
        }
    }
}

/// The charging status (`getStatus` byte 2), folded as the kernel folds it
/// (`hidpp20_unifiedbattery_map_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charging {
    /// 0.
    Discharging,
    /// 1 (charging) or 2 (charging slowly).
    Charging,
    /// 3 (charge complete).
    Full,
    /// 4 (charging error).
    NotCharging,
}

impl Charging {
    /// The kernel's `status` text in lower case, as `pawl status` prints it on Linux.
    pub fn as_str(self) -> &'static str {
        match self {
            Charging::Discharging => "discharging",
            Charging::Charging => "charging",
            Charging::Full => "full",
            Charging::NotCharging => "not charging",
        }
    }
}

/// One battery status (`getStatus` reply or status event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Battery {
    /// State of charge, percent (0..=100), when the device reports one.
    pub percent: Option<u8>,
    /// The level, when the device reports levels and no percentage (as the kernel shows
    /// one or the other).
    pub level: Option<Level>,
    /// The charging status.
    pub charging: Charging,
    /// External power is connected (byte 3 non-zero).
    pub external_power: bool,
}

impl Battery {
    /// The status in `m` (a `getStatus` reply or the status event) for a device with
    /// `caps`. `None` for a malformed one: a percentage above 100, a charging status
    /// above 4, level bits outside the four, or neither a percentage nor a level.
    pub fn parse(m: &Message, caps: Capabilities) -> Option<Battery> {
        let [soc, level, charging, external] = [m.params[0], m.params[1], m.params[2], m.params[3]];
        if soc > 100 || level & !LEVEL_BITS != 0 {
            return None;
        }
        let charging = match charging {
            0 => Charging::Discharging,
            1 | 2 => Charging::Charging,
            3 => Charging::Full,
            4 => Charging::NotCharging,
            _ => return None,
        };
        let percent = caps.percent.then_some(soc);
        let level = if caps.percent {
            None
        } else {
            let bits = level & caps.levels;
            [
                (0x08, Level::Full),
                (0x04, Level::Normal),
                (0x02, Level::Low),
                (0x01, Level::Critical),
            ]
            .into_iter()
            .find(|(bit, _)| bits & bit != 0)
            .map(|(_, l)| l)
        };
        if percent.is_none() && level.is_none() {
            return None;
        }
        Some(Battery {
            percent,
            level,
            charging,
            external_power: external != 0,
        })
    }
}
