//! The single-instance machinery shared by `pawl on|off|status` and the worker (`pawl run`):
//! where the lock and the PID metadata live, the lock itself, the metadata file, and how a
//! recorded pid is told apart from a reused one.
//!
//! One worker per user: it holds an exclusive `flock` on `<runtime dir>/pawl.lock` for its
//! whole life (the kernel drops it when the process dies, however it dies) and describes
//! itself in `<runtime dir>/pawl.json` ([`Metadata`], written atomically, mode 0600).
//!
//! **The lock decides, never the file.** [`lock_is_free`] first tries the lock without blocking:
//! when it can be taken no worker runs, whatever `pawl.json` says (metadata left then is
//! stale: [`Status::Stale`]). Only while someone holds the lock is the metadata believed,
//! and only when its pid is alive with the recorded start time ([`Status::Running`]); a held
//! lock without such metadata is [`Status::Unidentified`] ("starting (pid unknown)"), whose
//! holder nobody signals. The runtime directory is checked before anything in it is read
//! ([`Paths::check`]): a directory another user owns or could write is refused, so nobody
//! else can plant a `pawl.json` (the `/tmp/pawl-<uid>` fallback is where that matters).

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rustix::fs::FlockOperation;
use serde::{Deserialize, Serialize};

/// How often a client re-checks the lock while it waits for a worker to start or exit: 5 ms.
pub const POLL: std::time::Duration = std::time::Duration::from_millis(5);

/// The most `pawl.json` may hold: 1 MiB (a worker with a hundred devices writes ~20 KB); a
/// longer file is not pawl metadata.
pub const METADATA_LIMIT: u64 = 1 << 20;

/// Where the lock and metadata live for this user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// The per-user runtime directory (mode 0700).
    pub dir: PathBuf,
    /// Where `dir` came from, for errors: the variable and its value
    /// (`("XDG_RUNTIME_DIR", "/run/user/1000")`), `None` for the `/tmp/pawl-<uid>` fallback
    /// or a directory given directly.
    pub base: Option<(&'static str, PathBuf)>,
}

impl Paths {
    /// The runtime directory `dir` itself, with no variable behind it (tests).
    #[cfg(test)]
    pub fn at(dir: impl Into<PathBuf>) -> Paths {
        Paths {
            dir: dir.into(),
            base: None,
        }
    }

    /// The lock file, `<dir>/pawl.lock`.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("pawl.lock")
    }

    /// The metadata file, `<dir>/pawl.json`.
    pub fn metadata(&self) -> PathBuf {
        self.dir.join("pawl.json")
    }

    /// The runtime directory for this process's user, without creating it: see
    /// [`runtime_dir_for`].
    pub fn discover() -> Paths {
        let uid = rustix::process::getuid().as_raw();
        let var = if cfg!(target_os = "macos") {
            "TMPDIR"
        } else {
            "XDG_RUNTIME_DIR"
        };
        let value = std::env::var_os(var);
        let dir = runtime_dir_for(value.clone(), uid);
        let base = value
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|p| (var, p));
        if base.is_none() {
            log::debug!("{var} is unset or relative: using {}", dir.display());
        }
        Paths { dir, base }
    }

    /// The variable the directory came from, as `XDG_RUNTIME_DIR (/run/user/1000)`.
    fn base_error(&self, what: &str) -> Option<anyhow::Error> {
        let (var, base) = self.base.as_ref()?;
        let uid = rustix::process::getuid().as_raw();
        let fix = if *var == "XDG_RUNTIME_DIR" {
            format!("point it at your runtime directory (normally /run/user/{uid}) or unset it")
        } else {
            "point it at a directory of yours or unset it".to_owned()
        };
        Some(anyhow::format_err!(
            "{var} ({}) {what}; {fix}",
            base.display()
        ))
    }

    /// Checks the variable's directory: `Ok(false)` when it does not exist.
    fn check_base(&self) -> anyhow::Result<bool> {
        let Some((_, base)) = &self.base else {
            return Ok(true);
        };
        match fs::metadata(base) {
            Ok(m) if m.is_dir() => Ok(true),
            Ok(_) => Err(self.base_error("is not a directory").expect("base is set")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot inspect {}", base.display())),
        }
    }

    /// For `pawl on` and the worker: creates the runtime directory (mode 0700) if needed and
    /// checks it as [`Paths::check`] does.
    ///
    /// Errors: the variable names a missing path or a non-directory (the error names the
    /// variable); the directory cannot be created or is refused ([`dir_problem`]).
    pub fn ensure(&self) -> anyhow::Result<()> {
        if !self.check_base()? {
            return Err(self.base_error("does not exist").expect("base is set"));
        }
        let dir = &self.dir;
        match fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
        }
        if !self.check()? {
            bail!("{} vanished while pawl created it", dir.display());
        }
        Ok(())
    }

    /// For `pawl status|off` (and before `ensure` returns): whether the runtime directory
    /// exists (`Ok(false)`: it does not, so no worker can run in it), after refusing one
    /// that is not safe to keep a lock in — a symlink or non-directory, owned by another
    /// user, or accessible by group or others ([`dir_problem`]).
    ///
    /// Errors: the variable names a non-directory; the directory is refused (the message
    /// names it and the fix); it cannot be inspected.
    pub fn check(&self) -> anyhow::Result<bool> {
        if !self.check_base()? {
            return Ok(false);
        }
        let dir = &self.dir;
        let meta = match fs::symlink_metadata(dir) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e).with_context(|| format!("cannot inspect {}", dir.display())),
        };
        let uid = rustix::process::getuid().as_raw();
        let kind = if meta.file_type().is_symlink() {
            DirKind::Symlink
        } else if meta.is_dir() {
            DirKind::Directory
        } else {
            DirKind::Other
        };
        if let Some(problem) = dir_problem(kind, meta.uid(), meta.mode(), uid) {
            bail!("refusing {}: {problem}", dir.display());
        }
        Ok(true)
    }
}

