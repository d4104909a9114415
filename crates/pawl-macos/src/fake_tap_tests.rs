//! The worker's decisions driven through the fake tap: tap gating, recovery, scroll
//! fields, scope per sender, actions. Each test is one behaviour of the macOS worker.

use pawl_engine::config::{Inertia, Scope};
use pawl_engine::{Bus, Config, DeviceInfo, Platform, WheelOut};

use crate::actions::Performer;
use crate::cg::{EventType, Field, PAWL_MARKER, masks};
use crate::fake::{Call, FakeEvent, FakeTap};
use crate::tap::{Disposition, Synthetic, TapKind, TapSpec};
use crate::worker::{Mode, StartError, Worker};

const MX: u64 = 0x1_0000_0a01;
const TRACKPAD: u64 = 0x1_0000_0b02;
const OTHER_MOUSE: u64 = 0x1_0000_0c03;

fn device(name: &str, vendor: u16, product: u16) -> DeviceInfo {
    DeviceInfo {
        name: name.into(),
        bus: Bus::BLUETOOTH,
        vendor,
        product,
        has_wheel: true,
        is_touchpad: false,
    }
}

fn fake() -> FakeTap {
    let mut tap = FakeTap::trusted();
    tap.devices
        .insert(MX, device("MX Master 3S", 0x046d, 0xb034));
    tap.devices.insert(
        TRACKPAD,
        device("Apple Internal Keyboard / Trackpad", 0x05ac, 0x0342),
    );
    tap.devices
        .insert(OTHER_MOUSE, device("USB Optical Mouse", 0x1bcf, 0x0005));
    tap
}

fn started(config: Config, mode: Mode) -> (Worker, FakeTap) {
    let performer = Performer::new(&config, |_| None).unwrap();
    let mut worker = Worker::new(config, mode, performer);
    let mut tap = fake();
    worker.start(&mut tap).unwrap();
    tap.take_calls();
    (worker, tap)
}

fn run_worker() -> (Worker, FakeTap) {
    started(Config::default_for(Platform::MacOs), Mode::Run)
}

/// Sends one event from `sender` to tap `kind`; returns the disposition.
fn send(
    w: &mut Worker,
    tap: &mut FakeTap,
    kind: TapKind,
    ty: EventType,
    event: FakeEvent,
    sender: u64,
) -> (Disposition, FakeEvent) {
    let mut event = event.with(Field::SENDER_REGISTRY_ID, sender as i64);
    tap.now = tap.now.plus(8_000);
    let d = w.on_event(tap, kind, ty, &mut event);
    (d, event)
}

fn button(w: &mut Worker, tap: &mut FakeTap, n: i64, pressed: bool) -> Disposition {
    let ty = if pressed {
        EventType::OTHER_MOUSE_DOWN
    } else {
        EventType::OTHER_MOUSE_UP
    };
    send(w, tap, TapKind::Primary, ty, FakeEvent::button(n), MX).0
}

fn drag(w: &mut Worker, tap: &mut FakeTap, dx: i64, dy: i64) -> Disposition {
    let ty = EventType::OTHER_MOUSE_DRAGGED;
    send(w, tap, TapKind::Movement, ty, FakeEvent::motion(dx, dy), MX).0
}

fn scroll(
    w: &mut Worker,
    tap: &mut FakeTap,
    event: FakeEvent,
    sender: u64,
) -> (Disposition, FakeEvent) {
    send(
        w,
        tap,
        TapKind::Primary,
        EventType::SCROLL_WHEEL,
        event,
        sender,
    )
}

fn disabled(w: &mut Worker, tap: &mut FakeTap, kind: TapKind, ty: EventType) {
    let mut event = FakeEvent::default();
    assert_eq!(w.on_event(tap, kind, ty, &mut event), Disposition::Pass);
}

fn osascript(script: &str) -> Vec<String> {
    vec!["osascript".into(), "-e".into(), script.into()]
}

#[test]
fn primary_tap_is_created_enabled_and_movement_tap_disabled() {
    let config = Config::default_for(Platform::MacOs);
    let mut worker = Worker::new(
        config.clone(),
        Mode::Run,
        Performer::new(&config, |_| None).unwrap(),
    );
    let mut tap = fake();
    worker.start(&mut tap).unwrap();
    assert_eq!(
        tap.calls,
        vec![
            Call::Create(
                TapKind::Primary,
                TapSpec {
                    mask: masks::PRIMARY,
                    listen_only: false,
                    enabled: true
                }
            ),
            Call::Create(
                TapKind::Movement,
                TapSpec {
                    mask: masks::MOVEMENT,
                    listen_only: false,
                    enabled: false
                }
            ),
        ]
    );
}

