//! Where an attached device's objects are pinned, and the API pawl's daemon uses to reach
//! them: open one HID device's pinned maps by its sysfs name, write the settings, take the
//! ring, read the stats.
//!
//! Layout (made by `pawl-kernel-attach`, which mounts a bpffs of its own there, because
//! systemd mounts `/sys/fs/bpf` mode 0700 and only root could reach pins under it):
//!
//! ```text
//! /run/pawl/                              root 0755 (the loader touches it to announce)
//! /run/pawl/loader.lock                   root 0600: the loader's lock (attach::lock)
//! /run/pawl/bpf/                          bpffs, root 0755 (lists attached device names)
//! /run/pawl/bpf/<dev>/                    root 0755: only root adds, renames or removes
//! /run/pawl/bpf/<dev>/link                root 0600: the struct_ops link
//! /run/pawl/bpf/<dev>/settings            seat user 0600: struct pawl_settings (read/write)
//! /run/pawl/bpf/<dev>/ring                seat user 0600: the ringbuf (consuming maps it rw)
//! /run/pawl/bpf/<dev>/stats               seat user 0400: the counters (handed over last)
//! /run/pawl/bpf/<dev>/glide               root 0600: the glide timer and work item (pinned so
//!                                         the kernel arms its timers; nothing to read)
//! ```
//!
//! A pin is an inode: bpffs checks its owner and mode when a pin is opened (`BPF_OBJ_GET`
//! asks for read, or read and write), so the seat user reaches exactly its three maps,
//! and nobody else any. The directory is root's: the seat user can rename, add or remove
//! nothing in it (bpffs has no sticky bit, and a directory of theirs would let them), so
//! what root unpins, replaces and removes is always what it pinned. The user of an
//! attachment is the owner of its `stats` pin ([`attachment_owner`]).
//!
//! `<dev>` is the HID device's sysfs name, `BUS:VENDOR:PRODUCT.ID` (e.g.
//! `0005:046D:B034.0003`), with the dot made an underscore (`0005:046D:B034_0003`: bpffs
//! refuses names with a dot); the id changes on every reconnect, and so does the directory.

use std::fmt;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use libbpf_rs::{MapCore, MapFlags, MapHandle};

use crate::maps::{RING_RECORD_SIZE, RingRecord, SETTINGS_SIZE, STAT_COUNT, Settings, Stats};

/// The bpffs mount the loader makes and pins under.
pub const PIN_ROOT: &str = "/run/pawl/bpf";
/// The pin of the struct_ops link (removing it detaches the program).
pub const LINK: &str = "link";
/// The pin of the settings map.
pub const SETTINGS: &str = "settings";
/// The pin of the ringbuf.
pub const RING: &str = "ring";
/// The pin of the stats map.
pub const STATS: &str = "stats";
/// The pin of the glide map (the glide timer and work item): the kernel arms a map's BPF
/// timers only while user space holds the map or it is pinned, and the loader exits.
/// Root's, mode 0600: nothing for user space to read.
pub const GLIDE: &str = "glide";

/// Who the attachment in pin directory `dir` is for: the owner of its [`STATS`] pin
/// (`lstat`: a regular file, never a symlink followed), `None` while there is none (not
/// attached, being made, or not reachable by the caller).
pub fn attachment_owner(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(dir.join(STATS))
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| m.uid())
}

/// Whether `name` is a HID device sysfs name (`XXXX:XXXX:XXXX.XXXX`, hex): the only names
/// the loader and this API accept, so that no path can be smuggled in.
pub fn is_hid_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 19
        && b.len() <= 24
        && b[4] == b':'
        && b[9] == b':'
        && b[14] == b'.'
        && b.iter()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 9 | 14) || c.is_ascii_hexdigit())
}

/// The HID id in a sysfs name (the hex number after the dot), as `hid_bpf_ops.hid_id`
/// takes it; `None` unless [`is_hid_name`].
pub fn hid_id(name: &str) -> Option<i32> {
    if !is_hid_name(name) {
        return None;
    }
    i32::from_str_radix(&name[15..], 16).ok()
}

