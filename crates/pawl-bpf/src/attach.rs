//! What `pawl-kernel-attach` does, as functions: check that the kernel has HID-BPF, that the
//! running executable is root's, find the device's layout, keep only the capabilities the
//! rest needs ([`restrict_caps`]), load the program for it with only CAP_BPF +
//! CAP_PERFMON effective, attach it, pin it for the seat user, and undo all
//! of that on remove; which attachments `reseat` replaces for a new seat user
//! ([`reseat_plan`]), and the lock every command holds ([`lock`]).

use std::ffi::CString;
use std::fmt;
use std::fs;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags};
use pawl_engine::scroll::ScrollParams;

use crate::layout::{self, Field, MouseLayout};
use crate::maps::Settings;
use crate::pins::{self, GLIDE, LINK, RING, SETTINGS, STATS};

#[allow(
    clippy::all,
    clippy::pedantic,
    missing_debug_implementations,
    unsafe_op_in_unsafe_fn,
    unused_qualifications
)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/pawl.skel.rs"));
}

/// Where HID devices are in sysfs.
pub const SYSFS_HID: &str = "/sys/bus/hid/devices";
/// The kernel's BTF (vmlinux and one file per module).
const SYSFS_BTF: &str = "/sys/kernel/btf";
/// The driver hid-logitech-hidpp registers (`hidpp_driver.name`): with it bound, a HID++
/// wheel is in hi-res mode and each device unit is 8 v120 (multiplier 15, 0x2121).
pub const HIDPP_DRIVER: &str = "logitech-hidpp-device";
/// v120 per device wheel unit behind hid-logitech-hidpp in hi-res mode (120 / 15; the
/// multiplier of the MX Master 3 and 3S, HID++ 0x2121 getWheelCapability).
pub const HIDPP_HIRES_UNIT_V120: u8 = 8;
/// v120 per AC Pan unit: hid-input makes REL_HWHEEL_HI_RES = 120 × REL_HWHEEL for a pan
/// without a resolution multiplier, and hid-logitech-hidpp scales only the vertical wheel.
pub const PAN_UNIT_V120: u8 = 120;
/// `BPF_FS_MAGIC` (include/uapi/linux/magic.h).
const BPF_FS_MAGIC: i64 = 0xcafe_4a11;
/// What the loader keeps ([`restrict_caps`]): CAP_BPF + CAP_PERFMON to load, attach and
/// pin (a struct_ops map and program; measured on 7.3.4: nothing more), CAP_CHOWN to hand
/// pins to the seat user and to take back an older loader's user-owned directory before
/// removing it.
pub const KEPT_CAPS: &str = "CAP_BPF, CAP_PERFMON, CAP_CHOWN";

/// Why the loader stopped. [`Failure::status`] is its exit status.
#[derive(Debug)]
pub enum Failure {
    /// The kernel has no `struct hid_bpf_ops` (kernel < 6.11 or `CONFIG_HID_BPF` unset).
    NoHidBpf,
    /// The executable or a directory above it is not root's or is group/other-writable.
    Untrusted(PathBuf, String),
    /// The device has no wheel the program can reach (not a mouse for kernel mode).
    NotApplicable(String),
    /// Anything else: the step and its error.
    Failed(String),
}

impl Failure {
    /// The exit status: 3 no HID-BPF, 4 untrusted install, 5 not applicable, 1 otherwise.
    pub fn status(&self) -> i32 {
        match self {
            Failure::NoHidBpf => 3,
            Failure::Untrusted(..) => 4,
            Failure::NotApplicable(_) => 5,
            Failure::Failed(_) => 1,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NoHidBpf => write!(
                f,
                "this kernel has no HID-BPF (struct hid_bpf_ops: Linux 6.11 or newer with \
                 CONFIG_HID_BPF=y); kernel mode is not available, pawl uses grab mode"
            ),
            Failure::Untrusted(p, why) => write!(
                f,
                "refusing to run as root from {}: {why} (install pawl-kernel-attach root-owned, \
                 e.g. from the package, in a directory only root can write)",
                p.display()
            ),
            Failure::NotApplicable(why) => write!(f, "not handled in kernel mode: {why}"),
            Failure::Failed(why) => f.write_str(why),
        }
    }
}

fn failed(step: &str, e: impl fmt::Display) -> Failure {
    Failure::Failed(format!("{step}: {e}"))
}