#[test]
fn movement_tap_is_enabled_exactly_at_gesture_button_down_and_disabled_at_up() {
    let (mut w, mut tap) = run_worker();
    assert_eq!(button(&mut w, &mut tap, 2, true), Disposition::Pass);
    assert_eq!(button(&mut w, &mut tap, 2, false), Disposition::Pass);
    assert!(tap.calls.is_empty(), "{:?}", tap.calls);
    assert_eq!(button(&mut w, &mut tap, 5, true), Disposition::Drop);
    assert_eq!(
        tap.take_calls(),
        vec![Call::Enable(TapKind::Movement, true)]
    );
    assert_eq!(tap.enabled(TapKind::Movement), Some(true));
    drag(&mut w, &mut tap, 3, 0);
    assert_eq!(tap.take_calls(), vec![Call::Warp(0.0, 0.0)]);
    button(&mut w, &mut tap, 5, false);
    assert!(tap.calls.contains(&Call::Enable(TapKind::Movement, false)));
    assert_eq!(tap.enabled(TapKind::Movement), Some(false));
}

#[test]
fn gesture_drag_fires_one_action_and_suppresses_the_motion() {
    let (mut w, mut tap) = run_worker();
    button(&mut w, &mut tap, 5, true);
    let motion: Vec<Disposition> = (0..30).map(|_| drag(&mut w, &mut tap, 10, 1)).collect();
    assert!(motion.iter().all(|d| *d == Disposition::Drop));
    assert_eq!(button(&mut w, &mut tap, 5, false), Disposition::Drop);
    // Desktop direction is inverted by default: dragging right shows the desktop on the left.
    assert_eq!(
        tap.spawns(),
        vec![osascript(
            "tell application \"System Events\" to key code 123 using control down"
        )]
    );
    assert!(tap.posts().is_empty());
}

#[test]
fn gesture_button_click_without_drag_is_posted_again_as_a_marked_click() {
    let (mut w, mut tap) = run_worker();
    assert_eq!(button(&mut w, &mut tap, 5, true), Disposition::Drop);
    drag(&mut w, &mut tap, 2, 2);
    assert_eq!(button(&mut w, &mut tap, 5, false), Disposition::Drop);
    assert_eq!(
        tap.posts(),
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
    assert!(tap.spawns().is_empty());
}

#[test]
fn back_and_forward_buttons_fire_cmd_brackets_and_are_swallowed() {
    let (mut w, mut tap) = run_worker();
    assert_eq!(button(&mut w, &mut tap, 3, true), Disposition::Drop);
    assert_eq!(button(&mut w, &mut tap, 3, false), Disposition::Drop);
    assert_eq!(button(&mut w, &mut tap, 4, true), Disposition::Drop);
    assert_eq!(button(&mut w, &mut tap, 4, false), Disposition::Drop);
    assert_eq!(
        tap.spawns(),
        vec![
            osascript("tell application \"System Events\" to key code 33 using command down"),
            osascript("tell application \"System Events\" to key code 30 using command down"),
        ]
    );
}

#[test]
fn button_up_whose_down_macos_saw_passes_through() {
    // Back was pressed before pawl started: macOS holds it down, so it must see the up.
    let (mut w, mut tap) = run_worker();
    assert_eq!(button(&mut w, &mut tap, 3, false), Disposition::Pass);
    assert!(tap.spawns().is_empty());
}

#[test]
fn tap_disabled_by_timeout_cancels_the_gesture_and_re_enables_only_the_primary_tap() {
    let (mut w, mut tap) = run_worker();
    button(&mut w, &mut tap, 5, true);
    tap.take_calls();
    disabled(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::TAP_DISABLED_BY_TIMEOUT,
    );
    assert_eq!(
        tap.take_calls(),
        vec![
            Call::Enable(TapKind::Movement, false),
            Call::Enable(TapKind::Primary, true)
        ]
    );
    assert!(!w.movement_enabled());
    // The lost gesture can never fire: later motion passes, the late release is swallowed
    // (macOS never saw the press) and posts no click.
    assert_eq!(drag(&mut w, &mut tap, 500, 0), Disposition::Pass);
    assert_eq!(button(&mut w, &mut tap, 5, false), Disposition::Drop);
    assert!(tap.calls.is_empty(), "{:?}", tap.calls);
}

#[test]
fn disabled_movement_tap_stays_disabled_after_the_cancel() {
    let (mut w, mut tap) = run_worker();
    button(&mut w, &mut tap, 5, true);
    tap.take_calls();
    disabled(
        &mut w,
        &mut tap,
        TapKind::Movement,
        EventType::TAP_DISABLED_BY_TIMEOUT,
    );
    assert_eq!(
        tap.take_calls(),
        vec![Call::Enable(TapKind::Movement, false)]
    );
    assert_eq!(tap.enabled(TapKind::Primary), Some(true));
}

#[test]
fn tap_disabled_by_user_input_is_re_enabled_only_by_a_re_check_that_can_create_a_tap() {
    let (mut w, mut tap) = run_worker();
    button(&mut w, &mut tap, 5, true);
    tap.take_calls();
    tap.taps.insert(TapKind::Primary, false);
    disabled(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::TAP_DISABLED_BY_USER_INPUT,
    );
    assert_eq!(
        tap.take_calls(),
        vec![Call::Enable(TapKind::Movement, false), Call::Recheck],
        "cancelled, nothing re-enabled, a re-check armed"
    );
    assert_eq!(tap.enabled(TapKind::Primary), Some(false));
    // The re-check: a probe tap can be created, so the primary tap is enabled again (not
    // re-created).
    w.on_accessibility_changed(&mut tap);
    assert_eq!(tap.take_calls(), vec![Call::Enable(TapKind::Primary, true)]);
    assert_eq!(tap.enabled(TapKind::Primary), Some(true));
    // A later notification while everything is on changes nothing.
    w.on_accessibility_changed(&mut tap);
    assert!(tap.take_calls().is_empty());
}

#[test]
fn tap_disabled_by_user_input_after_a_revocation_tears_down_at_the_re_check() {
    let (mut w, mut tap) = run_worker();
    disabled(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::TAP_DISABLED_BY_USER_INPUT,
    );
    tap.take_calls();
    // AXIsProcessTrusted still says yes, but macOS refuses a new tap.
    tap.tap_allowed = Some(false);
    w.on_accessibility_changed(&mut tap);
    assert_eq!(tap.take_calls(), vec![Call::InvalidateAll]);
    assert!(!w.is_active());
}

#[test]
fn revocation_that_ax_is_process_trusted_still_reports_is_caught_by_the_probe_tap() {
    let (mut w, mut tap) = run_worker();
    tap.tap_allowed = Some(false);
    assert!(tap.trusted);
    disabled(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::TAP_DISABLED_BY_TIMEOUT,
    );
    let calls = tap.take_calls();
    assert_eq!(calls, vec![Call::InvalidateAll], "never re-enabled");
    assert!(!w.is_active());
    // Granted again: the notification creates the taps once.
    tap.tap_allowed = None;
    w.on_accessibility_changed(&mut tap);
    assert!(w.is_active());
    assert_eq!(
        tap.take_calls()
            .iter()
            .filter(|c| matches!(c, Call::Create(..)))
            .count(),
        2
    );
}

#[test]
fn tap_disabled_without_trust_tears_every_tap_down_instead_of_re_enabling() {
    let (mut w, mut tap) = run_worker();
    tap.trusted = false;
    disabled(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::TAP_DISABLED_BY_USER_INPUT,
    );
    let calls = tap.take_calls();
    assert!(calls.contains(&Call::InvalidateAll), "{calls:?}");
    assert!(
        !calls.iter().any(|c| matches!(c, Call::Enable(_, true))),
        "{calls:?}"
    );
    assert!(tap.taps.is_empty());
    assert!(!w.is_active());
    // While waiting, events are not touched.
    let (d, e) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), MX);
    assert_eq!(d, Disposition::Pass);
    assert!(e.writes.is_empty());
}

