//! evdev event types and codes pawl reads and writes, with their names.
//!
//! Values from `include/uapi/linux/input-event-codes.h`.

#![allow(missing_docs)]

pub const EV_SYN: u16 = 0x00;
pub const EV_KEY: u16 = 0x01;
pub const EV_REL: u16 = 0x02;
pub const EV_ABS: u16 = 0x03;
pub const EV_MSC: u16 = 0x04;

pub const SYN_REPORT: u16 = 0;
pub const SYN_CONFIG: u16 = 1;
pub const SYN_MT_REPORT: u16 = 2;
pub const SYN_DROPPED: u16 = 3;

pub const REL_X: u16 = 0x00;
pub const REL_Y: u16 = 0x01;
pub const REL_Z: u16 = 0x02;
pub const REL_RX: u16 = 0x03;
pub const REL_RY: u16 = 0x04;
pub const REL_RZ: u16 = 0x05;
pub const REL_HWHEEL: u16 = 0x06;
pub const REL_DIAL: u16 = 0x07;
pub const REL_WHEEL: u16 = 0x08;
pub const REL_MISC: u16 = 0x09;
pub const REL_WHEEL_HI_RES: u16 = 0x0b;
pub const REL_HWHEEL_HI_RES: u16 = 0x0c;

pub const MSC_SERIAL: u16 = 0x00;
pub const MSC_PULSELED: u16 = 0x01;
pub const MSC_GESTURE: u16 = 0x02;
pub const MSC_RAW: u16 = 0x03;
pub const MSC_SCAN: u16 = 0x04;
pub const MSC_TIMESTAMP: u16 = 0x05;

/// `BTN_MOUSE` = `BTN_LEFT`: pawl's button `n` is `BTN_MOUSE + n`.
pub const BTN_MOUSE: u16 = 0x110;
pub const BTN_LEFT: u16 = 0x110;
pub const BTN_RIGHT: u16 = 0x111;
pub const BTN_MIDDLE: u16 = 0x112;
pub const BTN_SIDE: u16 = 0x113;
pub const BTN_EXTRA: u16 = 0x114;
pub const BTN_FORWARD: u16 = 0x115;
pub const BTN_BACK: u16 = 0x116;
pub const BTN_TASK: u16 = 0x117;
/// First code after the mouse button range (`BTN_JOYSTICK`).
pub const BTN_MOUSE_END: u16 = 0x120;
pub const BTN_TOOL_FINGER: u16 = 0x145;
pub const BTN_TOUCH: u16 = 0x14a;
pub const BTN_TOOL_DOUBLETAP: u16 = 0x14d;
pub const BTN_TOOL_TRIPLETAP: u16 = 0x14e;
pub const BTN_TOOL_QUADTAP: u16 = 0x14f;

pub const ABS_X: u16 = 0x00;
pub const ABS_Y: u16 = 0x01;
pub const ABS_MT_SLOT: u16 = 0x2f;
pub const ABS_MT_POSITION_X: u16 = 0x35;
pub const ABS_MT_POSITION_Y: u16 = 0x36;
pub const ABS_MT_TRACKING_ID: u16 = 0x39;

pub const INPUT_PROP_POINTER: u16 = 0x00;
pub const INPUT_PROP_BUTTONPAD: u16 = 0x02;

/// `KEY_MAX` (0x2ff): the key bitmap has `KEY_MAX + 1` bits.
pub const KEY_MAX: u16 = 0x2ff;
/// `REL_MAX` (0x0f).
pub const REL_MAX: u16 = 0x0f;

/// The name of an event type (`EV_REL`), or `None`.
pub fn type_name(ty: u16) -> Option<&'static str> {
    Some(match ty {
        EV_SYN => "EV_SYN",
        EV_KEY => "EV_KEY",
        EV_REL => "EV_REL",
        EV_ABS => "EV_ABS",
        EV_MSC => "EV_MSC",
        0x05 => "EV_SW",
        0x11 => "EV_LED",
        0x12 => "EV_SND",
        0x14 => "EV_REP",
        0x15 => "EV_FF",
        _ => return None,
    })
}

