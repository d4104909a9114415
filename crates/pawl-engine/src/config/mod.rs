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

impl Config {
    /// Parses and validates config text. `file` is only used in error locations.
    ///
    /// Errors: every problem found, each with `file:line:column`, the key and a message
    /// (for range errors, the allowed range).
    pub fn parse(text: &str, file: &str, platform: Platform) -> Result<Config, ConfigErrors> {
        validate::parse(text, file, platform)
    }
}

#[cfg(test)]
mod tests;
