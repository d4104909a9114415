//! Finding and reading the config file; parsing and validation are the engine's
//! ([`pawl_engine::Config::parse`]).

use std::path::{Path, PathBuf};

use anyhow::Context;
use pawl_engine::{Config, Key, Platform};

/// A loaded config and where it came from.
#[derive(Debug)]
pub struct Loaded {
    /// The validated config.
    pub config: Config,
    /// The file it was read from, `None` when defaults were used (no file).
    #[expect(dead_code, reason = "read by `pawl on`/reload, which later issues add")]
    pub path: Option<PathBuf>,
    /// For messages: the path, or "defaults (no file at …)".
    pub origin: String,
}

/// The config path: `explicit`, else `$XDG_CONFIG_HOME/pawl/config.toml`, else
/// `$HOME/.config/pawl/config.toml`. An empty or relative `XDG_CONFIG_HOME` is ignored (the
/// XDG Base Directory specification: such a path is invalid).
///
/// Errors: no explicit path and neither variable gives one.
pub fn path(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_owned());
    }
    default_path_from(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
    .context("no config location: XDG_CONFIG_HOME is unset or relative and HOME is unset")
}

/// [`path`]'s default from the two variables' values: `None` when neither gives one.
pub fn default_path_from(
    xdg_config_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let base = match xdg_config_home.map(PathBuf::from) {
        Some(x) if x.is_absolute() => x,
        _ => PathBuf::from(home.filter(|h| !h.is_empty())?).join(".config"),
    };
    Some(base.join("pawl").join("config.toml"))
}

/// For an error about the default config path: which variable it came from, as
/// ` (the default path, from $XDG_CONFIG_HOME)` or `… $HOME`, so a user whose
/// `XDG_CONFIG_HOME` points somewhere odd sees why pawl looked there; empty for an
/// explicit path.
fn default_source(explicit: Option<&Path>) -> &'static str {
    if explicit.is_some() {
        ""
    } else if std::env::var_os("XDG_CONFIG_HOME").is_some_and(|x| Path::new(&x).is_absolute()) {
        " (the default path, from $XDG_CONFIG_HOME)"
    } else {
        " (the default path, from $HOME)"
    }
}

/// Why a config file that defines commands must not be trusted: writable by group or
/// others (`mode & 0o022`), or owned by a user other than `euid` and root. `None` = safe.
pub fn commands_unsafe(mode: u32, owner: u32, euid: u32) -> Option<&'static str> {
    if mode & 0o022 != 0 {
        Some("other users can write it")
    } else if owner != euid && owner != 0 {
        Some("another user owns it")
    } else {
        None
    }
}

/// Why a config file that defines commands must not be trusted because of its directory:
/// others could replace the file when they can write the directory (`mode & 0o022`) and
/// the sticky bit (`0o1000`, as on `/tmp`) does not stop them, or when the directory
/// belongs to a user other than `euid` and root. `None` = safe.
pub fn directory_unsafe(mode: u32, owner: u32, euid: u32) -> Option<&'static str> {
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        Some("other users can write its directory (and it has no sticky bit)")
    } else if owner != euid && owner != 0 {
        Some("another user owns its directory")
    } else {
        None
    }
}

