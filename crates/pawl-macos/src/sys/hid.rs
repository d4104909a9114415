//! IOHIDManager / IOHIDDevice glue for HID++ (`crate::hidpp` holds every decision): an
//! IOHIDManager matching Logitech devices with a vendor-defined collection (usage page
//! 0xFF00 or 0xFF43), scheduled on the worker's run loop, so device arrival and removal
//! and every input report are callbacks on that loop; `IOHIDDeviceOpen` (not seized:
//! macOS and other programs keep the device), `IOHIDDeviceSetReport` (output report,
//! report id first) for requests, `IOHIDDeviceRegisterInputReportCallback` for input, and
//! one CFRunLoopTimer that exists only while a reply is awaited or a glide runs.
//!
//! The manager is never opened (`IOHIDManagerOpen` would open every matched device):
//! only the endpoints `crate::hidpp::Hidpp::wants` are opened, one by one. A Bluetooth MX
//! Master is marked `RequiresTCCAuthorization`, and IOHIDFamily's `IOHIDDeviceClass.m`
//! would call `IOHIDRequestAccess` inside `IOHIDDeviceOpen`, waiting for the user on the
//! worker's thread (and every event tap with it); so such a device is opened only with
//! Input Monitoring granted (`crate::hidpp::open_decision`): never asked, pawl asks on a
//! thread of its own and logs that a restart applies the grant; denied, it logs the fix
//! once.
//!
//! Type-checked for both Apple targets; never run in this project's CI.

use std::ffi::c_void;
use std::ptr::NonNull;

use objc2_core_foundation::{
    CFAbsoluteTimeGetCurrent, CFArray, CFData, CFDictionary, CFIndex, CFNumber, CFRetained,
    CFRunLoop, CFRunLoopTimer, CFString, CFType, Type, kCFRunLoopDefaultMode,
};
use objc2_io_kit::{
    IOHIDDevice, IOHIDManager, IOHIDReportType, IORegistryEntryGetRegistryEntryID, IOReturn,
    kIOHIDOptionsTypeNone, kIOReturnExclusiveAccess, kIOReturnNoDevice, kIOReturnNotPermitted,
    kIOReturnNotResponding, kIOReturnOffline, kIOReturnSuccess, kIOReturnTimeout,
};
use pawl_engine::Config;
use pawl_engine::units::Micros;
use pawl_hidpp::report::{REPORT_ID_LONG, REPORT_ID_SHORT};

use crate::actions::Performer;
use crate::hidpp::{
    Access, EndpointDesc, HidPort, Hidpp, HidppMouse, HidppPermission, LOGITECH, MAX_DESCRIPTOR,
    OpenDecision, USAGE_PAGE_BLUETOOTH, USAGE_PAGE_RECEIVER, classify, open_decision,
};
use crate::sys::cf::{number, string};
use crate::sys::{Context, Host, now, with_context};

/// IOKit property keys (`IOHIDKeys.h`; `RequiresTCCAuthorization` from IOHIDFamily's
/// `IOHIDPrivateKeys.h`, read only for the report).
const VENDOR_ID: &str = "VendorID";
const PRODUCT_ID: &str = "ProductID";
const PRODUCT: &str = "Product";
const TRANSPORT: &str = "Transport";
const DEVICE_USAGE_PAGE: &str = "DeviceUsagePage";
const DEVICE_USAGE: &str = "DeviceUsage";
const DEVICE_USAGE_PAIRS: &str = "DeviceUsagePairs";
const REPORT_DESCRIPTOR: &str = "ReportDescriptor";
const MAX_INPUT_REPORT_SIZE: &str = "MaxInputReportSize";
const REQUIRES_TCC: &str = "RequiresTCCAuthorization";

/// Input report buffer bounds (bytes): HID++ long reports are 20 bytes; the buffer takes
/// the device's largest input report (`MaxInputReportSize`), at most 1024.
const MIN_REPORT_BUFFER: usize = 64;
/// Bytes of each input report handed to `crate::hidpp` (a HID++ long report is 20).
const REPORT_COPY: usize = MIN_REPORT_BUFFER;
const MAX_REPORT_BUFFER: usize = 1024;

