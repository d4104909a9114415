//! GNOME Shell and KWin telling pawl which application is focused, on the userland boot:
//! Debian's gnome-shell 43 (`--headless`, mutter's surfaceless renderer on llvmpipe) with
//! pawl's GNOME Shell extension from `contrib/gnome-shell/legacy/` (the one the package
//! installs), and Debian's kwin_wayland 5.27 (`--virtual`) into which pawl loads its own
//! KWin script. Each runs on a session bus of its own; the focused window is a real Wayland
//! client (this driver's `--wayland-window`) the shell maps and
//! focuses itself. Neither shell reads input here (headless and virtual read no libinput),
//! so the input side of per-app profiles is sway's scenarios'; these check focus delivery.
//!
//! pawl runs as root in the VM (it opens uinput and hidraw); on a desktop it runs as the user,
//! the same user as the shell and its session bus. GNOME runs as the plain user here, on a
//! bus that admits any user (`<allow user="*"/>`; a stock session bus admits only its
//! owner). KDE runs as root, as pawl does: KWin reads the script from the file pawl writes in
//! its own private (0700) runtime directory.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::compositor::{Mouse, falls_back_once, tail, wait_status_within};
use crate::scenarios::userland_tools::{USER, output};
use crate::scenarios::{Ctx, Scenario, T_DEVICE};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    per_app_gnome_extension_reports_focus,
    per_app_kwin_script_reports_focus
];

/// How long a shell may take to come up (and its bus name to appear) under TCG.
const T_SHELL: Duration = Duration::from_secs(180);

/// How long a shell may take to map a window and focus it under TCG.
const T_FOCUS: Duration = Duration::from_secs(60);

/// The device profile and `[[app]]` tables for the app id "AppA" and for "AppB"'s windows
/// titled "Video…": no smoothing, so one detent is one frame of ±120 v120 (an MX Master's
/// default inverts it: -120 for a detent up; the tables turn the inversion off).
const CONFIG: &str = "[scroll]\nsmoothing = \"none\"\n\n\
    [[app]]\napp_id = \"AppA\"\n[app.scroll]\ninvert_vertical = false\n\n\
    [[app]]\napp_id = \"AppB\"\ntitle = \"^Video\"\n[app.scroll]\ninvert_vertical = false\n";

/// pawl's GNOME Shell extension for GNOME 42 to 44, as the package installs it.
const EXTENSION_JS: &str = include_str!("../../../../../contrib/gnome-shell/legacy/extension.js");
/// Its metadata.
const EXTENSION_METADATA: &str =
    include_str!("../../../../../contrib/gnome-shell/legacy/metadata.json");
/// Its uuid (the directory it is installed in).
const EXTENSION_UUID: &str = "focus@pawl.github.io";

/// pawl's log line when the shell leaves the bus.
const CLOSED: &str = "focus: the desktop shell on the session bus closed";

/// A session bus config: Debian's session bus, admitting every user.
const BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/session.conf</include>
  <policy context="default"><allow user="*"/></policy>
</busconfig>
"#;

/// A desktop session: its buses, the shell and the windows, killed when dropped.
struct Desktop {
    dir: PathBuf,
    /// The session bus, and a second bus gnome-shell takes as its system bus (it gives up
    /// without one: its power indicator's UPower proxy cannot connect).
    buses: Vec<Child>,
    /// The session bus's address.
    address: String,
    /// The other bus's address.
    system_address: String,
    shell: Option<Child>,
    /// The shell's Wayland socket name.
    display: String,
    windows: Vec<(String, Child)>,
    /// The user the buses, the shell and the windows run as.
    uid: u32,
}

