//! The scenario table and the pieces scenarios share: a fresh per-scenario context, the
//! "rig" (a uhid mouse + a running pawl + its clone and virtual keyboard), chord and wheel
//! checks.
//!
//! Adding a scenario: write `fn name(ctx: &mut Ctx) -> anyhow::Result<()>` in the module of
//! what it exercises (`gestures`, `hotplug`, `lifecycle`, `hidpp`, `kernel`…) and add one
//! [`Scenario`] line to [`SCENARIOS`]. Each scenario creates its own
//! devices and its own pawl process; everything is dropped (devices destroyed, pawl killed)
//! when it returns.

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
pub const SCENARIOS: &[Scenario] = &[
    // The harness itself: what the kernel makes of the devices the driver creates, and the
    // static pawl binary running in the VM.
    Scenario {
        name: "uhid_mx_master_3s_creates_evdev_node",
        run: kernel::uhid_mx_master_3s_creates_evdev_node,
    },
    Scenario {
        name: "uhid_bolt_receiver_creates_evdev_nodes",
        run: kernel::uhid_bolt_receiver_creates_evdev_nodes,
    },
    Scenario {
        name: "uinput_touchpad_replays_recording",
        run: kernel::uinput_touchpad_replays_recording,
    },
    Scenario {
        name: "static_pawl_runs_in_vm",
        run: kernel::static_pawl_runs_in_vm,
    },
    // The kernel's Logitech drivers bound, as on a user's machine.
    Scenario {
        name: "kernel_driver_binds_mx_master_3s",
        run: drivers::kernel_driver_binds_mx_master_3s,
    },
    Scenario {
        name: "kernel_driver_hires_wheel_transformed",
        run: drivers::kernel_driver_hires_wheel_transformed,
    },
    Scenario {
        name: "kernel_driver_reconnect_keeps_diversion",
        run: hidpp::kernel_driver_reconnect_keeps_diversion,
    },
    Scenario {
        name: "hidpp_cost_per_motion_frame",
        run: drivers::hidpp_cost_per_motion_frame,
    },
    Scenario {
        name: "unifying_receiver_child_handled",
        run: drivers::unifying_receiver_child_handled,
    },
    Scenario {
        name: "bolt_receiver_handled_as_the_kernel_binds_it",
        run: drivers::bolt_receiver_handled_as_the_kernel_binds_it,
    },
    // Gestures, wheel and motion through the clone, and what pawl leaves alone.
    Scenario {
        name: "uhid_mx_master_3s_bluetooth",
        run: gestures::uhid_mx_master_3s_bluetooth,
    },
    Scenario {
        name: "uhid_bolt_receiver",
        run: gestures::uhid_bolt_receiver,
    },
    Scenario {
        name: "gesture_right_switches_desktop",
        run: gestures::gesture_right_switches_desktop,
    },
    Scenario {
        name: "gesture_left_switches_desktop",
        run: gestures::gesture_left_switches_desktop,
    },
    Scenario {
        name: "gesture_up_opens_overview",
        run: gestures::gesture_up_opens_overview,
    },
    Scenario {
        name: "gesture_down_opens_app_expose",
        run: gestures::gesture_down_opens_app_expose,
    },
    Scenario {
        name: "gesture_below_threshold_does_nothing",
        run: gestures::gesture_below_threshold_does_nothing,
    },
    Scenario {
        name: "gesture_click_passes_through",
        run: gestures::gesture_click_passes_through,
    },
    Scenario {
        name: "inverted_desktop_direction",
        run: gestures::inverted_desktop_direction,
    },
    Scenario {
        name: "touchpad_untouched",
        run: gestures::touchpad_untouched,
    },
    Scenario {
        name: "other_mouse_untouched",
        run: gestures::other_mouse_untouched,
    },
    Scenario {
        name: "bad_config_grabs_nothing",
        run: gestures::bad_config_grabs_nothing,
    },
    // Lifecycle: one managed worker, the inspector, the device check.
    Scenario {
        name: "off_when_not_running",
        run: lifecycle::off_when_not_running,
    },
    Scenario {
        name: "lifecycle_100_cycles",
        run: lifecycle::lifecycle_100_cycles,
    },
    Scenario {
        name: "concurrent_on_starts_one",
        run: lifecycle::concurrent_on_starts_one,
    },
    Scenario {
        name: "kill9_then_status_reports_stale_and_on_recovers",
        run: lifecycle::kill9_then_status_reports_stale_and_on_recovers,
    },
    Scenario {
        name: "off_never_signals_a_process_that_does_not_hold_the_lock",
        run: lifecycle::off_never_signals_a_process_that_does_not_hold_the_lock,
    },
    Scenario {
        name: "pid_reuse_not_mistaken",
        run: lifecycle::pid_reuse_not_mistaken,
    },
    Scenario {
        name: "inspect_shows_events_without_grabbing",
        run: lifecycle::inspect_shows_events_without_grabbing,
    },
    Scenario {
        name: "devices_exit_code",
        run: lifecycle::devices_exit_code,
    },
    // Hotplug, signals, permissions: the daemon in real life.
    Scenario {
        name: "unplug_mid_gesture_releases_everything",
        run: hotplug::unplug_mid_gesture_releases_everything,
    },
    Scenario {
        name: "replug_regrabs",
        run: hotplug::replug_regrabs,
    },
    Scenario {
        name: "held_button_at_start_is_not_stuck",
        run: hotplug::held_button_at_start_is_not_stuck,
    },
    Scenario {
        name: "syn_dropped_resyncs",
        run: hotplug::syn_dropped_resyncs,
    },
    Scenario {
        name: "sighup_applies_valid_config",
        run: hotplug::sighup_applies_valid_config,
    },
    Scenario {
        name: "sighup_keeps_old_on_invalid_config",
        run: hotplug::sighup_keeps_old_on_invalid_config,
    },
    Scenario {
        name: "sigkill_leaves_device_usable",
        run: hotplug::sigkill_leaves_device_usable,
    },
    Scenario {
        name: "keyboard_never_opened",
        run: hotplug::keyboard_never_opened,
    },
    Scenario {
        name: "command_action_runs_and_is_reaped",
        run: hotplug::command_action_runs_and_is_reaped,
    },
    Scenario {
        name: "hires_only_source_gets_lowres_derived",
        run: hotplug::hires_only_source_gets_lowres_derived,
    },
    Scenario {
        name: "lowres_only_source_gets_hires_synthesized",
        run: hotplug::lowres_only_source_gets_hires_synthesized,
    },
    Scenario {
        name: "two_mx_masters_both_handled",
        run: hotplug::two_mx_masters_both_handled,
    },
    Scenario {
        name: "permissions_set_after_node_appears_is_retried",
        run: hotplug::permissions_set_after_node_appears_is_retried,
    },
    Scenario {
        name: "uinput_permission_error_names_the_fix",
        run: hotplug::uinput_permission_error_names_the_fix,
    },
    Scenario {
        name: "grabbed_elsewhere_is_reported",
        run: hotplug::grabbed_elsewhere_is_reported,
    },
    // HID++: diversion, gestures and the thumb wheel through the mouse's hidraw node.
    Scenario {
        name: "hidpp_gesture_right_switches_desktop",
        run: hidpp::hidpp_gesture_right_switches_desktop,
    },
    Scenario {
        name: "hidpp_pointer_not_grabbed_motion_bypasses_pawl",
        run: hidpp::hidpp_pointer_not_grabbed_motion_bypasses_pawl,
    },
    Scenario {
        name: "hidpp_divert_reapplied_after_reconnect",
        run: hidpp::hidpp_divert_reapplied_after_reconnect,
    },
    Scenario {
        name: "hidpp_undivert_on_exit",
        run: hidpp::hidpp_undivert_on_exit,
    },
    Scenario {
        name: "hidpp_first_rawxy_dropped",
        run: hidpp::hidpp_first_rawxy_dropped,
    },
    Scenario {
        name: "hidpp_error_reply_reported",
        run: hidpp::hidpp_error_reply_reported,
    },
    Scenario {
        name: "hidpp_endpoint_reopened_when_the_mouse_returns",
        run: hidpp::hidpp_endpoint_reopened_when_the_mouse_returns,
    },
    Scenario {
        name: "hidpp_sighup_switches_hidpp",
        run: hidpp::hidpp_sighup_switches_hidpp,
    },
    Scenario {
        name: "hidpp_devices_shows_diverted_controls",
        run: hidpp::hidpp_devices_shows_diverted_controls,
    },
    Scenario {
        name: "hidpp_thumb_wheel_scrolls_horizontally",
        run: hidpp::hidpp_thumb_wheel_scrolls_horizontally,
    },
    // Kernel mode: the HID-BPF program (needs HID-BPF: SKIP with the reason on 6.1).
    Scenario {
        name: "kernel_mode_wheel_transformed_in_kernel",
        run: kernel_mode::kernel_mode_wheel_transformed_in_kernel,
    },
    Scenario {
        name: "kernel_mode_glide_tail_comes_from_the_kernel",
        run: kernel_mode::kernel_mode_glide_tail_comes_from_the_kernel,
    },
    Scenario {
        name: "kernel_mode_glide_settings_from_the_map_are_bounded",
        run: kernel_mode::kernel_mode_glide_settings_from_the_map_are_bounded,
    },
    Scenario {
        name: "kernel_mode_gesture_notifications_reach_the_ring_not_hidraw",
        run: kernel_mode::kernel_mode_gesture_notifications_reach_the_ring_not_hidraw,
    },
    Scenario {
        name: "kernel_mode_reattaches_after_reconnect",
        run: kernel_mode::kernel_mode_reattaches_after_reconnect,
    },
    Scenario {
        name: "kernel_mode_unifying_child_wheel_transformed",
        run: kernel_mode::kernel_mode_unifying_child_wheel_transformed,
    },
    Scenario {
        name: "kernel_mode_loader_refuses_a_copy_a_user_can_write",
        run: kernel_mode::kernel_mode_loader_refuses_a_copy_a_user_can_write,
    },
    Scenario {
        name: "kernel_mode_loader_reports_no_hid_bpf",
        run: kernel_mode::kernel_mode_loader_reports_no_hid_bpf,
    },
    // Kernel mode end to end: `pawl run` on the attached program.
    Scenario {
        name: "kernel_mode_motion_never_wakes_pawl",
        run: kernel_daemon::kernel_mode_motion_never_wakes_pawl,
    },
    Scenario {
        name: "kernel_mode_gesture_right_switches_desktop",
        run: kernel_daemon::kernel_mode_gesture_right_switches_desktop,
    },
    Scenario {
        name: "kernel_mode_sighup_rewrites_settings_and_off_returns_to_grab",
        run: kernel_daemon::kernel_mode_sighup_rewrites_settings_and_off_returns_to_grab,
    },
    Scenario {
        name: "kernel_mode_wireless_reconnect_rediverts_from_the_ring",
        run: kernel_daemon::kernel_mode_wireless_reconnect_rediverts_from_the_ring,
    },
    Scenario {
        name: "kernel_mode_follows_a_replaced_or_removed_attachment",
        run: kernel_daemon::kernel_mode_follows_a_replaced_or_removed_attachment,
    },
    Scenario {
        name: "kernel_mode_survives_reconnect",
        run: kernel_daemon::kernel_mode_survives_reconnect,
    },
    Scenario {
        name: "kernel_mode_falls_back_to_grab",
        run: kernel_daemon::kernel_mode_falls_back_to_grab,
    },
    Scenario {
        name: "kernel_mode_another_users_pins_fall_back_to_grab",
        run: kernel_daemon::kernel_mode_another_users_pins_fall_back_to_grab,
    },
    Scenario {
        name: "kernel_mode_reseat_hands_the_mouse_to_the_seat_user_and_back",
        run: kernel_daemon::kernel_mode_reseat_hands_the_mouse_to_the_seat_user_and_back,
    },
    Scenario {
        name: "kernel_mode_reseat_ignores_a_seat_file_logind_did_not_write_and_waits_its_turn",
        run: kernel_daemon::kernel_mode_reseat_ignores_a_seat_file_logind_did_not_write_and_waits_its_turn,
    },
    // Swipe style, read from the virtual touchpad's evdev node.
    Scenario {
        name: "swipe_gesture_touchpad_frames_follow_the_drag",
        run: swipe::swipe_gesture_touchpad_frames_follow_the_drag,
    },
    Scenario {
        name: "swipe_gesture_vertical_touchpad_frames_move_up",
        run: swipe::swipe_gesture_vertical_touchpad_frames_move_up,
    },
    Scenario {
        name: "swipe_click_without_motion_passes_through",
        run: swipe::swipe_click_without_motion_passes_through,
    },
    Scenario {
        name: "swipe_unplug_mid_swipe_lifts_fingers",
        run: swipe::swipe_unplug_mid_swipe_lifts_fingers,
    },
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
