//! The scenario table and the pieces scenarios share: a fresh per-scenario context, the
//! "rig" (a uhid mouse + a running pawl + its clone and virtual keyboard), chord and wheel
//! checks.
//!
//! Adding a scenario: write `fn name(ctx: &mut Ctx) -> anyhow::Result<()>` in the module of
//! what it exercises (`gestures`, `hotplug`, `lifecycle`, `hidpp`, `kernel`…) and add
//! `module::name,` to the list of the boot it needs: [`SCENARIOS`] (the initramfs boot),
//! [`userland::SCENARIOS`] (Debian's udev, libinput, sway) or [`seat::SCENARIOS`]
//! (systemd as PID 1, logind). [`scenarios!`] names it from its function, so the name is
//! written once. Each scenario creates its own
//! devices and its own pawl process; everything is dropped (devices destroyed, pawl killed)
//! when it returns.

/// `scenarios![module::function, function, …]`: a `&[Scenario]` of these functions in this
/// order, each named for its function, the one place a scenario is named.
macro_rules! scenarios {
    ($($p:ident $(:: $f:ident)?),* $(,)?) => {
        &[$(scenario!($p $(:: $f)?)),*]
    };
}

/// One [`Scenario`] of [`scenarios!`]: `module::function` or `function`, named `function`.
macro_rules! scenario {
    ($m:ident :: $f:ident) => {
        Scenario {
            name: stringify!($f),
            run: $m::$f,
        }
    };
    ($f:ident) => {
        Scenario {
            name: stringify!($f),
            run: $f,
        }
    };
}

mod drivers;
mod gestures;
mod hidpp;
mod hotplug;
mod kernel;
// Kernel mode: pawl's HID-BPF program attached by pawl-kernel-attach (7.x tier).
mod kernel_mode;
// Kernel mode end to end: pawl's daemon on the program (7.x tier; the fallback on 6.1).
mod kernel_daemon;
mod lifecycle;
mod rig;
mod swipe;
// The Debian userland boot (`--set userland`): udev, libinput and sway read pawl's output.
mod compositor;
mod libinput;
mod udev;
pub mod userland;
mod userland_tools;
// The systemd boot (`--set systemd`): kernel mode under systemd-udevd.service and logind.
pub mod seat;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use pawl_evdev::codes::{EV_ABS, EV_REL, REL_X, REL_Y};

use crate::evdev::{Event, Frame};

/// One named end-to-end check.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// The name printed in `PASS`/`FAIL` lines (named for the behaviour it checks).
    pub name: &'static str,
    /// The check; `Err` is a failure with its reason.
    pub run: fn(&mut Ctx) -> anyhow::Result<()>,
}

