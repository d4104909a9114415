//! HID++ 2.0 on macOS (`[hidpp] enabled`): every decision about the MX Master's HID++
//! endpoints, in plain Rust. `crate::sys::hid` (macOS only) finds the endpoints with an
//! IOHIDManager, opens them with `IOHIDDeviceOpen`, writes with `IOHIDDeviceSetReport`
//! and delivers input reports from `IOHIDDeviceRegisterInputReportCallback` on the
//! worker's run loop; the tests drive the same code with a fake device answered by
//! [`pawl_hidpp::emulator`].
//!
//! What happens, as on Linux (`pawl_linux::hidpp`):
//!
//! - **Endpoints** ([`classify`]): a Logitech IOHIDDevice with a vendor-defined
//!   collection (usage page 0xFF00 on receivers, 0xFF43 on Bluetooth devices) whose report
//!   descriptor declares the HID++ long report. An MX Master connected directly (Bluetooth;
//!   USB cable) is HID++ device index 0xFF. A Unifying or Bolt receiver is one IOHIDDevice
//!   for every paired device (macOS has no `hid-logitech-dj` that splits it into
//!   children, so there is no index to read from a phys): pawl runs a session on each index
//!   1–6; an empty or sleeping index answers the first ping with an error and waits for
//!   the receiver's connection notification (0x41), which pawl has the receiver send by
//!   setting its wireless-notification flag (HID++ 1.0 register 0x00, bit 0x000100; read
//!   first, only that bit added, checked again after a wake, the first value found
//!   written back on exit).
//! - **Sessions**: one [`pawl_hidpp::Session`] per device index, unchanged: temporary
//!   0x1B04 divert of the gesture button (0x00C3) with raw XY, re-divert when the device
//!   reconnects (0x41 / 0x1D4B restart the setup inside the session) and when the Mac
//!   wakes ([`Hidpp::on_wake`]), un-divert on exit ([`Hidpp::shutdown`]).
//! - **Gestures**: what a session makes of the notifications (the gesture button down/up,
//!   raw XY while it is held) goes through a [`DeviceEngine`] built from the worker's
//!   config (the same gesture rules as the CGEvent gesture button); its actions go to the
//!   worker's [`Performer`]. The worker's movement tap is not involved: while the button
//!   is diverted with raw XY the mouse reports its motion over HID++ only, so the pointer
//!   stays still and no mouseMoved event needs dropping. A click of the gesture button
//!   that made no gesture is posted as a click of the configured button (its
//!   `gesture.click` action decides, as for the CGEvent button).
//! - **Thumb wheel** (0x2150, `[hidpp] thumb_wheel`): diverted while the config
//!   transforms that mouse's scroll (as on Linux while its pointer node is grabbed with
//!   scroll transformed); its rotation, in 1/120 turn steps, goes through the same engine's
//!   scroll settings (smoothing, max step, inversion, glide) and is posted as a line-based
//!   scroll event marked as pawl's (the worker's tap passes those through untouched).
//!   Where `[[app]]` tables set scroll keys, the application under the cursor decides
//!   those settings, looked up once per thumb wheel gesture ([`crate::pointer`]).
//!   Otherwise it is native and its AC Pan events reach the worker's tap like any
//!   horizontal wheel.
//! - **Battery**: unlike on Linux, where the kernel's `hid-logitech-hidpp` reads it, the
//!   sessions read each mouse's battery over 0x1004 and follow its status events
//!   ([`pawl_hidpp::SessionConfig::read_battery`]); [`Hidpp::mice`] lists the mice set up
//!   with their batteries for the worker's metadata, rewritten only when
//!   [`Hidpp::mice_changed`] says so.
//! - **Releases**: a device removed, disconnected or reconnected, a wake, or exit cancels
//!   its engine; any button pawl posted as pressed is posted released first.
//!
//! Idle costs nothing: no timer exists unless a reply is awaited or a glide runs
//! ([`Hidpp::deadline`]).

use std::fmt;

use pawl_engine::frame::FrameIn;
use pawl_engine::units::{ButtonSet, Micros};
use pawl_engine::{Action, AppKey, Bus, Config, DeviceEngine, DeviceInfo, FrameOut, Verdict};
use pawl_hidpp::battery::Battery;
use pawl_hidpp::report::{
    DEVICE_INDEX_DIRECT, DEVICE_INDEX_FIRST_PAIRED, DEVICE_INDEX_LAST_PAIRED, Framing, Message,
    SHORT_PARAMS, hidpp_framing,
};
use pawl_hidpp::{Event, Output, Phase, Session, SessionConfig, ThumbWheel};

use crate::actions::Performer;
use crate::pointer::ScrollTarget;
use crate::tap::{Synthetic, Tap};

