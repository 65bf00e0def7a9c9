//! Values written into HAProxy regular expressions, escaped one way everywhere.

/// `text` as a regular expression that matches it literally: each `.` escaped as `\.`.
///
/// HAProxy's configuration parser keeps `\.` as written, quoted or not, so the same text
/// works in an unquoted ACL pattern, a quoted `replace-path` and a `regsub` argument.
/// The dot is the only regex metacharacter a host name can hold.
pub(crate) fn regex_literal(text: &str) -> String {
    text.replace('.', "\\.")
}

#[cfg(test)]
mod tests {
    use super::regex_literal;

    #[test]
    fn only_dots_are_escaped() {
        assert_eq!(regex_literal("a.b-c.test"), "a\\.b-c\\.test");
        assert_eq!(regex_literal("/api/v1"), "/api/v1");
    }
}
