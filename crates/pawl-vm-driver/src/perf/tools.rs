//! The programs measured: pawl (its defaults, which read the MX Master's HID++ endpoint
//! beside the grabbed pointer node, and with `[hidpp] enabled = false`) and the peers that
//! handle the same mouse — the C forwarder (the baseline: one read, one write per frame),
//! kanata, xremap (grabbing forwarders) and logiops (`logid`, which reads the HID++
//! endpoint for the gesture button and leaves the pointer to the kernel) — each with its
//! own uhid MX Master 3S bound by the kernel's hid-logitech-hidpp, its output device, and a
//! reader thread on that output.
//!
//! Every mouse is the same MX Master 3S (node "Logitech MX Master 3S"); what keeps each
//! program on its own mouse is ownership, as udev's seat rule does on a user's machine:
//! pawl, pawl with HID++ off and logid run as users of their own ([`Kind::user`]) and own
//! exactly their mouse's evdev and hidraw nodes; every other node stays root's, 0600
//! (devtmpfs' default). The grabbing peers run as root and open only the node they are
//! given.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use pawl_evdev::codes::{EV_REL, EV_SYN, REL_X, REL_Y, SYN_DROPPED, SYN_REPORT};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;

use crate::evdev::{self, EvdevNode, Event, Frame, NodeInfo};
use crate::hid::{HidMouse, MX_MASTER_3S_BT};
use crate::pawl::{Pawl, PawlOptions};
use crate::scenarios::{T_DEVICE, T_EVENT};
use crate::sys::{self, InputEvent};

/// The programs, in measurement order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `pawl run` with the default configuration (`[hidpp] enabled = true`: the pointer
    /// node grabbed and the HID++ endpoint read).
    Pawl,
    /// `pawl run` with `[hidpp] enabled = false`: the pointer node grabbed, no hidraw.
    PawlHidppOff,
    /// `pawl run` (defaults) in kernel mode: pawl's HID-BPF program attached to the mouse
    /// by the loader (`pawl-kernel-attach add <HID> --uid <pawl's>`, as the udev rule does)
    /// before pawl starts; the wheel is transformed in the kernel, the gesture's HID++
    /// notifications reach pawl through the program's ring, and pawl grabs nothing, so the
    /// output is the mouse's own node. Only on a kernel with HID-BPF; a pawl that grabs
    /// the mouse anyway (no kernel mode in the daemon) is reported unavailable.
    PawlKernel,
    /// `pawl run` with the defaults plus two `[[app]]` tables ([`PAWL_APPS_CONFIG`]) as sway's
    /// user, with `SWAYSOCK` of a running sway ([`crate::perf::apps`]): the focus backend is sway's IPC.
    /// Only where the Debian root with sway is attached (`--debian-root`).
    PawlApps,
    /// `contrib/perf/forwarder.c`.
    Forwarder,
    /// kanata, `linux-dev` on the mouse, nothing mapped.
    Kanata,
    /// xremap `--mouse --device <node>`, empty keymap, wheel enabled.
    Xremap,
    /// logiops' `logid` with a gesture-button config ([`LOGID_CONFIG`]): it diverts
    /// 0x00C3 over HID++ and reads the hidraw node; the pointer node is not grabbed, so
    /// the output is the mouse's own evdev node.
    Logiops,
}

impl Kind {
    /// Every kind, in measurement order.
    pub const ALL: [Kind; 8] = [
        Kind::Pawl,
        Kind::PawlHidppOff,
        Kind::PawlKernel,
        Kind::PawlApps,
        Kind::Forwarder,
        Kind::Kanata,
        Kind::Xremap,
        Kind::Logiops,
    ];

