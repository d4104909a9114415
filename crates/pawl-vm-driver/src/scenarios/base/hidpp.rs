//! HID++ scenarios: HID++ on an emulated MX Master 3S over Bluetooth, and the 4 and 2S
//! where they differ (the real 3S descriptor through uhid, `pawl_hidpp`'s emulator answering pawl's hidraw writes).
//! pawl diverts the gesture button (CID 0x00C3) with raw XY; gestures arrive as HID++
//! notifications and fire the same chords as evdev gestures.

use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use pawl_evdev::codes::{EV_REL, REL_X};
use pawl_hidpp::controls::CID_GESTURE_BUTTON;
use pawl_hidpp::emulator::Failure;
use pawl_hidpp::feature;

use crate::evdev::{self, EvdevNode, Frame, NodeInfo};
use crate::hid::{MX_MASTER_2S_BT, MX_MASTER_3S_BT, MX_MASTER_4_BT, MouseModel};
use crate::hidpp_mouse::HidppMouse;
use crate::pawl::{Pawl, PawlOptions, clone_phys};
use crate::scenarios::Scenario;
use crate::scenarios::base::drivers::expect_bound_as_aliased;
use crate::scenarios::rig::keys::{META, PAGE_DOWN, PAGE_UP};
use crate::scenarios::rig::{check_wheel, expect_keys, hires_total};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT};

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    kernel_driver_reconnect_keeps_diversion,
    hidpp_gesture_right_switches_desktop,
    hidpp_pointer_not_grabbed_motion_bypasses_pawl,
    hidpp_divert_reapplied_after_reconnect,
    hidpp_undivert_on_exit,
    hidpp_first_rawxy_dropped,
    hidpp_error_reply_reported,
    hidpp_endpoint_reopened_when_the_mouse_returns,
    hidpp_sighup_switches_hidpp,
    hidpp_devices_shows_diverted_controls,
    hidpp_thumb_wheel_scrolls_horizontally,
    device_dpi_applied_and_reapplied_after_reconnect,
    device_smartshift_applied,
    device_thumb_wheel_invert_applied,
    device_battery_shown_from_the_kernel,
    mx_master_4_gesture_right_switches_desktop,
    mx_master_4_sense_panel_maps_like_a_button,
    mx_master_2s_gesture_right_switches_desktop,
];

/// HID++ on, otherwise defaults: scroll of the MX Master transformed, so its pointer node is grabbed too.
const DEFAULT_CONFIG: &str = "[hidpp]\nenabled = true\n";
/// Scroll not transformed, no mapped button: the pointer node needs no grab.
const SCOPE_NONE: &str = "[hidpp]\nenabled = true\n[scroll]\nscope = \"none\"\n";
/// HID++ off, scroll not transformed: the pointer node is grabbed for the gesture button.
const SCOPE_NONE_HIDPP_OFF: &str = "[hidpp]\nenabled = false\n[scroll]\nscope = \"none\"\n";
/// HID++ on, the thumb wheel left to the kernel.
const THUMB_WHEEL_OFF: &str = "[hidpp]\nenabled = true\nthumb_wheel = false\n";
/// HID++ on, horizontal scroll inverted.
const INVERT_HORIZONTAL: &str = "[hidpp]\nenabled = true\n[scroll]\ninvert_horizontal = true\n";
/// What pawl logs once it has the thumb wheel diverted (in its setup line, or on its own).
const THUMB_DIVERTED: &str = "thumb wheel (0x2150) as horizontal scroll";
/// Diverted thumb wheel increments per native ratchet × 120: v120 per increment of the
/// emulated wheel (18 ratchets, 120 increments per turn, like an MX Master 3).
const V120_PER_INCREMENT: i32 = 18;
/// Between wheel reports, as a hand turns a wheel (reports within 2 ms are a free-spin
/// burst that shares one max step).
const NOTCH_GAP: Duration = Duration::from_millis(10);
/// What pawl logs when a HID++ endpoint's read fails (the mouse went away).
const GONE: &str = "gone (";
/// What pawl logs when it leaves (or releases) a pointer node whose gesture button HID++
/// carries.
const CARRIED: &str = "its gesture button comes through HID++";
/// Gesture travel, px (threshold 220).
const DRAG: i16 = 400;

/// A HID++ mouse, its evdev node, and a running pawl that has diverted its gesture button.
struct HidppRig {
    dev: HidppMouse,
    /// The uhid phys the mouse was created with (to create it again).
    phys: String,
    source: NodeInfo,
    pawl: Pawl,
    keyboard: EvdevNode,
}

impl HidppRig {
    /// Creates the mouse, starts pawl with `config` (GNOME chords) and answers its HID++
    /// setup until the gesture button is diverted, unless `until_diverted` is false.
    fn start(
        ctx: &mut Ctx,
        config: &str,
        setup: impl FnOnce(&mut HidppMouse),
        until_diverted: bool,
    ) -> anyhow::Result<HidppRig> {
        HidppRig::start_model(ctx, MX_MASTER_3S_BT, config, setup, until_diverted)
    }

