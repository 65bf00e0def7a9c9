//! A backend's sticky-session lines: `cookie` and, for values HAProxy derives from the
//! servers' addresses, `dynamic-cookie-key`.

use std::fmt::Write;

use model::{CookieAffinity, CookieValue};

/// Appends the backend section's cookie lines.
pub(crate) fn cookie_lines(text: &mut String, cookie: &CookieAffinity) {
    // Writing to a String cannot fail.
    let _ = write!(
        text,
        "    cookie {} {}",
        cookie.name(),
        cookie.strategy().as_str()
    );
    for keyword in cookie.keywords() {
        let _ = write!(text, " {keyword}");
    }
    match cookie.value() {
        CookieValue::Dynamic(key) => {
            let _ = write!(text, " dynamic\n    dynamic-cookie-key {key}\n");
        }
        CookieValue::ServerName => text.push('\n'),
    }
}
