//! The per-device HID++ session: a state machine that, given the reports a device sends and
//! the time, says which request to write next, which engine frame the device's input
//! becomes, and what happened (for logs and `pawl devices`).
//!
//! Setup, one request in flight at a time (HID++ devices answer in order, one by one):
//! Root ping (protocol version; a HID++ 1.0 device answers "invalid sub id") → Root
//! `getFeature` for 0x0005, 0x1B04, 0x1D4B, 0x2121, 0x2150 → device name → the 0x1B04
//! control list → `setCidReporting` for each configured control (temporary divert, raw XY
//! while held) → 0x2121 `getWheelMode` (read only) → 0x2150 info and status → 0x2150
//! `setThumbwheelReporting` when [`ThumbWheel`] asks for a change → the mouse's own
//! settings ([`SessionConfig::settings`]) → [`Event::Ready`].
//!
//! # The mouse's own settings
//!
//! Root `getFeature` also looks up 0x2201 (adjustable DPI), 0x2110 (SmartShift) and 0x2111
//! (SmartShift enhanced, preferred when the device has it). A `dpi` that is set is checked
//! against the sensor's list (`getSensorDpiList`): a value the list has is written
//! (`setSensorDpi`), one it lacks is not, and [`Event::DpiUnsupported`] names the nearest
//! supported value; either way `getSensorDpi` reads back what is in force
//! ([`Session::dpi`]). A `smartshift` that is set is written and read back
//! ([`Session::smartshift`]). A `thumb_wheel_invert` that is set goes out as the invert bit
//! of the thumb wheel's `setThumbwheelReporting` (with the reporting mode the session wants
//! anyway, so one write) and is read back once ([`Event::ThumbInverted`]); a device that
//! keeps its own bit is reported, not written again. Nothing set, nothing is written (a
//! query session reads them all). Setup re-runs after every reconnection, so the settings
//! are applied again to a device that forgot them; [`Session::set_settings`] applies new
//! ones (a config reload).
//!
//! # Battery (macOS)
//!
//! With [`SessionConfig::read_battery`] (the macOS worker's sessions; on Linux the
//! kernel's `hid-logitech-hidpp` reads the battery and pawl sends no such request), Root
//! `getFeature` also looks up 0x1004 (Unified battery), and the last setup steps are its
//! `getCapabilities` and `getStatus` ([`Session::battery`], [`Event::Battery`]; layout in
//! [`crate::battery`]). The device's status event (0x1004 event 0) updates it as the
//! battery changes: no timer, no polling. Setup re-reads it after every reconnection. A
//! device without 0x1004 (the MX Master 2S and 3 have 0x1000 only) has no battery here.
//!
//! # Sense Panel and haptics (MX Master 4)
//!
//! With `[hidpp] sense_panel` the Sense Panel (CID 0x01A0) is one more control to divert
//! (without raw XY), only where the control list has it: a device without it (MX Master
//! 3S, 2S) gets no request and no [`Event::ControlMissing`]. Root `getFeature` looks up
//! 0x19B0 (haptics) too; [`Session::gesture_haptic`] gives the `playWaveform` request to
//! write when a gesture commits, and none on a device without it. It is written next to
//! the queue, not through it: its acknowledgment is not awaited.
//!
//! Afterwards, notifications become engine input: diverted-buttons events become button
//! transitions, raw-XY events become motion (the first one after a press is dropped: the
//! MX Master 3S reports motion from before the press in it), thumb-wheel events become
//! horizontal scroll (see [`Session::set_thumb_wheel`]; the daemon feeds it to the pointer
//! node's engine). A receiver's connection notification (0x41) or the device's wireless
//! status broadcast (0x1D4B) restarts the setup, because a device that slept, lost power or
//! reconnected has forgotten every temporary diversion.
//!
//! # Thumb wheel
//!
//! Diverted ([`ThumbWheel::Divert`]), the MX Master's thumb wheel reports rotation in
//! increments of `1/divertedRes` turn instead of HID AC Pan counts (ratchets) of
//! `1/nativeRes` turn. A ratchet is one `REL_HWHEEL` detent, 120 v120, so an increment is
//! `120 × nativeRes / divertedRes` v120 (MX Master 3: native 18, diverted 120 → 18 v120,
//! per logid's debug output in PixlOne/logiops#145; MX Master 4: 20/120 per OpenLogi's
//! `thumbwheel.rs`).
//!
//! Sign: kept as the device reports it, not normalised to the 0x2150 default direction
//! the way logiops does ("make right positive"). 0x2150 has one default direction and one
//! invert bit for the wheel in both reporting modes (Logitech's definition: the feature
//! diverts the HID reports "or inverts the rotation direction"; Mouser flips native scroll
//! with that bit without diverting), and pawl diverts with the invert bit the device had
//! (or the one `thumb_wheel_invert` sets),
//! so a diverted increment has the sign of the AC Pan count the same turn sends natively:
//! with `[scroll] invert_horizontal = false` the thumb wheel scrolls the way it does
//! without pawl. Consistent with the recording `mx1-thumb-wheel.events` (an MX Master
//! thumb wheel rolled up gives `REL_HWHEEL` −1) and Solaar's rule conditions (a diverted
//! rotation < 0 is `thumb_wheel_up`); not verified on hardware by pawl. Normalising
//! instead would turn every wheel whose default direction is "left or back" against what
//! it does without pawl. pawl's own inversion (`invert_horizontal`) is the engine's,
//! exactly as for the native `REL_HWHEEL`.
//!
//! **Never written:** persistent diversion (no field for it in [`Reporting`]) and the
//! 0x2121 wheel mode (the kernel's `hid-logitech-hidpp` owns its resolution bit; two
//! programs writing it give 8× or 120× wheel speed). There is no request for either.

use std::collections::VecDeque;
use std::fmt;

use pawl_engine::frame::{Buttons, FrameIn, WheelIn};
use pawl_engine::units::{Button, Micros, V120_PER_DETENT};

use pawl_engine::config::{MouseSettings, SmartShift};

use crate::battery::{Battery, Capabilities};
use crate::controls::{self, ControlInfo, Held, Reporting};
use crate::error::{self, ErrorReply};
use crate::feature::{
    self, adjustable_dpi, device_name, hires_wheel, receiver, reprog, root, smart_shift,
    thumb_wheel, unified_battery, wireless_status,
};
use crate::report::{Framing, Message, SOFTWARE_ID_DAEMON};
use crate::settings::DpiList;

/// One control to divert and the engine button it becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivertSpec {
    /// The control (e.g. [`controls::CID_GESTURE_BUTTON`]).
    pub cid: u16,
    /// The engine button its presses and releases become.
    pub button: Button,
    /// Divert motion as raw XY while it is held (the gesture button: movement never
    /// reaches the pointer while the gesture is drawn).
    pub raw_xy: bool,
    /// A device without it (or where it cannot be diverted) is reported
    /// ([`Event::ControlMissing`]); `false` for controls only some models have (the MX
    /// Master 4's Sense Panel): those are diverted where they exist, silently skipped
    /// elsewhere.
    pub required: bool,
}

/// What a session does with the thumb wheel (HID++ 0x2150).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThumbWheel {
    /// Leave its reporting as it is (read it only; `[hidpp] thumb_wheel = false`,
    /// queries); set after [`ThumbWheel::Divert`], pawl's own diversion is undone.
    #[default]
    Leave,
    /// Keep it native (its HID reports reach the kernel as `REL_HWHEEL`): un-divert it if
    /// it is found diverted (left over from a pawl that was killed).
    Native,
    /// Divert it (temporarily, reporting mode 1 with the device's own invert bit kept):
    /// rotation comes as HID++ events and becomes horizontal scroll frames.
    Divert,
}

