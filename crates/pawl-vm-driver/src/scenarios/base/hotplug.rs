//! Hotplug and the daemon in real life: unplug and replug, a button held while pawl starts,
//! the kernel dropping events, SIGHUP reloads, SIGKILL, keyboards never opened, command
//! actions, sources with only one kind of wheel code, two MX Masters, permissions.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use pawl_evdev::codes::{
    BTN_LEFT, BTN_MOUSE, BTN_TASK, EV_KEY, EV_REL, MSC_SCAN, REL_WHEEL, REL_WHEEL_HI_RES, REL_X,
    REL_Y,
};

use crate::evdev::{self, EvdevNode, Event, Frame, NodeInfo};
use crate::hid::{GESTURE_BUTTON, HidMouse, MX_MASTER_3S_BT};
use crate::pawl::{Pawl, PawlOptions, clone_phys};
use crate::scenarios::Scenario;
use crate::scenarios::rig::keys::{META, PAGE_DOWN, PAGE_UP};
use crate::scenarios::rig::{Rig, check_wheel, expect_keys, holds_open, wait_gone};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT, motion_frame};
use crate::sys::InputId;
use crate::uinput::{UinputDevice, UinputSpec};
use crate::watch::{FsWatch, IN_OPEN};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    unplug_mid_gesture_releases_everything,
    replug_regrabs,
    held_button_at_start_is_not_stuck,
    syn_dropped_resyncs,
    sighup_applies_valid_config,
    sighup_keeps_old_on_invalid_config,
    sigkill_leaves_device_usable,
    keyboard_never_opened,
    command_action_runs_and_is_reaped,
    hires_only_source_gets_lowres_derived,
    lowres_only_source_gets_hires_synthesized,
    two_mx_masters_both_handled,
    permissions_set_after_node_appears_is_retried,
    uinput_permission_error_names_the_fix,
    grabbed_elsewhere_is_reported,
];

/// The default configuration: an empty file.
const DEFAULT_CONFIG: &str = "";

/// Travel of a gesture drag, px (past the default 220 px threshold).
const DRAG: i32 = 600;

/// How long "nothing more happens" is watched for.
const QUIET: Duration = Duration::from_millis(300);

/// `unplug_mid_gesture_releases_everything`: with the left button and the gesture button
/// held and a drag under way, the mouse vanishes. pawl releases the left button on the
/// clone, fires nothing, emits no gesture-button click (the kernel's own "release every
/// key" frame must not count as a click), and keeps running.
pub fn unplug_mid_gesture_releases_everything(ctx: &mut Ctx) -> anyhow::Result<()> {
    let Rig {
        mut mouse,
        mut pawl,
        mut clone,
        mut keyboard,
        ..
    } = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    mouse.press(0)?;
    clone.frames_until(T_EVENT, "left press", |f| {
        f.contains(&Event::new(EV_KEY, BTN_LEFT, 1))
    })?;
    mouse.press(GESTURE_BUTTON)?;
    mouse.motion(40, 0)?;
    mouse.motion(40, 0)?;
    // Let pawl take the press and the drag before the device goes.
    std::thread::sleep(Duration::from_millis(100));
    drop(mouse);
    let mut frames = clone
        .frames_until(T_EVENT, "left release", |f| {
            f.contains(&Event::new(EV_KEY, BTN_LEFT, 0))
        })
        .with_context(|| format!("pawl log: {}", pawl.log()))?;
    std::thread::sleep(QUIET);
    frames.extend(clone.drain()?);
    let gesture_code = BTN_MOUSE + u16::from(GESTURE_BUTTON);
    ensure!(
        !frames
            .iter()
            .flatten()
            .any(|e| e.type_ == EV_KEY && e.code == gesture_code),
        "the gesture button came out of the clone on unplug: {}",
        evdev::show(&frames)
    );
    ensure!(
        !frames
            .iter()
            .flatten()
            .any(|e| e.type_ == EV_KEY && e.value == 1),
        "a press came out of the clone on unplug: {}",
        evdev::show(&frames)
    );
    let keys = keyboard.drain()?;
    ensure!(
        keys.is_empty(),
        "a chord fired on unplug: {}",
        evdev::show(&keys)
    );
    ensure!(
        pawl.try_exit()?.is_none(),
        "pawl exited when the mouse vanished; log: {}",
        pawl.log()
    );
    ctx.notes
        .push(format!("clone on unplug: {}", evdev::show(&frames)));
    Ok(())
}

