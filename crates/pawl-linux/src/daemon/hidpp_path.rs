//! The HID++ path (`[hidpp] enabled`): a mouse's MX Master HID++ endpoint
//! (`/dev/hidrawN`) opened and its [`HidppDevice`] session run in the daemon's epoll set,
//! token `HIDPP_TOKEN_BASE + mouse`. The gesture button (0x1B04, CID 0x00C3) is diverted
//! with raw XY and drives a gesture engine of the endpoint's own (with `[hidpp]
//! sense_panel`, so does the MX Master 4's Sense Panel, CID 0x01A0, as a mapped button;
//! it never needs the pointer node grabbed); the thumb wheel (0x2150)
//! is diverted or native as the mouse's path decision says, and its diverted rotation
//! goes through the engine and clone of the mouse's grabbed pointer node
//! ([`super::mouse::Mouse::thumb_node`]).
//!
//! Endpoints are opened before the evdev scan (and, on hotplug, from inotify on `/dev` for
//! `hidrawN`, watched only while HID++ is on), because a pointer node whose gesture button
//! HID++ carries is not grabbed at all when nothing else needs the grab; a pointer grabbed
//! before its endpoint appeared is released then ([`Daemon::apply_paths`]). An endpoint
//! whose read fails is closed, and opened again when its node returns.

use std::path::Path;

use rustix::event::epoll;

use super::mouse::Hidraw;
use super::slot::{Device, Slot};
use super::{Daemon, HIDPP_TOKEN_BASE, HIDRAW_HOTPLUG_TOKEN, Note, Trigger};
use super::{drain_hotplug, monotonic_now, watch, watch_hotplug};
use crate::hidpp::{self, HidppDevice};

