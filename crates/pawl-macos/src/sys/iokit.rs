//! IOKit: the device behind a sender registry ID, the IOHIDManager device list, and the
//! system power notification that tells the worker the Mac woke.

use std::ffi::{CStr, c_char, c_void};

use objc2_core_foundation::{
    CFArray, CFDictionary, CFNumber, CFRetained, CFRunLoop, CFSet, CFString, CFType,
    kCFRunLoopDefaultMode,
};
use objc2_io_kit::{
    IOAllowPowerChange, IODeregisterForSystemPower, IOHIDDevice, IOHIDManager, IONotificationPort,
    IONotificationPortRef, IOObjectRelease, IORegisterForSystemPower, IORegistryEntryIDMatching,
    IORegistryEntrySearchCFProperty, IOServiceClose, IOServiceGetMatchingService, io_connect_t,
    io_object_t, io_registry_entry_t, io_service_t, kIOHIDOptionsTypeNone,
    kIOMessageCanSystemSleep, kIOMessageSystemHasPoweredOn, kIOMessageSystemWillSleep,
    kIORegistryIterateParents, kIORegistryIterateRecursively, kIOServicePlane,
};
use pawl_engine::DeviceInfo;

use crate::devices::HidDevice;
use crate::sys::cf::{number, string};

/// The default IOKit main port: `MACH_PORT_NULL`. Apple (`IOKitLib.h`, `kIOMainPortDefault`):
/// "When specifying a main port to IOKit functions, the NULL argument indicates 'use the
/// default'. This is a synonym for NULL". Passing 0 instead of the `kIOMainPortDefault`
/// symbol (macOS 12+) or the deprecated `kIOMasterPortDefault` keeps the binary free of
/// either import, so it loads before macOS 12.
const MAIN_PORT_DEFAULT: u32 = 0;

/// IOKit property keys (`IOHIDKeys.h`).
const VENDOR_ID: &str = "VendorID";
const PRODUCT_ID: &str = "ProductID";
const PRODUCT: &str = "Product";
const TRANSPORT: &str = "Transport";
const PRIMARY_USAGE_PAGE: &str = "PrimaryUsagePage";
const PRIMARY_USAGE: &str = "PrimaryUsage";

/// Searches `entry` and then its parents for `key` (the sending IOHIDEventService sits
/// below the IOHIDDevice that carries VendorID/ProductID).
fn search(entry: io_registry_entry_t, key: &str) -> Option<CFRetained<CFType>> {
    let key = CFString::from_str(key);
    let plane: &CStr = kIOServicePlane;
    // SAFETY: `entry` is a live registry entry; the plane is a NUL-terminated name (the
    // binding types it as a pointer to `io_name_t`, a 128-byte buffer, which IOKit only
    // reads as a C string).
    unsafe {
        IORegistryEntrySearchCFProperty(
            entry,
            plane.as_ptr().cast_mut().cast::<[c_char; 128]>(),
            Some(&key),
            None,
            kIORegistryIterateRecursively | kIORegistryIterateParents,
        )
    }
}

/// The device that sent events with registry ID `id` (event field 87), `None` when the
/// entry is gone or has no vendor id.
pub fn sender(id: u64) -> Option<DeviceInfo> {
    // SAFETY: creates a matching dictionary; no preconditions.
    let matching = unsafe { IORegistryEntryIDMatching(id) }?;
    // SAFETY: a CFMutableDictionary is a CFDictionary; the function consumes it.
    let matching: CFRetained<CFDictionary> = unsafe { CFRetained::cast_unchecked(matching) };
    // SAFETY: the default main port and an owned matching dictionary.
    let service: io_service_t =
        unsafe { IOServiceGetMatchingService(MAIN_PORT_DEFAULT, Some(matching)) };
    if service == 0 {
        return None;
    }
    let info = describe(service);
    IOObjectRelease(service);
    let dev = info?;
    Some(dev.info())
}

fn describe(entry: io_registry_entry_t) -> Option<HidDevice> {
    let num = |key| search(entry, key).and_then(|v| number(&v));
    let text = |key| search(entry, key).and_then(|v| string(&v));
    Some(HidDevice {
        name: text(PRODUCT).unwrap_or_default(),
        vendor: u16::try_from(num(VENDOR_ID)?).ok()?,
        product: num(PRODUCT_ID)
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(0),
        transport: text(TRANSPORT).unwrap_or_default(),
        usage_page: num(PRIMARY_USAGE_PAGE)
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0),
        usage: num(PRIMARY_USAGE)
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0),
    })
}

