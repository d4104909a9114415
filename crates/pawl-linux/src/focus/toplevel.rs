//! The Wayland toplevel lists: a compositor that lists its windows to clients and marks the
//! active one. Two protocols, tried in this order when the compositor offers them:
//!
//! - COSMIC: `ext_foreign_toplevel_list_v1` (wayland-protocols, staging) lists the windows
//!   with their `app_id` and title; `zcosmic_toplevel_info_v1` version 2 or later
//!   (cosmic-protocols' `cosmic-toplevel-info-unstable-v1.xml`) gives each one a
//!   `zcosmic_toplevel_handle_v1` whose `state` array says `activated` (2).
//! - wlroots (niri, wayfire, labwc, river; sway too, though sway's IPC is chosen there):
//!   `zwlr_foreign_toplevel_manager_v1` (wlr-protocols) gives each window a
//!   `zwlr_foreign_toplevel_handle_v1` with `app_id`, `title` and the same `state` array.
//!
//! Either way a window's changes come as events and apply at its `done`, so a focus move
//! (one window loses `activated`, another gains it) reads as one change. [`Windows`] is that
//! bookkeeping, pure; [`Toplevels`] owns the connection (wayland-client's pure-Rust backend,
//! no libwayland) for the daemon's epoll set. Nothing polls: the compositor writes when a
//! window changes.
//!
//! Size limits: one message, and so one `app_id` or title, is at most 4 KiB (wayland-backend's
//! receive buffer). An `app_id` over [`MAX_APP_ID_BYTES`] is kept as none (the window reads
//! as [`FocusEvent::Unknown`], as in the other backends), and a title is cut to
//! [`MAX_TITLE_BYTES`] (what the engine matches) as it arrives; at most [`MAX_WINDOWS`]
//! windows are tracked, each holding at most two of each (in force and pending), so the
//! text held is at most (255 + 1024) × 2 × 4096 bytes, 10 MiB. At most [`MAX_GLOBALS`]
//! globals are read at connect.

use std::collections::HashMap;
use std::hash::Hash;
use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use wayland_client::backend::{ObjectId, WaylandError};
use wayland_client::protocol::{wl_callback, wl_registry};
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle, event_created_child};
use wayland_protocols::ext::foreign_toplevel_list::v1::client::{
    ext_foreign_toplevel_handle_v1 as ext_handle, ext_foreign_toplevel_list_v1 as ext_list,
};
use wayland_protocols_wlr::foreign_toplevel::v1::client::{
    zwlr_foreign_toplevel_handle_v1 as wlr_handle, zwlr_foreign_toplevel_manager_v1 as wlr_manager,
};

use self::cosmic::toplevel_info::{
    zcosmic_toplevel_handle_v1 as cosmic_handle, zcosmic_toplevel_info_v1 as cosmic_info,
};
use super::{FocusEvent, Readout, changed};
use pawl_engine::config::{MAX_APP_ID_BYTES, MAX_TITLE_BYTES, cut_title};

/// Client code generated from the COSMIC protocol XML in `crates/pawl-linux/protocols/`
/// (copied unchanged from cosmic-protocols 0.2.0; the XML carries its own permissive
/// licence, the crate is GPL-3.0-only and so not a dependency).
#[allow(missing_docs, missing_debug_implementations, clippy::all)]
pub mod cosmic {
    /// `cosmic-workspace-unstable-v1.xml`: only its handle type is used, as the argument
    /// of `zcosmic_toplevel_handle_v1.workspace_enter`.
    pub mod workspace {
        use wayland_client;
        use wayland_client::protocol::*;
        pub mod __interfaces {
            use wayland_client::backend as wayland_backend;
            use wayland_client::protocol::__interfaces::*;
            wayland_scanner::generate_interfaces!("protocols/cosmic-workspace-unstable-v1.xml");
        }
        use self::__interfaces::*;
        wayland_scanner::generate_client_code!("protocols/cosmic-workspace-unstable-v1.xml");
    }
    /// `cosmic-toplevel-info-unstable-v1.xml`.
    pub mod toplevel_info {
        use super::workspace::*;
        use wayland_client;
        use wayland_client::protocol::*;
        use wayland_protocols::ext::foreign_toplevel_list::v1::client::*;
        use wayland_protocols::ext::workspace::v1::client::*;
        pub mod __interfaces {
            use super::super::workspace::__interfaces::*;
            use wayland_client::backend as wayland_backend;
            use wayland_client::protocol::__interfaces::*;
            use wayland_protocols::ext::foreign_toplevel_list::v1::client::__interfaces::*;
            use wayland_protocols::ext::workspace::v1::client::__interfaces::*;
            wayland_scanner::generate_interfaces!("protocols/cosmic-toplevel-info-unstable-v1.xml");
        }
        use self::__interfaces::*;
        wayland_scanner::generate_client_code!("protocols/cosmic-toplevel-info-unstable-v1.xml");
    }
}

