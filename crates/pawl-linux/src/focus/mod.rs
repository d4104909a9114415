//! Which application is focused, pushed by the desktop: one backend per desktop, chosen at
//! run time, each an fd the daemon's epoll loop waits on. Nothing polls: a focus change is
//! one wake-up, and nothing runs between them.
//!
//! Backends: [`sway`] (sway's IPC) and [`x11`] (EWMH's `_NET_ACTIVE_WINDOW`), picked by
//! [`choose`] from the environment. The engine side is
//! [`pawl_engine::DeviceEngine::set_app`] with [`pawl_engine::Config::app_key`].

use std::ffi::{OsStr, OsString};

pub mod sway;
pub mod x11;

/// What a backend reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FocusEvent {
    /// This application is focused now (a Wayland `app_id`, or an X11 `WM_CLASS` class
    /// for an Xwayland window).
    App(String),
    /// A window without an id is focused, or the focused window closed.
    Unknown,
}

/// What a backend's [`read`](sway::Sway::read) found.
#[derive(Debug, PartialEq, Eq)]
pub enum Readout {
    /// The socket has nothing more now; the last focus change read, if any.
    Focus(Option<FocusEvent>),
    /// The desktop closed the connection (or it broke): the backend is gone.
    Closed,
}

/// The backend the environment calls for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// sway's IPC socket, `$SWAYSOCK`.
    Sway(OsString),
    /// The X server `$DISPLAY` names.
    X11(String),
    /// None; why, for `pawl status`.
    None(&'static str),
}

/// Picks the backend from `$SWAYSOCK`, `$DISPLAY` and `$WAYLAND_DISPLAY` (empty counts as
/// unset): sway when `SWAYSOCK` is set (sway's IPC sees Wayland and Xwayland windows);
/// else X11 when `DISPLAY` is set and `WAYLAND_DISPLAY` is not (an X11 session). A Wayland
/// session without sway gets none even with `DISPLAY` set: its X server is Xwayland, whose
/// active window is only ever an X11 client's, so every native Wayland window would read
/// as "no app" while `pawl status` named a backend. `DISPLAY` must be UTF-8.
pub fn choose(
    swaysock: Option<&OsStr>,
    display: Option<&OsStr>,
    wayland: Option<&OsStr>,
) -> Choice {
    fn set(v: Option<&OsStr>) -> Option<&OsStr> {
        v.filter(|v| !v.is_empty())
    }
    if let Some(sock) = set(swaysock) {
        return Choice::Sway(sock.to_owned());
    }
    match (set(display), set(wayland)) {
        (Some(_), Some(_)) => Choice::None(
            "none: a Wayland session without SWAYSOCK (only sway's IPC is supported there)",
        ),
        (Some(d), None) => match d.to_str() {
            Some(d) => Choice::X11(d.to_owned()),
            None => Choice::None("none: DISPLAY is not UTF-8"),
        },
        (None, Some(_)) => Choice::None(
            "none: a Wayland session without SWAYSOCK (only sway's IPC is supported there)",
        ),
        (None, None) => Choice::None("none: neither SWAYSOCK nor DISPLAY is set"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    #[test]
    fn sway_wins_whenever_its_socket_is_named() {
        assert_eq!(
            choose(
                os("/run/user/1000/sway-ipc.sock"),
                os(":0"),
                os("wayland-1")
            ),
            Choice::Sway("/run/user/1000/sway-ipc.sock".into())
        );
    }

    #[test]
    fn an_x11_session_uses_x11() {
        assert_eq!(choose(None, os(":0"), None), Choice::X11(":0".into()));
        assert_eq!(choose(os(""), os(":1"), os("")), Choice::X11(":1".into()));
    }

    #[test]
    fn xwayland_alone_is_not_a_focus_backend() {
        assert!(matches!(
            choose(None, os(":0"), os("wayland-0")),
            Choice::None(_)
        ));
        assert!(matches!(
            choose(None, None, os("wayland-0")),
            Choice::None(_)
        ));
    }

    #[test]
    fn nothing_set_is_none() {
        assert_eq!(
            choose(None, None, None),
            Choice::None("none: neither SWAYSOCK nor DISPLAY is set")
        );
        assert!(matches!(choose(os(""), os(""), None), Choice::None(_)));
    }
}
