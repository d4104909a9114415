//! The daemon: one thread, one epoll set with no timeout. Every wake-up is one of
//! [`Wake`]: a signal (signalfd), the glide timer (timerfd, armed only while an engine has
//! a deadline), a hotplug event (inotify on `/dev/input`, and on `/dev` for `hidrawN`
//! nodes while HID++ is on), a readable pointer node, or a readable HID++ endpoint.
//! Nothing wakes pawl while nothing happens.
//!
//! A handled mouse is one record (`mouse.rs`): its evdev pointer node(s) and its HID++
//! endpoint. Which path carries each part of it — the grab (`grab.rs`: the node grabbed and
//! cloned), HID++ (`hidpp_path.rs`: controls diverted over hidraw), or neither — is decided
//! in one place, [`paths::decide`], and applied by `Daemon::apply_paths` whenever one of
//! its inputs changes (a node taken or released, an endpoint opened, the config reloaded).
//! Modules: this one is the loop (wake-ups, signals, reload, the timer, shutdown);
//! `mouse.rs` the record, the table of records, applying a record's decision and its
//! report; `slot.rs` a pointer node's state in the record, `bpf.rs` the kernel program's;
//! `paths.rs` the decision (pure); `grab.rs` and `hidpp_path.rs` one path each;
//! `hotplug.rs` the inotify watches. Each path imports the record, never the reverse.
//!
//! Kernel mode (a HID-BPF program on the mouse's HID device, `kernel_path.rs`) joined
//! this way: its state is `mouse::Mouse::bpf` (`bpf.rs`) beside `nodes` and `hidraw`, what
//! the kernel and the loader offer is in [`paths::KernelOffers`] and [`paths::Attachment`],
//! its rules and [`paths::Carrier::Bpf`] are in [`paths::decide`], and its wake-ups are
//! `Wake::Ring` (the ringbuf's map fd) and `Wake::Pins` (inotify for the loader's
//! announcements); `apply_paths` releases the grab of what it carries.

mod bpf;
mod grab;
mod hidpp_path;
mod hotplug;
mod kernel_path;
mod mouse;
pub mod paths;
mod slot;

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use pawl_engine::units::Micros;
use pawl_engine::{Action, Config, Desktop, TouchOut};
use rustix::event::epoll;
use rustix::io::Errno;
use rustix::time::{Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec};

use crate::actions::{ActionPlan, Performer};
use crate::error::{Error, ErrorKind};
use crate::hidpp;
use crate::sys::{self, UinputSpec};
use crate::sysfs::{self, SysDevice};
use crate::uinput::{self, VirtualDevice};
use hotplug::{drain_hotplug, watch_hotplug};
use mouse::Mouse;
pub use mouse::{MouseSummary, NodeState, NodeSummary, PathLine, predict};
use paths::KernelOffers;
use slot::{Device, Slot};

const SIGNAL_TOKEN: u64 = 0;
const TIMER_TOKEN: u64 = 1;
const HOTPLUG_TOKEN: u64 = 2;
/// inotify on `/dev` for `hidrawN` nodes (only while HID++ is on).
const HIDRAW_HOTPLUG_TOKEN: u64 = 3;
/// inotify on `/run/pawl` (or `/run`) for the kernel-mode loader's announcements.
const PINS_TOKEN: u64 = 4;
/// The focus backend's fd (Hyprland's socket2, sway's IPC, the X server, or the session-bus
/// backend's eventfd).
const FOCUS_TOKEN: u64 = 5;
/// Tokens of pointer nodes: `DEVICE_TOKEN_BASE + (mouse << NODE_BITS) + node`.
const DEVICE_TOKEN_BASE: u64 = 16;
/// Tokens of HID++ endpoints: `HIDPP_TOKEN_BASE + mouse`.
const HIDPP_TOKEN_BASE: u64 = 1 << 32;
/// Tokens of kernel-mode rings: `RING_TOKEN_BASE + mouse`.
const RING_TOKEN_BASE: u64 = 1 << 33;

