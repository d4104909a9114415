//! `cargo xtask bench-instructions`: what one input frame costs, in instructions, counted by
//! valgrind's callgrind on a release build of `crates/pawl-evdev/examples/hot_path.rs`.
//!
//! For each scenario (motion with the gesture button up, motion while it is held, wheel
//! scroll) and each scope (`engine`: `DeviceEngine::frame` alone; `path`: decode → engine →
//! write buffer, the daemon's work per frame without the syscalls), callgrind counts the
//! instructions inside the measured function (`--toggle-collect`) for two stream lengths;
//! the difference divided by the difference in frames is the cost per frame, free of setup.
//! A report, not a gate: the target is ≤ 150 instructions per motion frame with the button
//! up. Installs the `valgrind` Debian package when missing.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

use crate::util;

/// Frames in the short and the long run.
const SHORT: u64 = 20_000;
const LONG: u64 = 40_000;

/// Target for a motion frame with the gesture button up, instructions.
const MOTION_TARGET: f64 = 150.0;

pub fn bench_instructions(_args: &[String]) -> anyhow::Result<()> {
    let root = util::project_root()?;
    util::ensure_debian_packages(&["valgrind"])?;
    util::cargo(&[
        "build",
        "--release",
        "--quiet",
        "-p",
        "pawl-evdev",
        "--example",
        "hot_path",
    ])?;
    let exe = root.join("target/release/examples/hot_path");
    let out_dir = std::env::temp_dir().join(format!("pawl-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir)?;
    let scenarios = [
        ("motion", "motion, gesture button up"),
        ("held", "motion, gesture button held"),
        ("scroll", "wheel scroll (in scope)"),
    ];
    println!("instructions per input frame (callgrind, {SHORT} vs {LONG} frames, release build)");
    println!(
        "{:<30} {:>10} {:>14}",
        "scenario", "engine", "decode+engine+write"
    );
    let mut motion = None;
    for (scenario, label) in scenarios {
        let mut row = Vec::new();
        for mode in ["engine", "path"] {
            let short = instructions(&exe, &out_dir, scenario, mode, SHORT)?;
            let long = instructions(&exe, &out_dir, scenario, mode, LONG)?;
            let per = (long as f64 - short as f64) / (LONG - SHORT) as f64;
            row.push(per);
        }
        if scenario == "motion" {
            motion = Some(row[0]);
        }
        println!("{label:<30} {:>10.1} {:>14.1}", row[0], row[1]);
    }
    std::fs::remove_dir_all(&out_dir).ok();
    if let Some(m) = motion {
        let verdict = if m <= MOTION_TARGET { "met" } else { "MISSED" };
        println!(
            "target: <= {MOTION_TARGET} instructions per motion frame with the button up (engine): {verdict} ({m:.1})"
        );
    }
    Ok(())
}

/// Instructions callgrind collected inside the measured function for one run.
fn instructions(
    exe: &Path,
    dir: &Path,
    scenario: &str,
    mode: &str,
    frames: u64,
) -> anyhow::Result<u64> {
    let out = dir.join(format!("{scenario}-{mode}-{frames}.out"));
    let res = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--toggle-collect=*measure*")
        .arg(exe)
        .args([scenario, mode, &frames.to_string()])
        .output()
        .context("cannot start valgrind")?;
    if !res.status.success() {
        bail!(
            "valgrind {scenario} {mode} {frames} failed: {}",
            String::from_utf8_lossy(&res.stderr)
        );
    }
    let text =
        std::fs::read_to_string(&out).with_context(|| format!("cannot read {}", out.display()))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .with_context(|| format!("no totals in {}", out.display()))
}
