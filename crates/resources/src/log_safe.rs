//! Showing text that came from files or the cluster in a log line, without letting it start a new line.

use std::fmt;

/// Displays text with control characters (newlines included), Unicode line and paragraph
/// separators and bidirectional-text controls escaped as `\n`, `\u{2028}`..., so a value
/// read from a manifest cannot forge or reorder a log line. Other characters, quotes and
/// backslashes are shown as they are, so an already-escaped message is not escaped twice.
#[derive(Debug, Clone, Copy)]
pub struct LogSafe<'a>(pub &'a str);

impl fmt::Display for LogSafe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(needs_escaping) {
            f.write_str(&rest[..at])?;
            let mut chars = rest[at..].chars();
            if let Some(c) = chars.next() {
                write!(f, "{}", c.escape_default())?;
            }
            rest = chars.as_str();
        }
        f.write_str(rest)
    }
}

fn needs_escaping(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // Line and paragraph separators: some log viewers break lines there.
            '\u{2028}' | '\u{2029}'
            // Bidirectional controls: they reorder what a reader sees.
            | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_could_break_or_reorder_a_line_and_nothing_else() {
        let shown = LogSafe("a\nb\r\tc\u{1b}[31m\u{85}\u{2028}\u{202e}d 'é' \"x\" \\n").to_string();
        assert_eq!(
            shown,
            "a\\nb\\r\\tc\\u{1b}[31m\\u{85}\\u{2028}\\u{202e}d 'é' \"x\" \\n"
        );
        assert!(!shown.contains(['\n', '\r']));
    }
}
