//! inotify on paths, to see whether a program opened or created device nodes while it ran
//! (a grab needs an open, a clone needs `/dev/uinput` and creates an evdev node).

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::sys;

/// `IN_OPEN`: a file was opened.
pub const IN_OPEN: u32 = 0x0000_0020;
/// `IN_CREATE`: a file was created in a watched directory.
pub const IN_CREATE: u32 = 0x0000_0100;

/// One filesystem event: the path (directory + entry name, or the watched file) and mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsEvent {
    /// What was opened or created.
    pub path: PathBuf,
    /// `IN_*` bits.
    pub mask: u32,
}

/// An inotify instance watching some paths.
#[derive(Debug)]
pub struct FsWatch {
    fd: OwnedFd,
    watches: Vec<(i32, PathBuf)>,
}

impl FsWatch {
    /// Watches each `(path, mask)`.
    pub fn new(paths: &[(&Path, u32)]) -> anyhow::Result<FsWatch> {
        // SAFETY: plain syscall; the fd is owned below.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error()).context("inotify_init1");
        }
        // SAFETY: `raw` is a fresh fd owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut watches = Vec::new();
        for &(path, mask) in paths {
            let c = CString::new(path.as_os_str().as_encoded_bytes())?;
            // SAFETY: `c` is a valid NUL-terminated path.
            let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), mask) };
            if wd < 0 {
                return Err(std::io::Error::last_os_error())
                    .with_context(|| format!("inotify_add_watch {}", path.display()));
            }
            watches.push((wd, path.to_owned()));
        }
        Ok(FsWatch { fd, watches })
    }

    /// Every event queued so far (entries without a name on a directory watch, i.e. the
    /// directory itself being listed, are included with the directory's path).
    pub fn events(&self) -> anyhow::Result<Vec<FsEvent>> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        while let Some(n) = sys::read_once(&self.fd, &mut buf).context("read inotify")? {
            let mut off = 0;
            while off + 16 <= n {
                let i32_at = |o: usize| i32::from_ne_bytes(buf[o..o + 4].try_into().unwrap());
                let u32_at = |o: usize| u32::from_ne_bytes(buf[o..o + 4].try_into().unwrap());
                let wd = i32_at(off);
                let mask = u32_at(off + 4);
                let len = u32_at(off + 12) as usize;
                let name = sys::c_str(&buf[off + 16..off + 16 + len]);
                let base = self
                    .watches
                    .iter()
                    .find(|(w, _)| *w == wd)
                    .map(|(_, p)| p.clone())
                    .unwrap_or_default();
                let path = if name.is_empty() {
                    base
                } else {
                    base.join(name)
                };
                out.push(FsEvent { path, mask });
                off += 16 + len;
            }
        }
        Ok(out)
    }
}