/// `replug_regrabs`: the mouse vanishes and comes back (same identity and phys, as after a
/// Bluetooth reconnect): pawl grabs it again, its input comes out of the clone and no
/// longer reaches other readers of the device.
pub fn replug_regrabs(ctx: &mut Ctx) -> anyhow::Result<()> {
    let rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    let phys = rig.source.phys.clone();
    let Rig {
        mouse, mut pawl, ..
    } = rig;
    drop(mouse);
    wait_log(&mut pawl, "device gone")?;
    let mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    let mut clone = pawl.wait_clone(&source, T_DEVICE)?;
    let mut reader = EvdevNode::open(&source.path)?;
    // The grab can follow the node by a moment: repeat the motion until it comes out.
    let deadline = Instant::now() + T_EVENT;
    loop {
        mouse.motion(3, 4)?;
        if let Some(f) = clone.next_frame(Duration::from_millis(200))? {
            ensure!(
                f == motion_frame(3, 4),
                "replugged mouse: clone emitted {f:?}"
            );
            break;
        }
        if Instant::now() >= deadline {
            bail!(
                "the replugged mouse's motion never came out of the clone; log: {}",
                pawl.log()
            );
        }
    }
    reader.drain()?;
    mouse.motion(-6, 1)?;
    let f = clone.next_frame(T_EVENT)?;
    ensure!(
        f.as_ref() == Some(&motion_frame(-6, 1)),
        "replugged mouse: clone emitted {f:?}"
    );
    std::thread::sleep(QUIET);
    let leaked = reader.drain()?;
    ensure!(
        leaked.is_empty(),
        "the replugged mouse is not grabbed: another reader got {}",
        evdev::show(&leaked)
    );
    Ok(())
}

/// `held_button_at_start_is_not_stuck`: the left button is down when pawl starts. pawl does
/// not grab yet (the release must reach whoever saw the press), grabs once the button is
/// up, and from then on forwards through its clone.
pub fn held_button_at_start_is_not_stuck(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("bt");
    let mut mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    // The press must come after the kernel driver's HID++ probe, as a hand's would.
    mouse.settle(Duration::from_millis(300));
    let mut reader = EvdevNode::open(&source.path)?;
    mouse.press(0)?;
    reader.frames_until(T_EVENT, "left press", |f| {
        f.contains(&Event::new(EV_KEY, BTN_LEFT, 1))
    })?;
    let mut pawl = start(ctx, DEFAULT_CONFIG, "GNOME", false)?;
    wait_log(&mut pawl, "no button down")?;
    let early = evdev::scan()
        .into_iter()
        .any(|n| n.phys == clone_phys(&source));
    ensure!(
        !early,
        "pawl cloned (grabbed) the mouse while its button was held"
    );
    mouse.release(0)?;
    reader
        .frames_until(T_EVENT, "left release on the source", |f| {
            f.contains(&Event::new(EV_KEY, BTN_LEFT, 0))
        })
        .context("the release did not reach the source's reader: the button would be stuck")?;
    let mut clone = pawl.wait_clone(&source, T_DEVICE)?;
    let deadline = Instant::now() + T_EVENT;
    loop {
        mouse.motion(2, 2)?;
        if let Some(f) = clone.next_frame(Duration::from_millis(200))? {
            ensure!(f == motion_frame(2, 2), "clone emitted {f:?}");
            break;
        }
        if Instant::now() >= deadline {
            bail!(
                "no motion through the clone after the release; log: {}",
                pawl.log()
            );
        }
    }
    mouse.press(0)?;
    mouse.release(0)?;
    let frames = clone.frames_until(T_EVENT, "left release", |f| {
        f.contains(&Event::new(EV_KEY, BTN_LEFT, 0))
    })?;
    ensure!(
        frames
            .iter()
            .flatten()
            .any(|e| *e == Event::new(EV_KEY, BTN_LEFT, 1)),
        "clicks after the grab: {}",
        evdev::show(&frames)
    );
    Ok(())
}

