//! The scenarios, one folder per boot, and the pieces they share: a fresh per-scenario
//! context, the "rig" (a uhid mouse + a running pawl + its clone and virtual keyboard),
//! chord and wheel checks.
//!
//! - [`base`]: the initramfs boot, every kernel (the kernel's drivers, the daemon, HID++,
//!   kernel mode).
//! - [`userland`]: the Debian root (Debian's udevd and hwdb, libinput, sway).
//! - [`systemd`]: the Debian root with systemd as PID 1 (udevd's sandbox, logind), the
//!   HID-BPF tier only.
//!
//! Adding a scenario: write `pub fn name(ctx: &mut Ctx) -> anyhow::Result<()>` in the
//! module of what it exercises, in the folder of the boot it needs, and add `name,` to the
//! `SCENARIOS` list at the top of that module: [`scenarios!`] names it from its function,
//! so that list is the one place it is named. A new module gets its own list and one line
//! in its boot's `mod.rs`. Each scenario creates its own devices and its own pawl process;
//! everything is dropped (devices destroyed, pawl killed) when it returns.

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
        $crate::scenarios::Scenario {
            name: stringify!($f),
            run: $m::$f,
        }
    };
    ($f:ident) => {
        $crate::scenarios::Scenario {
            name: stringify!($f),
            run: $f,
        }
    };
}

// One folder per boot, each with its list of modules' lists.
pub mod base;
pub mod systemd;
pub mod userland;
// What the boots share: the rig (a uhid mouse and a running pawl) and the userland's tools.
mod rig;
pub(crate) mod userland_tools;

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
            Err(e)
                if e.downcast_ref::<base::kernel_mode::NotApplicable>()
                    .is_some() =>
            {
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
