//! The `hidpp_session` target: a [`Session`] driven through setup by the MX Master 3S
//! emulator's answers, with hostile reports, errors, timeouts, reconnections, thumb wheel
//! mode changes and un-diversion at every step.
//!
//! The emulator answers each request when it is written (as a device does), and the script
//! decides what the session reads next: that answer, a patched copy, an error, arbitrary
//! bytes, a notification at one of the device's feature indices, or the emulator's own
//! button, motion and thumb wheel reports.
//!
//! Checked after every call, whatever the session was told:
//! - every request is well-formed for the node (report id and length, this device index,
//!   the session's software id), asks only for functions pawl uses, never writes a
//!   persistent diversion (`setCidReporting` persist bits) and never writes to the 0x2121
//!   index (only `getWheelMode`); a written request has a reply deadline, and a session
//!   that is not in setup or ready has none (no timer for a dead device);
//! - frames: buttons only of the configured controls, horizontal wheel only while the
//!   thumb wheel is diverted by pawl, with `detents == v120 / 120`, raw XY within `i16`;
//! - the name stays within the 255 bytes its length byte allows, the control list within
//!   255 entries;
//! - `undivert` yields only un-divert requests for the configured controls and the thumb
//!   wheel, and leaves nothing pending.
//!
//! While only honest steps ran (the emulator's answers and reports, reconnections, time),
//! also: the emulator saw no 0x2121 write and no persistent write, and after `undivert`
//! every control the session had seen diverted, and the thumb wheel it diverted, are native
//! again on the emulator.

use arbitrary::Arbitrary;
use pawl_engine::units::{Button, Micros, V120_PER_DETENT};
use pawl_engine::{Config, DeviceEngine, FrameOut, Platform};
use pawl_hidpp::controls::{self, reporting_flags};
use pawl_hidpp::emulator::{Emulator, Motion};
use pawl_hidpp::error::{HIDPP10_ERROR, HIDPP20_ERROR};
use pawl_hidpp::feature::{
    self, adjustable_dpi, device_name, hires_wheel, reprog, root, smart_shift, thumb_wheel,
    unified_battery,
};
use pawl_hidpp::report::{
    DEVICE_INDEX_DIRECT, Framing, LONG_LEN, LONG_PARAMS, Message, SHORT_LEN, SOFTWARE_ID_QUERY,
};
use pawl_hidpp::{DivertSpec, Output, Phase, Session, SessionConfig, ThumbWheel};

/// One fuzz input: the device and session, then what happens.
#[derive(Arbitrary, Debug)]
pub struct Script {
    /// Behind a receiver (short and long reports, device index 1–6) or Bluetooth (long
    /// only, index 0xFF).
    receiver: bool,
    slot: u8,
    /// 0: the daemon's session (gesture button), 1: a query session, 2: gesture, back and
    /// forward diverted.
    session: u8,
    thumb: Mode,
    thumb_inverted: bool,
    /// The emulator speaks HID++ 1.0 only (when this is 0).
    hidpp10: u8,
    steps: Vec<Step>,
}

/// [`ThumbWheel`], for `arbitrary`.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Mode {
    /// [`ThumbWheel::Leave`].
    Leave,
    /// [`ThumbWheel::Native`].
    Native,
    /// [`ThumbWheel::Divert`].
    Divert,
}

impl From<Mode> for ThumbWheel {
    fn from(m: Mode) -> ThumbWheel {
        match m {
            Mode::Leave => ThumbWheel::Leave,
            Mode::Native => ThumbWheel::Native,
            Mode::Divert => ThumbWheel::Divert,
        }
    }
}

/// A feature whose index a crafted notification uses (the emulator's own index).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum At {
    /// 0x1B04.
    Reprog,
    /// 0x1D4B.
    Wireless,
    /// 0x2150.
    Thumb,
    /// 0x2121.
    Hires,
    /// Root.
    Root,
}

