//! The HID++ session against the emulated MX Master 3S (and the 4, 3 and 2S where they
//! differ): setup, gestures through the real engine, reconnection, exit, errors — the pure
//! halves of the VM's `hidpp_*` scenarios.

use pawl_engine::config::{MouseSettings, SmartShift};
use pawl_engine::frame::Buttons;
use pawl_engine::units::{Button, Micros};
use pawl_engine::{Action, Config, DeviceEngine, FrameIn, FrameOut, Platform, Verdict};
use pawl_hidpp::battery::{Battery, Capabilities, Charging, Level};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;
use pawl_hidpp::emulator::{Emulator, Failure, FeatureEntry, MX_MASTER_3S_FEATURES, Motion};
use pawl_hidpp::error::ErrorReply;
use pawl_hidpp::feature;
use pawl_hidpp::feature::receiver;
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing, Message};
use pawl_hidpp::{Event, Output, Phase, Request, Session, SessionConfig, ThumbStatus, ThumbWheel};

const BLUETOOTH: Framing = Framing {
    short: false,
    long: true,
};
const RECEIVER: Framing = Framing {
    short: true,
    long: true,
};

/// A session, its device and the engine it feeds, plus everything that happened.
struct Rig {
    device: Emulator,
    session: Session,
    engine: DeviceEngine,
    now: Micros,
    events: Vec<Event>,
    actions: Vec<Action>,
    written: Vec<Message>,
}

impl Rig {
    fn new(device: Emulator, framing: Framing, config: SessionConfig) -> Rig {
        Rig::with_engine(
            device,
            framing,
            config,
            &Config::default_for(Platform::Linux),
        )
    }

    /// A daemon's session and engine for the config `text` (Linux), over Bluetooth.
    fn from_config(device: Emulator, text: &str) -> Rig {
        let config = Config::parse(text, "c.toml", Platform::Linux).expect("a valid config");
        Rig::with_engine(
            device,
            BLUETOOTH,
            SessionConfig::for_config(&config),
            &config,
        )
    }

    fn with_engine(
        device: Emulator,
        framing: Framing,
        config: SessionConfig,
        engine_config: &Config,
    ) -> Rig {
        let index = device.device();
        let engine = DeviceEngine::with_profile(engine_config, false, engine_config.scroll);
        let mut rig = Rig {
            device,
            session: Session::new(config, framing, index),
            engine,
            now: Micros(0),
            events: Vec::new(),
            actions: Vec::new(),
            written: Vec::new(),
        };
        let mut out = Output::default();
        rig.session.start(rig.now, &mut out);
        rig.settle(out);
        rig
    }

    fn bluetooth() -> Rig {
        Rig::new(
            Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
            BLUETOOTH,
            SessionConfig::gesture(Button(5)),
        )
    }

    /// Handles an output: events recorded, frames through the engine (a gesture that
    /// commits writes the haptic request, as the daemons do), each request written to the
    /// device and its reply read back, until nothing is outstanding.
    fn settle(&mut self, mut out: Output) {
        loop {
            self.events.extend(out.events());
            if let Some(frame) = out.frame {
                let mut res = FrameOut::default();
                if self.engine.frame(&frame, &mut res) == Verdict::Rewrite {
                    self.actions.extend_from_slice(res.actions.as_slice());
                    if pawl_hidpp::gesture_committed(&frame, &res)
                        && let Some(m) = self.session.gesture_haptic()
                    {
                        self.play(m);
                    }
                }
            }
            let Some(request) = out.request else { return };
            self.written.push(request);
            let (bytes, len) = request.encode();
            let reply = self
                .device
                .answer(&bytes[..len])
                .expect("the device answers");
            out = Output::default();
            self.now = self.now.plus(2_000);
            let (bytes, len) = reply.encode();
            self.session.input(&bytes[..len], self.now, &mut out);
        }
    }

    /// Writes the haptic request `m` next to the queue and hands its acknowledgment back,
    /// which the session ignores (nothing waits for it).
    fn play(&mut self, m: Message) {
        self.written.push(m);
        let (bytes, len) = m.encode();
        let ack = self
            .device
            .answer(&bytes[..len])
            .expect("the device answers");
        let (bytes, len) = ack.encode();
        let mut out = Output::default();
        self.session.input(&bytes[..len], self.now, &mut out);
        assert_eq!(out, Output::default(), "the acknowledgment changes nothing");
    }

    /// The device sends `m`.
    fn receive(&mut self, m: Message) {
        self.now = self.now.plus(8_000);
        let (bytes, len) = m.encode();
        let mut out = Output::default();
        self.session.input(&bytes[..len], self.now, &mut out);
        self.settle(out);
    }

    fn press(&mut self, held: bool) {
        let m = self
            .device
            .set_held(CID_GESTURE_BUTTON, held)
            .expect("the gesture button is diverted");
        self.receive(m);
    }

    fn drag(&mut self, dx: i16, dy: i16) {
        match self.device.motion(dx, dy) {
            Motion::RawXy(m) => self.receive(m),
            Motion::Hid => panic!("motion went to HID while the gesture button is held"),
        }
    }
}

#[test]
fn setup_diverts_the_gesture_button_temporarily_with_raw_xy() {
    let rig = Rig::bluetooth();
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.protocol(), Some((4, 5)));
    assert_eq!(rig.session.name(), "MX Master 3S");
    let r = rig.device.reporting(CID_GESTURE_BUTTON).unwrap();
    assert!(r.divert && r.raw_xy);
    assert_eq!(rig.device.persistent_writes(), 0);
    let diverted: Vec<u16> = rig.session.diverted().map(|r| r.cid).collect();
    assert_eq!(diverted, [CID_GESTURE_BUTTON]);
    assert!(rig.events.contains(&Event::Ready));
    // Every request went out long: the Bluetooth descriptor has no short report.
    assert!(rig.written.iter().all(|m| m.long));
}

#[test]
fn setup_reads_the_wheel_mode_and_never_writes_it() {
    let rig = Rig::bluetooth();
    assert_eq!(rig.session.wheel_mode(), Some(0));
    assert_eq!(rig.device.wheel_mode_writes(), 0);
}

#[test]
fn feature_indices_are_the_ones_the_device_answered() {
    let rig = Rig::bluetooth();
    for id in [
        feature::ROOT,
        feature::DEVICE_NAME,
        feature::REPROG_CONTROLS_V4,
        feature::WIRELESS_DEVICE_STATUS,
        feature::HIRES_WHEEL,
        feature::THUMB_WHEEL,
    ] {
        assert_eq!(
            rig.session.feature_index(id),
            rig.device.feature_index(id),
            "{id:04X}"
        );
    }
    // Not looked up (the feature set 0x0001 is on the device, pawl never asks for it).
    assert_eq!(rig.session.feature_index(feature::FEATURE_SET), None);
    let fresh = Session::new(
        SessionConfig::gesture(Button(5)),
        BLUETOOTH,
        DEVICE_INDEX_DIRECT,
    );
    assert_eq!(fresh.feature_index(feature::REPROG_CONTROLS_V4), None);
}

#[test]
fn idle_session_has_no_deadline() {
    let rig = Rig::bluetooth();
    assert_eq!(rig.session.deadline(), None);
}

#[test]
fn gesture_right_fires_the_desktop_action() {
    let mut rig = Rig::bluetooth();
    rig.press(true);
    rig.drag(5, 0); // dropped: the first raw-XY report after a press
    for _ in 0..10 {
        rig.drag(30, 2);
    }
    rig.press(false);
    // Desktop direction is inverted by default: dragging right shows the desktop on the
    // left, as for evdev buttons.
    assert_eq!(rig.actions, [Action::DesktopLeft]);
    assert!(!rig.engine.gesture_held());
}

#[test]
fn first_raw_xy_report_after_a_press_is_dropped() {
    let mut rig = Rig::bluetooth();
    rig.press(true);
    rig.drag(400, 0); // pre-press motion in the first report: above the 220 px threshold
    rig.drag(100, 0);
    rig.press(false);
    assert_eq!(rig.actions, []);
    // The second report counts.
    rig.press(true);
    rig.drag(1, 0);
    rig.drag(400, 0);
    rig.press(false);
    assert_eq!(rig.actions, [Action::DesktopLeft]);
}

#[test]
fn motion_with_the_button_up_is_not_hidpp_and_the_session_ignores_mouse_reports() {
    let mut rig = Rig::bluetooth();
    assert_eq!(rig.device.motion(50, 0), Motion::Hid);
    let mut out = Output::default();
    rig.session
        .input(&[0x02, 0, 0, 0x32, 0, 0, 0, 0], Micros(1), &mut out);
    assert_eq!(out, Output::default());
}

#[test]
fn wireless_status_broadcast_rediverts_after_a_reset() {
    let mut rig = Rig::bluetooth();
    rig.device.reset();
    assert!(!rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
    let status = rig.device.wireless_status();
    rig.receive(status);
    assert!(rig.events.contains(&Event::Reconnected));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
    rig.press(true);
    rig.drag(0, 0);
    rig.drag(-300, 0);
    rig.press(false);
    assert_eq!(rig.actions, [Action::DesktopRight]);
}

#[test]
fn receiver_link_loss_and_return_rediverts_the_paired_device() {
    let mut rig = Rig::new(
        Emulator::mx_master_3s(RECEIVER, 2),
        RECEIVER,
        SessionConfig::gesture(Button(5)),
    );
    assert_eq!(rig.session.phase(), Phase::Ready);
    rig.press(true);
    let lost = rig.device.receiver_connection(false);
    rig.receive(lost);
    assert!(rig.events.contains(&Event::Disconnected));
    assert_eq!(rig.session.phase(), Phase::Offline);
    assert_eq!(rig.session.diverted().count(), 0);
    rig.device.reset();
    let back = rig.device.receiver_connection(true);
    rig.receive(back);
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

#[test]
fn reports_for_another_device_index_are_ignored() {
    let mut rig = Rig::new(
        Emulator::mx_master_3s(RECEIVER, 2),
        RECEIVER,
        SessionConfig::gesture(Button(5)),
    );
    let other = Emulator::mx_master_3s(RECEIVER, 3).receiver_connection(false);
    rig.receive(other);
    assert_eq!(rig.session.phase(), Phase::Ready);
}

#[test]
fn undivert_restores_native_reporting() {
    let mut rig = Rig::bluetooth();
    let requests = rig.session.undivert();
    assert_eq!(requests.len(), 1);
    for m in requests {
        let (bytes, len) = m.encode();
        rig.device.answer(&bytes[..len]).unwrap();
    }
    let r = rig.device.reporting(CID_GESTURE_BUTTON).unwrap();
    assert!(!r.divert && !r.raw_xy);
    assert_eq!(rig.device.persistent_writes(), 0);
    assert_eq!(rig.session.diverted().count(), 0);
}

#[test]
fn error_reply_to_the_divert_request_is_reported_with_its_meaning() {
    let mut device = Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT);
    device.fail(
        feature::REPROG_CONTROLS_V4,
        feature::reprog::SET_CID_REPORTING,
        Failure::V20(0x02),
    );
    let rig = Rig::new(device, BLUETOOTH, SessionConfig::gesture(Button(5)));
    let error = rig
        .events
        .iter()
        .find(|e| matches!(e, Event::Error { .. }))
        .expect("an error event");
    assert_eq!(
        error.to_string(),
        "divert 0x00C3 gesture button (0x1B04 setCidReporting) failed: HID++ 2.0 error 0x02: \
         invalid argument (the device refused the value)"
    );
    // Setup still finishes; nothing counts as diverted.
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.diverted().count(), 0);
}