/// One opened endpoint. Boxed: its address is the input-report callback's context and
/// its buffer is where IOKit writes each report.
struct Slot {
    /// The Context every callback reaches the worker through.
    context: *mut c_void,
    /// Registry entry ID (the endpoint's identity in `Hidpp`).
    id: u64,
    device: CFRetained<IOHIDDevice>,
    buffer: Box<[u8]>,
}

/// The open endpoints as a [`HidPort`]. Each Slot is boxed on purpose: its address is
/// registered with IOKit and must not move when the list grows or shrinks.
#[derive(Default)]
#[allow(clippy::vec_box)]
struct Ports(Vec<Box<Slot>>);

impl HidPort for Ports {
    fn send(&mut self, id: u64, report: &[u8]) -> Result<(), String> {
        let slot = self
            .0
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| "not open".to_owned())?;
        let ptr = NonNull::new(report.as_ptr().cast_mut()).ok_or("empty report")?;
        // SAFETY: `report` is valid for its length during this synchronous call; IOKit
        // only reads it. The report id is its first byte, as IOHIDDeviceSetReport wants
        // for devices with numbered reports.
        let ret = unsafe {
            slot.device.set_report(
                IOHIDReportType::Output,
                CFIndex::from(report[0]),
                ptr,
                report.len() as CFIndex,
            )
        };
        match ret {
            r if r == kIOReturnSuccess => Ok(()),
            r => Err(format!("IOHIDDeviceSetReport: {}", io_return(r))),
        }
    }
}

/// HID++ on the worker's run loop. Lives in the worker's Context; dropped only after
/// [`Hid::shutdown`].
pub(super) struct Hid {
    manager: CFRetained<IOHIDManager>,
    run_loop: CFRetained<CFRunLoop>,
    hidpp: Hidpp,
    ports: Ports,
    timer: Option<CFRetained<CFRunLoopTimer>>,
    armed: Option<Micros>,
    /// The "no Input Monitoring" error was logged.
    told_permission: bool,
    /// The mice set up changed (a battery, a mouse came or went): taken by
    /// [`super::Daemon::run`], which the run loop is stopped for.
    pub(super) mice: Option<Vec<HidppMouse>>,
}

impl std::fmt::Debug for Hid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hid")
            .field("hidpp", &self.hidpp)
            .field("open", &self.ports.0.len())
            .finish()
    }
}

impl Hid {
    /// Creates the IOHIDManager for HID++ endpoints on `run_loop` (its first matching
    /// callbacks run once the run loop runs). `None` with `[hidpp] enabled = false`.
    ///
    /// # Safety
    /// `context` is the worker's Context, valid until [`Hid::shutdown`] has run and the
    /// `Hid` is dropped; everything runs on `run_loop`'s thread.
    pub(super) unsafe fn start(
        config: &Config,
        performer: Performer,
        run_loop: &CFRunLoop,
        context: *mut c_void,
    ) -> Option<Hid> {
        if !config.hidpp.enabled {
            return None;
        }
        // SAFETY: the default mode is a valid static.
        let Some(mode) = (unsafe { kCFRunLoopDefaultMode }) else {
            log::error!("no default run loop mode: HID++ is off");
            return None;
        };
        let manager = IOHIDManager::new(None, kIOHIDOptionsTypeNone);
        set_matching(&manager);
        // SAFETY: the callbacks match IOHIDDeviceCallback; `context` outlives the manager
        // (the caller's promise).
        unsafe {
            manager.register_device_matching_callback(Some(matched), context);
            manager.register_device_removal_callback(Some(removed), context);
            manager.schedule_with_run_loop(run_loop, mode);
        }
        log::info!("HID++ on: waiting for MX Master endpoints (Bluetooth, Unifying, Bolt)");
        Some(Hid {
            manager,
            run_loop: run_loop.retain(),
            hidpp: Hidpp::new(config.clone(), performer),
            ports: Ports::default(),
            timer: None,
            armed: None,
            told_permission: false,
            mice: None,
        })
    }

    /// The Mac woke: every session sets up again (re-divert).
    pub(super) fn on_wake(&mut self, host: &mut Host) {
        self.hidpp.on_wake(now(), &mut self.ports, host);
        self.rearm(host);
        self.note_mice(host);
    }

