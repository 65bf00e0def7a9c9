//! The proxy model: what HAProxy should serve, as plain, ordered, comparable values.
//!
//! Everything here is `Eq` and ordered (persistent ordered maps, so a model is cloned in
//! O(1) and two versions are compared by the parts they do not share), refers to other parts by id rather
//! than by pointer, and holds only values that were validated on the way in, so the
//! renderer can print them without escaping.

#![forbid(unsafe_code)]

mod access;
mod affinity;
mod auth;
mod backend;
mod blue_green;
mod cors;
mod dns;
mod forwarded;
mod global;
mod https;
mod logging;
mod proxy_protocol;
mod responses;
mod routing;
mod rules;
mod server_options;
mod stats;
mod tcp;

pub use access::{AddressRule, ClientLimits, DenyStatus, ListName, SourceAccess};
pub use affinity::{
    CookieAffinity, CookieAttr, CookieDomain, CookieKey, CookieKeyword, CookieLifetime,
    CookieStrategy, CookieValue,
};
pub use auth::{
    AUTH_UNAVAILABLE_STATUS, AUTH_UNUSABLE_STATUS, AuthService, BasicAuth, ExternalAuth, Password,
    PathAuth, QuotedWord, UserEntry, Userlist,
};
pub use backend::{Backend, BackendId, BackendMode, BackendSettings, Server};
pub use blue_green::{GroupSelector, ServerWeight};
pub use cors::{Cors, CorsOrigins, parse_origin};
pub use dns::{NamedServers, Resolution, Resolver, Resolvers};
pub use forwarded::{Cidr, ForwardFor, ForwardedHeaders, FrontingPort, FrontingProxy, HeaderName};
pub use global::{BackendDefaults, Global, HaproxyDuration, Process, Timeouts};
pub use https::{
    CaSource, ClientAuth, ClientCa, ClientVerify, DhParams, Hsts, HstsRule, HttpsPolicy,
    TlsOptions, TlsWord,
};
pub use logging::{
    HttpLogFormat, LogFormat, LogTag, LogTarget, Logging, SyslogFormat, TcpLogFormat,
};
pub use proxy_protocol::{AcceptProxy, SendProxy};
pub use responses::{ErrorPage, MAX_ERROR_PAGE_BYTES, Responses, ServerHeader};
pub use routing::{
    CertId, Frontends, Host, HostKey, Passthrough, PathKind, PathMatch, Route, RouteTarget, Routes,
    TlsCert,
};
pub use rules::{
    BodyLimit, Condition, GatewayRule, HeaderEdits, HeaderLists, PathChange, Redirect, Rewrite,
    RuleAction, RuleBackend, Unavailable, ValueMatch,
};
pub use server_options::{
    BackendTimeouts, BackendTls, Balance, CheckUri, DnsName, HealthCheck, Protocol, SecretPem,
    ServerOptions, Sni, TlsVerify, Word,
};
pub use stats::{Observers, StatsAuth, StatsPage};
pub use tcp::{TcpRoute, TcpService, TcpServices, TcpTls};

pub use imbl::{OrdMap, OrdSet};

/// A Kubernetes object's identity as the model records it, for error reports. Every
/// route and backend an object makes carries one: the texts are shared, not copied.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// Kind, e.g. `Ingress`.
    pub kind: &'static str,
    /// Namespace (empty for cluster-scoped kinds).
    pub namespace: std::sync::Arc<str>,
    /// Name.
    pub name: std::sync::Arc<str>,
}

impl Origin {
    /// Whether a Gateway API route declared it (HTTPRoute, GRPCRoute): its hostnames
    /// answer 404 to requests no rule matches, never the Ingress default backend.
    pub fn is_gateway_route(&self) -> bool {
        matches!(self.kind, "HTTPRoute" | "GRPCRoute")
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// Everything HAProxy should serve.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProxyModel {
    /// Process-wide and frontend settings.
    pub global: Global,
    /// Routing, per host key (exact host, wildcard host, or the catch-all).
    pub hosts: OrdMap<HostKey, Host>,
    /// Every backend a route or the default backend refers to; shared with the objects
    /// that made it where one object did (the common case), so a backend is kept once.
    pub backends: OrdMap<BackendId, std::sync::Arc<Backend>>,
    /// Certificates served by SNI, besides the default one.
    pub certs: OrdMap<CertId, TlsCert>,
    /// Served for unknown SNI names, and whenever a host's own certificate is unusable.
    pub default_cert: TlsCert,
    /// Where requests that match no route go; `None` answers 404.
    pub default_backend: Option<BackendId>,
    /// What the default backend's Ingress does to those requests (authentication, allow
    /// lists, header edits...), `default_backend` being its backend; `None` when nothing.
    pub default_rule: Option<std::sync::Arc<GatewayRule>>,
    /// The host names of the Gateway API HTTPS listeners on the HTTPS frontend, most
    /// specific first (empty when none has one): a request belongs to the first that
    /// matches its host, else to the hostname-less listeners, and one whose `Host`
    /// belongs to another listener than its SNI is answered 421.
    pub https_listener_hosts: Vec<HostKey>,
    /// The ports of Gateway API HTTP (`false`) and HTTPS (`true`) listeners served by
    /// frontends of their own: each port is bound, and answers 404, before any route
    /// attaches to its listeners.
    pub own_port_listeners: std::collections::BTreeSet<(u16, bool)>,
    /// TLS connections sent on untouched, by the SNI names they are for (exact, or a
    /// wildcard of one label for an Ingress, of one or more for the Gateway API). When
    /// there are any, the HTTPS port reads the SNI first and hands every other
    /// connection to the HTTPS frontend over a local socket.
    pub passthrough: OrdMap<HostKey, Passthrough>,
    /// Ports of their own whose connections go to backends as bytes, by port.
    pub tcp_services: TcpServices,
}

/// Whether a byte may stand in a word HAProxy reads unquoted: printable, and none of the
/// characters that start a quote, an escape or a comment there.
pub(crate) fn plain_word_byte(byte: u8) -> bool {
    byte.is_ascii_graphic() && !matches!(byte, b'"' | b'\'' | b'\\' | b'#')
}