/// What a runtime directory entry is, for [`dir_problem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirKind {
    /// A real directory.
    Directory,
    /// A symbolic link (never followed: it could point anywhere).
    Symlink,
    /// A file, socket, …
    Other,
}

/// Why a runtime directory must not be used, with the fix; `None` when it is safe: a real
/// directory owned by `uid` with no permission bits for group or others (`mode & 0o077`).
/// The same rule for `pawl on`, `off`, `status` and the worker.
pub fn dir_problem(kind: DirKind, owner: u32, mode: u32, uid: u32) -> Option<String> {
    match kind {
        DirKind::Symlink => {
            return Some("it is a symbolic link, not a directory; remove it (`rm`)".into());
        }
        DirKind::Other => return Some("it is not a directory; remove it (`rm`)".into()),
        DirKind::Directory => {}
    }
    if owner != uid {
        return Some(format!(
            "it belongs to uid {owner}, not to you (uid {uid}): another user may have made \
             it to fool pawl; have it removed (as root or uid {owner}: `rm -r`), or set \
             XDG_RUNTIME_DIR to your own runtime directory"
        ));
    }
    if mode & 0o077 != 0 {
        return Some(format!(
            "it is accessible by other users (mode {:o}); expected 0700: others could have \
             put files in it; remove it (`rm -r`) and pawl makes a private one",
            mode & 0o7777
        ));
    }
    None
}

/// The runtime directory: `$XDG_RUNTIME_DIR/pawl` on Linux or `$TMPDIR/pawl` on macOS (the
/// per-user temporary directory under `/var/folders`), as given in `base`; when that is
/// unset, empty or relative (the XDG Base Directory specification: a relative path is
/// invalid and ignored), `/tmp/pawl-<uid>`.
pub fn runtime_dir_for(base: Option<OsString>, uid: u32) -> PathBuf {
    match base.map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(base) => base.join("pawl"),
        None => PathBuf::from(format!("/tmp/pawl-{uid}")),
    }
}

/// Opens `path` without following a symlink in its last component, and refuses a file
/// another user owns (the directory is checked, this is the second fence) and anything but
/// a regular file (a FIFO would block `open` or `read` forever; a directory takes a flock).
fn open_own(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    // O_NOFOLLOW / O_NONBLOCK: the rustix `OFlags` bits are libc's. O_NONBLOCK keeps `open`
    // of a FIFO from waiting for a writer; on a regular file it changes nothing.
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = options.custom_flags(flags.bits() as i32).open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file; remove it",
        ));
    }
    let owner = meta.uid();
    let uid = rustix::process::getuid().as_raw();
    if owner != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("it belongs to uid {owner}, not to you (uid {uid}); remove it"),
        ));
    }
    Ok(file)
}

/// The lock file, opened (created with mode 0600 if missing).
#[derive(Debug)]
pub struct LockFile {
    file: File,
}

impl LockFile {
    /// Opens (creating) the lock file at `path`.
    ///
    /// Errors: it cannot be opened, is a symlink or not a regular file, or belongs to another
    /// user (naming it).
    pub fn open(path: &Path) -> anyhow::Result<LockFile> {
        let file = open_own(
            path,
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600),
        )
        .with_context(|| format!("cannot open lock file {}", path.display()))?;
        Ok(LockFile { file })
    }

    /// Takes the exclusive lock without blocking: `Ok(true)` when taken (or already held
    /// through this open file description), `Ok(false)` when another holds it.
    pub fn try_lock(&self) -> io::Result<bool> {
        match rustix::fs::flock(&self.file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The open file (for handing to the worker as its stdin).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Wraps an already open file that refers to the lock file.
    pub fn from_file(file: File) -> LockFile {
        LockFile { file }
    }
}

/// Whether nobody holds the lock at `paths` right now: probed with a non-blocking shared
/// `flock` that is released at once (closing the file). A missing lock file counts as free.
///
/// Errors: the lock file cannot be opened (named), is a symlink, not a regular file or
/// another user's.
pub fn lock_is_free(paths: &Paths) -> anyhow::Result<bool> {
    let path = paths.lock();
    let file = match open_own(&path, OpenOptions::new().read(true)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot open lock file {}", path.display()));
        }
    };
    match rustix::fs::flock(&file, FlockOperation::NonBlockingLockShared) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(io::Error::from(e))
            .with_context(|| format!("cannot test the lock {}", path.display())),
    }
}

