//! The daemon: one thread, one epoll set with no timeout. Every wake-up is one of
//! [`Wake`]: a signal (signalfd), the glide timer (timerfd, armed only while an engine has
//! a deadline), a hotplug event (inotify on `/dev/input`, and on `/dev` for `hidrawN`
//! nodes while HID++ is on), a readable device, or a readable HID++ endpoint. Nothing
//! wakes pawl while nothing happens.
//!
//! The device table is a slot vector; a slot's epoll token is `DEVICE_TOKEN_BASE + slot`.
//! HID++ endpoints (`hidpp.rs`, `[hidpp] enabled`) have a table of their own, tokens
//! `HIDPP_TOKEN_BASE + slot`; they are opened before the evdev scan, because an MX Master
//! whose gesture button comes through HID++ needs no grab of its pointer node unless
//! scroll or a mapped button needs one. An endpoint is linked to its mouse's grabbed
//! pointer node when that node's scroll is transformed ([`Daemon::relink_thumb_wheels`]):
//! its diverted thumb wheel's rotation goes through that node's engine to its clone.
//! Every way a device arrives — the startup scan, a node appearing or changing
//! permissions, a config reload — goes through [`Daemon::consider`] on one `eventN` name.
//! A device leaves when its read fails with `ENODEV` (unplug, suspend, Bluetooth drop) or
//! the config stops handling it; whatever its clone has pressed is released first.

use std::collections::HashMap;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use pawl_engine::config::DeviceDecision;
use pawl_engine::config::GestureStyle;
use pawl_engine::units::{ButtonSet, Micros};
use pawl_engine::{Action, Config, Desktop, DeviceEngine, TouchOut};
use rustix::event::epoll;
use rustix::fs::inotify;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::time::{Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec};

use crate::actions::{ActionPlan, Performer};
use crate::caps::{self, ABS_MAX, Caps, Kind};
use crate::error::{Error, ErrorKind};
use crate::hidpp::{self, HidppDevice};
use crate::pipeline::{Pipeline, ReadBuf, Sink};
use crate::sys::{self, AbsInfo, UinputSpec};
use crate::sysfs::{self, SysDevice};
use crate::uinput::{self, VirtualDevice};

const SIGNAL_TOKEN: u64 = 0;
const TIMER_TOKEN: u64 = 1;
const HOTPLUG_TOKEN: u64 = 2;
/// inotify on `/dev` for `hidrawN` nodes (only while HID++ is on).
const HIDRAW_HOTPLUG_TOKEN: u64 = 3;
const DEVICE_TOKEN_BASE: u64 = 16;
/// Tokens of HID++ endpoints: `HIDPP_TOKEN_BASE + slot`.
const HIDPP_TOKEN_BASE: u64 = 1 << 32;

/// The reason given when a device vanished (its clone is kept for its return).
const GONE: &str = "device gone";

/// Everything that wakes the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wake {
    Signal,
    Timer,
    Hotplug,
    HidrawHotplug,
    Device(usize),
    Hidpp(usize),
}

impl Wake {
    fn from_token(token: u64) -> Option<Wake> {
        match token {
            SIGNAL_TOKEN => Some(Wake::Signal),
            TIMER_TOKEN => Some(Wake::Timer),
            HOTPLUG_TOKEN => Some(Wake::Hotplug),
            HIDRAW_HOTPLUG_TOKEN => Some(Wake::HidrawHotplug),
            t if t >= HIDPP_TOKEN_BASE => Some(Wake::Hidpp((t - HIDPP_TOKEN_BASE) as usize)),
            t if t >= DEVICE_TOKEN_BASE => Some(Wake::Device((t - DEVICE_TOKEN_BASE) as usize)),
            _ => None,
        }
    }
}

/// Why a node is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The startup scan.
    Startup,
    /// The node appeared (`IN_CREATE`).
    Created,
    /// The node's attributes (permissions, ACL) changed (`IN_ATTRIB`).
    Attrib,
    /// A config reload re-matches every node.
    Reload,
}

/// An opened source node and what is known about it.
struct Source {
    sys: SysDevice,
    path: PathBuf,
    fd: OwnedFd,
    caps: Caps,
    abs: [AbsInfo; ABS_MAX as usize + 1],
    decision: DeviceDecision,
}

/// A grabbed device and its clone. Closing `source.fd` releases the grab (the kernel's
/// `evdev_release`); dropping `clone` destroys the virtual device.
struct Device {
    source: Source,
    /// What the clone was created from (to find it again among the orphans).
    spec: UinputSpec,
    clone: VirtualDevice,
    read: ReadBuf,
    pipeline: Pipeline,
    deadline: Option<Micros>,
}

/// One entry of the device table.
enum Slot {
    Empty,
    /// Opened but not grabbed: a button was down (grabbing now would leave it stuck in the
    /// compositor). Its events are read (and dropped: the compositor gets them too) until
    /// `EVIOCGKEY` shows every button up.
    Waiting(Box<Source>),
    /// Grabbed and cloned: the hot path.
    Active(Box<Device>),
}

impl Slot {
    fn path(&self) -> Option<&Path> {
        match self {
            Slot::Empty => None,
            Slot::Waiting(s) => Some(&s.path),
            Slot::Active(d) => Some(&d.source.path),
        }
    }
}

/// What pawl remembers about a node it did not take, so repeated inotify events neither
/// repeat log lines nor redo work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Note {
    /// Not a pointer, pawl's own, not handled by the config, not grabbed because HID++
    /// carries its gesture button, or (`hidrawN`) not an MX Master HID++ endpoint.
    Skipped,
    /// Opening or grabbing failed; retried when its attributes change. `reported`: the
    /// error was logged as an error (once per node; an `EACCES` right after the node
    /// appeared is expected — udev has not applied its rule yet — and only logged at
    /// debug level until a retry fails too).
    Failed {
        /// What went wrong.
        kind: ErrorKind,
        /// Whether it was logged at error/warning level.
        reported: bool,
    },
}

/// The hot path's [`Sink`]: the device's clone and source fd, and the action performer.
struct IoSink<'a> {
    clone: &'a VirtualDevice,
    source: BorrowedFd<'a>,
    performer: &'a mut Performer,
}