/// The reason given when a device vanished (its clone is kept for its return).
const GONE: &str = "device gone";

/// Everything that wakes the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wake {
    Signal,
    Timer,
    Hotplug,
    HidrawHotplug,
    /// Pointer node `.1` of mouse `.0`.
    Device(usize, usize),
    /// The HID++ endpoint of mouse `.0`.
    Hidpp(usize),
    /// The kernel-mode loader announced an attachment.
    Pins,
    /// The kernel-mode ring of mouse `.0`.
    Ring(usize),
    /// The focus backend has news.
    Focus,
}

impl Wake {
    fn from_token(token: u64) -> Option<Wake> {
        match token {
            SIGNAL_TOKEN => Some(Wake::Signal),
            TIMER_TOKEN => Some(Wake::Timer),
            HOTPLUG_TOKEN => Some(Wake::Hotplug),
            HIDRAW_HOTPLUG_TOKEN => Some(Wake::HidrawHotplug),
            PINS_TOKEN => Some(Wake::Pins),
            FOCUS_TOKEN => Some(Wake::Focus),
            t if t >= RING_TOKEN_BASE => Some(Wake::Ring((t - RING_TOKEN_BASE) as usize)),
            t if t >= HIDPP_TOKEN_BASE => Some(Wake::Hidpp((t - HIDPP_TOKEN_BASE) as usize)),
            t if t >= DEVICE_TOKEN_BASE => {
                let i = t - DEVICE_TOKEN_BASE;
                Some(Wake::Device(
                    (i >> mouse::NODE_BITS) as usize,
                    (i & (mouse::MAX_NODES as u64 - 1)) as usize,
                ))
            }
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

/// What [`Daemon::run`] calls when devices, mice or the focus changed.
pub type Changed<'a> = dyn FnMut(&[DeviceSummary], &[MouseSummary], &FocusSummary) + 'a;

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
    /// One record per handled mouse (its pointer nodes, its HID++ endpoint); a record's
    /// index is stable while it exists (it is in its epoll tokens).
    mice: Vec<Option<Mouse>>,
    notes: HashMap<String, Note>,
    /// Set when a device was added or removed since the caller was last told.
    devices_changed: bool,
    performer: Performer,
    reload: Option<Reload>,
    /// Clones of devices that vanished, kept (everything released) for their return: a
    /// Bluetooth reconnect or resume gets the same virtual device back, and whoever reads
    /// the clone sees the releases instead of a vanished device.
    orphans: Vec<(UinputSpec, VirtualDevice)>,
    /// inotify on `/dev` for `hidrawN` nodes, while HID++ is on.
    hidraw_hotplug: Option<OwnedFd>,
    /// What the running kernel offers the path decision (read at start and on reload).
    kernel: KernelOffers,
    /// inotify for the kernel-mode loader's announcements, and whether it is on
    /// `/run/pawl` itself (else on `/run`, until `/run/pawl` exists).
    pins_watch: Option<(OwnedFd, bool)>,
    /// The focus backend and what it said last.
    focus: FocusState,
}

/// The focus backend, for `[[app]]` profiles, and what it reported last.
#[derive(Debug, Default)]
struct FocusState {
    /// The connection, while it is open.
    conn: Option<FocusConn>,
    /// What `pawl status` names: `hyprland`, `sway`, `x11 (DISPLAY=:0)`, `gnome
    /// (extension)`, `kde (kwin script)`, `wayland (zwlr_foreign_toplevel_manager_v1)`,
    /// `cosmic (zcosmic_toplevel_info_v1)`, any with
    /// `closed: device profiles` once it is gone, or why there is none.
    backend: String,
    /// The focused application, when known.
    app: Option<String>,
    /// Its window's title, when the backend gives titles and a table has a `title`.
    title: Option<String>,
    /// The profile key of `app` and `title` ([`pawl_engine::Config::app_key`]), as of the
    /// last [`Daemon::apply_focus`]: what kernel mode's settings are written for.
    key: Option<pawl_engine::config::AppKey>,
}

/// An open focus backend.
#[derive(Debug)]
enum FocusConn {
    Hyprland(crate::focus::hyprland::Hyprland),
    Sway(crate::focus::sway::Sway),
    X11(crate::focus::x11::X11),
    /// GNOME Shell's extension or KWin's script, over the session bus.
    Dbus(crate::focus::shell::Shell),
    /// Another Wayland compositor's toplevel list.
    Toplevels(crate::focus::toplevel::Toplevels),
}

impl FocusConn {
    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            FocusConn::Hyprland(h) => h.fd(),
            FocusConn::Sway(s) => s.fd(),
            FocusConn::X11(x) => x.fd(),
            FocusConn::Dbus(d) => d.fd(),
            FocusConn::Toplevels(t) => t.fd(),
        }
    }

