//! The `record_evemu`, `record_libinput` and `record_dom_wheel` targets: one recording
//! format's parser on any text, and on what parses `pawl replay`'s driver
//! (`pawl_evdev::replay::replay`) under the default config and with glide inertia.
//!
//! Checked: a parse error's line is inside the text (0 when the format has none; a lone
//! CR ends a line, as in YAML); a
//! replay counts every event of the recording, leaves at most the events after the last
//! `SYN_REPORT` unconsumed, and ends (its glide ticks finish).

use std::sync::OnceLock;

use pawl_engine::{Config, Platform};
use pawl_evdev::record::{self, RecordError, Recording};
use pawl_evdev::replay::replay;

/// A recording format.
#[derive(Clone, Copy, Debug)]
pub enum Format {
    /// `evemu-record` / `evemu-describe` text.
    Evemu,
    /// `libinput record` YAML.
    Libinput,
    /// DOM wheel events as JSON.
    DomWheel,
}

fn configs() -> &'static [Config; 2] {
    static CONFIGS: OnceLock<[Config; 2]> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        [
            Config::default_for(Platform::Linux),
            Config::parse(
                "[scroll]\ninertia = \"glide\"\nscope = \"all-wheels\"\n",
                "fuzz.toml",
                Platform::Linux,
            )
            .expect("a valid fuzz config"),
        ]
    })
}

/// Runs one input through `format`'s parser (UTF-8 only: `pawl replay` reads text).
pub fn run(format: Format, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed: Result<Recording, RecordError> = match format {
        Format::Evemu => record::parse_evemu(text),
        Format::Libinput => record::parse_libinput_record(text),
        Format::DomWheel => record::parse_dom_wheel(text),
    };
    match parsed {
        Ok(recording) => {
            for config in configs() {
                let r = replay(&recording, config, None);
                assert_eq!(r.summary.events_in, recording.events.len());
                assert!(r.summary.trailing <= recording.events.len());
                let _ = r.summary.to_string();
            }
        }
        Err(e) => {
            // Lines as YAML counts them (a lone CR ends a line too: the libinput record
            // parser's numbers), which is never fewer than the LFs say.
            let lines = text.replace("\r\n", "\n").split(['\n', '\r']).count();
            assert!(e.line <= lines, "error line {} of {lines}: {e}", e.line);
            assert!(!e.message.is_empty());
        }
    }
}
