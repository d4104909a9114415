//! CoreGraphics numbers the worker speaks: event types, event fields, flag masks and the
//! marker on pawl's own events.
//!
//! They are plain numbers here so the decision code compiles and is tested on every
//! platform; the macOS host passes them to `objc2-core-graphics` as `CGEventType(n)` /
//! `CGEventField(n)`. Source of every value: Apple's `CGEventTypes.h` (the same numbers as
//! the generated `objc2_core_graphics::CGEventType` / `CGEventField` constants), except
//! where a constant says otherwise.

/// A `CGEventType` number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventType(pub u32);

impl EventType {
    /// `kCGEventLeftMouseDown`.
    pub const LEFT_MOUSE_DOWN: EventType = EventType(1);
    /// `kCGEventLeftMouseUp`.
    pub const LEFT_MOUSE_UP: EventType = EventType(2);
    /// `kCGEventRightMouseDown`.
    pub const RIGHT_MOUSE_DOWN: EventType = EventType(3);
    /// `kCGEventRightMouseUp`.
    pub const RIGHT_MOUSE_UP: EventType = EventType(4);
    /// `kCGEventMouseMoved`.
    pub const MOUSE_MOVED: EventType = EventType(5);
    /// `kCGEventLeftMouseDragged`.
    pub const LEFT_MOUSE_DRAGGED: EventType = EventType(6);
    /// `kCGEventRightMouseDragged`.
    pub const RIGHT_MOUSE_DRAGGED: EventType = EventType(7);
    /// `kCGEventKeyDown`.
    pub const KEY_DOWN: EventType = EventType(10);
    /// `kCGEventKeyUp`.
    pub const KEY_UP: EventType = EventType(11);
    /// `kCGEventFlagsChanged`.
    pub const FLAGS_CHANGED: EventType = EventType(12);
    /// `kCGEventScrollWheel`.
    pub const SCROLL_WHEEL: EventType = EventType(22);
    /// `kCGEventOtherMouseDown` (buttons 2 and up).
    pub const OTHER_MOUSE_DOWN: EventType = EventType(25);
    /// `kCGEventOtherMouseUp`.
    pub const OTHER_MOUSE_UP: EventType = EventType(26);
    /// `kCGEventOtherMouseDragged`: motion while an other-button is held.
    pub const OTHER_MOUSE_DRAGGED: EventType = EventType(27);
    /// `kCGEventTapDisabledByTimeout` (0xFFFFFFFE): the tap's callback took too long and
    /// the window server disabled it.
    pub const TAP_DISABLED_BY_TIMEOUT: EventType = EventType(0xFFFF_FFFE);
    /// `kCGEventTapDisabledByUserInput` (0xFFFFFFFF): the tap was disabled by user input
    /// (secure input, the permission being changed).
    pub const TAP_DISABLED_BY_USER_INPUT: EventType = EventType(0xFFFF_FFFF);

    /// The event's bit in a `CGEventMask` (`CGEventMaskBit(type)` = `1 << type`); 0 for the
    /// tap-disabled pseudo-types, which are always delivered.
    pub const fn mask_bit(self) -> u64 {
        if self.0 < 64 { 1 << self.0 } else { 0 }
    }

    /// A short name for logs (`other-mouse-down`, `scroll-wheel`, …).
    pub fn name(self) -> &'static str {
        match self {
            EventType::LEFT_MOUSE_DOWN => "left-mouse-down",
            EventType::LEFT_MOUSE_UP => "left-mouse-up",
            EventType::RIGHT_MOUSE_DOWN => "right-mouse-down",
            EventType::RIGHT_MOUSE_UP => "right-mouse-up",
            EventType::MOUSE_MOVED => "mouse-moved",
            EventType::LEFT_MOUSE_DRAGGED => "left-mouse-dragged",
            EventType::RIGHT_MOUSE_DRAGGED => "right-mouse-dragged",
            EventType::KEY_DOWN => "key-down",
            EventType::KEY_UP => "key-up",
            EventType::FLAGS_CHANGED => "flags-changed",
            EventType::SCROLL_WHEEL => "scroll-wheel",
            EventType::OTHER_MOUSE_DOWN => "other-mouse-down",
            EventType::OTHER_MOUSE_UP => "other-mouse-up",
            EventType::OTHER_MOUSE_DRAGGED => "other-mouse-dragged",
            EventType::TAP_DISABLED_BY_TIMEOUT => "tap-disabled-by-timeout",
            EventType::TAP_DISABLED_BY_USER_INPUT => "tap-disabled-by-user-input",
            _ => "other",
        }
    }
}

/// A `CGEventField` number, read with `CGEventGetIntegerValueField` /
/// `CGEventGetDoubleValueField`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field(pub u32);

