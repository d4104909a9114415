//! The platform a config is resolved for (Linux or macOS): its button range and names.
//!
//! Its own module because both the config ([`crate::config`]) and the key table
//! ([`crate::action::Key::available_on`]) depend on it.

use crate::units::Button;

/// The platform a config is resolved for: some defaults differ (action backend,
/// back/forward actions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    /// Linux (evdev/uinput backend).
    Linux,
    /// macOS (CGEventTap backend).
    MacOs,
}

impl Platform {
    /// The platform this binary was compiled for (macOS when `target_os = "macos"`, Linux
    /// otherwise).
    pub const fn current() -> Platform {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Linux
        }
    }

    /// The highest button number the backend sees. Linux: 15, because pawl-evdev decodes
    /// the mouse button codes `BTN_MOUSE..BTN_JOYSTICK` (0x110..0x120,
    /// `input-event-codes.h`) as buttons 0..=15. macOS: 31, the CGEvent button numbers a
    /// [`crate::units::ButtonSet`] holds.
    pub const fn max_button(self) -> u8 {
        match self {
            Platform::Linux => 15,
            Platform::MacOs => Button::MAX,
        }
    }

    /// `Linux` or `macOS`, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Platform::Linux => "Linux",
            Platform::MacOs => "macOS",
        }
    }
}