/// One step of a script.
#[derive(Arbitrary, Debug)]
pub enum Step {
    /// The session reads the device's answer to the last request.
    Answer,
    /// Answer requests until none is outstanding (drives setup to its end).
    AnswerAll,
    /// The answer with byte `at` (mod its length) replaced by `value`.
    Patched {
        /// Byte position.
        at: u8,
        /// New value.
        value: u8,
    },
    /// An error reply to the last request.
    Error {
        /// HID++ 2.0 (0xFF) or 1.0 (0x8F) error.
        v20: bool,
        /// Error code.
        code: u8,
    },
    /// Arbitrary bytes as one hidraw report.
    Raw(Vec<u8>),
    /// A notification (software id 0) of `event` at the device's index of `at`.
    Notify {
        /// Which feature's index.
        at: At,
        /// Event number (high nibble of the address byte).
        event: u8,
        /// Short report instead of long.
        short: bool,
        /// Parameters.
        params: [u8; LONG_PARAMS],
    },
    /// The emulator's gesture button (or, odd `cid`, back) is pressed or released.
    Press {
        /// Back instead of the gesture button.
        back: bool,
        /// Held.
        held: bool,
    },
    /// The emulator's mouse moves.
    Motion(i16, i16),
    /// The emulator's thumb wheel turns.
    Thumb(i16),
    /// Time passes (µs), then the session's timeout is called.
    Wait(u32),
    /// Time jumps to the reply deadline, then the timeout is called.
    Timeout,
    /// [`Session::set_thumb_wheel`].
    SetThumb(Mode),
    /// The device loses power and comes back: the emulator forgets its diversions and says
    /// so (0x41 from a receiver, or its 0x1D4B broadcast).
    Reconnect {
        /// Through the receiver's connection notification.
        receiver: bool,
    },
    /// The device's link is lost (0x41 link not established, or 0x40); it forgets its
    /// diversions.
    Disconnect {
        /// 0x40 instead of 0x41.
        disconnection: bool,
    },
    /// [`Session::undivert`] (the daemon's exit); the emulator takes every request.
    Undivert,
    /// [`Session::start`] again.
    Restart,
}

struct Rig {
    session: Session,
    device: Emulator,
    framing: Framing,
    engine: DeviceEngine,
    engine_out: FrameOut,
    now: Micros,
    /// The device's answer to the last request written, not read yet.
    wire: Option<Message>,
    /// The last request written.
    last: Option<Message>,
    /// Only honest steps so far.
    honest: bool,
}

/// Runs one script; panics on a broken invariant.
pub fn run(script: &Script) {
    let (framing, device) = if script.receiver {
        let framing = Framing {
            short: true,
            long: true,
        };
        (framing, 1 + script.slot % 6)
    } else {
        let framing = Framing {
            short: false,
            long: true,
        };
        (framing, DEVICE_INDEX_DIRECT)
    };
    let mut config = match script.session % 3 {
        0 => SessionConfig::gesture(Button(5)),
        1 => SessionConfig::query(SOFTWARE_ID_QUERY),
        _ => {
            let mut c = SessionConfig::gesture(Button(5));
            c.divert.push(DivertSpec {
                cid: controls::CID_BACK,
                button: Button(3),
                raw_xy: false,
                required: true,
            });
            c.divert.push(DivertSpec {
                cid: controls::CID_FORWARD,
                button: Button(4),
                raw_xy: false,
                required: true,
            });
            c
        }
    };
    config.thumb_wheel = script.thumb.into();
    // The macOS worker's sessions read the battery; Linux's never do.
    config.read_battery = script.session / 3 % 2 == 1;
    let mut emulator = Emulator::mx_master_3s(framing, device);
    emulator.set_thumb_inverted(script.thumb_inverted);
    if script.hidpp10 == 0 {
        emulator = emulator.hidpp10_only();
    }
    let engine_config = Config::default_for(Platform::Linux);
    let mut rig = Rig {
        session: Session::new(config, framing, device),
        device: emulator,
        framing,
        engine: DeviceEngine::with_profile(&engine_config, true, engine_config.scroll),
        engine_out: FrameOut::default(),
        now: Micros(0),
        wire: None,
        last: None,
        honest: true,
    };
    let mut out = Output::default();
    rig.session.start(rig.now, &mut out);
    rig.after(out);
    for step in &script.steps {
        rig.step(step);
    }
}