    fn read(&mut self) -> crate::focus::Readout {
        match self {
            FocusConn::Hyprland(h) => h.read(),
            FocusConn::Sway(s) => s.read(),
            FocusConn::X11(x) => x.read(),
            FocusConn::Dbus(d) => d.read(),
            FocusConn::Toplevels(t) => t.read(),
        }
    }
}

/// What `pawl status` adds to the GNOME and KDE backends' names until the shell side first
/// calls pawl (`gnome (extension; no call yet)`): the extension is not installed or not
/// enabled, or the KWin script did not run.
const NO_CALL_YET: &str = "; no call yet)";

/// The focus part of `pawl status`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FocusSummary {
    /// The backend: `hyprland`, `sway`, `x11 (DISPLAY=:0)`, `gnome (extension)`, `kde (kwin
    /// script)` (either with `; no call yet` before the shell side first calls), `wayland
    /// (zwlr_foreign_toplevel_manager_v1)`, `cosmic (zcosmic_toplevel_info_v1)`, `sway
    /// (closed: device profiles)`, or why there is none (`none: no [[app]] table`, `none: neither
    /// HYPRLAND_INSTANCE_SIGNATURE, SWAYSOCK, WAYLAND_DISPLAY nor DISPLAY is set`).
    pub backend: String,
    /// The focused application, when known.
    pub app: Option<String>,
    /// The profile in force: `device` or `app APP ([[app]] …)`.
    pub profile: String,
}

impl hidpp::Perform for Performer {
    fn perform(&mut self, action: Action) {
        Performer::perform(self, action);
    }

    fn touch(&mut self, touch: &TouchOut) -> Micros {
        Performer::touch(self, touch);
        monotonic_now()
    }
}