/// The most windows tracked (4096). A compositor lists every window of the session; one
/// past this is not tracked, and while it is focused the focus reads as
/// [`FocusEvent::Unknown`]. With each window's `app_id` and title bounded (see the module
/// docs), the windows hold at most 10 MiB of text.
pub const MAX_WINDOWS: usize = 4096;

/// `activated` in the `state` arrays of both protocols (xdg-shell's state numbering).
pub const STATE_ACTIVATED: u32 = 2;

/// Whether a `state` array (native-endian `u32` values) holds [`STATE_ACTIVATED`].
pub fn is_activated(state: &[u8]) -> bool {
    state
        .chunks_exact(4)
        .any(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) == STATE_ACTIVATED)
}

/// One window: what its last `done` made true, and what has come since.
#[derive(Debug, Default)]
struct Window {
    app_id: String,
    title: String,
    activated: bool,
    pending: Pending,
}

#[derive(Debug, Default)]
struct Pending {
    app_id: Option<String>,
    title: Option<String>,
    activated: Option<bool>,
}

/// The windows a compositor listed, keyed by their handle, and which one is active. Pure:
/// the protocol's events in, [`Windows::focus`] out.
#[derive(Debug)]
pub struct Windows<K> {
    windows: HashMap<K, Window>,
    active: Option<K>,
}

impl<K> Default for Windows<K> {
    fn default() -> Self {
        Windows {
            windows: HashMap::new(),
            active: None,
        }
    }
}

impl<K: Eq + Hash + Clone> Windows<K> {
    /// A new window. `false` (and not tracked) past [`MAX_WINDOWS`].
    pub fn created(&mut self, key: K) -> bool {
        if self.windows.len() >= MAX_WINDOWS && !self.windows.contains_key(&key) {
            return false;
        }
        self.windows.entry(key).or_default();
        true
    }

    /// Its `app_id`, in force at its next `done`. One over [`MAX_APP_ID_BYTES`] (255) is
    /// kept as none, so the window reads as [`FocusEvent::Unknown`].
    pub fn app_id(&mut self, key: &K, app_id: String) {
        if let Some(w) = self.windows.get_mut(key) {
            let app_id = if app_id.len() > MAX_APP_ID_BYTES {
                String::new()
            } else {
                app_id
            };
            w.pending.app_id = Some(app_id);
        }
    }

    /// Its title, in force at its next `done`; kept cut by [`cut_title`] to its first
    /// [`MAX_TITLE_BYTES`] (1 KiB), all the engine matches.
    pub fn title(&mut self, key: &K, title: String) {
        if let Some(w) = self.windows.get_mut(key) {
            let title = if title.len() > MAX_TITLE_BYTES {
                cut_title(&title).to_owned()
            } else {
                title
            };
            w.pending.title = Some(title);
        }
    }

    /// Whether it is activated (its `state` array), in force at its next `done`.
    pub fn activated(&mut self, key: &K, activated: bool) {
        if let Some(w) = self.windows.get_mut(key) {
            w.pending.activated = Some(activated);
        }
    }