#[test]
fn hidpp10_error_to_the_ping_means_the_device_speaks_hidpp10_only() {
    let device = Emulator::mx_master_3s(RECEIVER, 1).hidpp10_only();
    let rig = Rig::new(device, RECEIVER, SessionConfig::gesture(Button(5)));
    assert_eq!(rig.session.phase(), Phase::Unsupported);
    assert!(rig.events.contains(&Event::Unsupported));
}

#[test]
fn receiver_slot_with_a_sleeping_device_is_offline_until_it_connects() {
    let mut device = Emulator::mx_master_3s(RECEIVER, 1);
    device.fail(
        feature::ROOT,
        feature::root::GET_PROTOCOL_VERSION,
        Failure::V10(0x09),
    );
    let rig = Rig::new(device, RECEIVER, SessionConfig::gesture(Button(5)));
    assert_eq!(rig.session.phase(), Phase::Offline);
    let offline = rig.events.iter().find(|e| matches!(e, Event::Offline(_)));
    assert!(matches!(
        offline,
        Some(Event::Offline(Some(ErrorReply::V10 { code: 0x09, .. })))
    ));
    assert!(
        offline
            .unwrap()
            .to_string()
            .contains("asleep or switched off")
    );
}

#[test]
fn a_request_without_reply_times_out_to_offline() {
    let mut session = Session::new(
        SessionConfig::gesture(Button(5)),
        BLUETOOTH,
        DEVICE_INDEX_DIRECT,
    );
    let mut out = Output::default();
    session.start(Micros(1_000), &mut out);
    assert!(out.request.is_some());
    let deadline = session.deadline().unwrap();
    assert_eq!(deadline, Micros(2_001_000));
    let mut out = Output::default();
    session.timeout(Micros(1_500_000), &mut out);
    assert_eq!(session.phase(), Phase::Setup);
    session.timeout(deadline, &mut out);
    assert_eq!(session.phase(), Phase::Offline);
    assert_eq!(out.events().collect::<Vec<_>>(), [Event::Offline(None)]);
    assert_eq!(session.deadline(), None);
}

#[test]
fn replies_to_other_programs_are_ignored() {
    let mut session = Session::new(
        SessionConfig::gesture(Button(5)),
        BLUETOOTH,
        DEVICE_INDEX_DIRECT,
    );
    let mut out = Output::default();
    session.start(Micros(0), &mut out);
    let ping = out.request.unwrap();
    let mut device = Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT);
    // The same request from Solaar (another software id) gets the same reply shape.
    let mut theirs = ping;
    theirs.address = (ping.address & 0xF0) | 0x03;
    let (bytes, len) = theirs.encode();
    let reply = device.answer(&bytes[..len]).unwrap();
    let (bytes, len) = reply.encode();
    let mut out = Output::default();
    session.input(&bytes[..len], Micros(1), &mut out);
    assert_eq!(out, Output::default());
    assert_eq!(session.protocol(), None);
}

#[test]
fn a_missing_control_is_reported() {
    let mut config = SessionConfig::gesture(Button(5));
    // 0x00FD is on no MX Master's control list (0x00D7, the virtual gesture button, is).
    config.divert.push(pawl_hidpp::DivertSpec {
        cid: 0x00FD,
        button: Button(6),
        raw_xy: false,
        required: true,
    });
    let rig = Rig::new(
        Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
        BLUETOOTH,
        config,
    );
    assert!(rig.events.contains(&Event::ControlMissing(0x00FD)));
    assert_eq!(rig.session.diverted().count(), 1);
}

#[test]
fn query_session_reads_what_is_diverted_and_diverts_nothing() {
    let query = || SessionConfig::query(pawl_hidpp::report::SOFTWARE_ID_QUERY);
    let fresh = Rig::new(
        Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
        BLUETOOTH,
        query(),
    );
    assert_eq!(fresh.session.controls().len(), 8);
    assert_eq!(fresh.session.diverted().count(), 0);
    assert!(fresh.device.controls().iter().all(|c| !c.reporting.divert));
    assert!(fresh.written.iter().all(|m| m.sw_id() == 0x0B));
    // The daemon diverted the gesture button; the query sees it.
    let daemon = Rig::bluetooth();
    let rig = Rig::new(daemon.device, BLUETOOTH, query());
    let diverted: Vec<u16> = rig.session.diverted().map(|r| r.cid).collect();
    assert_eq!(diverted, [CID_GESTURE_BUTTON]);
}

use pawl_recordings::dir as recordings_dir;

/// A Bluetooth MX Master 3S whose session runs the thumb wheel in `mode`.
fn thumb_rig(device: Emulator, mode: ThumbWheel) -> Rig {
    let mut config = SessionConfig::gesture(Button(5));
    config.thumb_wheel = mode;
    Rig::new(device, BLUETOOTH, config)
}

fn mx_master_3s() -> Emulator {
    Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT)
}

impl Rig {
    /// The thumb wheel turns by `increments` (diverted); returns the v120 of the frames
    /// the session made of it.
    fn turn(&mut self, increments: i16) -> i32 {
        let m = self
            .device
            .thumb(increments)
            .expect("the thumb wheel is diverted");
        self.now = self.now.plus(8_000);
        let (bytes, len) = m.encode();
        let mut out = Output::default();
        self.session.input(&bytes[..len], self.now, &mut out);
        let frame = out.frame.unwrap_or_default();
        if out.frame.is_some() {
            // The frame is stamped with the time its report arrived; lo-res detents are
            // whole detents of the v120 (120 each).
            assert_eq!(frame.time, self.now);
            assert_eq!(frame.hwheel.detents, frame.hwheel.v120 / 120);
        }
        assert_eq!((frame.dx, frame.dy, frame.wheel.v120), (0, 0, 0));
        assert!(frame.buttons.is_empty());
        frame.hwheel.v120
    }

    fn set_thumb(&mut self, mode: ThumbWheel) {
        let mut out = Output::default();
        self.session.set_thumb_wheel(mode, self.now, &mut out);
        self.settle(out);
    }

    fn thumb_writes(&self) -> usize {
        let index = self.device.feature_index(feature::THUMB_WHEEL);
        self.written
            .iter()
            .filter(|m| {
                Some(m.sub_id) == index && m.function() == feature::thumb_wheel::SET_REPORTING
            })
            .count()
    }
}

#[test]
fn thumb_wheel_is_read_and_left_alone_unless_the_session_manages_it() {
    let rig = thumb_rig(mx_master_3s(), ThumbWheel::Leave);
    let info = rig.session.thumb_info().expect("0x2150 info");
    assert_eq!((info.native_res, info.diverted_res), (18, 120));
    assert!(info.positive_right_or_front);
    assert_eq!(rig.session.thumb_status(), Some(ThumbStatus::default()));
    assert!(!rig.device.thumb_diverted());
    assert_eq!(rig.thumb_writes(), 0);
    // Native: nothing to change either.
    let rig = thumb_rig(mx_master_3s(), ThumbWheel::Native);
    assert_eq!(rig.thumb_writes(), 0);
}

#[test]
fn diverted_thumb_wheel_scrolls_with_the_sign_and_travel_of_its_native_reports() {
    let mut rig = thumb_rig(mx_master_3s(), ThumbWheel::Divert);
    assert!(rig.device.thumb_diverted() && rig.session.thumb_diverted());
    assert_eq!(rig.session.phase(), Phase::Ready);
    // One turn is 18 ratchets natively (18 AC Pan counts, 18 × 120 v120) and 120
    // increments diverted: the same turn scrolls as far, in the same direction.
    let ratchet = mx_master_3s().thumb_native(1).expect("not diverted");
    let native_turn = 18 * 120 * i32::from(ratchet);
    for sign in [1, -1] {
        let v120: i32 = (0..6).map(|_| rig.turn(sign * 20)).sum();
        assert_eq!(v120, i32::from(sign) * native_turn);
    }
    // One increment is 18 v120: a fraction of a detent, i.e. hi-res horizontal scroll.
    assert_eq!(rig.turn(1), 18);
}

#[test]
fn thumb_wheel_increments_carry_their_remainder() {
    // 8 increments per ratchet: 3 + 5 increments are exactly one detent.
    let device = mx_master_3s().with_thumb_resolution(18, 144);
    let mut rig = thumb_rig(device, ThumbWheel::Divert);
    assert_eq!(rig.turn(3) + rig.turn(5), 120);
    assert_eq!(rig.turn(-1) + rig.turn(-7), -120);
}

#[test]
fn the_mx1_recording_and_the_diverted_wheel_agree_on_direction() {
    // `mx1-thumb-wheel.events`: the thumb wheel rolled up, then down, natively: REL_HWHEEL
    // -1 then +1 (HI_RES -120, +120). The emulator's thumb wheel has one direction setting
    // for both modes, as 0x2150 does: the same two ratchets, diverted, become the same
    // v120 (a ratchet is 120/18 increments: three ratchets are 20 increments).
    let path = recordings_dir().join("mx1-thumb-wheel.events");
    let recording = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (shared/recordings beside the repository)",
            path.display()
        )
    });
    let hwheel_hires: Vec<i32> = recording
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.first() == Some(&"E:") && f[2] == "0002" && f[3] == "000c")
                .then(|| f[4].parse().unwrap())
        })
        .collect();
    assert_eq!(hwheel_hires, [-120, 120]);
    let mut rig = thumb_rig(mx_master_3s(), ThumbWheel::Divert);
    for native in hwheel_hires {
        let ratchets = (native / 120) as i16;
        let v120 = rig.turn(ratchets * 20) / 3;
        assert_eq!(v120, native);
    }
}

