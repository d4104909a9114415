//! A HID++ 2.0 device model for tests: answers Root, feature set, device name, 0x1B04,
//! 0x2121 and 0x2150 requests like an MX Master 3S, keeps each control's temporary
//! diversion, and produces the notifications a diverted control and raw-XY motion send.
//! The VM driver puts it behind a uhid device (`pawl-vm-driver`'s `hidpp_emu`); the unit
//! tests put it behind a [`crate::Session`] directly.
//!
//! The feature indices, control list and resolutions are the emulator's own (shaped like
//! what Solaar shows for an MX Master 3S: controls 0x50 0x51 0x52 0x53 0x56 0xC3 0xC4, the
//! gesture button divertable with raw XY); pawl looks every index up, so none is assumed.
//! The thumb wheel answers like logid reports an MX Master 3's (18 ratchets per turn
//! natively, 120 increments diverted; PixlOne/logiops#145), and its one direction setting
//! (default direction, invert bit) applies to both reporting modes: a turn has the same
//! sign as an AC Pan count and as a diverted increment (see `pawl_hidpp::session`, "Thumb
//! wheel").

use crate::controls::{self, ControlInfo, Reporting, additional_flags, info_flags};
use crate::error::{HIDPP10_ERROR, HIDPP10_INVALID_SUBID, HIDPP20_ERROR};
use crate::feature::{
    self, device_name, hires_wheel, receiver, reprog, root, thumb_wheel, wireless_status,
};
use crate::report::{Framing, LONG_PARAMS, Message};

/// An error the emulator is told to answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// HID++ 1.0 error reply (sub id 0x8F) with this code.
    V10(u8),
    /// HID++ 2.0 error reply (feature index 0xFF) with this code.
    V20(u8),
}

/// One control of the emulated device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmulatedControl {
    /// Its control list entry.
    pub info: ControlInfo,
    /// Its current temporary reporting.
    pub reporting: Reporting,
    /// Physically held now.
    pub held: bool,
}

/// What a motion of the emulated device becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// A raw-XY notification (a control diverted with raw XY is held).
    RawXy(Message),
    /// An ordinary HID mouse report (the caller sends it).
    Hid,
}

/// The emulated device.
#[derive(Clone, Debug)]
pub struct Emulator {
    framing: Framing,
    device: u8,
    features: Vec<u16>,
    name: &'static str,
    controls: Vec<EmulatedControl>,
    wheel_mode: u8,
    wheel_mode_writes: u32,
    persistent_writes: u32,
    thumb_diverted: bool,
    thumb_inverted: bool,
    thumb_info: [u8; 8],
    hidpp10_only: bool,
    failures: Vec<(u16, u8, Failure)>,
    requests: u32,
}

impl Emulator {
    /// An MX Master 3S at `device` index on a node declaring `framing` (Bluetooth: long
    /// only, index 0xFF; behind a Bolt receiver: both, index 1–6).
    pub fn mx_master_3s(framing: Framing, device: u8) -> Emulator {
        use info_flags::*;
        let mouse_button = MOUSE | REPROGRAMMABLE | DIVERTABLE | PERSISTENTLY_DIVERTABLE;
        let control = |cid: u16, task: u16, flags: u8, more: u8| EmulatedControl {
            info: ControlInfo {
                cid,
                task,
                flags,
                additional_flags: more,
            },
            reporting: Reporting {
                cid,
                divert: false,
                raw_xy: false,
            },
            held: false,
        };
        Emulator {
            framing,
            device,
            features: vec![
                feature::ROOT,
                feature::FEATURE_SET,
                0x0003,
                feature::DEVICE_NAME,
                feature::WIRELESS_DEVICE_STATUS,
                0x1000,
                feature::REPROG_CONTROLS_V4,
                0x2110,
                feature::HIRES_WHEEL,
                feature::THUMB_WHEEL,
                0x2201,
            ],
            name: "MX Master 3S",
            controls: vec![
                control(0x0050, 0x0038, MOUSE, 0),
                control(0x0051, 0x0039, MOUSE, 0),
                control(
                    controls::CID_MIDDLE,
                    0x003A,
                    mouse_button,
                    additional_flags::RAW_XY,
                ),
                control(
                    controls::CID_BACK,
                    0x003C,
                    mouse_button,
                    additional_flags::RAW_XY,
                ),
                control(
                    controls::CID_FORWARD,
                    0x003E,
                    mouse_button,
                    additional_flags::RAW_XY,
                ),
                control(
                    controls::CID_GESTURE_BUTTON,
                    0x00A9,
                    REPROGRAMMABLE | DIVERTABLE | PERSISTENTLY_DIVERTABLE,
                    additional_flags::RAW_XY,
                ),
                control(
                    controls::CID_SMART_SHIFT,
                    0x00AA,
                    REPROGRAMMABLE | DIVERTABLE | PERSISTENTLY_DIVERTABLE,
                    additional_flags::RAW_XY,
                ),
            ],
            wheel_mode: 0,
            wheel_mode_writes: 0,
            persistent_writes: 0,
            thumb_diverted: false,
            thumb_inverted: false,
            // native 18, diverted 120, default direction right/front, capabilities
            // timestamp | touch | proximity | single tap, time unit 0.
            thumb_info: [0, 18, 0, 120, 1, 0x0F, 0, 0],
            hidpp10_only: false,
            failures: Vec::new(),
            requests: 0,
        }
    }

