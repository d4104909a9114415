//! The real [`Tap`] on macOS: CGEventTaps on the calling thread's CFRunLoop, events posted
//! from a HIDSystemState source, a one-shot CFRunLoopTimer while gliding, IOKit and
//! ApplicationServices for the rest; and [`start`] / [`Daemon::run`], the worker's main loop.
//!
//! The thread that calls [`start`] and [`Daemon::run`] is the worker's dedicated thread (in `pawl run`, the main
//! thread): it blocks in `CFRunLoopRun` and wakes only for a tap event, the glide timer,
//! SIGTERM/SIGINT, a wake, an accessibility change or (with `[[app]]` tables) an
//! application becoming frontmost.
//!
//! Type-checked for `aarch64-apple-darwin` and `x86_64-apple-darwin`; never run in this
//! project's CI.

mod cf;
pub mod hid;
mod iokit;
mod windows;
mod workspace;

use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

use objc2_core_foundation::CGPoint;
use objc2_core_foundation::{
    CFAbsoluteTimeGetCurrent, CFFileDescriptor, CFFileDescriptorContext, CFMachPort,
    CFNotificationCenter, CFNotificationName, CFNotificationSuspensionBehavior, CFOptionFlags,
    CFRetained, CFRunLoop, CFRunLoopSource, CFRunLoopTimer, CFRunLoopTimerContext, CFString,
    kCFFileDescriptorReadCallBack, kCFRunLoopCommonModes, kCFRunLoopDefaultMode,
};
use objc2_core_graphics::{
    CGEvent, CGEventField, CGEventFlags, CGEventSource, CGEventSourceStateID, CGEventTapLocation,
    CGEventTapOptions, CGEventTapPlacement, CGEventTapProxy, CGEventType, CGMouseButton,
    CGScrollEventUnit, CGWarpMouseCursorPosition,
};
use pawl_engine::config::ActionBackend;
use pawl_engine::units::Micros;
use pawl_engine::{Config, DeviceInfo};

use crate::actions::{ChildExit, ChildReports, HotkeyBinding, Hotkeys, Performer};
use crate::cg::{EventType, Field, PAWL_MARKER};
use crate::devices::{DeviceReport, HidDevice, Kind};
use crate::focus::{Change, FocusSummary};
use crate::hidpp::HidppMouse;
use crate::permissions::Permissions;
use crate::pointer::{AppAt, PointerApp};
use crate::scroll;
use crate::tap::{Disposition, Synthetic, Tap, TapCreateError, TapEvent, TapKind, TapSpec};
use crate::worker::{Mode, Worker};

/// Why [`start`] or [`Daemon::run`] failed.
#[derive(Debug)]
pub struct RunError(String);

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunError {}

/// What macOS grants pawl; `probe_tap` also tries to create an event tap (tells the
/// stale-grant case apart). For `pawl status` and `pawl devices`.
pub fn permissions(probe_tap: bool) -> Permissions {
    cf::permissions(probe_tap)
}

/// The IOHIDManager device check for `pawl devices`.
pub fn device_report() -> DeviceReport {
    DeviceReport::new(iokit::pointer_devices())
}

/// A started worker: its taps exist on the calling thread's run loop. Not `Send`: it
/// lives and runs on the thread that started it (in `pawl run`, the main thread, where
/// distributed notifications are delivered). Dropping it invalidates every tap and
/// removes every registration.
#[derive(Debug)]
pub struct Daemon {
    /// The Context every callback receives (owned; freed on drop, after every
    /// registration that refers to it is gone).
    context: NonNull<Context>,
    run_loop: CFRetained<CFRunLoop>,
    signals: Option<Signals>,
    center: Option<CFRetained<CFNotificationCenter>>,
    power: Option<iokit::PowerNotifications>,
    /// The frontmost-application observer, while the config has `[[app]]` tables.
    workspace: Option<workspace::Observer>,
    devices: Vec<HidDevice>,
}

/// The window server's symbolic hotkeys, read and bound through `cf`.
struct WindowServerHotkeys;

impl Hotkeys for WindowServerHotkeys {
    fn read(&mut self, id: u32) -> Option<HotkeyBinding> {
        cf::read_hotkey(id)
    }

    fn bind(&mut self, id: u32, binding: HotkeyBinding) -> Result<(), String> {
        cf::bind_hotkey(id, binding)
    }
}

