//! Everything the command line prints goes through here, so a write error is an error the
//! caller returns instead of a panic (`println!` panics on `EPIPE` and `ENOSPC`), and text
//! that another program chose (a device name) reaches the terminal with its control
//! characters escaped.
//!
//! `main` maps a [`WriteError`] to the exit status: [`EXIT_BROKEN_PIPE`] without a message
//! when the reader went away (`pawl replay FILE | head -1`), otherwise one message and
//! [`EXIT_WRITE_ERROR`] (`pawl config default > /dev/full`).

use std::fmt;
use std::io::{self, Write};

/// Exit status when stdout or stderr is a pipe whose reader has gone (`EPIPE`): 141, what
/// a shell reports for a program killed by `SIGPIPE` (128 + 13). No message is printed.
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// Exit status for any other error writing stdout or stderr (`ENOSPC`, `EIO`): 74,
/// `EX_IOERR` of `sysexits.h`. Distinct from `pawl status`'s 0/1/3/4 and `pawl devices`'
/// 0/1, so a script never mistakes a full disk for a state.
pub const EXIT_WRITE_ERROR: u8 = 74;

/// Which standard stream a write failed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// File descriptor 1.
    Stdout,
    /// File descriptor 2.
    Stderr,
}

/// Writing stdout or stderr failed; `main` decides the exit status from it.
#[derive(Debug)]
pub struct WriteError {
    /// The stream.
    pub stream: Stream,
    /// The OS error (`BrokenPipe` for `EPIPE`).
    pub source: io::Error,
}

impl WriteError {
    /// Whether the reader of a pipe went away: the quiet case.
    pub fn is_broken_pipe(&self) -> bool {
        self.source.kind() == io::ErrorKind::BrokenPipe
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stream = match self.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        write!(f, "cannot write to {stream}: {}", self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Writes `text` to stdout and flushes it (so `ENOSPC` shows here, not at exit).
///
/// Errors: [`WriteError`] on [`Stream::Stdout`].
pub fn print(text: &str) -> Result<(), WriteError> {
    write_to(&mut io::stdout().lock(), text).map_err(|source| WriteError {
        stream: Stream::Stdout,
        source,
    })
}

/// Writes `text` and a newline to stdout (see [`print()`]).
pub fn println(text: &str) -> Result<(), WriteError> {
    let mut stdout = io::stdout().lock();
    write_to(&mut stdout, text)
        .and_then(|()| write_to(&mut stdout, "\n"))
        .map_err(|source| WriteError {
            stream: Stream::Stdout,
            source,
        })
}

/// Writes `text` and a newline to stderr, for notes that are not log lines.
///
/// Errors: [`WriteError`] on [`Stream::Stderr`].
pub fn eprintln(text: &str) -> Result<(), WriteError> {
    let mut stderr = io::stderr().lock();
    write_to(&mut stderr, text)
        .and_then(|()| write_to(&mut stderr, "\n"))
        .map_err(|source| WriteError {
            stream: Stream::Stderr,
            source,
        })
}

fn write_to(w: &mut impl Write, text: &str) -> io::Result<()> {
    w.write_all(text.as_bytes())?;
    w.flush()
}

/// `s` with every character that could steer a terminal written as a Rust escape
/// (`\u{1b}`): C0 controls (newline and tab included), DEL, C1 controls, and the Unicode
/// bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder what
/// follows. For names other programs choose (a USB device names itself).
pub fn escape_control(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_names_are_escaped_and_the_rest_kept() {
        assert_eq!(escape_control("MX Master 3S"), "MX Master 3S");
        assert_eq!(
            escape_control("evil\u{1b}]0;owned\u{7}\u{1b}[2J"),
            "evil\\u{1b}]0;owned\\u{7}\\u{1b}[2J"
        );
        assert_eq!(
            escape_control("a\nb\tc\u{7f}\u{9b}"),
            "a\\u{a}b\\u{9}c\\u{7f}\\u{9b}"
        );
        assert_eq!(escape_control("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape_control("Mäuschen ✓"), "Mäuschen ✓");
    }

    #[test]
    fn a_broken_pipe_is_the_quiet_case_and_names_the_stream_otherwise() {
        let e = WriteError {
            stream: Stream::Stdout,
            source: io::Error::from(io::ErrorKind::BrokenPipe),
        };
        assert!(e.is_broken_pipe());
        let e = WriteError {
            stream: Stream::Stdout,
            source: io::Error::from_raw_os_error(28),
        };
        assert!(!e.is_broken_pipe());
        assert!(
            e.to_string()
                .starts_with("cannot write to stdout: No space left on device"),
            "{e}"
        );
    }
}
