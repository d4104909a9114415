//! The worker's decisions: which taps exist and when they are enabled, what each event
//! becomes, and how the worker recovers when macOS disables a tap, the system wakes, or
//! the accessibility permission changes.
//!
//! Everything here is platform-neutral: the OS is reached only through [`Tap`] and
//! [`TapEvent`], so the tests drive it with a fake tap on any platform.
//!
//! # Rules
//!
//! - Taps are created once ([`Worker::start`]), never in a loop. The primary tap (other
//!   buttons, wheel) is active from the start; the movement tap is created disabled,
//!   enabled synchronously inside the callback of the gesture-button press and disabled in
//!   the callback of its release. Debug mode uses one active tap with the complete pointer
//!   mask; inspect mode one listen-only tap with the complete mask and changes nothing.
//! - Trust is decided by creating a probe tap ([`Tap::can_create_tap`]), never by
//!   `AXIsProcessTrusted()`, which may keep answering yes after the grant is revoked (then
//!   re-enabling a tap repeats the input freeze: LinearMouse #667, Mac Mouse Fix #443).
//! - `kCGEventTapDisabledByTimeout` / `ByUserInput`: the gesture in progress is cancelled
//!   (a lost button-up can never fire later). Only after a timeout, and only while a probe
//!   tap can be created, are the taps meant to be active re-enabled (as Mac Mouse Fix and
//!   LinearMouse do). When no tap can be created, every tap is torn down (an active tap
//!   without trust freezes input) and the worker waits: each accessibility notification
//!   and each wake create them again once a probe tap can be created. After `ByUserInput`
//!   the taps stay disabled until the one-shot re-check 1 s later (or a wake) finds that a
//!   probe tap can be created; taps are still created only once.
//! - Started without the Accessibility permission (Run and Debug modes), the worker asks
//!   macOS to prompt once (`AXIsProcessTrustedWithOptions`) and waits for the grant
//!   instead of exiting (a LaunchAgent that exits is restarted every ~10 s and never
//!   prompts).
//! - While the gesture button is held, each suppressed motion event warps the cursor back
//!   to where the button went down (`CGWarpMouseCursorPosition`, as Mac Mouse Fix's
//!   `PointerFreeze.m` does): dropping the motion at the HID tap may not stop the cursor.
//! - A sender's first event costs one IORegistry lookup (a fixed handful of kernel MIG
//!   calls, no user-space server to wait on), cached per registry ID; every later event of
//!   that sender costs none. There is at most one lookup per event.
//! - Events marked as pawl's own (`kCGEventSourceUserData` = [`PAWL_MARKER`]) and synthetic
//!   events (source state other than HIDSystemState) pass through untouched.
//! - A button-up passes through unless pawl swallowed its button-down, so macOS never
//!   keeps a button held that pawl let it see pressed.
//! - `[[app]]` profiles follow the frontmost application ([`Worker::on_app_activated`],
//!   [`crate::focus`]): one config lookup per activation, then an index switch in each
//!   engine; a gesture held through the switch keeps its profile until it ends.
//! - Where `[[app]]` tables set scroll keys, the application under the pointer decides the
//!   scroll settings instead, looked up once per scroll gesture of a sender
//!   ([`crate::pointer`]), before the event that starts it reaches the engine.

use std::fmt;

use pawl_engine::engine::buttons;
use pawl_engine::units::{Button, ButtonSet, Micros};
use pawl_engine::{Action, Config, FrameIn, FrameOut, Verdict};

use crate::actions::Performer;
use crate::cg::{EventType, Field, PAWL_MARKER, SOURCE_STATE_HID_SYSTEM, masks};
use crate::focus::{Change, Focus, FocusSummary};
use crate::pointer::ScrollTarget;
use crate::scroll;
use crate::senders::{Route, Senders};
use crate::tap::{Disposition, Synthetic, Tap, TapEvent, TapKind, TapSpec};

/// How the worker runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The daemon: primary tap plus gated movement tap.
    Run,
    /// The daemon with every decision logged; one active tap with the complete mask.
    Debug,
    /// Observe only: one listen-only tap with the complete mask; every decision is logged,
    /// nothing is changed, posted or performed.
    Inspect,
}