    /// The name in result lines and the report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pawl => "pawl",
            Kind::PawlHidppOff => "pawl-hidpp-off",
            Kind::PawlKernel => "pawl-kernel",
            Kind::PawlApps => "pawl-apps",
            Kind::Forwarder => "c-forwarder",
            Kind::Kanata => "kanata",
            Kind::Xremap => "xremap",
            Kind::Logiops => "logiops",
        }
    }

    /// Whether this is pawl (with either configuration): pawl's rules apply to its
    /// output, and its failures fail the run.
    pub fn is_pawl(self) -> bool {
        matches!(
            self,
            Kind::Pawl | Kind::PawlHidppOff | Kind::PawlKernel | Kind::PawlApps
        )
    }

    /// Whether the program diverts the gesture button (0x00C3, with raw XY) over HID++,
    /// so that a gesture drag arrives as HID++ notifications.
    pub fn diverts_gesture(self) -> bool {
        matches!(
            self,
            Kind::Pawl | Kind::PawlKernel | Kind::PawlApps | Kind::Logiops
        )
    }

    /// The user and group the program runs as (`None`: root). The programs that find
    /// their devices themselves (pawl, logid) run as their own user and own only their
    /// mouse's nodes; `pawl-apps` runs as sway's user, whose runtime directory holds sway's
    /// socket.
    pub fn user(self) -> Option<(u32, u32)> {
        let (_, sway_user) = crate::scenarios::userland_tools::USER;
        match self {
            Kind::PawlApps => Some((sway_user, sway_user)),
            Kind::Pawl => Some((2001, 2001)),
            Kind::PawlHidppOff => Some((2002, 2002)),
            Kind::Logiops => Some((2003, 2003)),
            Kind::PawlKernel => Some((2004, 2004)),
            Kind::Forwarder | Kind::Kanata | Kind::Xremap => None,
        }
    }
}

/// pawl's configuration for `pawl-apps`: the defaults plus README's two `[[app]]` tables.
pub const PAWL_APPS_CONFIG: &str = r#"# cargo xtask perf-vm: pawl's defaults and two [[app]] tables
[[app]]
app_id = "pawl-game"
[app.scroll]
invert_vertical = false
smoothing = "none"

[[app]]
app_id = "pawl-browser"
[app.gesture]
left = { key = "Alt+Left" }
right = { key = "Alt+Right" }
[app.buttons]
on_back = { key = "Ctrl+W" }
"#;

/// pawl's configuration: the defaults.
pub const PAWL_CONFIG: &str = "# cargo xtask perf-vm: pawl's defaults\n";

/// pawl's configuration with HID++ off: the pointer node only.
pub const PAWL_HIDPP_OFF_CONFIG: &str =
    "# cargo xtask perf-vm: pawl's defaults, HID++ off\n[hidpp]\nenabled = false\n";

/// kanata's configuration for `source`: grab exactly that node; nothing is mapped, so
/// every event is passed through (`src/kanata/linux.rs`: non-key events and unmapped keys
/// go to `write_raw`, wheel events to `scroll`).
pub fn kanata_config(source: &Path) -> String {
    format!(
        "(defcfg\n  linux-dev {}\n  process-unmapped-keys no\n)\n(defsrc esc)\n(deflayer base esc)\n",
        source.display()
    )
}

/// xremap's configuration: no mapping; the wheel enabled (without it the output device has
/// no wheel codes and scrolling is lost).
pub const XREMAP_CONFIG: &str = "enable_wheel: true\nkeymap: []\nmodmap: []\n";

/// logid's configuration (libconfig, logiops 0.3.1's schema: `src/logid/config/schema.h`):
/// the gesture button (CID 0xc3) does gestures — a drag left or right switches the
/// desktop with a key chord, up or down as well, a click without a drag nothing — which
/// makes logid divert 0x00C3 with raw XY, as pawl does. The device is matched by its
/// HID++ name (0x0005), "MX Master 3S".
pub const LOGID_CONFIG: &str = r#"# cargo xtask perf-vm: the gesture button does gestures
devices: (
{
    name: "MX Master 3S";
    buttons: (
        {
            cid: 0xc3;
            action = {
                type: "Gestures";
                gestures: (
                    { direction: "Left"; mode: "OnRelease";
                      action = { type: "Keypress"; keys: ["KEY_LEFTMETA", "KEY_PAGEUP"]; }; },
                    { direction: "Right"; mode: "OnRelease";
                      action = { type: "Keypress"; keys: ["KEY_LEFTMETA", "KEY_PAGEDOWN"]; }; },
                    { direction: "Up"; mode: "OnRelease";
                      action = { type: "Keypress"; keys: ["KEY_LEFTMETA", "KEY_UP"]; }; },
                    { direction: "Down"; mode: "OnRelease";
                      action = { type: "Keypress"; keys: ["KEY_LEFTMETA", "KEY_DOWN"]; }; },
                    { direction: "None"; mode: "NoPress"; }
                );
            };
        }
    );
}
);
"#;