    /// Its `done`: what came since the last one is in force. A window that turns active is
    /// the active one; the active one turning inactive leaves none.
    pub fn done(&mut self, key: &K) {
        let Some(w) = self.windows.get_mut(key) else {
            return;
        };
        let p = std::mem::take(&mut w.pending);
        if let Some(a) = p.app_id {
            w.app_id = a;
        }
        if let Some(t) = p.title {
            w.title = t;
        }
        if let Some(a) = p.activated {
            w.activated = a;
        }
        if w.activated {
            self.active = Some(key.clone());
        } else if self.active.as_ref() == Some(key) {
            self.active = None;
        }
    }

    /// Every window's `done` at once (`zcosmic_toplevel_info_v1.done`).
    pub fn done_all(&mut self) {
        let keys: Vec<K> = self
            .windows
            .iter()
            .filter(|(_, w)| {
                w.pending.app_id.is_some()
                    || w.pending.title.is_some()
                    || w.pending.activated.is_some()
            })
            .map(|(k, _)| k.clone())
            .collect();
        // Deactivations first, so that a focus move never ends with none active.
        let (on, off): (Vec<K>, Vec<K>) = keys.into_iter().partition(|k| {
            self.windows[k]
                .pending
                .activated
                .unwrap_or(self.windows[k].activated)
        });
        for k in off.iter().chain(on.iter()) {
            self.done(k);
        }
    }

    /// It closed.
    pub fn closed(&mut self, key: &K) {
        self.windows.remove(key);
        if self.active.as_ref() == Some(key) {
            self.active = None;
        }
    }

    /// The active window as a [`FocusEvent`]: [`FocusEvent::Unknown`] when none is active or
    /// it has no `app_id` (or one over [`MAX_APP_ID_BYTES`]).
    pub fn focus(&self) -> FocusEvent {
        match self.active.as_ref().and_then(|k| self.windows.get(k)) {
            Some(w) if !w.app_id.is_empty() => FocusEvent::app(&w.app_id, Some(&w.title)),
            _ => FocusEvent::Unknown,
        }
    }
}

/// Which protocol a [`Toplevels`] speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `ext_foreign_toplevel_list_v1` + `zcosmic_toplevel_info_v1` (COSMIC).
    Cosmic,
    /// `zwlr_foreign_toplevel_manager_v1` (wlroots compositors, niri).
    Wlr,
}

impl Protocol {
    /// The name `pawl status` shows.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Cosmic => "cosmic (zcosmic_toplevel_info_v1)",
            Protocol::Wlr => "wayland (zwlr_foreign_toplevel_manager_v1)",
        }
    }
}

/// How long connecting may wait for each of its three round trips: a compositor that
/// does not answer in that time (stopped, wedged) is no backend. The same as X11's.
pub const CONNECT_TIMEOUT: Duration = super::x11::CONNECT_TIMEOUT;

/// The most globals read from the registry at connect; later ones are ignored. A desktop
/// offers about 40 to 80 (sway 1.7: 46).
pub const MAX_GLOBALS: usize = 1024;

/// What the event handlers write to.
#[derive(Debug, Default)]
struct State {
    /// The registry's globals as (name, interface, version), up to [`MAX_GLOBALS`].
    globals: Vec<(u32, String, u32)>,
    /// The current round trip's `wl_display.sync` was answered.
    synced: bool,
    /// Connect has bound its globals: the registry's later ones are ignored.
    bound: bool,
    windows: Windows<ObjectId>,
    /// The COSMIC info global, to ask for each listed window's state.
    cosmic: Option<cosmic_info::ZcosmicToplevelInfoV1>,
    /// The COSMIC state handle of each listed window, destroyed with it.
    cosmic_handles: HashMap<ObjectId, cosmic_handle::ZcosmicToplevelHandleV1>,
    /// The compositor said it will list no more (`finished`).
    finished: bool,
}

/// A connection to the compositor, listening to its toplevel list.
#[derive(Debug)]
pub struct Toplevels {
    conn: Connection,
    /// The connection's backend, which owns the socket [`Toplevels::fd`] lends.
    backend: wayland_client::backend::Backend,
    queue: EventQueue<State>,
    state: State,
    protocol: Protocol,
    last: Option<FocusEvent>,
}

