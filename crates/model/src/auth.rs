//! Authentication of a path: HTTP Basic against a userlist, and an external service
//! asked before the request goes on.
//!
//! Every value is checked by its constructor for the place it is printed in (a
//! single-quoted word of a configuration line), so the renderer prints it as it is.

use std::sync::Arc;

/// What a path asks of a request before it is served. Both may be set: Basic first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PathAuth {
    /// HTTP Basic authentication.
    pub basic: Option<BasicAuth>,
    /// An external authentication service.
    pub external: Option<ExternalAuth>,
}

/// The status a path answers when its authentication could not be built (a missing or
/// wholly invalid Secret, an unusable `auth-url`): it is never served unauthenticated.
pub const AUTH_UNUSABLE_STATUS: u16 = 403;
/// The status a path answers when its authentication service gives no usable answer in
/// time (refused, timed out, or a 5xx).
pub const AUTH_UNAVAILABLE_STATUS: u16 = 503;

/// HTTP Basic authentication of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BasicAuth {
    /// Users of a userlist; others get 401 with `WWW-Authenticate: Basic realm=...`.
    Users {
        /// The users.
        userlist: Arc<Userlist>,
        /// The realm shown by browsers.
        realm: QuotedWord,
    },
    /// The userlist could not be built: every request is refused.
    Unusable,
}

/// External authentication of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ExternalAuth {
    /// Ask this service.
    Service(Arc<AuthService>),
    /// The service could not be configured: every request is refused.
    Unusable,
}

/// How the external authentication service is asked, and what is done with its answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AuthService {
    /// `http://` or `https://` URL the request goes to.
    pub url: QuotedWord,
    /// `GET`, `HEAD`, `POST`, `PUT`, `DELETE`, or `*` for the client's own method.
    pub method: QuotedWord,
    /// Client request headers copied to the service (comma-separated globs, `-` none).
    pub headers_request: QuotedWord,
    /// Service response headers copied to the backend request on success.
    pub headers_succeed: QuotedWord,
    /// Service response headers copied to the client on failure.
    pub headers_fail: QuotedWord,
    /// Where a refused client is redirected (302), as a log-format string.
    pub signin: Option<QuotedWord>,
    /// How long one attempt may take, in milliseconds (HAProxy 2.6's client makes up to
    /// four).
    pub attempt_timeout_ms: u32,
}

/// A text printed between single quotes: no single quote, no backslash, no control
/// character, not empty, at most 1024 bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QuotedWord(String);

impl QuotedWord {
    /// Checks a text.
    pub fn new(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("is empty".to_owned());
        }
        if text.len() > 1024 {
            return Err("is longer than 1024 bytes".to_owned());
        }
        if let Some(c) = text
            .chars()
            .find(|c| c.is_control() || matches!(c, '\'' | '\\' | '"'))
        {
            return Err(format!("holds the character {c:?}"));
        }
        Ok(Self(text.to_owned()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One user of a userlist.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserEntry {
    /// User name.
    pub name: QuotedWord,
    /// Its password.
    pub password: Password,
}

/// A user's password as a userlist holds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Password {
    /// A crypt(3) hash HAProxy's C library checks.
    Hash(QuotedWord),
    /// A plain-text password (`user::password` in the Secret).
    Plain(QuotedWord),
}

/// The users of one Secret, as a HAProxy `userlist` section.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Userlist {
    /// The Secret's namespace.
    pub namespace: String,
    /// The Secret's name.
    pub secret: String,
    /// The users, in the Secret's order, names unique, at least one.
    pub users: Vec<UserEntry>,
}

impl Userlist {
    /// The section name: `_auth_<xxh3 of namespace/name>`, so no Secret name can break a
    /// line, and two Secrets never share one.
    pub fn section_name(&self) -> String {
        let identity = format!("{}/{}", self.namespace, self.secret);
        format!(
            "_auth_{:016x}",
            xxhash_rust::xxh3::xxh3_64(identity.as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_refuse_what_would_leave_the_quotes() {
        assert!(QuotedWord::new("$6$salt$hash./").is_ok());
        assert_eq!(
            QuotedWord::new("a'b"),
            Err("holds the character '\\''".to_owned())
        );
        assert!(QuotedWord::new("a\nb").is_err());
        assert!(QuotedWord::new("").is_err());
        assert!(QuotedWord::new(&"x".repeat(1025)).is_err());
    }

    #[test]
    fn section_names_differ_by_secret() {
        let list = |namespace: &str, secret: &str| Userlist {
            namespace: namespace.to_owned(),
            secret: secret.to_owned(),
            users: Vec::new(),
        };
        assert_ne!(list("a", "b").section_name(), list("b", "a").section_name());
        assert!(list("a", "b").section_name().starts_with("_auth_"));
    }
}
