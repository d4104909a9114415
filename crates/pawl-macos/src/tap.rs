//! The seam between the worker's decisions and the operating system: the [`Tap`] trait
//! (create, enable/disable, invalidate taps; post events; the few other OS services the
//! worker needs) and the [`TapEvent`] trait (read and write the fields of the event a tap
//! callback holds).
//!
//! The macOS host (`crate::sys`, only on macOS) implements both with CGEventTap and
//! CGEvent; the tests implement them with a fake that records every call, so all decision
//! code runs and is tested on Linux.

use pawl_engine::units::Micros;
use pawl_engine::{DeviceInfo, WheelOut};

use crate::cg::Field;
use crate::pointer::PointerApp;

/// Which of the worker's taps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TapKind {
    /// Active, head insert: other-button down/up and the wheel (in debug and inspect
    /// modes: every pointer event).
    Primary,
    /// Active, head insert: motion; created disabled, enabled only while the gesture
    /// button is held. Not created in debug and inspect modes.
    Movement,
}

/// How to create a tap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TapSpec {
    /// `CGEventMask`: which event types (see [`crate::cg::masks`]).
    pub mask: u64,
    /// `kCGEventTapOptionListenOnly` instead of `kCGEventTapOptionDefault` (inspector:
    /// events are observed, never changed).
    pub listen_only: bool,
    /// Enabled at creation.
    pub enabled: bool,
}

/// An event pawl posts (always marked with [`crate::cg::PAWL_MARKER`] in
/// `kCGEventSourceUserData`, from a `kCGEventSourceStateHIDSystemState` source, at
/// `kCGHIDEventTap`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Synthetic {
    /// A button transition at the current pointer location (`kCGEventOtherMouseDown/Up`,
    /// left/right for buttons 0/1).
    MouseButton {
        /// 0-based button number.
        button: u8,
        /// Down or up.
        pressed: bool,
    },
    /// A line-based scroll event (glide inertia), fields written in the same order as a
    /// modified event ([`crate::scroll::write`]).
    Scroll {
        /// Vertical output, v120, positive = up.
        wheel: WheelOut,
        /// Horizontal output, v120, positive = right.
        hwheel: WheelOut,
    },
    /// A key transition with the given modifier flags.
    Key {
        /// macOS virtual key code (`kVK_*`).
        code: u16,
        /// Down or up.
        down: bool,
        /// `CGEventFlags` the event carries.
        flags: u64,
    },
    /// A modifier key transition (`kCGEventFlagsChanged`): `flags` is the modifier state
    /// after it.
    FlagsChanged {
        /// The modifier's virtual key code (`kVK_Control`, …).
        code: u16,
        /// `CGEventFlags` after the change.
        flags: u64,
    },
}

/// Why a tap could not be created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapCreateError {
    /// Which tap.
    pub kind: TapKind,
}

/// The operating system as the worker sees it. Every method is called on the worker's
/// run-loop thread, from inside a tap callback, a timer or a notification. The window
/// server's answer to which application is under the pointer comes with it
/// ([`PointerApp`]).
pub trait Tap: PointerApp {
    /// Creates `kind` (once; `CGEventTapCreate` at `kCGHIDEventTap`, head insert) and adds
    /// it to the worker's run loop. Errors when CoreGraphics returns no tap (no
    /// accessibility permission, or a stale grant).
    fn create(&mut self, kind: TapKind, spec: TapSpec) -> Result<(), TapCreateError>;
    /// `CGEventTapEnable`; synchronous: the next event already sees the new state.
    fn set_enabled(&mut self, kind: TapKind, enabled: bool);
    /// Invalidates every tap and removes it from the run loop (`CFMachPortInvalidate`).
    fn invalidate_all(&mut self);
    /// `AXIsProcessTrusted()`: what System Settings says. It may keep answering yes after
    /// the grant is revoked, so the worker decides with [`Tap::can_create_tap`] and uses
    /// this only to word its errors (the stale-grant case).
    fn is_trusted(&mut self) -> bool;
    /// Whether an active event tap can be created now: a probe tap for an event type a
    /// mouse never sends, created and invalidated at once (never added to a run loop).
    fn can_create_tap(&mut self) -> bool;
    /// `AXIsProcessTrustedWithOptions` with `kAXTrustedCheckOptionPrompt`: macOS shows its
    /// Accessibility prompt (at most once per binary). Returns whether trusted now.
    fn prompt_for_trust(&mut self) -> bool;
    /// Arms the one-shot accessibility re-check (1 s from now), which calls
    /// [`crate::worker::Worker::on_accessibility_changed`]; replaces an armed one.
    fn schedule_recheck(&mut self);
    /// The modifier flags the user physically holds now (`CGEventSourceFlagsState` of
    /// `kCGEventSourceStateHIDSystemState`), `CGEventFlags` bits.
    fn held_flags(&mut self) -> u64;
    /// Moves the cursor to `(x, y)` (global display coordinates, px) without generating
    /// an event (`CGWarpMouseCursorPosition`).
    fn warp(&mut self, x: f64, y: f64);
    /// Posts `event`.
    fn post(&mut self, event: &Synthetic);
    /// The worker's monotonic clock.
    fn now(&mut self) -> Micros;
    /// Arms the one-shot run-loop timer for `deadline`, or removes it (`None`): there is
    /// no timer while nothing is gliding.
    fn arm_timer(&mut self, deadline: Option<Micros>);
    /// The device behind a sender registry ID (field 87), from an IORegistry walk to
    /// VendorID/ProductID; `None` when it cannot be found.
    fn sender(&mut self, registry_id: u64) -> Option<DeviceInfo>;
    /// Starts `argv` detached (`osascript`, `[actions.commands]`), SIGINT and SIGTERM back
    /// at their default action in the child; never waits for it. When it exits, the host
    /// reaps it and hands its status (and osascript's stderr) to
    /// [`crate::actions::ChildReports`].
    fn spawn(&mut self, argv: &[String]);
}

/// The event a tap callback holds. Integer fields are `CGEventGetIntegerValueField`,
/// double fields `CGEventGetDoubleValueField` (16.16 fixed-point fields as doubles).
pub trait TapEvent {
    /// An integer field.
    fn integer(&self, field: Field) -> i64;
    /// Sets an integer field.
    fn set_integer(&mut self, field: Field, value: i64);
    /// A double field.
    fn double(&self, field: Field) -> f64;
    /// Sets a double field.
    fn set_double(&mut self, field: Field, value: f64);
    /// Where the event happened (`CGEventGetLocation`): global display coordinates, px.
    fn location(&self) -> (f64, f64);
}

/// What the tap callback returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Return the event (possibly modified in place).
    Pass,
    /// Return NULL: the event is suppressed.
    Drop,
}
