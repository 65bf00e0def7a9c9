//! Keys of sticky sessions: cookie affinity, the cookie's name, strategy and options,
//! and the secret its values are derived from.

use model::{
    CookieAttr, CookieDomain, CookieKey, CookieKeyword, CookieLifetime, CookieStrategy, Word,
};

use super::parse::parse_bool;
use super::{Applied, Key, Scope};

/// `affinity`.
pub static AFFINITY: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "affinity",
    scope: Scope::Backend,
    default: "",
    accepted_values: "`cookie`, or empty for none",
    parse: parse_affinity,
    doc: "`cookie` keeps each client on the server it first reached, by a cookie naming the server (see the `session-cookie-*` keys). When that server is gone or down, the client is balanced to another one and its cookie updated.",
    applied: Applied::Reload,
    differs: "",
};
/// `session-cookie-name`.
pub static SESSION_COOKIE_NAME: Key<Word> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-name",
    scope: Scope::Backend,
    default: "INGRESSCOOKIE",
    accepted_values: "a name of letters, digits, `_`, `-` and `.`, at most 64 characters, such as `INGRESSCOOKIE`",
    parse: Word::parse,
    doc: "The name of the affinity cookie.",
    applied: Applied::Reload,
    differs: "",
};
/// `session-cookie-strategy`.
pub static SESSION_COOKIE_STRATEGY: Key<CookieStrategy> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-strategy",
    scope: Scope::Backend,
    default: "insert",
    accepted_values: "`insert`, `prefix` or `rewrite`",
    parse: parse_strategy,
    doc: "`insert`: HAProxy sets a cookie of its own. `prefix`: HAProxy prefixes the application's cookie of that name with the server's value (and strips it from requests). `rewrite`: HAProxy replaces the value of the application's cookie of that name.",
    applied: Applied::Reload,
    differs: "",
};
/// `session-cookie-keywords`.
pub static SESSION_COOKIE_KEYWORDS: Key<Vec<CookieKeyword>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-keywords",
    scope: Scope::Backend,
    default: "",
    accepted_values: "options of HAProxy's cookie line, separated by spaces: `indirect`, `nocache`, `postonly`, `preserve`, `httponly`, `secure`, `domain example.com`, `maxidle 30m`, `maxlife 8h` (whole seconds, at least 1s), `attr SameSite=Lax` (letters, digits and =-_.:/), such as `indirect nocache httponly secure`; empty for the strategy's default",
    parse: parse_keywords,
    doc: "Options of the affinity cookie. Empty under the `insert` strategy means `indirect nocache httponly`; under the other strategies, none. `rewrite` cannot be combined with `indirect`, and `preserve` needs `insert` or `indirect`: such a value is reported and the conflicting option left out.",
    applied: Applied::Reload,
    differs: "Only HAProxy's `cookie` options listed here are accepted, so that no value can add configuration; `dynamic` and the strategy have keys of their own.",
};
/// `session-cookie-dynamic`.
pub static SESSION_COOKIE_DYNAMIC: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-dynamic",
    scope: Scope::Backend,
    default: "true",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "`true`: each server's cookie value is a hash of its address, port and `cookie-key`, computed by HAProxy, so a server added without a reload gets the value a reload would give it. `false`: the value is the server's name (its address and port); HAProxy 2.6 cannot set it on a server added at runtime, so endpoints added to such a backend are applied by a reload.",
    applied: Applied::Reload,
    differs: "With `false`, new endpoints cost a reload: HAProxy 2.6's `add server` takes no `cookie`.",
};
/// `session-cookie-same-site`.
pub static SESSION_COOKIE_SAME_SITE: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-same-site",
    scope: Scope::Backend,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "`true` adds `SameSite=None; Secure` to the affinity cookie, so browsers send it on cross-site requests too (over HTTPS only).",
    applied: Applied::Reload,
    differs: "",
};
/// `session-cookie-domain`.
pub static SESSION_COOKIE_DOMAIN: Key<Option<CookieDomain>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-domain",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a DNS name with at least one dot, such as `example.com`, or empty",
    parse: parse_domain,
    doc: "The domain the affinity cookie is sent to, with its subdomains; the Ingress's hosts must be in it, or browsers refuse the cookie. Empty: the request's host only.",
    applied: Applied::Reload,
    differs: "",
};
/// `session-cookie-preserve`.
pub static SESSION_COOKIE_PRESERVE: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-preserve",
    scope: Scope::Backend,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "`true` leaves alone an affinity cookie the server set itself (HAProxy's `preserve`), so the application can end or move a session. Server names follow the endpoint, so a server keeps its cookie value across updates either way.",
    applied: Applied::Reload,
    differs: "",
};
/// `session-cookie-value-strategy`.
pub static SESSION_COOKIE_VALUE_STRATEGY: Key<()> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "session-cookie-value-strategy",
    scope: Scope::Backend,
    default: "server-name",
    accepted_values: "`server-name`",
    parse: parse_cookie_value_strategy,
    doc: "What a server's affinity cookie holds when `session-cookie-dynamic` is `false`: its name, which portcullis derives from the endpoint (`<address>_<port>`), so it is stable across updates and restarts.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also offers `pod-uid` (the cookie is the Pod's UID); portcullis does not read Pods, and reports it (the server name is used).",
};
/// `cookie-key`.
pub static COOKIE_KEY: Key<CookieKey> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "cookie-key",
    scope: Scope::Global,
    default: "Ingress",
    accepted_values: "1 to 256 printable ASCII characters without quotes or backslashes, such as `my-secret`",
    parse: CookieKey::parse,
    doc: "The secret hashed with a server's address and port into its affinity cookie value under `session-cookie-dynamic`. Every HAProxy with the same key gives a server the same value.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_affinity(text: &str) -> Result<bool, String> {
    match text.trim() {
        "" => Ok(false),
        "cookie" => Ok(true),
        other => Err(format!(
            "'{}' is not an affinity type: the only one is cookie",
            other.escape_debug()
        )),
    }
}