/// Why the worker could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartError {
    /// `AXIsProcessTrusted()` is false: no tap can be created.
    NotTrusted,
    /// Tap creation failed although the process is trusted: the known stale-grant case
    /// (the grant belongs to an earlier build of the binary).
    StaleGrant(TapKind),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::NotTrusted => f.write_str(
                "pawl has no accessibility permission (AXIsProcessTrusted is false): grant it \
                 in System Settings > Privacy & Security > Accessibility",
            ),
            StartError::StaleGrant(kind) => write!(
                f,
                "macOS refused to create the {} event tap although pawl is trusted: the \
                 accessibility grant is stale (it belongs to an earlier build of the binary); \
                 remove pawl from System Settings > Privacy & Security > Accessibility, add it \
                 again, then start pawl again",
                match kind {
                    TapKind::Primary => "primary",
                    TapKind::Movement => "movement",
                }
            ),
        }
    }
}

impl std::error::Error for StartError {}

/// Where the worker is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No taps (before [`Worker::start`], after [`Worker::stop`]).
    Idle,
    /// Taps exist.
    Active,
    /// Trust was revoked: taps torn down, waiting for the accessibility notification.
    WaitingForTrust,
}

/// The CGEventTap worker's state: config, per-sender engines, tap gating.
#[derive(Debug)]
pub struct Worker {
    config: Config,
    mode: Mode,
    state: State,
    /// Whether the movement tap is enabled (Run mode).
    movement_enabled: bool,
    senders: Senders,
    performer: Performer,
    /// Button-downs pawl suppressed: their button-ups are suppressed too.
    swallowed: ButtonSet,
    /// The deadline the run-loop timer is armed for.
    armed: Option<Micros>,
    /// Where the cursor was when the gesture button went down (px), while it is held.
    anchor: Option<(f64, f64)>,
    /// A tap was disabled by user input: left disabled until the re-check.
    suspended: bool,
    /// The frontmost application and the `[[app]]` profile it selects.
    focus: Focus,
    /// When a scroll gesture starts, to give it the application under the pointer.
    pointer: ScrollTarget,
    out: FrameOut,
}

impl Worker {
    /// A worker for `config`, not started. `performer` holds the prepared actions.
    pub fn new(config: Config, mode: Mode, performer: Performer) -> Worker {
        let senders = Senders::new(&config);
        let focus = Focus::new(&config);
        let pointer = ScrollTarget::new(&config);
        Worker {
            config,
            mode,
            state: State::Idle,
            movement_enabled: false,
            senders,
            performer,
            swallowed: ButtonSet::default(),
            armed: None,
            anchor: None,
            suspended: false,
            focus,
            pointer,
            out: FrameOut::default(),
        }
    }

    /// Whether the config has `[[app]]` tables: the host observes the frontmost
    /// application only then.
    pub fn wants_focus(&self) -> bool {
        Focus::wanted(&self.config)
    }

    /// The host cannot observe the frontmost application (`why`): device profiles stay in
    /// force, and `pawl status` says why.
    pub fn focus_unavailable(&mut self, why: &str) {
        log::warn!("focus: {why}: device profiles in force");
        self.focus.unavailable(why);
        self.senders.set_app(None);
    }

    /// An application became frontmost, with bundle identifier `bundle` (`None`: it has
    /// none). When that selects another profile, every engine switches to it (a gesture
    /// held keeps its profile until it ends) and the glide timer follows (a glide stops
    /// when the profile changes). Not on the event path: one config lookup, no per-event
    /// cost. Returns what changed, so the host knows when `pawl status` is stale.
    pub fn on_app_activated(&mut self, tap: &mut impl Tap, bundle: Option<&str>) -> Change {
        let change = self.focus.activated(&self.config, bundle);
        if change != Change::Same {
            log::debug!("focus: {}", self.focus.app().unwrap_or("(no bundle id)"));
        }
        if change == Change::Profile {
            self.senders.set_app(self.focus.key());
            self.arm_timer(tap);
        }
        change
    }

    /// The `[[app]]` key of the frontmost application (`None`: the device profiles), for
    /// the HID++ engines ([`crate::hidpp::Hidpp::set_app`]).
    pub fn app_key(&self) -> Option<pawl_engine::AppKey> {
        self.focus.key()
    }

