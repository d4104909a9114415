//! pawl's Logitech HID++ 2.0 protocol: framing, the features pawl uses, the per-device
//! session that diverts the MX Master gesture button, and a device emulator for tests.
//!
//! No I/O, no clock, no OS types, no `unsafe`: the Linux backend reads hidraw reports and
//! hands them to [`Session::input`] with the time; it writes [`Output::request`] back to
//! hidraw and feeds [`Output::frame`] to the device's [`pawl_engine::DeviceEngine`] exactly
//! like an evdev frame.
//!
//! # Brief overview
//!
//! - [`report`] — short (0x10, 7 bytes) and long (0x11, 20 bytes) messages, device
//!   indices, software ids, the HID++ reports of a report descriptor ([`report::hidpp_framing`]).
//! - [`feature`] — feature ids (Root 0x0000, 0x0005, 0x1B04, 0x1D4B, 0x2121, 0x2150) and
//!   function numbers.
//! - [`controls`] — 0x1B04 control ids (the gesture button is 0x00C3), control list entries
//!   and the temporary-divert request.
//! - [`error`] — HID++ 1.0 and 2.0 error replies as messages a user can act on.
//! - [`Session`] — setup (ping, feature lookup, name, control list, divert), notifications
//!   → engine frames, re-divert on reconnection, un-divert on exit.
//! - [`battery`] — the 0x1004 battery status a session reads where asked
//!   ([`SessionConfig::read_battery`]).
//! - [`settings`] — the 0x2201 dpi list and what a wanted dpi becomes on it.
//! - [`emulator`] — an MX Master 3S model answering the same requests, for unit tests and
//!   the VM's uhid device.
//!
//! # Example
//!
//! ```
//! use pawl_engine::units::{Button, Micros};
//! use pawl_hidpp::emulator::Emulator;
//! use pawl_hidpp::report::{DEVICE_INDEX_DIRECT, Framing};
//! use pawl_hidpp::{Output, Phase, Session, SessionConfig};
//!
//! let bluetooth = Framing { short: false, long: true };
//! let mut device = Emulator::mx_master_3s(bluetooth, DEVICE_INDEX_DIRECT);
//! let mut session = Session::new(SessionConfig::gesture(Button(5)), bluetooth, DEVICE_INDEX_DIRECT);
//! let mut out = Output::default();
//! session.start(Micros(0), &mut out);
//! // The daemon writes each request to hidraw and reads the reply back.
//! while let Some(request) = out.request.take() {
//!     let (bytes, len) = request.encode();
//!     let reply = device.answer(&bytes[..len]).unwrap();
//!     let (bytes, len) = reply.encode();
//!     out = Output::default();
//!     session.input(&bytes[..len], Micros(1), &mut out);
//! }
//! assert_eq!(session.phase(), Phase::Ready);
//! assert_eq!(session.name(), "MX Master 3S");
//! assert!(device.reporting(0x00C3).unwrap().divert);
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod battery;
pub mod controls;
pub mod emulator;
pub mod error;
pub mod feature;
pub mod report;
pub mod session;
pub mod settings;

pub use session::{
    Control, DivertSpec, Event, Output, Phase, Request, Session, SessionConfig, ThumbInfo,
    ThumbStatus, ThumbWheel, gesture_committed,
};
