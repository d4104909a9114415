//! macOS backend: CGEventTap in and out. (Being built: see issue 6.)
