//! Kernel mode under what a user's machine runs (`--set systemd`: the Debian root booted
//! with systemd as PID 1, `cargo xtask vm-test`'s HID-BPF tier only): the real
//! `systemd-udevd.service` with its sandbox (`PrivateMounts=yes`, a `SystemCallFilter=`
//! without `@mount`) runs `contrib/71-pawl-kernel-mode.rules`' loader; the real
//! systemd-logind (with dbus) makes seat0's sessions from autologins on the VTs and turns
//! `70-pawl.rules`' `uaccess` into ACLs.
//!
//! pawl's files are installed where the package puts them: the loader root-owned at
//! `/usr/libexec/pawl/` (the boot's initramfs puts it there, on a tmpfs over the read-only
//! root), the rules in `/run/udev/rules.d/` (udev reads it like `/etc/udev/rules.d`),
//! pawl's system units from `contrib/` in `/run/systemd/system/`, enabled and started as
//! the package's postinst would (`systemctl daemon-reload`, `enable --now`).
//!
//! Every scenario here needs HID-BPF (`SKIP … needs HID-BPF` elsewhere; xtask boots this
//! set only on the HID-BPF tier).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use pawl_bpf::maps::FLAG_WHEEL;
use pawl_bpf::pins::{self, KernelDevice};

use crate::evdev::{self, EvdevNode, NodeInfo};
use crate::hidpp_mouse::HidppMouse;
use crate::pawl::{Pawl, PawlOptions};
use crate::scenarios::base::kernel_mode::{hires_mouse, needs_hid_bpf};
use crate::scenarios::userland_tools::{SHARE, USER, output, settle};
use crate::scenarios::{Ctx, Scenario, T_DEVICE, T_EVENT};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    kernel_mode_attaches_under_systemd_udevd,
    kernel_mode_attaches_a_mouse_present_at_boot,
    kernel_mode_pins_follow_the_logind_seat_user,
    kernel_mode_seat_user_cannot_keep_the_next_users_mouse,
    kernel_mode_an_old_layouts_user_cannot_keep_the_next_users_mouse,
    kernel_mode_pins_follow_the_devices_own_seat,
    kernel_mode_reseat_never_misses_the_last_change,
    kernel_mode_detach_removes_every_device_it_can,
];

/// The second plain user of the root (`xtask/src/userland.rs` `USERS`): the one who takes
/// seat0 over on tty2.
pub const SECOND_USER: (&str, u32) = ("pawl2", 1001);

/// pawl's udev rules, as the package installs them (`contrib/` in the share).
const RULES: &[&str] = &["70-pawl.rules", "71-pawl-kernel-mode.rules"];
/// Where udev reads runtime rules.
const RULES_DIR: &str = "/run/udev/rules.d";
/// Where systemd reads runtime units (the boot's own units are there too).
const UNIT_DIR: &str = "/run/systemd/system";
/// pawl's system units the package installs and enables, when `contrib/` has them: the
/// bpffs mount of the pins, the reseat trigger (the service it starts is installed, not
/// enabled: the path unit starts it).
const SYSTEM_UNITS: &[(&str, bool)] = &[
    ("run-pawl-bpf.mount", true),
    ("pawl-kernel-reseat.path", true),
    ("pawl-kernel-reseat.service", false),
];
/// systemd-logind's state file of seat0 (`ACTIVE_UID=` the active session's user).
const SEAT0: &str = "/run/systemd/seats/seat0";
/// How long udevd (under TCG) gets to run the loader after a uevent.
const T_UDEV: Duration = Duration::from_secs(30);
/// How long a VT autologin gets to become logind's active session (agetty, login, PAM,
/// `user@UID.service` under TCG).
const T_LOGIN: Duration = Duration::from_secs(60);

/// pawl's rules and system units installed (and the units started) as the package does;
/// removed again when dropped.
struct Installed {
    files: Vec<PathBuf>,
    enabled: Vec<String>,
    /// What was installed and what `contrib/` lacked, for the notes.
    summary: String,
}

impl Installed {
    fn package() -> anyhow::Result<Installed> {
        let mut inst = Installed {
            files: Vec::new(),
            enabled: Vec::new(),
            summary: String::new(),
        };
        let contrib = Path::new(SHARE).join("contrib");
        let mut copy = |name: &str, dir: &str| -> anyhow::Result<bool> {
            let from = contrib.join(name);
            if !from.is_file() {
                return Ok(false);
            }
            std::fs::create_dir_all(dir)?;
            let to = Path::new(dir).join(name);
            std::fs::copy(&from, &to).with_context(|| format!("copy {}", from.display()))?;
            inst.files.push(to);
            Ok(true)
        };
        for r in RULES {
            ensure!(
                copy(r, RULES_DIR)?,
                "contrib/{r} is not in the share ({SHARE}/contrib)"
            );
        }
        let mut units = Vec::new();
        let mut missing = Vec::new();
        for (unit, enable) in SYSTEM_UNITS {
            if copy(unit, UNIT_DIR)? {
                units.push((*unit, *enable));
            } else {
                missing.push(*unit);
            }
        }
        inst.summary = format!(
            "installed {} and units {:?}; not in contrib/: {missing:?}",
            RULES.join(", "),
            units.iter().map(|(u, _)| *u).collect::<Vec<_>>()
        );
        output(Command::new("systemctl").arg("daemon-reload"))?;
        for (unit, enable) in units {
            if enable {
                output(Command::new("systemctl").args(["enable", "--runtime", "--now", unit]))
                    .with_context(|| format!("systemctl enable --runtime --now {unit}"))?;
                inst.enabled.push(unit.to_owned());
            }
        }
        // udevd logs a RUN program's stdout and stderr at debug level only: the loader's
        // own words, for a failure's reason.
        output(Command::new("udevadm").args(["control", "--log-level=debug"]))?;
        // As the postinst: reload the rules, give the seat user what they tag now.
        output(Command::new("udevadm").args(["control", "--reload-rules"]))?;
        output(Command::new("udevadm").args([
            "trigger",
            "--settle",
            "--action=change",
            "--subsystem-match=input",
            "--subsystem-match=hidraw",
        ]))?;
        output(Command::new("udevadm").args([
            "trigger",
            "--settle",
            "--action=change",
            "--subsystem-match=misc",
            "--sysname-match=uinput",
        ]))?;
        Ok(inst)
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        for unit in self.enabled.iter().rev() {
            let _ = Command::new("systemctl")
                .args(["disable", "--runtime", "--now", unit])
                .output();
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        let _ = Command::new("systemctl").arg("daemon-reload").output();
        let _ = Command::new("udevadm")
            .args(["control", "--reload-rules", "--log-level=info"])
            .output();
    }
}

/// The last `lines` lines of `journalctl -b -u UNIT` (for a failure's reason).
fn journal(unit: &str, lines: u32) -> String {
    Command::new("journalctl")
        .args([
            "-b",
            "--no-pager",
            "-o",
            "cat",
            "-n",
            &lines.to_string(),
            "-u",
            unit,
        ])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|e| format!("(journalctl: {e})"))
}

