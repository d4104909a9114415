//! Tidy: the engine's architecture invariants, checked on its sources, the `//!` header
//! of every Rust file in the workspace, and the repository's comments and documents:
//! no references to tracker numbers.

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, res: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && !name.to_string_lossy().starts_with('.') {
                rust_files(&p, res);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            res.push(p);
        }
    }
}

/// Every file under `dir` whose name ends in one of `exts`, skipping `target` and hidden
/// directories.
fn files_ending_in(dir: &Path, exts: &[&str], res: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files_ending_in(&p, exts, res);
            }
        } else if exts.iter().any(|x| name.ends_with(x)) {
            res.push(p);
        }
    }
}

/// The 1-based numbers of the lines of `text` that cite a tracker entry: the word `issue`
/// or `issues`, in any case, then a space, an optional `#` and a digit. A URL such as
/// `…/-/issues/366` names its tracker and is not matched.
fn tracker_references(text: &str) -> Vec<usize> {
    let mut res = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        let hit = lower.match_indices("issue").any(|(at, _)| {
            let word_start = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
            let rest = lower[at + "issue".len()..]
                .strip_prefix('s')
                .unwrap_or(&lower[at + "issue".len()..]);
            let rest = rest
                .strip_prefix(' ')
                .map(|r| r.strip_prefix('#').unwrap_or(r));
            word_start && rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        });
        if hit {
            res.push(n + 1);
        }
    }
    res
}

#[test]
fn tracker_references_are_found_with_and_without_a_hash_but_not_in_urls() {
    let cites = concat!("see ", "issue", " 14\n", "(Issue", " #3)\n");
    assert_eq!(tracker_references(cites), [1, 2]);
    assert!(tracker_references("libinput/-/issues/366\nno issue here\nmisissue 4").is_empty());
}

/// Comments and documents say what is true now and name the thing, not a ticket: the
/// tracker is not part of the repository. A changelog may cite numbers.
#[test]
fn no_rust_or_markdown_file_cites_a_tracker_number() {
    let root = workspace_root();
    let mut files = Vec::new();
    files_ending_in(&root, &[".rs", ".md"], &mut files);
    assert!(
        files.len() > 50,
        "sources not found under {}",
        root.display()
    );
    let mut problems = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        if name.to_ascii_uppercase().starts_with("CHANGELOG") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for n in tracker_references(&text) {
            problems.push(format!(
                "{}:{n}",
                f.strip_prefix(&root).unwrap_or(f).display()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "tracker references (say what is true now, name the thing):\n{}",
        problems.join("\n")
    );
}

#[test]
fn engine_sources_do_no_io_read_no_clock_and_use_no_unsafe() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() >= 5,
        "engine sources not found under {}",
        src.display()
    );
    let banned = [
        "std::fs",
        "std::net",
        "std::thread",
        "std::process",
        "std::env",
        "Instant::now",
        "SystemTime",
        "libc",
        "unsafe",
        "println!",
        "eprintln!",
    ];
    let mut problems = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            // Comments may name what is banned; `#![forbid(unsafe_code)]` states the
            // invariant, it does not break it.
            let code = line.trim_start();
            if code.starts_with("//") || code.contains("forbid(unsafe_code)") {
                continue;
            }
            for b in banned {
                if line.contains(b) {
                    problems.push(format!("{}:{}: {b}", f.display(), n + 1));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "engine invariant broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn engine_manifest_lists_no_os_or_io_crates() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap_or("");
    let deps = deps.split("\n[").next().unwrap_or("");
    let allowed = ["serde", "toml"];
    for line in deps
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let name = line.split(['=', '.', ' ']).next().unwrap_or("").trim();
        assert!(
            allowed.contains(&name),
            "pawl-engine depends on {name:?}: the engine takes no OS or I/O crates \
             (allowed: {allowed:?}); put it in a platform crate"
        );
    }
    for os in [
        "libc",
        "rustix",
        "nix",
        "evdev",
        "tokio",
        "mio",
        "objc2",
        "core-foundation",
    ] {
        assert!(
            !manifest.contains(os),
            "pawl-engine's manifest mentions {os}"
        );
    }
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("xtask"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` header:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_scroll_event_path_uses_no_floats() {
    // `ScrollAxis` (step, tick, emit, glide) runs in integer fixed point so that a BPF
    // program can compute the same; floats are read only by `ScrollParams::new` at config
    // time, and by the test-only reference model.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/scroll.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find("\nimpl ScrollAxis {")
        .expect("impl ScrollAxis in scroll.rs");
    let end = text[start..]
        .find("#[cfg(test)]")
        .map_or(text.len(), |e| start + e);
    let offset = text[..start].lines().count();
    let problems: Vec<String> = text[start..end]
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| ["f32", "f64"].iter().any(|f| l.contains(f)))
        .map(|(n, l)| format!("scroll.rs:{}: {}", offset + n + 1, l.trim()))
        .collect();
    assert!(
        problems.is_empty(),
        "floats on the scroll event path:\n{}",
        problems.join("\n")
    );
}
