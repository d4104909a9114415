//! Kernel mode (`paths::Carrier::Bpf`): pawl's HID-BPF program, attached to a handled
//! mouse's HID device by the root-owned loader (`pawl-kernel-attach`, run by udev at bind),
//! transforms the wheel in the kernel and hands the gesture button's HID++ notifications to
//! pawl on a BPF ringbuf. The daemon side, per mouse ([`Bpf`] in `mouse::Mouse`):
//!
//! - when `paths::decide` says kernel mode, the pins `/run/pawl/bpf/<HID>/` are opened
//!   ([`pawl_bpf::pins::KernelDevice`]), the settings written from the mouse's config
//!   profile (scroll parameters and inversion, the wheel transform flag, the 0x1B04 and
//!   0x1D4B feature indexes the HID++ setup learned) and the ring's map fd put in the epoll
//!   set (token `RING_TOKEN_BASE + mouse`, [`super::Wake::Ring`]);
//! - a focus change writes the settings again when the focused app's `[app.scroll]` makes
//!   them differ (one map update per change, nothing per frame);
//! - ring records (diverted buttons, raw XY, 0x41 connection, 0x1D4B status) go through
//!   the mouse's HID++ session and gesture engine as reads from hidraw would
//!   ([`crate::hidpp::HidppDevice::on_report`]), to the same `Performer`;
//! - hidraw is open only while the session sets up (divert): once it is done the node is
//!   closed and taken out of the epoll set; a reconnect (0x41 / 0x1D4B on the ring) makes
//!   the session write its setup again, which reopens it ([`Daemon::sync_kernel`]);
//! - the transform is cleared (settings pass-through) whenever the mouse leaves kernel
//!   mode: a reload that switches it off or away, the endpoint gone, and every exit
//!   (SIGTERM, SIGINT). The loader itself attaches pass-through, so with no pawl running
//!   the wheel is the driver's. After SIGKILL the last settings stay in the map until the
//!   mouse reconnects (the loader attaches a fresh, pass-through program at every bind) or
//!   the next pawl starts and writes them: the wheel stays transformed as that pawl had it,
//!   and diverted notifications stay dropped until the mouse reconnects or sleeps (the
//!   device ends the temporary diversion then).
//!
//! New attachments are noticed without polling: the loader, once every pin is made and
//! handed to the user, touches `/run/pawl` (a plain directory: the bpffs mounted below it
//! may be mounted after pawl starts or unmounted by `--detach`, and inotify on a mount
//! point's directory does not see the mount's contents), and the daemon watches `/run/pawl` with inotify
//! (`IN_ATTRIB` — the loader sets both times — or `IN_MODIFY`, and `IN_CREATE` on `/run`
//! until `/run/pawl` exists). Every event makes
//! each mouse's paths be decided again. The loader's `remove` and `--detach` announce too:
//! a mouse whose held maps are no longer the pinned ones (detached, or attached anew by a
//! second bind) leaves kernel mode, then reopens the new pins or goes back to grab mode.
//! Only root can touch `/run/pawl`, so no other user can fake an announcement (and one
//! would only make pawl look at the pins again).

use std::os::fd::OwnedFd;
use std::path::Path;

use pawl_bpf::maps::{FLAG_WHEEL, Settings};
use pawl_bpf::pins::KernelDevice;
use pawl_engine::config::{AppKey, DeviceDecision};
use pawl_engine::device::DeviceInfo;
use pawl_engine::scroll::ScrollParams;
use pawl_engine::units::Micros;
use pawl_hidpp::feature;
use rustix::event::epoll;
use rustix::fs::inotify;

use super::bpf::{Bpf, KernelPath};
use super::mouse::{Hidraw, Mouse};
use super::slot::Slot;
use super::{Daemon, HIDPP_TOKEN_BASE, PINS_TOKEN, RING_TOKEN_BASE, watch};

/// The directory the loader touches after each attachment (the pin root's parent).
const ANNOUNCE_DIR: &str = "/run/pawl";
/// Watched until [`ANNOUNCE_DIR`] exists (the loader makes it at its first attachment).
const ANNOUNCE_PARENT: &str = "/run";