impl Desktop {
    /// The two buses, as `uid`, in `dir` (which becomes theirs).
    fn start(dir: &Path, uid: u32) -> anyhow::Result<Desktop> {
        chown(dir, uid)?;
        let runtime = runtime_dir(uid)?;
        let config = dir.join("bus.conf");
        std::fs::write(&config, BUS_CONFIG)?;
        let mut d = Desktop {
            dir: dir.to_owned(),
            buses: Vec::new(),
            address: String::new(),
            system_address: String::new(),
            shell: None,
            display: String::new(),
            windows: Vec::new(),
            uid,
        };
        for name in ["session", "system"] {
            let path = runtime.join(format!("{name}-bus"));
            let address = format!("unix:path={}", path.display());
            let log = std::fs::File::create(dir.join(format!("{name}-bus.log")))?;
            let bus = Command::new("dbus-daemon")
                .arg(format!("--config-file={}", config.display()))
                .arg(format!("--address={address}"))
                .arg("--nofork")
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                // dconf's service, which the bus starts, writes where gsettings' readers
                // read: the same HOME.
                .env("HOME", dir)
                .env("XDG_RUNTIME_DIR", &runtime)
                .uid(uid)
                .gid(uid)
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
                .context("cannot start dbus-daemon")?;
            d.buses.push(bus);
            let deadline = Instant::now() + T_DEVICE;
            while !path.exists() {
                if Instant::now() >= deadline {
                    bail!("dbus-daemon made no {} within {T_DEVICE:?}", path.display());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if name == "session" {
                d.address = address;
            } else {
                d.system_address = address;
            }
        }
        Ok(d)
    }

    /// `program` as the session's user in the session: its output in `log`.
    fn user_command(&self, program: &str, log: &str) -> anyhow::Result<Command> {
        let uid = self.uid;
        let runtime = runtime_dir(uid)?;
        let log = std::fs::File::create(self.dir.join(log))?;
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.dir)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env(
                "XDG_DATA_DIRS",
                format!(
                    "{}:/usr/local/share:/usr/share",
                    self.dir.join("share").display()
                ),
            )
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.system_address)
            .uid(uid)
            .gid(uid)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        Ok(cmd)
    }

    /// `gdbus ARGS` on the session bus, as the plain user; its output.
    fn gdbus(&self, args: &[&str]) -> anyhow::Result<String> {
        let mut cmd = self.user_command("gdbus", "gdbus.log")?;
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        output(cmd.args(args))
    }

