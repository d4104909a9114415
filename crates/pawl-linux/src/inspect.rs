//! Read-only device access for `pawl inspect` and `pawl devices`: list pointer devices,
//! open them without grabbing and read their events, probe whether another process grabs
//! one. Never opens a node whose capabilities are not a pointer's.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use pawl_evdev::{EVENT_SIZE, Event};
use rustix::event::{PollFd, PollFlags};

use crate::caps::{Caps, Kind};
use crate::sys;
use crate::sysfs::{self, SysDevice};

/// Every pointer device (mouse or absolute pointer) under `class_dir` (normally
/// `/sys/class/input`), in node order, pawl's own virtual devices included (see
/// [`SysDevice::is_pawl_device`]). Nodes that vanish while being read are skipped.
///
/// Errors: `class_dir` cannot be listed.
pub fn pointer_devices(class_dir: &Path) -> io::Result<Vec<SysDevice>> {
    Ok(sysfs::event_nodes(class_dir)?
        .iter()
        .filter_map(|node| sysfs::read_device(class_dir, node).ok())
        .filter(|d| d.kind() != Kind::Other)
        .collect())
}

/// What an `EVIOCGRAB` probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrabProbe {
    /// Nobody grabs it (the probe took the grab and released it at once).
    Free,
    /// Another open file grabs it (`EBUSY`).
    Grabbed,
}

/// Probes whether another process grabs the device at `path`: opens it read-only, tries
/// `EVIOCGRAB` and releases the grab immediately when it succeeds. For the few
/// microseconds in between, events reach only this probe; callers probe only devices pawl
/// would grab itself.
///
/// Errors: the device cannot be opened (permissions) or the ioctl fails otherwise.
pub fn probe_grab(path: &Path) -> io::Result<GrabProbe> {
    let file = open_read_only(path)?;
    match sys::grab(file.as_fd(), true) {
        Ok(()) => {
            sys::grab(file.as_fd(), false)?;
            Ok(GrabProbe::Free)
        }
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::BUSY.raw_os_error()) => {
            Ok(GrabProbe::Grabbed)
        }
        Err(e) => Err(e),
    }
}

fn open_read_only(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

/// One device opened for reading (never grabbed).
#[derive(Debug)]
pub struct Watched {
    file: Option<File>,
    /// Its capabilities as the device reports them (`EVIOCGBIT`, `EVIOCGPROP`).
    pub caps: Caps,
    /// Its absolute axes (`EVIOCGABS`): (code, minimum, maximum, fuzz, flat, resolution)
    /// for each code in `caps.abs`.
    pub abs: Vec<(u16, i32, i32, i32, i32, i32)>,
    /// `EVIOCGID`: bus, vendor, product, version.
    pub id: (u16, u16, u16, u16),
}

/// What [`Watcher::wait`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// An event of device `.0`.
    Event(usize, Event),
    /// Device `.0` went away (unplugged); it is not read any more.
    Gone(usize),
}

/// Reads events from several devices without grabbing them: the events still reach
/// everyone else (the compositor, pawl).
#[derive(Debug)]
pub struct Watcher {
    devices: Vec<Watched>,
    buf: Vec<u8>,
}

impl Watcher {
    /// Opens every path read-only and non-blocking, with `CLOCK_MONOTONIC` timestamps.
    ///
    /// Errors: a device cannot be opened (naming it).
    pub fn open(paths: &[&Path]) -> Result<Watcher, crate::Error> {
        let mut devices = Vec::new();
        for path in paths {
            let file = open_read_only(path).map_err(|e| crate::Error::io(path, "open", e))?;
            let (caps, abs) =
                sys::read_caps(file.as_fd()).map_err(|e| crate::Error::io(path, "query", e))?;
            let id = sys::input_id(file.as_fd()).map_err(|e| crate::Error::io(path, "query", e))?;
            // Per-file: other readers keep their clock.
            let _ = sys::set_clock_monotonic(file.as_fd());
            let abs = caps
                .abs
                .iter()
                .map(|c| {
                    let a = abs[usize::from(c)];
                    (c, a.minimum, a.maximum, a.fuzz, a.flat, a.resolution)
                })
                .collect();
            devices.push(Watched {
                file: Some(file),
                caps,
                abs,
                id: (id.bustype, id.vendor, id.product, id.version),
            });
        }
        Ok(Watcher {
            devices,
            buf: vec![0; 64 * EVENT_SIZE],
        })
    }

    /// The opened devices, in the order given.
    pub fn devices(&self) -> &[Watched] {
        &self.devices
    }

    /// Blocks (no timeout: no wakeups while nothing happens) until at least one device has
    /// events, reads everything available and calls `f` for each event or vanished device.
    /// Returns `false` when no device is left to read.
    ///
    /// Errors: `poll(2)` fails (other than `EINTR`), or a read fails other than by the
    /// device going away.
    pub fn wait(&mut self, mut f: impl FnMut(Input)) -> io::Result<bool> {
        let open: Vec<usize> = (0..self.devices.len())
            .filter(|&i| self.devices[i].file.is_some())
            .collect();
        if open.is_empty() {
            return Ok(false);
        }
        let ready: Vec<bool> = {
            let mut fds: Vec<PollFd<'_>> = open
                .iter()
                .map(|&i| PollFd::new(self.devices[i].file.as_ref().unwrap(), PollFlags::IN))
                .collect();
            match rustix::event::poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => return Ok(true),
                Err(e) => return Err(e.into()),
            }
            fds.iter().map(|p| !p.revents().is_empty()).collect()
        };
        for (k, &i) in open.iter().enumerate() {
            if !ready[k] {
                continue;
            }
            loop {
                let file = self.devices[i].file.as_mut().unwrap();
                match file.read(&mut self.buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        for chunk in self.buf[..n].chunks_exact(EVENT_SIZE) {
                            let bytes: &[u8; EVENT_SIZE] = chunk.try_into().unwrap();
                            f(Input::Event(i, Event::from_bytes(bytes)));
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NODEV.raw_os_error()) => {
                        self.devices[i].file = None;
                        f(Input::Gone(i));
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(true)
    }
}
