//! The grab path: a mouse's evdev pointer node opened, grabbed (`EVIOCGRAB`) and cloned
//! as a uinput virtual device; every frame read goes through its [`Pipeline`] (decoder →
//! engine → one `write(2)` per output frame to the clone). This is the hot path.
//!
//! Every way a node arrives — the startup scan, a node appearing or changing
//! permissions, a config reload — goes through [`Daemon::consider`]. A handled node is
//! not opened at all when the path decision says nothing needs its grab
//! ([`Slot::Carried`]); one with a button down is opened but not grabbed
//! ([`Slot::Waiting`]) until `EVIOCGKEY` shows every button up, so no press is cut in
//! half. A node leaves on `ENODEV`/`EPOLLHUP` or when the config stops handling it;
//! whatever its clone has pressed is released first, and the clone of a vanished node is
//! kept as an orphan for its return.

use std::os::fd::AsFd;

use pawl_engine::config::DeviceDecision;
use pawl_engine::units::ButtonSet;
use pawl_engine::{Config, DeviceEngine};
use rustix::event::epoll;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use super::mouse::{MAX_NODES, Mouse, NODE_BITS, hid_dir_of};
use super::paths::Pointer;
use super::slot::{Device, Slot, Source};
use super::{DEVICE_TOKEN_BASE, Daemon, GONE, HIDPP_CARRIES, MAX_ORPHANS, Note, Trigger};
use super::{describe, watch};
use crate::caps::{self, Kind};
use crate::error::{Error, ErrorKind};
use crate::pipeline::{Pipeline, ReadBuf};
use crate::sys::{self, UinputSpec};
use crate::sysfs::{self, SysDevice};
use crate::uinput::{self, VirtualDevice};

/// The epoll token of node `n` of mouse `m`.
pub(super) fn node_token(m: usize, n: usize) -> u64 {
    DEVICE_TOKEN_BASE + ((m as u64) << NODE_BITS) + n as u64
}