#[test]
fn revoked_accessibility_tears_down_and_a_new_grant_creates_the_taps_once() {
    let (mut w, mut tap) = run_worker();
    w.on_accessibility_changed(&mut tap);
    assert!(
        tap.take_calls().is_empty(),
        "a notification while trusted changes nothing"
    );
    tap.trusted = false;
    w.on_accessibility_changed(&mut tap);
    assert_eq!(tap.take_calls(), vec![Call::InvalidateAll]);
    w.on_accessibility_changed(&mut tap);
    assert!(tap.take_calls().is_empty());
    tap.trusted = true;
    w.on_accessibility_changed(&mut tap);
    let creates = tap
        .take_calls()
        .iter()
        .filter(|c| matches!(c, Call::Create(..)))
        .count();
    assert_eq!(creates, 2);
    assert!(w.is_active());
    w.on_accessibility_changed(&mut tap);
    assert!(tap.take_calls().is_empty());
}

#[test]
fn wake_cancels_the_gesture_and_re_enables_the_primary_tap() {
    let (mut w, mut tap) = run_worker();
    button(&mut w, &mut tap, 5, true);
    tap.take_calls();
    w.on_wake(&mut tap);
    assert_eq!(
        tap.take_calls(),
        vec![
            Call::Enable(TapKind::Movement, false),
            Call::Enable(TapKind::Primary, true)
        ]
    );
    tap.trusted = false;
    w.on_wake(&mut tap);
    assert_eq!(tap.take_calls(), vec![Call::InvalidateAll]);
}

#[test]
fn start_without_trust_prompts_once_and_waits_for_the_grant_instead_of_exiting() {
    let config = Config::default_for(Platform::MacOs);
    let mut w = Worker::new(
        config.clone(),
        Mode::Run,
        Performer::new(&config, |_| None).unwrap(),
    );
    let mut tap = fake();
    tap.trusted = false;
    assert_eq!(w.start(&mut tap), Ok(()));
    assert_eq!(tap.take_calls(), vec![Call::Prompt], "no tap, one prompt");
    assert!(w.waiting_for_trust() && !w.is_active());
    // Notifications without the grant change nothing and never prompt again.
    w.on_accessibility_changed(&mut tap);
    w.on_wake(&mut tap);
    assert!(tap.take_calls().is_empty());
    tap.trusted = true;
    w.on_accessibility_changed(&mut tap);
    assert!(w.is_active());
    assert_eq!(
        tap.take_calls()
            .iter()
            .filter(|c| matches!(c, Call::Create(..)))
            .count(),
        2
    );
}

