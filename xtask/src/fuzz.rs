//! `cargo xtask fuzz [--time SECS] [--runs N] [--max-len BYTES] [TARGET...]`: builds the cargo-fuzz targets
//! of `fuzz/` (libFuzzer, no sanitizer: the code under test has no `unsafe`; debug
//! assertions and overflow checks on) and runs each for a bounded time, one after another
//! with one job, on its working corpus (`target/fuzz/corpus/<target>`, kept between runs),
//! the kept corpus (`fuzz/corpus/<target>`: hand-made seeds and minimized findings) and
//! seeds generated now from `examples/` and the shared recordings (`target/fuzz/seeds/`,
//! never committed). Fails on any crash, leak, timeout or out-of-memory, naming the input
//! libFuzzer saved; prints per target the inputs run, exec/s, coverage (edges, features)
//! and corpus size, and writes the same table to `target/fuzz/report.txt`. Defaults: 60 s
//! a target, inputs of at most 4096 bytes (longer seeds are cut).
//!
//! Toolchain: `cargo +nightly` when rustup has a nightly toolchain, else the running
//! cargo with `RUSTC_BOOTSTRAP=1` (libFuzzer's coverage flags are unstable options).
//! cargo-fuzz is installed with `cargo install cargo-fuzz --locked` when missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::util;

/// Options of one `cargo xtask fuzz`.
#[derive(Debug)]
struct Options {
    /// `-max_total_time` per target, s.
    time: Option<u64>,
    /// `-runs` per target.
    runs: Option<u64>,
    /// `-max_len`: longest input, bytes.
    max_len: usize,
    targets: Vec<String>,
}

fn parse_args(args: &[String]) -> anyhow::Result<Options> {
    let mut o = Options {
        time: None,
        runs: None,
        max_len: 4096,
        targets: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--time" => {
                let v = it.next().context("--time needs seconds")?;
                o.time = Some(v.parse().with_context(|| format!("--time {v:?}"))?);
            }
            "--runs" => {
                let v = it.next().context("--runs needs a count")?;
                o.runs = Some(v.parse().with_context(|| format!("--runs {v:?}"))?);
            }
            "--max-len" => {
                let v = it.next().context("--max-len needs bytes")?;
                o.max_len = v.parse().with_context(|| format!("--max-len {v:?}"))?;
            }
            s if s.starts_with('-') => {
                bail!("unknown option {s:?} (--time SECS, --runs N, --max-len BYTES)")
            }
            s => o.targets.push(s.to_owned()),
        }
    }
    if o.time.is_none() && o.runs.is_none() {
        o.time = Some(60);
    }
    Ok(o)
}

/// The fuzz targets: the `[[bin]]` names of `fuzz/Cargo.toml`.
fn all_targets(root: &Path) -> anyhow::Result<Vec<String>> {
    let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml"))?;
    let mut res = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(v) = line.strip_prefix("name") {
            let name = v.trim().trim_start_matches('=').trim().trim_matches('"');
            res.push(name.to_owned());
        }
    }
    Ok(res)
}

/// How to run cargo-fuzz: the cargo command and its environment.
fn fuzz_cargo() -> Command {
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = if nightly {
        let mut c = Command::new("cargo");
        c.arg("+nightly");
        c.env_remove("CARGO").env_remove("RUSTUP_TOOLCHAIN");
        c
    } else {
        let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        c.env("RUSTC_BOOTSTRAP", "1");
        c
    };
    cmd.env_remove("RUSTC").env_remove("RUSTFLAGS");
    cmd
}

fn ensure_cargo_fuzz() -> anyhow::Result<()> {
    let present = fuzz_cargo()
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!("installing cargo-fuzz (cargo install cargo-fuzz --locked)");
    util::cargo(&["install", "cargo-fuzz", "--locked"])
}

