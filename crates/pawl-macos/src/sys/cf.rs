//! Small CoreFoundation and ApplicationServices helpers: property values, the symbolic
//! hotkeys, the permission checks.
//!
//! Functions newer than the deployment target (x86_64: macOS 10.12) or private are looked
//! up at run time with `dlsym` instead of being imported: `CGPreflight*Access` (10.15) and
//! the `CGS*SymbolicHotKey*` functions (private, CoreGraphics/SkyLight). The imported ones
//! are listed in `crates/pawl-macos/macos-symbols.txt`, checked by `cargo xtask check-macos`.

use std::ffi::{CStr, c_void};

use objc2_core_foundation::{
    CFArray, CFBoolean, CFDictionary, CFNumber, CFPreferencesCopyAppValue, CFRetained, CFString,
    CFType,
};
use objc2_core_graphics::{
    CGEvent, CGEventTapLocation, CGEventTapOptions, CGEventTapPlacement, CGEventTapProxy,
    CGEventType,
};

use crate::actions::HotkeyBinding;
use crate::cg::EventType;
use crate::permissions::Permissions;

#[link(name = "ApplicationServices", kind = "framework")]
unsafe extern "C" {
    /// `HIServices/AXUIElement.h`: whether the process is a trusted accessibility client.
    /// Returns a `Boolean` (unsigned char).
    fn AXIsProcessTrusted() -> u8;
    /// `HIServices/AXUIElement.h` (10.9): the same, and with `kAXTrustedCheckOptionPrompt`
    /// true, macOS shows its "would like to control this computer" prompt (once per binary).
    fn AXIsProcessTrustedWithOptions(options: *const CFDictionary) -> u8;
    /// The prompt option's key (10.9).
    static kAXTrustedCheckOptionPrompt: *const CFString;
}

/// `AXIsProcessTrusted()`.
pub fn is_trusted() -> bool {
    // SAFETY: no arguments, no preconditions; callable from any thread.
    unsafe { AXIsProcessTrusted() != 0 }
}

/// `AXIsProcessTrustedWithOptions({kAXTrustedCheckOptionPrompt: true})`: asks macOS to
/// show the Accessibility prompt (it does so at most once per binary; later calls only
/// answer). Returns whether the process is trusted now.
pub fn prompt_for_trust() -> bool {
    // SAFETY: a static CFString exported by ApplicationServices, read-only.
    let Some(key) = (unsafe { kAXTrustedCheckOptionPrompt.as_ref() }) else {
        return is_trusted();
    };
    let options = CFDictionary::<CFString, CFBoolean>::from_slices(&[key], &[CFBoolean::new(true)]);
    // SAFETY: a valid dictionary with the documented key; callable from any thread.
    unsafe { AXIsProcessTrustedWithOptions((&*options as &CFDictionary<_, _>).as_opaque()) != 0 }
}

/// A function's address by name (`dlsym(RTLD_DEFAULT, name)`), `None` when this macOS
/// has no such function.
fn lookup(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches every loaded image.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!f.is_null()).then_some(f)
}

/// `IOHIDCheckAccess(kIOHIDRequestTypeListenEvent)` (IOKit `IOHIDLib.h`, macOS 10.15),
/// looked up at run time: before 10.15 there is no Input Monitoring permission, so it
/// counts as granted. Returns the `IOHIDAccessType` value (0 granted, 1 denied, 2 unknown).
pub fn hid_check_listen_access() -> u32 {
    const LISTEN_EVENT: u32 = 1; // kIOHIDRequestTypeListenEvent
    match lookup(c"IOHIDCheckAccess") {
        // SAFETY: `IOHIDAccessType IOHIDCheckAccess(IOHIDRequestType)`, both C enums of
        // `unsigned int` (IOKit `IOHIDLib.h`).
        Some(f) => unsafe {
            std::mem::transmute::<*mut c_void, extern "C" fn(u32) -> u32>(f)(LISTEN_EVENT)
        },
        None => 0,
    }
}

