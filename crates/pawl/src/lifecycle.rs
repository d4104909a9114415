//! The single-instance machinery shared by `pawl on|off|status` and the worker (`pawl run`):
//! where the lock and the PID metadata live, the lock itself, the metadata file, and how a
//! recorded pid is told apart from a reused one.
//!
//! One worker per user: it holds an exclusive `flock` on `<runtime dir>/pawl.lock` for its
//! whole life (the kernel drops it when the process dies, however it dies) and describes
//! itself in `<runtime dir>/pawl.json` ([`Metadata`], written atomically, mode 0600). The
//! metadata can outlive a worker killed by `SIGKILL`; [`classify`] compares the recorded
//! process start time with the live one to tell "running" from "stale".

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rustix::fs::FlockOperation;
use serde::{Deserialize, Serialize};

/// Where the lock and metadata live for this user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// The per-user runtime directory (mode 0700).
    pub dir: PathBuf,
}

impl Paths {
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
        Paths {
            dir: runtime_dir_for(std::env::var_os(var), uid),
        }
    }

    /// Creates the runtime directory (mode 0700) if needed and checks that it is safe to
    /// keep a lock in: a real directory owned by this user that nobody else can write.
    ///
    /// Errors: the directory cannot be created, is a symlink, belongs to someone else or is
    /// group/world accessible.
    pub fn ensure(&self) -> anyhow::Result<()> {
        let dir = &self.dir;
        match fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
        }
        let meta = fs::symlink_metadata(dir)
            .with_context(|| format!("cannot inspect {}", dir.display()))?;
        let uid = rustix::process::getuid().as_raw();
        if !meta.is_dir() {
            bail!("{} is not a directory", dir.display());
        }
        if meta.uid() != uid {
            bail!(
                "{} belongs to uid {}, not to you (uid {uid})",
                dir.display(),
                meta.uid()
            );
        }
        if meta.permissions().mode() & 0o077 != 0 {
            bail!(
                "{} is accessible by other users (mode {:o}); expected 0700",
                dir.display(),
                meta.permissions().mode() & 0o777
            );
        }
        Ok(())
    }
}

/// The runtime directory: `$XDG_RUNTIME_DIR/pawl` on Linux or `$TMPDIR/pawl` on macOS (the
/// per-user temporary directory under `/var/folders`), as given in `base`; when that is
/// unset, empty or relative, `/tmp/pawl-<uid>`.
pub fn runtime_dir_for(base: Option<OsString>, uid: u32) -> PathBuf {
    match base.map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(base) => base.join("pawl"),
        None => PathBuf::from(format!("/tmp/pawl-{uid}")),
    }
}

/// The lock file, opened (created with mode 0600 if missing).
#[derive(Debug)]
pub struct LockFile {
    file: File,
}

impl LockFile {
    /// Opens (creating) the lock file at `path`.
    pub fn open(path: &Path) -> anyhow::Result<LockFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
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

/// Whether nobody holds the lock at `paths` right now (probed with a shared lock that is
/// released at once). A missing lock file counts as free.
pub fn lock_is_free(paths: &Paths) -> io::Result<bool> {
    let file = match File::open(paths.lock()) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    match rustix::fs::flock(&file, FlockOperation::NonBlockingLockShared) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
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
}

impl Metadata {
    /// Reads the metadata at `path`; `Ok(None)` when there is none.
    ///
    /// Errors: unreadable or not valid metadata JSON (e.g. written by an incompatible pawl).
    pub fn read(path: &Path) -> anyhow::Result<Option<Metadata>> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
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

/// The state of the worker as `pawl status` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// A worker runs and matches its metadata.
    Running(Metadata),
    /// No metadata: no worker.
    Stopped,
    /// Metadata without its process.
    Stale {
        /// The metadata left behind.
        meta: Metadata,
        /// Why it is stale.
        reason: StaleReason,
    },
}

/// Why metadata is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaleReason {
    /// The recorded pid does not exist (or is a zombie).
    ProcessGone,
    /// The pid exists but started at a different time: another process reuses it.
    PidReused,
}

impl StaleReason {
    /// A short description: `process gone`, `pid reused by another process`.
    pub fn describe(self) -> &'static str {
        match self {
            StaleReason::ProcessGone => "process gone",
            StaleReason::PidReused => "pid reused by another process",
        }
    }
}

/// Classifies `meta` by what `probe` says about its pid now (see [`probe_process`]).
pub fn classify(meta: Option<Metadata>, probe: impl FnOnce(u32) -> ProcState) -> Status {
    let Some(meta) = meta else {
        return Status::Stopped;
    };
    match probe(meta.pid) {
        ProcState::Alive { start_time } if start_time == meta.start_time => Status::Running(meta),
        ProcState::Alive { .. } => Status::Stale {
            meta,
            reason: StaleReason::PidReused,
        },
        ProcState::Gone => Status::Stale {
            meta,
            reason: StaleReason::ProcessGone,
        },
    }
}

/// Reads the metadata at `paths` and classifies it against the live process table.
pub fn current_status(paths: &Paths) -> anyhow::Result<Status> {
    Ok(classify(Metadata::read(&paths.metadata())?, probe_process))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Metadata {
        Metadata {
            pid: 4242,
            start_time: 123_456,
            exe: PathBuf::from("/usr/bin/pawl"),
            config: "/home/u/.config/pawl/config.toml".into(),
            version: "0.1.0".into(),
            started_at: 1_700_000_000,
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
        let paths = Paths {
            dir: tmp.path().join("pawl"),
        };
        paths.ensure().unwrap();
        let mode = fs::metadata(&paths.dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        paths.ensure().unwrap();

        fs::set_permissions(&paths.dir, fs::Permissions::from_mode(0o777)).unwrap();
        let err = paths.ensure().unwrap_err().to_string();
        assert!(err.contains("accessible by other users"), "{err}");

        let link = Paths {
            dir: tmp.path().join("link"),
        };
        std::os::unix::fs::symlink(tmp.path(), &link.dir).unwrap();
        let err = link.ensure().unwrap_err().to_string();
        assert!(err.contains("not a directory"), "{err}");
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

    #[test]
    fn status_is_stopped_without_metadata() {
        assert_eq!(
            classify(None, |_| panic!("no pid to probe")),
            Status::Stopped
        );
    }

    #[test]
    fn status_is_running_when_the_pid_has_the_recorded_start_time() {
        let status = classify(Some(sample()), |pid| {
            assert_eq!(pid, 4242);
            ProcState::Alive {
                start_time: 123_456,
            }
        });
        assert_eq!(status, Status::Running(sample()));
    }

    #[test]
    fn status_is_stale_when_the_process_is_gone() {
        let status = classify(Some(sample()), |_| ProcState::Gone);
        assert_eq!(
            status,
            Status::Stale {
                meta: sample(),
                reason: StaleReason::ProcessGone
            }
        );
    }

    #[test]
    fn a_reused_pid_is_not_mistaken_for_the_worker() {
        let status = classify(Some(sample()), |_| ProcState::Alive {
            start_time: 999_999,
        });
        assert_eq!(
            status,
            Status::Stale {
                meta: sample(),
                reason: StaleReason::PidReused
            }
        );
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
        let paths = Paths {
            dir: tmp.path().to_owned(),
        };
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
