//! Short forms of user-written text for error messages, so that a hostile or mistaken value
//! (a 5,000-key chord, a 300-digit number) gives a short error instead of echoing itself.

/// The most characters of a user-written value an error message repeats.
pub const MAX_SHOWN_CHARS: usize = 60;

/// `s` as written when it has at most [`MAX_SHOWN_CHARS`] characters, else its first
/// characters, `…` and how many characters it has: `Super+Super+…(29999 characters)`.
pub fn clip(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_SHOWN_CHARS {
        return s.to_owned();
    }
    let head: String = s.chars().take(MAX_SHOWN_CHARS - 20).collect();
    format!("{head}…({n} characters)")
}

/// `{:?}` of [`clip`]`(s)`: a quoted, escaped, clipped string.
pub fn quoted(s: &str) -> String {
    format!("{:?}", clip(s))
}

/// A number as written when it is short, else in scientific notation (`1e308`, not 309
/// digits): `written` is the TOML spelling, `value` its value as `f64`.
pub fn number(written: &str, value: f64) -> String {
    if written.chars().count() <= 24 {
        written.to_owned()
    } else if value.is_finite() {
        format!("{value:e}")
    } else {
        clip(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_clipped_and_say_how_long_they_were() {
        assert_eq!(clip("Super+Page_Up"), "Super+Page_Up");
        let long = "Super+".repeat(5000);
        let c = clip(&long);
        assert!(c.chars().count() < 80, "{c}");
        assert!(c.ends_with("…(30000 characters)"), "{c}");
    }

    #[test]
    fn huge_numbers_are_shown_in_scientific_notation() {
        assert_eq!(number("5.0", 5.0), "5.0");
        let digits = format!("1{}", "0".repeat(308));
        assert_eq!(number(&digits, 1e308), "1e308");
        assert_eq!(number("1e308", 1e308), "1e308");
    }
}
