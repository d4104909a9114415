//! The man pages (`contrib/man/`) and shell completions (`contrib/completions/`) generated
//! from the clap definition in [`crate::cli`], and the test that keeps the committed files
//! equal to it. `cargo xtask man` / `cargo xtask completions` rewrite them (they run this
//! test with `PAWL_UPDATE_GENERATED=1`).

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;
use roff::{Roff, bold, italic, roman};

use crate::cli::Cli;

/// Set to `1` to rewrite stale files instead of failing.
const UPDATE_ENV: &str = "PAWL_UPDATE_GENERATED";

/// Every generated file: (path relative to the workspace root, contents).
fn generated_files() -> Vec<(PathBuf, String)> {
    let mut files = man_pages();
    for (shell, name) in [
        (Shell::Bash, "pawl.bash"),
        (Shell::Zsh, "_pawl"),
        (Shell::Fish, "pawl.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(
            shell,
            &mut without_hidden(&Cli::command()),
            "pawl",
            &mut buf,
        );
        files.push((
            Path::new("contrib/completions").join(name),
            String::from_utf8(buf).expect("completions are UTF-8"),
        ));
    }
    files
}

/// `cmd` without its hidden arguments, recursively (clap_complete lists hidden flags; the
/// internal `--worker` is no business of the user's shell).
fn without_hidden(cmd: &clap::Command) -> clap::Command {
    // clap's builder takes `&'static str` names (its "string" feature is off); this runs
    // once per test.
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let mut out = clap::Command::new(leak(cmd.get_name()))
        .args(cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned())
        .subcommands(cmd.get_subcommands().map(without_hidden));
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        out = out.version(leak(version));
    }
    out
}

/// `pawl.1` (with the sections clap knows nothing about) and one page per visible
/// subcommand, `pawl-on.1`, `pawl-config-check.1`, … like git's.
fn man_pages() -> Vec<(PathBuf, String)> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    let mut top = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut top).unwrap();
    man.render_name_section(&mut top).unwrap();
    man.render_synopsis_section(&mut top).unwrap();
    man.render_description_section(&mut top).unwrap();
    man.render_options_section(&mut top).unwrap();
    man.render_subcommands_section(&mut top).unwrap();
    top.extend_from_slice(extra_sections().as_bytes());
    man.render_version_section(&mut top).unwrap();
    pages.push((man.get_filename(), top));
    fn sub_pages(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let man = clap_mangen::Man::new(sub.clone());
            let mut page = Vec::new();
            man.render(&mut page).unwrap();
            pages.push((man.get_filename(), page));
            sub_pages(sub, pages);
        }
    }
    sub_pages(&cmd, &mut pages);
    pages
        .into_iter()
        .map(|(name, page)| {
            (
                Path::new("contrib/man").join(name),
                String::from_utf8(page).expect("man pages are UTF-8"),
            )
        })
        .collect()
}

/// EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO of `pawl.1`.
fn extra_sections() -> String {
    let mut r = Roff::new();
    let item = |r: &mut Roff, term: Vec<roff::Inline>, text: &str| {
        r.control("TP", []);
        r.text(term);
        r.text([roman(text)]);
    };
    r.control("SH", ["EXIT STATUS"]);
    r.text([roman(
        "0 on success; 1 on an error (printed to stderr as \"pawl: …\"); 2 on a usage error. \
         pawl status: 0 running, 1 stopped with stale metadata, 3 stopped. pawl devices: 0 \
         when an MX Master is connected, 1 when none is.",
    )]);
    r.control("SH", ["ENVIRONMENT"]);
    item(
        &mut r,
        vec![bold("XDG_CONFIG_HOME")],
        "Where the config file is looked for (default ~/.config).",
    );
    item(
        &mut r,
        vec![bold("XDG_RUNTIME_DIR")],
        "Linux: the lock and metadata live in its pawl/ directory (default /tmp/pawl-UID). \
         macOS uses TMPDIR, the per-user temporary directory.",
    );
    item(
        &mut r,
        vec![bold("XDG_STATE_HOME")],
        "Where pawl on --debug logs without --log (default ~/.local/state).",
    );
    item(
        &mut r,
        vec![bold("XDG_CURRENT_DESKTOP")],
        "Which desktop's shortcuts the keys action backend presses (GNOME, KDE).",
    );
    r.control("SH", ["FILES"]);
    item(
        &mut r,
        vec![italic("$XDG_CONFIG_HOME/pawl/config.toml")],
        "The configuration; pawl config default prints every key with its default.",
    );
    item(
        &mut r,
        vec![italic("$XDG_RUNTIME_DIR/pawl/pawl.lock")],
        "Held (flock) by the one running worker for its whole life.",
    );
    item(
        &mut r,
        vec![italic("$XDG_RUNTIME_DIR/pawl/pawl.json")],
        "The worker's pid, start time, executable, config, version and grabbed devices \
         (mode 0600).",
    );
    item(
        &mut r,
        vec![italic("~/.config/systemd/user/pawl.service")],
        "Written by pawl service install on Linux.",
    );
    item(
        &mut r,
        vec![italic("~/Library/LaunchAgents/dev.pawl.worker.plist")],
        "Written by pawl service install on macOS.",
    );
    r.control("SH", ["SEE ALSO"]);
    r.text([roman(
        "evtest(1), libinput(1), systemctl(1), launchctl(1), and the project's README.md and \
         ARCHITECTURE.md.",
    )]);
    r.render()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/pawl is two levels below the workspace root")
        .to_owned()
}

#[test]
fn man_pages_and_completions_match_the_clap_definition() {
    let root = workspace_root();
    let update = std::env::var_os(UPDATE_ENV).is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (rel, contents) in generated_files() {
        let path = root.join(&rel);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(contents.as_str()) {
            continue;
        }
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, contents).unwrap();
            eprintln!("updated {}", rel.display());
        } else {
            stale.push(rel.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "generated files differ from the clap definition: {}\nrun `cargo xtask man` to \
         regenerate them",
        stale.join(", ")
    );
}

#[test]
fn every_visible_subcommand_has_a_man_page_and_the_top_page_lists_exit_codes() {
    let files = generated_files();
    let names: Vec<String> = files
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for page in [
        "pawl.1",
        "pawl-on.1",
        "pawl-off.1",
        "pawl-status.1",
        "pawl-config-check.1",
    ] {
        assert!(names.iter().any(|n| n == page), "{page} missing: {names:?}");
    }
    let top = &files[0].1;
    assert!(top.contains(".SH \"EXIT STATUS\""), "{top}");
    assert!(top.contains("3 stopped"), "{top}");
    // The hidden worker flag is internal and stays out of the docs.
    for (path, text) in &files {
        assert!(!text.contains("-worker"), "{}", path.display());
    }
}