/// What a session does with a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// Controls to divert (temporarily), in order.
    pub divert: Vec<DivertSpec>,
    /// The thumb wheel (0x2150); changed later with [`Session::set_thumb_wheel`].
    pub thumb_wheel: ThumbWheel,
    /// Read every control's current reporting (`getCidReporting`), to show what is
    /// diverted by anyone (`pawl devices`).
    pub read_reporting: bool,
    /// The mouse's own settings to write (dpi, SmartShift); unset ones are not written.
    /// Changed later with [`Session::set_settings`].
    pub settings: MouseSettings,
    /// Read the dpi and SmartShift in force even where [`SessionConfig::settings`] writes
    /// none (query sessions, for `pawl devices`).
    pub read_settings: bool,
    /// Read the battery over 0x1004 and follow its status events ([`Session::battery`]).
    /// Off on Linux, where the kernel's driver owns the battery.
    pub read_battery: bool,
    /// Play a haptic waveform (0x19B0) when a gesture fires an action
    /// ([`Session::gesture_haptic`]); nothing on a device without 0x19B0.
    pub haptic_on_gesture: bool,
    /// Software id of requests (1–15).
    pub sw_id: u8,
    /// How long to wait for a reply before the device counts as unreachable, µs.
    pub reply_timeout_us: u64,
}

impl ThumbWheel {
    /// What a daemon does with an MX Master's thumb wheel, on either platform: nothing with
    /// `[hidpp] thumb_wheel = false`; else divert it while the daemon transforms that
    /// mouse's scroll (`transformed`: there is somewhere to send its rotation as scroll —
    /// on Linux, a grabbed pointer node with a clone), and keep it native otherwise
    /// (undoing a diversion a killed pawl left).
    pub fn for_config(config: &pawl_engine::config::Config, transformed: bool) -> ThumbWheel {
        match (config.hidpp.thumb_wheel, transformed) {
            (false, _) => ThumbWheel::Leave,
            (true, false) => ThumbWheel::Native,
            (true, true) => ThumbWheel::Divert,
        }
    }
}

impl SessionConfig {
    /// A daemon's session for `config`, on either platform: the gesture button (CID
    /// 0x00C3) diverted with raw XY as the config's gesture button; with `[hidpp]
    /// sense_panel` the Sense Panel (CID 0x01A0, where the device has it) diverted without
    /// raw XY as that button; the thumb wheel as [`ThumbWheel::for_config`] says for a
    /// mouse whose scroll is not (yet) transformed; haptics as `[hidpp]
    /// haptic_on_gesture`.
    pub fn for_config(config: &pawl_engine::config::Config) -> SessionConfig {
        let mut c = SessionConfig::gesture(config.gesture.button);
        if let Some(button) = config.hidpp.sense_panel {
            c.divert.push(DivertSpec {
                cid: controls::CID_SENSE_PANEL,
                button,
                raw_xy: false,
                required: false,
            });
        }
        c.thumb_wheel = ThumbWheel::for_config(config, false);
        c.haptic_on_gesture = config.hidpp.haptic_on_gesture;
        c
    }

    /// The daemon's session: divert the gesture button to `gesture_button`, with raw XY.
    pub fn gesture(gesture_button: Button) -> SessionConfig {
        SessionConfig {
            divert: vec![DivertSpec {
                cid: controls::CID_GESTURE_BUTTON,
                button: gesture_button,
                raw_xy: true,
                required: true,
            }],
            thumb_wheel: ThumbWheel::Leave,
            read_reporting: false,
            settings: MouseSettings::default(),
            read_settings: false,
            read_battery: false,
            haptic_on_gesture: false,
            sw_id: SOFTWARE_ID_DAEMON,
            reply_timeout_us: 2_000_000,
        }
    }

    /// A read-only session for reports: diverts nothing, reads every control's reporting.
    pub fn query(sw_id: u8) -> SessionConfig {
        SessionConfig {
            divert: Vec::new(),
            thumb_wheel: ThumbWheel::Leave,
            read_reporting: true,
            settings: MouseSettings::default(),
            read_settings: true,
            read_battery: false,
            haptic_on_gesture: false,
            sw_id,
            reply_timeout_us: 1_000_000,
        }
    }
}

/// A request the session makes, named for logs and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Root `getProtocolVersion` (ping).
    Ping,
    /// Root `getFeature(id)`.
    GetFeature(u16),
    /// 0x0005 `getDeviceNameCount`.
    NameLength,
    /// 0x0005 `getDeviceName(offset)`.
    NameChunk(u8),
    /// 0x1B04 `getCount`.
    ControlCount,
    /// 0x1B04 `getCidInfo(index)`.
    ControlInfo(u8),
    /// 0x1B04 `getCidReporting(cid)`.
    GetReporting(u16),
    /// 0x1B04 `setCidReporting`.
    SetReporting(Reporting),
    /// 0x2121 `getWheelMode`.
    WheelMode,
    /// 0x2150 `getThumbwheelInfo`.
    ThumbInfo,
    /// 0x2150 `getThumbwheelStatus`.
    ThumbStatus,
    /// 0x2150 `setThumbwheelReporting(diverted, invert as the device had it)`.
    ThumbReporting(bool),
    /// 0x2201 `getSensorDpiList(0)`.
    DpiList,
    /// 0x2201 `getSensorDpi(0)`.
    GetDpi,
    /// 0x2201 `setSensorDpi(0, dpi)`.
    SetDpi(u16),
    /// 0x2110 `getRatchetControlMode` (0x2111: its get).
    GetSmartShift,
    /// 0x2110 `setRatchetControlMode` (0x2111: its set).
    SetSmartShift(SmartShift),
    /// 0x1004 `getCapabilities`.
    BatteryCapabilities,
    /// 0x1004 `getStatus`.
    BatteryStatus,
}

impl Request {
    /// Whether it is a step of the mouse's own settings.
    fn is_setting(&self) -> bool {
        matches!(
            self,
            Request::DpiList
                | Request::GetDpi
                | Request::SetDpi(_)
                | Request::GetSmartShift
                | Request::SetSmartShift(_)
        )
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Request::Ping => write!(f, "protocol version (Root 0x0000 ping)"),
            Request::GetFeature(id) => {
                write!(f, "feature lookup 0x{id:04X} ({})", feature::name(id))
            }
            Request::NameLength | Request::NameChunk(_) => write!(f, "device name (0x0005)"),
            Request::ControlCount | Request::ControlInfo(_) => {
                write!(f, "control list (0x1B04)")
            }
            Request::GetReporting(cid) => write!(
                f,
                "getCidReporting 0x{cid:04X} {} (0x1B04)",
                controls::cid_name(cid)
            ),
            Request::SetReporting(r) => write!(
                f,
                "{} 0x{:04X} {} (0x1B04 setCidReporting)",
                if r.divert { "divert" } else { "un-divert" },
                r.cid,
                controls::cid_name(r.cid)
            ),
            Request::WheelMode => write!(f, "wheel mode (0x2121 getWheelMode)"),
            Request::ThumbInfo => write!(f, "thumb wheel info (0x2150)"),
            Request::ThumbStatus => write!(f, "thumb wheel status (0x2150)"),
            Request::ThumbReporting(on) => write!(
                f,
                "{} thumb wheel (0x2150)",
                if on { "divert" } else { "un-divert" }
            ),
            Request::DpiList => write!(f, "dpi list (0x2201 getSensorDpiList)"),
            Request::GetDpi => write!(f, "dpi (0x2201 getSensorDpi)"),
            Request::SetDpi(dpi) => write!(f, "set dpi {dpi} (0x2201 setSensorDpi)"),
            Request::GetSmartShift => write!(f, "SmartShift mode (0x2110/0x2111)"),
            Request::SetSmartShift(m) => write!(f, "set SmartShift {m} (0x2110/0x2111)"),
            Request::BatteryCapabilities | Request::BatteryStatus => {
                write!(f, "battery (0x1004)")
            }
        }
    }
}

