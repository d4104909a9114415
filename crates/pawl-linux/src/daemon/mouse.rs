//! A handled mouse: one record per physical mouse (one HID device in sysfs), holding its
//! evdev pointer node(s) — each carried, waiting or grabbed with its clone (`slot.rs`) —
//! and its HID++ endpoint (`hidpp_path.rs`), with the thumb wheel's link between them.
//! What each part of it goes through is decided by `paths.rs` ([`Mouse::routes`]),
//! applied by [`Daemon::apply_paths`] and reported as a [`MouseSummary`] (`pawl status`,
//! `pawl devices`; [`predict`] for `pawl devices` without a worker).
//!
//! Epoll tokens name a mouse and its part: `DEVICE_TOKEN_BASE + (mouse << NODE_BITS) +
//! node` for a pointer node, `HIDPP_TOKEN_BASE + mouse` for the HID++ endpoint.

use std::path::{Path, PathBuf};

use pawl_engine::Config;
use pawl_hidpp::Phase;
use pawl_hidpp::controls::CID_GESTURE_BUTTON;

use super::bpf::{self, Bpf};
use super::paths::{
    self, Attachment, Carrier, Endpoint, Inputs, KernelOffers, Pointer, Route, Routes, Why,
};
use super::slot::Slot;
use super::{Daemon, HIDPP_CARRIES, Note, monotonic_now};
use crate::hidpp::HidppDevice;

/// Bits of a pointer node's index in its epoll token: at most 16 pointer nodes per mouse.
pub(super) const NODE_BITS: u32 = 4;
/// The most pointer nodes one mouse (HID device) may have.
pub(super) const MAX_NODES: usize = 1 << NODE_BITS;

/// The canonical HID device directory of the evdev node `node`
/// (`/sys/class/input/eventN/device/device`), if it is part of one.
pub(super) fn hid_dir_of(class_dir: &Path, node: &str) -> Option<PathBuf> {
    std::fs::canonicalize(class_dir.join(node).join("device/device")).ok()
}

/// The mouse's HID++ endpoint, as far as pawl has it.
#[derive(Debug, Default)]
pub(super) enum Hidraw {
    /// None known (HID++ off, not an MX Master, no hidraw node yet).
    #[default]
    Absent,
    /// Found, but opening it failed; retried when its permissions change.
    Failed {
        /// `hidrawN`.
        node: String,
        /// Why, for `pawl status` (e.g. `no permission to open it`).
        reason: String,
    },
    /// Open, its session running.
    Open(Box<HidppDevice>),
}

/// One physical mouse.
#[derive(Debug)]
pub(super) struct Mouse {
    /// Its HID device in sysfs (canonical), shared by its evdev and hidraw nodes; `None`
    /// for a pointer that is no HID device (uinput, PS/2): such a record has one node.
    pub hid_dir: Option<PathBuf>,
    /// Its pointer nodes the config handles; a node's index is stable while it is there.
    pub nodes: Vec<Slot>,
    /// Its HID++ endpoint.
    pub hidraw: Hidraw,
    /// The node (index into `nodes`) whose engine and clone take the diverted thumb
    /// wheel's rotation.
    pub thumb_node: Option<usize>,
    /// Kernel mode: pawl's HID-BPF program on its HID device, in use or not.
    pub bpf: Bpf,
}

impl Mouse {
    /// An empty record for the HID device at `hid_dir`.
    pub fn new(hid_dir: Option<PathBuf>) -> Mouse {
        Mouse {
            hid_dir,
            nodes: Vec::new(),
            hidraw: Hidraw::Absent,
            thumb_node: None,
            bpf: Bpf::Idle,
        }
    }

    /// Its HID device's sysfs name (`0005:046D:B034.0003`), `None` for a pointer that is no
    /// HID device.
    pub fn hid_name(&self) -> Option<&str> {
        self.hid_dir.as_deref()?.file_name()?.to_str()
    }

    /// What the path decision sees of pawl's program on this mouse: in use or its pins
    /// there ([`Attachment::Attached`]), pins that failed to open, none.
    pub fn attachment(&self) -> Attachment {
        match (&self.bpf, self.hid_name()) {
            (Bpf::Active(_), _) => Attachment::Attached,
            (Bpf::Failed { .. }, _) => Attachment::Failed,
            (Bpf::Idle, None) => Attachment::NoHidDevice,
            (Bpf::Idle, Some(name)) => bpf::pinned(name),
        }
    }

