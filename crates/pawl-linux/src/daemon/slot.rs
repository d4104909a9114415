//! One pointer node of a mouse as the daemon holds it ([`Slot`]): carried by another path
//! and not opened, opened and waiting for its buttons to be up ([`Source`]), or grabbed and
//! cloned ([`Device`], with the [`IoSink`] its pipeline writes to). The grab path
//! (`grab.rs`) moves a node between these; the mouse record (`mouse.rs`) holds them.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use pawl_engine::config::DeviceDecision;
use pawl_engine::units::{ButtonSet, Micros};
use pawl_engine::{Action, TouchOut};

use crate::actions::Performer;
use crate::caps::{self, ABS_MAX, Caps};
use crate::pipeline::{Pipeline, ReadBuf, Sink};
use crate::sys::{self, AbsInfo, UinputSpec};
use crate::sysfs::SysDevice;
use crate::uinput::VirtualDevice;

/// An opened source node and what is known about it.
pub(super) struct Source {
    pub sys: SysDevice,
    pub path: PathBuf,
    pub fd: OwnedFd,
    /// Its capabilities, read at open (what the clone is made from).
    pub caps: Caps,
    /// Its absolute axes' ranges, read at open.
    pub abs: [AbsInfo; ABS_MAX as usize + 1],
    pub decision: DeviceDecision,
}

/// A grabbed device and its clone. Closing `source.fd` releases the grab (the kernel's
/// `evdev_release`); dropping `clone` destroys the virtual device.
pub(super) struct Device {
    pub source: Source,
    /// What the clone was created from (to find it again among the orphans).
    pub spec: UinputSpec,
    pub clone: VirtualDevice,
    /// What was read from `source.fd` and not yet a complete frame.
    pub read: ReadBuf,
    pub pipeline: Pipeline,
    pub deadline: Option<Micros>,
}

impl Device {
    /// The sink its pipeline writes to.
    #[inline]
    pub fn sink<'a>(
        source: &'a Source,
        clone: &'a VirtualDevice,
        performer: &'a mut Performer,
    ) -> IoSink<'a> {
        IoSink {
            clone,
            source: source.fd.as_fd(),
            performer,
        }
    }
}

/// One pointer node of a mouse.
pub(super) enum Slot {
    Empty,
    /// Handled, but not opened: the path decision found nothing that needs its grab (HID++
    /// carries its gesture button). Forgotten when the node vanishes or the config reloads.
    Carried(Box<SysDevice>),
    /// Opened but not grabbed: a button was down (grabbing now would leave it stuck in the
    /// compositor). Its events are read (and dropped: the compositor gets them too) until
    /// `EVIOCGKEY` shows every button up.
    Waiting(Box<Source>),
    /// Grabbed and cloned: the hot path.
    Active(Box<Device>),
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Slot::Empty => f.write_str("Empty"),
            Slot::Carried(s) => write!(f, "Carried({})", s.node),
            Slot::Waiting(s) => write!(f, "Waiting({})", s.sys.node),
            Slot::Active(d) => write!(f, "Active({})", d.source.sys.node),
        }
    }
}

impl Slot {
    /// What sysfs says about its node.
    pub fn sys(&self) -> Option<&SysDevice> {
        match self {
            Slot::Empty => None,
            Slot::Carried(s) => Some(s),
            Slot::Waiting(s) => Some(&s.sys),
            Slot::Active(d) => Some(&d.source.sys),
        }
    }

    /// Its clone's node, when grabbed and found.
    pub fn clone_node(&self) -> Option<PathBuf> {
        match self {
            Slot::Active(d) => d.clone.node().map(ToOwned::to_owned),
            _ => None,
        }
    }
}

/// The hot path's [`Sink`]: the device's clone and source fd, and the action performer.
pub(super) struct IoSink<'a> {
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

    /// The write's end: `CLOCK_MONOTONIC` read after it (vDSO: no syscall).
    #[inline]
    fn touch(&mut self, touch: &TouchOut) -> Micros {
        self.performer.touch(touch);
        super::monotonic_now()
    }

    fn buttons_down(&mut self) -> Option<ButtonSet> {
        sys::key_state(self.source)
            .ok()
            .map(|keys| caps::buttons_down(&keys))
    }

    /// `CLOCK_MONOTONIC` (vDSO: no syscall), read only while a swipe is paced.
    #[inline]
    fn now(&mut self) -> Micros {
        super::monotonic_now()
    }
}