/// The settings mouse `mouse` gets in kernel mode under `config` while application `app`
/// is focused ([`kernel_settings`] of its first handled pointer node), with the HID++
/// feature indexes its session learned (0 until then: nothing taken from HID++).
fn settings_for(
    config: &pawl_engine::Config,
    mouse: &Mouse,
    unit_v120: u32,
    app: Option<AppKey>,
) -> Settings {
    let node = mouse
        .nodes
        .iter()
        .filter_map(|s| s.sys())
        .map(|sys| {
            let info = sys.info();
            let decision = config.decide(&info);
            (info, decision)
        })
        .find(|(_, d)| d.handle);
    let node = node.as_ref().map(|(info, d)| (info, d));
    let mut s = kernel_settings(config, node, unit_v120, app);
    if let Some(dev) = mouse.endpoint() {
        let session = dev.session();
        s.reprog_index = session
            .feature_index(feature::REPROG_CONTROLS_V4)
            .unwrap_or(0);
        s.wireless_status_index = session
            .feature_index(feature::WIRELESS_DEVICE_STATUS)
            .unwrap_or(0);
    }
    s
}

/// The program's scroll settings for pointer node `info` with its decision under `config`
/// (`None`: no handled node, so the config's `[scroll]` and no transform) while
/// application `app` is focused: the scroll of
/// its `[[app]]` tables for this device when any applies ([`pawl_engine::Config::app_settings`]),
/// else the device profile's, in the wheel's unit (`unit_v120` v120 per unit); the
/// transform on when the node's scroll is transformed. The app's tables never switch the
/// transform itself, as in grab mode. No HID++ index is set.
fn kernel_settings(
    config: &pawl_engine::Config,
    node: Option<(&DeviceInfo, &DeviceDecision)>,
    unit_v120: u32,
    app: Option<AppKey>,
) -> Settings {
    let (scroll, transform) = match node {
        Some((info, d)) => {
            let scroll = app
                .and_then(|k| config.app_settings(info, k))
                .map_or(d.scroll, |a| a.scroll);
            (ScrollParams::from(&scroll), d.transform_scroll)
        }
        None => (ScrollParams::from(&config.scroll), false),
    };
    let mut s = Settings::new(&scroll, unit_v120);
    s.flags = if transform { FLAG_WHEEL } else { 0 };
    s
}

/// `s` made pass-through: no transform, no HID++ notification taken (the wheel and every
/// report are the driver's own again).
fn pass_through(mut s: Settings) -> Settings {
    s.flags = 0;
    s.reprog_index = 0;
    s.wireless_status_index = 0;
    s
}

impl Daemon {
    /// Puts mouse `m` into kernel mode (`kernel` true) or out of it: opens its program's
    /// pins and watches the ring, or writes them pass-through and closes them; in kernel
    /// mode writes the settings when they changed (a reload, a feature index learned).
    /// Returns `false` when the pins could not be opened (the mouse then has
    /// [`Bpf::Failed`], and its paths must be decided again).
    #[cold]
    pub(super) fn apply_kernel(&mut self, m: usize, kernel: bool) -> bool {
        let Some(mouse) = self.mice.get_mut(m).and_then(Option::as_mut) else {
            return true;
        };
        if !kernel {
            // Only an active attachment is left: a failed one keeps its reason, so the
            // decision that follows (and `pawl status`) still sees why kernel mode is not
            // used, and the node it no longer carries is grabbed.
            if !matches!(mouse.bpf, Bpf::Active(_)) {
                return true;
            }
            if let Bpf::Active(k) = std::mem::take(&mut mouse.bpf) {
                let off = pass_through(
                    k.written
                        .unwrap_or_else(|| Settings::new(&ScrollParams::default(), k.unit_v120)),
                );
                if let Err(e) = k.dev.write_settings(&off) {
                    log::warn!("{}: cannot clear kernel mode's settings: {e}", k.dev.name());
                }
                let _ = epoll::delete(&self.epoll, k.dev.ring_fd());
                log::info!(
                    "{}: kernel mode off; the program is pass-through",
                    k.dev.name()
                );
                self.devices_changed = true;
                // HID++ goes back to hidraw reads.
                if let Some(dev) = mouse.endpoint_mut() {
                    // Reopened now, or by a write not yet watched.
                    let reopened = dev.take_reopened();
                    match dev.ensure_open().map(|now| now || reopened) {
                        Ok(true) => {
                            if let Some(fd) = dev.fd()
                                && let Err(e) = watch(&self.epoll, fd, HIDPP_TOKEN_BASE + m as u64)
                            {
                                log::error!("cannot watch the reopened HID++ endpoint: {e}");
                            }
                        }
                        Ok(false) => {}
                        Err(e) => log::error!("cannot reopen the HID++ endpoint: {e}"),
                    }
                }
            }
            return true;
        }
        if matches!(mouse.bpf, Bpf::Idle | Bpf::Failed { .. }) {
            let Some(name) = mouse.hid_name().map(str::to_owned) else {
                return true;
            };
            match open(&name) {
                Ok(k) => {
                    if let Err(e) = epoll::add(
                        &self.epoll,
                        k.dev.ring_fd(),
                        epoll::EventData::new_u64(RING_TOKEN_BASE + m as u64),
                        epoll::EventFlags::IN,
                    ) {
                        mouse.bpf = Bpf::Failed {
                            reason: format!("cannot watch its ring: {e}"),
                        };
                        self.devices_changed = true;
                        return false;
                    }
                    log::info!(
                        "{name}: kernel mode (pawl's HID-BPF program; the pointer node is not \
                         grabbed)"
                    );
                    mouse.bpf = Bpf::Active(Box::new(k));
                    self.devices_changed = true;
                }
                Err(reason) => {
                    log::warn!("{name}: kernel mode unavailable: {reason}");
                    mouse.bpf = Bpf::Failed { reason };
                    self.devices_changed = true;
                    return false;
                }
            }
        }
        self.sync_kernel(m);
        true
    }

