//! Logitech HID++ on hidraw: finds the MX Master's HID++ endpoint, runs a
//! [`pawl_hidpp::Session`] on it in the daemon's epoll set, and feeds what the session
//! makes of the device's notifications (the diverted gesture button, raw XY while it is
//! held) to a gesture engine of its own, whose actions go to the daemon's performer.
//!
//! Sense Panel (0x01A0, `[hidpp] sense_panel`, MX Master 4): diverted by the session where
//! the mouse has it; its presses are the configured button of the same gesture engine,
//! mapped by `[buttons.map]`. Haptics (0x19B0, `[hidpp] haptic_on_gesture`): when a
//! frame of that engine commits a gesture ([`pawl_hidpp::gesture_committed`]), the
//! session's play request is written before the actions are performed.
//!
//! Thumb wheel (0x2150, `[hidpp] thumb_wheel`): in the mode the daemon's path decision
//! gives ([`HidppDevice::set_thumb_wheel`]; diverted only while the mouse's pointer node is
//! grabbed with its scroll transformed); its diverted rotation comes back from
//! [`HidppDevice::on_readable`] as horizontal wheel input, which the daemon runs through
//! that pointer node's engine and writes to its clone. Otherwise the thumb wheel stays
//! native and reaches the kernel's `REL_HWHEEL`.
//!
//! Endpoints: `/sys/class/hidraw/hidrawN/device/` is the HID device; its `uevent` names it
//! (`HID_ID=0005:0000046D:0000B034`, `HID_NAME`, `HID_PHYS`) and its `report_descriptor`
//! says whether it declares the HID++ reports. Bluetooth devices are device index 0xFF;
//! devices behind a Unifying/Bolt receiver appear (with `hid-logitech-dj`) as children
//! whose phys ends in `:N`, N being the device index. hidraw delivers every input report of
//! the HID device, so one read per report, and reports that are not HID++ are dropped
//! after one byte compare (see the report on `hidpp_pointer_not_grabbed_motion_bypasses_pawl`).

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use pawl_engine::frame::FrameIn;
use pawl_engine::units::{Button, Micros};
use pawl_engine::{Action, Config, DeviceEngine, FrameOut, TouchOut, Verdict};
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing, hidpp_framing};
use pawl_hidpp::{Event, Output, Phase, Session, SessionConfig, ThumbWheel};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::error::Error;

/// Where the kernel lists hidraw nodes.
pub const SYS_CLASS_HIDRAW: &str = "/sys/class/hidraw";

/// Where hidraw device nodes appear (`/dev/hidrawN`; the daemon watches it for them).
pub const DEV: &str = "/dev";

/// Logitech's USB vendor id.
const LOGITECH: u16 = 0x046d;

/// A hidraw node that speaks HID++, as sysfs describes it (nothing opened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HidrawNode {
    /// `hidrawN`.
    pub node: String,
    /// The HID device directory in sysfs (shared with the device's evdev nodes).
    pub hid_dir: PathBuf,
    /// `HID_NAME`.
    pub name: String,
    /// Bus (`BUS_USB` 3, `BUS_BLUETOOTH` 5).
    pub bus: u16,
    /// Vendor id.
    pub vendor: u16,
    /// Product id (the wireless PID for a device behind a receiver).
    pub product: u16,
    /// The HID++ reports its descriptor declares.
    pub framing: Framing,
    /// The HID++ device index to address.
    pub device_index: u8,
}

impl HidrawNode {
    /// `/dev/hidrawN`.
    pub fn dev_path(&self) -> PathBuf {
        Path::new(DEV).join(&self.node)
    }
}

/// The fields of a HID device's `uevent` pawl needs: bus, vendor, product, name, phys.
///
/// `HID_ID` is `bus:vendor:product` in hex, each 4 or 8 digits (`0005:0000046D:0000B034`).
pub fn parse_uevent(text: &str) -> Option<(u16, u16, u16, String, String)> {
    let mut id = None;
    let mut name = String::new();
    let mut phys = String::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("HID_ID=") {
            let mut it = v.split(':').map(|x| u32::from_str_radix(x, 16).ok());
            id = Some((it.next()??, it.next()??, it.next()??));
        } else if let Some(v) = line.strip_prefix("HID_NAME=") {
            name = v.to_owned();
        } else if let Some(v) = line.strip_prefix("HID_PHYS=") {
            phys = v.to_owned();
        }
    }
    let (bus, vendor, product) = id?;
    Some((bus as u16, vendor as u16, product as u16, name, phys))
}

/// The HID++ device index of a HID device: 0xFF for Bluetooth and USB-cable devices; N for
/// a `hid-logitech-dj` child, whose phys ends in `:N` (1–6; the kernel appends the index).
pub fn device_index(bus: u16, phys: &str) -> Option<u8> {
    if bus == 0x05 {
        return Some(DEVICE_INDEX_DIRECT);
    }
    if let Some((_, tail)) = phys.rsplit_once(':')
        && let Ok(n) = tail.parse::<u8>()
        && (1..=6).contains(&n)
        && !phys.ends_with(&format!("input{n}"))
    {
        return Some(n);
    }
    (bus == 0x03).then_some(DEVICE_INDEX_DIRECT)
}