/// The directory of device `name` under `root`: the sysfs name with its `.` made `_`
/// (bpffs refuses names with a dot: `0005:046D:B034_0003`).
pub fn device_dir(root: &Path, name: &str) -> PathBuf {
    root.join(name.replace('.', "_"))
}

/// The HID sysfs name of a pin directory's name ([`device_dir`]'s inverse), `None` for any
/// other name.
pub fn hid_name_of_dir(dir_name: &str) -> Option<String> {
    let name = dir_name.replacen('_', ".", 1);
    (is_hid_name(&name) && !dir_name.contains('.')).then_some(name)
}

/// Why a device's pins could not be used.
#[derive(Debug)]
pub enum PinError {
    /// Not a HID sysfs name.
    BadName(String),
    /// A pin could not be opened (absent: the device is not in kernel mode; or not ours).
    Open(PathBuf, libbpf_rs::Error),
    /// A pinned map is not what the program makes (another program's pin?).
    Shape(PathBuf, &'static str),
    /// A map operation failed.
    Map(&'static str, libbpf_rs::Error),
}

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PinError::BadName(n) => write!(f, "{n:?} is not a HID device name"),
            PinError::Open(p, e) => write!(f, "cannot open {}: {e}", p.display()),
            PinError::Shape(p, what) => write!(f, "{}: not pawl's map ({what})", p.display()),
            PinError::Map(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

impl std::error::Error for PinError {}

/// One attached device's pinned maps, opened by the seat user's pawl.
#[derive(Debug)]
pub struct KernelDevice {
    name: String,
    /// The pin root it was opened under.
    root: PathBuf,
    settings: MapHandle,
    stats: MapHandle,
    ring: MapHandle,
}

impl KernelDevice {
    /// Opens the pins of HID device `name` (its sysfs name) under [`PIN_ROOT`].
    pub fn open(name: &str) -> Result<KernelDevice, PinError> {
        KernelDevice::open_in(Path::new(PIN_ROOT), name)
    }

    /// Opens the pins of `name` under `root` (a bpffs directory). Checks each map's type
    /// and sizes against the program's.
    pub fn open_in(root: &Path, name: &str) -> Result<KernelDevice, PinError> {
        if !is_hid_name(name) {
            return Err(PinError::BadName(name.to_owned()));
        }
        let dir = device_dir(root, name);
        // The stats pin is the seat user's read-only (0400): opened with BPF_F_RDONLY, as a
        // read-write open of it fails with EACCES for anyone but root.
        let open = |pin: &str, flags: u32| {
            let p = dir.join(pin);
            MapHandle::from_pinned_path_with_file_flags(&p, flags).map_err(|e| PinError::Open(p, e))
        };
        let settings = open(SETTINGS, 0)?;
        let stats = open(STATS, libbpf_rs::libbpf_sys::BPF_F_RDONLY)?;
        let ring = open(RING, 0)?;
        let shape = |m: &MapHandle, pin: &str, ty: libbpf_rs::MapType, value: u32, n: u32| {
            let ok = m.map_type() == ty
                && (ty == libbpf_rs::MapType::RingBuf
                    || (m.value_size() == value && m.max_entries() == n));
            if ok {
                Ok(())
            } else {
                Err(PinError::Shape(dir.join(pin), "type or size"))
            }
        };
        shape(
            &settings,
            SETTINGS,
            libbpf_rs::MapType::Array,
            SETTINGS_SIZE as u32,
            1,
        )?;
        shape(&stats, STATS, libbpf_rs::MapType::Array, 8, STAT_COUNT)?;
        shape(&ring, RING, libbpf_rs::MapType::RingBuf, 0, 0)?;
        Ok(KernelDevice {
            name: name.to_owned(),
            root: root.to_owned(),
            settings,
            stats,
            ring,
        })
    }

    /// The HID device's sysfs name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the device's settings pin is still the map this handle holds: `false` once
    /// the loader detached the program (the pins are gone) or attached a new one in its
    /// place (a bind again: the package's postinst, `add` run by hand), so that the holder
    /// opens the new pins or leaves kernel mode. One `BPF_OBJ_GET` and two map-info
    /// queries (the map ids compared).
    pub fn is_pinned(&self) -> bool {
        let p = device_dir(&self.root, &self.name).join(SETTINGS);
        let Ok(now) = MapHandle::from_pinned_path(&p) else {
            return false;
        };
        match (self.settings.info(), now.info()) {
            (Ok(held), Ok(pinned)) => held.info.id == pinned.info.id,
            _ => false,
        }
    }

    /// The program's current settings.
    pub fn settings(&self) -> Result<Settings, PinError> {
        let v = self
            .settings
            .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| PinError::Map("read settings", e))?
            .unwrap_or_default();
        Settings::from_bytes(&v).ok_or(PinError::Shape(PathBuf::from(SETTINGS), "value size"))
    }

    /// Replaces the settings (one map update; the program reads them per report, so the
    /// next report uses them). The pipeline's state is kept.
    pub fn write_settings(&self, s: &Settings) -> Result<(), PinError> {
        self.settings
            .update(&0u32.to_ne_bytes(), &s.to_bytes(), MapFlags::ANY)
            .map_err(|e| PinError::Map("write settings", e))
    }

    /// The counters.
    pub fn stats(&self) -> Result<Stats, PinError> {
        let mut c = [0u64; STAT_COUNT as usize];
        for (k, v) in c.iter_mut().enumerate() {
            let got = self
                .stats
                .lookup(&(k as u32).to_ne_bytes(), MapFlags::ANY)
                .map_err(|e| PinError::Map("read stats", e))?;
            if let Some(b) = got.filter(|b| b.len() == 8) {
                *v = u64::from_ne_bytes(b[..8].try_into().unwrap());
            }
        }
        Ok(Stats::from_counters(&c))
    }

    /// The ringbuf map's fd (for an epoll set of one's own, with libbpf's ring_buffer or a
    /// mmap of one's own).
    pub fn ring_fd(&self) -> BorrowedFd<'_> {
        self.ring.as_fd()
    }

    /// A consumer of the ring calling `f` for each record (records of another size are
    /// skipped). Its `epoll_fd()` becomes readable when records arrive; `consume()` then
    /// drains them without blocking.
    pub fn ring_buffer<'a>(
        &'a self,
        mut f: impl FnMut(RingRecord) + 'a,
    ) -> Result<libbpf_rs::RingBuffer<'a>, PinError> {
        let mut b = libbpf_rs::RingBufferBuilder::new();
        b.add(&self.ring, move |data: &[u8]| {
            if data.len() >= RING_RECORD_SIZE
                && let Some(r) = RingRecord::from_bytes(&data[..RING_RECORD_SIZE])
            {
                f(r);
            }
            0
        })
        .map_err(|e| PinError::Map("ring buffer", e))?;
        b.build().map_err(|e| PinError::Map("ring buffer", e))
    }
}