/// `syn_dropped_resyncs`: pawl is stopped (SIGSTOP) with the left button down on its clone;
/// the button is released and the device floods its queue until the kernel drops events
/// (`SYN_DROPPED`), taking the release with it. After SIGCONT pawl resyncs from the
/// device's real state (`EVIOCGKEY`): the clone gets the release, and input flows again.
pub fn syn_dropped_resyncs(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("bt");
    let mut mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    // --debug: the log shows that the kernel really dropped events.
    let mut pawl = start(ctx, DEFAULT_CONFIG, "GNOME", true)?;
    let mut clone = pawl.wait_clone(&source, T_DEVICE)?;
    ready(&mouse, &mut clone, &pawl)?;
    mouse.press(0)?;
    clone.frames_until(T_EVENT, "left press", |f| {
        f.contains(&Event::new(EV_KEY, BTN_LEFT, 1))
    })?;
    pawl.signal(libc::SIGSTOP)?;
    let resumed = (|| -> anyhow::Result<()> {
        mouse.release(0)?;
        // 150 reports of 2 events overflow a 64-, 128- or 256-event client buffer and leave
        // less than one buffer behind the drop, so the clone's reader cannot overflow.
        for i in 0..150 {
            mouse.motion(if i % 2 == 0 { 1 } else { -1 }, 0)?;
        }
        Ok(())
    })();
    pawl.signal(libc::SIGCONT)?;
    resumed?;
    let frames = clone
        .frames_until(T_EVENT, "left release after the resync", |f| {
            f.contains(&Event::new(EV_KEY, BTN_LEFT, 0))
        })
        .with_context(|| format!("pawl log: {}", tail(&pawl.log())))?;
    ensure!(
        pawl.log().contains("SYN_DROPPED"),
        "the kernel dropped nothing (no SYN_DROPPED in pawl's log): the flood was too small"
    );
    ready(&mouse, &mut clone, &pawl)?;
    ctx.notes
        .push(format!("{} frames up to the release", frames.len()));
    Ok(())
}

/// `sighup_applies_valid_config`: a valid config written over the old one and SIGHUP: the
/// new settings apply (here: desktop direction no longer inverted), the mouse stays
/// grabbed.
pub fn sighup_applies_valid_config(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    rig.gesture(DRAG, 0, 10)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]]).context("before the reload")?;
    std::fs::write(
        rig.pawl.config_path(),
        "[gesture]\ninvert_desktop = false\n",
    )?;
    rig.pawl.signal(libc::SIGHUP)?;
    wait_log(&mut rig.pawl, "config reloaded")?;
    rig.sentinel().context("after the reload")?;
    rig.gesture(DRAG, 0, 10)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_DOWN]]).context("after the reload")?;
    rig.stop()
}

/// `sighup_keeps_old_on_invalid_config`: an invalid config and SIGHUP: the error is logged
/// with `file:line:column`, the old config stays in force, the mouse stays grabbed.
pub fn sighup_keeps_old_on_invalid_config(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    let path = rig.pawl.config_path().to_owned();
    std::fs::write(&path, "[gesture]\ninvert_desktop = false\nthreshold = 0\n")?;
    rig.pawl.signal(libc::SIGHUP)?;
    wait_log(&mut rig.pawl, "keeping the current config")?;
    let located = format!("{}:3:", path.display());
    ensure!(
        rig.pawl.log().contains(&located),
        "the reload error does not name {located}; log: {}",
        rig.pawl.log()
    );
    rig.sentinel().context("after the failed reload")?;
    rig.gesture(DRAG, 0, 10)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])
        .context("the old config (inverted desktop direction) must still apply")?;
    rig.stop()
}

