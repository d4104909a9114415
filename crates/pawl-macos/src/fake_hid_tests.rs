//! HID++ on macOS driven through a fake IOHIDDevice layer answered by the emulator:
//! discovery, setup, divert, gestures, reconnect and wake re-divert, exit un-divert,
//! removal. Each test is one behaviour of `crate::hidpp`.

use pawl_engine::units::Micros;
use pawl_engine::{Config, Platform};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;
use pawl_hidpp::emulator::{Emulator, Motion};
use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing, Message};
use pawl_hidpp::{Phase, ThumbWheel};

use crate::actions::Performer;
use crate::fake::FakeTap;
use crate::fake_hid::{FakeEndpoint, FakeHid};
use crate::hidpp::{
    Access, EndpointDesc, Hidpp, HidppPermission, OpenDecision, Reach, classify, gesture_diverted,
    open_decision,
};
use crate::tap::Synthetic;

const BT: u64 = 0x1_0000_0d01;
const BOLT: u64 = 0x1_0000_0d02;
/// The device index of the MX Master behind the Bolt receiver.
const PAIRED: u8 = 2;

const BLUETOOTH: Framing = Framing {
    short: false,
    long: true,
};
const RECEIVER: Framing = Framing {
    short: true,
    long: true,
};

/// The HID++ interface of a Unifying/Bolt receiver: vendor page 0xFF00, usage 1 with
/// report 0x10 (6 bytes), usage 2 with report 0x11 (19 bytes). Shaped like the kernel's
/// `hid-logitech-dj.c` `hidpp_descriptor`.
const RECEIVER_DESCRIPTOR: &[u8] = &[
    0x06, 0x00, 0xFF, 0x09, 0x01, 0xA1, 0x01, 0x85, 0x10, 0x75, 0x08, 0x95, 0x06, 0x15, 0x00, 0x26,
    0xFF, 0x00, 0x09, 0x01, 0x81, 0x00, 0x09, 0x01, 0x91, 0x00, 0xC0, 0x06, 0x00, 0xFF, 0x09, 0x02,
    0xA1, 0x01, 0x85, 0x11, 0x75, 0x08, 0x95, 0x13, 0x15, 0x00, 0x26, 0xFF, 0x00, 0x09, 0x02, 0x81,
    0x00, 0x09, 0x02, 0x91, 0x00, 0xC0,
];

use pawl_recordings::dir as recordings_dir;