/// The loader's lines about HID device `hid` in udevd's journal (at debug level udevd logs
/// a RUN program's output, `'…'(out)` / `'…'(err)`, and its exit).
fn loader_journal(hid: &str) -> String {
    let all = journal("systemd-udevd.service", 2000);
    let lines: Vec<&str> = all
        .lines()
        .filter(|l| l.contains(hid) && l.contains("pawl-kernel-attach"))
        .collect();
    if lines.is_empty() {
        format!(
            "no loader line in udevd's journal; its tail: {}",
            tail(&all, 15)
        )
    } else {
        tail(&lines.join("\n"), 12)
    }
}

/// How many times udevd ran the loader's `VERB HID` (its journal at debug level).
fn loader_runs(hid: &str, verb: &str) -> usize {
    let run = format!("Running command \"/usr/libexec/pawl/pawl-kernel-attach {verb} {hid}\"");
    journal("systemd-udevd.service", 4000)
        .lines()
        .filter(|l| l.contains(&run))
        .count()
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whether `path` is a bpffs mount point in this (the host's) mount namespace.
fn is_bpffs_mount(path: &str) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let fstype = f.iter().position(|x| *x == "-").and_then(|i| f.get(i + 1));
            f.get(4) == Some(&path) && fstype == Some(&"bpf")
        })
}

/// The pin directory of `hid`, `/run/pawl/bpf/<HID with _>`.
fn pin_dir(hid: &str) -> PathBuf {
    pins::device_dir(Path::new(pins::PIN_ROOT), hid)
}

/// Waits until `hid`'s pins (link, settings, ring, stats) are in its pin directory, seen
/// from here, and owned by `uid` (`None`: any owner); answers the mouse's HID++ meanwhile.
/// Fails with udevd's journal lines of the loader.
fn wait_pins(
    dev: &mut HidppMouse,
    hid: &str,
    uid: Option<u32>,
    timeout: Duration,
) -> anyhow::Result<u32> {
    let dir = pin_dir(hid);
    let seen = || {
        let complete = [pins::LINK, pins::SETTINGS, pins::RING, pins::STATS]
            .iter()
            .all(|p| dir.join(p).exists());
        let owner = pins::attachment_owner(&dir);
        (complete, owner)
    };
    let deadline = Instant::now() + timeout;
    loop {
        let (complete, owner) = seen();
        if let (true, Some(owner)) = (complete, owner)
            && uid.is_none_or(|u| u == owner)
        {
            // A hot-plug runs the loader more than once (`add` and `bind` both match once
            // the driver is bound), each run replacing the pins: they count once udevd is
            // done with the device's events.
            settle()?;
            if seen() == (true, Some(owner)) {
                return Ok(owner);
            }
        }
        if Instant::now() >= deadline {
            bail!(
                "{} {} within {timeout:?} (owner {owner:?}, want {uid:?}; /run/pawl/bpf a \
                 bpffs here: {}); udevd's journal: {}",
                dir.display(),
                if complete {
                    "has the wrong owner"
                } else {
                    "has no complete pins"
                },
                is_bpffs_mount(pins::PIN_ROOT),
                loader_journal(hid)
            );
        }
        dev.pump(Duration::from_millis(50))?;
    }
}