/// Starts the worker on the calling thread: prepares the actions, catches SIGTERM and
/// SIGINT, creates the taps (or, without the Accessibility permission, prompts once and
/// waits for it), listens for wake and accessibility changes. Errors: a chord macOS cannot
/// post, no accessibility permission in inspect mode, the stale-grant case (each with the
/// permission report).
pub fn start(config: &Config, mode: Mode) -> Result<Daemon, RunError> {
    let performer = if config.actions.backend == ActionBackend::CgEvent {
        Performer::new(config, WindowServerHotkeys)
    } else {
        Performer::new(config, |_| None)
    }
    .map_err(RunError)?;
    let hid_performer = performer.clone();
    let run_loop = CFRunLoop::current().ok_or_else(|| RunError("no run loop".into()))?;
    let source = CGEventSource::new(CGEventSourceStateID::HIDSystemState);
    CGEventSource::set_user_data(source.as_deref(), PAWL_MARKER);
    let context = Box::new(Context {
        worker: Worker::new(config.clone(), mode, performer),
        host: Host {
            run_loop: run_loop.clone(),
            taps: [None, None],
            source,
            timer: None,
            recheck: None,
            children: Vec::new(),
            reports: ChildReports::default(),
            kqueue: -1,
            context: std::ptr::null_mut(),
        },
        hid: None,
        failed: false,
        stopping: false,
        focus_changed: false,
    });
    let mut daemon = Daemon {
        context: NonNull::from(Box::leak(context)),
        run_loop,
        signals: None,
        center: None,
        power: None,
        workspace: None,
        devices: Vec::new(),
    };
    let info = daemon.context.as_ptr();
    // SAFETY: the Context is owned by `daemon`; nothing else refers to it yet.
    let ctx = unsafe { &mut *info };
    ctx.host.context = info.cast();
    let signals = Signals::install(&daemon.run_loop, info.cast()).map_err(RunError)?;
    ctx.host.kqueue = signals.fd.native_descriptor();
    daemon.signals = Some(signals);
    if let Err(e) = ctx.worker.start(&mut ctx.host) {
        let report = cf::permissions(false);
        return Err(RunError(format!("{e}\n{report}")));
    }
    daemon.center = CFNotificationCenter::distributed_center();
    if let Some(center) = &daemon.center {
        let name = CFString::from_static_str("com.apple.accessibility.api");
        // SAFETY: the Context outlives the observer, removed in drop.
        unsafe {
            center.add_observer(
                info as *const c_void,
                Some(accessibility_callback),
                Some(&name),
                std::ptr::null(),
                CFNotificationSuspensionBehavior::DeliverImmediately,
            );
        }
    }
    // SAFETY: the Context outlives the registration, dropped in drop.
    daemon.power =
        unsafe { iokit::PowerNotifications::register(&daemon.run_loop, on_wake, info.cast()) };
    if daemon.power.is_none() {
        log::warn!("no system power notifications: taps are not re-checked after wake");
    }
    // HID++ diverts controls: never while inspecting, which changes nothing.
    if mode != Mode::Inspect {
        // SAFETY: the Context outlives the Hid (shut down and dropped in drop).
        ctx.hid = unsafe { hid::Hid::start(config, hid_performer, &daemon.run_loop, info.cast()) };
    }
    if ctx.worker.wants_focus() {
        let ctx_ptr = info;
        let observer = workspace::Observer::install(move |bundle| {
            // SAFETY: the observer is removed in drop, before the Context is freed; it
            // runs on the main thread, the worker's (checked by install).
            unsafe { with_context(ctx_ptr.cast(), (), |ctx| ctx.on_app_activated(bundle)) }
        });
        match observer {
            Ok(o) => {
                daemon.workspace = Some(o);
                let bundle = workspace::frontmost();
                log::info!(
                    "focus: NSWorkspace, frontmost application {}",
                    bundle.as_deref().unwrap_or("unknown")
                );
                ctx.worker
                    .on_app_activated(&mut ctx.host, bundle.as_deref());
                if let Some(hid) = ctx.hid.as_mut() {
                    hid.set_app(ctx.worker.app_key(), &mut ctx.host);
                }
            }
            Err(why) => ctx.worker.focus_unavailable(why),
        }
    }
    daemon.devices = iokit::pointer_devices()
        .into_iter()
        .filter(|d| {
            config.decide(&d.info()).handle
                || matches!(d.kind(), Kind::MxMaster(_) | Kind::Receiver(_))
        })
        .collect();
    Ok(daemon)
}

