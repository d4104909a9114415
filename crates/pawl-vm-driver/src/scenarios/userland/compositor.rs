//! A real Wayland compositor on pawl's devices (userland boot): Debian's sway (wlroots,
//! headless outputs, libinput input, pixman renderer) run as the plain user with its seat
//! from seatd; the desktop moving is read back through sway's IPC.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::evdev::{EvdevNode, Event};
use crate::hid::MX_MASTER_3S_BT;
use crate::hidpp_mouse::HidppMouse;
use crate::pawl::{Pawl, PawlOptions, VIRTUAL_KEYBOARD_NAME};
use crate::scenarios::Scenario;
use crate::scenarios::rig::Rig;
use crate::scenarios::userland_tools::{USER, output, settle};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    compositor_workspace_follows_gesture,
    per_app_scroll_follows_focus_on_sway,
    per_app_scroll_follows_focus_in_kernel_mode,
    per_app_gesture_action_follows_focus_on_sway,
    per_app_unknown_app_uses_the_device_profile,
    per_app_focus_before_pawl_starts_applies_at_once,
    per_app_title_follows_the_focused_windows_title_on_sway,
    per_app_backend_gone_falls_back_and_says_so,
    per_app_wayland_toplevel_list_follows_focus_and_titles,
];

/// How long sway may take to open its IPC socket under TCG (~2.5 s measured, unloaded).
const T_SWAY: Duration = Duration::from_secs(60);

/// sway's config: one headless output, the desktop-left/right shortcuts pawl presses on
/// GNOME (Super+Page_Up / Super+Page_Down) bound to the workspaces "left" and "right", and
/// workspace "1" focused at the start.
const SWAY_CONFIG: &str = "output HEADLESS-1 resolution 800x600\n\
    bindsym Mod4+Page_Up workspace left\n\
    bindsym Mod4+Page_Down workspace right\n\
    workspace 1\n";

/// seatd and sway as the plain user, stopped (killed) when dropped.
pub(crate) struct Sway {
    seatd: Child,
    sway: Child,
    /// sway's IPC socket (`SWAYSOCK`), the same path inside and outside [`Sway::root`].
    pub(crate) socket: PathBuf,
    log: PathBuf,
    /// The Debian root seatd, sway and swaymsg run in (`None`: `/`, the userland boot).
    root: Option<PathBuf>,
    /// The Wayland windows mapped with [`Sway::window`].
    windows: Vec<Child>,
}