/// Waits until `hid`'s pin directory is gone (the rule's `remove` ran the loader).
fn wait_unpinned(hid: &str) -> anyhow::Result<()> {
    let dir = pin_dir(hid);
    let deadline = Instant::now() + T_UDEV;
    while dir.exists() {
        ensure!(
            Instant::now() < deadline,
            "{} is still there {T_UDEV:?} after the mouse went; udevd's journal: {}",
            dir.display(),
            loader_journal(hid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// `kernel_mode_attaches_under_systemd_udevd`: with pawl's rules and units installed as
/// the package does, an MX Master 3S hot-plugged (bound by the real hid-logitech-hidpp)
/// gets pawl's program from the loader that systemd-udevd.service — in its real sandbox —
/// runs: the pins appear under `/run/pawl/bpf/<HID>/` in the host's mount namespace (where
/// pawl looks), root's with no seat session, the program pass-through; unplugged, the pins
/// go.
pub fn kernel_mode_attaches_under_systemd_udevd(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let props = output(Command::new("systemctl").args([
        "show",
        "systemd-udevd.service",
        "-p",
        "PrivateMounts,SystemCallFilter,ActiveState,MainPID",
    ]))?;
    // The filter is an allow list (bookworm: @system-service @module @raw-io bpf): no
    // mount(2) for a RUN program.
    let filter = props
        .lines()
        .find_map(|l| l.strip_prefix("SystemCallFilter="))
        .unwrap_or("");
    let allows = |call: &str| filter.split(' ').any(|c| c == call);
    ctx.notes.push(format!(
        "systemd-udevd.service: {}; SystemCallFilter allows bpf: {}, mount: {}",
        props
            .lines()
            .filter(|l| !l.starts_with("SystemCallFilter="))
            .collect::<Vec<_>>()
            .join("; "),
        allows("bpf"),
        allows("mount")
    ));
    // udevd's capabilities and seccomp mode (what a RUN program inherits).
    let creds = props
        .lines()
        .find_map(|l| l.strip_prefix("MainPID="))
        .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .map(|st| {
            st.lines()
                .filter(|l| {
                    l.starts_with("Cap") || l.starts_with("Seccomp") || l.starts_with("NoNewPrivs")
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default();
    ctx.notes
        .push(format!("systemd-udevd's credentials: {creds}"));
    ensure!(
        props.contains("PrivateMounts=yes") && props.contains("ActiveState=active"),
        "systemd-udevd.service is not running in its sandbox: {props}"
    );
    let installed = Installed::package()?;
    ctx.notes.push(installed.summary.clone());
    let (mut dev, _info, hid, _phys) = hires_mouse(ctx)?;
    let owner = wait_pins(&mut dev, &hid, None, T_UDEV)?;
    ctx.notes.push(format!(
        "the hot-plug ran the loader's add {} time(s); its lines: {}",
        loader_runs(&hid, "add"),
        loader_journal(&hid)
    ));
    ensure!(
        is_bpffs_mount(pins::PIN_ROOT),
        "{} holds pins but is no bpffs mount here",
        pins::PIN_ROOT
    );
    ensure!(
        owner == 0,
        "the pins are uid {owner}'s with no seat session"
    );
    let kd = KernelDevice::open(&hid).map_err(|e| anyhow::format_err!("{e}"))?;
    let s = kd.settings().map_err(|e| anyhow::format_err!("{e}"))?;
    ensure!(
        s.flags & FLAG_WHEEL == 0,
        "the loader enabled the transform with no pawl running: {s:?}"
    );
    drop(kd);
    drop(dev);
    wait_unpinned(&hid)?;
    drop(installed);
    Ok(())
}

/// `kernel_mode_attaches_a_mouse_present_at_boot`: an MX Master 3S bound before pawl's rules
/// are installed gets no program; what systemd-udev-trigger does at boot (`udevadm trigger
/// --action=add` over the hid subsystem: coldplug sends `add`, not `bind`) then has udevd
/// run the loader, and the pins appear.
pub fn kernel_mode_attaches_a_mouse_present_at_boot(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let (mut dev, _info, hid, _phys) = hires_mouse(ctx)?;
    // Every uevent of the new device handled before the rules exist.
    settle()?;
    let installed = Installed::package()?;
    ctx.notes.push(installed.summary.clone());
    // The installation's own triggers are `change` (input, hidraw, misc): nothing attached.
    dev.pump(Duration::from_millis(500))?;
    ensure!(
        !pin_dir(&hid).exists(),
        "{} exists before any hid uevent replayed",
        pin_dir(&hid).display()
    );
    let trigger = Command::new("udevadm")
        .args(["trigger", "--action=add", "--subsystem-match=hid"])
        .spawn()
        .context("udevadm trigger")?;
    let mut trigger = trigger;
    let deadline = Instant::now() + T_UDEV;
    while trigger.try_wait()?.is_none() {
        ensure!(Instant::now() < deadline, "udevadm trigger did not finish");
        dev.pump(Duration::from_millis(20))?;
    }
    wait_pins(&mut dev, &hid, None, T_UDEV)?;
    ctx.notes.push(format!("loader: {}", loader_journal(&hid)));
    drop(dev);
    wait_unpinned(&hid)?;
    drop(installed);
    Ok(())
}

/// `ACTIVE_UID=` of seat0 in logind's state file, `None` without an active session.
fn seat0_uid() -> Option<u32> {
    pawl_bpf::attach::seat_uid_from(&std::fs::read_to_string(SEAT0).ok()?)
}

/// Waits until seat0's active session is `uid`'s.
fn wait_seat0(dev: &mut HidppMouse, uid: u32) -> anyhow::Result<()> {
    let deadline = Instant::now() + T_LOGIN;
    while seat0_uid() != Some(uid) {
        if Instant::now() >= deadline {
            let sessions = Command::new("loginctl")
                .args(["list-sessions", "--no-legend"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            bail!(
                "seat0's active user is {:?}, not {uid}, after {T_LOGIN:?}; {SEAT0}: {:?}; \
                 sessions: {sessions}; logind: {}",
                seat0_uid(),
                std::fs::read_to_string(SEAT0).unwrap_or_default(),
                journal("systemd-logind.service", 10)
            );
        }
        dev.pump(Duration::from_millis(100))?;
    }
    Ok(())
}

/// An autologin of `user` on `tty` (a drop-in for `getty@TTY.service`, as a user's
/// machine configures one), started; the drop-in is removed and the getty stopped when
/// dropped.
struct Autologin {
    tty: &'static str,
    dropin: PathBuf,
}

impl Autologin {
    fn start(tty: &'static str, user: &str) -> anyhow::Result<Autologin> {
        let dir = Path::new(UNIT_DIR).join(format!("getty@{tty}.service.d"));
        std::fs::create_dir_all(&dir)?;
        let dropin = dir.join("pawl-vm-autologin.conf");
        std::fs::write(
            &dropin,
            format!(
                "[Service]\nExecStart=\nExecStart=-/sbin/agetty -o '-p -f -- \\\\u' \
                 --noclear --autologin {user} %I $TERM\n"
            ),
        )?;
        let login = Autologin { tty, dropin };
        output(Command::new("systemctl").arg("daemon-reload"))?;
        output(Command::new("systemctl").args(["restart", &format!("getty@{tty}.service")]))?;
        Ok(login)
    }
}

impl Drop for Autologin {
    fn drop(&mut self) {
        let _ = Command::new("systemctl")
            .args(["stop", &format!("getty@{}.service", self.tty)])
            .output();
        let _ = std::fs::remove_file(&self.dropin);
        let _ = Command::new("systemctl").arg("daemon-reload").output();
    }
}

/// `getfacl`'s `user:NAME:PERMS` entries of `node`.
fn acl_users(node: &Path) -> anyhow::Result<Vec<String>> {
    let text = output(
        Command::new("getfacl")
            .args(["-p", "--omit-header"])
            .arg(node),
    )?;
    Ok(text
        .lines()
        .filter(|l| l.starts_with("user:") && !l.starts_with("user::"))
        .map(str::to_owned)
        .collect())
}

/// Waits until every node in `nodes` has an ACL entry `user:NAME:rw` (logind's uaccess).
fn wait_acl(dev: &mut HidppMouse, nodes: &[PathBuf], user: &str) -> anyhow::Result<()> {
    let want = format!("user:{user}:rw");
    let deadline = Instant::now() + T_EVENT;
    for n in nodes {
        loop {
            let acl = acl_users(n)?;
            if acl.iter().any(|a| a.starts_with(&want)) {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "{} has no {want} ACL (logind's uaccess): {acl:?}; udev tags: {:?}",
                n.display(),
                crate::scenarios::userland_tools::udev_info(n).map(|i| i.tags)
            );
            dev.pump(Duration::from_millis(50))?;
        }
    }
    Ok(())
}

/// `pawl status --json` as `uid` for the pawl whose runtime directory is `work`, on one line
/// without spaces; `None` while that pawl does not answer yet (`pawl status` exits 3 with
/// state `stopped`, then 4 with `starting`, until the daemon's status socket is up).
fn status_json_as(
    ctx: &Ctx,
    dev: &mut HidppMouse,
    pawl: &Pawl,
    work: &Path,
    uid: u32,
) -> anyhow::Result<Option<String>> {
    use std::os::unix::process::CommandExt;
    let (status, out, err) = dev.run_answering(
        Command::new(&ctx.pawl)
            .arg("--config")
            .arg(pawl.config_path())
            .args(["status", "--json"])
            .env_clear()
            .env("PATH", "/bin")
            .env("HOME", work)
            .env("XDG_RUNTIME_DIR", work)
            .env("XDG_CONFIG_HOME", work)
            .uid(uid)
            .gid(uid),
        T_EVENT,
    )?;
    let json: String = out.split_whitespace().collect();
    let not_yet = (status.code() == Some(3) && json.contains(r#""state":"stopped""#))
        || (status.code() == Some(4) && json.contains(r#""state":"starting""#));
    if not_yet {
        return Ok(None);
    }
    ensure!(
        status.success(),
        "pawl status --json exited with {status}: {out}{err}"
    );
    Ok(Some(json))
}

/// Waits until the pawl at `work` reports `want` in `pawl status --json`.
fn wait_status(
    ctx: &Ctx,
    dev: &mut HidppMouse,
    pawl: &mut Pawl,
    work: &Path,
    uid: u32,
    want: &str,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + T_UDEV;
    loop {
        if let Some(st) = pawl.try_exit()? {
            bail!("pawl exited with {st}; log: {}", tail(&pawl.log(), 15));
        }
        let json = status_json_as(ctx, dev, pawl, work, uid)?.unwrap_or_default();
        if json.contains(want) {
            return Ok(json);
        }
        ensure!(
            Instant::now() < deadline,
            "pawl status --json never said {want}: {json}; log: {}",
            tail(&pawl.log(), 15)
        );
        dev.pump(Duration::from_millis(200))?;
    }
}

/// `kernel_mode_pins_follow_the_logind_seat_user`: an MX Master 3S bound with no session
/// gets root's pins. An autologin of uid 1000 on tty1 makes logind's seat0 session
/// (`ACTIVE_UID=1000`), whose uaccess ACLs reach the mouse's evdev and hidraw nodes and
/// `/dev/uinput`; the pins become uid 1000's (the reseat units); that user's `pawl run`
/// goes into kernel mode (`pawl status` mode `bpf`, the pointer node not grabbed, the
/// transform on). An autologin of uid 1001 on tty2 and `chvt 2` switch the seat: the pins
/// become uid 1001's, and the first pawl leaves kernel mode, its status saying why
/// (`pins-of-another-user`). Also `systemd-analyze verify` on pawl's system units.
pub fn kernel_mode_pins_follow_the_logind_seat_user(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let (user, uid) = USER;
    let (user2, uid2) = SECOND_USER;
    let installed = Installed::package()?;
    ctx.notes.push(installed.summary.clone());
    let units: Vec<PathBuf> = installed
        .files
        .iter()
        .filter(|f| f.starts_with(UNIT_DIR))
        .cloned()
        .collect();
    if !units.is_empty() {
        let out = Command::new("systemd-analyze")
            // pawl(1) is the package's, not in this root: the man pages are not checked.
            .args(["verify", "--man=no"])
            .args(&units)
            .output()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ctx.notes
            .push(format!("systemd-analyze verify: {}: {text}", out.status));
        ensure!(
            out.status.success() && text.trim().is_empty(),
            "systemd-analyze verify {units:?}: {}: {text}",
            out.status
        );
    }
    ensure!(
        seat0_uid().is_none(),
        "seat0 has an active user before any login: {:?}",
        std::fs::read_to_string(SEAT0)
    );
    let (mut dev, info, hid, _phys) = hires_mouse(ctx)?;
    let owner = wait_pins(&mut dev, &hid, None, T_UDEV)?;
    ensure!(owner == 0, "pins of uid {owner} with no seat session");

    let t = Instant::now();
    let login = Autologin::start("tty1", user)?;
    wait_seat0(&mut dev, uid)?;
    ctx.notes.push(format!(
        "autologin on tty1 to ACTIVE_UID={uid}: {:.1} s",
        t.elapsed().as_secs_f64()
    ));
    let mut nodes: Vec<PathBuf> = vec![info.path.clone()];
    nodes.extend(evdev::hidraw_of(&info.path, T_DEVICE)?);
    nodes.push(PathBuf::from("/dev/uinput"));
    wait_acl(&mut dev, &nodes, user)?;
    wait_pins(&mut dev, &hid, Some(uid), T_UDEV)
        .context("after the login on tty1 (the reseat units)")?;

    let work = ctx.subdir("pawl-seat")?;
    let mut pawl = Pawl::start_as(
        &ctx.pawl,
        &work,
        &PawlOptions {
            config: "[hidpp]\nenabled = true\n",
            desktop: "GNOME",
            run_args: &[],
            debug: ctx.pawl_debug,
        },
        Some((uid, uid)),
    )?;
    // Its virtual keyboard: /dev/uinput opened through the seat user's ACL.
    pawl.wait_keyboard(T_DEVICE)?;
    let json = wait_status(
        ctx,
        &mut dev,
        &mut pawl,
        &work,
        uid,
        r#""part":"mode","path":"bpf""#,
    )?;
    ctx.notes.push(format!("status as uid {uid}: {json}"));
    check_not_grabbed(&info, &pawl)?;
    let s = KernelDevice::open(&hid)
        .and_then(|k| k.settings())
        .map_err(|e| anyhow::format_err!("{e}"))?;
    ensure!(
        s.flags & FLAG_WHEEL != 0,
        "kernel mode without the transform: {s:?}"
    );

    let login2 = Autologin::start("tty2", user2)?;
    let deadline = Instant::now() + T_LOGIN;
    while !session_of(uid2) {
        ensure!(
            Instant::now() < deadline,
            "no logind session of uid {uid2} after the autologin on tty2; logind: {}",
            journal("systemd-logind.service", 10)
        );
        dev.pump(Duration::from_millis(100))?;
    }
    output(Command::new(Path::new(SHARE).join("busybox")).args(["chvt", "2"]))?;
    wait_seat0(&mut dev, uid2)?;
    wait_pins(&mut dev, &hid, Some(uid2), T_UDEV)
        .context("after the seat switch to tty2 (the reseat units)")?;
    let json = wait_status(ctx, &mut dev, &mut pawl, &work, uid, "pins-of-another-user")?;
    ctx.notes
        .push(format!("status as uid {uid} after the switch: {json}"));
    ensure!(
        !json.contains(r#""part":"mode","path":"bpf""#),
        "the first pawl still says kernel mode: {json}"
    );
    let status = pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    let _ = Command::new(Path::new(SHARE).join("busybox"))
        .args(["chvt", "1"])
        .output();
    drop(login2);
    drop(login);
    drop(dev);
    wait_unpinned(&hid)?;
    drop(installed);
    Ok(())
}

/// Whether logind has a session of `uid` (`/run/systemd/users/UID` lists its sessions).
fn session_of(uid: u32) -> bool {
    std::fs::read_to_string(format!("/run/systemd/users/{uid}"))
        .is_ok_and(|t| t.lines().any(|l| l.starts_with("SESSIONS=") && l.len() > 9))
}

/// pawl in kernel mode leaves the pointer node ungrabbed (it may take a moment after the
/// status changed).
fn check_not_grabbed(info: &NodeInfo, pawl: &Pawl) -> anyhow::Result<()> {
    let node = EvdevNode::open(&info.path)?;
    let deadline = Instant::now() + T_EVENT;
    while !node.is_free_to_grab()? {
        ensure!(
            Instant::now() < deadline,
            "pawl grabbed the MX Master's node in kernel mode; log: {}",
            tail(&pawl.log(), 15)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The pins of a device directory, each as `BPF_OBJ_GET` opens it: `(name, None)` opened,
/// `(name, Some(errno))` refused. Settings and ring are asked read-write (as pawl opens
/// them), every other pin read-only (the least a pin can be asked for). `--open-pins DIR`
/// prints this as the user it runs as, one `NAME ok|ERRNO` line each, then `kernel-device
/// ok|error` for [`KernelDevice::open_in`] (what pawl's daemon does to enter kernel mode).
pub fn open_pins(dir: &Path) -> Vec<(String, Option<i32>)> {
    use libbpf_rs::libbpf_sys;
    use std::os::unix::ffi::OsStrExt;
    let mut names: Vec<String> = [
        pins::LINK,
        pins::SETTINGS,
        pins::RING,
        pins::STATS,
        pins::GLIDE,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
        .into_iter()
        .map(|n| {
            let flags = if n == pins::SETTINGS || n == pins::RING {
                0
            } else {
                libbpf_sys::BPF_F_RDONLY
            };
            let c = std::ffi::CString::new(dir.join(&n).as_os_str().as_bytes()).unwrap();
            let opts = libbpf_sys::bpf_obj_get_opts {
                sz: size_of::<libbpf_sys::bpf_obj_get_opts>() as _,
                file_flags: flags,
                ..Default::default()
            };
            // SAFETY: `c` is NUL-terminated and `opts` a bpf_obj_get_opts of its size.
            let fd = unsafe { libbpf_sys::bpf_obj_get_opts(c.as_ptr(), &opts) };
            if fd >= 0 {
                // SAFETY: the fd was just returned to us.
                unsafe { libc::close(fd) };
                (n, None)
            } else {
                (n, Some(-fd))
            }
        })
        .collect()
}

/// `--open-pins DIR`: [`open_pins`] printed (run as a user by the scenarios).
pub fn open_pins_main(dir: &Path) -> std::process::ExitCode {
    for (n, r) in open_pins(dir) {
        match r {
            None => println!("{n} ok"),
            Some(e) => println!("{n} {e}"),
        }
    }
    let name = dir
        .file_name()
        .and_then(|n| pins::hid_name_of_dir(&n.to_string_lossy()));
    let root = dir.parent().unwrap_or(Path::new("/"));
    match name.map(|n| KernelDevice::open_in(root, &n)) {
        Some(Ok(_)) => println!("kernel-device ok"),
        Some(Err(e)) => println!("kernel-device error {e}"),
        None => println!("kernel-device error not a device directory"),
    }
    std::process::ExitCode::SUCCESS
}

/// [`open_pins_main`] run as `uid` (gid the same) on `hid`'s pin directory: its lines.
fn open_pins_as(uid: u32, hid: &str) -> anyhow::Result<String> {
    use std::os::unix::process::CommandExt;
    output(
        Command::new(std::env::current_exe()?)
            .arg("--open-pins")
            .arg(pin_dir(hid))
            .env_clear()
            .uid(uid)
            .gid(uid),
    )
}

/// Writes seat0's state file as logind does (a dot-named temporary file renamed into
/// place): `Some(uid)` that user's session active, `None` the text logind writes with
/// no session. The path unit sees the rename.
fn write_seat0_as_logind(uid: Option<u32>) -> anyhow::Result<()> {
    let text = match uid {
        Some(u) => format!(
            "# This is private data. Do not parse.\nIS_SEAT0=1\nCAN_MULTI_SESSION=1\n\
             CAN_TTY=1\nCAN_GRAPHICAL=1\nACTIVE=c{u}\nACTIVE_UID={u}\nSESSIONS=c{u}\nUIDS={u}\n"
        ),
        None => "# This is private data. Do not parse.\nIS_SEAT0=1\nCAN_MULTI_SESSION=1\n\
                 CAN_TTY=1\nCAN_GRAPHICAL=1\n"
            .to_owned(),
    };
    write_seat0_text(&text)
}

fn write_seat0_text(text: &str) -> anyhow::Result<()> {
    let tmp = Path::new(SEAT0).with_file_name(".#seat0pawlvm");
    std::fs::write(&tmp, text).context("write seat0's temporary file")?;
    std::fs::rename(&tmp, SEAT0).context("rename seat0 into place")
}

/// Puts back seat0's state file as it was (logind's) when dropped.
struct Seat0Restore(Option<String>);

impl Drop for Seat0Restore {
    fn drop(&mut self) {
        match &self.0 {
            Some(t) => {
                let _ = write_seat0_text(t);
            }
            None => {
                let _ = std::fs::remove_file(SEAT0);
            }
        }
    }
}

/// Whether pawl-kernel-reseat.service's last run succeeded (`Result=success`) and what
/// it is doing now.
fn reseat_unit_state() -> String {
    Command::new("systemctl")
        .args([
            "show",
            "pawl-kernel-reseat.service",
            "-p",
            "Result,ActiveState,NRestarts,ExecMainStatus",
        ])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// `kernel_mode_seat_user_cannot_keep_the_next_users_mouse`: an MX Master 3S attached
/// while uid 1000 is seat0's user (seat0's file written as logind writes it; the real
/// path unit runs the reseat). That user, in the device's pin directory, tries what would
/// keep the mouse: rename root's `link` and `glide`, make a directory or file, remove or
/// rename its own pins, rename the directory; each is refused (EACCES: the directory is
/// root's 0755), and the directory holds exactly the five pins after. Its own pins' modes
/// it may change (it owns them). seat0 then goes to uid 1001 as logind does: the reseat
/// service succeeds, the pins are uid 1001's, who opens its three maps and the daemon's
/// `KernelDevice` (kernel mode), and uid 1000 opens none of the device's pins.
pub fn kernel_mode_seat_user_cannot_keep_the_next_users_mouse(ctx: &mut Ctx) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    needs_hid_bpf()?;
    let (_, uid) = USER;
    let (_, uid2) = SECOND_USER;
    let installed = Installed::package()?;
    let restore = Seat0Restore(std::fs::read_to_string(SEAT0).ok());
    ensure!(
        seat0_uid().is_none(),
        "seat0 has an active user before the scenario: {:?}",
        restore.0
    );
    let (mut dev, _info, hid, _phys) = hires_mouse(ctx)?;
    wait_pins(&mut dev, &hid, None, T_UDEV)?;
    write_seat0_as_logind(Some(uid))?;
    wait_pins(&mut dev, &hid, Some(uid), T_UDEV).with_context(|| {
        format!(
            "after seat0 became uid {uid}'s; reseat: {}; {}",
            reseat_unit_state(),
            journal("pawl-kernel-reseat.service", 10)
        )
    })?;
    let dir = pin_dir(&hid);
    let layout = |dir: &Path| -> anyhow::Result<Vec<String>> {
        let mut v = Vec::new();
        let m = std::fs::symlink_metadata(dir)?;
        v.push(format!(
            ".:{}:{:o}",
            m.uid(),
            m.permissions().mode() & 0o7777
        ));
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let m = std::fs::symlink_metadata(e.path())?;
            v.push(format!(
                "{}:{}:{:o}",
                e.file_name().to_string_lossy(),
                m.uid(),
                m.permissions().mode() & 0o7777
            ));
        }
        Ok(v)
    };
    let before = layout(&dir)?;
    ctx.notes.push(format!("pins for uid {uid}: {before:?}"));
    let want = [
        ".:0:755".to_owned(),
        "glide:0:600".to_owned(),
        "link:0:600".to_owned(),
        format!("ring:{uid}:600"),
        format!("settings:{uid}:600"),
        format!("stats:{uid}:400"),
    ];
    ensure!(before == want, "pin layout {before:?}, want {want:?}");

    // The attack, as the seat user in the directory (busybox's applets).
    let busybox = Path::new(SHARE).join("busybox");
    let dir_name = dir.display().to_string();
    let parent_new = format!("{dir_name}_x");
    let attempts: &[&[&str]] = &[
        &["mv", "link", "lnk"],
        &["mv", "glide", "gl"],
        &["mkdir", "x"],
        &["touch", "y"],
        &["ln", "-s", "/", "z"],
        &["mv", "settings", "s"],
        &["rm", "-f", "stats"],
        &["mv", &dir_name, &parent_new],
        &["mkdir", &parent_new],
    ];
    let mut refused = Vec::new();
    for a in attempts {
        let out = Command::new(&busybox)
            .args(*a)
            .current_dir(&dir)
            .env_clear()
            .uid(uid)
            .gid(uid)
            .output()?;
        let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        ensure!(
            !out.status.success()
                && (err.contains("Permission denied") || err.contains("Operation not permitted")),
            "as uid {uid}, `{}` in {} was not refused: {} {err}",
            a.join(" "),
            dir.display(),
            out.status
        );
        refused.push(format!("{}: {err}", a.join(" ")));
    }
    ctx.notes.push(format!("refused: {refused:?}"));
    // Its own pins' modes it may change: the next user's pins are new inodes.
    let out = Command::new(&busybox)
        .args(["chmod", "666", "settings", "ring", "stats"])
        .current_dir(&dir)
        .env_clear()
        .uid(uid)
        .gid(uid)
        .output()?;
    ctx.notes
        .push(format!("chmod 666 of its own pins: {}", out.status));
    let after = layout(&dir)?;
    let names = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|l| l.split(':').next().unwrap_or("").to_owned())
            .collect()
    };
    ensure!(
        names(&after) == names(&want),
        "the directory changed under the attack: {after:?}"
    );
    ensure!(!Path::new(&parent_new).exists(), "{parent_new} was made");

    // The seat goes to the next user, as logind does it.
    write_seat0_as_logind(Some(uid2))?;
    wait_pins(&mut dev, &hid, Some(uid2), T_UDEV).with_context(|| {
        format!(
            "after seat0 became uid {uid2}'s; reseat: {}; {}",
            reseat_unit_state(),
            journal("pawl-kernel-reseat.service", 10)
        )
    })?;
    reseat_succeeded(ctx)?;
    let now = layout(&dir)?;
    ctx.notes.push(format!("pins for uid {uid2}: {now:?}"));
    let want2: Vec<String> = want
        .iter()
        .map(|l| l.replace(&format!(":{uid}:"), &format!(":{uid2}:")))
        .collect();
    ensure!(now == want2, "pin layout {now:?}, want {want2:?}");
    seat_user_opens_its_maps(ctx, uid2, &hid)?;
    old_user_opens_nothing(ctx, uid, &hid)?;
    drop(restore);
    wait_pins(&mut dev, &hid, Some(0), T_UDEV).context("after seat0 was logind's again")?;
    drop(dev);
    wait_unpinned(&hid)?;
    drop(installed);
    Ok(())
}

/// pawl-kernel-reseat.service's last run succeeded (noted in `ctx`).
fn reseat_succeeded(ctx: &mut Ctx) -> anyhow::Result<()> {
    let state = reseat_unit_state();
    ctx.notes.push(format!("reseat.service: {state}"));
    ensure!(
        state.contains("Result=success") && state.contains("ExecMainStatus=0"),
        "the reseat service did not succeed: {state}; {}",
        journal("pawl-kernel-reseat.service", 10)
    );
    Ok(())
}

/// As `uid`, the seat user, `hid`'s three maps and its kernel device open, and root's
/// `link` and `glide` pins are refused (EACCES).
fn seat_user_opens_its_maps(ctx: &mut Ctx, uid: u32, hid: &str) -> anyhow::Result<()> {
    let opened = open_pins_as(uid, hid)?;
    ctx.notes
        .push(format!("uid {uid} opens: {}", opened.replace('\n', "; ")));
    let eacces = libc::EACCES.to_string();
    for l in opened.lines() {
        let (n, r) = l.split_once(' ').unwrap_or((l, ""));
        let ok = match n {
            "settings" | "ring" | "stats" | "kernel-device" => r == "ok",
            _ => r == eacces,
        };
        ensure!(ok, "as uid {uid}: {l} (all: {opened})");
    }
    Ok(())
}

/// As `uid`, a user no longer at the seat, none of `hid`'s pins opens (EACCES) and
/// neither does its kernel device.
fn old_user_opens_nothing(ctx: &mut Ctx, uid: u32, hid: &str) -> anyhow::Result<()> {
    let opened = open_pins_as(uid, hid)?;
    ctx.notes
        .push(format!("uid {uid} opens: {}", opened.replace('\n', "; ")));
    let eacces = libc::EACCES.to_string();
    for l in opened.lines() {
        let (n, r) = l.split_once(' ').unwrap_or((l, ""));
        let refused = if n == "kernel-device" {
            r.starts_with("error")
        } else {
            r == eacces
        };
        ensure!(refused, "as uid {uid}, the old user: {l} (all: {opened})");
    }
    Ok(())
}

/// How many struct_ops links the kernel holds now (HID-BPF attachments of every device:
/// `BPF_LINK_GET_NEXT_ID` as root). Errors: a link the kernel lists but does not describe.
fn struct_ops_links() -> anyhow::Result<usize> {
    use libbpf_rs::libbpf_sys;
    let mut id = 0u32;
    let mut n = 0;
    loop {
        let mut next = 0u32;
        // SAFETY: `next` is a u32 the call writes.
        if unsafe { libbpf_sys::bpf_link_get_next_id(id, &mut next) } != 0 {
            return Ok(n);
        }
        id = next;
        // SAFETY: an id the kernel just listed; the fd is closed below.
        let fd = unsafe { libbpf_sys::bpf_link_get_fd_by_id(id) };
        if fd < 0 {
            // Gone since it was listed.
            continue;
        }
        let mut info = libbpf_sys::bpf_link_info::default();
        let mut len = size_of::<libbpf_sys::bpf_link_info>() as u32;
        // SAFETY: `info` is a bpf_link_info of `len` bytes.
        let r = unsafe { libbpf_sys::bpf_link_get_info_by_fd(fd, &mut info, &mut len) };
        // SAFETY: the fd was returned to us above.
        unsafe { libc::close(fd) };
        ensure!(r == 0, "link {id}: no info ({r})");
        if info.type_ == libbpf_sys::BPF_LINK_TYPE_STRUCT_OPS {
            n += 1;
        }
    }
}

/// The attack an older layout allowed: the device's directory was the seat user's (0700),
/// so its user could move root's `link` and `glide` pins 40 directories down and add
/// entries. A loader upgraded over such a tree hands the mouse over all the same: the
/// scenario attaches for uid 1000, gives the directory to uid 1000 as the old layout did,
/// and as uid 1000 nests `link` and `glide` 40 levels deep and adds a directory. seat0 then
/// goes to uid 1001: the reseat service succeeds, the directory holds exactly the five
/// pins of the new layout for uid 1001, uid 1000 opens none of them, and the kernel holds
/// as many struct_ops links as before (the old attachment is gone, not kept beside the new).
pub fn kernel_mode_an_old_layouts_user_cannot_keep_the_next_users_mouse(
    ctx: &mut Ctx,
) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    needs_hid_bpf()?;
    let (_, uid) = USER;
    let (_, uid2) = SECOND_USER;
    let installed = Installed::package()?;
    let restore = Seat0Restore(std::fs::read_to_string(SEAT0).ok());
    ensure!(
        seat0_uid().is_none(),
        "seat0 has an active user before the scenario: {:?}",
        restore.0
    );
    let (mut dev, _info, hid, _phys) = hires_mouse(ctx)?;
    wait_pins(&mut dev, &hid, None, T_UDEV)?;
    write_seat0_as_logind(Some(uid))?;
    wait_pins(&mut dev, &hid, Some(uid), T_UDEV).context("after seat0 became uid 1000's")?;
    let links = struct_ops_links()?;
    ctx.notes
        .push(format!("struct_ops links with the mouse attached: {links}"));
    ensure!(links >= 1, "no struct_ops link with the mouse attached");

    // The old layout: the directory the seat user's 0700, the pins as they were.
    let dir = pin_dir(&hid);
    std::os::unix::fs::chown(&dir, Some(uid), Some(uid))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    let deep = vec!["d"; 40].join("/");
    let busybox = Path::new(SHARE).join("busybox");
    let steps: &[&[&str]] = &[
        &["mkdir", "-p", &deep],
        &["mv", pins::LINK, &format!("{deep}/{}", pins::LINK)],
        &["mv", pins::GLIDE, &format!("{deep}/{}", pins::GLIDE)],
        &["mkdir", "x"],
    ];
    for a in steps {
        let out = Command::new(&busybox)
            .args(*a)
            .current_dir(&dir)
            .env_clear()
            .uid(uid)
            .gid(uid)
            .output()?;
        ensure!(
            out.status.success(),
            "as uid {uid} in the old layout, `{}`: {} {}",
            a.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    ensure!(
        dir.join(&deep).join(pins::LINK).exists(),
        "the link was not moved down"
    );
    ensure!(
        struct_ops_links()? == links,
        "moving the link pin changed the attachments"
    );

    write_seat0_as_logind(Some(uid2))?;
    wait_pins(&mut dev, &hid, Some(uid2), T_UDEV).with_context(|| {
        format!(
            "after seat0 became uid {uid2}'s over the old layout; reseat: {}; {}",
            reseat_unit_state(),
            journal("pawl-kernel-reseat.service", 10)
        )
    })?;
    reseat_succeeded(ctx)?;
    let m = std::fs::symlink_metadata(&dir)?;
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    ctx.notes.push(format!(
        "after the handover: .:{}:{:o} {names:?}",
        m.uid(),
        m.permissions().mode() & 0o7777
    ));
    ensure!(
        m.uid() == 0 && m.permissions().mode() & 0o7777 == 0o755,
        "the directory is not root's 0755 after the handover"
    );
    ensure!(
        names
            == [
                pins::GLIDE,
                pins::LINK,
                pins::RING,
                pins::SETTINGS,
                pins::STATS
            ],
        "the directory after the handover: {names:?}"
    );
    let now = struct_ops_links()?;
    ensure!(
        now == links,
        "{now} struct_ops links after the handover, {links} before: the old attachment stayed"
    );
    seat_user_opens_its_maps(ctx, uid2, &hid)?;
    old_user_opens_nothing(ctx, uid, &hid)?;
    drop(restore);
    wait_pins(&mut dev, &hid, Some(0), T_UDEV).context("after seat0 was logind's again")?;
    drop(dev);
    wait_unpinned(&hid)?;
    drop(installed);
    Ok(())
}

/// `pawl-kernel-attach ARGS` as root; `(exit code, stdout + stderr)`.
fn loader(args: &[&str]) -> anyhow::Result<(i32, String)> {
    let out = Command::new(crate::scenarios::base::kernel_mode::LOADER)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .context("run the loader")?;
    Ok((
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .trim()
        .to_owned(),
    ))
}

/// Unmounts `path` when dropped (lazily: nothing may keep it).
struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

/// `kernel_mode_detach_removes_every_device_it_can`: two MX Master 3S attached by udevd's
/// loader; one's pin directory is made busy (a tmpfs mounted on a directory in it: rmdir
/// fails with EBUSY, a state root itself cannot remove its way out of). `--detach` (the
/// package's prerm) unpins the busy one's link (its program detached) and detaches the
/// other device whole, reports the busy one, exits non-zero and leaves the pin root
/// mounted (not empty). With the mount gone, `--detach` again removes the rest, exits 0
/// and unmounts the pin root.
pub fn kernel_mode_detach_removes_every_device_it_can(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let installed = Installed::package()?;
    let (mut dev1, _i1, hid1, _p1) = hires_mouse(ctx)?;
    let (mut dev2, _i2, hid2, _p2) = hires_mouse(ctx)?;
    wait_pins(&mut dev1, &hid1, None, T_UDEV)?;
    wait_pins(&mut dev2, &hid2, None, T_UDEV)?;
    let busy = pin_dir(&hid1).join("busy");
    std::fs::create_dir(&busy).context("mkdir in the pin directory as root")?;
    output(
        Command::new("mount")
            .args(["-t", "tmpfs", "tmpfs"])
            .arg(&busy),
    )?;
    let mounted = Unmount(busy.clone());
    let (code, text) = loader(&["--detach"])?;
    ctx.notes
        .push(format!("--detach with one busy directory: {code}: {text}"));
    ensure!(
        code == 1,
        "--detach exited {code} with a busy directory: {text}"
    );
    ensure!(
        text.contains(&hid1) && text.contains("not detached"),
        "--detach does not report {hid1}: {text}"
    );
    ensure!(
        !pin_dir(&hid2).exists(),
        "{hid2} was not detached after {hid1} failed: {text}"
    );
    ensure!(
        !pin_dir(&hid1).join(pins::LINK).exists(),
        "{hid1}'s link is still pinned (its program attached): {text}"
    );
    ensure!(
        is_bpffs_mount(pins::PIN_ROOT),
        "the pin root was unmounted with {hid1}'s directory in it"
    );
    drop(mounted);
    let (code, text) = loader(&["--detach"])?;
    ctx.notes.push(format!("--detach again: {code}: {text}"));
    ensure!(code == 0, "--detach exited {code}: {text}");
    ensure!(
        !is_bpffs_mount(pins::PIN_ROOT),
        "--detach left the pin root mounted: {text}"
    );
    drop(dev1);
    drop(dev2);
    settle()?;
    drop(installed);
    Ok(())
}

/// `kernel_mode_reseat_never_misses_the_last_change`: an MX Master 3S attached, seat0's
/// file is rewritten as logind does 24 times, 40 ms apart, between uid 1000 and 1001
/// (the reseat a path unit started takes longer than that under TCG, so most changes come
/// while it runs), ending at 1001. Once the reseat service is inactive again, the pins
/// are 1001's and stay so, and its last run succeeded. Then the same with a last change
/// to "nobody": root's pins.
pub fn kernel_mode_reseat_never_misses_the_last_change(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let (_, uid) = USER;
    let (_, uid2) = SECOND_USER;
    let installed = Installed::package()?;
    let restore = Seat0Restore(std::fs::read_to_string(SEAT0).ok());
    let (mut dev, _info, hid, _phys) = hires_mouse(ctx)?;
    wait_pins(&mut dev, &hid, None, T_UDEV)?;
    for (last, want) in [(Some(uid2), uid2), (None, 0)] {
        let t = Instant::now();
        for i in 0..24 {
            write_seat0_as_logind(Some(if i % 2 == 0 { uid } else { uid2 }))?;
            dev.pump(Duration::from_millis(40))?;
        }
        write_seat0_as_logind(last)?;
        // The service runs (or is started) for the changes; wait until it is done.
        let deadline = Instant::now() + T_UDEV;
        loop {
            dev.pump(Duration::from_millis(300))?;
            let st = reseat_unit_state();
            if st.contains("ActiveState=inactive") || st.contains("ActiveState=failed") {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "the reseat service is still running: {st}"
            );
        }
        let st = reseat_unit_state();
        let owner = pins::attachment_owner(&pin_dir(&hid));
        ctx.notes.push(format!(
            "last change to {last:?}: {:.1} s, pins of {owner:?}, {st}; runs: {}",
            t.elapsed().as_secs_f64(),
            journal("pawl-kernel-reseat.service", 200)
                .lines()
                .filter(|l| l.contains("reseated"))
                .count()
        ));
        ensure!(
            st.contains("Result=success"),
            "the reseat service failed: {st}; {}",
            journal("pawl-kernel-reseat.service", 10)
        );
        ensure!(
            owner == Some(want),
            "after the last change to {last:?} the pins are {owner:?}'s, want {want}; {}",
            journal("pawl-kernel-reseat.service", 12)
        );
        // And they stay so (no late round of an earlier state).
        dev.pump(Duration::from_secs(2))?;
        let later = pins::attachment_owner(&pin_dir(&hid));
        ensure!(
            later == Some(want),
            "2 s later the pins are {later:?}'s, want {want}"
        );
    }
    drop(restore);
    drop(dev);
    wait_unpinned(&hid)?;
    drop(installed);
    Ok(())
}

/// A seat state file as logind writes it for a seat other than seat0 (`None`: nobody
/// active), renamed into place.
fn write_seat_as_logind(seat: &str, uid: Option<u32>) -> anyhow::Result<()> {
    let path = Path::new(pawl_bpf::attach::SEATS_DIR).join(seat);
    let mut text = "# This is private data. Do not parse.\nIS_SEAT0=0\nCAN_MULTI_SESSION=1\n\
                    CAN_TTY=0\nCAN_GRAPHICAL=0\n"
        .to_owned();
    if let Some(u) = uid {
        text.push_str(&format!(
            "ACTIVE=c{u}\nACTIVE_UID={u}\nSESSIONS=c{u}\nUIDS={u}\n"
        ));
    }
    let tmp = path.with_file_name(format!(".#{seat}pawlvm"));
    std::fs::write(&tmp, text).context("write the seat's temporary file")?;
    std::fs::rename(&tmp, &path).context("rename the seat file into place")
}

/// Removes a file when dropped.
struct RemoveFile(PathBuf);

impl Drop for RemoveFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `kernel_mode_pins_follow_the_devices_own_seat`: a udev rule in `/run/udev/rules.d`
/// gives an MX Master 3S's input device `ID_SEAT=seat1` (as an admin's rule or
/// `loginctl attach` does; this VM has no graphics device, so logind makes no seat1 of
/// its own, and seat1's state file is written as logind writes it). With uid 1001 active
/// on seat1 and uid 1000 on seat0, the mouse's pins are 1001's at its bind and stay so
/// when seat0's file changes; seat1 going to uid 1000 hands them to 1000 (the path unit
/// watching the seats directory), seat1's file gone makes them root's.
pub fn kernel_mode_pins_follow_the_devices_own_seat(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let (_, uid) = USER;
    let (_, uid2) = SECOND_USER;
    let installed = Installed::package()?;
    let restore = Seat0Restore(std::fs::read_to_string(SEAT0).ok());
    let phys = ctx.phys("s");
    let rule = Path::new(RULES_DIR).join("72-pawl-vm-seat1.rules");
    std::fs::write(
        &rule,
        format!(
            "SUBSYSTEM==\"input\", KERNEL==\"input*\", ATTR{{phys}}==\"{phys}\", \
             ENV{{ID_SEAT}}=\"seat1\"\n"
        ),
    )?;
    let _rule = RemoveFile(rule);
    output(Command::new("udevadm").args(["control", "--reload-rules"]))?;
    let seat1 = RemoveFile(Path::new(pawl_bpf::attach::SEATS_DIR).join("seat1"));
    write_seat_as_logind("seat1", Some(uid2))?;
    write_seat0_as_logind(Some(uid))?;
    let mut dev = HidppMouse::create(&ctx.recordings, &phys)?;
    let info = dev.wait_node(T_DEVICE)?;
    let hid = crate::scenarios::base::drivers::hid_device_of(&info)?
        .file_name()
        .context("HID device path without a name")?
        .to_string_lossy()
        .into_owned();
    wait_pins(&mut dev, &hid, Some(uid2), T_UDEV).with_context(|| {
        format!(
            "the mouse on seat1 (udev: {:?}); reseat: {}",
            crate::scenarios::userland_tools::udev_info(&info.path).map(|i| i.tags),
            journal("pawl-kernel-reseat.service", 8)
        )
    })?;
    let input_db: Vec<String> = std::fs::read_dir(
        Path::new(pawl_bpf::attach::SYSFS_HID)
            .join(&hid)
            .join("input"),
    )?
    .flatten()
    .map(|e| {
        let id = format!("+input:{}", e.file_name().to_string_lossy());
        let text = std::fs::read_to_string(Path::new(pawl_bpf::attach::UDEV_DATA).join(&id))
            .unwrap_or_default();
        let seat: Vec<&str> = text.lines().filter(|l| l.contains("SEAT")).collect();
        format!("{id}: {}", seat.join(" "))
    })
    .collect();
    ctx.notes
        .push(format!("the input device's udev seat lines: {input_db:?}"));
    // seat0 changing leaves the seat1 mouse alone.
    write_seat0_as_logind(Some(uid2))?;
    dev.pump(Duration::from_secs(3))?;
    let owner = pins::attachment_owner(&pin_dir(&hid));
    ensure!(
        owner == Some(uid2),
        "after seat0 changed, the seat1 mouse's pins are {owner:?}'s"
    );
    write_seat_as_logind("seat1", Some(uid))?;
    wait_pins(&mut dev, &hid, Some(uid), T_UDEV).with_context(|| {
        format!(
            "after seat1 went to uid {uid}; reseat: {} {}",
            reseat_unit_state(),
            journal("pawl-kernel-reseat.service", 8)
        )
    })?;
    drop(seat1);
    wait_pins(&mut dev, &hid, Some(0), T_UDEV).context("after seat1's file went")?;
    drop(restore);
    drop(dev);
    wait_unpinned(&hid)?;
    drop(installed);
    Ok(())
}
