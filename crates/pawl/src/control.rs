//! `pawl on`, `pawl off`, `pawl status`: start, stop and describe the one background worker.
//!
//! The protocol between these commands and the worker is in [`crate::worker`]; the lock and
//! metadata in [`crate::lifecycle`]. Everything here runs in the short-lived client, so
//! waiting is done by polling every [`lifecycle::POLL`] up to a deadline: the worker never polls.
//!
//! The lock decides ([`lifecycle::current_status`]): `status` calls a worker running only
//! while the lock is held, `off` signals only a pid whose start time matches its metadata
//! while the lock is held (checked again just before each signal, through a pidfd on
//! Linux so the pid cannot be reused in between), and removes stale metadata only while
//! holding the lock itself. A held lock whose holder is not identified gets the same line
//! and exit status ([`EXIT_UNIDENTIFIED`]) from `status`, `off`, `on` and `run`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail, format_err};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};
use serde_json::json;

pub use crate::lifecycle::EXIT_UNIDENTIFIED;
use crate::lifecycle::{
    self, GrabbedDevice, LockFile, Metadata, MouseRecord, Paths, ProcState, StaleReason, Status,
    Unidentified,
};
use crate::out::{self, escape_control};
use crate::worker::{ERROR_PREFIX, READY_LINE};

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
    /// `-v` and `-q` counts, passed on to the worker.
    pub verbose: u8,
    /// See `verbose`.
    pub quiet: u8,
}