/// Runs the fuzz targets (see the module documentation).
pub fn fuzz(args: &[String]) -> anyhow::Result<()> {
    let root = util::project_root()?;
    let opts = parse_args(args)?;
    let known = all_targets(&root)?;
    let targets = if opts.targets.is_empty() {
        known.clone()
    } else {
        for t in &opts.targets {
            if !known.contains(t) {
                bail!("no fuzz target {t:?}; targets: {}", known.join(", "));
            }
        }
        opts.targets.clone()
    };
    ensure_cargo_fuzz()?;
    let out = root.join("target/fuzz");
    let target_dir = out.to_string_lossy().into_owned();
    let build = Instant::now();
    util::run(fuzz_cargo().current_dir(&root).args([
        "fuzz",
        "build",
        "--sanitizer",
        "none",
        "--target-dir",
        &target_dir,
    ]))?;
    eprintln!(
        "fuzz targets built ({:.0} s)",
        build.elapsed().as_secs_f64()
    );
    let seeds = out.join("seeds");
    let _ = std::fs::remove_dir_all(&seeds);
    write_seeds(&root, &seeds, &targets)?;

    let mut report = String::from(
        "target             inputs        time    exec/s    cov     ft  corpus         result\n",
    );
    let mut failed = Vec::new();
    for t in &targets {
        let stats = run_target(&root, &out, t, &opts)?;
        let line = format!(
            "{t:<18} {:>10} {:>9.0} s {:>7} {:>6} {:>6}  {:<14} {}\n",
            stats.runs,
            stats.secs,
            stats.exec_per_sec,
            stats.cov,
            stats.ft,
            stats.corpus,
            if stats.ok { "ok" } else { "FAILED" }
        );
        eprint!("{line}");
        report.push_str(&line);
        if !stats.ok {
            let _ = writeln!(report, "  {}", stats.failure);
            failed.push(format!("{t}: {}", stats.failure));
        }
    }
    std::fs::write(out.join("report.txt"), &report)?;
    eprint!("\n{report}");
    if !failed.is_empty() {
        bail!("fuzzing found:\n  {}", failed.join("\n  "));
    }
    Ok(())
}

#[derive(Debug, Default)]
struct Stats {
    runs: u64,
    secs: f64,
    exec_per_sec: u64,
    cov: u64,
    ft: u64,
    corpus: String,
    ok: bool,
    failure: String,
}

fn run_target(root: &Path, out: &Path, target: &str, opts: &Options) -> anyhow::Result<Stats> {
    let corpus = out.join("corpus").join(target);
    let artifacts = out.join("artifacts").join(target);
    let logs = out.join("logs");
    for d in [&corpus, &artifacts, &logs] {
        std::fs::create_dir_all(d)?;
    }
    let kept = root.join("fuzz/corpus").join(target);
    let seeds = out.join("seeds").join(target);
    let log_path = logs.join(format!("{target}.log"));
    let log = std::fs::File::create(&log_path)?;
    let mut cmd = fuzz_cargo();
    cmd.current_dir(root).args([
        "fuzz",
        "run",
        "--sanitizer",
        "none",
        "--target-dir",
        &out.to_string_lossy(),
        target,
    ]);
    cmd.arg(&corpus);
    for dir in [&kept, &seeds] {
        if dir.is_dir() {
            cmd.arg(dir);
        }
    }
    cmd.arg("--");
    cmd.arg(format!("-artifact_prefix={}/", artifacts.display()));
    cmd.args(["-print_final_stats=1", "-timeout=10"]);
    cmd.args(["-rss_limit_mb=2048", "-malloc_limit_mb=1024"]);
    // Without it libFuzzer takes the longest seed (a 16 KB event stream) as the limit and
    // slows down several times for little new coverage.
    cmd.arg(format!("-max_len={}", opts.max_len));
    if let Some(t) = opts.time {
        cmd.arg(format!("-max_total_time={t}"));
    }
    if let Some(r) = opts.runs {
        cmd.arg(format!("-runs={r}"));
    }
    eprintln!("==> fuzz {target} (log: {})", log_path.display());
    let start = Instant::now();
    let status = cmd
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .with_context(|| format!("cannot start cargo fuzz run {target}"))?;
    let secs = start.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let mut stats = parse_log(&text);
    stats.secs = secs;
    stats.ok = status.success();
    if !stats.ok {
        let saved = text
            .lines()
            .filter(|l| l.contains("Test unit written to") || l.contains("panicked at"))
            .collect::<Vec<_>>()
            .join("; ");
        stats.failure = format!("exit {status}: {saved} (log: {})", log_path.display());
    }
    Ok(stats)
}

