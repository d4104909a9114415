//! pawl's macOS backend: the CGEventTap worker, the IOKit device check and the permission
//! report.
//!
//! # Brief overview
//!
//! - [`worker::Worker`] — every decision of the worker: taps and their gating, what each
//!   event becomes, recovery from disabled taps, wake and permission changes. It reaches
//!   the OS only through the [`tap::Tap`] / [`tap::TapEvent`] traits.
//! - [`scroll`] — scroll fields in (point → fixed-point → line) and out (line first).
//! - [`senders`] — the scope decision per sender registry ID, cached per ID.
//! - [`actions`], [`keys`] — `system-events`, `cg-event` and `command` action backends.
//! - [`focus`] — `[[app]]` profiles from the frontmost application's bundle identifier.
//! - [`pointer`] — the application under the pointer decides scroll, once per scroll
//!   gesture.
//! - [`hidpp`] — HID++ 2.0 on IOHIDDevice (`[hidpp] enabled`): the MX Master's gesture
//!   button diverted with raw XY, the thumb wheel, re-divert on reconnect and wake,
//!   un-divert on exit; it reaches the OS only through [`hidpp::HidPort`] and [`tap::Tap`].
//! - [`permissions`], [`devices`] — the reports of `pawl status` / `pawl devices`.
//! - `process` (macOS only) — a process's start time, for `pawl status` / `pawl off`.
//! - `sys` (macOS only) — the real [`tap::Tap`] on CGEventTap and a CFRunLoop, IOKit and
//!   ApplicationServices calls, the IOHIDManager/IOHIDDevice glue of [`hidpp`], and
//!   `start` / `Daemon::run` (macOS only).
//!
//! Everything but `sys` is platform-neutral and tested on Linux with a fake tap and a fake
//! HID device; `sys` is type-checked for both Apple targets by `cargo xtask check-macos`
//! and has never run in this project's CI (no Mac).

#![deny(missing_docs)]

pub mod actions;
pub mod cg;
pub mod devices;
pub mod focus;
pub mod hidpp;
pub mod keys;
pub mod permissions;
pub mod pointer;
#[cfg(target_os = "macos")]
pub mod process;
pub mod scroll;
pub mod senders;
pub mod tap;
pub mod worker;

#[cfg(target_os = "macos")]
mod sys;

#[cfg(target_os = "macos")]
pub use sys::hid::hidpp_permission;
#[cfg(target_os = "macos")]
pub use sys::{Daemon, RunError, device_report, permissions, start};

#[cfg(test)]
mod alloc_tests;
#[cfg(test)]
mod fake;
#[cfg(test)]
mod fake_hid;
#[cfg(test)]
mod fake_hid_tests;
#[cfg(test)]
mod fake_tap_tests;
