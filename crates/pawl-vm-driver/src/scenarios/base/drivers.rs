//! The kernel's Logitech drivers, as on a user's machine: hid-logitech-hidpp binds the MX
//! Master 3S over Bluetooth, talks HID++ to it during its probe and turns its wheel into
//! 1/15-detent steps; the Bolt receiver is bound by whatever this kernel's module aliases
//! say (Debian 6.1 and 7.3.4: hid-generic). Facts: `../shared/notes/real-drivers.md`.
//!
//! What a real machine still does that the VM does not (known, not modelled): a real hi-res
//! wheel sends one to a few counts per report at its own rate (the emulator sends a detent
//! as 15 counts in one report unless a scenario sends counts); the emulated MX Master 3S
//! sends the gesture button as button 5 of its mouse report when it is not diverted (the
//! real 3S sends nothing; the MX Master 3 a key chord on a keyboard interface, not
//! emulated); features the emulator does not model (0x0003, 0x2201, 0x2110, the internal
//! ones) answer an error where the real mouse answers; the Unifying receiver is only its
//! interface 2, with no link loss, unpairing or second device; Bluetooth answers take a
//! connection interval (~7.5–30 ms) each, the emulator's come at once.
//!
//! Which driver a kernel binds is read, not assumed: xtask copies the kernel's
//! `modules.alias` lines for Logitech HID ids into `/etc/pawl-vm/hid-aliases`, and
//! [`expected_module`] matches a HID device's `modalias` against them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, ensure};
use pawl_evdev::codes::{BTN_SIDE, EV_KEY, EV_REL, REL_WHEEL, REL_WHEEL_HI_RES};
use pawl_hidpp::feature::{self, hires_wheel, root};

use crate::evdev::{self, EvdevNode, Event, Frame, NodeInfo};
use crate::hid::{BOLT_RECEIVER, HidMouse, MX_MASTER_3S_BT};
use crate::hidpp_mouse::HidppMouse;
use crate::pawl::{Pawl, PawlOptions};
use crate::receiver::{self, UnifyingReceiver};
use crate::scenarios::Scenario;
use crate::scenarios::rig::{Rig, check_wheel, expect_keys, hires_total, keys};
use crate::scenarios::{Ctx, T_DEVICE, T_EVENT, motion_frame};
use crate::uhid::BUS_USB;

/// This module's scenarios, in run order (the one place each is named).
pub(crate) const SCENARIOS: &[Scenario] = scenarios![
    kernel_driver_binds_mx_master_3s,
    kernel_driver_hires_wheel_transformed,
    hidpp_cost_per_motion_frame,
    unifying_receiver_child_handled,
    bolt_receiver_handled_as_the_kernel_binds_it,
];

/// The default configuration: an empty file.
const DEFAULT_CONFIG: &str = "";
/// Reports 10 ms apart, as a hand turns a wheel.
const NOTCH_GAP: Duration = Duration::from_millis(10);
/// The kernel's software id for its HID++ 2.0 requests (6.1 `hidpp_send_fap_command_sync`).
const KERNEL_SW_ID: u8 = 1;

/// The sysfs directory of the HID device behind an evdev node
/// (`/sys/class/input/eventN/device/device`).
pub fn hid_device_of(node: &NodeInfo) -> anyhow::Result<PathBuf> {
    let event = node
        .path
        .file_name()
        .context("evdev path without a name")?
        .to_string_lossy()
        .into_owned();
    let link = Path::new("/sys/class/input")
        .join(&event)
        .join("device/device");
    std::fs::canonicalize(&link).with_context(|| format!("resolve {}", link.display()))
}

/// The kernel module of the driver bound to the HID device at `dir` (`driver/module`), e.g.
/// `hid_logitech_hidpp`, `hid_generic`.
pub fn bound_module(dir: &Path) -> anyhow::Result<String> {
    let link = dir.join("driver/module");
    let target = std::fs::read_link(&link).with_context(|| format!("read {}", link.display()))?;
    Ok(target
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned())
}

/// The module this kernel binds to a HID device of `modalias` (`hid:b0003g0001v…p…`): the
/// first Logitech alias of `/etc/pawl-vm/hid-aliases` that matches, else `hid_generic`.
pub fn expected_module(modalias: &str) -> anyhow::Result<String> {
    let text = std::fs::read_to_string("/etc/pawl-vm/hid-aliases")
        .context("read /etc/pawl-vm/hid-aliases (written by xtask from modules.alias)")?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("alias")).then_some(())?;
            Some((w.next()?, w.next()?))
        })
        .find(|(pattern, _)| glob(pattern.as_bytes(), modalias.trim().as_bytes()))
        .map(|(_, module)| module.to_owned())
        .unwrap_or_else(|| "hid_generic".into()))
}