/// `IOHIDRequestAccess(kIOHIDRequestTypeListenEvent)` (macOS 10.15), looked up at run
/// time; blocks until the user answers the prompt. Before 10.15: `true` (nothing to ask).
pub fn hid_request_listen_access() -> bool {
    const LISTEN_EVENT: u32 = 1; // kIOHIDRequestTypeListenEvent
    match lookup(c"IOHIDRequestAccess") {
        // SAFETY: `bool IOHIDRequestAccess(IOHIDRequestType)` (IOKit `IOHIDLib.h`).
        Some(f) => unsafe {
            std::mem::transmute::<*mut c_void, extern "C" fn(u32) -> bool>(f)(LISTEN_EVENT)
        },
        None => true,
    }
}

/// `CGPreflightPostEventAccess` / `CGPreflightListenEventAccess` (macOS 10.15), looked up
/// at run time: before 10.15 there is no such permission, so it counts as granted.
fn preflight(name: &CStr) -> bool {
    match lookup(name) {
        // SAFETY: both functions are `bool (void)` (CoreGraphics `CGRemoteOperation.h`).
        Some(f) => unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> bool>(f)() },
        None => true,
    }
}

/// An integer property value (CFNumber, or CFBoolean as 0/1).
pub fn number(value: &CFType) -> Option<i64> {
    if let Some(n) = value.downcast_ref::<CFNumber>() {
        return n.as_i64();
    }
    value
        .downcast_ref::<CFBoolean>()
        .map(|b| i64::from(b.as_bool()))
}

/// A string property value.
pub fn string(value: &CFType) -> Option<String> {
    value.downcast_ref::<CFString>().map(|s| s.to_string())
}

/// `dict[key]` of an untyped dictionary.
fn get(dict: &CFDictionary, key: &str) -> Option<CFRetained<CFType>> {
    let key = CFString::from_str(key);
    // SAFETY: property-list dictionaries have CFString keys and CFType values.
    let typed = unsafe { dict.cast_unchecked::<CFString, CFType>() };
    typed.get(&key)
}

/// The private CGS symbolic-hotkey functions (CoreGraphics, implemented in SkyLight;
/// declared in the CGSInternal headers Mac Mouse Fix uses, `CGSHotKeys.h`). The hotkey id
/// and modifier flags are C enums (`int`), key equivalent and key code `unichar`/`CGKeyCode`.
type GetValue = unsafe extern "C" fn(i32, *mut u16, *mut u16, *mut u32) -> i32;
type IsEnabled = unsafe extern "C" fn(i32) -> bool;
type SetEnabled = unsafe extern "C" fn(i32, bool) -> i32;
type SetValue = unsafe extern "C" fn(i32, u16, u16, u32) -> i32;

/// The live binding of symbolic hotkey `id` from the window server
/// (`CGSGetSymbolicHotKeyValue`, `CGSIsSymbolicHotKeyEnabled`), falling back to the
/// `com.apple.symbolichotkeys` preferences when those functions are missing.
pub fn read_hotkey(id: u32) -> Option<HotkeyBinding> {
    let (Some(get), Some(enabled)) = (
        lookup(c"CGSGetSymbolicHotKeyValue"),
        lookup(c"CGSIsSymbolicHotKeyEnabled"),
    ) else {
        return symbolic_hotkey(id);
    };
    // SAFETY: the signatures of CGSHotKeys.h; out-pointers are valid.
    unsafe {
        let get = std::mem::transmute::<*mut c_void, GetValue>(get);
        let enabled = std::mem::transmute::<*mut c_void, IsEnabled>(enabled);
        let (mut equivalent, mut code, mut modifiers) = (0u16, 0u16, 0u32);
        if get(id as i32, &mut equivalent, &mut code, &mut modifiers) != 0 {
            return symbolic_hotkey(id);
        }
        Some(HotkeyBinding {
            enabled: enabled(id as i32),
            code,
            modifiers: u64::from(modifiers),
        })
    }
}