    /// The focused application changed to `app`: every link's engine switches to its
    /// profile, and the timer follows (a glide stops when the profile changes).
    pub(super) fn set_app(&mut self, app: Option<pawl_engine::AppKey>, host: &mut Host) {
        self.hidpp.set_app(app);
        self.rearm(host);
    }

    /// When the mice set up changed, keeps the new list for [`super::Daemon::run`] and
    /// stops the run loop so it records them (it runs the loop again at once).
    fn note_mice(&mut self, host: &mut Host) {
        if self.hidpp.mice_changed() {
            self.mice = Some(self.hidpp.mice());
            host.run_loop.stop();
        }
    }

    /// Clean exit: un-divert (written synchronously), close every device, stop the
    /// manager's callbacks.
    pub(super) fn shutdown(mut self, host: &mut Host) {
        self.hidpp.shutdown(&mut self.ports, host);
        if let Some(t) = self.timer.take() {
            t.invalidate();
        }
        for slot in std::mem::take(&mut self.ports.0) {
            close(&slot);
        }
        // SAFETY: unregisters what `start` registered; the default mode is a valid static.
        unsafe {
            self.manager
                .register_device_matching_callback(None, std::ptr::null_mut());
            self.manager
                .register_device_removal_callback(None, std::ptr::null_mut());
            if let Some(mode) = kCFRunLoopDefaultMode {
                self.manager.unschedule_from_run_loop(&self.run_loop, mode);
            }
        }
    }

    fn on_matched(&mut self, device: &IOHIDDevice, context: *mut c_void, host: &mut Host) {
        let desc = describe(device);
        let Some(endpoint) = self.hidpp.wants(&desc) else {
            return;
        };
        match open_decision(desc.requires_tcc, input_monitoring()) {
            OpenDecision::Open => {}
            OpenDecision::Ask => {
                if !self.told_permission {
                    self.told_permission = true;
                    log::warn!(
                        "{:?}: HID++ needs the Input Monitoring permission; macOS asks now: \
                         allow it, then restart pawl (`pawl service install` again for the \
                         LaunchAgent, `pawl off && pawl on` when a terminal starts it); until \
                         then its gesture button does nothing",
                        desc.name
                    );
                    // IOHIDRequestAccess waits for the user's answer: never on this thread.
                    let asked = std::thread::Builder::new()
                        .name("pawl-input-monitoring".into())
                        .spawn(super::cf::hid_request_listen_access);
                    if let Err(e) = asked {
                        log::error!("cannot ask for Input Monitoring: {e}");
                    }
                }
                return;
            }
            OpenDecision::Refused => {
                if !self.told_permission {
                    self.told_permission = true;
                    log::error!(
                        "{:?}: HID++ needs the Input Monitoring permission, which is denied: \
                         turn pawl on in System Settings > Privacy & Security > Input \
                         Monitoring, then restart pawl; until then its gesture button does nothing",
                        desc.name
                    );
                }
                return;
            }
        }
        let ret = device.open(kIOHIDOptionsTypeNone);
        if ret != kIOReturnSuccess {
            if ret as u32 == kIOReturnNotPermitted {
                if !self.told_permission {
                    self.told_permission = true;
                    log::error!(
                        "{:?}: macOS refuses to open the mouse for HID++ (no Input Monitoring \
                         permission): grant it in System Settings > Privacy & Security > Input \
                         Monitoring, then restart pawl; until then its gesture button does nothing",
                        desc.name
                    );
                }
            } else {
                log::error!("{:?}: IOHIDDeviceOpen: {}", desc.name, io_return(ret));
            }
            return;
        }
        let size = device_number(device, MAX_INPUT_REPORT_SIZE)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
            .clamp(MIN_REPORT_BUFFER, MAX_REPORT_BUFFER);
        let mut slot = Box::new(Slot {
            context,
            id: desc.id,
            device: device.retain(),
            buffer: vec![0u8; size].into_boxed_slice(),
        });
        let buffer = NonNull::new(slot.buffer.as_mut_ptr()).expect("a boxed slice is non-null");
        let len = slot.buffer.len() as CFIndex;
        let info = std::ptr::from_mut::<Slot>(&mut *slot).cast::<c_void>();
        // SAFETY: the buffer and the Slot live in a Box kept until the callback is
        // unregistered (`close`); the callback matches IOHIDReportCallback.
        unsafe { device.register_input_report_callback(buffer, len, Some(report), info) };
        self.ports.0.push(slot);
        self.hidpp
            .opened(desc, endpoint, now(), &mut self.ports, host);
        self.rearm(host);
        self.note_mice(host);
    }