/// A consumer of one device's ring that owns what it needs (for a daemon that keeps it
/// beside the device in a table): the map fd itself goes into the caller's epoll set
/// ([`KernelDevice::ring_fd`]: readable while records wait), [`RingReader::drain`] takes
/// what arrived. Records are queued in a buffer that keeps its capacity, so draining
/// allocates nothing once it has grown to a burst's size.
pub struct RingReader {
    ring: libbpf_rs::RingBuffer<'static>,
    queue: std::rc::Rc<std::cell::RefCell<Vec<RingRecord>>>,
}

impl fmt::Debug for RingReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingReader").finish_non_exhaustive()
    }
}

impl RingReader {
    /// Consumes every record in the ring (without blocking) and calls `f` with each, in
    /// the order the program submitted them. Errors: the ring could not be read.
    pub fn drain(&mut self, mut f: impl FnMut(RingRecord)) -> Result<(), PinError> {
        self.ring
            .consume()
            .map_err(|e| PinError::Map("consume the ring", e))?;
        let mut q = self.queue.borrow_mut();
        for r in q.drain(..) {
            f(r);
        }
        Ok(())
    }
}

impl KernelDevice {
    /// A [`RingReader`] of this device's ring (the ring is mapped; the reader stays valid
    /// after `self` is dropped).
    pub fn ring_reader(&self) -> Result<RingReader, PinError> {
        let queue = std::rc::Rc::new(std::cell::RefCell::new(Vec::with_capacity(64)));
        let q = queue.clone();
        let mut b = libbpf_rs::RingBufferBuilder::new();
        b.add(&self.ring, move |data: &[u8]| {
            if data.len() >= RING_RECORD_SIZE
                && let Some(r) = RingRecord::from_bytes(&data[..RING_RECORD_SIZE])
            {
                q.borrow_mut().push(r);
            }
            0
        })
        .map_err(|e| PinError::Map("ring buffer", e))?;
        let ring = b.build().map_err(|e| PinError::Map("ring buffer", e))?;
        Ok(RingReader { ring, queue })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maps::FLAG_WHEEL;
    use libbpf_rs::MapType;
    use pawl_engine::scroll::ScrollParams;

    /// A bpffs mounted on a fresh directory, unmounted when dropped. Needs root (CAP_SYS_ADMIN
    /// to mount, CAP_BPF for the maps): CI runs as root; elsewhere set
    /// PAWL_SKIP_BPF_TESTS=1 to skip, which is said on stderr.
    struct Bpffs(tempfile::TempDir);

    impl Bpffs {
        fn mount() -> Option<Bpffs> {
            let dir = tempfile::tempdir().unwrap();
            let c = std::ffi::CString::new(dir.path().to_str().unwrap()).unwrap();
            // SAFETY: NUL-terminated strings living across the call.
            let r = unsafe {
                libc::mount(
                    c"bpffs".as_ptr(),
                    c.as_ptr(),
                    c"bpf".as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
            if r == 0 {
                return Some(Bpffs(dir));
            }
            let e = std::io::Error::last_os_error();
            if std::env::var_os("PAWL_SKIP_BPF_TESTS").is_some() {
                eprintln!("skipped (PAWL_SKIP_BPF_TESTS): cannot mount a bpffs: {e}");
                return None;
            }
            panic!("cannot mount a bpffs ({e}): run as root, or set PAWL_SKIP_BPF_TESTS=1");
        }
    }

    impl Drop for Bpffs {
        fn drop(&mut self) {
            let c = std::ffi::CString::new(self.0.path().to_str().unwrap()).unwrap();
            // SAFETY: NUL-terminated.
            unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
        }
    }

    fn array(value_size: u32, n: u32) -> MapHandle {
        let opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
            sz: size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
            ..Default::default()
        };
        MapHandle::create(MapType::Array, Some("pawl_test"), 4, value_size, n, &opts).unwrap()
    }

    /// Pins maps shaped as the program's under `<root>/<name>/` (as the loader does).
    fn pin_like_the_loader(root: &Path, name: &str, settings_size: u32) -> MapHandle {
        let dir = device_dir(root, name);
        std::fs::create_dir(&dir).unwrap();
        let opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
            sz: size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
            ..Default::default()
        };
        array(settings_size, 1).pin(dir.join(SETTINGS)).unwrap();
        let mut stats = array(8, STAT_COUNT);
        stats.pin(dir.join(STATS)).unwrap();
        MapHandle::create(MapType::RingBuf, Some("pawl_ring"), 0, 0, 4096, &opts)
            .unwrap()
            .pin(dir.join(RING))
            .unwrap();
        stats
    }

    #[test]
    fn the_daemon_opens_a_pinned_device_and_reads_and_writes_its_maps() {
        let Some(fs) = Bpffs::mount() else { return };
        let name = "0005:046D:B034.0007";
        let stats = pin_like_the_loader(fs.0.path(), name, SETTINGS_SIZE as u32);
        let dev = KernelDevice::open_in(fs.0.path(), name).unwrap();
        assert_eq!(dev.name(), name);
        assert_eq!(dev.settings().unwrap(), Settings::default());
        let mut s = Settings::new(&ScrollParams::default(), 8);
        s.reprog_index = 9;
        dev.write_settings(&s).unwrap();
        assert_eq!(dev.settings().unwrap(), s);
        assert_eq!(s.flags, FLAG_WHEEL);
        assert_eq!(dev.stats().unwrap(), Stats::default());
        stats
            .update(&2u32.to_ne_bytes(), &5u64.to_ne_bytes(), MapFlags::ANY)
            .unwrap();
        assert_eq!(dev.stats().unwrap().wheel_frames, 5);
        let rb = dev.ring_buffer(|_| {}).unwrap();
        assert!(rb.epoll_fd() >= 0);
        assert_eq!(rb.consume_raw(), 0, "an empty ring has no record");
        // The daemon's reader, owning what it needs (no borrow of `dev`).
        let mut reader = dev.ring_reader().unwrap();
        drop(rb);
        let mut n = 0;
        reader.drain(|_| n += 1).unwrap();
        assert_eq!(n, 0, "an empty ring has no record");
        use std::os::fd::AsRawFd;
        assert!(dev.ring_fd().as_raw_fd() >= 0);
    }

    #[test]
    fn a_device_whose_pins_were_replaced_or_removed_is_no_longer_pinned() {
        let Some(fs) = Bpffs::mount() else { return };
        let name = "0005:046D:B034.000B";
        pin_like_the_loader(fs.0.path(), name, SETTINGS_SIZE as u32);
        let dev = KernelDevice::open_in(fs.0.path(), name).unwrap();
        assert!(dev.is_pinned());
        // The loader attached again: a new settings map in the old one's place.
        let dir = device_dir(fs.0.path(), name);
        std::fs::remove_file(dir.join(SETTINGS)).unwrap();
        array(SETTINGS_SIZE as u32, 1)
            .pin(dir.join(SETTINGS))
            .unwrap();
        assert!(!dev.is_pinned(), "a replaced settings pin");
        assert!(
            KernelDevice::open_in(fs.0.path(), name)
                .unwrap()
                .is_pinned()
        );
        // Detached: no pin at all.
        std::fs::remove_file(dir.join(SETTINGS)).unwrap();
        assert!(!dev.is_pinned(), "a removed settings pin");
    }

    #[test]
    fn a_pin_that_is_not_the_programs_map_is_refused() {
        let Some(fs) = Bpffs::mount() else { return };
        let name = "0005:046D:B034.0008";
        pin_like_the_loader(fs.0.path(), name, 40);
        let e = KernelDevice::open_in(fs.0.path(), name).unwrap_err();
        assert!(matches!(e, PinError::Shape(..)), "{e}");
        let e = KernelDevice::open_in(fs.0.path(), "0005:046D:B034.0009").unwrap_err();
        assert!(matches!(e, PinError::Open(..)), "{e}");
        let e = KernelDevice::open_in(fs.0.path(), "../x").unwrap_err();
        assert!(matches!(e, PinError::BadName(_)), "{e}");
    }

    #[test]
    fn only_hid_sysfs_names_are_accepted() {
        assert!(is_hid_name("0005:046D:B034.0003"));
        assert_eq!(hid_id("0005:046D:B034.0003"), Some(3));
        assert_eq!(hid_id("0003:046D:4082.000A"), Some(10));
        assert_eq!(
            device_dir(Path::new("/r"), "0005:046D:B034.0003"),
            Path::new("/r/0005:046D:B034_0003")
        );
        assert_eq!(
            hid_name_of_dir("0005:046D:B034_0003").as_deref(),
            Some("0005:046D:B034.0003")
        );
        assert_eq!(hid_name_of_dir("0005:046D:B034.0003"), None);
        assert_eq!(hid_name_of_dir("maps.debug"), None);
        for bad in [
            "",
            "../../etc",
            "0005:046D:B034",
            "0005:046D:B034.00/3",
            "0005-046D-B034.0003",
        ] {
            assert!(!is_hid_name(bad), "{bad}");
            assert_eq!(hid_id(bad), None);
        }
    }
}
