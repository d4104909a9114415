//! `pawl on`, `pawl off`, `pawl status`: start, stop and describe the one background worker.
//!
//! The protocol between these commands and the worker is in [`crate::worker`]; the lock and
//! metadata in [`crate::lifecycle`]. Everything here runs in the short-lived client, so
//! waiting is done by polling every [`POLL`] up to a deadline: the worker never polls.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail, format_err};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};
use serde_json::json;

use crate::lifecycle::{
    self, GrabbedDevice, LockFile, Metadata, Paths, ProcState, StaleReason, Status,
};
use crate::worker::{ERROR_PREFIX, READY_LINE};

/// How often the client re-checks while it waits for a worker to start or exit.
pub const POLL: Duration = Duration::from_millis(5);

/// `pawl status` exit code when a worker runs (LSB init-script convention).
pub const EXIT_RUNNING: u8 = 0;
/// `pawl status` exit code for stale metadata: "program is dead and the pid file exists"
/// (LSB).
pub const EXIT_STALE: u8 = 1;
/// `pawl status` exit code when no worker runs: "program is not running" (LSB).
pub const EXIT_STOPPED: u8 = 3;

/// What `pawl on` was asked for.
#[derive(Debug, Clone)]
pub struct OnOptions {
    /// `--config FILE`, passed on to the worker (made absolute: the worker runs in `/`).
    pub config: Option<PathBuf>,
    /// Run the worker with `--debug` (and log to [`default_log_path`] unless `log` is set).
    pub debug: bool,
    /// Append the worker's log (stderr) to this file.
    pub log: Option<PathBuf>,
    /// How long to wait for the worker to report ready.
    pub timeout: Duration,
}

/// `pawl on`: starts the worker unless one runs, waits until it is ready, prints one line.
///
/// Errors: the worker reported a startup error (its message), exited without one, or did
/// not report within the timeout; the runtime directory or log file is unusable.
pub fn on(opts: &OnOptions) -> anyhow::Result<ExitCode> {
    let paths = Paths::discover();
    paths.ensure()?;
    let lock = LockFile::open(&paths.lock())?;
    let deadline = Instant::now() + opts.timeout;
    while !lock.try_lock()? {
        // Someone holds the lock: a worker, or one still starting (no metadata yet).
        if let Status::Running(meta) = lifecycle::current_status(&paths)? {
            println!("already running (pid {})", meta.pid);
            return Ok(ExitCode::SUCCESS);
        }
        if Instant::now() >= deadline {
            bail!(
                "another process holds {} but no worker reported within {} s; see `pawl status`",
                paths.lock().display(),
                opts.timeout.as_secs_f64()
            );
        }
        std::thread::sleep(POLL);
    }
    // We hold the lock, so any metadata is from a worker that died without cleaning up.
    lifecycle::remove_if_exists(&paths.metadata())?;

    let exe = std::env::current_exe().context("cannot find pawl's own executable")?;
    let mut cmd = Command::new(&exe);
    cmd.arg("--worker");
    if let Some(config) = &opts.config {
        cmd.arg("--config").arg(std::path::absolute(config)?);
    }
    cmd.arg("run");
    if opts.debug {
        cmd.arg("--debug");
    }
    let log_path = match (&opts.log, opts.debug) {
        (Some(p), _) => Some(std::path::absolute(p)?),
        (None, true) => Some(default_log_path()?),
        (None, false) => None,
    };
    let stderr = match &log_path {
        Some(p) => Stdio::from(open_log(p)?),
        None => Stdio::null(),
    };
    let mut child = cmd
        .stdin(Stdio::from(lock.file().try_clone()?))
        .stdout(Stdio::piped())
        .stderr(stderr)
        .current_dir("/")
        .spawn()
        .with_context(|| format!("cannot start {}", exe.display()))?;
    // The worker's stdin shares our lock; from here on it is the holder.
    drop(lock);
    let pipe = child.stdout.take().context("no pipe to the worker")?;
    let reply = read_reply(pipe, deadline)?;
    match reply.trim_end().lines().next() {
        Some(READY_LINE) => {
            let meta = Metadata::read(&paths.metadata())?
                .context("the worker reported ready but wrote no metadata")?;
            println!("{}", started_line(&meta, log_path.as_deref()));
            Ok(ExitCode::SUCCESS)
        }
        Some(line) if line.starts_with(ERROR_PREFIX) => {
            let _ = child.wait();
            let message = &reply.trim_end()[ERROR_PREFIX.len()..];
            match &log_path {
                Some(log) => Err(format_err!("{message}\n(log: {})", log.display())),
                None => Err(format_err!("{message}")),
            }
        }
        _ if Instant::now() >= deadline => bail!(
            "the worker (pid {}) did not report within {} s; it may still be starting: see \
             `pawl status`, stop it with `pawl off`",
            child.id(),
            opts.timeout.as_secs_f64()
        ),
        _ => {
            let status = child.wait()?;
            bail!(
                "the worker exited during startup ({status}) without a message; run \
                 `pawl debug` to see why"
            )
        }
    }
}

