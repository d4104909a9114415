//! Which application is focused, pushed by the desktop: one backend per desktop, chosen at
//! run time, each an fd the daemon's epoll loop waits on. Nothing polls: a focus change is
//! one wake-up, and nothing runs between them.
//!
//! Backends: [`hyprland`] (Hyprland's event socket), [`sway`] (sway's IPC), [`x11`]
//! (EWMH's `_NET_ACTIVE_WINDOW`), [`shell`] (GNOME Shell's extension or KWin's script
//! calling pawl on the session bus) and [`toplevel`] (any other Wayland compositor's
//! toplevel list: COSMIC's, or wlroots' for niri, wayfire, labwc, river), picked by
//! [`choose`] from the environment. The engine side is
//! [`pawl_engine::DeviceEngine::set_app`] with [`pawl_engine::Config::app_key`].

use std::ffi::{OsStr, OsString};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use pawl_engine::config::cut_title;

pub mod hyprland;
pub mod shell;
pub mod sway;
pub mod toplevel;
pub mod x11;

/// What a backend reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FocusEvent {
    /// This application is focused now (a Wayland `app_id`, or an X11 `WM_CLASS` class
    /// for an Xwayland window; on Hyprland, the window's class), its window titled
    /// `title` (`None`: not known; at most [`pawl_engine::config::MAX_TITLE_BYTES`]).
    App {
        /// The application id.
        id: String,
        /// The focused window's title.
        title: Option<String>,
    },
    /// A window without an id is focused, or the focused window closed.
    Unknown,
}

impl FocusEvent {
    /// [`FocusEvent::App`] with `title` cut by [`cut_title`] to its first 1 KiB at a character
    /// boundary (what the engine matches); an empty title counts as none.
    pub fn app(id: &str, title: Option<&str>) -> FocusEvent {
        let title = title
            .filter(|t| !t.is_empty())
            .map(|t| cut_title(t).to_owned());
        FocusEvent::App {
            id: id.to_owned(),
            title,
        }
    }
}

/// Connects to the desktop's Unix socket at `path` (sway's IPC, Hyprland's event socket, a
/// Wayland display) and checks who listens on it (`SO_PEERCRED`): this user or root (any
/// listener when pawl itself is root), never another user, who could have bound a path in a directory others can write (`/tmp`, a
/// stale socket after the desktop exited) and would then choose pawl's profiles.
///
/// # Errors
/// The connect's error, or `PermissionDenied` naming the listener's uid.
pub(crate) fn connect_own(path: &std::path::Path) -> std::io::Result<UnixStream> {
    let stream = UnixStream::connect(path)?;
    check_listener(&stream, &path.display().to_string())?;
    Ok(stream)
}

/// [`connect_own`]'s check of a connected `stream` (`what` names it in the error).
pub(crate) fn check_listener(stream: &UnixStream, what: &str) -> std::io::Result<()> {
    let peer = rustix::net::sockopt::socket_peercred(stream)?;
    let me = rustix::process::geteuid();
    if listener_trusted(peer.uid, me) {
        return Ok(());
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "{what} is served by uid {}, not by this user (uid {})",
            peer.uid.as_raw(),
            me.as_raw()
        ),
    ))
}

/// Whether a socket's listener running as `peer` may tell pawl (running as `me`) what is
/// focused: the same user, or root. A pawl run as root (a system-wide setup, the test VM)
/// follows the seat user's desktop, so it takes any listener.
fn listener_trusted(peer: rustix::process::Uid, me: rustix::process::Uid) -> bool {
    peer == me || peer.is_root() || me.is_root()
}

/// What a backend's [`read`](sway::Sway::read) found.
#[derive(Debug, PartialEq, Eq)]
pub enum Readout {
    /// The socket has nothing more now; the last focus change read, if any.
    Focus(Option<FocusEvent>),
    /// The desktop closed the connection (or it broke): the backend is gone.
    Closed,
}

