//! pawl's kernel mode (Linux, kernel ≥ 6.11 with `CONFIG_HID_BPF`): a HID-BPF program
//! (`struct_ops hid_bpf_ops`) transforms the wheel of a handled mouse in the kernel with the
//! engine's scroll pipeline and hands HID++ gesture notifications to pawl through a BPF
//! ringbuf, so that motion and wheel frames never wake pawl.
//!
//! - [`scroll`]: the pipeline's settings and state as the program's maps hold them
//!   (`#[repr(C)]` twins of `src/bpf/scroll.h`), converted from the engine's
//!   [`pawl_engine::scroll::ScrollParams`].
//!
//! On other targets the crate is empty.

#[cfg(target_os = "linux")]
pub mod scroll;
