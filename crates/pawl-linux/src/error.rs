//! The backend's error: which file, what pawl tried, the OS error, and for the errors a
//! user can fix (no permission, no uinput module) the fix.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `EACCES`/`EPERM`: the user may not open the file (udev rule or group missing).
    Permission,
    /// `ENOENT`/`ENODEV` on `/dev/uinput`: the uinput module is not loaded.
    NoUinput,
    /// `EBUSY` on `EVIOCGRAB`: another program holds the device.
    Busy,
    /// `ENODEV`: the device vanished.
    Gone,
    /// Anything else.
    Other,
}

/// A backend error naming the file involved.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    path: PathBuf,
    op: &'static str,
    source: io::Error,
}

/// How to grant access, appended to permission errors.
pub const PERMISSION_FIX: &str = "with the .deb the udev rule is installed: log out and in (or re-plug the mouse; `sudo modprobe uinput` for /dev/uinput); from a checkout, install the udev rule: `sudo install -m 644 contrib/70-pawl.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger`, then log out and in (it gives the logged-in user /dev/uinput, pointer devices and MX Master hidraw nodes, never keyboards); or add yourself to the group owning the file (`ls -l` it; usually `input`)";

/// The uinput device: virtual devices are made through it, and its absence means the
/// module is not loaded.
pub const UINPUT: &str = "/dev/uinput";

/// How to get `/dev/uinput`.
pub const UINPUT_FIX: &str = "load the uinput module: `sudo modprobe uinput` (and add `uinput` to /etc/modules-load.d/pawl.conf to load it at boot)";

impl Error {
    /// An error from `op` (`open`, `grab`, …) on `path`, classified from the OS error.
    pub fn io(path: impl AsRef<Path>, op: &'static str, source: io::Error) -> Error {
        let path = path.as_ref().to_owned();
        let is_uinput = path == Path::new(UINPUT);
        let kind = match source.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => ErrorKind::Permission,
            Some(libc::ENOENT | libc::ENODEV | libc::ENXIO) if is_uinput => ErrorKind::NoUinput,
            Some(libc::EBUSY) => ErrorKind::Busy,
            Some(libc::ENODEV) => ErrorKind::Gone,
            _ => ErrorKind::Other,
        };
        Error {
            kind,
            path,
            op,
            source,
        }
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file involved.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The OS error.
    pub fn os_error(&self) -> &io::Error {
        &self.source
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot {} {}: {}",
            self.op,
            self.path.display(),
            self.source
        )?;
        match self.kind {
            ErrorKind::Permission => write!(f, "; to fix, {PERMISSION_FIX}"),
            ErrorKind::NoUinput => write!(f, "; to fix, {UINPUT_FIX}"),
            ErrorKind::Busy => f.write_str(
                "; another program (input-remapper, keyd, logiops, a second pawl?) has grabbed it",
            ),
            _ => Ok(()),
        }
    }
}

/// The OS error is part of the message, so it is not also reported as a `source` (error
/// chains would print it twice).
impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_error_names_the_file_and_the_fix() {
        let e = Error::io(
            "/dev/uinput",
            "open",
            io::Error::from_raw_os_error(libc::EACCES),
        );
        assert_eq!(e.kind(), ErrorKind::Permission);
        let msg = e.to_string();
        assert!(msg.starts_with("cannot open /dev/uinput: "), "{msg}");
        assert!(msg.contains("contrib/70-pawl.rules"), "{msg}");
    }

    #[test]
    fn missing_uinput_says_modprobe() {
        let e = Error::io(
            "/dev/uinput",
            "open",
            io::Error::from_raw_os_error(libc::ENOENT),
        );
        assert_eq!(e.kind(), ErrorKind::NoUinput);
        assert!(e.to_string().contains("modprobe uinput"));
    }

    #[test]
    fn busy_device_is_reported_as_grabbed_elsewhere() {
        let e = Error::io(
            "/dev/input/event5",
            "grab",
            io::Error::from_raw_os_error(libc::EBUSY),
        );
        assert_eq!(e.kind(), ErrorKind::Busy);
        assert!(e.to_string().contains("another program"));
        let e = Error::io(
            "/dev/input/event5",
            "read",
            io::Error::from_raw_os_error(libc::ENODEV),
        );
        assert_eq!(e.kind(), ErrorKind::Gone);
    }
}