    fn on_removed(&mut self, device: &IOHIDDevice, host: &mut Host) {
        let Some(i) = self
            .ports
            .0
            .iter()
            .position(|s| std::ptr::eq(&*s.device, device))
        else {
            return;
        };
        let slot = self.ports.0.remove(i);
        self.hidpp.removed(slot.id, host);
        close(&slot);
        self.rearm(host);
        self.note_mice(host);
    }

    #[inline]
    fn on_report(&mut self, id: u64, bytes: &[u8], host: &mut Host) {
        // The mouse's own reports (Bluetooth): one byte compare, no clock read.
        if !matches!(bytes.first(), Some(&(REPORT_ID_SHORT | REPORT_ID_LONG))) {
            return;
        }
        self.hidpp
            .on_report(id, bytes, now(), &mut self.ports, host);
        if self.hidpp.deadline() != self.armed {
            self.rearm(host);
        }
        self.note_mice(host);
    }

    fn on_timer(&mut self, host: &mut Host) {
        // The timer is spent; `rearm` decides whether another is needed.
        self.armed = Some(Micros(u64::MAX));
        self.hidpp.on_timer(now(), &mut self.ports, host);
        self.rearm(host);
        self.note_mice(host);
    }

    /// Arms the one timer for the earliest deadline, or removes it.
    fn rearm(&mut self, host: &mut Host) {
        let deadline = self.hidpp.deadline();
        if deadline == self.armed {
            return;
        }
        self.armed = deadline;
        match deadline {
            None => {
                if let Some(t) = self.timer.take() {
                    t.invalidate();
                }
            }
            Some(d) => {
                let seconds = d.since(now()) as f64 / 1e6;
                match &self.timer {
                    Some(t) if t.is_valid() => {
                        t.set_next_fire_date(CFAbsoluteTimeGetCurrent() + seconds)
                    }
                    _ => self.timer = host.new_timer(seconds, timer_callback),
                }
            }
        }
    }
}

/// Stops a slot's input callback and closes its device (the device may be gone already;
/// the result is not needed).
fn close(slot: &Slot) {
    let mut buffer = [0u8; 1];
    let ptr = NonNull::new(buffer.as_mut_ptr()).expect("non-null");
    // SAFETY: with a NULL callback IOHIDDevice.c only removes a registration from its
    // callback set, and the buffer is not used. It removes nothing here: the set matches
    // registrations by context (this one's is the Slot, not NULL) and hashes the whole
    // registration. What stops the reports reaching the Slot, before the caller frees it, is
    // IOHIDDeviceClose below (IOHIDDeviceClass.m `close:` stops the report queue) or the
    // device being gone.
    unsafe {
        slot.device
            .register_input_report_callback(ptr, 0, None, std::ptr::null_mut())
    };
    let _ = slot.device.close(kIOHIDOptionsTypeNone);
}

/// Matches Logitech devices with a collection on page 0xFF00 or 0xFF43
/// (`DeviceUsagePage` matches any of a device's `DeviceUsagePairs`).
fn set_matching(manager: &IOHIDManager) {
    let vendor = CFString::from_static_str(VENDOR_ID);
    let page = CFString::from_static_str(DEVICE_USAGE_PAGE);
    let criteria: Vec<CFRetained<CFDictionary<CFString, CFNumber>>> =
        [USAGE_PAGE_RECEIVER, USAGE_PAGE_BLUETOOTH]
            .into_iter()
            .map(|p| {
                CFDictionary::from_slices(
                    &[&*vendor, &*page],
                    &[
                        &*CFNumber::new_i32(i32::from(LOGITECH)),
                        &*CFNumber::new_i32(p as i32),
                    ],
                )
            })
            .collect();
    let refs: Vec<&CFDictionary<CFString, CFNumber>> = criteria.iter().map(|d| &**d).collect();
    let multiple = CFArray::from_objects(&refs);
    // SAFETY: an array of matching dictionaries, as the function expects.
    unsafe { manager.set_device_matching_multiple(Some(multiple.as_opaque())) };
}

