//! Hosts, routes and certificates: what the frontends' maps are made of.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use crate::{BackendId, Origin};

/// Which requests a host entry receives. Its text is shared (`Arc<str>`): a host is a
/// key of several of the merge's tables, so a copy is a reference count, not a string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostKey {
    /// An exact host name, lowercase.
    Exact(Arc<str>),
    /// `*.suffix`: exactly one label in front of `suffix` (stored without `*.`), as an
    /// Ingress means it.
    Wildcard(Arc<str>),
    /// `*.suffix`: one or more labels in front of `suffix` (stored without `*.`), as the
    /// Gateway API means it.
    Suffix(Arc<str>),
    /// Host names matching this PCRE2 pattern (validated: no whitespace, no control
    /// character, no quote), tried after the exact and wildcard hosts, in key order.
    Regex(Arc<str>),
    /// Rules without a host: every request no other host claims.
    CatchAll,
}

impl HostKey {
    /// The key as written in the hosts map and in front of `#` in the route maps (an
    /// exact host's, the most common, is its name, borrowed).
    pub fn map_key(&self) -> std::borrow::Cow<'_, str> {
        match self {
            HostKey::Exact(name) => std::borrow::Cow::Borrowed(name),
            HostKey::Wildcard(suffix) => format!("*.{suffix}").into(),
            // `**.` never starts a host name, and keeps the two wildcards apart.
            HostKey::Suffix(suffix) => format!("**.{suffix}").into(),
            // `~` never appears in a host name; the hash keeps the pattern's characters
            // (backslashes, `;`) out of the route maps, which change live.
            HostKey::Regex(pattern) => {
                format!("~{:016x}", xxhash_rust::xxh3::xxh3_64(pattern.as_bytes())).into()
            }
            // A map line may not start with `#`, and `<` never appears in a host name.
            HostKey::CatchAll => "<default>".into(),
        }
    }
}

impl HostKey {
    /// The name a certificate list matches SNI against (HAProxy's wildcards cover one
    /// label).
    pub fn sni_filter(&self) -> String {
        match self {
            HostKey::Suffix(suffix) => format!("*.{suffix}"),
            other => other.map_key().into_owned(),
        }
    }
}

impl fmt::Display for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostKey::CatchAll => f.write_str("(any host)"),
            HostKey::Suffix(suffix) => write!(f, "*.{suffix}"),
            HostKey::Regex(pattern) => write!(f, "~{pattern}"),
            other => f.write_str(&other.map_key()),
        }
    }
}

/// How a route's path is compared with the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathKind {
    /// The whole path, case-sensitive.
    Exact,
    /// Element-wise prefix, split on `/`.
    Prefix,
    /// Character-wise prefix ("begins with"): what `ImplementationSpecific` means here.
    Begin,
}

/// A path rule: kind plus normalized path.
///
/// A `Prefix` path has its trailing slashes removed (so `/` becomes the empty string),
/// because the rule ignores them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathMatch {
    /// Path as compared (shared: a route key is copied into several of the merge's
    /// tables).
    pub path: Arc<str>,
    /// Comparison.
    pub kind: PathKind,
}

/// Which frontends serve a route: the plain-HTTP one, the HTTPS one, and frontends of
/// Gateway listeners on other ports.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frontends {
    /// The plain-HTTP frontend (`--http-port`).
    pub http: bool,
    /// The HTTPS frontend (`--https-port`).
    pub https: bool,
    /// Plain-HTTP frontends bound on these ports.
    pub ports: BTreeSet<u16>,
    /// HTTPS frontends bound on these ports.
    pub tls_ports: BTreeSet<u16>,
}

impl Frontends {
    /// Plain HTTP and HTTPS (every Ingress route).
    pub const BOTH: Frontends = Frontends {
        http: true,
        https: true,
        ports: BTreeSet::new(),
        tls_ports: BTreeSet::new(),
    };
    /// Plain HTTP only (a Gateway route attached to an HTTP listener on port 80).
    pub const HTTP: Frontends = Frontends {
        http: true,
        https: false,
        ports: BTreeSet::new(),
        tls_ports: BTreeSet::new(),
    };
    /// HTTPS only (a Gateway route attached to an HTTPS listener on port 443).
    pub const HTTPS: Frontends = Frontends {
        http: false,
        https: true,
        ports: BTreeSet::new(),
        tls_ports: BTreeSet::new(),
    };