impl Field {
    /// `kCGMouseEventButtonNumber`: 0-based button number (pawl's numbering on macOS).
    pub const MOUSE_BUTTON_NUMBER: Field = Field(3);
    /// `kCGMouseEventDeltaX`: horizontal motion since the last mouse event, px.
    pub const MOUSE_DELTA_X: Field = Field(4);
    /// `kCGMouseEventDeltaY`: vertical motion, px, positive = down.
    pub const MOUSE_DELTA_Y: Field = Field(5);
    /// `kCGKeyboardEventKeycode`: the virtual key code.
    pub const KEYBOARD_KEYCODE: Field = Field(9);
    /// `kCGScrollWheelEventDeltaAxis1`: vertical scroll in whole lines, positive = up.
    pub const SCROLL_DELTA_AXIS1: Field = Field(11);
    /// `kCGScrollWheelEventDeltaAxis2`: horizontal scroll in whole lines, positive = left.
    pub const SCROLL_DELTA_AXIS2: Field = Field(12);
    /// `kCGScrollWheelEventFixedPtDeltaAxis1`: vertical scroll in lines, 16.16 fixed point
    /// (read and written as a double).
    pub const SCROLL_FIXED_PT_DELTA_AXIS1: Field = Field(93);
    /// `kCGScrollWheelEventFixedPtDeltaAxis2`: horizontal, 16.16 fixed-point lines.
    pub const SCROLL_FIXED_PT_DELTA_AXIS2: Field = Field(94);
    /// `kCGScrollWheelEventPointDeltaAxis1`: vertical scroll in pixels.
    pub const SCROLL_POINT_DELTA_AXIS1: Field = Field(96);
    /// `kCGScrollWheelEventPointDeltaAxis2`: horizontal scroll in pixels.
    pub const SCROLL_POINT_DELTA_AXIS2: Field = Field(97);
    /// `kCGScrollWheelEventScrollPhase`: non-zero for trackpad / Magic Mouse gestures.
    pub const SCROLL_PHASE: Field = Field(99);
    /// `kCGScrollWheelEventMomentumPhase`: non-zero for the system's momentum tail.
    pub const SCROLL_MOMENTUM_PHASE: Field = Field(123);
    /// `kCGScrollWheelEventIsContinuous`: 1 for pixel-precise devices (trackpad, Magic
    /// Mouse), 0 for a line-based wheel.
    pub const SCROLL_IS_CONTINUOUS: Field = Field(88);
    /// `kCGEventSourceUserData`: 64 bits the poster chose; pawl writes [`PAWL_MARKER`].
    pub const SOURCE_USER_DATA: Field = Field(42);
    /// `kCGEventSourceStateID`: the source state the event came from;
    /// [`SOURCE_STATE_HID_SYSTEM`] for hardware.
    pub const SOURCE_STATE_ID: Field = Field(45);
    /// Field 87: the IORegistry entry ID of the IOHIDEventService that sent the event (0
    /// when posted by software). Not in the public header; used by every per-device scroll
    /// tool on macOS (measured by them: it is the `RegistryID` shown by `ioreg`).
    pub const SENDER_REGISTRY_ID: Field = Field(87);
}

/// `kCGEventSourceStateHIDSystemState` (1): the state of events coming from hardware; an
/// event with another source state was posted by software ("synthetic").
pub const SOURCE_STATE_HID_SYSTEM: i64 = 1;

/// What pawl writes into [`Field::SOURCE_USER_DATA`] of every event it posts (`"pawl"` in
/// ASCII), so its taps pass them through untouched.
pub const PAWL_MARKER: i64 = 0x7061_776c;

/// `CGEventFlags` modifier masks (`CGEventTypes.h`; the same bits as `NSEventModifierFlags`
/// in `com.apple.symbolichotkeys`).
pub mod flags {
    /// `kCGEventFlagMaskShift`.
    pub const SHIFT: u64 = 0x0002_0000;
    /// `kCGEventFlagMaskControl`.
    pub const CONTROL: u64 = 0x0004_0000;
    /// `kCGEventFlagMaskAlternate` (Option).
    pub const ALTERNATE: u64 = 0x0008_0000;
    /// `kCGEventFlagMaskCommand`.
    pub const COMMAND: u64 = 0x0010_0000;
    /// `kCGEventFlagMaskNumericPad`: set on arrow keys.
    pub const NUMERIC_PAD: u64 = 0x0020_0000;
    /// `kCGEventFlagMaskSecondaryFn`: set on arrow and function keys.
    pub const SECONDARY_FN: u64 = 0x0080_0000;
}

/// Pixels per scroll line: "by default, the scale is about ten pixels per line" (Apple,
/// `CGEventSourceSetPixelsPerLine`).
pub const PIXELS_PER_LINE: f64 = 10.0;

/// Event masks of the taps.
pub mod masks {
    use super::EventType;

    /// The primary tap (active, head insert): other-button down/up and the wheel, which
    /// may be suppressed or modified.
    pub const PRIMARY: u64 = EventType::OTHER_MOUSE_DOWN.mask_bit()
        | EventType::OTHER_MOUSE_UP.mask_bit()
        | EventType::SCROLL_WHEEL.mask_bit();

    /// The movement tap: motion, enabled only while the gesture button is held.
    pub const MOVEMENT: u64 =
        EventType::OTHER_MOUSE_DRAGGED.mask_bit() | EventType::MOUSE_MOVED.mask_bit();

    /// Every pointer event: inspector and debug modes.
    pub const COMPLETE: u64 = PRIMARY
        | MOVEMENT
        | EventType::LEFT_MOUSE_DOWN.mask_bit()
        | EventType::LEFT_MOUSE_UP.mask_bit()
        | EventType::RIGHT_MOUSE_DOWN.mask_bit()
        | EventType::RIGHT_MOUSE_UP.mask_bit()
        | EventType::LEFT_MOUSE_DRAGGED.mask_bit()
        | EventType::RIGHT_MOUSE_DRAGGED.mask_bit();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_hold_exactly_the_events_of_each_tap() {
        assert_eq!(masks::PRIMARY, (1 << 25) | (1 << 26) | (1 << 22));
        assert_eq!(masks::MOVEMENT, (1 << 27) | (1 << 5));
        assert_eq!(masks::PRIMARY & masks::MOVEMENT, 0);
        assert_eq!(masks::COMPLETE & masks::MOVEMENT, masks::MOVEMENT);
        assert_eq!(EventType::TAP_DISABLED_BY_TIMEOUT.mask_bit(), 0);
    }

    #[test]
    fn fallback_hotkey_mask_is_control_and_fn() {
        assert_eq!(flags::CONTROL | flags::SECONDARY_FN, 0x84_0000);
    }
}
