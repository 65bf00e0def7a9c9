//! Keys of a backend: balancing and server-side timeouts.

use model::{Balance, HaproxyDuration};

use super::parse::{parse_balance, parse_duration};
use super::{Applied, DURATION_VALUES, Key, Scope};

/// `balance-algorithm`.
pub const BALANCE_ALGORITHM: Key<Balance> = Key {
    name: "balance-algorithm",
    scope: Scope::Backend,
    default: "roundrobin",
    accepted_values: "`roundrobin`, `static-rr`, `leastconn`, `first`, `source`, `uri` or `random`",
    parse: parse_balance,
    doc: "How HAProxy spreads the backend's requests over its servers (HAProxy's `balance`).",
    applied: Applied::Reload,
    differs: "haproxy-ingress defaults to `random(2)` and accepts every algorithm of HAProxy's grammar with its arguments; portcullis defaults to `roundrobin` and accepts the algorithms listed, without arguments.",
};
/// `timeout-connect`.
pub const TIMEOUT_CONNECT: Key<HaproxyDuration> = Key {
    name: "timeout-connect",
    scope: Scope::Backend,
    default: "5s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time to connect to a server.",
    applied: Applied::Reload,
    differs: "",
};
/// `timeout-server`.
pub const TIMEOUT_SERVER: Key<HaproxyDuration> = Key {
    name: "timeout-server",
    scope: Scope::Backend,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the server side.",
    applied: Applied::Reload,
    differs: "",
};