impl Daemon {
    /// The connected pointer devices whose events the worker changes (MX Master family
    /// members, receivers, devices the config handles), as found at start.
    pub fn devices(&self) -> &[HidDevice] {
        &self.devices
    }

    /// The focus backend, the frontmost application and the profile in force.
    pub fn focus(&self) -> FocusSummary {
        // SAFETY: the run loop is not running here: no callback holds the Context.
        unsafe { self.context.as_ref() }.worker.focus()
    }

    /// Blocks in `CFRunLoopRun` until SIGTERM or SIGINT, then invalidates the taps.
    /// `changed` receives the HID++ mice set up, with their batteries, and the focus part
    /// of `pawl status` when either changes (the run loop is stopped for it and run again
    /// afterwards).
    /// Errors: a callback panicked (the run loop was stopped for it): the process must
    /// exit non-zero, so the LaunchAgent (`KeepAlive` unless successful) starts it again.
    pub fn run(
        self,
        changed: &mut dyn FnMut(&[HidppMouse], &FocusSummary),
    ) -> Result<(), RunError> {
        log::info!("pawl worker running");
        let mut mice = Vec::new();
        loop {
            CFRunLoop::run();
            // SAFETY: the run loop has returned: no callback holds the Context.
            let ctx = unsafe { &mut *self.context.as_ptr() };
            if ctx.failed || ctx.stopping {
                break;
            }
            let now = ctx.hid.as_mut().and_then(|h| h.mice.take());
            let focus = std::mem::take(&mut ctx.focus_changed);
            if now.is_none() && !focus {
                break;
            }
            if let Some(now) = now {
                mice = now;
            }
            changed(&mice, &ctx.worker.focus());
        }
        log::info!("pawl worker stopping");
        // SAFETY: the run loop has returned: no callback holds the Context.
        if unsafe { self.context.as_ref() }.failed {
            return Err(RunError(
                "internal error in the worker (logged above): stopped, exiting non-zero".into(),
            ));
        }
        Ok(())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let info = self.context.as_ptr();
        {
            // SAFETY: the run loop is not running (run returned or never ran): no callback
            // holds the Context.
            let ctx = unsafe { &mut *info };
            if let Some(hid) = ctx.hid.take() {
                hid.shutdown(&mut ctx.host);
            }
            ctx.worker.stop(&mut ctx.host);
            ctx.host.arm_timer(None);
            ctx.host.cancel_recheck();
            ctx.host.reap();
        }
        self.workspace = None;
        if let Some(center) = self.center.take() {
            // SAFETY: removes the observer added in start.
            unsafe { center.remove_every_observer(info as *const c_void) };
        }
        self.power = None;
        self.signals = None;
        // SAFETY: leaked from a Box in start; every registration referring to it is gone.
        drop(unsafe { Box::from_raw(info) });
    }
}

/// What every callback receives as its info pointer.
#[derive(Debug)]
struct Context {
    worker: Worker,
    host: Host,
    /// HID++ (`[hidpp] enabled`): the MX Master's gesture button over IOHIDDevice.
    hid: Option<hid::Hid>,
    /// A callback panicked: [`Daemon::run`] returns an error.
    failed: bool,
    /// SIGTERM or SIGINT arrived: [`Daemon::run`] returns.
    stopping: bool,
    /// The frontmost application or its profile changed since [`Daemon::run`] last
    /// reported it.
    focus_changed: bool,
}

impl Context {
    /// An application became frontmost (`bundle`: its bundle identifier): the taps' and
    /// HID++'s engines switch profile when it selects another one, and the run loop stops
    /// once so [`Daemon::run`] records the new focus for `pawl status`.
    fn on_app_activated(&mut self, bundle: Option<&str>) {
        let change = self.worker.on_app_activated(&mut self.host, bundle);
        if change == Change::Profile
            && let Some(hid) = self.hid.as_mut()
        {
            hid.set_app(self.worker.app_key(), &mut self.host);
        }
        if change != Change::Same && !self.focus_changed {
            self.focus_changed = true;
            self.host.run_loop.stop();
        }
    }
}

/// One created tap.
#[derive(Debug)]
struct CreatedTap {
    port: CFRetained<CFMachPort>,
    source: CFRetained<CFRunLoopSource>,
}