#[test]
fn thumb_wheel_keeps_the_devices_invert_bit() {
    let mut device = mx_master_3s();
    device.set_thumb_inverted(true);
    let native = i32::from(device.thumb_native(1).unwrap());
    assert_eq!(native, -1);
    let mut rig = thumb_rig(device, ThumbWheel::Divert);
    assert!(rig.device.thumb_diverted());
    assert!(
        rig.device.thumb_inverted(),
        "the divert request cleared the invert bit"
    );
    assert_eq!(rig.turn(20), native * 360);
    for m in rig.session.undivert() {
        let (bytes, len) = m.encode();
        rig.device.answer(&bytes[..len]);
    }
    assert!(!rig.device.thumb_diverted());
    assert!(
        rig.device.thumb_inverted(),
        "un-diverting cleared the invert bit"
    );
}

#[test]
fn thumb_wheel_follows_the_mode_after_setup() {
    let mut rig = thumb_rig(mx_master_3s(), ThumbWheel::Native);
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert!(!rig.device.thumb_diverted());
    rig.set_thumb(ThumbWheel::Divert);
    assert!(rig.device.thumb_diverted());
    assert!(rig.events.contains(&Event::ThumbWheel(true)));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.deadline(), None);
    assert_eq!(rig.turn(10), 180);
    rig.set_thumb(ThumbWheel::Native);
    assert!(!rig.device.thumb_diverted());
    assert!(rig.events.contains(&Event::ThumbWheel(false)));
    // Leaving it alone writes nothing.
    let before = rig.thumb_writes();
    rig.set_thumb(ThumbWheel::Leave);
    rig.set_thumb(ThumbWheel::Leave);
    assert_eq!(rig.thumb_writes(), before);
    // Left alone after pawl diverted it (`thumb_wheel = false` on SIGHUP): pawl's
    // diversion is undone, once.
    rig.set_thumb(ThumbWheel::Divert);
    assert!(rig.device.thumb_diverted());
    rig.set_thumb(ThumbWheel::Leave);
    assert!(!rig.device.thumb_diverted());
    assert_eq!(
        rig.session.undivert().len(),
        1,
        "only the gesture button is left"
    );
    // The gesture button stayed diverted throughout.
    assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

#[test]
fn thumb_wheel_mode_changed_during_setup_is_what_setup_applies() {
    let mut config = SessionConfig::gesture(Button(5));
    config.thumb_wheel = ThumbWheel::Native;
    let mut device = mx_master_3s();
    let mut session = Session::new(config, BLUETOOTH, DEVICE_INDEX_DIRECT);
    let mut out = Output::default();
    session.start(Micros(0), &mut out);
    let mut changed = false;
    let mut requests = 0;
    while let Some(request) = out.request.take() {
        requests += 1;
        if requests == 3 && !changed {
            // Mid-setup (feature lookups): the pointer node was grabbed.
            session.set_thumb_wheel(ThumbWheel::Divert, Micros(1), &mut out);
            assert_eq!(out.request, None, "a second request while one is in flight");
            changed = true;
        }
        let (bytes, len) = request.encode();
        let reply = device.answer(&bytes[..len]).unwrap();
        let (bytes, len) = reply.encode();
        out = Output::default();
        session.input(&bytes[..len], Micros(2), &mut out);
    }
    assert!(changed);
    assert_eq!(session.phase(), Phase::Ready);
    assert!(device.thumb_diverted() && session.thumb_diverted());
}

#[test]
fn thumb_wheel_diverted_again_after_a_reconnect_and_undone_on_exit() {
    let mut rig = thumb_rig(mx_master_3s(), ThumbWheel::Divert);
    rig.device.reset();
    assert!(!rig.device.thumb_diverted());
    let status = rig.device.wireless_status();
    rig.receive(status);
    assert!(
        rig.device.thumb_diverted(),
        "not diverted again after the reconnection"
    );
    assert_eq!(rig.turn(-10), -180);
    let requests = rig.session.undivert();
    assert_eq!(requests.len(), 2, "gesture button and thumb wheel");
    for m in requests {
        let (bytes, len) = m.encode();
        rig.device.answer(&bytes[..len]);
    }
    assert!(!rig.device.thumb_diverted());
}

#[test]
fn thumb_wheel_found_diverted_and_then_asked_to_divert_is_pawls_and_undone_on_exit() {
    // Setup with the mode at leave found the wheel diverted (a pawl killed, or pawl's own
    // before a restarted setup); then the mode becomes divert (the pointer node grabbed).
    let killed = thumb_rig(mx_master_3s(), ThumbWheel::Divert);
    let mut rig = thumb_rig(killed.device, ThumbWheel::Leave);
    assert!(rig.device.thumb_diverted());
    rig.set_thumb(ThumbWheel::Divert);
    assert_eq!(rig.thumb_writes(), 0, "already diverted: nothing to write");
    assert_eq!(rig.turn(10), 180);
    let requests = rig.session.undivert();
    assert_eq!(requests.len(), 2, "gesture button and thumb wheel");
    for m in requests {
        let (bytes, len) = m.encode();
        rig.device.answer(&bytes[..len]);
    }
    assert!(
        !rig.device.thumb_diverted(),
        "left diverted after exit: the thumb wheel would be dead until the mouse reconnects"
    );
}

#[test]
fn leftover_thumb_diversion_is_undone_natively_and_others_diversions_are_left_alone() {
    // A pawl killed with the thumb wheel diverted.
    let killed = thumb_rig(mx_master_3s(), ThumbWheel::Divert);
    assert!(killed.device.thumb_diverted());
    // Leave (`[hidpp] thumb_wheel = false`, `pawl devices`): seen, not touched, not undone.
    let mut rig = thumb_rig(killed.device, ThumbWheel::Leave);
    assert!(rig.session.thumb_diverted() && rig.device.thumb_diverted());
    assert_eq!(rig.thumb_writes(), 0);
    assert_eq!(
        rig.session.undivert().len(),
        1,
        "only the gesture button is pawl's"
    );
    // Its notifications are not pawl's input then.
    let m = rig.device.thumb(20).unwrap();
    let (bytes, len) = m.encode();
    let mut out = Output::default();
    rig.session.input(&bytes[..len], Micros(1), &mut out);
    assert_eq!(out.frame, None);
    // Native: undone in setup.
    let rig = thumb_rig(rig.device, ThumbWheel::Native);
    assert!(!rig.device.thumb_diverted() && !rig.session.thumb_diverted());
}

#[test]
fn thumb_wheel_status_error_is_reported_and_the_wheel_still_diverted() {
    let mut device = mx_master_3s();
    device.fail(
        feature::THUMB_WHEEL,
        feature::thumb_wheel::GET_STATUS,
        Failure::V20(0x05),
    );
    let rig = thumb_rig(device, ThumbWheel::Divert);
    assert!(rig.events.iter().any(|e| matches!(
        e,
        Event::Error {
            request: Request::ThumbStatus,
            ..
        }
    )));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert!(rig.device.thumb_diverted());
}

#[test]
fn request_names_say_what_failed() {
    assert_eq!(
        Request::Ping.to_string(),
        "protocol version (Root 0x0000 ping)"
    );
    assert_eq!(
        Request::GetFeature(0x1B04).to_string(),
        "feature lookup 0x1B04 (Reprogrammable controls v4)"
    );
}

/// The kernel's `hid-logitech-hidpp` talks to the same device: software id 1 for its HID++
/// 2.0 requests, 0 for its ping (6.1 `hidpp_send_fap_command_sync`, `hidpp_root_get_protocol_version`).
const KERNEL_SW_ID: u8 = 1;

#[test]
fn pawls_software_id_is_neither_the_kernels_nor_the_pings() {
    let mut rig = Rig::bluetooth();
    rig.device.reset();
    let status = rig.device.wireless_status();
    rig.receive(status);
    let exit = rig.session.undivert();
    for m in exit {
        let (bytes, len) = m.encode();
        rig.device.answer(&bytes[..len]).unwrap();
        rig.written.push(m);
    }
    assert!(!rig.written.is_empty());
    for m in &rig.written {
        assert!(
            m.sw_id() != KERNEL_SW_ID && m.sw_id() != 0,
            "request {m:?} uses software id {}",
            m.sw_id()
        );
    }
}

#[test]
fn pawl_never_addresses_the_wireless_status_feature_nor_writes_the_wheel_mode() {
    // A reply on the 0x1D4B index is a connect event to the kernel's driver
    // (`hidpp_report_is_connect_event`): it would re-run its setup. 0x2121 is the driver's.
    let mut rig = Rig::bluetooth();
    rig.device.reset();
    let status = rig.device.wireless_status();
    rig.receive(status);
    let exit = rig.session.undivert();
    for m in exit {
        let (bytes, len) = m.encode();
        rig.device.answer(&bytes[..len]).unwrap();
        rig.written.push(m);
    }
    let wireless = rig
        .device
        .feature_index(feature::WIRELESS_DEVICE_STATUS)
        .unwrap();
    let hires = rig.device.feature_index(feature::HIRES_WHEEL).unwrap();
    assert!(rig.written.iter().all(|m| m.sub_id != wireless));
    assert!(
        !rig.written
            .iter()
            .any(|m| m.sub_id == hires && m.function() == feature::hires_wheel::SET_MODE)
    );
    assert_eq!(rig.device.wheel_mode_writes(), 0);
}