/// `sigkill_leaves_device_usable`: pawl killed with SIGKILL while the left button is down:
/// its virtual devices vanish (the kernel releases what they held), the mouse is no longer
/// grabbed, and its release reaches other readers.
pub fn sigkill_leaves_device_usable(ctx: &mut Ctx) -> anyhow::Result<()> {
    let Rig {
        mut mouse,
        source,
        mut pawl,
        mut clone,
        keyboard,
    } = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    let keyboard_phys = keyboard.info().phys.clone();
    drop(keyboard);
    mouse.press(0)?;
    clone.frames_until(T_EVENT, "left press", |f| {
        f.contains(&Event::new(EV_KEY, BTN_LEFT, 1))
    })?;
    pawl.signal(libc::SIGKILL)?;
    let status = pawl.wait_exit(T_EVENT)?;
    ctx.notes.push(format!("pawl: {status}"));
    drop(clone);
    let phys = clone_phys(&source);
    wait_gone("pawl's clone", |n| n.phys == phys)?;
    wait_gone("pawl's virtual keyboard", |n| n.phys == keyboard_phys)?;
    let mut reader = EvdevNode::open(&source.path)?;
    ensure!(
        reader.is_free_to_grab()?,
        "the mouse is still grabbed after SIGKILL"
    );
    mouse.release(0)?;
    reader
        .frames_until(T_EVENT, "left release", |f| {
            f.contains(&Event::new(EV_KEY, BTN_LEFT, 0))
        })
        .context("the mouse does not work after pawl was killed")?;
    Ok(())
}

/// `keyboard_never_opened`: keyboards present at startup and plugged in while pawl runs are
/// never opened by pawl (inotify `IN_OPEN` on `/dev/input` while only pawl touches their
/// nodes, and `/proc/PID/fd`), while the mouse is.
pub fn keyboard_never_opened(ctx: &mut Ctx) -> anyhow::Result<()> {
    let first = UinputDevice::create(&keyboard_spec(ctx.phys("isa0060/serio0/input0")))?;
    let phys = ctx.phys("bt");
    let mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    let watch = FsWatch::new(&[(Path::new("/dev/input"), IN_OPEN)])?;
    let mut pawl = start(ctx, DEFAULT_CONFIG, "GNOME", false)?;
    wait_log(&mut pawl, "running:")?;
    let second = UinputDevice::create(&keyboard_spec(ctx.phys("usb-kbd")))?;
    // pawl handles hotplug events in order: once it has grabbed a mouse plugged in after
    // the keyboard, it has dealt with the keyboard.
    let late_phys = ctx.phys("bt");
    let late = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &late_phys)?;
    let late_node = wait_sysfs(&late_phys)?;
    wait_log(&mut pawl, &format!("grabbed {}", late_node.display()))?;
    let opened: Vec<PathBuf> = watch.events()?.into_iter().map(|e| e.path).collect();
    let files = pawl.open_files()?;
    for kbd in [first.node(), second.node()] {
        ensure!(
            !opened.iter().any(|p| p == kbd),
            "{} (a keyboard) was opened; opens: {opened:?}",
            kbd.display()
        );
        ensure!(
            !holds_open(&files, kbd),
            "pawl holds {} (a keyboard) open",
            kbd.display()
        );
    }
    ensure!(
        opened.contains(&late_node),
        "the watch saw no open of the late mouse {} (opens: {opened:?})",
        late_node.display()
    );
    ensure!(
        holds_open(&files, &source.path),
        "pawl does not hold the mouse {} open",
        source.path.display()
    );
    drop(late);
    Ok(())
}

