//! Tidy: the engine's architecture invariants, checked on its sources, the `//!` header
//! of every Rust file in the workspace, and the repository's comments and documents:
//! no references to tracker numbers.

use std::path::{Path, PathBuf};

/// The workspace's root directory, canonical.
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every `.rs` file under `dir`, skipping `target` and hidden directories.
pub(crate) fn rust_files(dir: &Path, res: &mut Vec<PathBuf>) {
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
    // regex-lite: pure matching of window-title patterns (no I/O, no OS calls).
    let allowed = ["regex-lite", "serde", "toml"];
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

/// Whether `text` declares `ident` as one of `kinds` (`fn`, `struct`, …): the kind, a space,
/// the identifier, then a character that cannot continue an identifier.
fn declares(text: &str, ident: &str, kinds: &[&str]) -> bool {
    kinds.iter().any(|kind| {
        let needle = format!("{kind} {ident}");
        text.match_indices(&needle).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            before.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
                && after.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
        })
    })
}

/// Whether `text` has an enum variant `ident`: a line that starts with it, then `,`, `(`
/// or ` {`.
fn declares_variant(text: &str, ident: &str) -> bool {
    text.lines().any(|l| {
        l.trim_start()
            .strip_prefix(ident)
            .is_some_and(|rest| rest.starts_with([',', '(']) || rest.starts_with(" {"))
    })
}

/// Whether `text` re-exports `ident` with a `pub use`: the word inside the statement.
fn reexports(text: &str, ident: &str) -> bool {
    text.match_indices("pub use ").any(|(at, _)| {
        let statement = text[at..].split(';').next().unwrap_or("");
        statement
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|word| word == ident)
    })
}

/// The Rust sources of a crate directory, as one text.
fn crate_text(dir: &Path) -> String {
    let mut files = Vec::new();
    rust_files(&dir.join("src"), &mut files);
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

const TYPE_KINDS: &[&str] = &["struct", "enum", "trait", "type"];
const ITEM_KINDS: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "mod",
];

/// Where a path from the repository root starts.
const ROOTED: &[&str] = &[
    "crates/",
    "xtask/",
    "contrib/",
    "docs/",
    "fuzz/",
    "examples/",
    ".ci/",
];

/// What is wrong with the Rust name `token` (`pawl_linux::start`, `Daemon::run`,
/// `paths::decide`, `Decoder`), or `None`. `base` is the crate of the section.
fn rust_name_problem(root: &Path, token: &str, base: Option<&Path>) -> Option<String> {
    let mut segments: Vec<&str> = token.split("::").collect();
    let first_crate = root.join("crates").join(segments[0].replace('_', "-"));
    let prefixed = segments.len() > 1 && first_crate.join("src").is_dir();
    let dirs: Vec<PathBuf> = if prefixed {
        segments.remove(0);
        vec![first_crate]
    } else if let Some(base) = base.filter(|b| b.join("src").is_dir()) {
        vec![base.to_owned()]
    } else {
        let mut all: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        all.extend([root.join("xtask"), root.join("fuzz")]);
        all
    };
    let last = *segments.last().unwrap();
    let found = dirs.iter().any(|dir| {
        let text = crate_text(dir);
        if segments.len() == 1 && prefixed {
            // `crate::item`: declared or re-exported at the crate root.
            let top = ["src/lib.rs", "src/main.rs"]
                .iter()
                .map(|f| std::fs::read_to_string(dir.join(f)).unwrap_or_default())
                .collect::<String>();
            return declares(&top, last, ITEM_KINDS) || reexports(&top, last);
        }
        if segments.len() == 1 {
            return declares(&text, last, TYPE_KINDS);
        }
        let owner = segments[segments.len() - 2];
        if owner.starts_with(|c: char| c.is_ascii_uppercase()) {
            return declares(&text, owner, TYPE_KINDS)
                && (declares(&text, last, &["fn", "const"]) || declares_variant(&text, last));
        }
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        let modules_exist = segments[..segments.len() - 1].iter().all(|m| {
            files.iter().any(|f| {
                f.file_stem().is_some_and(|s| s == *m) || f.parent().is_some_and(|p| p.ends_with(m))
            }) || declares(&text, m, &["mod"])
        });
        modules_exist && declares(&text, last, ITEM_KINDS)
    });
    let names: Vec<String> = dirs
        .iter()
        .map(|d| d.strip_prefix(root).unwrap_or(d).display().to_string())
        .collect();
    (!found).then(|| format!("`{token}` is not declared in {}", names.join(", ")))
}

/// What is wrong with the path `token` (`crates/…`, `sys.rs`, `config/`), or `None`.
/// A path from the repository root must exist there; a bare file or folder name must
/// exist under `base` (the section's crate), its `src/` or its `tests/`, or in one of
/// `folders` (the folders from the root that the paragraph named before it).
fn path_problem(
    root: &Path,
    token: &str,
    base: Option<&Path>,
    folders: &[PathBuf],
) -> Option<String> {
    let rel = token.trim_end_matches('/');
    let mut candidates = vec![root.join(rel)];
    if !ROOTED.iter().any(|r| token.starts_with(r)) {
        if let Some(base) = base {
            candidates.extend([
                base.join(rel),
                base.join("src").join(rel),
                base.join("tests").join(rel),
            ]);
        }
        candidates.extend(folders.iter().map(|f| f.join(rel)));
    }
    (!candidates.iter().any(|c| c.exists())).then(|| format!("`{token}` does not exist"))
}

