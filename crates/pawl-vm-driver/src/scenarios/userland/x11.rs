//! An X11 session on the userland boot: Debian's Xvfb (the virtual X server), openbox (an
//! EWMH window manager: it sets the root window's `_NET_ACTIVE_WINDOW`) and xterms whose
//! `WM_CLASS` class is set with `-class`; `wmctrl` activates a window the EWMH way (a
//! `_NET_ACTIVE_WINDOW` client message to the window manager). pawl reads the active
//! window as a desktop's own X clients do.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::compositor::{Mouse, falls_back_once, retitle_steps, tail, wait_status};
use crate::scenarios::userland_tools::output;
use crate::scenarios::{Ctx, Scenario, T_DEVICE};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    per_app_x11_active_window,
    per_app_x11_follows_the_active_windows_title,
];

/// The display Xvfb serves (its socket `/tmp/.X11-unix/X99`).
const DISPLAY: &str = ":99";

/// How long Xvfb and openbox may take to come up under TCG.
const T_X: Duration = Duration::from_secs(60);

/// The device profile and an `[[app]]` table for the class "AppA": no smoothing, so one
/// detent is one frame of ±120 v120 (an MX Master's default inverts it: -120 for a detent
/// up; "AppA" turns the inversion off).
const CONFIG: &str = "[scroll]\nsmoothing = \"none\"\n\n\
    [[app]]\napp_id = \"AppA\"\n[app.scroll]\ninvert_vertical = false\n";

/// Xvfb, openbox and the xterms, killed when dropped.
struct Session {
    xvfb: Child,
    wm: Option<Child>,
    dir: PathBuf,
    clients: Vec<Child>,
}

