//! `cargo xtask mutants [--timeout SECS] [--baseline] [FILE...]`: cargo-mutants on the core
//! files ([`FILES`] unless files are named), one file at a time, and a score table per
//! file. A report, not part of `ci`.
//!
//! Each file runs with `--in-place` (the worktree's own `target/` is reused; cargo-mutants
//! puts each file back after its mutant), scoped to the package that owns it, with
//! doctests skipped (`--cargo-test-arg=--tests`; pawl-linux `--lib`, its integration tests
//! need devices), `--baseline=skip` unless `--baseline` is given, and a per-mutant timeout
//! of 60 s (the crates' tests take 1–4 s). cargo-mutants' output goes to
//! `target/mutants/<file stem>/mutants.out/`; the table is printed and written to
//! `target/mutants/report.txt`. A missed mutant is one the owning package's tests do not
//! catch: tests of other crates and the VM scenarios are not run.
//!
//! cargo-mutants is installed with `cargo install cargo-mutants --locked --version`
//! [`CARGO_MUTANTS_VERSION`] when `cargo mutants --version` fails. Set `PAWL_RECORDINGS`
//! first: tests that read the recordings fail without it, which would count as caught.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::util;

/// The cargo-mutants release the scores in docs/testing.md were measured with.
pub const CARGO_MUTANTS_VERSION: &str = "27.1.0";

/// The files measured by default: the scroll pipeline, the gesture engine, swipe, the
/// config walker, the HID++ session, the evdev frames and the path decision.
pub const FILES: &[&str] = &[
    "crates/pawl-engine/src/scroll.rs",
    "crates/pawl-engine/src/engine.rs",
    "crates/pawl-engine/src/swipe.rs",
    "crates/pawl-engine/src/config/validate.rs",
    "crates/pawl-hidpp/src/session.rs",
    "crates/pawl-evdev/src/frames.rs",
    "crates/pawl-linux/src/daemon/paths.rs",
];

/// Options of one `cargo xtask mutants`.
#[derive(Debug, PartialEq)]
struct Options {
    /// Per-mutant test timeout, s.
    timeout: u64,
    /// Run cargo-mutants' baseline (the unmutated tests) first.
    baseline: bool,
    files: Vec<String>,
}

fn parse_args(args: &[String]) -> anyhow::Result<Options> {
    let mut o = Options {
        timeout: 60,
        baseline: false,
        files: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--timeout" => {
                let v = it.next().context("--timeout needs seconds")?;
                o.timeout = v.parse().with_context(|| format!("--timeout {v:?}"))?;
            }
            "--baseline" => o.baseline = true,
            s if s.starts_with('-') => {
                bail!("unknown option {s:?} (--timeout SECS, --baseline)")
            }
            s => o.files.push(s.to_owned()),
        }
    }
    if o.files.is_empty() {
        o.files = FILES.iter().map(|&f| f.to_owned()).collect();
    }
    Ok(o)
}

/// The package that owns `file`: the folder under `crates/`.
fn package_of(file: &str) -> anyhow::Result<&str> {
    file.strip_prefix("crates/")
        .and_then(|rest| rest.split('/').next())
        .filter(|p| !p.is_empty())
        .with_context(|| format!("{file}: not under crates/<package>/"))
}

/// How one file's mutants ended, from cargo-mutants' `outcomes.json`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Score {
    caught: u32,
    missed: u32,
    timeout: u32,
    unviable: u32,
}

impl Score {
    fn total(&self) -> u32 {
        self.caught + self.missed + self.timeout + self.unviable
    }

    /// Detected share of the mutants that build, percent: a timeout counts as detected
    /// (the tests hang on the mutant). `None` with no viable mutant.
    fn percent(&self) -> Option<f64> {
        let viable = self.caught + self.missed + self.timeout;
        (viable > 0).then(|| f64::from(self.caught + self.timeout) * 100.0 / f64::from(viable))
    }
}

/// Counts the mutant outcomes of an `outcomes.json` (its `outcomes` array; each entry's
/// `summary` is `CaughtMutant`, `MissedMutant`, `Timeout` or `Unviable`; the baseline's
/// entry and any other summary are not mutants' and are skipped).
fn parse_outcomes(json: &str) -> anyhow::Result<Score> {
    let v: serde_json::Value = serde_json::from_str(json).context("outcomes.json")?;
    let outcomes = v["outcomes"]
        .as_array()
        .context("outcomes.json has no outcomes array")?;
    let mut s = Score::default();
    for o in outcomes {
        if o["scenario"] == "Baseline" {
            continue;
        }
        match o["summary"].as_str() {
            Some("CaughtMutant") => s.caught += 1,
            Some("MissedMutant") => s.missed += 1,
            Some("Timeout") => s.timeout += 1,
            Some("Unviable") => s.unviable += 1,
            _ => {}
        }
    }
    Ok(s)
}

