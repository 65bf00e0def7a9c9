//! Cookie affinity (sticky sessions): the backend's `cookie` line and the key HAProxy
//! hashes each server's address with to derive its cookie.

use std::fmt;

use crate::{DnsName, HaproxyDuration, Word};

/// How HAProxy carries the server's identity in the cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CookieStrategy {
    /// HAProxy sets a cookie of its own.
    #[default]
    Insert,
    /// HAProxy prefixes the application's cookie with the server's value.
    Prefix,
    /// HAProxy rewrites the application's cookie to the server's value.
    Rewrite,
}

impl CookieStrategy {
    /// As HAProxy spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CookieStrategy::Insert => "insert",
            CookieStrategy::Prefix => "prefix",
            CookieStrategy::Rewrite => "rewrite",
        }
    }
}

/// A cookie attribute value (`attr <value>`), validated on creation: letters, digits and
/// `=-_.:/`, so it is one word of a configuration line and never ends the attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieAttr(String);

impl CookieAttr {
    /// `SameSite=None`: the cookie goes with cross-site requests too.
    pub fn same_site_none() -> Self {
        Self("SameSite=None".to_owned())
    }

    /// Parses an attribute of at most 128 characters.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = !text.is_empty()
            && text.len() <= 128
            && text.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'=' | b'-' | b'_' | b'.' | b':' | b'/')
            });
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "'{}' is not a cookie attribute of letters, digits and '=-_.:/'",
                text.escape_debug()
            ))
        }
    }
}

impl fmt::Display for CookieAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A cookie domain (`domain <name>`): a DNS name with at least one embedded dot, which
/// RFC 6265 needs and HAProxy warns about otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieDomain(DnsName);

impl CookieDomain {
    /// Parses a domain such as `example.com`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let name = DnsName::parse(text)?;
        if text.contains('.') {
            Ok(Self(name))
        } else {
            Err(format!(
                "'{}' has no embedded dot; browsers refuse such a cookie domain",
                text.escape_debug()
            ))
        }
    }
}

impl fmt::Display for CookieDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A cookie lifetime (`maxidle`, `maxlife`): HAProxy counts them in whole seconds, at
/// least one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieLifetime(u64);

impl CookieLifetime {
    /// Parses a duration of at least one second, such as `30m`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let seconds = HaproxyDuration::parse(text)?.to_std().as_secs();
        if seconds == 0 {
            return Err(format!(
                "'{}' is shorter than one second",
                text.escape_debug()
            ));
        }
        Ok(Self(seconds))
    }
}

/// An option of the `cookie` line, besides the strategy and `dynamic`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CookieKeyword {
    /// `indirect`: a client holding a valid cookie is not sent it again.
    Indirect,
    /// `nocache`: responses setting the cookie are marked uncacheable.
    NoCache,
    /// `postonly`: the cookie is set only on POST responses.
    PostOnly,
    /// `preserve`: a cookie the server set is left alone.
    Preserve,
    /// `httponly`.
    HttpOnly,
    /// `secure`.
    Secure,
    /// `domain <name>`.
    Domain(CookieDomain),
    /// `maxidle <seconds>`.
    MaxIdle(CookieLifetime),
    /// `maxlife <seconds>`.
    MaxLife(CookieLifetime),
    /// `attr <value>`.
    Attr(CookieAttr),
}

impl fmt::Display for CookieKeyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CookieKeyword::Indirect => f.write_str("indirect"),
            CookieKeyword::NoCache => f.write_str("nocache"),
            CookieKeyword::PostOnly => f.write_str("postonly"),
            CookieKeyword::Preserve => f.write_str("preserve"),
            CookieKeyword::HttpOnly => f.write_str("httponly"),
            CookieKeyword::Secure => f.write_str("secure"),
            CookieKeyword::Domain(domain) => write!(f, "domain {domain}"),
            CookieKeyword::MaxIdle(CookieLifetime(seconds)) => write!(f, "maxidle {seconds}s"),
            CookieKeyword::MaxLife(CookieLifetime(seconds)) => write!(f, "maxlife {seconds}s"),
            CookieKeyword::Attr(value) => write!(f, "attr {value}"),
        }
    }
}