    /// The focus backend, the frontmost application and the profile in force.
    pub fn focus(&self) -> FocusSummary {
        self.focus.summary(&self.config)
    }

    /// Whether the taps exist.
    pub fn is_active(&self) -> bool {
        self.state == State::Active
    }

    /// Whether the movement tap is enabled.
    pub fn movement_enabled(&self) -> bool {
        self.movement_enabled
    }

    /// Whether the worker has no taps because it waits for the Accessibility permission.
    pub fn waiting_for_trust(&self) -> bool {
        self.state == State::WaitingForTrust
    }

    /// Creates the taps (once). Without the Accessibility permission, Run and Debug modes
    /// ask macOS to prompt (once) and wait for the grant with no tap (see the module
    /// rules); Inspect mode fails. Errors: not trusted (Inspect), or the stale-grant case;
    /// no tap is left behind on error.
    pub fn start(&mut self, tap: &mut impl Tap) -> Result<(), StartError> {
        if !tap.is_trusted() {
            if self.mode == Mode::Inspect {
                return Err(StartError::NotTrusted);
            }
            if !tap.prompt_for_trust() {
                log::error!(
                    "{}; pawl waits for it and creates its event taps once it is granted",
                    StartError::NotTrusted
                );
                self.state = State::WaitingForTrust;
                return Ok(());
            }
        }
        self.create_taps(tap)
    }

    /// Invalidates the taps and forgets every gesture in progress (SIGTERM, SIGINT).
    pub fn stop(&mut self, tap: &mut impl Tap) {
        self.cancel(tap);
        tap.invalidate_all();
        self.movement_enabled = false;
        self.state = State::Idle;
    }

    /// The tap callback: decides what `event` (of type `ty`, delivered to tap `kind`)
    /// becomes. Modifies `event` in place when its scroll is transformed.
    pub fn on_event(
        &mut self,
        tap: &mut impl Tap,
        kind: TapKind,
        ty: EventType,
        event: &mut impl TapEvent,
    ) -> Disposition {
        if ty == EventType::TAP_DISABLED_BY_TIMEOUT || ty == EventType::TAP_DISABLED_BY_USER_INPUT {
            self.on_tap_disabled(tap, kind, ty);
            return Disposition::Pass;
        }
        if self.state != State::Active {
            return Disposition::Pass;
        }
        if event.integer(Field::SOURCE_USER_DATA) == PAWL_MARKER
            || event.integer(Field::SOURCE_STATE_ID) != SOURCE_STATE_HID_SYSTEM
        {
            return Disposition::Pass;
        }
        let now = tap.now();
        self.out.clear();
        let disposition = match ty {
            EventType::OTHER_MOUSE_DOWN
            | EventType::LEFT_MOUSE_DOWN
            | EventType::RIGHT_MOUSE_DOWN => self.on_button(tap, now, event, true),
            EventType::OTHER_MOUSE_UP | EventType::LEFT_MOUSE_UP | EventType::RIGHT_MOUSE_UP => {
                self.on_button(tap, now, event, false)
            }
            EventType::MOUSE_MOVED
            | EventType::OTHER_MOUSE_DRAGGED
            | EventType::LEFT_MOUSE_DRAGGED
            | EventType::RIGHT_MOUSE_DRAGGED => self.on_motion(tap, now, event),
            EventType::SCROLL_WHEEL => self.on_scroll(tap, now, event),
            _ => Disposition::Pass,
        };
        if self.mode != Mode::Run {
            self.observe(ty, event, disposition);
        }
        match self.mode {
            Mode::Inspect => Disposition::Pass,
            Mode::Run | Mode::Debug => disposition,
        }
    }

    /// The run-loop timer fired: runs the glide ticks that are due and posts their scroll
    /// events, then re-arms for the next deadline (or removes the timer).
    pub fn on_timer(&mut self, tap: &mut impl Tap) {
        // The timer is spent: say what comes next even when it is "nothing", so the host
        // drops it.
        self.armed = Some(Micros(u64::MAX));
        if self.state != State::Active {
            self.armed = None;
            tap.arm_timer(None);
            return;
        }
        let now = tap.now();
        for engine in self.senders.engines() {
            if engine.next_deadline().is_some_and(|d| d <= now) && engine.tick(now, &mut self.out) {
                let event = Synthetic::Scroll {
                    wheel: self.out.wheel,
                    hwheel: self.out.hwheel,
                };
                if self.mode != Mode::Inspect {
                    tap.post(&event);
                }
            }
        }
        self.arm_timer(tap);
    }