/// `*` and `?` glob match, as modprobe matches aliases (`fnmatch`).
fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
        (Some(b'?'), Some(_)) => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b) && glob(&p[1..], &s[1..]),
        _ => false,
    }
}

/// Requires that the HID device behind `node` is bound by the driver this kernel's aliases
/// name for it; returns that module.
pub(crate) fn expect_bound_as_aliased(ctx: &mut Ctx, node: &NodeInfo) -> anyhow::Result<String> {
    let dir = hid_device_of(node)?;
    let modalias = std::fs::read_to_string(dir.join("modalias"))?;
    let want = expected_module(&modalias)?;
    let got = bound_module(&dir)?;
    ctx.notes.push(format!(
        "{}: modalias {}, bound by {got}, aliases say {want}",
        dir.display(),
        modalias.trim()
    ));
    ensure!(
        got == want,
        "{} ({}) is bound by {got}, this kernel's aliases say {want}",
        node.name,
        modalias.trim()
    );
    Ok(got)
}

/// `kernel_driver_binds_mx_master_3s`: hid-logitech-hidpp binds the uhid MX Master 3S
/// (as its alias `hid:b0005g*v0000046Dp0000B034` says), after a probe over HID++ that the
/// emulated mouse answers: the kernel pings with software id 0 and sends its HID++ 2.0
/// requests with software id 1, sets the 0x2121 wheel to high resolution (0x02), finds the
/// 0x1004 unified battery (a power supply at 25 %), and names the node "Logitech MX Master
/// 3S". On that node the wheel comes in 1/15 detents: `REL_WHEEL_HI_RES` 8 per count, the
/// hi-res code before the lo-res one, `REL_WHEEL` once half a detent has accumulated, the
/// remainder reset by a reversal or by 1 s without a count.
pub fn kernel_driver_binds_mx_master_3s(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("bt");
    let dev = HidppMouse::create(&ctx.recordings, &phys)?;
    let info = dev.wait_node(T_DEVICE)?;
    let module = expect_bound_as_aliased(ctx, &info)?;
    ensure!(
        module == "hid_logitech_hidpp",
        "the MX Master 3S is bound by {module}, not hid_logitech_hidpp"
    );
    ensure!(
        info.name == "Logitech MX Master 3S",
        "node name {:?}, want \"Logitech MX Master 3S\"",
        info.name
    );
    let kernel = dev.kernel_requests();
    ctx.notes.push(format!(
        "the driver's probe: {} requests: {}",
        kernel.len(),
        kernel
            .iter()
            .map(|m| format!("{:02x}.{:x}/{:x}", m.sub_id, m.function(), m.sw_id()))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    let ping = |m: &&pawl_hidpp::report::Message| {
        m.sub_id == feature::ROOT_INDEX && m.function() == root::GET_PROTOCOL_VERSION
    };
    // 6.1's driver pings with software id 0 (the HID++ 1.0 path); newer ones (7.3.4 in
    // the second VM tier, measured) ping with their own id too. Either way never pawl's.
    ensure!(
        kernel
            .iter()
            .any(|m| ping(&m) && (m.sw_id() == 0 || m.sw_id() == KERNEL_SW_ID)),
        "no ping with software id 0 or {KERNEL_SW_ID} among the driver's requests"
    );
    ensure!(
        kernel
            .iter()
            .filter(|m| !ping(m))
            .all(|m| m.sw_id() == KERNEL_SW_ID),
        "a driver request without software id {KERNEL_SW_ID}"
    );
    let hires = dev.emu().feature_index(feature::HIRES_WHEEL);
    ensure!(
        kernel.iter().any(|m| Some(m.sub_id) == hires
            && m.function() == hires_wheel::SET_MODE
            && m.params[0] == hires_wheel::MODE_RESOLUTION),
        "the driver never set the wheel to high resolution"
    );
    ensure!(
        dev.emu().wheel_mode() == hires_wheel::MODE_RESOLUTION,
        "wheel mode {:#04x} after the probe",
        dev.emu().wheel_mode()
    );
    ensure!(
        dev.requests().is_empty(),
        "HID++ from someone but the kernel"
    );
    // The 0x1004 battery became a power supply (hidpp_initialize_battery).
    let batteries: Vec<(String, String)> = std::fs::read_dir("/sys/class/power_supply")
        .map(|d| {
            d.flatten()
                .map(|e| {
                    let cap =
                        std::fs::read_to_string(e.path().join("capacity")).unwrap_or_default();
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        cap.trim().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    ctx.notes.push(format!("power supplies: {batteries:?}"));
    ensure!(
        batteries
            .iter()
            .any(|(n, c)| n.starts_with("hidpp_battery") && c == "25"),
        "no hidpp battery at 25 %: {batteries:?}"
    );
    let hidraw = hid_device_of(&info)?.join("hidraw");
    ensure!(
        std::fs::read_dir(&hidraw).is_ok_and(|mut d| d.next().is_some()),
        "no hidraw node under {}",
        hidraw.display()
    );

    // The wheel through the driver.
    let mut node = EvdevNode::open(&info.path)?;
    let hi = |v| Event::new(EV_REL, REL_WHEEL_HI_RES, v);
    let lo = |v| Event::new(EV_REL, REL_WHEEL, v);
    let turn = |counts: &[i8], node: &mut EvdevNode| -> anyhow::Result<Vec<Frame>> {
        for &c in counts {
            dev.mouse.wheel_counts(c)?;
            std::thread::sleep(NOTCH_GAP);
        }
        node.frames(counts.len(), T_EVENT)
    };
    // +1 × 8: 8 × 8 = 64 ≥ 60 → one lo-res detent on the 8th count.
    let got = turn(&[1; 8], &mut node)?;
    let mut want: Vec<Frame> = vec![vec![hi(8)]; 7];
    want.push(vec![hi(8), lo(1)]);
    ensure!(
        got == want,
        "+1 × 8\n want {}\n  got {}",
        evdev::show(&want),
        evdev::show(&got)
    );
    // −1 × 3 right after: the reversal resets the remainder, −24 gives no detent.
    let got = turn(&[-1; 3], &mut node)?;
    ensure!(
        got == vec![vec![hi(-8)]; 3],
        "−1 × 3 after a reversal: {}",
        evdev::show(&got)
    );
    // −1 × 4, 1.1 s of rest, −1 × 4: the rest resets the remainder (32 + 32, no detent).
    let mut got = turn(&[-1; 4], &mut node)?;
    std::thread::sleep(Duration::from_millis(1100));
    got.extend(turn(&[-1; 4], &mut node)?);
    ensure!(
        got == vec![vec![hi(-8)]; 8],
        "−1 × 4, rest, −1 × 4: {}",
        evdev::show(&got)
    );
    // 15 counts in one report: one detent, hi-res first.
    let got = turn(&[15], &mut node)?;
    ensure!(
        got == vec![vec![hi(120), lo(1)]],
        "+15: {}",
        evdev::show(&got)
    );
    Ok(())
}

/// `kernel_driver_hires_wheel_transformed`: the driver's 1/15-detent wheel steps (8 v120
/// each) go through pawl like any hi-res wheel: one clone frame per report, inverted,
/// smoothed, with pawl's lo-res derived from the accumulated hi-res (Σ lo-res = Σ hi-res /
/// 120, not the driver's half-detent rule), and the travel of a steady wheel is kept (the
/// smoothing has nothing to take from it): 30 one-count reports come out as −240 v120 in
/// total, and 3 whole detents of 15 counts, turned as a new scroll gesture (after a pause
/// longer than the 300 ms gesture gap), as −360. (Within the slow turn's gesture the same
/// detents would be spike-damped against its 8-v120 level: −113 in total, as measured.)
pub fn kernel_driver_hires_wheel_transformed(ctx: &mut Ctx) -> anyhow::Result<()> {
    let mut rig = Rig::start(ctx, MX_MASTER_3S_BT, DEFAULT_CONFIG, "GNOME")?;
    ensure!(
        rig.source.name == "Logitech MX Master 3S",
        "source {:?} is not the driver's node",
        rig.source.name
    );
    // Two detents turned slowly: 30 reports of one count.
    let counts = [1i8; 30];
    for &c in &counts {
        rig.mouse.wheel_counts(c)?;
        std::thread::sleep(NOTCH_GAP);
    }
    let frames = rig.sentinel()?;
    ctx.notes
        .push(format!("wheel frames out: {}", evdev::show(&frames)));
    let inputs: Vec<i32> = counts.iter().map(|&c| i32::from(c) * 8).collect();
    check_wheel(&frames, true, &inputs, true)?;
    ensure!(
        hires_total(&frames) == -240,
        "30 one-count reports: Σ hi-res {} (want -240)",
        hires_total(&frames)
    );
    // Then whole detents (15 counts a report), as a fast turn of a new gesture.
    std::thread::sleep(Duration::from_millis(400));
    for _ in 0..3 {
        rig.mouse.wheel(1)?;
        std::thread::sleep(NOTCH_GAP);
    }
    let frames = rig.sentinel()?;
    check_wheel(&frames, true, &[120, 120, 120], true)?;
    ensure!(
        hires_total(&frames) == -360,
        "3 whole detents: Σ hi-res {} (want -360)",
        hires_total(&frames)
    );
    rig.stop()
}

/// `bolt_receiver_handled_as_the_kernel_binds_it`: the Bolt receiver (0003:046d:c548) is
/// bound by the driver this kernel's aliases name — on Debian's 6.1 and 7.3.4 none of
/// hid-logitech-dj's aliases matches c548, so hid-generic, and the receiver's nodes are the
/// descriptor's own ("Logitech USB Receiver Mouse" …). pawl takes it with a device rule and
/// passes its 16-bit motion through.
pub fn bolt_receiver_handled_as_the_kernel_binds_it(ctx: &mut Ctx) -> anyhow::Result<()> {
    let phys = ctx.phys("usb");
    let probe = HidMouse::create(BOLT_RECEIVER, &ctx.recordings, &phys)?;
    let info = probe.wait_node(T_DEVICE)?;
    let module = expect_bound_as_aliased(ctx, &info)?;
    ensure!(
        module == "hid_generic",
        "this kernel binds the Bolt receiver with {module}: the harness has no emulated DJ \
         Bolt receiver yet"
    );
    ensure!(
        info.name == "Logitech USB Receiver Mouse",
        "mouse node {:?}",
        info.name
    );
    drop(probe);
    let config = "[[device]]\nid = \"046d:c548\"\nmx_master = true\n";
    let mut rig = Rig::start(ctx, BOLT_RECEIVER, config, "GNOME")?;
    for (dx, dy) in [(-32767, 32767), (2048, -2049)] {
        rig.mouse.motion(dx, dy)?;
    }
    let got = rig.clone.frames(2, T_EVENT)?;
    ensure!(
        got == vec![motion_frame(-32767, 32767), motion_frame(2048, -2049)],
        "motion through pawl: {}",
        evdev::show(&got)
    );
    rig.stop()
}

/// Voluntary and involuntary context switches of every thread of `pid` so far.
fn context_switches(pid: u32) -> anyhow::Result<u64> {
    let mut sum = 0;
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))?.flatten() {
        let text = std::fs::read_to_string(t.path().join("status"))?;
        sum += text
            .lines()
            .filter(|l| l.contains("ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    Ok(sum)
}

/// pawl's `(syscr, syscw, context switches)` once they stop moving (nothing in flight).
fn settled_counters(pawl: &Pawl) -> anyhow::Result<(u64, u64, u64)> {
    let read = || -> anyhow::Result<(u64, u64, u64)> {
        let (r, w) = pawl.syscalls()?;
        Ok((r, w, context_switches(pawl.pid())?))
    };
    let mut last = read()?;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        let now = read()?;
        if now.0 == last.0 && now.1 == last.1 {
            return Ok(now);
        }
        last = now;
    }
    anyhow::bail!("pawl's counters never settle: {last:?}")
}

/// `hidpp_cost_per_motion_frame`: what `[hidpp] enabled` costs pawl per motion frame of
/// the MX Master 3S with hid-logitech-hidpp bound (pointer node grabbed, scroll
/// transformed, as by default; `[hidpp] enabled` is on by default on Linux). hidraw delivers every input report of the HID device, so
/// with HID++ on each motion report is also read (and dropped after one byte compare) from
/// the HID++ endpoint: at most one more read per frame, no more writes (one per frame), at
/// most one context switch per read (each read is one wake-up of the one thread), and
/// nothing sent to the device for motion. The measured figures are printed (`# hidpp cost`)
/// for the README; the bounds are the specification.
pub fn hidpp_cost_per_motion_frame(ctx: &mut Ctx) -> anyhow::Result<()> {
    const FRAMES: u64 = 200;
    let mut lines = Vec::new();
    // "on" is the default (an empty config).
    for (label, config) in [("off", "[hidpp]\nenabled = false\n"), ("on", "")] {
        let phys = ctx.phys("bt");
        let mut dev = HidppMouse::create(&ctx.recordings, &phys)?;
        let source = dev.wait_node(T_DEVICE)?;
        let dir = ctx.subdir(&format!("pawl-{label}"))?;
        let mut pawl = Pawl::start(
            &ctx.pawl,
            &dir,
            &PawlOptions {
                config,
                desktop: "GNOME",
                run_args: &[],
                debug: false,
            },
        )?;
        let mut clone = pawl.wait_clone(&source, T_DEVICE)?;
        if label == "on" {
            dev.pump_until(
                "gesture button diverted",
                T_EVENT,
                HidppMouse::gesture_diverted,
            )
            .with_context(|| format!("pawl log: {}", pawl.log()))?;
        }
        dev.mouse.motion(7, -5)?;
        clone.frames_until(T_EVENT, "first motion", |f| *f == motion_frame(7, -5))?;
        dev.pump(Duration::from_millis(300))?;
        let requests_before = dev.requests().len();
        let before = settled_counters(&pawl)?;
        // In batches of 10, read as they come (the clone's evdev buffer is small).
        for _ in 0..FRAMES / 10 {
            for i in 0..10 {
                let dx = if i % 2 == 0 { 3 } else { -3 };
                dev.mouse.motion(dx, 1)?;
                std::thread::sleep(Duration::from_millis(4));
            }
            let got = clone.frames(10, T_EVENT)?;
            ensure!(got.len() == 10, "{} frames out of 10", got.len());
        }
        let after = settled_counters(&pawl)?;
        let (r, w, cs) = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
        let per = |n: u64| n as f64 / FRAMES as f64;
        let line = format!(
            "hidpp cost: [hidpp] enabled {label}: {FRAMES} motion frames: {:.2} reads, {:.2} \
             writes, {:.2} context switches per frame",
            per(r),
            per(w),
            per(cs)
        );
        println!("# {line}");
        lines.push(line);
        ensure!(w == FRAMES, "{label}: {w} writes for {FRAMES} frames");
        // Give or take one read that finds nothing (EAGAIN) after a batch.
        let max_reads = if label == "on" { 2 * FRAMES } else { FRAMES } + 2;
        ensure!(
            r <= max_reads,
            "{label}: {r} reads for {FRAMES} frames (at most {max_reads})"
        );
        // A wake-up per read, give or take the scheduler's preemptions while settling.
        let max_switches = max_reads + 10;
        ensure!(
            cs <= max_switches,
            "{label}: {cs} context switches for {FRAMES} frames (at most {max_switches})"
        );
        ensure!(
            dev.requests().len() == requests_before,
            "{label}: pawl talked HID++ for motion"
        );
        let status = pawl.terminate(Duration::from_secs(5))?;
        ensure!(status.success(), "pawl exited with {status}");
    }
    ctx.notes.extend(lines);
    Ok(())
}

/// The sysfs directory of the HID device whose `uevent` says `HID_PHYS=<phys>`.
fn hid_device_with_phys(phys: &str) -> anyhow::Result<PathBuf> {
    let want = format!("HID_PHYS={phys}");
    std::fs::read_dir("/sys/bus/hid/devices")?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            std::fs::read_to_string(p.join("uevent")).is_ok_and(|u| u.lines().any(|l| l == want))
        })
        .with_context(|| format!("no HID device with phys {phys:?}"))
}

/// `unifying_receiver_child_handled`: a Unifying receiver (046d:c52b) with an MX Master 3
/// paired in slot 1. hid-logitech-dj binds the receiver (switch to DJ mode, register 0x00
/// notifications, paired-device query answered by the 0x41 notification), creates the child
/// 046d:4082 with phys `…:1`, and hid-logitech-hidpp binds that (0xB5 pairing reads on the
/// receiver, HID++ 2.0 to index 1, wheel set to hi-res): before pawl runs, a 15-count
/// detent reaches the child's node as 120 v120 and one lo-res detent. pawl handles the
/// child as it handles the Bluetooth mouse: grabs it (the kernel refuses a second grab
/// and a plain reader of the child sees nothing while pawl runs; free again once pawl
/// exits) and clones it (motion through, three detents out as −360 v120, back button
/// through as BTN_SIDE), diverts the gesture button through the receiver's device index
/// 1 with its own software id, and a diverted-button drag fires the chord.
pub fn unifying_receiver_child_handled(ctx: &mut Ctx) -> anyhow::Result<()> {
    let base = ctx.phys("usb");
    let mut recv = UnifyingReceiver::create(&base)?;
    let child = recv.wait_child(T_DEVICE)?;
    ctx.notes.push(format!("child node: {child:?}"));
    let recv_dir = hid_device_with_phys(recv.phys())?;
    let recv_module = bound_module(&recv_dir)?;
    let modalias = std::fs::read_to_string(recv_dir.join("modalias"))?;
    ensure!(
        recv_module == "hid_logitech_dj" && expected_module(&modalias)? == recv_module,
        "the receiver ({}) is bound by {recv_module}",
        modalias.trim()
    );
    let module = expect_bound_as_aliased(ctx, &child)?;
    ensure!(
        module == "hid_logitech_hidpp",
        "the child is bound by {module}"
    );
    ensure!(
        (child.id.bustype, child.id.vendor, child.id.product) == (BUS_USB, 0x046d, receiver::WPID),
        "child id {:?}",
        child.id
    );
    // The child's driver finishes its connect work (battery, then the 0x2121 wheel mode)
    // on a work queue; on 7.3.4 that can end after the nodes appear (seen: 9 of its
    // requests done when the node was there). Wait for it, bounded.
    let deadline = std::time::Instant::now() + T_DEVICE;
    while recv.state().emu.wheel_mode() != hires_wheel::MODE_RESOLUTION
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    {
        let st = recv.state();
        ctx.notes.push(format!(
            "receiver registers {:x?}; the child's driver sent {} HID++ requests",
            st.registers,
            st.kernel.len()
        ));
        ensure!(
            st.dj_mode && st.paired_query,
            "no DJ mode switch or paired query"
        );
        ensure!(
            st.registers.contains(&(0x80, 0x00, 0x00))
                && st.registers.contains(&(0x83, 0xB5, 0x30)),
            "register 0x00 write or 0xB5 serial read missing: {:x?}",
            st.registers
        );
        ensure!(
            st.emu.wheel_mode() == hires_wheel::MODE_RESOLUTION,
            "the child's driver did not set the wheel to hi-res (mode {:#04x})",
            st.emu.wheel_mode()
        );
    }

    // The kernel's own translation of a whole detent, read before pawl runs.
    let mut reader = EvdevNode::open(&child.path)?;
    recv.wheel(1)?;
    let got = reader.frames(1, T_EVENT)?;
    let detent = vec![vec![
        Event::new(EV_REL, REL_WHEEL_HI_RES, 120),
        Event::new(EV_REL, REL_WHEEL, 1),
    ]];
    ensure!(
        got == detent,
        "a 15-count detent on the child's node: {} (want {})",
        evdev::show(&got),
        evdev::show(&detent)
    );

    let dir = ctx.subdir("pawl")?;
    let mut pawl = Pawl::start(
        &ctx.pawl,
        &dir,
        &PawlOptions {
            config: "[hidpp]\nenabled = true\n",
            desktop: "GNOME",
            run_args: &[],
            debug: ctx.pawl_debug,
        },
    )?;
    let mut clone = pawl.wait_clone(&child, T_DEVICE)?;
    let mut keyboard = pawl.wait_keyboard(T_DEVICE)?;
    recv.motion(7, -5)?;
    clone
        .frames_until(T_EVENT, "motion through pawl", |f| {
            *f == motion_frame(7, -5)
        })
        .with_context(|| format!("pawl log: {}", pawl.log()))?;
    // The clone exists once pawl holds the grab, so the probe cannot race pawl's own.
    ensure!(
        !reader.is_free_to_grab()?,
        "nobody holds the grab of the child's node while pawl runs"
    );
    let deadline = std::time::Instant::now() + T_EVENT;
    while !recv
        .state()
        .emu
        .reporting(pawl_hidpp::controls::CID_GESTURE_BUTTON)
        .is_some_and(|r| r.divert && r.raw_xy)
    {
        ensure!(
            std::time::Instant::now() < deadline,
            "pawl never diverted the gesture button through the receiver; log: {}",
            pawl.log()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    while !pawl
        .log()
        .contains("diverted 0x00C3 gesture button with raw XY")
    {
        ensure!(
            std::time::Instant::now() < deadline,
            "pawl never logged the diversion; log: {}",
            pawl.log()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    recv.quiet(Duration::from_millis(200));
    {
        let st = recv.state();
        ensure!(!st.pawl.is_empty(), "no HID++ request from pawl");
        ensure!(
            st.pawl.iter().all(|m| m.device == receiver::SLOT),
            "a pawl request for another device index"
        );
        ensure!(
            st.kernel.iter().all(|m| m.sw_id() <= KERNEL_SW_ID),
            "a request neither the kernel's nor pawl's"
        );
    }
    // A drag right with the diverted gesture button held (raw XY, the first report
    // dropped): desktop-left, GNOME Super+Page_Up.
    let held = |recv: &UnifyingReceiver, on: bool| {
        recv.state()
            .emu
            .set_held(pawl_hidpp::controls::CID_GESTURE_BUTTON, on)
            .context("gesture button not diverted")
    };
    let m = held(&recv, true)?;
    recv.send(&m)?;
    for (dx, dy) in [(1, 0), (100, 0), (100, 0), (100, 0), (100, 0)] {
        let motion = recv.state().emu.motion(dx, dy);
        match motion {
            pawl_hidpp::emulator::Motion::RawXy(m) => recv.send(&m)?,
            pawl_hidpp::emulator::Motion::Hid => anyhow::bail!("raw XY not diverted"),
        }
    }
    let m = held(&recv, false)?;
    recv.send(&m)?;
    expect_keys(&mut keyboard, &[&[keys::META, keys::PAGE_UP]])
        .with_context(|| format!("pawl log: {}", pawl.log()))?;
    // The wheel: three detents of 15 counts, inverted by pawl, as a new scroll gesture
    // (after a pause longer than the 300 ms gesture gap): the smoothing keeps a steady
    // wheel's travel, so 3 × 120 v120 come out as −360 in total.
    std::thread::sleep(Duration::from_millis(400));
    for _ in 0..3 {
        recv.wheel(1)?;
        std::thread::sleep(NOTCH_GAP);
    }
    recv.motion(7, -5)?;
    let mut frames = clone.frames_until(T_EVENT, "sentinel", |f| *f == motion_frame(7, -5))?;
    frames.pop();
    check_wheel(&frames, true, &[120, 120, 120], true)?;
    ensure!(
        hires_total(&frames) == -360,
        "3 detents through the receiver: Σ hi-res {} (want -360): {}",
        hires_total(&frames),
        evdev::show(&frames)
    );
    // The back button passes through (the default on Linux).
    recv.button(3, true)?;
    recv.button(3, false)?;
    recv.motion(7, -5)?;
    let frames = clone.frames_until(T_EVENT, "sentinel", |f| *f == motion_frame(7, -5))?;
    let side: Vec<i32> = frames
        .iter()
        .flatten()
        .filter(|e| e.type_ == EV_KEY && e.code == BTN_SIDE)
        .map(|e| e.value)
        .collect();
    ensure!(
        side == [1, 0],
        "the back button on the clone: BTN_SIDE values {side:?} (want [1, 0]): {}",
        evdev::show(&frames)
    );
    let leaked = reader.drain()?;
    ensure!(
        leaked.is_empty(),
        "a plain reader of the grabbed child saw {}",
        evdev::show(&leaked)
    );
    let status = pawl.terminate(Duration::from_secs(5))?;
    ensure!(status.success(), "pawl exited with {status}");
    ensure!(
        reader.is_free_to_grab()?,
        "the child's node is still grabbed after pawl exited"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn aliases_match_like_modprobe() {
        let bolt = b"hid:b0003g0001v0000046Dp0000C548";
        assert!(!glob(b"hid:b0003g*v0000046Dp0000C52B", bolt));
        assert!(!glob(b"hid:b0003g0004v0000046Dp0000C548", bolt));
        assert!(glob(b"hid:b0003g*v0000046Dp0000C548", bolt));
        assert!(glob(b"hid:b*g*v0000046Dp*", bolt));
        assert!(glob(
            b"hid:b0005g*v0000046Dp0000B034",
            b"hid:b0005g0001v0000046Dp0000b034"
        ));
    }
}
