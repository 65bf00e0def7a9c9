//! Keys of a backend: balancing and server-side timeouts.

use model::{Balance, HaproxyDuration};

use super::parse::{parse_balance, parse_duration};
use super::{Key, Scope};

/// `balance-algorithm`.
pub const BALANCE_ALGORITHM: Key<Balance> = Key {
    name: "balance-algorithm",
    scope: Scope::Backend,
    default: "roundrobin",
    parse: parse_balance,
    doc: "HAProxy load-balancing algorithm of the backend.",
};
/// `timeout-connect`.
pub const TIMEOUT_CONNECT: Key<HaproxyDuration> = Key {
    name: "timeout-connect",
    scope: Scope::Backend,
    default: "5s",
    parse: parse_duration,
    doc: "Maximum time to connect to a server.",
};
/// `timeout-server`.
pub const TIMEOUT_SERVER: Key<HaproxyDuration> = Key {
    name: "timeout-server",
    scope: Scope::Backend,
    default: "50s",
    parse: parse_duration,
    doc: "Maximum inactivity time on the server side.",
};