impl Session {
    /// Starts Xvfb on [`DISPLAY`] and openbox on it; ready when `wmctrl -m` names the
    /// window manager (openbox has set `_NET_SUPPORTING_WM_CHECK`).
    fn start(dir: &Path) -> anyhow::Result<Session> {
        let log = std::fs::File::create(dir.join("xvfb.log"))?;
        let xvfb = Command::new("Xvfb")
            .args([DISPLAY, "-nolisten", "tcp", "-screen", "0", "800x600x24"])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("cannot start Xvfb")?;
        let mut s = Session {
            xvfb,
            wm: None,
            dir: dir.to_owned(),
            clients: Vec::new(),
        };
        let socket = Path::new("/tmp/.X11-unix/X99");
        let deadline = Instant::now() + T_X;
        while !socket.exists() {
            if let Some(status) = s.xvfb.try_wait()? {
                bail!("Xvfb exited ({status}); log:\n{}", s.log("xvfb.log"));
            }
            if Instant::now() >= deadline {
                bail!("Xvfb made no {} within {T_X:?}", socket.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let wm = s
            .x_command("openbox", "openbox.log")?
            .spawn()
            .context("cannot start openbox")?;
        let wm = s.wm.insert(wm);
        loop {
            // Openbox names itself (`_NET_SUPPORTING_WM_CHECK`) before it publishes its
            // client list; both are needed before a client is mapped.
            if let Ok(text) = wmctrl(&["-m"])
                && text.contains("Openbox")
                && wmctrl(&["-l"]).is_ok()
            {
                return Ok(s);
            }
            if let Some(status) = wm.try_wait()? {
                bail!("openbox exited ({status}); log:\n{}", s.log("openbox.log"));
            }
            if Instant::now() >= deadline {
                bail!(
                    "openbox did not come up within {T_X:?}; log:\n{}",
                    s.log("openbox.log")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log(&self, name: &str) -> String {
        tail(
            &std::fs::read_to_string(self.dir.join(name)).unwrap_or_default(),
            30,
        )
    }

    /// `program` as an X client of [`DISPLAY`], its output in `log`.
    fn x_command(&self, program: &str, log: &str) -> anyhow::Result<Command> {
        let log = std::fs::File::create(self.dir.join(log))?;
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.dir)
            .env("DISPLAY", DISPLAY)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        Ok(cmd)
    }

    /// Maps an xterm with `WM_CLASS` class `class` and waits until openbox manages it
    /// (`wmctrl -l -x` lists `xterm.CLASS`); openbox focuses a new window.
    fn xterm(&mut self, class: &str) -> anyhow::Result<()> {
        let child = self
            .x_command("xterm", &format!("xterm-{class}.log"))?
            .args(["-class", class])
            .spawn()
            .context("cannot start xterm")?;
        self.clients.push(child);
        let want = format!("xterm.{class}");
        let deadline = Instant::now() + T_DEVICE;
        loop {
            // No client list yet reads as an empty one: openbox publishes it once started.
            let list = wmctrl(&["-l", "-x"]).unwrap_or_else(|e| format!("({e:#})"));
            if list.contains(&want) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "openbox manages no {want} after {T_DEVICE:?}: {list}; xterm log:\n{}",
                    self.log(&format!("xterm-{class}.log"))
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Activates the window of `class` (`wmctrl -x -a CLASS`).
    fn activate(&self, class: &str) -> anyhow::Result<()> {
        wmctrl(&["-x", "-a", class]).map(drop)
    }
}

/// `wmctrl ARGS` on [`DISPLAY`]; its output.
fn wmctrl(args: &[&str]) -> anyhow::Result<String> {
    output(
        Command::new("wmctrl")
            .args(args)
            .env_clear()
            .env("DISPLAY", DISPLAY),
    )
}

impl Drop for Session {
    fn drop(&mut self) {
        for child in self
            .clients
            .iter_mut()
            .chain(self.wm.as_mut())
            .chain([&mut self.xvfb])
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Activates `class` and waits until `pawl status` names it with `profile`.
fn activate_and_wait(
    ctx: &mut Ctx,
    x: &Session,
    m: &Mouse,
    class: &str,
    profile: &str,
) -> anyhow::Result<String> {
    x.activate(class)?;
    let want = format!("app {class}, profile {profile}");
    let status = wait_status(ctx, &m.work()?, &want)
        .with_context(|| format!("pawl log: {}", m.pawl.log()))?;
    ctx.notes
        .push(format!("$ pawl status ({class} active)\n{status}"));
    Ok(status)
}

/// `per_app_x11_active_window`: an X11 session (Xvfb, openbox) with two xterms of
/// `WM_CLASS` class "AppA" and "AppB"; pawl with `DISPLAY` (no `SWAYSOCK`, no
/// `WAYLAND_DISPLAY`) and `[[app]] app_id = "AppA"` turning the inversion off. `pawl
/// status` names "x11 (DISPLAY=:99)"; focus moves with `wmctrl -a`; a detent up comes out
/// +120 v120 while AppA is active and -120 (the device profile) while AppB is, both ways
/// and back. With focus still pawl makes no context switch in 10 s; one focus change costs
/// a few wake-ups (noted). Then Xvfb exits: pawl logs one line, `pawl status` says the
/// device profiles are in force, pawl keeps running with no CPU spent (no busy loop on the
/// closed socket) and the mouse still works.
pub fn per_app_x11_active_window(ctx: &mut Ctx) -> anyhow::Result<()> {
    let dir = ctx.subdir("x11")?;
    let mut x = Session::start(&dir)?;
    let mut m = Mouse::start_env(ctx, CONFIG, &[("DISPLAY", Path::new(DISPLAY))])?;
    let work = m.work()?;
    let first = wait_status(
        ctx,
        &work,
        "focus:   x11 (DISPLAY=:99), app unknown, profile device",
    )
    .with_context(|| format!("pawl log: {}", m.pawl.log()))?;
    ctx.notes
        .push(format!("$ pawl status (no window yet)\n{first}"));
    x.xterm("AppA")?;
    x.xterm("AppB")?;
    for _ in 0..2 {
        activate_and_wait(ctx, &x, &m, "AppA", "app AppA")?;
        let v = m.detent_up()?;
        ensure!(
            v == 120,
            "AppA active: a detent up gave {v} v120, want +120 (not inverted)"
        );
        activate_and_wait(ctx, &x, &m, "AppB", "device")?;
        let v = m.detent_up()?;
        ensure!(
            v == -120,
            "AppB active: a detent up gave {v} v120, want -120 (the device profile)"
        );
    }
    // Idle with a focus backend: nothing runs between events. The last `pawl status`
    // query's connection ends first.
    std::thread::sleep(Duration::from_millis(1500));
    let (r0, _, s0) = m.pawl.counters()?;
    std::thread::sleep(Duration::from_secs(10));
    let (r1, _, s1) = m.pawl.counters()?;
    ensure!(
        s1 == s0 && r1 == r0,
        "pawl woke with focus still and no input: {} context switches, {} reads in 10 s",
        s1 - s0,
        r1 - r0
    );
    activate_and_wait(ctx, &x, &m, "AppA", "app AppA")?;
    std::thread::sleep(Duration::from_millis(500));
    let (r2, _, s2) = m.pawl.counters()?;
    ctx.notes.push(format!(
        "idle 10 s with X11: 0 context switches, 0 reads; one focus change (pawl status \
         queries included): {} context switches, {} reads",
        s2 - s1,
        r2 - r1
    ));

    // The X server goes away.
    let _ = x.xvfb.kill();
    let _ = x.xvfb.wait();
    let ticks = falls_back_once(
        ctx,
        &mut m,
        "the X server",
        "focus:   x11 (DISPLAY=:99, closed: device profiles), app unknown, profile device",
        "focus: the X server connection closed",
    )?;
    let v = m.detent_up()?;
    ensure!(
        v == -120,
        "after the X server exited a detent up gave {v} v120, want -120 (the device profile)"
    );
    ctx.notes.push(format!(
        "CPU after the X server exited: {ticks} ticks in 2 s"
    ));
    Ok(())
}

/// `per_app_x11_follows_the_active_windows_title`: the X11 session of
/// [`per_app_x11_active_window`] with `[[app]] app_id = "AppA"`, `title = "^Video"` turning
/// the inversion off. While AppA stays active, `wmctrl -N` retitles it (`_NET_WM_NAME`):
/// "Video - cats" applies the table (a detent up +120 v120), "Docs" the device profile
/// (-120), "Video - dogs" the table again. No focus change happens in between: pawl reads
/// the active window's own title changes.
pub fn per_app_x11_follows_the_active_windows_title(ctx: &mut Ctx) -> anyhow::Result<()> {
    const TITLED: &str = "[scroll]\nsmoothing = \"none\"\n\n\
        [[app]]\napp_id = \"AppA\"\ntitle = \"^Video\"\n[app.scroll]\ninvert_vertical = false\n";
    let dir = ctx.subdir("x11")?;
    let mut x = Session::start(&dir)?;
    let mut m = Mouse::start_env(ctx, TITLED, &[("DISPLAY", Path::new(DISPLAY))])?;
    x.xterm("AppA")?;
    x.xterm("AppB")?;
    activate_and_wait(ctx, &x, &m, "AppA", "device")?;
    let steps = [
        ("Video - cats", "app AppA, profile app AppA", 120),
        ("Docs", "app AppA, profile device", -120),
        ("Video - dogs", "app AppA, profile app AppA", 120),
    ];
    retitle_steps(ctx, &mut m, &steps, |title| {
        wmctrl(&["-x", "-r", "AppA", "-N", title]).map(drop)
    })?;
    // The other window's title is not AppA's.
    activate_and_wait(ctx, &x, &m, "AppB", "device")?;
    wmctrl(&["-x", "-r", "AppB", "-N", "Video - AppB"])?;
    ensure!(m.detent_up()? == -120, "AppB got AppA's title table");
    Ok(())
}
