//! Process-wide timeouts: half-closed clients, and how long a reload lets old
//! connections live.

use model::HaproxyDuration;

use super::parse::parse_duration;
use super::{Applied, DURATION_VALUES, Key, Scope};

/// `timeout-client-fin`.
pub const TIMEOUT_CLIENT_FIN: Key<HaproxyDuration> = Key {
    name: "timeout-client-fin",
    scope: Scope::Global,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the client side once the client closed its half of the connection.",
    applied: Applied::Reload,
    differs: "",
};
/// `timeout-stop`.
pub const TIMEOUT_STOP: Key<HaproxyDuration> = Key {
    name: "timeout-stop",
    scope: Scope::Global,
    default: "10m",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "How long a HAProxy worker replaced by a reload keeps serving the connections it has, such as WebSockets and long downloads, before it closes them (HAProxy's `hard-stop-after`). Idle keep-alive connections close at once. `0` waits without limit.",
    applied: Applied::Reload,
    differs: "",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_checks() {
        assert_eq!(TIMEOUT_CLIENT_FIN.default_value().as_str(), "50s");
        assert_eq!(TIMEOUT_STOP.default_value().to_std().as_secs(), 600);
        assert_eq!(
            (TIMEOUT_STOP.parse)("1h").map(|d| d.to_string()),
            Ok("1h".to_owned())
        );
        assert_eq!(
            (TIMEOUT_STOP.parse)("ten").map(|d| d.to_string()),
            Err("'ten' is not a duration such as 5s, 500ms or 1m".to_owned())
        );
    }
}