/// The recorded report descriptor of a Bluetooth MX Master 3S (046d:b034).
fn mx_master_3s_descriptor() -> Vec<u8> {
    let path = recordings_dir().join("hidreport--libinput-issue996-0005-046D-B034-0.rdesc");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn bluetooth_desc() -> EndpointDesc {
    EndpointDesc {
        id: BT,
        name: "MX Master 3S".into(),
        vendor: 0x046d,
        product: 0xb034,
        transport: "Bluetooth Low Energy".into(),
        usage_pairs: vec![(0x01, 0x02), (0x01, 0x06), (0x0C, 0x01), (0xFF43, 0x0202)],
        descriptor: mx_master_3s_descriptor(),
        requires_tcc: true,
    }
}

fn bolt_desc() -> EndpointDesc {
    EndpointDesc {
        id: BOLT,
        name: "USB Receiver".into(),
        vendor: 0x046d,
        product: 0xc548,
        transport: "USB".into(),
        usage_pairs: vec![(0xFF00, 0x01), (0xFF00, 0x02)],
        descriptor: RECEIVER_DESCRIPTOR.to_vec(),
        requires_tcc: false,
    }
}

/// pawl's HID++ side, the fake devices, the fake tap and the clock.
struct Rig {
    hidpp: Hidpp,
    hid: FakeHid,
    tap: FakeTap,
    now: Micros,
}

impl Rig {
    fn new(config: Config) -> Rig {
        let performer = Performer::new(&config, |_| None).unwrap();
        Rig {
            hidpp: Hidpp::new(config, performer),
            hid: FakeHid::default(),
            tap: FakeTap::trusted(),
            now: Micros(1_000_000),
        }
    }

    /// The macOS config `text` with a Bluetooth MX Master 3S found and opened.
    fn bluetooth_with(text: &str) -> Rig {
        let config = Config::parse(text, "c.toml", Platform::MacOs).unwrap();
        let mut rig = Rig::new(config);
        rig.add(
            bluetooth_desc(),
            vec![Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT)],
            false,
        );
        rig
    }

    /// The default macOS config with a Bluetooth MX Master 3S found and opened.
    fn bluetooth() -> Rig {
        let mut rig = Rig::new(Config::default_for(Platform::MacOs));
        rig.add(
            bluetooth_desc(),
            vec![Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT)],
            false,
        );
        rig
    }

    /// The default macOS config with a Bolt receiver holding an MX Master 3S at
    /// [`PAIRED`] (every other index empty).
    fn bolt() -> Rig {
        let mut rig = Rig::new(Config::default_for(Platform::MacOs));
        rig.add(
            bolt_desc(),
            vec![Emulator::mx_master_3s(RECEIVER, PAIRED)],
            true,
        );
        rig
    }

    /// IOHIDManager found `desc`; pawl opens it if it wants it; the answers are delivered.
    fn add(&mut self, desc: EndpointDesc, mice: Vec<Emulator>, receiver: bool) {
        self.hid.endpoints.push(FakeEndpoint {
            id: desc.id,
            mice,
            receiver,
            flags: [0; 3],
        });
        let endpoint = self.hidpp.wants(&desc).expect("pawl opens this endpoint");
        self.hidpp
            .opened(desc, endpoint, self.now, &mut self.hid, &mut self.tap);
        self.pump();
    }

    /// Delivers every queued report, as the input-report callback would, until the
    /// devices have nothing more to say.
    fn pump(&mut self) {
        for _ in 0..10_000 {
            let Some((id, report)) = self.hid.pending.pop_front() else {
                return;
            };
            self.now = self.now.plus(2_000);
            self.hidpp
                .on_report(id, &report, self.now, &mut self.hid, &mut self.tap);
        }
        panic!("the devices never stopped answering");
    }

    fn notify(&mut self, id: u64, m: Message) {
        self.hid.notify(id, m);
        self.pump();
    }

    /// The gesture button goes down or up.
    fn press(&mut self, id: u64, held: bool) {
        let m = self
            .hid
            .mouse(id)
            .set_held(CID_GESTURE_BUTTON, held)
            .expect("the gesture button is diverted");
        self.notify(id, m);
    }

    /// The mouse moves while the gesture button is held (raw XY).
    fn drag(&mut self, id: u64, dx: i16, dy: i16) {
        match self.hid.mouse(id).motion(dx, dy) {
            Motion::RawXy(m) => self.notify(id, m),
            Motion::Hid => panic!("motion is not diverted"),
        }
    }

    fn diverted(&mut self, id: u64) -> bool {
        let r = self.hid.mouse(id).reporting(CID_GESTURE_BUTTON).unwrap();
        r.divert && r.raw_xy
    }
}

fn osascript(script: &str) -> Vec<String> {
    vec!["osascript".into(), "-e".into(), script.into()]
}

fn desktop_left() -> Vec<String> {
    osascript("tell application \"System Events\" to key code 123 using control down")
}