/// The real OS behind [`Tap`].
#[derive(Debug)]
struct Host {
    run_loop: CFRetained<CFRunLoop>,
    taps: [Option<CreatedTap>; 2],
    source: Option<CFRetained<CGEventSource>>,
    timer: Option<CFRetained<CFRunLoopTimer>>,
    /// The one-shot accessibility re-check (the notification can arrive before the new
    /// trust value is readable).
    recheck: Option<CFRetained<CFRunLoopTimer>>,
    /// Spawned actions still running, with their program (`argv[0]`).
    children: Vec<(String, std::process::Child)>,
    /// What was logged about finished children.
    reports: ChildReports,
    /// The signal kqueue (owned by [`Signals`]), which also reports children's exits.
    kqueue: i32,
    /// The Context this Host is part of, passed to taps and timers.
    context: *mut c_void,
}

fn slot(kind: TapKind) -> usize {
    match kind {
        TapKind::Primary => 0,
        TapKind::Movement => 1,
    }
}

/// A timer that never repeats on its own: pawl moves its fire date or invalidates it.
const NEVER_REPEATS_S: f64 = 1.0e9;

impl Host {
    fn new_timer(
        &self,
        seconds_from_now: f64,
        callout: unsafe extern "C-unwind" fn(*mut CFRunLoopTimer, *mut c_void),
    ) -> Option<CFRetained<CFRunLoopTimer>> {
        let mut ctx = CFRunLoopTimerContext {
            version: 0,
            info: self.context,
            retain: None,
            release: None,
            copyDescription: None,
        };
        // SAFETY: the context is copied by CF; `info` outlives the timer (invalidated
        // before the Context is dropped).
        let timer = unsafe {
            CFRunLoopTimer::new(
                None,
                CFAbsoluteTimeGetCurrent() + seconds_from_now,
                NEVER_REPEATS_S,
                0,
                0,
                Some(callout),
                &mut ctx,
            )
        }?;
        // SAFETY: the default mode is a valid static.
        self.run_loop
            .add_timer(Some(&timer), unsafe { kCFRunLoopDefaultMode });
        Some(timer)
    }

    fn schedule_recheck(&mut self) {
        self.cancel_recheck();
        self.recheck = self.new_timer(1.0, recheck_callback);
    }

    fn cancel_recheck(&mut self) {
        if let Some(t) = self.recheck.take() {
            t.invalidate();
        }
    }

    /// Reaps finished children (spawned actions) without waiting; logs a failure once per
    /// kind ([`ChildReports`]) from the exit status and the start of stderr.
    fn reap(&mut self) {
        use std::io::Read;
        use std::os::unix::process::ExitStatusExt;
        let reports = &mut self.reports;
        self.children.retain_mut(|(program, c)| match c.try_wait() {
            Ok(None) => true,
            Ok(Some(status)) => {
                let mut stderr = Vec::new();
                if let Some(pipe) = c.stderr.take() {
                    // The child is gone: the pipe holds what it wrote, then end of file.
                    let _ = pipe
                        .take(ChildReports::STDERR_LIMIT as u64)
                        .read_to_end(&mut stderr);
                }
                let exit = ChildExit {
                    program,
                    code: status.code(),
                    signal: status.signal(),
                    stderr: &stderr,
                };
                if let Some(line) = reports.on_exit(&exit) {
                    log::error!("{line}");
                }
                false
            }
            Err(_) => false,
        });
    }

    fn new_event(
        &self,
        f: impl FnOnce(Option<&CGEventSource>) -> Option<CFRetained<CGEvent>>,
    ) -> Option<CFRetained<CGEvent>> {
        let event = f(self.source.as_deref())?;
        CGEvent::set_integer_value_field(
            Some(&event),
            CGEventField(Field::SOURCE_USER_DATA.0),
            PAWL_MARKER,
        );
        Some(event)
    }
}

impl PointerApp for Host {
    fn app_at(&mut self, x: f64, y: f64) -> AppAt {
        windows::app_at(x, y)
    }

    fn cursor(&mut self) -> (f64, f64) {
        let here = CGEvent::location(CGEvent::new(None).as_deref());
        (here.x, here.y)
    }
}

