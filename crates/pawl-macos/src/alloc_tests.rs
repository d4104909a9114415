//! The worker's hot path allocates nothing: once a sender is known, wheel events, gesture
//! presses, drags and releases go through [`crate::worker::Worker::on_event`] without one
//! heap allocation, and once HID++ setup is done the gesture button's reports and the
//! mouse's own reports go through [`crate::hidpp::Hidpp::on_report`] without one either
//! (counted per thread by a wrapping global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pawl_engine::{Bus, Config, DeviceInfo, Platform};

use crate::actions::Performer;
use crate::cg::{EventType, Field};
use crate::fake::{FakeEvent, FakeTap};
use crate::tap::TapKind;
use crate::worker::{Mode, Worker};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

const MX: i64 = 0x1_0000_0a01;

/// An event from the MX Master whose writes are already reserved.
fn event(e: FakeEvent) -> FakeEvent {
    let mut e = e.with(Field::SENDER_REGISTRY_ID, MX);
    e.writes.reserve(16);
    e
}

/// A worker under `config` and a trusted fake tap that knows the MX Master 3S sender.
fn worker_and_tap(config: Config) -> (Worker, FakeTap) {
    let performer = Performer::new(&config, |_| None).unwrap();
    let worker = Worker::new(config, Mode::Run, performer);
    let mut tap = FakeTap::trusted();
    tap.devices.insert(
        MX as u64,
        DeviceInfo {
            name: "MX Master 3S".into(),
            bus: Bus::BLUETOOTH,
            vendor: 0x046d,
            product: 0xb034,
            has_wheel: true,
            is_touchpad: false,
        },
    );
    (worker, tap)
}

#[test]
fn wheel_gesture_and_click_allocate_nothing_once_the_sender_is_known() {
    let config = Config::default_for(Platform::MacOs);
    let (mut worker, mut tap) = worker_and_tap(config);
    worker.start(&mut tap).unwrap();
    // The first event of a sender looks it up and creates its engine (allocates).
    let mut first = event(FakeEvent::scroll(1, 1.0, 10));
    worker.on_event(
        &mut tap,
        TapKind::Primary,
        EventType::SCROLL_WHEEL,
        &mut first,
    );
    let mut wheel: Vec<FakeEvent> = (0..200)
        .map(|_| event(FakeEvent::scroll(1, 1.0, 10)))
        .collect();
    let mut down = event(FakeEvent::button(5));
    let mut drags: Vec<FakeEvent> = (0..50).map(|_| event(FakeEvent::motion(1, -1))).collect();
    let mut up = event(FakeEvent::button(5));
    tap.calls.reserve(64);

    let before = allocations();
    for e in &mut wheel {
        tap.now = tap.now.plus(8_000);
        worker.on_event(&mut tap, TapKind::Primary, EventType::SCROLL_WHEEL, e);
    }
    worker.on_event(
        &mut tap,
        TapKind::Primary,
        EventType::OTHER_MOUSE_DOWN,
        &mut down,
    );
    for e in &mut drags {
        worker.on_event(
            &mut tap,
            TapKind::Movement,
            EventType::OTHER_MOUSE_DRAGGED,
            e,
        );
    }
    worker.on_event(
        &mut tap,
        TapKind::Primary,
        EventType::OTHER_MOUSE_UP,
        &mut up,
    );
    let during = allocations() - before;

    assert_eq!(during, 0, "allocations on the hot path");
    assert!(
        wheel.iter().all(|e| !e.writes.is_empty()),
        "every wheel event was rewritten"
    );
    assert_eq!(tap.posts().len(), 2, "the click was posted again");
}