/// Reads and validates the config. A missing file at the default path means defaults; a
/// missing file given explicitly is an error; a file larger than
/// [`pawl_engine::config::MAX_CONFIG_BYTES`] (1 MiB) is refused after reading one byte
/// more; invalid UTF-8 is located. Errors list every problem as
/// `file:line:column: key: message`. A file that defines commands is refused when other
/// users could change it ([`commands_unsafe`], from `fstat` of the file as opened, so the
/// file checked is the file read) or replace it ([`directory_unsafe`], for the directory of
/// the path and, through a symlink, of the file it names).
pub fn load(explicit: Option<&Path>) -> anyhow::Result<Loaded> {
    use std::os::unix::fs::MetadataExt;
    let path = match path(explicit) {
        Ok(p) => p,
        // Nowhere to look (HOME unset, as under some service managers): the defaults, as
        // for a missing file at the default path. Commands that need none work.
        Err(e) => {
            return Ok(Loaded {
                config: Config::default_for(Platform::current()),
                origin: format!("defaults ({e})"),
                path: None,
            });
        }
    };
    let mut file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
            return Ok(Loaded {
                config: Config::default_for(Platform::current()),
                origin: format!("defaults (no file at {})", path.display()),
                path: None,
            });
        }
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "cannot read config {}{}",
                    path.display(),
                    default_source(explicit)
                )
            });
        }
    };
    let meta = file
        .metadata()
        .with_context(|| format!("cannot inspect config {}", path.display()))?;
    let bytes = crate::input::read_limited(
        &mut file,
        &path,
        pawl_engine::config::MAX_CONFIG_BYTES,
        pawl_engine::config::MAX_CONFIG_SIZE,
    )?;
    let shown = path.display().to_string();
    let config = Config::parse_bytes(&bytes, &shown, Platform::current())
        .map_err(|errs| anyhow::anyhow!("invalid config:\n{errs}"))?;
    if !config.commands.is_empty() {
        let euid = rustix::process::geteuid().as_raw();
        if let Some(problem) = commands_unsafe(meta.mode(), meta.uid(), euid) {
            anyhow::bail!(
                "refusing config {shown}: it defines commands and {problem}; fix with `chmod go-w {shown}` (and `chown` it to yourself)"
            );
        }
        let parent = |p: &Path| match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        let mut dirs = vec![parent(&path)];
        if let Ok(real) = std::fs::canonicalize(&path) {
            dirs.push(parent(&real));
        }
        for dir in dirs {
            let dmeta = std::fs::metadata(&dir)
                .with_context(|| format!("cannot inspect the directory of config {shown}"))?;
            if let Some(problem) = directory_unsafe(dmeta.mode(), dmeta.uid(), euid) {
                anyhow::bail!(
                    "refusing config {shown}: it defines commands and {problem} ({}); move it to a directory only you can write, or `chmod go-w {}`",
                    dir.display(),
                    dir.display()
                );
            }
        }
    }
    Ok(Loaded {
        config,
        origin: shown,
        path: Some(path),
    })
}

/// `pawl config check`'s lines about `[[app]]` tables: per table, its line, the
/// applications it names, the devices it applies to and what it overrides. Empty without
/// tables.
pub fn app_listing(config: &pawl_engine::Config) -> String {
    let mut out = String::new();
    for rule in &config.apps {
        let devices = match &rule.device {
            None => "every handled device".to_owned(),
            Some(m) => {
                let mut parts = Vec::new();
                if let Some(n) = &m.name {
                    parts.push(format!("name {n:?}"));
                }
                match (m.vendor, m.product) {
                    (Some(v), Some(p)) => parts.push(format!("id {v:04x}:{p:04x}")),
                    (Some(v), None) => parts.push(format!("vendor {v:04x}")),
                    _ => {}
                }
                if let Some(b) = m.bus {
                    parts.push(format!("bus {}", b.name()));
                }
                format!("handled devices with {}", parts.join(", "))
            }
        };
        let mut sets = Vec::new();
        if !rule.scroll.is_empty() {
            sets.push("scroll");
        }
        match rule.gesture.style {
            Some(pawl_engine::config::GestureStyle::Swipe) => sets.push("swipe style"),
            Some(pawl_engine::config::GestureStyle::Shortcut) => sets.push("shortcut style"),
            None => {}
        }
        let no_style = pawl_engine::config::GestureActions {
            style: None,
            ..rule.gesture
        };
        if no_style != Default::default() {
            sets.push("gesture actions");
        }
        if rule.buttons != Default::default() {
            sets.push("button actions");
        }
        let sets = if sets.is_empty() {
            "nothing (the device profile)".to_owned()
        } else {
            sets.join(", ")
        };
        let apps: Vec<String> = rule.app_ids.iter().map(|a| format!("{a:?}")).collect();
        let titled = match &rule.title {
            Some(p) => format!(" with a title matching {:?}", p.as_str()),
            None => String::new(),
        };
        out += &format!(
            "[[app]] at line {}: {}{titled} on {devices}: sets {sets}\n",
            rule.line,
            apps.join(", ")
        );
    }
    out
}

