//! The raw kernel interfaces pawl needs beyond what rustix wraps: evdev and uinput ioctls,
//! and signalfd. Every `unsafe` block of the crate is here, each a single syscall on a
//! borrowed fd with a buffer whose size is passed alongside.
//!
//! Sources: `include/uapi/linux/input.h`, `include/uapi/linux/uinput.h`,
//! `include/uapi/asm-generic/ioctl.h` (the `_IOC` encoding used on x86 and arm).

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use crate::caps::{ABS_MAX, BitSet, Caps};
use pawl_evdev::codes::{EV_ABS, EV_KEY, EV_MSC, EV_REL};

const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

/// `_IOC(dir, type, nr, size)`.
const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | ((ty as u32) << 8) | nr as u32
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

/// `struct input_absinfo`: one absolute axis.
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

/// `UINPUT_MAX_NAME_SIZE`.
pub const UINPUT_MAX_NAME_SIZE: usize = 80;

#[repr(C)]
struct UinputSetup {
    id: InputId,
    name: [u8; UINPUT_MAX_NAME_SIZE],
    ff_effects_max: u32,
}

#[repr(C)]
struct UinputAbsSetup {
    code: u16,
    absinfo: AbsInfo,
}

// evdev ioctls ('E').
const fn eviocgbit(ev: u16, len: usize) -> u32 {
    ioc(IOC_READ, b'E', 0x20 + ev as u8, len)
}
const EVIOCGID: u32 = ioc(IOC_READ, b'E', 0x02, size_of::<InputId>());
const fn eviocgprop(len: usize) -> u32 {
    ioc(IOC_READ, b'E', 0x09, len)
}
const fn eviocgkey(len: usize) -> u32 {
    ioc(IOC_READ, b'E', 0x18, len)
}
const fn eviocgabs(abs: u16) -> u32 {
    ioc(IOC_READ, b'E', 0x40 + abs as u8, size_of::<AbsInfo>())
}
const EVIOCGRAB: u32 = ioc(IOC_WRITE, b'E', 0x90, size_of::<libc::c_int>());
const EVIOCSCLOCKID: u32 = ioc(IOC_WRITE, b'E', 0xa0, size_of::<libc::c_int>());

// uinput ioctls ('U').
const UI_DEV_CREATE: u32 = ioc(0, b'U', 1, 0);
const UI_DEV_DESTROY: u32 = ioc(0, b'U', 2, 0);
const UI_DEV_SETUP: u32 = ioc(IOC_WRITE, b'U', 3, size_of::<UinputSetup>());
const UI_ABS_SETUP: u32 = ioc(IOC_WRITE, b'U', 4, size_of::<UinputAbsSetup>());
const UI_SET_EVBIT: u32 = ioc(IOC_WRITE, b'U', 100, size_of::<libc::c_int>());
const UI_SET_KEYBIT: u32 = ioc(IOC_WRITE, b'U', 101, size_of::<libc::c_int>());
const UI_SET_RELBIT: u32 = ioc(IOC_WRITE, b'U', 102, size_of::<libc::c_int>());
const UI_SET_ABSBIT: u32 = ioc(IOC_WRITE, b'U', 103, size_of::<libc::c_int>());
const UI_SET_MSCBIT: u32 = ioc(IOC_WRITE, b'U', 104, size_of::<libc::c_int>());
const UI_SET_PHYS: u32 = ioc(IOC_WRITE, b'U', 108, size_of::<*const libc::c_char>());
const UI_SET_PROPBIT: u32 = ioc(IOC_WRITE, b'U', 110, size_of::<libc::c_int>());
const fn ui_get_sysname(len: usize) -> u32 {
    ioc(IOC_READ, b'U', 44, len)
}

/// `CLOCK_MONOTONIC`.
const CLOCK_MONOTONIC: libc::c_int = 1;

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `ioctl(fd, request, arg)` with an integer argument passed by value.
fn ioctl_int(fd: BorrowedFd<'_>, request: u32, arg: libc::c_int) -> io::Result<libc::c_int> {
    // SAFETY: the request takes its argument by value; no memory is shared.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) })
}

/// `ioctl(fd, request, ptr)` where the kernel reads or writes at most `size_of::<T>()`
/// bytes at `ptr` (the size encoded in `request`).
fn ioctl_ptr<T>(fd: BorrowedFd<'_>, request: u32, arg: *mut T) -> io::Result<libc::c_int> {
    debug_assert_eq!(((request >> 16) & 0x3fff) as usize, size_of::<T>());
    // SAFETY: `arg` points at a live `T`, and `request` encodes `size_of::<T>()`, so the
    // kernel touches only that object.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) })
}