impl Sink for IoSink<'_> {
    #[inline]
    fn write_clone(&mut self, bytes: &[u8]) {
        // Errors are logged by the device, once until a write succeeds again.
        let _ = self.clone.write(bytes);
    }

    #[inline]
    fn perform(&mut self, action: Action) {
        self.performer.perform(action);
    }

    #[inline]
    fn touch(&mut self, touch: &TouchOut) {
        self.performer.touch(touch);
    }

    fn buttons_down(&mut self) -> Option<ButtonSet> {
        sys::key_state(self.source)
            .ok()
            .map(|keys| caps::buttons_down(&keys))
    }
}

/// A grabbed device, as reported to the caller (for `pawl status`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSummary {
    /// The source node, `/dev/input/eventN`.
    pub path: PathBuf,
    /// Its name.
    pub name: String,
    /// Vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// Its clone's node, if found.
    pub clone: Option<PathBuf>,
}

/// Why the loop stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// SIGTERM or SIGINT.
    Signal(i32),
}

/// Reads the config again for SIGHUP: the new config, or the error message to log.
pub type Reload = Box<dyn FnMut() -> Result<Config, String>>;

/// The running daemon.
pub struct Daemon {
    config: Config,
    desktop: Desktop,
    class_dir: PathBuf,
    epoll: OwnedFd,
    signals: OwnedFd,
    timer: OwnedFd,
    hotplug: Option<OwnedFd>,
    armed: Option<Micros>,
    devices: Vec<Slot>,
    notes: HashMap<String, Note>,
    /// Set when a device was added or removed since the caller was last told.
    devices_changed: bool,
    performer: Performer,
    reload: Option<Reload>,
    /// Clones of devices that vanished, kept (everything released) for their return: a
    /// Bluetooth reconnect or resume gets the same virtual device back, and whoever reads
    /// the clone sees the releases instead of a vanished device.
    orphans: Vec<(UinputSpec, VirtualDevice)>,
    /// HID++ endpoints (the MX Master's gesture button, diverted); empty while
    /// `[hidpp] enabled` is false.
    hidpp: Vec<Option<HidppDevice>>,
    /// inotify on `/dev` for `hidrawN` nodes, while HID++ is on.
    hidraw_hotplug: Option<OwnedFd>,
}

impl hidpp::Perform for Performer {
    fn perform(&mut self, action: Action) {
        Performer::perform(self, action);
    }

    fn touch(&mut self, touch: &TouchOut) {
        Performer::touch(self, touch);
    }
}