/// Logitech's USB vendor id (Bluetooth devices report it too).
pub const LOGITECH: u16 = 0x046d;
/// The vendor-defined usage page of a receiver's HID++ collections. Source: the Unifying
/// and Bolt receivers' report descriptors (kernel `hid-logitech-dj.c`
/// `hidpp_descriptor`), Solaar `hidapi` filters.
pub const USAGE_PAGE_RECEIVER: u32 = 0xFF00;
/// The vendor-defined usage page of a Bluetooth device's HID++ collection (the MX Master
/// 3S b034 descriptor in `../shared/recordings`: page 0xFF43, usage 0x0202).
pub const USAGE_PAGE_BLUETOOTH: u32 = 0xFF43;

/// HID++ 1.0 "get short register" sub id. Source: Solaar `base.py` / kernel
/// `HIDPP_GET_REGISTER`.
const GET_REGISTER: u8 = 0x81;
/// HID++ 1.0 "set short register" sub id. Source: kernel `HIDPP_SET_REGISTER`.
const SET_REGISTER: u8 = 0x80;
/// Receiver register 0x00: HID++ notification flags (3 bytes, big-endian). Source: Solaar
/// `hidpp10_constants.Registers.NOTIFICATIONS`.
const REGISTER_NOTIFICATIONS: u8 = 0x00;
/// Bit of register 0x00 that makes a receiver send device connection notifications
/// (0x41): 0x000100, i.e. bit 0 of the middle byte. Source: Solaar
/// `hidpp10_constants.NotificationFlag.WIRELESS`.
const WIRELESS_NOTIFICATIONS: u8 = 0x01;

/// How long the receiver's register step waits for each reply (µs): 1 s, as long as a
/// one-shot `SessionConfig::query` waits; afterwards pawl goes on without the flag.
const REGISTER_TIMEOUT_US: u64 = 1_000_000;

/// A HID device as IOHIDManager describes it, nothing opened: the properties
/// `crate::sys::hid` reads (`kIOHIDVendorIDKey`, `kIOHIDProductIDKey`, `kIOHIDProductKey`,
/// `kIOHIDTransportKey`, `kIOHIDDeviceUsagePairsKey`, `kIOHIDReportDescriptorKey`,
/// `RequiresTCCAuthorization`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointDesc {
    /// Registry entry ID of the IOHIDDevice: the endpoint's identity while it exists.
    pub id: u64,
    /// Product name (empty when the device has none).
    pub name: String,
    /// Vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// `USB`, `Bluetooth`, `Bluetooth Low Energy`, …
    pub transport: String,
    /// Every top-level collection's (usage page, usage).
    pub usage_pairs: Vec<(u32, u32)>,
    /// The report descriptor (at most [`MAX_DESCRIPTOR`] bytes are read).
    pub descriptor: Vec<u8>,
    /// IOHIDFamily's `RequiresTCCAuthorization` property: the device has a keyboard,
    /// mouse or touchpad collection, so `IOHIDDeviceOpen` needs Input Monitoring.
    pub requires_tcc: bool,
}

/// The most report descriptor bytes pawl reads (HID descriptors are limited to 4096 by
/// the USB HID class, `HID_MAX_DESCRIPTOR_SIZE` in the Linux kernel).
pub const MAX_DESCRIPTOR: usize = 4096;

/// How an endpoint reaches its MX Master.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The MX Master itself (Bluetooth, USB cable): device index 0xFF.
    Direct,
    /// A Unifying or Bolt receiver: device indices 1–6.
    Receiver,
}

/// What [`classify`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The HID++ reports the descriptor declares.
    pub framing: Framing,
    /// Direct or through a receiver.
    pub reach: Reach,
}

impl Endpoint {
    /// The device indices to run a session on.
    pub fn device_indices(self) -> std::ops::RangeInclusive<u8> {
        match self.reach {
            Reach::Direct => DEVICE_INDEX_DIRECT..=DEVICE_INDEX_DIRECT,
            Reach::Receiver => DEVICE_INDEX_FIRST_PAIRED..=DEVICE_INDEX_LAST_PAIRED,
        }
    }
}

/// Whether `desc` is an MX Master HID++ endpoint: Logitech, a collection on page 0xFF00
/// or 0xFF43, the HID++ long report declared, and an MX Master (family table or name) or
/// a Unifying/Bolt receiver. `None` for everything else (keyboards, other mice, other
/// vendors, a device without HID++).
pub fn classify(desc: &EndpointDesc) -> Option<Endpoint> {
    use pawl_engine::device::{Family, family};
    if desc.vendor != LOGITECH {
        return None;
    }
    let vendor_page = desc
        .usage_pairs
        .iter()
        .any(|&(page, _)| page == USAGE_PAGE_RECEIVER || page == USAGE_PAGE_BLUETOOTH);
    if !vendor_page {
        return None;
    }
    let framing = hidpp_framing(&desc.descriptor);
    if !framing.usable() {
        return None;
    }
    let reach = match family(desc.vendor, desc.product) {
        Some(Family::MxMaster(_)) => Reach::Direct,
        Some(Family::Receiver(_)) => Reach::Receiver,
        None if desc.name.to_ascii_lowercase().contains("mx master") => Reach::Direct,
        None => return None,
    };
    Some(Endpoint { framing, reach })
}