/// `pawl config keys`: every key name a chord may use, one key per line (canonical name,
/// then its aliases), modifiers first; keys `platform` cannot press are marked.
pub fn keys_listing(platform: Platform) -> String {
    let mut out = String::from(
        "# Key names for chords, case-insensitive: { key = \"Super+Page_Up\" } and [actions.chords].\n\
         # Modifiers are pressed first and released last. name: aliases\n",
    );
    let (mods, rest): (Vec<Key>, Vec<Key>) = Key::ALL.iter().partition(|k| k.is_modifier());
    for (title, keys) in [("modifiers", mods), ("keys", rest)] {
        out += &format!("# {title}\n");
        // Keys with a single name and no mark share lines (A B C …), the others get one.
        let mut run = String::new();
        for k in keys {
            let names = k.names();
            let pressable = k.available_on(platform);
            if names.len() == 1 && pressable {
                if !run.is_empty() && run.len() + 1 + names[0].len() > 88 {
                    out += &run;
                    out.push('\n');
                    run.clear();
                }
                if !run.is_empty() {
                    run.push(' ');
                }
                run += names[0];
                continue;
            }
            if !run.is_empty() {
                out += &run;
                out.push('\n');
                run.clear();
            }
            out += names[0];
            if names.len() > 1 {
                out += &format!(": {}", names[1..].join(", "));
            }
            if !pressable {
                out += &format!("  (not on {}: no key code)", platform.name());
            }
            out.push('\n');
        }
        if !run.is_empty() {
            out += &run;
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_in_the_readme_is_valid_on_linux() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let blocks: Vec<&str> = text
            .split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap())
            .collect();
        assert!(blocks.len() >= 3, "the README's config blocks: {blocks:?}");
        for b in blocks {
            if let Err(e) = pawl_engine::Config::parse(b, "README.md", Platform::Linux) {
                panic!("{e}\nin:\n{b}");
            }
        }
    }

    /// Browsers put the page's title first and their own name last, so the README's
    /// video-tab table must match a site's name anywhere, in any case.
    #[test]
    fn the_readmes_video_tab_table_matches_real_browser_titles() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let block = text
            .split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap())
            .find(|b| b.contains("[[app]]") && b.contains("title = "))
            .expect("a README config with a title table");
        let c = pawl_engine::Config::parse(block, "README.md", Platform::Linux).unwrap();
        let plain = c.app_key("firefox", Some("Inbox — Mozilla Firefox"));
        for title in [
            "Cats - YouTube — Mozilla Firefox",
            "Big Buck Bunny on Vimeo — Mozilla Firefox",
            "youtube.com — Mozilla Firefox",
        ] {
            assert_ne!(c.app_key("firefox", Some(title)), plain, "{title}");
        }
    }

    /// The README promises the game the wheel as the mouse sends it: a free-spin burst
    /// comes out as it went in, whatever the global [scroll] says.
    #[test]
    fn the_readmes_game_table_passes_the_wheel_as_the_mouse_sends_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = std::fs::read_to_string(root.join("README.md")).unwrap();
        let block = text
            .split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap())
            .find(|b| b.contains("\"steam_app_570\""))
            .expect("a README config with the game table");
        assert!(block.contains("the wheel as the mouse sends it, at most 100 detents"));
        let recording = std::fs::read_to_string(root.join("examples/free-spin-burst.events"));
        let recording = pawl_evdev::record::parse(&recording.unwrap()).unwrap();
        let global = "[scroll]\nsmoothing_factor = 0.2\nmax_step = 2\nspike_ratio = 2\ninertia = \"carry\"\n";
        for config in [block.to_owned(), format!("{global}{block}")] {
            let c = pawl_engine::Config::parse(&config, "README.md", Platform::Linux).unwrap();
            let app = pawl_evdev::replay::FocusedApp {
                id: "steam_app_570",
                title: None,
            };
            let r = pawl_evdev::replay::replay_as(&recording, &c, None, Some(app));
            let w = &r.summary.wheel;
            assert!(w.max_in >= 7560, "the burst reaches 63 detents: {w:?}");
            assert_eq!(
                (w.v120_out, w.max_out, w.frames_out),
                (w.v120_in, w.max_in, w.frames_in),
                "{:?}",
                r.notes
            );
        }
    }

    #[test]
    fn app_listing_names_each_tables_apps_devices_and_overrides() {
        let config = Config::parse(
            "[[app]]\napp_id = [\"firefox\", \"chromium\"]\ntitle = \"YouTube$\"\n[app.gesture]\nleft = \"back\"\n[[app]]\napp_id = \"game\"\ndevice = { name = \"*MX*\", id = \"046d:b034\", bus = \"usb\" }\n[app.scroll]\ninvert_vertical = false\n[app.buttons]\non_back = \"none\"\n",
            "c.toml",
            Platform::Linux,
        )
        .unwrap();
        assert_eq!(
            app_listing(&config),
            "[[app]] at line 1: \"firefox\", \"chromium\" with a title matching \"YouTube$\" on every handled device: sets gesture actions\n\
             [[app]] at line 6: \"game\" on handled devices with name \"*MX*\", id 046d:b034, bus usb: sets scroll, button actions\n"
        );
        let empty = Config::default_for(Platform::Linux);
        assert_eq!(app_listing(&empty), "");
    }

    #[test]
    fn keys_listing_names_every_key_with_its_aliases_and_marks_unpressable_ones() {
        let linux = keys_listing(Platform::Linux);
        assert!(linux.contains("\nPage_Up: PageUp, Prior\n"), "{linux}");
        assert!(
            linux.contains("\nFn  (not on Linux: no key code)\n"),
            "{linux}"
        );
        assert!(linux.contains("\nXF86AudioPlay: PlayPause\n"), "{linux}");
        let mac = keys_listing(Platform::MacOs);
        assert!(mac.contains("\nFn\n"), "{mac}");
        assert!(linux.contains("\nA B C D E F G H I J K L M N O P Q R S T U V W X Y Z"));
        assert!(mac.contains("\nXF86AudioPlay: PlayPause  (not on macOS: no key code)\n"));
        // Every name the chord parser accepts is listed.
        for k in Key::ALL {
            for n in k.names() {
                assert!(linux.contains(n), "{n}");
            }
        }
    }

    #[test]
    fn a_relative_xdg_config_home_is_ignored_and_home_is_used() {
        let p = |x: Option<&str>, h: Option<&str>| {
            default_path_from(x.map(Into::into), h.map(Into::into))
        };
        assert_eq!(
            p(Some("/x/cfg"), Some("/home/u")),
            Some(PathBuf::from("/x/cfg/pawl/config.toml"))
        );
        assert_eq!(
            p(Some("relative/cfg"), Some("/home/u")),
            Some(PathBuf::from("/home/u/.config/pawl/config.toml"))
        );
        assert_eq!(
            p(Some(""), Some("/home/u")),
            Some(PathBuf::from("/home/u/.config/pawl/config.toml"))
        );
        assert_eq!(p(Some("relative"), None), None);
        assert_eq!(p(None, Some("")), None);
    }

    #[test]
    fn config_with_commands_must_be_writable_only_by_its_owner() {
        assert_eq!(commands_unsafe(0o100644, 1000, 1000), None);
        assert_eq!(
            commands_unsafe(0o100600, 0, 1000),
            None,
            "root-owned is fine"
        );
        assert!(commands_unsafe(0o100664, 1000, 1000).is_some());
        assert!(commands_unsafe(0o100646, 1000, 1000).is_some());
        assert!(commands_unsafe(0o100644, 1001, 1000).is_some());
    }

    #[test]
    fn a_directory_others_can_write_is_unsafe_unless_sticky() {
        assert_eq!(directory_unsafe(0o40755, 1000, 1000), None);
        assert_eq!(directory_unsafe(0o41777, 0, 1000), None, "/tmp");
        assert!(directory_unsafe(0o40777, 1000, 1000).is_some());
        assert!(directory_unsafe(0o40775, 1000, 1000).is_some());
        assert!(directory_unsafe(0o40755, 1001, 1000).is_some());
        assert_eq!(directory_unsafe(0o40755, 0, 1000), None, "/etc/pawl");
    }

    #[test]
    fn config_with_commands_in_a_world_writable_directory_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[gesture]\nup = { command = [\"true\"] }\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let set_dir = |mode| {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap()
        };
        set_dir(0o777);
        let err = load(Some(&file)).unwrap_err().to_string();
        assert!(err.contains("other users can write its directory"), "{err}");
        set_dir(0o1777);
        assert_eq!(load(Some(&file)).unwrap().config.commands.len(), 1);
        // A config without commands may live anywhere.
        set_dir(0o777);
        std::fs::write(&file, "[gesture]\nthreshold = 100\n").unwrap();
        assert!(load(Some(&file)).is_ok());
        set_dir(0o755);
    }

    #[test]
    fn a_symlinked_config_is_checked_where_the_file_really_is() {
        use std::os::unix::fs::PermissionsExt;
        let safe = tempfile::tempdir().unwrap();
        let open = tempfile::tempdir().unwrap();
        let target = open.path().join("config.toml");
        std::fs::write(&target, "[gesture]\nup = { command = [\"true\"] }\n").unwrap();
        std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let link = safe.path().join("config.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = load(Some(&link)).unwrap_err().to_string();
        assert!(err.contains("other users can write its directory"), "{err}");
        std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(load(Some(&link)).is_ok());
    }

    #[test]
    fn group_writable_config_with_commands_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "[gesture]\nup = { command = [\"true\"] }\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).unwrap();
        let err = load(Some(&file)).unwrap_err().to_string();
        assert!(err.contains("chmod go-w"), "{err}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(load(Some(&file)).unwrap().config.commands.len(), 1);
    }

    #[test]
    fn a_config_larger_than_one_mib_is_refused_naming_the_path_and_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let mut text = "#".repeat(pawl_engine::config::MAX_CONFIG_BYTES);
        text.push('\n');
        std::fs::write(&file, &text).unwrap();
        let err = format!("{:#}", load(Some(&file)).unwrap_err());
        assert_eq!(
            err,
            format!(
                "{} is larger than the 1 MiB limit (1048576 bytes)",
                file.display()
            )
        );
        // At the limit it is read (and a comment-only file is the defaults).
        text.pop();
        std::fs::write(&file, &text).unwrap();
        load(Some(&file)).unwrap();
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn config_check_of_dev_zero_fails_at_the_limit_instead_of_reading_forever() {
        let err = format!("{:#}", load(Some(Path::new("/dev/zero"))).unwrap_err());
        assert_eq!(
            err,
            "/dev/zero is larger than the 1 MiB limit (1048576 bytes)"
        );
        let err = format!("{:#}", load(Some(Path::new("/dev/urandom"))).unwrap_err());
        assert!(
            err.starts_with("/dev/urandom is larger than the 1 MiB limit"),
            "{err}"
        );
    }

    #[test]
    fn a_config_that_is_not_utf8_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, b"[gesture]\n# caf\xe9\n").unwrap();
        let err = format!("{:#}", load(Some(&file)).unwrap_err());
        assert!(
            err.ends_with(&format!(
                "{}:2:6: byte 0xe9 is not UTF-8: a config is UTF-8 text",
                file.display()
            )),
            "{err}"
        );
    }
}