/// Enables symbolic hotkey `id` and binds it to `binding` (`CGSSetSymbolicHotKeyEnabled`,
/// `CGSSetSymbolicHotKeyValue` with no key equivalent). Errors: the functions are missing
/// or return a `CGError`.
pub fn bind_hotkey(id: u32, binding: HotkeyBinding) -> Result<(), String> {
    let (Some(enable), Some(set)) = (
        lookup(c"CGSSetSymbolicHotKeyEnabled"),
        lookup(c"CGSSetSymbolicHotKeyValue"),
    ) else {
        return Err("this macOS has no CGSSetSymbolicHotKeyValue".into());
    };
    /// No key equivalent: macOS matches the key code (`kMFKeyEquivalentNull` in MMF).
    const NO_KEY_EQUIVALENT: u16 = 0xFFFF;
    // SAFETY: the signatures of CGSHotKeys.h; plain values.
    let (a, b) = unsafe {
        let enable = std::mem::transmute::<*mut c_void, SetEnabled>(enable);
        let set = std::mem::transmute::<*mut c_void, SetValue>(set);
        (
            enable(id as i32, true),
            set(
                id as i32,
                NO_KEY_EQUIVALENT,
                binding.code,
                binding.modifiers as u32,
            ),
        )
    };
    match (a, b) {
        (0, 0) => Ok(()),
        _ => Err(format!("CGError {a} / {b}")),
    }
}

/// The user's binding of symbolic hotkey `id` from `com.apple.symbolichotkeys`
/// (`AppleSymbolicHotKeys[id] = { enabled, value = { parameters = (ascii, keycode,
/// modifiers) } }`), `None` when it is missing or malformed.
pub fn symbolic_hotkey(id: u32) -> Option<HotkeyBinding> {
    let key = CFString::from_static_str("AppleSymbolicHotKeys");
    let app = CFString::from_static_str("com.apple.symbolichotkeys");
    let all = CFPreferencesCopyAppValue(&key, &app)?;
    let all = all.downcast_ref::<CFDictionary>()?;
    let entry = get(all, &id.to_string())?;
    let entry = entry.downcast_ref::<CFDictionary>()?;
    let enabled = get(entry, "enabled").and_then(|v| number(&v)).unwrap_or(1) != 0;
    let value = get(entry, "value")?;
    let params = get(value.downcast_ref::<CFDictionary>()?, "parameters")?;
    let params = params.downcast_ref::<CFArray>()?;
    // SAFETY: the parameters array of a symbolic hotkey holds CFNumbers; each is checked.
    let params = unsafe { params.cast_unchecked::<CFType>() };
    let code = number(&*params.get(1)?)?;
    let modifiers = number(&*params.get(2)?)?;
    Some(HotkeyBinding {
        enabled,
        code: u16::try_from(code).ok()?,
        modifiers: u64::try_from(modifiers).ok()?,
    })
}

/// What macOS grants this process; `probe_tap` also tries to create (and at once
/// invalidates) an event tap, which tells the stale-grant case apart.
pub fn permissions(probe_tap: bool) -> Permissions {
    let accessibility = is_trusted();
    Permissions {
        accessibility,
        post_events: preflight(c"CGPreflightPostEventAccess"),
        listen_events: preflight(c"CGPreflightListenEventAccess"),
        tap_probe: probe_tap.then(probe),
    }
}

/// Creates an active tap for an event type a mouse never sends (tablet proximity), never
/// adds it to a run loop, and invalidates it at once.
pub fn probe() -> bool {
    unsafe extern "C-unwind" fn pass(
        _proxy: CGEventTapProxy,
        _ty: CGEventType,
        event: std::ptr::NonNull<CGEvent>,
        _info: *mut c_void,
    ) -> *mut CGEvent {
        event.as_ptr()
    }
    const TABLET_PROXIMITY: EventType = EventType(24);
    // SAFETY: `pass` is a valid callback that returns the event it is given; no user info.
    let port = unsafe {
        CGEvent::tap_create(
            CGEventTapLocation::HIDEventTap,
            CGEventTapPlacement::HeadInsertEventTap,
            CGEventTapOptions::Default,
            TABLET_PROXIMITY.mask_bit(),
            Some(pass),
            std::ptr::null_mut(),
        )
    };
    match port {
        Some(port) => {
            port.invalidate();
            true
        }
        None => false,
    }
}