#[test]
fn the_kernels_replies_on_hidraw_change_nothing() {
    // Every reply the kernel's probe and reconnect work get, as pawl's hidraw reader sees
    // them, arriving while pawl waits for each of its own replies.
    let mut device = Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT);
    let mut kernel_view = device.clone();
    let index = |id| kernel_view.feature_index(id).unwrap();
    let (name, hires, battery) = (
        index(feature::DEVICE_NAME),
        index(feature::HIRES_WHEEL),
        index(feature::UNIFIED_BATTERY),
    );
    let kernel_requests = [
        Message::request(BLUETOOTH, DEVICE_INDEX_DIRECT, 0, 1, 0, &[0, 0, 0x5A]),
        Message::request(
            BLUETOOTH,
            DEVICE_INDEX_DIRECT,
            0,
            0,
            KERNEL_SW_ID,
            &[0x1D, 0x4B],
        ),
        Message::request(BLUETOOTH, DEVICE_INDEX_DIRECT, name, 0, KERNEL_SW_ID, &[]),
        Message::request(
            BLUETOOTH,
            DEVICE_INDEX_DIRECT,
            battery,
            1,
            KERNEL_SW_ID,
            &[],
        ),
        Message::request(
            BLUETOOTH,
            DEVICE_INDEX_DIRECT,
            hires,
            2,
            KERNEL_SW_ID,
            &[0x02],
        ),
        Message::request(BLUETOOTH, DEVICE_INDEX_DIRECT, hires, 0, KERNEL_SW_ID, &[]),
        // A function the device lacks: an error reply naming the kernel's software id.
        Message::request(BLUETOOTH, DEVICE_INDEX_DIRECT, hires, 9, KERNEL_SW_ID, &[]),
    ];
    let kernel_replies: Vec<Message> = kernel_requests
        .iter()
        .map(|r| {
            let (bytes, len) = r.encode();
            kernel_view.answer(&bytes[..len]).unwrap()
        })
        .collect();
    let mut session = Session::new(
        SessionConfig::gesture(Button(5)),
        BLUETOOTH,
        DEVICE_INDEX_DIRECT,
    );
    let mut out = Output::default();
    session.start(Micros(0), &mut out);
    let mut t = 0;
    while let Some(request) = out.request.take() {
        for k in &kernel_replies {
            let (bytes, len) = k.encode();
            let mut theirs = Output::default();
            t += 1;
            session.input(&bytes[..len], Micros(t), &mut theirs);
            assert_eq!(theirs, Output::default(), "the kernel's {k:?} moved pawl");
        }
        let (bytes, len) = request.encode();
        let reply = device.answer(&bytes[..len]).unwrap();
        let (bytes, len) = reply.encode();
        out = Output::default();
        t += 1;
        session.input(&bytes[..len], Micros(t), &mut out);
    }
    assert_eq!(session.phase(), Phase::Ready);
    assert!(device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

/// A short HID++ 1.0 notification from the receiver about slot `device`.
fn receiver_notification(device: u8, sub_id: u8) -> Message {
    Message {
        long: false,
        device,
        sub_id,
        address: 0,
        params: [0; pawl_hidpp::report::LONG_PARAMS],
    }
}

#[test]
fn receiver_disconnection_takes_the_device_offline_and_other_notifications_do_nothing() {
    let mut rig = Rig::new(
        Emulator::mx_master_3s(RECEIVER, 2),
        RECEIVER,
        SessionConfig::gesture(Button(5)),
    );
    assert_eq!(rig.session.phase(), Phase::Ready);
    // 0x4A (the receiver's pairing-lock status) is neither a connection nor a loss.
    let before = rig.events.len();
    rig.receive(receiver_notification(2, 0x4A));
    assert_eq!(rig.events[before..], []);
    assert_eq!(rig.session.phase(), Phase::Ready);
    // 0x40: the device was unpaired; its diversions are gone with it.
    rig.receive(receiver_notification(2, receiver::DEVICE_DISCONNECTION));
    assert_eq!(rig.events[before..], [Event::Disconnected]);
    assert_eq!(rig.session.phase(), Phase::Offline);
    assert_eq!(rig.session.diverted().count(), 0);
}

#[test]
fn raw_xy_frames_carry_both_axes_and_the_time_they_arrived() {
    let mut rig = Rig::bluetooth();
    rig.press(true);
    rig.drag(0, 0); // the first report after the press is dropped
    let Motion::RawXy(m) = rig.device.motion(-7, -250) else {
        panic!("motion went to HID while the gesture button is held");
    };
    let (bytes, len) = m.encode();
    let mut out = Output::default();
    rig.session.input(&bytes[..len], Micros(123_456), &mut out);
    assert_eq!(
        out.frame,
        Some(FrameIn {
            time: Micros(123_456),
            dx: -7,
            dy: -250,
            ..FrameIn::default()
        })
    );
}

#[test]
fn a_diverted_button_frame_carries_the_time_it_arrived() {
    let mut rig = Rig::bluetooth();
    let m = rig.device.set_held(CID_GESTURE_BUTTON, true).unwrap();
    let (bytes, len) = m.encode();
    let mut out = Output::default();
    rig.session.input(&bytes[..len], Micros(77_000), &mut out);
    let mut buttons = Buttons::default();
    buttons.push(Button(5), true);
    assert_eq!(
        out.frame,
        Some(FrameIn {
            time: Micros(77_000),
            buttons,
            ..FrameIn::default()
        })
    );
}

#[test]
fn a_name_longer_than_one_reply_is_read_in_chunks() {
    // 26 bytes: a 0x0005 reply holds 16, so the name takes two reads.
    let name = "Wireless Mouse MX Master 3";
    let rig = Rig::new(
        Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT).with_name(name),
        BLUETOOTH,
        SessionConfig::gesture(Button(5)),
    );
    assert_eq!(rig.session.name(), name);
}

#[test]
fn a_control_that_is_not_divertable_is_reported_missing_and_left_alone() {
    let mut config = SessionConfig::gesture(Button(5));
    // 0x0050, the left button, has no divertable flag on the MX Master 3S.
    config.divert.push(pawl_hidpp::DivertSpec {
        cid: 0x0050,
        button: Button(6),
        raw_xy: false,
        required: true,
    });
    let rig = Rig::new(mx_master_3s(), BLUETOOTH, config);
    assert!(rig.events.contains(&Event::ControlMissing(0x0050)));
    assert!(!rig.device.reporting(0x0050).unwrap().divert);
    assert!(!rig.events.iter().any(|e| matches!(e, Event::Error { .. })));
    assert_eq!(rig.session.phase(), Phase::Ready);
}

#[test]
fn diversions_wait_for_the_whole_control_list() {
    // The gesture button is not the first control read: diverting before the whole
    // list is read would report it missing.
    let rig = Rig::bluetooth();
    let read: Vec<u16> = rig.session.controls().iter().map(|c| c.info.cid).collect();
    let at = read.iter().position(|&c| c == CID_GESTURE_BUTTON);
    assert!(matches!(at, Some(i) if i > 0), "{read:04x?}");
    assert!(
        !rig.events
            .iter()
            .any(|e| matches!(e, Event::ControlMissing(_)))
    );
    assert_eq!(rig.session.controls().len(), 8);
}

#[test]
fn the_thumb_wheel_is_diverted_only_where_its_scroll_is_transformed() {
    let mut config = Config::default_for(Platform::Linux);
    config.hidpp.thumb_wheel = true;
    assert_eq!(ThumbWheel::for_config(&config, true), ThumbWheel::Divert);
    assert_eq!(ThumbWheel::for_config(&config, false), ThumbWheel::Native);
    config.hidpp.thumb_wheel = false;
    assert_eq!(ThumbWheel::for_config(&config, true), ThumbWheel::Leave);
    assert_eq!(ThumbWheel::for_config(&config, false), ThumbWheel::Leave);
}

#[test]
fn a_session_behind_a_receiver_addresses_its_slot() {
    let rig = Rig::new(
        Emulator::mx_master_3s(RECEIVER, 3),
        RECEIVER,
        SessionConfig::gesture(Button(5)),
    );
    assert_eq!(rig.session.device(), 3);
    assert!(rig.written.iter().all(|m| m.device == 3));
}

/// A session config that diverts the gesture button (raw XY) and the back button (no raw
/// XY), as `[hidpp]` with back mapped does.
fn gesture_and_back() -> SessionConfig {
    let mut config = SessionConfig::gesture(Button(5));
    config.divert.push(pawl_hidpp::DivertSpec {
        cid: pawl_hidpp::controls::CID_BACK,
        button: Button(3),
        raw_xy: false,
        required: true,
    });
    config
}

/// Writes every message of `exit` to `device`, as the daemon does on exit.
fn write_all(device: &mut Emulator, exit: &[Message]) {
    for m in exit {
        let (bytes, len) = m.encode();
        device.answer(&bytes[..len]).expect("the device answers");
    }
}

#[test]
fn setup_reads_the_wheel_mode_the_kernels_driver_left() {
    use pawl_hidpp::feature::hires_wheel;
    // hid-logitech-hidpp turns hi-res on at probe (`hidpp_hrw_set_wheel_mode`), before
    // pawl opens the node.
    let mut device = mx_master_3s();
    let index = device.feature_index(feature::HIRES_WHEEL).expect("0x2121");
    let kernel = Message::request(
        BLUETOOTH,
        DEVICE_INDEX_DIRECT,
        index,
        hires_wheel::SET_MODE,
        KERNEL_SW_ID,
        &[hires_wheel::MODE_RESOLUTION],
    );
    let (bytes, len) = kernel.encode();
    device.answer(&bytes[..len]).expect("the device answers");
    let rig = Rig::new(device, BLUETOOTH, SessionConfig::gesture(Button(5)));
    assert_eq!(rig.session.wheel_mode(), Some(hires_wheel::MODE_RESOLUTION));
    assert_eq!(rig.device.wheel_mode_writes(), 1, "the kernel's write only");
}

#[test]
fn diverted_thumb_wheel_status_reads_back_diverted_with_the_devices_direction() {
    let mut device = mx_master_3s();
    device.set_thumb_inverted(true);
    let rig = thumb_rig(device, ThumbWheel::Divert);
    assert_eq!(
        rig.session.thumb_status(),
        Some(ThumbStatus {
            diverted: true,
            inverted: true
        })
    );
}