/// Whether the running kernel (or one of its modules: `hid` is a module on Debian) has
/// `struct hid_bpf_ops` in its BTF: the name in a BTF string section. Reads `hid` and
/// `vmlinux` first (where hid-core is), then the other modules, each through one 64 KiB
/// buffer ([`contains`]), so the daemon's memory never holds a whole BTF file (vmlinux's is
/// about 6 MB).
pub fn has_hid_bpf() -> bool {
    let needle = b"\0hid_bpf_ops\0";
    let found = |p: &Path| fs::File::open(p).is_ok_and(|f| contains(f, needle).unwrap_or(false));
    let dir = Path::new(SYSFS_BTF);
    if ["hid", "vmlinux"].iter().any(|m| found(&dir.join(m))) {
        return true;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries
        .flatten()
        .filter(|e| e.file_name() != "hid" && e.file_name() != "vmlinux")
        .any(|e| found(&e.path()))
}

/// Whether `needle` (non-empty, at most 1 KiB) occurs in what `r` yields, read through one
/// 64 KiB buffer (a match across two reads is found: the last `needle.len() − 1` bytes are
/// kept). Errors: the reader's.
pub fn contains(mut r: impl io::Read, needle: &[u8]) -> io::Result<bool> {
    const BUF: usize = 64 * 1024;
    assert!(!needle.is_empty() && needle.len() <= 1024);
    let mut buf = vec![0u8; BUF];
    let mut kept = 0;
    loop {
        let n = match r.read(&mut buf[kept..]) {
            Ok(0) => return Ok(false),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let end = kept + n;
        if buf[..end].windows(needle.len()).any(|w| w == needle) {
            return Ok(true);
        }
        kept = (needle.len() - 1).min(end);
        buf.copy_within(end - kept..end, 0);
    }
}

/// Refuses `exe` unless it and every directory above it are owned by root and not writable
/// by group or others (so nobody but root can replace what udev runs as root).
pub fn check_trusted(exe: &Path) -> Result<(), Failure> {
    let exe = exe
        .canonicalize()
        .map_err(|e| Failure::Untrusted(exe.to_owned(), e.to_string()))?;
    for p in exe.ancestors() {
        let m = fs::metadata(p).map_err(|e| Failure::Untrusted(exe.clone(), e.to_string()))?;
        if m.uid() != 0 {
            return Err(Failure::Untrusted(
                exe.clone(),
                format!("{} is owned by uid {}", p.display(), m.uid()),
            ));
        }
        if m.permissions().mode() & 0o022 != 0 {
            return Err(Failure::Untrusted(
                exe.clone(),
                format!(
                    "{} is writable by group or others (mode {:o})",
                    p.display(),
                    m.permissions().mode() & 0o7777
                ),
            ));
        }
    }
    Ok(())
}

/// systemd-logind's state file of seat0, whose `ACTIVE_UID=` is the user of the seat's
/// active session ([`seat_uid`]). logind rewrites it (a temporary file renamed into place)
/// whenever the active session changes, after it moved the seat's device ACLs to that
/// session's user; `contrib/pawl-kernel-reseat.path` watches it so that the pins follow.
pub const SEAT0_STATE: &str = "/run/systemd/seats/seat0";

/// The uid of the active session on seat0 (`ACTIVE_UID=` in [`SEAT0_STATE`]), `None`
/// without one (no logind, nobody logged in, or the file unreadable or untrusted, see
/// [`seat_uid_in`]).
pub fn seat_uid() -> Option<u32> {
    seat_uid_in(Path::new(SEAT0_STATE))
}

/// Where logind keeps one state file per seat (`seat0`, `seat1`, ...).
pub const SEATS_DIR: &str = "/run/systemd/seats";
/// udev's database: one file per device (`+SUBSYSTEM:SYSNAME` for a device without a
/// node), its `E:KEY=value` lines the device's properties.
pub const UDEV_DATA: &str = "/run/udev/data";
/// The seat of a device udev gave none (logind's default).
pub const DEFAULT_SEAT: &str = "seat0";

/// Whether `name` is a seat name as logind accepts one: `seat` followed by letters,
/// digits, `-` or `_`, at most 64 bytes (so it is a file name under [`SEATS_DIR`] and
/// nothing else).
pub fn is_seat_name(name: &str) -> bool {
    name.len() <= 64
        && name.strip_prefix("seat").is_some_and(|rest| {
            rest.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// The `ID_SEAT` property in the text of a udev database file (`E:ID_SEAT=seat1`), `None`
/// without one or when it is not a seat name ([`is_seat_name`]).
pub fn seat_of_udev_entry(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.strip_prefix("E:ID_SEAT="))
        .map(str::trim)
        .filter(|s| is_seat_name(s))
}

/// The seat of HID device `name`: `ID_SEAT` in udev's database (under `udev_data`) of the
/// HID device itself, else of its input devices (`<sysfs>/<name>/input/inputN`, which
/// systemd's 71-seat.rules tags `seat`, and where an `ID_SEAT` from a rule or from
/// `loginctl attach` is found), else [`DEFAULT_SEAT`]. Each file is read as the seat files
/// are ([`seat_state_in`]: root's, a bounded regular file); anything else is skipped.
pub fn device_seat(sysfs: &Path, udev_data: &Path, name: &str) -> String {
    let mut ids = vec![format!("+hid:{name}")];
    if let Ok(entries) = fs::read_dir(sysfs.join(name).join("input")) {
        let mut inputs: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("input") && n[5..].bytes().all(|b| b.is_ascii_digit()))
            .collect();
        inputs.sort();
        ids.extend(inputs.into_iter().map(|n| format!("+input:{n}")));
    }
    ids.iter()
        .find_map(|id| {
            let text = seat_state_in(&udev_data.join(id))?;
            seat_of_udev_entry(&text).map(str::to_owned)
        })
        .unwrap_or_else(|| DEFAULT_SEAT.to_owned())
}

/// The state file of `seat` under [`SEATS_DIR`] (`seat` is a seat name, see
/// [`is_seat_name`]; any other is seat0's).
pub fn seat_state_path(seat: &str) -> PathBuf {
    let seat = if is_seat_name(seat) {
        seat
    } else {
        DEFAULT_SEAT
    };
    Path::new(SEATS_DIR).join(seat)
}

/// The most of a seat state file [`seat_uid_in`] reads, bytes. logind's file is a few
/// hundred bytes (a dozen `KEY=value` lines); a longer one is not logind's.
pub const SEAT_STATE_MAX: u64 = 16 * 1024;

/// [`seat_uid`] from the state file at `path`. The loader reads it as root, so it reads
/// only what logind would have written there: a regular file (opened with `O_NOFOLLOW |
/// O_NONBLOCK`, so a symlink is not followed and a FIFO or device never blocks or is read;
/// the type checked on the opened file), owned by root or the running user, writable by
/// nobody else, of at most [`SEAT_STATE_MAX`] bytes. Anything else is `None`: nobody at
/// the seat (root-only pins), never a hang or another file's contents.
pub fn seat_uid_in(path: &Path) -> Option<u32> {
    seat_uid_from(&seat_state_in(path)?)
}

/// The text of the seat state file at `path`, read as [`seat_uid_in`] reads it (the same
/// checks; `None` for anything logind would not have written). `reseat` compares two
/// reads of it to know whether the seat changed while it acted.
pub fn seat_state_in(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let m = file.metadata().ok()?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !m.file_type().is_file()
        || (m.uid() != 0 && m.uid() != me)
        || m.permissions().mode() & 0o022 != 0
        || m.len() > SEAT_STATE_MAX
    {
        return None;
    }
    let mut text = Vec::new();
    file.take(SEAT_STATE_MAX + 1).read_to_end(&mut text).ok()?;
    if text.len() as u64 > SEAT_STATE_MAX {
        return None;
    }
    Some(String::from_utf8_lossy(&text).into_owned())
}

/// Runs `act` on what `read` returns until a read after acting returns what was acted on:
/// the last state read is always the one acted on, however often it changes meanwhile
/// (each change costs one more round; there is no cap that could miss the last one).
/// Returns how many rounds ran (at least one).
pub fn follow_until_stable<S: PartialEq>(
    mut read: impl FnMut() -> S,
    mut act: impl FnMut(&S),
) -> usize {
    let mut state = read();
    let mut rounds = 0;
    loop {
        act(&state);
        rounds += 1;
        let now = read();
        if now == state {
            return rounds;
        }
        state = now;
    }
}

/// [`seat_uid`] from the file's text. `4294967295` is no uid (it is `(uid_t)-1`, which
/// `chown` takes as "leave the owner": pins "handed" to it would stay root's).
pub fn seat_uid_from(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("ACTIVE_UID="))
        .and_then(|v| v.trim().parse().ok())
        .filter(|&u| u != NO_UID)
}

/// `(uid_t)-1`: not a user (`chown` leaves the owner unchanged for it).
pub const NO_UID: u32 = u32::MAX;

/// Makes `root` a bpffs (mounting one if it is not), with `/run/pawl` root's 0755.
/// Refuses (before mounting anything) a `root` or parent that is a symlink, not a
/// directory, or writable by someone else ([`check_pin_dir`]).
pub fn ensure_bpffs(root: &Path) -> Result<(), Failure> {
    if let Some(parent) = root.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| failed(&format!("mkdir {}", parent.display()), e))?;
        check_pin_dir(parent)?;
    }
    match fs::create_dir(root) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(failed(&format!("mkdir {}", root.display()), e)),
    }
    check_pin_dir(root)?;
    if fs_magic(root) == Some(BPF_FS_MAGIC) {
        return Ok(());
    }
    let target = cstr(root)?;
    let (src, ty, opts) = (c"bpffs", c"bpf", c"mode=0755");
    // SAFETY: all pointers are NUL-terminated strings living across the call.
    let r = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            ty.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            opts.as_ptr().cast(),
        )
    };
    if r != 0 {
        let e = io::Error::last_os_error();
        let hint = if e.raw_os_error() == Some(libc::EPERM) {
            " (inside systemd-udevd's sandbox no program may mount: the package's \
             run-pawl-bpf.mount provides this bpffs; `systemctl enable --now run-pawl-bpf.mount`)"
        } else {
            ""
        };
        return Err(failed(
            &format!("mount bpffs on {}", root.display()),
            format!("{e}{hint}"),
        ));
    }
    Ok(())
}

