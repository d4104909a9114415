//! The swipe style's virtual touchpad (`[gesture] style = "swipe"`): a uinput device that
//! libinput takes for a multitouch touchpad, so a held drag of the gesture button reaches
//! the desktop as a GNOME / KDE workspace swipe. It exists only while swipe style is
//! configured; pawl never opens or grabs it (`phys` `pawl/touchpad`, like every pawl
//! device) and it never moves the pointer (libinput sends pointer motion for one finger,
//! never for the 3 or 4 a swipe has).
//!
//! What libinput requires of a touchpad (`evdev-mt-touchpad.c`, `tp_pass_sanity_check`:
//! `ABS_X`, `BTN_TOUCH`, `BTN_TOOL_FINGER`; udev's `input_id` builtin tags
//! `ID_INPUT_TOUCHPAD` for `ABS_X/Y` + `BTN_TOOL_FINGER` without `INPUT_PROP_DIRECT`):
//! `INPUT_PROP_POINTER`, `ABS_X/Y` and `ABS_MT_POSITION_X/Y` with resolutions (without
//! them libinput guesses a 69 × 50 mm pad), `ABS_MT_SLOT` with one slot per finger and
//! `ABS_MT_TRACKING_ID` (type B), `BTN_TOOL_FINGER…QUADTAP` for the finger count, and the
//! buttons of a touchpad with physical buttons, `BTN_LEFT` and `BTN_RIGHT`, like libinput
//! 1.22's `alps-3fg` test device (a non-clickpad with 4 slots): without `BTN_RIGHT` and
//! without `INPUT_PROP_BUTTONPAD` libinput logs "kernel bug: missing right button, assuming
//! it is a clickpad" (`evdev-mt-touchpad-buttons.c`, `tp_guess_clickpad`) and then gives
//! the pad software button areas and thumb detection. pawl never presses them.
//!
//! Size and resolution: [`TOUCHPAD_WIDTH`] × [`TOUCHPAD_HEIGHT`] (an Apple Magic Trackpad
//! 2's 162 × 115 mm) at [`TOUCHPAD_RES`] = 40 units/mm (the Synaptics T440 of libinput's test
//! devices has 42); no pressure or touch size axes, so libinput's pressure and size palm
//! rules do not apply, and the fingers go down in the middle, far from the edge palm zones.
//! The frames come paced like a touchpad's (see [`pawl_engine::swipe`]): libinput stamps
//! each with the time of its `write(2)`, and discards steps that come too close together
//! for their length as touch jumps. No `MSC_TIMESTAMP`: libinput only uses it to repair a
//! firmware's late first frame (`tp_process_msc_timestamp`), which a paced pad never has.

use pawl_engine::TouchOut;
use pawl_engine::swipe::{MAX_FINGERS, TOUCHPAD_HEIGHT, TOUCHPAD_RES, TOUCHPAD_WIDTH};
use pawl_evdev::EVENT_SIZE;
use pawl_evdev::codes::*;
use pawl_evdev::touch::{MAX_TOUCH_EVENTS, TouchEncoder};

use crate::caps::{ABS_MAX, Caps};
use crate::error::Error;
use crate::sys::{AbsInfo, InputId, UinputSpec};
use crate::uinput::VirtualDevice;

/// The virtual touchpad's name.
pub const TOUCHPAD_NAME: &str = "pawl virtual touchpad";
/// Its `phys` (the `pawl/` prefix keeps pawl from ever opening it).
pub const TOUCHPAD_PHYS: &str = "pawl/touchpad";