/// The table of `rows` (file, score), Markdown.
fn table(rows: &[(String, Score)]) -> String {
    let mut t = String::from(
        "| file | mutants | caught | missed | timeout | unviable | score |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for (file, s) in rows {
        let score = s.percent().map_or("–".to_owned(), |p| format!("{p:.0} %"));
        let _ = writeln!(
            t,
            "| {file} | {} | {} | {} | {} | {} | {score} |",
            s.total(),
            s.caught,
            s.missed,
            s.timeout,
            s.unviable
        );
    }
    t
}

fn ensure_cargo_mutants() -> anyhow::Result<()> {
    let have = Command::new("cargo")
        .args(["mutants", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        util::cargo(&[
            "install",
            "cargo-mutants",
            "--locked",
            "--version",
            CARGO_MUTANTS_VERSION,
        ])?;
    }
    Ok(())
}

/// Runs cargo-mutants on `file` into `out` (its `--output` folder).
fn run_file(file: &str, out: &Path, o: &Options) -> anyhow::Result<()> {
    let package = package_of(file)?;
    let test_arg = if package == "pawl-linux" {
        "--cargo-test-arg=--lib"
    } else {
        "--cargo-test-arg=--tests"
    };
    let mut cmd = Command::new("cargo");
    cmd.args([
        "mutants",
        "--in-place",
        "--no-shuffle",
        "--package",
        package,
    ])
    .args(["--file", file, "--output"])
    .arg(out)
    .args(["--timeout", &o.timeout.to_string(), test_arg]);
    if !o.baseline {
        cmd.arg("--baseline=skip");
    }
    // cargo-mutants exits 2 when mutants were missed and 3 on timeouts: the table says so.
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    match status.code() {
        Some(0 | 2 | 3) => Ok(()),
        _ => bail!("{cmd:?} exited with {status}"),
    }
}

/// `cargo xtask mutants`.
pub fn mutants(args: &[String]) -> anyhow::Result<()> {
    let o = parse_args(args)?;
    let root = util::project_root()?;
    ensure_cargo_mutants()?;
    let mut rows = Vec::new();
    for file in &o.files {
        if !root.join(file).is_file() {
            bail!("{file}: no such file");
        }
        let stem = file.trim_end_matches(".rs").replace('/', "_");
        let out = root.join("target/mutants").join(stem);
        // cargo-mutants creates `out` but not its parent.
        std::fs::create_dir_all(&out).with_context(|| format!("{}", out.display()))?;
        util::step(&format!("mutants {file}"), || run_file(file, &out, &o))?;
        let path = out.join("mutants.out/outcomes.json");
        let json = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
        rows.push((file.clone(), parse_outcomes(&json)?));
        let missed =
            std::fs::read_to_string(out.join("mutants.out/missed.txt")).unwrap_or_default();
        if !missed.is_empty() {
            eprintln!("missed in {file}:\n{missed}");
        }
    }
    let t = table(&rows);
    print!("{t}");
    std::fs::write(root.join("target/mutants/report.txt"), &t)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of cargo-mutants 27's `outcomes.json`, cut to one of each outcome.
    const SAMPLE: &str = r#"{
      "outcomes": [
        {"scenario": "Baseline", "summary": "Success"},
        {"scenario": {"Mutant": {"name": "a"}}, "summary": "CaughtMutant"},
        {"scenario": {"Mutant": {"name": "b"}}, "summary": "CaughtMutant"},
        {"scenario": {"Mutant": {"name": "c"}}, "summary": "MissedMutant"},
        {"scenario": {"Mutant": {"name": "d"}}, "summary": "Timeout"},
        {"scenario": {"Mutant": {"name": "e"}}, "summary": "Unviable"}
      ],
      "total_mutants": 5
    }"#;

    #[test]
    fn outcomes_are_counted_per_kind_without_the_baseline() {
        let s = parse_outcomes(SAMPLE).unwrap();
        assert_eq!(
            s,
            Score {
                caught: 2,
                missed: 1,
                timeout: 1,
                unviable: 1
            }
        );
        assert_eq!(s.total(), 5);
        // (2 caught + 1 timeout) of 4 viable.
        assert_eq!(s.percent(), Some(75.0));
    }

    #[test]
    fn a_file_without_viable_mutants_has_no_score() {
        let s = parse_outcomes(r#"{"outcomes": []}"#).unwrap();
        assert_eq!(s.percent(), None);
        assert!(table(&[("x.rs".into(), s)]).contains("| x.rs | 0 | 0 | 0 | 0 | 0 | – |"));
        assert!(parse_outcomes("{}").is_err());
    }

    #[test]
    fn files_default_to_the_list_and_map_to_their_package() {
        let o = parse_args(&[]).unwrap();
        assert_eq!(o.files.len(), FILES.len());
        assert_eq!((o.timeout, o.baseline), (60, false));
        let o = parse_args(&["--timeout".into(), "20".into(), "a.rs".into()]).unwrap();
        assert_eq!((o.timeout, o.files), (20, vec!["a.rs".to_owned()]));
        assert_eq!(
            package_of("crates/pawl-hidpp/src/session.rs").unwrap(),
            "pawl-hidpp"
        );
        assert!(package_of("xtask/src/main.rs").is_err());
        assert!(parse_args(&["--jobs".into()]).is_err());
    }
}