/// Something that happened, for logs and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The device answered the ping: HID++ `major.minor`.
    Protocol {
        /// Major version (2 or more for HID++ 2.0).
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// Setup finished; [`Session::controls`] says what is diverted.
    Ready,
    /// The device speaks HID++ 1.0 only: nothing to divert.
    Unsupported,
    /// The device is not reachable (receiver error, or no reply); setup restarts on the
    /// next connection notification.
    Offline(Option<ErrorReply>),
    /// A request failed; setup goes on without it.
    Error {
        /// The failed request.
        request: Request,
        /// The device's answer.
        error: ErrorReply,
    },
    /// A configured control is not on this device or cannot be diverted.
    ControlMissing(u16),
    /// The device lost its link (receiver notification): cancel the engine's gesture.
    Disconnected,
    /// The device (re)connected or woke: setup restarts; cancel the engine's gesture.
    Reconnected,
    /// After setup, the thumb wheel was diverted (`true`) or returned to native HID
    /// reporting (`false`) by [`Session::set_thumb_wheel`].
    ThumbWheel(bool),
    /// The configured dpi is not in the sensor's list: nothing was written; `nearest` is
    /// the closest value the sensor takes (`None`: the list was empty).
    DpiUnsupported {
        /// The configured dpi.
        wanted: u16,
        /// The closest supported dpi.
        nearest: Option<u16>,
    },
    /// The dpi in force, read back after pawl wrote (or refused to write) one.
    Dpi(u16),
    /// The SmartShift mode in force, read back after pawl wrote one.
    SmartShift(SmartShift),
    /// The thumb wheel's invert bit in force (0x2150), read back after pawl wrote the
    /// configured `thumb_wheel_invert`.
    ThumbInverted(bool),
    /// The battery as read in setup or as the device's status event changed it (only
    /// with [`SessionConfig::read_battery`]); sent when it differs from the last one.
    Battery(Battery),
    /// Settings are configured that the device has no feature for; they are not written.
    SettingsMissing {
        /// `dpi` is set and the device has no 0x2201.
        dpi: bool,
        /// `smartshift` is set and the device has neither 0x2111 nor 0x2110.
        smartshift: bool,
        /// `thumb_wheel_invert` is set and the device has no 0x2150.
        thumb_wheel_invert: bool,
    },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Event::Protocol { major, minor } => write!(f, "HID++ {major}.{minor}"),
            Event::Ready => write!(f, "HID++ setup done"),
            Event::Unsupported => {
                write!(
                    f,
                    "speaks HID++ 1.0 only: the gesture button cannot be diverted"
                )
            }
            Event::Offline(Some(e)) => write!(f, "not reachable: {e}"),
            Event::Offline(None) => write!(f, "not reachable: no reply"),
            Event::Error { request, error } => write!(f, "{request} failed: {error}"),
            Event::ControlMissing(cid) => write!(
                f,
                "control 0x{cid:04X} ({}) is not on this device or cannot be diverted",
                controls::cid_name(cid)
            ),
            Event::Disconnected => write!(f, "link lost"),
            Event::Reconnected => write!(f, "reconnected: diverting again"),
            Event::ThumbWheel(true) => {
                write!(f, "diverted thumb wheel (0x2150) as horizontal scroll")
            }
            Event::ThumbWheel(false) => {
                write!(f, "thumb wheel (0x2150) back to native HID reporting")
            }
            Event::DpiUnsupported {
                wanted,
                nearest: Some(n),
            } => write!(
                f,
                "dpi {wanted} is not supported by the sensor (0x2201): the nearest is {n}; nothing written"
            ),
            Event::DpiUnsupported {
                wanted,
                nearest: None,
            } => write!(
                f,
                "dpi {wanted} not written: the sensor (0x2201) lists no dpi"
            ),
            Event::Dpi(dpi) => write!(f, "dpi {dpi} (0x2201)"),
            Event::SmartShift(m) => write!(f, "smartshift {m} (SmartShift)"),
            Event::ThumbInverted(on) => write!(f, "thumb_wheel_invert {on} (0x2150)"),
            Event::Battery(b) => {
                write!(f, "battery ")?;
                match (b.percent, b.level) {
                    (Some(p), _) => write!(f, "{p} %")?,
                    (None, Some(l)) => write!(f, "{}", l.as_str())?,
                    (None, None) => write!(f, "unknown")?,
                }
                write!(f, ", {} (0x1004)", b.charging.as_str())
            }
            Event::SettingsMissing {
                dpi,
                smartshift,
                thumb_wheel_invert,
            } => {
                let missing = [
                    (dpi, "adjustable DPI (0x2201)", "dpi"),
                    (smartshift, "SmartShift (0x2110/0x2111)", "smartshift"),
                    (
                        thumb_wheel_invert,
                        "thumb wheel (0x2150)",
                        "thumb_wheel_invert",
                    ),
                ];
                let mut first = true;
                write!(f, "the device has no ")?;
                for (_, feature, _) in missing.iter().filter(|m| m.0) {
                    write!(f, "{}{feature}", if first { "" } else { " nor " })?;
                    first = false;
                }
                first = true;
                write!(f, ": ")?;
                for (_, _, key) in missing.iter().filter(|m| m.0) {
                    write!(f, "{}{key}", if first { "" } else { " and " })?;
                    first = false;
                }
                write!(f, " not written")
            }
        }
    }
}

/// What one call produced. Fixed size, no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// A request to write to the device now.
    pub request: Option<Message>,
    /// Input for the device's engine ([`pawl_engine::DeviceEngine::frame`]).
    pub frame: Option<FrameIn>,
    /// What happened (at most two per call).
    pub events: [Option<Event>; 2],
}

impl Output {
    fn event(&mut self, e: Event) {
        if let Some(slot) = self.events.iter_mut().find(|s| s.is_none()) {
            *slot = Some(e);
        }
    }

    /// The events, in order.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        self.events.iter().flatten().copied()
    }
}

/// One control of the device, as pawl knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control {
    /// The control list entry.
    pub info: ControlInfo,
    /// Its reporting: as pawl set it, or as read with [`SessionConfig::read_reporting`].
    pub reporting: Option<Reporting>,
}

/// Where the session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not started.
    Idle,
    /// Setup requests in progress.
    Setup,
    /// Setup done; notifications are translated.
    Ready,
    /// The device is not reachable; waiting for a connection notification.
    Offline,
    /// HID++ 1.0 only.
    Unsupported,
}