#[test]
fn inspect_without_trust_is_an_error_and_creates_nothing() {
    let config = Config::default_for(Platform::MacOs);
    let mut w = Worker::new(
        config.clone(),
        Mode::Inspect,
        Performer::new(&config, |_| None).unwrap(),
    );
    let mut tap = fake();
    tap.trusted = false;
    assert_eq!(w.start(&mut tap), Err(StartError::NotTrusted));
    assert!(tap.calls.is_empty());
}

#[test]
fn gesture_warps_the_cursor_back_to_the_press_for_every_suppressed_motion() {
    let (mut w, mut tap) = run_worker();
    // Motion without the gesture button moves the cursor as usual.
    assert_eq!(drag(&mut w, &mut tap, 5, 5), Disposition::Pass);
    let down = FakeEvent {
        location: (640.0, 400.0),
        ..FakeEvent::button(5)
    };
    send(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::OTHER_MOUSE_DOWN,
        down,
        MX,
    );
    tap.take_calls();
    for _ in 0..3 {
        assert_eq!(drag(&mut w, &mut tap, 10, 0), Disposition::Drop);
    }
    assert_eq!(tap.take_calls(), vec![Call::Warp(640.0, 400.0); 3]);
    button(&mut w, &mut tap, 5, false);
    tap.take_calls();
    assert_eq!(drag(&mut w, &mut tap, 10, 0), Disposition::Pass);
    assert!(tap.calls.is_empty(), "{:?}", tap.calls);
}

#[test]
fn chord_keeps_the_modifiers_the_user_holds() {
    let mut config = Config::default_for(Platform::MacOs);
    config.actions.backend = pawl_engine::config::ActionBackend::CgEvent;
    let (mut w, mut tap) = started(config, Mode::Run);
    let shift = crate::cg::flags::SHIFT;
    tap.held = shift;
    button(&mut w, &mut tap, 3, true);
    let posts = tap.posts();
    assert_eq!(
        posts,
        vec![
            Synthetic::FlagsChanged {
                code: 0x37,
                flags: crate::cg::flags::COMMAND | shift
            },
            Synthetic::Key {
                code: 0x21,
                down: true,
                flags: crate::cg::flags::COMMAND
            },
            Synthetic::Key {
                code: 0x21,
                down: false,
                flags: crate::cg::flags::COMMAND
            },
            Synthetic::FlagsChanged {
                code: 0x37,
                flags: shift
            },
        ],
        "the shortcut is exactly Command+[, and Shift is still down afterwards"
    );
}

#[test]
fn tap_refused_while_trusted_is_reported_as_a_stale_grant_and_nothing_is_left() {
    let config = Config::default_for(Platform::MacOs);
    let mut w = Worker::new(
        config.clone(),
        Mode::Run,
        Performer::new(&config, |_| None).unwrap(),
    );
    let mut tap = fake();
    tap.fail_create = vec![TapKind::Movement];
    let err = w.start(&mut tap).unwrap_err();
    assert_eq!(err, StartError::StaleGrant(TapKind::Movement));
    assert!(err.to_string().contains("stale"));
    assert_eq!(tap.calls.last(), Some(&Call::InvalidateAll));
    assert!(tap.taps.is_empty());
}

#[test]
fn mx_master_scroll_is_inverted_and_written_line_first() {
    let (mut w, mut tap) = run_worker();
    let (d, e) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), MX);
    assert_eq!(d, Disposition::Pass);
    let order: Vec<Field> = e.writes.iter().map(|(f, _)| *f).collect();
    assert_eq!(
        order,
        vec![
            Field::SCROLL_DELTA_AXIS1,
            Field::SCROLL_DELTA_AXIS2,
            Field::SCROLL_FIXED_PT_DELTA_AXIS1,
            Field::SCROLL_FIXED_PT_DELTA_AXIS2,
            Field::SCROLL_POINT_DELTA_AXIS1,
            Field::SCROLL_POINT_DELTA_AXIS2,
        ]
    );
    assert_eq!(e.writes[0].1, -1.0);
    assert_eq!(e.writes[2].1, -1.0);
    assert_eq!(e.writes[4].1, -10.0);
}

#[test]
fn pawls_own_and_synthetic_events_pass_untouched() {
    let (mut w, mut tap) = run_worker();
    let own = FakeEvent::scroll(1, 1.0, 10).with(Field::SOURCE_USER_DATA, PAWL_MARKER);
    let (d, e) = scroll(&mut w, &mut tap, own, MX);
    assert_eq!(d, Disposition::Pass);
    assert!(e.writes.is_empty());
    let synthetic = FakeEvent::button(5).with(Field::SOURCE_STATE_ID, 0);
    let (d, _) = send(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::OTHER_MOUSE_DOWN,
        synthetic,
        MX,
    );
    assert_eq!(d, Disposition::Pass);
    assert!(tap.calls.is_empty() && tap.lookups.is_empty());
}

