//! The HID++ session against the emulated MX Master 3S: setup, gestures through the real
//! engine, reconnection, exit, errors — the pure halves of the VM's `hidpp_*` scenarios.

use pawl_engine::units::{Button, Micros};
use pawl_engine::{Action, Config, DeviceEngine, FrameOut, Platform, Verdict};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;
use pawl_hidpp::emulator::{Emulator, Failure, Motion};
use pawl_hidpp::error::ErrorReply;
use pawl_hidpp::feature;
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing, Message};
use pawl_hidpp::{Event, Output, Phase, Request, Session, SessionConfig};

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
        let index = device.device();
        let engine_config = Config::default_for(Platform::Linux);
        let engine = DeviceEngine::with_profile(&engine_config, false, engine_config.scroll);
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

    /// Handles an output: events recorded, frames through the engine, each request written
    /// to the device and its reply read back, until nothing is outstanding.
    fn settle(&mut self, mut out: Output) {
        loop {
            self.events.extend(out.events());
            if let Some(frame) = out.frame {
                let mut res = FrameOut::default();
                if self.engine.frame(&frame, &mut res) == Verdict::Rewrite {
                    self.actions.extend_from_slice(res.actions.as_slice());
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
    config.divert.push(pawl_hidpp::DivertSpec {
        cid: 0x00D7,
        button: Button(6),
        raw_xy: false,
    });
    let rig = Rig::new(
        Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
        BLUETOOTH,
        config,
    );
    assert!(rig.events.contains(&Event::ControlMissing(0x00D7)));
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
    assert_eq!(fresh.session.controls().len(), 7);
    assert_eq!(fresh.session.diverted().count(), 0);
    assert!(fresh.device.controls().iter().all(|c| !c.reporting.divert));
    assert!(fresh.written.iter().all(|m| m.sw_id() == 0x0B));
    // The daemon diverted the gesture button; the query sees it.
    let daemon = Rig::bluetooth();
    let rig = Rig::new(daemon.device, BLUETOOTH, query());
    let diverted: Vec<u16> = rig.session.diverted().map(|r| r.cid).collect();
    assert_eq!(diverted, [CID_GESTURE_BUTTON]);
}

#[test]
fn thumb_wheel_becomes_horizontal_scroll_normalised_to_right_and_invertible() {
    for (invert, sign) in [(false, 1), (true, -1)] {
        let mut config = SessionConfig::gesture(Button(5));
        config.thumb_wheel = true;
        config.invert_thumb_wheel = invert;
        let mut rig = Rig::new(
            Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT),
            BLUETOOTH,
            config,
        );
        assert!(rig.device.thumb_diverted());
        // Emulator: 18 native increments (detents) per turn, 144 diverted: 8 diverted
        // increments are one detent; 3 + 5 increments add up to exactly one.
        let mut total = 0;
        for rotation in [3, 5] {
            let m = rig.device.thumb(rotation).unwrap();
            let (bytes, len) = m.encode();
            let mut out = Output::default();
            rig.session.input(&bytes[..len], Micros(1), &mut out);
            total += out.frame.map_or(0, |f| f.hwheel.v120);
        }
        assert_eq!(total, sign * 120);
        let requests = rig.session.undivert();
        assert_eq!(requests.len(), 2);
    }
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