/// The most orphaned clones kept; the oldest is destroyed beyond this.
const MAX_ORPHANS: usize = 8;

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field("mice", &self.mice.iter().flatten().collect::<Vec<_>>())
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
        performer.set_touchpad(config.uses_swipe())?;
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
            mice: Vec::new(),
            notes: HashMap::new(),
            devices_changed: false,
            performer,
            reload: None,
            orphans: Vec::new(),
            hidraw_hotplug: None,
            kernel: kernel_offers(),
            pins_watch: None,
            focus: FocusState::default(),
        };
        daemon.start_focus();
        // Before any mouse: an attachment announced from here on is seen.
        daemon.watch_pins();
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

    /// The grabbed devices, in mouse order (devices still waiting for a button release are
    /// not listed).
    pub fn devices(&self) -> Vec<DeviceSummary> {
        self.mice
            .iter()
            .flatten()
            .flat_map(|m| &m.nodes)
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

    /// Runs until SIGTERM or SIGINT, then releases everything and returns.
    /// `devices_changed` is called with [`Daemon::devices`], [`Daemon::mice`] and
    /// [`Daemon::focus`] whenever a device is added or removed, a mouse's paths change or
    /// the focused application changes (not on the hot path).
    ///
    /// Errors: `epoll_wait` fails (not on `EINTR`).
    pub fn run(mut self, devices_changed: &mut Changed<'_>) -> Result<Exit, Error> {
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
                    Some(Wake::Device(m, n)) => {
                        if flags.intersects(epoll::EventFlags::HUP | epoll::EventFlags::ERR) {
                            // Gone: what is still queued are the releases the kernel
                            // synthesizes on unplug; feeding them to the engine would
                            // turn a held gesture button into a click.
                            self.remove_node(m, n, GONE);
                        } else {
                            self.on_device(m, n);
                        }
                    }
                    Some(Wake::Signal) => {
                        if let Some(exit) = self.on_signal() {
                            self.shutdown();
                            return Ok(exit);
                        }
                    }
                    Some(Wake::Hidpp(m)) => self.on_hidpp(m),
                    Some(Wake::Ring(m)) => self.on_ring(m),
                    Some(Wake::Pins) => self.on_pins(),
                    Some(Wake::Focus) => self.on_focus(),
                    Some(Wake::Timer) => self.on_timer(),
                    Some(Wake::Hotplug) => self.on_hotplug(),
                    Some(Wake::HidrawHotplug) => self.on_hidraw_hotplug(),
                    None => {}
                }
            }
            if std::mem::take(&mut self.devices_changed) {
                // A device that came (or an engine made again) runs the focused app's
                // profile too.
                self.apply_focus();
                devices_changed(&self.devices(), &self.mice(), &self.focus());
            }
        }
    }

    /// Connects the focus backend when `[[app]]` tables need one and none is open, the one
    /// [`crate::focus::choose`] picks: Hyprland's event socket when
    /// `HYPRLAND_INSTANCE_SIGNATURE` is set, else sway's IPC when `SWAYSOCK` is set, else
    /// the session bus in a GNOME or KDE Wayland session, else the toplevel list of any other
    /// Wayland compositor, else the X server of `DISPLAY` in an X11 session. Without one
    /// every device runs its device profile.
    fn start_focus(&mut self) {
        use crate::focus::Choice;
        if self.focus.conn.is_some() {
            return;
        }
        if self.config.apps.is_empty() {
            self.focus.backend = "none: no [[app]] table".into();
            return;
        }
        let env = |k: &str| std::env::var_os(k);
        let (hypr, runtime_dir) = (env("HYPRLAND_INSTANCE_SIGNATURE"), env("XDG_RUNTIME_DIR"));
        let (swaysock, display, wayland) =
            (env("SWAYSOCK"), env("DISPLAY"), env("WAYLAND_DISPLAY"));
        let (desktop, bus) = (env("XDG_CURRENT_DESKTOP"), env("DBUS_SESSION_BUS_ADDRESS"));
        let choice = crate::focus::choose(crate::focus::Env {
            hyprland_instance_signature: hypr.as_deref(),
            xdg_runtime_dir: runtime_dir.as_deref(),
            swaysock: swaysock.as_deref(),
            display: display.as_deref(),
            wayland_display: wayland.as_deref(),
            xdg_current_desktop: desktop.as_deref(),
            dbus_session_bus_address: bus.as_deref(),
        });
        let (conn, name) = match choice {
            Choice::None(why) => {
                self.focus.backend = why.into();
                log::info!("[[app]] tables: no focus backend ({why}): device profiles in force");
                return;
            }
            Choice::Hyprland(paths) => match crate::focus::hyprland::Hyprland::connect(&paths) {
                Ok((h, path)) => {
                    log::info!("focus: Hyprland's event socket at {}", path.display());
                    (FocusConn::Hyprland(h), "hyprland".to_owned())
                }
                Err(e) => {
                    self.focus.backend = format!("none: hyprland socket2: {e}");
                    log::warn!(
                        "focus: cannot connect to Hyprland's event socket ({e}): device profiles in force"
                    );
                    return;
                }
            },
            Choice::Sway(sock) => {
                let path = Path::new(&sock);
                match crate::focus::sway::Sway::connect(path) {
                    Ok(sway) => {
                        log::info!("focus: sway IPC at {}", path.display());
                        (FocusConn::Sway(sway), "sway".to_owned())
                    }
                    Err(e) => {
                        self.focus.backend = format!("none: sway IPC: {e}");
                        log::warn!(
                            "focus: cannot connect to sway's IPC at {} ({e}): device profiles in force",
                            path.display()
                        );
                        return;
                    }
                }
            }
            Choice::Toplevels(path) => match crate::focus::toplevel::Toplevels::connect(
                &path,
                crate::focus::toplevel::CONNECT_TIMEOUT,
            ) {
                Ok(t) => {
                    let name = t.protocol().name();
                    log::info!("focus: {name} at {}", path.display());
                    (FocusConn::Toplevels(t), name.to_owned())
                }
                Err(e) => {
                    self.focus.backend = format!("none: wayland ({}): {e}", path.display());
                    log::warn!(
                        "focus: no toplevel list from the Wayland compositor at {} ({e}): device profiles in force",
                        path.display()
                    );
                    return;
                }
            },
            Choice::X11(display) => {
                match crate::focus::x11::X11::connect(&display, self.config.uses_titles()) {
                    Ok(x) => {
                        log::info!("focus: X11 active window on DISPLAY={display}");
                        (FocusConn::X11(x), format!("x11 (DISPLAY={display})"))
                    }
                    Err(e) => {
                        self.focus.backend = format!("none: x11 (DISPLAY={display}): {e}");
                        log::warn!(
                            "focus: cannot connect to the X server of DISPLAY={display} ({e}): device profiles in force"
                        );
                        return;
                    }
                }
            }
            Choice::Gnome | Choice::Kde => {
                use crate::focus::shell::{BUS_NAME, Desktop, Shell};
                let (desktop, name, pusher) = if choice == Choice::Gnome {
                    (
                        Desktop::Gnome,
                        "gnome (extension)",
                        "pawl's GNOME Shell extension",
                    )
                } else {
                    (Desktop::Kde, "kde (kwin script)", "pawl's KWin script")
                };
                // The KWin script's file goes beside the worker's lock, in the runtime
                // directory the CLI checked (`lifecycle::runtime_dir_for`: a relative
                // XDG_RUNTIME_DIR counts as unset, and then it is `/tmp/pawl-<uid>`).
                let scripts = runtime_dir
                    .as_deref()
                    .filter(|d| Path::new(d).is_absolute())
                    .map(|d| Path::new(d).join("pawl"))
                    .unwrap_or_else(|| {
                        format!("/tmp/pawl-{}", rustix::process::getuid().as_raw()).into()
                    });
                match Shell::connect(desktop, None, &scripts) {
                    Ok(shell) => {
                        log::info!("focus: serving {BUS_NAME} on the session bus for {pusher}");
                        // Until the shell side calls, `pawl status` says it has not yet.
                        (FocusConn::Dbus(shell), name.replace(')', NO_CALL_YET))
                    }
                    Err(e) => {
                        self.focus.backend = format!("none: {name}: {e}");
                        log::warn!(
                            "focus: cannot serve {BUS_NAME} on the session bus ({e}): device profiles in force"
                        );
                        return;
                    }
                }
            }
        };
        let data = epoll::EventData::new_u64(FOCUS_TOKEN);
        if let Err(e) = epoll::add(&self.epoll, conn.fd(), data, epoll::EventFlags::IN) {
            self.focus.backend = format!("none: {name}: epoll: {e}");
            log::warn!("focus: cannot watch the {name} socket ({e}): device profiles in force");
            return;
        }
        // sway's tree and the toplevel list give the focus at connect: it counts as the
        // first report, so a window focused before pawl started (or before a reload added
        // the first table) has its profile at once.
        let initial = match &conn {
            FocusConn::Toplevels(t) => Some(t.initial()),
            FocusConn::Sway(s) => Some(s.initial()),
            _ => None,
        };
        self.focus.conn = Some(conn);
        self.focus.backend = name;
        if let Some(event @ crate::focus::FocusEvent::App { .. }) = initial
            && self.record_focus(event)
        {
            self.apply_focus();
            self.devices_changed = true;
        }
    }

    /// Records what a backend reported as the focus; `false` when nothing changed. Without a
    /// `title` table, a title change of the same app changes nothing.
    fn record_focus(&mut self, event: crate::focus::FocusEvent) -> bool {
        use crate::focus::FocusEvent;
        match event {
            FocusEvent::App { id, title } => {
                let title = title.filter(|_| self.config.uses_titles());
                if self.focus.app.as_deref() == Some(id.as_str()) && self.focus.title == title {
                    return false;
                }
                log::debug!("focus: {id} {title:?}");
                self.focus.app = Some(id);
                self.focus.title = title;
            }
            FocusEvent::Unknown => {
                self.focus.app = None;
                self.focus.title = None;
            }
        }
        true
    }

    /// The focus backend's socket is readable: a focus change, or the backend is gone (one
    /// log line, device profiles from then on, the socket out of the epoll set).
    fn on_focus(&mut self) {
        use crate::focus::Readout;
        let Some(conn) = self.focus.conn.as_mut() else {
            return;
        };
        // What `pawl status` shows of the focus, to rewrite the status file only when it
        // changes (a title change that keeps the profile does not).
        let shown = (
            self.focus.key,
            self.focus.app.clone(),
            self.focus.backend.clone(),
        );
        let read = conn.read();
        if matches!(read, Readout::Focus(Some(_))) && self.focus.backend.contains(NO_CALL_YET) {
            self.focus.backend = self.focus.backend.replace(NO_CALL_YET, ")");
        }
        match read {
            Readout::Focus(None) => return,
            Readout::Focus(Some(event)) => {
                if !self.record_focus(event) {
                    return;
                }
            }
            Readout::Closed => {
                let what = match self.focus.conn.take() {
                    Some(conn) => {
                        let _ = epoll::delete(&self.epoll, conn.fd());
                        match conn {
                            FocusConn::Hyprland(_) => "Hyprland's event socket",
                            FocusConn::Sway(_) => "sway's IPC socket",
                            FocusConn::X11(_) => "the X server connection",
                            FocusConn::Dbus(_) => "the desktop shell on the session bus",
                            FocusConn::Toplevels(_) => "the Wayland compositor's connection",
                        }
                    }
                    None => "the focus backend",
                };
                log::warn!("focus: {what} closed: device profiles in force from now on");
                self.focus.backend = match self.focus.backend.strip_suffix(')') {
                    // `x11 (DISPLAY=:0)` → `x11 (DISPLAY=:0, closed: device profiles)`.
                    Some(open) => format!("{open}, closed: device profiles)"),
                    None => format!("{} (closed: device profiles)", self.focus.backend),
                };
                self.focus.app = None;
                self.focus.title = None;
            }
        }
        self.apply_focus();
        if (self.focus.key, &self.focus.app, &self.focus.backend) != (shown.0, &shown.1, &shown.2) {
            self.devices_changed = true;
        }
    }

    /// Gives every engine the focused application's profile (the device profile when no
    /// `[[app]]` table names it), and every mouse in kernel mode its program's settings
    /// for it (written only when they change). One lookup per call, not per frame.
    fn apply_focus(&mut self) {
        let key = self.focused_key();
        self.focus.key = key;
        for m in 0..self.mice.len() {
            self.sync_kernel(m);
        }
        for mouse in self.mice.iter_mut().flatten() {
            if let Some(dev) = mouse.endpoint_mut() {
                dev.set_app(key);
            }
            for slot in mouse.nodes.iter_mut() {
                if let Slot::Active(device) = slot {
                    device.pipeline.engine_mut().set_app(key);
                }
            }
        }
    }

    /// The profile key of the focused app and its title under the config in force
    /// ([`pawl_engine::Config::app_key`]); `None` when no `[[app]]` table names it.
    fn focused_key(&self) -> Option<pawl_engine::config::AppKey> {
        self.focus
            .app
            .as_deref()
            .and_then(|a| self.config.app_key(a, self.focus.title.as_deref()))
    }

    /// The focus backend, the focused application and the profile in force.
    pub fn focus(&self) -> FocusSummary {
        let key = self.focused_key();
        let profile = self.config.profile_text(key);
        FocusSummary {
            backend: self.focus.backend.clone(),
            app: self.focus.app.clone(),
            profile,
        }
    }

    fn on_timer(&mut self) {
        let mut expirations = [0u8; 8];
        let _ = rustix::io::read(&self.timer, &mut expirations);
        self.armed = None;
        let now = monotonic_now();
        let Daemon {
            mice, performer, ..
        } = self;
        let mut sync = Vec::new();
        for (mouse_index, mouse) in mice.iter_mut().enumerate() {
            let Some(mouse) = mouse else { continue };
            if let Some(dev) = mouse.endpoint_mut()
                && dev.deadline().is_some_and(|d| d <= now)
            {
                dev.on_timer(now, performer);
                if dev.reopened() || !dev.needs_hidraw() {
                    sync.push(mouse_index);
                }
            }
            for slot in mouse.nodes.iter_mut() {
                let Slot::Active(device) = slot else { continue };
                if device.deadline.is_some_and(|d| d <= now) {
                    let Device {
                        source,
                        clone,
                        pipeline,
                        deadline,
                        ..
                    } = &mut **device;
                    pipeline.tick(now, &mut Device::sink(source, clone, performer));
                    *deadline = pipeline.next_deadline();
                }
            }
        }
        for m in sync {
            self.sync_kernel(m);
        }
        self.rearm();
    }

    /// Arms the timer for the earliest deadline (a device's glide, a HID++ reply awaited),
    /// or disarms it.
    fn rearm(&mut self) {
        let next = self
            .mice
            .iter()
            .flatten()
            .flat_map(|m| {
                m.nodes
                    .iter()
                    .filter_map(|s| match s {
                        Slot::Active(d) => d.deadline,
                        _ => None,
                    })
                    .chain(m.endpoint().and_then(crate::hidpp::HidppDevice::deadline))
            })
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
        if let Err(e) = self.performer.set_touchpad(config.uses_swipe()) {
            log::error!("SIGHUP: {e}; swipe style has no virtual touchpad");
        }
        let old = std::mem::replace(&mut self.config, config);
        // Kernel mode's settings are written below for the focused app's key in the new
        // config: an old key may name another app there.
        self.focus.key = self.focused_key();
        self.notes.clear();
        self.kernel = kernel_offers();
        self.watch_pins();
        // HID++ first, as at startup: whether a pointer node needs its grab depends on it.
        self.reload_hidpp(&old);
        // A mouse leaving kernel mode has its program made pass-through before `rematch`
        // grabs its node again: events read from the grab are never transformed twice.
        self.leave_kernel_mode_where_the_config_says_so();
        for m in 0..self.mice.len() {
            let nodes = self.mice[m].as_ref().map_or(0, |mouse| mouse.nodes.len());
            for n in 0..nodes {
                self.rematch(m, n);
            }
        }
        self.rescan(Trigger::Reload);
        // The X server's title watch is chosen at connect: a reload that adds the first
        // `title` table, or removes the last, connects again.
        if let Some(FocusConn::X11(x)) = &self.focus.conn
            && x.follows_titles() != self.config.uses_titles()
            && let Some(conn) = self.focus.conn.take()
        {
            let _ = epoll::delete(&self.epoll, conn.fd());
            log::info!("focus: reconnecting to the X server: title tables changed");
            // The new connection's first read says the focus; until then, none is known.
            self.focus.app = None;
            self.focus.title = None;
        }
        // `[[app]]` tables may have come: a backend is connected for them (one that is
        // open stays open); the engines made again get the focused app's profile.
        self.start_focus();
        self.apply_focus();
        self.devices_changed = true;
        // The new config may switch the thumb wheel off, or a node's scroll transform.
        for m in 0..self.mice.len() {
            self.apply_paths(m);
        }
        self.devices_changed = true;
        log::info!("SIGHUP: config reloaded");
    }

    /// Undoes every HID++ diversion, releases everything pressed on every virtual device,
    /// ungrabs every device and destroys the clones.
    fn shutdown(&mut self) {
        for mouse in self.mice.iter_mut().flatten() {
            if let Some(dev) = mouse.endpoint_mut() {
                dev.shutdown();
            }
        }
        // The wheel back to the driver's own: `pawl off` means pawl changes nothing.
        self.shutdown_kernel();
        for m in 0..self.mice.len() {
            let nodes = self.mice[m].as_ref().map_or(0, |mouse| mouse.nodes.len());
            for n in 0..nodes {
                self.take_node(m, n, "exit");
            }
        }
        self.performer.release_all();
        self.orphans.clear();
    }
}

