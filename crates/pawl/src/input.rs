//! Reading an input with a stated size limit: at most `limit + 1` bytes are read, so an
//! endless source (`/dev/zero`, `/dev/urandom`, a pipe that never ends) fails at once with
//! "larger than the N limit" naming the path, instead of growing without bound.

use std::io::Read;
use std::path::Path;

use anyhow::Context;

/// Reads everything from `source` (named `path` in errors), refusing more than `limit`
/// bytes: the error is `PATH is larger than the SIZE limit` (`size` is `limit` in words,
/// e.g. "1 MiB"). Reads at most `limit + 1` bytes.
pub fn read_limited(
    source: impl Read,
    path: &Path,
    limit: usize,
    size: &str,
) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    source
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() > limit {
        anyhow::bail!(
            "{} is larger than the {size} limit ({limit} bytes)",
            path.display()
        );
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_past_the_limit_is_refused_naming_the_path_and_the_limit() {
        let e = read_limited(&[0u8; 11][..], Path::new("big.txt"), 10, "10 B").unwrap_err();
        assert_eq!(
            e.to_string(),
            "big.txt is larger than the 10 B limit (10 bytes)"
        );
        assert_eq!(
            read_limited(&[7u8; 10][..], Path::new("ok"), 10, "10 B").unwrap(),
            [7u8; 10]
        );
    }

    #[test]
    fn an_endless_input_is_refused_after_reading_one_byte_past_the_limit() {
        let endless = std::io::repeat(0);
        let e = read_limited(endless, Path::new("/dev/zero"), 1 << 20, "1 MiB").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/dev/zero is larger than the 1 MiB limit"),
            "{e}"
        );
    }
}
