//! The swipe style's touchpad: its geometry and the swipe's shape, shared by the engine
//! (which decides the finger offsets), the Linux backend (which creates the virtual
//! touchpad with these ranges) and `pawl replay` (which shows the frames).
//!
//! Units: touchpad units, [`TOUCHPAD_RES`] per mm on both axes (libinput divides by the
//! `ABS_X`/`ABS_Y` resolution to get mm). With `swipe_scale = 1.0` one mouse px is one
//! touchpad unit: 40 units/mm ≈ 1016 dpi, about a 1000 dpi mouse's count, so the fingers
//! move as far as the hand does. GNOME's swipe tracker maps 400 libinput units (~10 mm of
//! finger travel on a 1000 dpi-equivalent pad) to one workspace (`TOUCHPAD_BASE_WIDTH` in
//! gnome-shell's `js/ui/swipeTracker.js`); KWin commits a desktop switch past a fraction of
//! its own gesture distance or on a fast enough release.

/// Touchpad units per mm, both axes (`ABS_X`/`ABS_Y`/`ABS_MT_POSITION_*` resolution).
pub const TOUCHPAD_RES: i32 = 40;
/// Width of the virtual touchpad, touchpad units (160 mm).
pub const TOUCHPAD_WIDTH: i32 = 160 * TOUCHPAD_RES;
/// Height of the virtual touchpad, touchpad units (100 mm).
pub const TOUCHPAD_HEIGHT: i32 = 100 * TOUCHPAD_RES;
/// Distance between neighbouring fingers, touchpad units (15 mm: a relaxed hand; libinput
/// takes touches within about 40 mm of each other as one gesture).
pub const FINGER_SPACING: i32 = 15 * TOUCHPAD_RES;
/// The most fingers a swipe has (`BTN_TOOL_QUADTAP`).
pub const MAX_FINGERS: u8 = 4;
/// The fewest fingers of a swipe (libinput's swipe gestures have 3 or more; 2 is scroll).
pub const MIN_FINGERS: u8 = 3;
/// Mouse travel (px, the larger axis) while the gesture button is held before the fingers
/// go down: a click with a few px of jitter stays a click (3 px).
pub const SWIPE_SLOP_PX: u64 = 3;

/// Where the fingers go down: the middle of the pad (the press point; the pointer's
/// screen position is not the touchpad's business), touchpad units.
pub const ORIGIN: (i32, i32) = (TOUCHPAD_WIDTH / 2, TOUCHPAD_HEIGHT / 2);

/// The furthest the swipe's offset goes from [`ORIGIN`] on each axis, touchpad units:
/// every finger stays on the pad (a finger held at the edge stops moving; the drag has
/// gone 60+ mm by then, several workspaces).
pub const MAX_OFFSET: (i32, i32) = (
    TOUCHPAD_WIDTH / 2 - FINGER_SPACING * 2 - TOUCHPAD_RES,
    TOUCHPAD_HEIGHT / 2 - TOUCHPAD_RES,
);

/// Position of finger `i` (0-based) of `fingers` at swipe offset `(dx, dy)` (clamped to
/// [`MAX_OFFSET`]), touchpad units: the fingers in a row across the pad, centred on
/// [`ORIGIN`].
pub fn finger_position(i: u8, fingers: u8, dx: i32, dy: i32) -> (i32, i32) {
    let dx = dx.clamp(-MAX_OFFSET.0, MAX_OFFSET.0);
    let dy = dy.clamp(-MAX_OFFSET.1, MAX_OFFSET.1);
    // Twice the offset from the row's centre, so odd and even counts stay integers.
    let twice = 2 * i32::from(i) - (i32::from(fingers) - 1);
    (ORIGIN.0 + dx + twice * FINGER_SPACING / 2, ORIGIN.1 + dy)
}
