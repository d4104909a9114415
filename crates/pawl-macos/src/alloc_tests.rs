//! The worker's hot path allocates nothing: once a sender is known, wheel events, gesture
//! presses, drags and releases go through [`crate::worker::Worker::on_event`] without one
//! heap allocation (counted per thread by a wrapping global allocator).

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

#[test]
fn wheel_gesture_and_click_allocate_nothing_once_the_sender_is_known() {
    let config = Config::default_for(Platform::MacOs);
    let performer = Performer::new(&config, |_| None).unwrap();
    let mut worker = Worker::new(config, Mode::Run, performer);
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
