//! Tidy: the engine's architecture invariants, checked on its sources, and the `//!` header
//! of every Rust file in the workspace.

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