/// Reads one hidraw node's description; `None` when it is not a Logitech MX Master HID++
/// endpoint (other vendors, receivers themselves, devices without the long report).
pub fn read_node(class_dir: &Path, node: &str) -> io::Result<Option<HidrawNode>> {
    let hid_dir = fs::canonicalize(class_dir.join(node).join("device"))?;
    let uevent = fs::read_to_string(hid_dir.join("uevent"))?;
    let Some((bus, vendor, product, name, phys)) = parse_uevent(&uevent) else {
        return Ok(None);
    };
    if !is_mx_master(vendor, product, &name) {
        return Ok(None);
    }
    let framing = hidpp_framing(&fs::read(hid_dir.join("report_descriptor"))?);
    if !framing.usable() {
        return Ok(None);
    }
    let Some(device_index) = device_index(bus, &phys) else {
        return Ok(None);
    };
    Ok(Some(HidrawNode {
        node: node.to_owned(),
        hid_dir,
        name,
        bus,
        vendor,
        product,
        framing,
        device_index,
    }))
}

/// Whether a HID device is an MX Master by its ids and `HID_NAME`: a member of the
/// family table (Bluetooth ids, Unifying wireless PIDs), or a receiver child named after
/// the mouse. Receivers themselves are not (their own index is not a mouse).
pub fn is_mx_master(vendor: u16, product: u16, name: &str) -> bool {
    use pawl_engine::device::{Family, family};
    vendor == LOGITECH
        && (matches!(family(vendor, product), Some(Family::MxMaster(_)))
            || name.to_ascii_lowercase().contains("mx master"))
}

/// Whether a name under `/dev` or `/sys/class/hidraw` is a hidraw node (`hidrawN`).
pub fn is_hidraw_name(name: &str) -> bool {
    name.strip_prefix("hidraw")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The `hidrawN` names under `class_dir` (normally `/sys/class/hidraw`), in node order. A
/// missing directory (no hidraw support) is an empty list.
pub fn hidraw_nodes(class_dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(class_dir) else {
        return Vec::new();
    };
    let mut nodes: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_hidraw_name(n))
        .collect();
    nodes.sort_by_key(|n| n[6..].parse::<u32>().unwrap_or(u32::MAX));
    nodes
}

/// Every MX Master HID++ endpoint under `class_dir` (normally `/sys/class/hidraw`), in
/// node order. A missing directory (no hidraw support) is an empty list.
pub fn scan(class_dir: &Path) -> Vec<HidrawNode> {
    hidraw_nodes(class_dir)
        .iter()
        .filter_map(|n| match read_node(class_dir, n) {
            Ok(found) => found,
            Err(e) => {
                log::debug!("{n}: cannot read its sysfs description: {e}");
                None
            }
        })
        .collect()
}

/// The session config the daemon uses: the gesture button (CID 0x00C3) diverted with raw
/// XY as the config's gesture button; the thumb wheel in `thumb_wheel` (the daemon's path
/// decision, `daemon/paths.rs`, says which); the mouse's own settings (dpi, smartshift)
/// that `[hidpp]` and the `[device.hidpp]` of the rules matching `node` set.
pub fn session_config(
    config: &Config,
    thumb_wheel: ThumbWheel,
    node: &HidrawNode,
) -> SessionConfig {
    SessionConfig {
        thumb_wheel,
        settings: config.mouse_settings(&node_info(node)),
        ..SessionConfig::for_config(config)
    }
}

/// Whether the config needs the evdev node of a device grabbed for something other than
/// the gesture button (a mapped button); scroll is decided by the caller. The
/// `[hidpp] sense_panel` button comes over HID++ only and needs no grab.
pub fn buttons_need_grab(config: &Config) -> bool {
    (0..=Button::MAX).map(Button).any(|b| {
        b != config.gesture.button
            && Some(b) != config.hidpp.sense_panel
            && config
                .button_action(b)
                .is_some_and(|a| a != Action::PassThrough)
    })
}

/// One open HID++ endpoint.
#[derive(Debug)]
pub struct HidppDevice {
    node: HidrawNode,
    /// The open hidraw node; `None` between setups in kernel mode (the HID-BPF program
    /// hands the notifications over on its ring, [`HidppDevice::on_report`]), reopened by
    /// the next write.
    fd: Option<OwnedFd>,
    /// Set when a write reopened `fd` (the daemon then watches it again).
    reopened: bool,
    /// What `session` was started with, its thumb wheel mode aside (to tell whether a
    /// reload changes what to divert).
    session_config: SessionConfig,
    session: Session,
    engine: DeviceEngine,
    /// The mouse's own settings as last reported to the daemon
    /// ([`HidppDevice::settings_changed`]).
    settings_seen: SettingsInForce,
}