/// Refuses `dir` unless it is a directory itself (not a symlink to one), owned by the
/// running user (root, for the loader) and not writable by group or others: the loader
/// mounts on it and pins under it as root, so nobody else may have made or changed it.
pub fn check_pin_dir(dir: &Path) -> Result<(), Failure> {
    let m = fs::symlink_metadata(dir).map_err(|e| failed(&format!("{}", dir.display()), e))?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let why = if !m.file_type().is_dir() {
        Some("not a directory (a symlink?)".to_owned())
    } else if m.uid() != me {
        Some(format!("owned by uid {}, not {me}", m.uid()))
    } else if m.permissions().mode() & 0o022 != 0 {
        Some(format!(
            "writable by group or others (mode {:o})",
            m.permissions().mode() & 0o7777
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(Failure::Failed(format!(
            "refusing to pin under {}: {why}",
            dir.display()
        ))),
        None => Ok(()),
    }
}

/// The loader's lock file, in the directory above the pin root (`/run/pawl/loader.lock`).
pub const LOCK_FILE: &str = "loader.lock";

/// The loader's exclusive lock ([`lock`]), held until dropped (the file is closed, which
/// releases the `flock`).
#[derive(Debug)]
pub struct LoaderLock {
    _file: fs::File,
}

/// Takes the loader's lock: an exclusive `flock` on [`LOCK_FILE`] in `run_dir`
/// (`/run/pawl`, which must exist and pass [`check_pin_dir`]), waiting while another
/// loader holds it. Every command holds it from start to end, so that udev's events (run in
/// parallel) and the reseat service never detach, pin or hand over one device's
/// directory at the same time.
///
/// The file is made the running user's (root's) mode 0600 when absent, and refused unless
/// it is a regular file of the running user with no group or other permission: a file
/// another user could open is one they could `flock` and keep every loader waiting on. For
/// the same reason the lock is not on `run_dir` itself, which any user may open. Opened
/// with `O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK` (no symlink followed, not inherited by
/// anything the loader runs; the lock itself blocks). Errors: [`Failure::Failed`] naming
/// the file and what is wrong with it.
pub fn lock(run_dir: &Path) -> Result<LoaderLock, Failure> {
    let file = open_lock(run_dir)?;
    file.lock()
        .map_err(|e| failed(&format!("lock {}", run_dir.join(LOCK_FILE).display()), e))?;
    Ok(LoaderLock { _file: file })
}

/// Opens (creating it if absent) and checks the lock file in `run_dir`, see [`lock`].
fn open_lock(run_dir: &Path) -> Result<fs::File, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    check_pin_dir(run_dir)?;
    let path = run_dir.join(LOCK_FILE);
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let refuse = |why: String| {
        Failure::Failed(format!(
            "refusing the loader lock {}: {why} (only root can make files there; remove it)",
            path.display()
        ))
    };
    let check = |m: &fs::Metadata| {
        if !m.file_type().is_file() {
            Err(refuse(
                "not a regular file (a symlink, directory or node?)".into(),
            ))
        } else if m.uid() != me {
            Err(refuse(format!("owned by uid {}, not {me}", m.uid())))
        } else if m.permissions().mode() & 0o077 != 0 {
            Err(refuse(format!(
                "others may open it (mode {:o}, not 600)",
                m.permissions().mode() & 0o7777
            )))
        } else {
            Ok(())
        }
    };
    let flags = libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    // Only root can change run_dir's entries, so a retry is for two loaders creating the
    // file at once; a few are plenty.
    for _ in 0..4 {
        let opened = match fs::symlink_metadata(&path) {
            Ok(m) => {
                // Checked before opening, so that no node other than a plain file is ever
                // opened; checked again on what was opened.
                check(&m)?;
                fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(flags)
                    .open(&path)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(flags)
                .open(&path),
            Err(e) => return Err(failed(&format!("{}", path.display()), e)),
        };
        match opened {
            Ok(f) => {
                let m = f
                    .metadata()
                    .map_err(|e| failed(&format!("fstat {}", path.display()), e))?;
                check(&m)?;
                return Ok(f);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::AlreadyExists
                ) => {}
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(refuse("a symlink".into()));
            }
            Err(e) => return Err(failed(&format!("open {}", path.display()), e)),
        }
    }
    Err(Failure::Failed(format!(
        "{} keeps appearing and vanishing",
        path.display()
    )))
}

fn fs_magic(p: &Path) -> Option<i64> {
    let c = cstr(p).ok()?;
    let mut s = MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `c` is NUL-terminated; `s` is a statfs the call fills.
    let r = unsafe { libc::statfs(c.as_ptr(), s.as_mut_ptr()) };
    // SAFETY: filled on success.
    #[allow(clippy::unnecessary_cast, reason = "f_type is not i64 on every target")]
    (r == 0).then(|| unsafe { s.assume_init() }.f_type as i64)
}

fn cstr(p: &Path) -> Result<CString, Failure> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes()).map_err(|e| failed("path", e))
}

/// Keeps only CAP_BPF, CAP_PERFMON and CAP_CHOWN ([`KEPT_CAPS`]) for good: every other
/// capability leaves the bounding set, then the effective, permitted and inheritable sets
/// are those three (inheritable empty), and the ambient set is cleared. The loader calls
/// it after its steps that need more (the mount of its bpffs: CAP_SYS_ADMIN; the sweep of
/// directories left behind) and before it loads anything for a device. The process stays
/// uid 0: files root owns stay writable to it as their owner. Errors: the prctl or capset
/// call's.
pub fn restrict_caps() -> Result<(), Failure> {
    use rustix::thread::{self as t, CapabilitySet};
    let keep = CapabilitySet::BPF | CapabilitySet::PERFMON | CapabilitySet::CHOWN;
    // Capabilities are per thread: the loader has one.
    for cap in 0..64u32 {
        let one = CapabilitySet::from_bits_retain(1 << cap);
        if keep.contains(one) {
            continue;
        }
        match t::remove_capability_from_bounding_set(one) {
            Ok(()) => {}
            // A capability this kernel does not know.
            Err(rustix::io::Errno::INVAL) => {}
            Err(e) => return Err(failed("drop from the bounding set", e)),
        }
    }
    t::clear_ambient_capability_set().map_err(|e| failed("clear the ambient set", e))?;
    set_caps(keep, keep)
}

/// Sets the effective set to `effective` and the permitted set to `permitted` (the
/// inheritable set empty).
fn set_caps(
    effective: rustix::thread::CapabilitySet,
    permitted: rustix::thread::CapabilitySet,
) -> Result<(), Failure> {
    use rustix::thread::{self as t, CapabilitySet, CapabilitySets};
    t::set_capabilities(
        None,
        CapabilitySets {
            effective,
            permitted,
            inheritable: CapabilitySet::empty(),
        },
    )
    .map_err(|e| failed("capset", e))
}