/// Feature indices (0 = absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Indices {
    name: u8,
    reprog: u8,
    wireless: u8,
    hires: u8,
    thumb: u8,
    dpi: u8,
    smart_shift: u8,
    smart_shift_enhanced: u8,
    haptic: u8,
    battery: u8,
}

/// Thumb wheel resolution and direction (0x2150 `getThumbwheelInfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThumbInfo {
    /// Ratchets per turn when reported through HID; one ratchet is one AC Pan count, i.e.
    /// one `REL_HWHEEL` detent (120 v120). MX Master 3: 18 (logid's debug output in
    /// PixlOne/logiops#145).
    pub native_res: u16,
    /// Rotation increments per turn when diverted. MX Master 3: 120 (same source).
    pub diverted_res: u16,
    /// The device's default direction: positive rotation is toward its right or front
    /// (`false`: left or back). Informational: pawl keeps the sign the device reports
    /// (module documentation, "Thumb wheel").
    pub positive_right_or_front: bool,
}

/// The thumb wheel's reporting as read (0x2150 `getThumbwheelStatus`) or as set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThumbStatus {
    /// Diverted (reporting mode 1): rotation comes as HID++ events, not HID reports.
    pub diverted: bool,
    /// The direction is inverted relative to the device's default (set by Logitech's
    /// software, Solaar's "thumb-scroll-invert" or pawl's `thumb_wheel_invert`); without
    /// that key pawl writes it back unchanged.
    pub inverted: bool,
}

/// The HID++ session of one device (one device index on one hidraw node).
#[derive(Clone, Debug)]
pub struct Session {
    config: SessionConfig,
    framing: Framing,
    device: u8,
    phase: Phase,
    queue: VecDeque<Request>,
    pending: Option<(Request, Message, Micros)>,
    indices: Indices,
    protocol: Option<(u8, u8)>,
    name_len: usize,
    name: String,
    controls: Vec<Control>,
    wheel_mode: Option<u8>,
    thumb: Option<ThumbInfo>,
    /// The thumb wheel's reporting; `None` until its status was read (or failed to be).
    thumb_status: Option<ThumbStatus>,
    /// The thumb wheel's diversion is pawl's: pawl diverted it, or found it diverted while
    /// asked to divert it (left over from a pawl that was killed).
    thumb_ours: bool,
    /// The configured `thumb_wheel_invert` was written since the last setup or settings
    /// change: a read-back that differs is reported, not written again.
    thumb_invert_written: bool,
    thumb_carry: i64,
    held: Held,
    drop_raw_xy: bool,
    /// The feature lookups are done and the setup steps after them queued.
    features_done: bool,
    dpi_list: Option<DpiList>,
    dpi: Option<u16>,
    smartshift: Option<SmartShift>,
    battery_caps: Capabilities,
    /// Kept over a restart (setup reads it again); forgotten when the link is lost.
    battery: Option<Battery>,
}

impl Session {
    /// A session with the device at `device` index (`0xFF` direct, 1–6 behind a receiver)
    /// on a node declaring `framing`. Call [`Session::start`] next.
    pub fn new(config: SessionConfig, framing: Framing, device: u8) -> Session {
        Session {
            config,
            framing,
            device,
            phase: Phase::Idle,
            queue: VecDeque::new(),
            pending: None,
            indices: Indices::default(),
            protocol: None,
            name_len: 0,
            name: String::new(),
            controls: Vec::new(),
            wheel_mode: None,
            thumb: None,
            thumb_status: None,
            thumb_ours: false,
            thumb_invert_written: false,
            thumb_carry: 0,
            held: Held::default(),
            drop_raw_xy: false,
            features_done: false,
            dpi_list: None,
            dpi: None,
            smartshift: None,
            battery_caps: Capabilities::default(),
            battery: None,
        }
    }

    /// Starts (or restarts) setup: forgets what the device had diverted and asks for the
    /// protocol version.
    pub fn start(&mut self, now: Micros, out: &mut Output) {
        self.phase = Phase::Setup;
        self.queue.clear();
        self.pending = None;
        self.indices = Indices::default();
        self.protocol = None;
        self.name_len = 0;
        self.name.clear();
        self.controls.clear();
        self.wheel_mode = None;
        self.thumb = None;
        self.thumb_status = None;
        self.thumb_ours = false;
        self.thumb_invert_written = false;
        self.thumb_carry = 0;
        self.held = Held::default();
        self.drop_raw_xy = false;
        self.features_done = false;
        self.dpi_list = None;
        self.dpi = None;
        self.smartshift = None;
        self.battery_caps = Capabilities::default();
        self.queue.push_back(Request::Ping);
        self.send_next(now, out);
    }

    /// The device index.
    pub fn device(&self) -> u8 {
        self.device
    }

    /// Where the session is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The HID++ protocol version, once known.
    pub fn protocol(&self) -> Option<(u8, u8)> {
        self.protocol
    }

    /// The device's name (0x0005), empty until read.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The control list with each control's reporting as far as known.
    pub fn controls(&self) -> &[Control] {
        &self.controls
    }