impl Daemon {
    /// Looks at one `eventN` node: never opens it unless sysfs shows a pointer that the
    /// config handles and the path decision wants its grab; then opens it, and grabs and
    /// clones it once no button is down.
    pub fn consider(&mut self, node: &str, trigger: Trigger) {
        if !sysfs::is_event_node(node) {
            return;
        }
        if self.settled(node, trigger) {
            return;
        }
        let note = self.notes.get(node).copied();
        if self.node_known(node) {
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
            && !crate::hidpp::buttons_need_grab(&self.config)
            && (!decision.transform_scroll || self.kernel.hid_bpf)
        {
            self.open_hidraw_of(node);
        }
        let hid_dir = hid_dir_of(&self.class_dir, node);
        let mouse = self.mouse_of(hid_dir.as_deref());
        let candidate = Pointer {
            transform_scroll: decision.transform_scroll,
            grabbed: false,
        };
        let grab = mouse.is_none_or(|m| self.would_grab(m, candidate));
        if !grab {
            if note != Some(Note::Skipped) {
                log::info!("not grabbing {label}: {HIDPP_CARRIES}");
            }
            self.notes.insert(node.to_owned(), Note::Skipped);
            if let Some(m) = mouse {
                self.put_node(m, Slot::Carried(Box::new(sys)));
                // Its profile decides the mouse's settings: a mouse that went into kernel
                // mode before its pointer node was seen (hidraw first, then the loader's
                // announcement, as on a reconnect; or, with the pins already there, its
                // hidraw node opened just above) has the transform off until now.
                self.apply_paths(m);
            }
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
        let m = match mouse {
            Some(m) => m,
            None => self.new_mouse(hid_dir),
        };
        let Some(n) = self.mice[m].as_mut().and_then(Mouse::free_node) else {
            log::error!("not handling {label}: its mouse has {MAX_NODES} pointer nodes already");
            self.drop_if_empty(m);
            return;
        };
        if let Err(e) = watch(&self.epoll, &source.fd, node_token(m, n)) {
            log::error!("not handling {label}: cannot watch it: {e}");
            self.drop_if_empty(m);
            return;
        }
        if let Some(mouse) = self.mice[m].as_mut() {
            mouse.nodes[n] = Slot::Waiting(Box::new(source));
        }
        self.try_activate(m, n);
    }

    /// Whether the path decision grabs `candidate`, a node about to join mouse `m`.
    fn would_grab(&self, m: usize, candidate: Pointer) -> bool {
        let Some(mouse) = self.mice[m].as_ref() else {
            return true;
        };
        let (routes, _) = mouse.routes(&self.config, self.kernel, Some(candidate));
        routes.pointers.last().is_none_or(|p| p.grab)
    }

    /// Puts `slot` (not opened: nothing to watch) into a free node of mouse `m`.
    fn put_node(&mut self, m: usize, slot: Slot) {
        if let Some(mouse) = self.mice[m].as_mut()
            && let Some(n) = mouse.free_node()
        {
            mouse.nodes[n] = slot;
            self.devices_changed = true;
        }
    }

    pub(super) fn note_failure(&mut self, node: &str, label: &str, trigger: Trigger, e: Error) {
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

    /// Grabs and clones a waiting node if no button of it is down.
    fn try_activate(&mut self, m: usize, n: usize) {
        let Some(mouse) = self.mice.get_mut(m).and_then(Option::as_mut) else {
            return;
        };
        let Slot::Waiting(source) = std::mem::replace(&mut mouse.nodes[n], Slot::Empty) else {
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
                mouse.nodes[n] = Slot::Active(Box::new(device));
                self.devices_changed = true;
                self.apply_paths(m);
            }
            Err(Activation::ButtonsDown(source, down)) => {
                log::info!(
                    "waiting for {label} to have no button down ({:?}) before grabbing it",
                    down.iter().map(|b| b.0).collect::<Vec<_>>()
                );
                mouse.nodes[n] = Slot::Waiting(source);
            }
            Err(Activation::Failed(source, e)) => {
                let _ = epoll::delete(&self.epoll, &source.fd);
                let node = source.sys.node.clone();
                drop(source);
                self.drop_if_empty(m);
                self.note_failure(&node, &label, Trigger::Startup, e);
            }
        }
    }

    /// Releases everything node `n` of mouse `m` has pressed on its clone and ungrabs it,
    /// then applies the mouse's paths again. The clone is kept as an orphan when the node
    /// vanished (`why` = [`GONE`]), else destroyed.
    pub(super) fn remove_node(&mut self, m: usize, n: usize, why: &str) {
        if self.take_node(m, n, why) {
            self.apply_paths(m);
            self.rearm();
        }
        self.drop_if_empty(m);
    }

    /// [`Daemon::remove_node`] without applying the paths again; whether a grabbed node was
    /// released.
    pub(super) fn take_node(&mut self, m: usize, n: usize, why: &str) -> bool {
        let Some(entry) = self
            .mice
            .get_mut(m)
            .and_then(Option::as_mut)
            .and_then(|mouse| mouse.nodes.get_mut(n))
        else {
            return false;
        };
        match std::mem::replace(entry, Slot::Empty) {
            Slot::Empty => false,
            Slot::Carried(_) => {
                self.devices_changed = true;
                false
            }
            Slot::Waiting(source) => {
                let _ = epoll::delete(&self.epoll, &source.fd);
                log::info!("stopped waiting for {} ({why})", describe(&source.sys));
                self.devices_changed = true;
                false
            }
            Slot::Active(mut device) => {
                let _ = epoll::delete(&self.epoll, &device.source.fd);
                let Device {
                    source,
                    clone,
                    pipeline,
                    ..
                } = &mut *device;
                pipeline.cancel(&mut Device::sink(source, clone, &mut self.performer));
                log::info!("released {} ({why})", describe(&device.source.sys));
                let Device { spec, clone, .. } = *device;
                if why == GONE {
                    if self.orphans.len() == MAX_ORPHANS {
                        self.orphans.remove(0);
                    }
                    self.orphans.push((spec, clone));
                }
                self.devices_changed = true;
                true
            }
        }
    }

    /// One read of everything available, then every complete frame through the pipeline.
    #[inline]
    pub(super) fn on_device(&mut self, m: usize, n: usize) {
        let Daemon {
            mice, performer, ..
        } = self;
        let device = match mice
            .get_mut(m)
            .and_then(Option::as_mut)
            .and_then(|mouse| mouse.nodes.get_mut(n))
        {
            Some(Slot::Active(d)) => d,
            Some(Slot::Waiting(_)) => return self.on_waiting(m, n),
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
            Ok(count) => {
                read.filled_by_read(count);
                let mut sink = Device::sink(source, clone, performer);
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
            Err(Errno::NODEV) => self.remove_node(m, n, GONE),
            Err(e) => {
                log::error!("cannot read {}: {e}", source.path.display());
                self.remove_node(m, n, "read error");
            }
        }
    }

    /// A waiting node has events: drain them (the compositor gets them too), and grab it
    /// once no button is down.
    #[cold]
    fn on_waiting(&mut self, m: usize, n: usize) {
        let Some(Slot::Waiting(source)) = self
            .mice
            .get_mut(m)
            .and_then(Option::as_mut)
            .and_then(|mouse| mouse.nodes.get_mut(n))
        else {
            return;
        };
        let mut scratch = [0u8; 64 * pawl_evdev::EVENT_SIZE];
        loop {
            match rustix::io::read(&source.fd, &mut scratch) {
                Ok(count) if count == scratch.len() => continue,
                Ok(_) | Err(Errno::AGAIN | Errno::INTR) => break,
                Err(Errno::NODEV) => return self.remove_node(m, n, GONE),
                Err(e) => {
                    log::error!("cannot read {}: {e}", source.path.display());
                    return self.remove_node(m, n, "read error");
                }
            }
        }
        match sys::key_state(source.fd.as_fd()) {
            Ok(keys) if caps::buttons_down(&keys).is_empty() => self.try_activate(m, n),
            Ok(_) => {}
            Err(_) => self.remove_node(m, n, GONE),
        }
    }

    /// Applies the current config to a taken node: released when no longer handled or
    /// when the path decision no longer wants its grab, else its engine restarts with the
    /// new settings (what it has pressed is released). A node left ungrabbed is forgotten
    /// here and looked at again by the rescan that follows.
    pub(super) fn rematch(&mut self, m: usize, n: usize) {
        let Some(mouse) = self.mice.get(m).and_then(Option::as_ref) else {
            return;
        };
        let (decision, node) = match mouse.nodes.get(n) {
            None | Some(Slot::Empty) => return,
            Some(Slot::Carried(_)) => {
                // The rescan decides it again, with the new config's logs.
                self.take_node(m, n, "reload");
                return self.drop_if_empty(m);
            }
            Some(slot) => {
                let sys = slot.sys().expect("a taken node");
                (self.config.decide(&sys.info()), sys.node.clone())
            }
        };
        if !decision.handle {
            let why = format!("the config no longer handles it: {}", decision.reason);
            return self.remove_node(m, n, &why);
        }
        let (routes, index) = mouse.routes(&self.config, self.kernel, None);
        let grab = routes
            .pointers
            .iter()
            .zip(&index)
            .find(|(_, i)| **i == Some(n))
            .is_none_or(|(p, _)| p.grab);
        if !grab {
            let sys = mouse.nodes[n].sys().cloned();
            self.take_node(m, n, HIDPP_CARRIES);
            self.notes.insert(node, Note::Skipped);
            if let (Some(sys), Some(mouse)) = (sys, self.mice[m].as_mut()) {
                mouse.nodes[n] = Slot::Carried(Box::new(sys));
            }
            self.rearm();
            return;
        }
        let Daemon {
            mice,
            performer,
            config,
            ..
        } = self;
        let Some(mouse) = mice[m].as_mut() else {
            return;
        };
        match &mut mouse.nodes[n] {
            Slot::Waiting(s) => s.decision = decision,
            Slot::Active(device) => {
                let Device {
                    source,
                    clone,
                    pipeline,
                    deadline,
                    ..
                } = &mut **device;
                source.decision = decision;
                pipeline.cancel(&mut Device::sink(source, clone, performer));
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
            Slot::Empty | Slot::Carried(_) => {}
        }
        self.rearm();
    }
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
    let mut engine = DeviceEngine::with_profile(
        config,
        source.decision.transform_scroll,
        source.decision.scroll,
    );
    engine.add_app_profiles(config, &source.sys.info());
    Pipeline::new(&source.caps, engine, &source.path.display().to_string())
}
