//! Raw kernel interfaces: ioctl request numbers, `struct input_event`, and thin `libc`
//! wrappers that turn `-1` into [`std::io::Error`].
//!
//! Request numbers follow `include/uapi/asm-generic/ioctl.h` (x86-64 layout: dir in bits
//! 30..31, size in 16..29, type in 8..15, number in 0..7); the structs follow
//! `include/uapi/linux/input.h`, `uinput.h` and `uhid.h` of Linux 6.1.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::Duration;

const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

const fn ioc(dir: u32, ty: u8, nr: u32, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | ((ty as u32) << 8) | nr
}

/// `EVIOCGID`: `struct input_id` (bustype, vendor, product, version: four `u16`).
pub const EVIOCGID: u32 = ioc(IOC_READ, b'E', 0x02, 8);
/// `EVIOCGNAME(len)`.
pub const fn eviocgname(len: usize) -> u32 {
    ioc(IOC_READ, b'E', 0x06, len)
}
/// `EVIOCGPHYS(len)`.
pub const fn eviocgphys(len: usize) -> u32 {
    ioc(IOC_READ, b'E', 0x07, len)
}
/// `EVIOCGBIT(ev, len)`: the code bitmap of event type `ev` (0: the type bitmap).
pub const fn eviocgbit(ev: u16, len: usize) -> u32 {
    ioc(IOC_READ, b'E', 0x20 + ev as u32, len)
}
/// `EVIOCGRAB`: argument 1 grabs, 0 releases; `EBUSY` when another fd holds the grab.
pub const EVIOCGRAB: u32 = ioc(IOC_WRITE, b'E', 0x90, 4);

/// `UI_DEV_CREATE`.
pub const UI_DEV_CREATE: u32 = ioc(0, b'U', 1, 0);
/// `UI_DEV_SETUP`: `struct uinput_setup`.
pub const UI_DEV_SETUP: u32 = ioc(IOC_WRITE, b'U', 3, size_of::<UinputSetup>());
/// `UI_ABS_SETUP`: `struct uinput_abs_setup`.
pub const UI_ABS_SETUP: u32 = ioc(IOC_WRITE, b'U', 4, size_of::<UinputAbsSetup>());
/// `UI_GET_SYSNAME(len)`: the `inputN` name under `/sys/devices/virtual/input`.
pub const fn ui_get_sysname(len: usize) -> u32 {
    ioc(IOC_READ, b'U', 44, len)
}
/// `UI_SET_EVBIT` … `UI_SET_PROPBIT`: `_IOW('U', nr, int)`.
pub const UI_SET_EVBIT: u32 = ioc(IOC_WRITE, b'U', 100, 4);
/// See [`UI_SET_EVBIT`].
pub const UI_SET_KEYBIT: u32 = ioc(IOC_WRITE, b'U', 101, 4);
/// See [`UI_SET_EVBIT`].
pub const UI_SET_RELBIT: u32 = ioc(IOC_WRITE, b'U', 102, 4);
/// See [`UI_SET_EVBIT`].
pub const UI_SET_ABSBIT: u32 = ioc(IOC_WRITE, b'U', 103, 4);
/// See [`UI_SET_EVBIT`].
pub const UI_SET_MSCBIT: u32 = ioc(IOC_WRITE, b'U', 104, 4);
/// `UI_SET_PHYS`: `_IOW('U', 108, char*)`, a pointer to a NUL-terminated string.
pub const UI_SET_PHYS: u32 = ioc(IOC_WRITE, b'U', 108, size_of::<usize>());
/// See [`UI_SET_EVBIT`].
pub const UI_SET_PROPBIT: u32 = ioc(IOC_WRITE, b'U', 110, 4);

/// `struct input_event` on 64-bit: `struct timeval` then type, code, value (24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct InputEvent {
    /// Seconds.
    pub sec: i64,
    /// Microseconds.
    pub usec: i64,
    /// `EV_*`.
    pub type_: u16,
    /// Code within the type.
    pub code: u16,
    /// Value.
    pub value: i32,
}

/// `struct input_absinfo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbsInfo {
    /// Current value.
    pub value: i32,
    /// Minimum.
    pub minimum: i32,
    /// Maximum.
    pub maximum: i32,
    /// Noise filter.
    pub fuzz: i32,
    /// Dead zone.
    pub flat: i32,
    /// Units per mm (or per radian).
    pub resolution: i32,
}

/// `struct input_id`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputId {
    /// `BUS_*`.
    pub bustype: u16,
    /// Vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// Version.
    pub version: u16,
}

/// `struct uinput_setup`.
#[repr(C)]
pub struct UinputSetup {
    /// Device id.
    pub id: InputId,
    /// NUL-terminated name (`UINPUT_MAX_NAME_SIZE` = 80).
    pub name: [u8; 80],
    /// Force-feedback effects (0: none).
    pub ff_effects_max: u32,
}

/// `struct uinput_abs_setup`.
#[repr(C)]
pub struct UinputAbsSetup {
    /// `ABS_*` code.
    pub code: u16,
    /// Axis parameters.
    pub absinfo: AbsInfo,
}

/// Opens `path` with `flags` (`O_CLOEXEC` added).
pub fn open(path: &Path, flags: i32) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated string; the returned fd is owned by us.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by open and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `ioctl(fd, req, arg)` with a pointer argument.
///
/// # Safety
/// `arg` must point to memory of the size and layout `req` encodes.
pub unsafe fn ioctl_ptr<T>(fd: &impl AsRawFd, req: u32, arg: *mut T) -> io::Result<i32> {
    // SAFETY: the caller guarantees `arg` matches `req`.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as libc::Ioctl, arg) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// `ioctl(fd, req, value)` with an integer argument (the `UI_SET_*BIT`, `EVIOCGRAB` family).
pub fn ioctl_int(fd: &impl AsRawFd, req: u32, value: libc::c_int) -> io::Result<i32> {
    // SAFETY: these requests take a plain int by value.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as libc::Ioctl, value) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// Writes all of `buf` in one `write()`; a short write is an error.
pub fn write_all_once(fd: &impl AsRawFd, buf: &[u8]) -> io::Result<()> {
    // SAFETY: `buf` is valid for `buf.len()` bytes.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != buf.len() {
        return Err(io::Error::new(
            io::ErrorKind::WriteZero,
            format!("short write: {n} of {} bytes", buf.len()),
        ));
    }
    Ok(())
}

/// One `read()` into `buf`; `Ok(None)` on `EAGAIN`.
pub fn read_once(fd: &impl AsRawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::WouldBlock {
            return Ok(None);
        }
        return Err(err);
    }
    Ok(Some(n as usize))
}

/// Waits until `fd` is readable or `timeout` passes; `Ok(true)` when readable.
pub fn poll_readable(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    loop {
        // SAFETY: `pfd` is one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        return Ok(r > 0);
    }
}

/// Copies `s` into a fixed-size, NUL-terminated C char array (truncating).
pub fn c_array<const N: usize>(s: &str) -> [u8; N] {
    let mut out = [0u8; N];
    let n = s.len().min(N - 1);
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
    out
}

/// The bytes of a NUL-terminated C string in `buf` (up to the first NUL).
pub fn c_str(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