/// The effective set narrowed to CAP_BPF + CAP_PERFMON for load and attach (`true`), or
/// back to the whole permitted set (`false`).
fn narrow_effective(narrow: bool) -> Result<(), Failure> {
    use rustix::thread::{self as t, CapabilitySet};
    let now = t::capabilities(None).map_err(|e| failed("capget", e))?;
    let effective = if narrow {
        now.permitted & (CapabilitySet::BPF | CapabilitySet::PERFMON)
    } else {
        now.permitted
    };
    set_caps(effective, now.permitted)
}

/// What to attach and for whom.
#[derive(Clone, Debug)]
pub struct AttachOptions {
    /// The bpffs directory to pin under ([`pins::PIN_ROOT`]).
    pub root: PathBuf,
    /// Where HID devices are ([`SYSFS_HID`]).
    pub sysfs: PathBuf,
    /// Who gets the pins: the seat user, `None` = root only.
    pub uid: Option<u32>,
    /// v120 per wheel unit; `None` = from the bound driver (8 behind hid-logitech-hidpp,
    /// else 120).
    pub unit_v120: Option<u8>,
    /// Only CAP_BPF + CAP_PERFMON effective around load and attach (the loader always
    /// does; off only for tests without the capability calls).
    pub drop_caps: bool,
}

/// What an attach did (the loader prints it).
#[derive(Clone, Debug)]
pub struct Attached {
    /// The layout found.
    pub layout: MouseLayout,
    /// v120 per wheel unit used.
    pub unit_v120: u8,
    /// The device's pin directory.
    pub dir: PathBuf,
    /// `verified_insns` of the loaded program (bpf_prog_info), 0 when the kernel does not
    /// report it.
    pub verified_insns: u32,
    /// Size of the program after the verifier's rewrites, BPF instructions (8 bytes each).
    pub xlated_insns: u32,
}

fn rodata_field(f: Field) -> skel::types::pawl_field {
    skel::types::pawl_field {
        bit: f.bit,
        bits: f.bits,
        is_signed: u8::from(f.signed),
    }
}

/// Attaches the program to HID device `name` (its sysfs name): loads it with the device's
/// layout, writes the engine's default settings pass-through (flags 0: the daemon enables the transform), attaches, pins link and maps in
/// `<root>/<name>/`, hands the directory and the user's pins to `opts.uid`. An attachment
/// of the same name is replaced.
pub fn attach(name: &str, opts: &AttachOptions) -> Result<Attached, Failure> {
    let hid_id = pins::hid_id(name)
        .ok_or_else(|| Failure::Failed(format!("{name:?} is not a HID device name")))?;
    let dev = opts.sysfs.join(name);
    let desc = fs::read(dev.join("report_descriptor"))
        .map_err(|e| failed(&format!("read {}/report_descriptor", dev.display()), e))?;
    let layout = layout::mouse_layout(&desc).map_err(|e| Failure::NotApplicable(e.to_string()))?;
    let driver = fs::read_link(dev.join("driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let unit_v120 = opts
        .unit_v120
        .unwrap_or(if driver.as_deref() == Some(HIDPP_DRIVER) {
            HIDPP_HIRES_UNIT_V120
        } else {
            120
        });
    if !(1..=120).contains(&unit_v120) {
        return Err(Failure::Failed(format!(
            "wheel unit {unit_v120} v120 out of 1..=120"
        )));
    }

    let dir = pins::device_dir(&opts.root, name);
    detach(&opts.root, name)?;
    fs::create_dir(&dir).map_err(|e| failed(&format!("mkdir {}", dir.display()), e))?;
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).map_err(|e| failed("chmod", e))?;
    let res = load_and_pin(hid_id, &layout, unit_v120, &dir, opts.drop_caps);
    if res.is_err() {
        let _ = detach(&opts.root, name);
    }
    let (verified_insns, xlated_insns) = res?;
    // The directory stays root's 0755; only the three maps the daemon opens are handed
    // over, stats last (its owner is the attachment's user, pins::attachment_owner). Each
    // pin's mode is set while it is still root's (no CAP_FOWNER needed), then its owner
    // (CAP_CHOWN). A failure leaves the device pass-through: detached, nothing pinned.
    if let Some(uid) = opts.uid {
        let own = |p: &Path, mode: u32| -> Result<(), Failure> {
            fs::set_permissions(p, fs::Permissions::from_mode(mode))
                .and_then(|()| std::os::unix::fs::chown(p, Some(uid), None))
                .map_err(|e| failed(&format!("chown {}", p.display()), e))
        };
        let handed = own(&dir.join(SETTINGS), 0o600)
            .and_then(|()| own(&dir.join(RING), 0o600))
            .and_then(|()| own(&dir.join(STATS), 0o400));
        if let Err(e) = handed {
            let _ = detach(&opts.root, name);
            return Err(e);
        }
    }
    announce(&opts.root);
    Ok(Attached {
        layout,
        unit_v120,
        dir,
        verified_insns,
        xlated_insns,
    })
}

fn load_and_pin(
    hid_id: i32,
    layout: &MouseLayout,
    unit_v120: u8,
    dir: &Path,
    narrow: bool,
) -> Result<(u32, u32), Failure> {
    let mut object = MaybeUninit::uninit();
    let mut open = skel::PawlSkelBuilder::default()
        .open(&mut object)
        .map_err(|e| failed("open the BPF object", e))?;
    let rodata = open
        .maps
        .rodata_data
        .as_deref_mut()
        .ok_or_else(|| Failure::Failed("the BPF object has no .rodata".into()))?;
    rodata.layout = skel::types::pawl_layout {
        report_id: layout.report_id,
        hidpp: u8::from(layout.hidpp),
        unit_v120,
        pan_unit_v120: PAN_UNIT_V120,
        wheel: rodata_field(layout.wheel),
        pan: rodata_field(layout.pan),
        x: rodata_field(layout.x),
        y: rodata_field(layout.y),
        buttons: rodata_field(layout.buttons),
    };
    open.struct_ops.pawl_ops_mut().hid_id = hid_id;

    if narrow {
        narrow_effective(true)?;
    }
    let res = (|| {
        let mut skel = open
            .load()
            .map_err(|e| failed("load the program (verifier)", e))?;
        // Pass-through until pawl's daemon enables the transform with the user's config
        // (and clears it again on exit): with no pawl running the wheel is the driver's.
        let mut settings = Settings::new(&ScrollParams::default(), u32::from(unit_v120));
        settings.flags = 0;
        skel.maps
            .settings
            .update(&0u32.to_ne_bytes(), &settings.to_bytes(), MapFlags::ANY)
            .map_err(|e| failed("write the settings", e))?;
        let counts = prog_counts(skel.progs.pawl_device_event.as_fd().as_raw_fd());
        let mut link = skel
            .maps
            .pawl_ops
            .attach_struct_ops()
            .map_err(|e| failed(&format!("attach to hid_id {hid_id}"), e))?;
        link.pin(dir.join(LINK))
            .map_err(|e| failed("pin the link", e))?;
        let maps = &mut skel.maps;
        maps.settings
            .pin(dir.join(SETTINGS))
            .map_err(|e| failed("pin settings", e))?;
        maps.ring
            .pin(dir.join(RING))
            .map_err(|e| failed("pin ring", e))?;
        maps.stats
            .pin(dir.join(STATS))
            .map_err(|e| failed("pin stats", e))?;
        maps.glide
            .pin(dir.join(GLIDE))
            .map_err(|e| failed("pin glide", e))?;
        Ok(counts)
    })();
    if narrow {
        narrow_effective(false)?;
    }
    res
}

use std::os::fd::AsFd;

/// `(verified_insns, xlated instructions)` of a loaded program.
fn prog_counts(fd: i32) -> (u32, u32) {
    let mut info = libbpf_rs::libbpf_sys::bpf_prog_info::default();
    let mut len = size_of_val(&info) as u32;
    // SAFETY: `info` is a bpf_prog_info of `len` bytes the call fills (no array pointers
    // set, so the kernel writes nothing else).
    let r = unsafe { libbpf_rs::libbpf_sys::bpf_prog_get_info_by_fd(fd, &mut info, &mut len) };
    if r != 0 {
        return (0, 0);
    }
    (info.verified_insns, info.xlated_prog_len / 8)
}

/// Tells a running pawl that an attachment is complete (or, from `remove` and
/// `--detach`, that one is gone): touches the mtime of `root`'s
/// parent (`/run/pawl`, a plain directory that stays while bpffs mounts under it come and
/// go), which pawl's daemon watches with inotify (`IN_ATTRIB`, `IN_MODIFY`). Done last, after every pin
/// is made and handed to the user, so the daemon never sees a half-made directory.
pub fn announce(root: &Path) {
    if let Some(parent) = root.parent()
        && let Ok(f) = fs::File::open(parent)
    {
        // Both times: the kernel reports a change of both as IN_ATTRIB (of mtime alone,
        // IN_MODIFY).
        let now = std::time::SystemTime::now();
        let _ = f.set_times(fs::FileTimes::new().set_accessed(now).set_modified(now));
    }
}

/// Removes the pins of `name` under `root` (unpinning the link first detaches the
/// program) and its directory; nothing there is not an error. Whatever else is in the
/// directory (left by an older loader's layout, whose directory was the seat user's) is
/// removed too, a directory with what is in it (never following a symlink), so that no
/// entry keeps the directory. Every entry is tried; the error is the first one's.
pub fn detach(root: &Path, name: &str) -> Result<(), Failure> {
    if !pins::is_hid_name(name) {
        return Err(Failure::Failed(format!(
            "{name:?} is not a HID device name"
        )));
    }
    let dir = pins::device_dir(root, name);
    match fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(failed(&format!("{}", dir.display()), e)),
        Ok(m) if !m.file_type().is_dir() => {
            return fs::remove_file(&dir)
                .map_err(|e| failed(&format!("unlink {}", dir.display()), e));
        }
        Ok(_) => {}
    }
    let mut first: Option<Failure> = None;
    // An older loader's directory was its user's 0700: taken back first, so that root
    // reaches into it with CAP_CHOWN alone (no CAP_DAC_OVERRIDE).
    if let Err(e) = take_back(&dir) {
        first = Some(failed(&format!("take back {}", dir.display()), e));
    }
    let mut note = |r: io::Result<()>, what: &Path| {
        if let Err(e) = r
            && e.kind() != io::ErrorKind::NotFound
            && first.is_none()
        {
            first = Some(failed(&format!("unpin {}", what.display()), e));
        }
    };
    let link = dir.join(LINK);
    note(fs::remove_file(&link), &link);
    match fs::read_dir(&dir) {
        Ok(entries) => {
            for e in entries.flatten() {
                let p = e.path();
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                note(
                    if is_dir {
                        remove_tree(&p)
                    } else {
                        fs::remove_file(&p)
                    },
                    &p,
                );
            }
        }
        Err(e) => note(Err(e), &dir),
    }
    match fs::remove_dir(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound && first.is_none() => {
            Err(failed(&format!("rmdir {}", dir.display()), e))
        }
        _ => first.map_or(Ok(()), Err),
    }
}