    /// Whether nothing is left of it (no node, no endpoint open or failed).
    pub fn is_empty(&self) -> bool {
        self.nodes.iter().all(|s| matches!(s, Slot::Empty)) && matches!(self.hidraw, Hidraw::Absent)
    }

    /// A free node index (an empty slot reused, else a new one); `None` at [`MAX_NODES`].
    pub fn free_node(&mut self) -> Option<usize> {
        if let Some(n) = self.nodes.iter().position(|s| matches!(s, Slot::Empty)) {
            return Some(n);
        }
        (self.nodes.len() < MAX_NODES).then(|| {
            self.nodes.push(Slot::Empty);
            self.nodes.len() - 1
        })
    }

    /// The open endpoint.
    pub fn endpoint(&self) -> Option<&HidppDevice> {
        match &self.hidraw {
            Hidraw::Open(dev) => Some(dev),
            _ => None,
        }
    }

    /// The open endpoint, mutable.
    pub fn endpoint_mut(&mut self) -> Option<&mut HidppDevice> {
        match &mut self.hidraw {
            Hidraw::Open(dev) => Some(dev),
            _ => None,
        }
    }

    /// What the endpoint offers the path decision.
    pub fn endpoint_offer(&self) -> Endpoint {
        match &self.hidraw {
            Hidraw::Absent => Endpoint::Absent,
            Hidraw::Failed { .. } => Endpoint::Failed,
            Hidraw::Open(dev) => Endpoint::Open(match dev.session().phase() {
                Phase::Idle | Phase::Setup => paths::Session::SettingUp,
                Phase::Ready if dev.gesture_diverted() => paths::Session::Diverted,
                Phase::Ready => paths::Session::NotDiverted,
                Phase::Offline => paths::Session::Offline,
                Phase::Unsupported => paths::Session::Unsupported,
            }),
        }
    }

    /// Its handled pointer nodes as the path decision sees them (by the current config's
    /// decision: a reload may not have re-matched a node yet), with `extra` (a node about
    /// to be taken) last; and the node index of each (`None` for `extra`).
    pub fn pointers(
        &self,
        config: &Config,
        extra: Option<Pointer>,
    ) -> (Vec<Pointer>, Vec<Option<usize>>) {
        let mut pointers = Vec::new();
        let mut index = Vec::new();
        for (n, slot) in self.nodes.iter().enumerate() {
            let Some(sys) = slot.sys() else { continue };
            let decision = config.decide(&sys.info());
            if !decision.handle {
                continue;
            }
            pointers.push(Pointer {
                transform_scroll: decision.transform_scroll,
                grabbed: matches!(slot, Slot::Active(_)),
            });
            index.push(Some(n));
        }
        if let Some(p) = extra {
            pointers.push(p);
            index.push(None);
        }
        (pointers, index)
    }

    /// The routes of this mouse now, with `extra` as in [`Mouse::pointers`].
    pub fn routes(
        &self,
        config: &Config,
        kernel: KernelOffers,
        extra: Option<Pointer>,
    ) -> (Routes, Vec<Option<usize>>) {
        let (pointers, index) = self.pointers(config, extra);
        let routes = paths::decide(&Inputs {
            wants: paths::Wants::of(config),
            pointers: &pointers,
            endpoint: self.endpoint_offer(),
            kernel,
            attachment: self.attachment(),
        });
        (routes, index)
    }

