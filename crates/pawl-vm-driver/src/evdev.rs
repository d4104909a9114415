//! Reading evdev nodes: finding a node by name/phys/id, its capabilities, grab probing, and
//! reading events split into frames at `SYN_REPORT`.

use std::collections::VecDeque;
use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use pawl_evdev::codes::{self, EV_SYN, SYN_DROPPED, SYN_REPORT};

use crate::sys::{self, InputEvent, InputId};

/// One evdev event without its timestamp.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// `EV_*`.
    pub type_: u16,
    /// Code within the type.
    pub code: u16,
    /// Value.
    pub value: i32,
}

impl Event {
    /// An event of `type_`/`code` with `value`.
    pub const fn new(type_: u16, code: u16, value: i32) -> Event {
        Event { type_, code, value }
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match codes::code_name(self.type_, self.code) {
            Some(name) => write!(f, "{name} {}", self.value),
            None => write!(f, "{:#x}/{:#x} {}", self.type_, self.code, self.value),
        }
    }
}

/// The events of one frame, without the closing `SYN_REPORT`.
pub type Frame = Vec<Event>;

/// Renders frames as `[REL_X 1, REL_Y 2] [..]` for failure messages.
pub fn show(frames: &[Frame]) -> String {
    if frames.is_empty() {
        return "(no frames)".into();
    }
    frames
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What identifies an evdev node: its path, name, phys and id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// `/dev/input/eventN`.
    pub path: PathBuf,
    /// `EVIOCGNAME`.
    pub name: String,
    /// `EVIOCGPHYS` (empty when the device has none).
    pub phys: String,
    /// `EVIOCGID`.
    pub id: InputId,
}

/// An open evdev node (read-only, non-blocking) with a frame reader.
#[derive(Debug)]
pub struct EvdevNode {
    info: NodeInfo,
    fd: OwnedFd,
    partial: Frame,
    frames: VecDeque<Frame>,
}

impl EvdevNode {
    /// Opens `path` read-only and non-blocking.
    pub fn open(path: &Path) -> anyhow::Result<EvdevNode> {
        let fd = sys::open(path, libc::O_RDONLY | libc::O_NONBLOCK)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let info = query_info(path, &fd)?;
        Ok(EvdevNode {
            info,
            fd,
            partial: Vec::new(),
            frames: VecDeque::new(),
        })
    }

    /// Name, phys, id and path.
    pub fn info(&self) -> &NodeInfo {
        &self.info
    }

    /// Whether the device reports `code` of event type `type_` (`EVIOCGBIT`).
    pub fn has(&self, type_: u16, code: u16) -> bool {
        let mut bits = [0u8; 96];
        // SAFETY: `bits` is 96 bytes, the length encoded in the request.
        let ok = unsafe {
            sys::ioctl_ptr(
                &self.fd,
                sys::eviocgbit(type_, bits.len()),
                bits.as_mut_ptr(),
            )
        };
        ok.is_ok() && bit(&bits, code)
    }

    /// Takes the grab (`EVIOCGRAB` 1): only this fd receives the device's events until it
    /// is closed. `EBUSY` when another fd holds it.
    pub fn grab(&self) -> anyhow::Result<()> {
        sys::ioctl_int(&self.fd, sys::EVIOCGRAB, 1)
            .with_context(|| format!("EVIOCGRAB {}", self.info.path.display()))?;
        Ok(())
    }

    /// Probes whether another fd holds the grab: grabs and at once releases. `Ok(true)` =
    /// nobody had it. Never call this while the program under test may be about to grab.
    pub fn is_free_to_grab(&self) -> anyhow::Result<bool> {
        match sys::ioctl_int(&self.fd, sys::EVIOCGRAB, 1) {
            Ok(_) => {
                sys::ioctl_int(&self.fd, sys::EVIOCGRAB, 0).context("EVIOCGRAB release")?;
                Ok(true)
            }
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(false),
            Err(e) => Err(e).context("EVIOCGRAB probe"),
        }
    }