#[test]
fn trackpad_and_other_mice_are_never_changed_and_each_sender_is_looked_up_once() {
    let (mut w, mut tap) = run_worker();
    for _ in 0..3 {
        let (d, e) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), TRACKPAD);
        assert_eq!(d, Disposition::Pass);
        assert!(e.writes.is_empty());
        let (d, e) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), OTHER_MOUSE);
        assert_eq!(d, Disposition::Pass);
        assert!(e.writes.is_empty());
    }
    // The trackpad's buttons are not touched either.
    let (d, _) = send(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::OTHER_MOUSE_DOWN,
        FakeEvent::button(5),
        TRACKPAD,
    );
    assert_eq!(d, Disposition::Pass);
    assert_eq!(tap.lookups, vec![TRACKPAD, OTHER_MOUSE]);
}

#[test]
fn unidentified_sender_is_transformed_only_when_not_continuous_and_without_phase() {
    let (mut w, mut tap) = run_worker();
    let (_, wheel) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), 0);
    assert!(
        !wheel.writes.is_empty(),
        "a line-based wheel of an unknown sender is transformed"
    );
    let continuous = FakeEvent::scroll(0, 0.3, 3).with(Field::SCROLL_IS_CONTINUOUS, 1);
    let (d, e) = scroll(&mut w, &mut tap, continuous, 0);
    assert_eq!(d, Disposition::Pass);
    assert!(e.writes.is_empty());
    let momentum = FakeEvent::scroll(1, 1.0, 10).with(Field::SCROLL_MOMENTUM_PHASE, 2);
    let (_, e) = scroll(&mut w, &mut tap, momentum, 0x99);
    assert!(e.writes.is_empty());
    let phase = FakeEvent::scroll(1, 1.0, 10).with(Field::SCROLL_PHASE, 1);
    let (_, e) = scroll(&mut w, &mut tap, phase, MX);
    assert!(
        e.writes.is_empty(),
        "an identified MX Master event with a phase is left alone"
    );
}

#[test]
fn scope_none_leaves_every_wheel_alone() {
    let mut config = Config::default_for(Platform::MacOs);
    config.scope = Scope::None;
    let (mut w, mut tap) = started(config, Mode::Run);
    for sender in [MX, 0] {
        let (d, e) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), sender);
        assert_eq!(d, Disposition::Pass);
        assert!(e.writes.is_empty());
    }
}

#[test]
fn no_timer_is_armed_without_inertia() {
    let (mut w, mut tap) = run_worker();
    for _ in 0..10 {
        scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), MX);
    }
    assert!(tap.calls.is_empty(), "{:?}", tap.calls);
}

/// Four wheel events 8 ms apart: fast enough for a glide tail.
fn fast_scroll(w: &mut Worker, tap: &mut FakeTap) {
    for _ in 0..4 {
        scroll(w, tap, FakeEvent::scroll(1, 1.0, 10), MX);
    }
}

#[test]
fn glide_arms_a_one_shot_timer_only_while_the_engine_has_a_deadline() {
    let mut config = Config::default_for(Platform::MacOs);
    config.scroll.inertia = Inertia::Glide {
        decay: 0.5,
        interval_us: 16_000,
    };
    let (mut w, mut tap) = started(config, Mode::Run);
    // A single event says nothing about speed: no timer.
    scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), MX);
    assert!(tap.take_calls().is_empty());
    fast_scroll(&mut w, &mut tap);
    let Some(Call::ArmTimer(Some(mut deadline))) = tap.calls.last().cloned() else {
        unreachable!("a fast scroll arms the timer: {:?}", tap.calls)
    };
    assert!(deadline > tap.now);
    tap.take_calls();
    let mut posted = Vec::new();
    for _ in 0..20 {
        tap.now = deadline;
        w.on_timer(&mut tap);
        posted.extend(tap.posts());
        match tap.calls.last() {
            Some(Call::ArmTimer(Some(next))) => deadline = *next,
            _ => break,
        }
        tap.take_calls();
    }
    assert_eq!(
        tap.calls.last(),
        Some(&Call::ArmTimer(None)),
        "the glide ends and the timer goes"
    );
    assert!(!posted.is_empty());
    for p in &posted {
        let Synthetic::Scroll { wheel, hwheel } = p else {
            unreachable!("only scroll events are posted by a glide: {p:?}")
        };
        assert!(wheel.v120 < 0, "inverted like the wheel: {wheel:?}");
        assert_eq!(*hwheel, WheelOut::default());
    }
}

#[test]
fn tap_disabled_stops_a_glide() {
    let mut config = Config::default_for(Platform::MacOs);
    config.scroll.inertia = Inertia::Glide {
        decay: 0.9,
        interval_us: 16_000,
    };
    let (mut w, mut tap) = started(config, Mode::Run);
    fast_scroll(&mut w, &mut tap);
    assert!(matches!(tap.calls.last(), Some(Call::ArmTimer(Some(_)))));
    tap.take_calls();
    disabled(
        &mut w,
        &mut tap,
        TapKind::Primary,
        EventType::TAP_DISABLED_BY_TIMEOUT,
    );
    assert!(tap.calls.contains(&Call::ArmTimer(None)), "{:?}", tap.calls);
}