/// The compositor's socket: `WAYLAND_DISPLAY` itself when absolute, else under
/// `XDG_RUNTIME_DIR` (wayland-client's rule). `None` without a runtime directory.
pub fn socket_path(
    wayland_display: &std::ffi::OsStr,
    runtime_dir: Option<&std::ffi::OsStr>,
) -> Option<std::path::PathBuf> {
    let display = Path::new(wayland_display);
    if display.is_absolute() {
        return Some(display.to_owned());
    }
    runtime_dir
        .filter(|d| Path::new(d).is_absolute())
        .map(|d| Path::new(d).join(display))
}

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

impl Toplevels {
    /// Connects to the compositor at `path`, binds the first protocol it offers (COSMIC's,
    /// then wlroots'), and reads the windows it lists now: three round trips (the
    /// registry, the list, COSMIC's states), each waiting at most `timeout`
    /// ([`CONNECT_TIMEOUT`] in the daemon). Errors: the socket, the handshake, no answer in
    /// time (`TimedOut`), or a compositor that offers neither protocol.
    pub fn connect(path: &Path, timeout: Duration) -> io::Result<Toplevels> {
        Toplevels::on_stream(super::connect_own(path)?, timeout)
    }

    /// [`Toplevels::connect`] on a socket already connected to the compositor.
    fn on_stream(stream: UnixStream, timeout: Duration) -> io::Result<Toplevels> {
        let conn = Connection::from_socket(stream).map_err(other)?;
        let mut queue = conn.new_event_queue::<State>();
        let qh = queue.handle();
        let mut state = State::default();
        let registry = conn.display().get_registry(&qh, ());
        roundtrip_within(&conn, &mut queue, &mut state, timeout)?;
        let bind = |state: &State, interface: &str, versions: std::ops::RangeInclusive<u32>| {
            state
                .globals
                .iter()
                .find(|(_, i, v)| i == interface && v >= versions.start())
                .map(|&(name, _, v)| (name, v.min(*versions.end())))
        };
        let cosmic = match (
            bind(
                &state,
                cosmic_info::ZcosmicToplevelInfoV1::interface().name,
                2..=3,
            ),
            bind(
                &state,
                ext_list::ExtForeignToplevelListV1::interface().name,
                1..=1,
            ),
        ) {
            (Some((info, iv)), Some((list, lv))) => {
                registry.bind::<ext_list::ExtForeignToplevelListV1, _, _>(list, lv, &qh, ());
                Some(registry.bind::<cosmic_info::ZcosmicToplevelInfoV1, _, _>(info, iv, &qh, ()))
            }
            _ => None,
        };
        let wlr = bind(
            &state,
            wlr_manager::ZwlrForeignToplevelManagerV1::interface().name,
            1..=3,
        );
        let protocol = if let Some(info) = cosmic {
            state.cosmic = Some(info);
            Protocol::Cosmic
        } else if let Some((name, version)) = wlr {
            registry.bind::<wlr_manager::ZwlrForeignToplevelManagerV1, _, _>(
                name,
                version,
                &qh,
                (),
            );
            Protocol::Wlr
        } else {
            return Err(other(
                "the compositor offers neither zcosmic_toplevel_info_v1 (version 2 or later, with ext_foreign_toplevel_list_v1) nor zwlr_foreign_toplevel_manager_v1",
            ));
        };
        // The list, then (COSMIC) each window's state handle and its first state.
        state.bound = true;
        state.globals = Vec::new();
        roundtrip_within(&conn, &mut queue, &mut state, timeout)?;
        roundtrip_within(&conn, &mut queue, &mut state, timeout)?;
        let mut t = Toplevels {
            backend: conn.backend(),
            conn,
            queue,
            state,
            protocol,
            last: None,
        };
        let first = t.state.windows.focus();
        t.last = Some(first);
        Ok(t)
    }

    /// The protocol bound.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The focus the windows listed at connect give (before any [`Toplevels::read`]).
    pub fn initial(&self) -> FocusEvent {
        self.state.windows.focus()
    }