impl Rig {
    fn step(&mut self, step: &Step) {
        match step {
            Step::Answer => {
                if let Some(m) = self.wire.take() {
                    self.read(&m);
                }
            }
            Step::AnswerAll => {
                // A setup is a few dozen requests; 255 controls make it longer.
                for _ in 0..1024 {
                    let Some(m) = self.wire.take() else { break };
                    self.read(&m);
                }
            }
            Step::Patched { at, value } => {
                if let Some(m) = self.wire.take() {
                    self.honest = false;
                    let (mut bytes, len) = m.encode();
                    bytes[usize::from(*at) % len] = *value;
                    self.input(&bytes[..len]);
                }
            }
            Step::Error { v20, code } => {
                if let Some(req) = self.last {
                    self.honest = false;
                    self.wire = None;
                    let mut params = [0u8; LONG_PARAMS];
                    params[0] = req.address;
                    params[1] = *code;
                    let m = Message {
                        long: *v20 || self.framing.long,
                        device: self.session.device(),
                        sub_id: if *v20 { HIDPP20_ERROR } else { HIDPP10_ERROR },
                        address: req.sub_id,
                        params,
                    };
                    self.read(&m);
                }
            }
            Step::Raw(bytes) => {
                self.honest = false;
                self.input(bytes);
            }
            Step::Notify {
                at,
                event,
                short,
                params,
            } => {
                self.honest = false;
                let id = match at {
                    At::Reprog => feature::REPROG_CONTROLS_V4,
                    At::Wireless => feature::WIRELESS_DEVICE_STATUS,
                    At::Thumb => feature::THUMB_WHEEL,
                    At::Hires => feature::HIRES_WHEEL,
                    At::Root => feature::ROOT,
                };
                let m = Message {
                    long: !short,
                    device: self.session.device(),
                    sub_id: self.device.feature_index(id).unwrap_or(0),
                    address: (event & 0x0F) << 4,
                    params: *params,
                };
                self.read(&m);
            }
            Step::Press { back, held } => {
                let cid = if *back {
                    controls::CID_BACK
                } else {
                    controls::CID_GESTURE_BUTTON
                };
                if let Some(m) = self.device.set_held(cid, *held) {
                    self.read(&m);
                }
            }
            Step::Motion(dx, dy) => {
                if let Motion::RawXy(m) = self.device.motion(*dx, *dy) {
                    self.read(&m);
                }
            }
            Step::Thumb(increments) => {
                if let Some(m) = self.device.thumb(*increments) {
                    self.read(&m);
                }
            }
            Step::Wait(us) => {
                self.now = self.now.plus(u64::from(*us));
                self.timeout();
            }
            Step::Timeout => {
                if let Some(d) = self.session.deadline() {
                    self.now = self.now.max(d);
                }
                self.timeout();
            }
            Step::SetThumb(mode) => {
                let mut out = Output::default();
                self.session
                    .set_thumb_wheel((*mode).into(), self.now, &mut out);
                self.after(out);
            }
            Step::Reconnect { receiver } => {
                self.device.reset();
                let m = if *receiver {
                    self.device.receiver_connection(true)
                } else {
                    self.device.wireless_status()
                };
                self.read(&m);
            }
            Step::Disconnect { disconnection } => {
                self.device.reset();
                let mut m = self.device.receiver_connection(false);
                if *disconnection {
                    m.sub_id = feature::receiver::DEVICE_DISCONNECTION;
                }
                self.read(&m);
            }
            Step::Undivert => self.undivert(),
            Step::Restart => {
                let mut out = Output::default();
                self.session.start(self.now, &mut out);
                self.after(out);
            }
        }
    }

    fn read(&mut self, m: &Message) {
        let (bytes, len) = m.encode();
        self.input(&bytes[..len]);
    }

    fn input(&mut self, bytes: &[u8]) {
        let mut out = Output::default();
        self.session.input(bytes, self.now, &mut out);
        self.after(out);
    }