#[test]
fn bluetooth_mx_masters_and_receivers_are_endpoints_and_nothing_else_is() {
    let bt = classify(&bluetooth_desc()).expect("a Bluetooth MX Master 3S is an endpoint");
    assert_eq!(bt.reach, Reach::Direct);
    assert_eq!(bt.framing, BLUETOOTH);
    assert_eq!(bt.device_indices().collect::<Vec<_>>(), [0xFF]);
    let bolt = classify(&bolt_desc()).expect("a Bolt receiver is an endpoint");
    assert_eq!(bolt.reach, Reach::Receiver);
    assert_eq!(bolt.framing, RECEIVER);
    assert_eq!(
        bolt.device_indices().collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    let unifying = EndpointDesc {
        product: 0xc52b,
        ..bolt_desc()
    };
    assert_eq!(classify(&unifying).map(|e| e.reach), Some(Reach::Receiver));
    // An MX Master whose id the table lacks, by its name.
    let named = EndpointDesc {
        product: 0xb0ff,
        name: "MX Master 4S".into(),
        ..bluetooth_desc()
    };
    assert_eq!(classify(&named).map(|e| e.reach), Some(Reach::Direct));
    // A Logitech keyboard with a HID++ collection, another vendor, a mouse without the
    // vendor collection, a descriptor without the HID++ reports: none is opened.
    let keyboard = EndpointDesc {
        name: "MX Keys".into(),
        product: 0xb35b,
        ..bluetooth_desc()
    };
    let other_vendor = EndpointDesc {
        vendor: 0x1bcf,
        ..bluetooth_desc()
    };
    let no_vendor_page = EndpointDesc {
        usage_pairs: vec![(0x01, 0x02)],
        ..bluetooth_desc()
    };
    let no_hidpp = EndpointDesc {
        descriptor: vec![0x05, 0x01, 0x09, 0x02, 0xA1, 0x01, 0x85, 0x02, 0xC0],
        ..bluetooth_desc()
    };
    for d in [keyboard, other_vendor, no_vendor_page, no_hidpp] {
        assert_eq!(classify(&d), None, "{d:?}");
    }
}

#[test]
fn nothing_is_opened_with_hidpp_off_and_an_open_endpoint_is_not_opened_twice() {
    let off = Config::parse("[hidpp]\nenabled = false\n", "c.toml", Platform::MacOs).unwrap();
    let performer = Performer::new(&off, |_| None).unwrap();
    assert_eq!(Hidpp::new(off, performer).wants(&bluetooth_desc()), None);
    let rig = Rig::bluetooth();
    assert_eq!(rig.hidpp.wants(&bluetooth_desc()), None);
    assert_eq!(rig.hidpp.open_ids().collect::<Vec<_>>(), [BT]);
}

#[test]
fn setup_diverts_the_gesture_button_with_raw_xy_temporarily_and_leaves_no_timer() {
    let mut rig = Rig::bluetooth();
    assert!(gesture_diverted(&rig.hidpp, BT));
    assert!(rig.diverted(BT));
    let mouse = rig.hid.mouse(BT);
    assert_eq!(mouse.persistent_writes(), 0, "never a persistent diversion");
    assert_eq!(mouse.wheel_mode_writes(), 0, "never the 0x2121 wheel mode");
    // Every request carries pawl's software id and goes to index 0xFF, one at a time.
    let written = rig.hid.take_written();
    assert!(written.iter().all(|(id, m)| *id == BT && m.device == 0xFF));
    assert!(written.iter().all(|(_, m)| m.long && m.sw_id() == 0x0A));
    assert_eq!(rig.hidpp.deadline(), None, "idle: no timer");
    assert!(rig.tap.calls.is_empty(), "setup posts and performs nothing");
}

#[test]
fn the_mouses_own_settings_are_written_at_setup_and_again_after_a_reconnect() {
    let text = "[hidpp]\ndpi = 1600\nthumb_wheel_invert = true\n\
                [[device]]\nname = \"*3S*\"\n[device.hidpp]\nsmartshift = \"free\"\n";
    let mut rig = Rig::bluetooth_with(text);
    let mouse = rig.hid.mouse(BT);
    assert_eq!(mouse.dpi(), 1600);
    assert_eq!(
        mouse.smart_shift()[0],
        1,
        "SmartShift mode 1: free spinning"
    );
    assert!(mouse.thumb_inverted());
    assert_eq!(mouse.persistent_writes(), 0);
    // The mouse forgets them (power cycle) and says it reconnected: written again.
    mouse.reset();
    let status = mouse.wireless_status();
    rig.notify(BT, status);
    assert_eq!(rig.hid.mouse(BT).dpi(), 1600);
    assert_eq!(rig.hid.mouse(BT).dpi_writes(), 2);
    // Without the keys nothing is written.
    let mut rig = Rig::bluetooth();
    assert_eq!(rig.hid.mouse(BT).dpi_writes(), 0);
    assert_eq!(rig.hid.mouse(BT).smart_shift_writes(), 0);
}

#[test]
fn gesture_drag_over_hidpp_fires_the_action_once() {
    let mut rig = Rig::bluetooth();
    rig.press(BT, true);
    for _ in 0..30 {
        rig.drag(BT, 10, 1);
    }
    rig.press(BT, false);
    // As with the CGEvent gesture button: dragging right shows the desktop on the left.
    assert_eq!(rig.tap.spawns(), vec![desktop_left()]);
    assert!(rig.tap.posts().is_empty(), "no click, no pointer output");
}

#[test]
fn gesture_button_click_without_drag_is_posted_as_the_gesture_button() {
    let mut rig = Rig::bluetooth();
    rig.press(BT, true);
    rig.drag(BT, 1, 1);
    rig.press(BT, false);
    assert_eq!(
        rig.tap.posts(),
        vec![
            Synthetic::MouseButton {
                button: 5,
                pressed: true
            },
            Synthetic::MouseButton {
                button: 5,
                pressed: false
            },
        ]
    );
    assert!(rig.tap.spawns().is_empty());
}

#[test]
fn the_gesture_button_is_the_configured_gesture_button() {
    let config = Config::parse("[gesture]\nbutton = 7\n", "c.toml", Platform::MacOs).unwrap();
    let mut rig = Rig::new(config);
    rig.add(
        bluetooth_desc(),
        vec![Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT)],
        false,
    );
    rig.press(BT, true);
    rig.press(BT, false);
    assert_eq!(
        rig.tap.posts()[0],
        Synthetic::MouseButton {
            button: 7,
            pressed: true
        }
    );
}