/// `command_action_runs_and_is_reaped`: a `{ command = [...] }` action runs its argv
/// directly, with stdin/stdout/stderr on /dev/null, in a session of its own, and is reaped:
/// no zombie child of pawl remains.
pub fn command_action_runs_and_is_reaped(ctx: &mut Ctx) -> anyhow::Result<()> {
    let out = ctx.work.join("command-ran");
    let script = format!(
        "i=$(readlink /proc/$$/fd/0); o=$(readlink /proc/$$/fd/1); e=$(readlink /proc/$$/fd/2); \
         s=$(cut -d' ' -f6 /proc/$$/stat); echo \"$$ $s $i $o $e\" > {}",
        out.display()
    );
    let config = format!(
        "[gesture]\ndown = {{ command = [\"/bin/sh\", \"-c\", {script:?}] }}\n\
         [actions]\nallow_root_commands = true\n"
    );
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, &config, "GNOME")?;
    rig.gesture(0, DRAG, 10)?;
    let deadline = Instant::now() + T_EVENT;
    let text = loop {
        match std::fs::read_to_string(&out) {
            Ok(t) if t.ends_with('\n') => break t,
            _ if Instant::now() >= deadline => {
                bail!("the command did not run; pawl log: {}", rig.pawl.log())
            }
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    ctx.notes.push(format!("command saw: {}", text.trim()));
    let fields: Vec<&str> = text.split_whitespace().collect();
    ensure!(fields.len() == 5, "unexpected command output {text:?}");
    ensure!(
        fields[0] == fields[1],
        "the command is not a session leader (pid {}, session {})",
        fields[0],
        fields[1]
    );
    ensure!(
        fields[2..].iter().all(|f| *f == "/dev/null"),
        "the command's stdin/stdout/stderr are {:?}, not /dev/null",
        &fields[2..]
    );
    let pid = rig.pawl.pid();
    let deadline = Instant::now() + T_EVENT;
    loop {
        let zombies = zombie_children(pid);
        if zombies.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            bail!("zombie children of pawl: {zombies:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    rig.stop()
}

/// `hires_only_source_gets_lowres_derived`: a mouse reporting only `REL_WHEEL_HI_RES`
/// (scroll passed through, `scope = "none"`): its clone has `REL_WHEEL` too, the hi-res
/// values come out unchanged and lo-res detents are derived from their sum.
pub fn hires_only_source_gets_lowres_derived(ctx: &mut Ctx) -> anyhow::Result<()> {
    let inputs = [40, 40, 40, 40, 40, 40, 40];
    let frames: Vec<Frame> = inputs
        .iter()
        .map(|v| vec![Event::new(EV_REL, REL_WHEEL_HI_RES, *v)])
        .collect();
    let got = one_wheel_source(ctx, &[REL_WHEEL_HI_RES], &frames)?;
    check_wheel(&got, true, &inputs, false)?;
    let lores: i32 = got
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_REL && e.code == REL_WHEEL)
        .map(|e| e.value)
        .sum();
    ensure!(
        lores == 2,
        "280 v120 gave {lores} detents, want 2: {}",
        evdev::show(&got)
    );
    Ok(())
}

/// `lowres_only_source_gets_hires_synthesized`: a mouse reporting only `REL_WHEEL`
/// (scroll passed through): its clone has `REL_WHEEL_HI_RES` too, and every detent comes out
/// as 120 hi-res units with the detent.
pub fn lowres_only_source_gets_hires_synthesized(ctx: &mut Ctx) -> anyhow::Result<()> {
    let frames: Vec<Frame> = [1, 1, -1]
        .iter()
        .map(|v| vec![Event::new(EV_REL, REL_WHEEL, *v)])
        .collect();
    let got = one_wheel_source(ctx, &[REL_WHEEL], &frames)?;
    let want: Vec<Frame> = [1, 1, -1]
        .iter()
        .map(|v| {
            vec![
                Event::new(EV_REL, REL_WHEEL_HI_RES, 120 * v),
                Event::new(EV_REL, REL_WHEEL, *v),
            ]
        })
        .collect();
    ensure!(
        got == want,
        "want {}\n got {}",
        evdev::show(&want),
        evdev::show(&got)
    );
    Ok(())
}

/// `two_mx_masters_both_handled`: two MX Masters at once: both grabbed and cloned, both
/// wheels transformed (inverted), gestures from either fire.
pub fn two_mx_masters_both_handled(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys_a = ctx.phys("bt");
    let phys_b = ctx.phys("bt");
    let mut a = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys_a)?;
    let mut b = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys_b)?;
    let source_a = a.wait_node(T_DEVICE)?;
    let source_b = b.wait_node(T_DEVICE)?;
    let mut pawl = start(ctx, DEFAULT_CONFIG, "GNOME", false)?;
    let mut clone_a = pawl.wait_clone(&source_a, T_DEVICE)?;
    let mut clone_b = pawl.wait_clone(&source_b, T_DEVICE)?;
    let mut keyboard = pawl.wait_keyboard(T_DEVICE)?;
    ready(&a, &mut clone_a, &pawl)?;
    ready(&b, &mut clone_b, &pawl)?;
    for (mouse, clone, name) in [(&a, &mut clone_a, "first"), (&b, &mut clone_b, "second")] {
        mouse.wheel(1)?;
        let f = clone
            .next_frame(T_EVENT)?
            .with_context(|| format!("{name}: no wheel frame"))?;
        let hires: i32 = f
            .iter()
            .filter(|e| e.type_ == EV_REL && e.code == REL_WHEEL_HI_RES)
            .map(|e| e.value)
            .sum();
        ensure!(
            hires < 0,
            "{name} MX Master: wheel up came out as {f:?} (want inverted)"
        );
    }
    for mouse in [&mut a, &mut b] {
        mouse.press(GESTURE_BUTTON)?;
        for _ in 0..10 {
            mouse.motion(DRAG / 10, 0)?;
        }
        mouse.release(GESTURE_BUTTON)?;
    }
    expect_keys(&mut keyboard, &[&[META, PAGE_UP], &[META, PAGE_UP]])?;
    Ok(())
}

