//! What the userland boot's scenarios share (`userland.rs` lists them; `seat.rs` and
//! `kernel_mode.rs` use some of it too): the boot's layout, `udevadm` queries, a
//! `libinput debug-events` reader, a mouse model libinput has quirks for, and the hidraw
//! node of a HID device.
//!
//! The boot's layout (written by `xtask/src/vm.rs`): the root is read-only, `/run`, `/tmp`
//! and `/dev/shm` are tmpfs; the share at [`SHARE`] holds the binaries, the recordings and
//! `contrib/70-pawl.rules`; systemd-udevd runs (as a daemon, no systemd as PID 1) and has
//! seen every device that existed before the driver started; the plain user [`USER`]
//! exists.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::hid::MouseModel;
use crate::scenarios::T_DEVICE;
use crate::uhid::BUS_USB;

/// Where the userland boot mounts its share (binaries, recordings, `contrib/`).
pub const SHARE: &str = "/pawl-vm";

/// The plain user of the root file system (name, uid = gid), made when the root was built
/// (`xtask/src/userland.rs`): sway refuses to run as root.
pub const USER: (&str, u32) = ("pawl", 1000);

/// MX Master 3 behind a Unifying receiver as hid-generic sees its child (bus USB,
/// 046d:4082): the descriptor recorded in libinput's tracker
/// (gitlab.freedesktop.org/libinput/libinput/-/issues/366). Its report 2 has the 3S's
/// layout (16 buttons, 12-bit X/Y, wheel, AC Pan). libinput 1.22 (bookworm) has
/// `ModelInvertHorizontalScrolling` quirks for this id and for b023, none for the 3S
/// (b034).
pub const MX_MASTER_3_USB: MouseModel = MouseModel {
    rdesc_file: "hidreport--libinput-issue366-0003-046D-4082-0.rdesc",
    name: "Logitech MX Master 3",
    bus: BUS_USB,
    vendor: 0x046d,
    product: 0x4082,
    xy_bits: 12,
    // Bus USB with the generic group: hid-generic binds it (no DJ bus, no HID++ driver).
    hidpp: None,
};

/// Runs `cmd` to completion; its stdout, or an error quoting stderr on failure.
pub fn output(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    ensure!(
        out.status.success(),
        "{cmd:?} exited with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `udevadm settle`: every queued uevent processed.
pub fn settle() -> anyhow::Result<()> {
    output(Command::new("udevadm").args(["settle", "--timeout=30"])).map(drop)
}

/// What udev's database holds for a device node: its properties and tags.
#[derive(Debug, Default)]
pub struct UdevInfo {
    /// `E:` lines, `KEY` → `VALUE`.
    pub props: BTreeMap<String, String>,
    /// The tags its last event's rules set (`Q:` lines and `CURRENT_TAGS`, never the sticky
    /// `G:` / `TAGS`).
    pub tags: Vec<String>,
}

impl UdevInfo {
    /// Whether property `key` is `1`.
    pub fn is_set(&self, key: &str) -> bool {
        self.props.get(key).is_some_and(|v| v == "1")
    }

    /// Whether the device carries `tag`.
    pub fn tagged(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }

    /// The `ID_INPUT*` properties as `K=V` (for notes and comparisons).
    pub fn input_ids(&self) -> Vec<String> {
        self.props
            .iter()
            .filter(|(k, _)| k.starts_with("ID_INPUT"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }
}

/// `udevadm info --query=all --name=<node>` (call [`settle`] first for a device that just
/// appeared).
pub fn udev_info(node: &Path) -> anyhow::Result<UdevInfo> {
    let text = output(
        Command::new("udevadm")
            .args(["info", "--query=all", "--name"])
            .arg(node),
    )?;
    let mut info = UdevInfo::default();
    // The tags of the last event's rules: `Q:` lines and `CURRENT_TAGS` (systemd 247+; the
    // VM's udev is Debian 12's 252). `G:` lines and `TAGS` are sticky, every tag the device
    // had since it was added, so a tag of a rule since removed stays in them: not read.
    for line in text.lines() {
        if let Some(kv) = line.strip_prefix("E: ") {
            if let Some((k, v)) = kv.split_once('=') {
                info.props.insert(k.to_owned(), v.to_owned());
            }
        } else if let Some(tag) = line.strip_prefix("Q: ") {
            info.tags.push(tag.trim().to_owned());
        }
    }
    if let Some(current) = info.props.get("CURRENT_TAGS") {
        for tag in current.split(':').filter(|t| !t.is_empty()) {
            if !info.tags.iter().any(|t| t == tag) {
                info.tags.push(tag.to_owned());
            }
        }
    }
    Ok(info)
}

/// The `/dev/hidrawN` node of the HID device with `phys` (from the HID device's uevent,
/// `HID_PHYS=`).
pub fn hidraw_with_phys(phys: &str) -> anyhow::Result<PathBuf> {
    let deadline = Instant::now() + T_DEVICE;
    loop {
        for e in std::fs::read_dir("/sys/class/hidraw")
            .into_iter()
            .flatten()
            .flatten()
        {
            let uevent =
                std::fs::read_to_string(e.path().join("device/uevent")).unwrap_or_default();
            if uevent
                .lines()
                .any(|l| l.strip_prefix("HID_PHYS=") == Some(phys))
            {
                return Ok(Path::new("/dev").join(e.file_name()));
            }
        }
        if Instant::now() >= deadline {
            bail!("no hidraw node with phys {phys:?} within {T_DEVICE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A running `libinput debug-events --device <node>` (libinput's path backend) whose
/// output lines (stdout and stderr, line-buffered through `stdbuf`) are collected as they
/// come. Killed when dropped.
#[derive(Debug)]
pub struct DebugEvents {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl DebugEvents {
    /// Starts the reader on `node` with `--verbose` (libinput's own log, where its
    /// complaints about a device appear) and `--show-keycodes` (key names instead of
    /// `***`), and waits for its `DEVICE_ADDED` line.
    pub fn start(node: &Path) -> anyhow::Result<DebugEvents> {
        let mut child = Command::new("stdbuf")
            .args(["-oL", "-eL", "libinput", "debug-events", "--verbose"])
            .args(["--show-keycodes", "--device"])
            .arg(node)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start libinput debug-events")?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().expect("piped");
        let err = child.stderr.take().expect("piped");
        for stream in [
            Box::new(out) as Box<dyn std::io::Read + Send>,
            Box::new(err) as Box<dyn std::io::Read + Send>,
        ] {
            let lines = Arc::clone(&lines);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    lines.lock().expect("lines").push(line);
                }
            });
        }
        let d = DebugEvents { child, lines };
        d.wait_for("its DEVICE_ADDED line", T_DEVICE, |ls| {
            ls.iter().any(|l| l.contains("DEVICE_ADDED"))
        })?;
        Ok(d)
    }

    /// Every line so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("lines").clone()
    }

    /// Waits up to `timeout` until `done` holds for the lines so far; returns them.
    pub fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&[String]) -> bool,
    ) -> anyhow::Result<Vec<String>> {
        let deadline = Instant::now() + timeout;
        loop {
            let lines = self.lines();
            if done(&lines) {
                return Ok(lines);
            }
            if Instant::now() >= deadline {
                bail!(
                    "libinput debug-events: no {what} within {timeout:?}; it printed:\n{}",
                    lines.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for DebugEvents {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
