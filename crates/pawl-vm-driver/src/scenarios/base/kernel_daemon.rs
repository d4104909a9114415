//! Kernel mode end to end: pawl's daemon (`pawl run`) on an emulated MX Master 3S that the
//! real hid-logitech-hidpp drives, with pawl's HID-BPF program attached by the loader as
//! the udev rule would (`add <HID>` at bind). pawl opens the program's pins, writes its
//! settings, diverts the gesture button over hidraw and closes hidraw again; the pointer
//! node is not grabbed, the wheel is transformed in the kernel, and gestures come to pawl
//! on the program's ring. On a kernel without HID-BPF (and with `[hidpp] kernel_mode =
//! "off"`) pawl runs grab mode and says why.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use pawl_bpf::maps::{FLAG_WHEEL, Settings, Stats};
use pawl_bpf::pins::KernelDevice;
use pawl_evdev::codes::{EV_REL, REL_X};

use crate::evdev::{EvdevNode, Frame, NodeInfo};
use crate::hidpp_mouse::HidppMouse;
use crate::pawl::{Pawl, PawlOptions};
use crate::scenarios::Scenario;
use crate::scenarios::base::kernel_mode::{
    UNIT, attach_pass_through_for, detach, hires_mouse, hires_values, loader_add, needs_hid_bpf,
};
use crate::scenarios::rig::expect_keys;
use crate::scenarios::rig::keys::{META, PAGE_UP};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    kernel_mode_motion_never_wakes_pawl,
    kernel_mode_gesture_right_switches_desktop,
    kernel_mode_sighup_rewrites_settings_and_off_returns_to_grab,
    kernel_mode_wireless_reconnect_rediverts_from_the_ring,
    kernel_mode_follows_a_replaced_or_removed_attachment,
    kernel_mode_survives_reconnect,
    kernel_mode_falls_back_to_grab,
    kernel_mode_another_users_pins_fall_back_to_grab,
    kernel_mode_reseat_hands_the_mouse_to_the_seat_user_and_back,
    kernel_mode_reseat_ignores_a_seat_file_logind_did_not_write_and_waits_its_turn,
];

/// HID++ on, otherwise the defaults (the MX Master's scroll transformed).
const DEFAULT_CONFIG: &str = "[hidpp]\nenabled = true\n";
/// The same with kernel mode forced off.
const KERNEL_MODE_OFF: &str = "[hidpp]\nenabled = true\nkernel_mode = \"off\"\n";
/// What pawl logs when kernel mode's setup is done and hidraw is closed.
pub(crate) const HIDRAW_CLOSED: &str = "hidraw closed (kernel mode";
/// What pawl logs when a mouse goes into kernel mode.
const KERNEL_MODE_ON: &str = "kernel mode (pawl's HID-BPF program";
/// What pawl logs when its HID++ setup diverted the gesture button.
const DIVERTED: &str = "diverted 0x00C3 gesture button with raw XY";
/// What pawl logs when a HID++ endpoint vanished.
const GONE: &str = "gone";
/// The seat user (uid, gid) pawl runs as where a scenario runs it unprivileged (no entry in
/// the initramfs's passwd: pawl needs none).
const SEAT_USER: (u32, u32) = (2005, 2005);
/// Gesture travel, px (threshold 220).
const DRAG: i16 = 400;

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::format_err!("{e}")
}

/// A mouse with pawl's program attached, and pawl running on it in kernel mode.
pub(crate) struct KernelRig {
    pub(crate) dev: HidppMouse,
    pub(crate) source: NodeInfo,
    hid: String,
    pub(crate) pawl: Pawl,
    keyboard: EvdevNode,
}

impl KernelRig {
    /// Creates the mouse, attaches the program (pass-through), starts pawl with `config`
    /// and answers its HID++ setup until pawl logs `until` (`n` times).
    fn start(ctx: &mut Ctx, config: &str, until: &str) -> anyhow::Result<KernelRig> {
        KernelRig::start_as(ctx, config, until, None, Some(0))
    }

    /// [`KernelRig::start`] with pawl as seat user `user` (uid, gid) instead of root, as on
    /// a user's machine: the loader pins for that user (`--uid`), and the user gets what
    /// the udev rule's `uaccess` would give it (the mouse's evdev and hidraw nodes,
    /// `/dev/uinput`). The pins are made for `pins_uid` (the seat user the loader saw);
    /// `None` attaches no program (a kernel without HID-BPF).
    fn start_as(
        ctx: &mut Ctx,
        config: &str,
        until: &str,
        user: Option<(u32, u32)>,
        pins_uid: Option<u32>,
    ) -> anyhow::Result<KernelRig> {
        KernelRig::start_env(ctx, config, until, user, pins_uid, &[])
    }

    /// [`KernelRig::start_as`] with `env` added to pawl's environment (`SWAYSOCK` for a
    /// focus backend).
    pub(crate) fn start_env(
        ctx: &mut Ctx,
        config: &str,
        until: &str,
        user: Option<(u32, u32)>,
        pins_uid: Option<u32>,
        env: &[(&str, &std::path::Path)],
    ) -> anyhow::Result<KernelRig> {
        use std::os::unix::fs::PermissionsExt;
        let (dev, source, hid, _phys) = hires_mouse(ctx)?;
        if let Some(uid) = pins_uid {
            attach_pass_through_for(ctx, &hid, uid)?;
        }
        if let Some((uid, gid)) = user {
            let mut nodes = vec![source.path.clone()];
            nodes.extend(crate::evdev::hidraw_of(&source.path, T_DEVICE)?);
            for n in &nodes {
                std::os::unix::fs::chown(n, Some(uid), Some(gid))
                    .with_context(|| format!("chown {}", n.display()))?;
                std::fs::set_permissions(n, PermissionsExt::from_mode(0o600))
                    .with_context(|| format!("chmod {}", n.display()))?;
            }
            std::fs::set_permissions("/dev/uinput", PermissionsExt::from_mode(0o666))
                .context("chmod /dev/uinput")?;
        }
        let dir = ctx.subdir(&format!("pawl-{}", ctx.seq))?;
        let mut pawl = Pawl::start_env(
            &ctx.pawl,
            &dir,
            &PawlOptions {
                config,
                desktop: "GNOME",
                run_args: &[],
                debug: ctx.pawl_debug,
            },
            user,
            env,
        )?;
        let keyboard = pawl.wait_keyboard(T_DEVICE)?;
        let mut rig = KernelRig {
            dev,
            source,
            hid,
            pawl,
            keyboard,
        };
        rig.wait_log(until, 1)?;
        Ok(rig)
    }

