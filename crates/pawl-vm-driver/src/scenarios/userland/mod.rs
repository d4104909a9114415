//! The scenarios that need the Debian userland boot (`cargo xtask vm-test` boots a Debian
//! root over 9p for them, `pawl-vm-driver --set userland`): Debian's systemd-udevd with its
//! rules and hwdb, `libinput` and sway reading pawl's output, and an X11 session (Xvfb,
//! openbox) and GNOME Shell and KWin telling pawl which window is active. The tools they share (and the
//! base and systemd boots use too) are in `../userland_tools.rs`.

//!
//! Adding a module: `mod NAME;` here, a `SCENARIOS` list at its top and
//! `NAME::SCENARIOS,` in [`SCENARIOS`] below.

use crate::scenarios::Scenario;

pub(crate) mod compositor;
pub(crate) mod libinput;
pub(crate) mod shells;
pub(crate) mod swipe;
pub(crate) mod udev;
pub(crate) mod x11;

/// The boot's scenarios, module by module, in run order.
pub const SCENARIOS: &[&[Scenario]] = &[
    // udev: how Debian's rules and hwdb classify pawl's devices; the rule in contrib/.
    udev::SCENARIOS,
    // libinput: what every Wayland desktop reads from pawl's clone and virtual keyboard.
    libinput::SCENARIOS,
    // libinput reading the swipe style's virtual touchpad: the gestures GNOME and KDE get.
    swipe::SCENARIOS,
    // A real compositor on pawl's devices.
    compositor::SCENARIOS,
    // An X11 session: Xvfb, openbox and two xterms, pawl reading the active window.
    x11::SCENARIOS,
    // GNOME Shell and KWin, headless, telling pawl which window is focused.
    shells::SCENARIOS,
];