    /// No HTTP frontend: a Gateway TLS listener in Passthrough mode, whose connections
    /// the HTTPS port's SNI frontend sends on untouched.
    pub const NONE: Frontends = Frontends {
        http: false,
        https: false,
        ports: BTreeSet::new(),
        tls_ports: BTreeSet::new(),
    };

    /// The frontend of a Gateway HTTP listener on another port.
    pub fn port(port: u16) -> Self {
        Self {
            http: false,
            https: false,
            ports: BTreeSet::from([port]),
            tls_ports: BTreeSet::new(),
        }
    }

    /// The frontend of a Gateway HTTPS listener on another port.
    pub fn tls_port(port: u16) -> Self {
        Self {
            http: false,
            https: false,
            ports: BTreeSet::new(),
            tls_ports: BTreeSet::from([port]),
        }
    }

    /// Whether an HTTPS frontend serves it.
    pub fn any_tls(&self) -> bool {
        self.https || !self.tls_ports.is_empty()
    }

    /// Every frontend either serves.
    pub fn union(&self, other: &Self) -> Self {
        Self {
            http: self.http || other.http,
            https: self.https || other.https,
            ports: self.ports.union(&other.ports).copied().collect(),
            tls_ports: self.tls_ports.union(&other.tls_ports).copied().collect(),
        }
    }

    /// Whether the plain-HTTP frontend (`true`) or the HTTPS one (`false`) serves it.
    pub fn serves(&self, plain_http: bool) -> bool {
        if plain_http { self.http } else { self.https }
    }
}

impl Default for Frontends {
    fn default() -> Self {
        Self::BOTH
    }
}

/// What a route does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteTarget {
    /// Forward to this backend (the route maps name it directly).
    Backend(BackendId),
    /// Try these rules in order (Gateway API conditions, filters or traffic split).
    Rules(std::sync::Arc<[crate::GatewayRule]>),
}

impl RouteTarget {
    /// Every backend the route may send traffic to.
    pub fn backend_ids(&self) -> Vec<&BackendId> {
        match self {
            RouteTarget::Backend(id) => vec![id],
            RouteTarget::Rules(rules) => {
                rules.iter().flat_map(|r| r.action.backend_ids()).collect()
            }
        }
    }
}

/// Where one path of one host goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// What answers.
    pub target: RouteTarget,
    /// The frontends that serve it.
    pub frontends: Frontends,
    /// Plain-HTTP requests are redirected to HTTPS with this status code.
    pub https_redirect: Option<u16>,
    /// The object that declared the route.
    pub origin: Origin,
}

/// Identity of a certificate: the Secret it came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CertId {
    /// Namespace of the Secret.
    pub namespace: String,
    /// Secret name.
    pub name: String,
}

impl CertId {
    /// File name of the PEM bundle: `<namespace>_<name>.pem` (DNS names never contain `_`,
    /// so no two Secrets share one). A name that is not made of DNS characters, or would
    /// pass the file system's 255-byte limit, gets `h_<xxh3 of namespace/name>.pem`
    /// instead, so no name can leave the directory, break a crt-list line or a runtime
    /// command, or fail a write.
    pub fn file_name(&self) -> String {
        let dns = |part: &str| {
            !part.is_empty()
                && !part.starts_with('.')
                && part.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.')
                })
        };
        if dns(&self.namespace) && dns(&self.name) && self.namespace.len() + self.name.len() <= 200
        {
            format!("{}_{}.pem", self.namespace, self.name)
        } else {
            let identity = format!("{}/{}", self.namespace, self.name);
            format!(
                "h_{:016x}.pem",
                xxhash_rust::xxh3::xxh3_64(identity.as_bytes())
            )
        }
    }
}