    /// Waits until `ready` holds (checked every 200 ms) while the shell runs.
    fn wait_shell(
        &mut self,
        what: &str,
        log: &str,
        mut ready: impl FnMut(&Desktop) -> bool,
    ) -> anyhow::Result<Duration> {
        let t = Instant::now();
        loop {
            if ready(self) {
                return Ok(t.elapsed());
            }
            if let Some(shell) = self.shell.as_mut()
                && let Some(status) = shell.try_wait()?
            {
                bail!(
                    "the shell exited ({status}) before {what}; log:\n{}",
                    self.log(log)
                );
            }
            if t.elapsed() >= T_SHELL {
                bail!("no {what} within {T_SHELL:?}; log:\n{}", self.log(log));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log(&self, name: &str) -> String {
        tail(
            &std::fs::read_to_string(self.dir.join(name)).unwrap_or_default(),
            40,
        )
    }

    /// Maps a Wayland window with `app_id` on the shell's socket; the shell focuses it.
    fn window(&mut self, app_id: &str) -> anyhow::Result<()> {
        let child = self
            .user_command(
                std::env::current_exe()?.to_str().context("driver path")?,
                &format!("window-{app_id}.log"),
            )?
            .env("WAYLAND_DISPLAY", &self.display)
            .args(["--wayland-window", app_id])
            .stdin(Stdio::piped())
            .spawn()
            .context("cannot start the Wayland window")?;
        self.windows.push((app_id.to_owned(), child));
        Ok(())
    }

    /// Sets the title of `app_id`'s window (its client reads titles on stdin).
    fn set_title(&mut self, app_id: &str, title: &str) -> anyhow::Result<()> {
        use std::io::Write;
        let (_, child) = self
            .windows
            .iter_mut()
            .find(|(a, _)| a == app_id)
            .with_context(|| format!("no window {app_id}"))?;
        let pipe = child.stdin.as_mut().context("the window's stdin")?;
        writeln!(pipe, "{title}")?;
        Ok(())
    }

    /// Closes the window of `app_id` (its client exits); the shell focuses another.
    fn close(&mut self, app_id: &str) -> anyhow::Result<()> {
        let i = self
            .windows
            .iter()
            .position(|(a, _)| a == app_id)
            .with_context(|| format!("no window {app_id}"))?;
        let (_, mut child) = self.windows.remove(i);
        child.kill()?;
        child.wait()?;
        Ok(())
    }

    /// Stops the shell (SIGKILL), as a crash or a logout ends it.
    fn stop_shell(&mut self) -> anyhow::Result<()> {
        if let Some(mut shell) = self.shell.take() {
            shell.kill()?;
            shell.wait()?;
        }
        Ok(())
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        for (_, child) in self.windows.iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = self.stop_shell();
        for bus in &mut self.buses {
            let _ = bus.kill();
            let _ = bus.wait();
        }
    }
}

/// `/run/user/UID` of `uid`, made (0700, theirs) when missing.
fn runtime_dir(uid: u32) -> anyhow::Result<PathBuf> {
    let runtime = PathBuf::from(format!("/run/user/{uid}"));
    std::fs::create_dir_all(&runtime)?;
    std::os::unix::fs::chown(&runtime, Some(uid), Some(uid))?;
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )?;
    Ok(runtime)
}

/// Makes `dir` and everything in it `uid`'s.
fn chown(dir: &Path, uid: u32) -> anyhow::Result<()> {
    for entry in walk(dir)? {
        std::os::unix::fs::lchown(&entry, Some(uid), Some(uid))?;
    }
    Ok(())
}

fn walk(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = vec![dir.to_owned()];
    if dir.is_dir() {
        for e in std::fs::read_dir(dir)? {
            out.extend(walk(&e?.path())?);
        }
    }
    Ok(out)
}

/// pawl's threads, each `comm: switches`, for a failure message.
fn threads(pid: u32) -> String {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let switches: u64 = status
            .lines()
            .filter_map(|l| {
                l.strip_prefix("voluntary_ctxt_switches:")
                    .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
            })
            .filter_map(|v| v.trim().parse::<u64>().ok())
            .sum();
        out.push(format!("{}: {switches}", comm.trim()));
    }
    out.join(", ")
}

/// Waits until `pawl status` names `app` with `profile`; the text, noted.
fn focus_and_wait(
    ctx: &mut Ctx,
    m: &Mouse,
    backend: &str,
    app: &str,
    profile: &str,
    why: &str,
) -> anyhow::Result<String> {
    let want = format!("focus:   {backend}, app {app}, profile {profile}");
    let status = wait_status_within(ctx, &m.work()?, &want, T_FOCUS)
        .with_context(|| format!("{why}; pawl log: {}", m.pawl.log()))?;
    ctx.notes.push(format!("$ pawl status ({why})\n{status}"));
    Ok(status)
}

/// The part both shells share once pawl runs: AppA and AppB mapped in turn, AppB's client
/// retitling its window "Video - cats" and then "Docs - notes", and AppB closed move `pawl
/// status` and the scroll profile (a detent up is +120 v120 under AppA and under AppB's
/// "Video" title, -120 under AppB otherwise); with focus still pawl makes no context switch in 10 s; the shell killed, pawl logs
/// `closed_line` once, says the device profiles are in force and spends no CPU.
fn focus_round(
    ctx: &mut Ctx,
    d: &mut Desktop,
    m: &mut Mouse,
    backend: &str,
    closed_line: &str,
) -> anyhow::Result<()> {
    d.window("AppA")?;
    focus_and_wait(ctx, m, backend, "AppA", "app AppA", "AppA mapped")?;
    let v = m.detent_up()?;
    ensure!(
        v == 120,
        "AppA focused: a detent up gave {v} v120, want +120"
    );
    d.window("AppB")?;
    focus_and_wait(ctx, m, backend, "AppB", "device", "AppB mapped")?;
    let v = m.detent_up()?;
    ensure!(
        v == -120,
        "AppB focused: a detent up gave {v} v120, want -120"
    );
    // The shell pushes a title change of the focused window: AppB's title table applies.
    d.set_title("AppB", "Video - cats")?;
    let video = "app AppB ([[app]] at line 9)";
    focus_and_wait(ctx, m, backend, "AppB", video, "AppB titled Video")?;
    let v = m.detent_up()?;
    ensure!(
        v == 120,
        "AppB titled Video: a detent up gave {v} v120, want +120"
    );
    d.set_title("AppB", "Docs - notes")?;
    focus_and_wait(ctx, m, backend, "AppB", "device", "AppB titled Docs")?;
    let v = m.detent_up()?;
    ensure!(
        v == -120,
        "AppB titled Docs: a detent up gave {v} v120, want -120"
    );
    d.close("AppB")?;
    focus_and_wait(ctx, m, backend, "AppA", "app AppA", "AppB closed")?;
    let v = m.detent_up()?;
    ensure!(
        v == 120,
        "AppA focused again: a detent up gave {v} v120, want +120"
    );

    // Idle with the shell running: nothing runs between focus changes. The last `pawl
    // status` query's connection ends first.
    std::thread::sleep(Duration::from_millis(1500));
    let (r0, _, s0) = m.pawl.counters()?;
    std::thread::sleep(Duration::from_secs(10));
    let (r1, _, s1) = m.pawl.counters()?;
    ensure!(
        s1 == s0 && r1 == r0,
        "pawl woke with focus still and no input: {} context switches, {} reads in 10 s; \
         its threads now: {}",
        s1 - s0,
        r1 - r0,
        threads(m.pawl.pid())
    );
    ctx.notes.push(format!(
        "idle 10 s with {backend} running: 0 context switches, 0 reads (all of pawl's threads)"
    ));

    d.stop_shell()?;
    let open = backend
        .strip_suffix(')')
        .context("a backend named with its kind")?;
    let after = format!("focus:   {open}, closed: device profiles), app unknown, profile device");
    falls_back_once(ctx, m, "the shell", &after, closed_line)?;
    let v = m.detent_up()?;
    ensure!(
        v == -120,
        "the shell gone: a detent up gave {v} v120, want -120"
    );
    Ok(())
}

/// `per_app_gnome_extension_reports_focus`: Debian's gnome-shell 43, headless, with pawl's
/// extension (`contrib/gnome-shell/legacy/`) installed in the user's data dir and enabled in
/// gsettings before the shell starts, as `gnome-extensions enable` leaves it. The shell
/// starts in the overview, where it focuses no new window; the scenario leaves it through
/// the shell's own `OverviewActive` property, as Escape would. pawl (`XDG_CURRENT_DESKTOP=
/// GNOME`, `WAYLAND_DISPLAY`) owns its name; the extension pushes the current (no) app as
/// the name appears, then AppA and AppB mapped in turn and AppB closed move `pawl status`
/// and the scroll profile. No wake-up in 10 s idle; the shell killed, the device profiles
/// (one log line, no busy loop).
pub fn per_app_gnome_extension_reports_focus(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("gnome")?;
    let ext = dir
        .join("share/gnome-shell/extensions")
        .join(EXTENSION_UUID);
    std::fs::create_dir_all(&ext)?;
    std::fs::write(ext.join("extension.js"), EXTENSION_JS)?;
    std::fs::write(ext.join("metadata.json"), EXTENSION_METADATA)?;
    let mut d = Desktop::start(&dir, USER.1)?;
    output(
        d.user_command("gsettings", "gsettings.log")?
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .args(["set", "org.gnome.shell", "enabled-extensions"])
            .arg(format!("['{EXTENSION_UUID}']")),
    )
    .context("gsettings set org.gnome.shell enabled-extensions")?;
    let shell = d
        .user_command("gnome-shell", "gnome-shell.log")?
        .args([
            "--headless",
            "--wayland",
            "--no-x11",
            "--virtual-monitor",
            "800x600",
        ])
        .spawn()
        .context("cannot start gnome-shell")?;
    d.shell = Some(shell);
    let info_args = [
        "call",
        "--session",
        "-d",
        "org.gnome.Shell",
        "-o",
        "/org/gnome/Shell",
        "-m",
        "org.gnome.Shell.Extensions.GetExtensionInfo",
        EXTENSION_UUID,
    ];
    // State 1 is ENABLED (js/misc/extensionUtils.js ExtensionState).
    let mut last = String::new();
    let up = d
        .wait_shell("extension enabled", "gnome-shell.log", |d| {
            match d.gdbus(&info_args) {
                Ok(t) => {
                    let on = t.contains("'state': <1.0>");
                    last = t;
                    on
                }
                Err(e) => {
                    last = format!("{e:#}");
                    false
                }
            }
        })
        .with_context(|| format!("last GetExtensionInfo: {last}"))?;
    let info = d.gdbus(&info_args)?;
    ctx.notes.push(format!(
        "gnome-shell --headless up, extension enabled after {:.1} s: {}",
        up.as_secs_f64(),
        info.trim()
    ));
    let get = [
        "call",
        "--session",
        "-d",
        "org.gnome.Shell",
        "-o",
        "/org/gnome/Shell",
        "-m",
        "org.freedesktop.DBus.Properties.Get",
        "org.gnome.Shell",
        "OverviewActive",
    ];
    let set = [
        "call",
        "--session",
        "-d",
        "org.gnome.Shell",
        "-o",
        "/org/gnome/Shell",
        "-m",
        "org.freedesktop.DBus.Properties.Set",
        "org.gnome.Shell",
        "OverviewActive",
        "<false>",
    ];
    // The shell shows the overview as its start-up animation ends, when it logs "GNOME
    // Shell started at" (js/ui/main.js, on `startup-complete`): hidden after that, until it
    // reads hidden.
    d.wait_shell("start-up complete", "gnome-shell.log", |d| {
        std::fs::read_to_string(d.dir.join("gnome-shell.log"))
            .is_ok_and(|t| t.contains("GNOME Shell started at"))
    })?;
    d.wait_shell("overview hidden", "gnome-shell.log", |d| {
        if d.gdbus(&get).is_ok_and(|t| t.contains("<false>")) {
            return true;
        }
        let _ = d.gdbus(&set);
        std::thread::sleep(Duration::from_millis(800));
        false
    })?;
    d.display = "wayland-0".into();
    let address = PathBuf::from(&d.address);
    let display = PathBuf::from(&d.display);
    let mut m = Mouse::start_desktop(
        ctx,
        CONFIG,
        "GNOME",
        &[
            ("DBUS_SESSION_BUS_ADDRESS", &address),
            ("WAYLAND_DISPLAY", &display),
        ],
    )?;
    // The extension pushes the current focus (none) when pawl's name appears.
    focus_and_wait(
        ctx,
        &m,
        "gnome (extension)",
        "unknown",
        "device",
        "pawl started",
    )?;
    focus_round(ctx, &mut d, &mut m, "gnome (extension)", CLOSED)
}

/// `per_app_kwin_script_reports_focus`: Debian's kwin_wayland 5.27 (`--virtual`) on the
/// session bus; pawl (`XDG_CURRENT_DESKTOP=KDE`) writes its KWin script and loads it through
/// KWin's `org.kde.kwin.Scripting`, nothing installed by hand (KWin, its bus and windows run
/// as root here, as pawl does). The script pushes the active
/// window on load (none), then AppA and AppB mapped in turn and AppB closed move `pawl
/// status` and the scroll profile. No wake-up in 10 s idle; KWin killed, the device profiles
/// (one log line, no busy loop).
pub fn per_app_kwin_script_reports_focus(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("kwin")?;
    let mut d = Desktop::start(&dir, 0)?;
    d.display = "wayland-1".into();
    let shell = d
        .user_command("kwin_wayland", "kwin.log")?
        .args([
            "--virtual",
            "--no-lockscreen",
            "--no-global-shortcuts",
            "--socket",
            &d.display,
        ])
        .spawn()
        .context("cannot start kwin_wayland")?;
    d.shell = Some(shell);
    let up = d.wait_shell("org.kde.KWin /Scripting", "kwin.log", |d| {
        d.gdbus(&[
            "introspect",
            "--session",
            "-d",
            "org.kde.KWin",
            "-o",
            "/Scripting",
        ])
        .is_ok_and(|t| t.contains("loadScript"))
    })?;
    ctx.notes.push(format!(
        "kwin_wayland --virtual up, /Scripting on the bus after {:.1} s",
        up.as_secs_f64()
    ));
    let address = PathBuf::from(&d.address);
    let display = PathBuf::from(&d.display);
    let mut m = Mouse::start_desktop(
        ctx,
        CONFIG,
        "KDE",
        &[
            ("DBUS_SESSION_BUS_ADDRESS", &address),
            ("WAYLAND_DISPLAY", &display),
        ],
    )?;
    focus_and_wait(
        ctx,
        &m,
        "kde (kwin script)",
        "unknown",
        "device",
        "pawl started",
    )?;
    focus_round(ctx, &mut d, &mut m, "kde (kwin script)", CLOSED)
}
