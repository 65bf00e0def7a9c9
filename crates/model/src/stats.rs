//! HAProxy's own listeners for observers: the stats page, the Prometheus exporter and
//! the health check.

use std::fmt;

/// The stats page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsPage {
    /// Port on the bind address.
    pub port: u16,
    /// Basic authentication, when required.
    pub auth: Option<StatsAuth>,
    /// Served over TLS with this certificate (`stats-ssl-cert`); `None` is plain HTTP.
    pub cert: Option<crate::TlsCert>,
    /// Every connection starts with a PROXY protocol header.
    pub accept_proxy: bool,
}

/// A user and password for the stats page, validated to print as one single-quoted word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsAuth(String);

impl StatsAuth {
    /// Parses `user:password`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some((user, password)) = text.split_once(':') else {
            return Err("expected user:password".to_owned());
        };
        let user_ok = !user.is_empty()
            && user.len() <= 64
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !user_ok {
            return Err(format!(
                "the user '{}' is not 1 to 64 letters, digits, '.', '_' or '-'",
                user.escape_debug()
            ));
        }
        // The password is kept out of messages: they reach logs and status.
        let password_ok = !password.is_empty()
            && password.len() <= 128
            && password
                .bytes()
                .all(|b| b.is_ascii_graphic() && !matches!(b, b'\'' | b'\\'));
        if !password_ok {
            return Err(
                "the password is not 1 to 128 printable ASCII characters without spaces, quotes ' or backslashes"
                    .to_owned(),
            );
        }
        Ok(Self(text.to_owned()))
    }

    /// `user:password`, as HAProxy reads it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StatsAuth {
    /// The user alone: the password is never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let user = self.0.split_once(':').map_or("", |(user, _)| user);
        write!(f, "{user}:***")
    }
}

/// HAProxy's listeners for observers; each is off when `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Observers {
    /// The stats page.
    pub stats: Option<StatsPage>,
    /// Port of HAProxy's Prometheus exporter (`/metrics`).
    pub prometheus_port: Option<u16>,
    /// Port where HAProxy answers `/healthz` itself.
    pub healthz_port: Option<u16>,
}

#[cfg(test)]
mod tests {
    use super::StatsAuth;

    #[test]
    fn stats_auth_is_a_plain_user_and_a_quotable_password() {
        let auth = StatsAuth::parse("admin:s3cr#t$x\"y").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(auth.as_str(), "admin:s3cr#t$x\"y");
        assert_eq!(auth.to_string(), "admin:***");
        for bad in [
            "admin",
            ":pw",
            "ad min:pw",
            "admin:",
            "admin:p w",
            "admin:p'w",
            "admin:p\\w",
            "admin:p\nw",
        ] {
            assert!(StatsAuth::parse(bad).is_err(), "{bad:?}");
        }
        let message = StatsAuth::parse("admin:top secret").unwrap_err();
        assert!(!message.contains("secret"), "{message}");
    }
}
