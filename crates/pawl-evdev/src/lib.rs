//! Pure translation between evdev event streams and pawl's engine frames.
//!
//! Shared by the Linux backend's hot path (`pawl-linux`) and by `pawl replay` / `pawl
//! inspect`, so it compiles and is tested on every platform: no I/O, no OS calls, no
//! `unsafe`.
//!
//! # Brief overview
//!
//! - [`codes`] — the `EV_*`, `REL_*`, `BTN_*` constants and their names.
//! - [`frames::Decoder`] — bytes of `struct input_event` → [`pawl_engine::FrameIn`] per
//!   `SYN_REPORT`, with the raw bytes kept for bit-exact forwarding.
//! - [`frames::encode_frame`] — [`pawl_engine::FrameOut`] → the bytes of one uinput write.
//! - [`keys::linux_key_code`] — chord keys as `KEY_*` codes.
//! - [`touch`] — the swipe style's virtual touchpad frames.
//! - [`stream`] — source-stream rules the Linux pipeline and `pawl replay` share (the
//!   kernel's release-all frame, wheel codes the source lacks).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod codes;
pub mod frames;
pub mod keys;
pub mod record;
pub mod replay;
pub mod stream;
pub mod touch;

pub use frames::{
    Decoded, Decoder, EVENT_SIZE, Event, EventWriter, MAX_OUT_EVENTS, WheelCaps, encode_frame,
};