    /// Makes it a HID++ 1.0 device (answers the ping with "invalid sub id").
    pub fn hidpp10_only(mut self) -> Emulator {
        self.hidpp10_only = true;
        self
    }

    /// Answers every request of `function` of feature `feature_id` with `failure`.
    pub fn fail(&mut self, feature_id: u16, function: u8, failure: Failure) {
        self.failures.push((feature_id, function, failure));
    }

    /// The device index.
    pub fn device(&self) -> u8 {
        self.device
    }

    /// The index of feature `id` in the emulated feature table.
    pub fn feature_index(&self, id: u16) -> Option<u8> {
        self.features.iter().position(|&f| f == id).map(|i| i as u8)
    }

    /// The controls and their current state.
    pub fn controls(&self) -> &[EmulatedControl] {
        &self.controls
    }

    /// The temporary reporting of `cid`.
    pub fn reporting(&self, cid: u16) -> Option<Reporting> {
        self.control(cid).map(|c| c.reporting)
    }

    /// How many `setWheelMode` (0x2121) requests arrived. pawl must never send one.
    pub fn wheel_mode_writes(&self) -> u32 {
        self.wheel_mode_writes
    }

    /// How many `setCidReporting` requests asked for a persistent change. pawl must never.
    pub fn persistent_writes(&self) -> u32 {
        self.persistent_writes
    }

    /// Whether the thumb wheel is diverted.
    pub fn thumb_diverted(&self) -> bool {
        self.thumb_diverted
    }

    /// Whether the thumb wheel's direction is inverted (0x2150 invert bit).
    pub fn thumb_inverted(&self) -> bool {
        self.thumb_inverted
    }

    /// Sets the thumb wheel's invert bit, as Logitech's software or Solaar would.
    pub fn set_thumb_inverted(&mut self, inverted: bool) {
        self.thumb_inverted = inverted;
    }

    /// Makes the thumb wheel report `native` ratchets and `diverted` increments per turn.
    pub fn with_thumb_resolution(mut self, native: u16, diverted: u16) -> Emulator {
        self.thumb_info[..2].copy_from_slice(&native.to_be_bytes());
        self.thumb_info[2..4].copy_from_slice(&diverted.to_be_bytes());
        self
    }

    /// How many HID++ requests arrived.
    pub fn requests(&self) -> u32 {
        self.requests
    }

    /// A power cycle or reconnection: every temporary diversion is forgotten (the thumb
    /// wheel's too; its invert bit is a setting and stays) and nothing is held.
    pub fn reset(&mut self) {
        for c in &mut self.controls {
            c.reporting.divert = false;
            c.reporting.raw_xy = false;
            c.held = false;
        }
        self.thumb_diverted = false;
    }