    fn timeout(&mut self) {
        let mut out = Output::default();
        self.session.timeout(self.now, &mut out);
        self.after(out);
    }

    /// Checks what one call produced and passes its request to the emulator, its frame to
    /// an engine.
    fn after(&mut self, out: Output) {
        let s = &self.session;
        assert!(
            s.name().chars().count() <= 255,
            "name longer than its length byte allows: {:?}",
            s.name()
        );
        assert!(s.controls().len() <= 255, "{} controls", s.controls().len());
        if !matches!(s.phase(), Phase::Setup | Phase::Ready) {
            assert_eq!(
                s.deadline(),
                None,
                "a reply deadline in phase {:?}",
                s.phase()
            );
        }
        if let Some(req) = out.request {
            assert!(
                matches!(s.phase(), Phase::Setup | Phase::Ready),
                "request {req:?} in phase {:?}",
                s.phase()
            );
            assert!(
                s.deadline().is_some(),
                "request {req:?} written without a reply deadline"
            );
            self.check_request(&req);
            self.last = Some(req);
            let (bytes, len) = req.encode();
            self.wire = self.device.answer(&bytes[..len]);
        }
        if let Some(frame) = out.frame {
            self.check_frame(&frame);
            self.engine.frame(&frame, &mut self.engine_out);
        }
        if self.honest {
            assert_eq!(self.device.wheel_mode_writes(), 0, "0x2121 written");
            assert_eq!(self.device.persistent_writes(), 0, "persistent divert");
        }
    }

    fn check_request(&self, req: &Message) {
        let s = &self.session;
        let (bytes, len) = req.encode();
        assert!(len == SHORT_LEN || len == LONG_LEN);
        assert_eq!(Message::parse(&bytes[..len]), Some(*req), "round trip");
        assert!(
            req.long || !self.framing.long,
            "short request on a node with the long report: {req:?}"
        );
        assert_eq!(req.device, s.device(), "device index");
        assert_eq!(req.sw_id(), s.config().sw_id, "software id");
        assert_ne!(
            req.sw_id(),
            0,
            "a request with software id 0 reads as a notification"
        );
        let f = req.function();
        let at = |id: u16| s.feature_index(id) == Some(req.sub_id);
        // What pawl asks of each feature it uses; anything else is a bug.
        let allowed = (req.sub_id == feature::ROOT_INDEX
            && (f == root::GET_FEATURE || f == root::GET_PROTOCOL_VERSION))
            || (at(feature::DEVICE_NAME)
                && (f == device_name::GET_COUNT || f == device_name::GET_NAME))
            || (at(feature::REPROG_CONTROLS_V4)
                && matches!(
                    f,
                    reprog::GET_COUNT
                        | reprog::GET_CID_INFO
                        | reprog::GET_CID_REPORTING
                        | reprog::SET_CID_REPORTING
                ))
            || (at(feature::HIRES_WHEEL) && f == hires_wheel::GET_MODE)
            || (at(feature::THUMB_WHEEL)
                && matches!(
                    f,
                    thumb_wheel::GET_INFO | thumb_wheel::GET_STATUS | thumb_wheel::SET_REPORTING
                ))
            // The query session reads dpi and SmartShift; only a configured one is written.
            || (at(feature::ADJUSTABLE_DPI)
                && matches!(f, adjustable_dpi::GET_DPI_LIST | adjustable_dpi::GET_DPI))
            || (at(feature::SMART_SHIFT) && f == smart_shift::GET)
            || (at(feature::SMART_SHIFT_ENHANCED) && f == smart_shift::ENHANCED_GET)
            // The battery is read only by sessions asked to (macOS), and never written.
            || (at(feature::UNIFIED_BATTERY)
                && s.config().read_battery
                && matches!(
                    f,
                    unified_battery::GET_CAPABILITIES | unified_battery::GET_STATUS
                ));
        if req.sub_id == feature::ROOT_INDEX && f == root::GET_FEATURE {
            assert!(
                s.config().read_battery
                    || req.params[..2] != feature::UNIFIED_BATTERY.to_be_bytes(),
                "0x1004 looked up by a session that does not read the battery"
            );
        }
        assert!(
            allowed,
            "request {req:?}: function {f} at index {}",
            req.sub_id
        );
        if f == reprog::SET_CID_REPORTING && at(feature::REPROG_CONTROLS_V4) {
            let flags = req.params[2];
            assert_eq!(
                flags & (reporting_flags::PERSIST | reporting_flags::PERSIST_VALID),
                0,
                "persistent diversion requested: {req:?}"
            );
        }
        // 0x2121 gets getWheelMode only, unless the device put another feature pawl uses
        // at the same index (a device lying about itself).
        let shared =
            at(feature::DEVICE_NAME) || at(feature::REPROG_CONTROLS_V4) || at(feature::THUMB_WHEEL);
        if at(feature::HIRES_WHEEL) && !shared {
            assert_eq!(f, hires_wheel::GET_MODE, "0x2121 written: {req:?}");
        }
    }

