//! Small CoreFoundation and ApplicationServices helpers: property values, the symbolic
//! hotkeys, the permission checks.

use std::ffi::c_void;

use objc2_core_foundation::{
    CFArray, CFBoolean, CFDictionary, CFNumber, CFPreferencesCopyAppValue, CFRetained, CFString,
    CFType,
};
use objc2_core_graphics::{
    CGEvent, CGEventTapLocation, CGEventTapOptions, CGEventTapPlacement, CGEventTapProxy,
    CGEventType, CGPreflightListenEventAccess, CGPreflightPostEventAccess,
};

use crate::actions::HotkeyBinding;
use crate::cg::EventType;
use crate::permissions::Permissions;

#[link(name = "ApplicationServices", kind = "framework")]
unsafe extern "C" {
    /// `HIServices/AXUIElement.h`: whether the process is a trusted accessibility client.
    /// Returns a `Boolean` (unsigned char).
    fn AXIsProcessTrusted() -> u8;
}

/// `AXIsProcessTrusted()`.
pub fn is_trusted() -> bool {
    // SAFETY: no arguments, no preconditions; callable from any thread.
    unsafe { AXIsProcessTrusted() != 0 }
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
        post_events: CGPreflightPostEventAccess(),
        listen_events: CGPreflightListenEventAccess(),
        tap_probe: probe_tap.then(probe),
    }
}

/// Creates an active tap for an event type a mouse never sends (tablet proximity), never
/// adds it to a run loop, and invalidates it at once.
fn probe() -> bool {
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
