//! The documented default configuration text (`pawl config default`): every key with its
//! default value and allowed range. Parsing it gives [`super::Config::default_for`].

use crate::platform::Platform;

/// The commented default configuration for `platform`, as printed by
/// `pawl config default`. Parsing it gives [`Config::default_for`](crate::config::Config::default_for)`(platform)`.
pub fn default_config_text(platform: Platform) -> String {
    let (backend, on_back, on_forward, backends, buttons, desktop) = match platform {
        Platform::Linux => (
            "keys",
            "pass-through",
            "pass-through",
            "\"keys\" or \"command\"",
            "0..=15 on Linux: code - BTN_MOUSE for codes BTN_MOUSE..BTN_JOYSTICK",
            "# Whose shortcuts built-in actions press: \"auto\" (from XDG_CURRENT_DESKTOP), \"gnome\"\n\
             # (Super+Page_Up/Page_Down, Super) or \"kde\" (Ctrl+Meta+Left/Right, Meta+W).",
        ),
        Platform::MacOs => (
            "system-events",
            "back",
            "forward",
            "\"system-events\", \"cg-event\" or \"command\"",
            "0..=31 on macOS: the CGEvent button number",
            "# Whose shortcuts built-in actions press: \"auto\" or \"macos\" (Mission Control\n\
             # shortcuts; \"gnome\" and \"kde\" are Linux settings).",
        ),
    };
    DEFAULT_TEMPLATE
        .replace("{backend}", backend)
        .replace("{backends}", backends)
        .replace("{on_back}", on_back)
        .replace("{on_forward}", on_forward)
        .replace("{buttons}", buttons)
        .replace("{desktop}", desktop)
}

const DEFAULT_TEMPLATE: &str = r#"# pawl configuration: every key with its default value.
# Location: $XDG_CONFIG_HOME/pawl/config.toml (usually ~/.config/pawl/config.toml),
# or the file given with --config. A missing file means these defaults.
# `pawl config check` reports every problem with file:line:column.
# Buttons are 0-based: 0 left, 1 right, 2 middle, 3 back, 4 forward, 5.. extra buttons
# ({buttons}).
#
# An action is one of:
#   "desktop-left" "desktop-right" "overview" "app-expose" "show-desktop"
#   "back" "forward" "pass-through" (forward the click unchanged) "none" (swallow it)
#   { key = "Super+Page_Up" }             a key chord, pressed in order, released in reverse
#                                         (`pawl config keys` lists the key names)
#   { command = ["prog", "arg", ...] }    a program run directly (no shell)

[gesture]
# Button held for gestures. Not 0 (left): that would swallow every left drag. When it is
# also the back or forward button, the gesture takes the button: its default back/forward
# action no longer fires, and writing an on_back / on_forward other than "pass-through"
# for it is an error.
button = 5
# "shortcut": a drag past `threshold` fires the direction's action. "swipe" (Linux): the
# drag becomes a multi-finger swipe on a pawl virtual touchpad, so the workspaces follow
# the hand (GNOME 40+, KDE Plasma 6; `left`..`down` and `threshold` are then unused, a
# release without motion is still `click`).
style = "shortcut"
# Fingers of a swipe: "auto" (the desktop's: GNOME 3, KDE 4) or 3..=4.
fingers = "auto"
# Touchpad units (40 per mm) per mouse px of a swipe (0.1..=10.0; 1.0: the fingers move
# as far as a 1000 dpi mouse does).
swipe_scale = 1.0
# Travel along the dominant axis that fires a gesture, px (1..=10000).
threshold = 220
# Swap desktop-left/right: dragging left shows the desktop on the right.
invert_desktop = true
# Fire again for every further threshold of travel while held (at most 4 per motion
# event; a faster flick does not queue more).
repeat = false
left = "desktop-left"
right = "desktop-right"
up = "overview"
down = "app-expose"
# When released without a gesture.
click = "pass-through"

[buttons]
# Button numbers of back and forward (two different buttons) and what they do.
back = 3
forward = 4
on_back = "{on_back}"
on_forward = "{on_forward}"

# Any other button (not 0, not the gesture, back or forward button) may map to an action:
[buttons.map]
# 6 = "show-desktop"
# 7 = { key = "Super+A" }

