//! The version string `pawl --version` prints, shared by `build.rs` (which computes it) and
//! the tests in `src/version.rs` (which check both of its shapes). Plain functions, no
//! dependencies: both take this file as a module with `#[path]`.

/// `pawl --version` after "pawl ": `VERSION (COMMIT)` when the commit is known, `VERSION`
/// alone when it is not (built from a tarball, or where git is missing).
pub fn version_string(package_version: &str, commit: Option<&str>) -> String {
    match commit.map(str::trim).filter(|c| is_commit(c)) {
        Some(commit) => format!("{package_version} ({commit})"),
        None => package_version.to_owned(),
    }
}

/// An abbreviated commit id as `git rev-parse --short` prints it: 4 to 40 lowercase hex
/// digits. Anything else (an error message, an empty line) is no commit.
pub fn is_commit(s: &str) -> bool {
    (4..=40).contains(&s.len()) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
