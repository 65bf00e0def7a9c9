//! How HAProxy talks to a backend's servers: protocol, TLS, limits and health checks,
//! and the backend-level settings around them (balance, queue and tunnel timeouts).

use std::fmt;
use std::net::IpAddr;

use crate::{CertId, HaproxyDuration, HeaderName};

/// HAProxy's load-balancing algorithm for a backend, with its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Balance {
    /// `roundrobin`.
    #[default]
    RoundRobin,
    /// `static-rr`: cannot take servers added at runtime.
    StaticRoundRobin,
    /// `leastconn`.
    LeastConn,
    /// `first`.
    First,
    /// `source`.
    Source,
    /// `uri [len <n>] [depth <n>] [whole] [path-only]`.
    Uri {
        /// Hash only the first `len` characters.
        len: Option<u32>,
        /// Hash only the first `depth` directories.
        depth: Option<u32>,
        /// Hash the query string too.
        whole: bool,
        /// Hash the path only, even of an absolute URI.
        path_only: bool,
    },
    /// `url_param <name> [check_post]`.
    UrlParam {
        /// Query parameter.
        name: Word,
        /// Look in a POST body too.
        check_post: bool,
    },
    /// `hdr(<name>) [use_domain_only]`.
    Header {
        /// Header hashed.
        name: HeaderName,
        /// Hash only the domain part of a host name.
        use_domain_only: bool,
    },
    /// `random[(<draws>)]`.
    Random {
        /// How many servers are drawn before the least loaded is picked.
        draws: Option<u32>,
    },
    /// `rdp-cookie[(<name>)]`.
    RdpCookie {
        /// Cookie name (`mstshash` when absent).
        name: Option<Word>,
    },
}

impl Balance {
    /// The algorithm names, as HAProxy spells them.
    pub const NAMES: [&'static str; 10] = [
        "roundrobin",
        "static-rr",
        "leastconn",
        "first",
        "source",
        "uri",
        "url_param",
        "hdr",
        "random",
        "rdp-cookie",
    ];

    /// Whether it hashes a request property: such a backend takes servers added at
    /// runtime only with consistent hashing, which also moves the fewest clients when a
    /// server comes or goes.
    pub fn hashes(&self) -> bool {
        matches!(
            self,
            Balance::Source
                | Balance::Uri { .. }
                | Balance::UrlParam { .. }
                | Balance::Header { .. }
                | Balance::RdpCookie { .. }
        )
    }

    /// Whether HAProxy accepts servers added at runtime (`add server`) in such a backend.
    pub fn takes_runtime_servers(&self) -> bool {
        *self != Balance::StaticRoundRobin
    }
}

impl fmt::Display for Balance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Balance::RoundRobin => f.write_str("roundrobin"),
            Balance::StaticRoundRobin => f.write_str("static-rr"),
            Balance::LeastConn => f.write_str("leastconn"),
            Balance::First => f.write_str("first"),
            Balance::Source => f.write_str("source"),
            Balance::Uri {
                len,
                depth,
                whole,
                path_only,
            } => {
                f.write_str("uri")?;
                if let Some(len) = len {
                    write!(f, " len {len}")?;
                }
                if let Some(depth) = depth {
                    write!(f, " depth {depth}")?;
                }
                if *whole {
                    f.write_str(" whole")?;
                }
                if *path_only {
                    f.write_str(" path-only")?;
                }
                Ok(())
            }
            Balance::UrlParam { name, check_post } => {
                write!(f, "url_param {name}")?;
                if *check_post {
                    f.write_str(" check_post")?;
                }
                Ok(())
            }
            Balance::Header {
                name,
                use_domain_only,
            } => {
                write!(f, "hdr({name})")?;
                if *use_domain_only {
                    f.write_str(" use_domain_only")?;
                }
                Ok(())
            }
            Balance::Random { draws: None } => f.write_str("random"),
            Balance::Random { draws: Some(draws) } => write!(f, "random({draws})"),
            Balance::RdpCookie { name: None } => f.write_str("rdp-cookie"),
            Balance::RdpCookie { name: Some(name) } => write!(f, "rdp-cookie({name})"),
        }
    }
}

/// A name of letters, digits, `_`, `-` and `.` (a query parameter, a cookie), validated
/// on creation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Word(String);

impl Word {
    /// Parses a word of at most 64 characters.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = !text.is_empty()
            && text.len() <= 64
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "'{}' is not a name of letters, digits, '_', '-' and '.'",
                text.escape_debug()
            ))
        }
    }
}

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A DNS host name (`api.example.com`), validated on creation: labels of letters,
/// digits and `-`, at most 253 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsName(String);

impl DnsName {
    /// Parses a host name.
    pub fn parse(text: &str) -> Result<Self, String> {
        if Self::is_valid(text) {
            Ok(Self(text.to_ascii_lowercase()))
        } else {
            Err(format!("'{}' is not a DNS host name", text.escape_debug()))
        }
    }

    /// Whether `text` is a DNS host name (letters, digits and inner hyphens in labels of
    /// 1-63 bytes, 253 bytes at most), in any case.
    pub fn is_valid(text: &str) -> bool {
        let label_ok = |label: &str| {
            (1..=63).contains(&label.len())
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        text.len() <= 253 && text.split('.').all(label_ok)
    }
}

impl fmt::Display for DnsName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The HTTP version spoken to the servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1.
    #[default]
    Http1,
    /// HTTP/2 (`proto h2`): prior knowledge in clear text, ALPN `h2` over TLS; gRPC.
    Http2,
}