    /// What `pawl status` and `pawl devices` show of it.
    pub fn summary(&self, config: &Config, kernel: KernelOffers) -> MouseSummary {
        let (routes, index) = self.routes(config, kernel, None);
        let hidraw_node = match &self.hidraw {
            Hidraw::Absent => None,
            Hidraw::Failed { node, .. } => Some(node.as_str()),
            Hidraw::Open(dev) => Some(dev.node().node.as_str()),
        };
        let failure = match &self.hidraw {
            Hidraw::Failed { reason, .. } => Some(reason.as_str()),
            _ => None,
        };
        let node_name = |n: usize| {
            self.nodes
                .get(n)
                .and_then(Slot::sys)
                .map_or_else(String::new, |s| s.node.clone())
        };
        let ctx = Context {
            hidraw: hidraw_node.unwrap_or("?"),
            failure,
            thumb_node: self.thumb_node.map(node_name),
            hid: self.hid_name().unwrap_or("?").to_owned(),
            bpf_failure: match &self.bpf {
                Bpf::Failed { reason } => Some(reason.clone()),
                _ => None,
            },
            pins_uid: pins_uid(self.attachment()),
        };
        let names: Vec<String> = index
            .iter()
            .map(|n| n.map_or_else(String::new, node_name))
            .collect();
        let lines = path_lines(&routes, &names, &ctx);
        let nodes: Vec<NodeSummary> = self
            .nodes
            .iter()
            .filter_map(|slot| {
                let sys = slot.sys()?;
                Some(NodeSummary {
                    path: sys.dev_path(),
                    state: match slot {
                        Slot::Active(_) => NodeState::Grabbed,
                        Slot::Waiting(_) => NodeState::Waiting,
                        _ => NodeState::NotGrabbed,
                    },
                    clone: slot.clone_node(),
                })
            })
            .collect();
        let (name, vendor, product) = match (self.nodes.iter().find_map(Slot::sys), self.endpoint())
        {
            (Some(sys), _) => (sys.name.clone(), sys.vendor, sys.product),
            (None, Some(dev)) => (
                dev.node().name.clone(),
                dev.node().vendor,
                dev.node().product,
            ),
            (None, None) => (String::new(), 0, 0),
        };
        MouseSummary {
            name,
            vendor,
            product,
            nodes,
            hidraw: hidraw_node.map(|n| Path::new(crate::hidpp::DEV).join(n)),
            paths: lines,
            settings: match &self.hidraw {
                Hidraw::Open(dev) => crate::hidpp::SettingsInForce::of(dev.session()),
                _ => crate::hidpp::SettingsInForce::default(),
            },
        }
    }
}

/// The mouse table: finding, making and dropping records, and applying a record's paths.
impl Daemon {
    /// Every handled mouse with which path carries what and why (for `pawl status` and
    /// `pawl devices`), in record order.
    pub fn mice(&self) -> Vec<MouseSummary> {
        self.mice
            .iter()
            .flatten()
            .map(|m| m.summary(&self.config, self.kernel))
            .collect()
    }

    /// Whether the `eventN` node `node` is in a mouse record already.
    pub(super) fn node_known(&self, node: &str) -> bool {
        self.mice
            .iter()
            .flatten()
            .flat_map(|m| &m.nodes)
            .any(|s| s.sys().is_some_and(|sys| sys.node == node))
    }

    /// The record of the HID device at `hid_dir` (never one for a node without a HID
    /// device: such a pointer is a mouse of its own).
    pub(super) fn mouse_of(&self, hid_dir: Option<&Path>) -> Option<usize> {
        let hid_dir = hid_dir?;
        self.mice.iter().position(|m| {
            m.as_ref()
                .is_some_and(|m| m.hid_dir.as_deref() == Some(hid_dir))
        })
    }

    /// A new, empty record (a free index reused).
    pub(super) fn new_mouse(&mut self, hid_dir: Option<PathBuf>) -> usize {
        let mouse = Some(Mouse::new(hid_dir));
        match self.mice.iter().position(Option::is_none) {
            Some(m) => {
                self.mice[m] = mouse;
                m
            }
            None => {
                self.mice.push(mouse);
                self.mice.len() - 1
            }
        }
    }

    /// Drops mouse `m`'s record when nothing is left of it.
    pub(super) fn drop_if_empty(&mut self, m: usize) {
        if let Some(slot) = self.mice.get_mut(m)
            && slot.as_ref().is_some_and(Mouse::is_empty)
        {
            *slot = None;
            self.devices_changed = true;
        }
    }