/// The most orphaned clones kept; the oldest is destroyed beyond this.
const MAX_ORPHANS: usize = 8;

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field(
                "devices",
                &self
                    .devices
                    .iter()
                    .filter_map(Slot::path)
                    .collect::<Vec<_>>(),
            )
            .field(
                "hidpp",
                &self
                    .hidpp
                    .iter()
                    .flatten()
                    .map(|d| d.node().dev_path())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Daemon {
    /// Sets up signals, epoll, the timer, hotplug and the action performer (the virtual
    /// keyboard), then takes every device `config` handles among the nodes under
    /// `options.class_dir`.
    ///
    /// Errors: `/dev/uinput` cannot be used, or the kernel refuses an epoll, signalfd or
    /// timerfd. A device that cannot be opened or grabbed is logged and skipped.
    pub fn start(mut config: Config, options: &crate::Options) -> Result<Daemon, Error> {
        resolve_fingers(&mut config, options.desktop);
        // Block the signals first, so one arriving during setup is queued, not fatal.
        let signals = sys::signalfd().map_err(|e| Error::io("signalfd", "create", e))?;
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)
            .map_err(|e| Error::io("epoll", "create", e.into()))?;
        let timer = rustix::time::timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )
        .map_err(|e| Error::io("timerfd", "create", e.into()))?;
        for (fd, token) in [(&signals, SIGNAL_TOKEN), (&timer, TIMER_TOKEN)] {
            watch(&epoll, fd, token).map_err(|e| Error::io("epoll", "add to", e.into()))?;
        }
        let hotplug = match watch_hotplug(&options.dev_dir) {
            Ok(fd) => {
                watch(&epoll, &fd, HOTPLUG_TOKEN)
                    .map_err(|e| Error::io("epoll", "add to", e.into()))?;
                Some(fd)
            }
            Err(e) => {
                log::warn!(
                    "cannot watch {} for new devices ({e}); devices plugged in later need a restart",
                    options.dev_dir.display()
                );
                None
            }
        };
        let plan = action_plan(&config, options.desktop);
        let mut performer = Performer::new(plan)?;
        performer.set_touchpad(config.gesture.style == GestureStyle::Swipe)?;
        match performer.keyboard() {
            Some(kbd) => log::info!(
                "virtual keyboard \"{}\" -> {}",
                uinput::KEYBOARD_NAME,
                kbd.node().map_or("?".into(), |p| p.display().to_string())
            ),
            // No chord to press: still make sure clones can be created before grabbing.
            None => drop(uinput::open_uinput()?),
        }
        let mut daemon = Daemon {
            config,
            desktop: options.desktop,
            class_dir: options.class_dir.clone(),
            epoll,
            signals,
            timer,
            hotplug,
            armed: None,
            devices: Vec::new(),
            notes: HashMap::new(),
            devices_changed: false,
            performer,
            reload: None,
            orphans: Vec::new(),
            hidpp: Vec::new(),
            hidraw_hotplug: None,
        };
        // HID++ first: an MX Master whose gesture button is diverted needs no grab of its
        // pointer node unless scroll or a mapped button needs one.
        if daemon.config.hidpp.enabled {
            daemon.start_hidpp(Trigger::Startup);
        } else {
            log::info!("HID++ off ([hidpp] enabled = false): the gesture button is left alone");
        }
        let nodes = sysfs::event_nodes(&daemon.class_dir)
            .map_err(|e| Error::io(&daemon.class_dir, "list", e))?;
        for node in nodes {
            daemon.consider(&node, Trigger::Startup);
        }
        // The caller reads the initial set with `devices()`; report changes from here on.
        daemon.devices_changed = false;
        if daemon.devices().is_empty() {
            log::info!("no device to handle yet; waiting for one to appear");
        }
        Ok(daemon)
    }

    /// Sets how SIGHUP reads the config again (without it, SIGHUP only logs).
    pub fn set_reload(&mut self, reload: Reload) {
        self.reload = Some(reload);
    }

    /// The grabbed devices, in slot order (devices still waiting for a button release are
    /// not listed).
    pub fn devices(&self) -> Vec<DeviceSummary> {
        self.devices
            .iter()
            .filter_map(|slot| match slot {
                Slot::Active(d) => Some(DeviceSummary {
                    path: d.source.path.clone(),
                    name: d.source.sys.name.clone(),
                    vendor: d.source.sys.vendor,
                    product: d.source.sys.product,
                    clone: d.clone.node().map(Path::to_owned),
                }),
                _ => None,
            })
            .collect()
    }

    /// Whether what pawl noted about `node` (an `eventN` or `hidrawN` name) already answers
    /// `trigger`: permissions do not change what pawl decided about a skipped node, and a
    /// failed open is retried when the permissions change, not on every event.
    fn settled(&self, node: &str, trigger: Trigger) -> bool {
        matches!(
            (self.notes.get(node), trigger),
            (Some(Note::Skipped), Trigger::Attrib)
                | (
                    Some(Note::Failed { .. }),
                    Trigger::Startup | Trigger::Created
                )
        )
    }

    /// Looks at one `eventN` node: never opens it unless sysfs shows a pointer that the
    /// config handles; then opens it, and grabs and clones it once no button is down.
    pub fn consider(&mut self, node: &str, trigger: Trigger) {
        if !sysfs::is_event_node(node) {
            return;
        }
        if self.settled(node, trigger) {
            return;
        }
        let note = self.notes.get(node).copied();
        let path = Path::new(sysfs::DEV_INPUT).join(node);
        if self.devices.iter().any(|s| s.path() == Some(&path)) {
            return;
        }
        let sys = match sysfs::read_device(&self.class_dir, node) {
            Ok(d) => d,
            Err(e) => {
                log::debug!("{node}: cannot read its sysfs description: {e}");
                return;
            }
        };
        if sys.is_pawl_device() || sys.kind() == Kind::Other {
            log::debug!(
                "{node}: {:?} is pawl's own or not a pointer; not opened",
                sys.name
            );
            self.notes.insert(node.to_owned(), Note::Skipped);
            return;
        }
        let decision = self.config.decide(&sys.info());
        let label = describe(&sys);
        if !decision.handle {
            if note != Some(Note::Skipped) {
                log::info!("not handling {label} ({})", decision.reason);
            }
            self.notes.insert(node.to_owned(), Note::Skipped);
            return;
        }
        if trigger == Trigger::Created
            && self.config.hidpp.enabled
            && !decision.transform_scroll
            && !hidpp::buttons_need_grab(&self.config)
        {
            self.open_hidraw_of(node);
        }
        if self.hidpp_carries(&decision, node) {
            if note != Some(Note::Skipped) {
                log::info!("not grabbing {label}: {HIDPP_CARRIES}");
            }
            self.notes.insert(node.to_owned(), Note::Skipped);
            return;
        }
        let source = match open(sys, decision) {
            Ok(s) => s,
            Err(e) => {
                self.note_failure(node, &label, trigger, e);
                return;
            }
        };
        self.notes.remove(node);
        let slot = self.free_slot();
        if let Err(e) = watch(&self.epoll, &source.fd, DEVICE_TOKEN_BASE + slot as u64) {
            log::error!("not handling {label}: cannot watch it: {e}");
            return;
        }
        self.devices[slot] = Slot::Waiting(Box::new(source));
        self.try_activate(slot);
    }

    fn note_failure(&mut self, node: &str, label: &str, trigger: Trigger, e: Error) {
        let kind = e.kind();
        let reported = matches!(
            self.notes.get(node),
            Some(Note::Failed { kind: k, reported: true }) if *k == kind
        );
        let expected = kind == ErrorKind::Permission && trigger == Trigger::Created;
        self.notes.insert(
            node.to_owned(),
            Note::Failed {
                kind,
                reported: reported || !expected,
            },
        );
        if expected {
            // udev sets permissions after the node appears; the IN_ATTRIB retries.
            log::debug!("{label}: {e}; retrying when its permissions change");
        } else if reported {
            log::debug!("not handling {label}: {e}");
        } else if kind == ErrorKind::Busy {
            log::warn!("not handling {label}: {e}");
        } else {
            log::error!("not handling {label}: {e}");
        }
    }

    fn free_slot(&mut self) -> usize {
        match self.devices.iter().position(|s| matches!(s, Slot::Empty)) {
            Some(s) => s,
            None => {
                self.devices.push(Slot::Empty);
                self.devices.len() - 1
            }
        }
    }

    /// Grabs and clones a waiting device if no button of it is down.
    fn try_activate(&mut self, slot: usize) {
        let Slot::Waiting(source) = std::mem::replace(&mut self.devices[slot], Slot::Empty) else {
            return;
        };
        let label = describe(&source.sys);
        match activate(*source, &self.config, &mut self.orphans) {
            Ok(device) => {
                log::info!(
                    "grabbed {label} ({}; scroll {}) -> clone {}",
                    device.source.decision.reason,
                    if device.source.decision.transform_scroll {
                        "transformed"
                    } else {
                        "passed through"
                    },
                    device
                        .clone
                        .node()
                        .map_or("?".into(), |p| p.display().to_string())
                );
                self.devices[slot] = Slot::Active(Box::new(device));
                self.devices_changed = true;
                self.relink_thumb_wheels();
            }
            Err(Activation::ButtonsDown(source, down)) => {
                log::info!(
                    "waiting for {label} to have no button down ({:?}) before grabbing it",
                    down.iter().map(|b| b.0).collect::<Vec<_>>()
                );
                self.devices[slot] = Slot::Waiting(source);
            }
            Err(Activation::Failed(source, e)) => {
                let _ = epoll::delete(&self.epoll, &source.fd);
                let node = source.sys.node.clone();
                drop(source);
                self.note_failure(&node, &label, Trigger::Startup, e);
            }
        }
    }

    /// Releases everything the device's clone has pressed and ungrabs it. The clone is
    /// kept as an orphan when the device vanished (`why` = [`GONE`]), else destroyed.
    fn remove(&mut self, slot: usize, why: &str) {
        let Some(entry) = self.devices.get_mut(slot) else {
            return;
        };
        match std::mem::replace(entry, Slot::Empty) {
            Slot::Empty => {}
            Slot::Waiting(source) => {
                let _ = epoll::delete(&self.epoll, &source.fd);
                log::info!("stopped waiting for {} ({why})", describe(&source.sys));
            }
            Slot::Active(mut device) => {
                let _ = epoll::delete(&self.epoll, &device.source.fd);
                let Device {
                    source,
                    clone,
                    pipeline,
                    ..
                } = &mut *device;
                pipeline.cancel(&mut IoSink {
                    clone,
                    source: source.fd.as_fd(),
                    performer: &mut self.performer,
                });
                log::info!("released {} ({why})", describe(&device.source.sys));
                let Device { spec, clone, .. } = *device;
                if why == GONE {
                    if self.orphans.len() == MAX_ORPHANS {
                        self.orphans.remove(0);
                    }
                    self.orphans.push((spec, clone));
                }
                self.devices_changed = true;
                self.relink_thumb_wheels();
                self.rearm();
            }
        }
    }

    /// Runs until SIGTERM or SIGINT, then releases everything and returns.
    /// `devices_changed` is called with [`Daemon::devices`] whenever a device is added or
    /// removed (not on the hot path).
    ///
    /// Errors: `epoll_wait` fails (not on `EINTR`).
    pub fn run(mut self, devices_changed: &mut dyn FnMut(&[DeviceSummary])) -> Result<Exit, Error> {
        let mut events = [MaybeUninit::<epoll::Event>::uninit(); 16];
        loop {
            let (ready, _) = match epoll::wait(&self.epoll, &mut events, None) {
                Ok(r) => r,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(Error::io("epoll", "wait on", e.into())),
            };
            for event in ready.iter() {
                // `epoll::Event` is packed on x86_64: copy the fields out.
                let (flags, token) = (event.flags, event.data.u64());
                match Wake::from_token(token) {
                    Some(Wake::Device(slot)) => {
                        if flags.intersects(epoll::EventFlags::HUP | epoll::EventFlags::ERR) {
                            // Gone: what is still queued are the releases the kernel
                            // synthesizes on unplug; feeding them to the engine would
                            // turn a held gesture button into a click.
                            self.remove(slot, GONE);
                        } else {
                            self.on_device(slot);
                        }
                    }
                    Some(Wake::Signal) => {
                        if let Some(exit) = self.on_signal() {
                            self.shutdown();
                            return Ok(exit);
                        }
                    }
                    Some(Wake::Hidpp(slot)) => self.on_hidpp(slot),
                    Some(Wake::Timer) => self.on_timer(),
                    Some(Wake::Hotplug) => self.on_hotplug(),
                    Some(Wake::HidrawHotplug) => self.on_hidraw_hotplug(),
                    None => {}
                }
            }
            if std::mem::take(&mut self.devices_changed) {
                devices_changed(&self.devices());
            }
        }
    }

    /// One read of everything available, then every complete frame through the pipeline.
    #[inline]
    fn on_device(&mut self, slot: usize) {
        let Daemon {
            devices, performer, ..
        } = self;
        let device = match devices.get_mut(slot) {
            Some(Slot::Active(d)) => d,
            Some(Slot::Waiting(_)) => return self.on_waiting(slot),
            _ => return,
        };
        let Device {
            source,
            clone,
            read,
            pipeline,
            deadline,
            ..
        } = &mut **device;
        match rustix::io::read(&source.fd, read.spare()) {
            Ok(n) => {
                read.filled_by_read(n);
                let mut sink = IoSink {
                    clone,
                    source: source.fd.as_fd(),
                    performer,
                };
                let used = pipeline.feed(read.filled(), &mut sink);
                read.consume(used);
                if read.is_full() {
                    read.clear();
                    pipeline.drop_partial_frame(&mut sink);
                }
                let next = pipeline.next_deadline();
                if next != *deadline {
                    *deadline = next;
                    self.rearm();
                }
            }
            Err(Errno::AGAIN | Errno::INTR) => {}
            Err(Errno::NODEV) => self.remove(slot, GONE),
            Err(e) => {
                log::error!("cannot read {}: {e}", source.path.display());
                self.remove(slot, "read error");
            }
        }
    }

    /// A waiting device has events: drain them (the compositor gets them too), and grab it
    /// once no button is down.
    #[cold]
    fn on_waiting(&mut self, slot: usize) {
        let Some(Slot::Waiting(source)) = self.devices.get_mut(slot) else {
            return;
        };
        let mut scratch = [0u8; 64 * pawl_evdev::EVENT_SIZE];
        loop {
            match rustix::io::read(&source.fd, &mut scratch) {
                Ok(n) if n == scratch.len() => continue,
                Ok(_) | Err(Errno::AGAIN | Errno::INTR) => break,
                Err(Errno::NODEV) => return self.remove(slot, GONE),
                Err(e) => {
                    log::error!("cannot read {}: {e}", source.path.display());
                    return self.remove(slot, "read error");
                }
            }
        }
        match sys::key_state(source.fd.as_fd()) {
            Ok(keys) if caps::buttons_down(&keys).is_empty() => self.try_activate(slot),
            Ok(_) => {}
            Err(_) => self.remove(slot, GONE),
        }
    }

    fn on_timer(&mut self) {
        let mut expirations = [0u8; 8];
        let _ = rustix::io::read(&self.timer, &mut expirations);
        self.armed = None;
        let now = monotonic_now();
        let Daemon {
            devices,
            performer,
            hidpp,
            ..
        } = self;
        for dev in hidpp.iter_mut().flatten() {
            if dev.deadline().is_some_and(|d| d <= now) {
                dev.on_timer(now, performer);
            }
        }
        for slot in devices.iter_mut() {
            let Slot::Active(device) = slot else { continue };
            if device.deadline.is_some_and(|d| d <= now) {
                let Device {
                    source,
                    clone,
                    pipeline,
                    deadline,
                    ..
                } = &mut **device;
                pipeline.tick(
                    now,
                    &mut IoSink {
                        clone,
                        source: source.fd.as_fd(),
                        performer,
                    },
                );
                *deadline = pipeline.next_deadline();
            }
        }
        self.rearm();
    }

    /// Arms the timer for the earliest deadline (a device's glide, a HID++ reply awaited),
    /// or disarms it.
    fn rearm(&mut self) {
        let next = self
            .devices
            .iter()
            .filter_map(|s| match s {
                Slot::Active(d) => d.deadline,
                _ => None,
            })
            .chain(
                self.hidpp
                    .iter()
                    .flatten()
                    .filter_map(HidppDevice::deadline),
            )
            .min();
        // Re-arm only for an earlier deadline: a timer armed earlier than needed fires once,
        // and `on_timer` re-arms for what is then due. So a deadline that moves later with
        // every wheel frame (glide) costs no `timerfd_settime` per frame, and a cleared
        // deadline costs at most that one early wake-up instead of a syscall now.
        match (self.armed, next) {
            (_, None) => return,
            (Some(armed), Some(next)) if armed <= next => return,
            _ => {}
        }
        let value = match next {
            Some(Micros(us)) => Timespec {
                tv_sec: (us / 1_000_000) as _,
                tv_nsec: ((us % 1_000_000) * 1000).max(1) as _,
            },
            None => Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
        };
        let spec = Itimerspec {
            it_interval: Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        match rustix::time::timerfd_settime(&self.timer, TimerfdTimerFlags::ABSTIME, &spec) {
            Ok(_) => self.armed = next,
            Err(e) => log::error!("cannot arm the glide timer: {e}"),
        }
    }

    /// Drains the inotify queue: new nodes are considered, changed permissions retried.
    #[cold]
    fn on_hotplug(&mut self) {
        let Some(fd) = self.hotplug.as_ref() else {
            return;
        };
        let (todo, rescan) = drain_hotplug(fd, &mut self.notes, |_| true);
        for (node, trigger) in todo {
            self.consider(&node, trigger);
        }
        if rescan {
            log::warn!("hotplug events were lost; rescanning devices");
            self.rescan(Trigger::Reload);
        }
    }

    fn rescan(&mut self, trigger: Trigger) {
        match sysfs::event_nodes(&self.class_dir) {
            Ok(nodes) => {
                for node in nodes {
                    self.consider(&node, trigger);
                }
            }
            Err(e) => log::error!("cannot list {}: {e}", self.class_dir.display()),
        }
    }

    /// Drains the signalfd; returns the exit on SIGTERM/SIGINT.
    fn on_signal(&mut self) -> Option<Exit> {
        let mut exit = None;
        loop {
            let mut info = [0u8; sys::SIGINFO_SIZE];
            match rustix::io::read(&self.signals, &mut info) {
                Ok(n) if n == sys::SIGINFO_SIZE => {}
                _ => break,
            }
            match sys::siginfo_signo(&info) {
                s @ (libc::SIGTERM | libc::SIGINT) => {
                    let name = if s == libc::SIGTERM {
                        "SIGTERM"
                    } else {
                        "SIGINT"
                    };
                    log::info!("{name}: releasing everything");
                    exit = Some(Exit::Signal(s));
                }
                libc::SIGCHLD => reap_children(),
                libc::SIGHUP => self.on_reload(),
                _ => {}
            }
        }
        exit
    }

    /// SIGHUP: reads the config again; a valid one replaces the current one and every
    /// device is matched again, an invalid one is logged and changes nothing.
    fn on_reload(&mut self) {
        let Some(reload) = self.reload.as_mut() else {
            log::warn!("SIGHUP: this pawl cannot reload its config; restart it instead");
            return;
        };
        let mut config = match reload() {
            Ok(c) => c,
            Err(msg) => {
                log::error!("SIGHUP: {msg}\nkeeping the current config");
                return;
            }
        };
        resolve_fingers(&mut config, self.desktop);
        if let Err(e) = self.performer.replan(action_plan(&config, self.desktop)) {
            log::error!("SIGHUP: {e}; keeping the current config");
            return;
        }
        // Engines restart below (rematch, reload_hidpp): a swipe in progress ends with
        // them, so its fingers lift before the touchpad is kept or destroyed.
        self.performer.lift_fingers();
        if let Err(e) = self
            .performer
            .set_touchpad(config.gesture.style == GestureStyle::Swipe)
        {
            log::error!("SIGHUP: {e}; swipe style has no virtual touchpad");
        }
        let old = std::mem::replace(&mut self.config, config);
        self.notes.clear();
        // HID++ first, as at startup: whether a pointer node needs its grab depends on it.
        self.reload_hidpp(&old);
        for slot in 0..self.devices.len() {
            self.rematch(slot);
        }
        self.rescan(Trigger::Reload);
        // The new config may switch the thumb wheel off, or a node's scroll transform.
        self.relink_thumb_wheels();
        log::info!("SIGHUP: config reloaded");
    }

    /// Applies the current config to a taken device: released when no longer handled or
    /// when HID++ now carries its gesture button and nothing else needs the grab, else its
    /// engine restarts with the new settings (what it has pressed is released).
    fn rematch(&mut self, slot: usize) {
        let (decision, node) = match &self.devices[slot] {
            Slot::Empty => return,
            Slot::Waiting(s) => (self.config.decide(&s.sys.info()), s.sys.node.clone()),
            Slot::Active(d) => (
                self.config.decide(&d.source.sys.info()),
                d.source.sys.node.clone(),
            ),
        };
        if !decision.handle {
            let why = format!("the config no longer handles it: {}", decision.reason);
            return self.remove(slot, &why);
        }
        if self.hidpp_carries(&decision, &node) {
            self.remove(slot, HIDPP_CARRIES);
            self.notes.insert(node, Note::Skipped);
            return;
        }
        let source = match &mut self.devices[slot] {
            Slot::Empty => return,
            Slot::Waiting(s) => &mut **s,
            Slot::Active(d) => &mut d.source,
        };
        source.decision = decision;
        let Daemon {
            devices,
            performer,
            config,
            ..
        } = self;
        if let Slot::Active(device) = &mut devices[slot] {
            let Device {
                source,
                clone,
                pipeline,
                deadline,
                ..
            } = &mut **device;
            pipeline.cancel(&mut IoSink {
                clone,
                source: source.fd.as_fd(),
                performer,
            });
            *pipeline = new_pipeline(source, config);
            *deadline = None;
            log::info!(
                "re-matched {} ({}; scroll {})",
                describe(&source.sys),
                source.decision.reason,
                if source.decision.transform_scroll {
                    "transformed"
                } else {
                    "passed through"
                }
            );
        }
        self.rearm();
    }

    /// Undoes every HID++ diversion, releases everything pressed on every virtual device,
    /// ungrabs every device and destroys the clones.
    fn shutdown(&mut self) {
        for dev in self.hidpp.iter_mut().flatten() {
            dev.shutdown();
        }
        for slot in 0..self.devices.len() {
            self.remove(slot, "exit");
        }
        self.performer.release_all();
        self.orphans.clear();
    }
}