    /// The socket, for the epoll set.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.backend.poll_fd()
    }

    /// Reads what the compositor sent (without blocking) and applies it: the focus if it
    /// changed, or [`Readout::Closed`] when the connection broke or the compositor stopped
    /// the list.
    pub fn read(&mut self) -> Readout {
        if let Some(guard) = self.queue.prepare_read() {
            match guard.read() {
                Ok(_) => {}
                Err(WaylandError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(WaylandError::Io(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Readout::Closed,
            }
        }
        if self.queue.dispatch_pending(&mut self.state).is_err() || self.state.finished {
            return Readout::Closed;
        }
        // Destroy requests sent while dispatching.
        if self.conn.flush().is_err() {
            return Readout::Closed;
        }
        changed(&mut self.last, Some(self.state.windows.focus()))
    }
}

/// One round trip: a `wl_display.sync`, dispatching what comes until its answer, waiting
/// at most `timeout` in all. wayland-client's own round trip waits forever. The deadline
/// is checked on every turn, before each read, so a compositor that keeps writing but
/// never answers the sync is given up on too.
fn roundtrip_within(
    conn: &Connection,
    queue: &mut EventQueue<State>,
    state: &mut State,
    timeout: Duration,
) -> io::Result<()> {
    let deadline = Instant::now() + timeout;
    state.synced = false;
    conn.display().sync(&queue.handle(), ());
    loop {
        queue.dispatch_pending(state).map_err(other)?;
        if state.synced {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the compositor did not answer within {} ms",
                    timeout.as_millis()
                ),
            ));
        }
        conn.flush().map_err(other)?;
        let Some(guard) = queue.prepare_read() else {
            continue;
        };
        let ready = {
            let fd = guard.connection_fd();
            let mut fds = [rustix::event::PollFd::new(
                &fd,
                rustix::event::PollFlags::IN | rustix::event::PollFlags::ERR,
            )];
            let left = rustix::time::Timespec {
                tv_sec: left.as_secs() as i64,
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            match rustix::event::poll(&mut fds, Some(&left)) {
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        };
        // Nothing came in time: the next turn's deadline check ends it.
        if ready == 0 {
            continue;
        }
        match guard.read() {
            Ok(_) => {}
            Err(WaylandError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(other(e)),
        }
    }
}

impl Dispatch<wl_registry::WlRegistry, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_registry::WlRegistry,
        event: wl_registry::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let wl_registry::Event::Global {
            name,
            interface,
            version,
        } = event
            && !state.bound
            && state.globals.len() < MAX_GLOBALS
        {
            state.globals.push((name, interface, version));
        }
    }
}

impl Dispatch<wl_callback::WlCallback, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_callback::WlCallback,
        _: wl_callback::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        state.synced = true;
    }
}

impl Dispatch<wlr_manager::ZwlrForeignToplevelManagerV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &wlr_manager::ZwlrForeignToplevelManagerV1,
        event: wlr_manager::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            // One past the limit is not tracked: its handle goes at once.
            wlr_manager::Event::Toplevel { toplevel } if !state.windows.created(toplevel.id()) => {
                toplevel.destroy();
            }
            wlr_manager::Event::Finished => state.finished = true,
            _ => {}
        }
    }

    event_created_child!(State, wlr_manager::ZwlrForeignToplevelManagerV1, [
        wlr_manager::EVT_TOPLEVEL_OPCODE => (wlr_handle::ZwlrForeignToplevelHandleV1, ()),
    ]);
}

impl Dispatch<wlr_handle::ZwlrForeignToplevelHandleV1, ()> for State {
    fn event(
        state: &mut Self,
        handle: &wlr_handle::ZwlrForeignToplevelHandleV1,
        event: wlr_handle::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let id = handle.id();
        let w = &mut state.windows;
        match event {
            wlr_handle::Event::AppId { app_id } => w.app_id(&id, app_id),
            wlr_handle::Event::Title { title } => w.title(&id, title),
            wlr_handle::Event::State { state } => w.activated(&id, is_activated(&state)),
            wlr_handle::Event::Done => w.done(&id),
            wlr_handle::Event::Closed => {
                w.closed(&id);
                handle.destroy();
            }
            _ => {}
        }
    }
}