#[test]
fn receiver_mouse_is_found_by_index_and_diverted_and_empty_indices_wait() {
    let mut rig = Rig::bolt();
    let phases: Vec<(u8, Phase)> = rig
        .hidpp
        .sessions(BOLT)
        .map(|s| (s.device(), s.phase()))
        .collect();
    assert_eq!(
        phases,
        [
            (1, Phase::Offline),
            (2, Phase::Ready),
            (3, Phase::Offline),
            (4, Phase::Offline),
            (5, Phase::Offline),
            (6, Phase::Offline),
        ]
    );
    assert!(rig.diverted(BOLT));
    // The receiver now announces connections (register 0x00 bit 0x000100), nothing else.
    assert_eq!(rig.hid.endpoint(BOLT).flags, [0x00, 0x01, 0x00]);
    assert_eq!(rig.hidpp.deadline(), None);
    rig.press(BOLT, true);
    for _ in 0..30 {
        rig.drag(BOLT, 10, 1);
    }
    rig.press(BOLT, false);
    assert_eq!(rig.tap.spawns(), vec![desktop_left()]);
}

#[test]
fn receiver_flags_already_set_are_not_written() {
    let mut rig = Rig::new(Config::default_for(Platform::MacOs));
    rig.hid.endpoints.push(FakeEndpoint {
        id: BOLT,
        mice: vec![Emulator::mx_master_3s(RECEIVER, PAIRED)],
        receiver: true,
        flags: [0x00, 0x09, 0x00],
    });
    let d = bolt_desc();
    let e = rig.hidpp.wants(&d).unwrap();
    rig.hidpp.opened(d, e, rig.now, &mut rig.hid, &mut rig.tap);
    rig.pump();
    let register_writes = rig
        .hid
        .take_written()
        .into_iter()
        .filter(|(_, m)| m.device == 0xFF && m.sub_id == 0x80)
        .count();
    assert_eq!(register_writes, 0);
    rig.hidpp.shutdown(&mut rig.hid, &mut rig.tap);
    assert_eq!(rig.hid.endpoint(BOLT).flags, [0x00, 0x09, 0x00]);
}

#[test]
fn receiver_connection_notification_diverts_again() {
    let mut rig = Rig::bolt();
    // The mouse slept and reconnected: it forgot its diversion; the receiver says 0x41.
    rig.hid.mouse(BOLT).reset();
    let lost = rig.hid.mouse(BOLT).receiver_connection(false);
    rig.notify(BOLT, lost);
    assert!(!rig.diverted(BOLT));
    let back = rig.hid.mouse(BOLT).receiver_connection(true);
    rig.notify(BOLT, back);
    assert!(rig.diverted(BOLT));
    assert!(gesture_diverted(&rig.hidpp, BOLT));
}

#[test]
fn a_mouse_paired_later_at_an_empty_index_is_diverted_when_it_connects() {
    let mut rig = Rig::bolt();
    rig.hid
        .endpoint(BOLT)
        .mice
        .push(Emulator::mx_master_3s(RECEIVER, 5));
    let hello = rig.hid.endpoint(BOLT).mice[1].receiver_connection(true);
    rig.notify(BOLT, hello);
    let m = &rig.hid.endpoint(BOLT).mice[1];
    assert!(m.reporting(CID_GESTURE_BUTTON).unwrap().divert);
}