#[test]
fn debug_mode_uses_one_active_tap_with_the_complete_mask() {
    let config = Config::default_for(Platform::MacOs);
    let mut w = Worker::new(
        config.clone(),
        Mode::Debug,
        Performer::new(&config, |_| None).unwrap(),
    );
    let mut tap = fake();
    w.start(&mut tap).unwrap();
    assert_eq!(
        tap.take_calls(),
        vec![Call::Create(
            TapKind::Primary,
            TapSpec {
                mask: masks::COMPLETE,
                listen_only: false,
                enabled: true
            }
        )]
    );
    // Decisions are the same as in Run mode, without movement-tap gating.
    assert_eq!(button(&mut w, &mut tap, 5, true), Disposition::Drop);
    assert!(tap.take_calls().is_empty());
}

#[test]
fn inspect_mode_observes_with_a_listen_only_tap_and_changes_nothing() {
    let config = Config::default_for(Platform::MacOs);
    let mut w = Worker::new(
        config.clone(),
        Mode::Inspect,
        Performer::new(&config, |_| None).unwrap(),
    );
    let mut tap = fake();
    w.start(&mut tap).unwrap();
    assert_eq!(
        tap.take_calls(),
        vec![Call::Create(
            TapKind::Primary,
            TapSpec {
                mask: masks::COMPLETE,
                listen_only: true,
                enabled: true
            }
        )]
    );
    assert_eq!(button(&mut w, &mut tap, 5, true), Disposition::Pass);
    for _ in 0..30 {
        assert_eq!(drag(&mut w, &mut tap, 10, 0), Disposition::Pass);
    }
    assert_eq!(button(&mut w, &mut tap, 5, false), Disposition::Pass);
    let (d, e) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 10), MX);
    assert_eq!(d, Disposition::Pass);
    assert!(e.writes.is_empty());
    assert!(tap.calls.is_empty(), "{:?}", tap.calls);
}

#[test]
fn stop_invalidates_every_tap() {
    let (mut w, mut tap) = run_worker();
    button(&mut w, &mut tap, 5, true);
    tap.take_calls();
    w.stop(&mut tap);
    assert_eq!(tap.calls.last(), Some(&Call::InvalidateAll));
    assert!(tap.taps.is_empty());
    assert!(!w.is_active());
}

#[test]
fn cg_event_backend_posts_the_hotkey_and_releases_the_modifier() {
    let mut config = Config::default_for(Platform::MacOs);
    config.actions.backend = pawl_engine::config::ActionBackend::CgEvent;
    let (mut w, mut tap) = started(config, Mode::Run);
    button(&mut w, &mut tap, 5, true);
    for _ in 0..30 {
        drag(&mut w, &mut tap, 0, -10);
    }
    button(&mut w, &mut tap, 5, false);
    let posts = tap.posts();
    // Drag up = Mission Control: Control+Up (126) with the Control|Fn mask.
    assert!(posts.contains(&Synthetic::Key {
        code: 126,
        down: true,
        flags: 0x84_0000 | crate::cg::flags::NUMERIC_PAD
    }));
    assert_eq!(
        posts.last(),
        Some(&Synthetic::FlagsChanged {
            code: 0x3B,
            flags: 0
        })
    );
    assert!(tap.spawns().is_empty());
}

#[test]
fn taps_are_never_re_created_by_disabled_events_or_wake() {
    let (mut w, mut tap) = run_worker();
    for i in 0..50 {
        let ty = if i % 2 == 0 {
            EventType::TAP_DISABLED_BY_TIMEOUT
        } else {
            EventType::TAP_DISABLED_BY_USER_INPUT
        };
        disabled(&mut w, &mut tap, TapKind::Primary, ty);
        if i % 3 == 0 {
            w.on_accessibility_changed(&mut tap);
        }
        w.on_wake(&mut tap);
    }
    assert!(
        !tap.calls
            .iter()
            .any(|c| matches!(c, Call::Create(..) | Call::InvalidateAll)),
        "{:?}",
        tap.calls
    );
    assert_eq!(tap.enabled(TapKind::Primary), Some(true));
    assert_eq!(tap.enabled(TapKind::Movement), Some(false));
}

#[test]
fn a_new_sender_costs_one_lookup_on_its_first_event_and_none_after() {
    let (mut w, mut tap) = run_worker();
    for id in 1..=40u64 {
        scroll(
            &mut w,
            &mut tap,
            FakeEvent::scroll(1, 1.0, 10),
            0x2_0000_0000 + id,
        );
        assert_eq!(
            tap.lookups.len() as u64,
            id,
            "one lookup per new sender's first event"
        );
    }
    for id in 1..=40u64 {
        scroll(
            &mut w,
            &mut tap,
            FakeEvent::scroll(1, 1.0, 10),
            0x2_0000_0000 + id,
        );
    }
    assert_eq!(tap.lookups.len(), 40, "known senders cost no lookup");
}

