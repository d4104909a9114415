//! Finding and reading the config file; parsing and validation are the engine's
//! ([`pawl_engine::Config::parse`]).

use std::path::{Path, PathBuf};

use anyhow::Context;
use pawl_engine::{Config, Platform};

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
/// `$HOME/.config/pawl/config.toml`.
pub fn path(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_owned());
    }
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => {
            let home =
                std::env::var_os("HOME").context("neither XDG_CONFIG_HOME nor HOME is set")?;
            PathBuf::from(home).join(".config")
        }
    };
    Ok(base.join("pawl").join("config.toml"))
}

/// Reads and validates the config. A missing file at the default path means defaults; a
/// missing file given explicitly is an error. Errors list every problem as
/// `file:line:column: key: message`.
pub fn load(explicit: Option<&Path>) -> anyhow::Result<Loaded> {
    let path = path(explicit)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
            return Ok(Loaded {
                config: Config::default_for(Platform::current()),
                origin: format!("defaults (no file at {})", path.display()),
                path: None,
            });
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read config {}", path.display())),
    };
    let shown = path.display().to_string();
    let config = Config::parse(&text, &shown, Platform::current())
        .map_err(|errs| anyhow::anyhow!("invalid config:\n{errs}"))?;
    Ok(Loaded {
        config,
        origin: shown,
        path: Some(path),
    })
}