/// Writes HID++ reports to an open endpoint: `IOHIDDeviceSetReport` (output report, the
/// report id first in `report`) on macOS, a fake answered by the emulator in the tests.
pub trait HidPort {
    /// Writes one report (7 or 20 bytes, report id first) to endpoint `id`. Errors carry
    /// the OS's reason (an `IOReturn`).
    fn send(&mut self, id: u64, report: &[u8]) -> Result<(), String>;
}

/// The Input Monitoring permission as `IOHIDCheckAccess(kIOHIDRequestTypeListenEvent)`
/// reports it (macOS 10.15+).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `kIOHIDAccessTypeGranted`.
    Granted,
    /// `kIOHIDAccessTypeDenied`.
    Denied,
    /// `kIOHIDAccessTypeUnknown`: never asked; the first `IOHIDDeviceOpen` of a device
    /// that needs it asks.
    Unknown,
}

/// Whether to open an endpoint now, given Input Monitoring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenDecision {
    /// Open it (it needs no permission, or the permission is granted).
    Open,
    /// Never asked: ask off the worker's thread (`IOHIDRequestAccess` waits for the user,
    /// and the worker's event taps must not wait with it), and do not open it now: macOS
    /// applies a new Input Monitoring grant when pawl starts again.
    Ask,
    /// Denied: do not open it (the open would fail with `kIOReturnNotPermitted`).
    Refused,
}

/// Whether to open an endpoint: a device marked `RequiresTCCAuthorization` (`tcc`) only
/// with Input Monitoring granted. IOHIDDeviceOpen of such a device would otherwise call
/// `IOHIDRequestAccess` itself, on the worker's run-loop thread, and block it (and with it
/// every event tap) until the user answers the prompt.
pub fn open_decision(tcc: bool, access: Access) -> OpenDecision {
    match (tcc, access) {
        (false, _) | (true, Access::Granted) => OpenDecision::Open,
        (true, Access::Unknown) => OpenDecision::Ask,
        (true, Access::Denied) => OpenDecision::Refused,
    }
}

/// What `pawl status` and `pawl devices` say about HID++ on macOS: which permission it
/// needs and whether it is granted.
///
/// IOHIDFamily marks every IOHIDDevice with a keyboard, mouse or touchpad collection
/// `RequiresTCCAuthorization` (`IOHIDDevice.cpp`), and `IOHIDDeviceOpen` of such a device
/// asks `IOHIDRequestAccess(kIOHIDRequestTypeListenEvent)` (Input Monitoring) first and
/// fails with `kIOReturnNotPermitted` without it (`IOHIDDeviceClass.m`, "TCC deny
/// IOHIDDeviceOpen"). A Bluetooth MX Master is one HID device with its mouse collection
/// and its HID++ collection, so it needs Input Monitoring; a Unifying/Bolt receiver's
/// HID++ interface has vendor collections only and needs none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HidppPermission {
    /// Input Monitoring.
    pub input_monitoring: Access,
    /// The HID++ endpoints connected now: name and whether opening it needs Input
    /// Monitoring (`RequiresTCCAuthorization`).
    pub endpoints: Vec<(String, bool)>,
}

impl fmt::Display for HidppPermission {
    /// One line for the permission, one per endpoint, then what to do.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.input_monitoring {
            Access::Granted => "granted",
            Access::Denied => "denied",
            Access::Unknown => {
                "not asked yet (pawl asks when it finds a Bluetooth MX Master; restart pawl \
                 after allowing it)"
            }
        };
        writeln!(
            f,
            "input monitoring (IOHIDCheckAccess; [hidpp] needs it for a Bluetooth MX \
             Master): {state}"
        )?;
        for (name, tcc) in &self.endpoints {
            writeln!(
                f,
                "HID++ {name}: {}",
                if *tcc {
                    "needs input monitoring (its HID device has a mouse or keyboard collection)"
                } else {
                    "needs no permission (vendor collections only)"
                }
            )?;
        }
        let needed = self.endpoints.iter().any(|(_, tcc)| *tcc) || self.endpoints.is_empty();
        if needed && self.input_monitoring == Access::Denied {
            writeln!(
                f,
                "to fix: System Settings > Privacy & Security > Input Monitoring: turn pawl \
                 on (the terminal app that starts it, or the pawl binary as a LaunchAgent), \
                 then restart pawl (`pawl service install` again for the LaunchAgent, \
                 `pawl off && pawl on` when a terminal starts it); without it the gesture \
                 button of a Bluetooth MX Master does nothing"
            )?;
        }
        Ok(())
    }
}

