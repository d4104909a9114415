//! The systemd boot (`--set systemd`, the HID-BPF tier only): the Debian root booted with
//! systemd as PID 1, so kernel mode runs under the real systemd-udevd.service sandbox and
//! logind's seats.
//!
//! Adding a module: `mod NAME;` here, a `SCENARIOS` list at its top and
//! `NAME::SCENARIOS,` in [`SCENARIOS`] below.

use crate::scenarios::Scenario;

pub mod seat;

/// The boot's scenarios, module by module, in run order.
pub const SCENARIOS: &[&[Scenario]] = &[seat::SCENARIOS];
