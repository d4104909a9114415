//! Hotplug: inotify on `/dev/input` (and, while HID++ is on, on `/dev` for `hidrawN`):
//! a node appearing (`IN_CREATE`) is considered, one whose permissions udev set after it
//! appeared (`IN_ATTRIB`) retried, one that vanished (`IN_DELETE`) forgotten; a lost
//! queue (overflow) rescans.

use std::collections::HashMap;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::inotify;

use super::slot::Slot;
use super::{Daemon, Note, Trigger};
use crate::sysfs;

impl Daemon {
    /// Drains the inotify queue: new nodes are considered, changed permissions retried.
    #[cold]
    pub(super) fn on_hotplug(&mut self) {
        let Some(fd) = self.hotplug.as_ref() else {
            return;
        };
        let (todo, gone, rescan) = drain_hotplug(fd, &mut self.notes, |_| true);
        for node in gone {
            self.forget_carried(&node);
        }
        for (node, trigger) in todo {
            self.consider(&node, trigger);
        }
        if rescan {
            log::warn!("hotplug events were lost; rescanning devices");
            self.rescan(Trigger::Reload);
        }
    }

    /// Forgets a handled node that was not opened ([`Slot::Carried`]) when it vanished,
    /// and decides its mouse's paths again (kernel mode's settings come from the first
    /// handled node's profile).
    fn forget_carried(&mut self, node: &str) {
        for m in 0..self.mice.len() {
            let Some(mouse) = self.mice[m].as_mut() else {
                continue;
            };
            let mut forgot = false;
            for slot in mouse.nodes.iter_mut() {
                if matches!(slot, Slot::Carried(sys) if sys.node == node) {
                    *slot = Slot::Empty;
                    self.devices_changed = true;
                    forgot = true;
                }
            }
            self.drop_if_empty(m);
            if forgot {
                self.apply_paths(m);
            }
        }
    }

    pub(super) fn rescan(&mut self, trigger: Trigger) {
        match sysfs::event_nodes(&self.class_dir) {
            Ok(nodes) => {
                for node in nodes {
                    self.consider(&node, trigger);
                }
            }
            Err(e) => log::error!("cannot list {}: {e}", self.class_dir.display()),
        }
    }
}

/// Reads every queued event of an inotify `fd` for names `keep` accepts: forgets the notes
/// of nodes that vanished or appeared, and returns the nodes to look at, the nodes that
/// vanished, and whether events were lost (queue overflow: rescan).
pub(super) fn drain_hotplug(
    fd: &OwnedFd,
    notes: &mut HashMap<String, Note>,
    keep: fn(&str) -> bool,
) -> (Vec<(String, Trigger)>, Vec<String>, bool) {
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut reader = inotify::Reader::new(fd, &mut buf);
    let mut todo: Vec<(String, Trigger)> = Vec::new();
    let mut gone: Vec<String> = Vec::new();
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
            gone.push(name.to_owned());
        } else if flags.contains(inotify::ReadFlags::CREATE) {
            notes.remove(name);
            todo.push((name.to_owned(), Trigger::Created));
        } else if flags.contains(inotify::ReadFlags::ATTRIB) {
            todo.push((name.to_owned(), Trigger::Attrib));
        }
    }
    (todo, gone, rescan)
}

/// An inotify watch on `dir` for nodes appearing (`IN_CREATE`), changing permissions
/// (`IN_ATTRIB`: udev applies them after the node exists) and vanishing (`IN_DELETE`).
pub(super) fn watch_hotplug(dir: &Path) -> rustix::io::Result<OwnedFd> {
    let fd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC)?;
    inotify::add_watch(
        &fd,
        dir,
        inotify::WatchFlags::CREATE | inotify::WatchFlags::ATTRIB | inotify::WatchFlags::DELETE,
    )?;
    Ok(fd)
}