[actions]
# How actions are performed: {backends}.
backend = "{backend}"
{desktop}
desktop = "auto"
# Run command actions even when pawl runs as root.
allow_root_commands = false

# Override the chord of a built-in action:
[actions.chords]
# desktop-left = "Super+Page_Up"

# Or run a command instead (Hyprland, sway, niri: see README). An action has one override,
# a chord or a command, and it applies with every backend; the backend decides only what
# an action without one does. At most 256 strings of at most 4096 bytes, no NUL byte.
[actions.commands]
# desktop-left = ["hyprctl", "dispatch", "workspace", "e-1"]

[scroll]
# Which wheels are transformed: "mx-master-only", "all-wheels", "none", or matchers
# like [{ id = "046d:b034" }, { name = "*MX Master*", bus = "bluetooth" }].
# Touchpads are never transformed. Global only (not in [device.scroll]).
scope = "mx-master-only"
invert_vertical = true
invert_horizontal = false
# "ema" (exponential moving average of the per-event delta) or "none".
smoothing = "ema"
# Weight of each new event in the average (0.01..=1.0; 1.0 = no smoothing).
smoothing_factor = 0.35
# Largest step per event, detents (0.1..=100).
max_step = 5.0
# An event larger than spike_ratio x the current average is limited to it (1..=100;
# 0 = no spike damping).
spike_ratio = 4.0
# A pause longer than this starts a new scroll gesture, ms (10..=10000).
gesture_gap_ms = 300
# "off", "carry" (travel held back by smoothing and max_step is released with later
# wheel input, no timer) or "glide" (after a fast scroll, a decaying tail once the wheel
# stops; slow scrolling never glides).
inertia = "off"
# carry: bound of the carried travel, detents (0..=50).
carry_limit = 3.0
# glide: velocity kept per tick (0.05..=0.99) and tick period, ms (4..=100).
glide_decay = 0.85
glide_interval_ms = 16
# Keys of a mode that is not selected (smoothing_factor with smoothing = "none",
# carry_limit or glide_* with another inertia) are accepted and kept for when it is.

[hidpp]
# Linux: divert the MX Master's thumb gesture button through Logitech HID++ (its hidraw
# node; temporarily, redone after a reconnect, undone on exit) so it works as the gesture
# button: without this the MX Master 3S sends nothing for it, older models a key
# combination. While it is held, movement comes as HID++ raw XY instead of pointer motion.
# Cost: the kernel hands every report of the mouse to hidraw readers too, so with its
# pointer node grabbed (scroll transformed) each motion report is read twice, once from
# evdev and once from hidraw; with [scroll] scope = "none" and every [buttons] action
# "pass-through" the pointer is not grabbed and motion costs one hidraw read, no write.
# Measured with the kernel's hid-logitech-hidpp bound: 2 reads, 1 write and 1 wake-up per
# motion frame instead of 1, 1, 1. Only MX Master endpoints are opened: other mice never
# cost anything. Set it false when logid or Solaar manage the mouse. Needs read-write
# access to /dev/hidrawN (contrib/70-pawl.rules).
# macOS: the same through IOHIDDevice; a Bluetooth MX Master needs the Input Monitoring
# permission for it (a Unifying/Bolt receiver needs none).
enabled = true
# With enabled: while the MX Master's pointer is grabbed with scroll transformed, divert
# its thumb wheel too (HID++ 0x2150, temporarily, undone on exit) and scroll it through
# [scroll] in 1/120 turn steps instead of whole ratchets (18 per turn on an MX Master 3).
# It scrolls the way it does without pawl, flipped by invert_horizontal like any
# horizontal wheel. false leaves it to the kernel's REL_HWHEEL (and to logid or Solaar).
thumb_wheel = true
# Linux: kernel mode. Where the kernel has HID-BPF (6.11+, CONFIG_HID_BPF) and pawl's
# loader attached its program to the MX Master (the udev rule 71-pawl-kernel-mode.rules),
# the kernel transforms the wheel (and thumb wheel) with [scroll] and hands the gesture
# button's HID++ notifications to pawl on a ring: the pointer is not grabbed, motion and
# scroll never wake pawl, hidraw is open only to divert. "off" keeps grab mode always
# (and leaves the program pass-through). pawl status / pawl devices say which mode each
# mouse runs in and why.
kernel_mode = "auto"
# Play a short haptic pulse (HID++ 0x19B0, damp state change) on a mouse that has haptics
# (the MX Master 4) each time a gesture of its HID++ gesture button fires an action.
haptic_on_gesture = false