    /// After anything that may move mouse `m`'s HID++ session (a ring record, a hidraw
    /// read, a timeout, a reload): in kernel mode, watches hidraw again when a write
    /// reopened it, closes it once setup is done, and writes the settings when they
    /// changed (the feature indexes learned by setup).
    #[cold]
    pub(super) fn sync_kernel(&mut self, m: usize) {
        let Some(mouse) = self.mice.get_mut(m).and_then(Option::as_mut) else {
            return;
        };
        let Bpf::Active(k) = &mouse.bpf else {
            return;
        };
        let want = settings_for(&self.config, mouse, k.unit_v120, self.focus.key);
        let Mouse { hidraw, bpf, .. } = mouse;
        let Bpf::Active(k) = bpf else { return };
        if k.written != Some(want) {
            match k.dev.write_settings(&want) {
                Ok(()) => {
                    log::debug!("{}: kernel mode settings {want:?}", k.dev.name());
                    k.written = Some(want);
                }
                Err(e) => log::error!("{}: cannot write kernel mode's settings: {e}", k.dev.name()),
            }
        }
        let Hidraw::Open(dev) = hidraw else { return };
        if dev.take_reopened()
            && let Some(fd) = dev.fd()
        {
            log::debug!(
                "{}: hidraw reopened for HID++ setup",
                dev.node().dev_path().display()
            );
            if let Err(e) = watch(&self.epoll, fd, HIDPP_TOKEN_BASE + m as u64) {
                log::error!("cannot watch the reopened HID++ endpoint: {e}");
            }
        }
        if !dev.needs_hidraw()
            && let Some(fd) = dev.close_hidraw()
        {
            let _ = epoll::delete(&self.epoll, &fd);
            drop::<OwnedFd>(fd);
            log::info!(
                "{}: HID++ setup done; hidraw closed (kernel mode: notifications come on the \
                 program's ring)",
                dev.node().dev_path().display()
            );
            self.devices_changed = true;
        }
    }

    /// Mouse `m`'s ring is readable: every record through its HID++ session and gesture
    /// engine, actions to the performer.
    pub(super) fn on_ring(&mut self, m: usize) {
        let Daemon {
            mice, performer, ..
        } = self;
        let Some(mouse) = mice.get_mut(m).and_then(Option::as_mut) else {
            return;
        };
        let Mouse { hidraw, bpf, .. } = mouse;
        let Bpf::Active(k) = bpf else { return };
        let Hidraw::Open(dev) = hidraw else {
            // No session to take them (the endpoint went): drain and drop.
            let _ = k.reader.drain(|_| {});
            return;
        };
        let phase = dev.session().phase();
        let before = dev.deadline();
        let res = k.reader.drain(|r| {
            if r.kind() == Some(pawl_bpf::maps::RingKind::WheelTrace) {
                return;
            }
            let (report, len) = r.report();
            // The thumb wheel is native in kernel mode: no rotation comes back.
            let _ = dev.on_report(&report[..len], Micros(r.time_ns / 1000), performer);
        });
        if let Err(e) = res {
            log::error!("{}: {e}", k.dev.name());
        }
        let changed = dev.session().phase() != phase || dev.reopened();
        let rearm = dev.deadline() != before;
        if changed {
            self.devices_changed = true;
            self.sync_kernel(m);
        }
        if rearm {
            self.rearm();
        }
    }