/// A device the worker has grabbed, as recorded in the metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrabbedDevice {
    /// Where it is: `/dev/input/event3` on Linux, an IORegistry id on macOS.
    pub path: String,
    /// The device name.
    pub name: String,
    /// USB/Bluetooth vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
}

/// A mouse the worker handles and which path carries each part of it (Linux: the grab,
/// HID++, or the kernel's node untouched), as recorded in the metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MouseRecord {
    /// Its name.
    pub name: String,
    /// Vendor id.
    pub vendor: u16,
    /// Product id.
    pub product: u16,
    /// Its pointer nodes the config handles.
    pub nodes: Vec<NodeRecord>,
    /// Its HID++ endpoint (`/dev/hidrawN`), open or failed.
    pub hidraw: Option<String>,
    /// One line per part.
    pub paths: Vec<PathRecord>,
    /// The mouse's own settings as its HID++ session read them (absent in the metadata of
    /// an older pawl, and without HID++).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<SettingsRecord>,
    /// Its battery. Linux: as the kernel reports it now, read by `pawl status` when it
    /// prints (the Linux worker never records one: a battery changes without it waking
    /// up). macOS: as the worker's HID++ session read it (0x1004, kept up to date by the
    /// mouse's status events), in the metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub battery: Option<BatteryRecord>,
}

/// The mouse's own settings in force, as the device reported them to the worker (each
/// `None` when not read: a daemon reads dpi and SmartShift only where the config sets them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsRecord {
    /// dpi (HID++ 0x2201).
    pub dpi: Option<u16>,
    /// SmartShift as the config spells it: `ratchet`, `free` or a threshold `1`..`254`.
    pub smartshift: Option<String>,
    /// The thumb wheel's invert bit (0x2150).
    pub thumb_wheel_invert: Option<bool>,
}

impl SettingsRecord {
    /// `dpi 1600, smartshift ratchet, thumb_wheel_invert false`: the ones read.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.dpi {
            parts.push(format!("dpi {d}"));
        }
        if let Some(s) = &self.smartshift {
            parts.push(format!("smartshift {s}"));
        }
        if let Some(i) = self.thumb_wheel_invert {
            parts.push(format!("thumb_wheel_invert {i}"));
        }
        parts.join(", ")
    }
}

/// A mouse's battery: on Linux the kernel's `hidpp_battery_*` power supply of the mouse's
/// HID device at the time `pawl status` asked; on macOS what the worker's HID++ session
/// read (0x1004), in the kernel's words ([`BatteryRecord::of_hidpp`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatteryRecord {
    /// Charge, percent (0..=100), when the mouse reports percentages.
    pub percent: Option<u8>,
    /// The kernel's `capacity_level` (`Critical`, `Low`, `Normal`, `High`, `Full`) when
    /// it reports levels.
    pub level: Option<String>,
    /// `charging`, `discharging`, `full`, `not charging` (the kernel's `status`, lower
    /// case), `None` when unknown.
    pub status: Option<String>,
}

impl BatteryRecord {
    /// A battery a HID++ session read, with the texts the kernel gives the same status
    /// (`hid-logitech-hidpp`: a percentage or a level, `discharging`/`charging`/`full`/
    /// `not charging`), so `pawl status` shows it on macOS as on Linux.
    pub fn of_hidpp(b: &pawl_hidpp::battery::Battery) -> BatteryRecord {
        BatteryRecord {
            percent: b.percent,
            level: b.level.map(|l| l.as_str().to_owned()),
            status: Some(b.charging.as_str().to_owned()),
        }
    }

    /// `80 %, discharging` / `Normal, charging` / `unknown`.
    pub fn describe(&self) -> String {
        let amount = match (self.percent, &self.level) {
            (Some(p), _) => format!("{p} %"),
            (None, Some(l)) => l.clone(),
            (None, None) => "unknown".to_owned(),
        };
        match &self.status {
            Some(s) => format!("{amount}, {s}"),
            None => amount,
        }
    }
}

/// A mouse a macOS HID++ session set up, as the metadata records it: its name and ids, no
/// pointer nodes, `hidraw` holding the endpoint's transport (`Bluetooth Low Energy`,
/// `USB`), its battery as the session read it.
#[cfg_attr(
    all(not(target_os = "macos"), not(test)),
    expect(dead_code, reason = "only the macOS worker records HID++ batteries")
)]
pub fn hidpp_mouse(
    name: &str,
    vendor: u16,
    product: u16,
    transport: &str,
    battery: Option<pawl_hidpp::battery::Battery>,
) -> MouseRecord {
    MouseRecord {
        name: name.to_owned(),
        vendor,
        product,
        nodes: Vec::new(),
        hidraw: Some(transport.to_owned()),
        paths: Vec::new(),
        settings: None,
        battery: battery.as_ref().map(BatteryRecord::of_hidpp),
    }
}

/// A pointer node of a [`MouseRecord`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// `/dev/input/eventN`.
    pub path: String,
    /// `grabbed`, `waiting` (for its buttons to be released) or `not-grabbed`.
    pub state: String,
    /// Its clone's node, when grabbed.
    pub clone: Option<String>,
}