/// Why a pointer node is not grabbed (or is released) while HID++ carries its gesture button.
const HIDPP_CARRIES: &str = "its gesture button comes through HID++ and nothing else needs the \
                             grab (scroll not transformed, no mapped button)";

/// HID++ endpoints: opened, watched, re-evaluated on reload, closed.
impl Daemon {
    /// Turns HID++ on: watches `/dev` for `hidrawN` nodes (a mouse that reconnects gets a
    /// new one) and opens every MX Master HID++ endpoint there is.
    #[cold]
    fn start_hidpp(&mut self, trigger: Trigger) {
        if self.hidraw_hotplug.is_none() {
            let dev = Path::new(hidpp::DEV);
            match watch_hotplug(dev)
                .and_then(|fd| watch(&self.epoll, &fd, HIDRAW_HOTPLUG_TOKEN).map(|()| fd))
            {
                Ok(fd) => self.hidraw_hotplug = Some(fd),
                Err(e) => log::warn!(
                    "cannot watch {} for HID++ endpoints ({e}); an MX Master that appears \
                     later needs a restart for its gesture button",
                    dev.display()
                ),
            }
        }
        self.rescan_hidraw(trigger);
    }

    /// Turns HID++ off: every diversion undone, every endpoint closed, `/dev` unwatched.
    #[cold]
    fn stop_hidpp(&mut self) {
        for dev in self.hidpp.iter_mut().flatten() {
            dev.shutdown();
            let _ = epoll::delete(&self.epoll, dev.fd());
        }
        self.hidpp.clear();
        if let Some(fd) = self.hidraw_hotplug.take() {
            let _ = epoll::delete(&self.epoll, &fd);
        }
        self.rearm();
    }

