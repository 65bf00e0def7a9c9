//! TCP services: ports of their own whose connections go to backends as bytes (`mode
//! tcp`), optionally with TLS terminated by HAProxy and chosen by SNI.

use std::collections::BTreeMap;

use crate::{BackendId, CertId, HostKey, Origin, TcpLogFormat};

/// One TCP port, served by a frontend of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpService {
    /// Where connections go, by the TLS SNI they name (only when TLS is terminated);
    /// [`HostKey::CatchAll`] takes every other connection, and without it the others are
    /// refused.
    pub routes: BTreeMap<HostKey, TcpRoute>,
    /// TLS terminated on the port; `None` passes the bytes untouched.
    pub tls: Option<TcpTls>,
    /// Clients send a PROXY protocol header (`accept-proxy`).
    pub accept_proxy: bool,
    /// How connections are logged; `None` uses `tcp-log-format`.
    pub log_format: Option<TcpLogFormat>,
    /// The object that set the port's own settings (TLS, PROXY, log format).
    pub origin: Origin,
}

/// TLS terminated on a TCP port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpTls {
    /// The certificates, chosen by the names they hold; the first is served when the
    /// client's SNI names none of them.
    pub certs: Vec<CertId>,
    /// Clients must present a certificate these authorities signed.
    pub client_ca: Option<crate::ClientCa>,
}

/// Where one SNI name's (or the catch-all's) connections go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpRoute {
    /// Backends with their weights (each above zero); `None` is a backend that does not
    /// resolve, whose share of the connections is refused. Empty refuses them all.
    pub backends: Vec<(Option<BackendId>, u32)>,
    /// The object that declared it.
    pub origin: Origin,
}

impl TcpService {
    /// Every backend the port's routes name.
    pub fn backend_ids(&self) -> impl Iterator<Item = &BackendId> {
        self.routes
            .values()
            .flat_map(|route| route.backends.iter().filter_map(|(id, _)| id.as_ref()))
    }
}

/// The TCP services, by port.
pub type TcpServices = BTreeMap<u16, TcpService>;