/// ARCHITECTURE.md names only what exists. Every backticked token is checked by its shape:
/// - a path: it starts with `crates/`, `xtask/`, `contrib/`, `docs/`, `fuzz/`, `examples/`
///   or `.ci/` and must exist from the repository root; or it is a bare file name with a
///   source extension (`mouse.rs`, `scroll.h`), or a folder name ending in `/`, and must
///   exist under the crate of the heading it stands under (the crate itself, its `src/` or
///   `tests/`), or in a folder that its paragraph named from the root before it;
/// - a Rust path (`pawl_linux::start`, `Daemon::run`, `paths::decide`): a leading crate
///   name picks that crate, else the heading's crate, else any crate. `crate::item` needs
///   the item declared or re-exported in the crate's `lib.rs` or `main.rs`;
///   `Type::member` needs the type declared (`struct`, `enum`, `trait`, `type`) and the
///   member declared as a `fn`, a `const` or an enum variant in the same crate;
///   `module::item` needs each module as a file, folder or `mod`, and the item declared;
/// - a bare CamelCase name (`Decoder`) must be declared as a type in those crates.
///
/// Tokens with spaces, absolute paths (`/dev/uhid`) and other words are not checked. The
/// check is textual (grep-level), not a parse.
#[test]
fn every_path_and_rust_name_in_architecture_md_exists() {
    let root = workspace_root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let exts = [
        ".rs", ".c", ".h", ".toml", ".txt", ".md", ".rules", ".mount", ".path", ".service",
    ];
    let mut base: Option<PathBuf> = None;
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            folders.clear();
        }
        let tokens: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
        if line.starts_with('#') {
            base = tokens
                .first()
                .map(|t| root.join(t.trim_end_matches('/')))
                .filter(|p| p.is_dir());
        }
        for token in tokens {
            let plain = !token.contains(' ') && !token.starts_with('/');
            let rooted = ROOTED.iter().any(|r| token.starts_with(r));
            let is_path = plain
                && (rooted
                    || exts.iter().any(|x| token.ends_with(x))
                    || (token.ends_with('/') && !token.contains(':')));
            let is_rust_path = plain
                && token.contains("::")
                && token
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
            let is_type = plain
                && token.starts_with(|c: char| c.is_ascii_uppercase())
                && token.chars().any(|c| c.is_ascii_lowercase())
                && token.chars().all(|c| c.is_ascii_alphanumeric());
            let problem = if is_path {
                let problem = path_problem(&root, token, base.as_deref(), &folders);
                if rooted && token.ends_with('/') {
                    folders.push(root.join(token));
                }
                problem
            } else if is_rust_path || is_type {
                rust_name_problem(&root, token, base.as_deref())
            } else {
                continue;
            };
            checked += 1;
            if let Some(p) = problem {
                problems.push(format!("ARCHITECTURE.md:{}: {p}", n + 1));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} names checked: is the parser still right?"
    );
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md names what does not exist:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_architecture_check_finds_declarations_and_rejects_look_alikes() {
    assert!(declares("pub fn start(x: u8)", "start", &["fn"]));
    assert!(!declares("pub fn start_all()", "start", &["fn"]));
    assert!(!declares("fn restart()", "start", &["fn"]));
    assert!(declares("pub(super) struct Mouse {", "Mouse", TYPE_KINDS));
    assert!(declares_variant(
        "enum Wake {\n    Ring(usize),\n    Pins,\n}",
        "Ring"
    ));
    assert!(declares_variant("enum Wake {\n    Pins,\n}", "Pins"));
    assert!(reexports("pub use sys::{Daemon, start};", "start"));
    assert!(!reexports("pub use sys::{Daemon, restart};", "start"));
    let root = workspace_root();
    assert!(rust_name_problem(&root, "pawl_linux::start", None).is_none());
    assert!(rust_name_problem(&root, "pawl_linux::run", None).is_some());
    assert!(rust_name_problem(&root, "pawl_macos::start", None).is_none());
    assert!(rust_name_problem(&root, "DeviceEngine::frame_at", None).is_none());
    assert!(rust_name_problem(&root, "DeviceEngine::frame_until", None).is_some());
    assert!(path_problem(&root, "crates/pawl-linux/src/daemon/", None, &[]).is_none());
    assert!(path_problem(&root, "crates/pawl-linux/src/nowhere.rs", None, &[]).is_some());
    let linux = root.join("crates/pawl-linux");
    assert!(path_problem(&root, "daemon/mouse.rs", Some(&linux), &[]).is_none());
    let engine = root.join("crates/pawl-engine");
    assert!(path_problem(&root, "mouse.rs", Some(&engine), &[]).is_some());
    let daemon = [linux.join("src/daemon")];
    assert!(path_problem(&root, "mouse.rs", Some(&engine), &daemon).is_none());
}
