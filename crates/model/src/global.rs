//! Process-wide settings: bind address and ports, limits and timeouts.

use std::fmt;
use std::net::IpAddr;

/// A duration in HAProxy's time syntax (`<number>[us|ms|s|m|h|d]`), validated on creation.
/// The one duration syntax portcullis reads, in configuration keys and on the command
/// line alike.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HaproxyDuration {
    /// As written (trimmed): what HAProxy reads. Shared: every backend copies the
    /// timeouts it reads.
    text: std::sync::Arc<str>,
    /// The same time; follows from `text`, so it adds nothing to comparisons.
    microseconds: u64,
}

impl HaproxyDuration {
    /// The longest time HAProxy's timers take: 2^31-1 ms, about 24.8 days.
    pub const MAX_MILLISECONDS: u64 = 2_147_483_647;

    /// Parses HAProxy's time syntax; a bare number means milliseconds. Values HAProxy
    /// would refuse are refused here: above [`Self::MAX_MILLISECONDS`], or a non-zero
    /// time below one millisecond (HAProxy rounds it to zero and rejects it).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let digits_end = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(digits_end);
        let Some(value) = Some(number)
            .filter(|n| !n.is_empty() && n.len() <= 12)
            .and_then(|n| n.parse::<u64>().ok())
        else {
            return Err(format!(
                "'{}' is not a duration such as 5s, 500ms or 1m",
                text.escape_debug()
            ));
        };
        let microseconds_per_unit: u64 = match unit {
            "us" => 1,
            "" | "ms" => 1_000,
            "s" => 1_000_000,
            "m" => 60_000_000,
            "h" => 3_600_000_000,
            "d" => 86_400_000_000,
            _ => {
                return Err(format!(
                    "'{}' has unknown unit '{}' (use us, ms, s, m, h or d)",
                    text.escape_debug(),
                    unit.escape_debug()
                ));
            }
        };
        let microseconds = value.saturating_mul(microseconds_per_unit);
        if microseconds > Self::MAX_MILLISECONDS * 1_000 {
            return Err(format!(
                "'{}' is longer than HAProxy's longest timer, 2147483647ms (about 24.8 days)",
                text.escape_debug()
            ));
        }
        if microseconds != 0 && microseconds < 1_000 {
            return Err(format!(
                "'{}' is shorter than HAProxy's shortest timer, 1ms",
                text.escape_debug()
            ));
        }
        Ok(Self {
            text: text.into(),
            microseconds,
        })
    }

    /// The validated text, as HAProxy reads it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The same time, for portcullis's own timers.
    pub fn to_std(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.microseconds)
    }
}

impl fmt::Display for HaproxyDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Timeouts that apply to every proxy unless a backend overrides them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeouts {
    /// `timeout client`.
    pub client: HaproxyDuration,
    /// `timeout client-fin`: a half-closed client connection's inactivity.
    pub client_fin: HaproxyDuration,
    /// `timeout http-request`.
    pub http_request: HaproxyDuration,
    /// `timeout http-keep-alive`.
    pub keep_alive: HaproxyDuration,
}

/// Process-wide and frontend settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Global {
    /// Address the HTTP and HTTPS frontends bind to.
    pub bind_address: IpAddr,
    /// Port of the plain-HTTP frontend.
    pub http_port: u16,
    /// Port of the TLS frontend.
    pub https_port: u16,
    /// `maxconn` of the whole process.
    pub max_connections: u32,
    /// Global timeouts.
    pub timeouts: Timeouts,
    /// How many files the backends are spread over (at least 1).
    pub backend_shards: u32,
    /// What the frontends tell backends about the client.
    pub forwarded: crate::ForwardedHeaders,
    /// HTTPS: redirect exceptions, HSTS, TLS handshake options.
    pub https: crate::HttpsPolicy,
    /// How long a worker replaced by a reload keeps serving its connections
    /// (`hard-stop-after`).
    pub timeout_stop: HaproxyDuration,
    /// How long before `timeout_stop` ends a replaced worker's sessions start being
    /// closed, one by one (`close-sessions-duration`); `None`: left to `timeout_stop`.
    pub close_sessions_window: Option<std::time::Duration>,
    /// Access logs.
    pub logging: crate::Logging,
    /// The stats page and the Prometheus exporter.
    pub observers: crate::Observers,
    /// Error pages, the `Server` header, the body limit.
    pub responses: crate::Responses,
    /// Which clients send a PROXY protocol header.
    pub accept_proxy: crate::AcceptProxy,
    /// `resolvers` sections for backends HAProxy resolves by DNS.
    pub resolvers: crate::Resolvers,
    /// What a backend gets where no annotation says otherwise.
    pub backends: BackendDefaults,
    /// Request paths are normalized before routing (`.` and `..` segments resolved,
    /// repeated slashes merged, unreserved characters percent-decoded).
    pub normalize_paths: bool,
    /// HAProxy's threads and its replaced workers' reload limit.
    pub process: Process,
}