/// The name of a code of type `ty` (`REL_WHEEL_HI_RES`, `BTN_SIDE`), or `None` for codes
/// pawl does not name.
pub fn code_name(ty: u16, code: u16) -> Option<&'static str> {
    Some(match (ty, code) {
        (EV_SYN, SYN_REPORT) => "SYN_REPORT",
        (EV_SYN, SYN_CONFIG) => "SYN_CONFIG",
        (EV_SYN, SYN_MT_REPORT) => "SYN_MT_REPORT",
        (EV_SYN, SYN_DROPPED) => "SYN_DROPPED",
        (EV_REL, REL_X) => "REL_X",
        (EV_REL, REL_Y) => "REL_Y",
        (EV_REL, REL_Z) => "REL_Z",
        (EV_REL, REL_RX) => "REL_RX",
        (EV_REL, REL_RY) => "REL_RY",
        (EV_REL, REL_RZ) => "REL_RZ",
        (EV_REL, REL_HWHEEL) => "REL_HWHEEL",
        (EV_REL, REL_DIAL) => "REL_DIAL",
        (EV_REL, REL_WHEEL) => "REL_WHEEL",
        (EV_REL, REL_MISC) => "REL_MISC",
        (EV_REL, REL_WHEEL_HI_RES) => "REL_WHEEL_HI_RES",
        (EV_REL, REL_HWHEEL_HI_RES) => "REL_HWHEEL_HI_RES",
        (EV_MSC, MSC_SERIAL) => "MSC_SERIAL",
        (EV_MSC, MSC_PULSELED) => "MSC_PULSELED",
        (EV_MSC, MSC_GESTURE) => "MSC_GESTURE",
        (EV_MSC, MSC_RAW) => "MSC_RAW",
        (EV_MSC, MSC_SCAN) => "MSC_SCAN",
        (EV_MSC, MSC_TIMESTAMP) => "MSC_TIMESTAMP",
        (EV_KEY, BTN_LEFT) => "BTN_LEFT",
        (EV_KEY, BTN_RIGHT) => "BTN_RIGHT",
        (EV_KEY, BTN_MIDDLE) => "BTN_MIDDLE",
        (EV_KEY, BTN_SIDE) => "BTN_SIDE",
        (EV_KEY, BTN_EXTRA) => "BTN_EXTRA",
        (EV_KEY, BTN_FORWARD) => "BTN_FORWARD",
        (EV_KEY, BTN_BACK) => "BTN_BACK",
        (EV_KEY, BTN_TASK) => "BTN_TASK",
        (EV_KEY, 0x118..=0x11f) => [
            "BTN_0x118",
            "BTN_0x119",
            "BTN_0x11a",
            "BTN_0x11b",
            "BTN_0x11c",
            "BTN_0x11d",
            "BTN_0x11e",
            "BTN_0x11f",
        ][(code - 0x118) as usize],
        (EV_KEY, BTN_TOOL_FINGER) => "BTN_TOOL_FINGER",
        (EV_KEY, BTN_TOOL_DOUBLETAP) => "BTN_TOOL_DOUBLETAP",
        (EV_KEY, BTN_TOOL_TRIPLETAP) => "BTN_TOOL_TRIPLETAP",
        (EV_KEY, BTN_TOOL_QUADTAP) => "BTN_TOOL_QUADTAP",
        (EV_KEY, BTN_TOUCH) => "BTN_TOUCH",
        (EV_ABS, ABS_X) => "ABS_X",
        (EV_ABS, ABS_Y) => "ABS_Y",
        (EV_ABS, 0x18) => "ABS_PRESSURE",
        (EV_ABS, 0x1c) => "ABS_TOOL_WIDTH",
        (EV_ABS, ABS_MT_SLOT) => "ABS_MT_SLOT",
        (EV_ABS, ABS_MT_POSITION_X) => "ABS_MT_POSITION_X",
        (EV_ABS, ABS_MT_POSITION_Y) => "ABS_MT_POSITION_Y",
        (EV_ABS, ABS_MT_TRACKING_ID) => "ABS_MT_TRACKING_ID",
        (EV_ABS, 0x3a) => "ABS_MT_PRESSURE",
        _ => return None,
    })
}

/// pawl's 0-based button number for a key code, `None` outside `BTN_MOUSE..BTN_JOYSTICK`.
#[inline]
pub fn button_of(code: u16) -> Option<u8> {
    (BTN_MOUSE..BTN_MOUSE_END)
        .contains(&code)
        .then(|| (code - BTN_MOUSE) as u8)
}