    /// Starts watching for the loader's announcements (see the module docs), once.
    #[cold]
    pub(super) fn watch_pins(&mut self) {
        if self.pins_watch.is_some() || !self.kernel.hid_bpf {
            return;
        }
        let (dir, flags) = if Path::new(ANNOUNCE_DIR).is_dir() {
            (
                ANNOUNCE_DIR,
                inotify::WatchFlags::ATTRIB
                    | inotify::WatchFlags::MODIFY
                    | inotify::WatchFlags::CREATE
                    | inotify::WatchFlags::ONLYDIR,
            )
        } else {
            (
                ANNOUNCE_PARENT,
                inotify::WatchFlags::CREATE | inotify::WatchFlags::ONLYDIR,
            )
        };
        let res = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC)
            .and_then(|fd| inotify::add_watch(&fd, dir, flags).map(|_| fd))
            .and_then(|fd| watch(&self.epoll, &fd, PINS_TOKEN).map(|()| fd));
        match res {
            Ok(fd) => {
                log::debug!("watching {dir} for kernel-mode attachments");
                self.pins_watch = Some((fd, dir == ANNOUNCE_DIR));
            }
            Err(e) => log::warn!(
                "cannot watch {dir} for kernel-mode attachments ({e}); a mouse attached later \
                 runs grab mode until pawl is reloaded"
            ),
        }
    }

    /// The loader announced an attachment (or `/run/pawl` appeared): every mouse's paths are
    /// decided again (a mouse whose pins are new goes into kernel mode).
    #[cold]
    pub(super) fn on_pins(&mut self) {
        let Some((fd, on_announce_dir)) = self.pins_watch.as_ref() else {
            return;
        };
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 1024];
        let mut reader = inotify::Reader::new(fd, &mut buf);
        let mut events = 0;
        while reader.next().is_ok() {
            events += 1;
        }
        log::debug!(
            "kernel-mode announcement ({events} inotify events); deciding every mouse's paths again"
        );
        if !*on_announce_dir && Path::new(ANNOUNCE_DIR).is_dir() {
            // /run/pawl appeared: watch it instead of /run.
            if let Some((fd, _)) = self.pins_watch.take() {
                let _ = epoll::delete(&self.epoll, &fd);
            }
            self.watch_pins();
        }
        let mut regrab = false;
        for m in 0..self.mice.len() {
            // Pins replaced (the loader attached again: a bind, the package's postinst) or
            // gone (`remove`, `--detach`, the package's prerm): the maps held are a
            // detached program's. Leave kernel mode; the paths below reopen the new pins
            // or grab.
            let stale = self.mice[m]
                .as_ref()
                .is_some_and(|mouse| matches!(&mouse.bpf, Bpf::Active(k) if !k.dev.is_pinned()));
            if stale {
                log::info!(
                    "{}: its kernel-mode pins were replaced or removed",
                    self.mice[m]
                        .as_ref()
                        .and_then(|mouse| mouse.hid_name())
                        .unwrap_or("?")
                );
                self.apply_kernel(m, false);
            }
            if let Some(mouse) = self.mice[m].as_mut()
                && matches!(mouse.bpf, Bpf::Failed { .. })
            {
                mouse.bpf = Bpf::Idle;
            }
            self.apply_paths(m);
            // Out of kernel mode for good (detached): its carried nodes are grabbed again
            // by the rescan below, as a reload does.
            if stale
                && let Some(mouse) = self.mice[m].as_ref()
                && !matches!(mouse.bpf, Bpf::Active(_))
            {
                let carried: Vec<usize> = (0..mouse.nodes.len())
                    .filter(|&n| matches!(mouse.nodes[n], Slot::Carried(_)))
                    .collect();
                for n in carried {
                    self.take_node(m, n, "kernel mode ended");
                    regrab = true;
                }
            }
        }
        if regrab {
            self.rescan(super::Trigger::Reload);
        }
    }

    /// On a reload, before any node is grabbed again: every mouse in kernel mode that the
    /// (new) config takes out of it gets its program pass-through now (the grab that
    /// follows then never reads events the program also transformed).
    pub(super) fn leave_kernel_mode_where_the_config_says_so(&mut self) {
        for m in 0..self.mice.len() {
            let leaving = self.mice[m].as_ref().is_some_and(|mouse| {
                matches!(mouse.bpf, Bpf::Active(_))
                    && !super::paths::is_kernel_mode(
                        &mouse.routes(&self.config, self.kernel, None).0,
                    )
            });
            if leaving {
                self.apply_kernel(m, false);
            }
        }
    }

    /// Every exit: each mouse in kernel mode has its program made pass-through (after its
    /// HID++ diversions are undone, which reopens hidraw for the writes).
    pub(super) fn shutdown_kernel(&mut self) {
        for m in 0..self.mice.len() {
            self.apply_kernel(m, false);
        }
    }
}

