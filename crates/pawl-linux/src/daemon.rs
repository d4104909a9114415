//! The daemon: one thread, one epoll set with no timeout. Every wake-up is one of
//! [`Wake`]: a signal (signalfd), the glide timer (timerfd, armed only while an engine has
//! a deadline), or a readable device. Nothing wakes pawl while nothing happens.
//!
//! The device table is a slot vector; a slot's epoll token is `DEVICE_TOKEN_BASE + slot`.
//! Adding a device is [`Daemon::consider`] on one `eventN` name — the startup scan calls it
//! for every node, and hotplug (inotify on `/dev/input`, issue 4) will call it for new
//! ones.

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use pawl_engine::config::DeviceDecision;
use pawl_engine::units::{ButtonSet, Micros};
use pawl_engine::{Action, Config, DeviceEngine};
use rustix::event::epoll;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::time::{Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec};

use crate::actions::Performer;
use crate::caps::{self, Kind};
use crate::error::{Error, ErrorKind};
use crate::hidpp::HidppDevice;
use crate::pipeline::{Pipeline, ReadBuf, Sink};
use crate::sys;
use crate::sysfs::{self, SysDevice};
use crate::uinput::{self, VirtualDevice};

const SIGNAL_TOKEN: u64 = 0;
const TIMER_TOKEN: u64 = 1;
const DEVICE_TOKEN_BASE: u64 = 16;
/// Tokens of HID++ endpoints (`hidpp.rs`): `HIDPP_TOKEN_BASE + slot`.
const HIDPP_TOKEN_BASE: u64 = 1 << 32;

/// Everything that wakes the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wake {
    Signal,
    Timer,
    Device(usize),
    Hidpp(usize),
}

impl Wake {
    fn from_token(token: u64) -> Option<Wake> {
        match token {
            SIGNAL_TOKEN => Some(Wake::Signal),
            TIMER_TOKEN => Some(Wake::Timer),
            t if t >= HIDPP_TOKEN_BASE => Some(Wake::Hidpp((t - HIDPP_TOKEN_BASE) as usize)),
            t if t >= DEVICE_TOKEN_BASE => Some(Wake::Device((t - DEVICE_TOKEN_BASE) as usize)),
            _ => None,
        }
    }
}

/// A grabbed device and its clone. Closing `fd` releases the grab (the kernel's
/// `evdev_release`); dropping `clone` destroys the virtual device.
struct Device {
    path: PathBuf,
    name: String,
    vendor: u16,
    product: u16,
    fd: OwnedFd,
    clone: VirtualDevice,
    read: ReadBuf,
    pipeline: Pipeline,
    deadline: Option<Micros>,
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
        if let Err(e) = self.clone.write(bytes) {
            log::error!("cannot write to the virtual device: {e}");
        }
    }

    #[inline]
    fn perform(&mut self, action: Action) {
        self.performer.perform(action);
    }

    fn buttons_down(&mut self) -> Option<ButtonSet> {
        sys::key_state(self.source)
            .ok()
            .map(|keys| caps::buttons_down(&keys))
    }
}

/// The running daemon.
pub struct Daemon {
    config: Config,
    class_dir: PathBuf,
    epoll: OwnedFd,
    signals: OwnedFd,
    timer: OwnedFd,
    armed: Option<Micros>,
    devices: Vec<Option<Box<Device>>>,
    /// Set when a device was added or removed since the caller was last told.
    devices_changed: bool,
    performer: Performer,
    /// HID++ endpoints (the MX Master's gesture button, diverted).
    hidpp: Vec<Option<HidppDevice>>,
}