fn device_number(device: &IOHIDDevice, key: &str) -> Option<i64> {
    device
        .property(&CFString::from_str(key))
        .and_then(|v| number(&v))
}

fn device_string(device: &IOHIDDevice, key: &str) -> Option<String> {
    device
        .property(&CFString::from_str(key))
        .and_then(|v| string(&v))
}

/// Reads what [`classify`] needs from the device's properties (nothing opened).
fn describe(device: &IOHIDDevice) -> EndpointDesc {
    let mut id = 0u64;
    // SAFETY: the service of a live IOHIDDevice and a valid out-pointer.
    unsafe { IORegistryEntryGetRegistryEntryID(device.service(), &mut id) };
    let usage_pairs = device
        .property(&CFString::from_static_str(DEVICE_USAGE_PAIRS))
        .map(|v| usage_pairs(&v))
        .unwrap_or_default();
    let descriptor = device
        .property(&CFString::from_static_str(REPORT_DESCRIPTOR))
        .and_then(|v| {
            v.downcast_ref::<CFData>()
                .map(|d| d.to_vec().into_iter().take(MAX_DESCRIPTOR).collect())
        })
        .unwrap_or_default();
    EndpointDesc {
        id,
        name: device_string(device, PRODUCT).unwrap_or_default(),
        vendor: device_number(device, VENDOR_ID)
            .and_then(|v| u16::try_from(v).ok())
            .unwrap_or(0),
        product: device_number(device, PRODUCT_ID)
            .and_then(|v| u16::try_from(v).ok())
            .unwrap_or(0),
        transport: device_string(device, TRANSPORT).unwrap_or_default(),
        usage_pairs,
        descriptor,
        requires_tcc: device_number(device, REQUIRES_TCC).unwrap_or(0) != 0,
    }
}

/// `DeviceUsagePairs`: an array of `{ DeviceUsagePage, DeviceUsage }` dictionaries (at
/// most 64 are read).
fn usage_pairs(value: &CFType) -> Vec<(u32, u32)> {
    let Some(array) = value.downcast_ref::<CFArray>() else {
        return Vec::new();
    };
    // SAFETY: each element is checked with downcast_ref before use.
    let array = unsafe { array.cast_unchecked::<CFType>() };
    let page = CFString::from_static_str(DEVICE_USAGE_PAGE);
    let usage = CFString::from_static_str(DEVICE_USAGE);
    let n = array.len().min(64);
    let mut pairs = Vec::with_capacity(n);
    for i in 0..n {
        let Some(item) = array.get(i) else { continue };
        let Some(dict) = item.downcast_ref::<CFDictionary>() else {
            continue;
        };
        // SAFETY: property dictionaries have CFString keys and CFType values.
        let dict = unsafe { dict.cast_unchecked::<CFString, CFType>() };
        let get = |k: &CFString| {
            dict.get(k)
                .and_then(|v| number(&v))
                .and_then(|n| u32::try_from(n).ok())
        };
        if let (Some(p), Some(u)) = (get(&page), get(&usage)) {
            pairs.push((p, u));
        }
    }
    pairs
}

/// `IOHIDCheckAccess(kIOHIDRequestTypeListenEvent)`: Input Monitoring (never prompts;
/// looked up at run time, since it is newer than the x86_64 deployment target).
fn input_monitoring() -> Access {
    match super::cf::hid_check_listen_access() {
        0 => Access::Granted,
        1 => Access::Denied,
        _ => Access::Unknown,
    }
}

/// Input Monitoring and the HID++ endpoints connected now (nothing opened), for `pawl
/// status` and `pawl devices`.
pub fn hidpp_permission() -> HidppPermission {
    let input_monitoring = input_monitoring();
    let manager = IOHIDManager::new(None, kIOHIDOptionsTypeNone);
    set_matching(&manager);
    let mut endpoints = Vec::new();
    if let Some(set) = manager.devices() {
        for device in set_values(&set) {
            // SAFETY: IOHIDManagerCopyDevices returns a set of IOHIDDeviceRefs, alive while
            // the set is.
            let device = unsafe { &*device.cast::<IOHIDDevice>() };
            let desc = describe(device);
            if classify(&desc).is_some() {
                endpoints.push((desc.name, desc.requires_tcc));
            }
        }
    }
    endpoints.sort();
    endpoints.dedup();
    HidppPermission {
        input_monitoring,
        endpoints,
    }
}