/// `permissions_set_after_node_appears_is_retried`: pawl runs as an ordinary user; a mouse
/// appears with a node only root can open (as before udev applies its rule). pawl cannot
/// open it and says so with the fix; when the node's permissions change (`IN_ATTRIB`) pawl
/// tries again and grabs it — no polling, no restart.
pub fn permissions_set_after_node_appears_is_retried(ctx: &mut Ctx) -> anyhow::Result<()> {
    let _uinput = Uinput::allow_everyone()?;
    let name = ctx.phys("pawl");
    let dir = ctx.subdir(&name)?;
    let mut pawl = Pawl::start_as(
        &ctx.pawl,
        &dir,
        &PawlOptions {
            config: DEFAULT_CONFIG,
            desktop: "GNOME",
            run_args: &[],
            debug: true,
        },
        Some(USER),
    )?;
    wait_log(&mut pawl, "running:")?;
    let phys = ctx.phys("bt");
    let mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let node = wait_sysfs(&phys)?;
    // devtmpfs creates evdev nodes as root 0600; make sure, whatever the kernel's default.
    chmod(&node, 0o600)?;
    // The failed open right after the node appeared (debug), then the retry on our chmod,
    // still failing, reported as an error with the fix.
    wait_log(&mut pawl, &format!("ERROR not handling {}", node.display()))?;
    ensure!(
        !evdev::scan()
            .iter()
            .any(|n| n.phys == format!("pawl/{phys}")),
        "pawl cloned a device it cannot open?"
    );
    chmod(&node, 0o644)?;
    let source = mouse.wait_node(T_DEVICE)?;
    let mut clone = pawl.wait_clone(&source, T_DEVICE)?;
    ready(&mouse, &mut clone, &pawl)?;
    let log = pawl.log();
    ensure!(
        log.contains("contrib/70-pawl.rules"),
        "the permission problem was not reported with its fix; log: {log}"
    );
    Ok(())
}