impl Tap for Host {
    fn create(&mut self, kind: TapKind, spec: TapSpec) -> Result<(), TapCreateError> {
        let callback = match kind {
            TapKind::Primary => primary_callback,
            TapKind::Movement => movement_callback,
        };
        let options = if spec.listen_only {
            CGEventTapOptions::ListenOnly
        } else {
            CGEventTapOptions::Default
        };
        // SAFETY: the callbacks match CGEventTapCallBack; `context` outlives the tap (every
        // tap is invalidated before the Context is dropped).
        let port = unsafe {
            CGEvent::tap_create(
                CGEventTapLocation::HIDEventTap,
                CGEventTapPlacement::HeadInsertEventTap,
                options,
                spec.mask,
                Some(callback),
                self.context,
            )
        }
        .ok_or(TapCreateError { kind })?;
        let source =
            CFMachPort::new_run_loop_source(None, Some(&port), 0).ok_or(TapCreateError { kind })?;
        // SAFETY: the common modes are a valid static.
        self.run_loop
            .add_source(Some(&source), unsafe { kCFRunLoopCommonModes });
        CGEvent::tap_enable(&port, spec.enabled);
        self.taps[slot(kind)] = Some(CreatedTap { port, source });
        Ok(())
    }

    fn set_enabled(&mut self, kind: TapKind, enabled: bool) {
        if let Some(tap) = &self.taps[slot(kind)] {
            CGEvent::tap_enable(&tap.port, enabled);
        }
    }

    fn invalidate_all(&mut self) {
        for tap in self.taps.iter_mut().filter_map(Option::take) {
            CGEvent::tap_enable(&tap.port, false);
            // SAFETY: the common modes are a valid static.
            self.run_loop
                .remove_source(Some(&tap.source), unsafe { kCFRunLoopCommonModes });
            tap.source.invalidate();
            tap.port.invalidate();
        }
    }

    fn is_trusted(&mut self) -> bool {
        cf::is_trusted()
    }

    fn can_create_tap(&mut self) -> bool {
        cf::probe()
    }

    fn prompt_for_trust(&mut self) -> bool {
        cf::prompt_for_trust()
    }

    fn schedule_recheck(&mut self) {
        Host::schedule_recheck(self);
    }

    fn held_flags(&mut self) -> u64 {
        CGEventSource::flags_state(CGEventSourceStateID::HIDSystemState).0
    }

    fn warp(&mut self, x: f64, y: f64) {
        let _ = CGWarpMouseCursorPosition(CGPoint { x, y });
    }

    fn post(&mut self, event: &Synthetic) {
        let created = match *event {
            Synthetic::MouseButton { button, pressed } => {
                let ty = match (button, pressed) {
                    (0, true) => CGEventType::LeftMouseDown,
                    (0, false) => CGEventType::LeftMouseUp,
                    (1, true) => CGEventType::RightMouseDown,
                    (1, false) => CGEventType::RightMouseUp,
                    (_, true) => CGEventType::OtherMouseDown,
                    (_, false) => CGEventType::OtherMouseUp,
                };
                let here = CGEvent::location(CGEvent::new(None).as_deref());
                self.new_event(|src| {
                    let e =
                        CGEvent::new_mouse_event(src, ty, here, CGMouseButton(u32::from(button)))?;
                    CGEvent::set_integer_value_field(
                        Some(&e),
                        CGEventField(Field::MOUSE_BUTTON_NUMBER.0),
                        i64::from(button),
                    );
                    Some(e)
                })
            }
            Synthetic::Scroll { wheel, hwheel } => self.new_event(|src| {
                let e = new_scroll_wheel_event(src)?;
                scroll::write(&mut CgEvent(&e), wheel, hwheel);
                Some(e)
            }),
            Synthetic::Key { code, down, flags } => self.new_event(|src| {
                let e = CGEvent::new_keyboard_event(src, code, down)?;
                CGEvent::set_flags(Some(&e), CGEventFlags(flags));
                Some(e)
            }),
            Synthetic::FlagsChanged { code, flags } => self.new_event(|src| {
                let e = CGEvent::new_keyboard_event(src, code, true)?;
                CGEvent::set_type(Some(&e), CGEventType::FlagsChanged);
                CGEvent::set_flags(Some(&e), CGEventFlags(flags));
                Some(e)
            }),
        };
        match created {
            Some(e) => CGEvent::post(CGEventTapLocation::HIDEventTap, Some(&e)),
            None => log::warn!("could not create {event:?}"),
        }
    }

    fn now(&mut self) -> Micros {
        now()
    }

    fn arm_timer(&mut self, deadline: Option<Micros>) {
        match deadline {
            None => {
                if let Some(t) = self.timer.take() {
                    t.invalidate();
                }
            }
            Some(deadline) => {
                let seconds = deadline.since(now()) as f64 / 1e6;
                match &self.timer {
                    Some(t) if t.is_valid() => {
                        t.set_next_fire_date(CFAbsoluteTimeGetCurrent() + seconds)
                    }
                    _ => self.timer = self.new_timer(seconds, glide_callback),
                }
            }
        }
    }