/// `pawl off`: stops the running worker with `SIGTERM` and waits up to `timeout` for it to
/// exit; `kill`: then `SIGKILL` it. Idempotent: "not running" when there is none (stale
/// metadata is removed).
///
/// Errors: the worker did not exit in time (without `kill`), or cannot be signalled.
pub fn off(timeout: Duration, kill: bool) -> anyhow::Result<ExitCode> {
    let paths = Paths::discover();
    let deadline = Instant::now() + timeout;
    let meta = loop {
        match lifecycle::current_status(&paths)? {
            Status::Running(meta) => break meta,
            status if lifecycle::lock_is_free(&paths)? => {
                if let Status::Stale { meta, reason } = status {
                    lifecycle::remove_if_exists(&paths.metadata())?;
                    println!(
                        "not running (removed stale metadata of pid {}: {})",
                        meta.pid,
                        reason.describe()
                    );
                } else {
                    println!("not running");
                }
                return Ok(ExitCode::SUCCESS);
            }
            // The lock is held but no worker has described itself yet: one is starting.
            _ if Instant::now() >= deadline => bail!(
                "a worker is starting (it holds {}) but has not reported; try again",
                paths.lock().display()
            ),
            _ => std::thread::sleep(POLL),
        }
    };
    let pid = meta.pid;
    signal(pid, Signal::TERM)?;
    if !wait_gone(&meta, deadline) {
        if !kill {
            bail!(
                "pid {pid} did not exit within {} s of SIGTERM and still runs; wait and run \
                 `pawl off` again, or `pawl off --kill`",
                timeout.as_secs_f64()
            );
        }
        signal(pid, Signal::KILL)?;
        if !wait_gone(&meta, Instant::now() + Duration::from_secs(1)) {
            bail!("pid {pid} survived SIGKILL");
        }
        remove_metadata_of(&paths, pid)?;
        println!("killed (pid {pid}): it ignored SIGTERM");
        return Ok(ExitCode::SUCCESS);
    }
    // A worker that exits cleanly removes its own metadata; one that crashed did not.
    remove_metadata_of(&paths, pid)?;
    println!("stopped (pid {pid})");
    Ok(ExitCode::SUCCESS)
}

/// `pawl status`: prints the state (text, or one JSON object with `json`) and returns the
/// LSB exit code: [`EXIT_RUNNING`], [`EXIT_STALE`] or [`EXIT_STOPPED`].
pub fn status(json: bool) -> anyhow::Result<ExitCode> {
    let status = lifecycle::current_status(&Paths::discover())?;
    let now = unix_now();
    if json {
        println!("{}", status_json(&status, now));
    } else {
        print!("{}", status_text(&status, now));
        #[cfg(target_os = "macos")]
        print!("{}", crate::macos::permission_report());
    }
    Ok(ExitCode::from(status_exit_code(&status)))
}

/// The exit code of `pawl status` for `status`.
pub fn status_exit_code(status: &Status) -> u8 {
    match status {
        Status::Running(_) => EXIT_RUNNING,
        Status::Stale { .. } => EXIT_STALE,
        Status::Stopped => EXIT_STOPPED,
    }
}

/// `pawl status` for people: a headline and, when running, one line per detail.
pub fn status_text(status: &Status, now: u64) -> String {
    match status {
        Status::Stopped => "stopped\n".to_owned(),
        Status::Stale { meta, reason } => format!(
            "stopped (stale metadata: pid {}, {}; `pawl on` or `pawl off` removes it)\n",
            meta.pid,
            reason.describe()
        ),
        Status::Running(meta) => {
            let mut s = format!(
                "running (pid {}, up {})\n  config:  {}\n",
                meta.pid,
                uptime(now.saturating_sub(meta.started_at)),
                meta.config
            );
            if meta.devices.is_empty() {
                s.push_str("  grabbed: nothing yet (waiting for a device: see `pawl devices`)\n");
            }
            for (i, d) in meta.devices.iter().enumerate() {
                let label = if i == 0 { "grabbed:" } else { "" };
                s.push_str(&format!(
                    "  {label:<8} {} ({:04x}:{:04x}) {}\n",
                    d.name, d.vendor, d.product, d.path
                ));
            }
            s.push_str(&format!(
                "  version: {} ({})\n",
                meta.version,
                meta.exe.display()
            ));
            s
        }
    }
}