/// The uinput spec of the virtual touchpad: [`TOUCHPAD_WIDTH`] × [`TOUCHPAD_HEIGHT`]
/// units at [`TOUCHPAD_RES`] units/mm, [`MAX_FINGERS`] slots, bus `BUS_VIRTUAL`.
pub fn touchpad_spec() -> UinputSpec {
    let mut caps = Caps::default();
    for ev in [EV_SYN, EV_KEY, EV_ABS] {
        caps.ev.set(ev);
    }
    for k in [
        BTN_LEFT,
        BTN_RIGHT,
        BTN_TOUCH,
        BTN_TOOL_FINGER,
        BTN_TOOL_DOUBLETAP,
        BTN_TOOL_TRIPLETAP,
        BTN_TOOL_QUADTAP,
    ] {
        caps.key.set(k);
    }
    caps.props.set(INPUT_PROP_POINTER);
    let mut abs = [AbsInfo::default(); ABS_MAX as usize + 1];
    let axis = |max: i32| AbsInfo {
        value: 0,
        minimum: 0,
        maximum: max - 1,
        fuzz: 0,
        flat: 0,
        resolution: TOUCHPAD_RES,
    };
    for (code, info) in [
        (ABS_X, axis(TOUCHPAD_WIDTH)),
        (ABS_Y, axis(TOUCHPAD_HEIGHT)),
        (ABS_MT_POSITION_X, axis(TOUCHPAD_WIDTH)),
        (ABS_MT_POSITION_Y, axis(TOUCHPAD_HEIGHT)),
        (
            ABS_MT_SLOT,
            AbsInfo {
                maximum: i32::from(MAX_FINGERS) - 1,
                ..AbsInfo::default()
            },
        ),
        (
            ABS_MT_TRACKING_ID,
            AbsInfo {
                maximum: 0xffff,
                ..AbsInfo::default()
            },
        ),
    ] {
        caps.abs.set(code);
        abs[code as usize] = info;
    }
    UinputSpec {
        name: TOUCHPAD_NAME.to_owned(),
        id: InputId {
            bustype: pawl_engine::Bus::VIRTUAL.0,
            vendor: 0,
            product: 0,
            version: 1,
        },
        phys: TOUCHPAD_PHYS.to_owned(),
        caps,
        abs,
    }
}

/// The virtual touchpad and the state of its fingers. Dropping it lifts fingers still down,
/// then destroys the device.
#[derive(Debug)]
pub struct Touchpad {
    dev: VirtualDevice,
    enc: TouchEncoder,
}

impl Touchpad {
    /// Creates the device.
    ///
    /// Errors: `/dev/uinput` cannot be opened or the device not created.
    pub fn create() -> Result<Touchpad, Error> {
        Ok(Touchpad {
            dev: VirtualDevice::create(&touchpad_spec())?,
            enc: TouchEncoder::default(),
        })
    }

    /// The device.
    pub fn device(&self) -> &VirtualDevice {
        &self.dev
    }

    /// Writes the frames of `t` with one `write(2)` (nothing for an empty `t`); no
    /// allocation.
    #[inline]
    pub fn write(&mut self, t: &TouchOut) {
        let mut buf = [0u8; MAX_TOUCH_EVENTS * EVENT_SIZE];
        let n = self.enc.encode(t, &mut buf);
        if n > 0 {
            // A failure is logged by the device (once until a write succeeds).
            let _ = self.dev.write(&buf[..n]);
        }
    }

    /// Lifts every finger down (exit, device gone, reload).
    pub fn lift(&mut self) {
        let mut buf = [0u8; MAX_TOUCH_EVENTS * EVENT_SIZE];
        let n = self.enc.lift(&mut buf);
        if n > 0 {
            let _ = self.dev.write(&buf[..n]);
        }
    }
}

impl Drop for Touchpad {
    fn drop(&mut self) {
        self.lift();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysfs::PAWL_PHYS_PREFIX;

    #[test]
    fn touchpad_spec_is_what_libinput_takes_for_a_touchpad_with_buttons() {
        let s = touchpad_spec();
        assert!(s.phys.starts_with(PAWL_PHYS_PREFIX), "pawl never opens it");
        assert!(s.caps.props.get(INPUT_PROP_POINTER));
        assert!(
            !s.caps.props.get(INPUT_PROP_BUTTONPAD),
            "a pad with separate buttons, not a clickpad"
        );
        for k in [
            BTN_TOUCH,
            BTN_TOOL_FINGER,
            BTN_TOOL_TRIPLETAP,
            BTN_TOOL_QUADTAP,
            BTN_LEFT,
            BTN_RIGHT,
        ] {
            assert!(s.caps.key.get(k), "{k:#x}");
        }
        for a in [ABS_X, ABS_Y, ABS_MT_POSITION_X, ABS_MT_POSITION_Y] {
            assert!(s.caps.abs.get(a));
            assert_eq!(
                s.abs[a as usize].resolution, TOUCHPAD_RES,
                "libinput needs mm"
            );
        }
        assert_eq!(s.abs[ABS_MT_SLOT as usize].maximum, 3, "four slots");
        assert!(
            !s.caps.ev.get(EV_REL),
            "no relative axes: it cannot move the pointer by itself"
        );
    }
}