/// `program` of the Debian userland as user and group `ids` (`None`: as the driver): from
/// `PATH` when the driver runs in that userland (`root` `None`), else from the root's
/// `/usr/sbin` or `/usr/bin`, chrooted into `root` (`cargo xtask perf-vm` mounts the same root beside its initramfs,
/// with `/dev`, `/proc`, `/sys`, `/run` and `/tmp` bound in, so paths are the same
/// inside and out).
pub(crate) fn debian_command(
    root: Option<&Path>,
    program: &str,
    ids: Option<(u32, u32)>,
) -> Command {
    let Some(root) = root else {
        let mut cmd = Command::new(program);
        if let Some((uid, gid)) = ids {
            cmd.uid(uid).gid(gid);
        }
        return cmd;
    };
    let dir = if root.join("usr/sbin").join(program).is_file() {
        "/usr/sbin"
    } else {
        "/usr/bin"
    };
    let mut cmd = Command::new(Path::new(dir).join(program));
    let root = std::ffi::CString::new(root.as_os_str().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: between fork and exec the closure makes only async-signal-safe system calls
    // on memory allocated before the fork. The ids are dropped after the chroot, which
    // needs root (std's `uid`/`gid` would drop them first).
    unsafe {
        cmd.pre_exec(move || {
            let fail = |rc: libc::c_int| {
                if rc == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            };
            fail(libc::chroot(root.as_ptr()))?;
            fail(libc::chdir(c"/".as_ptr()))?;
            if let Some((uid, gid)) = ids {
                fail(libc::setgroups(0, std::ptr::null()))?;
                fail(libc::setgid(gid))?;
                fail(libc::setuid(uid))?;
            }
            Ok(())
        });
    }
    cmd
}

impl Sway {
    fn start(dir: &Path) -> anyhow::Result<Sway> {
        Sway::start_in(dir, None, "headless,libinput")
    }

    /// seatd and sway with `WLR_BACKENDS=backends`, run in the Debian `root`
    /// ([`debian_command`]); the config, logs and windows' logs go to `dir`.
    pub(crate) fn start_in(
        dir: &Path,
        root: Option<&Path>,
        backends: &str,
    ) -> anyhow::Result<Sway> {
        let (user, uid) = USER;
        let runtime = PathBuf::from(format!("/run/user/{uid}"));
        std::fs::create_dir_all(&runtime)?;
        std::os::unix::fs::chown(&runtime, Some(uid), Some(uid))?;
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )?;
        let seatd_log = std::fs::File::create(dir.join("seatd.log"))?;
        let seatd = debian_command(root, "seatd", None)
            .args(["-u", user])
            .stdin(Stdio::null())
            .stdout(seatd_log.try_clone()?)
            .stderr(seatd_log)
            .spawn()
            .context("cannot start seatd")?;
        let seat_socket = Path::new("/run/seatd.sock");
        let deadline = Instant::now() + T_DEVICE;
        while !seat_socket.exists() {
            if Instant::now() >= deadline {
                bail!(
                    "seatd made no {} within {T_DEVICE:?}",
                    seat_socket.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let config = dir.join("sway.config");
        std::fs::write(&config, SWAY_CONFIG)?;
        let log = dir.join("sway.log");
        let log_file = std::fs::File::create(&log)?;
        let sway = debian_command(root, "sway", Some((uid, uid)))
            .arg("-c")
            .arg(&config)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &runtime)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("WLR_BACKENDS", backends)
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env("LIBSEAT_BACKEND", "seatd")
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .spawn()
            .context("cannot start sway")?;
        let mut s = Sway {
            seatd,
            sway,
            socket: PathBuf::new(),
            log,
            root: root.map(Path::to_path_buf),
            windows: Vec::new(),
        };
        let deadline = Instant::now() + T_SWAY;
        loop {
            let found = std::fs::read_dir(&runtime)?
                .flatten()
                .map(|e| e.path())
                .find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("sway-ipc.") && n.ends_with(".sock"))
                });
            if let Some(socket) = found {
                s.socket = socket;
                if s.msg(&["-t", "get_version"]).is_ok() {
                    return Ok(s);
                }
            }
            if let Some(status) = s.sway.try_wait()? {
                bail!("sway exited ({status}) at start; log:\n{}", s.log());
            }
            if Instant::now() >= deadline {
                bail!(
                    "sway opened no IPC socket within {T_SWAY:?}; log:\n{}",
                    s.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `swaymsg -s <socket> args…`.
    pub(crate) fn msg(&self, args: &[&str]) -> anyhow::Result<String> {
        output(
            debian_command(self.root.as_deref(), "swaymsg", None)
                .arg("-s")
                .arg(&self.socket)
                .args(args),
        )
    }

    /// The focused workspace's name, from `swaymsg -t get_workspaces -p` ("Workspace NAME
    /// (focused)").
    fn focused(&self) -> anyhow::Result<String> {
        let text = self.msg(&["-p", "-t", "get_workspaces"])?;
        text.lines()
            .find_map(|l| {
                l.strip_prefix("Workspace ")?
                    .strip_suffix(" (focused)")
                    .map(str::to_owned)
            })
            .with_context(|| format!("no focused workspace in {text:?}"))
    }

    /// Waits until workspace `want` is focused.
    fn wait_focused(&self, want: &str, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let now = self.focused()?;
            if now == want {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "sway's focused workspace is {now:?}, not {want:?}, {timeout:?} after the gesture; sway log:\n{}",
                    tail(&self.log(), 30)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// sway's Wayland socket, `/run/user/UID/wayland-N` (absolute, so that it works as
    /// `WAYLAND_DISPLAY` whatever the client's `XDG_RUNTIME_DIR`).
    pub(crate) fn wayland_socket(&self) -> anyhow::Result<PathBuf> {
        let (_, uid) = USER;
        let runtime = PathBuf::from(format!("/run/user/{uid}"));
        std::fs::read_dir(&runtime)?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("wayland-") && !n.ends_with(".lock"))
            })
            .context("sway made no wayland-N socket")
    }

    /// Maps a Wayland window with `app_id` (this driver's `--wayland-window`, run as the
    /// plain user on sway's socket) and waits until sway's tree has it; it is focused then
    /// (sway focuses a new window).
    pub(crate) fn window(&mut self, app_id: &str) -> anyhow::Result<()> {
        self.spawn_window(app_id, Stdio::null()).map(drop)
    }

    /// [`Sway::window`] whose title is each line written to the pipe returned.
    fn titled_window(&mut self, app_id: &str) -> anyhow::Result<std::process::ChildStdin> {
        self.spawn_window(app_id, Stdio::piped())?
            .context("the window's stdin is not a pipe")
    }

    fn spawn_window(
        &mut self,
        app_id: &str,
        stdin: Stdio,
    ) -> anyhow::Result<Option<std::process::ChildStdin>> {
        let (_, uid) = USER;
        let runtime = PathBuf::from(format!("/run/user/{uid}"));
        let display = self.wayland_socket()?;
        let log = std::fs::File::create(self.log.with_file_name(format!("window-{app_id}.log")))?;
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--wayland-window", app_id])
            .env_clear()
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("WAYLAND_DISPLAY", &display)
            .uid(uid)
            .gid(uid)
            .stdin(stdin)
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start the Wayland window")?;
        let pipe = child.stdin.take();
        self.windows.push(child);
        let want = format!("\"app_id\": \"{app_id}\"");
        let deadline = Instant::now() + T_DEVICE;
        loop {
            if self.msg(&["-t", "get_tree"])?.contains(&want) {
                return Ok(pipe);
            }
            if Instant::now() >= deadline {
                bail!(
                    "sway has no window {app_id:?} after {T_DEVICE:?}; log:\n{}",
                    tail(&self.log(), 30)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Focuses the window of `app_id` (`swaymsg '[app_id="…"] focus'`).
    pub(crate) fn focus_app(&self, app_id: &str) -> anyhow::Result<()> {
        self.msg(&[&format!("[app_id=\"{app_id}\"] focus")])
            .map(drop)
    }

    /// Waits until sway's libinput has taken (`present`) or dropped pawl's device named
    /// `name` (`get_inputs`).
    fn wait_input(&self, name: &str, present: bool) -> anyhow::Result<()> {
        let deadline = Instant::now() + T_DEVICE;
        loop {
            let inputs = self.msg(&["-p", "-t", "get_inputs"])?;
            if inputs.contains(name) == present {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "sway {} input {name:?} after {T_DEVICE:?}: {inputs}",
                    if present { "has no" } else { "still has" }
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Sway {
    fn drop(&mut self) {
        for child in self
            .windows
            .iter_mut()
            .chain([&mut self.sway, &mut self.seatd])
        {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file("/run/seatd.sock");
    }
}

/// The uhid MX Master 3S speaking HID++, pawl on it with `config` (default `[hidpp]
/// enabled`: its gesture button diverted with raw XY, as on a real 3S, which sends nothing
/// for that button otherwise) and pawl's clone; unlike [`Rig`] it does not need a virtual
/// keyboard (the `command` backend makes none).
pub(super) struct Mouse {
    mouse: HidppMouse,
    clone: EvdevNode,
    pub(super) pawl: Pawl,
}

impl Mouse {
    fn start(ctx: &mut Ctx, config: &str) -> anyhow::Result<Mouse> {
        Mouse::start_env(ctx, config, &[])
    }

    /// [`Mouse::start`] with `env` added to pawl's environment.
    pub(super) fn start_env(
        ctx: &mut Ctx,
        config: &str,
        env: &[(&str, &Path)],
    ) -> anyhow::Result<Mouse> {
        Mouse::start_desktop(ctx, config, "GNOME", env)
    }

    /// [`Mouse::start_env`] with `XDG_CURRENT_DESKTOP=desktop`.
    pub(super) fn start_desktop(
        ctx: &mut Ctx,
        config: &str,
        desktop: &str,
        env: &[(&str, &Path)],
    ) -> anyhow::Result<Mouse> {
        let phys = ctx.phys("bt");
        let mut mouse = HidppMouse::create(&ctx.recordings, &phys)?;
        let source = mouse.wait_node(T_DEVICE)?;
        let dir = ctx.subdir(&format!("pawl-{phys}"))?;
        let mut pawl = Pawl::start_env(
            &ctx.pawl,
            &dir,
            &PawlOptions {
                config,
                desktop,
                run_args: &[],
                debug: ctx.pawl_debug,
            },
            None,
            env,
        )?;
        let clone = pawl.wait_clone(&source, T_DEVICE)?;
        mouse
            .pump_until("pawl diverts the gesture button", T_DEVICE, |d| {
                d.gesture_diverted()
            })
            .with_context(|| format!("pawl log: {}", pawl.log()))?;
        let mut m = Mouse { mouse, clone, pawl };
        m.sentinel()?;
        Ok(m)
    }

    /// A motion that must come out of the clone: pawl has handled everything before it.
    pub(super) fn sentinel(&mut self) -> anyhow::Result<()> {
        use pawl_evdev::codes::{EV_REL, REL_X, REL_Y};
        self.mouse.mouse.motion(7, -5)?;
        let want = vec![Event::new(EV_REL, REL_X, 7), Event::new(EV_REL, REL_Y, -5)];
        self.clone
            .frames_until(T_EVENT, "sentinel motion", |f| *f == want)
            .with_context(|| format!("pawl log: {}", self.pawl.log()))
            .map(drop)
    }

    /// Holds the diverted gesture button, moves `dx` right in ten raw-XY reports, releases
    /// (HID++ notifications, as a real 3S sends them).
    fn drag(&mut self, dx: i16) -> anyhow::Result<()> {
        self.mouse.gesture(dx, 0, 10)?;
        self.sentinel()
    }
}

pub(super) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `compositor_workspace_follows_gesture`: sway runs on pawl's devices; a drag right with
/// the gesture button of the uhid MX Master 3S — diverted by pawl over HID++, so the press,
/// the raw XY and the release arrive as HID++ notifications, as from a real 3S with pawl's
/// defaults — (default `invert_desktop = true`: the
/// "desktop-left" action) moves sway to workspace "left", read back with
/// `swaymsg -t get_workspaces`, with each action backend:
/// - `command`: `[actions.commands]` runs `swaymsg workspace left` (pawl runs as root,
///   `allow_root_commands`);
/// - `keys`: pawl presses GNOME's Super+Page_Up on its virtual keyboard, which sway reads
///   through libinput and has bound to `workspace left`.
pub fn compositor_workspace_follows_gesture(ctx: &mut Ctx) -> anyhow::Result<()> {
    const DRAG: i16 = 600;
    let dir = ctx.subdir("sway")?;
    // The mouse and pawl first (as at login); sway picks up what pawl creates later too.
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, "", "GNOME")?;
    settle()?;
    let sway = Sway::start(&dir)?;
    let first = sway.focused()?;
    ensure!(
        first == "1",
        "sway starts on workspace {first:?}, not \"1\""
    );
    rig.stop()?;
    drop(rig);
    sway.wait_input(VIRTUAL_KEYBOARD_NAME, false)?;

    let socket = sway.socket.display().to_string();
    let command =
        |ws: &str| format!("[\"/usr/bin/swaymsg\", \"-s\", {socket:?}, \"workspace\", {ws:?}]");
    let command_config = format!(
        "[actions]\nbackend = \"command\"\nallow_root_commands = true\n\n[actions.commands]\n\
         desktop-left = {}\ndesktop-right = {}\n",
        command("left"),
        command("right")
    );
    for (backend, config) in [("command", command_config.as_str()), ("keys", "")] {
        let mut m = Mouse::start(ctx, config).with_context(|| format!("{backend} backend"))?;
        settle()?;
        if backend == "keys" {
            // Pressed before sway has the keyboard, the chord would be lost.
            sway.wait_input(VIRTUAL_KEYBOARD_NAME, true)?;
        }
        sway.msg(&["workspace", "1"])?;
        sway.wait_focused("1", T_EVENT)?;
        m.drag(DRAG)?;
        sway.wait_focused("left", T_EVENT)
            .with_context(|| format!("{backend} backend; pawl log: {}", m.pawl.log()))?;
        ctx.notes.push(format!(
            "{backend} backend: drag right → workspace \"left\""
        ));
        let status = m.pawl.terminate(Duration::from_secs(5))?;
        ensure!(status.success(), "pawl exited with {status} on SIGTERM");
        drop(m);
        sway.wait_input(VIRTUAL_KEYBOARD_NAME, false)?;
    }
    Ok(())
}

/// For each `(title, status, v120)` of `steps`: `retitle` gives the focused window that
/// title, `pawl status` must come to contain `status` (noted), and a detent up must then
/// give `v120`.
pub(super) fn retitle_steps(
    ctx: &mut Ctx,
    m: &mut Mouse,
    steps: &[(&str, &str, i64)],
    mut retitle: impl FnMut(&str) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for &(title, want, v120) in steps {
        retitle(title)?;
        let status = wait_status(ctx, &m.work()?, want)
            .with_context(|| format!("title {title:?}; pawl log: {}", m.pawl.log()))?;
        ctx.notes
            .push(format!("$ pawl status (title {title:?})\n{status}"));
        let v = m.detent_up()?;
        ensure!(
            v == v120,
            "title {title:?}: a detent up gave {v} v120, want {v120}"
        );
    }
    Ok(())
}

/// `pawl status` of the pawl running in `work`: its text.
fn status_text(ctx: &Ctx, work: &Path) -> anyhow::Result<String> {
    let out = Command::new(&ctx.pawl)
        .arg("status")
        .env_clear()
        .env("PATH", "/bin")
        .env("HOME", work)
        .env("XDG_RUNTIME_DIR", work)
        .stdin(Stdio::null())
        .output()
        .context("run pawl status")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Waits until `pawl status` in `work` has a line containing `want`; the text.
pub(super) fn wait_status(ctx: &Ctx, work: &Path, want: &str) -> anyhow::Result<String> {
    wait_status_within(ctx, work, want, T_EVENT)
}

/// [`wait_status`] for at most `limit` (a shell mapping a window under TCG).
pub(super) fn wait_status_within(
    ctx: &Ctx,
    work: &Path,
    want: &str,
    limit: Duration,
) -> anyhow::Result<String> {
    let deadline = Instant::now() + limit;
    loop {
        let text = status_text(ctx, work)?;
        if text.contains(want) {
            return Ok(text);
        }
        if Instant::now() >= deadline {
            bail!("pawl status never said {want:?} within {limit:?}:\n{text}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// CPU time pawl used so far, clock ticks (`/proc/PID/stat` utime + stime).
pub(super) fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after = stat.rsplit_once(')').context("no ) in stat")?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of proc(5), counted after the command's `)`: state is field 3.
    let tick = |i: usize| -> anyhow::Result<u64> {
        fields
            .get(i - 3)
            .and_then(|f| f.parse().ok())
            .context("stat field")
    };
    Ok(tick(14)? + tick(15)?)
}

/// `per_app_backend_gone_falls_back_and_says_so`: pawl with an `[[app]]` table and
/// `SWAYSOCK` connects to sway's IPC (`pawl status`: "focus: sway"); sway exits; pawl logs
/// one line, `pawl status` says the device profiles are in force, pawl keeps running and
/// uses no CPU afterwards (no busy loop on the closed socket).
pub fn per_app_backend_gone_falls_back_and_says_so(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let config = "[[app]]\napp_id = \"pawl-test\"\n[app.scroll]\ninvert_vertical = false\n";
    let socket = sway.socket.clone();
    let mut m = Mouse::start_env(ctx, config, &[("SWAYSOCK", &socket)])?;
    let work = m
        .pawl
        .config_path()
        .parent()
        .context("work dir")?
        .to_owned();
    let before = wait_status(ctx, &work, "focus:   sway,")?;
    ctx.notes
        .push(format!("$ pawl status (sway running)\n{before}"));
    let _ = sway.sway.kill();
    let _ = sway.sway.wait();
    let closed = "focus: sway's IPC socket closed";
    let ticks = falls_back_once(
        ctx,
        &mut m,
        "sway",
        "focus:   sway (closed: device profiles), app unknown, profile device",
        closed,
    )?;
    // The mouse still works, with the device profile.
    m.sentinel()?;
    ctx.notes
        .push(format!("CPU after sway exited: {ticks} ticks in 2 s"));
    Ok(())
}

/// After `what` (the focus backend's desktop) exited: `pawl status` comes to say `status`
/// (noted), pawl's log says `closed_line` exactly once, and pawl keeps running with at most
/// 2 ticks of CPU in 2 s (no busy loop on the closed connection). The ticks.
pub(super) fn falls_back_once(
    ctx: &mut Ctx,
    m: &mut Mouse,
    what: &str,
    status: &str,
    closed_line: &str,
) -> anyhow::Result<u64> {
    let after = wait_status(ctx, &m.work()?, status)
        .with_context(|| format!("pawl log: {}", m.pawl.log()))?;
    ctx.notes
        .push(format!("$ pawl status ({what} gone)\n{after}"));
    let log = m.pawl.log();
    ensure!(
        log.matches(closed_line).count() == 1,
        "pawl's log should say {closed_line:?} once:\n{log}"
    );
    let t0 = cpu_ticks(m.pawl.pid())?;
    std::thread::sleep(Duration::from_secs(2));
    let t1 = cpu_ticks(m.pawl.pid())?;
    ensure!(
        m.pawl.try_exit()?.is_none(),
        "pawl exited after {what} did: {}",
        m.pawl.log()
    );
    ensure!(
        t1 - t0 <= 2,
        "pawl used {} ticks of CPU in 2 s after {what} exited: a busy loop",
        t1 - t0
    );
    Ok(t1 - t0)
}

/// Σ `REL_WHEEL_HI_RES` of `frames`, v120.
fn hires_sum(frames: &[crate::evdev::Frame]) -> i64 {
    use pawl_evdev::codes::{EV_REL, REL_WHEEL_HI_RES};
    frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_REL && e.code == REL_WHEEL_HI_RES)
        .map(|e| i64::from(e.value))
        .sum()
}

impl Mouse {
    /// One wheel detent up on the mouse; Σ v120 of what pawl's clone sent for it.
    pub(super) fn detent_up(&mut self) -> anyhow::Result<i64> {
        use pawl_evdev::codes::{EV_REL, REL_X, REL_Y};
        self.mouse.mouse.wheel(1)?;
        self.mouse.mouse.motion(7, -5)?;
        let want = vec![Event::new(EV_REL, REL_X, 7), Event::new(EV_REL, REL_Y, -5)];
        let frames = self
            .clone
            .frames_until(T_EVENT, "sentinel motion after the wheel", |f| *f == want)
            .with_context(|| format!("pawl log: {}", self.pawl.log()))?;
        Ok(hires_sum(&frames))
    }

    /// The directory pawl runs in (its `HOME` and `XDG_RUNTIME_DIR`).
    pub(super) fn work(&self) -> anyhow::Result<PathBuf> {
        Ok(self
            .pawl
            .config_path()
            .parent()
            .context("work dir")?
            .to_owned())
    }
}

/// The device profile of the per-application scenarios: no smoothing, so one detent is one
/// frame of ±120 v120 (an MX Master's default inverts it: -120 for a detent up).
const PER_APP_SCROLL: &str = "[scroll]\nsmoothing = \"none\"\n\n\
    [[app]]\napp_id = \"pawl-game\"\n[app.scroll]\ninvert_vertical = false\n";

/// Under [`PER_APP_SCROLL`]: focus moves to "pawl-game" (a detent up must give +120 v120,
/// its table's inversion off) and to "pawl-editor" (-120, the device profile), twice.
fn game_then_editor_twice(ctx: &mut Ctx, sway: &Sway, m: &mut Mouse) -> anyhow::Result<()> {
    for _ in 0..2 {
        focus_and_wait(ctx, sway, m, "pawl-game", "app pawl-game")?;
        let v = m.detent_up()?;
        ensure!(
            v == 120,
            "pawl-game focused: a detent up gave {v} v120, want +120 (not inverted)"
        );
        focus_and_wait(ctx, sway, m, "pawl-editor", "device")?;
        let v = m.detent_up()?;
        ensure!(
            v == -120,
            "pawl-editor focused: a detent up gave {v} v120, want -120 (the device profile)"
        );
    }
    Ok(())
}

/// Focuses `app_id` on sway and waits until `pawl status` names it with `profile`.
fn focus_and_wait(
    ctx: &mut Ctx,
    sway: &Sway,
    m: &Mouse,
    app_id: &str,
    profile: &str,
) -> anyhow::Result<String> {
    sway.focus_app(app_id)?;
    let want = format!("app {app_id}, profile {profile}");
    let status = wait_status(ctx, &m.work()?, &want)
        .with_context(|| format!("pawl log: {}", m.pawl.log()))?;
    ctx.notes
        .push(format!("$ pawl status ({app_id} focused)\n{status}"));
    Ok(status)
}

/// `per_app_scroll_follows_focus_on_sway`: two real Wayland windows on sway (`app_id`
/// "pawl-game" and "pawl-editor"), pawl with `[[app]] app_id = "pawl-game"` turning the
/// inversion off. Focus moves with `swaymsg`; a detent up comes out +120 v120 while the
/// game is focused and -120 (the device profile's inversion) while the editor is, both
/// ways and back. With focus still, pawl makes no context switch in 10 s (idle costs
/// nothing with a focus backend); one focus change costs a few wake-ups (noted).
pub fn per_app_scroll_follows_focus_on_sway(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let socket = sway.socket.clone();
    let mut m = Mouse::start_env(ctx, PER_APP_SCROLL, &[("SWAYSOCK", &socket)])?;
    sway.window("pawl-game")?;
    sway.window("pawl-editor")?;
    game_then_editor_twice(ctx, &sway, &mut m)?;
    // Idle with a focus backend: nothing runs between events.
    std::thread::sleep(Duration::from_millis(500));
    // The last `pawl status` query's connection ends first.
    std::thread::sleep(Duration::from_secs(1));
    let (r0, _, s0) = m.pawl.counters()?;
    std::thread::sleep(Duration::from_secs(10));
    let (r1, _, s1) = m.pawl.counters()?;
    ensure!(
        s1 == s0 && r1 == r0,
        "pawl woke with focus still and no input: {} context switches, {} reads in 10 s",
        s1 - s0,
        r1 - r0
    );
    focus_and_wait(ctx, &sway, &m, "pawl-game", "app pawl-game")?;
    std::thread::sleep(Duration::from_millis(500));
    let (r2, _, s2) = m.pawl.counters()?;
    ctx.notes.push(format!(
        "idle 10 s with sway: 0 context switches, 0 reads; one focus change (pawl status \
         queries included): {} context switches, {} reads",
        s2 - s1,
        r2 - r1
    ));
    Ok(())
}

/// [`PER_APP_SCROLL`] with HID++ on, so the MX Master runs kernel mode.
const PER_APP_SCROLL_KERNEL: &str = "[hidpp]\nenabled = true\n\n[scroll]\nsmoothing = \"none\"\n\n\
    [[app]]\napp_id = \"pawl-game\"\n[app.scroll]\ninvert_vertical = false\n";

/// `per_app_scroll_follows_focus_in_kernel_mode`: the MX Master in kernel mode (pawl's
/// HID-BPF program attached by the loader, the pointer node not grabbed, the wheel
/// transformed in the kernel) and two real Wayland windows on sway. Focus moves with
/// `swaymsg`, and pawl writes the focused app's scroll settings into the program: one
/// wheel unit up on the kernel's own node comes out +8 (not inverted) while "pawl-game"
/// is focused and -8 (the device profile) while "pawl-editor" is, both ways and back. The
/// node stays ungrabbed throughout; with the game focused, motion and the wheel leave
/// pawl's reads, writes and context switches where they were; pawl's exit leaves the
/// program pass-through.
pub fn per_app_scroll_follows_focus_in_kernel_mode(ctx: &mut Ctx) -> anyhow::Result<()> {
    use crate::scenarios::base::kernel_daemon::{HIDRAW_CLOSED, KernelRig, one_unit_up};
    use crate::scenarios::base::kernel_mode::{UNIT, needs_hid_bpf};
    needs_hid_bpf()?;
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let socket = sway.socket.clone();
    let mut rig = KernelRig::start_env(
        ctx,
        PER_APP_SCROLL_KERNEL,
        HIDRAW_CLOSED,
        None,
        Some(0),
        &[("SWAYSOCK", &socket)],
    )?;
    rig.check_kernel_mode()?;
    let work = rig
        .pawl
        .config_path()
        .parent()
        .context("work dir")?
        .to_owned();
    sway.window("pawl-game")?;
    sway.window("pawl-editor")?;
    let mut node = EvdevNode::open(&rig.source.path)?;
    for _ in 0..2 {
        for (app, profile, want) in [
            ("pawl-game", "app pawl-game", UNIT),
            ("pawl-editor", "device", -UNIT),
        ] {
            sway.focus_app(app)?;
            let status = wait_status(ctx, &work, &format!("app {app}, profile {profile}"))
                .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
            let s = rig.settings()?;
            let got = one_unit_up(&mut rig, &mut node)?;
            ensure!(
                got == vec![want],
                "{app} focused in kernel mode: one unit up gave {got:?}, want [{want}]; \
                 program settings {s:?}; status:\n{status}"
            );
            ensure!(
                node.is_free_to_grab()?,
                "pawl grabbed the MX Master's node on a focus change"
            );
        }
    }
    // The game's own settings in the program: motion and the wheel still never wake pawl.
    sway.focus_app("pawl-game")?;
    wait_status(ctx, &work, "app pawl-game, profile app pawl-game")?;
    // The `pawl status` query's connection ends first.
    std::thread::sleep(Duration::from_secs(1));
    let before = rig.pawl.counters()?;
    for i in 0..100 {
        rig.dev.motion(2, 1)?;
        // The node's reader keeps up, as a compositor does (its buffer holds a few
        // dozen frames).
        if i % 8 == 7 {
            let _ = node.drain()?;
        }
    }
    let got = one_unit_up(&mut rig, &mut node)?;
    std::thread::sleep(Duration::from_millis(300));
    let after = rig.pawl.counters()?;
    ensure!(
        got == vec![UNIT] && after == before,
        "with the game focused in kernel mode: one unit up {got:?}; pawl (syscr, syscw, \
         switches) {before:?} -> {after:?} over 100 motion frames and a wheel report"
    );
    ctx.notes.push(format!(
        "kernel mode, sway focus pawl-game / pawl-editor twice: one unit up +{UNIT} / -{UNIT} \
         on the kernel's node, never grabbed; with the game focused, 100 motion frames and \
         one wheel report: pawl's reads, writes and context switches unchanged {after:?}"
    ));
    rig.stop_and_check_restored()
}

/// The config of [`per_app_title_follows_the_focused_windows_title_on_sway`]: a browser's
/// video tabs without inversion.
const PER_APP_TITLE: &str = "[scroll]\nsmoothing = \"none\"\n\n\
    [[app]]\napp_id = \"pawl-browser\"\ntitle = \"^Video\"\n[app.scroll]\ninvert_vertical = false\n";

/// `per_app_title_follows_the_focused_windows_title_on_sway`: one real Wayland window
/// ("pawl-browser") whose client changes its own title, and pawl with a table for that app
/// whose `title = "^Video"`. sway reports the title with the focus and on every change of
/// the focused window's title. The table applies while the title starts with "Video": a
/// detent up gives +120 v120; with another title, -120 (the device profile). Focus moving
/// to another app and back keeps the title's verdict.
pub fn per_app_title_follows_the_focused_windows_title_on_sway(
    ctx: &mut Ctx,
) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let socket = sway.socket.clone();
    let mut m = Mouse::start_env(ctx, PER_APP_TITLE, &[("SWAYSOCK", &socket)])?;
    sway.window("pawl-editor")?;
    let mut title = sway.titled_window("pawl-browser")?;
    let video = "app pawl-browser, profile app pawl-browser ([[app]] at line 4)";
    focus_and_wait(ctx, &sway, &m, "pawl-browser", "device")?;
    ensure!(m.detent_up()? == -120, "an untitled match applied");
    let steps = [
        ("Video - cats", video, 120),
        ("Docs - notes", "app pawl-browser, profile device", -120),
        ("Video - dogs", video, 120),
    ];
    retitle_steps(ctx, &mut m, &steps, |line| Ok(writeln!(title, "{line}")?))?;
    focus_and_wait(ctx, &sway, &m, "pawl-editor", "device")?;
    ensure!(m.detent_up()? == -120, "the editor got the browser's table");
    sway.focus_app("pawl-browser")?;
    wait_status(ctx, &m.work()?, video)?;
    ensure!(
        m.detent_up()? == 120,
        "back on the video tab: the table no longer applies"
    );
    Ok(())
}

/// `per_app_unknown_app_uses_the_device_profile`: a window whose `app_id` no `[[app]]`
/// table names ("pawl-unknown") is focused: `pawl status` says "profile device" and a
/// detent up comes out -120 v120 (the device profile's inversion), as without any
/// `[[app]]` table; the game's table does not leak into it after the game had focus.
/// No window focused is the device profile too: an empty workspace switched to, and the
/// workspace left empty when the focused game moves to another (sway then sends no focus
/// event, only the window's `move`); moving the game off a workspace that keeps a window
/// gives that window the focus.
pub fn per_app_unknown_app_uses_the_device_profile(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let socket = sway.socket.clone();
    let mut m = Mouse::start_env(ctx, PER_APP_SCROLL, &[("SWAYSOCK", &socket)])?;
    sway.window("pawl-game")?;
    sway.window("pawl-unknown")?;
    focus_and_wait(ctx, &sway, &m, "pawl-game", "app pawl-game")?;
    ensure!(m.detent_up()? == 120, "the game's profile is not in force");
    focus_and_wait(ctx, &sway, &m, "pawl-unknown", "device")?;
    let v = m.detent_up()?;
    ensure!(
        v == -120,
        "pawl-unknown focused: a detent up gave {v} v120, want -120 (the device profile)"
    );
    let work = m.work()?;
    let mut step = |cmd: &str, want: &str| -> anyhow::Result<()> {
        sway.msg(&[cmd])?;
        let status = wait_status(ctx, &work, want)
            .with_context(|| format!("after swaymsg {cmd:?}; pawl log: {}", m.pawl.log()))?;
        ctx.notes
            .push(format!("$ swaymsg {cmd:?}; pawl status\n{status}"));
        Ok(())
    };
    const NO_APP: &str = "app unknown, profile device";
    step("workspace 9", NO_APP)?;
    step(
        "[app_id=\"pawl-game\"] focus",
        "app pawl-game, profile app pawl-game",
    )?;
    step(
        "move container to workspace 9",
        "app pawl-unknown, profile device",
    )?;
    step(
        "[app_id=\"pawl-game\"] focus",
        "app pawl-game, profile app pawl-game",
    )?;
    step("move container to workspace 5", NO_APP)?;
    let v = m.detent_up()?;
    ensure!(
        v == -120,
        "no window focused: a detent up gave {v} v120, want -120 (the device profile)"
    );
    Ok(())
}

/// `per_app_focus_before_pawl_starts_applies_at_once`: the game's
/// window is focused on sway before pawl starts, and nothing moves the focus. pawl reads
/// the focus from sway's tree at connect: `pawl status` names the game and a detent up
/// comes out +120 v120 (its table). The same when pawl starts without any `[[app]]` table
/// (no backend then) and a reload (SIGHUP) adds the game's.
pub fn per_app_focus_before_pawl_starts_applies_at_once(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let socket = sway.socket.clone();
    sway.window("pawl-editor")?;
    sway.window("pawl-game")?;
    sway.focus_app("pawl-game")?;
    let game = "app pawl-game, profile app pawl-game";
    {
        let mut m = Mouse::start_env(ctx, PER_APP_SCROLL, &[("SWAYSOCK", &socket)])?;
        let status = wait_status(ctx, &m.work()?, game)
            .with_context(|| format!("pawl log: {}", m.pawl.log()))?;
        ctx.notes.push(format!(
            "$ pawl status (started with the game focused)\n{status}"
        ));
        let v = m.detent_up()?;
        ensure!(
            v == 120,
            "the game focused before pawl started: {v} v120, want +120"
        );
    }
    let mut m = Mouse::start_env(
        ctx,
        "[scroll]\nsmoothing = \"none\"\n",
        &[("SWAYSOCK", &socket)],
    )?;
    let v = m.detent_up()?;
    ensure!(v == -120, "no [[app]] table yet: {v} v120, want -120");
    std::fs::write(m.pawl.config_path(), PER_APP_SCROLL)?;
    m.pawl.signal(libc::SIGHUP)?;
    let status = wait_status(ctx, &m.work()?, game)
        .with_context(|| format!("after SIGHUP; pawl log: {}", m.pawl.log()))?;
    ctx.notes.push(format!(
        "$ pawl status (a reload added the game's table)\n{status}"
    ));
    let v = m.detent_up()?;
    ensure!(
        v == 120,
        "after the reload added the game's table: {v} v120, want +120"
    );
    Ok(())
}

/// `per_app_gesture_action_follows_focus_on_sway`: the `command` backend runs `swaymsg
/// workspace …`; the device profile's drag right is "desktop-left" (workspace "left"), and
/// `[[app]] app_id = "pawl-browser"` makes it a command to workspace "browser". A drag
/// right with the browser focused moves sway to "browser"; with the other window
/// ("pawl-editor") focused, to "left"; read back from sway.
pub fn per_app_gesture_action_follows_focus_on_sway(ctx: &mut Ctx) -> anyhow::Result<()> {
    const DRAG: i16 = 600;
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let socket = sway.socket.clone();
    let command = |ws: &str| {
        format!(
            "[\"/usr/bin/swaymsg\", \"-s\", {:?}, \"workspace\", {ws:?}]",
            socket.display().to_string()
        )
    };
    let config = format!(
        "[actions]\nbackend = \"command\"\nallow_root_commands = true\n\n[actions.commands]\n\
         desktop-left = {}\ndesktop-right = {}\n\n\
         [[app]]\napp_id = \"pawl-browser\"\n[app.gesture]\nright = {{ command = {} }}\n",
        command("left"),
        command("right"),
        command("browser")
    );
    let mut m = Mouse::start_env(ctx, &config, &[("SWAYSOCK", &socket)])?;
    sway.window("pawl-browser")?;
    sway.window("pawl-editor")?;
    for (app, profile, want) in [
        ("pawl-browser", "app pawl-browser", "browser"),
        ("pawl-editor", "device", "left"),
        ("pawl-browser", "app pawl-browser", "browser"),
    ] {
        sway.msg(&["workspace", "1"])?;
        sway.wait_focused("1", T_EVENT)?;
        focus_and_wait(ctx, &sway, &m, app, profile)?;
        m.drag(DRAG)?;
        sway.wait_focused(want, T_EVENT)
            .with_context(|| format!("{app} focused; pawl log: {}", m.pawl.log()))?;
        ctx.notes
            .push(format!("{app} focused: drag right → workspace {want:?}"));
    }
    Ok(())
}

/// `per_app_wayland_toplevel_list_follows_focus_and_titles`: pawl in a Wayland session that
/// is not Hyprland, sway (no `SWAYSOCK`), GNOME or KDE (`XDG_CURRENT_DESKTOP=sway`) reads
/// the compositor's toplevel list: sway's `zwlr_foreign_toplevel_manager_v1`, the protocol
/// niri, wayfire, labwc and river serve too. `pawl status` names it; with two real windows
/// the game's table applies while it is activated (a detent up +120 v120) and the device
/// profile while the editor is (-120), both ways; a third window's title changes decide its
/// `title` table; sway exiting leaves the device profiles, one log line and no busy loop.
pub fn per_app_wayland_toplevel_list_follows_focus_and_titles(ctx: &mut Ctx) -> anyhow::Result<()> {
    use std::io::Write;
    const NAME: &str = "wayland (zwlr_foreign_toplevel_manager_v1";
    let dir = ctx.subdir("sway")?;
    let mut sway = Sway::start(&dir)?;
    let display = sway.wayland_socket()?;
    let config = format!(
        "{PER_APP_SCROLL}\n{}",
        &PER_APP_TITLE[PER_APP_TITLE.find("[[app]]").context("title table")?..]
    );
    let mut m = Mouse::start_desktop(ctx, &config, "sway", &[("WAYLAND_DISPLAY", &display)])?;
    sway.window("pawl-game")?;
    sway.window("pawl-editor")?;
    let status = wait_status(ctx, &m.work()?, &format!("focus:   {NAME})"))
        .with_context(|| format!("pawl log: {}", m.pawl.log()))?;
    ctx.notes
        .push(format!("$ pawl status (toplevel list)\n{status}"));
    game_then_editor_twice(ctx, &sway, &mut m)?;
    let mut title = sway.titled_window("pawl-browser")?;
    let steps = [
        (
            "Video - cats",
            "app pawl-browser, profile app pawl-browser",
            120,
        ),
        ("Docs - notes", "app pawl-browser, profile device", -120),
    ];
    retitle_steps(ctx, &mut m, &steps, |line| Ok(writeln!(title, "{line}")?))?;
    let _ = sway.sway.kill();
    let _ = sway.sway.wait();
    let ticks = falls_back_once(
        ctx,
        &mut m,
        "sway",
        &format!("focus:   {NAME}, closed: device profiles), app unknown, profile device"),
        "focus: the Wayland compositor's connection closed",
    )?;
    m.sentinel()?;
    ctx.notes
        .push(format!("CPU after sway exited: {ticks} ticks in 2 s"));
    Ok(())
}
