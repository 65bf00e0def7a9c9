//! Keys of the whole proxy: client-side timeouts and capacity.

use model::HaproxyDuration;

use super::parse::{parse_duration, parse_max_connections};
use super::{Applied, DURATION_VALUES, Key, Scope};

/// `timeout-client`.
pub static TIMEOUT_CLIENT: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-client",
    scope: Scope::Global,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the client side.",
    applied: Applied::Reload,
    differs: "",
};
/// `timeout-http-request`.
pub static TIMEOUT_HTTP_REQUEST: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-http-request",
    scope: Scope::Global,
    default: "5s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time to receive a complete HTTP request.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also takes it as an annotation, writing it in the backend's section, where HAProxy does not use it (a client-side timeout is the frontend's); portcullis reports such an annotation.",
};
/// `timeout-keep-alive`.
pub static TIMEOUT_KEEP_ALIVE: Key<HaproxyDuration> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "timeout-keep-alive",
    scope: Scope::Global,
    default: "1m",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time to wait for a new request on a kept-alive connection.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also takes it as an annotation, writing it in the backend's section, where HAProxy does not use it (a client-side timeout is the frontend's); portcullis reports such an annotation.",
};
/// `max-connections`.
pub static MAX_CONNECTIONS: Key<u32> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "max-connections",
    scope: Scope::Global,
    default: "2000",
    accepted_values: "a whole number from `1` to `1000000`",
    parse: parse_max_connections,
    doc: "Maximum concurrent connections of the whole proxy (global maxconn).",
    applied: Applied::Reload,
    differs: "",
};
