//! The worker's side of the single-instance protocol: `pawl run` (in the foreground, as a
//! service, or started by `pawl on`) holds the lock, records itself in the metadata, tells
//! `pawl on` when it is ready, and removes its metadata when it exits.
//!
//! How `pawl on` hands over (see `control::on`): it takes the lock itself, then starts
//! `pawl --worker run …` with the lock file as the worker's stdin and a pipe as its stdout.
//! The worker keeps duplicates of both, puts `/dev/null` in their place, and calls
//! `setsid`. After grabbing its devices it writes the metadata and then `ready\n` on the
//! pipe; if startup fails it writes `error: <message>` instead. Both ends close, `pawl on`
//! reads to end of file. There is never a moment when no process holds the lock.
//!
//! ```text
//! let mut worker = Worker::start(cli.worker)?;   // first thing: lock (or AlreadyRunning)
//! … load config, grab devices …
//! worker.ready(&origin, devices)?;               // metadata written, `pawl on` returns
//! … event loop; worker.set_devices(..) on hotplug …
//! drop(worker);                                  // metadata removed, lock released
//! ```

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;

use crate::lifecycle::{self, Handled, LockFile, Metadata, Paths, ProcState, Status};

/// The first line the worker writes on the readiness pipe when its devices are grabbed.
pub const READY_LINE: &str = "ready";
/// The prefix of the line the worker writes when startup failed; the message follows.
pub const ERROR_PREFIX: &str = "error: ";

/// How long `pawl run` waits for the holder of the lock to be identified (or to let go)
/// before it answers "starting (pid unknown)": 10 s, `pawl on`'s default `--timeout`.
pub const STARTING_WAIT: Duration = Duration::from_secs(10);

/// Another process holds the lock: `pawl run` then starts nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlreadyRunning {
    /// The worker's pid, from its metadata, when it is identified ([`Status::Running`]).
    pub pid: Option<u32>,
    /// The line to print when it is not ([`lifecycle::unidentified_line`]).
    pub unidentified: Option<String>,
}

impl fmt::Display for AlreadyRunning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.pid, &self.unidentified) {
            (Some(pid), _) => write!(f, "already running (pid {pid})"),
            (None, Some(line)) => f.write_str(line),
            (None, None) => f.write_str("already running"),
        }
    }
}

impl std::error::Error for AlreadyRunning {}

/// What holds the lock now, as an [`AlreadyRunning`]; `None` when it has let go (or the
/// holder is not identified yet and `deadline` has not passed).
fn holder(paths: &Paths, deadline: Instant) -> anyhow::Result<Option<AlreadyRunning>> {
    Ok(match lifecycle::current_status(paths)? {
        Status::Running(meta) => Some(AlreadyRunning {
            pid: Some(meta.pid),
            unidentified: None,
        }),
        Status::Unidentified(why) if Instant::now() >= deadline => Some(AlreadyRunning {
            pid: None,
            unidentified: Some(lifecycle::unidentified_line(paths, &why)),
        }),
        _ => None,
    })
}

/// A running worker's hold on the single instance. Dropping it removes the metadata; the
/// lock goes with the process (or with this value, whichever comes first).
#[derive(Debug)]
pub struct Worker {
    paths: Paths,
    _lock: LockFile,
    /// The readiness pipe to `pawl on`, until it is answered.
    ready_pipe: Option<File>,
    meta: Option<Metadata>,
}

impl Worker {
    /// Takes the single instance. `detached`: started by `pawl on` (the hidden `--worker`
    /// flag): adopt the lock from stdin and the readiness pipe from stdout, replace both
    /// with `/dev/null`, and start a new session. Otherwise take the lock here.
    ///
    /// Errors: [`AlreadyRunning`] (downcast it) when another worker holds the lock; I/O
    /// errors naming the runtime directory; a `--worker` stdin that is not the lock file.
    pub fn start(detached: bool) -> anyhow::Result<Worker> {
        Worker::start_in(Paths::discover(), detached)
    }