#[test]
fn undivert_restores_a_button_diverted_without_raw_xy() {
    let mut rig = Rig::new(mx_master_3s(), BLUETOOTH, gesture_and_back());
    let back = pawl_hidpp::controls::CID_BACK;
    assert!(rig.device.reporting(back).unwrap().divert);
    assert!(!rig.device.reporting(back).unwrap().raw_xy);
    let exit = rig.session.undivert();
    assert_eq!(exit.len(), 2, "the gesture button and the back button");
    write_all(&mut rig.device, &exit);
    assert!(!rig.device.reporting(back).unwrap().divert);
    assert!(!rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

#[test]
fn undivert_leaves_a_control_another_program_diverted() {
    // Another program diverted the back button; this session diverts only the gesture
    // button and reads every control's reporting.
    let other = Rig::new(mx_master_3s(), BLUETOOTH, gesture_and_back());
    let mut config = SessionConfig::gesture(Button(5));
    config.read_reporting = true;
    let mut rig = Rig::new(other.device, BLUETOOTH, config);
    let back = pawl_hidpp::controls::CID_BACK;
    let seen: Vec<u16> = rig.session.diverted().map(|r| r.cid).collect();
    assert!(
        seen.contains(&back),
        "the session read the back button's diversion"
    );
    let exit = rig.session.undivert();
    assert_eq!(exit.len(), 1, "the gesture button only");
    write_all(&mut rig.device, &exit);
    assert!(rig.device.reporting(back).unwrap().divert);
    assert!(!rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

#[test]
fn a_refused_divert_makes_that_controls_reporting_unknown_and_keeps_the_others() {
    // A query-style session (every control's reporting read) whose divert is refused.
    let mut device = mx_master_3s();
    device.fail(
        feature::REPROG_CONTROLS_V4,
        feature::reprog::SET_CID_REPORTING,
        Failure::V20(0x02),
    );
    let mut config = SessionConfig::gesture(Button(5));
    config.read_reporting = true;
    let rig = Rig::new(device, BLUETOOTH, config);
    assert_eq!(rig.session.phase(), Phase::Ready);
    for c in rig.session.controls() {
        if c.info.cid == CID_GESTURE_BUTTON {
            assert_eq!(c.reporting, None, "the refused write leaves it unknown");
        } else {
            assert!(c.reporting.is_some(), "0x{:04X} as read", c.info.cid);
        }
    }
}

#[test]
fn control_list_errors_still_end_setup_with_the_gesture_button_missing_once() {
    let mut device = mx_master_3s();
    device.fail(
        feature::REPROG_CONTROLS_V4,
        feature::reprog::GET_CID_INFO,
        Failure::V20(0x02),
    );
    let rig = Rig::new(device, BLUETOOTH, SessionConfig::gesture(Button(5)));
    assert_eq!(rig.session.phase(), Phase::Ready);
    let missing = rig
        .events
        .iter()
        .filter(|e| **e == Event::ControlMissing(CID_GESTURE_BUTTON))
        .count();
    assert_eq!(missing, 1);
    assert!(!rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

#[test]
fn a_button_without_raw_xy_pressed_mid_gesture_drops_no_motion() {
    let mut rig = Rig::new(mx_master_3s(), BLUETOOTH, gesture_and_back());
    rig.press(true);
    rig.drag(1, 0); // the first report after the gesture press: dropped by design
    let m = rig
        .device
        .set_held(pawl_hidpp::controls::CID_BACK, true)
        .expect("the back button is diverted");
    rig.receive(m);
    let Motion::RawXy(m) = rig.device.motion(50, 0) else {
        panic!("motion went to HID while the gesture button is held")
    };
    let (bytes, len) = m.encode();
    let mut out = Output::default();
    rig.session
        .input(&bytes[..len], rig.now.plus(8_000), &mut out);
    assert_eq!(out.frame.map(|f| f.dx), Some(50));
}

#[test]
fn a_divert_without_raw_xy_asks_for_none_on_a_control_that_has_it() {
    let mut config = SessionConfig::gesture(Button(5));
    config.divert[0].raw_xy = false;
    let rig = Rig::new(mx_master_3s(), BLUETOOTH, config);
    let r = rig.device.reporting(CID_GESTURE_BUTTON).unwrap();
    assert!(r.divert && !r.raw_xy);
}

impl Rig {
    /// How many `getDeviceName` chunks the session asked for.
    fn name_chunks(&self) -> usize {
        let index = self.device.feature_index(feature::DEVICE_NAME);
        self.written
            .iter()
            .filter(|m| Some(m.sub_id) == index && m.function() == feature::device_name::GET_NAME)
            .count()
    }
}

#[test]
fn an_empty_name_asks_for_no_chunk() {
    let rig = Rig::new(
        mx_master_3s().with_name(""),
        BLUETOOTH,
        SessionConfig::gesture(Button(5)),
    );
    assert_eq!(rig.session.name(), "");
    assert_eq!(rig.name_chunks(), 0);
}

#[test]
fn a_name_of_exactly_one_reply_is_read_in_one_chunk() {
    // 16 bytes: one long reply's parameters.
    let name = "Sixteen chars ok";
    assert_eq!(name.len(), 16);
    let rig = Rig::new(
        mx_master_3s().with_name(name),
        BLUETOOTH,
        SessionConfig::gesture(Button(5)),
    );
    assert_eq!(rig.session.name(), name);
    assert_eq!(rig.name_chunks(), 1);
}

#[test]
fn a_name_cut_short_by_a_nul_ends_there() {
    // The length says 17; the string ends at the NUL in the first chunk.
    let rig = Rig::new(
        mx_master_3s().with_name("MX Master 3S\0junk"),
        BLUETOOTH,
        SessionConfig::gesture(Button(5)),
    );
    assert_eq!(rig.session.name(), "MX Master 3S");
    assert_eq!(rig.name_chunks(), 1);
}

/// A session on `device` over Bluetooth diverting the gesture button and managing the
/// thumb wheel in `mode`.
fn bluetooth_rig(device: Emulator, mode: ThumbWheel) -> Rig {
    let mut config = SessionConfig::gesture(Button(5));
    config.thumb_wheel = mode;
    Rig::new(device, BLUETOOTH, config)
}

#[test]
fn an_mx_master_4_gesture_drag_fires_as_on_the_3s() {
    let mut rig = bluetooth_rig(
        Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT),
        ThumbWheel::Leave,
    );
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.name(), "MX Master 4");
    let r = rig.device.reporting(CID_GESTURE_BUTTON).unwrap();
    assert!(r.divert && r.raw_xy, "{r:?}");
    // The Sense Panel is listed and divertable, and left alone unless asked for.
    let sense = rig
        .session
        .controls()
        .iter()
        .find(|c| c.info.cid == 0x01A0)
        .expect("the Sense Panel 0x01A0 is in the control list");
    assert!(sense.info.divertable());
    assert!(!rig.device.reporting(0x01A0).unwrap().divert);
    rig.press(true);
    for _ in 0..10 {
        rig.drag(40, 0);
    }
    rig.press(false);
    assert_eq!(rig.actions, [Action::DesktopLeft]);
}

#[test]
fn an_mx_master_4_thumb_wheel_keeps_its_set_invert_bit_and_its_20_ratchets() {
    let device = Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT);
    assert_eq!(
        device.thumb_native(1),
        Some(-1),
        "recorded with the invert bit set"
    );
    let mut rig = bluetooth_rig(device, ThumbWheel::Divert);
    assert!(rig.device.thumb_diverted() && rig.device.thumb_inverted());
    // 20 ratchets a turn natively, 120 increments diverted: 6 increments are a ratchet.
    assert_eq!(rig.turn(6), -120);
}

#[test]
fn an_mx_master_2s_without_a_thumb_wheel_feature_is_ready_and_leaves_it_native() {
    let mut rig = bluetooth_rig(
        Emulator::mx_master_2s(BLUETOOTH, DEVICE_INDEX_DIRECT),
        ThumbWheel::Divert,
    );
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.name(), "Wireless Mouse MX Master 2S");
    assert_eq!(rig.session.feature_index(feature::THUMB_WHEEL), None);
    assert_eq!(rig.session.thumb_info(), None);
    assert!(!rig.session.thumb_diverted());
    assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().raw_xy);
    rig.press(true);
    for _ in 0..10 {
        rig.drag(-40, 0);
    }
    rig.press(false);
    assert_eq!(rig.actions, [Action::DesktopRight]);
}

#[test]
fn the_ping_carries_the_byte_the_device_echoes() {
    let rig = Rig::bluetooth();
    let ping = rig.written[0];
    assert_eq!(ping.sub_id, feature::ROOT_INDEX);
    assert_eq!(ping.params[2], pawl_hidpp::session::PING_DATA);
}

#[test]
fn a_thumb_wheel_change_after_setup_announces_no_second_ready() {
    let mut rig = thumb_rig(mx_master_3s(), ThumbWheel::Native);
    assert_eq!(rig.events.iter().filter(|e| **e == Event::Ready).count(), 1);
    rig.set_thumb(ThumbWheel::Divert);
    assert!(rig.device.thumb_diverted());
    assert_eq!(rig.events.iter().filter(|e| **e == Event::Ready).count(), 1);
}

fn with_settings(device: Emulator, settings: MouseSettings) -> Rig {
    let mut config = SessionConfig::gesture(Button(5));
    config.settings = settings;
    Rig::new(device, BLUETOOTH, config)
}

fn dpi(dpi: u16) -> MouseSettings {
    MouseSettings {
        dpi: Some(dpi),
        ..MouseSettings::default()
    }
}

fn smartshift(mode: SmartShift) -> MouseSettings {
    MouseSettings {
        smartshift: Some(mode),
        ..MouseSettings::default()
    }
}

#[test]
fn a_configured_dpi_is_written_and_read_back() {
    let rig = with_settings(mx_master_3s(), dpi(1600));
    assert_eq!(rig.device.dpi(), 1600);
    assert_eq!(rig.session.dpi(), Some(1600));
    assert!(rig.events.contains(&Event::Dpi(1600)));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.events.last(), Some(&Event::Ready));
    assert_eq!(
        rig.session.dpi_list().unwrap().to_string(),
        "200..=8000 step 50"
    );
}

#[test]
fn a_dpi_not_in_the_list_names_the_nearest_and_writes_nothing() {
    let rig = with_settings(mx_master_3s(), dpi(1620));
    assert_eq!(rig.device.dpi_writes(), 0);
    assert_eq!(rig.session.dpi(), Some(1000));
    assert!(rig.events.contains(&Event::DpiUnsupported {
        wanted: 1620,
        nearest: Some(1600)
    }));
    // The MX Master 3 stops at 4000.
    let mx3 = Emulator::mx_master_3(BLUETOOTH, DEVICE_INDEX_DIRECT);
    let rig = with_settings(mx3, dpi(8000));
    assert!(rig.events.contains(&Event::DpiUnsupported {
        wanted: 8000,
        nearest: Some(4000)
    }));
    let text = Event::DpiUnsupported {
        wanted: 8000,
        nearest: Some(4000),
    }
    .to_string();
    assert!(text.contains("nearest is 4000"), "{text}");
    assert_eq!(rig.session.phase(), Phase::Ready);
}