/// One device index of an endpoint.
#[derive(Debug)]
struct Link {
    session: Session,
    engine: DeviceEngine,
    /// Buttons pawl posted as pressed for this link (a gesture click): released on cancel.
    posted: ButtonSet,
    /// What [`Hidpp::mice_changed`] last saw of it: set up, and its battery.
    seen: (bool, Option<Battery>),
}

/// A mouse a HID++ session has set up, for the worker's metadata (`pawl status`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HidppMouse {
    /// Its name as the device reports it (0x0005).
    pub name: String,
    /// The endpoint's vendor id (behind a receiver, the receiver's).
    pub vendor: u16,
    /// The endpoint's product id (behind a receiver, the receiver's).
    pub product: u16,
    /// The endpoint's transport (`Bluetooth Low Energy`, `USB`).
    pub transport: String,
    /// Its battery as the session read it (0x1004; `None` for a mouse without it, the MX
    /// Master 2S and 3).
    pub battery: Option<Battery>,
}

/// The receiver's wireless-notification flag step (after opening and after each wake).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flags {
    /// Not a receiver, or done.
    Done,
    /// The read of register 0x00 is in flight (until the deadline).
    Reading(Micros),
    /// The write is in flight (until the deadline).
    Writing(Micros),
}

/// One open endpoint.
#[derive(Debug)]
struct Open {
    desc: EndpointDesc,
    endpoint: Endpoint,
    links: Vec<Link>,
    flags: Flags,
    /// Register 0x00 as pawl found it, once pawl changed it: written back on exit.
    restore: Option<[u8; 3]>,
}

/// Every open HID++ endpoint and what pawl does with it.
#[derive(Debug)]
pub struct Hidpp {
    config: Config,
    performer: Performer,
    open: Vec<Open>,
    out: FrameOut,
    /// An endpoint with a mouse [`Hidpp::mice_changed`] had seen set up was removed.
    mice_removed: bool,
    /// The application whose profile the engines run ([`Hidpp::set_app`]).
    app: Option<AppKey>,
    /// When a thumb wheel gesture starts, to give it the application under the pointer.
    pointer: ScrollTarget,
}

impl Hidpp {
    /// Nothing open yet; `performer` performs the gestures' actions (the worker's).
    pub fn new(config: Config, performer: Performer) -> Hidpp {
        Hidpp {
            pointer: ScrollTarget::new(&config),
            config,
            performer,
            open: Vec::new(),
            out: FrameOut::default(),
            mice_removed: false,
            app: None,
        }
    }

    /// Whether `[hidpp] enabled` is on: without it no endpoint is ever opened.
    pub fn enabled(&self) -> bool {
        self.config.hidpp.enabled
    }

    /// Whether a device IOHIDManager found should be opened: HID++ on, an endpoint
    /// ([`classify`]), not open already.
    pub fn wants(&self, desc: &EndpointDesc) -> Option<Endpoint> {
        if !self.enabled() || self.open.iter().any(|o| o.desc.id == desc.id) {
            return None;
        }
        classify(desc)
    }