impl Daemon {
    /// Turns HID++ on: watches `/dev` for `hidrawN` nodes (a mouse that reconnects gets a
    /// new one) and opens every MX Master HID++ endpoint there is.
    #[cold]
    pub(super) fn start_hidpp(&mut self, trigger: Trigger) {
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
        for m in 0..self.mice.len() {
            let Some(mouse) = self.mice[m].as_mut() else {
                continue;
            };
            if let Hidraw::Open(dev) = &mut mouse.hidraw {
                dev.shutdown();
                if let Some(fd) = dev.fd() {
                    let _ = epoll::delete(&self.epoll, fd);
                }
            }
            mouse.hidraw = Hidraw::Absent;
            mouse.thumb_node = None;
            self.devices_changed = true;
            self.drop_if_empty(m);
        }
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
    pub(super) fn reload_hidpp(&mut self, old: &pawl_engine::Config) {
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
                for mouse in self.mice.iter_mut().flatten() {
                    if let Some(dev) = mouse.endpoint_mut() {
                        dev.reconfigure(&self.config, now);
                    }
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
    /// an MX Master HID++ endpoint, in its mouse's record, then applies that mouse's paths
    /// (releasing the pointer nodes that no longer need their grab). Failures are noted like
    /// evdev nodes' (retried when permissions change) and kept in the record for reports.
    fn consider_hidraw(&mut self, node: &str, trigger: Trigger) {
        if !self.config.hidpp.enabled || !hidpp::is_hidraw_name(node) {
            return;
        }
        if self.settled(node, trigger) {
            return;
        }
        if self
            .mice
            .iter()
            .flatten()
            .any(|m| m.endpoint().is_some_and(|d| d.node().node == node))
        {
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
        let m = match self.mouse_of(Some(&found.hid_dir)) {
            Some(m) => m,
            None => self.new_mouse(Some(found.hid_dir.clone())),
        };
        // The thumb wheel's first mode, as the mouse's paths will be with this endpoint.
        let thumb = self.thumb_mode_with_endpoint(m);
        let dev = match HidppDevice::open(found, &self.config, thumb, monotonic_now()) {
            Ok(dev) => dev,
            Err(e) => {
                let reason = match e.kind() {
                    crate::ErrorKind::Permission => {
                        "no permission to open it (see the README, Permissions)".to_owned()
                    }
                    _ => e.to_string(),
                };
                if let Some(mouse) = self.mice[m].as_mut() {
                    mouse.hidraw = Hidraw::Failed {
                        node: node.to_owned(),
                        reason,
                    };
                    self.devices_changed = true;
                }
                return self.note_failure(node, &label, trigger, e);
            }
        };
        if let Some(fd) = dev.fd()
            && let Err(e) = watch(&self.epoll, fd, HIDPP_TOKEN_BASE + m as u64)
        {
            log::error!("{label}: cannot watch it: {e}");
            return self.drop_if_empty(m);
        }
        self.notes.remove(node);
        log::info!("{label}: setting up");
        if let Some(mouse) = self.mice[m].as_mut() {
            mouse.hidraw = Hidraw::Open(Box::new(dev));
        }
        self.devices_changed = true;
        self.apply_paths(m);
        self.rearm();
    }

    /// The thumb wheel mode mouse `m`'s paths give once an endpoint is open on it.
    fn thumb_mode_with_endpoint(&self, m: usize) -> pawl_hidpp::ThumbWheel {
        use super::paths::{Endpoint, Inputs, Session, Wants, decide};
        let Some(mouse) = self.mice[m].as_ref() else {
            return pawl_hidpp::ThumbWheel::Leave;
        };
        let (pointers, _) = mouse.pointers(&self.config, None);
        decide(&Inputs {
            wants: Wants::of(&self.config),
            pointers: &pointers,
            endpoint: Endpoint::Open(Session::SettingUp),
            kernel: self.kernel,
            attachment: mouse.attachment(),
        })
        .thumb_mode
    }

    /// Opens the HID++ endpoint of the HID device behind the new pointer node `node`
    /// (`eventN`) if its hidraw node exists already: the kernel makes it right after the
    /// evdev nodes, and pawl's `/dev` watch may not have reported it yet. Spares grabbing
    /// (and cloning) a pointer only to release it a moment later.
    pub(super) fn open_hidraw_of(&mut self, node: &str) {
        let dir = self.class_dir.join(node).join("device/device/hidraw");
        for hidraw in hidpp::hidraw_nodes(&dir) {
            if Path::new(hidpp::DEV).join(&hidraw).exists() {
                self.consider_hidraw(&hidraw, Trigger::Created);
            }
        }
    }

    /// One report from mouse `m`'s HID++ endpoint; an endpoint whose read fails (the
    /// mouse went away) is closed, and opened again when its node comes back.
    #[inline]
    pub(super) fn on_hidpp(&mut self, m: usize) {
        let Daemon {
            mice,
            performer,
            devices_changed,
            ..
        } = self;
        let Some(mouse) = mice.get_mut(m).and_then(Option::as_mut) else {
            return;
        };
        let super::mouse::Mouse {
            nodes,
            hidraw,
            thumb_node,
            bpf,
            ..
        } = mouse;
        // Kernel mode reads hidraw only while setting up: after each read, close it once the
        // session needs it no more.
        let kernel_mode = matches!(bpf, super::bpf::Bpf::Active(_));
        let Hidraw::Open(dev) = hidraw else {
            return;
        };
        let before = dev.deadline();
        let phase = dev.session().phase();
        match dev.on_readable(monotonic_now(), performer) {
            Ok(scroll) => {
                let mut rearm = dev.deadline() != before;
                let mut sync = kernel_mode;
                if rearm && dev.settings_changed() {
                    // A setting read back: `pawl status` shows it.
                    *devices_changed = true;
                }
                if dev.session().phase() != phase {
                    // What `pawl status` shows of the gesture button changed.
                    *devices_changed = true;
                    // Kernel mode: setup done closes hidraw, a feature index learned is
                    // written to the program.
                    sync = true;
                }
                if let Some(frame) = scroll
                    && let Some(Slot::Active(device)) = thumb_node.and_then(|t| nodes.get_mut(t))
                {
                    // The thumb wheel, through its pointer node's engine to its clone.
                    let Device {
                        source,
                        clone,
                        pipeline,
                        deadline,
                        ..
                    } = &mut **device;
                    pipeline.inject(&frame, &mut Device::sink(source, clone, performer));
                    let next = pipeline.next_deadline();
                    if next != *deadline {
                        *deadline = next;
                        rearm = true;
                    }
                }
                if sync {
                    self.sync_kernel(m);
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
                if let Some(fd) = dev.fd() {
                    let _ = epoll::delete(&self.epoll, fd);
                }
                if dev.swiping() {
                    // Unplugged mid-swipe: its engine goes with it, its fingers lift.
                    performer.lift_fingers();
                }
                *hidraw = Hidraw::Absent;
                *thumb_node = None;
                *devices_changed = true;
                // Kernel mode needs the endpoint: the program is made pass-through.
                self.apply_kernel(m, false);
                self.drop_if_empty(m);
                self.rearm();
            }
        }
    }

    /// Drains the `/dev` inotify queue: new `hidrawN` nodes are considered, changed
    /// permissions retried, vanished ones that had failed forgotten.
    #[cold]
    pub(super) fn on_hidraw_hotplug(&mut self) {
        let Some(fd) = self.hidraw_hotplug.as_ref() else {
            return;
        };
        let (todo, gone, rescan) = drain_hotplug(fd, &mut self.notes, hidpp::is_hidraw_name);
        for node in gone {
            self.forget_failed_hidraw(&node);
        }
        for (node, trigger) in todo {
            self.consider_hidraw(&node, trigger);
        }
        if rescan {
            log::warn!("hotplug events under /dev were lost; rescanning HID++ endpoints");
            self.rescan_hidraw(Trigger::Reload);
        }
    }

    /// Forgets a failed endpoint whose node vanished, and one kernel mode had closed (no
    /// read reports its end: the node's deletion does).
    fn forget_failed_hidraw(&mut self, node: &str) {
        for m in 0..self.mice.len() {
            let Some(mouse) = self.mice[m].as_mut() else {
                continue;
            };
            let gone = match &mouse.hidraw {
                Hidraw::Failed { node: n, .. } => n == node,
                Hidraw::Open(dev) => dev.fd().is_none() && dev.node().node == node,
                Hidraw::Absent => false,
            };
            if gone {
                if let Hidraw::Open(dev) = &mouse.hidraw {
                    log::info!("HID++ endpoint {} gone", dev.node().dev_path().display());
                    if dev.swiping() {
                        self.performer.lift_fingers();
                    }
                }
                mouse.hidraw = Hidraw::Absent;
                mouse.thumb_node = None;
                self.devices_changed = true;
                self.apply_kernel(m, false);
                self.drop_if_empty(m);
                self.rearm();
            }
        }
    }
}
