//! pawl's Linux backend: evdev in, uinput out, one epoll loop.
//!
//! pawl reads sysfs to find pointer devices without opening anything, opens and grabs
//! (`EVIOCGRAB`) only the devices the config handles, clones each as a uinput device with
//! the same identity and capabilities, and runs every frame through the engine: forwarded
//! bit-exact, or rewritten with one `write(2)` per output frame. Actions press chords on a
//! minimal virtual keyboard or start commands.
//!
//! # Brief overview
//!
//! - [`sysfs`] — discovery: `/sys/class/input/eventN/device/…` → [`sysfs::SysDevice`].
//! - [`caps`] — capability bitmaps, the pointer/keyboard classification
//!   ([`caps::Kind`]), the clone's capabilities.
//! - [`uinput`] — virtual devices: clones and the virtual keyboard.
//! - [`actions`] — actions resolved to chords/commands ([`actions::ActionPlan`]) and
//!   performed ([`actions::Performer`]).
//! - [`pipeline`] — the hot path of one device without syscalls: bytes → frames → engine
//!   → bytes, with the read buffer and wheel-code fixups; tested with a recording sink.
//! - [`daemon`] — the epoll loop and one record per handled mouse (its pointer nodes, its
//!   HID++ endpoint), with which path carries what decided in one place
//!   ([`daemon::paths::decide`]); hotplug, signals, reload, the timer.
//! - [`hidpp`] — Logitech HID++ on hidraw (`[hidpp] enabled`): MX Master endpoints, the
//!   gesture button diverted through a [`pawl_hidpp::Session`], `pawl devices`' query.
//! - [`inspect`] — read-only access for `pawl inspect` / `pawl devices`: pointer devices,
//!   a reader that never grabs, the grab probe.
//! - `sys` — the raw ioctls and signalfd (every `unsafe` of the crate).
//!
//! Invariants: a node whose capabilities are not a pointer's is never opened; pawl's own
//! virtual devices (`phys` starting with `pawl/`) are never opened; on exit every button
//! pressed on a virtual device is released.

pub mod actions;
pub mod battery;
pub mod caps;
pub mod daemon;
pub mod error;
pub mod focus;
pub mod hidpp;
pub mod inspect;
pub mod pipeline;
mod sys;
pub mod sysfs;
pub mod touchpad;
pub mod uinput;

use std::path::PathBuf;

use pawl_engine::{Config, Desktop};

pub use daemon::{
    Daemon, DeviceSummary, Exit, FocusSummary, MouseSummary, NodeState, NodeSummary, PathLine,
    Reload,
};
pub use error::{Error, ErrorKind};

/// What `pawl run` passes besides the config.
#[derive(Clone, Debug)]
pub struct Options {
    /// Whose shortcuts built-in actions press when the config does not say
    /// (`actions.desktop`); the binary picks it from `XDG_CURRENT_DESKTOP`.
    pub desktop: Desktop,
    /// Where evdev nodes are listed: `/sys/class/input`.
    pub class_dir: PathBuf,
    /// Where their device nodes appear (watched for hotplug): `/dev/input`.
    pub dev_dir: PathBuf,
}

impl Options {
    /// Options for `desktop` with the real sysfs and `/dev/input`.
    pub fn new(desktop: Desktop) -> Options {
        Options {
            desktop,
            class_dir: PathBuf::from(sysfs::SYS_CLASS_INPUT),
            dev_dir: PathBuf::from(sysfs::DEV_INPUT),
        }
    }
}

/// Starts the daemon: resolves actions, creates the virtual keyboard, grabs and clones
/// the devices `config` handles, watches for new ones. Call [`Daemon::run`] next.
///
/// Errors: `/dev/uinput` unusable (with the fix), or the kernel refusing an epoll,
/// signalfd or timerfd. Devices that cannot be opened are logged and skipped.
pub fn start(config: Config, options: &Options) -> Result<Daemon, Error> {
    Daemon::start(config, options)
}