/// The secret HAProxy hashes with a server's address and port into its cookie
/// (`dynamic-cookie-key`), validated on creation: printable ASCII without quotes or `\`,
/// written between single quotes, where HAProxy interprets nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieKey(String);

impl CookieKey {
    /// Parses a key of 1 to 256 characters.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = !text.is_empty()
            && text.len() <= 256
            && text
                .bytes()
                .all(|b| (b' '..=b'~').contains(&b) && !matches!(b, b'\'' | b'"' | b'\\'));
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err("the key must be 1 to 256 printable ASCII characters without quotes or '\\'".into())
        }
    }
}

impl fmt::Display for CookieKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'", self.0)
    }
}

/// How a server's cookie value is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CookieValue {
    /// HAProxy hashes the key with the server's address and port: a server added at
    /// runtime gets the same value a reload would give it.
    Dynamic(CookieKey),
    /// The server's name, written on each server line: `add server` cannot set it.
    ServerName,
}

/// Sticky sessions by cookie, with options HAProxy accepts together (see [`Self::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieAffinity {
    name: Word,
    strategy: CookieStrategy,
    keywords: Vec<CookieKeyword>,
    value: CookieValue,
}

impl CookieAffinity {
    /// Combines the parts, refusing what HAProxy refuses: `rewrite` with `indirect`, and
    /// `preserve` without `insert` or `indirect`.
    pub fn new(
        name: Word,
        strategy: CookieStrategy,
        keywords: Vec<CookieKeyword>,
        value: CookieValue,
    ) -> Result<Self, String> {
        let has = |keyword: &CookieKeyword| keywords.contains(keyword);
        if strategy == CookieStrategy::Rewrite && has(&CookieKeyword::Indirect) {
            return Err("the 'rewrite' strategy cannot be combined with 'indirect'".into());
        }
        if has(&CookieKeyword::Preserve)
            && strategy != CookieStrategy::Insert
            && !has(&CookieKeyword::Indirect)
        {
            return Err("'preserve' needs the 'insert' strategy or 'indirect'".into());
        }
        Ok(Self {
            name,
            strategy,
            keywords,
            value,
        })
    }

    /// The cookie's name.
    pub fn name(&self) -> &Word {
        &self.name
    }

    /// How the server's identity is carried.
    pub fn strategy(&self) -> CookieStrategy {
        self.strategy
    }

    /// The other options, in order.
    pub fn keywords(&self) -> &[CookieKeyword] {
        &self.keywords
    }

    /// How a server's value is chosen.
    pub fn value(&self) -> &CookieValue {
        &self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str) -> Word {
        Word::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn combinations_haproxy_refuses_are_refused() {
        let dynamic = || CookieValue::ServerName;
        assert!(
            CookieAffinity::new(
                word("s"),
                CookieStrategy::Rewrite,
                vec![CookieKeyword::Indirect],
                dynamic()
            )
            .is_err()
        );
        assert!(
            CookieAffinity::new(
                word("s"),
                CookieStrategy::Prefix,
                vec![CookieKeyword::Preserve],
                dynamic()
            )
            .is_err()
        );
        assert!(
            CookieAffinity::new(
                word("s"),
                CookieStrategy::Prefix,
                vec![CookieKeyword::Preserve, CookieKeyword::Indirect],
                dynamic()
            )
            .is_ok()
        );
    }

    #[test]
    fn values_that_would_break_a_line_are_refused() {
        assert!(CookieKey::parse("s3cr3t key$#").is_ok_and(|k| k.to_string() == "'s3cr3t key$#'"));
        for bad in ["", "a'b", "a\"b", "a\\b", "a\nb", "é"] {
            assert!(CookieKey::parse(bad).is_err(), "{bad:?}");
        }
        assert!(CookieAttr::parse("SameSite=Strict").is_ok());
        for bad in ["", "a b", "a;b", "a#b", "a\"b"] {
            assert!(CookieAttr::parse(bad).is_err(), "{bad:?}");
        }
        assert!(CookieDomain::parse("example.com").is_ok());
        assert!(CookieDomain::parse("localhost").is_err());
        assert_eq!(
            CookieLifetime::parse("2m").map(|l| CookieKeyword::MaxIdle(l).to_string()),
            Ok("maxidle 120s".into())
        );
        assert!(CookieLifetime::parse("500ms").is_err());
    }
}