/// Makes directory `dir` root's 0700 when it is someone else's (`lchown`: CAP_CHOWN), so
/// that root, its owner now, may list and change it.
fn take_back(dir: &Path) -> io::Result<()> {
    if fs::symlink_metadata(dir)?.uid() != 0 {
        std::os::unix::fs::lchown(dir, Some(0), Some(0))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Makes entry `name` of directory `parent` root's 0700 (a directory, never a symlink's
/// target). `parent` must be root's, so that the name cannot be swapped in between.
fn take_back_at(parent: &std::os::fd::OwnedFd, name: &std::ffi::CStr) -> rustix::io::Result<()> {
    use rustix::fs::{self as rfs, AtFlags, FileType, Mode};
    let st = rfs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(rustix::io::Errno::NOTDIR);
    }
    if st.st_uid != 0 {
        rfs::chownat(
            parent,
            name,
            Some(rfs::Uid::ROOT),
            Some(rfs::Gid::ROOT),
            AtFlags::SYMLINK_NOFOLLOW,
        )?;
    }
    rfs::chmodat(parent, name, Mode::from_raw_mode(0o700), AtFlags::empty())
}

/// How many entries [`remove_tree`] looks at, at most, before it gives up: an older
/// layout's user could have filled the tree; a bound keeps the loader's work finite. Depth
/// has no bound of its own (the walk keeps one directory open, not one per level).
const TREE_ENTRIES_MAX: usize = 1 << 16;

/// Removes directory `dir` and everything in it, never following a symlink. The walk holds
/// one directory fd at a time. Each directory is made root's 0700 by name before it is
/// opened (`fchownat`: CAP_CHOWN; its parent is root's already, so nobody can swap the
/// name meanwhile); from then on nobody else can add to it, rename out of it or move it.
/// Its files are unlinked and its subdirectories entered; the walk climbs back through
/// `..`, which stays the directory it came from because every parent is root's by then.
/// `dir`'s own parent must be root's. Errors: the first entry that could not be removed,
/// or more than [`TREE_ENTRIES_MAX`] entries seen.
fn remove_tree(dir: &Path) -> io::Result<()> {
    use rustix::fs::{self as rfs, AtFlags, Dir, FileType, Mode, OFlags};
    use rustix::io::Errno;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    take_back(dir)?;
    let mut cur = rfs::open(dir, flags, Mode::empty())?;
    // The names from `dir` down to `cur`, to remove each on the way back up.
    let mut names: Vec<CString> = Vec::new();
    let mut seen = 0usize;
    loop {
        let mut sub: Option<CString> = None;
        let mut entries = Dir::read_from(&cur)?;
        while let Some(e) = entries.read() {
            let e = e?;
            let name = e.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            seen += 1;
            if seen > TREE_ENTRIES_MAX {
                return Err(io::Error::other(format!(
                    "more than {TREE_ENTRIES_MAX} entries"
                )));
            }
            let is_dir = match e.file_type() {
                FileType::Directory => true,
                FileType::Unknown => rfs::statat(&cur, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)?,
                _ => false,
            };
            if is_dir {
                sub = Some(name.to_owned());
                break;
            }
            match rfs::unlinkat(&cur, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
        drop(entries);
        match sub {
            Some(name) => match take_back_at(&cur, &name)
                .and_then(|()| rfs::openat(&cur, name.as_c_str(), flags, Mode::empty()))
            {
                Ok(fd) => {
                    names.push(name);
                    cur = fd;
                }
                // Gone, or no longer a directory: the next listing sees what is there now.
                Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => {}
                Err(e) => return Err(e.into()),
            },
            None => {
                let Some(name) = names.pop() else { break };
                let parent = rfs::openat(&cur, c"..", flags, Mode::empty())?;
                rfs::unlinkat(&parent, name.as_c_str(), AtFlags::REMOVEDIR)?;
                cur = parent;
            }
        }
    }
    drop(cur);
    fs::remove_dir(dir)
}

/// One device's pin directory under the pin root, as `pawl-kernel-attach reseat` weighs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seated {
    /// The HID device's sysfs name (the directory's, [`pins::hid_name_of_dir`]).
    pub name: String,
    /// The attachment's user ([`pins::attachment_owner`], else the directory's owner): the
    /// user its pins were handed to, 0 when root's only.
    pub owner: u32,
    /// Whether the HID device is still in sysfs.
    pub device_exists: bool,
    /// The device's seat ([`device_seat`]).
    pub seat: String,
}

/// The device directories under `root` ([`Seated`]), in `read_dir` order; names that are
/// not a device's ([`pins::hid_name_of_dir`]) and entries that vanish while read are
/// skipped. Owners are read with `lstat`, never a symlink's target.
pub fn seated(root: &Path, sysfs: &Path, udev_data: &Path) -> Vec<Seated> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = pins::hid_name_of_dir(&e.file_name().to_string_lossy())?;
            let m = fs::symlink_metadata(e.path()).ok()?;
            Some(Seated {
                seat: device_seat(sysfs, udev_data, &name),
                device_exists: sysfs.join(&name).exists(),
                owner: pins::attachment_owner(&e.path()).unwrap_or(m.uid()),
                name,
            })
        })
        .collect()
}

