//! Keys of a backend's per-server limits, queueing and long-lived connections.

use model::HaproxyDuration;

use super::parse::parse_duration;
use super::{Applied, DURATION_VALUES, Key, Scope};

/// `maxconn-server`.
pub static MAXCONN_SERVER: Key<Option<u32>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "maxconn-server",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a whole number up to `1000000`; `0`, a negative number or empty for no limit",
    parse: parse_server_limit,
    doc: "Concurrent connections each server gets; more wait in the server's queue (see `maxqueue-server`, `timeout-queue`).",
    applied: Applied::Reload,
    differs: "",
};
/// `maxqueue-server`.
pub static MAXQUEUE_SERVER: Key<Option<u32>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "maxqueue-server",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a whole number up to `1000000`; `0`, a negative number or empty for no limit",
    parse: parse_server_limit,
    doc: "Connections waiting in each server's queue; more go to another server.",
    applied: Applied::Reload,
    differs: "",
};
/// `slow-start`.
pub static SLOW_START: Key<Option<HaproxyDuration>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "slow-start",
    scope: Scope::Backend,
    default: "",
    accepted_values: "a duration such as `30s`; empty or `0` for none",
    parse: parse_optional_duration,
    doc: "Time a server that comes up (a new endpoint, or one back from a failed health check) takes to reach its full share of requests (HAProxy's `slowstart`).",
    applied: Applied::Reload,
    differs: "haproxy-ingress has no such key.",
};
/// `timeout-queue`.
pub static TIMEOUT_QUEUE: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-queue",
    scope: Scope::Backend,
    default: "5s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time a request waits in a queue for a server before it is answered 503.",
    applied: Applied::Reload,
    differs: "",
};
/// `timeout-tunnel`.
pub static TIMEOUT_TUNNEL: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-tunnel",
    scope: Scope::Backend,
    default: "1h",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time of a tunnel (a WebSocket, a CONNECT) on both sides.",
    applied: Applied::Reload,
    differs: "",
};
/// `timeout-server-fin`.
pub static TIMEOUT_SERVER_FIN: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-server-fin",
    scope: Scope::Backend,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the server side of a half-closed connection.",
    applied: Applied::Reload,
    differs: "",
};

fn parse_server_limit(text: &str) -> Result<Option<u32>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<i64>() {
        Ok(n) if n <= 0 => Ok(None),
        Ok(n) if n <= 1_000_000 => Ok(u32::try_from(n).ok()),
        _ => Err(format!(
            "'{}' is not a whole number up to 1000000",
            text.escape_debug()
        )),
    }
}

fn parse_optional_duration(text: &str) -> Result<Option<HaproxyDuration>, String> {
    match text.trim() {
        "" => Ok(None),
        duration => {
            let duration = parse_duration(duration)?;
            Ok(Some(duration).filter(|d| !d.to_std().is_zero()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_haproxy_ingress_zero_and_negative_mean_none() {
        assert_eq!(MAXCONN_SERVER.default_value(), None);
        assert_eq!((MAXCONN_SERVER.parse)("500"), Ok(Some(500)));
        assert_eq!((MAXQUEUE_SERVER.parse)("-1"), Ok(None));
        assert_eq!((MAXQUEUE_SERVER.parse)("0"), Ok(None));
        assert_eq!(
            (MAXCONN_SERVER.parse)("1e3"),
            Err("'1e3' is not a whole number up to 1000000".into())
        );
        assert_eq!(
            (MAXCONN_SERVER.parse)("2000000"),
            Err("'2000000' is not a whole number up to 1000000".into())
        );
    }

    #[test]
    fn timeouts_default_as_haproxy_ingress_s() {
        assert_eq!(TIMEOUT_QUEUE.default_value().as_str(), "5s");
        assert_eq!(TIMEOUT_TUNNEL.default_value().as_str(), "1h");
        assert_eq!(TIMEOUT_SERVER_FIN.default_value().as_str(), "50s");
        assert!((TIMEOUT_TUNNEL.parse)("1 h").is_err());
        assert_eq!(SLOW_START.default_value(), None);
        assert_eq!((SLOW_START.parse)("0"), Ok(None));
        assert_eq!(
            (SLOW_START.parse)("30s").map(|d| d.map(|d| d.to_std().as_secs())),
            Ok(Some(30))
        );
        assert!((SLOW_START.parse)("soon").is_err());
    }
}