impl crate::hidpp::Perform for Performer {
    fn perform(&mut self, action: Action) {
        Performer::perform(self, action);
    }
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field(
                "devices",
                &self
                    .devices
                    .iter()
                    .flatten()
                    .map(|d| &d.path)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
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

impl Daemon {
    /// Sets up signals, epoll, the timer and the action performer (the virtual keyboard),
    /// then grabs every device `config` handles among the nodes under `class_dir`
    /// (normally `/sys/class/input`).
    ///
    /// Errors: `/dev/uinput` cannot be used, or the kernel refuses an epoll/signalfd/timerfd.
    /// A device that cannot be opened or grabbed is logged and skipped.
    pub fn start(
        config: Config,
        performer_plan: crate::actions::ActionPlan,
        class_dir: &Path,
    ) -> Result<Daemon, Error> {
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
            epoll::add(
                &epoll,
                fd,
                epoll::EventData::new_u64(token),
                epoll::EventFlags::IN,
            )
            .map_err(|e| Error::io("epoll", "add to", e.into()))?;
        }
        let performer = Performer::new(performer_plan)?;
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
            class_dir: class_dir.to_owned(),
            epoll,
            signals,
            timer,
            armed: None,
            devices: Vec::new(),
            devices_changed: false,
            performer,
            hidpp: Vec::new(),
        };
        // HID++ first: an MX Master whose gesture button is diverted needs no grab of its
        // pointer node unless scroll or a mapped button needs one.
        daemon.open_hidpp(Path::new(crate::hidpp::SYS_CLASS_HIDRAW));
        let nodes = sysfs::event_nodes(class_dir).map_err(|e| Error::io(class_dir, "list", e))?;
        for node in nodes {
            daemon.consider(&node);
        }
        // The caller reads the initial set with `devices()`; report changes from here on.
        daemon.devices_changed = false;
        if daemon.devices.iter().flatten().next().is_none() {
            log::warn!(
                "no device to handle (see `pawl devices`; the scroll scope is {:?})",
                daemon.config.scope
            );
        }
        Ok(daemon)
    }

    /// The grabbed devices, in slot order.
    pub fn devices(&self) -> Vec<DeviceSummary> {
        self.devices
            .iter()
            .flatten()
            .map(|d| DeviceSummary {
                path: d.path.clone(),
                name: d.name.clone(),
                vendor: d.vendor,
                product: d.product,
                clone: d.clone.node().map(Path::to_owned),
            })
            .collect()
    }

    /// Looks at one `eventN` node: never opens it unless sysfs shows a pointer that the
    /// config handles; then opens, grabs and clones it.
    pub fn consider(&mut self, node: &str) {
        let sys = match sysfs::read_device(&self.class_dir, node) {
            Ok(d) => d,
            Err(e) => {
                log::debug!("{node}: cannot read its sysfs description: {e}");
                return;
            }
        };
        if sys.is_pawl_device() {
            log::debug!(
                "{node}: pawl's own virtual device {:?}, not opened",
                sys.name
            );
            return;
        }
        if sys.kind() == Kind::Other {
            log::debug!("{node}: {:?} is not a pointer, not opened", sys.name);
            return;
        }
        let path = sys.dev_path();
        if self.devices.iter().flatten().any(|d| d.path == path) {
            return;
        }
        let decision = self.config.decide(&sys.info());
        let label = describe(&sys);
        if !decision.handle {
            log::info!("not handling {label} ({})", decision.reason);
            return;
        }
        if !decision.transform_scroll
            && !crate::hidpp::buttons_need_grab(&self.config)
            && self.hidpp_covers(&self.class_dir.join(node))
        {
            log::info!(
                "not grabbing {label}: its gesture button comes through HID++ and nothing else \
                 needs the grab (scroll not transformed, no mapped button)"
            );
            return;
        }
        match self.open(&sys, &decision) {
            Ok(device) => {
                log::info!(
                    "grabbed {label} ({}; scroll {}) -> clone {}",
                    decision.reason,
                    if decision.transform_scroll {
                        "transformed"
                    } else {
                        "passed through"
                    },
                    device
                        .clone
                        .node()
                        .map_or("?".into(), |p| p.display().to_string())
                );
                self.insert(device);
            }
            Err(e) if e.kind() == ErrorKind::Busy => {
                log::warn!("not handling {label}: {e}");
            }
            Err(e) => log::error!("not handling {label}: {e}"),
        }
    }