    fn sender(&mut self, registry_id: u64) -> Option<DeviceInfo> {
        iokit::sender(registry_id)
    }

    fn spawn(&mut self, argv: &[String]) {
        use std::process::{Command, Stdio};
        self.reap();
        let Some((program, args)) = argv.split_first() else {
            return;
        };
        // SIGINT and SIGTERM are caught, not ignored (see `Signals`): `exec` puts them back
        // at their default action in the child. osascript's stderr (one short line) is kept
        // for the report; a command's goes to /dev/null, as on Linux (a pipe nobody reads
        // until it exits would block a chatty one).
        let osascript = program.rsplit('/').next() == Some("osascript");
        match Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(if osascript {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .spawn()
        {
            Ok(child) => {
                let pid = child.id();
                self.children.push((program.clone(), child));
                if !watch_exit(self.kqueue, pid) {
                    // Already gone (or no kqueue): reap now rather than at the next action.
                    self.reap();
                }
            }
            Err(e) => log::error!("cannot start {program}: {e}"),
        }
    }
}

/// Adds a one-shot `EVFILT_PROC`/`NOTE_EXIT` for `pid` to `kqueue`: the signal callback
/// then reaps it. False when it cannot be watched (it already exited, or no kqueue).
fn watch_exit(kqueue: i32, pid: u32) -> bool {
    if kqueue < 0 {
        return false;
    }
    let change = libc::kevent {
        ident: pid as usize,
        filter: libc::EVFILT_PROC,
        flags: libc::EV_ADD | libc::EV_ONESHOT,
        fflags: libc::NOTE_EXIT,
        data: 0,
        udata: std::ptr::null_mut(),
    };
    // SAFETY: one valid change, no event list.
    unsafe {
        libc::kevent(
            kqueue,
            &change,
            1,
            std::ptr::null_mut(),
            0,
            std::ptr::null(),
        ) == 0
    }
}

#[link(name = "CoreGraphics", kind = "framework")]
unsafe extern "C" {
    /// `CGEventCreateScrollWheelEvent` (macOS 10.5; variadic: one `int32_t` per wheel).
    /// Used instead of `CGEventCreateScrollWheelEvent2` (10.13), newer than the x86_64
    /// deployment target (10.12).
    fn CGEventCreateScrollWheelEvent(
        source: *const CGEventSource,
        units: CGScrollEventUnit,
        wheel_count: u32,
        wheel1: i32,
        ...
    ) -> *mut CGEvent;
}

/// A line-based scroll event with two wheels, both 0 (pawl writes the fields after).
fn new_scroll_wheel_event(source: Option<&CGEventSource>) -> Option<CFRetained<CGEvent>> {
    let source = source.map_or(std::ptr::null(), |s| s as *const CGEventSource);
    // SAFETY: a valid (or null) source, two wheels as the count says; the result is a
    // created (+1) reference or null.
    let e = unsafe { CGEventCreateScrollWheelEvent(source, CGScrollEventUnit::Line, 2, 0, 0i32) };
    // SAFETY: a +1 reference from a Create function.
    NonNull::new(e).map(|e| unsafe { CFRetained::from_raw(e) })
}

/// The monotonic clock: `CLOCK_UPTIME_RAW` (mach_absolute_time in ns). Event times are
/// taken from it in the callback rather than from `CGEventGetTimestamp`, whose unit is
/// nanoseconds on Intel but mach ticks on Apple silicon.
fn now() -> Micros {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_UPTIME_RAW, &mut ts) };
    Micros(ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000)
}

/// A CGEvent as a [`TapEvent`].
struct CgEvent<'a>(&'a CGEvent);

impl TapEvent for CgEvent<'_> {
    fn integer(&self, field: Field) -> i64 {
        CGEvent::integer_value_field(Some(self.0), CGEventField(field.0))
    }

    fn set_integer(&mut self, field: Field, value: i64) {
        CGEvent::set_integer_value_field(Some(self.0), CGEventField(field.0), value);
    }

    fn double(&self, field: Field) -> f64 {
        CGEvent::double_value_field(Some(self.0), CGEventField(field.0))
    }

    fn set_double(&mut self, field: Field, value: f64) {
        CGEvent::set_double_value_field(Some(self.0), CGEventField(field.0), value);
    }

    fn location(&self) -> (f64, f64) {
        let p = CGEvent::location(Some(self.0));
        (p.x, p.y)
    }
}

