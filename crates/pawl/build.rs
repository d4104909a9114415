//! Sets `PAWL_VERSION` for `pawl --version`: the package version and, when pawl is built
//! from a git checkout, the abbreviated commit (`0.1.0 (1a2b3c4)`). `PAWL_COMMIT` in the
//! environment overrides git (packagers building from a tarball of a known commit); without
//! either it is the package version alone.

use std::path::Path;
use std::process::Command;

#[path = "build/version.rs"]
mod version;

use version::version_string;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-env-changed=PAWL_COMMIT");
    println!("cargo:rerun-if-changed=build/version.rs");
    let commit = match std::env::var("PAWL_COMMIT") {
        Ok(c) => Some(c),
        Err(_) => git_commit(Path::new(&dir)),
    };
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    println!(
        "cargo:rustc-env=PAWL_VERSION={}",
        version_string(&version, commit.as_deref())
    );
}

/// `git rev-parse --short HEAD` in `dir`, or `None` outside git. Asks cargo to run this
/// script again when HEAD moves: HEAD itself, the branch it points to, packed refs.
fn git_commit(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .current_dir(dir)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short", "HEAD"])?;
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.extend(git(&["rev-parse", "--git-path", &branch]));
    }
    watched.extend(git(&["rev-parse", "--git-path", "packed-refs"]));
    // Relative paths are relative to `dir`, where git ran. Only files that exist: cargo
    // runs a script watching a missing file on every build.
    for path in watched.iter().map(|p| dir.join(p)).filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    Some(commit)
}