    /// The reply to one report the host wrote (report id first); `None` for reports that
    /// are not HID++ or not for this device index.
    pub fn answer(&mut self, bytes: &[u8]) -> Option<Message> {
        let req = Message::parse(bytes)?;
        if req.device != self.device {
            return None;
        }
        self.requests += 1;
        let mut reply = req;
        reply.long = true;
        reply.params = [0; LONG_PARAMS];
        if self.hidpp10_only {
            return Some(self.error(&req, Failure::V10(HIDPP10_INVALID_SUBID)));
        }
        let Some(&feature_id) = self.features.get(usize::from(req.sub_id)) else {
            return Some(self.error(&req, Failure::V20(0x06)));
        };
        let function = req.function();
        if let Some(&(_, _, f)) = self
            .failures
            .iter()
            .find(|(id, func, _)| *id == feature_id && *func == function)
        {
            return Some(self.error(&req, f));
        }
        let p = &mut reply.params;
        match (feature_id, function) {
            (feature::ROOT, root::GET_FEATURE) => {
                let id = req.u16_at(0);
                let index = self.features.iter().position(|&f| f == id).unwrap_or(0);
                p[0] = index as u8;
            }
            (feature::ROOT, root::GET_PROTOCOL_VERSION) => {
                p[..3].copy_from_slice(&[4, 5, req.params[2]]);
            }
            (feature::FEATURE_SET, 0) => p[0] = (self.features.len() - 1) as u8,
            (feature::FEATURE_SET, 1) => {
                let id = self
                    .features
                    .get(usize::from(req.params[0]))
                    .copied()
                    .unwrap_or(0);
                p[..2].copy_from_slice(&id.to_be_bytes());
            }
            (feature::DEVICE_NAME, device_name::GET_COUNT) => p[0] = self.name.len() as u8,
            (feature::DEVICE_NAME, device_name::GET_NAME) => {
                let name = self.name.as_bytes();
                let from = usize::from(req.params[0]).min(name.len());
                let chunk = &name[from..(from + LONG_PARAMS).min(name.len())];
                p[..chunk.len()].copy_from_slice(chunk);
            }
            (feature::REPROG_CONTROLS_V4, reprog::GET_COUNT) => p[0] = self.controls.len() as u8,
            (feature::REPROG_CONTROLS_V4, reprog::GET_CID_INFO) => {
                let Some(c) = self.controls.get(usize::from(req.params[0])) else {
                    return Some(self.error(&req, Failure::V20(0x02)));
                };
                let i = c.info;
                p[..2].copy_from_slice(&i.cid.to_be_bytes());
                p[2..4].copy_from_slice(&i.task.to_be_bytes());
                p[4] = i.flags;
                p[8] = i.additional_flags;
            }
            (feature::REPROG_CONTROLS_V4, reprog::GET_CID_REPORTING) => {
                let Some(c) = self.control(req.u16_at(0)) else {
                    return Some(self.error(&req, Failure::V20(0x02)));
                };
                let r = c.reporting;
                p[..2].copy_from_slice(&r.cid.to_be_bytes());
                p[2] = (u8::from(r.divert) * controls::reporting_flags::DIVERT)
                    | (u8::from(r.raw_xy) * controls::reporting_flags::RAW_XY);
            }
            (feature::REPROG_CONTROLS_V4, reprog::SET_CID_REPORTING) => {
                use controls::reporting_flags::*;
                let flags = req.params[2];
                if flags & (PERSIST | PERSIST_VALID) != 0 {
                    self.persistent_writes += 1;
                }
                let cid = req.u16_at(0);
                let Some(c) = self.controls.iter_mut().find(|c| c.info.cid == cid) else {
                    return Some(self.error(&req, Failure::V20(0x02)));
                };
                if !c.info.divertable() {
                    return Some(self.error(&req, Failure::V20(0x02)));
                }
                if flags & DIVERT_VALID != 0 {
                    c.reporting.divert = flags & DIVERT != 0;
                }
                if flags & RAW_XY_VALID != 0 {
                    c.reporting.raw_xy = flags & RAW_XY != 0 && c.info.raw_xy();
                }
                p[..5].copy_from_slice(&req.params[..5]);
            }
            (feature::HIRES_WHEEL, hires_wheel::GET_CAPABILITY) => {
                p[..2].copy_from_slice(&[15, 0x0C]);
            }
            (feature::HIRES_WHEEL, hires_wheel::GET_MODE) => p[0] = self.wheel_mode,
            (feature::HIRES_WHEEL, hires_wheel::SET_MODE) => {
                self.wheel_mode_writes += 1;
                self.wheel_mode = req.params[0];
                p[0] = self.wheel_mode;
            }
            (feature::THUMB_WHEEL, thumb_wheel::GET_INFO) => {
                p[..8].copy_from_slice(&self.thumb_info);
            }
            (feature::THUMB_WHEEL, thumb_wheel::GET_STATUS) => {
                p[0] = u8::from(self.thumb_diverted) * thumb_wheel::MODE_DIVERTED;
                p[1] = u8::from(self.thumb_inverted) * thumb_wheel::DIRECTION_BIT;
            }
            (feature::THUMB_WHEEL, thumb_wheel::SET_REPORTING) => {
                // The reply carries no data (Logitech's definition: an empty response).
                self.thumb_diverted = req.params[0] == thumb_wheel::MODE_DIVERTED;
                self.thumb_inverted = req.params[1] & thumb_wheel::DIRECTION_BIT != 0;
            }
            _ => return Some(self.error(&req, Failure::V20(0x07))),
        }
        Some(reply)
    }

    /// The control `cid` is pressed (`true`) or released. Returns the diverted-buttons
    /// notification when it is diverted; `None` when it is not (the device then reports
    /// it natively — the 3S's gesture button not at all).
    pub fn set_held(&mut self, cid: u16, held: bool) -> Option<Message> {
        let c = self.controls.iter_mut().find(|c| c.info.cid == cid)?;
        c.held = held;
        if !c.reporting.divert {
            return None;
        }
        let mut params = [0u8; LONG_PARAMS];
        let held = self
            .controls
            .iter()
            .filter(|c| c.held && c.reporting.divert)
            .take(4);
        for (i, c) in held.enumerate() {
            params[2 * i..2 * i + 2].copy_from_slice(&c.info.cid.to_be_bytes());
        }
        Some(self.notification(
            feature::REPROG_CONTROLS_V4,
            reprog::EVENT_DIVERTED_BUTTONS,
            &params,
        ))
    }