    /// The system woke: the taps may have been disabled and button-ups lost while asleep.
    /// Re-checks trust; cancels gestures and re-enables the taps meant to be active.
    pub fn on_wake(&mut self, tap: &mut impl Tap) {
        let trusted = tap.can_create_tap();
        match (self.state, trusted) {
            (State::Active, false) => self.tear_down(tap, REVOKED),
            (State::Active, true) => {
                self.cancel(tap);
                self.suspended = false;
                self.enable_meant(tap);
            }
            (State::WaitingForTrust, true) => self.recreate(tap),
            (State::WaitingForTrust | State::Idle, _) => {}
        }
    }

    /// The `com.apple.accessibility.api` distributed notification, or the one-shot
    /// re-check after it or after a tap was disabled by user input. Revoked (no probe tap)
    /// → every tap is torn down; granted again → the taps are created once more; a tap
    /// disabled by user input is enabled again once a probe tap can be created.
    pub fn on_accessibility_changed(&mut self, tap: &mut impl Tap) {
        let trusted = tap.can_create_tap();
        match (self.state, trusted) {
            (State::Active, false) => self.tear_down(tap, REVOKED),
            (State::Active, true) if self.suspended => {
                self.suspended = false;
                self.enable_meant(tap);
            }
            (State::WaitingForTrust, true) => self.recreate(tap),
            _ => {}
        }
    }

    fn create_taps(&mut self, tap: &mut impl Tap) -> Result<(), StartError> {
        let (primary, movement) = match self.mode {
            Mode::Run => (
                TapSpec {
                    mask: masks::PRIMARY,
                    listen_only: false,
                    enabled: true,
                },
                Some(TapSpec {
                    mask: masks::MOVEMENT,
                    listen_only: false,
                    enabled: false,
                }),
            ),
            Mode::Debug | Mode::Inspect => (
                TapSpec {
                    mask: masks::COMPLETE,
                    listen_only: self.mode == Mode::Inspect,
                    enabled: true,
                },
                None,
            ),
        };
        let res = tap
            .create(TapKind::Primary, primary)
            .and_then(|()| match movement {
                Some(spec) => tap.create(TapKind::Movement, spec),
                None => Ok(()),
            });
        match res {
            Ok(()) => {
                self.state = State::Active;
                self.movement_enabled = false;
                Ok(())
            }
            Err(e) => {
                tap.invalidate_all();
                match tap.is_trusted() {
                    true => Err(StartError::StaleGrant(e.kind)),
                    false => Err(StartError::NotTrusted),
                }
            }
        }
    }

    fn recreate(&mut self, tap: &mut impl Tap) {
        match self.create_taps(tap) {
            Ok(()) => log::info!("accessibility permission granted again: taps created"),
            Err(e) => log::error!("{e}"),
        }
    }

    fn on_tap_disabled(&mut self, tap: &mut impl Tap, kind: TapKind, ty: EventType) {
        log::warn!("{kind:?} tap disabled ({})", ty.name());
        if self.state != State::Active {
            return;
        }
        self.cancel(tap);
        if !tap.can_create_tap() {
            self.tear_down(tap, REVOKED);
            return;
        }
        if ty != EventType::TAP_DISABLED_BY_TIMEOUT {
            // Disabled by user input: never re-enabled from here (re-enabling after a
            // revocation freezes input); the re-check 1 s later enables the taps again if a
            // probe tap can still be created.
            log::warn!("not re-enabled now: re-checked in 1 s");
            self.suspended = true;
            tap.schedule_recheck();
            return;
        }
        // After the cancel no gesture is held, so only the primary tap is meant to be on.
        if kind == TapKind::Primary {
            tap.set_enabled(TapKind::Primary, true);
        }
    }