    /// Applies mouse `m`'s path decision ([`paths::decide`]): releases the pointer nodes
    /// it no longer grabs (HID++ now carries what they were grabbed for) and links the
    /// thumb wheel — diverted into the grabbed node with scroll transformed, else native.
    /// Nodes it would grab but that are not taken come back through [`Daemon::consider`]
    /// (rescan on reload). Run whenever a node is taken or released, an endpoint opens, or
    /// the config changes; cheap when nothing changed.
    #[cold]
    pub(super) fn apply_paths(&mut self, m: usize) {
        let Some(mouse) = self.mice.get(m).and_then(Option::as_ref) else {
            return;
        };
        let (routes, index) = mouse.routes(&self.config, self.kernel, None);
        log::debug!(
            "mouse {m} ({}): {:?}",
            mouse.hid_name().unwrap_or("?"),
            routes.mode
        );
        if !self.apply_kernel(m, paths::is_kernel_mode(&routes)) {
            // Its pins failed to open: decided again without kernel mode.
            return self.apply_paths(m);
        }
        for (p, n) in routes.pointers.iter().zip(&index) {
            let Some(n) = *n else { continue };
            let Some(mouse) = self.mice[m].as_ref() else {
                return;
            };
            if p.grab || !matches!(mouse.nodes[n], Slot::Active(_) | Slot::Waiting(_)) {
                continue;
            }
            let sys = mouse.nodes[n].sys().cloned();
            self.take_node(m, n, HIDPP_CARRIES);
            if let (Some(sys), Some(mouse)) = (sys, self.mice[m].as_mut()) {
                self.notes.insert(sys.node.clone(), Note::Skipped);
                mouse.nodes[n] = Slot::Carried(Box::new(sys));
            }
        }
        let Some(mouse) = self.mice[m].as_mut() else {
            return;
        };
        let target = routes.thumb_node.and_then(|i| index[i]);
        let Mouse {
            nodes,
            hidraw,
            thumb_node,
            ..
        } = mouse;
        if let Hidraw::Open(dev) = hidraw {
            if target != *thumb_node {
                match target.and_then(|n| nodes[n].sys()) {
                    Some(sys) => log::debug!(
                        "{}: thumb wheel scroll goes to {}",
                        dev.node().dev_path().display(),
                        sys.dev_path().display()
                    ),
                    None => log::debug!(
                        "{}: no grabbed pointer node with scroll transformed; thumb wheel native",
                        dev.node().dev_path().display()
                    ),
                }
            }
            if dev.thumb_wheel() != routes.thumb_mode {
                self.devices_changed = true;
            }
            dev.set_thumb_wheel(routes.thumb_mode, monotonic_now());
        }
        *thumb_node = target;
        // Kernel mode: a thumb-wheel write above may have reopened hidraw.
        self.sync_kernel(m);
        self.rearm();
    }
}

/// One line per part of `routes` (the mode first); `names` are the pointers' `eventN`.
fn path_lines(routes: &Routes, names: &[String], ctx: &Context) -> Vec<PathLine> {
    let mut lines = vec![
        PathLine::new("mode", routes.mode, ctx),
        PathLine::new("gesture button", routes.gesture_button, ctx),
        PathLine::new("thumb wheel", routes.thumb_wheel, ctx),
    ];
    let several = routes.pointers.len() > 1;
    for (p, name) in routes.pointers.iter().zip(names) {
        let tag = if several {
            format!(" ({name})")
        } else {
            String::new()
        };
        for (part, route) in [
            ("buttons", p.buttons),
            ("motion", p.motion),
            ("wheel", p.wheel),
        ] {
            lines.push(PathLine::new(&format!("{part}{tag}"), route, ctx));
        }
    }
    lines
}