    /// SIGHUP with a new config (already in `self.config`; `old` is the one before):
    /// HID++ switched on or off, or each endpoint reconfigured (its gesture engine
    /// restarted; its setup redone if what to divert changed), and endpoints that failed
    /// are tried again.
    #[cold]
    fn reload_hidpp(&mut self, old: &Config) {
        match (old.hidpp.enabled, self.config.hidpp.enabled) {
            (false, false) => {}
            (true, false) => {
                log::info!("SIGHUP: HID++ off ([hidpp] enabled = false): undoing diversions");
                self.stop_hidpp();
            }
            (false, true) => {
                log::info!("SIGHUP: HID++ on");
                self.start_hidpp(Trigger::Reload);
            }
            (true, true) => {
                let now = monotonic_now();
                for dev in self.hidpp.iter_mut().flatten() {
                    dev.reconfigure(&self.config, now);
                }
                self.rearm();
                self.rescan_hidraw(Trigger::Reload);
            }
        }
    }

    /// Looks at every `hidrawN` node.
    fn rescan_hidraw(&mut self, trigger: Trigger) {
        for node in hidpp::hidraw_nodes(Path::new(hidpp::SYS_CLASS_HIDRAW)) {
            self.consider_hidraw(&node, trigger);
        }
    }

    /// Looks at one `hidrawN` node: opens it and starts its HID++ session when sysfs shows
    /// an MX Master HID++ endpoint, then releases the pointer nodes that no longer need
    /// their grab. Failures are noted like evdev nodes' (retried when permissions change).
    fn consider_hidraw(&mut self, node: &str, trigger: Trigger) {
        if !self.config.hidpp.enabled || !hidpp::is_hidraw_name(node) {
            return;
        }
        if self.settled(node, trigger) {
            return;
        }
        if self.hidpp.iter().flatten().any(|d| d.node().node == node) {
            return;
        }
        let found = match hidpp::read_node(Path::new(hidpp::SYS_CLASS_HIDRAW), node) {
            Ok(Some(found)) => found,
            Ok(None) => {
                self.notes.insert(node.to_owned(), Note::Skipped);
                return;
            }
            Err(e) => {
                log::debug!("{node}: cannot read its sysfs description: {e}");
                return;
            }
        };
        let label = format!(
            "HID++ endpoint {} \"{}\"",
            found.dev_path().display(),
            found.name
        );
        let dev = match HidppDevice::open(found, &self.config, monotonic_now()) {
            Ok(dev) => dev,
            Err(e) => return self.note_failure(node, &label, trigger, e),
        };
        let slot = match self.hidpp.iter().position(Option::is_none) {
            Some(s) => s,
            None => {
                self.hidpp.push(None);
                self.hidpp.len() - 1
            }
        };
        if let Err(e) = watch(&self.epoll, dev.fd(), HIDPP_TOKEN_BASE + slot as u64) {
            log::error!("{label}: cannot watch it: {e}");
            return;
        }
        self.notes.remove(node);
        log::info!("{label}: setting up");
        self.hidpp[slot] = Some(dev);
        self.release_covered();
        self.relink_thumb_wheels();
        self.rearm();
    }

