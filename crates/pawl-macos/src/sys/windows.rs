//! The application under a point of the screen, for [`crate::pointer::PointerApp`]: the
//! window server's list of on-screen windows, front to back, and the owner of the first
//! ordinary window that contains the point.
//!
//! # Rules
//!
//! - `CGWindowListCopyWindowInfo(kCGWindowListOptionOnScreenOnly |
//!   kCGWindowListExcludeDesktopElements, kCGNullWindowID)` lists on-screen windows front
//!   to back; the first with `kCGWindowLayer` 0 (ordinary application windows, not the
//!   menu bar, the Dock or panels above them) whose `kCGWindowBounds` contains the point
//!   wins. The bounds are global display coordinates with the origin at the top left of
//!   the main display, the same as `CGEventGetLocation`.
//! - Only `kCGWindowLayer`, `kCGWindowBounds` and `kCGWindowOwnerPID` are read. Since
//!   macOS 10.15 the window list withholds only window names (`kCGWindowName`) from a
//!   process without the Screen Recording permission; owner, bounds and layer stay
//!   readable, so pawl needs no further permission. Sources: Apple's WWDC 2019 session 701
//!   "Advances in macOS Security", as alt-tab-macos applies it
//!   (<https://github.com/lwouis/alt-tab-macos/pull/33>: it reads `kCGWindowOwnerName`
//!   instead of `kCGWindowName` to work without Screen Recording), and yabai's
//!   <https://github.com/koekeishiya/yabai/issues/278> ("All CGWindow APIs seem to require
//!   Screen Recording Permission now to return window titles"). Not checked on a Mac by
//!   this project.
//! - The owner's pid becomes an application through `NSRunningApplication
//!   runningApplicationWithProcessIdentifier:`, and that its bundle identifier.
//! - Every CoreFoundation object is held as a `CFRetained` (released on drop), the
//!   Objective-C objects as `Retained` inside an autorelease pool: nothing leaks.
//! - Apple documents the list as "relatively expensive" to generate; it is read once per
//!   scroll gesture, never per event ([`crate::pointer`]). Its cost is not measured here.

use objc2::rc::autoreleasepool;
use objc2_app_kit::NSRunningApplication;
use objc2_core_foundation::{
    CFArray, CFDictionary, CFNumber, CFRetained, CFString, CFType, CGRect,
};
use objc2_core_graphics::{
    CGRectMakeWithDictionaryRepresentation, CGWindowListCopyWindowInfo, CGWindowListOption,
    kCGNullWindowID, kCGWindowBounds, kCGWindowLayer, kCGWindowOwnerPID,
};

use crate::pointer::AppAt;

/// The application owning the frontmost ordinary window at `(x, y)` (px, global display
/// coordinates, top-left origin).
pub(super) fn app_at(x: f64, y: f64) -> AppAt {
    let options =
        CGWindowListOption::OptionOnScreenOnly | CGWindowListOption::ExcludeDesktopElements;
    // NULL outside a GUI session or without a window server.
    let Some(list) = CGWindowListCopyWindowInfo(options, kCGNullWindowID) else {
        return AppAt::Unknown;
    };
    let Some(pid) = owner_at(&list, x, y) else {
        return AppAt::Unknown;
    };
    autoreleasepool(
        |_| match NSRunningApplication::runningApplicationWithProcessIdentifier(pid) {
            None => AppAt::Unknown,
            Some(app) => match app.bundleIdentifier() {
                Some(id) => AppAt::Bundle(id.to_string()),
                None => AppAt::NoBundle,
            },
        },
    )
}

/// The owner pid of the first window of `list` (front to back) on layer 0 whose bounds
/// contain `(x, y)`.
fn owner_at(list: &CFArray, x: f64, y: f64) -> Option<libc::pid_t> {
    // SAFETY: CGWindowListCopyWindowInfo returns an array of CFDictionary; each element
    // is checked with a downcast all the same.
    let list = unsafe { list.cast_unchecked::<CFType>() };
    // SAFETY: immutable CFString constants of CoreGraphics.
    let (layer_key, bounds_key, pid_key) =
        unsafe { (kCGWindowLayer, kCGWindowBounds, kCGWindowOwnerPID) };
    for i in 0..list.len() {
        let Some(window) = list.get(i) else { continue };
        let Some(window) = window.downcast_ref::<CFDictionary>() else {
            continue;
        };
        // SAFETY: window dictionaries have CFString keys and CFType values.
        let window = unsafe { window.cast_unchecked::<CFString, CFType>() };
        if number(window.get(layer_key)) != Some(0) {
            continue;
        }
        let Some(bounds) = window.get(bounds_key) else {
            continue;
        };
        let Some(bounds) = bounds.downcast_ref::<CFDictionary>() else {
            continue;
        };
        let mut rect = CGRect::default();
        // SAFETY: a bounds dictionary (X, Y, Width, Height) and a valid out-pointer.
        if !unsafe { CGRectMakeWithDictionaryRepresentation(Some(bounds), &mut rect) } {
            continue;
        }
        let inside = x >= rect.origin.x
            && x < rect.origin.x + rect.size.width
            && y >= rect.origin.y
            && y < rect.origin.y + rect.size.height;
        if inside {
            return number(window.get(pid_key)).and_then(|p| libc::pid_t::try_from(p).ok());
        }
    }
    None
}

/// An integer dictionary value.
fn number(value: Option<CFRetained<CFType>>) -> Option<i64> {
    value?.downcast_ref::<CFNumber>()?.as_i64()
}
