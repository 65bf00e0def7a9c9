//! Values written into HAProxy regular expressions: host names and safe paths one way
//! everywhere, any path inside a single-quoted argument.

/// `text` as a regular expression that matches it literally: each `.` escaped as `\.`.
///
/// HAProxy's configuration parser keeps `\.` as written, quoted or not, so the same text
/// works in an unquoted ACL pattern, a quoted `replace-path` and a `regsub` argument.
/// The dot is the only regex metacharacter a host name, or a Gateway API path (letters,
/// digits and `/-_.~`), can hold.
pub(crate) fn regex_literal(text: &str) -> String {
    text.replace('.', "\\.")
}

/// `text` as a regular expression that matches it literally, inside a single-quoted
/// argument: every PCRE metacharacter escaped with a backslash (kept as written there),
/// and a single quote written as `'\''` (the quote closed, an escaped quote, the quote
/// opened again). For paths, which may hold `(`, `+`, `*`, `$` or `'`.
pub(crate) fn quoted_regex_literal(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '^' | '$' => {
                quoted.push('\\');
                quoted.push(c);
            }
            '\'' => quoted.push_str("'\\''"),
            c => quoted.push(c),
        }
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::{quoted_regex_literal, regex_literal};

    #[test]
    fn quoted_paths_escape_every_metacharacter_and_the_quote() {
        assert_eq!(quoted_regex_literal("/api/v1.2"), "/api/v1\\.2");
        assert_eq!(
            quoted_regex_literal("/c++(x)$'s"),
            "/c\\+\\+\\(x\\)\\$'\\''s"
        );
    }

    #[test]
    fn only_dots_are_escaped() {
        assert_eq!(regex_literal("a.b-c.test"), "a\\.b-c\\.test");
        assert_eq!(regex_literal("/api/v1"), "/api/v1");
    }
}