/// Opens HID device `name`'s pins and its ring; the wheel's unit is what the loader wrote.
fn open(name: &str) -> Result<KernelPath, String> {
    let dev = KernelDevice::open(name).map_err(|e| e.to_string())?;
    let reader = dev.ring_reader().map_err(|e| e.to_string())?;
    let current = dev.settings().map_err(|e| e.to_string())?;
    let unit_v120 = current.scroll.quantum_v120;
    if !(1..=120).contains(&unit_v120) {
        return Err(format!(
            "the program's wheel unit {unit_v120} v120 is out of 1..=120"
        ));
    }
    Ok(KernelPath {
        dev,
        reader,
        unit_v120,
        written: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_mode_settings_carry_the_users_scroll_section() {
        // Every field differs from the defaults, so settings that ignored `[scroll]`
        // (default parameters) could not compare equal.
        let text = "[scroll]\ninvert_vertical = false\ninvert_horizontal = true\n\
                    smoothing_factor = 0.8\nmax_step = 2.0\nspike_ratio = 9.0\n\
                    gesture_gap_ms = 120\ninertia = \"glide\"\n";
        let config =
            pawl_engine::Config::parse(text, "c.toml", pawl_engine::Platform::Linux).unwrap();
        // A mouse with no node yet: its settings come from the config's `[scroll]`.
        let mouse = Mouse::new(None);
        let s = settings_for(&config, &mouse, 8, None);
        let want = Settings::new(&ScrollParams::new(&config.scroll), 8);
        assert_eq!(s.scroll, want.scroll);
        assert_ne!(
            s.scroll,
            Settings::new(&ScrollParams::default(), 8).scroll,
            "the user's [scroll] must not be replaced by the defaults"
        );
        // No handled node: the program passes the wheel through; no HID++ index known.
        assert_eq!(
            (s.flags, s.reprog_index, s.wireless_status_index),
            (0, 0, 0)
        );
    }

    #[test]
    fn kernel_mode_settings_follow_the_focused_apps_scroll_table() {
        let text = "[[app]]\napp_id = \"game\"\n[app.scroll]\ninvert_vertical = false\n\
                    smoothing = \"none\"\n\n\
                    [[app]]\napp_id = \"elsewhere\"\ndevice = \"*Other Mouse*\"\n\
                    [app.scroll]\ninvert_vertical = false\n\n\
                    [[app]]\napp_id = \"browser\"\n[app.gesture]\nright = \"none\"\n";
        let config =
            pawl_engine::Config::parse(text, "c.toml", pawl_engine::Platform::Linux).unwrap();
        let mx = DeviceInfo {
            name: "MX Master 3S".into(),
            bus: pawl_engine::device::Bus::BLUETOOTH,
            vendor: pawl_engine::device::LOGITECH,
            product: 0xb034,
            has_wheel: true,
            is_touchpad: false,
        };
        let key = |app: &str| config.app_key(app, None);
        let decision = config.decide(&mx);
        let node = Some((&mx, &decision));
        let device = kernel_settings(&config, node, 8, None);
        let game = kernel_settings(&config, node, 8, key("game"));
        let mut want = config.scroll;
        want.invert_vertical = false;
        want.smoothing = pawl_engine::config::Smoothing::None;
        assert_eq!(
            game.scroll,
            Settings::new(&ScrollParams::from(&want), 8).scroll
        );
        assert_ne!(
            game.scroll, device.scroll,
            "the game's table must reach the program"
        );
        // The transform stays on: the table changes parameters, not whether pawl owns
        // the wheel.
        assert_eq!((game.flags, device.flags), (FLAG_WHEEL, FLAG_WHEEL));
        // A table whose `device` is another mouse, or one without scroll keys, leaves
        // the device profile's scroll.
        for other in ["elsewhere", "browser"] {
            assert!(key(other).is_some(), "{other} is named by a table");
            assert_eq!(kernel_settings(&config, node, 8, key(other)), device);
        }
        // No handled node: the config's own `[scroll]`, untransformed, whatever is focused.
        let none = kernel_settings(&config, None, 8, key("game"));
        assert_eq!(
            none.scroll,
            Settings::new(&ScrollParams::from(&config.scroll), 8).scroll
        );
        assert_eq!(none.flags, 0);
    }
}