#[test]
fn bluetooth_reconnection_broadcast_diverts_again_and_cancels_the_gesture() {
    let mut rig = Rig::bluetooth();
    rig.press(BT, true);
    rig.drag(BT, 10, 0);
    rig.hid.mouse(BT).reset();
    let status = rig.hid.mouse(BT).wireless_status();
    rig.notify(BT, status);
    assert!(rig.diverted(BT));
    // The press from before the reconnection is forgotten: its release (reported now that
    // the button is diverted again) is no click, and nothing fires.
    let up = rig
        .hid
        .mouse(BT)
        .set_held(CID_GESTURE_BUTTON, false)
        .unwrap();
    rig.notify(BT, up);
    assert!(rig.tap.posts().is_empty(), "{:?}", rig.tap.posts());
    assert!(rig.tap.spawns().is_empty());
}

#[test]
fn wake_diverts_again_what_a_sleeping_mouse_forgot() {
    let mut rig = Rig::bluetooth();
    // Asleep with the Mac: the diversion is gone and nothing announced it.
    rig.hid.mouse(BT).reset();
    assert!(!rig.diverted(BT));
    rig.hidpp.on_wake(rig.now, &mut rig.hid, &mut rig.tap);
    rig.pump();
    assert!(rig.diverted(BT));
    rig.press(BT, true);
    for _ in 0..30 {
        rig.drag(BT, 10, 1);
    }
    rig.press(BT, false);
    assert_eq!(rig.tap.spawns(), vec![desktop_left()]);
}

#[test]
fn wake_sets_the_receiver_flag_again_and_exit_restores_the_first_value() {
    let mut rig = Rig::bolt();
    // The receiver lost power while the Mac slept, and so did the mouse's diversion.
    rig.hid.endpoint(BOLT).flags = [0, 0, 0];
    rig.hid.mouse(BOLT).reset();
    rig.hidpp.on_wake(rig.now, &mut rig.hid, &mut rig.tap);
    rig.pump();
    assert_eq!(rig.hid.endpoint(BOLT).flags, [0x00, 0x01, 0x00]);
    assert!(rig.diverted(BOLT));
    rig.hidpp.shutdown(&mut rig.hid, &mut rig.tap);
    rig.pump();
    assert_eq!(rig.hid.endpoint(BOLT).flags, [0, 0, 0]);
}

#[test]
fn exit_undoes_every_diversion_and_the_receiver_flags() {
    let mut bt = Rig::bluetooth();
    bt.hidpp.shutdown(&mut bt.hid, &mut bt.tap);
    bt.pump();
    let r = bt.hid.mouse(BT).reporting(CID_GESTURE_BUTTON).unwrap();
    assert!(!r.divert && !r.raw_xy);
    assert!(!bt.hid.mouse(BT).thumb_diverted());
    assert_eq!(bt.hidpp.open_ids().count(), 0);

    let mut bolt = Rig::bolt();
    assert!(bolt.hid.mouse(BOLT).thumb_diverted());
    bolt.hidpp.shutdown(&mut bolt.hid, &mut bolt.tap);
    bolt.pump();
    assert!(!bolt.diverted(BOLT));
    assert!(!bolt.hid.mouse(BOLT).thumb_diverted());
    assert_eq!(
        bolt.hid.endpoint(BOLT).flags,
        [0, 0, 0],
        "flags as pawl found them"
    );
}

#[test]
fn removal_mid_gesture_fires_nothing_and_forgets_the_endpoint() {
    let mut rig = Rig::bluetooth();
    rig.press(BT, true);
    for _ in 0..10 {
        rig.drag(BT, 10, 0);
    }
    rig.hidpp.removed(BT, &mut rig.tap);
    assert_eq!(rig.hidpp.open_ids().count(), 0);
    // Reports that were still queued for it are ignored, nothing is written to it.
    rig.hid.take_written();
    for _ in 0..30 {
        rig.drag(BT, 10, 0);
    }
    rig.press(BT, false);
    assert!(rig.hid.take_written().is_empty());
    assert!(rig.tap.spawns().is_empty());
    assert!(
        rig.tap.posts().is_empty(),
        "nothing was pressed, nothing to release"
    );
    // It comes back (a new IOHIDDevice): opened and diverted again.
    rig.hid.mouse(BT).reset();
    let endpoint = rig.hidpp.wants(&bluetooth_desc()).unwrap();
    rig.hidpp.opened(
        bluetooth_desc(),
        endpoint,
        rig.now,
        &mut rig.hid,
        &mut rig.tap,
    );
    rig.pump();
    assert!(rig.diverted(BT));
}