    fn check_frame(&self, frame: &pawl_engine::FrameIn) {
        let s = &self.session;
        assert_eq!(frame.time, self.now);
        for c in frame.buttons.as_slice() {
            assert!(
                s.config().divert.iter().any(|d| d.button == c.button),
                "button {:?} is no configured control's",
                c.button
            );
        }
        assert_eq!(frame.wheel.v120, 0);
        assert_eq!(frame.wheel.detents, 0);
        if frame.hwheel.v120 != 0 {
            assert_eq!(s.config().thumb_wheel, ThumbWheel::Divert);
            assert!(s.thumb_diverted());
        }
        assert_eq!(frame.hwheel.detents, frame.hwheel.v120 / V120_PER_DETENT);
        assert!(i16::try_from(frame.dx).is_ok() && i16::try_from(frame.dy).is_ok());
    }

    fn undivert(&mut self) {
        let confirmed: Vec<u16> = self.session.diverted().map(|r| r.cid).collect();
        let thumb_ours = self.session.config().thumb_wheel == ThumbWheel::Divert
            && self.session.thumb_diverted();
        let messages = self.session.undivert();
        assert_eq!(
            self.session.deadline(),
            None,
            "undivert left a request pending"
        );
        let s = &self.session;
        for m in &messages {
            self.check_request(m);
            let f = m.function();
            if s.feature_index(feature::REPROG_CONTROLS_V4) == Some(m.sub_id)
                && f == reprog::SET_CID_REPORTING
            {
                let cid = m.u16_at(0);
                assert!(
                    s.config().divert.iter().any(|d| d.cid == cid),
                    "un-divert of 0x{cid:04X}, which pawl does not divert"
                );
                let flags = m.params[2];
                assert_eq!(
                    flags & (reporting_flags::DIVERT | reporting_flags::RAW_XY),
                    0,
                    "an un-divert request that diverts: {m:?}"
                );
                assert_ne!(flags & reporting_flags::DIVERT_VALID, 0, "{m:?}");
            } else {
                assert!(
                    s.feature_index(feature::THUMB_WHEEL) == Some(m.sub_id)
                        && f == thumb_wheel::SET_REPORTING
                        && m.params[0] != thumb_wheel::MODE_DIVERTED,
                    "not an un-divert request: {m:?}"
                );
            }
        }
        for m in &messages {
            let (bytes, len) = m.encode();
            self.device.answer(&bytes[..len]);
        }
        self.wire = None;
        if self.honest {
            for cid in confirmed {
                let r = self.device.reporting(cid);
                assert!(
                    r.is_some_and(|r| !r.divert && !r.raw_xy),
                    "0x{cid:04X} still diverted after undivert: {r:?}"
                );
            }
            if thumb_ours {
                assert!(
                    !self.device.thumb_diverted(),
                    "thumb wheel still diverted after undivert"
                );
            }
            assert_eq!(self.device.wheel_mode_writes(), 0);
            assert_eq!(self.device.persistent_writes(), 0);
        }
    }
}