/// What a running pawl would make of the pointer node `sys` now (for `pawl devices`
/// without a worker): the same [`paths::decide`] on the config, the node alone (as if
/// grabbed when it would be) and its HID++ endpoint as sysfs shows it (open and diverted
/// when this user may open it read-write, else failed). `None` when the config does not
/// handle the node or it is pawl's own.
pub fn predict(
    config: &Config,
    class_dir: &Path,
    sys: &crate::sysfs::SysDevice,
) -> Option<MouseSummary> {
    let decision = config.decide(&sys.info());
    if sys.is_pawl_device() || !decision.handle {
        return None;
    }
    let kernel = super::kernel_offers();
    let hid_dir = hid_dir_of(class_dir, &sys.node);
    let endpoint = match (config.hidpp.enabled, &hid_dir) {
        (true, Some(dir)) => crate::hidpp::scan(Path::new(crate::hidpp::SYS_CLASS_HIDRAW))
            .into_iter()
            .find(|n| &n.hid_dir == dir),
        _ => None,
    };
    let access = endpoint.as_ref().map(|n| {
        rustix::fs::access(
            n.dev_path(),
            rustix::fs::Access::READ_OK | rustix::fs::Access::WRITE_OK,
        )
    });
    let offer = match &access {
        None => Endpoint::Absent,
        Some(Ok(())) => Endpoint::Open(paths::Session::Diverted),
        Some(Err(_)) => Endpoint::Failed,
    };
    let pointer = |grabbed| Pointer {
        transform_scroll: decision.transform_scroll,
        grabbed,
    };
    let hid = hid_dir
        .as_deref()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .map(str::to_owned);
    let attachment = match &hid {
        Some(name) => bpf::pinned(name),
        None => Attachment::NoHidDevice,
    };
    let decide = |grabbed| {
        paths::decide(&Inputs {
            wants: paths::Wants::of(config),
            pointers: &[pointer(grabbed)],
            endpoint: offer,
            kernel,
            attachment,
        })
    };
    // As grabbed when pawl would grab it (a candidate first, like `Daemon::consider`).
    let grab = decide(false).pointers[0].grab;
    let routes = decide(grab);
    let failure = match &access {
        Some(Err(e)) if *e == rustix::io::Errno::ACCESS || *e == rustix::io::Errno::PERM => {
            Some("no permission to open it (see the README, Permissions)".to_owned())
        }
        Some(Err(e)) => Some(e.to_string()),
        _ => None,
    };
    let ctx = Context {
        hidraw: endpoint.as_ref().map_or("?", |n| n.node.as_str()),
        failure: failure.as_deref(),
        thumb_node: Some(sys.node.clone()),
        hid: hid.unwrap_or_else(|| "?".into()),
        bpf_failure: None,
        pins_uid: pins_uid(attachment),
    };
    Some(MouseSummary {
        name: sys.name.clone(),
        vendor: sys.vendor,
        product: sys.product,
        nodes: vec![NodeSummary {
            path: sys.dev_path(),
            state: if grab {
                NodeState::Grabbed
            } else {
                NodeState::NotGrabbed
            },
            clone: None,
        }],
        hidraw: endpoint.as_ref().map(crate::hidpp::HidrawNode::dev_path),
        paths: path_lines(&routes, std::slice::from_ref(&sys.node), &ctx),
        // A prediction has no session: `pawl devices` shows the mouse's own reads apart.
        settings: crate::hidpp::SettingsInForce::default(),
    })
}

/// What a reason's text needs to name.
struct Context<'a> {
    /// `hidrawN` of the endpoint.
    hidraw: &'a str,
    /// Why the endpoint could not be opened.
    failure: Option<&'a str>,
    /// `eventN` that takes the diverted thumb wheel.
    thumb_node: Option<String>,
    /// The HID device's sysfs name (kernel mode's pins are named by it).
    hid: String,
    /// Why its program's pins could not be opened.
    bpf_failure: Option<String>,
    /// Who has its program's pins, when another user does.
    pins_uid: Option<u32>,
}

/// The owner of another user's pins ([`Attachment::OtherUser`]), for the reason's text.
fn pins_uid(attachment: Attachment) -> Option<u32> {
    match attachment {
        Attachment::OtherUser { uid } => Some(uid),
        _ => None,
    }
}

/// A pointer node of a mouse, as reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSummary {
    /// `/dev/input/eventN`.
    pub path: PathBuf,
    /// Whether pawl grabs it.
    pub state: NodeState,
    /// Its clone's node, when grabbed and found.
    pub clone: Option<PathBuf>,
}

/// Whether pawl grabs a handled pointer node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Grabbed and cloned.
    Grabbed,
    /// Opened, to be grabbed once no button of it is down.
    Waiting,
    /// Not opened: nothing pawl does needs it (HID++ carries the gesture button).
    NotGrabbed,
}

impl NodeState {
    /// `grabbed`, `waiting`, `not-grabbed`.
    pub fn code(self) -> &'static str {
        match self {
            NodeState::Grabbed => "grabbed",
            NodeState::Waiting => "waiting",
            NodeState::NotGrabbed => "not-grabbed",
        }
    }
}

/// Which path carries one part of a mouse, and why, as `pawl status` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathLine {
    /// The part: `gesture button`, `thumb wheel`, `buttons`, `motion`, `wheel` (with
    /// ` (eventN)` when the mouse has several pointer nodes).
    pub part: String,
    /// The path.
    pub carrier: Carrier,
    /// The reason.
    pub why: Why,
    /// Both for people, e.g. `HID++ divert of CID 0x00C3 (hidraw3)`.
    pub text: String,
}