# The MX Master 4's Sense Panel (its Actions Ring button, HID++ control 0x01A0): set a
# button number (0-based, not 0) and pawl diverts the panel (temporarily, redone after a
# reconnect, undone on exit) on a mouse that has it; its presses and releases become that
# button, mapped by [buttons.map]. Not 0..=4 (the mouse's own buttons), the gesture button
# (the panel draws no gestures) nor back or forward: e.g. 8. Unset (the default), the panel
# is left to the firmware.
# sense_panel = 8

# The mouse's own settings, written over HID++ during setup: at start, after every
# reconnection and after a reload (SIGHUP). Unset, pawl writes nothing and the mouse keeps
# what it has (Logitech Options+, Solaar or the firmware's default). [device.hidpp] sets
# them for the devices of one rule. pawl devices shows what the mouse reports back.
# Pointer speed (HID++ 0x2201), dpi (50..=25600). The mouse's own list decides what it
# takes (MX Master 3 200..=4000, MX Master 3S 200..=8000, in steps of 50); for a value
# not in it pawl writes nothing and logs the nearest supported one.
# dpi = 1600
# The wheel's ratchet (HID++ SmartShift 0x2111, else 0x2110): "ratchet" (always
# ratcheted), "free" (free spinning), or 1..=254: ratcheted, spinning free when turned
# faster than that (lower = frees sooner; logid's smartshift threshold).
# smartshift = "ratchet"
# The thumb wheel's own direction bit (HID++ 0x2150 invert, Solaar's thumb-scroll-invert),
# written as given: true sets the bit, false clears it. The mouse keeps it, with pawl or
# without, diverted or not. An MX Master 3 or 3S comes with it clear, an MX Master 4 with
# it set. A mouse without 0x2150 (the MX Master 2S, whose thumb wheel is plain HID) logs
# that it has none. dpi, smartshift, thumb_wheel_invert, sense_panel and haptic_on_gesture
# need enabled = true (config check refuses them without).
# thumb_wheel_invert = false

# Device rules, any number, in file order. Match by name glob, id "vvvv:pppp" and bus
# (at least one of them: name = "*" for every device);
# set handle = false to never touch a device (no other setting then), handle = true / mx_master = true to take
# one that is not in scope, and give it its own [device.scroll] settings (any [scroll]
# key but scope) and [device.hidpp] settings (dpi, smartshift, thumb_wheel_invert). When
# several rules match, a later rule overrides only the keys it sets.
# [[device]]
# name = "*MX Master*"
# id = "046d:c548"
# bus = "usb"
# mx_master = true
# [device.scroll]
# invert_vertical = false
# [device.hidpp]
# dpi = 1000

# Per-application settings, at most 64 tables, in file order. app_id is one id or a list
# (at most 32, each at most 255 bytes), matched exactly and case-sensitively: the Wayland
# app_id or X11 WM_CLASS class on Linux (swaymsg -t get_tree shows them), the bundle id
# on macOS. The focused application decides. device narrows a table to the devices a name
# glob (case-insensitive, as everywhere) or a matcher { name, id, bus } matches. A table
# overrides, on top of the device's profile: any [scroll] key but scope in [app.scroll];
# style, left, right, up, down and click in [app.gesture] (under a swipe style a drag
# fires no action, so left/right/up/down there need style = "shortcut"); on_back,
# on_forward and [app.buttons.map] in [app.buttons] (the button numbers stay those of
# [gesture] and [buttons]). When several tables name an application, a later one
# overrides only the keys it sets. A change of focus while the gesture button is held takes effect when it
# is released. title (a regular expression, at most 255 bytes, regex-lite syntax: (?i)
# ignores ASCII case only, ^ and $ anchor) limits a table to windows whose title matches
# (only its first 1 KiB is matched); it needs a backend that reports titles (sway,
# Hyprland, X11, GNOME, KDE, the Wayland window lists; not macOS), and at most 4 tables
# with a title may name one application.
# [[app]]
# app_id = ["steam_app_570", "org.remmina.Remmina"]
# [app.scroll]
# invert_vertical = false
# smoothing = "none"
"#;