    /// The endpoints open now (registry IDs), in the order they opened.
    pub fn open_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.open.iter().map(|o| o.desc.id)
    }

    /// The sessions of endpoint `id` (for logs and tests).
    pub fn sessions(&self, id: u64) -> impl Iterator<Item = &Session> + '_ {
        self.open
            .iter()
            .filter(move |o| o.desc.id == id)
            .flat_map(|o| o.links.iter().map(|l| &l.session))
    }

    /// The mice set up now (sessions ready), endpoint by endpoint, for the metadata.
    pub fn mice(&self) -> Vec<HidppMouse> {
        self.open
            .iter()
            .flat_map(|o| {
                o.links
                    .iter()
                    .filter(|l| l.session.phase() == Phase::Ready)
                    .map(|l| HidppMouse {
                        name: l.session.name().to_owned(),
                        vendor: o.desc.vendor,
                        product: o.desc.product,
                        transport: o.desc.transport.clone(),
                        battery: l.session.battery(),
                    })
            })
            .collect()
    }

    /// Whether [`Hidpp::mice`] differs from what it was when this last answered (a mouse
    /// was set up or went away, a battery changed): then the metadata is written again.
    /// Compares a few bytes per device index, allocates nothing: the worker asks after
    /// every HID++ report.
    pub fn mice_changed(&mut self) -> bool {
        let mut changed = false;
        for o in &mut self.open {
            for l in &mut o.links {
                let now = (l.session.phase() == Phase::Ready, l.session.battery());
                changed |= std::mem::replace(&mut l.seen, now) != now;
            }
        }
        // An endpoint that was removed took its mice with it.
        changed | std::mem::take(&mut self.mice_removed)
    }

    /// `desc` was opened (after [`Hidpp::wants`]): a session starts on each device index
    /// (first requests written now); a receiver is also asked to send connection
    /// notifications.
    pub fn opened(
        &mut self,
        desc: EndpointDesc,
        endpoint: Endpoint,
        now: Micros,
        port: &mut impl HidPort,
        tap: &mut impl Tap,
    ) {
        log::info!(
            "HID++ endpoint {:?} ({:04x}:{:04x}, {}): {}",
            desc.name,
            desc.vendor,
            desc.product,
            desc.transport,
            match endpoint.reach {
                Reach::Direct => "device index 0xFF",
                Reach::Receiver => "receiver, device indices 1-6",
            }
        );
        // The mouse's own settings of `[hidpp]` and the `[device.hidpp]` of the rules
        // matching the endpoint (its name and ids; behind a receiver, the receiver's).
        // The battery too: macOS has no kernel driver that reads it.
        let session_config = SessionConfig {
            settings: self.config.mouse_settings(&mx_info(&desc, "")),
            read_battery: true,
            ..SessionConfig::for_config(&self.config)
        };
        let links = endpoint
            .device_indices()
            .map(|index| Link {
                session: Session::new(session_config.clone(), endpoint.framing, index),
                engine: self.gesture_engine(&desc),
                posted: ButtonSet::default(),
                seen: (false, None),
            })
            .collect();
        self.open.push(Open {
            desc,
            endpoint,
            links,
            flags: Flags::Done,
            restore: None,
        });
        let i = self.open.len() - 1;
        self.check_flags(i, now, port);
        self.restart(i, now, port, tap);
    }

    /// Asks a receiver for its notification flags (register 0x00): the bit that makes it
    /// announce connections is added if missing. Nothing for a direct endpoint.
    fn check_flags(&mut self, i: usize, now: Micros, port: &mut impl HidPort) {
        let open = &mut self.open[i];
        if open.endpoint.reach != Reach::Receiver {
            return;
        }
        let read = register(open.endpoint.framing, GET_REGISTER, [0; SHORT_PARAMS]);
        open.flags = Flags::Reading(now.plus(REGISTER_TIMEOUT_US));
        send(port, open.desc.id, &read);
    }

    /// The gesture engine of a link: the config's gesture rules; scroll (the thumb wheel)
    /// as the config says for an MX Master until setup names the mouse.
    fn gesture_engine(&self, desc: &EndpointDesc) -> DeviceEngine {
        self.engine_for(&mx_info(desc, ""))
    }

    /// The engine for the mouse `info`: its device profile, the profiles of the `[[app]]`
    /// tables that apply to it, and the application in force ([`Hidpp::set_app`]).
    fn engine_for(&self, info: &DeviceInfo) -> DeviceEngine {
        let decision = self.config.decide(info);
        let mut engine =
            DeviceEngine::with_profile(&self.config, decision.transform_scroll, decision.scroll);
        engine.add_app_profiles(&self.config, info);
        engine.set_app(self.app);
        engine
    }

    /// The focused application changed to `app` (`None`: the device profiles): every
    /// link's engine switches ([`DeviceEngine::set_app`]: a gesture held keeps its profile
    /// until it ends), and engines made later start with it.
    pub fn set_app(&mut self, app: Option<AppKey>) {
        self.app = app;
        for link in self.open.iter_mut().flat_map(|o| o.links.iter_mut()) {
            link.engine.set_app(app);
        }
    }

    /// Restarts every session of open endpoint `i` (setup from the ping: every diversion
    /// applied again), cancelling its gestures first.
    fn restart(&mut self, i: usize, now: Micros, port: &mut impl HidPort, tap: &mut impl Tap) {
        for l in 0..self.open[i].links.len() {
            self.cancel_link(i, l, tap);
            let mut out = Output::default();
            self.open[i].links[l].session.start(now, &mut out);
            self.apply(i, l, out, now, port, tap);
        }
    }

    /// One input report of endpoint `id` (report id first), as the input-report callback
    /// delivers it. Reports that are not HID++ (the mouse's own reports on a Bluetooth
    /// device) are dropped after one byte compare.
    #[inline]
    pub fn on_report(
        &mut self,
        id: u64,
        report: &[u8],
        now: Micros,
        port: &mut impl HidPort,
        tap: &mut impl Tap,
    ) {
        let Some(i) = self.open.iter().position(|o| o.desc.id == id) else {
            return;
        };
        let Some(m) = Message::parse(report) else {
            return;
        };
        if m.device == DEVICE_INDEX_DIRECT && self.open[i].endpoint.reach == Reach::Receiver {
            self.on_receiver_reply(i, &m, now, port);
            return;
        }
        for l in 0..self.open[i].links.len() {
            if self.open[i].links[l].session.device() != m.device {
                continue;
            }
            let mut out = Output::default();
            self.open[i].links[l].session.input(report, now, &mut out);
            if out != Output::default() {
                self.apply(i, l, out, now, port, tap);
            }
        }
    }

    /// The receiver answered a register request (device index 0xFF).
    fn on_receiver_reply(&mut self, i: usize, m: &Message, now: Micros, port: &mut impl HidPort) {
        let open = &mut self.open[i];
        let register_reply = m.address == REGISTER_NOTIFICATIONS;
        let error = m.sub_id == pawl_hidpp::error::HIDPP10_ERROR
            && (m.address == GET_REGISTER || m.address == SET_REGISTER)
            && m.params[0] == REGISTER_NOTIFICATIONS;
        match open.flags {
            Flags::Reading(_) if error => {
                log::warn!(
                    "{:?}: cannot read the receiver's notification flags: a mouse that \
                     connects later is diverted when it announces itself (0x1D4B) or after wake",
                    open.desc.name
                );
                open.flags = Flags::Done;
            }
            Flags::Reading(_) if m.sub_id == GET_REGISTER && register_reply => {
                let old = [m.params[0], m.params[1], m.params[2]];
                if old[1] & WIRELESS_NOTIFICATIONS != 0 {
                    open.flags = Flags::Done;
                } else {
                    let mut new = old;
                    new[1] |= WIRELESS_NOTIFICATIONS;
                    let write = register(open.endpoint.framing, SET_REGISTER, new);
                    let id = open.desc.id;
                    open.flags = Flags::Writing(now.plus(REGISTER_TIMEOUT_US));
                    // The value from before pawl's first change is the one to restore.
                    open.restore.get_or_insert(old);
                    send(port, id, &write);
                }
            }
            Flags::Writing(_) if m.sub_id == SET_REGISTER && register_reply => {
                open.flags = Flags::Done;
            }
            Flags::Writing(_) if error => open.flags = Flags::Done,
            _ => {}
        }
    }

    /// Endpoint `id` is gone (unplugged, Bluetooth off): its gestures are cancelled, what
    /// pawl posted pressed is released, and it is forgotten (nothing is written to it).
    pub fn removed(&mut self, id: u64, tap: &mut impl Tap) {
        let Some(i) = self.open.iter().position(|o| o.desc.id == id) else {
            return;
        };
        for l in 0..self.open[i].links.len() {
            self.cancel_link(i, l, tap);
        }
        let o = self.open.remove(i);
        self.mice_removed |= o.links.iter().any(|l| l.seen.0);
        log::info!("HID++ endpoint {:?} removed", o.desc.name);
    }

    /// The Mac woke: a mouse that slept with the Mac may have forgotten its temporary
    /// diversions without announcing it, so every session starts its setup again (the
    /// gesture button and the thumb wheel are diverted again).
    pub fn on_wake(&mut self, now: Micros, port: &mut impl HidPort, tap: &mut impl Tap) {
        for i in 0..self.open.len() {
            // A receiver that lost power while the Mac slept has lost its flags too.
            self.check_flags(i, now, port);
            self.restart(i, now, port, tap);
        }
    }

    /// When [`Hidpp::on_timer`] is due: the earliest reply deadline or glide tick; `None`
    /// at rest (no timer).
    pub fn deadline(&self) -> Option<Micros> {
        self.open
            .iter()
            .flat_map(|o| {
                let flags = match o.flags {
                    Flags::Reading(d) | Flags::Writing(d) => Some(d),
                    Flags::Done => None,
                };
                o.links
                    .iter()
                    .flat_map(|l| [l.session.deadline(), l.engine.next_deadline()])
                    .chain([flags])
            })
            .flatten()
            .min()
    }

    /// The timer fired: sessions whose reply is overdue count as unreachable (until they
    /// reconnect), glides that are due post their scroll.
    pub fn on_timer(&mut self, now: Micros, port: &mut impl HidPort, tap: &mut impl Tap) {
        for i in 0..self.open.len() {
            match self.open[i].flags {
                Flags::Reading(d) | Flags::Writing(d) if d <= now => {
                    self.open[i].flags = Flags::Done;
                }
                _ => {}
            }
            for l in 0..self.open[i].links.len() {
                let link = &mut self.open[i].links[l];
                if link.session.deadline().is_some_and(|d| d <= now) {
                    let mut out = Output::default();
                    link.session.timeout(now, &mut out);
                    self.apply(i, l, out, now, port, tap);
                }
                let link = &mut self.open[i].links[l];
                if link.engine.next_deadline().is_some_and(|d| d <= now)
                    && link.engine.tick(now, &mut self.out)
                {
                    tap.post(&Synthetic::Scroll {
                        wheel: self.out.wheel,
                        hwheel: self.out.hwheel,
                    });
                }
            }
        }
    }

    /// Clean exit: every gesture is cancelled (posted presses released), every diversion
    /// pawl made is undone and a receiver's notification flags are written back; replies
    /// are not awaited. Everything is closed afterwards.
    pub fn shutdown(&mut self, port: &mut impl HidPort, tap: &mut impl Tap) {
        for i in 0..self.open.len() {
            let id = self.open[i].desc.id;
            let mut undone = 0;
            for l in 0..self.open[i].links.len() {
                self.cancel_link(i, l, tap);
                for m in self.open[i].links[l].session.undivert() {
                    send(port, id, &m);
                    undone += 1;
                }
            }
            if let Some(old) = self.open[i].restore {
                send(
                    port,
                    id,
                    &register(self.open[i].endpoint.framing, SET_REGISTER, old),
                );
            }
            if undone > 0 {
                log::info!("{:?}: HID++ diversions undone", self.open[i].desc.name);
            }
        }
        self.open.clear();
    }

    /// Cancels link `l` of endpoint `i`: nothing held fires later; presses pawl posted
    /// are released.
    fn cancel_link(&mut self, i: usize, l: usize, tap: &mut impl Tap) {
        let link = &mut self.open[i].links[l];
        link.engine.cancel(&mut self.out);
        for b in link.posted.iter() {
            tap.post(&Synthetic::MouseButton {
                button: b.0,
                pressed: false,
            });
        }
        link.posted = ButtonSet::default();
        self.out.clear();
        self.pointer.forget();
    }

    /// Writes the session's request, runs its frame through the link's engine (actions,
    /// posted clicks, posted thumb wheel scroll), and acts on its events.
    fn apply(
        &mut self,
        i: usize,
        l: usize,
        out: Output,
        now: Micros,
        port: &mut impl HidPort,
        tap: &mut impl Tap,
    ) {
        let id = self.open[i].desc.id;
        if let Some(m) = out.request {
            send(port, id, &m);
        }
        if let Some(frame) = out.frame {
            self.feed(i, l, &frame, port, tap);
        }
        for event in out.events() {
            self.on_event(i, l, event, now, port, tap);
        }
    }

    /// One engine frame from a session; a gesture that commits writes the session's haptic
    /// pulse (`[hidpp] haptic_on_gesture`, its ack not awaited) before its actions run.
    fn feed(
        &mut self,
        i: usize,
        l: usize,
        frame: &FrameIn,
        port: &mut impl HidPort,
        tap: &mut impl Tap,
    ) {
        let id = self.open[i].desc.id;
        let link = &mut self.open[i].links[l];
        if frame.wheel.v120 != 0 || frame.hwheel.v120 != 0 {
            // The thumb wheel: its report has no location, so the cursor's is asked for.
            self.pointer.on_scroll(
                &self.config,
                &mut link.engine,
                i << 8 | l,
                frame.time,
                None,
                tap,
            );
        }
        let verdict = link.engine.frame(frame, &mut self.out);
        if verdict == Verdict::Rewrite
            && pawl_hidpp::gesture_committed(frame, &self.out)
            && let Some(m) = link.session.gesture_haptic()
        {
            send(port, id, &m);
        }
        let (buttons, wheel, hwheel) = match verdict {
            Verdict::Rewrite => (self.out.buttons, self.out.wheel, self.out.hwheel),
            Verdict::Forward => (frame.buttons, frame.wheel.into(), frame.hwheel.into()),
        };
        for change in buttons.as_slice() {
            link.posted.set(change.button, change.pressed);
            tap.post(&Synthetic::MouseButton {
                button: change.button.0,
                pressed: change.pressed,
            });
        }
        if wheel.v120 != 0 || hwheel.v120 != 0 {
            tap.post(&Synthetic::Scroll { wheel, hwheel });
        }
        if verdict == Verdict::Rewrite {
            for &action in self.out.actions.as_slice() {
                if action != Action::PassThrough {
                    self.performer.perform(tap, action);
                }
            }
        }
        self.out.clear();
    }

    fn on_event(
        &mut self,
        i: usize,
        l: usize,
        event: Event,
        now: Micros,
        port: &mut impl HidPort,
        tap: &mut impl Tap,
    ) {
        let open = &self.open[i];
        let session = &open.links[l].session;
        let label = format!(
            "{:?} HID++ index 0x{:02x}",
            open.desc.name,
            session.device()
        );
        let behind_receiver = open.endpoint.reach == Reach::Receiver;
        match event {
            Event::Ready => {
                let name = session.name().to_owned();
                let diverted: Vec<String> = session
                    .diverted()
                    .map(|r| {
                        format!(
                            "0x{:04X} {}{}",
                            r.cid,
                            pawl_hidpp::controls::cid_name(r.cid),
                            if r.raw_xy { " with raw XY" } else { "" }
                        )
                    })
                    .collect();
                if diverted.is_empty() {
                    if behind_receiver {
                        log::debug!("{label} {name:?}: HID++ ready, nothing to divert");
                    } else {
                        log::warn!("{label} {name:?}: HID++ ready, nothing diverted");
                    }
                } else {
                    log::info!("{label} {name:?}: diverted {}", diverted.join(", "));
                }
                // Now the mouse has a name: scroll as the config says for it.
                let info = mx_info(&open.desc, &name);
                let decision = self.config.decide(&info);
                let mode = ThumbWheel::for_config(&self.config, decision.transform_scroll);
                let engine = self.engine_for(&info);
                self.cancel_link(i, l, tap);
                let link = &mut self.open[i].links[l];
                link.engine = engine;
                if link.session.config().thumb_wheel != mode {
                    let mut out = Output::default();
                    link.session.set_thumb_wheel(mode, now, &mut out);
                    if let Some(m) = out.request {
                        send(port, self.open[i].desc.id, &m);
                    }
                }
            }
            Event::Disconnected | Event::Reconnected => {
                log::info!("{label}: {event}");
                self.cancel_link(i, l, tap);
            }
            Event::ThumbWheel(_) => log::info!("{label}: {event}"),
            Event::Dpi(_) | Event::SmartShift(_) | Event::ThumbInverted(_) => {
                log::info!("{label}: {event}")
            }
            Event::Battery(_) => log::debug!("{label}: {event}"),
            Event::DpiUnsupported { .. } | Event::SettingsMissing { .. } => {
                log::warn!("{label}: {event}")
            }
            Event::Protocol { .. } => log::debug!("{label}: {event}"),
            // An empty or sleeping receiver index, or a device without the gesture button
            // (a keyboard on the same receiver): nothing to say above debug.
            Event::Offline(_) | Event::ControlMissing(_) | Event::Unsupported
                if behind_receiver =>
            {
                log::debug!("{label}: {event}")
            }
            Event::Offline(_) => log::warn!("{label}: {event}"),
            Event::Error { .. } | Event::Unsupported | Event::ControlMissing(_) => {
                log::error!("{label}: {event}")
            }
        }
    }
}

