//! Where an attached device's objects are pinned, and the API pawl's daemon uses to reach
//! them: open one HID device's pinned maps by its sysfs name, write the settings, take the
//! ring, read the stats.
//!
//! Layout (made by `pawl-kernel-attach`, which mounts a bpffs of its own there, because
//! systemd mounts `/sys/fs/bpf` mode 0700 and only root could reach pins under it):
//!
//! ```text
//! /run/pawl/bpf/                          bpffs, root 0755 (lists attached device names)
//! /run/pawl/bpf/<hid>/                    seat user, 0700: only that user gets further
//! /run/pawl/bpf/<hid>/link                root 0600: the struct_ops link
//! /run/pawl/bpf/<hid>/settings            seat user 0600: struct pawl_settings (read/write)
//! /run/pawl/bpf/<hid>/ring                seat user 0600: the ringbuf (consuming maps it rw)
//! /run/pawl/bpf/<hid>/stats               seat user 0400: the counters
//! ```
//!
//! `<hid>` is the HID device's sysfs name, `BUS:VENDOR:PRODUCT.ID` (e.g.
//! `0005:046D:B034.0003`); the id changes on every reconnect, and so does the directory.

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

/// The directory of device `name` under `root`.
pub fn device_dir(root: &Path, name: &str) -> PathBuf {
    root.join(name)
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
        let open = |pin: &str| {
            let p = dir.join(pin);
            MapHandle::from_pinned_path(&p).map_err(|e| PinError::Open(p, e))
        };
        let settings = open(SETTINGS)?;
        let stats = open(STATS)?;
        let ring = open(RING)?;
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
            settings,
            stats,
            ring,
        })
    }

    /// The HID device's sysfs name.
    pub fn name(&self) -> &str {
        &self.name
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hid_sysfs_names_are_accepted() {
        assert!(is_hid_name("0005:046D:B034.0003"));
        assert_eq!(hid_id("0005:046D:B034.0003"), Some(3));
        assert_eq!(hid_id("0003:046D:4082.000A"), Some(10));
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