/// Where logid finds the system bus ([`SystemBus`]).
const SYSTEM_BUS_SOCKET: &str = "/run/dbus/system_bus_socket";

/// dbus-daemon's configuration for the VM's system bus: anyone may own a name and talk to
/// anyone (logid 0.3.1 owns `pizza.pixl.LogiOps` on the system bus and exits without one).
const DBUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"#;

/// The motion report every program must forward unchanged after it started (never used
/// by a workload: workload motion stays within ±60).
pub const SENTINEL: (i32, i32) = (700, -500);

/// A program handling its own mouse.
#[derive(Debug)]
pub struct Tool {
    /// Which program.
    pub kind: Kind,
    /// Its mouse.
    pub mouse: HidMouse,
    /// The kernel's node of the mouse.
    pub source: NodeInfo,
    /// Its output device.
    pub out: Output,
    /// pawl's virtual keyboard (pawl only).
    pub keyboard: Option<EvdevNode>,
    proc: Proc,
}

#[derive(Debug)]
enum Proc {
    Pawl(Pawl),
    Other { child: Child, log: PathBuf },
}

/// Creates the mouse of `kind` (the kernel node appears before this returns); for a kind
/// that runs as its own user, hands that user the mouse's evdev node and hidraw node.
pub fn create_mouse(
    kind: Kind,
    recordings: &Path,
    seq: usize,
) -> anyhow::Result<(HidMouse, NodeInfo)> {
    let phys = format!("perf-{}-{seq}", kind.name());
    let mouse = HidMouse::create(MX_MASTER_3S_BT, recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    if let Some((uid, gid)) = kind.user() {
        let mut nodes = vec![source.path.clone()];
        nodes.extend(crate::evdev::hidraw_of(&source.path, T_DEVICE)?);
        for n in &nodes {
            std::os::unix::fs::chown(n, Some(uid), Some(gid))
                .with_context(|| format!("chown {}", n.display()))?;
            std::fs::set_permissions(n, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .with_context(|| format!("chmod {}", n.display()))?;
        }
    }
    Ok((mouse, source))
}

/// Adds root and every [`Kind::user`] to `/etc/passwd` and `/etc/group` (the initramfs has
/// neither), named `perf-<program>`.
pub fn add_users() -> anyhow::Result<()> {
    let mut passwd = String::from("root:x:0:0:root:/root:/bin/sh\n");
    let mut group = String::from("root:x:0:\n");
    for k in Kind::ALL {
        if let Some((uid, gid)) = k.user() {
            let name = format!("perf-{}", k.name());
            passwd.push_str(&format!("{name}:x:{uid}:{gid}::/tmp:/bin/sh\n"));
            group.push_str(&format!("{name}:x:{gid}:\n"));
        }
    }
    for (path, text) in [("/etc/passwd", passwd), ("/etc/group", group)] {
        if !Path::new(path).exists() {
            std::fs::write(path, text).with_context(|| format!("write {path}"))?;
        }
    }
    Ok(())
}

/// The VM's system bus for logid: `dbus-daemon` with [`DBUS_CONFIG`], running until
/// dropped.
#[derive(Debug)]
pub struct SystemBus {
    child: Child,
}

impl SystemBus {
    /// Starts `dbus_daemon` (config in `work`) and waits for its socket.
    pub fn start(dbus_daemon: &Path, work: &Path) -> anyhow::Result<SystemBus> {
        std::fs::create_dir_all(work)?;
        std::fs::create_dir_all("/run/dbus")?;
        let config = work.join("dbus-system.conf");
        std::fs::write(&config, DBUS_CONFIG)?;
        let log = std::fs::File::create(work.join("dbus.log"))?;
        let mut child = Command::new(dbus_daemon)
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--nopidfile", "--nosyslog"])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {}", dbus_daemon.display()))?;
        let deadline = Instant::now() + T_DEVICE;
        while !Path::new(SYSTEM_BUS_SOCKET).exists() {
            if let Some(s) = child.try_wait()? {
                bail!(
                    "dbus-daemon exited ({s}): {}",
                    std::fs::read_to_string(work.join("dbus.log")).unwrap_or_default()
                );
            }
            if Instant::now() >= deadline {
                let _ = terminate(&mut child);
                bail!("no {SYSTEM_BUS_SOCKET} within {T_DEVICE:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(SystemBus { child })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for SystemBus {
    fn drop(&mut self) {
        let _ = terminate(&mut self.child);
    }
}

impl Tool {
    /// Starts the program of `kind` on `mouse` (binary `bin`, scratch directory `work`,
    /// `env` added to pawl's environment), waits for its output device and requires that a
    /// sentinel motion comes out of it.
    pub fn start(
        kind: Kind,
        bin: &Path,
        work: &Path,
        mouse: HidMouse,
        source: NodeInfo,
        env: &[(&str, &Path)],
    ) -> anyhow::Result<Tool> {
        std::fs::create_dir_all(work).with_context(|| format!("mkdir {}", work.display()))?;
        let (mut proc, out_node, keyboard) = match kind {
            Kind::PawlKernel => {
                let name = crate::perf::attach::hid_name(&source)?;
                let uid = kind.user().map_or(0, |(u, _)| u).to_string();
                let text = crate::perf::attach::loader(&["add", &name, "--uid", &uid])?;
                println!("# pawl-kernel: loader add {name} --uid {uid}: {text}");
                let mut pawl = Pawl::start_as(
                    bin,
                    work,
                    &PawlOptions {
                        config: PAWL_CONFIG,
                        desktop: "GNOME",
                        run_args: &[],
                        debug: false,
                    },
                    kind.user(),
                )?;
                let keyboard = pawl.wait_keyboard(T_DEVICE)?;
                // In kernel mode pawl grabs nothing (a clone of the mouse that stays means
                // grab mode) and says when the mouse's setup is done and hidraw closed.
                let phys = crate::pawl::clone_phys(&source);
                let deadline = Instant::now() + T_DEVICE;
                let mut clone_since: Option<Instant> = None;
                loop {
                    let cloned = evdev::scan().iter().any(|n| n.phys == phys);
                    if !cloned && pawl.log().contains(KERNEL_MODE_SET_UP) {
                        break;
                    }
                    let now = Instant::now();
                    clone_since = if cloned {
                        clone_since.or(Some(now))
                    } else {
                        None
                    };
                    let grabbed = clone_since.is_some_and(|t| now >= t + KERNEL_MODE_GRACE);
                    if grabbed || now >= deadline {
                        let _ = pawl.terminate(Duration::from_secs(5));
                        let log: Vec<String> = pawl
                            .log()
                            .lines()
                            .filter(|l| !l.contains("cannot open /dev/"))
                            .map(String::from)
                            .collect();
                        let why = if grabbed {
                            format!(
                                "it grabbed the mouse (its clone {phys:?} appeared although the program was attached)"
                            )
                        } else {
                            format!("it did not log {KERNEL_MODE_SET_UP:?} within {T_DEVICE:?}")
                        };
                        bail!(
                            "pawl did not run in kernel mode: {why}; log (other users' devices left out): {}",
                            log.join(" | ")
                        );
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                let mut proc = Proc::Pawl(pawl);
                if let Err(e) = wait_diverted_by(&mouse, || match &mut proc {
                    Proc::Pawl(p) => p.try_exit(),
                    Proc::Other { child, .. } => Ok(child.try_wait()?),
                }) {
                    proc.stop();
                    return Err(e);
                }
                (proc, source.clone(), Some(keyboard))
            }
            Kind::Pawl | Kind::PawlHidppOff | Kind::PawlApps => {
                let config = match kind {
                    Kind::PawlHidppOff => PAWL_HIDPP_OFF_CONFIG,
                    Kind::PawlApps => PAWL_APPS_CONFIG,
                    _ => PAWL_CONFIG,
                };
                let mut pawl = Pawl::start_env(
                    bin,
                    work,
                    &PawlOptions {
                        config,
                        desktop: "GNOME",
                        run_args: &[],
                        debug: false,
                    },
                    kind.user(),
                    env,
                )?;
                let clone = pawl.wait_clone(&source, T_DEVICE)?;
                let keyboard = pawl.wait_keyboard(T_DEVICE)?;
                (Proc::Pawl(pawl), clone.info().clone(), Some(keyboard))
            }
            Kind::Forwarder => {
                let mut child = spawn(bin, work, &[source.path.as_os_str()])?;
                let node = wait_output(&mut child, work, "perf C forwarder", |n| {
                    n.name == "perf C forwarder"
                })?;
                (
                    Proc::Other {
                        child,
                        log: log(work),
                    },
                    node,
                    None,
                )
            }
            Kind::Kanata => {
                let cfg = work.join("kanata.kbd");
                std::fs::write(&cfg, kanata_config(&source.path))?;
                let mut child = spawn(
                    bin,
                    work,
                    &[
                        "--nodelay".as_ref(),
                        "--no-wait".as_ref(),
                        "-c".as_ref(),
                        cfg.as_os_str(),
                    ],
                )?;
                let node = wait_output(&mut child, work, "kanata", |n| n.name == "kanata")?;
                (
                    Proc::Other {
                        child,
                        log: log(work),
                    },
                    node,
                    None,
                )
            }
            Kind::Logiops => {
                let cfg = work.join("logid.cfg");
                std::fs::write(&cfg, LOGID_CONFIG)?;
                let mut child = spawn_as(
                    bin,
                    work,
                    &["-c".as_ref(), cfg.as_os_str()],
                    &[(
                        "DBUS_SYSTEM_BUS_ADDRESS",
                        &format!("unix:path={SYSTEM_BUS_SOCKET}"),
                    )],
                    kind.user(),
                )?;
                if let Err(e) = wait_diverted(&mut child, work, &mouse) {
                    let _ = terminate(&mut child);
                    return Err(e);
                }
                // logid leaves the pointer node to the kernel: the mouse's own node is
                // what the compositor reads.
                (
                    Proc::Other {
                        child,
                        log: log(work),
                    },
                    source.clone(),
                    None,
                )
            }
            Kind::Xremap => {
                let cfg = work.join("xremap.yml");
                std::fs::write(&cfg, XREMAP_CONFIG)?;
                let mut child = spawn(
                    bin,
                    work,
                    &[
                        "--mouse".as_ref(),
                        "--device".as_ref(),
                        source.path.as_os_str(),
                        cfg.as_os_str(),
                    ],
                )?;
                let node =
                    wait_output(&mut child, work, "xremap", |n| n.name.starts_with("xremap"))?;
                (
                    Proc::Other {
                        child,
                        log: log(work),
                    },
                    node,
                    None,
                )
            }
        };
        let out = match Output::open(&out_node) {
            Ok(o) => o,
            Err(e) => {
                proc.stop();
                return Err(e);
            }
        };
        let mut tool = Tool {
            kind,
            mouse,
            source,
            out,
            keyboard,
            proc,
        };
        let res = tool.sentinel();
        res.with_context(|| {
            format!(
                "{} does not forward motion; log: {}",
                kind.name(),
                tool.log()
            )
        })?;
        Ok(tool)
    }

    /// Sends [`SENTINEL`] and waits until it comes out; forgets every output frame.
    pub fn sentinel(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + T_EVENT;
        // Some programs grab a moment after their output device appears: resend until one
        // arrives.
        loop {
            self.mouse.motion(SENTINEL.0, SENTINEL.1)?;
            let seen = self.out.wait(
                |frames| frames.iter().any(|f| motion_of(f) == Some(SENTINEL)),
                Duration::from_millis(500),
                Duration::from_millis(500),
            );
            if seen {
                // Stragglers (a resent sentinel) come out within this pause.
                std::thread::sleep(Duration::from_millis(200));
                self.out.take();
                return Ok(());
            }
            if let Some(status) = self.exited()? {
                bail!("exited with {status}");
            }
            if Instant::now() >= deadline {
                bail!("no sentinel motion on the output within {T_EVENT:?}");
            }
        }
    }

    /// pawl's directory (its `HOME` and `XDG_RUNTIME_DIR`); `None` for a peer.
    pub fn work(&self) -> Option<PathBuf> {
        match &self.proc {
            Proc::Pawl(p) => p.config_path().parent().map(Path::to_path_buf),
            Proc::Other { .. } => None,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        match &self.proc {
            Proc::Pawl(p) => p.pid(),
            Proc::Other { child, .. } => child.id(),
        }
    }

    /// The exit status, when the program has exited.
    pub fn exited(&mut self) -> anyhow::Result<Option<std::process::ExitStatus>> {
        match &mut self.proc {
            Proc::Pawl(p) => p.try_exit(),
            Proc::Other { child, .. } => Ok(child.try_wait()?),
        }
    }

    /// What the program printed.
    pub fn log(&self) -> String {
        match &self.proc {
            Proc::Pawl(p) => p.log(),
            Proc::Other { log, .. } => std::fs::read_to_string(log).unwrap_or_default(),
        }
    }

    /// SIGTERM; the exit status, which is 0 for pawl.
    pub fn stop(&mut self) -> anyhow::Result<std::process::ExitStatus> {
        match &mut self.proc {
            Proc::Pawl(p) => p.terminate(Duration::from_secs(5)),
            Proc::Other { child, .. } => terminate(child),
        }
    }
}

impl Proc {
    fn stop(&mut self) {
        match self {
            Proc::Pawl(p) => {
                let _ = p.terminate(Duration::from_secs(5));
            }
            Proc::Other { child, .. } => {
                let _ = terminate(child);
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Proc::Other { child, .. } = self
            && child.try_wait().ok().flatten().is_none()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn log(work: &Path) -> PathBuf {
    work.join("output.log")
}

fn spawn(bin: &Path, work: &Path, args: &[&std::ffi::OsStr]) -> anyhow::Result<Child> {
    spawn_as(bin, work, args, &[], None)
}

/// Starts `bin` in `work` with a clean environment plus `env`, as user and group `ids`
/// (`None`: root; `work` and the log are handed to that user first).
fn spawn_as(
    bin: &Path,
    work: &Path,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &str)],
    ids: Option<(u32, u32)>,
) -> anyhow::Result<Child> {
    use std::os::unix::process::CommandExt;
    let log_path = log(work);
    let log_file = std::fs::File::create(&log_path)
        .with_context(|| format!("create {}", log_path.display()))?;
    let mut cmd = Command::new(bin);
    if let Some((uid, gid)) = ids {
        for p in [work, &log_path] {
            std::os::unix::fs::chown(p, Some(uid), Some(gid))
                .with_context(|| format!("chown {}", p.display()))?;
        }
        cmd.uid(uid).gid(gid);
    }
    cmd.args(args)
        .current_dir(work)
        .env_clear()
        .env("PATH", "/bin")
        .env("HOME", work)
        .env("XDG_CONFIG_HOME", work)
        .env("XDG_RUNTIME_DIR", work)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn()
        .with_context(|| format!("cannot start {}", bin.display()))
}

/// How long a clone of the kernel-mode mouse may stay before it counts as grab mode.
const KERNEL_MODE_GRACE: Duration = Duration::from_secs(3);

/// What pawl's daemon logs once a mouse's kernel-mode setup is done (the gesture button
/// diverted, hidraw closed; `crates/pawl-linux`'s kernel path).
const KERNEL_MODE_SET_UP: &str = "hidraw closed (kernel mode";

/// Waits until the gesture button (0x00C3) of `mouse` is diverted over HID++; fails when
/// `exited` says the program exited, or after `T_DEVICE`.
fn wait_diverted_by(
    mouse: &HidMouse,
    mut exited: impl FnMut() -> anyhow::Result<Option<std::process::ExitStatus>>,
) -> anyhow::Result<()> {
    let hidpp = mouse.hidpp().context("the mouse speaks no HID++")?;
    let deadline = Instant::now() + T_DEVICE;
    loop {
        let diverted = hidpp
            .lock()
            .emu
            .reporting(CID_GESTURE_BUTTON)
            .is_some_and(|r| r.divert);
        if diverted {
            return Ok(());
        }
        if let Some(s) = exited()? {
            bail!("exited ({s}) before diverting the gesture button");
        }
        if Instant::now() >= deadline {
            bail!("the gesture button (0x00C3) not diverted within {T_DEVICE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until the program diverted the gesture button (0x00C3) of `mouse` over HID++
/// (logid does once it has set the device up); fails at once when it exits.
fn wait_diverted(child: &mut Child, work: &Path, mouse: &HidMouse) -> anyhow::Result<()> {
    let hidpp = mouse.hidpp().context("the mouse speaks no HID++")?;
    // logid probes every feature of the device first (tens of requests, each a round
    // trip through the emulator under TCG).
    let limit = T_DEVICE * 4;
    let deadline = Instant::now() + limit;
    loop {
        let diverted = hidpp
            .lock()
            .emu
            .reporting(CID_GESTURE_BUTTON)
            .is_some_and(|r| r.divert);
        if diverted {
            return Ok(());
        }
        if let Some(s) = child.try_wait()? {
            bail!(
                "exited ({s}) before diverting the gesture button; log: {}",
                std::fs::read_to_string(log(work)).unwrap_or_default()
            );
        }
        if Instant::now() >= deadline {
            let st = hidpp.lock();
            let last: Vec<String> = st
                .pawl
                .iter()
                .map(|m| {
                    format!(
                        "{:02x}.{:02x}:{:02x}{:02x}{:02x}",
                        m.sub_id, m.address, m.params[0], m.params[1], m.params[2]
                    )
                })
                .collect();
            bail!(
                "the gesture button (0x00C3) not diverted within {limit:?}; {} HID++ requests from hidraw (index.function+sw:params): {}; log: {}",
                st.pawl.len(),
                last.join(" "),
                std::fs::read_to_string(log(work)).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits for the output node a peer creates; fails at once when the peer exits.
fn wait_output(
    child: &mut Child,
    work: &Path,
    what: &str,
    pred: impl Fn(&NodeInfo) -> bool,
) -> anyhow::Result<NodeInfo> {
    let deadline = Instant::now() + T_DEVICE;
    loop {
        if let Some(info) = evdev::scan().into_iter().find(|i| pred(i)) {
            return Ok(info);
        }
        if let Some(s) = child.try_wait()? {
            bail!(
                "exited ({s}) before its output device {what:?} appeared; log: {}",
                std::fs::read_to_string(log(work)).unwrap_or_default()
            );
        }
        if Instant::now() >= deadline {
            let _ = terminate(child);
            bail!(
                "no output device {what:?} within {T_DEVICE:?}; log: {}",
                std::fs::read_to_string(log(work)).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn terminate(child: &mut Child) -> anyhow::Result<std::process::ExitStatus> {
    if let Some(s) = child.try_wait()? {
        return Ok(s);
    }
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(s);
        }
        if Instant::now() >= deadline {
            child.kill()?;
            return Ok(child.wait()?);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `(dx, dy)` of a frame that carries motion.
pub fn motion_of(frame: &Frame) -> Option<(i32, i32)> {
    let mut m = None;
    for e in frame.iter().filter(|e| e.type_ == EV_REL) {
        let (x, y) = m.get_or_insert((0, 0));
        match e.code {
            REL_X => *x += e.value,
            REL_Y => *y += e.value,
            _ => {}
        }
    }
    m.filter(|&(x, y)| (x, y) != (0, 0))
}

/// A reader thread on an output device: it reads as soon as anything arrives (a blocking
/// read of up to 256 events), so the workloads can check every frame and count
/// `SYN_DROPPED`.
#[derive(Debug)]
pub struct Output {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<OutState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct OutState {
    frames: Vec<Frame>,
    partial: Frame,
    dropped: u32,
    closed: Option<String>,
}

/// What arrived since the last [`Output::take`].
#[derive(Debug, Default)]
pub struct Received {
    /// Complete frames.
    pub frames: Vec<Frame>,
    /// `SYN_DROPPED` events seen (the reader fell behind: the kernel dropped events).
    pub dropped: u32,
}

impl Output {
    /// Opens `node` (blocking reads) and starts the reader thread.
    pub fn open(node: &NodeInfo) -> anyhow::Result<Output> {
        let fd = sys::open(&node.path, libc::O_RDONLY)
            .with_context(|| format!("cannot open {}", node.path.display()))?;
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("perf-reader".into())
            .spawn(move || read_loop(&fd, &thread_shared))
            .context("cannot start the reader thread")?;
        Ok(Output { shared })
    }

    /// Takes everything received so far.
    pub fn take(&self) -> Received {
        let mut s = self.shared.state.lock().expect("reader state");
        Received {
            frames: std::mem::take(&mut s.frames),
            dropped: std::mem::take(&mut s.dropped),
        }
    }

    /// Waits until `done` holds for the frames received so far, or nothing arrived for
    /// `quiet`, or `limit` passed; returns whether `done` held.
    pub fn wait(&self, done: impl Fn(&[Frame]) -> bool, quiet: Duration, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut s = self.shared.state.lock().expect("reader state");
        let mut count = s.frames.len();
        let mut last_change = Instant::now();
        loop {
            if done(&s.frames) {
                return true;
            }
            if s.closed.is_some() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline || now >= last_change + quiet {
                return false;
            }
            let until = deadline.min(last_change + quiet) - now;
            s = self
                .shared
                .changed
                .wait_timeout(s, until)
                .expect("reader state")
                .0;
            if s.frames.len() != count {
                count = s.frames.len();
                last_change = Instant::now();
            }
        }
    }

    /// Why the reader stopped (the device vanished), if it did.
    pub fn closed(&self) -> Option<String> {
        self.shared
            .state
            .lock()
            .expect("reader state")
            .closed
            .clone()
    }
}

fn read_loop(fd: &std::os::fd::OwnedFd, shared: &Shared) {
    let mut buf = [InputEvent::default(); 256];
    loop {
        // SAFETY: `InputEvent` is plain old data; the byte view covers exactly `buf`.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), size_of_val(&buf))
        };
        let n = match sys::read_once(fd, bytes) {
            Ok(Some(n)) => n,
            Ok(None) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                shared.state.lock().expect("reader state").closed = Some(e.to_string());
                shared.changed.notify_all();
                return;
            }
        };
        let mut s = shared.state.lock().expect("reader state");
        for ev in &buf[..n / size_of::<InputEvent>()] {
            match (ev.type_, ev.code) {
                (EV_SYN, SYN_DROPPED) => {
                    s.dropped += 1;
                    s.partial.clear();
                }
                (EV_SYN, SYN_REPORT) => {
                    let f = std::mem::take(&mut s.partial);
                    s.frames.push(f);
                }
                _ => s.partial.push(Event::new(ev.type_, ev.code, ev.value)),
            }
        }
        drop(s);
        shared.changed.notify_all();
    }
}

/// Requires that `frames` are exactly `want` (the motion of each frame that has motion).
pub fn check_motion(frames: &[Frame], want: &[(i32, i32)]) -> anyhow::Result<()> {
    let got: Vec<(i32, i32)> = frames.iter().filter_map(motion_of).collect();
    if got == want {
        return Ok(());
    }
    let first = got
        .iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .unwrap_or(got.len().min(want.len()));
    let sum = |v: &[(i32, i32)]| {
        v.iter().fold((0i64, 0i64), |(x, y), &(dx, dy)| {
            (x + i64::from(dx), y + i64::from(dy))
        })
    };
    let how = if sum(&got) == sum(want) {
        "frames merged, total motion kept"
    } else {
        "motion lost"
    };
    ensure!(
        got.len() == want.len(),
        "{} motion frames out for {} in, {how} (first difference at frame {first}: got {:?}, want {:?})",
        got.len(),
        want.len(),
        got.get(first),
        want.get(first)
    );
    bail!(
        "motion frame {first} out is {:?}, want {:?}",
        got[first],
        want[first]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motion_of_a_frame_sums_x_and_y_and_ignores_other_codes() {
        let f = vec![
            Event::new(EV_REL, REL_X, 3),
            Event::new(EV_REL, REL_Y, -2),
            Event::new(EV_SYN, 0, 0),
        ];
        assert_eq!(motion_of(&f), Some((3, -2)));
        assert_eq!(motion_of(&vec![Event::new(EV_REL, 8, 1)]), None);
    }

    #[test]
    fn a_lost_or_doubled_frame_fails_the_motion_check() {
        let frame = |x, y| vec![Event::new(EV_REL, REL_X, x), Event::new(EV_REL, REL_Y, y)];
        let want = [(1, -1), (2, -2)];
        assert!(check_motion(&[frame(1, -1), frame(2, -2)], &want).is_ok());
        assert!(check_motion(&[frame(1, -1)], &want).is_err());
        assert!(check_motion(&[frame(1, -1), frame(1, -1), frame(2, -2)], &want).is_err());
        assert!(check_motion(&[frame(2, -2), frame(1, -1)], &want).is_err());
    }
}
