//! pawl's virtual devices: the uinput clone of each grabbed pointer and the minimal
//! virtual keyboard that performs chords. Created with raw uinput ioctls (the `evdev`
//! crate has no `UI_SET_PHYS`/props and writes a frame in two `write(2)` calls); every
//! frame is written with a single `write(2)`.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::caps::{ABS_MAX, Caps};
use crate::error::Error;
pub use crate::error::UINPUT;
use crate::sys::{self, AbsInfo, InputId, UinputSpec};
use crate::sysfs::{self, PAWL_PHYS_PREFIX, SysDevice};

/// The name of pawl's virtual keyboard.
pub const KEYBOARD_NAME: &str = "pawl virtual keyboard";
/// Its `phys`.
pub const KEYBOARD_PHYS: &str = "pawl/keyboard";

/// A created uinput device. Dropping it destroys the device (`UI_DEV_DESTROY`); the kernel
/// then releases every key and button still down on it.
#[derive(Debug)]
pub struct VirtualDevice {
    fd: OwnedFd,
    /// `/dev/input/eventM`, when it could be found (for logs and tests).
    node: Option<PathBuf>,
    /// Whether the last write failed (so a failing device logs once, not once per frame).
    failing: std::cell::Cell<bool>,
}

impl VirtualDevice {
    /// Opens `/dev/uinput` and creates a device from `spec`.
    ///
    /// Errors: opening `/dev/uinput` ([`crate::error::ErrorKind::Permission`] with the fix
    /// when access is denied) or an ioctl failing.
    pub fn create(spec: &UinputSpec) -> Result<VirtualDevice, Error> {
        let fd = open_uinput()?;
        sys::uinput_create(fd.as_fd(), spec)
            .map_err(|e| Error::io(UINPUT, "create a virtual device on", e))?;
        let node = sys::uinput_sysname(fd.as_fd())
            .ok()
            .and_then(|input| sysfs::event_node_of(Path::new(sysfs::SYS_CLASS_INPUT), &input))
            .map(|event| Path::new(sysfs::DEV_INPUT).join(event));
        Ok(VirtualDevice {
            fd,
            node,
            failing: std::cell::Cell::new(false),
        })
    }

    /// The device's `/dev/input/eventM`, if found.
    pub fn node(&self) -> Option<&Path> {
        self.node.as_deref()
    }

    /// Writes one or more whole frames (events each followed by their `SYN_REPORT`) with a
    /// single `write(2)`.
    #[inline]
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let res = self.write_once(bytes);
        match &res {
            Ok(()) if self.failing.replace(false) => {
                log::info!("writing to virtual device {:?} works again", self.node);
            }
            Err(e) if !self.failing.replace(true) => log::error!(
                "cannot write to virtual device {:?}: {e} (logged once until a write succeeds)",
                self.node
            ),
            _ => {}
        }
        res
    }

    #[inline]
    fn write_once(&self, bytes: &[u8]) -> io::Result<()> {
        let n = rustix::io::write(&self.fd, bytes)?;
        if n != bytes.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "short write to uinput",
            ));
        }
        Ok(())
    }
}

impl Drop for VirtualDevice {
    fn drop(&mut self) {
        let _ = sys::uinput_destroy(self.fd.as_fd());
    }
}

/// Opens `/dev/uinput` for writing (non-blocking, close-on-exec).
///
/// Errors name `/dev/uinput` and, for `EACCES`/`ENOENT`, the fix.
pub fn open_uinput() -> Result<OwnedFd, Error> {
    rustix::fs::open(
        UINPUT,
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(UINPUT, "open", e.into()))
}

/// The spec of the clone of `source`, whose capabilities (read from its fd) are `caps` and
/// `abs`: same name and ids, `phys` = `pawl/<source phys>`, capabilities per
/// [`Caps::clone_caps`].
pub fn clone_spec(
    source: &SysDevice,
    caps: &Caps,
    abs: &[AbsInfo; ABS_MAX as usize + 1],
) -> UinputSpec {
    UinputSpec {
        name: source.name.clone(),
        id: InputId {
            bustype: source.bus,
            vendor: source.vendor,
            product: source.product,
            version: source.version,
        },
        phys: format!("{PAWL_PHYS_PREFIX}{}", source.phys),
        caps: caps.clone_caps(),
        abs: *abs,
    }
}

/// The keys every virtual keyboard declares besides those its chords press: `KEY_ESC` (1)
/// to `KEY_S` (31), the block udev's `input_id` builtin requires of a full keyboard
/// (`ID_INPUT_KEYBOARD`: bits 1–31 of the key bitmap, mask `0xFFFFFFFE`, systemd
/// `src/udev/udev-builtin-input_id.c`, `test_key`). Without it udev tags the node only
/// `ID_INPUT_KEY`, and what looks for keyboards by that tag (desktops' keyboard settings,
/// X.org's `MatchIsKeyboard` through udev) passes it over.
pub const FULL_KEYBOARD_KEYS: std::ops::RangeInclusive<u16> = 1..=31;

/// The spec of the virtual keyboard with `keys` (`KEY_*` codes) and
/// [`FULL_KEYBOARD_KEYS`]: `EV_KEY` only, no autorepeat, bus `BUS_VIRTUAL`. pawl presses only
/// the keys of its chords.
pub fn keyboard_spec(keys: impl IntoIterator<Item = u16>) -> UinputSpec {
    let mut caps = Caps::default();
    caps.ev.set(pawl_evdev::codes::EV_SYN);
    caps.ev.set(pawl_evdev::codes::EV_KEY);
    for k in keys.into_iter().chain(FULL_KEYBOARD_KEYS) {
        caps.key.set(k);
    }
    UinputSpec {
        name: KEYBOARD_NAME.to_owned(),
        id: InputId {
            bustype: pawl_engine::Bus::VIRTUAL.0,
            vendor: 0,
            product: 0,
            version: 1,
        },
        phys: KEYBOARD_PHYS.to_owned(),
        caps,
        abs: [AbsInfo::default(); ABS_MAX as usize + 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysfs::{read_device, tests as fx};
    use pawl_evdev::codes::*;

    #[test]
    fn clone_keeps_identity_and_prefixes_phys() {
        let dir = tempfile::tempdir().unwrap();
        fx::fixture(dir.path(), "event7", fx::MX_MASTER_3S);
        let src = read_device(dir.path(), "event7").unwrap();
        let spec = clone_spec(&src, &src.caps, &[AbsInfo::default(); 64]);
        assert_eq!(spec.name, "Logitech MX Master 3S");
        assert_eq!(
            spec.id,
            InputId {
                bustype: 5,
                vendor: 0x046d,
                product: 0xb034,
                version: 0x17
            }
        );
        assert_eq!(spec.phys, "pawl/00:1a:7d:da:71:13");
        assert_eq!(spec.caps, src.caps.clone_caps());
    }

    #[test]
    fn keyboard_has_the_given_keys_and_what_udev_calls_a_full_keyboard() {
        let spec = keyboard_spec([125, 104]);
        let want: Vec<u16> = (1..=31).chain([104, 125]).collect();
        assert_eq!(spec.caps.key.iter().collect::<Vec<_>>(), want);
        assert_eq!(
            spec.caps.ev.iter().collect::<Vec<_>>(),
            vec![EV_SYN, EV_KEY]
        );
        assert!(spec.phys.starts_with(PAWL_PHYS_PREFIX));
    }
}