/// Figures from libFuzzer's output: the last status line (`#N ... cov: C ft: F corp:
/// U/S`) and the final stats (`stat::number_of_executed_units`,
/// `stat::average_exec_per_sec`).
fn parse_log(text: &str) -> Stats {
    let mut s = Stats::default();
    let field = |line: &str, key: &str| -> Option<String> {
        let mut words = line.split_whitespace();
        words.find(|w| *w == key)?;
        words.next().map(str::to_owned)
    };
    for line in text.lines() {
        if line.starts_with('#') && line.contains("cov:") {
            if let Some(n) = line[1..].split_whitespace().next() {
                s.runs = n.parse().unwrap_or(s.runs);
            }
            s.cov = field(line, "cov:")
                .and_then(|v| v.parse().ok())
                .unwrap_or(s.cov);
            s.ft = field(line, "ft:")
                .and_then(|v| v.parse().ok())
                .unwrap_or(s.ft);
            if let Some(c) = field(line, "corp:") {
                s.corpus = c;
            }
        } else if let Some(v) = line.strip_prefix("stat::number_of_executed_units:") {
            s.runs = v.trim().parse().unwrap_or(s.runs);
        } else if let Some(v) = line.strip_prefix("stat::average_exec_per_sec:") {
            s.exec_per_sec = v.trim().parse().unwrap_or(0);
        }
    }
    s
}

/// Writes the generated seeds of `targets` under `dir/<target>/`: the recordings of
/// `examples/` and the shared recordings as text for their format's target, their events
/// as evdev bytes (with a header) for the decoder and the pipeline, the default config
/// texts for the config target.
fn write_seeds(root: &Path, dir: &Path, targets: &[String]) -> anyhow::Result<()> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut sources = vec![root.join("examples")];
    match crate::vm::recordings_dir(root) {
        Ok(d) if d.is_dir() => sources.push(d),
        _ => eprintln!("no shared recordings found: seeding from examples/ only"),
    }
    for src in &sources {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(src)
            .with_context(|| format!("reading {}", src.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        files.extend(entries);
    }
    let mut n = 0;
    let mut put = |target: &str, name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        if !targets.iter().any(|t| t == target) {
            return Ok(());
        }
        let d = dir.join(target);
        std::fs::create_dir_all(&d)?;
        std::fs::write(d.join(name), bytes)?;
        n += 1;
        Ok(())
    };
    for path in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.extension().is_some_and(|e| e == "rdesc") {
            put("hid_descriptor", &name, &std::fs::read(path)?)?;
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let target = match path.extension().and_then(|e| e.to_str()) {
            Some("events" | "desc") => "record_evemu",
            Some("yaml") => "record_libinput",
            Some("json") => "record_dom_wheel",
            _ => continue,
        };
        put(target, &name, text.as_bytes())?;
        let Ok(rec) = pawl_evdev::record::parse(&text) else {
            continue;
        };
        if rec.events.is_empty() {
            continue;
        }
        let bytes: Vec<u8> = rec.events.iter().flat_map(|e| e.to_bytes()).collect();
        // Decoder header: bit 0–1 hi-res codes, bits 2–7 the read size.
        for header in [0x03u8 | (9 << 2), 63 << 2] {
            let mut seed = vec![header];
            seed.extend_from_slice(&bytes);
            put("evdev_decoder", &format!("{name}.{header:02x}"), &seed)?;
        }
        // Pipeline header: every wheel code, MSC_SCAN, transformed, under each config; big
        // reads; no injection.
        for config in 0..4u8 {
            let mut seed = vec![0x3F | (config << 6), 0xFF, 0x00];
            seed.extend_from_slice(&bytes);
            put("linux_pipeline", &format!("{name}.config{config}"), &seed)?;
        }
    }
    for platform in [pawl_engine::Platform::Linux, pawl_engine::Platform::MacOs] {
        let text = pawl_engine::config::default_config_text(platform);
        put(
            "config_parse",
            &format!("default-{platform:?}.toml"),
            text.as_bytes(),
        )?;
    }
    eprintln!("{n} seeds generated in {}", dir.display());
    Ok(())
}