    /// The mouse moves by (`dx`, `dy`) counts.
    pub fn motion(&self, dx: i16, dy: i16) -> Motion {
        let raw = self
            .controls
            .iter()
            .any(|c| c.held && c.reporting.divert && c.reporting.raw_xy);
        if !raw {
            return Motion::Hid;
        }
        let mut params = [0u8; LONG_PARAMS];
        params[..2].copy_from_slice(&dx.to_be_bytes());
        params[2..4].copy_from_slice(&dy.to_be_bytes());
        Motion::RawXy(self.notification(feature::REPROG_CONTROLS_V4, reprog::EVENT_RAW_XY, &params))
    }

    /// The thumb wheel turns by `increments` (diverted resolution, positive in the default
    /// direction): the rotation notification (rotation status "active", touch) when it is
    /// diverted, `None` when it is not (see [`Emulator::thumb_native`]). The invert bit
    /// flips the sign.
    pub fn thumb(&self, increments: i16) -> Option<Message> {
        if !self.thumb_diverted {
            return None;
        }
        let rotation = if self.thumb_inverted {
            increments.saturating_neg()
        } else {
            increments
        };
        let mut params = [0u8; LONG_PARAMS];
        params[..2].copy_from_slice(&rotation.to_be_bytes());
        params[4] = 2;
        params[5] = 0x02;
        Some(self.notification(feature::THUMB_WHEEL, thumb_wheel::EVENT_ROTATION, &params))
    }

    /// The thumb wheel turns by `ratchets` (native resolution, positive in the default
    /// direction) while it is not diverted: the AC Pan count of the HID mouse report (the
    /// caller sends it); `None` when it is diverted. The invert bit flips the sign, as
    /// for [`Emulator::thumb`].
    pub fn thumb_native(&self, ratchets: i8) -> Option<i8> {
        if self.thumb_diverted {
            return None;
        }
        Some(if self.thumb_inverted {
            ratchets.saturating_neg()
        } else {
            ratchets
        })
    }

    /// Diverted increments per native ratchet of the thumb wheel, as a fraction
    /// (`diverted`, `native`).
    pub fn thumb_resolution(&self) -> (u16, u16) {
        (
            u16::from_be_bytes([self.thumb_info[2], self.thumb_info[3]]),
            u16::from_be_bytes([self.thumb_info[0], self.thumb_info[1]]),
        )
    }

    /// The 0x1D4B status broadcast a device sends after it (re)connects: status 1
    /// (reconnection), request 1 (software reconfiguration needed).
    pub fn wireless_status(&self) -> Message {
        let mut params = [0u8; LONG_PARAMS];
        params[..3].copy_from_slice(&[1, 1, 0]);
        self.notification(
            feature::WIRELESS_DEVICE_STATUS,
            wireless_status::EVENT_STATUS,
            &params,
        )
    }

    /// A receiver's HID++ 1.0 device connection notification (0x41) for this device:
    /// protocol 0x10 (Bolt), link established or not, wireless PID b034.
    pub fn receiver_connection(&self, linked: bool) -> Message {
        let mut params = [0u8; LONG_PARAMS];
        let info = if linked {
            0x02
        } else {
            0x02 | receiver::LINK_NOT_ESTABLISHED
        };
        params[..3].copy_from_slice(&[info, 0x34, 0xB0]);
        Message {
            long: false,
            device: self.device,
            sub_id: receiver::DEVICE_CONNECTION,
            address: 0x10,
            params,
        }
    }

    fn control(&self, cid: u16) -> Option<&EmulatedControl> {
        self.controls.iter().find(|c| c.info.cid == cid)
    }

    fn notification(&self, feature_id: u16, event: u8, params: &[u8; LONG_PARAMS]) -> Message {
        let index = self
            .features
            .iter()
            .position(|&f| f == feature_id)
            .unwrap_or(0);
        Message {
            long: true,
            device: self.device,
            sub_id: index as u8,
            address: event << 4,
            params: *params,
        }
    }

    fn error(&self, req: &Message, failure: Failure) -> Message {
        let mut params = [0u8; LONG_PARAMS];
        params[0] = req.address;
        match failure {
            Failure::V10(code) => {
                params[1] = code;
                Message {
                    long: req.long && !self.framing.short,
                    device: self.device,
                    sub_id: HIDPP10_ERROR,
                    address: req.sub_id,
                    params,
                }
            }
            Failure::V20(code) => {
                params[1] = code;
                Message {
                    long: true,
                    device: self.device,
                    sub_id: HIDPP20_ERROR,
                    address: req.sub_id,
                    params,
                }
            }
        }
    }
}