/// `uinput_permission_error_names_the_fix`: pawl as an ordinary user without access to
/// `/dev/uinput` exits non-zero with an error naming `/dev/uinput` and the udev rule, having
/// grabbed nothing.
pub fn uinput_permission_error_names_the_fix(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("bt");
    let mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    chmod(&source.path, 0o644)?;
    chmod(Path::new("/dev/uinput"), 0o600)?;
    let name = ctx.phys("pawl");
    let dir = ctx.subdir(&name)?;
    let mut pawl = Pawl::start_as(
        &ctx.pawl,
        &dir,
        &PawlOptions {
            config: DEFAULT_CONFIG,
            desktop: "GNOME",
            run_args: &[],
            debug: false,
        },
        Some(USER),
    )?;
    let status = pawl.wait_exit(T_DEVICE)?;
    let log = pawl.log();
    ensure!(
        !status.success(),
        "pawl ran without /dev/uinput; log: {log}"
    );
    for needle in ["/dev/uinput", "contrib/70-pawl.rules"] {
        ensure!(
            log.contains(needle),
            "the error does not name {needle}: {log}"
        );
    }
    let mut reader = EvdevNode::open(&source.path)?;
    ensure!(reader.is_free_to_grab()?, "the mouse is grabbed");
    mouse.motion(1, 1)?;
    let f = reader.next_frame(T_EVENT)?;
    ensure!(
        f == Some(motion_frame(1, 1)),
        "the mouse's reader got {f:?}"
    );
    Ok(())
}

/// `grabbed_elsewhere_is_reported`: a mouse another program has grabbed is reported ("has
/// grabbed it") and left alone: pawl keeps running and does not fight for it.
pub fn grabbed_elsewhere_is_reported(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("bt");
    let mouse = HidMouse::create(MX_MASTER_3S_BT, &ctx.recordings, &phys)?;
    let source = mouse.wait_node(T_DEVICE)?;
    let mut other = EvdevNode::open(&source.path)?;
    other.grab()?;
    let mut pawl = start(ctx, DEFAULT_CONFIG, "GNOME", false)?;
    wait_log(&mut pawl, "has grabbed it")?;
    wait_log(&mut pawl, "running:")?;
    mouse.motion(2, 3)?;
    let f = other.next_frame(T_EVENT)?;
    ensure!(f == Some(motion_frame(2, 3)), "the other program got {f:?}");
    ensure!(
        !evdev::scan().iter().any(|n| n.phys == clone_phys(&source)),
        "pawl cloned a device another program holds"
    );
    ensure!(
        pawl.try_exit()?.is_none(),
        "pawl exited; log: {}",
        pawl.log()
    );
    Ok(())
}

/// The ordinary user pawl runs as in the permission scenarios.
const USER: (u32, u32) = (1000, 1000);

/// `/dev/uinput` opened to everyone for one scenario, back to 0600 afterwards.
struct Uinput;

impl Uinput {
    fn allow_everyone() -> anyhow::Result<Uinput> {
        chmod(Path::new("/dev/uinput"), 0o666)?;
        Ok(Uinput)
    }
}

impl Drop for Uinput {
    fn drop(&mut self) {
        let _ = chmod(Path::new("/dev/uinput"), 0o600);
    }
}

fn chmod(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("chmod {mode:o} {}", path.display()))
}

/// Starts pawl with `config`.
fn start(ctx: &mut Ctx, config: &str, desktop: &str, debug: bool) -> anyhow::Result<Pawl> {
    let name = ctx.phys("pawl");
    let dir = ctx.subdir(&name)?;
    Pawl::start(
        &ctx.pawl,
        &dir,
        &PawlOptions {
            config,
            desktop,
            run_args: &[],
            debug: debug || ctx.pawl_debug,
        },
    )
}