    /// The controls pawl diverted and the device confirmed.
    pub fn diverted(&self) -> impl Iterator<Item = Reporting> + '_ {
        self.controls
            .iter()
            .filter_map(|c| c.reporting)
            .filter(|r| r.divert)
    }

    /// The feature index the device gave for `feature` (Root `getFeature`): `None` before
    /// the lookup, for a feature the device lacks, and for one pawl does not look up
    /// (only 0x0005, 0x1B04, 0x1D4B, 0x2121, 0x2150, 0x2201, 0x2110, 0x2111 and 0x19B0
    /// are, and 0x1004 with [`SessionConfig::read_battery`]). Root (0x0000) is always 0.
    /// For checks of what the session writes (the fuzz targets: nothing but
    /// `getWheelMode` to the 0x2121 index).
    pub fn feature_index(&self, feature: u16) -> Option<u8> {
        let idx = self.indices;
        let index = match feature {
            feature::ROOT => return Some(feature::ROOT_INDEX),
            feature::DEVICE_NAME => idx.name,
            feature::REPROG_CONTROLS_V4 => idx.reprog,
            feature::WIRELESS_DEVICE_STATUS => idx.wireless,
            feature::HIRES_WHEEL => idx.hires,
            feature::THUMB_WHEEL => idx.thumb,
            feature::ADJUSTABLE_DPI => idx.dpi,
            feature::SMART_SHIFT => idx.smart_shift,
            feature::SMART_SHIFT_ENHANCED => idx.smart_shift_enhanced,
            feature::HAPTIC => idx.haptic,
            feature::UNIFIED_BATTERY => idx.battery,
            _ => 0,
        };
        (index != 0).then_some(index)
    }

    /// The dpi in force as last read back (0x2201 `getSensorDpi`); `None` before, for a
    /// device without 0x2201 and where nothing asked for it.
    pub fn dpi(&self) -> Option<u16> {
        self.dpi
    }

    /// The sensor's dpi list, once read (only when a dpi is configured).
    pub fn dpi_list(&self) -> Option<&DpiList> {
        self.dpi_list.as_ref()
    }

    /// The battery as last read or reported by the device (0x1004); `None` without
    /// [`SessionConfig::read_battery`], for a device without 0x1004, for a malformed
    /// status, and after the link was lost until setup reads it again.
    pub fn battery(&self) -> Option<Battery> {
        self.battery
    }

    /// The SmartShift mode in force as last read back; `None` as for [`Session::dpi`].
    pub fn smartshift(&self) -> Option<SmartShift> {
        self.smartshift
    }

    /// Whether the device has haptic feedback (0x19B0), once the feature lookups found it.
    pub fn has_haptics(&self) -> bool {
        self.indices.haptic != 0
    }

    /// The 0x19B0 `playWaveform` request (damp state change) to write when a gesture fired
    /// an action ([`gesture_committed`]): `Some` with [`SessionConfig::haptic_on_gesture`]
    /// after setup on a device that has 0x19B0, `None` otherwise. Built in place, nothing
    /// allocated; write it at once. Its acknowledgment is not awaited: it matches no
    /// pending request and is ignored, so the requests in the queue are never held up.
    pub fn gesture_haptic(&self) -> Option<Message> {
        if !self.config.haptic_on_gesture || self.phase != Phase::Ready || self.indices.haptic == 0
        {
            return None;
        }
        Some(Message::request(
            self.framing,
            self.device,
            self.indices.haptic,
            feature::haptic::PLAY,
            self.config.sw_id,
            &[feature::haptic::WAVEFORM_DAMP_STATE_CHANGE, 0, 0],
        ))
    }

    /// Changes the mouse's own settings to write. Before the feature lookups are done,
    /// setup applies the new ones by itself; afterwards their steps are queued again (now,
    /// when setup is done: `out.request`). Unset keys write nothing, so a key removed from
    /// the config leaves the mouse as it is. A device not reachable now applies them at
    /// its next setup.
    pub fn set_settings(&mut self, settings: MouseSettings, now: Micros, out: &mut Output) {
        self.config.settings = settings;
        if !self.features_done || !matches!(self.phase, Phase::Setup | Phase::Ready) {
            return;
        }
        self.queue.retain(|r| !r.is_setting());
        self.queue_settings(out);
        self.thumb_invert_written = false;
        if !self.thumb_reporting_in_flight() {
            self.reconcile_thumb();
        }
        self.send_next(now, out);
    }

    /// The 0x2121 wheel mode as read (bit 0 target, bit 1 hi-res, bit 2 invert).
    pub fn wheel_mode(&self) -> Option<u8> {
        self.wheel_mode
    }

    /// Whether the thumb wheel is diverted (by pawl, or by anyone as read in setup).
    pub fn thumb_diverted(&self) -> bool {
        self.thumb_status.is_some_and(|t| t.diverted)
    }

    /// The thumb wheel's resolution and direction, once read; `None` for a device without
    /// one (no 0x2150).
    pub fn thumb_info(&self) -> Option<ThumbInfo> {
        self.thumb
    }

    /// The thumb wheel's reporting as last read or set; `None` before setup read it.
    pub fn thumb_status(&self) -> Option<ThumbStatus> {
        self.thumb_status
    }

    /// The config the session runs with (its thumb wheel mode as last set).
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Changes what the session does with the thumb wheel. Before setup has read the
    /// thumb wheel's status, the setup follows the new mode by itself; afterwards (also
    /// once setup is done) the `setThumbwheelReporting` request that makes the device match
    /// is written now (`out.request`), and [`Event::ThumbWheel`] follows its reply. A
    /// device without a thumb wheel, or one not reachable now, only remembers the mode for
    /// its next setup.
    pub fn set_thumb_wheel(&mut self, mode: ThumbWheel, now: Micros, out: &mut Output) {
        if self.config.thumb_wheel == mode {
            return;
        }
        self.config.thumb_wheel = mode;
        // An answer in flight reconciles when it arrives.
        if self.thumb_status.is_some() && !self.thumb_reporting_in_flight() {
            self.reconcile_thumb();
            self.send_next(now, out);
        }
    }

    /// A `setThumbwheelReporting` or its read-back is pending or queued.
    fn thumb_reporting_in_flight(&self) -> bool {
        let thumb = |r: &Request| matches!(r, Request::ThumbReporting(_) | Request::ThumbStatus);
        self.pending.is_some_and(|(r, _, _)| thumb(&r)) || self.queue.iter().any(thumb)
    }

    /// The invert bit to write with the thumb wheel's reporting: the configured
    /// `thumb_wheel_invert`, else the device's own as read.
    fn thumb_invert(&self) -> bool {
        self.config
            .settings
            .thumb_wheel_invert
            .unwrap_or(self.thumb_status.is_some_and(|t| t.inverted))
    }

    /// Queues (first) the `setThumbwheelReporting` that makes the device's reporting what
    /// [`SessionConfig::thumb_wheel`] asks for, if it differs. [`ThumbWheel::Leave`] undoes
    /// only pawl's own diversion (the mode was [`ThumbWheel::Divert`] before).
    fn reconcile_thumb(&mut self) {
        let Some(status) = self.thumb_status else {
            return;
        };
        let want = match self.config.thumb_wheel {
            ThumbWheel::Leave if self.thumb_ours => false,
            // The reporting stays as anyone left it; only the invert bit may change.
            ThumbWheel::Leave => status.diverted,
            ThumbWheel::Native => false,
            ThumbWheel::Divert => true,
        };
        // Diverted while pawl asks for it: pawl's from now on (undone on exit), however it
        // came to be diverted — also when the mode changes to divert after setup read it.
        if want && status.diverted && self.config.thumb_wheel == ThumbWheel::Divert {
            self.thumb_ours = true;
        }
        let invert = !self.thumb_invert_written && status.inverted != self.thumb_invert();
        if status.diverted != want || invert {
            self.queue.push_front(Request::ThumbReporting(want));
        }
    }

    /// When [`Session::timeout`] must be called (a request is waiting for its reply);
    /// `None` when nothing is outstanding, so an idle daemon sets no timer.
    pub fn deadline(&self) -> Option<Micros> {
        self.pending.map(|(_, _, d)| d)
    }

    /// The reply deadline passed: the device counts as unreachable until it reconnects.
    pub fn timeout(&mut self, now: Micros, out: &mut Output) {
        if let Some((_, _, deadline)) = self.pending
            && now >= deadline
        {
            self.pending = None;
            self.queue.clear();
            self.phase = Phase::Offline;
            out.event(Event::Offline(None));
        }
    }

    /// The requests that undo pawl's diversions (for a clean exit): each diverted control
    /// back to native reporting without raw XY, the thumb wheel back to HID (when the
    /// diversion is pawl's; its invert bit as the device had it). Write them all; their
    /// replies need no waiting.
    pub fn undivert(&mut self) -> Vec<Message> {
        let mut res = Vec::new();
        for i in 0..self.controls.len() {
            let Some(r) = self.controls[i].reporting else {
                continue;
            };
            let ours = self.config.divert.iter().any(|s| s.cid == r.cid);
            if ours && (r.divert || r.raw_xy) {
                let off = Reporting {
                    cid: r.cid,
                    divert: false,
                    raw_xy: false,
                };
                res.push(self.message(Request::SetReporting(off)));
                self.controls[i].reporting = Some(off);
            }
        }
        if self.thumb_ours && self.thumb_diverted() {
            res.push(self.message(Request::ThumbReporting(false)));
            if let Some(status) = self.thumb_status.as_mut() {
                status.diverted = false;
            }
        }
        self.thumb_ours = false;
        self.pending = None;
        self.queue.clear();
        res
    }

    /// Handles one report read from the device's hidraw node (report id first). Reports
    /// that are not HID++, not for this device index, or replies to other programs are
    /// ignored after a few byte compares.
    #[inline]
    pub fn input(&mut self, bytes: &[u8], now: Micros, out: &mut Output) {
        let Some(m) = Message::parse(bytes) else {
            return;
        };
        if m.device != self.device {
            return;
        }
        if m.sw_id() == 0 && m.sub_id != error::HIDPP10_ERROR && m.sub_id != error::HIDPP20_ERROR {
            self.notification(&m, now, out);
            return;
        }
        let Some((request, sent, _)) = self.pending else {
            return;
        };
        if let Some(e) = ErrorReply::parse(&m) {
            if e.answers(&sent) {
                self.pending = None;
                self.failed(request, e, now, out);
            }
            return;
        }
        if m.sub_id == sent.sub_id && m.address == sent.address {
            self.pending = None;
            self.reply(request, &m, out);
            self.send_next(now, out);
        }
    }

    fn notification(&mut self, m: &Message, now: Micros, out: &mut Output) {
        let idx = self.indices;
        if !m.long && m.sub_id == receiver::DEVICE_CONNECTION {
            if m.params[0] & receiver::LINK_NOT_ESTABLISHED != 0 {
                self.lost(out);
            } else {
                out.event(Event::Reconnected);
                self.start(now, out);
            }
            return;
        }
        if !m.long && m.sub_id == receiver::DEVICE_DISCONNECTION {
            self.lost(out);
            return;
        }
        if m.sub_id == 0 {
            return;
        }
        // Setup may still be reading after the diversion: notifications count from then.
        if m.sub_id == idx.reprog && matches!(self.phase, Phase::Ready | Phase::Setup) {
            match m.function() {
                reprog::EVENT_DIVERTED_BUTTONS => self.buttons(Held::parse(m), now, out),
                reprog::EVENT_RAW_XY => {
                    if self.drop_raw_xy {
                        self.drop_raw_xy = false;
                        return;
                    }
                    out.frame = Some(FrameIn {
                        time: now,
                        dx: i32::from(m.i16_at(0)),
                        dy: i32::from(m.i16_at(2)),
                        ..FrameIn::default()
                    });
                }
                _ => {}
            }
        } else if m.sub_id == idx.battery
            && m.function() == unified_battery::EVENT_STATUS
            && self.config.read_battery
        {
            self.set_battery(Battery::parse(m, self.battery_caps), out);
        } else if m.sub_id == idx.wireless && m.function() == wireless_status::EVENT_STATUS {
            // 0x1D4B event 0 is the status broadcast a device sends after it
            // (re)connects; its temporary diversions are gone.
            out.event(Event::Reconnected);
            self.start(now, out);
        } else if m.sub_id == idx.thumb
            && m.function() == thumb_wheel::EVENT_ROTATION
            && self.config.thumb_wheel == ThumbWheel::Divert
            && self.thumb_diverted()
        {
            let v120 = self.thumb_v120(m.i16_at(0));
            if v120 != 0 {
                out.frame = Some(FrameIn {
                    time: now,
                    hwheel: WheelIn {
                        v120,
                        detents: v120 / V120_PER_DETENT,
                    },
                    ..FrameIn::default()
                });
            }
        }
    }

    /// Diverted controls held now → button transitions of the configured buttons.
    fn buttons(&mut self, held: Held, now: Micros, out: &mut Output) {
        let mut buttons = Buttons::default();
        for spec in &self.config.divert {
            let was = self.held.contains(spec.cid);
            let is = held.contains(spec.cid);
            if was != is {
                buttons.push(spec.button, is);
                if is && spec.raw_xy {
                    self.drop_raw_xy = true;
                }
            }
        }
        self.held = held;
        if !buttons.is_empty() {
            out.frame = Some(FrameIn {
                time: now,
                buttons,
                ..FrameIn::default()
            });
        }
    }

    fn lost(&mut self, out: &mut Output) {
        self.pending = None;
        self.queue.clear();
        self.held = Held::default();
        self.drop_raw_xy = false;
        for c in &mut self.controls {
            c.reporting = None;
        }
        // A device that lost its link forgets the diversion; setup reads it again.
        self.thumb_status = None;
        self.thumb_ours = false;
        self.thumb_carry = 0;
        self.battery = None;
        self.phase = Phase::Offline;
        out.event(Event::Disconnected);
    }

    /// Converts a diverted thumb wheel rotation (diverted-resolution increments) to v120
    /// with the sign the device reports (see the module documentation, "Thumb wheel"); the
    /// remainder is carried so slow turns lose nothing.
    fn thumb_v120(&mut self, rotation: i16) -> i32 {
        let Some(t) = self.thumb else { return 0 };
        let diverted = i64::from(t.diverted_res.max(1));
        self.thumb_carry +=
            i64::from(rotation) * i64::from(V120_PER_DETENT) * i64::from(t.native_res.max(1));
        let v = self.thumb_carry / diverted;
        self.thumb_carry -= v * diverted;
        v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    }

    fn failed(&mut self, request: Request, e: ErrorReply, now: Micros, out: &mut Output) {
        match (request, e) {
            (
                Request::Ping,
                ErrorReply::V10 {
                    code: error::HIDPP10_INVALID_SUBID,
                    ..
                },
            ) => {
                self.queue.clear();
                self.phase = Phase::Unsupported;
                out.event(Event::Unsupported);
            }
            (Request::Ping, _) => {
                self.queue.clear();
                self.phase = Phase::Offline;
                out.event(Event::Offline(Some(e)));
            }
            (Request::SetReporting(r), _) => {
                out.event(Event::Error { request, error: e });
                if let Some(c) = self.controls.iter_mut().find(|c| c.info.cid == r.cid) {
                    c.reporting = None;
                }
                self.send_next(now, out);
            }
            (Request::ThumbStatus, _) => {
                // Unknown: taken as native and not inverted (what a device has after it
                // powers up).
                out.event(Event::Error { request, error: e });
                self.thumb_status = Some(ThumbStatus::default());
                self.reconcile_thumb();
                self.send_next(now, out);
            }
            _ => {
                out.event(Event::Error { request, error: e });
                // Keep the setup's shape: a failed last lookup or last control entry still
                // leads to the steps that follow them.
                match (request, self.queue.front()) {
                    (Request::GetFeature(_), Some(Request::GetFeature(_))) => {}
                    (Request::GetFeature(_), _) => self.after_features(out),
                    (Request::ControlInfo(_), Some(Request::ControlInfo(_))) => {}
                    (Request::ControlInfo(_), _) => self.queue_diversions(out),
                    _ => {}
                }
                self.send_next(now, out);
            }
        }
    }

    fn reply(&mut self, request: Request, m: &Message, out: &mut Output) {
        match request {
            Request::Ping => {
                let (major, minor) = (m.params[0], m.params[1]);
                self.protocol = Some((major, minor));
                out.event(Event::Protocol { major, minor });
                for id in [
                    feature::DEVICE_NAME,
                    feature::REPROG_CONTROLS_V4,
                    feature::WIRELESS_DEVICE_STATUS,
                    feature::HIRES_WHEEL,
                    feature::THUMB_WHEEL,
                    feature::ADJUSTABLE_DPI,
                    feature::SMART_SHIFT,
                    feature::SMART_SHIFT_ENHANCED,
                    feature::HAPTIC,
                ] {
                    self.queue.push_back(Request::GetFeature(id));
                }
                if self.config.read_battery {
                    self.queue
                        .push_back(Request::GetFeature(feature::UNIFIED_BATTERY));
                }
            }
            Request::GetFeature(id) => {
                let index = m.params[0];
                match id {
                    feature::DEVICE_NAME => self.indices.name = index,
                    feature::REPROG_CONTROLS_V4 => self.indices.reprog = index,
                    feature::WIRELESS_DEVICE_STATUS => self.indices.wireless = index,
                    feature::HIRES_WHEEL => self.indices.hires = index,
                    feature::THUMB_WHEEL => self.indices.thumb = index,
                    feature::ADJUSTABLE_DPI => self.indices.dpi = index,
                    feature::SMART_SHIFT => self.indices.smart_shift = index,
                    feature::SMART_SHIFT_ENHANCED => self.indices.smart_shift_enhanced = index,
                    feature::HAPTIC => self.indices.haptic = index,
                    feature::UNIFIED_BATTERY => self.indices.battery = index,
                    _ => {}
                }
                if !matches!(self.queue.front(), Some(Request::GetFeature(_))) {
                    self.after_features(out);
                }
            }
            Request::NameLength => {
                self.name_len = usize::from(m.params[0]);
                if self.name_len > 0 {
                    self.queue.push_front(Request::NameChunk(0));
                }
            }
            Request::NameChunk(offset) => {
                let want = self.name_len.saturating_sub(usize::from(offset));
                let chunk = &m.params[..want.min(m.params.len())];
                let chunk = chunk.split(|&b| b == 0).next().unwrap_or(&[]);
                self.name.push_str(&String::from_utf8_lossy(chunk));
                let next = usize::from(offset) + chunk.len();
                if chunk.len() == m.params.len() && next < self.name_len {
                    self.queue.push_front(Request::NameChunk(next as u8));
                }
            }
            Request::ControlCount => {
                let n = m.params[0];
                for i in (0..n).rev() {
                    self.queue.push_front(Request::ControlInfo(i));
                }
                if n == 0 {
                    self.queue_diversions(out);
                }
            }
            Request::ControlInfo(i) => {
                self.controls.push(Control {
                    info: ControlInfo::parse(m),
                    reporting: None,
                });
                if !matches!(self.queue.front(), Some(Request::ControlInfo(j)) if *j > i) {
                    self.queue_diversions(out);
                }
            }
            Request::GetReporting(_) | Request::SetReporting(_) => {
                let r = Reporting::parse(m);
                if let Some(c) = self.controls.iter_mut().find(|c| c.info.cid == r.cid) {
                    c.reporting = Some(r);
                }
            }
            Request::WheelMode => self.wheel_mode = Some(m.params[0]),
            Request::ThumbInfo => {
                self.thumb = Some(ThumbInfo {
                    native_res: m.u16_at(0),
                    diverted_res: m.u16_at(2),
                    positive_right_or_front: m.params[4] & thumb_wheel::DIRECTION_BIT != 0,
                });
                self.queue.push_front(Request::ThumbStatus);
            }
            Request::ThumbStatus => {
                let status = ThumbStatus {
                    diverted: m.params[0] == thumb_wheel::MODE_DIVERTED,
                    inverted: m.params[1] & thumb_wheel::DIRECTION_BIT != 0,
                };
                self.thumb_status = Some(status);
                // Found diverted while asked to divert: pawl's from now on (undone on exit).
                self.thumb_ours = status.diverted && self.config.thumb_wheel == ThumbWheel::Divert;
                if self.thumb_invert_written {
                    // The read-back of the configured invert bit.
                    out.event(Event::ThumbInverted(status.inverted));
                }
                self.reconcile_thumb();
            }
            Request::ThumbReporting(on) => {
                // The reply carries no data: success means the device took it.
                let invert = self.thumb_invert();
                let before = self.thumb_status.unwrap_or_default();
                self.thumb_status = Some(ThumbStatus {
                    diverted: on,
                    inverted: invert,
                });
                self.thumb_ours = on && self.config.thumb_wheel != ThumbWheel::Leave;
                self.thumb_carry = 0;
                if self.phase == Phase::Ready && before.diverted != on {
                    out.event(Event::ThumbWheel(on));
                }
                if self.config.settings.thumb_wheel_invert.is_some()
                    && !self.thumb_invert_written
                    && before.inverted != invert
                {
                    // Read the configured invert bit back.
                    self.thumb_invert_written = true;
                    self.queue.push_front(Request::ThumbStatus);
                } else {
                    // The mode may have changed while the request was in flight.
                    self.reconcile_thumb();
                }
            }
            Request::DpiList => {
                let list = DpiList::parse(&m.params[1..]);
                self.dpi_list = Some(list);
                let mut steps = Vec::with_capacity(2);
                match self.config.settings.dpi {
                    Some(want) if list.contains(want) => steps.push(Request::SetDpi(want)),
                    Some(want) => out.event(Event::DpiUnsupported {
                        wanted: want,
                        nearest: list.nearest(want),
                    }),
                    None => {}
                }
                steps.push(Request::GetDpi);
                for s in steps.into_iter().rev() {
                    self.queue.push_front(s);
                }
            }
            Request::GetDpi => {
                let dpi = m.u16_at(1);
                self.dpi = Some(dpi);
                if self.config.settings.dpi.is_some() {
                    out.event(Event::Dpi(dpi));
                }
            }
            Request::SetDpi(_) | Request::SetSmartShift(_) => {
                // Read back next (queued behind it): what is in force is what counts.
            }
            Request::GetSmartShift => {
                self.smartshift = SmartShift::from_device(m.params[0], m.params[1]);
                if let (Some(_), Some(now)) = (self.config.settings.smartshift, self.smartshift) {
                    out.event(Event::SmartShift(now));
                }
            }
            Request::BatteryCapabilities => {
                self.battery_caps = Capabilities::parse(m);
                self.queue.push_front(Request::BatteryStatus);
            }
            Request::BatteryStatus => self.set_battery(Battery::parse(m, self.battery_caps), out),
        }
    }

    /// Records a battery status read or reported; [`Event::Battery`] when it changed.
    fn set_battery(&mut self, battery: Option<Battery>, out: &mut Output) {
        if battery != self.battery {
            self.battery = battery;
            if let Some(b) = battery {
                out.event(Event::Battery(b));
            }
        }
    }

    /// Queues (last) the steps of the mouse's own settings: for a configured dpi the list
    /// (its reply queues the write and the read-back), for a configured SmartShift the
    /// write and the read-back; reads only with [`SessionConfig::read_settings`].
    /// Configured settings the device has no feature for are reported.
    fn queue_settings(&mut self, out: &mut Output) {
        let idx = self.indices;
        let want = self.config.settings;
        let read = self.config.read_settings;
        let has_smart_shift = idx.smart_shift_enhanced != 0 || idx.smart_shift != 0;
        if idx.dpi != 0 {
            if want.dpi.is_some() {
                self.queue.push_back(Request::DpiList);
            } else if read {
                self.queue.push_back(Request::GetDpi);
            }
        }
        if has_smart_shift {
            if let Some(mode) = want.smartshift {
                self.queue.push_back(Request::SetSmartShift(mode));
                self.queue.push_back(Request::GetSmartShift);
            } else if read {
                self.queue.push_back(Request::GetSmartShift);
            }
        }
        let dpi = want.dpi.is_some() && idx.dpi == 0;
        let smartshift = want.smartshift.is_some() && !has_smart_shift;
        let thumb_wheel_invert = want.thumb_wheel_invert.is_some() && idx.thumb == 0;
        if dpi || smartshift || thumb_wheel_invert {
            out.event(Event::SettingsMissing {
                dpi,
                smartshift,
                thumb_wheel_invert,
            });
        }
    }

    /// The SmartShift feature index and its get and set functions: 0x2111 when the device
    /// has it, else 0x2110.
    fn smart_shift(&self) -> (u8, u8, u8) {
        let idx = self.indices;
        if idx.smart_shift_enhanced != 0 {
            (
                idx.smart_shift_enhanced,
                smart_shift::ENHANCED_GET,
                smart_shift::ENHANCED_SET,
            )
        } else {
            (idx.smart_shift, smart_shift::GET, smart_shift::SET)
        }
    }

    fn after_features(&mut self, out: &mut Output) {
        let idx = self.indices;
        self.features_done = true;
        if idx.name != 0 {
            self.queue.push_back(Request::NameLength);
        }
        if idx.reprog != 0 {
            self.queue.push_back(Request::ControlCount);
        }
        if idx.hires != 0 {
            self.queue.push_back(Request::WheelMode);
        }
        if idx.thumb != 0 {
            self.queue.push_back(Request::ThumbInfo);
        }
        self.queue_settings(out);
        if self.config.read_battery && idx.battery != 0 {
            self.queue.push_back(Request::BatteryCapabilities);
        } else {
            // Another device at this index, or the lookup failed: the old one is stale.
            self.battery = None;
        }
    }

    /// After the control list: read every control's reporting (query sessions), then
    /// divert the configured controls that exist and can be diverted.
    fn queue_diversions(&mut self, out: &mut Output) {
        let mut steps = Vec::new();
        if self.config.read_reporting {
            for c in &self.controls {
                steps.push(Request::GetReporting(c.info.cid));
            }
        }
        for spec in &self.config.divert {
            match self.controls.iter().find(|c| c.info.cid == spec.cid) {
                Some(c) if c.info.divertable() => steps.push(Request::SetReporting(Reporting {
                    cid: spec.cid,
                    divert: true,
                    raw_xy: spec.raw_xy && c.info.raw_xy(),
                })),
                _ if spec.required => out.event(Event::ControlMissing(spec.cid)),
                _ => {}
            }
        }
        for s in steps.into_iter().rev() {
            self.queue.push_front(s);
        }
    }

    /// Writes the next queued request (setup, or a thumb wheel change after it).
    fn send_next(&mut self, now: Micros, out: &mut Output) {
        if self.pending.is_some() || !matches!(self.phase, Phase::Setup | Phase::Ready) {
            return;
        }
        match self.queue.pop_front() {
            Some(request) => {
                let m = self.message(request);
                self.pending = Some((request, m, now.plus(self.config.reply_timeout_us)));
                out.request = Some(m);
            }
            None if self.phase == Phase::Setup => {
                self.phase = Phase::Ready;
                out.event(Event::Ready);
            }
            None => {}
        }
    }

    /// The message for `request`.
    fn message(&self, request: Request) -> Message {
        let idx = self.indices;
        let (feature_index, function, params): (u8, u8, [u8; 5]) = match request {
            Request::Ping => (
                feature::ROOT_INDEX,
                root::GET_PROTOCOL_VERSION,
                [0, 0, PING_DATA, 0, 0],
            ),
            Request::GetFeature(id) => {
                let [hi, lo] = id.to_be_bytes();
                (feature::ROOT_INDEX, root::GET_FEATURE, [hi, lo, 0, 0, 0])
            }
            Request::NameLength => (idx.name, device_name::GET_COUNT, [0; 5]),
            Request::NameChunk(offset) => (idx.name, device_name::GET_NAME, [offset, 0, 0, 0, 0]),
            Request::ControlCount => (idx.reprog, reprog::GET_COUNT, [0; 5]),
            Request::ControlInfo(i) => (idx.reprog, reprog::GET_CID_INFO, [i, 0, 0, 0, 0]),
            Request::GetReporting(cid) => {
                let [hi, lo] = cid.to_be_bytes();
                (idx.reprog, reprog::GET_CID_REPORTING, [hi, lo, 0, 0, 0])
            }
            Request::SetReporting(r) => (idx.reprog, reprog::SET_CID_REPORTING, r.params()),
            Request::WheelMode => (idx.hires, hires_wheel::GET_MODE, [0; 5]),
            Request::ThumbInfo => (idx.thumb, thumb_wheel::GET_INFO, [0; 5]),
            Request::ThumbStatus => (idx.thumb, thumb_wheel::GET_STATUS, [0; 5]),
            Request::ThumbReporting(on) => {
                let invert = self.thumb_invert();
                (
                    idx.thumb,
                    thumb_wheel::SET_REPORTING,
                    [
                        if on { thumb_wheel::MODE_DIVERTED } else { 0 },
                        if invert {
                            thumb_wheel::DIRECTION_BIT
                        } else {
                            0
                        },
                        0,
                        0,
                        0,
                    ],
                )
            }
            Request::DpiList => (
                idx.dpi,
                adjustable_dpi::GET_DPI_LIST,
                [adjustable_dpi::SENSOR, 0, 0, 0, 0],
            ),
            Request::GetDpi => (
                idx.dpi,
                adjustable_dpi::GET_DPI,
                [adjustable_dpi::SENSOR, 0, 0, 0, 0],
            ),
            Request::SetDpi(dpi) => {
                let [hi, lo] = dpi.to_be_bytes();
                (
                    idx.dpi,
                    adjustable_dpi::SET_DPI,
                    [adjustable_dpi::SENSOR, hi, lo, 0, 0],
                )
            }
            Request::GetSmartShift => {
                let (index, get, _) = self.smart_shift();
                (index, get, [0; 5])
            }
            Request::SetSmartShift(mode) => {
                let (index, _, set) = self.smart_shift();
                let (mode, threshold) = mode.to_device();
                // autoDisengageDefault 0: the device's default stays as it is.
                (index, set, [mode, threshold, 0, 0, 0])
            }
            Request::BatteryCapabilities => {
                (idx.battery, unified_battery::GET_CAPABILITIES, [0; 5])
            }
            Request::BatteryStatus => (idx.battery, unified_battery::GET_STATUS, [0; 5]),
        };
        let len = match request {
            Request::SetReporting(_) => 5,
            Request::ThumbReporting(_) | Request::GetReporting(_) | Request::GetFeature(_) => 2,
            Request::Ping | Request::SetDpi(_) | Request::SetSmartShift(_) => 3,
            Request::NameChunk(_)
            | Request::ControlInfo(_)
            | Request::DpiList
            | Request::GetDpi => 1,
            _ => 0,
        };
        Message::request(
            self.framing,
            self.device,
            feature_index,
            function,
            self.config.sw_id,
            &params[..len],
        )
    }
}

/// Whether a frame of the session ([`Output::frame`]) that the device's gesture engine
/// turned into `fired` is a gesture that committed: motion alone (raw XY while the gesture
/// button is held) that fired at least one action. Motion fires actions only at a
/// gesture's direction threshold, so a click (a button frame), a drag below the threshold
/// and a mapped button's press never count.
#[inline]
pub fn gesture_committed(input: &FrameIn, fired: &pawl_engine::FrameOut) -> bool {
    input.buttons.is_empty() && !fired.actions.is_empty()
}

/// The ping byte pawl sends with the protocol-version request; the device echoes it.
pub const PING_DATA: u8 = 0x5A;