/// `pawl on`: starts the worker unless one runs, waits until it is ready, prints one line.
/// Exit 0 when a worker runs afterwards; [`EXIT_UNIDENTIFIED`] with "starting (pid …)"
/// when the lock's holder (or the new worker) has not identified itself by the timeout.
///
/// Errors: the worker reported a startup error (its message) or died without one; the
/// runtime directory or log file is unusable (named).
pub fn on(opts: &OnOptions) -> anyhow::Result<ExitCode> {
    let paths = Paths::discover();
    paths.ensure()?;
    let log_path = match (&opts.log, opts.debug) {
        (Some(p), _) => Some(std::path::absolute(p)?),
        (None, true) => Some(default_log_path()?),
        (None, false) => None,
    };
    let lock = LockFile::open(&paths.lock())?;
    let deadline = Instant::now() + opts.timeout;
    while !lock.try_lock()? {
        // Someone holds the lock: a worker, or one still starting (no metadata yet).
        match lifecycle::current_status(&paths)? {
            Status::Running(meta) => {
                out::println(&format!("already running (pid {})", meta.pid))?;
                return Ok(ExitCode::SUCCESS);
            }
            Status::Unidentified(why) if Instant::now() >= deadline => {
                out::println(&lifecycle::unidentified_line(&paths, &why))?;
                return Ok(ExitCode::from(EXIT_UNIDENTIFIED));
            }
            _ => std::thread::sleep(lifecycle::POLL),
        }
    }
    // We hold the lock, so any metadata is from a worker that died without cleaning up.
    lifecycle::remove_if_exists(&paths.metadata())
        .with_context(|| format!("cannot remove {}", paths.metadata().display()))?;

    let exe = std::env::current_exe().context("cannot find pawl's own executable")?;
    let mut cmd = Command::new(&exe);
    cmd.arg("--worker");
    for (flag, n) in [("-v", opts.verbose), ("-q", opts.quiet)] {
        cmd.args(std::iter::repeat_n(flag, n.into()));
    }
    if let Some(config) = &opts.config {
        cmd.arg("--config").arg(std::path::absolute(config)?);
    }
    cmd.arg("run");
    if opts.debug {
        cmd.arg("--debug");
    }
    let stderr = match &log_path {
        Some(p) => Stdio::from(open_log(p, opts.log.is_none())?),
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
    let mut pipe = child.stdout.take().context("no pipe to the worker")?;
    let mut reply = read_reply(&mut pipe, deadline)?;
    // No answer by the deadline: has it died (then what it wrote before dying is in the
    // pipe), or is it still starting?
    let exited = match startup_answer(&reply, false) {
        StartupAnswer::Silent => child.try_wait()?,
        _ => None,
    };
    if exited.is_some() {
        reply += &read_reply(&mut pipe, Instant::now() + Duration::from_secs(1))?;
    }
    match startup_answer(&reply, exited.is_some()) {
        StartupAnswer::Ready => {
            let meta = Metadata::read(&paths.metadata())?
                .context("the worker reported ready but wrote no metadata")?;
            out::println(&started_line(&meta, log_path.as_deref()))?;
            Ok(ExitCode::SUCCESS)
        }
        StartupAnswer::Failed(message) => {
            let _ = child.wait();
            match &log_path {
                Some(log) => Err(format_err!("{message}\n(log: {})", log.display())),
                None => Err(format_err!("{message}")),
            }
        }
        StartupAnswer::Died => {
            let status = match exited {
                Some(status) => status,
                None => child.wait()?,
            };
            bail!(
                "the worker exited during startup ({status}) without a message; run `pawl \
                 debug` to see why"
            )
        }
        StartupAnswer::Silent => {
            out::println(&format!(
                "starting (pid {}): the worker has not reported within {} s; `pawl status` \
                 shows when it runs, `pawl off` stops it",
                child.id(),
                opts.timeout.as_secs_f64()
            ))?;
            Ok(ExitCode::from(EXIT_UNIDENTIFIED))
        }
    }
}

/// What the worker's reply (read to its end or the deadline) means for `pawl on`.
#[derive(Debug, PartialEq, Eq)]
enum StartupAnswer {
    /// `ready`: it runs.
    Ready,
    /// `error: …`: its message.
    Failed(String),
    /// No answer and the process has exited: never called "starting".
    Died,
    /// No answer and the process is still alive at the deadline.
    Silent,
}

/// Reads the reply: its first line decides; without one, whether the worker `exited`.
fn startup_answer(reply: &str, exited: bool) -> StartupAnswer {
    match reply.trim_end().lines().next() {
        Some(READY_LINE) => StartupAnswer::Ready,
        Some(line) if line.starts_with(ERROR_PREFIX) => {
            StartupAnswer::Failed(reply.trim_end()[ERROR_PREFIX.len()..].to_owned())
        }
        _ if exited => StartupAnswer::Died,
        _ => StartupAnswer::Silent,
    }
}

/// `pawl off`: stops the running worker with `SIGTERM` and waits up to `timeout` for it to
/// exit; `kill`: then `SIGKILL` it. Idempotent: "not running" when there is none (stale
/// metadata is removed, under the lock). A held lock whose holder is not identified by
/// `timeout` is answered with [`lifecycle::unidentified_line`] and [`EXIT_UNIDENTIFIED`]:
/// nothing is signalled.
///
/// Errors: the worker did not exit in time (without `kill`), or cannot be signalled; the
/// runtime directory is refused (named, with the fix).
pub fn off(timeout: Duration, kill: bool) -> anyhow::Result<ExitCode> {
    let paths = Paths::discover();
    let deadline = Instant::now() + timeout;
    let meta = loop {
        match lifecycle::current_status(&paths)? {
            Status::Running(meta) => break meta,
            Status::Stopped => {
                out::println("not running")?;
                return Ok(ExitCode::SUCCESS);
            }
            Status::Stale { pid, reason } => {
                // Removed only while we hold the lock: a worker starting now keeps its file.
                if remove_metadata_under_lock(&paths)? {
                    out::println(&match pid {
                        Some(pid) => format!(
                            "not running (removed stale metadata of pid {pid}: {})",
                            reason.describe()
                        ),
                        None => format!(
                            "not running (removed unreadable metadata: {})",
                            reason.describe()
                        ),
                    })?;
                    return Ok(ExitCode::SUCCESS);
                }
            }
            Status::Unidentified(why) if Instant::now() >= deadline => {
                out::println(&lifecycle::unidentified_line(&paths, &why))?;
                return Ok(ExitCode::from(EXIT_UNIDENTIFIED));
            }
            Status::Unidentified(_) => std::thread::sleep(lifecycle::POLL),
        }
    };
    let pid = meta.pid;
    if !signal_worker(&paths, &meta, Signal::TERM)? {
        // It exited between the look and the signal.
        remove_metadata_under_lock(&paths)?;
        out::println(&format!("stopped (pid {pid})"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if !wait_gone(&meta, deadline) {
        if !kill {
            bail!(
                "pid {pid} did not exit within {} s of SIGTERM and still runs; wait and run \
                 `pawl off` again, or `pawl off --kill`",
                timeout.as_secs_f64()
            );
        }
        signal_worker(&paths, &meta, Signal::KILL)?;
        if !wait_gone(&meta, Instant::now() + Duration::from_secs(1)) {
            bail!("pid {pid} survived SIGKILL");
        }
        remove_metadata_under_lock(&paths)?;
        out::println(&format!("killed (pid {pid}): it ignored SIGTERM"))?;
        return Ok(ExitCode::SUCCESS);
    }
    // A worker that exits cleanly removes its own metadata; one that crashed did not.
    remove_metadata_under_lock(&paths)?;
    out::println(&format!("stopped (pid {pid})"))?;
    Ok(ExitCode::SUCCESS)
}

/// `pawl status`: prints the state (text, or one JSON object with `json`) and returns the
/// LSB exit code: [`EXIT_RUNNING`], [`EXIT_STALE`], [`EXIT_STOPPED`] or
/// [`EXIT_UNIDENTIFIED`]. When the state cannot be determined (a refused runtime
/// directory), the error is printed once on stderr, `--json` still prints
/// `{"state": "unknown", "error": …}`, and the exit status is [`EXIT_UNIDENTIFIED`] (LSB 4,
/// "status unknown") rather than 1, which means stale.
///
/// Errors: only a failed write (stdout, stderr).
pub fn status(json: bool) -> anyhow::Result<ExitCode> {
    let paths = Paths::discover();
    let status = match lifecycle::current_status(&paths) {
        Ok(s) => s,
        Err(e) => {
            if json {
                out::println(
                    &json!({ "state": "unknown", "error": format!("{e:#}") }).to_string(),
                )?;
            }
            out::eprintln(&format!("pawl: {e:#}"))?;
            return Ok(ExitCode::from(EXIT_UNIDENTIFIED));
        }
    };
    let now = unix_now();
    #[cfg(target_os = "linux")]
    let status = with_batteries(status, std::path::Path::new("/sys"));
    if json {
        out::println(&status_json(&status, &paths, now).to_string())?;
    } else {
        out::print(&status_text(&status, &paths, now))?;
        #[cfg(target_os = "macos")]
        out::print(&crate::macos::permission_report())?;
    }
    Ok(ExitCode::from(status_exit_code(&status)))
}

/// `status` with each running mouse's battery read from the kernel's power supplies
/// under `sys` (normally `/sys`): the one of the HID device that holds its HID++ endpoint
/// or one of its pointer nodes ([`pawl_linux::battery::for_node`]).
#[cfg(target_os = "linux")]
pub fn with_batteries(status: Status, sys: &std::path::Path) -> Status {
    use pawl_linux::battery;
    let Status::Running(mut meta) = status else {
        return status;
    };
    let batteries = battery::scan(&sys.join("class/power_supply"));
    if batteries.is_empty() {
        return Status::Running(meta);
    }
    for m in &mut meta.mice {
        m.battery = battery_of(m, sys, &batteries);
    }
    Status::Running(meta)
}

/// The battery of `m` among `batteries` (read under `sys`): the one of the HID device that
/// holds its HID++ endpoint or one of its pointer nodes.
#[cfg(target_os = "linux")]
pub fn battery_of(
    m: &MouseRecord,
    sys: &std::path::Path,
    batteries: &[pawl_linux::battery::Battery],
) -> Option<lifecycle::BatteryRecord> {
    let found = m
        .hidraw
        .iter()
        .chain(m.nodes.iter().map(|n| &n.path))
        .find_map(|p| pawl_linux::battery::for_node(sys, batteries, p))?;
    Some(battery_record(found))
}

/// A kernel battery as `pawl status` and `pawl devices` show it: its status in lower case,
/// `Unknown` dropped.
#[cfg(target_os = "linux")]
pub fn battery_record(b: &pawl_linux::battery::Battery) -> lifecycle::BatteryRecord {
    lifecycle::BatteryRecord {
        percent: b.capacity,
        level: b.level.clone(),
        status: b
            .status
            .as_ref()
            .map(|s| s.to_lowercase())
            .filter(|s| s != "unknown"),
    }
}

/// The exit code of `pawl status` for `status`.
pub fn status_exit_code(status: &Status) -> u8 {
    match status {
        Status::Running(_) => EXIT_RUNNING,
        Status::Stale { .. } => EXIT_STALE,
        Status::Stopped => EXIT_STOPPED,
        Status::Unidentified(_) => EXIT_UNIDENTIFIED,
    }
}

/// `pawl status` for people: a headline and, when running, one line per detail. Device
/// names are shown with control characters escaped ([`escape_control`]).
pub fn status_text(status: &Status, paths: &Paths, now: u64) -> String {
    match status {
        Status::Stopped => "stopped\n".to_owned(),
        Status::Stale {
            pid: Some(pid),
            reason,
        } => format!(
            "stopped (stale metadata: pid {pid}, {}; `pawl on` or `pawl off` removes it)\n",
            reason.describe()
        ),
        Status::Stale { pid: None, reason } => format!(
            "stopped (unreadable metadata: {}; `pawl on` or `pawl off` removes it)\n",
            reason.describe()
        ),
        Status::Unidentified(why) => format!("{}\n", lifecycle::unidentified_line(paths, why)),
        Status::Running(meta) => {
            let mut s = format!(
                "running (pid {}, up {})\n  config:  {}\n",
                meta.pid,
                uptime(now.saturating_sub(meta.started_at)),
                escape_control(&meta.config)
            );
            if meta.devices.is_empty() {
                s.push_str("  grabbed: nothing yet (waiting for a device: see `pawl devices`)\n");
            }
            for (i, d) in meta.devices.iter().enumerate() {
                let label = if i == 0 { "grabbed:" } else { "" };
                s.push_str(&format!(
                    "  {label:<8} {} ({:04x}:{:04x}) {}\n",
                    escape_control(&d.name),
                    d.vendor,
                    d.product,
                    escape_control(&d.path)
                ));
            }
            for m in &meta.mice {
                s.push_str(&mouse_text(m, "  mouse:   ", true, "    "));
            }
            if let Some(f) = &meta.focus {
                s.push_str(&format!(
                    "  focus:   {}, app {}, profile {}\n",
                    escape_control(&f.backend),
                    f.app.as_deref().map_or("unknown".into(), escape_control),
                    escape_control(&f.profile)
                ));
            }
            s.push_str(&format!(
                "  version: {} ({})\n",
                escape_control(&meta.version),
                escape_control(&meta.exe.display().to_string())
            ));
            s
        }
    }
}

/// One handled mouse and which path carries each part: a headline (`head`, then name and
/// ids unless `named` is false, its nodes and HID++ endpoint), then one `indent`ed line per
/// part (`gesture button: HID++ divert of CID 0x00C3 (hidraw3), raw XY while held`). Names
/// and paths escaped.
pub fn mouse_text(m: &MouseRecord, head: &str, named: bool, indent: &str) -> String {
    let mut parts: Vec<String> = m
        .nodes
        .iter()
        .map(|n| {
            let state = match n.state.as_str() {
                "grabbed" => match &n.clone {
                    Some(c) => format!("grabbed, clone {}", escape_control(c)),
                    None => "grabbed".to_owned(),
                },
                "waiting" => "waiting for its buttons to be released".to_owned(),
                _ => "not grabbed".to_owned(),
            };
            format!("{} ({state})", escape_control(&n.path))
        })
        .collect();
    if let Some(h) = &m.hidraw {
        parts.push(format!("HID++ {}", escape_control(h)));
    }
    let mut s = head.to_owned();
    if named {
        s.push_str(&format!(
            "{} ({:04x}:{:04x}) ",
            escape_control(&m.name),
            m.vendor,
            m.product
        ));
    }
    s.push_str(&parts.join(", "));
    s.push('\n');
    for p in &m.paths {
        let part = format!("{}:", escape_control(&p.part));
        s.push_str(&format!("{indent}{part:<15} {}\n", escape_control(&p.text)));
    }
    if let Some(st) = &m.settings {
        s.push_str(&format!(
            "{indent}{:<15} {}\n",
            "settings:",
            escape_control(&st.describe())
        ));
    }
    if let Some(b) = &m.battery {
        s.push_str(&format!(
            "{indent}{:<15} {}\n",
            "battery:",
            escape_control(&b.describe())
        ));
    }
    s
}

/// A mouse for `--json`: `{"name", "vendor", "product" (4-digit hex), "nodes": [{"path",
/// "state": "grabbed"|"waiting"|"not-grabbed", "clone"}], "hidraw" (or null), "paths":
/// [{"part", "path": "grab"|"hidpp"|"kernel" (the kernel's node untouched)|"bpf" (kernel
/// mode: pawl's HID-BPF program), "reason" (a code, e.g. "hidpp-off"), "text"}],
/// "settings": {"dpi", "smartshift" ("ratchet"|"free"|"1".."254"), "thumb_wheel_invert"}
/// (each null when not read) or null, "battery": {"percent" (0..=100 or null), "level" (or
/// null), "status" (or null)} or null}`.
pub fn mouse_json(m: &MouseRecord) -> serde_json::Value {
    json!({
        "name": m.name,
        "vendor": format!("{:04x}", m.vendor),
        "product": format!("{:04x}", m.product),
        "nodes": m.nodes.iter().map(|n| json!({
            "path": n.path,
            "state": n.state,
            "clone": n.clone,
        })).collect::<Vec<_>>(),
        "hidraw": m.hidraw,
        "paths": m.paths.iter().map(|p| json!({
            "part": p.part,
            "path": p.path,
            "reason": p.reason,
            "text": p.text,
        })).collect::<Vec<_>>(),
        "settings": m.settings.as_ref().map(|s| json!({
            "dpi": s.dpi,
            "smartshift": s.smartshift,
            "thumb_wheel_invert": s.thumb_wheel_invert,
        })),
        "battery": m.battery.as_ref().map(|b| json!({
            "percent": b.percent,
            "level": b.level,
            "status": b.status,
        })),
    })
}

/// `pawl status --json`: `{"state": "running"|"stopped"|"stale"|"starting"|"unknown", …}`.
/// Running adds `pid`, `uptime_s`, `started_at` (Unix s), `config`, `version`, `exe`,
/// `devices` (`path`, `name`, `vendor`, `product` as 4-digit hex strings) and `mice` (see
/// [`mouse_json`]: which path carries each part of each handled mouse); stale adds `pid`
/// (null when unreadable) and `reason` (`process-gone`, `pid-reused`, `lock-free`,
/// `unreadable` with `error`); starting (lock held, no metadata yet) and unknown (lock
/// held, metadata unreadable or naming no live process) add `pid: null`, `lock`, and for
/// unknown `reason`, `error` or `metadata_pid`.
pub fn status_json(status: &Status, paths: &Paths, now: u64) -> serde_json::Value {
    match status {
        Status::Stopped => json!({ "state": "stopped" }),
        Status::Stale {
            pid,
            reason: StaleReason::Unreadable(why),
        } => json!({
            "state": "stale",
            "pid": pid,
            "reason": "unreadable",
            "error": why,
        }),
        Status::Stale { pid, reason } => json!({
            "state": "stale",
            "pid": pid,
            "reason": reason.code(),
        }),
        Status::Unidentified(Unidentified::NoMetadata) => json!({
            "state": "starting",
            "pid": null,
            "lock": paths.lock(),
        }),
        Status::Unidentified(Unidentified::Unreadable(why)) => json!({
            "state": "unknown",
            "pid": null,
            "lock": paths.lock(),
            "reason": "unreadable",
            "error": why,
        }),
        Status::Unidentified(Unidentified::NotLive { pid, reason }) => json!({
            "state": "unknown",
            "pid": null,
            "lock": paths.lock(),
            "reason": reason.code(),
            "metadata_pid": pid,
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
            "mice": meta.mice.iter().map(mouse_json).collect::<Vec<_>>(),
            "focus": meta.focus.as_ref().map(|f| json!({
                "backend": f.backend,
                "app": f.app,
                "profile": f.profile,
            })),
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

/// The one line `pawl on` prints once the worker is ready (device names escaped).
pub fn started_line(meta: &Metadata, log: Option<&Path>) -> String {
    let mut s = format!("started (pid {})", meta.pid);
    match meta.devices.as_slice() {
        [] => s.push_str(": no device to grab yet, waiting for one (see `pawl devices`)"),
        devices => {
            s.push_str(": grabbed ");
            let names: Vec<String> = devices
                .iter()
                .map(|d| format!("{} ({})", escape_control(&d.name), escape_control(&d.path)))
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
/// `~/.local/state/pawl/pawl.log`; a relative `XDG_STATE_HOME` is ignored, as the XDG Base
/// Directory specification says) on Linux, `~/Library/Logs/pawl.log` on macOS.
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

/// Opens the log for appending (created mode 0600). `create_dirs`: for the default path
/// only, its missing directories are created (mode 0700); a `--log FILE` in a directory
/// that does not exist is an error, nothing is created.
fn open_log(path: &Path, create_dirs: bool) -> anyhow::Result<File> {
    if create_dirs && let Some(dir) = path.parent() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| match path.parent() {
            Some(dir) if e.kind() == io::ErrorKind::NotFound && !dir.as_os_str().is_empty() => {
                format_err!(
                    "cannot open log file {}: its directory {} does not exist (pawl does not \
                     create it)",
                    path.display(),
                    dir.display()
                )
            }
            _ => anyhow::Error::new(e).context(format!("cannot open log file {}", path.display())),
        })
}

/// Reads the worker's reply until end of file or `deadline`.
fn read_reply(pipe: &mut (impl Read + std::os::fd::AsFd), deadline: Instant) -> io::Result<String> {
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    let mut looked = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // At least one look, even with `--timeout 0`: what is already there counts.
        if left.is_zero() && looked {
            break;
        }
        looked = true;
        let timeout = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let mut fds = [PollFd::new(&*pipe, PollFlags::IN)];
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
        // The reply is one line; more than a page is not a reply (stop reading).
        if reply.len() > 64 * 1024 {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

/// Sends `sig` to the worker `meta` describes, after confirming its identity: the lock is
/// held and the pid is alive with the recorded start time ([`lifecycle::still_the_worker`]).
/// On Linux the process is pinned with a pidfd first and its start time checked after, so
/// the signal reaches the process that was checked even if the pid is reused meanwhile.
/// `Ok(false)`: it is no longer there (nothing was sent).
///
/// Errors: the signal cannot be sent (naming the pid).
fn signal_worker(paths: &Paths, meta: &Metadata, sig: Signal) -> anyhow::Result<bool> {
    let pid = meta.pid;
    let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        bail!("invalid pid {pid} in {}", paths.metadata().display());
    };
    #[cfg(target_os = "linux")]
    let pinned = match rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) {
        Ok(fd) => Some(fd),
        Err(rustix::io::Errno::SRCH) => return Ok(false),
        // Kernels before 5.3 have no pidfd: fall back to kill(2) after the same checks.
        Err(rustix::io::Errno::NOSYS) => None,
        Err(e) => {
            return Err(io::Error::from(e)).with_context(|| format!("cannot open pid {pid}"));
        }
    };
    if !lifecycle::still_the_worker(paths, meta)? {
        return Ok(false);
    }
    #[cfg(target_os = "linux")]
    let sent = match &pinned {
        Some(fd) => rustix::process::pidfd_send_signal(fd, sig),
        None => rustix::process::kill_process(p, sig),
    };
    #[cfg(not(target_os = "linux"))]
    let sent = rustix::process::kill_process(p, sig);
    match sent {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::SRCH) => Ok(false),
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
        std::thread::sleep(lifecycle::POLL);
    }
}

/// Removes the metadata while holding the lock (so no worker runs, and any metadata is
/// stale); `Ok(false)` when another process holds the lock now (nothing removed).
fn remove_metadata_under_lock(paths: &Paths) -> anyhow::Result<bool> {
    let lock = LockFile::open(&paths.lock())?;
    if !lock.try_lock()? {
        return Ok(false);
    }
    lifecycle::remove_if_exists(&paths.metadata())
        .with_context(|| format!("cannot remove {}", paths.metadata().display()))?;
    Ok(true)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
pub(crate) mod tests {
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
            mice: Vec::new(),
            focus: None,
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

    fn paths() -> Paths {
        Paths::at("/run/user/1000/pawl")
    }

    #[test]
    fn status_exit_codes_follow_lsb() {
        assert_eq!(status_exit_code(&Status::Running(meta(vec![]))), 0);
        assert_eq!(status_exit_code(&Status::Stopped), 3);
        let stale = Status::Stale {
            pid: Some(4242),
            reason: StaleReason::ProcessGone,
        };
        assert_eq!(status_exit_code(&stale), 1);
        let starting = Status::Unidentified(Unidentified::NoMetadata);
        assert_eq!(status_exit_code(&starting), 4);
    }

    #[test]
    fn status_text_shows_pid_uptime_config_and_grabbed_devices() {
        let now = 1_700_000_000 + 2 * 3600 + 3 * 60 + 7;
        let text = status_text(&Status::Running(meta(vec![mx()])), &paths(), now);
        expect![[r#"
            running (pid 4242, up 2h 03m)
              config:  /home/u/.config/pawl/config.toml
              grabbed: Logitech MX Master 3S (046d:b034) /dev/input/event3
              version: 0.1.0 (/usr/bin/pawl)
        "#]]
        .assert_eq(&text);
        let text = status_text(&Status::Running(meta(vec![])), &paths(), 1_700_000_005);
        expect![[r#"
            running (pid 4242, up 5s)
              config:  /home/u/.config/pawl/config.toml
              grabbed: nothing yet (waiting for a device: see `pawl devices`)
              version: 0.1.0 (/usr/bin/pawl)
        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn status_names_the_focus_backend_the_focused_app_and_the_profile_in_force() {
        let mut m = meta(vec![mx()]);
        m.focus = Some(crate::lifecycle::FocusRecord {
            backend: "sway".into(),
            app: Some("firefox".into()),
            profile: "app firefox ([[app]] at line 12)".into(),
        });
        let now = 1_700_000_005;
        let text = status_text(&Status::Running(m.clone()), &paths(), now);
        assert!(
            text.contains(
                "\n  focus:   sway, app firefox, profile app firefox ([[app]] at line 12)\n"
            ),
            "{text}"
        );
        let json = status_json(&Status::Running(m.clone()), &paths(), now);
        assert_eq!(json["focus"]["backend"], "sway");
        assert_eq!(json["focus"]["app"], "firefox");
        m.focus = Some(crate::lifecycle::FocusRecord {
            backend: "sway (closed: device profiles)".into(),
            app: None,
            profile: "device".into(),
        });
        let text = status_text(&Status::Running(m), &paths(), now);
        assert!(
            text.contains(
                "  focus:   sway (closed: device profiles), app unknown, profile device\n"
            ),
            "{text}"
        );
        // No focus line from a worker that records none (an older pawl).
        let text = status_text(&Status::Running(meta(vec![mx()])), &paths(), now);
        assert!(!text.contains("focus:"), "{text}");
    }

    /// An MX Master 3S as the Linux worker records it with HID++ on (default config).
    pub(crate) fn mx_mouse() -> MouseRecord {
        use crate::lifecycle::{NodeRecord, PathRecord};
        let path = |part: &str, path: &str, reason: &str, text: &str| PathRecord {
            part: part.into(),
            path: path.into(),
            reason: reason.into(),
            text: text.into(),
        };
        MouseRecord {
            name: "Logitech MX Master 3S".into(),
            vendor: 0x046d,
            product: 0xb034,
            nodes: vec![NodeRecord {
                path: "/dev/input/event3".into(),
                state: "grabbed".into(),
                clone: Some("/dev/input/event9".into()),
            }],
            hidraw: Some("/dev/hidraw2".into()),
            paths: vec![
                path(
                    "gesture button",
                    "hidpp",
                    "gesture-diverted",
                    "HID++ divert of CID 0x00C3 (hidraw2), raw XY while held",
                ),
                path(
                    "thumb wheel",
                    "hidpp",
                    "thumb-wheel-diverted",
                    "HID++ divert of 0x2150 (hidraw2) into the virtual device of event3",
                ),
                path("buttons", "grab", "grabbed", "grab + virtual device"),
                path(
                    "wheel",
                    "grab",
                    "scroll-transformed",
                    "grab + virtual device, transformed",
                ),
            ],
            settings: Some(crate::lifecycle::SettingsRecord {
                dpi: Some(1600),
                smartshift: None,
                thumb_wheel_invert: Some(false),
            }),
            battery: None,
        }
    }

    #[test]
    fn status_shows_which_path_carries_each_part_of_each_mouse_in_text_and_json() {
        let mut m = meta(vec![mx()]);
        m.mice = vec![mx_mouse()];
        let status = Status::Running(m);
        expect![[r#"
            running (pid 4242, up 5s)
              config:  /home/u/.config/pawl/config.toml
              grabbed: Logitech MX Master 3S (046d:b034) /dev/input/event3
              mouse:   Logitech MX Master 3S (046d:b034) /dev/input/event3 (grabbed, clone /dev/input/event9), HID++ /dev/hidraw2
                gesture button: HID++ divert of CID 0x00C3 (hidraw2), raw XY while held
                thumb wheel:    HID++ divert of 0x2150 (hidraw2) into the virtual device of event3
                buttons:        grab + virtual device
                wheel:          grab + virtual device, transformed
                settings:       dpi 1600, thumb_wheel_invert false
              version: 0.1.0 (/usr/bin/pawl)
        "#]]
        .assert_eq(&status_text(&status, &paths(), 1_700_000_005));
        let json = status_json(&status, &paths(), 1_700_000_005);
        expect![[r#"
            [
              {
                "battery": null,
                "hidraw": "/dev/hidraw2",
                "name": "Logitech MX Master 3S",
                "nodes": [
                  {
                    "clone": "/dev/input/event9",
                    "path": "/dev/input/event3",
                    "state": "grabbed"
                  }
                ],
                "paths": [
                  {
                    "part": "gesture button",
                    "path": "hidpp",
                    "reason": "gesture-diverted",
                    "text": "HID++ divert of CID 0x00C3 (hidraw2), raw XY while held"
                  },
                  {
                    "part": "thumb wheel",
                    "path": "hidpp",
                    "reason": "thumb-wheel-diverted",
                    "text": "HID++ divert of 0x2150 (hidraw2) into the virtual device of event3"
                  },
                  {
                    "part": "buttons",
                    "path": "grab",
                    "reason": "grabbed",
                    "text": "grab + virtual device"
                  },
                  {
                    "part": "wheel",
                    "path": "grab",
                    "reason": "scroll-transformed",
                    "text": "grab + virtual device, transformed"
                  }
                ],
                "product": "b034",
                "settings": {
                  "dpi": 1600,
                  "smartshift": null,
                  "thumb_wheel_invert": false
                },
                "vendor": "046d"
              }
            ]"#]]
        .assert_eq(&serde_json::to_string_pretty(&json["mice"]).unwrap());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn status_shows_each_mouses_battery_as_the_kernel_reports_it() {
        // A fake /sys: the MX Master's HID device holds hidraw2 and has hidpp_battery_0.
        let tmp = tempfile::tempdir().unwrap();
        let sys = tmp.path();
        let hid = sys.join("devices/virtual/misc/uhid/0005:046D:B034.0001");
        std::fs::create_dir_all(hid.join("hidraw/hidraw2")).unwrap();
        std::fs::create_dir_all(sys.join("class/hidraw")).unwrap();
        std::os::unix::fs::symlink(hid.join("hidraw/hidraw2"), sys.join("class/hidraw/hidraw2"))
            .unwrap();
        let supply = sys.join("class/power_supply/hidpp_battery_0");
        std::fs::create_dir_all(&supply).unwrap();
        std::fs::write(supply.join("capacity"), "45\n").unwrap();
        std::fs::write(supply.join("status"), "Discharging\n").unwrap();
        std::os::unix::fs::symlink(&hid, supply.join("device")).unwrap();
        let mut m = meta(vec![mx()]);
        let mut other = mx_mouse();
        other.hidraw = None;
        other.nodes[0].path = "/dev/input/event7".into();
        m.mice = vec![mx_mouse(), other];
        let status = with_batteries(Status::Running(m), sys);
        let text = status_text(&status, &paths(), 1_700_000_005);
        assert_eq!(
            text.matches("    battery:        45 %, discharging\n")
                .count(),
            1,
            "{text}"
        );
        let json = status_json(&status, &paths(), 1_700_000_005);
        assert_eq!(
            json["mice"][0]["battery"],
            json!({ "percent": 45, "level": null, "status": "discharging" })
        );
        assert!(json["mice"][1]["battery"].is_null(), "{json}");
        // Stopped stays stopped, with no sysfs read.
        assert_eq!(with_batteries(Status::Stopped, sys), Status::Stopped);
    }

    #[test]
    fn a_macos_hidpp_battery_is_kept_in_the_metadata_and_shown_as_on_linux() {
        use pawl_hidpp::battery::{Battery, Charging, Level};
        let battery = Battery {
            percent: Some(25),
            level: None,
            charging: Charging::Discharging,
            external_power: false,
        };
        let mut m = meta(vec![mx()]);
        m.mice = vec![
            lifecycle::hidpp_mouse(
                "MX Master 3S",
                0x046d,
                0xb034,
                "Bluetooth Low Energy",
                Some(battery),
            ),
            lifecycle::hidpp_mouse("MX Master 2S", 0x046d, 0xb019, "Bluetooth Low Energy", None),
        ];
        // The worker writes it; `pawl status` reads it back (no kernel to ask on macOS).
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("worker.json");
        m.write(&file).unwrap();
        let read = lifecycle::Metadata::read(&file).unwrap().unwrap();
        assert_eq!(read.mice, m.mice);
        let status = Status::Running(read);
        let text = status_text(&status, &paths(), 1_700_000_005);
        assert_eq!(
            text.matches("    battery:        25 %, discharging\n")
                .count(),
            1,
            "{text}"
        );
        let json = status_json(&status, &paths(), 1_700_000_005);
        assert_eq!(
            json["mice"][0]["battery"],
            json!({ "percent": 25, "level": null, "status": "discharging" })
        );
        assert!(json["mice"][1]["battery"].is_null(), "{json}");
        // A battery that reports levels only, charging: the kernel's words.
        let levels = Battery {
            percent: None,
            level: Some(Level::Normal),
            charging: Charging::Charging,
            external_power: true,
        };
        assert_eq!(
            lifecycle::BatteryRecord::of_hidpp(&levels).describe(),
            "Normal, charging"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_kernel_battery_reads_as_percent_or_level_and_a_lower_case_status() {
        use pawl_linux::battery::Battery;
        let shown = |cap, level, status| {
            battery_record(&Battery::parse("hidpp_battery_0", cap, level, status, None)).describe()
        };
        assert_eq!(
            shown(Some("80\n"), None, Some("Discharging\n")),
            "80 %, discharging"
        );
        assert_eq!(
            shown(None, Some("Normal"), Some("Charging")),
            "Normal, charging"
        );
        assert_eq!(shown(None, Some("Unknown"), Some("Unknown")), "unknown");
        assert_eq!(shown(Some("250"), None, Some("Full")), "unknown, full");
    }

    #[test]
    fn status_text_for_stopped_and_stale() {
        assert_eq!(status_text(&Status::Stopped, &paths(), 0), "stopped\n");
        let stale = Status::Stale {
            pid: Some(4242),
            reason: StaleReason::PidReused,
        };
        expect![[r#"
            stopped (stale metadata: pid 4242, pid reused by another process; `pawl on` or `pawl off` removes it)
        "#]]
        .assert_eq(&status_text(&stale, &paths(), 0));
        let forged = Status::Stale {
            pid: Some(4242),
            reason: StaleReason::LockFree,
        };
        expect![[r#"
            stopped (stale metadata: pid 4242, that process does not hold the lock; `pawl on` or `pawl off` removes it)
        "#]]
        .assert_eq(&status_text(&forged, &paths(), 0));
    }

    #[test]
    fn garbage_metadata_names_the_file_and_the_fix_in_text_and_json() {
        let why = "/run/user/1000/pawl/pawl.json is not pawl metadata: expected value at line 1 \
                   column 1";
        let stale = Status::Stale {
            pid: None,
            reason: StaleReason::Unreadable(why.into()),
        };
        expect![[r#"
            stopped (unreadable metadata: /run/user/1000/pawl/pawl.json is not pawl metadata: expected value at line 1 column 1; `pawl on` or `pawl off` removes it)
        "#]]
        .assert_eq(&status_text(&stale, &paths(), 0));
        expect![[r#"{"error":"/run/user/1000/pawl/pawl.json is not pawl metadata: expected value at line 1 column 1","pid":null,"reason":"unreadable","state":"stale"}"#]]
            .assert_eq(&status_json(&stale, &paths(), 0).to_string());
        let held = Status::Unidentified(Unidentified::Unreadable(why.into()));
        expect![[r#"
            running (pid unknown): a process holds /run/user/1000/pawl/pawl.lock, but /run/user/1000/pawl/pawl.json is not pawl metadata: expected value at line 1 column 1; find the holder with `fuser -v /run/user/1000/pawl/pawl.lock` and stop it with `kill PID`; `pawl off` then removes /run/user/1000/pawl/pawl.json
        "#]]
        .assert_eq(&status_text(&held, &paths(), 0));
        expect![[r#"{"error":"/run/user/1000/pawl/pawl.json is not pawl metadata: expected value at line 1 column 1","lock":"/run/user/1000/pawl/pawl.lock","pid":null,"reason":"unreadable","state":"unknown"}"#]]
            .assert_eq(&status_json(&held, &paths(), 0).to_string());
    }

    #[test]
    fn a_held_lock_without_metadata_says_starting_pid_unknown_in_text_and_json() {
        let starting = Status::Unidentified(Unidentified::NoMetadata);
        expect![[r#"
            starting (pid unknown): a process holds /run/user/1000/pawl/pawl.lock but has not described itself in /run/user/1000/pawl/pawl.json yet; try again in a moment
        "#]]
        .assert_eq(&status_text(&starting, &paths(), 0));
        assert_eq!(
            status_json(&starting, &paths(), 0).to_string(),
            r#"{"lock":"/run/user/1000/pawl/pawl.lock","pid":null,"state":"starting"}"#
        );
    }

    #[test]
    fn status_prints_device_names_with_control_characters_escaped() {
        let evil = GrabbedDevice {
            name: "MX\u{1b}]0;pwned\u{7}\u{1b}[2J Master".into(),
            ..mx()
        };
        let text = status_text(&Status::Running(meta(vec![evil.clone()])), &paths(), 0);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(
            text.contains("MX\\u{1b}]0;pwned\\u{7}\\u{1b}[2J Master (046d:b034)"),
            "{text}"
        );
        let line = started_line(&meta(vec![evil]), None);
        assert!(!line.contains('\u{1b}'), "{line:?}");
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
    fn a_worker_that_exited_without_an_answer_is_never_called_starting() {
        assert_eq!(startup_answer("", true), StartupAnswer::Died);
        assert_eq!(startup_answer("", false), StartupAnswer::Silent);
        assert_eq!(startup_answer("ready\n", true), StartupAnswer::Ready);
        assert_eq!(
            startup_answer("error: invalid config:\nx.toml:1:1: bad\n", true),
            StartupAnswer::Failed("invalid config:\nx.toml:1:1: bad".into())
        );
        assert_eq!(startup_answer("garbage", true), StartupAnswer::Died);
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