/// A certificate chain and its private key, PEM-encoded and validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsCert {
    /// Certificate chain followed by the key, as HAProxy loads it.
    pub pem_bundle: String,
}

/// One host's routes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Host {
    /// Routes by path.
    pub routes: Routes,
    /// The certificate served for this host's SNI; `None` serves the default one.
    pub cert: Option<CertId>,
    /// This host's TLS handshake options (the proxy-wide ones where unset). Shared:
    /// nearly every host has none of its own, and the options are far larger than the
    /// rest of a host, which a persistent map's node holds sixteen of.
    pub tls: std::sync::Arc<crate::TlsOptions>,
}

/// Where the TLS connections whose SNI names one passthrough host go: untouched to a
/// backend that terminates TLS itself, or refused when the route's backend is invalid
/// (the Gateway API asks for rejected connections then, never another host's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passthrough {
    /// The backend (a [`crate::BackendMode::TlsPassthrough`] one); `None` refuses the
    /// connection.
    pub backend: Option<BackendId>,
    /// The object that declared it.
    pub origin: Origin,
    /// Which client addresses it serves (an Ingress's allow and deny lists); `None`: all.
    pub access: Option<Box<crate::SourceAccess>>,
}

/// A host's routes by path, in path order. Nearly every host has one or two routes, for
/// which a sorted vector (one allocation the size of its routes) serves far better than a
/// tree, whose every node has room for eleven: at 10k hosts that was 26 MB of a full
/// render's 207 MB peak heap (heaptrack, 2026-12-02).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Routes(Vec<(PathMatch, Route)>);

impl Routes {
    /// The route of a path.
    pub fn get(&self, path: &PathMatch) -> Option<&Route> {
        self.position(path).ok().map(|index| &self.0[index].1)
    }

    /// Sets the route of a path, returning the one it replaces.
    pub fn insert(&mut self, path: PathMatch, route: Route) -> Option<Route> {
        match self.position(&path) {
            Ok(index) => Some(std::mem::replace(&mut self.0[index].1, route)),
            Err(index) => {
                // Most hosts keep one or two routes: room for just one more.
                if self.0.len() == self.0.capacity() {
                    self.0.reserve_exact(1);
                }
                self.0.insert(index, (path, route));
                None
            }
        }
    }

    /// Removes the route of a path.
    pub fn remove(&mut self, path: &PathMatch) -> Option<Route> {
        self.position(path).ok().map(|index| self.0.remove(index).1)
    }

    /// Whether a path has a route.
    pub fn contains_key(&self, path: &PathMatch) -> bool {
        self.position(path).is_ok()
    }

    /// Whether the host has no route.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many routes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The routes in path order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&PathMatch, &Route)> + Clone {
        self.0.iter().map(|(path, route)| (path, route))
    }

    /// The routes, in path order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Route> + Clone {
        self.0.iter().map(|(_, route)| route)
    }

    /// The routes, to change in place (their paths, the order, stay).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Route> {
        self.0.iter_mut().map(|(_, route)| route)
    }

    /// The paths, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &PathMatch> + Clone {
        self.0.iter().map(|(path, _)| path)
    }

    fn position(&self, path: &PathMatch) -> Result<usize, usize> {
        self.0.binary_search_by(|(known, _)| known.cmp(path))
    }
}

impl<'a> IntoIterator for &'a Routes {
    type Item = (&'a PathMatch, &'a Route);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (PathMatch, Route)>,
        fn(&'a (PathMatch, Route)) -> (&'a PathMatch, &'a Route),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(path, route)| (path, route))
    }
}

impl FromIterator<(PathMatch, Route)> for Routes {
    fn from_iter<I: IntoIterator<Item = (PathMatch, Route)>>(items: I) -> Self {
        let mut routes = Routes::default();
        for (path, route) in items {
            routes.insert(path, route);
        }
        routes
    }
}

impl<const N: usize> From<[(PathMatch, Route); N]> for Routes {
    fn from(items: [(PathMatch, Route); N]) -> Self {
        items.into_iter().collect()
    }
}