/// Something the daemon must do after a HID++ wake-up.
pub trait Perform {
    /// Performs an action the gesture fired.
    fn perform(&mut self, action: Action);
    /// Writes a swipe's frames to the virtual touchpad; returns the time read after the
    /// write returned (µs, the clock of the `now` the device is given), what the swipe's
    /// next frame is timed from ([`DeviceEngine::touch_written`]).
    fn touch(&mut self, touch: &TouchOut) -> Micros;
}

impl HidppDevice {
    /// Opens `/dev/hidrawN` read-write and starts the session with the thumb wheel in
    /// `thumb_wheel` (its first request is written before this returns).
    ///
    /// Errors: the node cannot be opened (EACCES names the udev rule).
    pub fn open(
        node: HidrawNode,
        config: &Config,
        thumb_wheel: ThumbWheel,
        now: Micros,
    ) -> Result<HidppDevice, Error> {
        let path = node.dev_path();
        let fd = open_hidraw(&path)?;
        warn_other_hidpp_users(&path);
        let engine = gesture_engine(config, &node);
        let session_config = session_config(config, thumb_wheel, &node);
        let session = Session::new(session_config.clone(), node.framing, node.device_index);
        let mut dev = HidppDevice {
            node,
            fd: Some(fd),
            reopened: false,
            session_config,
            session,
            engine,
            settings_seen: SettingsInForce::default(),
        };
        dev.restart(now);
        Ok(dev)
    }

    /// Whether the settings the session has read back differ from the ones this last
    /// answered with (then `pawl status` has something new to show). Only a HID++ reply
    /// changes them, and a reply always changes [`HidppDevice::deadline`]: the daemon asks
    /// only then, so a mouse report read on hidraw costs nothing here.
    pub fn settings_changed(&mut self) -> bool {
        let now = SettingsInForce::of(&self.session);
        std::mem::replace(&mut self.settings_seen, now) != now
    }

    /// The focused application changed ([`DeviceEngine::set_app`] of the gesture engine).
    pub fn set_app(&mut self, app: Option<pawl_engine::AppKey>) {
        self.engine.set_app(app);
    }

    /// A new config (SIGHUP): the gesture engine restarts with it (a held gesture is
    /// cancelled); when the controls to divert changed, pawl's diversions are undone and
    /// the setup runs again with the new controls. The thumb wheel keeps its current mode
    /// here; the daemon sets it for the new config with [`HidppDevice::set_thumb_wheel`].
    /// When only the mouse's own settings changed, they are written now (or by the setup in
    /// progress) without touching the diversions.
    pub fn reconfigure(&mut self, config: &Config, now: Micros) {
        let mut out = FrameOut::default();
        self.engine.cancel(&mut out);
        self.engine = gesture_engine(config, &self.node);
        let wanted = session_config(config, self.session_config.thumb_wheel, &self.node);
        let same_but_settings = SessionConfig {
            settings: self.session_config.settings,
            ..wanted.clone()
        } == self.session_config;
        if same_but_settings && wanted.settings != self.session_config.settings {
            let mut out = Output::default();
            self.session.set_settings(wanted.settings, now, &mut out);
            self.session_config = wanted;
            self.apply(out, &mut NoPerform);
        } else if wanted != self.session_config {
            self.undivert();
            let mut next = wanted.clone();
            next.thumb_wheel = self.session.config().thumb_wheel;
            self.session = Session::new(next, self.node.framing, self.node.device_index);
            self.session_config = wanted;
            self.restart(now);
        }
    }

    /// Starts the session's setup (its first request is written).
    fn restart(&mut self, now: Micros) {
        let mut out = Output::default();
        self.session.start(now, &mut out);
        self.apply(out, &mut NoPerform);
    }

    /// Puts the thumb wheel in `mode` (the daemon's path decision: diverted while the
    /// mouse's pointer node is grabbed with scroll transformed, native otherwise, left alone
    /// with `[hidpp] thumb_wheel = false`); a change is written to the device now (or
    /// applied by the setup in progress, and again after every reconnection).
    pub fn set_thumb_wheel(&mut self, mode: ThumbWheel, now: Micros) {
        if self.session.config().thumb_wheel == mode {
            return;
        }
        let mut out = Output::default();
        self.session.set_thumb_wheel(mode, now, &mut out);
        self.apply(out, &mut NoPerform);
    }

    /// What the session does with the thumb wheel now.
    pub fn thumb_wheel(&self) -> ThumbWheel {
        self.session.config().thumb_wheel
    }

    /// The node.
    pub fn node(&self) -> &HidrawNode {
        &self.node
    }

    /// The fd to watch; `None` while closed ([`HidppDevice::close_hidraw`]).
    pub fn fd(&self) -> Option<&OwnedFd> {
        self.fd.as_ref()
    }