#[test]
fn a_configured_smartshift_is_written_and_read_back() {
    for (mode, state) in [
        (SmartShift::Ratchet, [2, 255]),
        (SmartShift::Threshold(30), [2, 30]),
    ] {
        let rig = with_settings(mx_master_3s(), smartshift(mode));
        assert_eq!(&rig.device.smart_shift()[..2], &state);
        assert_eq!(rig.session.smartshift(), Some(mode));
        assert!(rig.events.contains(&Event::SmartShift(mode)));
    }
    // Free keeps the threshold the device had.
    let mx3 = Emulator::mx_master_3(BLUETOOTH, DEVICE_INDEX_DIRECT);
    let rig = with_settings(mx3, smartshift(SmartShift::Free));
    assert_eq!(rig.device.smart_shift(), [1, 10, 10]);
    assert_eq!(rig.session.smartshift(), Some(SmartShift::Free));
}

/// The 3S's table with SmartShift enhanced (0x2111) in place of 0x2110.
static ENHANCED: [FeatureEntry; 36] = {
    let mut t = MX_MASTER_3S_FEATURES;
    t[14].id = feature::SMART_SHIFT_ENHANCED;
    t
};

/// The 3S's table without 0x2201 and 0x2110 (their entries renamed to unknown ids).
static WITHOUT_SETTINGS: [FeatureEntry; 36] = {
    let mut t = MX_MASTER_3S_FEATURES;
    t[13].id = 0x7701;
    t[14].id = 0x7702;
    t
};

#[test]
fn smartshift_enhanced_is_used_when_the_device_has_it() {
    let device = mx_master_3s().with_features(&ENHANCED);
    let rig = with_settings(device, smartshift(SmartShift::Ratchet));
    assert_eq!(rig.session.feature_index(feature::SMART_SHIFT), None);
    assert_eq!(
        rig.session.feature_index(feature::SMART_SHIFT_ENHANCED),
        Some(14)
    );
    assert_eq!(rig.device.smart_shift_writes(), 1);
    assert_eq!(rig.session.smartshift(), Some(SmartShift::Ratchet));
}

#[test]
fn settings_are_applied_again_after_a_reconnect() {
    let settings = MouseSettings {
        dpi: Some(2400),
        smartshift: Some(SmartShift::Ratchet),
        ..MouseSettings::default()
    };
    let mut rig = with_settings(mx_master_3s(), settings);
    assert_eq!(rig.device.dpi(), 2400);
    rig.device.reset();
    assert_eq!(rig.device.dpi(), 1000);
    let status = rig.device.wireless_status();
    rig.receive(status);
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.device.dpi(), 2400);
    assert_eq!(rig.device.dpi_writes(), 2);
    assert_eq!(&rig.device.smart_shift()[..2], &[2, 255]);
    assert_eq!(rig.session.dpi(), Some(2400));
}

#[test]
fn nothing_is_written_or_read_when_no_setting_is_configured() {
    let rig = Rig::bluetooth();
    assert_eq!(rig.device.dpi_writes(), 0);
    assert_eq!(rig.device.smart_shift_writes(), 0);
    assert_eq!(rig.session.dpi(), None);
    let dpi_index = rig.device.feature_index(feature::ADJUSTABLE_DPI).unwrap();
    let ss_index = rig.device.feature_index(feature::SMART_SHIFT).unwrap();
    assert!(
        rig.written
            .iter()
            .all(|m| m.sub_id != dpi_index && m.sub_id != ss_index),
        "{:?}",
        rig.written
    );
}

#[test]
fn a_device_without_the_features_says_so_and_still_gets_ready() {
    let device = mx_master_3s().with_features(&WITHOUT_SETTINGS);
    let settings = MouseSettings {
        dpi: Some(1600),
        smartshift: Some(SmartShift::Free),
        ..MouseSettings::default()
    };
    let rig = with_settings(device, settings);
    assert!(rig.events.contains(&Event::SettingsMissing {
        dpi: true,
        smartshift: true,
        thumb_wheel_invert: false,
    }));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

#[test]
fn new_settings_after_setup_are_written_at_once() {
    let mut rig = Rig::bluetooth();
    let mut out = Output::default();
    rig.session.set_settings(dpi(800), rig.now, &mut out);
    rig.settle(out);
    assert_eq!(rig.device.dpi(), 800);
    assert_eq!(rig.session.dpi(), Some(800));
}

#[test]
fn a_query_session_reads_the_settings_and_writes_none() {
    let rig = Rig::new(
        mx_master_3s(),
        BLUETOOTH,
        SessionConfig::query(pawl_hidpp::report::SOFTWARE_ID_QUERY),
    );
    assert_eq!(rig.session.dpi(), Some(1000));
    assert_eq!(rig.session.smartshift(), Some(SmartShift::Free));
    assert_eq!(rig.device.dpi_writes() + rig.device.smart_shift_writes(), 0);
}

fn thumb_invert(invert: bool) -> MouseSettings {
    MouseSettings {
        thumb_wheel_invert: Some(invert),
        ..MouseSettings::default()
    }
}

fn thumb_settings_rig(device: Emulator, mode: ThumbWheel, settings: MouseSettings) -> Rig {
    let mut config = SessionConfig::gesture(Button(5));
    config.thumb_wheel = mode;
    config.settings = settings;
    Rig::new(device, BLUETOOTH, config)
}

#[test]
fn thumb_wheel_invert_is_written_with_the_diversion_and_read_back() {
    // The 3S's wheel is not inverted; the config wants it inverted.
    let native = i32::from(mx_master_3s().thumb_native(1).unwrap());
    let mut rig = thumb_settings_rig(mx_master_3s(), ThumbWheel::Divert, thumb_invert(true));
    assert!(rig.device.thumb_diverted() && rig.device.thumb_inverted());
    assert_eq!(
        rig.thumb_writes(),
        1,
        "one write carries mode and invert bit"
    );
    assert!(rig.events.contains(&Event::ThumbInverted(true)));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert!(rig.session.thumb_status().unwrap().inverted);
    // Turned the other way from the firmware's default, as natively.
    assert_eq!(rig.turn(20), -native * 360);
    // The exit undoes the diversion and keeps the user's invert bit.
    for m in rig.session.undivert() {
        let (bytes, len) = m.encode();
        rig.device.answer(&bytes[..len]);
    }
    assert!(!rig.device.thumb_diverted() && rig.device.thumb_inverted());
}

#[test]
fn thumb_wheel_invert_is_written_without_diverting_when_pawl_leaves_the_wheel() {
    // The MX Master 4 comes inverted (its record's "Thumb Wheel Direction: True").
    let device = Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT);
    let rig = thumb_settings_rig(device, ThumbWheel::Leave, thumb_invert(false));
    assert!(!rig.device.thumb_diverted(), "Leave diverts nothing");
    assert!(!rig.device.thumb_inverted());
    assert!(rig.events.contains(&Event::ThumbInverted(false)));
    // Already as configured: nothing written.
    let mut device = Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT);
    device.set_thumb_inverted(false);
    let rig = thumb_settings_rig(device, ThumbWheel::Leave, thumb_invert(false));
    assert_eq!(rig.thumb_writes(), 0);
    assert!(
        !rig.events
            .iter()
            .any(|e| matches!(e, Event::ThumbInverted(_)))
    );
}

#[test]
fn thumb_wheel_invert_is_applied_again_after_a_reconnect_and_on_new_settings() {
    let mut rig = thumb_settings_rig(mx_master_3s(), ThumbWheel::Divert, thumb_invert(true));
    // The mouse comes back with its invert bit cleared (another host, Options+).
    rig.device.reset();
    rig.device.set_thumb_inverted(false);
    let status = rig.device.wireless_status();
    rig.receive(status);
    assert!(rig.device.thumb_diverted() && rig.device.thumb_inverted());
    // A reload asks for the firmware's direction: written at once, still diverted.
    let mut out = Output::default();
    rig.session
        .set_settings(thumb_invert(false), rig.now, &mut out);
    rig.settle(out);
    assert!(rig.device.thumb_diverted() && !rig.device.thumb_inverted());
    assert_eq!(rig.events.last(), Some(&Event::ThumbInverted(false)));
    // A reload without the key writes nothing more.
    let writes = rig.thumb_writes();
    let mut out = Output::default();
    rig.session
        .set_settings(MouseSettings::default(), rig.now, &mut out);
    rig.settle(out);
    assert_eq!(rig.thumb_writes(), writes);
}

#[test]
fn thumb_wheel_invert_a_device_refuses_is_reported_and_not_written_again() {
    let mut device = mx_master_3s();
    device.ignore_thumb_invert(true);
    let rig = thumb_settings_rig(device, ThumbWheel::Divert, thumb_invert(true));
    assert!(rig.device.thumb_diverted() && !rig.device.thumb_inverted());
    assert!(rig.events.contains(&Event::ThumbInverted(false)));
    assert_eq!(rig.thumb_writes(), 1, "no loop of writes");
    assert_eq!(rig.session.phase(), Phase::Ready);
}

#[test]
fn thumb_wheel_invert_on_a_mouse_without_a_thumb_wheel_is_reported() {
    let device = Emulator::mx_master_2s(BLUETOOTH, DEVICE_INDEX_DIRECT);
    let rig = thumb_settings_rig(device, ThumbWheel::Divert, thumb_invert(true));
    assert!(rig.events.contains(&Event::SettingsMissing {
        dpi: false,
        smartshift: false,
        thumb_wheel_invert: true,
    }));
    assert_eq!(rig.session.phase(), Phase::Ready);
    let text = Event::SettingsMissing {
        dpi: true,
        smartshift: false,
        thumb_wheel_invert: true,
    }
    .to_string();
    assert_eq!(
        text,
        "the device has no adjustable DPI (0x2201) nor thumb wheel (0x2150): dpi and thumb_wheel_invert not written"
    );
}

#[test]
fn thumb_wheel_default_direction_is_read_from_its_info() {
    let rig = thumb_rig(mx_master_3s(), ThumbWheel::Leave);
    assert!(rig.session.thumb_info().unwrap().positive_right_or_front);
    let device = mx_master_3s().with_thumb_default_left_or_back();
    let rig = thumb_rig(device, ThumbWheel::Leave);
    assert!(!rig.session.thumb_info().unwrap().positive_right_or_front);
}

#[test]
fn thumb_wheel_mode_changes_while_a_request_is_in_flight_write_it_once() {
    // Divert → native (request written, no answer yet) → divert → native: the answer
    // reconciles, so the device gets one request, not one per change.
    let mut rig = thumb_rig(mx_master_3s(), ThumbWheel::Divert);
    let before = rig.thumb_writes();
    let mut first = Output::default();
    rig.session
        .set_thumb_wheel(ThumbWheel::Native, rig.now, &mut first);
    assert!(first.request.is_some(), "the change is written at once");
    for mode in [ThumbWheel::Divert, ThumbWheel::Native] {
        let mut out = Output::default();
        rig.session.set_thumb_wheel(mode, rig.now, &mut out);
        assert_eq!(out.request, None, "{mode:?} while the request is in flight");
    }
    rig.settle(first);
    assert!(!rig.device.thumb_diverted());
    assert_eq!(rig.thumb_writes(), before + 1);
}

