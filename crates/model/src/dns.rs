//! Servers found by DNS: HAProxy `resolvers` sections, and backends whose servers HAProxy
//! resolves by name (ExternalName Services, `use-resolver`).

use std::net::SocketAddr;

use crate::{DnsName, HaproxyDuration, Word};

/// One `resolvers` section: its name and name servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolver {
    /// Section name, which `use-resolver` refers to.
    pub name: Word,
    /// Name servers, queried in turn (`ns01`, `ns02`, ...).
    pub nameservers: Vec<SocketAddr>,
}

/// Every `resolvers` section, with the settings they share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolvers {
    /// The sections, in the order configured.
    pub sections: Vec<Resolver>,
    /// `accepted_payload_size`: the largest answer announced to the name servers.
    pub accepted_payload_size: u16,
    /// `hold obsolete`: how long an address a new answer left out stays in use.
    pub hold_obsolete: HaproxyDuration,
    /// `hold valid`: how long an answer is used before asking again.
    pub hold_valid: HaproxyDuration,
    /// `timeout retry`: time between two queries when no valid answer came.
    pub timeout_retry: HaproxyDuration,
}

impl Default for Resolvers {
    fn default() -> Self {
        // Constants.
        #[allow(clippy::expect_used)]
        let duration = |text: &str| HaproxyDuration::parse(text).expect("valid constant");
        Self {
            sections: Vec::new(),
            accepted_payload_size: 8192,
            hold_obsolete: duration("0s"),
            hold_valid: duration("1s"),
            timeout_retry: duration("1s"),
        }
    }
}

/// A backend whose servers are a host name HAProxy resolves itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedServers {
    /// The name resolved.
    pub host: DnsName,
    /// The servers' port.
    pub port: u16,
    /// How the name is resolved.
    pub resolution: Resolution,
}

/// How HAProxy resolves a backend's host name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// By the system's resolver (`/etc/hosts`, `resolv.conf`) when HAProxy loads its
    /// configuration: one server, in maintenance while the name does not resolve.
    AtLoad,
    /// Continuously, through a `resolvers` section: `slots` servers filled with the
    /// addresses the name resolves to.
    Resolver {
        /// The `resolvers` section.
        name: Word,
        /// How many servers (addresses) the backend holds.
        slots: u16,
    },
}
