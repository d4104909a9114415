//! Which application is focused, pushed by the desktop: one backend per desktop, chosen at
//! run time, each an fd the daemon's epoll loop waits on. Nothing polls: a focus change is
//! one wake-up, and nothing runs between them.
//!
//! Backends: [`sway`] (sway's IPC, chosen when `SWAYSOCK` is set). The engine side is
//! [`pawl_engine::DeviceEngine::set_app`] with [`pawl_engine::Config::app_key`].

pub mod sway;

/// What a backend reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FocusEvent {
    /// This application is focused now (a Wayland `app_id`, or an X11 `WM_CLASS` class
    /// for an Xwayland window).
    App(String),
    /// A window without an id is focused, or the focused window closed.
    Unknown,
}