/// `ioctl(fd, request(len), buf)` for the variable-length getters (`EVIOCGBIT`,
/// `EVIOCGKEY`, `EVIOCGPROP`, `UI_GET_SYSNAME`) whose length is encoded by `request`.
fn ioctl_buf(fd: BorrowedFd<'_>, request: u32, buf: &mut [u8]) -> io::Result<usize> {
    debug_assert_eq!(((request >> 16) & 0x3fff) as usize, buf.len());
    // SAFETY: `request` encodes `buf.len()`, so the kernel writes at most that many bytes.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, buf.as_mut_ptr()) })
        .map(|n| n as usize)
}

/// Reads a device's capabilities (`EVIOCGBIT` per type, `EVIOCGPROP`) and the absinfo of
/// each absolute axis (`EVIOCGABS`).
pub fn read_caps(fd: BorrowedFd<'_>) -> io::Result<(Caps, [AbsInfo; ABS_MAX as usize + 1])> {
    let mut bytes = [0u8; 96];
    let mut caps = Caps::default();
    macro_rules! get {
        ($req:expr, $len:expr) => {{
            bytes.fill(0);
            ioctl_buf(fd, $req, &mut bytes[..$len])?;
            BitSet::from_le_bytes(&bytes[..$len])
        }};
    }
    caps.ev = get!(eviocgbit(0, 8), 8);
    caps.key = get!(eviocgbit(EV_KEY, 96), 96);
    caps.rel = get!(eviocgbit(EV_REL, 8), 8);
    caps.abs = get!(eviocgbit(EV_ABS, 8), 8);
    caps.msc = get!(eviocgbit(EV_MSC, 8), 8);
    caps.props = get!(eviocgprop(8), 8);
    let mut abs = [AbsInfo::default(); ABS_MAX as usize + 1];
    for code in caps.abs.iter() {
        ioctl_ptr(fd, eviocgabs(code), &mut abs[usize::from(code)])?;
    }
    Ok((caps, abs))
}

/// `EVIOCGID`.
pub fn input_id(fd: BorrowedFd<'_>) -> io::Result<InputId> {
    let mut id = InputId::default();
    ioctl_ptr(fd, EVIOCGID, &mut id)?;
    Ok(id)
}

/// `EVIOCGKEY`: the keys and buttons currently down.
pub fn key_state(fd: BorrowedFd<'_>) -> io::Result<BitSet<12>> {
    let mut bytes = [0u8; 96];
    ioctl_buf(fd, eviocgkey(96), &mut bytes)?;
    Ok(BitSet::from_le_bytes(&bytes))
}

/// `EVIOCGRAB`: `true` takes the device exclusively (only this fd receives its events),
/// `false` releases it. Errors: `EBUSY` when another process holds the grab.
pub fn grab(fd: BorrowedFd<'_>, on: bool) -> io::Result<()> {
    ioctl_int(fd, EVIOCGRAB, on.into()).map(drop)
}

/// `EVIOCSCLOCKID(CLOCK_MONOTONIC)`: event timestamps on the clock timerfd deadlines use.
pub fn set_clock_monotonic(fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut clock = CLOCK_MONOTONIC;
    ioctl_ptr(fd, EVIOCSCLOCKID, &mut clock).map(drop)
}

/// Everything a uinput device is created from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UinputSpec {
    /// Device name (truncated to 79 bytes).
    pub name: String,
    /// Bus, vendor, product, version.
    pub id: InputId,
    /// Physical path (`UI_SET_PHYS`).
    pub phys: String,
    /// Capabilities (`EV_KEY`, `EV_REL`, `EV_ABS`, `EV_MSC` codes and props).
    pub caps: Caps,
    /// Absinfo of each axis in `caps.abs`.
    pub abs: [AbsInfo; ABS_MAX as usize + 1],
}