/// The vertical line delta the MX Master's one-line wheel step becomes (0.0: unchanged).
fn wheel_line(w: &mut Worker, tap: &mut FakeTap) -> f64 {
    let (d, e) = scroll(w, tap, FakeEvent::scroll(1, 1.0, 10), MX);
    assert_eq!(d, Disposition::Pass);
    e.writes
        .iter()
        .find(|(f, _)| *f == Field::SCROLL_DELTA_AXIS1)
        .map_or(0.0, |(_, v)| *v)
}

#[test]
fn an_activated_game_turns_scroll_inversion_off_and_another_app_brings_it_back() {
    let (mut w, mut tap) = started(crate::fake::game_config(), Mode::Run);
    assert!(w.wants_focus());
    assert_eq!(
        wheel_line(&mut w, &mut tap),
        -1.0,
        "device profile: inverted"
    );
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    assert_eq!(wheel_line(&mut w, &mut tap), 1.0, "the game's profile");
    let status = w.focus();
    assert_eq!(
        status.backend,
        "nsworkspace (scroll: the app under the pointer)"
    );
    assert_eq!(status.app.as_deref(), Some("com.example.Game"));
    assert_eq!(status.profile, "app com.example.Game ([[app]] at line 1)");
    w.on_app_activated(&mut tap, Some("com.apple.Safari"));
    assert_eq!(
        wheel_line(&mut w, &mut tap),
        -1.0,
        "unknown app: device profile"
    );
    assert_eq!(w.focus().profile, "device");
    assert_eq!(w.focus().app.as_deref(), Some("com.apple.Safari"));
}

#[test]
fn an_app_without_a_bundle_id_runs_the_device_profile() {
    let (mut w, mut tap) = started(crate::fake::game_config(), Mode::Run);
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    w.on_app_activated(&mut tap, None);
    assert_eq!(wheel_line(&mut w, &mut tap), -1.0);
    assert_eq!(
        (w.focus().app, w.focus().profile),
        (None, "device".to_owned())
    );
}

#[test]
fn a_sender_first_seen_after_the_activation_starts_with_the_apps_profile() {
    let (mut w, mut tap) = started(crate::fake::game_config(), Mode::Run);
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    assert_eq!(wheel_line(&mut w, &mut tap), 1.0);
    // The unidentified sender's engine switched too.
    let (_, e) = scroll(&mut w, &mut tap, FakeEvent::scroll(1, 1.0, 0), 0);
    assert_eq!(e.writes.first().map(|(_, v)| *v), Some(1.0));
}

#[test]
fn a_profile_switch_while_the_gesture_button_is_held_takes_effect_after_release() {
    let (mut w, mut tap) = started(crate::fake::game_config(), Mode::Run);
    assert_eq!(button(&mut w, &mut tap, 5, true), Disposition::Drop);
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    assert_eq!(w.focus().app.as_deref(), Some("com.example.Game"));
    assert_eq!(wheel_line(&mut w, &mut tap), -1.0, "held: the old profile");
    button(&mut w, &mut tap, 5, false);
    assert_eq!(
        wheel_line(&mut w, &mut tap),
        1.0,
        "released: the game's profile"
    );
}

#[test]
fn a_profile_switch_stops_a_glide_and_removes_its_timer() {
    let mut config = crate::fake::game_config();
    config.scroll.inertia = Inertia::Glide {
        decay: 0.5,
        interval_us: 16_000,
    };
    let (mut w, mut tap) = started(config, Mode::Run);
    fast_scroll(&mut w, &mut tap);
    assert!(matches!(tap.calls.last(), Some(Call::ArmTimer(Some(_)))));
    tap.take_calls();
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    assert_eq!(tap.take_calls(), vec![Call::ArmTimer(None)]);
    // The same application again touches nothing.
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    assert!(tap.take_calls().is_empty());
}

#[test]
fn without_app_tables_status_says_there_is_no_focus_backend() {
    let (w, _) = run_worker();
    assert!(!w.wants_focus());
    assert_eq!(w.focus().backend, "none: no [[app]] table");
    assert_eq!(w.focus().profile, "device");
}

/// The game sets scroll (not inverted) and lets the back button through unmapped; Safari
/// has no table.
fn pointer_config() -> Config {
    Config::parse(
        "[[app]]\napp_id = [\"com.example.Game\"]\n[app.scroll]\ninvert_vertical = false\n\
         [app.buttons]\non_back = \"pass-through\"\n",
        "t.toml",
        Platform::MacOs,
    )
    .unwrap()
}

/// The game's window on the left half of the screen, Safari's on the right.
fn two_windows(tap: &mut FakeTap) {
    use crate::pointer::AppAt;
    tap.windows = vec![
        (
            (0.0, 0.0, 800.0, 900.0),
            AppAt::Bundle("com.example.Game".into()),
        ),
        (
            (800.0, 0.0, 800.0, 900.0),
            AppAt::Bundle("com.apple.Safari".into()),
        ),
    ];
}