    fn open(&self, sys: &SysDevice, decision: &DeviceDecision) -> Result<Box<Device>, Error> {
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
        sys::grab(fd.as_fd(), true).map_err(|e| Error::io(&path, "grab", e))?;
        let clone = VirtualDevice::create(&uinput::clone_spec(sys, &caps, &abs))?;
        let engine =
            DeviceEngine::with_profile(&self.config, decision.transform_scroll, decision.scroll);
        let label = path.display().to_string();
        Ok(Box::new(Device {
            pipeline: Pipeline::new(&caps, engine, &label),
            path,
            name: sys.name.clone(),
            vendor: sys.vendor,
            product: sys.product,
            fd,
            clone,
            read: ReadBuf::default(),
            deadline: None,
        }))
    }

    fn insert(&mut self, device: Box<Device>) {
        let slot = match self.devices.iter().position(Option::is_none) {
            Some(s) => s,
            None => {
                self.devices.push(None);
                self.devices.len() - 1
            }
        };
        let token = DEVICE_TOKEN_BASE + slot as u64;
        if let Err(e) = epoll::add(
            &self.epoll,
            &device.fd,
            epoll::EventData::new_u64(token),
            epoll::EventFlags::IN,
        ) {
            log::error!("{}: cannot watch it: {e}", device.path.display());
            return;
        }
        self.devices[slot] = Some(device);
        self.devices_changed = true;
    }

