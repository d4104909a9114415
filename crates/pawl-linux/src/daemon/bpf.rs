//! pawl's HID-BPF program as the daemon sees it: its state on one mouse ([`Bpf`], held by
//! the mouse record), whether the loader attached it for this user ([`pinned`]), and what
//! the system offers kernel mode (the loader, HID-BPF, the kernel's release). Kernel mode
//! itself (`kernel_path.rs`) opens the pins, writes the settings and reads the ring.

use std::path::Path;

use pawl_bpf::maps::Settings;
use pawl_bpf::pins::{self, KernelDevice, RingReader};

use super::paths::Attachment;

/// Where the package installs the loader (root-owned; the udev rule runs it).
pub(crate) const LOADER: &str = "/usr/libexec/pawl/pawl-kernel-attach";

/// pawl's program on one mouse's HID device, as the daemon has it.
#[derive(Debug, Default)]
pub(crate) enum Bpf {
    /// Not in use (not kernel mode, or no program attached).
    #[default]
    Idle,
    /// Its pins could not be opened; tried again when the loader announces an attachment
    /// or the config is reloaded.
    Failed {
        /// Why, for `pawl status`.
        reason: String,
    },
    /// In use: settings written, ring watched.
    Active(Box<KernelPath>),
}

/// An attachment in use.
pub(crate) struct KernelPath {
    /// The attachment's pins, open.
    pub(super) dev: KernelDevice,
    /// The reader of its ring.
    pub(super) reader: RingReader,
    /// The wheel's unit, v120 (what the loader wrote: 8 behind hid-logitech-hidpp hi-res).
    pub(super) unit_v120: u32,
    /// What was last written, to write only changes.
    pub(super) written: Option<Settings>,
}

impl std::fmt::Debug for KernelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelPath")
            .field("hid", &self.dev.name())
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

/// Whether the loader attached pawl's program to HID device `name` for this user: its
/// pin directory under [`pins::PIN_ROOT`] is there, root's (or ours, from an older
/// loader), and its stats pin is ours ([`pins::attachment_owner`]: the loader hands it
/// over last, after every pin). Stats of another user's (root's too, for a pawl not run as
/// root), or a directory of another user's, is [`Attachment::OtherUser`]: that user's pawl
/// runs kernel mode on this mouse, never two at once (`/run/pawl/bpf` is root's 0755, so
/// the owners seen are the loader's doing; each pin's mode keeps its maps from anyone else).
pub(crate) fn pinned(name: &str) -> Attachment {
    pinned_in(
        Path::new(pins::PIN_ROOT),
        name,
        rustix::process::geteuid().as_raw(),
    )
}

/// [`pinned`] under `root` for a pawl running with effective uid `euid`.
fn pinned_in(root: &Path, name: &str, euid: u32) -> Attachment {
    use std::os::unix::fs::MetadataExt;
    if !pins::is_hid_name(name) {
        return Attachment::NoHidDevice;
    }
    let dir = pins::device_dir(root, name);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() && m.uid() != 0 && m.uid() != euid => {
            Attachment::OtherUser { uid: m.uid() }
        }
        Ok(m) if m.is_dir() => match pins::attachment_owner(&dir) {
            Some(u) if u == euid => Attachment::Attached,
            Some(uid) => Attachment::OtherUser { uid },
            None => Attachment::NotAttached,
        },
        _ => Attachment::NotAttached,
    }
}

/// Whether the running kernel has HID-BPF (`struct hid_bpf_ops` in its BTF).
pub(crate) fn has_hid_bpf() -> bool {
    pawl_bpf::attach::has_hid_bpf()
}

/// Whether the loader is installed where the udev rule runs it.
pub(crate) fn loader_installed() -> bool {
    Path::new(LOADER).is_file()
}

/// The running kernel's release (`/proc/sys/kernel/osrelease`), for reasons.
pub(crate) fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "?".into())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn pins_are_ours_another_users_or_not_there_by_their_stats_pins_owner() {
        let root = tempfile::tempdir().unwrap();
        let name = "0005:046D:B034.0003";
        let me = std::fs::metadata(root.path()).unwrap().uid();
        assert_eq!(pinned_in(root.path(), name, me), Attachment::NotAttached);
        let dir = pins::device_dir(root.path(), name);
        std::fs::create_dir(&dir).unwrap();
        // Being made (no stats pin yet): not attached, for anyone.
        assert_eq!(pinned_in(root.path(), name, me), Attachment::NotAttached);
        assert_eq!(
            pinned_in(root.path(), name, me + 1),
            Attachment::NotAttached
        );
        std::fs::write(dir.join(pins::STATS), b"").unwrap();
        assert_eq!(pinned_in(root.path(), name, me), Attachment::Attached);
        // Seen by anyone else, the attachment is the stats pin's owner's.
        assert_eq!(
            pinned_in(root.path(), name, me + 1),
            Attachment::OtherUser { uid: me }
        );
        // A stats "pin" that is a symlink is not followed: not attached.
        std::fs::remove_file(dir.join(pins::STATS)).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join(pins::STATS)).unwrap();
        assert_eq!(pinned_in(root.path(), name, me), Attachment::NotAttached);
        assert_eq!(
            pinned_in(root.path(), "not a hid name", me),
            Attachment::NoHidDevice
        );
    }

    #[test]
    fn a_directory_of_another_user_is_theirs_whatever_is_in_it() {
        // Only root can give a directory away.
        if rustix::process::geteuid().as_raw() != 0 {
            eprintln!("not root: a directory of another user's is not checked");
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let name = "0005:046D:B034.0004";
        let dir = pins::device_dir(root.path(), name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(pins::STATS), b"").unwrap();
        std::os::unix::fs::chown(&dir, Some(1000), None).unwrap();
        assert_eq!(
            pinned_in(root.path(), name, 0),
            Attachment::OtherUser { uid: 1000 }
        );
        assert_eq!(
            pinned_in(root.path(), name, 1001),
            Attachment::OtherUser { uid: 1000 }
        );
    }
}