/// What `reseat` replaces, each device for the user of its own seat (`target(seat)`:
/// that seat's active user; `None` or `Some(0)`: root only): the names, in `dirs`' order,
/// of every attachment whose device still exists and whose stats pin is not its target's.
/// One already its target's is left alone, so that a running pawl of that user keeps its
/// maps (logind rewriting a seat's file for another reason is then a no-op); one whose
/// device is gone is not replaced (the sweep detaches it).
pub fn reseat_plan(dirs: &[Seated], target: impl Fn(&str) -> Option<u32>) -> Vec<String> {
    dirs.iter()
        .filter(|d| d.device_exists && d.owner != target(&d.seat).unwrap_or(0))
        .map(|d| d.name.clone())
        .collect()
}

/// Detaches every device under `root` whose HID device is gone from `sysfs` (a remove event
/// that was missed). The bpffs stays mounted: under systemd it is run-pawl-bpf.mount's, and
/// the loader, run by udev inside systemd-udevd's sandbox, could not mount it again
/// ([`unmount_if_empty`] is for `--detach`).
pub fn sweep(root: &Path, sysfs: &Path) -> Result<(), Failure> {
    let Ok(entries) = fs::read_dir(root) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let dir_name = e.file_name().to_string_lossy().into_owned();
        // A directory that cannot be removed stays, and keeps no other device from being
        // attached. Anything else (bpffs's own maps.debug and progs.debug with
        // bpf_preload, a device still there) is left.
        if let Some(name) = pins::hid_name_of_dir(&dir_name)
            && !sysfs.join(&name).exists()
            && let Err(e) = detach(root, &name)
        {
            eprintln!("pawl-kernel-attach: leaving {dir_name}: {e}");
        }
    }
    Ok(())
}

