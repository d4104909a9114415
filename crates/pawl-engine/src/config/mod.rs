//! Configuration: the TOML file format and the validated [`Config`] the engine runs on.
//!
//! Parsing is a pure function of the text ([`Config::parse`]): reading the file is the
//! caller's job. Every problem is reported with `file:line:column` of the exact key or
//! value, the dotted key, and what is allowed (the range, the values, the type in plain
//! words). All problems are collected, not just the first: TOML syntax errors (then nothing
//! else is checked), unknown keys, wrong types, out-of-range values, values another platform
//! needs, and button mappings that contradict each other.
//!
//! Settings that only matter in another mode are accepted silently (`smoothing_factor` with
//! `smoothing = "none"`, `carry_limit` or the glide keys with another inertia): switching the
//! mode later keeps them.
//!
//! Layout: [`model`] (the validated types and their defaults, [`Config::decide`]),
//! `validate` (the walker over toml's spanned document), [`error`] (located problems) and
//! [`default_text`] (the documented default file).

pub mod default_text;
pub mod error;
pub mod model;
mod validate;

pub use crate::platform::Platform;
pub use default_text::default_config_text;
pub use error::{ConfigError, ConfigErrors};
pub use model::*;

/// The largest config file pawl reads, bytes (1 MiB): the documented default file is
/// under 8 KiB. [`Config::parse`] and [`Config::parse_bytes`] refuse larger text, and the
/// CLI stops reading a file past it (so `/dev/zero` fails at once).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;
/// [`MAX_CONFIG_BYTES`] in words, for messages.
pub const MAX_CONFIG_SIZE: &str = "1 MiB";
/// The most strings a `command` action may have: program and arguments (256).
pub const MAX_COMMAND_ARGS: usize = 256;
/// The longest string of a `command` action, bytes (4096, Linux's `PATH_MAX`).
pub const MAX_COMMAND_ARG_BYTES: usize = 4096;

impl Config {
    /// Parses and validates config text. `file` is only used in error locations.
    ///
    /// Errors: every problem found, each with `file:line:column`, the key and a message
    /// (for range errors, the allowed range); text larger than [`MAX_CONFIG_BYTES`] is one
    /// error at 1:1.
    pub fn parse(text: &str, file: &str, platform: Platform) -> Result<Config, ConfigErrors> {
        validate::parse(text, file, platform)
    }

    /// [`Config::parse`] of the bytes of a file: invalid UTF-8 is an error at the line and
    /// column (in characters) of its first bad byte.
    pub fn parse_bytes(
        bytes: &[u8],
        file: &str,
        platform: Platform,
    ) -> Result<Config, ConfigErrors> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Config::parse(text, file, platform),
            Err(e) => {
                let good = &bytes[..e.valid_up_to()];
                // The valid prefix is UTF-8 by definition.
                let before = std::str::from_utf8(good).unwrap_or("");
                let (line, column) = validate::line_col(before, before.len());
                Err(ConfigErrors(vec![ConfigError {
                    file: file.to_owned(),
                    line,
                    column,
                    key: String::new(),
                    message: format!(
                        "byte 0x{:02x} is not UTF-8: a config is UTF-8 text",
                        bytes[e.valid_up_to()]
                    ),
                }]))
            }
        }
    }
}

#[cfg(test)]
mod tests;