/// `pawl status --json`: `{"state": "running"|"stopped"|"stale", …}`. Running adds `pid`,
/// `uptime_s`, `started_at` (Unix s), `config`, `version`, `exe` and `devices` (`path`,
/// `name`, `vendor`, `product` as 4-digit hex strings); stale adds `pid` and `reason`
/// (`process-gone`, `pid-reused`).
pub fn status_json(status: &Status, now: u64) -> serde_json::Value {
    match status {
        Status::Stopped => json!({ "state": "stopped" }),
        Status::Stale { meta, reason } => json!({
            "state": "stale",
            "pid": meta.pid,
            "reason": match reason {
                StaleReason::ProcessGone => "process-gone",
                StaleReason::PidReused => "pid-reused",
            },
        }),
        Status::Running(meta) => json!({
            "state": "running",
            "pid": meta.pid,
            "uptime_s": now.saturating_sub(meta.started_at),
            "started_at": meta.started_at,
            "config": meta.config,
            "version": meta.version,
            "exe": meta.exe,
            "devices": meta.devices.iter().map(device_json).collect::<Vec<_>>(),
        }),
    }
}

fn device_json(d: &GrabbedDevice) -> serde_json::Value {
    json!({
        "path": d.path,
        "name": d.name,
        "vendor": format!("{:04x}", d.vendor),
        "product": format!("{:04x}", d.product),
    })
}

/// The one line `pawl on` prints once the worker is ready.
pub fn started_line(meta: &Metadata, log: Option<&Path>) -> String {
    let mut s = format!("started (pid {})", meta.pid);
    match meta.devices.as_slice() {
        [] => s.push_str(": no device to grab yet, waiting for one (see `pawl devices`)"),
        devices => {
            s.push_str(": grabbed ");
            let names: Vec<String> = devices
                .iter()
                .map(|d| format!("{} ({})", d.name, d.path))
                .collect();
            s.push_str(&names.join(", "));
        }
    }
    if let Some(log) = log {
        s.push_str(&format!("; log: {}", log.display()));
    }
    s
}

/// A duration in seconds as `45s`, `12m 05s`, `3h 07m`, `2d 4h`.
pub fn uptime(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s:02}s"),
        (0, _, _) => format!("{h}h {m:02}m"),
        _ => format!("{d}d {h}h"),
    }
}

/// Where `pawl on --debug` logs without `--log`: `$XDG_STATE_HOME/pawl/pawl.log` (default
/// `~/.local/state/pawl/pawl.log`) on Linux, `~/Library/Logs/pawl.log` on macOS.
pub fn default_log_path() -> anyhow::Result<PathBuf> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .context("HOME is not set; give a log file with --log FILE")
    };
    if cfg!(target_os = "macos") {
        return Ok(home()?.join("Library/Logs/pawl.log"));
    }
    let state = match std::env::var_os("XDG_STATE_HOME").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => home()?.join(".local/state"),
    };
    Ok(state.join("pawl/pawl.log"))
}

fn open_log(path: &Path) -> anyhow::Result<File> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open log file {}", path.display()))
}