#[test]
fn unanswered_setup_times_out_and_leaves_no_timer() {
    let mut rig = Rig::new(Config::default_for(Platform::MacOs));
    // A device that never answers (no emulator behind the endpoint).
    rig.hid.endpoints.push(FakeEndpoint {
        id: BT,
        mice: Vec::new(),
        receiver: false,
        flags: [0; 3],
    });
    let d = bluetooth_desc();
    let e = rig.hidpp.wants(&d).unwrap();
    rig.hidpp.opened(d, e, rig.now, &mut rig.hid, &mut rig.tap);
    let deadline = rig.hidpp.deadline().expect("a reply is awaited");
    rig.hidpp.on_timer(deadline, &mut rig.hid, &mut rig.tap);
    assert_eq!(rig.hidpp.deadline(), None);
    assert_eq!(
        rig.hidpp.sessions(BT).next().unwrap().phase(),
        Phase::Offline
    );
}

#[test]
fn thumb_wheel_is_diverted_while_the_mouse_scroll_is_transformed_and_posted_as_scroll() {
    let mut rig = Rig::bluetooth();
    assert!(rig.hid.mouse(BT).thumb_diverted());
    assert_eq!(
        rig.hidpp.sessions(BT).next().unwrap().config().thumb_wheel,
        ThumbWheel::Divert
    );
    let turn = rig.hid.mouse(BT).thumb(40).unwrap();
    rig.notify(BT, turn);
    let scroll: Vec<Synthetic> = rig.tap.posts();
    assert!(
        matches!(scroll.as_slice(), [Synthetic::Scroll { wheel, hwheel }]
            if wheel.v120 == 0 && hwheel.v120 != 0),
        "{scroll:?}"
    );
}

#[test]
fn thumb_wheel_stays_native_when_scroll_is_not_transformed_or_switched_off() {
    for text in [
        "[scroll]\nscope = \"none\"\n",
        "[hidpp]\nthumb_wheel = false\n",
    ] {
        let mut rig = Rig::bluetooth_with(text);
        assert!(!rig.hid.mouse(BT).thumb_diverted(), "{text}");
        assert!(
            rig.diverted(BT),
            "the gesture button is diverted all the same"
        );
    }
}

#[test]
fn status_names_input_monitoring_and_which_endpoint_needs_it() {
    let denied = HidppPermission {
        input_monitoring: Access::Denied,
        endpoints: vec![
            ("MX Master 3S".into(), true),
            ("USB Receiver".into(), false),
        ],
    };
    let text = denied.to_string();
    assert!(
        text.contains("input monitoring (IOHIDCheckAccess; [hidpp] needs it for a Bluetooth MX Master): denied"),
        "{text}"
    );
    assert!(
        text.contains("HID++ MX Master 3S: needs input monitoring"),
        "{text}"
    );
    assert!(
        text.contains("HID++ USB Receiver: needs no permission"),
        "{text}"
    );
    assert!(
        text.contains("Privacy & Security > Input Monitoring"),
        "{text}"
    );
    let granted = HidppPermission {
        input_monitoring: Access::Granted,
        ..denied.clone()
    };
    assert!(!granted.to_string().contains("to fix"));
    // A receiver alone needs nothing: no advice even when denied.
    let receiver_only = HidppPermission {
        endpoints: vec![("USB Receiver".into(), false)],
        ..denied
    };
    assert!(!receiver_only.to_string().contains("to fix"));
    let unknown = HidppPermission {
        input_monitoring: Access::Unknown,
        endpoints: Vec::new(),
    };
    assert!(unknown.to_string().contains("Master): not asked yet"));
}

#[test]
fn a_device_needing_input_monitoring_is_opened_only_once_it_is_granted() {
    // A receiver's HID++ interface needs nothing.
    for access in [Access::Granted, Access::Denied, Access::Unknown] {
        assert_eq!(open_decision(false, access), OpenDecision::Open);
    }
    // A Bluetooth MX Master: opened when granted; never asked → asked off the worker's
    // thread, not opened (opening would block the worker on the prompt); denied → left.
    assert_eq!(open_decision(true, Access::Granted), OpenDecision::Open);
    assert_eq!(open_decision(true, Access::Unknown), OpenDecision::Ask);
    assert_eq!(open_decision(true, Access::Denied), OpenDecision::Refused);
}