/// What a backend gets where no annotation says otherwise: the global ConfigMap's values,
/// or the keys' own defaults. The `defaults` section the backends follow holds them, so a
/// backend section writes only what differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendDefaults {
    /// `balance`.
    pub balance: crate::Balance,
    /// `timeout connect`.
    pub timeout_connect: HaproxyDuration,
    /// `timeout server`.
    pub timeout_server: HaproxyDuration,
    /// `timeout queue`.
    pub timeout_queue: HaproxyDuration,
    /// `timeout tunnel`.
    pub timeout_tunnel: HaproxyDuration,
    /// `timeout server-fin`.
    pub timeout_server_fin: HaproxyDuration,
    /// The interval of the health check every server has (`check inter`).
    pub check_interval: HaproxyDuration,
}

/// A duration written in this file: parsed by every test that builds a default model.
fn constant_duration(text: &str) -> HaproxyDuration {
    #[allow(clippy::expect_used)]
    HaproxyDuration::parse(text).expect("the defaults' durations are valid")
}

impl Default for BackendDefaults {
    fn default() -> Self {
        Self {
            balance: crate::Balance::Random { draws: Some(2) },
            timeout_connect: constant_duration("5s"),
            timeout_server: constant_duration("50s"),
            timeout_queue: constant_duration("5s"),
            timeout_tunnel: constant_duration("1h"),
            timeout_server_fin: constant_duration("50s"),
            check_interval: constant_duration("2s"),
        }
    }
}

impl Default for Global {
    fn default() -> Self {
        Self {
            bind_address: IpAddr::from([0, 0, 0, 0]),
            http_port: 80,
            https_port: 443,
            max_connections: 2000,
            timeouts: Timeouts {
                client: constant_duration("50s"),
                client_fin: constant_duration("50s"),
                http_request: constant_duration("5s"),
                keep_alive: constant_duration("1m"),
            },
            backend_shards: 1,
            forwarded: crate::ForwardedHeaders::default(),
            https: crate::HttpsPolicy::default(),
            timeout_stop: constant_duration("10m"),
            close_sessions_window: None,
            logging: crate::Logging::default(),
            observers: crate::Observers::default(),
            responses: crate::Responses {
                server_header: crate::ServerHeader::parse("portcullis").ok(),
                ..crate::Responses::default()
            },
            accept_proxy: crate::AcceptProxy::default(),
            resolvers: crate::Resolvers::default(),
            backends: BackendDefaults::default(),
            normalize_paths: false,
            process: Process::default(),
        }
    }
}

impl Global {
    /// The ports the global keys open listeners of their own on: the stats page, the
    /// exporter, the health check and a fronting proxy's own port. No other listener
    /// may take them.
    pub fn own_listener_ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.observers
            .stats
            .as_ref()
            .map(|stats| stats.port)
            .into_iter()
            .chain(self.observers.prometheus_port)
            .chain(self.observers.healthz_port)
            .chain(
                self.forwarded
                    .fronting_proxy
                    .and_then(|proxy| proxy.own_port()),
            )
    }
}

/// HAProxy's process: its threads, and how many reloads a replaced worker outlives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    /// `nbthread`; `None` leaves HAProxy one thread per CPU it may use.
    pub threads: Option<u16>,
    /// `mworker-max-reloads`; 0 sets no limit.
    pub max_reloads: u32,
}

impl Default for Process {
    fn default() -> Self {
        Self {
            threads: None,
            max_reloads: 10,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HaproxyDuration;

    #[test]
    fn durations_accept_haproxy_units_only() {
        for good in [
            "5s",
            "500ms",
            "1m",
            "2h",
            "1d",
            "1000us",
            "250",
            "24d",
            "2147483647ms",
            "0",
        ] {
            assert_eq!(
                HaproxyDuration::parse(good).map(|d| d.to_string()),
                Ok(good.into())
            );
        }
        for bad in [
            "",
            "s",
            "5 s",
            "5sec",
            "-1s",
            "5s\nlisten x",
            "1.5s",
            "9999999999s",
            "25d",
            "2147483648",
            "500us",
            "99999999999999999999d",
        ] {
            assert!(HaproxyDuration::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_duration_is_the_time_haproxy_reads() {
        for (text, microseconds) in [
            ("1000us", 1_000),
            ("250", 250_000),
            ("500ms", 500_000),
            ("2s", 2_000_000),
            ("1m", 60_000_000),
            ("2h", 7_200_000_000),
            ("1d", 86_400_000_000),
            ("0", 0),
        ] {
            let parsed = HaproxyDuration::parse(text).map(|d| d.to_std());
            assert_eq!(parsed, Ok(std::time::Duration::from_micros(microseconds)));
        }
    }
}
