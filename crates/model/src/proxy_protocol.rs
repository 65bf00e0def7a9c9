//! The PROXY protocol: accepted from the proxies in front of the frontends, and sent to
//! servers that want the client's address.

use crate::Cidr;

/// Which clients of the frontends send a PROXY protocol header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AcceptProxy {
    /// None: clients connect directly.
    #[default]
    Nobody,
    /// Every client must (`accept-proxy` on the bind lines).
    Everyone,
    /// Clients from these sources must; any other client is served as a direct one,
    /// so it cannot claim an address of its choice.
    From(Vec<Cidr>),
}

/// The PROXY protocol header sent to the servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendProxy {
    /// Version 1, text (`send-proxy`).
    V1,
    /// Version 2, binary (`send-proxy-v2`).
    V2,
    /// Version 2 with the client's TLS details (`send-proxy-v2-ssl`).
    V2Ssl,
    /// Version 2 with the client's TLS details and certificate CN
    /// (`send-proxy-v2-ssl-cn`).
    V2SslCn,
}

impl SendProxy {
    /// The server keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            SendProxy::V1 => "send-proxy",
            SendProxy::V2 => "send-proxy-v2",
            SendProxy::V2Ssl => "send-proxy-v2-ssl",
            SendProxy::V2SslCn => "send-proxy-v2-ssl-cn",
        }
    }
}
