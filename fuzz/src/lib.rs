//! pawl's fuzz harnesses: the code behind each target in `fuzz_targets/`, with the
//! invariants each checks. `cargo xtask fuzz` builds and runs them (FUZZING.md).
//!
//! - [`hidpp`] — HID++ reports into a `pawl_hidpp::Session` at every state.
//! - [`decoder`] — evdev bytes into `pawl_evdev::Decoder`, whole and in pieces.
//! - [`pipeline`] — evdev bytes through the Linux hot path (`pawl_linux::pipeline`) into a
//!   recording sink.
//! - [`config`] — `Config::parse` on any text.
//! - [`recording`] — each recording format's parser, and `pawl_evdev::replay::replay` on
//!   what parses.
//! - [`descriptor`] — HID report descriptors into the kernel-mode loader's walker.
//!
//! Inputs that need a header (the pipeline's device and config) take it from their first
//! bytes, so a recorded event stream with a few bytes in front is a seed.

#![forbid(unsafe_code)]

pub mod config;
pub mod decoder;
pub mod descriptor;
pub mod hidpp;
pub mod pipeline;
pub mod recording;

use pawl_evdev::{EVENT_SIZE, Event};

/// The events of a byte buffer of whole `struct input_event`s.
pub fn events(bytes: &[u8]) -> impl Iterator<Item = Event> + '_ {
    bytes
        .chunks_exact(EVENT_SIZE)
        .map(|c| Event::from_bytes(c.try_into().expect("chunks_exact gives EVENT_SIZE")))
}