/// Reads a non-blocking socket until it would block, handing each chunk (at most 4 KiB) to
/// `chunk`, which returns `false` when the stream is not the backend's protocol (the sway
/// and Hyprland backends; X11 answers packets on its socket as it reads, so it reads
/// itself). Returns
/// `false` when the peer closed the connection, the read failed, or `chunk` refused.
fn drain(stream: &mut impl std::io::Read, mut chunk: impl FnMut(&[u8]) -> bool) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                if !chunk(&buf[..n]) {
                    return false;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// `bytes` as text, less a character cut off at their end: X11 property reads and
/// Hyprland's event data stop at a byte count, not at a character boundary. `None` when
/// any other byte is not UTF-8.
fn utf8_before_cut(bytes: &[u8]) -> Option<&str> {
    match std::str::from_utf8(bytes) {
        Ok(t) => Some(t),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
}

/// `focus` as a [`Readout`], `None` when it repeats `last` (which it then replaces).
fn changed(last: &mut Option<FocusEvent>, focus: Option<FocusEvent>) -> Readout {
    match focus {
        Some(f) if last.as_ref() != Some(&f) => {
            *last = Some(f.clone());
            Readout::Focus(Some(f))
        }
        _ => Readout::Focus(None),
    }
}

/// The backend the environment calls for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Hyprland's event socket: the path to try ([`hyprland::socket2_paths`]).
    Hyprland(Vec<PathBuf>),
    /// sway's IPC socket, `$SWAYSOCK`.
    Sway(OsString),
    /// The X server `$DISPLAY` names.
    X11(String),
    /// GNOME Shell on Wayland, through pawl's extension ([`shell::Desktop::Gnome`]).
    Gnome,
    /// KDE Plasma's KWin on Wayland, through pawl's KWin script ([`shell::Desktop::Kde`]).
    Kde,
    /// Any other Wayland compositor, through its toplevel list ([`toplevel`]): the path of
    /// its socket ([`toplevel::socket_path`]).
    Toplevels(PathBuf),
    /// None; why, for `pawl status`.
    None(&'static str),
}

/// The environment variables [`choose`] reads, each `None` when unset.
#[derive(Clone, Copy, Debug, Default)]
pub struct Env<'a> {
    /// `$HYPRLAND_INSTANCE_SIGNATURE`, set by Hyprland for its session.
    pub hyprland_instance_signature: Option<&'a OsStr>,
    /// `$XDG_RUNTIME_DIR`, where Hyprland 0.40 and later put their sockets.
    pub xdg_runtime_dir: Option<&'a OsStr>,
    /// `$SWAYSOCK`, set by sway.
    pub swaysock: Option<&'a OsStr>,
    /// `$DISPLAY`, the X server.
    pub display: Option<&'a OsStr>,
    /// `$WAYLAND_DISPLAY`, set in any Wayland session.
    pub wayland_display: Option<&'a OsStr>,
    /// `$XDG_CURRENT_DESKTOP`, a colon-separated list (`GNOME`, `ubuntu:GNOME`, `KDE`).
    pub xdg_current_desktop: Option<&'a OsStr>,
    /// `$DBUS_SESSION_BUS_ADDRESS`, the session bus the GNOME and KDE backends serve on.
    pub dbus_session_bus_address: Option<&'a OsStr>,
}

/// Picks the backend from the environment (empty counts as unset), in this order:
/// Hyprland when `HYPRLAND_INSTANCE_SIGNATURE` is set (Hyprland sessions do not set
/// `SWAYSOCK`; the order only matters if both are); else sway when `SWAYSOCK` is set
/// (sway's IPC sees Wayland and Xwayland windows); else, in a Wayland session
/// (`WAYLAND_DISPLAY` set), GNOME when `XDG_CURRENT_DESKTOP` lists `GNOME` and KDE when it
/// lists `KDE`, both only with `DBUS_SESSION_BUS_ADDRESS` set; else, in any other Wayland
/// session, the compositor's toplevel list at [`toplevel::socket_path`] (`DISPLAY` is then
/// Xwayland's, whose active window is only ever an X11 client's, so it is not used); else
/// X11 when `DISPLAY` is set (an X11 session). `DISPLAY` must be UTF-8.
pub fn choose(env: Env<'_>) -> Choice {
    fn set(v: Option<&OsStr>) -> Option<&OsStr> {
        v.filter(|v| !v.is_empty())
    }
    if let Some(sig) = set(env.hyprland_instance_signature) {
        return Choice::Hyprland(hyprland::socket2_paths(env.xdg_runtime_dir, sig));
    }
    if let Some(sock) = set(env.swaysock) {
        return Choice::Sway(sock.to_owned());
    }
    if set(env.wayland_display).is_some() {
        let listed = |name: &str| {
            set(env.xdg_current_desktop)
                .and_then(|d| d.to_str())
                .is_some_and(|d| d.split(':').any(|n| n == name))
        };
        let desktop = if listed("GNOME") {
            Some(Choice::Gnome)
        } else if listed("KDE") {
            Some(Choice::Kde)
        } else {
            None
        };
        if let Some(choice) = desktop {
            if set(env.dbus_session_bus_address).is_none() {
                return Choice::None(
                    "none: a GNOME or KDE Wayland session without DBUS_SESSION_BUS_ADDRESS (its focus comes over the session bus)",
                );
            }
            return choice;
        }
    }
    if let Some(wayland) = set(env.wayland_display) {
        return match toplevel::socket_path(wayland, set(env.xdg_runtime_dir)) {
            Some(path) => Choice::Toplevels(path),
            None => Choice::None(
                "none: WAYLAND_DISPLAY names a socket in XDG_RUNTIME_DIR, which is unset or relative",
            ),
        };
    }
    match set(env.display) {
        Some(d) => match d.to_str() {
            Some(d) => Choice::X11(d.to_owned()),
            None => Choice::None("none: DISPLAY is not UTF-8"),
        },
        None => Choice::None(
            "none: neither HYPRLAND_INSTANCE_SIGNATURE, SWAYSOCK, WAYLAND_DISPLAY nor DISPLAY is set",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_user_or_root_may_serve_a_focus_socket() {
        use rustix::process::Uid;
        let me = Uid::from_raw(1000);
        assert!(listener_trusted(me, me));
        assert!(listener_trusted(Uid::ROOT, me));
        assert!(!listener_trusted(Uid::from_raw(1001), me));
        assert!(!listener_trusted(me, Uid::from_raw(1001)));
        assert!(listener_trusted(me, Uid::ROOT));
        // A socket this test serves is its own user's.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        connect_own(&path).unwrap();
        let missing = connect_own(&dir.path().join("none")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }

    fn os(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    fn env<'a>(
        swaysock: Option<&'a OsStr>,
        display: Option<&'a OsStr>,
        wayland: Option<&'a OsStr>,
    ) -> Env<'a> {
        Env {
            swaysock,
            display,
            wayland_display: wayland,
            ..Env::default()
        }
    }

    #[test]
    fn hyprland_wins_whenever_its_signature_is_set() {
        let e = Env {
            hyprland_instance_signature: os("abc_1700000000_123"),
            xdg_runtime_dir: os("/run/user/1000"),
            ..env(
                os("/run/user/1000/sway-ipc.sock"),
                os(":0"),
                os("wayland-1"),
            )
        };
        assert_eq!(
            choose(e),
            Choice::Hyprland(hyprland::socket2_paths(
                os("/run/user/1000"),
                OsStr::new("abc_1700000000_123")
            ))
        );
    }

    #[test]
    fn an_empty_hyprland_signature_counts_as_unset() {
        let e = Env {
            hyprland_instance_signature: os(""),
            ..env(os("/run/user/1000/sway-ipc.sock"), None, os("wayland-1"))
        };
        assert_eq!(
            choose(e),
            Choice::Sway("/run/user/1000/sway-ipc.sock".into())
        );
    }

    #[test]
    fn sway_wins_whenever_its_socket_is_named_without_hyprland() {
        assert_eq!(
            choose(env(
                os("/run/user/1000/sway-ipc.sock"),
                os(":0"),
                os("wayland-1")
            )),
            Choice::Sway("/run/user/1000/sway-ipc.sock".into())
        );
    }

    #[test]
    fn an_x11_session_uses_x11() {
        assert_eq!(choose(env(None, os(":0"), None)), Choice::X11(":0".into()));
        assert_eq!(
            choose(env(os(""), os(":1"), os(""))),
            Choice::X11(":1".into())
        );
    }

    #[test]
    fn another_wayland_session_uses_its_toplevel_list_never_xwayland() {
        let with_runtime = |display| Env {
            xdg_runtime_dir: os("/run/user/1000"),
            ..env(None, display, os("wayland-0"))
        };
        for display in [os(":0"), None] {
            assert_eq!(
                choose(with_runtime(display)),
                Choice::Toplevels("/run/user/1000/wayland-0".into())
            );
        }
        assert_eq!(
            choose(env(None, os(":0"), os("/tmp/wayland-9"))),
            Choice::Toplevels("/tmp/wayland-9".into())
        );
        // Without a runtime directory the socket cannot be found; Xwayland is no fallback.
        let Choice::None(why) = choose(env(None, os(":0"), os("wayland-0"))) else {
            panic!("a Wayland socket without XDG_RUNTIME_DIR chose a backend");
        };
        assert!(why.contains("XDG_RUNTIME_DIR"), "{why}");
    }

    fn desktop<'a>(current: &'a str, bus: Option<&'a OsStr>) -> Env<'a> {
        Env {
            xdg_current_desktop: os(current),
            dbus_session_bus_address: bus,
            ..env(None, os(":0"), os("wayland-0"))
        }
    }

    #[test]
    fn a_gnome_or_kde_wayland_session_uses_its_shell() {
        let bus = os("unix:path=/run/user/1000/bus");
        assert_eq!(choose(desktop("GNOME", bus)), Choice::Gnome);
        assert_eq!(choose(desktop("ubuntu:GNOME", bus)), Choice::Gnome);
        assert_eq!(choose(desktop("KDE", bus)), Choice::Kde);
        assert_eq!(choose(desktop("X-Generic:KDE", bus)), Choice::Kde);
    }

    #[test]
    fn a_desktop_is_matched_by_whole_names_in_the_list() {
        let bus = os("unix:path=/run/user/1000/bus");
        for other in ["GNOME-Classic-ish", "XFCE", "COSMIC", ""] {
            let e = Env {
                xdg_runtime_dir: os("/run/user/1000"),
                ..desktop(other, bus)
            };
            assert_eq!(
                choose(e),
                Choice::Toplevels("/run/user/1000/wayland-0".into()),
                "{other}"
            );
        }
    }

    #[test]
    fn gnome_and_kde_need_the_session_bus() {
        for d in ["GNOME", "KDE"] {
            let Choice::None(why) = choose(desktop(d, None)) else {
                panic!("{d} without DBUS_SESSION_BUS_ADDRESS chose a backend");
            };
            assert!(why.contains("DBUS_SESSION_BUS_ADDRESS"), "{why}");
            assert!(matches!(choose(desktop(d, os(""))), Choice::None(_)));
        }
    }

    #[test]
    fn gnome_or_kde_named_in_an_x11_session_still_uses_x11() {
        let e = Env {
            xdg_current_desktop: os("GNOME"),
            dbus_session_bus_address: os("unix:path=/run/user/1000/bus"),
            ..env(None, os(":0"), None)
        };
        assert_eq!(choose(e), Choice::X11(":0".into()));
    }

    #[test]
    fn sway_and_hyprland_win_over_the_desktop_list() {
        let e = Env {
            swaysock: os("/run/user/1000/sway-ipc.sock"),
            ..desktop("KDE", os("unix:path=/run/user/1000/bus"))
        };
        assert_eq!(
            choose(e),
            Choice::Sway("/run/user/1000/sway-ipc.sock".into())
        );
    }

    #[test]
    fn nothing_set_is_none() {
        assert!(matches!(choose(Env::default()), Choice::None(_)));
        assert!(matches!(choose(env(os(""), os(""), None)), Choice::None(_)));
    }
}
