//! The pawl process under test: started with a config and a desktop, stopped with SIGTERM,
//! observed through /proc (open fds, syscall counters) and its stderr log.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::evdev::{self, EvdevNode, NodeInfo};

/// Name of pawl's virtual keyboard, which actions press their chords on.
pub const VIRTUAL_KEYBOARD_NAME: &str = "pawl virtual keyboard";

/// How to start pawl.
#[derive(Clone, Debug)]
pub struct PawlOptions<'a> {
    /// The config file's text (written to `<work>/config.toml`).
    pub config: &'a str,
    /// `XDG_CURRENT_DESKTOP` (e.g. `GNOME`, `KDE`).
    pub desktop: &'a str,
    /// Extra arguments after `run`.
    pub run_args: &'a [&'a str],
    /// Add `--debug` (every decision logged to `pawl.log`).
    pub debug: bool,
}

/// A running (or exited) `pawl run`.
#[derive(Debug)]
pub struct Pawl {
    child: Child,
    log: PathBuf,
    config: PathBuf,
    status: Option<ExitStatus>,
}

impl Pawl {
    /// Writes the config into `work` and starts `<bin> --config <work>/config.toml run`, its
    /// stderr going to `<work>/pawl.log`.
    pub fn start(bin: &Path, work: &Path, opts: &PawlOptions<'_>) -> anyhow::Result<Pawl> {
        Pawl::start_as(bin, work, opts, None)
    }

    /// [`Pawl::start`] as user and group `ids` (`None`: as the driver, root). `work` and
    /// the files in it are handed to that user first.
    pub fn start_as(
        bin: &Path,
        work: &Path,
        opts: &PawlOptions<'_>,
        ids: Option<(u32, u32)>,
    ) -> anyhow::Result<Pawl> {
        Pawl::start_env(bin, work, opts, ids, &[])
    }