#[test]
fn thumb_wheel_glide_ticks_on_the_hidpp_timer_and_then_no_timer_is_left() {
    let config =
        Config::parse("[scroll]\ninertia = \"glide\"\n", "c.toml", Platform::MacOs).unwrap();
    let mut rig = Rig::new(config);
    rig.add(
        bluetooth_desc(),
        vec![Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT)],
        false,
    );
    // A fast flick: many increments in quick succession.
    for _ in 0..12 {
        let turn = rig.hid.mouse(BT).thumb(60).unwrap();
        rig.hid.notify(BT, turn);
        rig.now = rig.now.plus(6_000);
        let (id, report) = rig.hid.pending.pop_front().unwrap();
        rig.hidpp
            .on_report(id, &report, rig.now, &mut rig.hid, &mut rig.tap);
    }
    let flick = rig.tap.posts().len();
    assert!(flick > 0, "the turns were posted as scroll");
    let mut ticks = 0;
    while let Some(deadline) = rig.hidpp.deadline() {
        rig.hidpp.on_timer(deadline, &mut rig.hid, &mut rig.tap);
        ticks += 1;
        assert!(ticks < 1_000, "the glide ends");
    }
    assert!(ticks > 0, "a fast flick glides");
    assert!(rig.tap.posts().len() > flick, "the glide posted scroll");
    assert!(
        rig.tap.posts()[flick..]
            .iter()
            .all(|p| matches!(p, Synthetic::Scroll { wheel, .. } if wheel.v120 == 0))
    );
}

#[test]
fn an_mx_master_4_sense_panel_maps_like_a_button_and_a_gesture_plays_one_haptic_pulse() {
    use pawl_hidpp::controls::CID_SENSE_PANEL;
    let config = Config::parse(
        "[hidpp]\nsense_panel = 8\nhaptic_on_gesture = true\n[buttons.map]\n8 = \"desktop-left\"\n",
        "c.toml",
        Platform::MacOs,
    )
    .unwrap();
    let mut rig = Rig::new(config);
    rig.add(
        bluetooth_desc(),
        vec![Emulator::mx_master_4(BLUETOOTH, DEVICE_INDEX_DIRECT)],
        false,
    );
    assert!(rig.hid.mouse(BT).reporting(CID_SENSE_PANEL).unwrap().divert);
    let m = rig.hid.mouse(BT).set_held(CID_SENSE_PANEL, true).unwrap();
    rig.notify(BT, m);
    let m = rig.hid.mouse(BT).set_held(CID_SENSE_PANEL, false).unwrap();
    rig.notify(BT, m);
    assert_eq!(rig.tap.spawns(), vec![desktop_left()]);
    assert!(
        rig.hid.mouse(BT).haptic_plays().is_empty(),
        "a button is no gesture"
    );
    rig.press(BT, true);
    for _ in 0..30 {
        rig.drag(BT, 10, 1);
    }
    rig.press(BT, false);
    assert_eq!(rig.tap.spawns().len(), 2);
    assert_eq!(rig.hid.mouse(BT).haptic_plays().len(), 1);
}

#[test]
fn each_mouse_set_up_is_listed_with_its_battery_and_a_change_is_noticed_once() {
    use pawl_hidpp::battery::{Battery, Charging};
    let mut rig = Rig::bluetooth();
    let mice = rig.hidpp.mice();
    let battery = |percent, charging| {
        Some(Battery {
            percent: Some(percent),
            level: None,
            charging,
            external_power: charging != Charging::Discharging,
        })
    };
    assert_eq!(mice.len(), 1);
    assert_eq!(mice[0].name, "MX Master 3S");
    assert_eq!((mice[0].vendor, mice[0].product), (0x046d, 0xb034));
    assert_eq!(mice[0].battery, battery(25, Charging::Discharging));
    assert!(rig.hidpp.mice_changed(), "set up: the metadata is written");
    assert!(!rig.hidpp.mice_changed(), "nothing new");
    // The mouse is plugged in to charge: its status event, nothing polled.
    let written = rig.hid.take_written().len();
    assert!(written > 0);
    let event = rig.hid.mouse(BT).set_battery([26, 0x04, 1, 1]).unwrap();
    rig.notify(BT, event);
    assert!(rig.hid.take_written().is_empty(), "an event asks nothing");
    assert_eq!(rig.hidpp.deadline(), None, "no timer at rest");
    assert!(rig.hidpp.mice_changed());
    assert_eq!(rig.hidpp.mice()[0].battery, battery(26, Charging::Charging));
    assert!(!rig.hidpp.mice_changed());
    // Removed: no mice, noticed once.
    rig.hidpp.removed(BT, &mut rig.tap);
    assert!(rig.hidpp.mice().is_empty());
    assert!(rig.hidpp.mice_changed());
    assert!(!rig.hidpp.mice_changed());
}