    /// Kernel mode: closes the hidraw node once setup is done (the HID-BPF program hands
    /// the notifications over on its ring); returns the fd so the caller can take it out of
    /// its epoll set first. The next request written (a reconnect's setup, the un-divert
    /// at exit) reopens it ([`HidppDevice::take_reopened`]).
    pub fn close_hidraw(&mut self) -> Option<OwnedFd> {
        self.fd.take()
    }

    /// Whether a write reopened the hidraw node since the last call (the caller watches it
    /// again).
    pub fn take_reopened(&mut self) -> bool {
        std::mem::take(&mut self.reopened)
    }

    /// Whether a write reopened the hidraw node and [`HidppDevice::take_reopened`] was not
    /// called since.
    pub fn reopened(&self) -> bool {
        self.reopened
    }

    /// Opens the hidraw node again if [`HidppDevice::close_hidraw`] closed it (leaving
    /// kernel mode: HID++ goes back to hidraw reads). Returns whether it was reopened.
    ///
    /// Errors: the node cannot be opened.
    pub fn ensure_open(&mut self) -> Result<bool, Error> {
        if self.fd.is_some() {
            return Ok(false);
        }
        self.fd = Some(open_hidraw(&self.node.dev_path())?);
        self.reopened = false;
        Ok(true)
    }

    /// Whether the session waits for a reply or has setup requests left (kernel mode keeps
    /// the hidraw node open, and watched, exactly while this holds).
    pub fn needs_hidraw(&self) -> bool {
        matches!(self.session.phase(), Phase::Idle | Phase::Setup)
            || self.session.deadline().is_some()
    }

    /// Kernel mode: one HID++ report the HID-BPF program copied to its ring (report id
    /// first, 7 or 20 bytes), through the session and the gesture engine as a read from
    /// hidraw would go. Returns the thumb wheel's rotation as [`HidppDevice::on_readable`]
    /// does.
    pub fn on_report(
        &mut self,
        report: &[u8],
        now: Micros,
        performer: &mut dyn Perform,
    ) -> Option<FrameIn> {
        let mut out = Output::default();
        self.session.input(report, now, &mut out);
        if out == Output::default() {
            return None;
        }
        self.apply(out, performer)
    }

