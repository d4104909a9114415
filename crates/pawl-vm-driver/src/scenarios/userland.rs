//! The scenarios that need the Debian userland boot (`cargo xtask vm-test` boots a Debian
//! root over 9p for them, `pawl-vm-driver --set userland`): Debian's systemd-udevd with its
//! rules and hwdb, `libinput` and sway reading pawl's output. The tools they share are in
//! `userland_tools.rs`.

use crate::scenarios::{Scenario, compositor, libinput, swipe, udev};

/// Every userland scenario, in run order.
pub const SCENARIOS: &[Scenario] = scenarios![
    // udev: how Debian's rules and hwdb classify pawl's devices; the rule in contrib/.
    udev::udev_classifies_pawl_devices,
    udev::udev_rule_matches_mx_master,
    udev::udev_rule_gives_a_usb_clone_the_hwdb_entry,
    udev::udev_rule_marks_the_virtual_touchpad_external,
    // libinput: what every Wayland desktop reads from pawl's clone and virtual keyboard.
    libinput::libinput_reads_clone_wheel_v120,
    libinput::libinput_reads_clone_buttons,
    libinput::libinput_reads_virtual_keyboard_chord,
    libinput::libinput_quirks_apply_to_clone_as_to_mouse,
    // libinput reading the swipe style's virtual touchpad: the gestures GNOME and KDE get.
    swipe::swipe_gesture_libinput_sees_three_finger_swipe,
    swipe::swipe_gesture_vertical_is_overview_swipe,
    swipe::swipe_gesture_libinput_sees_four_finger_swipe_on_kde,
    swipe::swipe_gesture_libinput_no_jump_when_pawl_held_up,
    swipe::swipe_exit_mid_swipe_ends_the_libinput_swipe,
    swipe::swipe_reload_to_shortcut_mid_swipe_ends_the_libinput_swipe,
    // A real compositor on pawl's devices.
    compositor::compositor_workspace_follows_gesture,
    compositor::per_app_scroll_follows_focus_on_sway,
    compositor::per_app_gesture_action_follows_focus_on_sway,
    compositor::per_app_unknown_app_uses_the_device_profile,
    compositor::per_app_backend_gone_falls_back_and_says_so,
];