fn parse_strategy(text: &str) -> Result<CookieStrategy, String> {
    match text.trim() {
        "insert" => Ok(CookieStrategy::Insert),
        "prefix" => Ok(CookieStrategy::Prefix),
        "rewrite" => Ok(CookieStrategy::Rewrite),
        other => Err(format!(
            "'{}' is not insert, prefix or rewrite",
            other.escape_debug()
        )),
    }
}

fn parse_domain(text: &str) -> Result<Option<CookieDomain>, String> {
    match text.trim() {
        "" => Ok(None),
        domain => CookieDomain::parse(domain).map(Some),
    }
}

/// At most this many words, so the `cookie` line stays well within HAProxy's 64.
const MAX_KEYWORD_WORDS: usize = 24;

fn parse_keywords(text: &str) -> Result<Vec<CookieKeyword>, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() > MAX_KEYWORD_WORDS {
        return Err(format!("more than {MAX_KEYWORD_WORDS} words"));
    }
    let mut words = words.into_iter();
    let mut keywords = Vec::new();
    while let Some(word) = words.next() {
        let mut argument = |parse: fn(&str) -> Result<CookieKeyword, String>| {
            words
                .next()
                .ok_or_else(|| format!("'{word}' needs a value"))
                .and_then(parse)
        };
        let keyword = match word {
            "indirect" => CookieKeyword::Indirect,
            "nocache" => CookieKeyword::NoCache,
            "postonly" => CookieKeyword::PostOnly,
            "preserve" => CookieKeyword::Preserve,
            "httponly" => CookieKeyword::HttpOnly,
            "secure" => CookieKeyword::Secure,
            "domain" => argument(|v| CookieDomain::parse(v).map(CookieKeyword::Domain))?,
            "maxidle" => argument(|v| CookieLifetime::parse(v).map(CookieKeyword::MaxIdle))?,
            "maxlife" => argument(|v| CookieLifetime::parse(v).map(CookieKeyword::MaxLife))?,
            "attr" => argument(|v| CookieAttr::parse(v).map(CookieKeyword::Attr))?,
            "insert" | "prefix" | "rewrite" => {
                return Err(format!(
                    "'{word}' is a strategy: set it with session-cookie-strategy"
                ));
            }
            "dynamic" => {
                return Err("'dynamic' is set with session-cookie-dynamic".into());
            }
            other => {
                return Err(format!(
                    "'{}' is not a cookie option (indirect, nocache, postonly, preserve, httponly, secure, domain, maxidle, maxlife, attr)",
                    other.escape_debug()
                ));
            }
        };
        keywords.push(keyword);
    }
    Ok(keywords)
}

