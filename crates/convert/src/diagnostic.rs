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

impl fmt::Display for Diagnostic {
    /// One line, whatever the object held: control characters (newlines included) are
    /// written escaped, so no value from an object can forge a log line or an Event.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Messages quote values from objects: no raw newline may reach a log line.
        write!(
            f,
            "{}: {}: {}",
            self.object,
            LogSafe(&self.field),
            LogSafe(&self.message)
        )
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
}