/// Runs `f` on the Context behind `info`; a panic is caught (it must not unwind into
/// CoreGraphics) and stops the worker, which then exits non-zero ([`Daemon::run`]).
///
/// # Safety
/// `info` is the Context pointer registered with the callback, on the run-loop thread.
unsafe fn with_context<R>(info: *mut c_void, fallback: R, f: impl FnOnce(&mut Context) -> R) -> R {
    // SAFETY: the caller's promise; callbacks never nest.
    let ctx = unsafe { &mut *info.cast::<Context>() };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(ctx))) {
        Ok(r) => r,
        Err(_) => {
            log::error!("internal error in the worker: stopping");
            ctx.failed = true;
            ctx.host.run_loop.stop();
            fallback
        }
    }
}

unsafe fn tap_callback(
    kind: TapKind,
    ty: CGEventType,
    event: NonNull<CGEvent>,
    info: *mut c_void,
) -> *mut CGEvent {
    let pass = event.as_ptr();
    // SAFETY: registered with the Context pointer; the event is valid for the callback.
    unsafe {
        with_context(info, pass, |ctx| {
            let mut ev = CgEvent(event.as_ref());
            match ctx
                .worker
                .on_event(&mut ctx.host, kind, EventType(ty.0), &mut ev)
            {
                Disposition::Pass => pass,
                Disposition::Drop => std::ptr::null_mut(),
            }
        })
    }
}

unsafe extern "C-unwind" fn primary_callback(
    _proxy: CGEventTapProxy,
    ty: CGEventType,
    event: NonNull<CGEvent>,
    info: *mut c_void,
) -> *mut CGEvent {
    // SAFETY: registered by Host::create with the Context pointer.
    unsafe { tap_callback(TapKind::Primary, ty, event, info) }
}

unsafe extern "C-unwind" fn movement_callback(
    _proxy: CGEventTapProxy,
    ty: CGEventType,
    event: NonNull<CGEvent>,
    info: *mut c_void,
) -> *mut CGEvent {
    // SAFETY: registered by Host::create with the Context pointer.
    unsafe { tap_callback(TapKind::Movement, ty, event, info) }
}

unsafe extern "C-unwind" fn glide_callback(_timer: *mut CFRunLoopTimer, info: *mut c_void) {
    // SAFETY: registered by Host::new_timer with the Context pointer.
    unsafe { with_context(info, (), |ctx| ctx.worker.on_timer(&mut ctx.host)) }
}

unsafe extern "C-unwind" fn recheck_callback(_timer: *mut CFRunLoopTimer, info: *mut c_void) {
    // SAFETY: registered by Host::new_timer with the Context pointer.
    unsafe {
        with_context(info, (), |ctx| {
            ctx.host.cancel_recheck();
            ctx.worker.on_accessibility_changed(&mut ctx.host);
        })
    }
}

unsafe extern "C-unwind" fn accessibility_callback(
    _center: *mut CFNotificationCenter,
    observer: *mut c_void,
    _name: *const CFNotificationName,
    _object: *const c_void,
    _user_info: *const objc2_core_foundation::CFDictionary,
) {
    // SAFETY: the observer is the Context pointer.
    unsafe {
        with_context(observer, (), |ctx| {
            ctx.worker.on_accessibility_changed(&mut ctx.host);
            ctx.host.schedule_recheck();
        })
    }
}

/// The wake handler of the power notifications.
///
/// # Safety
/// `info` is the Context pointer, on the run-loop thread.
unsafe fn on_wake(info: *mut c_void) {
    // SAFETY: the caller's promise.
    unsafe {
        with_context(info, (), |ctx| {
            log::info!("system woke: re-checking the taps");
            ctx.worker.on_wake(&mut ctx.host);
            if let Some(hid) = ctx.hid.as_mut() {
                hid.on_wake(&mut ctx.host);
            }
        })
    }
}

/// SIGTERM and SIGINT as a run-loop source: the signals are caught by a handler that does
/// nothing and reported through a kqueue (`EVFILT_SIGNAL` records every delivery, whatever
/// the disposition), whose descriptor the run loop watches; the callback stops the run
/// loop. Caught, not ignored or blocked: `exec` resets a caught signal to its default
/// action in every child (osascript, `[actions.commands]`), while an ignored one stays
/// ignored and a blocked one stays blocked (std's `Command` inherits the signal mask and
/// resets only SIGPIPE). `SA_RESTART`, so no system call of the worker sees `EINTR`. The
/// same kqueue reports children's exits (`EVFILT_PROC`).
#[derive(Debug)]
struct Signals {
    fd: CFRetained<CFFileDescriptor>,
    source: CFRetained<CFRunLoopSource>,
}