    /// As [`HidppRig::start`], with the mouse `model`.
    fn start_model(
        ctx: &mut Ctx,
        model: MouseModel,
        config: &str,
        setup: impl FnOnce(&mut HidppMouse),
        until_diverted: bool,
    ) -> anyhow::Result<HidppRig> {
        let phys = ctx.phys("bt");
        let mut dev = HidppMouse::create_model(model, &ctx.recordings, &phys)?;
        setup(&mut dev);
        let source = dev.wait_node(T_DEVICE)?;
        let dir = ctx.subdir(&format!("pawl-{}", ctx.seq))?;
        let mut pawl = Pawl::start(
            &ctx.pawl,
            &dir,
            &PawlOptions {
                config,
                desktop: "GNOME",
                run_args: &[],
                debug: ctx.pawl_debug,
            },
        )?;
        let keyboard = pawl.wait_keyboard(T_DEVICE)?;
        let mut rig = HidppRig {
            dev,
            phys,
            source,
            pawl,
            keyboard,
        };
        if until_diverted {
            // pawl logs the diversion when its whole setup is answered.
            rig.wait_log("diverted 0x00C3 gesture button with raw XY")?;
            ensure!(
                rig.dev.gesture_diverted(),
                "pawl logged a diversion the device lacks"
            );
        }
        Ok(rig)
    }

    /// A drag right fires Super+Page_Up, then a drag left Super+Page_Down (GNOME's
    /// desktop-left and desktop-right, inverted by default).
    fn drag_right_then_left(&mut self) -> anyhow::Result<()> {
        self.dev.gesture(DRAG, 0, 8)?;
        expect_keys(&mut self.keyboard, &[&[META, PAGE_UP]])?;
        self.dev.gesture(-DRAG, 0, 8)?;
        expect_keys(&mut self.keyboard, &[&[META, PAGE_DOWN]])
    }

    /// Runs `pawl devices` with pawl's config and a runtime dir of no worker, the emulator
    /// answering its query meanwhile; its status, stdout and stderr.
    fn pawl_devices(
        &mut self,
        ctx: &mut Ctx,
    ) -> anyhow::Result<(std::process::ExitStatus, String, String)> {
        let home = ctx.subdir("devices-home")?;
        self.dev.run_answering(
            std::process::Command::new(&ctx.pawl)
                .arg("--config")
                .arg(self.pawl.config_path())
                .arg("devices")
                .env_clear()
                .env("PATH", "/bin")
                .env("HOME", &home)
                .env("XDG_RUNTIME_DIR", &home)
                .env("XDG_CONFIG_HOME", &home),
            T_EVENT,
        )
    }

    /// `pawl status ARGS` for the rig's worker (its runtime dir), answering HID++
    /// meanwhile; stdout.
    fn pawl_status(&mut self, ctx: &Ctx, args: &[&str]) -> anyhow::Result<String> {
        let work = self
            .pawl
            .config_path()
            .parent()
            .context("work dir")?
            .to_owned();
        let mut cmd = std::process::Command::new(&ctx.pawl);
        cmd.arg("status")
            .args(args)
            .env_clear()
            .env("PATH", "/bin")
            .env("HOME", &work)
            .env("XDG_RUNTIME_DIR", &work);
        self.dev
            .run_answering(&mut cmd, T_EVENT)
            .map(|(_, out, _)| out)
    }