impl PathLine {
    fn new(part: &str, route: Route, ctx: &Context) -> PathLine {
        PathLine {
            part: part.to_owned(),
            carrier: route.carrier,
            why: route.why,
            text: text(part, route, ctx),
        }
    }
}

/// One handled mouse, as `pawl status` and `pawl devices` show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MouseSummary {
    /// Its name (its first pointer node's, else its HID++ endpoint's).
    pub name: String,
    /// Vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// Its pointer nodes the config handles.
    pub nodes: Vec<NodeSummary>,
    /// Its HID++ endpoint (`/dev/hidrawN`), open or failed.
    pub hidraw: Option<PathBuf>,
    /// Which path carries each part.
    pub paths: Vec<PathLine>,
    /// The mouse's own settings as its HID++ session read them; empty without one.
    pub settings: crate::hidpp::SettingsInForce,
}

const GRAB: &str = "grab + virtual device";

/// The text of a secondary reason (why HID++ or the grab is not used).
fn reason(why: Why, ctx: &Context) -> String {
    match why {
        Why::HidppOff => "HID++ off in config ([hidpp] enabled = false)".into(),
        Why::NoHidppInterface => "no HID++ interface".into(),
        Why::NoHidraw => "the kernel has no hidraw, which HID++ needs".into(),
        Why::HidppFailed => format!(
            "HID++ endpoint {} not opened: {}",
            ctx.hidraw,
            ctx.failure.unwrap_or("?")
        ),
        Why::HidppSettingUp => format!("HID++ setup on {} in progress", ctx.hidraw),
        Why::HidppOffline => format!(
            "the mouse does not answer HID++ on {} (asleep or out of range)",
            ctx.hidraw
        ),
        Why::HidppUnsupported => "the device speaks HID++ 1.0 only".into(),
        Why::HidppNoGestureButton => format!(
            "no gesture button (CID 0x{CID_GESTURE_BUTTON:04X}) to divert on {}",
            ctx.hidraw
        ),
        Why::ThumbWheelOff => {
            "HID++ thumb wheel off in config ([hidpp] thumb_wheel = false)".into()
        }
        Why::NoTransformedGrab => "no node of it is grabbed with scroll transformed".into(),
        Why::NoHandledPointer => "no pointer node of it is handled".into(),
        Why::HidppCarriesTheRest => "HID++ carries the gesture button; scroll not transformed and \
                                     no other button mapped"
            .into(),
        Why::WaitingForRelease => "once no button of it is down".into(),
        Why::KernelModeOff => "kernel mode off in config ([hidpp] kernel_mode = \"off\")".into(),
        Why::NoHidBpf => format!(
            "not kernel mode: kernel {} has no HID-BPF (needs 6.11+ with CONFIG_HID_BPF)",
            bpf::kernel_release()
        ),
        Why::LoaderMissing => format!(
            "not kernel mode: the loader {} is not installed",
            bpf::LOADER
        ),
        Why::NotAttached => format!(
            "not kernel mode: no program attached to {} (is the udev rule \
             71-pawl-kernel-mode.rules active? re-plug the mouse after installing it)",
            ctx.hid
        ),
        Why::AttachmentFailed => format!(
            "not kernel mode: the pins of {} could not be opened: {}",
            ctx.hid,
            ctx.bpf_failure.as_deref().unwrap_or("?")
        ),
        Why::PinsOfAnotherUser => match ctx.pins_uid {
            Some(0) => format!(
                "not kernel mode: the program on {} is attached for uid 0, root only (nobody \
                 was at seat0 when it was attached, e.g. at boot; pawl-kernel-reseat.path \
                 hands it to the user who logs in, and without systemd-logind `sudo {} \
                 reseat --uid UID` does)",
                ctx.hid,
                bpf::LOADER
            ),
            uid => format!(
                "not kernel mode: the program on {} is attached for uid {} (seat0's active \
                 user when it was attached; pawl-kernel-reseat.path hands it to the next \
                 one, and without systemd-logind `sudo {} reseat --uid UID` does)",
                ctx.hid,
                uid.map_or_else(|| "?".to_owned(), |u| u.to_string()),
                bpf::LOADER
            ),
        },
        Why::NotHid => "not kernel mode: no HID device".into(),
        Why::KernelModeNeedsHidpp => {
            "not kernel mode: it carries the gesture button as HID++ notifications, and HID++ \
             is not a path for this mouse"
                .into()
        }
        Why::ButtonsNeedGrab => {
            "not kernel mode: a mapped button needs the grab ([buttons])".into()
        }
        Why::Grabbed
        | Why::TransformedInKernel
        | Why::KernelMode
        | Why::GestureOnRing
        | Why::RawXyWhileHeld
        | Why::ScrollTransformed
        | Why::ScrollPassedThrough
        | Why::GestureDiverted
        | Why::ThumbWheelDiverted => String::new(),
    }
}