fn parse_cookie_value_strategy(text: &str) -> Result<(), String> {
    match text.trim() {
        "server-name" => Ok(()),
        "pod-uid" => Err(
            "pod-uid is not supported: portcullis does not read Pods; the server name is the cookie value"
                .to_owned(),
        ),
        other => Err(format!(
            "'{}' is not server-name",
            other.escape_debug()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_is_cookie_or_nothing() {
        assert!(!AFFINITY.default_value());
        assert_eq!((AFFINITY.parse)("cookie"), Ok(true));
        assert_eq!(
            (AFFINITY.parse)("ip"),
            Err("'ip' is not an affinity type: the only one is cookie".into())
        );
    }

    #[test]
    fn cookie_name_strategy_and_domain_are_checked() {
        assert_eq!(
            SESSION_COOKIE_NAME.default_value().to_string(),
            "INGRESSCOOKIE"
        );
        assert!((SESSION_COOKIE_NAME.parse)("__Host-sid").is_ok());
        assert!((SESSION_COOKIE_NAME.parse)("a=b; domain").is_err());
        assert_eq!(
            SESSION_COOKIE_STRATEGY.default_value(),
            CookieStrategy::Insert
        );
        assert_eq!(
            (SESSION_COOKIE_STRATEGY.parse)("prefix"),
            Ok(CookieStrategy::Prefix)
        );
        assert_eq!(
            (SESSION_COOKIE_STRATEGY.parse)("sticky"),
            Err("'sticky' is not insert, prefix or rewrite".into())
        );
        assert_eq!(SESSION_COOKIE_DOMAIN.default_value(), None);
        assert!(
            (SESSION_COOKIE_DOMAIN.parse)("Example.com")
                .is_ok_and(|d| d.is_some_and(|d| d.to_string() == "example.com"))
        );
        assert!((SESSION_COOKIE_DOMAIN.parse)("localhost").is_err());
        assert!((SESSION_COOKIE_DOMAIN.parse)("a.com\nlisten x").is_err());
    }

    #[test]
    fn booleans_default_as_haproxy_ingress_s() {
        assert!(SESSION_COOKIE_DYNAMIC.default_value());
        assert!(!SESSION_COOKIE_SAME_SITE.default_value());
        assert!(!SESSION_COOKIE_PRESERVE.default_value());
        assert_eq!(
            (SESSION_COOKIE_PRESERVE.parse)("yes"),
            Err("'yes' is not true or false".into())
        );
    }

    #[test]
    fn keywords_are_haproxy_s_cookie_options_only() {
        assert_eq!(SESSION_COOKIE_KEYWORDS.default_value(), Vec::new());
        let parsed = (SESSION_COOKIE_KEYWORDS.parse)(
            "indirect nocache httponly secure maxidle 30m attr SameSite=Lax domain example.com",
        )
        .map(|k| {
            k.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        });
        assert_eq!(
            parsed,
            Ok("indirect nocache httponly secure maxidle 1800s attr SameSite=Lax domain example.com".into())
        );
        for (bad, why) in [
            (
                "insert",
                "'insert' is a strategy: set it with session-cookie-strategy",
            ),
            ("dynamic", "'dynamic' is set with session-cookie-dynamic"),
            ("maxidle", "'maxidle' needs a value"),
            (
                "attr a;b",
                "'a;b' is not a cookie attribute of letters, digits and '=-_.:/'",
            ),
        ] {
            assert_eq!(
                (SESSION_COOKIE_KEYWORDS.parse)(bad),
                Err(why.into()),
                "{bad}"
            );
        }
        assert!((SESSION_COOKIE_KEYWORDS.parse)("httponly\nlisten evil").is_err());
    }

    #[test]
    fn cookie_key_defaults_to_haproxy_ingress_s_and_refuses_quotes() {
        assert_eq!(COOKIE_KEY.default_value().to_string(), "'Ingress'");
        assert!((COOKIE_KEY.parse)("it's").is_err());
    }

    #[test]
    fn the_cookie_value_is_the_server_name() {
        SESSION_COOKIE_VALUE_STRATEGY.default_value();
        assert_eq!((SESSION_COOKIE_VALUE_STRATEGY.parse)("server-name"), Ok(()));
        assert_eq!(
            (SESSION_COOKIE_VALUE_STRATEGY.parse)("pod-uid"),
            Err("pod-uid is not supported: portcullis does not read Pods; the server name is the cookie value".into())
        );
        assert_eq!(
            (SESSION_COOKIE_VALUE_STRATEGY.parse)("uid"),
            Err("'uid' is not server-name".into())
        );
    }
}
