//! The `hid_descriptor` target: bytes as read from a HID device's sysfs
//! `report_descriptor` into the kernel-mode loader's walker (`pawl_bpf::layout`, included
//! from its source file: the crate itself links libbpf, which the fuzz build does not need).
//!
//! Checked: no panic; a descriptor over [`layout::MAX_DESCRIPTOR_BYTES`] is refused as too
//! long; what it returns has a wheel, every field it names lies within the largest report
//! (4096 bytes), the wheel and AC Pan lie where the program can reach them, and a field
//! keeps the report id byte out of its bits when reports are numbered; and the walk is
//! deterministic.

#[path = "../../crates/pawl-bpf/src/layout.rs"]
#[allow(dead_code)]
pub mod layout;

use layout::{LayoutError, MAX_DESCRIPTOR_BYTES, mouse_layout};

/// Runs one input: the whole input is the descriptor.
pub fn run(data: &[u8]) {
    let result = mouse_layout(data);
    assert_eq!(result, mouse_layout(data), "the walk is deterministic");
    if data.len() > MAX_DESCRIPTOR_BYTES {
        assert_eq!(result, Err(LayoutError::TooLong(data.len())));
        return;
    }
    let Ok(l) = result else {
        return;
    };
    assert!(l.wheel.bits > 0, "a layout without a wheel: {l:?}");
    for f in [l.wheel, l.pan] {
        assert!(
            f.in_program_reach(),
            "wheel or pan out of the program's reach: {l:?}"
        );
    }
    for f in [l.wheel, l.pan, l.x, l.y, l.buttons] {
        if f.bits == 0 {
            continue;
        }
        assert!(
            u32::from(f.bit) + u32::from(f.bits) <= 4096 * 8 + 8,
            "a field past the largest report: {l:?}"
        );
        if l.report_id != 0 {
            assert!(f.bit >= 8, "a field over the report id byte: {l:?}");
        }
    }
}