/// The text of one route of `part`.
fn text(part: &str, route: Route, ctx: &Context) -> String {
    match (route.carrier, route.why) {
        (Carrier::Bpf, Why::KernelMode) => format!(
            "kernel mode: pawl's HID-BPF program on {} (nothing grabbed)",
            ctx.hid
        ),
        (_, why) if part == "mode" => {
            let mode = match route.carrier {
                Carrier::Grab => "grab mode",
                Carrier::Hidpp => "HID++ only",
                _ => "not pawl's",
            };
            format!("{mode} ({})", reason(why, ctx))
        }
        (Carrier::Bpf, Why::GestureOnRing) => format!(
            "HID++ divert of CID 0x{CID_GESTURE_BUTTON:04X} ({} open only to divert), \
             notifications on the kernel program's ring",
            ctx.hidraw
        ),
        (Carrier::Bpf, _) => {
            "the kernel's node, transformed in the kernel by pawl's program".into()
        }
        (Carrier::Kernel, Why::KernelMode) => "the kernel's node (kernel mode)".into(),
        (Carrier::Hidpp, Why::GestureDiverted) => format!(
            "HID++ divert of CID 0x{CID_GESTURE_BUTTON:04X} ({}), raw XY while held",
            ctx.hidraw
        ),
        (Carrier::Hidpp, Why::ThumbWheelDiverted) => format!(
            "HID++ divert of 0x2150 ({}) into the virtual device of {}",
            ctx.hidraw,
            ctx.thumb_node.as_deref().unwrap_or("?")
        ),
        (Carrier::Grab, Why::Grabbed) => GRAB.into(),
        (Carrier::Grab, Why::RawXyWhileHeld) => {
            format!("{GRAB}; HID++ raw XY while the gesture button is held")
        }
        (Carrier::Grab, Why::ScrollTransformed) => format!("{GRAB}, transformed"),
        (Carrier::Grab, Why::ScrollPassedThrough) => format!("{GRAB}, passed through unchanged"),
        (Carrier::Grab, why) if part == "thumb wheel" => {
            format!("REL_HWHEEL through {GRAB} ({})", reason(why, ctx))
        }
        (Carrier::Grab, why) => format!("{GRAB} ({})", reason(why, ctx)),
        (Carrier::Kernel, why) => format!("the kernel's node, not pawl's ({})", reason(why, ctx)),
        (Carrier::Hidpp, why) => format!("HID++ ({})", reason(why, ctx)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::paths::Session;

    fn lines_for(endpoint: Endpoint, failure: Option<&str>, hidpp: bool) -> Vec<(String, String)> {
        let routes = paths::decide(&Inputs {
            wants: paths::Wants {
                hidpp,
                thumb_wheel: true,
                buttons_need_grab: false,
                kernel_mode: true,
            },
            pointers: &[Pointer {
                transform_scroll: true,
                grabbed: true,
            }],
            endpoint,
            kernel: KernelOffers {
                hidraw: true,
                hid_bpf: false,
                loader: false,
            },
            attachment: Attachment::NotAttached,
        });
        let ctx = Context {
            hidraw: "hidraw3",
            failure,
            thumb_node: Some("event5".into()),
            hid: "0005:046D:B034.0003".into(),
            bpf_failure: None,
            pins_uid: None,
        };
        path_lines(&routes, &["event5".into()], &ctx)
            .into_iter()
            .map(|l| (l.part, l.text))
            .collect()
    }

    #[test]
    fn path_lines_name_the_cid_the_hidraw_node_and_the_virtual_device() {
        let lines = lines_for(Endpoint::Open(Session::Diverted), None, true);
        let text = |part: &str| &lines.iter().find(|(p, _)| p == part).unwrap().1;
        assert_eq!(
            text("gesture button"),
            "HID++ divert of CID 0x00C3 (hidraw3), raw XY while held"
        );
        assert_eq!(
            text("thumb wheel"),
            "HID++ divert of 0x2150 (hidraw3) into the virtual device of event5"
        );
        assert_eq!(text("wheel"), "grab + virtual device, transformed");
        assert_eq!(
            text("motion"),
            "grab + virtual device; HID++ raw XY while the gesture button is held"
        );
        assert_eq!(text("buttons"), "grab + virtual device");
    }

    #[test]
    fn the_mode_line_says_kernel_mode_or_why_not() {
        let lines = |kernel: KernelOffers, attachment| {
            let routes = paths::decide(&Inputs {
                wants: paths::Wants {
                    hidpp: true,
                    thumb_wheel: true,
                    buttons_need_grab: false,
                    kernel_mode: true,
                },
                pointers: &[Pointer {
                    transform_scroll: true,
                    grabbed: true,
                }],
                endpoint: Endpoint::Open(Session::Diverted),
                kernel,
                attachment,
            });
            let ctx = Context {
                hidraw: "hidraw3",
                failure: None,
                thumb_node: None,
                hid: "0005:046D:B034.0003".into(),
                bpf_failure: None,
                pins_uid: pins_uid(attachment),
            };
            path_lines(&routes, &["event5".into()], &ctx)
                .into_iter()
                .map(|l| (l.part, l.carrier, l.text))
                .collect::<Vec<_>>()
        };
        let bpf = KernelOffers {
            hidraw: true,
            hid_bpf: true,
            loader: true,
        };
        let on = lines(bpf, Attachment::Attached);
        assert_eq!(
            on[0],
            (
                "mode".into(),
                Carrier::Bpf,
                "kernel mode: pawl's HID-BPF program on 0005:046D:B034.0003 (nothing grabbed)"
                    .into()
            )
        );
        let wheel = on.iter().find(|l| l.0 == "wheel").unwrap();
        assert_eq!(wheel.1, Carrier::Bpf);
        let gesture = &on[1];
        assert_eq!(gesture.1, Carrier::Bpf);
        assert!(gesture.2.contains("kernel program's ring"), "{}", gesture.2);
        let off = lines(bpf, Attachment::NotAttached);
        assert_eq!(off[0].1, Carrier::Grab);
        assert!(
            off[0].2.starts_with(
                "grab mode (not kernel mode: no program attached to 0005:046D:B034.0003"
            ),
            "{}",
            off[0].2
        );
        // Attached for the user who was at the seat when the mouse bound: that uid is named,
        // and how the pins follow the seat.
        let other = lines(bpf, Attachment::OtherUser { uid: 1001 });
        assert_eq!(other[0].1, Carrier::Grab);
        assert!(
            other[0].2.starts_with(
                "grab mode (not kernel mode: the program on 0005:046D:B034.0003 is attached \
                 for uid 1001 (seat0's active user"
            ) && other[0].2.contains("pawl-kernel-reseat.path"),
            "{}",
            other[0].2
        );
        // Root's pins (attached before anyone logged in): said so, not "seat0's user".
        let root = lines(bpf, Attachment::OtherUser { uid: 0 });
        assert!(
            root[0]
                .2
                .contains("attached for uid 0, root only (nobody was at seat0"),
            "{}",
            root[0].2
        );
    }

    #[test]
    fn path_lines_say_why_hidpp_is_not_used() {
        let gesture = |lines: Vec<(String, String)>| lines[1].1.clone();
        assert_eq!(
            gesture(lines_for(Endpoint::Absent, None, false)),
            "grab + virtual device (HID++ off in config ([hidpp] enabled = false))"
        );
        assert_eq!(
            gesture(lines_for(Endpoint::Absent, None, true)),
            "grab + virtual device (no HID++ interface)"
        );
        assert_eq!(
            gesture(lines_for(
                Endpoint::Failed,
                Some("no permission to open it"),
                true
            )),
            "grab + virtual device (HID++ endpoint hidraw3 not opened: no permission to open it)"
        );
        assert_eq!(
            lines_for(Endpoint::Absent, None, false)[2].1,
            "REL_HWHEEL through grab + virtual device (HID++ off in config ([hidpp] enabled = \
             false))"
        );
    }
}