/// The signals the worker stops on.
const STOP_SIGNALS: [i32; 2] = [libc::SIGTERM, libc::SIGINT];

/// The handler of the stop signals: nothing (the kqueue reports them); async-signal-safe.
extern "C" fn on_stop_signal(_signal: libc::c_int) {}

impl Signals {
    /// `info`: the Context pointer, handed to the callback (for reaping children).
    fn install(run_loop: &CFRunLoop, info: *mut c_void) -> Result<Signals, String> {
        // SAFETY: plain syscalls with valid arguments.
        let kq = unsafe { libc::kqueue() };
        if kq < 0 {
            return Err(format!("kqueue: {}", std::io::Error::last_os_error()));
        }
        for sig in STOP_SIGNALS {
            let change = libc::kevent {
                ident: sig as usize,
                filter: libc::EVFILT_SIGNAL,
                flags: libc::EV_ADD,
                fflags: 0,
                data: 0,
                udata: std::ptr::null_mut(),
            };
            // SAFETY: one valid change, no event list.
            let rc =
                unsafe { libc::kevent(kq, &change, 1, std::ptr::null_mut(), 0, std::ptr::null()) };
            if rc < 0 {
                return Err(format!("kevent: {}", std::io::Error::last_os_error()));
            }
        }
        for sig in STOP_SIGNALS {
            // SAFETY: a zeroed sigaction with an async-signal-safe handler and an empty mask.
            let rc = unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction =
                    on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut())
            };
            if rc < 0 {
                return Err(format!("sigaction: {}", std::io::Error::last_os_error()));
            }
        }
        let ctx = CFFileDescriptorContext {
            version: 0,
            info,
            retain: None,
            release: None,
            copyDescription: None,
        };
        // SAFETY: `kq` is owned and closed by the CFFileDescriptor on invalidation.
        let fd = unsafe { CFFileDescriptor::new(None, kq, true, Some(signal_callback), &ctx) }
            .ok_or_else(|| "CFFileDescriptorCreate failed".to_owned())?;
        fd.enable_call_backs(kCFFileDescriptorReadCallBack);
        let source = CFFileDescriptor::new_run_loop_source(None, Some(&fd), 0)
            .ok_or_else(|| "CFFileDescriptorCreateRunLoopSource failed".to_owned())?;
        // SAFETY: the default mode is a valid static.
        run_loop.add_source(Some(&source), unsafe { kCFRunLoopDefaultMode });
        Ok(Signals { fd, source })
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        self.source.invalidate();
        self.fd.invalidate();
        for sig in STOP_SIGNALS {
            // SAFETY: restoring the default disposition has no preconditions.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
}

unsafe extern "C-unwind" fn signal_callback(
    fd: *mut CFFileDescriptor,
    _types: CFOptionFlags,
    info: *mut c_void,
) {
    // SAFETY: CF passes the descriptor the callback was registered with.
    let fd = unsafe { &*fd };
    let mut events = [libc::kevent {
        ident: 0,
        filter: 0,
        flags: 0,
        fflags: 0,
        data: 0,
        udata: std::ptr::null_mut(),
    }; 8];
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: drains pending events without blocking.
    let n = unsafe {
        libc::kevent(
            fd.native_descriptor(),
            std::ptr::null(),
            0,
            events.as_mut_ptr(),
            events.len() as i32,
            &zero,
        )
    };
    let events = &events[..n.max(0) as usize];
    if events.iter().any(|e| e.filter == libc::EVFILT_PROC) {
        // SAFETY: registered by Signals::install with the Context pointer.
        unsafe { with_context(info, (), |ctx| ctx.host.reap()) };
    }
    if events.iter().any(|e| e.filter == libc::EVFILT_SIGNAL) {
        log::info!("signal received: stopping");
        // SAFETY: registered by Signals::install with the Context pointer.
        unsafe { with_context(info, (), |ctx| ctx.stopping = true) };
        if let Some(rl) = CFRunLoop::current() {
            rl.stop();
        }
    }
    // CFFileDescriptor call-backs are one-shot: ask for the next one.
    fd.enable_call_backs(kCFFileDescriptorReadCallBack);
}