    /// Answers pawl's requests until its log contains `text` `n` times.
    fn wait_log(&mut self, text: &str, n: usize) -> anyhow::Result<()> {
        let deadline = Instant::now() + T_EVENT;
        while self.pawl.log().matches(text).count() < n {
            self.dev.pump(Duration::from_millis(20))?;
            ensure!(
                Instant::now() < deadline,
                "pawl never logged {text:?} ({n}×); log: {}",
                self.pawl.log()
            );
        }
        Ok(())
    }

    fn kernel_device(&self) -> anyhow::Result<KernelDevice> {
        KernelDevice::open(&self.hid).map_err(err)
    }

    pub(crate) fn settings(&self) -> anyhow::Result<Settings> {
        self.kernel_device()?.settings().map_err(err)
    }

    fn stats(&self) -> anyhow::Result<Stats> {
        self.kernel_device()?.stats().map_err(err)
    }

    /// Checks what kernel mode means for this mouse: its pointer node not grabbed, the
    /// program's transform on with the HID++ feature indexes the setup learned, the
    /// gesture button diverted, and no hidraw node open in pawl.
    pub(crate) fn check_kernel_mode(&mut self) -> anyhow::Result<()> {
        // Released in the same decision that went into kernel mode, just after its log line.
        let node = EvdevNode::open(&self.source.path)?;
        let deadline = Instant::now() + T_EVENT;
        while !node.is_free_to_grab()? {
            ensure!(
                Instant::now() < deadline,
                "pawl grabbed the MX Master's node in kernel mode; log: {}",
                self.pawl.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // An untouched node is free at once, before pawl has seen it (its /dev/input,
        // /dev and /run/pawl watches are read in any order): the transform may come a
        // moment after kernel mode, never later than T_EVENT.
        let mut s = self.settings()?;
        while s.flags & FLAG_WHEEL == 0 {
            ensure!(
                Instant::now() < deadline,
                "the wheel transform is off: {s:?}; log: {}",
                self.pawl.log()
            );
            std::thread::sleep(Duration::from_millis(20));
            s = self.settings()?;
        }
        let reprog = self
            .dev
            .emu()
            .feature_index(pawl_hidpp::feature::REPROG_CONTROLS_V4)
            .context("no 0x1B04")?;
        ensure!(
            s.reprog_index == reprog,
            "the program looks for 0x1B04 at index {}, the device has it at {reprog}",
            s.reprog_index
        );
        ensure!(
            self.dev.gesture_diverted(),
            "the gesture button is not diverted"
        );
        // A request after setup (the thumb wheel set native on leaving grab mode) reopens
        // hidraw until its reply: answered here, then it must be closed again.
        let deadline = Instant::now() + T_EVENT;
        loop {
            let hidraw: Vec<_> = self
                .pawl
                .open_files()?
                .into_iter()
                .filter(|p| p.to_string_lossy().contains("hidraw"))
                .collect();
            if hidraw.is_empty() {
                return Ok(());
            }
            ensure!(
                Instant::now() < deadline,
                "pawl keeps {hidraw:?} open in kernel mode; log: {}",
                self.pawl.log()
            );
            self.dev.pump(Duration::from_millis(20))?;
        }
    }

    /// Stops pawl (SIGTERM) and checks that it left the mouse as it found it: the program
    /// pass-through, the gesture button no longer diverted.
    pub(crate) fn stop_and_check_restored(mut self) -> anyhow::Result<()> {
        let status = self.pawl.terminate(Duration::from_secs(5))?;
        ensure!(status.success(), "pawl exited with {status}");
        let s = self.settings()?;
        ensure!(
            s.flags == 0 && s.reprog_index == 0,
            "pawl left the program transforming after its exit: {s:?}"
        );
        self.dev.pump(Duration::from_millis(200))?;
        ensure!(
            !self.dev.gesture_diverted(),
            "pawl left the gesture button diverted"
        );
        Ok(())
    }
}

fn rel_x(frames: &[Frame]) -> usize {
    frames
        .iter()
        .filter(|f| f.iter().any(|e| e.type_ == EV_REL && e.code == REL_X))
        .count()
}

/// `kernel_mode_motion_never_wakes_pawl`: in kernel mode, 1,000 motion frames with the
/// gesture button up reach the kernel's evdev node and leave pawl's counters where they
/// were: no read, no write, no context switch (`/proc/PID/io`, `/proc/PID/task/*/status`).
pub fn kernel_mode_motion_never_wakes_pawl(ctx: &mut Ctx) -> anyhow::Result<()> {
    const FRAMES: usize = 1000;
    needs_hid_bpf()?;
    let mut rig = KernelRig::start(ctx, DEFAULT_CONFIG, HIDRAW_CLOSED)?;
    rig.check_kernel_mode()?;
    let mut reader = EvdevNode::open(&rig.source.path)?;
    rig.dev.pump(Duration::from_millis(300))?;
    let _ = reader.drain()?;
    let before = rig.pawl.counters()?;
    let stats_before = rig.stats()?;
    let mut seen = 0;
    for i in 0..FRAMES {
        rig.dev.motion(2, 1)?;
        if i % 8 == 7 {
            seen += rel_x(&reader.drain()?);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    seen += rel_x(&reader.drain()?);
    let after = rig.pawl.counters()?;
    let stats_after = rig.stats()?;
    let mouse = stats_after.mouse - stats_before.mouse;
    println!(
        "# kernel_mode_motion_never_wakes_pawl: {FRAMES} motion frames (program saw {mouse} \
         mouse reports, evdev delivered {seen} REL_X frames): pawl syscr +{}, syscw +{}, \
         context switches +{}",
        after.0 - before.0,
        after.1 - before.1,
        after.2 - before.2
    );
    ensure!(
        mouse == FRAMES as u64,
        "the program saw {mouse} of {FRAMES} mouse reports"
    );
    ensure!(
        seen == FRAMES,
        "the kernel's node delivered {seen} of {FRAMES} motion frames"
    );
    ensure!(
        after == before,
        "pawl woke for motion: (syscr, syscw, switches) {before:?} -> {after:?}"
    );
    rig.stop_and_check_restored()
}

/// `kernel_mode_gesture_right_switches_desktop`: in kernel mode, holding the diverted
/// gesture button and dragging right (raw-XY notifications, through the program's ring)
/// fires desktop-left by default (inverted): GNOME Super+Page_Up. The notifications were
/// dropped by the program (never reached the driver or the pointer: no REL_X on the
/// kernel's node) and went to the ring. pawl runs as an unprivileged seat user
/// ([`SEAT_USER`]) with the pins the loader made for it (settings and ring 0600, stats
/// 0400), as on a user's machine.
pub fn kernel_mode_gesture_right_switches_desktop(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let mut rig = KernelRig::start_as(
        ctx,
        DEFAULT_CONFIG,
        HIDRAW_CLOSED,
        Some(SEAT_USER),
        Some(SEAT_USER.0),
    )?;
    rig.check_kernel_mode()?;
    let mut reader = EvdevNode::open(&rig.source.path)?;
    let _ = reader.drain()?;
    let stats_before = rig.stats()?;
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let stats = rig.stats()?;
    // Press, the (1, 0) report, 8 steps, release.
    let notifications = 11;
    ensure!(
        stats.ring_records - stats_before.ring_records >= notifications
            && stats.dropped - stats_before.dropped >= notifications,
        "the gesture's notifications did not go to the ring: {stats_before:?} -> {stats:?}"
    );
    let moved = rel_x(&reader.drain()?);
    ensure!(
        moved == 0,
        "the drag moved the pointer ({moved} REL_X frames)"
    );
    rig.stop_and_check_restored()
}

/// `kernel_mode_survives_reconnect`: the mouse goes (the loader's `remove`) and comes back
/// with a new HID id; the loader attaches to it, pawl notices the new pins without polling
/// (the loader's announcement), re-opens hidraw for setup, re-diverts, closes it again, and
/// the gesture still works and the wheel is still transformed in the kernel (one unit up
/// comes out inverted, REL_WHEEL_HI_RES −8).
pub fn kernel_mode_survives_reconnect(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let mut rig = KernelRig::start(ctx, DEFAULT_CONFIG, HIDRAW_CLOSED)?;
    rig.check_kernel_mode()?;
    let KernelRig {
        dev,
        hid,
        pawl,
        keyboard,
        ..
    } = rig;
    let gone_before = pawl.log().matches(GONE).count();
    drop(dev);
    detach(ctx, &hid)?;
    let deadline = Instant::now() + T_DEVICE;
    while pawl.log().matches(GONE).count() == gone_before {
        ensure!(
            Instant::now() < deadline,
            "pawl never noticed the mouse went; log: {}",
            pawl.log()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (dev, source, second, _) = hires_mouse(ctx)?;
    ensure!(second != hid, "the reconnected mouse kept HID name {hid}");
    // As udev runs it at bind, with pawl running.
    loader_add(ctx, &second)?;
    let mut rig = KernelRig {
        dev,
        source,
        hid: second,
        pawl,
        keyboard,
    };
    rig.wait_log(KERNEL_MODE_ON, 2)?;
    rig.wait_log(HIDRAW_CLOSED, 2)?;
    rig.check_kernel_mode()?;
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let mut node = EvdevNode::open(&rig.source.path)?;
    let _ = node.drain()?;
    rig.dev.mouse.wheel_counts(1)?;
    let got = node.frames(1, T_EVENT)?;
    ensure!(
        hires_values(&got) == vec![-UNIT],
        "one unit up after the reconnect: {:?}",
        hires_values(&got)
    );
    rig.stop_and_check_restored()
}

/// `kernel_mode_falls_back_to_grab`: where kernel mode is not available pawl runs grab
/// mode and `pawl devices` says why, per device. On a kernel without HID-BPF (6.1): the
/// pointer node grabbed, "has no HID-BPF". On one with it: the program attached but
/// `[hidpp] kernel_mode = "off"`: grabbed, the program left pass-through, "kernel mode off
/// in config".
pub fn kernel_mode_falls_back_to_grab(ctx: &mut Ctx) -> anyhow::Result<()> {
    let hid_bpf = pawl_bpf::attach::has_hid_bpf();
    let (config, want) = if hid_bpf {
        (KERNEL_MODE_OFF, "kernel mode off in config")
    } else {
        (DEFAULT_CONFIG, "has no HID-BPF")
    };
    let mut rig = KernelRig::start_as(ctx, config, DIVERTED, None, hid_bpf.then_some(0))?;
    let node = EvdevNode::open(&rig.source.path)?;
    let deadline = Instant::now() + T_EVENT;
    while node.is_free_to_grab()? {
        ensure!(
            Instant::now() < deadline,
            "pawl did not grab the MX Master in grab mode; log: {}",
            rig.pawl.log()
        );
        rig.dev.pump(Duration::from_millis(20))?;
    }
    ensure!(
        !rig.pawl.log().contains(KERNEL_MODE_ON),
        "pawl went into kernel mode; log: {}",
        rig.pawl.log()
    );
    if hid_bpf {
        let s = rig.settings()?;
        ensure!(
            s.flags == 0,
            "grab mode left the program transforming: {s:?}"
        );
    }
    let out = devices(ctx, &mut rig)?;
    println!("# kernel_mode_falls_back_to_grab: pawl devices says:\n{out}");
    let mode = out
        .lines()
        .find(|l| l.contains("mode") && l.contains("grab mode"))
        .with_context(|| format!("no grab-mode line in pawl devices: {out}"))?;
    ensure!(
        mode.contains(want),
        "the mode line does not say {want:?}: {mode}"
    );
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `kernel_mode_another_users_pins_fall_back_to_grab`: the program is attached with its
/// pins for another seat user (root here: as after a user switch, when the loader ran for
/// the user before), so this user's pawl cannot reach them (the 0700 directory). pawl runs
/// grab mode instead — the MX Master's node grabbed, its wheel transformed by pawl's clone
/// (one detent up comes out inverted, −120 v120), the gesture fires — and the program is
/// left pass-through (never a wheel transformed twice, never one not at all). Its
/// `pawl status --json`, run as that user, says why: `pins-of-another-user`, uid 0.
pub fn kernel_mode_another_users_pins_fall_back_to_grab(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let mut rig = KernelRig::start_as(ctx, DEFAULT_CONFIG, DIVERTED, Some(SEAT_USER), Some(0))?;
    let node = EvdevNode::open(&rig.source.path)?;
    let deadline = Instant::now() + T_EVENT;
    while node.is_free_to_grab()? {
        ensure!(
            Instant::now() < deadline,
            "pawl neither runs kernel mode nor grabs the MX Master; log: {}",
            rig.pawl.log()
        );
        rig.dev.pump(Duration::from_millis(20))?;
    }
    drop(node);
    let mut clone = rig.pawl.wait_clone(&rig.source, T_DEVICE)?;
    rig.dev.mouse.wheel(1)?;
    let frames = clone.frames(1, T_EVENT)?;
    let total = crate::scenarios::rig::hires_total(&frames);
    ensure!(
        total == -120,
        "one detent through pawl's clone: Σ hi-res {total} (want -120): {frames:?}"
    );
    ensure!(
        rig.settings()?.flags == 0,
        "the program transforms the wheel too (twice in all)"
    );
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    // pawl says why, as its user sees it: the pins are uid 0's.
    let json = status_json_as(ctx, &mut rig, Some(SEAT_USER))?;
    ensure!(
        json.contains(r#""part":"mode","path":"grab","reason":"pins-of-another-user""#)
            && json.contains("isattachedforuid0"),
        "pawl status --json with root's pins: {json}"
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `pawl devices` with the rig's config (answering its HID++ query meanwhile); stdout.
fn devices(ctx: &mut Ctx, rig: &mut KernelRig) -> anyhow::Result<String> {
    let home = ctx.subdir("devices-home")?;
    pawl_output(ctx, rig, &["devices"], &home, None)
}

/// `pawl status --json` of the rig's running pawl (its runtime directory), all on one line
/// without spaces.
fn status_json(ctx: &mut Ctx, rig: &mut KernelRig) -> anyhow::Result<String> {
    status_json_as(ctx, rig, None)
}

/// [`status_json`] run as `user` (uid, gid), the user the rig's pawl runs as.
fn status_json_as(
    ctx: &mut Ctx,
    rig: &mut KernelRig,
    user: Option<(u32, u32)>,
) -> anyhow::Result<String> {
    let work = rig
        .pawl
        .config_path()
        .parent()
        .context("config without a directory")?
        .to_owned();
    let out = pawl_output(ctx, rig, &["status", "--json"], &work, user)?;
    Ok(out.split_whitespace().collect())
}

/// `pawl ARGS` with the rig's config and `home` as HOME and XDG dirs, as `user` (root
/// when `None`), answering HID++ meanwhile; stdout.
fn pawl_output(
    ctx: &mut Ctx,
    rig: &mut KernelRig,
    args: &[&str],
    home: &std::path::Path,
    user: Option<(u32, u32)>,
) -> anyhow::Result<String> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(&ctx.pawl);
    cmd.arg("--config")
        .arg(rig.pawl.config_path())
        .args(args)
        .env_clear()
        .env("PATH", "/bin")
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", home)
        .env("XDG_CONFIG_HOME", home);
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
    let (status, out, _) = rig.dev.run_answering(&mut cmd, T_EVENT)?;
    ensure!(
        status.success(),
        "pawl {args:?} exited with {status}: {out}"
    );
    Ok(out)
}

/// Writes `config` over the rig's pawl config and sends SIGHUP.
fn reload(rig: &KernelRig, config: &str) -> anyhow::Result<()> {
    std::fs::write(rig.pawl.config_path(), config)?;
    rig.pawl.signal(libc::SIGHUP)
}

/// One wheel unit up on the emulated mouse: the `REL_WHEEL_HI_RES` values `node` shows.
pub(crate) fn one_unit_up(rig: &mut KernelRig, node: &mut EvdevNode) -> anyhow::Result<Vec<i32>> {
    let _ = node.drain()?;
    rig.dev.mouse.wheel_counts(1)?;
    let got = node.frames(1, T_EVENT)?;
    Ok(hires_values(&got))
}

/// `kernel_mode_sighup_rewrites_settings_and_off_returns_to_grab`: in kernel mode
/// (`pawl status --json` says `"path":"bpf"` for the mode), `invert_vertical = false`
/// and SIGHUP reach the program's settings without leaving kernel mode (one unit up comes
/// out +8 on the kernel's node, no longer inverted, nothing grabbed); `kernel_mode = "off"`
/// and SIGHUP then put the mouse in grab mode: the program pass-through (flags 0, no HID++
/// feature index), the pointer node grabbed, the wheel transformed once (one unit up
/// inverted on pawl's clone, −8: a double transform would turn it back), the gesture still
/// working over hidraw, and `pawl status --json` says grab mode and why.
pub fn kernel_mode_sighup_rewrites_settings_and_off_returns_to_grab(
    ctx: &mut Ctx,
) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let mut rig = KernelRig::start(ctx, DEFAULT_CONFIG, HIDRAW_CLOSED)?;
    rig.check_kernel_mode()?;
    let json = status_json(ctx, &mut rig)?;
    ensure!(
        json.contains(r#""part":"mode","path":"bpf""#),
        "pawl status --json in kernel mode: {json}"
    );
    let out = devices(ctx, &mut rig)?;
    ensure!(
        out.lines().any(|l| l.contains("mode:")
            && l.contains("kernel mode: pawl's HID-BPF program on")
            && l.contains(&rig.hid)),
        "pawl devices in kernel mode has no kernel-mode line for {}: {out}",
        rig.hid
    );
    println!("# pawl devices in kernel mode:\n{out}");
    let mut node = EvdevNode::open(&rig.source.path)?;
    let got = one_unit_up(&mut rig, &mut node)?;
    ensure!(got == vec![-UNIT], "one unit up in kernel mode: {got:?}");

    // 1. SIGHUP with the wheel no longer inverted: the settings follow, still kernel mode.
    let before = rig.settings()?;
    ensure!(before.scroll.invert_vertical == 1, "{before:?}");
    reload(
        &rig,
        "[hidpp]\nenabled = true\n[scroll]\ninvert_vertical = false\n",
    )?;
    let deadline = Instant::now() + T_EVENT;
    while rig.settings()?.scroll.invert_vertical != 0 {
        ensure!(
            Instant::now() < deadline,
            "SIGHUP never reached the program's settings: {:?}; log: {}",
            rig.settings()?,
            rig.pawl.log()
        );
        rig.dev.pump(Duration::from_millis(20))?;
    }
    let s = rig.settings()?;
    ensure!(
        s.flags & FLAG_WHEEL != 0 && s.reprog_index == before.reprog_index,
        "after SIGHUP: {s:?} (before {before:?})"
    );
    ensure!(
        node.is_free_to_grab()?,
        "pawl grabbed the node on a reload that kept kernel mode"
    );
    let got = one_unit_up(&mut rig, &mut node)?;
    ensure!(
        got == vec![UNIT],
        "one unit up after invert_vertical = false: {got:?}"
    );

    // 2. SIGHUP with kernel mode off: grab mode, the program pass-through.
    reload(&rig, KERNEL_MODE_OFF)?;
    let deadline = Instant::now() + T_EVENT;
    while node.is_free_to_grab()? {
        ensure!(
            Instant::now() < deadline,
            "pawl did not grab the MX Master after kernel_mode = \"off\"; log: {}",
            rig.pawl.log()
        );
        rig.dev.pump(Duration::from_millis(20))?;
    }
    let s = rig.settings()?;
    ensure!(
        s.flags == 0 && s.reprog_index == 0 && s.wireless_status_index == 0,
        "grab mode left the program transforming or taking HID++: {s:?}"
    );
    let mut clone = rig.pawl.wait_clone(&rig.source, T_DEVICE)?;
    rig.dev.pump(Duration::from_millis(200))?;
    let got = one_unit_up(&mut rig, &mut clone)?;
    ensure!(
        got.len() == 1 && got[0] < 0,
        "one unit up in grab mode (inverted once, by pawl): {got:?}"
    );
    rig.dev
        .pump_until("gesture button diverted in grab mode", T_EVENT, |d| {
            d.gesture_diverted()
        })?;
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let json = status_json(ctx, &mut rig)?;
    ensure!(
        json.contains(r#""part":"mode","path":"grab","reason":"kernel-mode-off""#),
        "pawl status --json after kernel_mode = \"off\": {json}"
    );
    ctx.notes
        .push(format!("status --json in grab mode: {json}"));
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `kernel_mode_wireless_reconnect_rediverts_from_the_ring`: in kernel mode the mouse
/// loses its diversion (it slept or reconnected, the HID device staying) and sends the
/// 0x1D4B wireless status notification: the program copies it to the ring (hidraw is
/// closed), pawl reopens hidraw, diverts the gesture button again, closes hidraw again,
/// and the gesture works.
pub fn kernel_mode_wireless_reconnect_rediverts_from_the_ring(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let mut rig = KernelRig::start(ctx, DEFAULT_CONFIG, HIDRAW_CLOSED)?;
    rig.check_kernel_mode()?;
    let wireless = rig
        .dev
        .emu()
        .feature_index(pawl_hidpp::feature::WIRELESS_DEVICE_STATUS)
        .context("no 0x1D4B")?;
    let s = rig.settings()?;
    ensure!(
        s.wireless_status_index == wireless,
        "the program looks for 0x1D4B at {}, the device has it at {wireless}",
        s.wireless_status_index
    );
    let before = rig.stats()?;
    rig.dev.emu().reset();
    let status = rig.dev.emu().wireless_status();
    rig.dev.send(&status)?;
    rig.wait_log("reconnected: diverting again", 1)?;
    rig.wait_log(HIDRAW_CLOSED, 2)?;
    let stats = rig.stats()?;
    ensure!(
        stats.ring_records > before.ring_records,
        "the notification did not reach the ring: {before:?} -> {stats:?}"
    );
    rig.check_kernel_mode()?;
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    rig.stop_and_check_restored()
}

/// `kernel_mode_follows_a_replaced_or_removed_attachment`: with pawl running in kernel
/// mode, the loader attaches again to the same HID device (a second bind: the package's
/// postinst on an upgrade, `add` by hand): pawl notices (the loader's announcement), opens
/// the new program's pins and writes its settings (the transform on, the 0x1B04 index),
/// and the gesture works through the new ring. Then the loader detaches it with the mouse
/// still there (`remove`, as the package's prerm does with `--detach`): pawl goes back to
/// grab mode (the node grabbed, hidraw watched again) and the gesture still works.
pub fn kernel_mode_follows_a_replaced_or_removed_attachment(ctx: &mut Ctx) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let mut rig = KernelRig::start(ctx, DEFAULT_CONFIG, HIDRAW_CLOSED)?;
    rig.check_kernel_mode()?;
    let hid = rig.hid.clone();
    loader_add(ctx, &hid)?;
    let deadline = Instant::now() + T_EVENT;
    while rig.settings()?.flags & FLAG_WHEEL == 0 {
        ensure!(
            Instant::now() < deadline,
            "pawl never wrote the new program's settings: {:?}; log: {}",
            rig.settings()?,
            rig.pawl.log()
        );
        rig.dev.pump(Duration::from_millis(20))?;
    }
    rig.check_kernel_mode()?;
    let before = rig.stats()?;
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let stats = rig.stats()?;
    ensure!(
        stats.ring_records > before.ring_records,
        "the gesture did not come through the new program's ring: {before:?} -> {stats:?}"
    );

    detach(ctx, &hid)?;
    let node = EvdevNode::open(&rig.source.path)?;
    let deadline = Instant::now() + T_EVENT;
    while node.is_free_to_grab()? {
        ensure!(
            Instant::now() < deadline,
            "pawl stayed in kernel mode after the program was detached; log: {}",
            rig.pawl.log()
        );
        rig.dev.pump(Duration::from_millis(20))?;
    }
    rig.dev.pump(Duration::from_millis(200))?;
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// logind's state directory of seats and seat0's file in it.
const SEATS_DIR: &str = "/run/systemd/seats";
/// The second seat user of the reseat scenarios.
const OTHER_USER: u32 = 2006;

/// Writes seat0's state file as logind does (a temporary file in the same directory,
/// renamed into place) with `ACTIVE_UID=uid`.
fn write_seat0(uid: u32) -> anyhow::Result<()> {
    std::fs::create_dir_all(SEATS_DIR).context("mkdir /run/systemd/seats")?;
    let tmp = format!("{SEATS_DIR}/.#seat0XXXXXX");
    std::fs::write(
        &tmp,
        format!(
            "# This is private data. Do not parse.\nIS_SEAT0=1\nCAN_MULTI_SESSION=1\n\
             CAN_TTY=1\nCAN_GRAPHICAL=1\nACTIVE=c{uid}\nACTIVE_UID={uid}\nSESSIONS=c{uid}\n\
             UIDS={uid}\n"
        ),
    )
    .context("write seat0's temporary file")?;
    std::fs::rename(&tmp, format!("{SEATS_DIR}/seat0")).context("rename seat0 into place")
}

/// Removes seat0's state file when dropped (the other scenarios run with no seat user).
struct Seat0Cleanup;

impl Drop for Seat0Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(format!("{SEATS_DIR}/seat0"));
    }
}

/// Runs the loader with `args`, killing it if it takes longer than `timeout`;
/// `(exit status, stdout + stderr)`, or an error naming a loader that hung.
fn loader_within(args: &[&str], timeout: Duration) -> anyhow::Result<(i32, String)> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(crate::scenarios::base::kernel_mode::LOADER)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("run the loader")?;
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("the loader {args:?} hung for {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut text = String::new();
    child.stdout.take().unwrap().read_to_string(&mut text)?;
    child.stderr.take().unwrap().read_to_string(&mut text)?;
    Ok((status.code().unwrap_or(-1), text.trim().to_owned()))
}

/// `pawl-kernel-attach reseat` (no `--uid`: seat0's file says whom for); must exit 0.
fn reseat(ctx: &mut Ctx) -> anyhow::Result<String> {
    let (status, text) = loader_within(&["reseat"], T_EVENT)?;
    ctx.notes
        .push(format!("loader reseat: status {status}: {text}"));
    ensure!(status == 0, "reseat failed with status {status}: {text}");
    Ok(text)
}

/// Whom `hid`'s attachment under `/run/pawl/bpf` is for: its stats pin's owner
/// (`pins::attachment_owner`).
fn pins_owner(hid: &str) -> anyhow::Result<u32> {
    let dir = pawl_bpf::pins::device_dir(std::path::Path::new(pawl_bpf::pins::PIN_ROOT), hid);
    pawl_bpf::pins::attachment_owner(&dir)
        .with_context(|| format!("no stats pin in {}", dir.display()))
}

/// Whether a bpffs is mounted on the pin root (`/proc/self/mounts`).
fn pin_root_mounted() -> anyhow::Result<bool> {
    let mounts = std::fs::read_to_string("/proc/self/mounts")?;
    Ok(mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(pawl_bpf::pins::PIN_ROOT)))
}

/// Waits until `pawl` grabs `source`'s node, answering HID++ meanwhile.
fn wait_grabbed(rig: &mut KernelRig, why: &str) -> anyhow::Result<()> {
    let node = EvdevNode::open(&rig.source.path)?;
    let deadline = Instant::now() + T_EVENT;
    while node.is_free_to_grab()? {
        ensure!(
            Instant::now() < deadline,
            "pawl did not grab the MX Master {why}; log: {}",
            rig.pawl.log()
        );
        rig.dev.pump(Duration::from_millis(20))?;
    }
    Ok(())
}

/// `kernel_mode_reseat_hands_the_mouse_to_the_seat_user_and_back`: the program attached
/// with root's pins (nobody at seat0), pawl running as uid 2005 in grab mode
/// (`pins-of-another-user`). logind makes 2005 seat0's user (its file rewritten, a
/// temporary file renamed) and `pawl-kernel-attach reseat` runs as the path unit would
/// (no `--uid`): the pins become 2005's, pawl notices the loader's announcement, goes to
/// kernel mode (node released, transform on) and one unit up comes out inverted on the
/// MX Master's own node. Then seat0 goes to uid 2006 and reseat runs again: pawl (2005)
/// leaves kernel mode and grabs again, the new program is pass-through so its clone shows
/// the wheel inverted once, and `pawl status --json` names uid 2006. Last, `--detach`
/// leaves nothing attached and nothing mounted.
pub fn kernel_mode_reseat_hands_the_mouse_to_the_seat_user_and_back(
    ctx: &mut Ctx,
) -> anyhow::Result<()> {
    needs_hid_bpf()?;
    let _seat = Seat0Cleanup;
    let mut rig = KernelRig::start_as(ctx, DEFAULT_CONFIG, DIVERTED, Some(SEAT_USER), Some(0))?;
    wait_grabbed(&mut rig, "with root's pins")?;
    let json = status_json_as(ctx, &mut rig, Some(SEAT_USER))?;
    ensure!(
        json.contains(r#""reason":"pins-of-another-user""#) && json.contains("isattachedforuid0"),
        "pawl status --json before the reseat: {json}"
    );

    // 1. seat0 is 2005's: the pins become 2005's, pawl goes to kernel mode.
    write_seat0(SEAT_USER.0)?;
    let text = reseat(ctx)?;
    ensure!(
        text.contains(&format!("reseated {} for uid {}", rig.hid, SEAT_USER.0)),
        "reseat for uid {}: {text}",
        SEAT_USER.0
    );
    ensure!(
        pins_owner(&rig.hid)? == SEAT_USER.0,
        "the pins are not 2005's"
    );
    rig.wait_log(KERNEL_MODE_ON, 1)?;
    rig.wait_log(HIDRAW_CLOSED, 1)?;
    rig.check_kernel_mode()?;
    let mut node = EvdevNode::open(&rig.source.path)?;
    let got = one_unit_up(&mut rig, &mut node)?;
    ensure!(
        got == vec![-UNIT],
        "one unit up in kernel mode after the reseat: {got:?}"
    );
    let json = status_json_as(ctx, &mut rig, Some(SEAT_USER))?;
    ensure!(
        json.contains(r#""part":"mode","path":"bpf""#),
        "pawl status --json after the reseat for its user: {json}"
    );
    // A second rewrite for the same user (another session of it) replaces nothing.
    write_seat0(SEAT_USER.0)?;
    let text = reseat(ctx)?;
    ensure!(
        text.contains(&format!("every attachment is uid {}'s", SEAT_USER.0)),
        "a reseat for the user who has the pins: {text}"
    );

    // 2. seat0 is 2006's: 2005's pawl leaves kernel mode and grabs again.
    write_seat0(OTHER_USER)?;
    let text = reseat(ctx)?;
    ensure!(
        text.contains(&format!("reseated {} for uid {OTHER_USER}", rig.hid)),
        "reseat for uid {OTHER_USER}: {text}"
    );
    ensure!(
        pins_owner(&rig.hid)? == OTHER_USER,
        "the pins are not 2006's"
    );
    wait_grabbed(&mut rig, "after the reseat away from its user")?;
    let s = rig.settings()?;
    ensure!(
        s.flags == 0 && s.reprog_index == 0,
        "the new program (2006's) transforms with nobody's settings: {s:?}"
    );
    let mut clone = rig.pawl.wait_clone(&rig.source, T_DEVICE)?;
    rig.dev.pump(Duration::from_millis(200))?;
    let got = one_unit_up(&mut rig, &mut clone)?;
    ensure!(
        got == vec![-UNIT],
        "one unit up through the clone after the reseat away (inverted once): {got:?}"
    );
    let json = status_json_as(ctx, &mut rig, Some(SEAT_USER))?;
    ensure!(
        json.contains(r#""part":"mode","path":"grab","reason":"pins-of-another-user""#)
            && json.contains(&format!("isattachedforuid{OTHER_USER}")),
        "pawl status --json after the reseat for uid {OTHER_USER}: {json}"
    );
    ctx.notes
        .push(format!("status after the reseat away: {json}"));
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");

    // 3. `--detach`: nothing attached, nothing mounted.
    let (status, text) = loader_within(&["--detach"], T_EVENT)?;
    ctx.notes
        .push(format!("loader --detach: status {status}: {text}"));
    ensure!(status == 0, "--detach failed with status {status}: {text}");
    ensure!(
        !pin_root_mounted()?,
        "--detach after a reseat left {} mounted",
        pawl_bpf::pins::PIN_ROOT
    );
    let (status, text) = loader_within(&["reseat"], T_EVENT)?;
    ensure!(
        status == 0 && text.contains("nothing to reseat: nothing is attached"),
        "reseat with nothing attached: status {status}: {text}"
    );
    Ok(())
}

/// `kernel_mode_reseat_ignores_a_seat_file_logind_did_not_write_and_waits_its_turn`: the
/// program attached with root's pins; seat0's file replaced by what no logind writes — a
/// symlink to a uid-2005 file naming uid 2005, a FIFO nobody writes, a 1 MiB file naming
/// uid 2005 first, garbage — each time `reseat` finishes (no hang) and leaves the pins
/// root's. A reseat started while another loader holds the lock waits for it. A reseat and
/// an `add` of the same device started together both succeed and leave one usable
/// attachment. A `/run/pawl` owned by a user is refused by `add` and `reseat`.
pub fn kernel_mode_reseat_ignores_a_seat_file_logind_did_not_write_and_waits_its_turn(
    ctx: &mut Ctx,
) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    needs_hid_bpf()?;
    let _seat = Seat0Cleanup;
    let (_dev, _source, hid, _phys) = hires_mouse(ctx)?;
    attach_pass_through_for(ctx, &hid, 0)?;
    let seat0 = format!("{SEATS_DIR}/seat0");
    std::fs::create_dir_all(SEATS_DIR)?;
    let reseat_leaves_root = |ctx: &mut Ctx, what: &str| -> anyhow::Result<()> {
        let (status, text) = loader_within(&["reseat"], Duration::from_secs(10))
            .with_context(|| format!("seat0 {what}"))?;
        ctx.notes
            .push(format!("reseat with seat0 {what}: status {status}: {text}"));
        ensure!(
            status == 0,
            "reseat with seat0 {what}: status {status}: {text}"
        );
        ensure!(
            pins_owner(&hid)? == 0,
            "reseat with seat0 {what} handed the pins over: {text}"
        );
        Ok(())
    };
    // A symlink to a file a user wrote.
    let bait = ctx.subdir("bait")?.join("seat0");
    std::fs::write(&bait, "ACTIVE_UID=2005\n")?;
    std::os::unix::fs::chown(&bait, Some(SEAT_USER.0), Some(SEAT_USER.1))?;
    std::os::unix::fs::symlink(&bait, &seat0)?;
    reseat_leaves_root(ctx, "a symlink to a user's file")?;
    std::fs::remove_file(&seat0)?;
    // A FIFO.
    let c = std::ffi::CString::new(seat0.clone())?;
    // SAFETY: `c` is NUL-terminated.
    ensure!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) } == 0, "mkfifo");
    reseat_leaves_root(ctx, "a FIFO")?;
    std::fs::remove_file(&seat0)?;
    // Huge.
    let mut big = b"ACTIVE_UID=2005\n".to_vec();
    big.resize(1 << 20, b'#');
    std::fs::write(&seat0, &big)?;
    reseat_leaves_root(ctx, "of 1 MiB")?;
    // Garbage.
    std::fs::write(
        &seat0,
        b"\xff\xfe\0ACTIVE_UID=\0\n\x80ACTIVE_UID=99999999999\n",
    )?;
    reseat_leaves_root(ctx, "of garbage")?;

    // The lock: a reseat waits while another loader holds it.
    write_seat0(SEAT_USER.0)?;
    let lock_path = "/run/pawl/loader.lock";
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(lock_path)
        .context("open the loader lock")?;
    held.lock().context("take the loader lock")?;
    let waiting = std::thread::spawn(|| loader_within(&["reseat"], T_EVENT));
    std::thread::sleep(Duration::from_secs(2));
    ensure!(
        !waiting.is_finished(),
        "reseat ran while another loader held the lock"
    );
    ensure!(
        pins_owner(&hid)? == 0,
        "reseat changed the pins under the lock"
    );
    drop(held);
    let (status, text) = waiting.join().expect("the loader thread")?;
    ctx.notes
        .push(format!("reseat after the lock: status {status}: {text}"));
    ensure!(
        status == 0 && pins_owner(&hid)? == SEAT_USER.0,
        "reseat after the lock: {text}"
    );

    // A reseat (for 2006) and udev's add (for root) at once: both done, one attachment.
    write_seat0(OTHER_USER)?;
    for round in 0..3 {
        let h = hid.clone();
        let add = std::thread::spawn(move || loader_within(&["add", &h, "--uid", "0"], T_EVENT));
        let (rs, rt) = loader_within(&["reseat"], T_EVENT)?;
        let (as_, at) = add.join().expect("the add thread")?;
        ctx.notes.push(format!(
            "round {round}: reseat {rs}: {rt} | add {as_}: {at}"
        ));
        ensure!(
            rs == 0 && as_ == 0,
            "round {round}: reseat {rs}: {rt}; add {as_}: {at}"
        );
        let owner = pins_owner(&hid)?;
        ensure!(
            owner == 0 || owner == OTHER_USER,
            "round {round}: the pins are uid {owner}'s"
        );
        let kd = KernelDevice::open(&hid).map_err(err)?;
        kd.settings().map_err(err)?;
        let dirs: Vec<_> = std::fs::read_dir(pawl_bpf::pins::PIN_ROOT)?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        ensure!(
            dirs.iter()
                .filter(|d| pawl_bpf::pins::hid_name_of_dir(d).as_deref() == Some(hid.as_str()))
                .count()
                == 1,
            "round {round}: pin directories {dirs:?}"
        );
    }

    // A /run/pawl a user owns (made before the first attach where /run let it).
    let (status, text) = loader_within(&["--detach"], T_EVENT)?;
    ensure!(status == 0, "--detach: {text}");
    ensure!(!pin_root_mounted()?, "--detach left the pin root mounted");
    let run_meta = std::fs::metadata("/run")?;
    ctx.notes.push(format!(
        "/run is mode {:o}",
        run_meta.permissions().mode() & 0o7777
    ));
    std::fs::remove_dir_all("/run/pawl")?;
    std::fs::create_dir("/run/pawl")?;
    std::os::unix::fs::chown("/run/pawl", Some(SEAT_USER.0), Some(SEAT_USER.1))?;
    std::fs::set_permissions("/run/pawl", PermissionsExt::from_mode(0o755))?;
    let result = (|| -> anyhow::Result<()> {
        let (status, text) = loader_within(&["add", &hid, "--uid", "0"], T_EVENT)?;
        ctx.notes
            .push(format!("add with a user's /run/pawl: {status}: {text}"));
        ensure!(
            status == 1 && text.contains("refusing") && !pin_root_mounted()?,
            "add with /run/pawl owned by uid 2005: status {status}: {text}"
        );
        let (status, text) = loader_within(&["reseat"], T_EVENT)?;
        ctx.notes
            .push(format!("reseat with a user's /run/pawl: {status}: {text}"));
        ensure!(
            status == 1 && text.contains("refusing"),
            "reseat with /run/pawl owned by uid 2005: status {status}: {text}"
        );
        Ok(())
    })();
    std::fs::remove_dir_all("/run/pawl")?;
    result?;
    loader_add(ctx, &hid)?;
    let (status, text) = loader_within(&["--detach"], T_EVENT)?;
    ensure!(
        status == 0 && !pin_root_mounted()?,
        "--detach at the end: {text}"
    );
    Ok(())
}
