//! pawl with per-application settings on a running sway (`pawl-apps`): the Debian
//! userland of the `vm-test` userland boot, attached to the perf VM over virtio 9p
//! (read-only, `--debian-root TAG`) and mounted at [`MOUNT`], runs seatd, sway (headless
//! outputs only: sway opens no input device, so no other program's output gains a reader)
//! and two Wayland windows with the `app_id`s of [`crate::perf::tools::PAWL_APPS_CONFIG`]'s tables, as the userland
//! scenarios start them ([`Sway::start_in`]). pawl runs as sway's user with `SWAYSOCK`, so
//! its focus backend is sway's IPC (`subscribe ["window","workspace"]`).
//!
//! The window [`APP_BROWSER`] is focused for the idle window, movement and scroll: its
//! table changes gestures and buttons only, so pawl's scroll rules are the defaults' and the
//! output checks are pawl's usual ones. [`focus_changes`] then measures one focus change.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

use crate::perf::procfs;
use crate::perf::tools::Tool;
use crate::perf::workloads::{Row, SETTLE_AFTER};
use crate::scenarios::userland::compositor::Sway;

/// Where the Debian root is mounted in the perf VM.
pub const MOUNT: &str = "/debian";

/// The window whose table changes gestures and buttons (README's browser example).
pub const APP_BROWSER: &str = "pawl-browser";
/// The window whose table changes scroll (README's game example).
pub const APP_GAME: &str = "pawl-game";

/// Focus changes of [`focus_changes`], alternating between the two windows.
pub const FOCUS_CHANGES: usize = 20;
/// Pause after each `swaymsg … focus` returns: pawl has handled the event long before.
pub const FOCUS_GAP: Duration = Duration::from_millis(250);

/// Mounts the 9p share `tag` (the Debian root) read-only at [`MOUNT`] and binds the
/// driver's `/dev`, `/proc`, `/sys`, `/run` and `/tmp` into it (with a tmpfs on its
/// `/dev/shm`), so sway's paths (`/run/user/1000`, the config under `/tmp`) are the same in
/// the chroot and out of it.
pub fn mount_debian_root(tag: &str) -> anyhow::Result<PathBuf> {
    let root = PathBuf::from(MOUNT);
    std::fs::create_dir_all(&root).with_context(|| format!("mkdir {MOUNT}"))?;
    std::fs::create_dir_all("/run")?;
    let mount = |args: &[&str]| -> anyhow::Result<()> {
        let out = Command::new("mount")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .context("cannot run mount")?;
        ensure!(
            out.status.success(),
            "mount {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Ok(())
    };
    mount(&[
        "-t",
        "9p",
        "-o",
        "trans=virtio,version=9p2000.L,msize=524288,cache=loose,ro",
        tag,
        MOUNT,
    ])?;
    ensure!(
        root.join("usr/bin/sway").is_file(),
        "the 9p share {tag:?} at {MOUNT} has no usr/bin/sway"
    );
    for d in ["dev", "proc", "sys", "run", "tmp"] {
        let inside = format!("{MOUNT}/{d}");
        mount(&["-o", "bind", &format!("/{d}"), &inside])?;
    }
    std::fs::create_dir_all("/dev/shm")?;
    mount(&["-t", "tmpfs", "tmpfs", &format!("{MOUNT}/dev/shm")])?;
    Ok(root)
}

/// sway (headless) in the Debian root mounted by [`mount_debian_root`], with the windows
/// [`APP_GAME`] and [`APP_BROWSER`] mapped and the browser focused; its files in `dir`.
pub fn start_sway(dir: &Path, tag: &str) -> anyhow::Result<Sway> {
    let root = mount_debian_root(tag)?;
    std::fs::create_dir_all(dir)?;
    let t = Instant::now();
    let mut sway = Sway::start_in(dir, Some(&root), "headless")?;
    let started = t.elapsed();
    sway.window(APP_GAME)?;
    sway.window(APP_BROWSER)?;
    sway.focus_app(APP_BROWSER)?;
    println!(
        "# sway: IPC up in {:.1} s, windows {APP_GAME} and {APP_BROWSER} mapped in {:.1} s more; {}",
        started.as_secs_f64(),
        (t.elapsed() - started).as_secs_f64(),
        sway.msg(&["-t", "get_version", "-p"])
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or("")
    );
    Ok(sway)
}

/// `pawl status` of the pawl in `tool` (run as its user, in its runtime directory).
fn status(tool: &Tool, pawl: &Path) -> anyhow::Result<String> {
    use std::os::unix::process::CommandExt;
    let work = tool.work().context("not pawl")?;
    let mut cmd = Command::new(pawl);
    if let Some((uid, gid)) = tool.kind.user() {
        cmd.uid(uid).gid(gid);
    }
    let out = cmd
        .arg("status")
        .env_clear()
        .env("PATH", "/bin")
        .env("HOME", &work)
        .env("XDG_RUNTIME_DIR", &work)
        .stdin(Stdio::null())
        .output()
        .context("run pawl status")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Focus change: `n` times `swaymsg '[app_id=…] focus'`, alternating between
/// [`APP_GAME`] and [`APP_BROWSER`] (the browser focused before, and again after an even
/// `n`), [`FOCUS_GAP`] after each; `frames_in` is `n`, so the per-frame figures are per
/// focus change. Afterwards (outside the measured window, since `pawl status` wakes pawl)
/// `pawl status` must name the last window focused and its profile, no output frame may
/// have come out, and pawl must still run.
pub fn focus_changes(tool: &mut Tool, sway: &Sway, pawl: &Path, n: usize) -> anyhow::Result<Row> {
    let _ = tool.out.take();
    let pid = tool.pid();
    let before = procfs::counters(pid)?;
    let start = Instant::now();
    let mut last = APP_BROWSER;
    for i in 0..n {
        last = if i % 2 == 0 { APP_GAME } else { APP_BROWSER };
        sway.focus_app(last)?;
        std::thread::sleep(FOCUS_GAP);
    }
    let secs = start.elapsed().as_secs_f64();
    std::thread::sleep(SETTLE_AFTER);
    let after = procfs::counters(pid)?;
    let mem = procfs::memory(pid)?;
    let got = tool.out.take();
    let want = format!("app {last}, profile app {last}");
    let text = status(tool, pawl)?;
    let alive = tool.exited()?.is_none();
    let check = if !alive {
        Err("pawl exited".to_string())
    } else if !text.contains(&want) {
        Err(format!(
            "pawl status does not say {want:?}: {}",
            text.replace('\n', " | ")
        ))
    } else if !got.frames.is_empty() {
        Err(format!(
            "{} output frames for focus changes",
            got.frames.len()
        ))
    } else {
        Ok(())
    };
    Ok(Row {
        tool: tool.kind.name(),
        workload: "focus-change",
        frames_in: n,
        frames_out: got.frames.len(),
        secs,
        delta: after.since(&before),
        mem,
        dropped: got.dropped,
        extra: Vec::new(),
        check,
    })
}