/// Which path carries one part of a mouse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRecord {
    /// `gesture button`, `thumb wheel`, `buttons`, `motion`, `wheel`.
    pub part: String,
    /// `grab`, `hidpp` or `kernel`.
    pub path: String,
    /// The reason's code, e.g. `hidpp-off`.
    pub reason: String,
    /// Both for people, e.g. `HID++ divert of CID 0x00C3 (hidraw3), raw XY while held`.
    pub text: String,
}

/// What the worker handles now: its grabbed devices and its mice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Handled {
    /// The grabbed devices.
    pub devices: Vec<GrabbedDevice>,
    /// The handled mice and their paths (empty on macOS).
    pub mice: Vec<MouseRecord>,
    /// The focus backend for `[[app]]` profiles (Linux and macOS).
    pub focus: Option<FocusRecord>,
}

/// The focus backend, the focused application and the profile in force.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusRecord {
    /// `sway`, `sway (closed: device profiles)`, `nsworkspace` (macOS), or why there is
    /// none.
    pub backend: String,
    /// The focused application, when known.
    pub app: Option<String>,
    /// `device` or `app APP ([[app]] at line …)`.
    pub profile: String,
}

/// What a running worker records about itself in `pawl.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// The worker's pid.
    pub pid: u32,
    /// The worker's process start time, to tell it from a later process with the same pid:
    /// Linux: clock ticks after boot (`/proc/PID/stat` field 22); macOS: µs after the epoch
    /// (`proc_bsdinfo.pbi_start_tvsec/usec`). Only ever compared for equality.
    pub start_time: u64,
    /// The worker's executable.
    pub exe: PathBuf,
    /// The config it runs with: its path, or "defaults (no file at …)".
    pub config: String,
    /// pawl's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// When it started, seconds after the Unix epoch (wall clock; for uptime).
    pub started_at: u64,
    /// Devices it has grabbed now.
    pub devices: Vec<GrabbedDevice>,
    /// The mice it handles now, with the path of each part (absent in metadata of an
    /// older pawl).
    #[serde(default)]
    pub mice: Vec<MouseRecord>,
    /// The focus backend (absent in metadata of an older pawl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<FocusRecord>,
}

impl Metadata {
    /// Reads the metadata at `path` (at most [`METADATA_LIMIT`] bytes; not through a
    /// symlink; only a regular file of this user); `Ok(None)` when there is none.
    ///
    /// Errors: unreadable, too long, another user's, or not valid metadata JSON (e.g.
    /// written by an incompatible pawl); each names the file.
    pub fn read(path: &Path) -> anyhow::Result<Option<Metadata>> {
        let file = match open_own(path, OpenOptions::new().read(true)) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let mut text = String::new();
        file.take(METADATA_LIMIT + 1)
            .read_to_string(&mut text)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if text.len() as u64 > METADATA_LIMIT {
            bail!(
                "{} is not pawl metadata: longer than {METADATA_LIMIT} bytes",
                path.display()
            );
        }
        let meta = serde_json::from_str(&text)
            .with_context(|| format!("{} is not pawl metadata", path.display()))?;
        Ok(Some(meta))
    }

    /// Writes the metadata to `path` atomically (see [`write_atomic`]), mode 0600.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        text.push('\n');
        write_atomic(path, text.as_bytes(), 0o600)
    }
}

/// Removes the file at `path`; a missing file is fine.
pub fn remove_if_exists(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Writes `bytes` to `path` so that readers see the old file or the whole new one, never a
/// part: a temporary file beside it (`<path>.<pid>.tmp`, created with `mode`), then
/// `rename(2)` over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    remove_if_exists(&tmp)?;
    let res = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(bytes)?;
        fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// What the OS says about a pid now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcState {
    /// No such process, or a zombie (exited, not yet reaped).
    Gone,
    /// A live process, with its start time in [`Metadata::start_time`] units.
    Alive {
        /// Its start time.
        start_time: u64,
    },
}

/// Looks `pid` up: [`ProcState::Alive`] with its start time, or [`ProcState::Gone`].
pub fn probe_process(pid: u32) -> ProcState {
    #[cfg(target_os = "linux")]
    {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => match parse_proc_stat(&stat) {
                Some((state, _)) if state == 'Z' || state == 'X' => ProcState::Gone,
                Some((_, start_time)) => ProcState::Alive { start_time },
                None => ProcState::Gone,
            },
            Err(_) => ProcState::Gone,
        }
    }
    #[cfg(target_os = "macos")]
    {
        match pawl_macos::process::start_time(pid) {
            Some(pawl_macos::process::ProcessStart::Running(start_time)) => {
                ProcState::Alive { start_time }
            }
            _ => ProcState::Gone,
        }
    }
}