    /// Re-enables the taps meant to be active: the primary tap always; the movement tap
    /// only while a gesture is held (never right after a cancel).
    fn enable_meant(&mut self, tap: &mut impl Tap) {
        tap.set_enabled(TapKind::Primary, true);
        self.gate_movement(tap);
    }

    fn tear_down(&mut self, tap: &mut impl Tap, why: &str) {
        log::error!("{why}");
        self.cancel(tap);
        tap.invalidate_all();
        self.movement_enabled = false;
        self.suspended = false;
        self.state = State::WaitingForTrust;
    }

    /// Cancels every gesture and glide: nothing held fires later. Releases are not posted:
    /// macOS saw every press pawl let through and will see its real release.
    fn cancel(&mut self, tap: &mut impl Tap) {
        for engine in self.senders.engines() {
            engine.cancel(&mut self.out);
        }
        self.out.clear();
        self.anchor = None;
        self.pointer.forget();
        self.gate_movement(tap);
        if self.armed.is_some() {
            self.armed = None;
            tap.arm_timer(None);
        }
    }

    fn on_button(
        &mut self,
        tap: &mut impl Tap,
        now: Micros,
        event: &mut impl TapEvent,
        pressed: bool,
    ) -> Disposition {
        let number = event.integer(Field::MOUSE_BUTTON_NUMBER).clamp(0, 255) as u8;
        let index = match self.route(tap, event) {
            Route::Pass => return Disposition::Pass,
            Route::Identified(i) => i,
            Route::Fallback => Senders::FALLBACK,
        };
        let frame = FrameIn {
            time: now,
            buttons: buttons(&[(number, pressed)]),
            ..FrameIn::default()
        };
        let verdict = self.senders.engine(index).frame(&frame, &mut self.out);
        let button = Button(number);
        let disposition = match verdict {
            Verdict::Forward => Disposition::Pass,
            Verdict::Rewrite if self.out.buttons == frame.buttons => Disposition::Pass,
            // macOS saw this button go down: let it see it go up.
            Verdict::Rewrite
                if !pressed && self.out.buttons.is_empty() && !self.swallowed.contains(button) =>
            {
                Disposition::Pass
            }
            Verdict::Rewrite => {
                if self.mode != Mode::Inspect {
                    for change in self.out.buttons.as_slice() {
                        tap.post(&Synthetic::MouseButton {
                            button: change.button.0,
                            pressed: change.pressed,
                        });
                    }
                }
                Disposition::Drop
            }
        };
        self.swallowed
            .set(button, pressed && disposition == Disposition::Drop);
        self.perform(tap, verdict);
        self.anchor = match self.senders.holding_gesture() {
            Some(_) => self.anchor.or(Some(event.location())),
            None => None,
        };
        self.gate_movement(tap);
        disposition
    }

    fn on_motion(
        &mut self,
        tap: &mut impl Tap,
        now: Micros,
        event: &mut impl TapEvent,
    ) -> Disposition {
        let Some(index) = self.senders.holding_gesture() else {
            return Disposition::Pass;
        };
        let frame = FrameIn {
            time: now,
            dx: clamp_i32(event.integer(Field::MOUSE_DELTA_X)),
            dy: clamp_i32(event.integer(Field::MOUSE_DELTA_Y)),
            ..FrameIn::default()
        };
        let verdict = self.senders.engine(index).frame(&frame, &mut self.out);
        let disposition = match verdict {
            Verdict::Rewrite if self.out.dx == 0 && self.out.dy == 0 => Disposition::Drop,
            Verdict::Forward | Verdict::Rewrite => Disposition::Pass,
        };
        if let (Disposition::Drop, Some((x, y)), false) =
            (disposition, self.anchor, self.mode == Mode::Inspect)
        {
            tap.warp(x, y);
        }
        self.perform(tap, verdict);
        disposition
    }