/// The feature ids setup looks up, in order (root `getFeature` requests written).
fn looked_up(rig: &Rig) -> Vec<u16> {
    rig.written
        .iter()
        .filter(|m| m.sub_id == 0 && m.function() == feature::root::GET_FEATURE)
        .map(|m| m.u16_at(0))
        .collect()
}

#[test]
fn a_failed_feature_lookup_in_the_middle_or_last_still_leads_to_one_setup() {
    let normal = Rig::bluetooth();
    let ids = looked_up(&normal);
    let (middle, last) = (feature::HIRES_WHEEL, *ids.last().unwrap());
    assert!(ids.contains(&middle) && middle != last, "{ids:04x?}");
    for failed in [middle, last] {
        let mut device = mx_master_3s();
        device.fail_lookup(
            failed,
            Failure::V20(pawl_hidpp::emulator::ERR_INVALID_ARGUMENT),
        );
        let rig = Rig::new(device, BLUETOOTH, SessionConfig::gesture(Button(5)));
        assert_eq!(
            rig.session.phase(),
            Phase::Ready,
            "lookup of {failed:04x} failed"
        );
        assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
        // Every step after the lookups is written once, as without the failure.
        assert_eq!(
            rig.written.len(),
            normal.written.len() - usize::from(failed == feature::HIRES_WHEEL),
            "{failed:04x}: {:?}",
            rig.written
        );
    }
}
const SENSE_PANEL: u16 = pawl_hidpp::controls::CID_SENSE_PANEL;

/// Sense Panel as button 8, mapped to desktop-left.
const SENSE_PANEL_MAPPED: &str = "[hidpp]\nsense_panel = 8\n[buttons.map]\n8 = \"desktop-left\"\n";

fn mx_master_4() -> Emulator {
    Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT)
}

fn sense_panel_divert_requests(rig: &Rig) -> usize {
    let reprog = rig
        .device
        .feature_index(feature::REPROG_CONTROLS_V4)
        .unwrap();
    rig.written
        .iter()
        .filter(|m| m.sub_id == reprog && m.function() == 3 && m.u16_at(0) == SENSE_PANEL)
        .count()
}

#[test]
fn the_sense_panel_is_diverted_without_raw_xy_when_configured_on_a_device_that_has_it() {
    let rig = Rig::from_config(mx_master_4(), SENSE_PANEL_MAPPED);
    assert_eq!(rig.session.phase(), Phase::Ready);
    let r = rig.device.reporting(SENSE_PANEL).unwrap();
    assert!(r.divert && !r.raw_xy, "{r:?}");
    assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
    assert_eq!(rig.device.persistent_writes(), 0);
    let diverted: Vec<u16> = rig.session.diverted().map(|r| r.cid).collect();
    assert_eq!(diverted, [CID_GESTURE_BUTTON, SENSE_PANEL]);
}

#[test]
fn the_sense_panel_is_left_to_the_firmware_when_not_configured() {
    let rig = Rig::from_config(mx_master_4(), "");
    assert!(!rig.device.reporting(SENSE_PANEL).unwrap().divert);
    assert_eq!(sense_panel_divert_requests(&rig), 0);
}

#[test]
fn a_device_without_the_sense_panel_diverts_what_it_has_and_reports_nothing_missing() {
    for device in [
        Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
        Emulator::mx_master_2s(BLUETOOTH, DEVICE_INDEX_DIRECT),
    ] {
        let rig = Rig::from_config(device, SENSE_PANEL_MAPPED);
        assert_eq!(rig.session.phase(), Phase::Ready);
        assert!(
            !rig.events
                .iter()
                .any(|e| matches!(e, Event::ControlMissing(_) | Event::Error { .. })),
            "{:?}",
            rig.events
        );
        assert_eq!(sense_panel_divert_requests(&rig), 0);
        let diverted: Vec<u16> = rig.session.diverted().map(|r| r.cid).collect();
        assert_eq!(diverted, [CID_GESTURE_BUTTON]);
    }
}

#[test]
fn a_sense_panel_press_is_its_button_and_fires_the_mapped_action() {
    let mut rig = Rig::from_config(mx_master_4(), SENSE_PANEL_MAPPED);
    let press = rig.device.set_held(SENSE_PANEL, true).expect("diverted");
    // The diverted-buttons event lists the panel's CID.
    assert_eq!(press.u16_at(0), SENSE_PANEL);
    let mut out = Output::default();
    let (bytes, len) = press.encode();
    rig.session.input(&bytes[..len], Micros(1), &mut out);
    let frame = out.frame.expect("a button frame");
    let b = frame.buttons.as_slice();
    assert_eq!((b.len(), b[0].button, b[0].pressed), (1, Button(8), true));
    rig.settle(out);
    assert_eq!(rig.actions, [Action::DesktopLeft]);
    let release = rig.device.set_held(SENSE_PANEL, false).unwrap();
    rig.receive(release);
    assert_eq!(
        rig.actions,
        [Action::DesktopLeft],
        "the release fires nothing"
    );
}

#[test]
fn the_sense_panel_diversion_is_undone_on_exit() {
    let mut rig = Rig::from_config(mx_master_4(), SENSE_PANEL_MAPPED);
    let exit = rig.session.undivert();
    write_all(&mut rig.device, &exit);
    let r = rig.device.reporting(SENSE_PANEL).unwrap();
    assert!(!r.divert && !r.raw_xy);
    assert!(!rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
    assert_eq!(rig.device.persistent_writes(), 0);
}

#[test]
fn the_sense_panel_is_diverted_again_after_a_reconnect() {
    let mut rig = Rig::from_config(mx_master_4(), SENSE_PANEL_MAPPED);
    rig.device.reset();
    assert!(!rig.device.reporting(SENSE_PANEL).unwrap().divert);
    let status = rig.device.wireless_status();
    rig.receive(status);
    assert!(rig.events.contains(&Event::Reconnected));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert!(rig.device.reporting(SENSE_PANEL).unwrap().divert);
    let m = rig.device.set_held(SENSE_PANEL, true).unwrap();
    rig.receive(m);
    assert_eq!(rig.actions, [Action::DesktopLeft]);
}

const HAPTIC: &str =
    "[hidpp]\nhaptic_on_gesture = true\nsense_panel = 8\n[buttons.map]\n8 = \"desktop-left\"\n";

#[test]
fn a_committed_gesture_plays_one_haptic_waveform() {
    let mut rig = Rig::from_config(mx_master_4(), HAPTIC);
    assert!(rig.session.has_haptics());
    rig.press(true);
    rig.drag(1, 0);
    for _ in 0..10 {
        rig.drag(40, 0);
    }
    rig.press(false);
    assert_eq!(rig.actions, [Action::DesktopLeft]);
    assert_eq!(
        rig.device.haptic_plays(),
        [feature::haptic::WAVEFORM_DAMP_STATE_CHANGE]
    );
    // Its acknowledgment was not waited for.
    assert_eq!(rig.session.deadline(), None);
    assert_eq!(rig.session.phase(), Phase::Ready);
    // A second gesture, a second pulse.
    rig.press(true);
    rig.drag(1, 0);
    rig.drag(0, 300);
    rig.press(false);
    assert_eq!(rig.actions.len(), 2);
    assert_eq!(rig.device.haptic_plays().len(), 2);
}

#[test]
fn a_click_a_short_drag_and_a_mapped_button_play_no_haptic() {
    let mut rig = Rig::from_config(mx_master_4(), HAPTIC);
    rig.press(true);
    rig.press(false);
    rig.press(true);
    rig.drag(1, 0);
    rig.drag(100, 0);
    rig.press(false);
    let m = rig.device.set_held(SENSE_PANEL, true).unwrap();
    rig.receive(m);
    assert_eq!(
        rig.actions,
        [Action::DesktopLeft],
        "the panel's action fired"
    );
    assert_eq!(rig.device.haptic_plays(), []);
}

#[test]
fn haptics_are_off_unless_configured() {
    let mut rig = Rig::from_config(mx_master_4(), "");
    rig.press(true);
    rig.drag(1, 0);
    rig.drag(300, 0);
    rig.press(false);
    assert_eq!(rig.actions.len(), 1);
    assert_eq!(rig.device.haptic_plays(), []);
    assert_eq!(rig.session.gesture_haptic(), None);
}

#[test]
fn a_device_without_haptics_gets_no_haptic_request() {
    let mut rig = Rig::from_config(
        Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
        HAPTIC,
    );
    assert!(!rig.session.has_haptics());
    assert_eq!(rig.session.feature_index(feature::HAPTIC), None);
    let before = rig.written.len();
    rig.press(true);
    rig.drag(1, 0);
    rig.drag(300, 0);
    rig.press(false);
    assert_eq!(rig.actions.len(), 1);
    assert_eq!(rig.written.len(), before, "nothing written for the gesture");
}

#[test]
fn the_haptic_request_is_a_long_play_of_the_damp_state_change_at_the_haptic_index() {
    let rig = Rig::from_config(mx_master_4(), HAPTIC);
    let m = rig.session.gesture_haptic().expect("a device with 0x19B0");
    assert_eq!(Some(m.sub_id), rig.device.feature_index(feature::HAPTIC));
    assert_eq!(m.function(), feature::haptic::PLAY);
    assert_eq!(m.sw_id(), pawl_hidpp::report::SOFTWARE_ID_DAEMON);
    assert_eq!(
        m.params[..3],
        [feature::haptic::WAVEFORM_DAMP_STATE_CHANGE, 0, 0]
    );
    assert!(m.long);
}

/// Answers the session's requests one at a time until it is about to write one that
/// `stop` picks; returns the output holding that request, unanswered.
fn run_until(
    session: &mut Session,
    device: &mut Emulator,
    mut out: Output,
    now: &mut Micros,
    stop: impl Fn(&Message) -> bool,
) -> Output {
    for _ in 0..1000 {
        let request = out.request.expect("setup stopped before the request");
        if stop(&request) {
            return out;
        }
        let (bytes, len) = request.encode();
        let reply = device.answer(&bytes[..len]).expect("the device answers");
        *now = now.plus(2_000);
        out = Output::default();
        let (bytes, len) = reply.encode();
        session.input(&bytes[..len], *now, &mut out);
    }
    panic!("no such request");
}

/// Answers every request until none is left; the events on the way.
fn run_out(session: &mut Session, device: &mut Emulator, mut out: Output) -> Vec<Event> {
    let mut events: Vec<Event> = out.events().collect();
    let mut now = Micros(10_000_000);
    while let Some(request) = out.request {
        let (bytes, len) = request.encode();
        let reply = device.answer(&bytes[..len]).expect("the device answers");
        now = now.plus(2_000);
        out = Output::default();
        let (bytes, len) = reply.encode();
        session.input(&bytes[..len], now, &mut out);
        events.extend(out.events());
    }
    events
}

#[test]
fn settings_changed_during_setup_are_applied_once_and_keep_the_setup() {
    let reprog = feature::REPROG_CONTROLS_V4;
    for stop_at in ["the feature lookups", "the control list"] {
        let mut device = mx_master_3s();
        let control_list = device.feature_index(reprog).unwrap();
        let mut session = Session::new(
            SessionConfig::gesture(Button(5)),
            BLUETOOTH,
            DEVICE_INDEX_DIRECT,
        );
        let mut now = Micros(1_000);
        let mut out = Output::default();
        session.start(now, &mut out);
        let at = run_until(&mut session, &mut device, out, &mut now, |m| {
            if stop_at == "the feature lookups" {
                m.sub_id == 0 && m.function() == feature::root::GET_FEATURE
            } else {
                m.sub_id == control_list
            }
        });
        // The new settings arrive while that request is in flight.
        let mut more = Output::default();
        session.set_settings(dpi(800), now, &mut more);
        assert_eq!(
            more.request, None,
            "{stop_at}: nothing sent beside the pending request"
        );
        let mut events: Vec<Event> = more.events().collect();
        events.extend(run_out(&mut session, &mut device, at));
        assert_eq!(session.phase(), Phase::Ready, "{stop_at}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::SettingsMissing { .. })),
            "{stop_at}: {events:?}"
        );
        assert_eq!((device.dpi(), device.dpi_writes()), (800, 1), "{stop_at}");
        assert!(
            device.reporting(CID_GESTURE_BUTTON).unwrap().divert,
            "{stop_at}: the rest of setup was dropped"
        );
        assert!(
            session.wheel_mode().is_some() && session.thumb_info().is_some(),
            "{stop_at}: the setup's reads were dropped"
        );
    }
}

#[test]
fn settings_changed_while_the_device_is_unreachable_wait_for_its_return() {
    let mut rig = Rig::bluetooth();
    let mut out = Output::default();
    rig.session.set_settings(dpi(800), rig.now, &mut out);
    assert!(out.request.is_some());
    // No answer: the device counts as unreachable.
    let deadline = rig.session.deadline().unwrap();
    let mut out = Output::default();
    rig.session.timeout(deadline, &mut out);
    assert_eq!(rig.session.phase(), Phase::Offline);
    let mut out = Output::default();
    rig.session.set_settings(dpi(1200), rig.now, &mut out);
    assert_eq!(
        out.request, None,
        "nothing is written to an unreachable device"
    );
    let status = rig.device.wireless_status();
    rig.receive(status);
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.device.dpi(), 1200);
}