impl Dispatch<ext_list::ExtForeignToplevelListV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ext_list::ExtForeignToplevelListV1,
        event: ext_list::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        match event {
            ext_list::Event::Toplevel { toplevel } => {
                let id = toplevel.id();
                match state.cosmic.as_ref() {
                    Some(info) if state.windows.created(id.clone()) => {
                        let h = info.get_cosmic_toplevel(&toplevel, qh, id.clone());
                        state.cosmic_handles.insert(id, h);
                    }
                    _ => toplevel.destroy(),
                }
            }
            ext_list::Event::Finished => state.finished = true,
            _ => {}
        }
    }

    event_created_child!(State, ext_list::ExtForeignToplevelListV1, [
        ext_list::EVT_TOPLEVEL_OPCODE => (ext_handle::ExtForeignToplevelHandleV1, ()),
    ]);
}

impl Dispatch<ext_handle::ExtForeignToplevelHandleV1, ()> for State {
    fn event(
        state: &mut Self,
        handle: &ext_handle::ExtForeignToplevelHandleV1,
        event: ext_handle::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let id = handle.id();
        let w = &mut state.windows;
        match event {
            ext_handle::Event::AppId { app_id } => w.app_id(&id, app_id),
            ext_handle::Event::Title { title } => w.title(&id, title),
            ext_handle::Event::Done => w.done(&id),
            ext_handle::Event::Closed => {
                w.closed(&id);
                if let Some(h) = state.cosmic_handles.remove(&id) {
                    h.destroy();
                }
                handle.destroy();
            }
            _ => {}
        }
    }
}

impl Dispatch<cosmic_info::ZcosmicToplevelInfoV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &cosmic_info::ZcosmicToplevelInfoV1,
        event: cosmic_info::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            cosmic_info::Event::Done => state.windows.done_all(),
            // Only sent to version 1 clients, or after `stop`; pawl binds 2 and never stops.
            cosmic_info::Event::Finished => state.finished = true,
            _ => {}
        }
    }

    event_created_child!(State, cosmic_info::ZcosmicToplevelInfoV1, [
        cosmic_info::EVT_TOPLEVEL_OPCODE => (cosmic_handle::ZcosmicToplevelHandleV1, ObjectId::null()),
    ]);
}

