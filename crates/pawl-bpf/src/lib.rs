//! pawl's kernel mode (Linux, kernel ≥ 6.11 with `CONFIG_HID_BPF`): a HID-BPF program
//! (`struct_ops hid_bpf_ops`, `src/bpf/pawl.bpf.c`) transforms the wheel of a handled mouse
//! in the kernel with the engine's scroll pipeline (glide tails included: a BPF timer and
//! work item inject them) and hands HID++ gesture notifications to
//! pawl through a BPF ringbuf, so that motion and wheel frames never wake pawl.
//!
//! - [`scroll`]: the pipeline's settings and state as the program holds them (`#[repr(C)]`
//!   twins of `src/bpf/scroll.h`), and that header compiled natively for the tests.
//! - [`maps`]: the ringbuf record, the settings value and the stats (`src/bpf/pawl.h`).
//! - [`layout`]: the mouse report's layout from the device's report descriptor.
//! - [`pins`]: where an attachment is pinned, and [`pins::KernelDevice`], the daemon's handle
//!   on one device's maps.
//! - [`attach`]: what the loader `pawl-kernel-attach` does.
//!
//! On other targets the crate is empty.

#[cfg(target_os = "linux")]
pub mod attach;
#[cfg(target_os = "linux")]
pub mod layout;
#[cfg(target_os = "linux")]
pub mod maps;
#[cfg(target_os = "linux")]
pub mod pins;
#[cfg(target_os = "linux")]
pub mod scroll;