/// Waits until pawl's log contains `needle`; fails when pawl exits or after [`T_DEVICE`].
fn wait_log(pawl: &mut Pawl, needle: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + T_DEVICE;
    loop {
        if pawl.log().contains(needle) {
            return Ok(());
        }
        if let Some(s) = pawl.try_exit()? {
            bail!(
                "pawl exited ({s}) before logging {needle:?}; log: {}",
                pawl.log()
            );
        }
        if Instant::now() >= deadline {
            bail!(
                "pawl did not log {needle:?} within {T_DEVICE:?}; log: {}",
                pawl.log()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A motion that comes out of `clone` unchanged: pawl has the device and its loop runs.
fn ready(mouse: &HidMouse, clone: &mut EvdevNode, pawl: &Pawl) -> anyhow::Result<()> {
    mouse.motion(7, -5)?;
    clone
        .frames_until(T_EVENT, "sentinel motion", |f| *f == motion_frame(7, -5))
        .with_context(|| format!("pawl log: {}", tail(&pawl.log())))?;
    Ok(())
}

/// The last lines of a (debug) log.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// The `/dev/input/eventN` whose sysfs phys is `phys`, found without opening any node.
fn wait_sysfs(phys: &str) -> anyhow::Result<PathBuf> {
    let deadline = Instant::now() + T_DEVICE;
    loop {
        for entry in std::fs::read_dir("/sys/class/input")?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with("event") {
                continue;
            }
            let p = std::fs::read_to_string(entry.path().join("device/phys")).unwrap_or_default();
            let caps = std::fs::read_to_string(entry.path().join("device/capabilities/rel"))
                .unwrap_or_default();
            if p.trim() == phys && caps.trim() != "0" {
                return Ok(PathBuf::from("/dev/input").join(name));
            }
        }
        if Instant::now() >= deadline {
            bail!("no evdev node with phys {phys:?} and motion");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A full keyboard (`KEY_ESC`..`KEY_F12` and more, `MSC_SCAN`), as `atkbd` presents one.
fn keyboard_spec(phys: String) -> UinputSpec {
    UinputSpec {
        name: "AT Translated Set 2 keyboard".into(),
        id: InputId {
            bustype: 0x11,
            vendor: 0x0001,
            product: 0x0001,
            version: 0xab41,
        },
        phys,
        props: Vec::new(),
        keys: (1..=120).collect(),
        rels: Vec::new(),
        mscs: vec![MSC_SCAN],
        abs: Vec::new(),
    }
}

/// A uinput "MX Master 3S" (so pawl handles it) whose wheel has only `rels`, run through
/// pawl with scroll passed through; returns the clone's frames for `frames`.
fn one_wheel_source(ctx: &mut Ctx, rels: &[u16], frames: &[Frame]) -> anyhow::Result<Vec<Frame>> {
    let phys = ctx.phys("bt");
    let mut all_rels = vec![REL_X, REL_Y];
    all_rels.extend_from_slice(rels);
    let spec = UinputSpec {
        name: "Logitech MX Master 3S".into(),
        id: InputId {
            bustype: 0x05,
            vendor: 0x046d,
            product: 0xb034,
            version: 0x0001,
        },
        phys,
        props: Vec::new(),
        keys: (BTN_LEFT..=BTN_TASK).collect(),
        rels: all_rels,
        mscs: vec![MSC_SCAN],
        abs: Vec::new(),
    };
    let mouse = UinputDevice::create(&spec)?;
    let source: NodeInfo = mouse.info()?;
    let mut pawl = start(ctx, "[scroll]\nscope = \"none\"\n", "GNOME", false)?;
    let mut clone = pawl.wait_clone(&source, T_DEVICE)?;
    for (code, name) in [
        (REL_WHEEL, "REL_WHEEL"),
        (REL_WHEEL_HI_RES, "REL_WHEEL_HI_RES"),
    ] {
        ensure!(clone.has(EV_REL, code), "the clone lacks {name}");
    }
    let deadline = Instant::now() + T_EVENT;
    loop {
        mouse.emit(&motion_frame(7, -5))?;
        match clone.next_frame(Duration::from_millis(200))? {
            Some(f) if f == motion_frame(7, -5) => break,
            Some(f) => bail!("clone emitted {f:?} for a motion"),
            None if Instant::now() >= deadline => bail!("no motion through the clone"),
            None => {}
        }
    }
    for f in frames {
        mouse.emit(f)?;
    }
    let got = clone.frames(frames.len(), T_EVENT)?;
    std::thread::sleep(QUIET);
    let extra = clone.drain()?;
    ensure!(extra.is_empty(), "extra frames: {}", evdev::show(&extra));
    Ok(got)
}

/// Children of `pid` in state Z.
fn zombie_children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or("", |(_, rest)| rest)
            .split_whitespace()
            .collect();
        if fields.len() > 1 && fields[0] == "Z" && fields[1] == pid.to_string() {
            out.push(child);
        }
    }
    out
}
