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