/// Every scenario, in run order.
pub const SCENARIOS: &[Scenario] = scenarios![
    // The harness itself: what the kernel makes of the devices the driver creates, and the
    // static pawl binary running in the VM.
    kernel::uhid_mx_master_3s_creates_evdev_node,
    kernel::uhid_bolt_receiver_creates_evdev_nodes,
    kernel::uinput_touchpad_replays_recording,
    kernel::static_pawl_runs_in_vm,
    // The kernel's Logitech drivers bound, as on a user's machine.
    drivers::kernel_driver_binds_mx_master_3s,
    drivers::kernel_driver_hires_wheel_transformed,
    hidpp::kernel_driver_reconnect_keeps_diversion,
    drivers::hidpp_cost_per_motion_frame,
    drivers::unifying_receiver_child_handled,
    drivers::bolt_receiver_handled_as_the_kernel_binds_it,
    // Gestures, wheel and motion through the clone, and what pawl leaves alone.
    gestures::uhid_mx_master_3s_bluetooth,
    gestures::uhid_bolt_receiver,
    gestures::gesture_right_switches_desktop,
    gestures::gesture_left_switches_desktop,
    gestures::gesture_up_opens_overview,
    gestures::gesture_down_opens_app_expose,
    gestures::gesture_below_threshold_does_nothing,
    gestures::gesture_click_passes_through,
    gestures::inverted_desktop_direction,
    gestures::touchpad_untouched,
    gestures::other_mouse_untouched,
    gestures::bad_config_grabs_nothing,
    // Lifecycle: one managed worker, the inspector, the device check.
    lifecycle::off_when_not_running,
    lifecycle::lifecycle_100_cycles,
    lifecycle::concurrent_on_starts_one,
    lifecycle::kill9_then_status_reports_stale_and_on_recovers,
    lifecycle::off_never_signals_a_process_that_does_not_hold_the_lock,
    lifecycle::pid_reuse_not_mistaken,
    lifecycle::inspect_shows_events_without_grabbing,
    lifecycle::devices_exit_code,
    // Hotplug, signals, permissions: the daemon in real life.
    hotplug::unplug_mid_gesture_releases_everything,
    hotplug::replug_regrabs,
    hotplug::held_button_at_start_is_not_stuck,
    hotplug::syn_dropped_resyncs,
    hotplug::sighup_applies_valid_config,
    hotplug::sighup_keeps_old_on_invalid_config,
    hotplug::sigkill_leaves_device_usable,
    hotplug::keyboard_never_opened,
    hotplug::command_action_runs_and_is_reaped,
    hotplug::hires_only_source_gets_lowres_derived,
    hotplug::lowres_only_source_gets_hires_synthesized,
    hotplug::two_mx_masters_both_handled,
    hotplug::permissions_set_after_node_appears_is_retried,
    hotplug::uinput_permission_error_names_the_fix,
    hotplug::grabbed_elsewhere_is_reported,
    // HID++: diversion, gestures and the thumb wheel through the mouse's hidraw node.
    hidpp::hidpp_gesture_right_switches_desktop,
    hidpp::hidpp_pointer_not_grabbed_motion_bypasses_pawl,
    hidpp::hidpp_divert_reapplied_after_reconnect,
    hidpp::hidpp_undivert_on_exit,
    hidpp::hidpp_first_rawxy_dropped,
    hidpp::hidpp_error_reply_reported,
    hidpp::hidpp_endpoint_reopened_when_the_mouse_returns,
    hidpp::hidpp_sighup_switches_hidpp,
    hidpp::hidpp_devices_shows_diverted_controls,
    hidpp::hidpp_thumb_wheel_scrolls_horizontally,
    // Kernel mode: the HID-BPF program (needs HID-BPF: SKIP with the reason on 6.1).
    kernel_mode::kernel_mode_wheel_transformed_in_kernel,
    kernel_mode::kernel_mode_glide_tail_comes_from_the_kernel,
    kernel_mode::kernel_mode_glide_settings_from_the_map_are_bounded,
    kernel_mode::kernel_mode_gesture_notifications_reach_the_ring_not_hidraw,
    kernel_mode::kernel_mode_reattaches_after_reconnect,
    kernel_mode::kernel_mode_unifying_child_wheel_transformed,
    kernel_mode::kernel_mode_loader_refuses_a_copy_a_user_can_write,
    kernel_mode::kernel_mode_loader_reports_no_hid_bpf,
    // Kernel mode end to end: `pawl run` on the attached program.
    kernel_daemon::kernel_mode_motion_never_wakes_pawl,
    kernel_daemon::kernel_mode_gesture_right_switches_desktop,
    kernel_daemon::kernel_mode_sighup_rewrites_settings_and_off_returns_to_grab,
    kernel_daemon::kernel_mode_wireless_reconnect_rediverts_from_the_ring,
    kernel_daemon::kernel_mode_follows_a_replaced_or_removed_attachment,
    kernel_daemon::kernel_mode_survives_reconnect,
    kernel_daemon::kernel_mode_falls_back_to_grab,
    kernel_daemon::kernel_mode_another_users_pins_fall_back_to_grab,
    kernel_daemon::kernel_mode_reseat_hands_the_mouse_to_the_seat_user_and_back,
    kernel_daemon::kernel_mode_reseat_ignores_a_seat_file_logind_did_not_write_and_waits_its_turn,
    // Swipe style, read from the virtual touchpad's evdev node.
    swipe::swipe_gesture_touchpad_frames_follow_the_drag,
    swipe::swipe_gesture_vertical_touchpad_frames_move_up,
    swipe::swipe_click_without_motion_passes_through,
    swipe::swipe_unplug_mid_swipe_lifts_fingers,
];

/// Where things are inside the VM.
#[derive(Clone, Debug)]
pub struct Options {
    /// The pawl binary.
    pub pawl: PathBuf,
    /// The copied `../shared/recordings` files.
    pub recordings: PathBuf,
    /// Scratch directory; each scenario gets `<work>/<name>`.
    pub work: PathBuf,
    /// Run pawl with `--debug`.
    pub pawl_debug: bool,
    /// Print every scenario's notes, not only a failing one's.
    pub verbose: bool,
}

/// What a scenario gets: paths, its scratch directory, and unique phys strings.
#[derive(Debug)]
pub struct Ctx {
    /// The pawl binary.
    pub pawl: PathBuf,
    /// The recordings directory.
    pub recordings: PathBuf,
    /// This scenario's scratch directory (empty at the start).
    pub work: PathBuf,
    /// Run pawl with `--debug` (its log is printed when the scenario fails).
    pub pawl_debug: bool,
    /// Diagnostics printed (as `# ` lines) when the scenario fails.
    pub notes: Vec<String>,
    seq: u32,
    scenario: &'static str,
}

impl Ctx {
    /// A phys string unique within the VM run: `<prefix>-<scenario>-<n>`, so a device of
    /// an earlier scenario that the kernel is still removing is never mistaken for this
    /// one's.
    pub fn phys(&mut self, prefix: &str) -> String {
        self.seq += 1;
        format!("{prefix}-{}-{}", self.scenario, self.seq)
    }

    /// A fresh scratch directory under the scenario's own.
    pub fn subdir(&mut self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.work.join(name);
        std::fs::create_dir_all(&dir).with_context(|| format!("mkdir {}", dir.display()))?;
        Ok(dir)
    }

