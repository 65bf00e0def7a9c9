//! Keys of a backend's active health checks.

use std::net::IpAddr;

use model::{CheckUri, HaproxyDuration};

use super::parse::{parse_duration, parse_optional_port};
use super::{Applied, Key, Scope};

/// `health-check-interval`.
pub static HEALTH_CHECK_INTERVAL: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "health-check-interval",
    scope: Scope::Backend,
    default: "2s",
    accepted_values: "a duration from `1ms` to `2147483647ms`, such as `500ms`, `2s` or `1m` (a bare number counts milliseconds)",
    parse: parse_check_interval,
    doc: "Time between two health checks of each server. Every server is checked (a TCP connect, or the request of `health-check-uri`); one that fails `health-check-fall-count` checks in a row gets no requests until it passes `health-check-rise-count`.",
    applied: Applied::Reload,
    differs: "",
};
/// `backend-check-interval`, haproxy-ingress's deprecated name of `health-check-interval`.
pub static BACKEND_CHECK_INTERVAL: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "backend-check-interval",
    scope: Scope::Backend,
    default: "2s",
    accepted_values: "a duration from `1ms` to `2147483647ms`, such as `500ms`, `2s` or `1m` (a bare number counts milliseconds)",
    parse: parse_check_interval,
    doc: "Deprecated name of `health-check-interval`, read where `health-check-interval` is not set.",
    applied: Applied::Reload,
    differs: "",
};
/// `health-check-rise-count`.
pub static HEALTH_CHECK_RISE_COUNT: Key<Option<u32>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "health-check-rise-count",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a whole number from `1` to `1000`; empty for HAProxy's 2",
    parse: parse_count,
    doc: "Successful checks in a row before a server is considered up.",
    applied: Applied::Reload,
    differs: "",
};
/// `health-check-fall-count`.
pub static HEALTH_CHECK_FALL_COUNT: Key<Option<u32>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "health-check-fall-count",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a whole number from `1` to `1000`; empty for HAProxy's 3",
    parse: parse_count,
    doc: "Failed checks in a row before a server is considered down.",
    applied: Applied::Reload,
    differs: "",
};
/// `health-check-port`.
pub static HEALTH_CHECK_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "health-check-port",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a port from `1` to `65535`; empty for the server's port",
    parse: parse_optional_port,
    doc: "The port checked instead of the server's.",
    applied: Applied::Reload,
    differs: "",
};
/// `health-check-addr`.
pub static HEALTH_CHECK_ADDR: Key<Option<IpAddr>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "health-check-addr",
    scope: Scope::Backend,
    default: "",
    accepted_values: "an IPv4 or IPv6 address such as `10.0.0.1`; empty for the server's address",
    parse: parse_address,
    doc: "The address checked instead of the server's.",
    applied: Applied::Reload,
    differs: "",
};
/// `health-check-uri`.
pub static HEALTH_CHECK_URI: Key<Option<CheckUri>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "health-check-uri",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a request path such as `/healthz`; empty for a TCP connect check",
    parse: parse_uri,
    doc: "Checks with an HTTP `OPTIONS` request of this path (HAProxy's `option httpchk <uri>`), which must answer 2xx or 3xx, instead of a TCP connect. An HTTP/2 backend is checked in HTTP/2; one spoken to over TLS (`backend-protocol: h2-ssl`, `grpcs`) is checked by its TLS handshake instead, since HAProxy 2.6's HTTP/2 checks over TLS never complete (every server would be marked down).",
    applied: Applied::Reload,
    differs: "",
};

fn parse_check_interval(text: &str) -> Result<HaproxyDuration, String> {
    let interval = parse_duration(text)?;
    if interval.to_std().is_zero() {
        return Err("a check interval must be longer than 0".to_owned());
    }
    Ok(interval)
}

fn parse_count(text: &str) -> Result<Option<u32>, String> {
    match text.trim() {
        "" => Ok(None),
        number => match number.parse::<u32>() {
            Ok(n) if (1..=1000).contains(&n) => Ok(Some(n)),
            _ => Err(format!(
                "'{}' is not a whole number from 1 to 1000",
                number.escape_debug()
            )),
        },
    }
}

fn parse_address(text: &str) -> Result<Option<IpAddr>, String> {
    match text.trim() {
        "" => Ok(None),
        address => address
            .parse()
            .map(Some)
            .map_err(|_| format!("'{}' is not an IP address", address.escape_debug())),
    }
}

fn parse_uri(text: &str) -> Result<Option<CheckUri>, String> {
    match text.trim() {
        "" => Ok(None),
        uri => CheckUri::parse(uri).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_check_every_two_seconds_with_haproxy_s_counts() {
        assert_eq!(HEALTH_CHECK_INTERVAL.default_value().as_str(), "2s");
        assert_eq!(HEALTH_CHECK_RISE_COUNT.default_value(), None);
        assert_eq!(HEALTH_CHECK_FALL_COUNT.default_value(), None);
        assert_eq!(HEALTH_CHECK_PORT.default_value(), None);
        assert_eq!(HEALTH_CHECK_ADDR.default_value(), None);
        assert_eq!(HEALTH_CHECK_URI.default_value(), None);
    }

    #[test]
    fn values_are_checked_with_a_reason() {
        assert_eq!((HEALTH_CHECK_RISE_COUNT.parse)("5"), Ok(Some(5)));
        assert_eq!(
            (HEALTH_CHECK_FALL_COUNT.parse)("0"),
            Err("'0' is not a whole number from 1 to 1000".into())
        );
        assert_eq!((HEALTH_CHECK_PORT.parse)("8081"), Ok(Some(8081)));
        assert_eq!(
            (HEALTH_CHECK_PORT.parse)("70000"),
            Err("'70000' is not a port from 1 to 65535".into())
        );
        assert_eq!(
            (HEALTH_CHECK_ADDR.parse)("::1"),
            Ok(Some("::1".parse().unwrap_or_else(|_| unreachable!())))
        );
        assert_eq!(
            (HEALTH_CHECK_ADDR.parse)("db.local"),
            Err("'db.local' is not an IP address".into())
        );
        assert!((HEALTH_CHECK_URI.parse)("/healthz").is_ok_and(|u| u.is_some()));
        assert!((HEALTH_CHECK_URI.parse)("/x HTTP/1.1\r\nHost: y").is_err());
        assert_eq!(
            (HEALTH_CHECK_INTERVAL.parse)("0"),
            Err("a check interval must be longer than 0".into())
        );
        assert_eq!(
            (HEALTH_CHECK_INTERVAL.parse)("500ms").map(|d| d.to_std().as_millis()),
            Ok(500)
        );
    }
}