    /// Opens the HID++ endpoint of the HID device behind the new pointer node `node`
    /// (`eventN`) if its hidraw node exists already: the kernel makes it right after the
    /// evdev nodes, and pawl's `/dev` watch may not have reported it yet. Spares grabbing
    /// (and cloning) a pointer only to release it a moment later.
    fn open_hidraw_of(&mut self, node: &str) {
        let dir = self.class_dir.join(node).join("device/device/hidraw");
        for hidraw in hidpp::hidraw_nodes(&dir) {
            if Path::new(hidpp::DEV).join(&hidraw).exists() {
                self.consider_hidraw(&hidraw, Trigger::Created);
            }
        }
    }

    /// Releases the pointer nodes HID++ now carries (an endpoint that appeared after its
    /// pointer node was grabbed, or a reload).
    fn release_covered(&mut self) {
        for slot in 0..self.devices.len() {
            let sys = match &self.devices[slot] {
                Slot::Empty => continue,
                Slot::Waiting(s) => &s.sys,
                Slot::Active(d) => &d.source.sys,
            };
            // The current config's decision (a reload may not have re-matched it yet).
            let decision = self.config.decide(&sys.info());
            if decision.handle && self.hidpp_carries(&decision, &sys.node) {
                let node = sys.node.clone();
                self.remove(slot, HIDPP_CARRIES);
                self.notes.insert(node, Note::Skipped);
            }
        }
    }

    /// Whether the pointer node `node` (`eventN`) needs no grab: HID++ carries its gesture
    /// button, its scroll is not transformed and no other button is mapped.
    fn hidpp_carries(&self, decision: &DeviceDecision, node: &str) -> bool {
        !decision.transform_scroll
            && self.hidpp.iter().any(Option::is_some)
            && !hidpp::buttons_need_grab(&self.config)
            && self.hidpp_covers(node)
    }