    /// The next complete frame, waiting up to `timeout`; `None` on timeout.
    pub fn next_frame(&mut self, timeout: Duration) -> anyhow::Result<Option<Frame>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(f) = self.frames.pop_front() {
                return Ok(Some(f));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if !self.fill(left)? {
                return Ok(None);
            }
        }
    }

    /// Reads frames until one satisfies `last` (included), or fails after `timeout` showing
    /// what arrived.
    pub fn frames_until(
        &mut self,
        timeout: Duration,
        what: &str,
        last: impl Fn(&Frame) -> bool,
    ) -> anyhow::Result<Vec<Frame>> {
        let deadline = Instant::now() + timeout;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_frame(left)? {
                Some(f) => {
                    let done = last(&f);
                    got.push(f);
                    if done {
                        return Ok(got);
                    }
                }
                None => bail!(
                    "{}: no {what} within {timeout:?}; got {}",
                    self.info.path.display(),
                    show(&got)
                ),
            }
        }
    }

    /// Reads `n` frames, failing after `timeout`.
    pub fn frames(&mut self, n: usize, timeout: Duration) -> anyhow::Result<Vec<Frame>> {
        let deadline = Instant::now() + timeout;
        let mut got = Vec::with_capacity(n);
        while got.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_frame(left)? {
                Some(f) => got.push(f),
                None => bail!(
                    "{}: {} of {n} frames within {timeout:?}: {}",
                    self.info.path.display(),
                    got.len(),
                    show(&got)
                ),
            }
        }
        Ok(got)
    }

    /// Every complete frame readable now, without waiting.
    pub fn drain(&mut self) -> anyhow::Result<Vec<Frame>> {
        while self.fill(Duration::ZERO)? {}
        Ok(self.frames.drain(..).collect())
    }

    /// One read of all available events into the frame queue; `false` when nothing came
    /// within `timeout`.
    fn fill(&mut self, timeout: Duration) -> anyhow::Result<bool> {
        if !sys::poll_readable(self.fd.as_raw_fd(), timeout)? {
            return Ok(false);
        }
        let mut buf = [InputEvent::default(); 64];
        // SAFETY: `InputEvent` is plain old data; the byte view covers exactly `buf`.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(
                buf.as_mut_ptr().cast::<u8>(),
                std::mem::size_of_val(&buf),
            )
        };
        let n = match sys::read_once(&self.fd, bytes) {
            Ok(Some(n)) => n,
            Ok(None) => return Ok(false),
            Err(e) => {
                return Err(e).with_context(|| format!("read {}", self.info.path.display()));
            }
        };
        for ev in &buf[..n / size_of::<InputEvent>()] {
            if ev.type_ == EV_SYN && ev.code == SYN_DROPPED {
                bail!(
                    "{}: SYN_DROPPED (the reader fell behind)",
                    self.info.path.display()
                );
            }
            if ev.type_ == EV_SYN && ev.code == SYN_REPORT {
                self.frames.push_back(std::mem::take(&mut self.partial));
            } else {
                self.partial.push(Event::new(ev.type_, ev.code, ev.value));
            }
        }
        Ok(true)
    }
}

/// Every `/dev/input/event*` node with its identity; nodes that vanish or cannot be opened
/// while listing are skipped.
pub fn scan() -> Vec<NodeInfo> {
    let Ok(dir) = std::fs::read_dir("/dev/input") else {
        return Vec::new();
    };
    let mut nodes: Vec<NodeInfo> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("event"))
        })
        .filter_map(|p| {
            let fd = sys::open(&p, libc::O_RDONLY | libc::O_NONBLOCK).ok()?;
            query_info(&p, &fd).ok()
        })
        .collect();
    nodes.sort_by(|a, b| a.path.cmp(&b.path));
    nodes
}

/// Waits up to `timeout` for a node that satisfies `pred` and opens it.
pub fn wait_for(
    what: &str,
    timeout: Duration,
    pred: impl Fn(&NodeInfo) -> bool,
) -> anyhow::Result<EvdevNode> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(info) = scan().into_iter().find(|i| pred(i)) {
            return EvdevNode::open(&info.path);
        }
        if Instant::now() >= deadline {
            bail!(
                "no evdev node for {what} within {timeout:?}; nodes: {}",
                describe(&scan())
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One line per node: `event3 "name" phys=… 0005:046d:b034`.
pub fn describe(nodes: &[NodeInfo]) -> String {
    nodes
        .iter()
        .map(|n| {
            format!(
                "{} {:?} phys={:?} {:04x}:{:04x}:{:04x}",
                n.path.file_name().unwrap_or_default().to_string_lossy(),
                n.name,
                n.phys,
                n.id.bustype,
                n.id.vendor,
                n.id.product
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn query_info(path: &Path, fd: &OwnedFd) -> anyhow::Result<NodeInfo> {
    let mut name = [0u8; 256];
    let mut phys = [0u8; 256];
    let mut id = InputId::default();
    // SAFETY: each buffer has the length its request encodes.
    unsafe {
        sys::ioctl_ptr(fd, sys::eviocgname(name.len()), name.as_mut_ptr())
            .with_context(|| format!("EVIOCGNAME {}", path.display()))?;
        // A device without phys answers ENOENT; that is an empty phys.
        let _ = sys::ioctl_ptr(fd, sys::eviocgphys(phys.len()), phys.as_mut_ptr());
        sys::ioctl_ptr(fd, sys::EVIOCGID, &mut id)
            .with_context(|| format!("EVIOCGID {}", path.display()))?;
    }
    Ok(NodeInfo {
        path: path.to_owned(),
        name: sys::c_str(&name),
        phys: sys::c_str(&phys),
        id,
    })
}

fn bit(bits: &[u8], n: u16) -> bool {
    bits.get(n as usize / 8)
        .is_some_and(|b| b & (1 << (n % 8)) != 0)
}

/// The `/dev/hidrawN` nodes of the HID device behind the evdev node `event` (the kernel
/// makes them right after the evdev nodes; waits up to `timeout` for one).
pub fn hidraw_of(event: &Path, timeout: Duration) -> anyhow::Result<Vec<PathBuf>> {
    let name = event.file_name().context("evdev node without a name")?;
    let dir = Path::new("/sys/class/input")
        .join(name)
        .join("device/device/hidraw");
    let deadline = Instant::now() + timeout;
    loop {
        let nodes: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| Path::new("/dev").join(e.file_name()))
            .filter(|p| p.exists())
            .collect();
        if !nodes.is_empty() {
            return Ok(nodes);
        }
        if Instant::now() >= deadline {
            bail!("no hidraw node under {} within {timeout:?}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