/// The pointer devices IOHIDManager enumerates (mice, pointers, touchpads), without
/// opening them, deduplicated and sorted by name.
pub fn pointer_devices() -> Vec<HidDevice> {
    let manager = IOHIDManager::new(None, kIOHIDOptionsTypeNone);
    let page = CFString::from_static_str("DeviceUsagePage");
    let usage = CFString::from_static_str("DeviceUsage");
    let criteria: Vec<CFRetained<CFDictionary<CFString, CFNumber>>> = [(1, 2), (1, 1), (0x0D, 5)]
        .into_iter()
        .map(|(p, u)| {
            CFDictionary::from_slices(
                &[&*page, &*usage],
                &[&*CFNumber::new_i32(p), &*CFNumber::new_i32(u)],
            )
        })
        .collect();
    let refs: Vec<&CFDictionary<CFString, CFNumber>> = criteria.iter().map(|d| &**d).collect();
    let multiple = CFArray::from_objects(&refs);
    // SAFETY: an array of matching dictionaries, as the function expects.
    unsafe { manager.set_device_matching_multiple(Some(multiple.as_opaque())) };
    let Some(set) = manager.devices() else {
        return Vec::new();
    };
    let mut devices = Vec::new();
    for device in set_values(&set) {
        // SAFETY: IOHIDManagerCopyDevices returns a set of IOHIDDeviceRefs, alive while the
        // set is.
        let device = unsafe { &*device.cast::<IOHIDDevice>() };
        let prop = |key: &str| device.property(&CFString::from_str(key));
        let num = |key: &str| prop(key).and_then(|v| number(&v));
        let Some(vendor) = num(VENDOR_ID).and_then(|v| u16::try_from(v).ok()) else {
            continue;
        };
        devices.push(HidDevice {
            name: prop(PRODUCT).and_then(|v| string(&v)).unwrap_or_default(),
            vendor,
            product: num(PRODUCT_ID)
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(0),
            transport: prop(TRANSPORT).and_then(|v| string(&v)).unwrap_or_default(),
            usage_page: num(PRIMARY_USAGE_PAGE)
                .and_then(|p| u32::try_from(p).ok())
                .unwrap_or(0),
            usage: num(PRIMARY_USAGE)
                .and_then(|p| u32::try_from(p).ok())
                .unwrap_or(0),
        });
    }
    devices.sort_by(|a, b| (&a.name, a.vendor, a.product).cmp(&(&b.name, b.vendor, b.product)));
    devices.dedup();
    devices
}

fn set_values(set: &CFSet) -> Vec<*const c_void> {
    let n = usize::try_from(set.count()).unwrap_or(0);
    let mut values = vec![std::ptr::null::<c_void>(); n];
    // SAFETY: `values` has room for every value of the set.
    unsafe { set.values(values.as_mut_ptr()) };
    values
}

/// A registration for system power notifications (Apple QA1340): sleep requests are
/// allowed at once, wake calls the handler. Deregistered on drop.
#[derive(Debug)]
pub struct PowerNotifications {
    root_port: io_connect_t,
    port: IONotificationPortRef,
    notifier: io_object_t,
    context: *mut PowerContext,
}

/// What the power callback calls on wake; `info` is handed back.
pub type WakeHandler = unsafe fn(info: *mut c_void);

#[derive(Debug)]
struct PowerContext {
    root_port: io_connect_t,
    on_wake: WakeHandler,
    info: *mut c_void,
}

impl PowerNotifications {
    /// Registers on `run_loop`; `on_wake(info)` runs on it after each wake. `None` when
    /// IOKit refuses (the worker then simply does not re-check on wake).
    ///
    /// # Safety
    /// `info` must stay valid for `on_wake` until the registration is dropped.
    pub unsafe fn register(
        run_loop: &CFRunLoop,
        on_wake: WakeHandler,
        info: *mut c_void,
    ) -> Option<PowerNotifications> {
        let context = Box::into_raw(Box::new(PowerContext {
            root_port: 0,
            on_wake,
            info,
        }));
        let mut port: IONotificationPortRef = std::ptr::null_mut();
        let mut notifier: io_object_t = 0;
        // SAFETY: out-pointers are valid; `context` lives until drop.
        let root_port = unsafe {
            IORegisterForSystemPower(
                context.cast(),
                &mut port,
                Some(power_callback),
                &mut notifier,
            )
        };
        if root_port == 0 {
            // SAFETY: not registered: nothing refers to `context`.
            drop(unsafe { Box::from_raw(context) });
            return None;
        }
        // SAFETY: `context` is ours until drop.
        unsafe { (*context).root_port = root_port };
        // SAFETY: `port` was returned by IORegisterForSystemPower.
        if let Some(source) = unsafe { IONotificationPort::run_loop_source(port) } {
            // SAFETY: the default mode is a valid static.
            run_loop.add_source(Some(&source), unsafe { kCFRunLoopDefaultMode });
        }
        Some(PowerNotifications {
            root_port,
            port,
            notifier,
            context,
        })
    }
}

impl Drop for PowerNotifications {
    fn drop(&mut self) {
        // SAFETY: the registration made in `register`, torn down in QA1340's order.
        unsafe {
            IODeregisterForSystemPower(&mut self.notifier);
            IOServiceClose(self.root_port);
            IONotificationPort::destroy(self.port);
            drop(Box::from_raw(self.context));
        }
    }
}

unsafe extern "C-unwind" fn power_callback(
    refcon: *mut c_void,
    _service: io_service_t,
    message_type: u32,
    message_argument: *mut c_void,
) {
    // SAFETY: `refcon` is the PowerContext registered with this callback.
    let context = unsafe { &*refcon.cast::<PowerContext>() };
    match message_type {
        // Never veto or delay sleep.
        t if t == kIOMessageCanSystemSleep || t == kIOMessageSystemWillSleep => {
            IOAllowPowerChange(context.root_port, message_argument as isize);
        }
        t if t == kIOMessageSystemHasPoweredOn => {
            // SAFETY: the registrant promised `info` is valid for `on_wake`.
            unsafe { (context.on_wake)(context.info) };
        }
        _ => {}
    }
}