/// The name sent in the TLS handshake to the servers (SNI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sni {
    /// The SNI the client sent (`ssl_fc_sni`).
    FromClient,
    /// The request's Host header, without its port.
    FromHost,
    /// A fixed name.
    Fixed(DnsName),
}

/// A PEM file made from a Secret, loaded by HAProxy from the state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretPem {
    /// The Secret.
    pub secret: CertId,
    /// The content, checked PEM.
    pub pem: String,
}

/// How the servers' certificates are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsVerify {
    /// Not at all (`verify none`).
    None,
    /// Against a CA bundle (`verify required ca-file`).
    Required {
        /// The CA bundle.
        ca: SecretPem,
        /// The name the certificate must carry, when not the SNI (`verifyhost`).
        hostname: Option<DnsName>,
    },
    /// As a Gateway API BackendTLSPolicy asks (`verify required`): against the policy's
    /// CA bundle, or the system's trusted CAs (`ca-file @system-ca`) when `ca` is `None`,
    /// and always for one name (`verifyhost`).
    Policy {
        /// The bundle of the policy's CA references; its `secret` is the policy itself,
        /// whose file is apart from every Secret's.
        ca: Option<SecretPem>,
        /// The name the certificate must carry.
        hostname: DnsName,
    },
}

/// TLS toward the servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendTls {
    /// Certificate checking.
    pub verify: TlsVerify,
    /// SNI sent, if any.
    pub sni: Option<Sni>,
    /// Client certificate and key presented to the servers.
    pub client_cert: Option<SecretPem>,
}

/// An HTTP health check's request path (`option httpchk <uri>`), validated on creation:
/// starts with `/`, printable ASCII without spaces, quotes, `\` or `#`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckUri(String);

impl CheckUri {
    /// Parses a request path of at most 1024 characters.
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok =
            text.starts_with('/') && text.len() <= 1024 && text.bytes().all(crate::plain_word_byte);
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "'{}' is not a request path: it must start with '/' and hold no spaces, quotes, '\\' or '#'",
                text.escape_debug()
            ))
        }
    }
}

impl fmt::Display for CheckUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Active health checks of every server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    /// Time between two checks (`inter`).
    pub interval: HaproxyDuration,
    /// Successes before a server is up (`rise`), HAProxy's 2 when absent.
    pub rise: Option<u32>,
    /// Failures before a server is down (`fall`), HAProxy's 3 when absent.
    pub fall: Option<u32>,
    /// Port checked instead of the server's (`port`).
    pub port: Option<u16>,
    /// Address checked instead of the server's (`addr`).
    pub addr: Option<IpAddr>,
    /// An HTTP check of this path instead of a TCP connect (`option httpchk`).
    pub uri: Option<CheckUri>,
}

/// Settings every server line of a backend carries, in the file and over `add server`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerOptions {
    /// HTTP version.
    pub protocol: Protocol,
    /// TLS toward the servers, if any.
    pub tls: Option<BackendTls>,
    /// Concurrent connections per server (`maxconn`); more wait in a queue.
    pub maxconn: Option<u32>,
    /// Queued connections per server (`maxqueue`); more are redispatched.
    pub maxqueue: Option<u32>,
    /// Time a server that comes up takes to reach its full weight (`slowstart`).
    pub slowstart: Option<HaproxyDuration>,
    /// Active health checks, if any.
    pub health: Option<HealthCheck>,
    /// PROXY protocol header sent to the servers, if any.
    pub send_proxy: Option<crate::SendProxy>,
    /// Sticky sessions by cookie, if any.
    pub cookie: Option<crate::CookieAffinity>,
}

/// The timeouts a backend section sets; absent ones are the `defaults` section's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BackendTimeouts {
    /// `timeout queue`.
    pub queue: Option<HaproxyDuration>,
    /// `timeout tunnel` (WebSocket, CONNECT, HTTP/2 streams held open).
    pub tunnel: Option<HaproxyDuration>,
    /// `timeout server-fin`.
    pub server_fin: Option<HaproxyDuration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance_prints_haproxy_s_grammar() {
        let name = |t: &str| Word::parse(t).unwrap_or_else(|e| panic!("{e}"));
        let header = HeaderName::parse("X-User").unwrap_or_else(|e| panic!("{e}"));
        let cases = [
            (Balance::Random { draws: Some(2) }, "random(2)"),
            (
                Balance::Uri {
                    len: Some(10),
                    depth: Some(2),
                    whole: true,
                    path_only: true,
                },
                "uri len 10 depth 2 whole path-only",
            ),
            (
                Balance::UrlParam {
                    name: name("user"),
                    check_post: true,
                },
                "url_param user check_post",
            ),
            (
                Balance::Header {
                    name: header,
                    use_domain_only: false,
                },
                "hdr(X-User)",
            ),
            (Balance::RdpCookie { name: None }, "rdp-cookie"),
        ];
        for (balance, text) in cases {
            assert_eq!(balance.to_string(), text);
        }
        assert!(Balance::Source.hashes() && !Balance::LeastConn.hashes());
        assert!(!Balance::StaticRoundRobin.takes_runtime_servers());
    }

    #[test]
    fn names_and_paths_refuse_what_would_break_a_line() {
        assert!(
            DnsName::parse("api.Example.com").is_ok_and(|n| n.to_string() == "api.example.com")
        );
        for bad in ["", "a..b", "-a.b", "a b", "a\nb", &"a".repeat(64)] {
            assert!(DnsName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(CheckUri::parse("/healthz?full=1").is_ok());
        for bad in ["healthz", "/a b", "/a\"b", "/a#b", "/\n"] {
            assert!(CheckUri::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Word::parse("user_id").is_ok() && Word::parse("a)b").is_err());
    }
}