#[test]
fn app_profiles_and_a_switch_held_through_a_gesture_allocate_nothing_on_the_event_path() {
    let config = crate::fake::game_config();
    let (mut worker, mut tap) = worker_and_tap(config);
    worker.start(&mut tap).unwrap();
    let mut first = event(FakeEvent::scroll(1, 1.0, 10));
    worker.on_event(
        &mut tap,
        TapKind::Primary,
        EventType::SCROLL_WHEEL,
        &mut first,
    );
    // The activation itself keeps the bundle id for `pawl status` (allocates, off the
    // event path).
    worker.on_app_activated(&mut tap, Some("com.example.Game"));
    let mut wheel: Vec<FakeEvent> = (0..100)
        .map(|_| event(FakeEvent::scroll(1, 1.0, 10)))
        .collect();
    let mut down = event(FakeEvent::button(5));
    let mut drags: Vec<FakeEvent> = (0..40).map(|_| event(FakeEvent::motion(1, -1))).collect();
    let mut up = event(FakeEvent::button(5));
    let mut after: Vec<FakeEvent> = (0..100)
        .map(|_| event(FakeEvent::scroll(1, 1.0, 10)))
        .collect();
    tap.calls.reserve(64);

    let before = allocations();
    for e in &mut wheel {
        tap.now = tap.now.plus(8_000);
        worker.on_event(&mut tap, TapKind::Primary, EventType::SCROLL_WHEEL, e);
    }
    worker.on_event(
        &mut tap,
        TapKind::Primary,
        EventType::OTHER_MOUSE_DOWN,
        &mut down,
    );
    for e in &mut drags[..20] {
        worker.on_event(
            &mut tap,
            TapKind::Movement,
            EventType::OTHER_MOUSE_DRAGGED,
            e,
        );
    }
    let mut during = allocations() - before;
    // The switch back waits for the release, which applies it.
    worker.on_app_activated(&mut tap, None);
    let before = allocations();
    for e in &mut drags[20..] {
        worker.on_event(
            &mut tap,
            TapKind::Movement,
            EventType::OTHER_MOUSE_DRAGGED,
            e,
        );
    }
    worker.on_event(
        &mut tap,
        TapKind::Primary,
        EventType::OTHER_MOUSE_UP,
        &mut up,
    );
    for e in &mut after {
        tap.now = tap.now.plus(8_000);
        worker.on_event(&mut tap, TapKind::Primary, EventType::SCROLL_WHEEL, e);
    }
    during += allocations() - before;

    assert_eq!(during, 0, "allocations on the event path");
    assert!(
        wheel
            .iter()
            .all(|e| e.writes.first().is_some_and(|w| w.1 > 0.0)),
        "the game's profile: not inverted"
    );
    assert!(
        after
            .iter()
            .all(|e| e.writes.first().is_some_and(|w| w.1 < 0.0)),
        "after the release the device profile: inverted"
    );
}