/// User data: the `ext_foreign_toplevel_handle_v1` the state handle extends.
impl Dispatch<cosmic_handle::ZcosmicToplevelHandleV1, ObjectId> for State {
    fn event(
        state: &mut Self,
        _: &cosmic_handle::ZcosmicToplevelHandleV1,
        event: cosmic_handle::Event,
        ext: &ObjectId,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let cosmic_handle::Event::State { state: s } = event {
            state.windows.activated(ext, is_activated(&s));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    fn app(id: &str, title: &str) -> FocusEvent {
        FocusEvent::app(id, Some(title))
    }

    /// A window listed with its properties and a `done`.
    fn listed(w: &mut Windows<u32>, key: u32, app_id: &str, title: &str, active: bool) {
        assert!(w.created(key));
        w.app_id(&key, app_id.into());
        w.title(&key, title.into());
        w.activated(&key, active);
        w.done(&key);
    }

    #[test]
    fn activated_is_state_two_in_a_native_endian_u32_array() {
        assert!(is_activated(&states(&[0, 2])));
        assert!(!is_activated(&states(&[0, 1, 3])));
        assert!(!is_activated(&[]));
        // A stray byte past the last whole u32 is not a state.
        assert!(!is_activated(&[2]));
    }

    #[test]
    fn the_activated_window_is_the_focus_and_changes_wait_for_done() {
        let mut w = Windows::default();
        assert_eq!(w.focus(), FocusEvent::Unknown);
        listed(&mut w, 1, "foot", "~", false);
        listed(&mut w, 2, "firefox", "News", true);
        assert_eq!(w.focus(), app("firefox", "News"));
        // A focus move: 2 loses `activated`, 1 gains it, each with its own `done`.
        w.activated(&2, false);
        w.activated(&1, true);
        assert_eq!(w.focus(), app("firefox", "News"), "nothing before a done");
        w.done(&2);
        assert_eq!(w.focus(), FocusEvent::Unknown);
        w.done(&1);
        assert_eq!(w.focus(), app("foot", "~"));
        // The title of the focused window changes.
        w.title(&1, "vim".into());
        w.done(&1);
        assert_eq!(w.focus(), app("foot", "vim"));
    }

    #[test]
    fn a_focus_move_in_either_done_order_ends_on_the_new_window() {
        let mut w = Windows::default();
        listed(&mut w, 1, "a", "", true);
        listed(&mut w, 2, "b", "", false);
        w.activated(&2, true);
        w.done(&2);
        w.activated(&1, false);
        w.done(&1);
        assert_eq!(w.focus(), FocusEvent::app("b", None));
    }

    #[test]
    fn done_all_applies_deactivations_before_activations() {
        let mut w = Windows::default();
        listed(&mut w, 1, "a", "", true);
        listed(&mut w, 2, "b", "", false);
        for _ in 0..2 {
            w.activated(&1, false);
            w.activated(&2, true);
            w.done_all();
            assert_eq!(w.focus(), FocusEvent::app("b", None));
            w.activated(&2, false);
            w.activated(&1, true);
            w.done_all();
            assert_eq!(w.focus(), FocusEvent::app("a", None));
        }
    }

    #[test]
    fn closing_the_focused_window_or_one_without_app_id_is_unknown() {
        let mut w = Windows::default();
        listed(&mut w, 1, "a", "t", true);
        w.closed(&1);
        assert_eq!(w.focus(), FocusEvent::Unknown);
        listed(&mut w, 2, "", "no id", true);
        assert_eq!(w.focus(), FocusEvent::Unknown);
        // Events for a window never listed (or closed) change nothing.
        w.activated(&9, true);
        w.done(&9);
        assert_eq!(w.focus(), FocusEvent::Unknown);
    }

    #[test]
    fn an_app_id_over_the_limit_is_unknown_as_in_the_other_backends() {
        // sway, Hyprland, X11 and the shell backends all turn an id longer than
        // MAX_APP_ID_BYTES into Unknown; so does a toplevel's app_id (up to 4 KiB).
        let mut w = Windows::default();
        let long = "x".repeat(pawl_engine::config::MAX_APP_ID_BYTES + 1);
        listed(&mut w, 1, &long, "t", true);
        assert_eq!(w.focus(), FocusEvent::Unknown);
        let just = "x".repeat(pawl_engine::config::MAX_APP_ID_BYTES);
        listed(&mut w, 2, &just, "t", true);
        assert_eq!(w.focus(), app(&just, "t"));
    }

    #[test]
    fn a_long_title_is_kept_cut_to_what_the_engine_matches() {
        let mut w = Windows::default();
        let long = "\u{e9}".repeat(MAX_TITLE_BYTES);
        listed(&mut w, 1, "foot", &long, true);
        let kept = &w.windows[&1].title;
        assert_eq!(kept, cut_title(&long));
        assert!(kept.capacity() <= MAX_TITLE_BYTES, "{}", kept.capacity());
        assert_eq!(w.focus(), app("foot", &long), "the same focus as uncut");
    }

    #[test]
    fn windows_past_the_limit_are_not_tracked() {
        let mut w = Windows::default();
        for k in 0..MAX_WINDOWS as u32 {
            assert!(w.created(k));
        }
        assert!(!w.created(MAX_WINDOWS as u32));
        w.activated(&(MAX_WINDOWS as u32), true);
        w.done(&(MAX_WINDOWS as u32));
        assert_eq!(w.focus(), FocusEvent::Unknown);
        // A listed one still counts.
        assert!(w.created(0));
    }

    /// A Wayland message: object, opcode, then 32-bit words.
    fn message(object: u32, opcode: u16, words: &[u32]) -> Vec<u8> {
        let size = 8 + 4 * words.len() as u32;
        let mut m = [object, size << 16 | u32::from(opcode)].to_vec();
        m.extend_from_slice(words);
        m.iter().flat_map(|w| w.to_ne_bytes()).collect()
    }

    /// A compositor on a fresh socket that answers the registry round trip with
    /// `wl_compositor` only, or (`answer == false`) reads and never answers.
    fn fake_compositor(answer: bool) -> (tempfile::TempDir, std::thread::JoinHandle<()>) {
        use std::io::{Read, Write};
        let dir = tempfile::tempdir().unwrap();
        let listener =
            std::os::unix::net::UnixListener::bind(dir.path().join("wayland-0")).unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            // get_registry (new id 2) and sync (new id 3): 12 bytes each.
            let mut request = [0u8; 24];
            s.read_exact(&mut request).unwrap();
            if !answer {
                // Hold the socket open until the client gives up.
                let _ = s.read(&mut [0u8; 1]);
                return;
            }
            let name = b"wl_compositor\0\0\0";
            let mut global = vec![1u32, 14];
            global.extend(
                name.chunks(4)
                    .map(|c| u32::from_ne_bytes(c.try_into().unwrap())),
            );
            global.push(4);
            let mut reply = message(2, 0, &global);
            reply.extend(message(3, 0, &[1])); // wl_callback.done
            reply.extend(message(1, 1, &[3])); // wl_display.delete_id
            s.write_all(&reply).unwrap();
            let _ = s.read(&mut [0u8; 1]);
        });
        (dir, server)
    }