/// Reads the worker's reply until end of file or `deadline`.
fn read_reply(mut pipe: impl Read + std::os::fd::AsFd, deadline: Instant) -> io::Result<String> {
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let timeout = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let mut fds = [PollFd::new(&pipe, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => reply.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

fn signal(pid: u32, sig: Signal) -> anyhow::Result<()> {
    let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        bail!("invalid pid {pid} in the metadata");
    };
    match rustix::process::kill_process(p, sig) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(e) => Err(io::Error::from(e)).with_context(|| format!("cannot signal pid {pid}")),
    }
}

/// Waits until the process described by `meta` is gone (or a zombie); false at `deadline`.
fn wait_gone(meta: &Metadata, deadline: Instant) -> bool {
    loop {
        match lifecycle::probe_process(meta.pid) {
            ProcState::Alive { start_time } if start_time == meta.start_time => {}
            _ => return true,
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Removes the metadata if it still describes `pid` (not a worker started since).
fn remove_metadata_of(paths: &Paths, pid: u32) -> anyhow::Result<()> {
    if let Ok(Some(meta)) = Metadata::read(&paths.metadata())
        && meta.pid != pid
    {
        return Ok(());
    }
    lifecycle::remove_if_exists(&paths.metadata())?;
    Ok(())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn meta(devices: Vec<GrabbedDevice>) -> Metadata {
        Metadata {
            pid: 4242,
            start_time: 99,
            exe: PathBuf::from("/usr/bin/pawl"),
            config: "/home/u/.config/pawl/config.toml".into(),
            version: "0.1.0".into(),
            started_at: 1_700_000_000,
            devices,
        }
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
    fn status_exit_codes_follow_lsb() {
        assert_eq!(status_exit_code(&Status::Running(meta(vec![]))), 0);
        assert_eq!(status_exit_code(&Status::Stopped), 3);
        let stale = Status::Stale {
            meta: meta(vec![]),
            reason: StaleReason::ProcessGone,
        };
        assert_eq!(status_exit_code(&stale), 1);
    }

    #[test]
    fn status_text_shows_pid_uptime_config_and_grabbed_devices() {
        let now = 1_700_000_000 + 2 * 3600 + 3 * 60 + 7;
        let text = status_text(&Status::Running(meta(vec![mx()])), now);
        expect![[r#"
            running (pid 4242, up 2h 03m)
              config:  /home/u/.config/pawl/config.toml
              grabbed: Logitech MX Master 3S (046d:b034) /dev/input/event3
              version: 0.1.0 (/usr/bin/pawl)
        "#]]
        .assert_eq(&text);
        let text = status_text(&Status::Running(meta(vec![])), 1_700_000_005);
        expect![[r#"
            running (pid 4242, up 5s)
              config:  /home/u/.config/pawl/config.toml
              grabbed: nothing yet (waiting for a device: see `pawl devices`)
              version: 0.1.0 (/usr/bin/pawl)
        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn status_text_for_stopped_and_stale() {
        assert_eq!(status_text(&Status::Stopped, 0), "stopped\n");
        let stale = Status::Stale {
            meta: meta(vec![]),
            reason: StaleReason::PidReused,
        };
        expect![[r#"
            stopped (stale metadata: pid 4242, pid reused by another process; `pawl on` or `pawl off` removes it)
        "#]]
        .assert_eq(&status_text(&stale, 0));
    }

    #[test]
    fn status_json_has_a_state_and_the_details_scripts_need() {
        let running = status_json(&Status::Running(meta(vec![mx()])), 1_700_000_042);
        expect![[r#"
            {
              "config": "/home/u/.config/pawl/config.toml",
              "devices": [
                {
                  "name": "Logitech MX Master 3S",
                  "path": "/dev/input/event3",
                  "product": "b034",
                  "vendor": "046d"
                }
              ],
              "exe": "/usr/bin/pawl",
              "pid": 4242,
              "started_at": 1700000000,
              "state": "running",
              "uptime_s": 42,
              "version": "0.1.0"
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&running).unwrap());
        assert_eq!(
            status_json(&Status::Stopped, 0).to_string(),
            r#"{"state":"stopped"}"#
        );
        let stale = Status::Stale {
            meta: meta(vec![]),
            reason: StaleReason::ProcessGone,
        };
        assert_eq!(
            status_json(&stale, 0).to_string(),
            r#"{"pid":4242,"reason":"process-gone","state":"stale"}"#
        );
    }

    #[test]
    fn started_line_names_the_grabbed_devices_or_says_it_waits() {
        assert_eq!(
            started_line(&meta(vec![mx()]), None),
            "started (pid 4242): grabbed Logitech MX Master 3S (/dev/input/event3)"
        );
        assert_eq!(
            started_line(&meta(vec![]), Some(Path::new("/tmp/p.log"))),
            "started (pid 4242): no device to grab yet, waiting for one (see `pawl devices`); \
             log: /tmp/p.log"
        );
    }

    #[test]
    fn uptime_is_short_and_human() {
        assert_eq!(uptime(0), "0s");
        assert_eq!(uptime(59), "59s");
        assert_eq!(uptime(60 + 5), "1m 05s");
        assert_eq!(uptime(3 * 3600 + 7 * 60 + 59), "3h 07m");
        assert_eq!(uptime(2 * 86_400 + 4 * 3600 + 1), "2d 4h");
    }
}
