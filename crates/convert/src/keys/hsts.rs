//! Keys of HTTP Strict Transport Security: the header HTTPS responses carry.

use super::parse::{parse_bool, parse_max_age};
use super::{Applied, Key, Scope};

/// `hsts`.
pub static HSTS: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "hsts",
    scope: Scope::Path,
    default: "true",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Add a `Strict-Transport-Security` header to HTTPS responses (never to plain-HTTP ones).",
    applied: Applied::Reload,
    differs: "",
};
/// `hsts-max-age`.
pub static HSTS_MAX_AGE: Key<u32> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "hsts-max-age",
    scope: Scope::Path,
    default: "15768000",
    accepted_values: "a whole number of seconds from `0` to `2147483647`",
    parse: parse_max_age,
    doc: "How long, in seconds, a browser keeps to HTTPS (`max-age`).",
    applied: Applied::Reload,
    differs: "",
};
/// `hsts-include-subdomains`.
pub static HSTS_INCLUDE_SUBDOMAINS: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "hsts-include-subdomains",
    scope: Scope::Path,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "The HSTS policy covers subdomains too (`includeSubDomains`).",
    applied: Applied::Reload,
    differs: "",
};
/// `hsts-preload`.
pub static HSTS_PRELOAD: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "hsts-preload",
    scope: Scope::Path,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Ask browsers to preload the HSTS policy (`preload`).",
    applied: Applied::Reload,
    differs: "",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsts_defaults_as_haproxy_ingress() {
        assert!(HSTS.default_value());
        assert_eq!(HSTS_MAX_AGE.default_value(), 15_768_000);
        assert!(!HSTS_INCLUDE_SUBDOMAINS.default_value());
        assert!(!HSTS_PRELOAD.default_value());
        assert_eq!((HSTS_MAX_AGE.parse)("60"), Ok(60));
        assert_eq!(
            (HSTS_MAX_AGE.parse)("-1"),
            Err("'-1' is not a whole number of seconds from 0 to 2147483647".into())
        );
        assert_eq!((HSTS_PRELOAD.parse)("1"), Ok(true));
        assert_eq!((HSTS_PRELOAD.parse)("False"), Ok(false));
        assert_eq!(
            (HSTS_PRELOAD.parse)("yes"),
            Err("'yes' is not true or false".into())
        );
    }
}