    fn on_scroll(
        &mut self,
        tap: &mut impl Tap,
        now: Micros,
        event: &mut impl TapEvent,
    ) -> Disposition {
        let index = match self.route(tap, event) {
            Route::Pass => return Disposition::Pass,
            Route::Identified(_) if scroll::has_phase(event) => return Disposition::Pass,
            Route::Fallback if scroll::is_continuous(event) => return Disposition::Pass,
            Route::Identified(i) => i,
            Route::Fallback => Senders::FALLBACK,
        };
        let (wheel, hwheel) = scroll::read(event);
        let frame = FrameIn {
            time: now,
            wheel,
            hwheel,
            ..FrameIn::default()
        };
        let engine = self.senders.engine(index);
        self.pointer.on_scroll(
            &self.config,
            engine,
            index,
            now,
            Some(event.location()),
            tap,
        );
        let verdict = engine.frame(&frame, &mut self.out);
        let disposition = match verdict {
            Verdict::Forward => Disposition::Pass,
            Verdict::Rewrite if self.out.wheel.v120 == 0 && self.out.hwheel.v120 == 0 => {
                Disposition::Drop
            }
            Verdict::Rewrite => {
                if self.mode != Mode::Inspect {
                    scroll::write(event, self.out.wheel, self.out.hwheel);
                }
                Disposition::Pass
            }
        };
        self.perform(tap, verdict);
        self.arm_timer(tap);
        disposition
    }

    fn route(&mut self, tap: &mut impl Tap, event: &impl TapEvent) -> Route {
        let id = event.integer(Field::SENDER_REGISTRY_ID) as u64;
        self.senders.route(&self.config, id, |id| tap.sender(id))
    }

    fn perform(&mut self, tap: &mut impl Tap, verdict: Verdict) {
        if verdict == Verdict::Forward || self.mode == Mode::Inspect {
            return;
        }
        for &action in self.out.actions.as_slice() {
            if action != Action::PassThrough {
                self.performer.perform(tap, action);
            }
        }
    }

    /// Enables the movement tap exactly while a gesture is held (Run mode).
    fn gate_movement(&mut self, tap: &mut impl Tap) {
        if self.mode != Mode::Run || self.state != State::Active {
            return;
        }
        let held = self.senders.holding_gesture().is_some();
        if held != self.movement_enabled {
            tap.set_enabled(TapKind::Movement, held);
            self.movement_enabled = held;
        }
    }

    /// Arms the timer for the earliest engine deadline, only when it changed.
    fn arm_timer(&mut self, tap: &mut impl Tap) {
        if self.mode == Mode::Inspect {
            return;
        }
        let deadline = self
            .senders
            .engines()
            .iter()
            .filter_map(|e| e.next_deadline())
            .min();
        if deadline != self.armed {
            self.armed = deadline;
            tap.arm_timer(deadline);
        }
    }

    /// Logs one decision (debug and inspect modes only: nothing is formatted in Run mode).
    fn observe(&self, ty: EventType, event: &impl TapEvent, disposition: Disposition) {
        let sender = event.integer(Field::SENDER_REGISTRY_ID);
        let detail = match ty {
            EventType::SCROLL_WHEEL => {
                let (w, h) = scroll::read(event);
                format!("wheel {} hwheel {} (v120)", w.v120, h.v120)
            }
            EventType::MOUSE_MOVED
            | EventType::OTHER_MOUSE_DRAGGED
            | EventType::LEFT_MOUSE_DRAGGED
            | EventType::RIGHT_MOUSE_DRAGGED => format!(
                "dx {} dy {}",
                event.integer(Field::MOUSE_DELTA_X),
                event.integer(Field::MOUSE_DELTA_Y)
            ),
            _ => format!("button {}", event.integer(Field::MOUSE_BUTTON_NUMBER)),
        };
        let actions: Vec<&str> = self
            .out
            .actions
            .as_slice()
            .iter()
            .map(|a| a.name().unwrap_or("key/command"))
            .collect();
        log::info!(
            target: "pawl::decision",
            "{} sender {sender:#x} ({}) {detail} -> {}{}",
            ty.name(),
            self.senders.describe(sender as u64),
            match disposition {
                Disposition::Pass => "pass",
                Disposition::Drop => "suppress",
            },
            if actions.is_empty() {
                String::new()
            } else {
                format!(", actions {}", actions.join(" "))
            }
        );
    }
}

/// Why the taps are torn down when no tap can be created.
const REVOKED: &str = "accessibility permission revoked (macOS refuses a new event tap): event \
                       taps removed (an active tap without trust freezes input); waiting for \
                       the permission to be granted again";

fn clamp_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}
