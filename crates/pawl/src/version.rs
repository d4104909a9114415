//! pawl's version as `pawl --version` prints it after "pawl ": `0.1.0 (1a2b3c4)` — the
//! package version and the abbreviated git commit it was built from — or `0.1.0` alone when
//! built outside git (`build.rs`, `build/version.rs`).

/// The package version, with ` (COMMIT)` when the build knew it.
pub const VERSION: &str = env!("PAWL_VERSION");

/// The shape of [`VERSION`], computed by `build.rs`; here for the tests.
#[cfg(test)]
#[path = "../build/version.rs"]
mod shape;

#[cfg(test)]
mod tests {
    use super::shape;
    use std::process::Command;

    use clap::CommandFactory;

    #[test]
    fn the_version_names_the_commit_when_known_and_is_the_bare_version_otherwise() {
        assert_eq!(
            shape::version_string("0.1.0", Some("1a2b3c4")),
            "0.1.0 (1a2b3c4)"
        );
        assert_eq!(
            shape::version_string("0.1.0", Some("1a2b3c4\n")),
            "0.1.0 (1a2b3c4)"
        );
        assert_eq!(shape::version_string("0.1.0", None), "0.1.0");
        // What a failing git prints is no commit.
        assert_eq!(
            shape::version_string("0.1.0", Some("fatal: not a git repository")),
            "0.1.0"
        );
        assert_eq!(shape::version_string("0.1.0", Some("")), "0.1.0");
    }

    #[test]
    fn pawl_version_prints_the_package_version_and_the_commit_of_this_checkout() {
        let head = Command::new("git")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["rev-parse", "--short", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        let commit = std::env::var("PAWL_COMMIT").ok().or(head);
        let expected = match commit {
            Some(c) => format!("pawl {} ({c})\n", env!("CARGO_PKG_VERSION")),
            None => format!("pawl {}\n", env!("CARGO_PKG_VERSION")),
        };
        assert_eq!(crate::cli::Cli::command().render_version(), expected);
    }
}