/// The engine's view of the mouse behind an endpoint (for [`Config::decide`]): the name
/// the device reports over HID++ (0x0005; the endpoint's product name until setup read
/// it), the endpoint's ids and bus. Behind a receiver the ids are the receiver's, which
/// the family table takes for an MX Master when the name says so (and which `[[device]]`
/// rules can match, as in the worker's tap).
fn mx_info(desc: &EndpointDesc, name: &str) -> DeviceInfo {
    let transport = desc.transport.to_ascii_lowercase();
    DeviceInfo {
        name: if name.is_empty() {
            desc.name.clone()
        } else {
            name.to_owned()
        },
        bus: if transport.starts_with("bluetooth") {
            Bus::BLUETOOTH
        } else {
            Bus::USB
        },
        vendor: desc.vendor,
        product: desc.product,
        has_wheel: true,
        is_touchpad: false,
    }
}

/// A HID++ 1.0 register request to the receiver itself (device index 0xFF): short when
/// the receiver declares the short report.
fn register(framing: Framing, sub_id: u8, params: [u8; SHORT_PARAMS]) -> Message {
    let mut p = [0u8; pawl_hidpp::report::LONG_PARAMS];
    p[..SHORT_PARAMS].copy_from_slice(&params);
    Message {
        long: !framing.short,
        device: DEVICE_INDEX_DIRECT,
        sub_id,
        address: REGISTER_NOTIFICATIONS,
        params: p,
    }
}

fn send(port: &mut impl HidPort, id: u64, m: &Message) {
    let (bytes, len) = m.encode();
    if let Err(e) = port.send(id, &bytes[..len]) {
        log::error!("cannot write a HID++ report: {e}");
    }
}

/// Whether any session of `hidpp` finished setup with the gesture button diverted (for
/// logs and tests).
pub fn gesture_diverted(hidpp: &Hidpp, id: u64) -> bool {
    hidpp
        .sessions(id)
        .any(|s| s.phase() == Phase::Ready && s.diverted().next().is_some())
}
