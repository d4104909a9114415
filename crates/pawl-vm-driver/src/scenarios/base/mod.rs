//! The initramfs boot (`--set base`, every kernel): uhid devices bound by the kernel's own
//! drivers, pawl's daemon, clone and virtual keyboard, HID++, kernel mode. Nothing of a
//! Debian userland: no udevd, no libinput.
//!
//! Adding a module: `mod NAME;` here, a `SCENARIOS` list at its top (as every module here
//! has) and `NAME::SCENARIOS,` in [`SCENARIOS`] below.

use crate::scenarios::Scenario;

pub(crate) mod drivers;
pub(crate) mod gestures;
pub(crate) mod hidpp;
pub(crate) mod hotplug;
pub(crate) mod kernel;
// Kernel mode: pawl's HID-BPF program attached by pawl-kernel-attach (7.x tier).
pub(crate) mod kernel_mode;
// Kernel mode end to end: pawl's daemon on the program (7.x tier; the fallback on 6.1).
pub(crate) mod kernel_daemon;
pub(crate) mod lifecycle;
pub(crate) mod swipe;

/// The boot's scenarios, module by module, in run order.
pub const SCENARIOS: &[&[Scenario]] = &[
    // The harness itself: what the kernel makes of the devices the driver creates, and the
    // static pawl binary running in the VM.
    kernel::SCENARIOS,
    // The kernel's Logitech drivers bound, as on a user's machine.
    drivers::SCENARIOS,
    // Gestures, wheel and motion through the clone, and what pawl leaves alone.
    gestures::SCENARIOS,
    // Lifecycle: one managed worker, the inspector, the device check.
    lifecycle::SCENARIOS,
    // Hotplug, signals, permissions: the daemon in real life.
    hotplug::SCENARIOS,
    // HID++: diversion, gestures and the thumb wheel through the mouse's hidraw node.
    hidpp::SCENARIOS,
    // Kernel mode: the HID-BPF program (needs HID-BPF: SKIP with the reason on 6.1).
    kernel_mode::SCENARIOS,
    // Kernel mode end to end: `pawl run` on the attached program.
    kernel_daemon::SCENARIOS,
    // Swipe style, read from the virtual touchpad's evdev node.
    swipe::SCENARIOS,
];
