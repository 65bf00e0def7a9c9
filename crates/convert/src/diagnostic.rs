//! Problems found while converting: which object, which field, what is wrong.

use std::fmt;

use resources::{LogSafe, ObjectRef};

/// One problem with one object. The object is skipped or defaulted; nothing else is lost.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// The object at fault.
    pub object: ObjectRef,
    /// The field, as a path such as `spec.rules[0].host`.
    pub field: String,
    /// What is wrong and what was done about it.
    pub message: String,
}

/// How many characters of a field or a message a line shows. Messages quote the values
/// they refuse, and a value may be megabytes long: a line shows enough to find it.
const SHOWN_CHARS: usize = 1024;

impl fmt::Display for Diagnostic {
    /// One line, whatever the object held: control characters (newlines included) are
    /// written escaped, so no value from an object can forge a log line or an Event; of a
    /// long field or message, its first [`SHOWN_CHARS`] characters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Messages quote values from objects: no raw newline may reach a log line.
        write!(
            f,
            "{}: {}: {}",
            self.object,
            LogSafe(shortened(&self.field).as_ref()),
            LogSafe(shortened(&self.message).as_ref())
        )
    }
}

/// `text`, or its first [`SHOWN_CHARS`] characters and how long it is.
fn shortened(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => {
            std::borrow::Cow::Owned(format!("{}... ({} bytes in all)", &text[..end], text.len()))
        }
    }
}

/// `text` with every control character escaped (`\n`, `\u{1b}`, ...).
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    let shown = LogSafe(text).to_string();
    if shown == text {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resources::Kind;

    #[test]
    fn no_value_can_start_a_new_log_line() {
        let diagnostic = Diagnostic {
            object: ObjectRef::new(Kind::Ingress, "team\na", "web"),
            field: "metadata.annotations[x\r]".to_owned(),
            message: "'5s\nERROR forged' is not a duration".to_owned(),
        };
        let text = diagnostic.to_string();
        assert!(!text.contains('\n') && !text.contains('\r'), "{text}");
        assert!(text.contains("5s\\nERROR forged"), "{text}");
    }

    #[test]
    fn a_line_shows_enough_of_a_long_value_to_find_it() {
        let host = "é".repeat(5_000_000);
        let diagnostic = Diagnostic {
            object: ObjectRef::new(Kind::Ingress, "team", "web"),
            field: "spec.rules[0].host".to_owned(),
            message: format!("'{host}' is not a valid host name"),
        };
        let text = diagnostic.to_string();
        assert!(text.len() < 4 * SHOWN_CHARS, "{} bytes", text.len());
        assert!(
            text.starts_with("Ingress team/web: spec.rules[0].host: 'ééé"),
            "{text}"
        );
        assert!(text.ends_with("... (10000027 bytes in all)"), "{text}");
        let short = Diagnostic {
            message: "'a' is not a duration".to_owned(),
            ..diagnostic
        };
        assert_eq!(
            short.to_string(),
            "Ingress team/web: spec.rules[0].host: 'a' is not a duration"
        );
    }
}
