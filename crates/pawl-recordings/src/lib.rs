//! Where tests find the hardware data others recorded from real devices (report
//! descriptors, evdev streams, wheel traces; `SOURCES.md` there gives provenance). It is
//! not in the repository: it lives beside it in `shared/recordings`. A dev-dependency only;
//! nothing pawl ships reads it.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

/// The recordings directory: `$PAWL_RECORDINGS` if set, else the first `shared/recordings`
/// found walking up from the workspace root (`../shared` for a clone, `../../shared` for a
/// worktree under `wt/`), else `../shared/recordings` (which a reader then reports missing).
pub fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PAWL_RECORDINGS") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    root.ancestors()
        .skip(1)
        .map(|a| a.join("shared/recordings"))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| root.join("../shared/recordings"))
}