/// Parses `/proc/PID/stat`: (state, starttime). The command name (field 2) is in
/// parentheses and may itself contain spaces and parentheses, so fields are counted from
/// the last `)`; starttime is field 22 (`proc(5)`), in clock ticks after boot.
#[cfg(any(target_os = "linux", test))]
pub fn parse_proc_stat(stat: &str) -> Option<(char, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    // Fields 3 (state) … ; starttime is field 22, i.e. the 20th after the name.
    let state = fields.next()?.chars().next()?;
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

/// The state of the worker as `pawl status` reports it. The lock decides (module docs):
/// the metadata only describes a worker whose lock is held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// The lock is held and the metadata's pid is alive with the recorded start time.
    Running(Metadata),
    /// The lock is held but no metadata identifies its holder: a worker that has not
    /// described itself yet (starting), or metadata that is unreadable or names no live
    /// process. Nobody is signalled.
    Unidentified(Unidentified),
    /// The lock is free and there is no metadata: no worker.
    Stopped,
    /// The lock is free but metadata is left: no worker, whatever the file says.
    Stale {
        /// The pid it names, when it could be read.
        pid: Option<u32>,
        /// Why it does not describe a worker.
        reason: StaleReason,
    },
}

/// Why the holder of the lock is not identified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unidentified {
    /// No metadata (yet): a worker between taking the lock and being ready.
    NoMetadata,
    /// The metadata cannot be read or is not pawl metadata (the message names the file).
    Unreadable(String),
    /// The metadata names a pid that is gone or reused.
    NotLive {
        /// The pid it names.
        pid: u32,
        /// Gone or reused.
        reason: StaleReason,
    },
}

/// Why metadata does not describe a running worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StaleReason {
    /// The recorded pid does not exist (or is a zombie).
    ProcessGone,
    /// The pid exists but started at a different time: another process reuses it.
    PidReused,
    /// The pid is alive with the recorded start time, but nobody holds the lock, so it is
    /// not a worker (the metadata was copied or forged).
    LockFree,
    /// The file is not pawl metadata (the message names it).
    Unreadable(String),
}

impl StaleReason {
    /// A short description: `process gone`, `pid reused by another process`, …
    pub fn describe(&self) -> String {
        match self {
            StaleReason::ProcessGone => "process gone".into(),
            StaleReason::PidReused => "pid reused by another process".into(),
            StaleReason::LockFree => "that process does not hold the lock".into(),
            StaleReason::Unreadable(why) => why.clone(),
        }
    }

    /// The `--json` code: `process-gone`, `pid-reused`, `lock-free`, `unreadable`.
    pub fn code(&self) -> &'static str {
        match self {
            StaleReason::ProcessGone => "process-gone",
            StaleReason::PidReused => "pid-reused",
            StaleReason::LockFree => "lock-free",
            StaleReason::Unreadable(_) => "unreadable",
        }
    }
}

/// Classifies what was seen: whether the lock is held (`lock_held`), the metadata read
/// (`Err` = its message), and what `probe` says about its pid now (see [`probe_process`]).
pub fn classify(
    lock_held: bool,
    meta: Result<Option<Metadata>, String>,
    probe: impl FnOnce(u32) -> ProcState,
) -> Status {
    let meta = match meta {
        Ok(Some(meta)) => meta,
        Ok(None) if lock_held => return Status::Unidentified(Unidentified::NoMetadata),
        Ok(None) => return Status::Stopped,
        Err(why) if lock_held => return Status::Unidentified(Unidentified::Unreadable(why)),
        Err(why) => {
            return Status::Stale {
                pid: None,
                reason: StaleReason::Unreadable(why),
            };
        }
    };
    let not_live = match probe(meta.pid) {
        ProcState::Alive { start_time } if start_time == meta.start_time => {
            if lock_held {
                return Status::Running(meta);
            }
            StaleReason::LockFree
        }
        ProcState::Alive { .. } => StaleReason::PidReused,
        ProcState::Gone => StaleReason::ProcessGone,
    };
    if lock_held {
        Status::Unidentified(Unidentified::NotLive {
            pid: meta.pid,
            reason: not_live,
        })
    } else {
        Status::Stale {
            pid: Some(meta.pid),
            reason: not_live,
        }
    }
}

/// `pawl status`, `off`, `on` and `run` exit status when the lock is held but its holder is
/// not identified ([`Status::Unidentified`]): 4, LSB's "program or service status is
/// unknown". The same code from all four, with the same line ([`unidentified_line`]).
pub const EXIT_UNIDENTIFIED: u8 = 4;

/// The one line `pawl status`, `off`, `on` and `run` print for [`Status::Unidentified`]:
/// `starting (pid unknown): …` while there is no metadata yet, `running (pid unknown): …`
/// with the file and the fix when the metadata is unreadable or names no live process.
pub fn unidentified_line(paths: &Paths, why: &Unidentified) -> String {
    let (lock, meta) = (paths.lock(), paths.metadata());
    let (lock, meta) = (lock.display(), meta.display());
    let fix = format!(
        "find the holder with `fuser -v {lock}` and stop it with `kill PID`; \
         `pawl off` then removes {meta}"
    );
    match why {
        Unidentified::NoMetadata => format!(
            "starting (pid unknown): a process holds {lock} but has not described itself in \
             {meta} yet; try again in a moment"
        ),
        Unidentified::Unreadable(problem) => {
            format!("running (pid unknown): a process holds {lock}, but {problem}; {fix}")
        }
        Unidentified::NotLive { pid, reason } => format!(
            "running (pid unknown): a process holds {lock}, but {meta} names pid {pid} ({}); \
             {fix}",
            reason.describe()
        ),
    }
}