    #[test]
    fn a_compositor_without_a_toplevel_list_is_refused_with_the_protocols_named() {
        let (dir, server) = fake_compositor(true);
        let e =
            Toplevels::connect(&dir.path().join("wayland-0"), Duration::from_secs(10)).unwrap_err();
        assert!(
            e.to_string()
                .contains("offers neither zcosmic_toplevel_info_v1"),
            "{e}"
        );
        server.join().unwrap();
    }

    #[test]
    fn a_compositor_that_does_not_answer_is_given_up_on_after_the_timeout() {
        let (dir, server) = fake_compositor(false);
        let e = Toplevels::connect(&dir.path().join("wayland-0"), Duration::from_millis(50))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains("did not answer within 50 ms"), "{e}");
        server.join().unwrap();
    }

    #[test]
    fn a_compositor_that_talks_but_never_answers_is_given_up_on_too() {
        // Once the deadline has passed nothing more is read, however much the compositor
        // has sent: one that keeps writing but never answers the sync cannot hold connect,
        // and so the daemon's start. Deterministic: the timeout is zero and the globals are
        // in the socket before connect starts, so any read at all is one past the deadline;
        // no thread writes, so none is left behind.
        use std::io::{Read, Write};
        let (client, mut server) = UnixStream::pair().unwrap();
        let mut peek = client.try_clone().unwrap();
        let name = b"wl_seat\0";
        let mut global = vec![1u32, 8];
        global.extend(
            name.chunks(4)
                .map(|c| u32::from_ne_bytes(c.try_into().unwrap())),
        );
        global.push(1);
        let event = message(2, 0, &global).repeat(64);
        server.write_all(&event).unwrap();
        let got = Toplevels::on_stream(client, Duration::ZERO).map(drop);
        assert!(
            matches!(&got, Err(e) if e.kind() == io::ErrorKind::TimedOut),
            "connect with a zero timeout: {got:?}"
        );
        peek.set_nonblocking(true).unwrap();
        let mut unread = vec![0u8; event.len() + 1];
        let mut n = 0;
        while let Ok(k @ 1..) = peek.read(&mut unread[n..]) {
            n += k;
        }
        assert_eq!(n, event.len(), "bytes left unread of those sent");
    }

    #[test]
    fn socket_path_follows_wayland_clients_rule() {
        use std::ffi::OsStr;
        assert_eq!(
            socket_path(OsStr::new("wayland-1"), Some(OsStr::new("/run/user/1000"))),
            Some("/run/user/1000/wayland-1".into())
        );
        assert_eq!(
            socket_path(OsStr::new("/tmp/w"), None),
            Some("/tmp/w".into())
        );
        assert_eq!(socket_path(OsStr::new("wayland-1"), None), None);
        assert_eq!(
            socket_path(OsStr::new("wayland-1"), Some(OsStr::new("rel"))),
            None
        );
    }
}
