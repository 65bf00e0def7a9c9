//! Backends and the servers (endpoints) behind them.

use std::fmt;
use std::net::IpAddr;

/// Identity of a backend: one service port of one namespace.
///
/// `port` is the service port's name, or its number when it has no name, however the
/// referring object named it: one service port is one backend.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BackendId {
    /// Namespace of the service.
    pub namespace: String,
    /// Service name.
    pub service: String,
    /// Service port number or name.
    pub port: String,
}

impl BackendId {
    /// The HAProxy section name: `<namespace>_<service>_<port>`.
    ///
    /// Namespaces, service names and port names are DNS labels, which never contain `_`,
    /// so the name is unambiguous. Any other byte (possible only in a manifest nobody
    /// validated) is written `:xx` in hex: `:` is not a DNS character either, so the name
    /// stays unique, and no value can break a configuration line or a runtime command.
    pub fn section_name(&self) -> String {
        let mut name =
            String::with_capacity(self.namespace.len() + self.service.len() + self.port.len() + 2);
        for (index, part) in [&self.namespace, &self.service, &self.port]
            .into_iter()
            .enumerate()
        {
            if index > 0 {
                name.push('_');
            }
            for byte in part.bytes() {
                if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.') {
                    name.push(char::from(byte));
                } else {
                    name.push_str(&format!(":{byte:02x}"));
                }
            }
        }
        name
    }
}

impl fmt::Display for BackendId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}:{}", self.namespace, self.service, self.port)
    }
}

/// One ready endpoint of a backend.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Server {
    /// Endpoint address.
    pub address: IpAddr,
    /// Endpoint port.
    pub port: u16,
}

impl Server {
    /// The HAProxy server name, derived from the endpoint so it is stable across renders.
    pub fn name(&self) -> String {
        format!("{}_{}", self.address, self.port)
    }
}

/// A backend section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backend {
    /// Identity and section name.
    pub id: BackendId,
    /// Ready endpoints, sorted and without duplicates.
    pub servers: Vec<Server>,
    /// Load-balancing algorithm.
    pub balance: crate::Balance,
    /// Settings of every server line.
    pub server_options: crate::ServerOptions,
    /// Timeouts set in the section.
    pub timeouts: crate::BackendTimeouts,
    /// `timeout connect`.
    pub timeout_connect: crate::HaproxyDuration,
    /// `timeout server`.
    pub timeout_server: crate::HaproxyDuration,
    /// Error pages of this backend's own (`errorfile`), replacing the global ones for the
    /// errors HAProxy answers once the backend is chosen.
    pub error_pages: std::collections::BTreeMap<u16, crate::ErrorPage>,
    /// Per-client request rate and connection limits.
    pub client_limits: crate::ClientLimits,
    /// The objects that made this backend, for error reports.
    pub origins: Vec<crate::Origin>,
}

impl Backend {
    /// Whether two backends differ only in their servers (and origins, which are not
    /// rendered): then HAProxy can be brought from one to the other at runtime.
    pub fn same_section_settings(&self, other: &Backend) -> bool {
        // Destructured without `..` so that a new field must be classified here.
        let Backend {
            id,
            servers: _,
            balance,
            server_options,
            timeouts,
            timeout_connect,
            timeout_server,
            error_pages,
            client_limits,
            origins: _,
        } = self;
        *id == other.id
            && *balance == other.balance
            && *server_options == other.server_options
            && *timeouts == other.timeouts
            && *timeout_connect == other.timeout_connect
            && *timeout_server == other.timeout_server
            && *error_pages == other.error_pages
            && *client_limits == other.client_limits
    }
}