    /// Releases everything the device's clone has pressed, ungrabs it and destroys the
    /// clone.
    fn remove(&mut self, slot: usize, why: &str) {
        let Some(mut device) = self.devices.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let _ = epoll::delete(&self.epoll, &device.fd);
        let Device {
            fd,
            clone,
            pipeline,
            ..
        } = &mut *device;
        pipeline.cancel(&mut IoSink {
            clone,
            source: fd.as_fd(),
            performer: &mut self.performer,
        });
        log::info!(
            "released {} \"{}\" ({why})",
            device.path.display(),
            device.name
        );
        drop(device);
        self.devices_changed = true;
        self.rearm();
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
                match Wake::from_token(event.data.u64()) {
                    Some(Wake::Signal) => {
                        if let Some(exit) = self.on_signal() {
                            self.shutdown();
                            return Ok(exit);
                        }
                    }
                    Some(Wake::Timer) => self.on_timer(),
                    Some(Wake::Device(slot)) => self.on_device(slot),
                    Some(Wake::Hidpp(slot)) => self.on_hidpp(slot),
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
        let Some(device) = devices.get_mut(slot).and_then(|d| d.as_deref_mut()) else {
            return;
        };
        let Device {
            fd,
            clone,
            read,
            pipeline,
            deadline,
            ..
        } = device;
        match rustix::io::read(&*fd, read.spare()) {
            Ok(n) => {
                read.filled_by_read(n);
                let mut sink = IoSink {
                    clone,
                    source: fd.as_fd(),
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
            Err(Errno::NODEV) => self.remove(slot, "device gone"),
            Err(e) => {
                log::error!("cannot read {}: {e}", device.path.display());
                self.remove(slot, "read error");
            }
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
        for device in devices.iter_mut().flatten() {
            if device.deadline.is_some_and(|d| d <= now) {
                let Device {
                    fd,
                    clone,
                    pipeline,
                    deadline,
                    ..
                } = &mut **device;
                pipeline.tick(
                    now,
                    &mut IoSink {
                        clone,
                        source: fd.as_fd(),
                        performer,
                    },
                );
                *deadline = pipeline.next_deadline();
            }
        }
        self.rearm();
    }

    /// Arms the timer for the earliest device deadline, or disarms it.
    fn rearm(&mut self) {
        let next = self
            .devices
            .iter()
            .flatten()
            .filter_map(|d| d.deadline)
            .chain(
                self.hidpp
                    .iter()
                    .flatten()
                    .filter_map(HidppDevice::deadline),
            )
            .min();
        if next == self.armed {
            return;
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
                    log::info!(
                        "{}: releasing everything",
                        if s == libc::SIGTERM {
                            "SIGTERM"
                        } else {
                            "SIGINT"
                        }
                    );
                    exit = Some(Exit::Signal(s));
                }
                libc::SIGCHLD => reap_children(),
                libc::SIGHUP => log::warn!(
                    "SIGHUP: config reload is not supported yet; restart pawl to apply a new config"
                ),
                _ => {}
            }
        }
        exit
    }

    /// Releases everything pressed on every virtual device, ungrabs every device and
    /// destroys the clones.
    fn shutdown(&mut self) {
        for dev in self.hidpp.iter_mut().flatten() {
            dev.shutdown();
        }
        for slot in 0..self.devices.len() {
            self.remove(slot, "exit");
        }
        self.performer.release_all();
    }
}

impl Daemon {
    /// Opens every MX Master HID++ endpoint under `class_dir` and starts its session.
    fn open_hidpp(&mut self, class_dir: &Path) {
        if !self.config.hidpp.enabled {
            log::info!("HID++ off ([hidpp] enabled = false): the gesture button is left alone");
            return;
        }
        let now = monotonic_now();
        for node in crate::hidpp::scan(class_dir) {
            let label = format!("{} \"{}\"", node.dev_path().display(), node.name);
            match HidppDevice::open(node, &self.config, now) {
                Ok(dev) => {
                    let token = HIDPP_TOKEN_BASE + self.hidpp.len() as u64;
                    if let Err(e) = epoll::add(
                        &self.epoll,
                        dev.fd(),
                        epoll::EventData::new_u64(token),
                        epoll::EventFlags::IN,
                    ) {
                        log::error!("{label}: cannot watch it: {e}");
                        continue;
                    }
                    log::info!("HID++ endpoint {label}: setting up");
                    self.hidpp.push(Some(dev));
                }
                Err(e) => log::error!("HID++ endpoint {label}: {e}"),
            }
        }
        self.rearm();
    }

    /// Whether the evdev node at `sys_node` (`/sys/class/input/eventN`) belongs to a HID
    /// device whose HID++ endpoint pawl has open.
    fn hidpp_covers(&self, sys_node: &Path) -> bool {
        let Ok(hid_dir) = std::fs::canonicalize(sys_node.join("device/device")) else {
            return false;
        };
        self.hidpp
            .iter()
            .flatten()
            .any(|d| d.node().hid_dir == hid_dir)
    }

    /// One report from a HID++ endpoint.
    #[inline]
    fn on_hidpp(&mut self, slot: usize) {
        let Daemon {
            hidpp, performer, ..
        } = self;
        let Some(dev) = hidpp.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        let before = dev.deadline();
        match dev.on_readable(monotonic_now(), performer) {
            Ok(()) => {
                if dev.deadline() != before {
                    self.rearm();
                }
            }
            Err(e) => {
                log::info!(
                    "HID++ endpoint {} gone ({e})",
                    dev.node().dev_path().display()
                );
                let _ = epoll::delete(&self.epoll, dev.fd());
                hidpp[slot] = None;
                self.rearm();
            }
        }
    }
}

/// Reaps every exited child (commands started by actions), so none stays a zombie.
pub fn reap_children() {
    use rustix::process::{WaitOptions, waitpid};
    while let Ok(Some((pid, status))) = waitpid(None, WaitOptions::NOHANG) {
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
        assert_eq!(
            Wake::from_token(DEVICE_TOKEN_BASE + 3),
            Some(Wake::Device(3))
        );
        assert_eq!(Wake::from_token(5), None);
    }
}