    /// Whether `node` (`eventN`) belongs to a HID device whose HID++ endpoint pawl has
    /// open (`/sys/class/input/eventN/device/device` is the HID device).
    fn hidpp_covers(&self, node: &str) -> bool {
        let Ok(hid_dir) = std::fs::canonicalize(self.class_dir.join(node).join("device/device"))
        else {
            return false;
        };
        self.hidpp
            .iter()
            .flatten()
            .any(|d| d.node().hid_dir == hid_dir)
    }

    /// Links each HID++ endpoint's thumb wheel to its mouse's pointer node when that node
    /// is grabbed with scroll transformed (its engine and clone take the thumb wheel's
    /// scroll; the thumb wheel is diverted), else to none (the thumb wheel stays native and
    /// the kernel's `REL_HWHEEL` carries it). Run whenever a pointer node is taken or
    /// released, an endpoint opens, or the config changes; cheap when nothing changed.
    #[cold]
    fn relink_thumb_wheels(&mut self) {
        if self.hidpp.iter().all(Option::is_none) {
            return;
        }
        let pointers: Vec<(usize, PathBuf)> = self
            .devices
            .iter()
            .enumerate()
            .filter_map(|(slot, s)| match s {
                Slot::Active(d) if d.source.decision.transform_scroll => {
                    let dir = self
                        .class_dir
                        .join(&d.source.sys.node)
                        .join("device/device");
                    std::fs::canonicalize(dir).ok().map(|hid| (slot, hid))
                }
                _ => None,
            })
            .collect();
        let now = monotonic_now();
        for dev in self.hidpp.iter_mut().flatten() {
            let target = pointers
                .iter()
                .find(|(_, hid)| *hid == dev.node().hid_dir)
                .map(|(slot, _)| *slot);
            if target != dev.thumb_target() {
                match target {
                    Some(slot) => log::debug!(
                        "{}: thumb wheel scroll goes to {}",
                        dev.node().dev_path().display(),
                        self.devices[slot]
                            .path()
                            .map_or("?".into(), |p| p.display().to_string())
                    ),
                    None => log::debug!(
                        "{}: no grabbed pointer node with scroll transformed; thumb wheel native",
                        dev.node().dev_path().display()
                    ),
                }
            }
            dev.set_thumb_target(target, &self.config, now);
        }
        self.rearm();
    }

    /// One report from a HID++ endpoint; an endpoint whose read fails (the mouse went
    /// away) is closed, and opened again when its node comes back.
    #[inline]
    fn on_hidpp(&mut self, slot: usize) {
        let Daemon {
            hidpp,
            performer,
            devices,
            ..
        } = self;
        let Some(dev) = hidpp.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        let before = dev.deadline();
        match dev.on_readable(monotonic_now(), performer) {
            Ok(scroll) => {
                let mut rearm = dev.deadline() != before;
                if let Some(frame) = scroll
                    && let Some(Slot::Active(device)) =
                        dev.thumb_target().and_then(|t| devices.get_mut(t))
                {
                    // The thumb wheel, through its pointer node's engine to its clone.
                    let Device {
                        source,
                        clone,
                        pipeline,
                        deadline,
                        ..
                    } = &mut **device;
                    pipeline.inject(
                        &frame,
                        &mut IoSink {
                            clone,
                            source: source.fd.as_fd(),
                            performer,
                        },
                    );
                    let next = pipeline.next_deadline();
                    if next != *deadline {
                        *deadline = next;
                        rearm = true;
                    }
                }
                if rearm {
                    self.rearm();
                }
            }
            Err(e) => {
                log::info!(
                    "HID++ endpoint {} gone ({e})",
                    dev.node().dev_path().display()
                );
                let _ = epoll::delete(&self.epoll, dev.fd());
                if dev.swiping() {
                    // Unplugged mid-swipe: its engine goes with it, its fingers lift.
                    performer.lift_fingers();
                }
                hidpp[slot] = None;
                self.rearm();
            }
        }
    }

    /// Drains the `/dev` inotify queue: new `hidrawN` nodes are considered, changed
    /// permissions retried.
    #[cold]
    fn on_hidraw_hotplug(&mut self) {
        let Some(fd) = self.hidraw_hotplug.as_ref() else {
            return;
        };
        let (todo, rescan) = drain_hotplug(fd, &mut self.notes, hidpp::is_hidraw_name);
        for (node, trigger) in todo {
            self.consider_hidraw(&node, trigger);
        }
        if rescan {
            log::warn!("hotplug events under /dev were lost; rescanning HID++ endpoints");
            self.rescan_hidraw(Trigger::Reload);
        }
    }
}

/// Reads every queued event of an inotify `fd` for names `keep` accepts: forgets the notes
/// of nodes that vanished or appeared, and returns the nodes to look at and whether events
/// were lost (queue overflow: rescan).
fn drain_hotplug(
    fd: &OwnedFd,
    notes: &mut HashMap<String, Note>,
    keep: fn(&str) -> bool,
) -> (Vec<(String, Trigger)>, bool) {
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut reader = inotify::Reader::new(fd, &mut buf);
    let mut todo: Vec<(String, Trigger)> = Vec::new();
    let mut rescan = false;
    while let Ok(event) = reader.next() {
        let flags = event.events();
        if flags.contains(inotify::ReadFlags::QUEUE_OVERFLOW) {
            rescan = true;
            continue;
        }
        let Some(name) = event
            .file_name()
            .and_then(|n: &CStr| n.to_str().ok())
            .filter(|n| keep(n))
        else {
            continue;
        };
        if flags.contains(inotify::ReadFlags::DELETE) {
            notes.remove(name);
        } else if flags.contains(inotify::ReadFlags::CREATE) {
            notes.remove(name);
            todo.push((name.to_owned(), Trigger::Created));
        } else if flags.contains(inotify::ReadFlags::ATTRIB) {
            todo.push((name.to_owned(), Trigger::Attrib));
        }
    }
    (todo, rescan)
}

/// Why a waiting device was not activated.
enum Activation {
    /// A button is down (these); it stays waiting.
    ButtonsDown(Box<Source>, ButtonSet),
    /// Grabbing or cloning failed.
    Failed(Box<Source>, Error),
}