    /// Writes one request, reopening the hidraw node when kernel mode closed it.
    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.fd.is_none() {
            let path = self.node.dev_path();
            self.fd = Some(open_hidraw(&path)?);
            self.reopened = true;
            log::debug!("{}: hidraw reopened to write a request", self.label());
        }
        let fd = self.fd.as_ref().expect("opened above");
        rustix::io::write(fd, bytes)
            .map(drop)
            .map_err(|e| Error::io(self.node.dev_path(), "write", e.into()))
    }

    /// Writes a request whose reply nobody waits for (the haptic pulse). Kernel mode with
    /// hidraw closed: opened for this one write and closed again, so the daemon's watch
    /// and `pawl status` do not change for it.
    fn write_unanswered(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let path = self.node.dev_path();
        let once;
        let fd = match self.fd.as_ref() {
            Some(fd) => fd,
            None => {
                once = open_hidraw(&path)?;
                &once
            }
        };
        rustix::io::write(fd, bytes)
            .map(drop)
            .map_err(|e| Error::io(path, "write", e.into()))
    }

    /// The session (for reports).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// When [`HidppDevice::on_timer`] is due (a reply is awaited; a swipe's fingers lag
    /// behind the hand or wait to lift), `None` at rest.
    pub fn deadline(&self) -> Option<Micros> {
        match (self.session.deadline(), self.engine.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// One read (one report), through the session and the engine. Returns the thumb
    /// wheel's rotation as horizontal wheel input (v120) for the engine of the pointer node
    /// the daemon links it to. `Err(NODEV)` when the device is gone.
    #[inline]
    pub fn on_readable(
        &mut self,
        now: Micros,
        performer: &mut dyn Perform,
    ) -> Result<Option<FrameIn>, Errno> {
        let mut buf = [0u8; 64];
        let Some(fd) = self.fd.as_ref() else {
            return Ok(None);
        };
        match rustix::io::read(fd, &mut buf) {
            Ok(n) => {
                let mut out = Output::default();
                self.session.input(&buf[..n], now, &mut out);
                if out != Output::default() {
                    return Ok(self.apply(out, performer));
                }
                Ok(None)
            }
            Err(Errno::AGAIN | Errno::INTR) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The deadline passed: the reply's, or the gesture engine's (a swipe's next paced
    /// touchpad frame).
    pub fn on_timer(&mut self, now: Micros, performer: &mut dyn Perform) {
        if self.session.deadline().is_some_and(|d| d <= now) {
            let mut out = Output::default();
            self.session.timeout(now, &mut out);
            // A timeout makes no input.
            let _ = self.apply(out, performer);
        }
        if self.engine.next_deadline().is_some_and(|d| d <= now) {
            let mut res = FrameOut::default();
            // Pointer output has no virtual device here (see `apply`).
            let _ = self.engine.tick(now, &mut res);
            if !res.touch.is_empty() {
                self.engine.touch_written(performer.touch(&res.touch));
            }
        }
    }

    /// Clean exit (or HID++ switched off): a held gesture is cancelled and every diversion
    /// pawl made is undone.
    pub fn shutdown(&mut self) {
        let mut out = FrameOut::default();
        self.engine.cancel(&mut out);
        self.undivert();
    }

    /// Writes the requests that undo pawl's diversions (replies not awaited).
    fn undivert(&mut self) {
        let requests = self.session.undivert();
        for m in &requests {
            let (bytes, len) = m.encode();
            if let Err(e) = self.write(&bytes[..len]) {
                log::warn!("{}: cannot un-divert: {e}", self.label());
            }
        }
        if !requests.is_empty() {
            log::info!("{}: diversions undone", self.label());
        }
    }

    fn label(&self) -> String {
        format!(
            "{} \"{}\" HID++ index 0x{:02x}",
            self.node.dev_path().display(),
            self.node.name,
            self.node.device_index
        )
    }

    /// Writes the request, runs button and motion input through the gesture engine, logs
    /// the events; returns horizontal scroll (the thumb wheel) for the pointer's engine.
    fn apply(&mut self, out: Output, performer: &mut dyn Perform) -> Option<FrameIn> {
        if let Some(m) = out.request {
            let (bytes, len) = m.encode();
            if let Err(e) = self.write(&bytes[..len]) {
                log::error!("{}: cannot write a HID++ request: {e}", self.label());
            }
        }
        let scroll = match out.frame {
            // The thumb wheel: the pointer node's engine takes it.
            Some(frame) if frame.hwheel.v120 != 0 => Some(frame),
            Some(frame) => {
                let mut res = FrameOut::default();
                if self.engine.frame(&frame, &mut res) == Verdict::Rewrite {
                    if !res.touch.is_empty() {
                        self.engine.touch_written(performer.touch(&res.touch));
                    }
                    if pawl_hidpp::gesture_committed(&frame, &res)
                        && let Some(m) = self.session.gesture_haptic()
                    {
                        // `[hidpp] haptic_on_gesture`: one pulse, its ack not awaited.
                        let (bytes, len) = m.encode();
                        if let Err(e) = self.write_unanswered(&bytes[..len]) {
                            log::debug!("{}: cannot play the haptic pulse: {e}", self.label());
                        }
                    }
                    for &a in res.actions.as_slice() {
                        performer.perform(a);
                    }
                    // Pointer output (a gesture click passed through) has no virtual device
                    // here: the pointer node is not pawl's.
                }
                None
            }
            None => None,
        };
        for event in out.events() {
            if matches!(event, Event::Disconnected | Event::Reconnected) {
                // The mouse went away (or came back) mid-gesture: a swipe's fingers lift.
                let mut cancelled = FrameOut::default();
                self.engine.cancel(&mut cancelled);
                if !cancelled.touch.is_empty() {
                    performer.touch(&cancelled.touch);
                }
            }
            self.log_event(event);
        }
        scroll
    }

    fn log_event(&mut self, event: Event) {
        let label = self.label();
        match event {
            Event::Ready => {
                let mut diverted: Vec<String> = self
                    .session
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
                if self.session.config().thumb_wheel == ThumbWheel::Divert
                    && self.session.thumb_diverted()
                {
                    diverted.push(THUMB_WHEEL_DIVERTED.to_owned());
                }
                if diverted.is_empty() {
                    log::warn!("{label}: HID++ ready, nothing diverted");
                } else {
                    log::info!(
                        "{label} \"{}\": diverted {}",
                        self.session.name(),
                        diverted.join(", ")
                    );
                }
            }
            Event::Disconnected | Event::Reconnected => log::info!("{label}: {event}"),
            Event::Protocol { .. } => log::debug!("{label}: {event}"),
            Event::ThumbWheel(_) => log::info!("{label}: {event}"),
            // Never on Linux (the session does not read the battery: the kernel does).
            Event::Dpi(_) | Event::SmartShift(_) | Event::ThumbInverted(_) | Event::Battery(_) => {
                log::info!("{label}: {event}")
            }
            Event::DpiUnsupported { .. } | Event::SettingsMissing { .. } => {
                log::warn!("{label}: {event}")
            }
            Event::Error { .. } | Event::Unsupported | Event::ControlMissing(_) => {
                log::error!("{label}: {event}")
            }
            Event::Offline(_) => log::warn!("{label}: {event}"),
        }
    }

    /// Whether its gesture engine has a swipe in progress (fingers down on the touchpad).
    pub fn swiping(&self) -> bool {
        self.engine.swiping()
    }

    /// Whether the session finished setup with the gesture button diverted.
    pub fn gesture_diverted(&self) -> bool {
        self.session.phase() == Phase::Ready && self.session.diverted().next().is_some()
    }
}

/// Opens a hidraw node read-write, non-blocking.
fn open_hidraw(path: &Path) -> Result<OwnedFd, Error> {
    rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(path, "open", e.into()))
}

/// How logs and `pawl devices` name a diverted thumb wheel.
const THUMB_WHEEL_DIVERTED: &str = "thumb wheel (0x2150) as horizontal scroll";

struct NoPerform;

impl Perform for NoPerform {
    fn perform(&mut self, _action: Action) {}
    fn touch(&mut self, _touch: &TouchOut) -> Micros {
        Micros(0)
    }
}

/// Programs that talk HID++ to mice and divert controls themselves.
const OTHER_HIDPP_USERS: &[&str] = &["logid", "solaar"];

/// Warns when logid or Solaar runs: they (re)divert and un-divert controls too, and the
/// last writer wins. Names the process and whether it has `path` open.
fn warn_other_hidpp_users(path: &Path) {
    let Ok(procs) = fs::read_dir("/proc") else {
        return;
    };
    for p in procs.flatten() {
        let pid = p.file_name();
        let Some(pid) = pid
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(comm) = fs::read_to_string(p.path().join("comm")) else {
            continue;
        };
        let comm = comm.trim();
        if !OTHER_HIDPP_USERS.contains(&comm) {
            continue;
        }
        let holds = fs::read_dir(p.path().join("fd")).ok().map(|fds| {
            fds.flatten()
                .any(|fd| fs::read_link(fd.path()).is_ok_and(|t| t == path))
        });
        match holds {
            Some(true) => log::warn!(
                "{comm} (pid {pid}) has {} open: it diverts controls too and the two will \
                 undo each other's settings; stop it or leave the gesture button to it",
                path.display()
            ),
            Some(false) => {}
            None => log::warn!(
                "{comm} (pid {pid}) is running; if it manages this mouse it will undo \
                 pawl's diversion of the gesture button (or pawl its)"
            ),
        }
    }
}

/// The mouse's own settings as its HID++ session last read them (a read-back after pawl
/// wrote one, the setup's read of the thumb wheel, or a query session's reads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SettingsInForce {
    /// dpi (0x2201).
    pub dpi: Option<u16>,
    /// SmartShift (0x2111 / 0x2110).
    pub smartshift: Option<pawl_engine::config::SmartShift>,
    /// The thumb wheel's invert bit (0x2150).
    pub thumb_wheel_invert: Option<bool>,
}

impl SettingsInForce {
    /// What `session` has read.
    #[inline]
    pub fn of(session: &Session) -> SettingsInForce {
        SettingsInForce {
            dpi: session.dpi(),
            smartshift: session.smartshift(),
            thumb_wheel_invert: session.thumb_status().map(|t| t.inverted),
        }
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        *self == SettingsInForce::default()
    }
}

impl std::fmt::Display for SettingsInForce {
    /// `dpi 1600, smartshift ratchet, thumb_wheel_invert false`: the ones read, in that
    /// order (the config's key names).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut sep = "";
        if let Some(dpi) = self.dpi {
            write!(f, "dpi {dpi}")?;
            sep = ", ";
        }
        if let Some(s) = self.smartshift {
            write!(f, "{sep}smartshift {s}")?;
            sep = ", ";
        }
        if let Some(i) = self.thumb_wheel_invert {
            write!(f, "{sep}thumb_wheel_invert {i}")?;
        }
        Ok(())
    }
}

/// What a one-shot query found on a HID++ endpoint (for `pawl devices`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryReport {
    /// The endpoint.
    pub node: HidrawNode,
    /// The device's own name (0x0005), empty if unknown.
    pub name: String,
    /// HID++ version, if it answered.
    pub protocol: Option<(u8, u8)>,
    /// Every control with its current reporting (diverted by anyone: pawl, logid, Solaar).
    pub controls: Vec<pawl_hidpp::Control>,
    /// The thumb wheel (0x2150): whether it is diverted now (by anyone); `None` when the
    /// device has none or did not say.
    pub thumb_wheel_diverted: Option<bool>,
    /// The thumb wheel's invert bit (0x2150), `None` as for `thumb_wheel_diverted`.
    pub thumb_wheel_inverted: Option<bool>,
    /// The dpi in force (0x2201 `getSensorDpi`); `None` without 0x2201 or no answer.
    pub dpi: Option<u16>,
    /// The SmartShift mode in force (0x2111 / 0x2110); `None` as for `dpi`.
    pub smartshift: Option<pawl_engine::config::SmartShift>,
    /// Why the query stopped short, if it did.
    pub problem: Option<String>,
}