/// Sets up and creates a uinput device on `fd` (an open `/dev/uinput`): capability bits,
/// props, `UI_SET_PHYS`, `UI_DEV_SETUP`, `UI_ABS_SETUP` per axis, `UI_DEV_CREATE`.
pub fn uinput_create(fd: BorrowedFd<'_>, spec: &UinputSpec) -> io::Result<()> {
    for ty in spec.caps.ev.iter() {
        ioctl_int(fd, UI_SET_EVBIT, ty.into())?;
    }
    for (req, bits) in [
        (UI_SET_RELBIT, &spec.caps.rel.0[..]),
        (UI_SET_ABSBIT, &spec.caps.abs.0[..]),
        (UI_SET_MSCBIT, &spec.caps.msc.0[..]),
        (UI_SET_PROPBIT, &spec.caps.props.0[..]),
        (UI_SET_KEYBIT, &spec.caps.key.0[..]),
    ] {
        for (w, word) in bits.iter().enumerate() {
            for b in 0..64 {
                if word & (1 << b) != 0 {
                    ioctl_int(fd, req, (w * 64 + b) as libc::c_int)?;
                }
            }
        }
    }
    let phys = CString::new(spec.phys.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "phys contains NUL"))?;
    // SAFETY: UI_SET_PHYS reads a NUL-terminated string (strndup_user, at most 1024 bytes)
    // from the pointer; `phys` is one and outlives the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), UI_SET_PHYS as _, phys.as_ptr()) })?;
    let mut setup = UinputSetup {
        id: spec.id,
        name: [0; UINPUT_MAX_NAME_SIZE],
        ff_effects_max: 0,
    };
    let name = truncate_utf8(&spec.name, UINPUT_MAX_NAME_SIZE - 1);
    setup.name[..name.len()].copy_from_slice(name.as_bytes());
    ioctl_ptr(fd, UI_DEV_SETUP, &mut setup)?;
    for code in spec.caps.abs.iter() {
        let mut abs = UinputAbsSetup {
            code,
            absinfo: spec.abs[usize::from(code)],
        };
        ioctl_ptr(fd, UI_ABS_SETUP, &mut abs)?;
    }
    ioctl_int(fd, UI_DEV_CREATE, 0).map(drop)
}

/// `UI_DEV_DESTROY`.
pub fn uinput_destroy(fd: BorrowedFd<'_>) -> io::Result<()> {
    ioctl_int(fd, UI_DEV_DESTROY, 0).map(drop)
}

/// `UI_GET_SYSNAME`: the created device's `inputN` name (Linux ≥ 3.15).
pub fn uinput_sysname(fd: BorrowedFd<'_>) -> io::Result<String> {
    let mut buf = [0u8; 64];
    ioctl_buf(fd, ui_get_sysname(buf.len()), &mut buf)?;
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub fn truncate_utf8(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The signals pawl's loop handles through its signalfd.
pub const SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGCHLD];

/// Blocks [`SIGNALS`] for the calling thread (call before any other thread exists, so all
/// inherit the mask) and returns a non-blocking, close-on-exec signalfd that reports them.
/// Children started with `std::process::Command` get an empty mask again (std resets it).
pub fn signalfd() -> io::Result<OwnedFd> {
    // SAFETY: `set` is a local sigset_t initialised by sigemptyset before use; the calls
    // only read it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        let ret = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if ret != 0 {
            return Err(io::Error::from_raw_os_error(ret));
        }
        let fd = check(libc::signalfd(
            -1,
            &set,
            libc::SFD_NONBLOCK | libc::SFD_CLOEXEC,
        ))?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// Makes a command start in its own session (`setsid` between fork and exec), so it
/// outlives pawl's terminal and gets no signals meant for pawl's process group.
pub fn new_session_on_exec(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and only makes the async-signal-safe
    // setsid syscall; it allocates nothing and touches no lock.
    unsafe {
        cmd.pre_exec(|| rustix::process::setsid().map(drop).map_err(io::Error::from));
    }
}

/// Size of `struct signalfd_siginfo`.
pub const SIGINFO_SIZE: usize = 128;

/// The signal number of a `struct signalfd_siginfo` read from a signalfd (`ssi_signo`, the
/// first `u32`).
pub fn siginfo_signo(buf: &[u8; SIGINFO_SIZE]) -> libc::c_int {
    u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as libc::c_int
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_kernel_headers() {
        // Values from the C headers, compiled on x86_64 Linux.
        assert_eq!(EVIOCGRAB, 0x4004_4590);
        assert_eq!(EVIOCSCLOCKID, 0x4004_45a0);
        assert_eq!(EVIOCGID, 0x8008_4502);
        assert_eq!(eviocgbit(EV_KEY, 96), 0x8060_4521);
        assert_eq!(eviocgkey(96), 0x8060_4518);
        assert_eq!(eviocgabs(0), 0x8018_4540);
        assert_eq!(UI_DEV_CREATE, 0x5501);
        assert_eq!(UI_DEV_DESTROY, 0x5502);
        assert_eq!(UI_DEV_SETUP, 0x405c_5503);
        assert_eq!(UI_ABS_SETUP, 0x401c_5504);
        assert_eq!(UI_SET_EVBIT, 0x4004_5564);
        assert_eq!(UI_SET_PHYS, 0x4008_556c);
        assert_eq!(UI_SET_PROPBIT, 0x4004_556e);
        assert_eq!(ui_get_sysname(64), 0x8040_552c);
    }

    #[test]
    fn names_are_truncated_on_char_boundaries() {
        assert_eq!(truncate_utf8("abc", 79), "abc");
        assert_eq!(truncate_utf8("aé", 2), "a");
        assert_eq!(truncate_utf8(&"x".repeat(100), 79).len(), 79);
    }
}
