//! macOS backend: CGEventTap in and out. (Being built: see issue 6.)

#[cfg(target_os = "macos")]
pub mod process;