    /// [`Worker::start`] with the runtime directory given.
    pub fn start_in(paths: Paths, detached: bool) -> anyhow::Result<Worker> {
        paths.ensure()?;
        if detached {
            let (lock, ready) = adopt_stdio(&paths)?;
            // Not a process-group leader (started without one), so this cannot fail in
            // practice; a failure leaves the worker in the caller's session, not broken.
            let _ = rustix::process::setsid();
            return Ok(Worker {
                paths,
                _lock: lock,
                ready_pipe: Some(ready),
                meta: None,
            });
        }
        let lock = LockFile::open(&paths.lock())?;
        // Wait while the holder is not identified: a worker starting, or a `pawl status`
        // or `pawl off` probing the lock for a moment.
        let deadline = Instant::now() + STARTING_WAIT;
        while !lock.try_lock()? {
            if let Some(already) = holder(&paths, deadline)? {
                return Err(already.into());
            }
            std::thread::sleep(lifecycle::POLL);
        }
        // We hold the lock: any metadata left is from a worker that died without cleanup.
        lifecycle::remove_if_exists(&paths.metadata())?;
        Ok(Worker {
            paths,
            _lock: lock,
            ready_pipe: None,
            meta: None,
        })
    }

    /// Startup is done: records the metadata (pid, start time, executable, `config` —
    /// the config's path or "defaults (…)", version, start time, `handled`) and answers
    /// `pawl on`. Call once, after grabbing (zero devices is a valid start: the worker
    /// waits for one to appear).
    ///
    /// Errors: the metadata cannot be written.
    pub fn ready(&mut self, config: &str, handled: Handled) -> anyhow::Result<()> {
        let pid = std::process::id();
        let start_time = match lifecycle::probe_process(pid) {
            ProcState::Alive { start_time } => start_time,
            ProcState::Gone => anyhow::bail!("cannot read this process's own start time"),
        };
        let meta = Metadata {
            pid,
            start_time,
            exe: std::env::current_exe().unwrap_or_default(),
            config: config.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            devices: handled.devices,
            mice: handled.mice,
            focus: handled.focus,
        };
        let path = self.paths.metadata();
        meta.write(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        self.meta = Some(meta);
        self.answer(READY_LINE);
        Ok(())
    }

    /// Records a changed set of grabbed devices and mice (a device came or went, a
    /// mouse's paths changed).
    ///
    /// Errors: the metadata cannot be written (the old one stays).
    pub fn set_devices(&mut self, handled: Handled) -> io::Result<()> {
        let Some(meta) = &mut self.meta else {
            return Ok(());
        };
        meta.devices = handled.devices;
        meta.mice = handled.mice;
        meta.focus = handled.focus;
        meta.write(&self.paths.metadata())
    }

    /// Startup failed: tells `pawl on` why (all of `err`'s chain, on one line per cause).
    /// Without `pawl on` waiting, does nothing; the caller prints the error as usual.
    pub fn fail(&mut self, err: &anyhow::Error) {
        self.answer(&format!("{ERROR_PREFIX}{err:#}"));
    }

    /// The metadata written by [`Worker::ready`].
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only the tests read it back so far")
    )]
    pub fn metadata(&self) -> Option<&Metadata> {
        self.meta.as_ref()
    }

    fn answer(&mut self, line: &str) {
        if let Some(mut pipe) = self.ready_pipe.take() {
            // `pawl on` may have been interrupted; nothing to do about a closed pipe.
            let _ = writeln!(pipe, "{line}");
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.meta.is_some() {
            let _ = lifecycle::remove_if_exists(&self.paths.metadata());
        }
    }
}

