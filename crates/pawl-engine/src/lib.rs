//! pawl's engine: everything pawl does to pointer input, as pure functions of input and time.
//!
//! No I/O, no clock, no OS types, no `unsafe`: a platform backend (`pawl-linux`,
//! `pawl-macos`) translates OS events into [`FrameIn`]s, calls [`DeviceEngine::frame`], and
//! writes what comes back. The same engine runs under `pawl replay` and every test.
//!
//! # Brief overview
//!
//! - [`Config`] — the validated configuration, parsed from TOML by [`Config::parse`]
//!   (errors carry `file:line:column`); [`Config::decide`] says whether a device is handled.
//! - [`DeviceInfo`], [`device::MX_MASTER_FAMILY`] — device identity and the MX Master table.
//! - [`DeviceEngine`] — per-device state: the gesture recognizer, button mapping and two
//!   [`scroll::ScrollAxis`] pipelines (spike damping → EMA → clamp → inversion → carry).
//! - [`FrameIn`] / [`FrameOut`] / [`Verdict`] — one frame in; forward it unchanged or write
//!   the rewritten frame and perform its [`Action`]s.
//!
//! # Example
//!
//! ```
//! use pawl_engine::{Action, Config, DeviceEngine, FrameIn, FrameOut, Platform, Verdict};
//! use pawl_engine::engine::buttons;
//! use pawl_engine::units::Micros;
//!
//! let config = Config::default_for(Platform::Linux);
//! let mut engine = DeviceEngine::with_profile(&config, true, config.scroll);
//! let mut out = FrameOut::default();
//! // Hold the gesture button (5), drag 300 px right, release.
//! let press = FrameIn { buttons: buttons(&[(5, true)]), ..FrameIn::default() };
//! assert_eq!(engine.frame(&press, &mut out), Verdict::Rewrite);
//! let drag = FrameIn { time: Micros(8_000), dx: 300, ..FrameIn::default() };
//! assert_eq!(engine.frame(&drag, &mut out), Verdict::Rewrite);
//! // Desktop direction is inverted by default: dragging right shows the desktop on the left.
//! assert_eq!(out.actions.as_slice(), &[Action::DesktopLeft]);
//! assert_eq!((out.dx, out.dy), (0, 0));
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod action;
pub mod config;
pub mod device;
pub mod engine;
pub mod frame;
pub mod platform;
pub mod scroll;
pub mod swipe;
mod text;
pub mod units;

pub use action::{Action, Chord, Desktop, Key};
pub use config::{AppKey, Config, ConfigError, ConfigErrors, HidppConfig, Platform};
pub use device::{Bus, DeviceInfo};
pub use engine::{DeviceEngine, ProfileId};
pub use frame::{FrameIn, FrameOut, TouchOut, Verdict, WheelIn, WheelOut};