    /// Reads a recordings file as text.
    pub fn recording(&self, name: &str) -> anyhow::Result<String> {
        let path = self.recordings.join(name);
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))
    }
}

/// The scenarios of `table` that `filters` select (all when empty): a filter equal to a
/// scenario's name selects that one, any other selects every name containing it.
pub fn select_from(table: &[Scenario], filters: &[String]) -> Vec<Scenario> {
    let selects = |f: &str, name: &str| {
        let exact = table.iter().any(|s| s.name == f);
        if exact { name == f } else { name.contains(f) }
    };
    table
        .iter()
        .filter(|s| filters.is_empty() || filters.iter().any(|f| selects(f, s.name)))
        .copied()
        .collect()
}

/// Runs `scenarios` one after the other, printing one result line each; returns the number
/// of failures.
pub fn run_all(opts: &Options, scenarios: &[Scenario]) -> usize {
    println!("pawl-vm-driver: running {} scenarios", scenarios.len());
    let mut failed = 0;
    let mut skipped = 0;
    let started = Instant::now();
    for s in scenarios {
        let t = Instant::now();
        let work = opts.work.join(s.name);
        let _ = std::fs::remove_dir_all(&work);
        let mut ctx = Ctx {
            pawl: opts.pawl.clone(),
            recordings: opts.recordings.clone(),
            work: work.clone(),
            pawl_debug: opts.pawl_debug,
            notes: Vec::new(),
            seq: 0,
            scenario: s.name,
        };
        let res = std::fs::create_dir_all(&work)
            .with_context(|| format!("mkdir {}", work.display()))
            .and_then(|()| {
                std::panic::catch_unwind(AssertUnwindSafe(|| (s.run)(&mut ctx))).unwrap_or_else(
                    |p| {
                        let msg = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "panic".into());
                        Err(anyhow::format_err!("panicked: {msg}"))
                    },
                )
            });
        match res {
            Ok(()) => {
                if opts.verbose {
                    for line in ctx.notes.iter().flat_map(|n| n.lines()) {
                        println!("# {line}");
                    }
                }
                println!("# {} took {:.2} s", s.name, t.elapsed().as_secs_f64());
                println!("PASS {}", s.name);
            }
            Err(e) if e.downcast_ref::<kernel_mode::NotApplicable>().is_some() => {
                // Not applicable to this kernel: said, never passed (xtask accepts it only
                // outside the HID-BPF tier).
                skipped += 1;
                println!("# {} took {:.2} s", s.name, t.elapsed().as_secs_f64());
                println!("SKIP {}: {e}", s.name);
            }
            Err(e) => {
                failed += 1;
                for note in &ctx.notes {
                    for line in note.lines() {
                        println!("# {line}");
                    }
                }
                print_pawl_logs(&work);
                println!("# {} took {:.2} s", s.name, t.elapsed().as_secs_f64());
                let reason = format!("{e:#}").replace('\n', " | ");
                println!("FAIL {}: {reason}", s.name);
            }
        }
    }
    println!(
        "pawl-vm-driver: {} passed, {failed} failed, {skipped} skipped in {:.1} s",
        scenarios.len() - failed - skipped,
        started.elapsed().as_secs_f64()
    );
    failed
}

/// Prints the last lines of every `pawl.log` under `dir` as `# ` lines.
fn print_pawl_logs(dir: &std::path::Path) {
    const TAIL: usize = 40;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            print_pawl_logs(&path);
        } else if path.file_name().is_some_and(|n| n == "pawl.log") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            println!("# {} (last {TAIL} lines):", path.display());
            for line in &lines[lines.len().saturating_sub(TAIL)..] {
                println!("#   {line}");
            }
        }
    }
}

/// How long the kernel (or pawl) may take to create a device node under TCG.
pub const T_DEVICE: Duration = Duration::from_secs(15);
/// How long an expected event may take to arrive.
pub const T_EVENT: Duration = Duration::from_secs(10);

/// The expected clone frame of a motion report: `REL_X`, `REL_Y`, zero values left out (the
/// input core drops zero relative events).
pub fn motion_frame(dx: i32, dy: i32) -> Frame {
    let mut f = Vec::new();
    if dx != 0 {
        f.push(Event::new(EV_REL, REL_X, dx));
    }
    if dy != 0 {
        f.push(Event::new(EV_REL, REL_Y, dy));
    }
    f
}

/// The `ABS_X` values of `frames` as a reader sees them: the input core drops an absolute
/// value equal to the current one, so consecutive repeats (and a leading 0, the initial
/// value) are left out.
pub fn abs_x_track(frames: &[Frame]) -> Vec<i32> {
    let mut track: Vec<i32> = Vec::new();
    for e in frames.iter().flatten() {
        if e.type_ == EV_ABS && e.code == 0 && track.last().copied().unwrap_or(0) != e.value {
            track.push(e.value);
        }
    }
    track
}