/// The vertical line delta one wheel step at `(x, y)` becomes.
fn wheel_line_at(w: &mut Worker, tap: &mut FakeTap, x: f64, y: f64) -> f64 {
    let mut event = FakeEvent::scroll(1, 1.0, 10);
    event.location = (x, y);
    let (d, e) = scroll(w, tap, event, MX);
    assert_eq!(d, Disposition::Pass);
    e.writes
        .iter()
        .find(|(f, _)| *f == Field::SCROLL_DELTA_AXIS1)
        .map_or(0.0, |(_, v)| *v)
}

#[test]
fn scroll_over_a_background_app_uses_its_scroll_settings_while_buttons_follow_focus() {
    let (mut w, mut tap) = started(pointer_config(), Mode::Run);
    two_windows(&mut tap);
    // Safari is focused, the pointer is over the game.
    w.on_app_activated(&mut tap, Some("com.apple.Safari"));
    assert_eq!(wheel_line_at(&mut w, &mut tap, 100.0, 100.0), 1.0);
    assert_eq!(tap.app_lookups, [(100.0, 100.0)]);
    // The back button is Safari's (the device's mapping): the game's does not apply.
    assert_eq!(button(&mut w, &mut tap, 3, true), Disposition::Drop);
    button(&mut w, &mut tap, 3, false);
    // The game is focused, the pointer is over Safari: buttons are the game's, scroll
    // Safari's (the device's, inverted).
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    tap.now = tap.now.plus(1_000_000);
    assert_eq!(wheel_line_at(&mut w, &mut tap, 1000.0, 100.0), -1.0);
    assert_eq!(button(&mut w, &mut tap, 3, true), Disposition::Pass);
}

#[test]
fn the_window_list_is_read_once_per_scroll_gesture_and_again_after_the_gap() {
    let (mut w, mut tap) = started(pointer_config(), Mode::Run);
    two_windows(&mut tap);
    for _ in 0..20 {
        // 8 ms apart; the pointer drifts onto Safari within the gesture.
        assert_eq!(wheel_line_at(&mut w, &mut tap, 790.0, 100.0), 1.0);
    }
    assert_eq!(
        wheel_line_at(&mut w, &mut tap, 900.0, 100.0),
        1.0,
        "the gesture keeps the app it started over"
    );
    assert_eq!(tap.app_lookups.len(), 1);
    // A pause longer than `gesture_gap_ms` (300 ms) starts a new gesture.
    tap.now = tap.now.plus(300_000);
    assert_eq!(wheel_line_at(&mut w, &mut tap, 900.0, 100.0), -1.0);
    assert_eq!(tap.app_lookups, [(790.0, 100.0), (900.0, 100.0)]);
}

#[test]
fn without_app_tables_that_set_scroll_the_window_list_is_never_read() {
    let config = Config::parse(
        "[[app]]\napp_id = [\"com.example.Game\"]\n[app.buttons]\non_back = \"overview\"\n",
        "t.toml",
        Platform::MacOs,
    )
    .unwrap();
    let (mut w, mut tap) = started(config, Mode::Run);
    two_windows(&mut tap);
    for _ in 0..3 {
        tap.now = tap.now.plus(1_000_000);
        assert_eq!(wheel_line_at(&mut w, &mut tap, 100.0, 100.0), -1.0);
    }
    assert!(tap.app_lookups.is_empty());
}

#[test]
fn a_failed_window_lookup_leaves_scroll_to_the_focused_app() {
    let (mut w, mut tap) = started(pointer_config(), Mode::Run);
    two_windows(&mut tap);
    assert_eq!(wheel_line_at(&mut w, &mut tap, 1000.0, 100.0), -1.0);
    // No window list (the session is locked, say): the focused game decides.
    tap.no_window_list = true;
    w.on_app_activated(&mut tap, Some("com.example.Game"));
    tap.now = tap.now.plus(1_000_000);
    assert_eq!(wheel_line_at(&mut w, &mut tap, 1000.0, 100.0), 1.0);
    // Nothing under the pointer (the desktop): the same.
    tap.no_window_list = false;
    tap.now = tap.now.plus(1_000_000);
    assert_eq!(wheel_line_at(&mut w, &mut tap, 5000.0, 5000.0), 1.0);
    assert_eq!(tap.app_lookups.len(), 3);
}

#[test]
fn another_sender_starts_its_own_scroll_gesture() {
    let (mut w, mut tap) = started(pointer_config(), Mode::Run);
    two_windows(&mut tap);
    wheel_line_at(&mut w, &mut tap, 100.0, 100.0);
    let mut event = FakeEvent::scroll(1, 1.0, 0);
    event.location = (1000.0, 100.0);
    let (_, e) = scroll(&mut w, &mut tap, event, 0);
    assert_eq!(
        e.writes.first().map(|(_, v)| *v),
        Some(-1.0),
        "the unidentified sender over Safari"
    );
    assert_eq!(tap.app_lookups.len(), 2);
}