fn set_values(set: &objc2_core_foundation::CFSet) -> Vec<*const c_void> {
    let n = usize::try_from(set.count()).unwrap_or(0);
    let mut values = vec![std::ptr::null::<c_void>(); n];
    // SAFETY: `values` has room for every value of the set.
    unsafe { set.values(values.as_mut_ptr()) };
    values
}

/// An `IOReturn` as text (`0xe00002e2 (not permitted)` …).
fn io_return(r: IOReturn) -> String {
    let name = match r as u32 {
        n if n == kIOReturnNotPermitted => " (not permitted: Input Monitoring)",
        n if n == kIOReturnNoDevice => " (no device)",
        n if n == kIOReturnNotResponding => " (not responding)",
        n if n == kIOReturnOffline => " (offline)",
        n if n == kIOReturnExclusiveAccess => " (exclusive access)",
        n if n == kIOReturnTimeout => " (timeout)",
        _ => "",
    };
    format!("{:#010x}{name}", r as u32)
}

unsafe extern "C-unwind" fn matched(
    context: *mut c_void,
    _result: IOReturn,
    _sender: *mut c_void,
    device: NonNull<IOHIDDevice>,
) {
    // SAFETY: registered by Hid::start with the Context pointer; the device is valid
    // for the callback.
    unsafe {
        with_context(context, (), |ctx| {
            let Context { hid, host, .. } = ctx;
            if let Some(hid) = hid.as_mut() {
                hid.on_matched(device.as_ref(), context, host);
            }
        })
    }
}

unsafe extern "C-unwind" fn removed(
    context: *mut c_void,
    _result: IOReturn,
    _sender: *mut c_void,
    device: NonNull<IOHIDDevice>,
) {
    // SAFETY: as for `matched`.
    unsafe {
        with_context(context, (), |ctx| {
            let Context { hid, host, .. } = ctx;
            if let Some(hid) = hid.as_mut() {
                hid.on_removed(device.as_ref(), host);
            }
        })
    }
}

unsafe extern "C-unwind" fn report(
    context: *mut c_void,
    result: IOReturn,
    _sender: *mut c_void,
    _ty: IOHIDReportType,
    _report_id: u32,
    report: NonNull<u8>,
    length: CFIndex,
) {
    if result != kIOReturnSuccess {
        return;
    }
    // HID++ messages are at most 20 bytes; the mouse's own reports (Bluetooth) are
    // dropped after their first byte. A copy keeps IOKit's buffer out of the worker.
    let mut bytes = [0u8; REPORT_COPY];
    let (id, info) = {
        // SAFETY: registered by Hid::on_matched with a Slot pointer, valid until `close`.
        let slot = unsafe { &*context.cast::<Slot>() };
        (slot.id, slot.context)
    };
    let len = usize::try_from(length).unwrap_or(0).min(REPORT_COPY);
    // SAFETY: IOKit wrote `length` bytes of the report at `report` (the slot's buffer, at
    // least MIN_REPORT_BUFFER = REPORT_COPY bytes long); at most `len` are read.
    unsafe { std::ptr::copy_nonoverlapping(report.as_ptr(), bytes.as_mut_ptr(), len) };
    // SAFETY: the Slot's context is the worker's Context.
    unsafe {
        with_context(info, (), |ctx| {
            let Context { hid, host, .. } = ctx;
            if let Some(hid) = hid.as_mut() {
                hid.on_report(id, &bytes[..len], host);
            }
        })
    }
}

unsafe extern "C-unwind" fn timer_callback(_timer: *mut CFRunLoopTimer, info: *mut c_void) {
    // SAFETY: registered by Host::new_timer with the Context pointer.
    unsafe {
        with_context(info, (), |ctx| {
            let Context { hid, host, .. } = ctx;
            if let Some(hid) = hid.as_mut() {
                hid.on_timer(host);
            }
        })
    }
}