#[test]
fn a_mouse_behind_a_receiver_is_listed_once_set_up_and_a_2s_without_0x1004_has_no_battery() {
    let rig = Rig::bolt();
    let mice = rig.hidpp.mice();
    assert_eq!(mice.len(), 1, "the empty indices are not mice: {mice:?}");
    assert!(mice[0].battery.is_some());
    let mut rig = Rig::new(Config::default_for(Platform::MacOs));
    rig.add(
        bluetooth_desc(),
        vec![Emulator::mx_master_2s(BLUETOOTH, DEVICE_INDEX_DIRECT)],
        false,
    );
    let mice = rig.hidpp.mice();
    assert_eq!(mice.len(), 1);
    assert_eq!(mice[0].battery, None);
}

#[test]
fn an_app_profile_changes_the_hidpp_gesture_action_and_reaches_links_set_up_later() {
    let text = "[[app]]\napp_id = \"com.example.Game\"\n[app.gesture]\nright = \"none\"\n";
    let mut rig = Rig::bluetooth_with(text);
    let key = Config::parse(text, "c.toml", Platform::MacOs)
        .unwrap()
        .app_key("com.example.Game", None);
    assert!(key.is_some());
    rig.hidpp.set_app(key);
    rig.press(BT, true);
    for _ in 0..30 {
        rig.drag(BT, 10, 1);
    }
    rig.press(BT, false);
    assert!(
        rig.tap.spawns().is_empty(),
        "the game's gesture does nothing"
    );
    // Back to the device profile.
    rig.hidpp.set_app(None);
    rig.press(BT, true);
    for _ in 0..30 {
        rig.drag(BT, 10, 1);
    }
    rig.press(BT, false);
    assert_eq!(rig.tap.spawns(), vec![desktop_left()]);
    // A mouse set up while the game is frontmost starts with its profile.
    let mut rig = Rig::new(Config::parse(text, "c.toml", Platform::MacOs).unwrap());
    rig.hidpp.set_app(key);
    rig.add(
        bluetooth_desc(),
        vec![Emulator::mx_master_3s(BLUETOOTH, DEVICE_INDEX_DIRECT)],
        false,
    );
    rig.press(BT, true);
    for _ in 0..30 {
        rig.drag(BT, 10, 1);
    }
    rig.press(BT, false);
    assert!(rig.tap.spawns().is_empty());
}

#[test]
fn the_thumb_wheel_takes_the_scroll_settings_of_the_app_under_the_cursor_once_per_gesture() {
    use crate::pointer::AppAt;
    let text = "[[app]]\napp_id = \"com.example.Game\"\n[app.scroll]\ninvert_horizontal = true\n";
    let mut rig = Rig::bluetooth_with(text);
    rig.tap.windows = vec![(
        (0.0, 0.0, 800.0, 900.0),
        AppAt::Bundle("com.example.Game".into()),
    )];
    let hwheel_sign = |rig: &mut Rig| {
        rig.tap.take_calls();
        let turn = rig.hid.mouse(BT).thumb(40).unwrap();
        rig.notify(BT, turn);
        match rig.tap.posts().as_slice() {
            [Synthetic::Scroll { hwheel, .. }] => hwheel.v120.signum(),
            other => panic!("{other:?}"),
        }
    };
    rig.tap.cursor = (1000.0, 100.0);
    let outside = hwheel_sign(&mut rig);
    rig.now = rig.now.plus(1_000_000);
    rig.tap.cursor = (100.0, 100.0);
    let over_game = hwheel_sign(&mut rig);
    assert_eq!(over_game, -outside, "the game inverts the thumb wheel");
    // The next turn within the gesture gap reads no window list.
    rig.tap.cursor = (1000.0, 100.0);
    assert_eq!(hwheel_sign(&mut rig), over_game);
    assert_eq!(rig.tap.app_lookups, [(1000.0, 100.0), (100.0, 100.0)]);
}