/// The macOS worker's session: the gesture button diverted, the battery read (0x1004).
fn battery_config() -> SessionConfig {
    SessionConfig {
        read_battery: true,
        ..SessionConfig::gesture(Button(5))
    }
}

fn battery_rig(device: Emulator) -> Rig {
    Rig::new(device, BLUETOOTH, battery_config())
}

/// The 0x1004 requests the session wrote.
fn battery_requests(rig: &Rig) -> usize {
    let index = rig.device.feature_index(feature::UNIFIED_BATTERY);
    rig.written
        .iter()
        .filter(|m| Some(m.sub_id) == index)
        .count()
}

fn discharging(percent: u8) -> Battery {
    Battery {
        percent: Some(percent),
        level: None,
        charging: Charging::Discharging,
        external_power: false,
    }
}

#[test]
fn battery_is_read_after_setup_as_the_solaar_record_shows_it() {
    let rig = battery_rig(mx_master_3s());
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.battery(), Some(discharging(25)));
    assert!(rig.events.contains(&Event::Battery(discharging(25))));
    assert_eq!(
        Event::Battery(discharging(25)).to_string(),
        "battery 25 %, discharging (0x1004)"
    );
    // getCapabilities, then getStatus.
    assert_eq!(battery_requests(&rig), 2);
    let four = battery_rig(Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT));
    assert_eq!(four.session.battery(), Some(discharging(45)));
}

#[test]
fn the_battery_event_updates_it_without_a_request() {
    let mut rig = battery_rig(mx_master_3s());
    let written = rig.written.len();
    let event = rig
        .device
        .set_battery([30, 0x04, 1, 1])
        .expect("has 0x1004");
    rig.receive(event);
    let charging = Battery {
        percent: Some(30),
        level: None,
        charging: Charging::Charging,
        external_power: true,
    };
    assert_eq!(rig.session.battery(), Some(charging));
    assert_eq!(rig.events.last(), Some(&Event::Battery(charging)));
    assert_eq!(rig.written.len(), written, "an event asks nothing");
    assert_eq!(rig.session.deadline(), None, "no timer at rest");
    // The same status again: no new event.
    let events = rig.events.len();
    let again = rig.device.set_battery([30, 0x04, 1, 1]).unwrap();
    rig.receive(again);
    assert_eq!(rig.events.len(), events);
}

#[test]
fn the_battery_is_read_again_after_a_reconnection() {
    let mut rig = battery_rig(mx_master_3s());
    // Charged while away: no event reached the session.
    rig.device.set_battery([80, 0x08, 3, 1]);
    rig.device.reset();
    let status = rig.device.wireless_status();
    rig.receive(status);
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(
        rig.session.battery(),
        Some(Battery {
            percent: Some(80),
            level: None,
            charging: Charging::Full,
            external_power: true,
        })
    );
    assert_eq!(battery_requests(&rig), 4);
}

#[test]
fn a_lost_link_forgets_the_battery_until_setup_reads_it() {
    let mut rig = Rig::new(
        Emulator::mx_master_3s(RECEIVER, 2),
        RECEIVER,
        battery_config(),
    );
    assert_eq!(rig.session.battery(), Some(discharging(25)));
    let lost = rig.device.receiver_connection(false);
    rig.receive(lost);
    assert_eq!(rig.session.battery(), None);
    let back = rig.device.receiver_connection(true);
    rig.receive(back);
    assert_eq!(rig.session.battery(), Some(discharging(25)));
}

#[test]
fn without_read_battery_the_session_never_asks_for_0x1004() {
    // The Linux daemon's and the query's sessions: the kernel owns the battery.
    for config in [SessionConfig::gesture(Button(5)), SessionConfig::query(3)] {
        let mut rig = Rig::new(mx_master_3s(), BLUETOOTH, config);
        assert_eq!(rig.session.phase(), Phase::Ready);
        assert_eq!(battery_requests(&rig), 0);
        assert!(
            !rig.written
                .iter()
                .any(|m| m.sub_id == 0 && m.params[..2] == [0x10, 0x04]),
            "no lookup of 0x1004"
        );
        assert_eq!(rig.session.feature_index(feature::UNIFIED_BATTERY), None);
        // Its status events are ignored too.
        let event = rig.device.set_battery([20, 0x02, 0, 0]).unwrap();
        rig.receive(event);
        assert_eq!(rig.session.battery(), None);
        assert!(!rig.events.iter().any(|e| matches!(e, Event::Battery(_))));
    }
}

#[test]
fn a_device_without_0x1004_has_no_battery() {
    let rig = battery_rig(Emulator::mx_master_2s(BLUETOOTH, DEVICE_INDEX_DIRECT));
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.battery(), None);
    assert_eq!(rig.session.feature_index(feature::UNIFIED_BATTERY), None);
}

#[test]
fn a_malformed_battery_status_gives_no_battery_and_setup_goes_on() {
    for status in [[101, 0x04, 0, 0], [25, 0x10, 0, 0], [25, 0x04, 5, 0]] {
        let mut device = mx_master_3s();
        device.set_battery(status);
        let mut rig = battery_rig(device);
        assert_eq!(rig.session.phase(), Phase::Ready, "{status:?}");
        assert_eq!(rig.session.battery(), None, "{status:?}");
        assert!(rig.device.reporting(CID_GESTURE_BUTTON).unwrap().divert);
        // A good event afterwards is taken.
        let event = rig.device.set_battery([24, 0x04, 0, 0]).unwrap();
        rig.receive(event);
        assert_eq!(rig.session.battery(), Some(discharging(24)));
        // A malformed one forgets it (no event: nothing to show).
        let events = rig.events.len();
        let bad = rig.device.set_battery(status).unwrap();
        rig.receive(bad);
        assert_eq!(rig.session.battery(), None);
        assert_eq!(rig.events.len(), events);
    }
}

#[test]
fn a_refused_battery_request_is_reported_and_setup_goes_on() {
    let mut device = mx_master_3s();
    device.fail(
        feature::UNIFIED_BATTERY,
        feature::unified_battery::GET_STATUS,
        Failure::V20(0x05),
    );
    let rig = battery_rig(device);
    assert_eq!(rig.session.phase(), Phase::Ready);
    assert_eq!(rig.session.battery(), None);
    assert!(rig.events.iter().any(|e| matches!(
        e,
        Event::Error {
            request: Request::BatteryStatus,
            ..
        }
    )));
}

#[test]
fn a_battery_with_levels_only_reports_its_level() {
    // Capabilities without the state-of-charge flag: byte 0 means nothing.
    let mut m = Message::request(BLUETOOTH, DEVICE_INDEX_DIRECT, 8, 0, 0, &[]);
    m.params[..2].copy_from_slice(&[0x0E, 0x01]);
    let caps = Capabilities::parse(&m);
    m.params[..4].copy_from_slice(&[0, 0x06, 2, 1]);
    assert_eq!(
        Battery::parse(&m, caps),
        Some(Battery {
            percent: None,
            level: Some(Level::Normal),
            charging: Charging::Charging,
            external_power: true,
        })
    );
    // A level bit the device does not support counts for nothing.
    m.params[1] = 0x01;
    assert_eq!(Battery::parse(&m, caps), None);
}