#[test]
fn hidpp_gesture_reports_and_mouse_reports_allocate_nothing_after_setup() {
    use pawl_engine::units::Micros;
    use pawl_hidpp::controls::CID_GESTURE_BUTTON;
    use pawl_hidpp::emulator::{Emulator, Motion};
    use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing};

    use crate::fake_hid::{FakeEndpoint, FakeHid};
    use crate::hidpp::{EndpointDesc, Hidpp};

    const BT: u64 = 0x1_0000_0d01;
    let bluetooth = Framing {
        short: false,
        long: true,
    };
    let config = Config::default_for(Platform::MacOs);
    let performer = Performer::new(&config, |_| None).unwrap();
    let mut hidpp = Hidpp::new(config, performer);
    let mut hid = FakeHid::default();
    let mut tap = FakeTap::trusted();
    hid.endpoints.push(FakeEndpoint {
        id: BT,
        mice: vec![Emulator::mx_master_3s(bluetooth, DEVICE_INDEX_DIRECT)],
        receiver: false,
        flags: [0; 3],
    });
    // The HID++ collection of a Bluetooth MX Master 3S (vendor page 0xFF43, report 0x11).
    let desc = EndpointDesc {
        id: BT,
        name: "MX Master 3S".into(),
        vendor: 0x046d,
        product: 0xb034,
        transport: "Bluetooth Low Energy".into(),
        usage_pairs: vec![(0x01, 0x02), (0xFF43, 0x0202)],
        descriptor: vec![
            0x06, 0x43, 0xFF, 0x0A, 0x02, 0x02, 0xA1, 0x01, 0x85, 0x11, 0x75, 0x08, 0x95, 0x13,
            0x15, 0x00, 0x26, 0xFF, 0x00, 0x09, 0x02, 0x81, 0x00, 0x09, 0x02, 0x91, 0x00, 0xC0,
        ],
        requires_tcc: true,
    };
    let endpoint = hidpp.wants(&desc).unwrap();
    let mut now = Micros(1_000_000);
    hidpp.opened(desc, endpoint, now, &mut hid, &mut tap);
    while let Some((id, report)) = hid.pending.pop_front() {
        now = now.plus(1_000);
        hidpp.on_report(id, &report, now, &mut hid, &mut tap);
    }
    // Every report prepared before counting: press, 20 raw-XY drags (below the gesture
    // threshold), release, and 50 of the mouse's own motion reports (report 2).
    let encode = |m: pawl_hidpp::report::Message| {
        let (bytes, len) = m.encode();
        (bytes, len)
    };
    let mouse = &mut hid.endpoints[0].mice[0];
    let down = encode(mouse.set_held(CID_GESTURE_BUTTON, true).unwrap());
    let drags: Vec<_> = (0..20)
        .map(|_| match mouse.motion(3, 2) {
            Motion::RawXy(m) => encode(m),
            Motion::Hid => panic!("raw XY is diverted"),
        })
        .collect();
    let up = encode(mouse.set_held(CID_GESTURE_BUTTON, false).unwrap());
    let motion = [0x02u8, 0, 0, 5, 0, 3, 0, 0, 0];
    tap.calls.reserve(64);

    let before = allocations();
    for (bytes, len) in std::iter::once(&down).chain(&drags).chain([&up]) {
        now = now.plus(8_000);
        hidpp.on_report(BT, &bytes[..*len], now, &mut hid, &mut tap);
    }
    for _ in 0..50 {
        now = now.plus(8_000);
        hidpp.on_report(BT, &motion, now, &mut hid, &mut tap);
    }
    let during = allocations() - before;

    assert_eq!(during, 0, "allocations on the HID++ hot path");
    assert_eq!(tap.posts().len(), 2, "the click was posted");
}

#[test]
fn scroll_events_inside_a_gesture_over_an_app_allocate_nothing_after_the_one_lookup() {
    use crate::pointer::AppAt;
    let config = crate::fake::game_config();
    let (mut worker, mut tap) = worker_and_tap(config);
    tap.windows = vec![(
        (0.0, 0.0, 800.0, 900.0),
        AppAt::Bundle("com.example.Game".into()),
    )];
    worker.start(&mut tap).unwrap();
    // The gesture's first event looks the sender and the app under the pointer up
    // (allocates: the bundle id).
    let mut first = event(FakeEvent::scroll(1, 1.0, 10));
    first.location = (100.0, 100.0);
    worker.on_event(
        &mut tap,
        TapKind::Primary,
        EventType::SCROLL_WHEEL,
        &mut first,
    );
    let mut wheel: Vec<FakeEvent> = (0..200)
        .map(|i| {
            let mut e = event(FakeEvent::scroll(1, 1.0, 10));
            e.location = (100.0 + f64::from(i), 100.0);
            e
        })
        .collect();
    tap.calls.reserve(64);

    let before = allocations();
    for e in &mut wheel {
        tap.now = tap.now.plus(8_000);
        worker.on_event(&mut tap, TapKind::Primary, EventType::SCROLL_WHEEL, e);
    }
    let during = allocations() - before;

    assert_eq!(during, 0, "allocations inside a scroll gesture");
    assert_eq!(tap.app_lookups.len(), 1, "one lookup per gesture");
    assert!(
        wheel
            .iter()
            .all(|e| e.writes.first().is_some_and(|w| w.1 > 0.0)),
        "the game's scroll settings: not inverted"
    );
}