/// Unmounts the bpffs at `root` (and removes the directory) when no device directory is left
/// in it: `--detach` (the package's prerm) leaves nothing mounted. Returns whether it did;
/// an unmount the kernel refuses (EPERM inside a sandbox, EBUSY) leaves it mounted.
pub fn unmount_if_empty(root: &Path) -> Result<bool, Failure> {
    if fs_magic(root) != Some(BPF_FS_MAGIC) {
        return Ok(false);
    }
    let Ok(entries) = fs::read_dir(root) else {
        return Ok(false);
    };
    // bpffs's own (maps.debug, progs.debug with bpf_preload) do not count.
    let left = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".debug"))
        .count();
    if left != 0 {
        return Ok(false);
    }
    let c = cstr(root)?;
    // SAFETY: `c` is NUL-terminated.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
        return Ok(false);
    }
    let _ = fs::remove_dir(root);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields at most `step` bytes a read.
    struct Trickle<'a>(&'a [u8], usize);

    impl io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_btf_name_is_found_across_read_boundaries_and_only_whole() {
        let needle = b"\0hid_bpf_ops\0";
        for at in [0, 65_530, 65_536 - 13, 65_536, 200_000 - needle.len()] {
            let mut data = vec![b'a'; 200_000];
            data[at..at + needle.len()].copy_from_slice(needle);
            assert!(contains(io::Cursor::new(&data), needle).unwrap(), "at {at}");
            assert!(
                contains(Trickle(&data, 7), needle).unwrap(),
                "at {at}, 7 a read"
            );
        }
        // The name without its terminators (`hid_bpf_ops_x`) is another type.
        let data = b"\0hid_bpf_ops_x\0".repeat(10_000);
        assert!(!contains(Trickle(&data, 4096), needle).unwrap());
        assert!(!contains(io::empty(), needle).unwrap());
    }

    #[test]
    fn reseat_acts_again_until_the_seat_it_read_after_acting_is_the_one_it_acted_on() {
        // The seat file read before each round and after it: 1000, then changed to 1001
        // during the first round, to 1002 and back to 1001 during the second (each read
        // sees the newest), then quiet.
        let reads = ["1000", "1001", "1001", "1002", "1001", "1001"];
        let mut i = 0;
        let mut acted = Vec::new();
        let rounds = follow_until_stable(
            || {
                let r = reads[i.min(reads.len() - 1)];
                i += 1;
                r
            },
            |s| acted.push(*s),
        );
        // Acted on 1000; read 1001: act; read 1001: stable.
        assert_eq!(acted, ["1000", "1001"]);
        assert_eq!(rounds, 2);
        // A state that keeps changing is followed for as many rounds as it changes.
        let seq: Vec<u32> = (0..50).chain([49, 49]).collect();
        let mut j = 0;
        let mut last = None;
        let rounds = follow_until_stable(
            || {
                let v = seq[j.min(seq.len() - 1)];
                j += 1;
                v
            },
            |s| last = Some(*s),
        );
        assert_eq!(rounds, 50);
        assert_eq!(last, Some(49), "the final state is the one acted on");
    }

    #[test]
    fn the_seat_user_is_the_active_uid_of_seat0() {
        let text =
            "# This is private data. Do not parse.\nIS_SEAT0=1\nACTIVE=c2\nACTIVE_UID=1000\n";
        assert_eq!(seat_uid_from(text), Some(1000));
        assert_eq!(seat_uid_from("IS_SEAT0=1\n"), None);
        assert_eq!(seat_uid_from("ACTIVE_UID=-1\nACTIVE_UID=x\n"), None);
        assert_eq!(seat_uid_from("\u{0}\u{1}garbage"), None);
        assert_eq!(seat_uid_from("ACTIVE_UID=4294967295\n"), None);
    }

    #[test]
    fn the_seat_file_is_read_only_when_a_bounded_regular_file_nobody_else_writes() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("seat0");
        fs::write(&good, "IS_SEAT0=1\nACTIVE_UID=2005\n").unwrap();
        fs::set_permissions(&good, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(seat_uid_in(&good), Some(2005));
        // Not followed: a symlink, even to a good file.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        assert_eq!(seat_uid_in(&link), None);
        // A FIFO nobody writes to: neither blocks nor is read.
        let fifo = dir.path().join("fifo");
        let c = cstr(&fifo).unwrap();
        // SAFETY: `c` is NUL-terminated.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let f2 = fifo.clone();
        std::thread::spawn(move || tx.send(seat_uid_in(&f2)).unwrap());
        let got = rx.recv_timeout(std::time::Duration::from_secs(5));
        assert_eq!(got, Ok(None), "reading a FIFO blocked or returned a uid");
        // Too long: ACTIVE_UID at the start, but the file is not logind's.
        let huge = dir.path().join("huge");
        let mut text = b"ACTIVE_UID=2005\n".to_vec();
        text.resize(SEAT_STATE_MAX as usize + 1, b'#');
        fs::write(&huge, &text).unwrap();
        fs::set_permissions(&huge, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(seat_uid_in(&huge), None);
        // Writable by others.
        fs::set_permissions(&good, fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(seat_uid_in(&good), None);
        // A directory, and nothing at all.
        assert_eq!(seat_uid_in(dir.path()), None);
        assert_eq!(seat_uid_in(&dir.path().join("absent")), None);
    }

    #[test]
    fn an_executable_under_a_world_writable_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("pawl-kernel-attach");
        fs::write(&exe, b"").unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_trusted(&exe).unwrap_err();
        assert_eq!(e.status(), 4);
        assert!(e.to_string().contains("writable by group or others"), "{e}");
    }

    #[test]
    fn a_root_owned_executable_in_root_owned_directories_is_trusted() {
        // /usr/bin/env and everything above it are root's and not group/other-writable on
        // any Debian system (tests run as root in CI, but ownership is all that is read).
        if fs::metadata("/usr/bin/env").is_ok_and(|m| m.uid() == 0) {
            check_trusted(Path::new("/usr/bin/env")).unwrap();
        } else {
            panic!("/usr/bin/env is not root's: cannot check the trusted case here");
        }
    }

    #[test]
    fn a_pin_directory_someone_else_may_write_or_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        check_pin_dir(dir.path()).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_pin_dir(dir.path()).unwrap_err();
        assert!(e.to_string().contains("writable by group or others"), "{e}");
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let link = dir.path().join("bpf");
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        let e = check_pin_dir(&link).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        // ensure_bpffs refuses it before mounting anything.
        let e = ensure_bpffs(&link).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
    }

    #[test]
    fn detach_removes_a_link_nested_far_deeper_than_a_path_reaches() {
        use rustix::fs::{self as rfs, Mode, OFlags};
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), b"").unwrap();
        // What an older layout let its user do: root's link moved 1500 levels down (a path
        // to it is over PATH_MAX), a symlink out half way, every directory the user's.
        let dir = root.path().join("0005:046D:B034_0009");
        fs::create_dir(&dir).unwrap();
        let as_root = rustix::process::geteuid().is_root();
        let user = Some(rfs::Uid::from_raw(1000));
        let mut cur = rfs::open(&dir, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        for i in 0..1500 {
            rfs::mkdirat(&cur, "d", Mode::from_raw_mode(0o700)).unwrap();
            if i == 750 {
                rfs::symlinkat(outside.path(), &cur, "out").unwrap();
            }
            if as_root {
                rfs::fchown(&cur, user, None).unwrap();
            }
            cur =
                rfs::openat(&cur, "d", OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        }
        rfs::openat(
            &cur,
            LINK,
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_raw_mode(0o600),
        )
        .unwrap();
        drop(cur);
        detach(root.path(), "0005:046D:B034.0009").unwrap();
        assert!(!dir.exists(), "the whole tree is removed");
        assert!(
            outside.path().join("keep").exists(),
            "a symlink was followed"
        );
    }

    #[test]
    fn a_stale_directory_with_unexpected_entries_is_removed_whole() {
        let root = tempfile::tempdir().unwrap();
        let sysfs = tempfile::tempdir().unwrap();
        // A device gone from sysfs whose directory holds what an older layout let its user
        // leave (a renamed link, a directory named like a pin with a file in it, a
        // symlink out), and one gone with only its pins.
        let odd = root.path().join("0005:046D:B034_0009");
        fs::create_dir_all(odd.join(LINK).join("x")).unwrap();
        fs::write(odd.join("lnk"), b"").unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), b"").unwrap();
        std::os::unix::fs::symlink(outside.path(), odd.join("out")).unwrap();
        let clean = root.path().join("0005:046D:B034_000A");
        fs::create_dir(&clean).unwrap();
        fs::write(clean.join(SETTINGS), b"").unwrap();
        sweep(root.path(), sysfs.path()).unwrap();
        assert!(!odd.exists(), "the odd directory is removed");
        assert!(!clean.exists(), "the clean one is removed");
        assert!(
            outside.path().join("keep").exists(),
            "a symlink was followed"
        );
        detach(root.path(), "0005:046D:B034.0009").unwrap();
    }

    fn seat(name: &str, owner: u32, device_exists: bool) -> Seated {
        Seated {
            name: name.into(),
            owner,
            device_exists,
            seat: DEFAULT_SEAT.into(),
        }
    }

    #[test]
    fn each_device_is_reseated_for_the_user_of_its_own_seat() {
        let mut on_seat1 = seat("0005:046D:B034.0005", 1000, true);
        on_seat1.seat = "seat1".into();
        let dirs = [
            seat("0005:046D:B034.0001", 1000, true),
            on_seat1,
            seat("0005:046D:B034.0002", 0, true),
        ];
        let users = |s: &str| match s {
            "seat0" => Some(1000),
            "seat1" => Some(1001),
            _ => None,
        };
        assert_eq!(
            reseat_plan(&dirs, users),
            ["0005:046D:B034.0005", "0005:046D:B034.0002"]
        );
        // Nobody on seat1: its device goes back to root, seat0's stays.
        let users = |s: &str| (s == "seat0").then_some(1000);
        assert_eq!(
            reseat_plan(&dirs, users),
            ["0005:046D:B034.0005", "0005:046D:B034.0002"]
        );
        // uid 1000 active on both seats: only root's attachment is replaced.
        assert_eq!(reseat_plan(&dirs, |_| Some(1000)), ["0005:046D:B034.0002"]);
    }

    #[test]
    fn a_devices_seat_is_id_seat_of_it_or_its_input_children_else_seat0() {
        assert_eq!(
            seat_of_udev_entry("I:123\nE:ID_INPUT=1\nE:ID_SEAT=seat1\nG:seat\n"),
            Some("seat1")
        );
        assert_eq!(seat_of_udev_entry("E:ID_SEAT=../etc\n"), None);
        assert_eq!(seat_of_udev_entry("E:ID_SEAT=seat/x\n"), None);
        assert_eq!(seat_of_udev_entry("E:ID_FOR_SEAT=input-x\n"), None);
        assert!(is_seat_name("seat0") && is_seat_name("seat-usb_2"));
        assert!(!is_seat_name("seat.") && !is_seat_name("x") && !is_seat_name(""));
        assert_eq!(
            seat_state_path("../x"),
            Path::new("/run/systemd/seats/seat0")
        );
        assert_eq!(
            seat_state_path("seat1"),
            Path::new("/run/systemd/seats/seat1")
        );

        let sysfs = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let name = "0005:046D:B034.0003";
        let inputs = sysfs.path().join(name).join("input");
        fs::create_dir_all(inputs.join("input7")).unwrap();
        fs::create_dir_all(inputs.join("input8")).unwrap();
        assert_eq!(device_seat(sysfs.path(), data.path(), name), "seat0");
        let put = |id: &str, text: &str, mode: u32| {
            let p = data.path().join(id);
            fs::write(&p, text).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        };
        put("+input:input7", "E:ID_INPUT=1\n", 0o644);
        put("+input:input8", "E:ID_SEAT=seat1\n", 0o644);
        assert_eq!(device_seat(sysfs.path(), data.path(), name), "seat1");
        // The HID device's own comes first.
        put("+hid:0005:046D:B034.0003", "E:ID_SEAT=seat2\n", 0o644);
        assert_eq!(device_seat(sysfs.path(), data.path(), name), "seat2");
        // A database file others may write is not udev's: skipped.
        put("+hid:0005:046D:B034.0003", "E:ID_SEAT=seat2\n", 0o666);
        put("+input:input8", "E:ID_SEAT=seat1\n", 0o666);
        assert_eq!(device_seat(sysfs.path(), data.path(), name), "seat0");
    }

    #[test]
    fn reseat_replaces_every_present_attachment_not_already_the_targets() {
        let dirs = [
            seat("0005:046D:B034.0001", 0, true),    // root's: bound at boot
            seat("0005:046D:B034.0002", 1000, true), // the user before a switch
            seat("0003:046D:4082.0003", 120, true),  // the greeter's
            seat("0005:046D:B034.0004", 0, false),   // gone: the sweep's
        ];
        assert_eq!(
            reseat_plan(&dirs, |_| Some(1000)),
            ["0005:046D:B034.0001", "0003:046D:4082.0003"]
        );
        assert_eq!(
            reseat_plan(&dirs, |_| Some(1001)),
            [
                "0005:046D:B034.0001",
                "0005:046D:B034.0002",
                "0003:046D:4082.0003"
            ]
        );
        // Nobody at the seat: back to root only (uid 0 is the same target).
        let to_root = ["0005:046D:B034.0002", "0003:046D:4082.0003"];
        assert_eq!(reseat_plan(&dirs, |_| None), to_root);
        assert_eq!(reseat_plan(&dirs, |_| Some(0)), to_root);
    }

    #[test]
    fn reseat_for_the_user_who_already_has_every_attachment_replaces_nothing() {
        // logind rewrites seat0's file for a second session of the same user too.
        let dirs = [
            seat("0005:046D:B034.0001", 1000, true),
            seat("0005:046D:B034.0002", 1000, true),
            seat("0005:046D:B034.0004", 0, false),
        ];
        assert!(reseat_plan(&dirs, |_| Some(1000)).is_empty());
        assert!(reseat_plan(&[], |_| None).is_empty());
    }

    #[test]
    fn seated_reads_each_device_directorys_owner_and_whether_its_device_exists() {
        let root = tempfile::tempdir().unwrap();
        let sysfs = tempfile::tempdir().unwrap();
        let here = root.path().join("0005:046D:B034_0003");
        let gone = root.path().join("0005:046D:B034_0004");
        fs::create_dir(&here).unwrap();
        fs::create_dir(&gone).unwrap();
        fs::create_dir(root.path().join("maps.debug")).unwrap();
        fs::write(root.path().join("not-a-device"), b"").unwrap();
        fs::create_dir(sysfs.path().join("0005:046D:B034.0003")).unwrap();
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        // The stats pin's owner is the attachment's user; the directory stays root's.
        fs::write(here.join(STATS), b"").unwrap();
        let owner = if me == 0 {
            std::os::unix::fs::chown(here.join(STATS), Some(1000), None).unwrap();
            1000
        } else {
            me
        };
        let data = tempfile::tempdir().unwrap();
        let mut got = seated(root.path(), sysfs.path(), data.path());
        got.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(
            got,
            [
                seat("0005:046D:B034.0003", owner, true),
                seat("0005:046D:B034.0004", me, false)
            ]
        );
        assert!(seated(&root.path().join("absent"), sysfs.path(), data.path()).is_empty());
    }

    #[test]
    fn the_loader_lock_is_made_0600_and_keeps_a_second_loader_waiting() {
        let run = tempfile::tempdir().unwrap();
        fs::set_permissions(run.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let held = lock(run.path()).unwrap();
        let file = run.path().join(LOCK_FILE);
        let m = fs::symlink_metadata(&file).unwrap();
        assert!(m.file_type().is_file());
        assert_eq!(m.permissions().mode() & 0o7777, 0o600);
        // A second loader (another open file description) cannot take it meanwhile.
        let other = open_lock(run.path()).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
    }

    #[test]
    fn a_loader_lock_that_is_not_a_root_only_regular_file_is_refused() {
        let refusal = |make: &dyn Fn(&Path)| {
            let run = tempfile::tempdir().unwrap();
            make(&run.path().join(LOCK_FILE));
            lock(run.path()).unwrap_err().to_string()
        };
        // A symlink (to a file that does not exist: nothing is created through it).
        let run = tempfile::tempdir().unwrap();
        let target = run.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, run.path().join(LOCK_FILE)).unwrap();
        let e = lock(run.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(!target.exists(), "the symlink was followed");
        let e = refusal(&|p| fs::create_dir(p).unwrap());
        assert!(e.contains("not a regular file"), "{e}");
        let e = refusal(&|p| {
            let c = CString::new(p.to_str().unwrap()).unwrap();
            // SAFETY: `c` is NUL-terminated.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        });
        assert!(e.contains("not a regular file"), "{e}");
        let e = refusal(&|p| {
            fs::write(p, b"").unwrap();
            fs::set_permissions(p, fs::Permissions::from_mode(0o644)).unwrap();
        });
        assert!(e.contains("others may open it (mode 644"), "{e}");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let e = refusal(&|p| {
                fs::write(p, b"").unwrap();
                fs::set_permissions(p, fs::Permissions::from_mode(0o600)).unwrap();
                std::os::unix::fs::chown(p, Some(1000), None).unwrap();
            });
            assert!(e.contains("owned by uid 1000"), "{e}");
        } else {
            eprintln!("not root: the case of a lock file another user owns is not checked");
        }
        // A directory above it that others may write (they could swap the file).
        let run = tempfile::tempdir().unwrap();
        fs::set_permissions(run.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let e = lock(run.path()).unwrap_err().to_string();
        assert!(e.contains("writable by group or others"), "{e}");
        assert!(!run.path().join(LOCK_FILE).exists());
    }

    #[test]
    fn a_kernel_without_hid_bpf_gets_its_own_exit_status() {
        assert_eq!(Failure::NoHidBpf.status(), 3);
        assert!(Failure::NoHidBpf.to_string().contains("6.11"));
    }
}