    /// `pawl status` until one of its lines, trimmed, is `line` (the worker writes its
    /// metadata just after it logs); the last output.
    fn wait_status_line(&mut self, ctx: &Ctx, line: &str) -> anyhow::Result<String> {
        let deadline = std::time::Instant::now() + T_EVENT;
        loop {
            let text = self.pawl_status(ctx, &[])?;
            if text.lines().any(|l| l.trim() == line) {
                return Ok(text);
            }
            ensure!(
                std::time::Instant::now() < deadline,
                "no {line:?} in pawl status: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Answers pawl's requests until its log contains `text`.
    fn wait_log(&mut self, text: &str) -> anyhow::Result<()> {
        self.wait_log_count(text, 1)
    }

    /// Unplugs the mouse and, once pawl closed its HID++ endpoint, plugs it in again (a
    /// Bluetooth reconnection: new hidraw and evdev nodes, every temporary diversion
    /// forgotten).
    fn replug(self, ctx: &Ctx) -> anyhow::Result<HidppRig> {
        let HidppRig {
            dev,
            phys,
            pawl,
            keyboard,
            ..
        } = self;
        let gone_before = pawl.log().matches(GONE).count();
        drop(dev);
        let deadline = Instant::now() + T_DEVICE;
        while pawl.log().matches(GONE).count() == gone_before {
            ensure!(
                Instant::now() < deadline,
                "pawl never closed the vanished HID++ endpoint; log: {}",
                pawl.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let dev = HidppMouse::create(&ctx.recordings, &phys)?;
        let source = dev.wait_node(T_DEVICE)?;
        Ok(HidppRig {
            dev,
            phys,
            source,
            pawl,
            keyboard,
        })
    }

    /// Writes `config` over pawl's config file and sends SIGHUP.
    fn reload(&mut self, config: &str) -> anyhow::Result<()> {
        std::fs::write(self.pawl.config_path(), config)?;
        self.pawl.signal(libc::SIGHUP)
    }

    /// Answers pawl's requests until the thumb wheel is diverted and pawl has logged it
    /// `n` times (so it takes the thumb wheel's notifications from now on).
    fn wait_thumb_diverted(&mut self, n: usize) -> anyhow::Result<()> {
        self.dev
            .pump_until("thumb wheel diverted", T_EVENT, HidppMouse::thumb_diverted)
            .with_context(|| format!("pawl log: {}", self.pawl.log()))?;
        self.wait_log_count(THUMB_DIVERTED, n)
    }

    /// Answers pawl's requests until its log contains `text` `n` times.
    fn wait_log_count(&mut self, text: &str, n: usize) -> anyhow::Result<()> {
        let deadline = Instant::now() + T_EVENT;
        while self.pawl.log().matches(text).count() < n {
            self.dev.pump(Duration::from_millis(20))?;
            ensure!(
                Instant::now() < deadline,
                "pawl never logged {text:?}; log: {}",
                self.pawl.log()
            );
        }
        Ok(())
    }
}

/// `hidpp_gesture_right_switches_desktop`: with the gesture button diverted, a drag to the
/// right as raw-XY notifications fires "desktop-left" (inverted by default): GNOME
/// Super+Page_Up; a drag left fires Super+Page_Down. The setup diverted temporarily (never
/// persistently) and never wrote the 0x2121 wheel mode.
pub fn hidpp_gesture_right_switches_desktop(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, DEFAULT_CONFIG, |_| {}, true)?;
    rig.drag_right_then_left()?;
    ensure!(
        rig.dev.emu().persistent_writes() == 0,
        "pawl asked for a persistent diversion"
    );
    ensure!(
        rig.dev.pawl_wheel_mode_writes() == 0,
        "pawl wrote the 0x2121 wheel mode"
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_pointer_not_grabbed_motion_bypasses_pawl`: with scroll not transformed (scope
/// none) pawl grabs nothing and clones nothing: motion with the gesture button up reaches
/// the kernel's evdev node for every reader, pawl writes nothing for it (`syscw` unchanged)
/// and its engine never sees it. pawl still reads each report once from hidraw (`syscr`
/// rises by at most one per report): hidraw delivers every input report of the HID device,
/// and on a Bluetooth mouse the HID++ and pointer reports share one HID device.
pub fn hidpp_pointer_not_grabbed_motion_bypasses_pawl(ctx: &mut Ctx) -> anyhow::Result<()> {
    const REPORTS: u64 = 50;
    let mut rig = HidppRig::start(ctx, SCOPE_NONE, |_| {}, true)?;
    rig.wait_log("not grabbing")?;
    ensure!(
        !rig.dev.thumb_diverted(),
        "the thumb wheel is diverted with no clone to scroll on"
    );
    let mut reader = EvdevNode::open(&rig.source.path)?;
    ensure!(
        reader.is_free_to_grab()?,
        "the MX Master's evdev node is grabbed"
    );
    let phys = clone_phys(&rig.source);
    ensure!(
        !evdev::scan().iter().any(|n| n.phys == phys),
        "pawl cloned the MX Master"
    );
    // Let pawl settle, then count.
    rig.dev.pump(Duration::from_millis(200))?;
    let (r0, w0) = rig.pawl.syscalls()?;
    // In batches the evdev reader's buffer holds (a client buffer is a few packets).
    for _ in 0..REPORTS / 5 {
        for _ in 0..5 {
            rig.dev.motion(3, 1)?;
        }
        let frames = reader.frames(5, T_EVENT)?;
        ensure!(
            frames
                .iter()
                .all(|f| f.iter().any(|e| e.type_ == EV_REL && e.code == REL_X)),
            "the kernel's node did not deliver the motion"
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    let (r1, w1) = rig.pawl.syscalls()?;
    println!(
        "# hidpp_pointer_not_grabbed_motion_bypasses_pawl: {REPORTS} motion reports with the \
         gesture button up: pawl syscr +{}, syscw +{}",
        r1 - r0,
        w1 - w0
    );
    ensure!(w1 == w0, "pawl wrote {} times for motion", w1 - w0);
    ensure!(
        r1 - r0 <= REPORTS,
        "pawl made {} reads for {REPORTS} motion reports (more than one per report)",
        r1 - r0
    );
    // Gestures still work without the grab.
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_divert_reapplied_after_reconnect`: the mouse loses its temporary diversion (power
/// cycle / reconnection) and sends its 0x1D4B wireless status broadcast; pawl diverts the
/// gesture button and the thumb wheel again and gestures work.
pub fn hidpp_divert_reapplied_after_reconnect(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, DEFAULT_CONFIG, |_| {}, true)?;
    rig.dev.emu().reset();
    ensure!(!rig.dev.gesture_diverted(), "reset kept the diversion");
    let status = rig.dev.emu().wireless_status();
    rig.dev.send(&status)?;
    rig.dev
        .pump_until("gesture button diverted again", T_EVENT, |d| {
            d.gesture_diverted()
        })
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    rig.wait_log("reconnected: diverting again")?;
    rig.wait_log_count("diverted 0x00C3 gesture button with raw XY", 2)?;
    rig.wait_thumb_diverted(2)?;
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `kernel_driver_reconnect_keeps_diversion`: with hid-logitech-hidpp bound, the mouse
/// reconnects (its temporary state gone, the 0x1D4B broadcast sent): the driver re-runs its
/// setup (0x2121 written back to high resolution) while pawl diverts the gesture button and
/// the thumb wheel again over the same device, both answered in whatever order they
/// interleave. Afterwards both diversions hold, the wheel is the driver's (hi-res), pawl
/// never wrote 0x2121 nor sent anything on the 0x1D4B index (a reply there would be a
/// connect event to the driver), used only its own software id, a gesture fires its chord,
/// and three whole detents of the wheel come out of pawl's clone as three inverted 120
/// v120 frames (`check_wheel`: one frame per report, lo-res from hi-res, Σ = −360).
pub fn kernel_driver_reconnect_keeps_diversion(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, DEFAULT_CONFIG, |_| {}, true)?;
    rig.wait_thumb_diverted(1)?;
    let mut clone = rig.pawl.wait_clone(&rig.source, T_DEVICE)?;
    let kernel_before = rig.dev.kernel_requests().len();
    rig.dev.emu().reset();
    let status = rig.dev.emu().wireless_status();
    rig.dev.send(&status)?;
    let hires = rig
        .dev
        .emu()
        .feature_index(feature::HIRES_WHEEL)
        .context("no 0x2121")?;
    rig.dev
        .pump_until("the driver's reconnect setup", T_EVENT, |d| {
            d.kernel_requests()[kernel_before..]
                .iter()
                .any(|m| m.sub_id == hires && m.function() == feature::hires_wheel::SET_MODE)
        })
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    rig.wait_log("reconnected: diverting again")?;
    rig.wait_log_count("diverted 0x00C3 gesture button with raw XY", 2)?;
    rig.wait_thumb_diverted(2)?;
    rig.dev.pump(Duration::from_millis(200))?;
    ensure!(rig.dev.gesture_diverted(), "gesture button not diverted");
    ensure!(rig.dev.thumb_diverted(), "thumb wheel not diverted");
    ensure!(
        rig.dev.emu().wheel_mode() == feature::hires_wheel::MODE_RESOLUTION,
        "wheel mode {:#04x} after the reconnect",
        rig.dev.emu().wheel_mode()
    );
    ensure!(
        rig.dev.pawl_wheel_mode_writes() == 0,
        "pawl wrote the 0x2121 wheel mode"
    );
    let wireless = rig
        .dev
        .emu()
        .feature_index(feature::WIRELESS_DEVICE_STATUS)
        .context("no 0x1D4B")?;
    let pawls = rig.dev.requests();
    ensure!(
        pawls.iter().all(|m| m.sub_id != wireless),
        "pawl sent a request on the 0x1D4B index"
    );
    ensure!(
        pawls
            .iter()
            .all(|m| m.sw_id() == pawl_hidpp::report::SOFTWARE_ID_DAEMON),
        "a pawl request with another software id"
    );
    ctx.notes.push(format!(
        "{} requests from the driver, {} from pawl",
        rig.dev.kernel_requests().len(),
        pawls.len()
    ));
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    // The wheel after the reconnect: the driver's hi-res detents, through pawl, inverted.
    for _ in 0..3 {
        rig.dev.mouse.wheel(1)?;
        std::thread::sleep(NOTCH_GAP);
    }
    let frames = clone.frames(3, T_EVENT)?;
    ctx.notes.push(format!(
        "wheel after the reconnect: {}",
        evdev::show(&frames)
    ));
    check_wheel(&frames, true, &[120, 120, 120], true).context("wheel after the reconnect")?;
    let total = hires_total(&frames);
    ensure!(
        total == -360,
        "Σ hi-res after the reconnect {total}, want -360"
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_undivert_on_exit`: on SIGTERM pawl exits 0 and the gesture button is back to
/// native reporting, raw XY off, and so is the thumb wheel (its invert bit untouched).
pub fn hidpp_undivert_on_exit(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(
        ctx,
        DEFAULT_CONFIG,
        |d| d.emu().set_thumb_inverted(true),
        true,
    )?;
    rig.wait_thumb_diverted(1)?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    // pawl's last writes were queued by the kernel before it exited.
    rig.dev.pump(Duration::from_millis(300))?;
    let r = rig
        .dev
        .emu()
        .reporting(CID_GESTURE_BUTTON)
        .context("no gesture button")?;
    ensure!(
        !r.divert && !r.raw_xy,
        "still diverted after exit: {r:?}; log: {}",
        rig.pawl.log()
    );
    ensure!(
        !rig.dev.thumb_diverted(),
        "thumb wheel still diverted after exit; log: {}",
        rig.pawl.log()
    );
    ensure!(
        rig.dev.emu().thumb_inverted(),
        "pawl cleared the thumb wheel's invert bit"
    );
    ensure!(rig.dev.emu().persistent_writes() == 0, "persistent write");
    Ok(())
}

/// The thumb wheel turns of the thumb-wheel scenarios: increments (1/120 turn, diverted) and
/// the v120 each makes on an MX Master 3S.
fn thumb_turns() -> ([i16; 5], Vec<i32>) {
    let increments = [5i16, 10, 10, 10, 20];
    let v120 = increments
        .iter()
        .map(|&n| i32::from(n) * V120_PER_INCREMENT)
        .collect();
    (increments, v120)
}

/// The frames pawl's clone emits for the diverted thumb wheel turning by each of
/// `increments` (one notification each, [`NOTCH_GAP`] apart): one frame per notification.
fn diverted_turns(
    rig: &HidppRig,
    clone: &mut EvdevNode,
    increments: &[i16],
) -> anyhow::Result<Vec<Frame>> {
    clone.drain()?;
    for &n in increments {
        rig.dev.thumb_diverted_turn(n)?;
        std::thread::sleep(NOTCH_GAP);
    }
    clone
        .frames(increments.len(), T_EVENT)
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))
}

/// `hidpp_thumb_wheel_scrolls_horizontally`: with the MX Master's pointer node grabbed
/// (scroll transformed by default) pawl diverts its thumb wheel (0x2150) too, and each
/// rotation notification comes out of pawl's clone as one frame of `REL_HWHEEL_HI_RES`
/// (18 v120 per 1/120 turn: the wheel has 18 ratchets per turn) with `REL_HWHEEL` derived,
/// smoothed like any wheel, in the direction of the AC Pan counts the same turn sends
/// natively: with `thumb_wheel = false` (SIGHUP) pawl un-diverts it and native ratchets
/// of the same direction come out with the same sign; with `invert_horizontal = true`
/// (SIGHUP) it is diverted again and scrolls the other way.
pub fn hidpp_thumb_wheel_scrolls_horizontally(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, DEFAULT_CONFIG, |_| {}, true)?;
    rig.wait_thumb_diverted(1)?;
    let mut clone = rig.pawl.wait_clone(&rig.source, T_DEVICE)?;
    let (increments, v120) = thumb_turns();
    let frames = diverted_turns(&rig, &mut clone, &increments)?;
    ctx.notes.push(format!(
        "diverted thumb wheel {increments:?} increments -> clone {}",
        evdev::show(&frames)
    ));
    check_wheel(&frames, false, &v120, false).context("diverted thumb wheel")?;

    // Without pawl's diversion: native AC Pan, same direction, same sign out.
    rig.reload(THUMB_WHEEL_OFF)?;
    rig.dev
        .pump_until("thumb wheel back to native", T_EVENT, |d| {
            !d.thumb_diverted()
        })
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    rig.wait_log("config reloaded")?;
    rig.wait_log("thumb wheel (0x2150) back to native")?;
    clone.drain()?;
    let ratchets = [1i8, 1];
    for &r in &ratchets {
        rig.dev.thumb_native_turn(r)?;
        std::thread::sleep(NOTCH_GAP);
    }
    let frames = clone.frames(ratchets.len(), T_EVENT)?;
    ctx.notes.push(format!(
        "native thumb wheel {ratchets:?} ratchets -> clone {}",
        evdev::show(&frames)
    ));
    check_wheel(&frames, false, &[120, 120], false).context("native thumb wheel")?;

    // Diverted again, horizontal scroll inverted.
    rig.reload(INVERT_HORIZONTAL)?;
    rig.wait_log_count("config reloaded", 2)?;
    rig.wait_thumb_diverted(2)?;
    let frames = diverted_turns(&rig, &mut clone, &increments)?;
    check_wheel(&frames, false, &v120, true).context("diverted thumb wheel, inverted")?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_first_rawxy_dropped`: a hold whose first raw-XY report alone passes the threshold
/// (the 3S reports pre-press motion there) fires nothing; the same hold with the big report
/// second fires once.
pub fn hidpp_first_rawxy_dropped(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, DEFAULT_CONFIG, |_| {}, true)?;
    rig.dev.gesture_button(true)?;
    rig.dev.motion(DRAG, 0)?;
    rig.dev.motion(2, 0)?;
    rig.dev.gesture_button(false)?;
    rig.dev.gesture_button(true)?;
    rig.dev.motion(2, 0)?;
    rig.dev.motion(DRAG, 0)?;
    rig.dev.gesture_button(false)?;
    // Exactly one chord: the first hold fired nothing.
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_error_reply_reported`: the mouse answers the divert request with HID++ 2.0 error
/// 0x02; pawl logs which request failed and what the code means, and keeps running.
pub fn hidpp_error_reply_reported(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(
        ctx,
        DEFAULT_CONFIG,
        |d| {
            d.emu().fail(
                feature::REPROG_CONTROLS_V4,
                feature::reprog::SET_CID_REPORTING,
                Failure::V20(0x02),
            )
        },
        false,
    )?;
    rig.wait_log(
        "divert 0x00C3 gesture button (0x1B04 setCidReporting) failed: HID++ 2.0 error 0x02: \
         invalid argument",
    )?;
    ensure!(
        rig.pawl.try_exit()?.is_none(),
        "pawl exited after the error; log: {}",
        rig.pawl.log()
    );
    ensure!(!rig.dev.gesture_diverted(), "diverted despite the error");
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_endpoint_reopened_when_the_mouse_returns`: the mouse goes away (its hidraw node
/// vanishes; pawl closes the endpoint) and comes back as new nodes: pawl opens the new
/// hidraw node from its `/dev` hotplug watch, diverts the gesture button again, leaves
/// the pointer node ungrabbed (scope none) whichever node appeared first, and gestures work.
pub fn hidpp_endpoint_reopened_when_the_mouse_returns(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, SCOPE_NONE, |_| {}, true)?;
    rig.wait_log(CARRIED)?;
    let mut rig = rig.replug(ctx)?;
    rig.dev
        .pump_until("gesture button diverted on the new node", T_EVENT, |d| {
            d.gesture_diverted()
        })
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    rig.wait_log_count("diverted 0x00C3 gesture button with raw XY", 2)?;
    // Not grabbed, or grabbed (evdev node first) and released once the endpoint opened.
    rig.wait_log_count(CARRIED, 2)?;
    let reader = EvdevNode::open(&rig.source.path)?;
    ensure!(
        reader.is_free_to_grab()?,
        "the returned MX Master's evdev node is grabbed; log: {}",
        rig.pawl.log()
    );
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    ctx.notes.push(
        rig.pawl
            .log()
            .lines()
            .filter(|l| l.contains("HID++") || l.contains("hidraw") || l.contains("event"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_sighup_switches_hidpp`: `[hidpp] enabled` changed and SIGHUP: switched on, pawl
/// diverts the gesture button and releases the pointer node it no longer needs (scope
/// none); switched off, it undoes the diversion (raw XY too) and grabs the pointer again.
pub fn hidpp_sighup_switches_hidpp(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, SCOPE_NONE_HIDPP_OFF, |_| {}, false)?;
    rig.wait_log("HID++ off")?;
    rig.wait_log("grabbed /dev/input")?;
    ensure!(
        rig.dev.requests().is_empty(),
        "pawl talked HID++ with it off: {:?}",
        rig.dev.requests()
    );
    rig.reload(SCOPE_NONE)?;
    rig.dev
        .pump_until("gesture button diverted after SIGHUP", T_EVENT, |d| {
            d.gesture_diverted()
        })
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    rig.wait_log("config reloaded")?;
    rig.wait_log("diverted 0x00C3 gesture button with raw XY")?;
    rig.wait_log(CARRIED)?;
    let reader = EvdevNode::open(&rig.source.path)?;
    ensure!(
        reader.is_free_to_grab()?,
        "the pointer node is still grabbed with HID++ on; log: {}",
        rig.pawl.log()
    );
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])?;
    rig.reload(SCOPE_NONE_HIDPP_OFF)?;
    rig.dev
        .pump_until("gesture button un-diverted after SIGHUP", T_EVENT, |d| {
            !d.gesture_diverted()
        })
        .with_context(|| format!("pawl log: {}", rig.pawl.log()))?;
    rig.wait_log_count("config reloaded", 2)?;
    rig.wait_log_count("grabbed /dev/input", 2)?;
    let r = rig
        .dev
        .emu()
        .reporting(CID_GESTURE_BUTTON)
        .context("no gesture button")?;
    ensure!(!r.divert && !r.raw_xy, "still diverted: {r:?}");
    ensure!(
        !reader.is_free_to_grab()?,
        "the pointer node is not grabbed again with HID++ off; log: {}",
        rig.pawl.log()
    );
    ensure!(rig.dev.emu().persistent_writes() == 0, "persistent write");
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `hidpp_devices_shows_diverted_controls`: with the worker running and the gesture button
/// and thumb wheel diverted, `pawl devices` lists the MX Master's HID++ endpoint and what
/// is diverted,
/// asking the device itself (with a software id of its own: the worker ignores the
/// replies, and gestures keep working afterwards), and says which path would carry the
/// gesture button; `pawl status` shows the worker's paths per part (gesture button and
/// thumb wheel through HID++, wheel through the grab, transformed).
pub fn hidpp_devices_shows_diverted_controls(ctx: &mut Ctx) -> anyhow::Result<()> {
    use std::process::{Command, Stdio};
    let mut rig = HidppRig::start(ctx, DEFAULT_CONFIG, |_| {}, true)?;
    rig.wait_thumb_diverted(1)?;
    let (status, out, err) = rig.pawl_devices(ctx)?;
    ctx.notes
        .push(format!("$ pawl devices ({status})\n{out}{err}"));
    ensure!(out.contains("HID++:"), "no HID++ section: {out}{err}");
    ensure!(
        out.lines().any(|l| l.contains("/dev/hidraw")
            && l.contains("\"Logitech MX Master 3S\"")
            && l.contains("diverted 0x00C3 gesture button (raw XY)")
            && l.contains("thumb wheel (0x2150)")),
        "the diverted gesture button and thumb wheel are not listed: {out}{err}"
    );
    // No worker in this runtime dir: what pawl would do, by the daemon's own decision.
    ensure!(
        out.contains("paths (if pawl ran now)")
            && out.contains("gesture button: HID++ divert of CID 0x00C3 (hidraw"),
        "pawl devices does not say the gesture button would come through HID++: {out}{err}"
    );
    // The worker's own account, from its metadata.
    let work = rig.pawl.config_path().parent().context("work dir")?;
    let status = Command::new(&ctx.pawl)
        .arg("status")
        .env_clear()
        .env("PATH", "/bin")
        .env("HOME", work)
        .env("XDG_RUNTIME_DIR", work)
        .stdin(Stdio::null())
        .output()
        .context("run pawl status")?;
    let text = String::from_utf8_lossy(&status.stdout);
    ctx.notes
        .push(format!("$ pawl status ({})\n{text}", status.status));
    let line = |part: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{part}:")))
            .unwrap_or_default()
            .to_owned()
    };
    ensure!(
        status.status.success()
            && line("gesture button").contains("HID++ divert of CID 0x00C3 (hidraw")
            && line("thumb wheel").contains("HID++ divert of 0x2150 (hidraw")
            && line("wheel").contains("grab + virtual device, transformed"),
        "pawl status does not show which path carries what: {text}"
    );
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]])
        .context("the worker after pawl devices asked the mouse")?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// Sense Panel, the MX Master 4's top button (Solaar `special_keys`: "Haptic" 0x01A0).
const CID_SENSE_PANEL: u16 = 0x01A0;

/// `mx_master_4_gesture_right_switches_desktop`: an MX Master 4 over Bluetooth (046d:b042,
/// its recorded feature table and controls) is bound by the driver this kernel's aliases
/// name (hid-logitech-hidpp where its table lists b042, else hid-generic; the note says
/// which); pawl diverts its gesture button 0x00C3 with raw XY as on the 3S, a drag right
/// fires Super+Page_Up and a drag left Super+Page_Down; the Sense Panel 0x01A0 is left as
/// it was; the thumb wheel is diverted with the invert bit the mouse had; nothing is
/// written persistently and the 0x2121 wheel mode is never written.
pub fn mx_master_4_gesture_right_switches_desktop(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start_model(ctx, MX_MASTER_4_BT, DEFAULT_CONFIG, |_| {}, true)?;
    expect_bound_as_aliased(ctx, &rig.source)?;
    rig.wait_log(THUMB_DIVERTED)?;
    rig.drag_right_then_left()?;
    {
        let emu = rig.dev.emu();
        let sense = emu
            .reporting(CID_SENSE_PANEL)
            .context("the MX Master 4 model lists no Sense Panel")?;
        ensure!(!sense.divert, "pawl diverted the Sense Panel unasked");
        ensure!(emu.thumb_diverted(), "the thumb wheel is not diverted");
        ensure!(
            emu.thumb_inverted(),
            "the thumb wheel's invert bit was cleared"
        );
        ensure!(
            emu.persistent_writes() == 0,
            "pawl asked for a persistent diversion"
        );
    }
    ensure!(
        rig.dev.pawl_wheel_mode_writes() == 0,
        "pawl wrote the 0x2121 wheel mode"
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `mx_master_4_sense_panel_maps_like_a_button`: with `[hidpp] sense_panel = 8`,
/// `[buttons.map] 8 = "desktop-right"` and `haptic_on_gesture = true`, pawl diverts the
/// MX Master 4's Sense Panel 0x01A0 (temporarily, without raw XY) next to the gesture
/// button; a press of the panel fires Super+Page_Down and plays no haptic pulse; a drag
/// right of the gesture button fires Super+Page_Up and plays exactly one 0x19B0 waveform;
/// on exit the panel is native again.
pub fn mx_master_4_sense_panel_maps_like_a_button(ctx: &mut Ctx) -> anyhow::Result<()> {
    let config = "[hidpp]\nenabled = true\nsense_panel = 8\nhaptic_on_gesture = true\n\
                  [buttons.map]\n8 = \"desktop-right\"\n";
    let mut rig = HidppRig::start_model(ctx, MX_MASTER_4_BT, config, |_| {}, true)?;
    rig.wait_log("0x01A0 Sense Panel")?;
    let r = rig
        .dev
        .emu()
        .reporting(CID_SENSE_PANEL)
        .context("the MX Master 4 model lists no Sense Panel")?;
    ensure!(r.divert && !r.raw_xy, "Sense Panel reporting {r:?}");
    for held in [true, false] {
        let m = rig
            .dev
            .emu()
            .set_held(CID_SENSE_PANEL, held)
            .context("the Sense Panel is not diverted")?;
        rig.dev.send(&m)?;
    }
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_DOWN]]).context("the Sense Panel press")?;
    ensure!(
        rig.dev.emu().haptic_plays().is_empty(),
        "a button press played a haptic pulse"
    );
    rig.dev.gesture(DRAG, 0, 8)?;
    expect_keys(&mut rig.keyboard, &[&[META, PAGE_UP]]).context("the gesture")?;
    rig.dev.pump_until("one haptic pulse", T_EVENT, |d| {
        !d.emu().haptic_plays().is_empty()
    })?;
    rig.dev.pump(Duration::from_millis(200))?;
    let plays = rig.dev.emu().haptic_plays().to_vec();
    ensure!(
        plays == [feature::haptic::WAVEFORM_DAMP_STATE_CHANGE],
        "haptic waveforms played: {plays:?}"
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    rig.dev.pump(Duration::from_millis(300))?;
    let r = rig.dev.emu().reporting(CID_SENSE_PANEL).unwrap();
    ensure!(
        !r.divert,
        "the Sense Panel is still diverted after exit; log: {}",
        rig.pawl.log()
    );
    Ok(())
}

/// `mx_master_2s_gesture_right_switches_desktop`: an MX Master 2S over Bluetooth (046d:b019,
/// its recorded feature table: no 0x2150) is bound by the driver this kernel's aliases
/// name; pawl diverts its gesture button as on the 3S and a drag right fires Super+Page_Up,
/// a drag left Super+Page_Down; its thumb wheel is never diverted (the 2S has no 0x2150:
/// it stays the kernel's `REL_HWHEEL`), and pawl says so by never logging the diversion.
pub fn mx_master_2s_gesture_right_switches_desktop(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start_model(ctx, MX_MASTER_2S_BT, DEFAULT_CONFIG, |_| {}, true)?;
    expect_bound_as_aliased(ctx, &rig.source)?;
    rig.drag_right_then_left()?;
    ensure!(
        !rig.pawl.log().contains(THUMB_DIVERTED),
        "pawl logged a thumb wheel diversion on a mouse without 0x2150"
    );
    ensure!(
        rig.dev.emu().persistent_writes() == 0,
        "pawl asked for a persistent diversion"
    );
    ensure!(
        rig.dev.pawl_wheel_mode_writes() == 0,
        "pawl wrote the 0x2121 wheel mode"
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `device_dpi_applied_and_reapplied_after_reconnect`: with `[hidpp] dpi = 1600` pawl writes
/// 1600 to the MX Master 3S's sensor (0x2201) during its setup, once, and logs what it read
/// back; after a power cycle (the mouse back at its default 1000 dpi, its 0x1D4B broadcast)
/// pawl writes it again; and once more after the mouse is unplugged and plugged in, and
/// `pawl status` shows the dpi in force.
pub fn device_dpi_applied_and_reapplied_after_reconnect(ctx: &mut Ctx) -> anyhow::Result<()> {
    const APPLIED: &str = "dpi 1600 (0x2201)";
    let config = "[hidpp]\nenabled = true\ndpi = 1600\n";
    let mut rig = HidppRig::start(ctx, config, |_| {}, true)?;
    rig.wait_log(APPLIED)?;
    ensure!(rig.dev.emu().dpi() == 1600, "dpi {}", rig.dev.emu().dpi());
    ensure!(
        rig.dev.emu().dpi_writes() == 1,
        "dpi written {} times",
        rig.dev.emu().dpi_writes()
    );
    rig.dev.emu().reset();
    ensure!(rig.dev.emu().dpi() != 1600, "the reset kept the dpi");
    let status = rig.dev.emu().wireless_status();
    rig.dev.send(&status)?;
    rig.wait_log_count(APPLIED, 2)?;
    ensure!(
        rig.dev.emu().dpi() == 1600,
        "dpi {} after the power cycle",
        rig.dev.emu().dpi()
    );
    let mut rig = rig.replug(ctx)?;
    rig.wait_log_count(APPLIED, 3)?;
    ensure!(
        rig.dev.emu().dpi() == 1600,
        "dpi {} after the reconnection",
        rig.dev.emu().dpi()
    );
    // The settings in force, as the worker read them back.
    let text = rig.wait_status_line(ctx, "settings:       dpi 1600, thumb_wheel_invert false")?;
    ctx.notes.push(format!("$ pawl status\n{text}"));
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `device_smartshift_applied`: with `[hidpp] smartshift = 30` pawl sets the MX Master 3S's
/// SmartShift (0x2110: ratchet mode, free spin above threshold 30) during its setup, and
/// with `smartshift = "free"` the wheel spins freely; nothing else of the mouse changes
/// (no dpi written: the config has none).
pub fn device_smartshift_applied(ctx: &mut Ctx) -> anyhow::Result<()> {
    for (value, want) in [("30", [2u8, 30]), ("\"free\"", [1, 0])] {
        let config = format!("[hidpp]\nenabled = true\nsmartshift = {value}\n");
        let mut rig = HidppRig::start(ctx, &config, |_| {}, true)?;
        rig.wait_log("(SmartShift)")?;
        let got = rig.dev.emu().smart_shift();
        ensure!(
            got[0] == want[0] && (want[0] == 1 || got[1] == want[1]),
            "smartshift = {value}: the mouse has mode {} threshold {}",
            got[0],
            got[1]
        );
        ensure!(
            rig.dev.emu().dpi_writes() == 0,
            "pawl wrote a dpi nobody set"
        );
        let status = rig.pawl.terminate(Duration::from_secs(5))?;
        ensure!(status.success(), "pawl exited with {status}");
    }
    Ok(())
}

/// `device_thumb_wheel_invert_applied`: with `[hidpp] thumb_wheel_invert = true` pawl sets
/// the MX Master 3S's thumb wheel invert bit (0x2150) with the same request that diverts
/// it, the log and `pawl status` show the read-back, and the same turns as in
/// `hidpp_thumb_wheel_scrolls_horizontally` come out of the clone the other way.
pub fn device_thumb_wheel_invert_applied(ctx: &mut Ctx) -> anyhow::Result<()> {
    let config = "[hidpp]\nenabled = true\nthumb_wheel_invert = true\n";
    let mut rig = HidppRig::start(ctx, config, |_| {}, true)?;
    rig.wait_thumb_diverted(1)?;
    rig.wait_log("thumb_wheel_invert true (0x2150)")?;
    ensure!(
        rig.dev.emu().thumb_inverted(),
        "the mouse's thumb wheel is not inverted"
    );
    let mut clone = rig.pawl.wait_clone(&rig.source, T_DEVICE)?;
    let (increments, v120) = thumb_turns();
    let frames = diverted_turns(&rig, &mut clone, &increments)?;
    ctx.notes.push(format!(
        "inverted thumb wheel {increments:?} increments -> clone {}",
        evdev::show(&frames)
    ));
    check_wheel(&frames, false, &v120, true).context("thumb wheel with its invert bit set")?;
    rig.wait_status_line(ctx, "settings:       thumb_wheel_invert true")?;
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}

/// `device_battery_shown_from_the_kernel`: the kernel's hid-logitech-hidpp made the
/// emulated 3S's 0x1004 battery (25 %, discharging) a power supply, and `pawl devices`
/// shows that reading under the mouse's HID++ line, from sysfs, as `pawl status` (text and
/// `--json`) does under the worker's mouse; pawl sends no battery request of its own
/// (0x1000 / 0x1004) while it runs.
pub fn device_battery_shown_from_the_kernel(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = HidppRig::start(ctx, DEFAULT_CONFIG, |_| {}, true)?;
    let (status, out, err) = rig.pawl_devices(ctx)?;
    ctx.notes
        .push(format!("$ pawl devices ({status})\n{out}{err}"));
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("/dev/hidraw") && l.contains("MX Master 3S"))
        .with_context(|| format!("no HID++ line for the 3S: {out}{err}"))?;
    ensure!(
        lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("    "))
            .any(|l| l.trim() == "battery 25 %, discharging"),
        "no \"battery 25 %, discharging\" under the 3S: {out}{err}"
    );
    let battery_index = {
        let emu = rig.dev.emu();
        [feature::UNIFIED_BATTERY, feature::BATTERY_STATUS].map(|f| emu.feature_index(f))
    };
    let asked = rig
        .dev
        .requests()
        .iter()
        .filter(|m| battery_index.contains(&Some(m.sub_id)))
        .count();
    ensure!(
        asked == 0,
        "pawl asked the mouse for its battery {asked} times"
    );
    // The worker's mouse in `pawl status`, text and JSON, with the kernel's battery.
    let text = rig.wait_status_line(ctx, "battery:        25 %, discharging")?;
    ctx.notes.push(format!("$ pawl status\n{text}"));
    let json: String = rig
        .pawl_status(ctx, &["--json"])?
        .split_whitespace()
        .collect();
    ensure!(
        json.contains(r#""battery":{"level":null,"percent":25,"status":"discharging"}"#),
        "no battery in pawl status --json: {json}"
    );
    let status = rig.pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    Ok(())
}