/// Opens a handled node read-only and reads what cloning it needs. Does not grab.
fn open(sys: SysDevice, decision: DeviceDecision) -> Result<Source, Error> {
    let path = sys.dev_path();
    let fd = rustix::fs::open(
        &path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(&path, "open", e.into()))?;
    // Selecting the clock flushes what was queued, so it comes first.
    if let Err(e) = sys::set_clock_monotonic(fd.as_fd()) {
        log::warn!(
            "{}: cannot select CLOCK_MONOTONIC timestamps: {e}",
            path.display()
        );
    }
    let id = sys::input_id(fd.as_fd()).map_err(|e| Error::io(&path, "identify", e))?;
    let (caps, abs) =
        sys::read_caps(fd.as_fd()).map_err(|e| Error::io(&path, "read capabilities of", e))?;
    if (id.vendor, id.product) != (sys.vendor, sys.product) || caps.kind() == Kind::Other {
        // The node was replaced between reading sysfs and opening it.
        return Err(Error::io(
            &path,
            "match sysfs with",
            std::io::Error::other("the device changed while being opened"),
        ));
    }
    Ok(Source {
        sys,
        path,
        fd,
        caps,
        abs,
        decision,
    })
}

/// Grabs a source and clones it, unless a button is down before or right after the grab
/// (then the grab is undone: a press the compositor saw must be released to it).
/// An orphaned clone with the same spec is reused.
fn activate(
    source: Source,
    config: &Config,
    orphans: &mut Vec<(UinputSpec, VirtualDevice)>,
) -> Result<Device, Activation> {
    let down = |source: &Source| {
        sys::key_state(source.fd.as_fd())
            .map(|keys| caps::buttons_down(&keys))
            .unwrap_or_default()
    };
    let before = down(&source);
    if !before.is_empty() {
        return Err(Activation::ButtonsDown(Box::new(source), before));
    }
    if let Err(e) = sys::grab(source.fd.as_fd(), true) {
        let e = Error::io(&source.path, "grab", e);
        return Err(Activation::Failed(Box::new(source), e));
    }
    let after = down(&source);
    if !after.is_empty() {
        let _ = sys::grab(source.fd.as_fd(), false);
        return Err(Activation::ButtonsDown(Box::new(source), after));
    }
    let spec = uinput::clone_spec(&source.sys, &source.caps, &source.abs);
    let clone = match orphans.iter().position(|(s, _)| *s == spec) {
        Some(i) => {
            let (_, clone) = orphans.remove(i);
            log::info!(
                "{}: reusing its clone {}",
                source.path.display(),
                clone.node().map_or("?".into(), |p| p.display().to_string())
            );
            clone
        }
        None => match VirtualDevice::create(&spec) {
            Ok(c) => c,
            Err(e) => return Err(Activation::Failed(Box::new(source), e)),
        },
    };
    Ok(Device {
        pipeline: new_pipeline(&source, config),
        source,
        spec,
        clone,
        read: ReadBuf::default(),
        deadline: None,
    })
}

fn new_pipeline(source: &Source, config: &Config) -> Pipeline {
    let engine = DeviceEngine::with_profile(
        config,
        source.decision.transform_scroll,
        source.decision.scroll,
    );
    Pipeline::new(&source.caps, engine, &source.path.display().to_string())
}

/// The action plan for `config`: default chords of `desktop` unless the config names a
/// desktop; commands refused when running as root without `allow_root_commands`.
/// Fixes `gesture.fingers` for `desktop` when the config says `"auto"` (GNOME 3, KDE 4), so
/// every engine made from `config` swipes with the desktop's finger count.
fn resolve_fingers(config: &mut Config, desktop: Desktop) {
    config.gesture.fingers = Some(config.gesture.swipe_fingers(desktop));
}

fn action_plan(config: &Config, desktop: Desktop) -> ActionPlan {
    let desktop = config.actions.desktop.unwrap_or(desktop);
    let commands_allowed =
        !rustix::process::geteuid().is_root() || config.actions.allow_root_commands;
    let (plan, warnings) = ActionPlan::new(config, desktop, commands_allowed);
    for w in warnings {
        log::warn!("{w}");
    }
    log::info!(
        "actions: backend {}, desktop {}",
        config.actions.backend.name(),
        desktop.name()
    );
    plan
}

fn watch(epoll: &OwnedFd, fd: &OwnedFd, token: u64) -> rustix::io::Result<()> {
    epoll::add(
        epoll,
        fd,
        epoll::EventData::new_u64(token),
        epoll::EventFlags::IN,
    )
}

/// An inotify watch on `dir` for nodes appearing (`IN_CREATE`), changing permissions
/// (`IN_ATTRIB`: udev applies them after the node exists) and vanishing (`IN_DELETE`).
fn watch_hotplug(dir: &Path) -> rustix::io::Result<OwnedFd> {
    let fd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC)?;
    inotify::add_watch(
        &fd,
        dir,
        inotify::WatchFlags::CREATE | inotify::WatchFlags::ATTRIB | inotify::WatchFlags::DELETE,
    )?;
    Ok(fd)
}

/// Reaps every exited child (commands started by actions), so none stays a zombie.
pub fn reap_children() {
    use rustix::process::{WaitOptions, wait};
    // `wait` is waitpid(-1): any child, also those in their own session (`waitpid(None)`
    // would be waitpid(0), this process group only).
    while let Ok(Some((pid, status))) = wait(WaitOptions::NOHANG) {
        log::debug!("command pid {} exited: {status:?}", pid.as_raw_nonzero());
    }
}

/// The monotonic clock in µs (the clock of event timestamps after `EVIOCSCLOCKID`).
fn monotonic_now() -> Micros {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    Micros(t.tv_sec as u64 * 1_000_000 + t.tv_nsec as u64 / 1000)
}

/// `/dev/input/eventN "Name" 046d:b034 bluetooth`, for logs.
fn describe(sys: &SysDevice) -> String {
    format!(
        "{} \"{}\" {:04x}:{:04x} {}",
        sys.dev_path().display(),
        sys.name,
        sys.vendor,
        sys.product,
        pawl_engine::Bus(sys.bus).name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_map_to_wakes() {
        assert_eq!(Wake::from_token(SIGNAL_TOKEN), Some(Wake::Signal));
        assert_eq!(Wake::from_token(TIMER_TOKEN), Some(Wake::Timer));
        assert_eq!(Wake::from_token(HOTPLUG_TOKEN), Some(Wake::Hotplug));
        assert_eq!(
            Wake::from_token(HIDRAW_HOTPLUG_TOKEN),
            Some(Wake::HidrawHotplug)
        );
        assert_eq!(Wake::from_token(HIDPP_TOKEN_BASE + 2), Some(Wake::Hidpp(2)));
        assert_eq!(
            Wake::from_token(DEVICE_TOKEN_BASE + 3),
            Some(Wake::Device(3))
        );
        assert_eq!(Wake::from_token(5), None);
    }
}