/// Takes the lock from stdin and the readiness pipe from stdout (as duplicates, close-on-
/// exec so commands the worker starts never hold the lock), and puts `/dev/null` on both.
fn adopt_stdio(paths: &Paths) -> anyhow::Result<(LockFile, File)> {
    let lock = File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let ready = File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let devnull = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    rustix::stdio::dup2_stdin(&devnull)?;
    rustix::stdio::dup2_stdout(&devnull)?;
    // `--worker` is internal, but it must never let a second worker past the lock: the
    // inherited file must be the lock file, and the lock must be ours.
    let on_stdin = lock.metadata()?;
    let expected = std::fs::metadata(paths.lock())
        .with_context(|| format!("cannot inspect {}", paths.lock().display()))?;
    if (on_stdin.dev(), on_stdin.ino()) != (expected.dev(), expected.ino()) {
        anyhow::bail!("--worker: stdin is not {}", paths.lock().display());
    }
    let lock = LockFile::from_file(lock);
    if !lock.try_lock()? {
        let already = holder(paths, Instant::now())?.unwrap_or(AlreadyRunning {
            pid: None,
            unidentified: None,
        });
        return Err(already.into());
    }
    Ok((lock, ready))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::GrabbedDevice;

    fn paths(tmp: &tempfile::TempDir) -> Paths {
        Paths::at(tmp.path().join("pawl"))
    }

    fn mx() -> GrabbedDevice {
        GrabbedDevice {
            path: "/dev/input/event3".into(),
            name: "Logitech MX Master 3S".into(),
            vendor: 0x046d,
            product: 0xb034,
        }
    }

    #[test]
    fn a_worker_records_itself_when_ready_and_removes_its_metadata_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = paths(&tmp);
        let mut worker = Worker::start_in(paths.clone(), false).unwrap();
        assert_eq!(Metadata::read(&paths.metadata()).unwrap(), None);
        worker
            .ready(
                "/etc/pawl.toml",
                Handled {
                    devices: vec![mx()],
                    mice: Vec::new(),
                    focus: None,
                },
            )
            .unwrap();
        let meta = Metadata::read(&paths.metadata()).unwrap().unwrap();
        assert_eq!(meta.pid, std::process::id());
        assert_eq!(meta.config, "/etc/pawl.toml");
        assert_eq!(meta.devices, vec![mx()]);
        assert_eq!(meta.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(
            lifecycle::classify(true, Ok(Some(meta)), lifecycle::probe_process),
            lifecycle::Status::Running(worker.metadata().unwrap().clone())
        );
        worker.set_devices(Handled::default()).unwrap();
        let meta = Metadata::read(&paths.metadata()).unwrap().unwrap();
        assert!(meta.devices.is_empty());
        drop(worker);
        assert_eq!(Metadata::read(&paths.metadata()).unwrap(), None);
        assert!(lifecycle::lock_is_free(&paths).unwrap());
    }

    #[test]
    fn a_second_worker_is_refused_and_names_the_first() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = paths(&tmp);
        let mut first = Worker::start_in(paths.clone(), false).unwrap();
        first.ready("defaults", Handled::default()).unwrap();
        let err = Worker::start_in(paths.clone(), false).unwrap_err();
        let already = err.downcast_ref::<AlreadyRunning>().unwrap();
        assert_eq!(already.pid, Some(std::process::id()));
        assert_eq!(
            err.to_string(),
            format!("already running (pid {})", std::process::id())
        );
        // The refused start did not touch the first worker's metadata.
        assert!(Metadata::read(&paths.metadata()).unwrap().is_some());
        drop(first);
        Worker::start_in(paths, false).unwrap();
    }

    #[test]
    fn a_starting_worker_removes_metadata_left_by_a_killed_one() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = paths(&tmp);
        paths.ensure().unwrap();
        let left = Metadata {
            pid: 1,
            start_time: 0,
            exe: "/usr/bin/pawl".into(),
            config: "defaults".into(),
            version: "0.0.0".into(),
            started_at: 0,
            devices: vec![mx()],
            mice: Vec::new(),
            focus: None,
        };
        left.write(&paths.metadata()).unwrap();
        let _worker = Worker::start_in(paths.clone(), false).unwrap();
        assert_eq!(Metadata::read(&paths.metadata()).unwrap(), None);
    }

    #[test]
    fn run_while_a_process_holds_the_lock_without_metadata_says_starting_pid_unknown() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = paths(&tmp);
        paths.ensure().unwrap();
        let other = LockFile::open(&paths.lock()).unwrap();
        assert!(other.try_lock().unwrap());
        let already = holder(&paths, Instant::now()).unwrap().unwrap();
        assert_eq!(already.pid, None);
        assert_eq!(
            already.to_string(),
            lifecycle::unidentified_line(&paths, &lifecycle::Unidentified::NoMetadata)
        );
        assert!(already.to_string().starts_with("starting (pid unknown): "));
        // Before the deadline it keeps waiting.
        let later = Instant::now() + Duration::from_secs(60);
        assert_eq!(holder(&paths, later).unwrap(), None);
    }
}