/// Why a pointer node is not grabbed (or is released) while HID++ carries its gesture button.
const HIDPP_CARRIES: &str = "its gesture button comes through HID++ and nothing else needs the \
                             grab (scroll not transformed or transformed in the kernel, no \
                             mapped button)";

/// Fixes `gesture.fingers` when the config says `"auto"` (GNOME 3, KDE 4) for the desktop
/// the actions use (`actions.desktop`, else the detected `desktop`), so every engine made
/// from `config` swipes with that desktop's finger count.
fn resolve_fingers(config: &mut Config, desktop: Desktop) {
    config.gesture.fingers = Some(config.swipe_fingers(desktop));
}

/// The action plan for `config`: default chords of `desktop` unless the config names a
/// desktop; commands refused when running as root without `allow_root_commands`.
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

/// Reaps every exited child (commands started by actions), so none stays a zombie.
pub fn reap_children() {
    use rustix::process::{WaitOptions, wait};
    // `wait` is waitpid(-1): any child, also those in their own session (`waitpid(None)`
    // would be waitpid(0), this process group only).
    while let Ok(Some((pid, status))) = wait(WaitOptions::NOHANG) {
        log::debug!("command pid {} exited: {status:?}", pid.as_raw_nonzero());
    }
}

/// What the running kernel offers the path decision: hidraw when `/sys/class/hidraw`
/// exists, HID-BPF when its BTF has `struct hid_bpf_ops`, the kernel-mode loader when it is
/// installed.
fn kernel_offers() -> KernelOffers {
    KernelOffers {
        hidraw: Path::new(hidpp::SYS_CLASS_HIDRAW).is_dir(),
        hid_bpf: bpf::has_hid_bpf(),
        loader: bpf::loader_installed(),
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
            Some(Wake::Device(0, 3))
        );
        assert_eq!(
            Wake::from_token(grab::node_token(5, 2)),
            Some(Wake::Device(5, 2))
        );
        assert_eq!(
            Wake::from_token(grab::node_token(0, mouse::MAX_NODES - 1)),
            Some(Wake::Device(0, mouse::MAX_NODES - 1))
        );
        assert_eq!(Wake::from_token(PINS_TOKEN), Some(Wake::Pins));
        assert_eq!(Wake::from_token(RING_TOKEN_BASE + 3), Some(Wake::Ring(3)));
        assert_eq!(Wake::from_token(FOCUS_TOKEN), Some(Wake::Focus));
        assert_eq!(Wake::from_token(6), None);
    }
}