    /// [`Pawl::start_as`] with `env` added to pawl's environment (e.g. `SWAYSOCK`).
    pub fn start_env(
        bin: &Path,
        work: &Path,
        opts: &PawlOptions<'_>,
        ids: Option<(u32, u32)>,
        env: &[(&str, &Path)],
    ) -> anyhow::Result<Pawl> {
        let config = work.join("config.toml");
        std::fs::write(&config, opts.config)
            .with_context(|| format!("write {}", config.display()))?;
        let log = work.join("pawl.log");
        let log_file =
            std::fs::File::create(&log).with_context(|| format!("create {}", log.display()))?;
        let mut cmd = Command::new(bin);
        if let Some((uid, gid)) = ids {
            use std::os::unix::process::CommandExt;
            for p in [work, &config, &log] {
                std::os::unix::fs::chown(p, Some(uid), Some(gid))
                    .with_context(|| format!("chown {}", p.display()))?;
            }
            // pawl keeps its lock in XDG_RUNTIME_DIR (= `work`): private to its owner.
            std::fs::set_permissions(work, std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .with_context(|| format!("chmod {}", work.display()))?;
            cmd.uid(uid).gid(gid);
        }
        let child = cmd
            .arg("--config")
            .arg(&config)
            .arg("run")
            .args(opts.run_args)
            .args(opts.debug.then_some("--debug"))
            .env_clear()
            .env("PATH", "/bin")
            .env("HOME", work)
            .env("XDG_RUNTIME_DIR", work)
            .env("XDG_CONFIG_HOME", work)
            .env("XDG_CURRENT_DESKTOP", opts.desktop)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        Ok(Pawl {
            child,
            log,
            config,
            status: None,
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The config file path pawl was given.
    pub fn config_path(&self) -> &Path {
        &self.config
    }

    /// Everything pawl wrote to stdout/stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The exit status if pawl has exited.
    pub fn try_exit(&mut self) -> anyhow::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status)
    }

    /// Waits up to `timeout` for pawl to exit on its own.
    pub fn wait_exit(&mut self, timeout: Duration) -> anyhow::Result<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_exit()? {
                return Ok(s);
            }
            if Instant::now() >= deadline {
                bail!("pawl still running after {timeout:?}; log: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for a node that satisfies `pred` while pawl keeps running; fails at once when
    /// pawl exits, quoting its log.
    pub fn wait_node(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&NodeInfo) -> bool,
    ) -> anyhow::Result<EvdevNode> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(info) = evdev::scan().into_iter().find(|i| pred(i)) {
                return EvdevNode::open(&info.path);
            }
            if let Some(s) = self.try_exit()? {
                bail!(
                    "pawl exited ({s}) before {what} appeared; log: {}",
                    self.log()
                );
            }
            if Instant::now() >= deadline {
                bail!(
                    "no {what} within {timeout:?}; nodes: {}; pawl log: {}",
                    evdev::describe(&evdev::scan()),
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for pawl's clone of `source`: the node with the source's name and phys
    /// `pawl/<source phys>` (the nodes of one HID device share a phys).
    pub fn wait_clone(
        &mut self,
        source: &NodeInfo,
        timeout: Duration,
    ) -> anyhow::Result<EvdevNode> {
        let phys = clone_phys(source);
        self.wait_node(&format!("clone of {:?}", source.name), timeout, |n| {
            n.phys == phys && n.name == source.name
        })
    }

    /// Waits for pawl's virtual keyboard.
    pub fn wait_keyboard(&mut self, timeout: Duration) -> anyhow::Result<EvdevNode> {
        self.wait_node(VIRTUAL_KEYBOARD_NAME, timeout, |n| {
            n.name == VIRTUAL_KEYBOARD_NAME
        })
    }

    /// The targets of pawl's open file descriptors (`/proc/PID/fd/*`).
    pub fn open_files(&self) -> anyhow::Result<Vec<PathBuf>> {
        let dir = format!("/proc/{}/fd", self.pid());
        Ok(std::fs::read_dir(&dir)
            .with_context(|| format!("read {dir}"))?
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .collect())
    }

    /// `(syscr, syscw)` from `/proc/PID/io`: read-like and write-like syscalls so far.
    pub fn syscalls(&self) -> anyhow::Result<(u64, u64)> {
        let path = format!("/proc/{}/io", self.pid());
        let text = std::fs::read_to_string(&path).with_context(|| format!("read {path}"))?;
        let field = |name: &str| -> anyhow::Result<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse().ok())
                .with_context(|| format!("{name} missing in {path}"))
        };
        Ok((field("syscr:")?, field("syscw:")?))
    }

    /// `(syscr, syscw, voluntary + nonvoluntary context switches)` so far, the switches
    /// summed over all of pawl's threads (`/proc/PID/task/*/status`).
    pub fn counters(&self) -> anyhow::Result<(u64, u64, u64)> {
        let (r, w) = self.syscalls()?;
        let mut switches = 0;
        for task in std::fs::read_dir(format!("/proc/{}/task", self.pid()))? {
            let text = std::fs::read_to_string(task?.path().join("status"))?;
            for line in text.lines() {
                if let Some(v) = line
                    .strip_prefix("voluntary_ctxt_switches:")
                    .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
                {
                    switches += v.trim().parse::<u64>().context("ctxt switches")?;
                }
            }
        }
        Ok((r, w, switches))
    }

    /// Stops pawl (SIGSTOP, `stop = true`) or lets it go on (SIGCONT): a pawl held up by
    /// the scheduler, as on a loaded machine. Errors: `kill(2)` fails (pawl is gone).
    pub fn hold_up(&self, stop: bool) -> anyhow::Result<()> {
        self.signal(if stop { libc::SIGSTOP } else { libc::SIGCONT })
    }

    /// Sends `sig` (SIGHUP to reload, SIGTERM to stop, …) to pawl. Errors: `kill(2)` fails
    /// (pawl is gone). The one place the driver signals a pawl it started.
    pub fn signal(&self, sig: libc::c_int) -> anyhow::Result<()> {
        // SAFETY: plain kill(2) on our own child's pid.
        let r = unsafe { libc::kill(self.pid() as libc::pid_t, sig) };
        ensure!(
            r == 0,
            "cannot send signal {sig} to pawl: {}",
            std::io::Error::last_os_error()
        );
        Ok(())
    }

    /// Sends SIGTERM and waits up to `timeout` for the exit; the status is returned, a
    /// still-running pawl is killed and reported.
    pub fn terminate(&mut self, timeout: Duration) -> anyhow::Result<ExitStatus> {
        if let Some(s) = self.try_exit()? {
            return Ok(s);
        }
        // A pawl that exits before the signal lands is seen by `try_exit` below.
        let _ = self.signal(libc::SIGTERM);
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_exit()? {
                return Ok(s);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!(
                    "pawl ignored SIGTERM for {timeout:?} (killed); log: {}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Pawl {
    fn drop(&mut self) {
        if self.status.is_none() && self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The phys pawl gives the clone of `source`: `pawl/<source phys>`.
pub fn clone_phys(source: &NodeInfo) -> String {
    format!("pawl/{}", source.phys)
}