impl QueryReport {
    /// The mouse's own settings as read: `dpi 1600, smartshift ratchet, thumb_wheel_invert
    /// false`, only the ones the device answered; `None` when it answered none.
    pub fn settings(&self) -> Option<String> {
        let s = SettingsInForce {
            dpi: self.dpi,
            smartshift: self.smartshift,
            thumb_wheel_invert: self.thumb_wheel_inverted,
        };
        (!s.is_empty()).then(|| s.to_string())
    }

    /// The diverted controls, as `0x00C3 gesture button (raw XY)` strings, then the thumb
    /// wheel as `thumb wheel (0x2150)` when it is diverted.
    pub fn diverted(&self) -> Vec<String> {
        let mut res: Vec<String> = self
            .controls
            .iter()
            .filter_map(|c| c.reporting)
            .filter(|r| r.divert)
            .map(|r| {
                format!(
                    "0x{:04X} {}{}",
                    r.cid,
                    pawl_hidpp::controls::cid_name(r.cid),
                    if r.raw_xy { " (raw XY)" } else { "" }
                )
            })
            .collect();
        if self.thumb_wheel_diverted == Some(true) {
            res.push("thumb wheel (0x2150)".to_owned());
        }
        res
    }
}

/// Asks the device at `node` what it is and which controls are diverted, waiting up to
/// `timeout` in total. Uses its own software id, so a running daemon ignores the replies;
/// diverts nothing.
///
/// Errors: the node cannot be opened or written.
pub fn query(node: HidrawNode, timeout: std::time::Duration) -> Result<QueryReport, Error> {
    use rustix::event::{PollFd, PollFlags};
    let path = node.dev_path();
    let fd = rustix::fs::open(
        &path,
        OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(&path, "open", e.into()))?;
    let mut session = Session::new(
        SessionConfig::query(pawl_hidpp::report::SOFTWARE_ID_QUERY),
        node.framing,
        node.device_index,
    );
    let start = std::time::Instant::now();
    let now = || Micros(start.elapsed().as_micros() as u64);
    let mut out = Output::default();
    session.start(now(), &mut out);
    let mut problem = None;
    loop {
        for e in out.events() {
            if matches!(
                e,
                Event::Error { .. } | Event::Offline(_) | Event::Unsupported
            ) {
                problem = Some(e.to_string());
            }
        }
        if let Some(m) = out.request.take() {
            let (bytes, len) = m.encode();
            rustix::io::write(&fd, &bytes[..len])
                .map_err(|e| Error::io(&path, "write", e.into()))?;
        }
        if session.phase() != Phase::Setup {
            break;
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            problem = Some("no answer in time".into());
            break;
        }
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        let ts = rustix::time::Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        out = Output::default();
        match rustix::event::poll(&mut fds, Some(&ts)) {
            Ok(0) => session.timeout(Micros(u64::MAX), &mut out),
            Ok(_) => {
                let mut buf = [0u8; 64];
                if let Ok(n) = rustix::io::read(&fd, &mut buf) {
                    session.input(&buf[..n], now(), &mut out);
                }
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(Error::io(&path, "poll", e.into())),
        }
    }
    Ok(QueryReport {
        name: session.name().to_owned(),
        protocol: session.protocol(),
        controls: session.controls().to_vec(),
        thumb_wheel_diverted: session.thumb_status().map(|t| t.diverted),
        thumb_wheel_inverted: session.thumb_status().map(|t| t.inverted),
        dpi: session.dpi(),
        smartshift: session.smartshift(),
        problem,
        node,
    })
}

/// The gesture engine of an endpoint: no wheel, the config's gesture and buttons, and the
/// `[[app]]` profiles that apply to the endpoint's mouse.
fn gesture_engine(config: &Config, node: &HidrawNode) -> DeviceEngine {
    let mut engine = DeviceEngine::with_profile(config, false, config.scroll);
    engine.add_app_profiles(config, &node_info(node));
    engine
}

/// The endpoint's mouse as the config's matchers see it.
fn node_info(node: &HidrawNode) -> pawl_engine::DeviceInfo {
    pawl_engine::DeviceInfo {
        name: node.name.clone(),
        bus: pawl_engine::Bus(node.bus),
        vendor: node.vendor,
        product: node.product,
        has_wheel: true,
        is_touchpad: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mx_master_3s_node() -> HidrawNode {
        HidrawNode {
            node: "hidraw3".into(),
            hid_dir: PathBuf::from("/sys/devices/x"),
            name: "MX Master 3S".into(),
            bus: 5,
            vendor: 0x046d,
            product: 0xb034,
            framing: Framing {
                short: false,
                long: true,
            },
            device_index: DEVICE_INDEX_DIRECT,
        }
    }

    #[test]
    fn the_session_carries_the_mouse_settings_of_the_rules_that_match_it() {
        let config = Config::parse(
            "[hidpp]\ndpi = 1600\n[[device]]\nname = \"*3S*\"\n[device.hidpp]\nsmartshift = 30\n\
             [[device]]\nname = \"*Anywhere*\"\n[device.hidpp]\ndpi = 800\n",
            "c.toml",
            pawl_engine::Platform::Linux,
        )
        .unwrap();
        let c = session_config(&config, ThumbWheel::Leave, &mx_master_3s_node());
        assert_eq!(c.settings.dpi, Some(1600));
        assert_eq!(
            c.settings.smartshift,
            Some(pawl_engine::config::SmartShift::Threshold(30))
        );
    }

    #[test]
    fn a_query_report_shows_the_settings_the_mouse_answered() {
        let mut q = QueryReport {
            node: mx_master_3s_node(),
            name: "MX Master 3S".into(),
            protocol: Some((4, 5)),
            controls: Vec::new(),
            thumb_wheel_diverted: None,
            thumb_wheel_inverted: Some(true),
            dpi: Some(1600),
            smartshift: Some(pawl_engine::config::SmartShift::Ratchet),
            problem: None,
        };
        assert_eq!(
            q.settings().as_deref(),
            Some("dpi 1600, smartshift ratchet, thumb_wheel_invert true")
        );
        q.thumb_wheel_inverted = None;
        q.smartshift = None;
        assert_eq!(q.settings().as_deref(), Some("dpi 1600"));
        q.dpi = None;
        assert_eq!(q.settings(), None);
    }

    #[test]
    fn uevent_of_a_bluetooth_mx_master_3s_parses() {
        let text = "DRIVER=hid-generic\nHID_ID=0005:0000046D:0000B034\nHID_NAME=MX Master 3S\n\
                    HID_PHYS=aa:bb:cc:dd:ee:ff\nHID_UNIQ=11:22\nMODALIAS=hid:b0005g0000v0000046Dp0000B034\n";
        let (bus, vendor, product, name, phys) = parse_uevent(text).unwrap();
        assert_eq!((bus, vendor, product), (5, 0x046d, 0xb034));
        assert_eq!(name, "MX Master 3S");
        assert_eq!(device_index(bus, &phys), Some(0xFF));
    }

    #[test]
    fn dj_children_are_addressed_by_the_index_in_their_phys() {
        assert_eq!(device_index(3, "usb-0000:00:14.0-2/input2:1"), Some(1));
        assert_eq!(device_index(3, "usb-0000:00:14.0-2/input2:6"), Some(6));
        // A cable-connected mouse: no index suffix.
        assert_eq!(device_index(3, "usb-0000:00:14.0-2/input0"), Some(0xFF));
    }

    #[test]
    fn mx_masters_are_endpoints_and_receivers_themselves_are_not() {
        assert!(is_mx_master(0x046d, 0xb034, "MX Master 3S"));
        // A Unifying child: its wireless PID is in the family table.
        assert!(is_mx_master(0x046d, 0x4082, "Logitech MX Master 3"));
        // A Bolt child with an id the table lacks: named after the mouse.
        assert!(is_mx_master(0x046d, 0xb0ff, "MX Master 3S B"));
        assert!(!is_mx_master(0x046d, 0xc52b, "Logitech USB Receiver"));
        assert!(!is_mx_master(0x046d, 0x4023, "Logitech K270"));
        assert!(!is_mx_master(0x1234, 0xb034, "MX Master clone"));
    }

    #[test]
    fn only_hidraw_n_names_are_hidraw_nodes() {
        assert!(is_hidraw_name("hidraw0"));
        assert!(is_hidraw_name("hidraw12"));
        assert!(!is_hidraw_name("hidraw"));
        assert!(!is_hidraw_name("hidrawx"));
        assert!(!is_hidraw_name("event3"));
    }

    #[test]
    fn uevent_without_hid_id_is_not_a_device() {
        assert_eq!(parse_uevent("HID_NAME=x\n"), None);
    }

    #[test]
    fn the_sense_panel_button_mapped_needs_no_grab() {
        let config = Config::parse(
            "[hidpp]\nsense_panel = 8\n[buttons.map]\n8 = \"desktop-left\"\n",
            "c.toml",
            pawl_engine::Platform::Linux,
        )
        .unwrap();
        assert!(!buttons_need_grab(&config));
        let c = session_config(&config, ThumbWheel::Leave, &mx_master_3s_node());
        assert!(
            c.divert
                .iter()
                .any(|d| d.cid == pawl_hidpp::controls::CID_SENSE_PANEL && d.button == Button(8))
        );
    }

    #[test]
    fn default_config_needs_no_grab_for_buttons() {
        let config = Config::default_for(pawl_engine::Platform::Linux);
        assert!(!buttons_need_grab(&config));
        let mapped = Config::parse(
            "[buttons]\non_back = \"desktop-left\"\n",
            "c.toml",
            pawl_engine::Platform::Linux,
        )
        .unwrap();
        assert!(buttons_need_grab(&mapped));
    }
}