/// Looks at the worker now: checks the runtime directory ([`Paths::check`]; missing =
/// [`Status::Stopped`]), tests the lock ([`lock_is_free`]), then reads the metadata and
/// probes its pid ([`classify`]). The lock is tested first: a worker takes it before it
/// writes its metadata and removes the metadata before it lets go.
///
/// Errors: a refused runtime directory or lock file (the message names it and the fix).
pub fn current_status(paths: &Paths) -> anyhow::Result<Status> {
    if !paths.check()? {
        return Ok(Status::Stopped);
    }
    let held = !lock_is_free(paths)?;
    let meta = Metadata::read(&paths.metadata()).map_err(|e| format!("{e:#}"));
    Ok(classify(held, meta, probe_process))
}

/// Whether the process `meta` describes still runs as that process (same start time), and
/// the lock is still held by someone: the identity `pawl off` requires before a signal.
pub fn still_the_worker(paths: &Paths, meta: &Metadata) -> anyhow::Result<bool> {
    let same = matches!(
        probe_process(meta.pid),
        ProcState::Alive { start_time } if start_time == meta.start_time
    );
    Ok(same && !lock_is_free(paths)?)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn sample() -> Metadata {
        Metadata {
            pid: 4242,
            start_time: 123_456,
            exe: PathBuf::from("/usr/bin/pawl"),
            config: "/home/u/.config/pawl/config.toml".into(),
            version: "0.1.0".into(),
            started_at: 1_700_000_000,
            mice: Vec::new(),
            focus: None,
            devices: vec![GrabbedDevice {
                path: "/dev/input/event3".into(),
                name: "Logitech MX Master 3S".into(),
                vendor: 0x046d,
                product: 0xb034,
            }],
        }
    }

    #[test]
    fn runtime_dir_is_under_xdg_runtime_dir_else_a_private_tmp_dir() {
        assert_eq!(
            runtime_dir_for(Some("/run/user/1000".into()), 1000),
            PathBuf::from("/run/user/1000/pawl")
        );
        assert_eq!(runtime_dir_for(None, 1000), PathBuf::from("/tmp/pawl-1000"));
        assert_eq!(
            runtime_dir_for(Some("".into()), 7),
            PathBuf::from("/tmp/pawl-7")
        );
        assert_eq!(
            runtime_dir_for(Some("relative/dir".into()), 7),
            PathBuf::from("/tmp/pawl-7")
        );
    }

    #[test]
    fn runtime_dir_is_created_private_and_a_shared_one_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = Paths::at(tmp.path().join("pawl"));
        assert!(!paths.check().unwrap(), "a missing directory: no worker");
        paths.ensure().unwrap();
        let mode = fs::metadata(&paths.dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        paths.ensure().unwrap();
        assert!(paths.check().unwrap());

        fs::set_permissions(&paths.dir, fs::Permissions::from_mode(0o777)).unwrap();
        let err = paths.ensure().unwrap_err().to_string();
        assert!(err.contains("accessible by other users"), "{err}");

        let link = Paths::at(tmp.path().join("link"));
        std::os::unix::fs::symlink(tmp.path(), &link.dir).unwrap();
        let err = link.ensure().unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
    }

    #[test]
    fn runtime_dir_owned_by_another_user_or_group_writable_is_refused() {
        let me = 1000;
        assert_eq!(dir_problem(DirKind::Directory, me, 0o40700, me), None);
        let other = dir_problem(DirKind::Directory, 1001, 0o40700, me).unwrap();
        assert!(
            other.contains("belongs to uid 1001, not to you (uid 1000)"),
            "{other}"
        );
        for loose in [0o40755, 0o40770, 0o40707, 0o40701] {
            let why = dir_problem(DirKind::Directory, me, loose, me).unwrap();
            assert!(
                why.contains("accessible by other users"),
                "{loose:o}: {why}"
            );
        }
        assert!(dir_problem(DirKind::Symlink, me, 0o120777, me).is_some());
        assert!(dir_problem(DirKind::Other, me, 0o100600, me).is_some());

        // The same checks on real directories, for status/off (check) and on (ensure),
        // with every error naming the directory.
        let tmp = tempfile::tempdir().unwrap();
        let paths = Paths::at(tmp.path().join("pawl-1000"));
        fs::create_dir(&paths.dir).unwrap();
        fs::set_permissions(&paths.dir, fs::Permissions::from_mode(0o775)).unwrap();
        let shown = paths.dir.display().to_string();
        for err in [
            paths.check().unwrap_err().to_string(),
            paths.ensure().unwrap_err().to_string(),
            current_status(&paths).unwrap_err().to_string(),
        ] {
            assert!(err.starts_with(&format!("refusing {shown}: ")), "{err}");
            assert!(err.contains("mode 775"), "{err}");
        }
        fs::set_permissions(&paths.dir, fs::Permissions::from_mode(0o700)).unwrap();
        assert!(paths.check().unwrap());
        // Owned by someone else (only root can give a directory away).
        if rustix::process::geteuid().is_root() {
            let stranger = rustix::process::Uid::from_raw(4_242_424);
            rustix::fs::chown(&paths.dir, Some(stranger), None).unwrap();
            let err = paths.check().unwrap_err().to_string();
            assert!(err.contains("belongs to uid 4242424"), "{err}");
            assert!(err.contains(&shown), "{err}");
            let err = paths.ensure().unwrap_err().to_string();
            assert!(err.contains("belongs to uid 4242424"), "{err}");
        }
    }

    #[test]
    fn a_runtime_variable_naming_a_file_is_an_error_naming_the_variable() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-a-dir");
        fs::write(&file, "").unwrap();
        let paths = Paths {
            dir: file.join("pawl"),
            base: Some(("XDG_RUNTIME_DIR", file.clone())),
        };
        for err in [
            paths.check().unwrap_err().to_string(),
            paths.ensure().unwrap_err().to_string(),
        ] {
            assert!(
                err.starts_with(&format!(
                    "XDG_RUNTIME_DIR ({}) is not a directory; ",
                    file.display()
                )),
                "{err}"
            );
        }
        let gone = Paths {
            dir: tmp.path().join("gone/pawl"),
            base: Some(("XDG_RUNTIME_DIR", tmp.path().join("gone"))),
        };
        assert!(
            !gone.check().unwrap(),
            "nothing can run in a missing directory"
        );
        let err = gone.ensure().unwrap_err().to_string();
        assert!(
            err.contains("XDG_RUNTIME_DIR") && err.contains("does not exist"),
            "{err}"
        );
    }

    #[test]
    fn metadata_of_another_user_or_through_a_symlink_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.json");
        sample().write(&real).unwrap();
        let link = tmp.path().join("pawl.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = format!("{:#}", Metadata::read(&link).unwrap_err());
        assert!(err.contains("pawl.json"), "{err}");
        if rustix::process::geteuid().is_root() {
            let stranger = rustix::process::Uid::from_raw(4_242_424);
            rustix::fs::chown(&real, Some(stranger), None).unwrap();
            let err = format!("{:#}", Metadata::read(&real).unwrap_err());
            assert!(err.contains("belongs to uid 4242424"), "{err}");
        }
    }

    #[test]
    fn a_fifo_or_directory_as_lock_or_metadata_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = Paths::at(tmp.path());
        let status = std::process::Command::new("mkfifo")
            .arg(paths.lock())
            .arg(paths.metadata())
            .status()
            .unwrap();
        assert!(status.success());
        let refused = || {
            let err = format!("{:#}", lock_is_free(&paths).unwrap_err());
            assert!(err.contains("pawl.lock: it is not a regular file"), "{err}");
            // (Opening a directory read-write already fails: "Is a directory".)
            let err = format!("{:#}", LockFile::open(&paths.lock()).unwrap_err());
            assert!(err.contains("cannot open lock file"), "{err}");
            let err = format!("{:#}", Metadata::read(&paths.metadata()).unwrap_err());
            assert!(err.contains("it is not a regular file"), "{err}");
        };
        refused();
        // Then the same with directories in their place.
        fs::remove_file(paths.lock()).unwrap();
        fs::remove_file(paths.metadata()).unwrap();
        fs::create_dir(paths.lock()).unwrap();
        fs::create_dir(paths.metadata()).unwrap();
        refused();
    }

    #[test]
    fn metadata_longer_than_the_limit_is_refused_without_reading_it_all() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pawl.json");
        let f = File::create(&path).unwrap();
        f.set_len(METADATA_LIMIT * 64).unwrap();
        let err = format!("{:#}", Metadata::read(&path).unwrap_err());
        assert!(err.contains("longer than 1048576 bytes"), "{err}");
    }

    #[test]
    fn metadata_round_trips_through_its_file_with_mode_0600_and_no_temp_left() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pawl.json");
        assert_eq!(Metadata::read(&path).unwrap(), None);
        sample().write(&path).unwrap();
        assert_eq!(Metadata::read(&path).unwrap(), Some(sample()));
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("pawl.json")]);
    }

    #[test]
    fn metadata_rewrite_replaces_the_whole_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pawl.json");
        sample().write(&path).unwrap();
        let shorter = Metadata {
            devices: Vec::new(),
            mice: Vec::new(),
            focus: None,
            ..sample()
        };
        shorter.write(&path).unwrap();
        assert_eq!(Metadata::read(&path).unwrap(), Some(shorter));
    }

    #[test]
    fn garbage_metadata_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pawl.json");
        fs::write(&path, "{ not json").unwrap();
        let err = format!("{:#}", Metadata::read(&path).unwrap_err());
        assert!(err.contains("pawl.json is not pawl metadata"), "{err}");
    }

    fn alive(start_time: u64) -> impl FnOnce(u32) -> ProcState {
        move |pid| {
            assert_eq!(pid, 4242);
            ProcState::Alive { start_time }
        }
    }

    #[test]
    fn status_is_stopped_without_metadata_and_the_lock_free() {
        assert_eq!(
            classify(false, Ok(None), |_| panic!("no pid to probe")),
            Status::Stopped
        );
    }

    #[test]
    fn status_is_running_only_when_the_lock_is_held_and_the_pid_has_the_recorded_start_time() {
        assert_eq!(
            classify(true, Ok(Some(sample())), alive(123_456)),
            Status::Running(sample())
        );
    }

    #[test]
    fn status_says_stopped_when_the_lock_is_free_whatever_the_metadata_says() {
        // A live process with exactly the recorded pid and start time: still no worker.
        assert_eq!(
            classify(false, Ok(Some(sample())), alive(123_456)),
            Status::Stale {
                pid: Some(4242),
                reason: StaleReason::LockFree
            }
        );
        assert_eq!(
            classify(false, Ok(Some(sample())), |_| ProcState::Gone),
            Status::Stale {
                pid: Some(4242),
                reason: StaleReason::ProcessGone
            }
        );
        assert_eq!(
            classify(false, Ok(Some(sample())), alive(999_999)),
            Status::Stale {
                pid: Some(4242),
                reason: StaleReason::PidReused
            }
        );
        assert_eq!(
            classify(false, Err("x is not pawl metadata".into()), |_| panic!()),
            Status::Stale {
                pid: None,
                reason: StaleReason::Unreadable("x is not pawl metadata".into())
            }
        );
    }

    #[test]
    fn a_held_lock_without_metadata_that_identifies_a_live_worker_is_unidentified() {
        assert_eq!(
            classify(true, Ok(None), |_| panic!("no pid to probe")),
            Status::Unidentified(Unidentified::NoMetadata)
        );
        assert_eq!(
            classify(true, Err("garbage".into()), |_| panic!("no pid to probe")),
            Status::Unidentified(Unidentified::Unreadable("garbage".into()))
        );
        assert_eq!(
            classify(true, Ok(Some(sample())), alive(1)),
            Status::Unidentified(Unidentified::NotLive {
                pid: 4242,
                reason: StaleReason::PidReused
            })
        );
        assert_eq!(
            classify(true, Ok(Some(sample())), |_| ProcState::Gone),
            Status::Unidentified(Unidentified::NotLive {
                pid: 4242,
                reason: StaleReason::ProcessGone
            })
        );
    }

    #[test]
    fn current_status_tests_the_lock_before_believing_the_metadata() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = Paths::at(tmp.path().join("pawl"));
        assert_eq!(current_status(&paths).unwrap(), Status::Stopped);
        paths.ensure().unwrap();
        // Metadata naming this very process, alive with its real start time.
        let ProcState::Alive { start_time } = probe_process(std::process::id()) else {
            panic!("this process is alive");
        };
        let me = Metadata {
            pid: std::process::id(),
            start_time,
            ..sample()
        };
        me.write(&paths.metadata()).unwrap();
        assert_eq!(
            current_status(&paths).unwrap(),
            Status::Stale {
                pid: Some(me.pid),
                reason: StaleReason::LockFree
            }
        );
        assert!(!still_the_worker(&paths, &me).unwrap());
        let lock = LockFile::open(&paths.lock()).unwrap();
        assert!(lock.try_lock().unwrap());
        assert_eq!(current_status(&paths).unwrap(), Status::Running(me.clone()));
        assert!(still_the_worker(&paths, &me).unwrap());
        fs::write(paths.metadata(), "{ not json").unwrap();
        assert!(matches!(
            current_status(&paths).unwrap(),
            Status::Unidentified(Unidentified::Unreadable(why)) if why.contains("pawl.json is not pawl metadata")
        ));
        drop(lock);
        assert!(matches!(
            current_status(&paths).unwrap(),
            Status::Stale {
                pid: None,
                reason: StaleReason::Unreadable(_)
            }
        ));
    }

    #[test]
    fn proc_stat_is_parsed_from_the_last_parenthesis() {
        let stat = "4242 (pawl) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    98765 12345678 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
        assert_eq!(parse_proc_stat(stat), Some(('S', 98765)));
        let tricky = "77 (a) b) (c) Z 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0";
        assert_eq!(parse_proc_stat(tricky), Some(('Z', 555)));
        assert_eq!(parse_proc_stat("77 (cut"), None);
        assert_eq!(parse_proc_stat("77 (x) R 1 2"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_probes_alive_and_a_free_pid_probes_gone() {
        let me = std::process::id();
        assert!(matches!(probe_process(me), ProcState::Alive { .. }));
        assert_eq!(probe_process(me), probe_process(me));
        // pid_max is at most 2^22 (kernel/pid.c PID_MAX_LIMIT).
        assert_eq!(probe_process(4_194_304 + 1), ProcState::Gone);
    }

    #[test]
    fn the_lock_is_exclusive_between_open_files_and_free_after_close() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = Paths::at(tmp.path());
        assert!(lock_is_free(&paths).unwrap());
        let first = LockFile::open(&paths.lock()).unwrap();
        assert!(first.try_lock().unwrap());
        assert!(
            first.try_lock().unwrap(),
            "relocking through the holder is fine"
        );
        let second = LockFile::open(&paths.lock()).unwrap();
        assert!(!second.try_lock().unwrap());
        assert!(!lock_is_free(&paths).unwrap());
        // A duplicated descriptor shares the lock (this is how the worker inherits it).
        let dup = LockFile::from_file(first.file().try_clone().unwrap());
        drop(first);
        assert!(!second.try_lock().unwrap());
        assert!(dup.try_lock().unwrap());
        drop(dup);
        assert!(lock_is_free(&paths).unwrap());
        assert!(second.try_lock().unwrap());
    }
}
