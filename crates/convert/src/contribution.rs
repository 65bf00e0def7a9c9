//! What one object hands the merge: a typed, source-neutral list of claims (TLS hosts,
//! routes with their backends, the default backend), its own problems, and for an
//! HTTPRoute its status outcome. Ingresses and HTTPRoutes each have their own converter;
//! this is the only shape they share.

use std::sync::Arc;

use model::{Backend, BackendId, CertId, Condition, Frontends, HostKey, Origin, PathMatch};
use resources::ObjectRef;

use crate::diagnostic::Diagnostic;
use crate::outcome::RouteOutcome;

/// When an object's claims count as older: creation time, then namespace and name, then
/// kind, so that two objects of one name (an HTTPRoute and a GRPCRoute, one replacing the
/// other) never share their claims' positions. An object without a creation time (a
/// manifest written by hand) counts as newer than every object with one: its age is
/// unknown, and it must not outrank a claim known to be old.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct MergeOrder {
    pub(crate) created: Option<resources::jiff::Timestamp>,
    pub(crate) namespace: resources::Name,
    pub(crate) name: resources::Name,
    pub(crate) kind: resources::Kind,
}

impl Ord for MergeOrder {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (
            self.created.is_none(),
            &self.created,
            &self.namespace,
            &self.name,
            &self.kind,
        )
            .cmp(&(
                other.created.is_none(),
                &other.created,
                &other.namespace,
                &other.name,
                &other.kind,
            ))
    }
}

impl PartialOrd for MergeOrder {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl MergeOrder {
    /// The order of `object`, created at `created`.
    pub(crate) fn of(created: Option<&resources::Time>, object: &ObjectRef) -> Self {
        Self {
            created: created.map(|t| t.0),
            namespace: object.namespace.clone(),
            name: object.name.clone(),
            kind: object.kind,
        }
    }
}

/// Everything one object contributes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Contribution {
    pub(crate) object: ObjectRef,
    pub(crate) origin: Origin,
    pub(crate) order: Arc<MergeOrder>,
    pub(crate) tls: Vec<TlsClaim>,
    pub(crate) default_backend: Option<BackendClaim>,
    pub(crate) routes: Vec<RouteClaim>,
    /// SNI names whose TLS connections it passes through to a backend.
    pub(crate) passthrough: Vec<PassthroughClaim>,
    /// TCP ports (and SNI names on them) whose connections it sends to backends.
    pub(crate) tcp: Vec<TcpClaim>,
    /// Problems of this object alone (conflicts with others are the merge's).
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// What Gateway API status needs (HTTPRoutes attached to a Gateway of ours).
    pub(crate) route_status: Option<RouteOutcome>,
    /// The backend keys the object sets (an Ingress's annotations and class parameters),
    /// which its backends were built with: a backend other objects use too takes each key
    /// from the oldest that sets it.
    pub(crate) backend_keys: Option<Arc<crate::keys::BackendKeys>>,
}

impl Contribution {
    /// An object that claims nothing yet.
    pub(crate) fn new(object: ObjectRef, kind: &'static str, order: MergeOrder) -> Self {
        let origin = Origin {
            kind,
            namespace: object.namespace.shared_text(),
            name: object.name.shared_text(),
        };
        Self {
            object,
            origin,
            order: Arc::new(order),
            tls: Vec::new(),
            default_backend: None,
            routes: Vec::new(),
            passthrough: Vec::new(),
            tcp: Vec::new(),
            diagnostics: Vec::new(),
            route_status: None,
            backend_keys: None,
        }
    }

    /// Drops the room its lists kept for more: a contribution is kept, unchanged, for as
    /// long as its object is.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.tls.shrink_to_fit();
        self.routes.shrink_to_fit();
        self.passthrough.shrink_to_fit();
        self.tcp.shrink_to_fit();
        self.diagnostics.shrink_to_fit();
        if let Some(outcome) = &mut self.route_status {
            outcome.shrink_to_fit();
        }
    }

    /// Reports a problem with a field of this object.
    pub(crate) fn report(&mut self, field: String, message: String) {
        self.diagnostics.push(Diagnostic {
            object: self.object.clone(),
            field,
            message,
        });
    }
}

/// Which claim of a contribution: the merge orders claims by the object's
/// [`MergeOrder`], then by this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum ClaimKind {
    /// `default_backend`.
    DefaultBackend,
    /// `tls[i]`.
    Tls(u32),
    /// `routes[i]`.
    Route(u32),
    /// `passthrough[i]`.
    Passthrough(u32),
    /// `tcp[i]`.
    Tcp(u32),
}

/// A TCP port's connections, or those of one SNI name on it, that an object sends to
/// backends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TcpClaim {
    pub(crate) port: u16,
    /// The SNI name (the port terminates TLS), or the catch-all.
    pub(crate) host: HostKey,
    /// Backends (in TCP mode) with their weights; `None` is one that does not resolve,
    /// whose share of the connections is refused. Empty refuses them all.
    pub(crate) backends: WeightedBackends,
    /// The certificate served for the name, when the port terminates TLS.
    pub(crate) cert: Option<CertId>,
    /// The port's own settings, taken from its oldest claim.
    pub(crate) port_settings: TcpPortSettings,
    pub(crate) field: String,
}

/// Backends with their weights; `None` is one that does not resolve.
pub(crate) type WeightedBackends = Vec<(Option<Arc<Backend>>, u32)>;

/// What a TCP port's frontend is, besides its routes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TcpPortSettings {
    /// The port terminates TLS.
    pub(crate) tls: bool,
    pub(crate) client_ca: Option<model::ClientCa>,
    pub(crate) accept_proxy: bool,
    pub(crate) log_format: Option<model::TcpLogFormat>,
}

/// An SNI name whose TLS connections an object passes through untouched.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PassthroughClaim {
    pub(crate) host: HostKey,
    /// The backend (in passthrough mode); `None` when the object's backend is invalid,
    /// and the connections are refused.
    pub(crate) backend: Option<Arc<Backend>>,
    /// Which client addresses it serves; `None`: all.
    pub(crate) access: Option<Box<model::SourceAccess>>,
    pub(crate) field: String,
}

/// A TLS host an object asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TlsClaim {
    pub(crate) host: HostKey,
    /// The TLS Secret; `None` serves the default certificate.
    pub(crate) secret: Option<CertId>,
    /// The host's own TLS handshake options (empty: the proxy-wide ones).
    pub(crate) options: model::TlsOptions,
    pub(crate) field: String,
}

/// The default backend an Ingress asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BackendClaim {
    pub(crate) backend: Arc<Backend>,
    pub(crate) field: String,
    /// What the object's path keys do to the requests it takes (authentication, allow
    /// lists, header edits...), its backend included; `None` when they do nothing.
    pub(crate) action: Option<Arc<model::RuleAction>>,
}

/// A host and path an object routes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RouteClaim {
    pub(crate) host: HostKey,
    pub(crate) path: PathMatch,
    /// The path as written, for messages.
    pub(crate) path_text: String,
    /// The frontends it is served on.
    pub(crate) frontends: Frontends,
    pub(crate) field: String,
    pub(crate) rule: ClaimedRule,
}

/// What a claimed path does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClaimedRule {
    /// An Ingress path: one backend; plain HTTP is redirected to HTTPS with `code`
    /// when the host has TLS. A path whose keys change the request or the response has
    /// an `action` (its backend included), and a `regex` or `app-root` path has
    /// `conditions`; a plain path has neither, and stays a plain map entry.
    Ingress {
        backend: Arc<Backend>,
        https_redirect: Option<u16>,
        conditions: Vec<Condition>,
        action: Option<Arc<model::RuleAction>>,
    },
    /// An HTTPRoute match: conditions beyond the path, and an action whose backends
    /// (with weights and header changes) are `backends`.
    Gateway {
        conditions: Vec<Condition>,
        action: Arc<model::RuleAction>,
        backends: Vec<Arc<Backend>>,
        /// A GRPCRoute match's precedence among the regular expressions of a path: the
        /// characters of its service, then of its method (zero for an HTTPRoute).
        method_precedence: (usize, usize),
    },
}

impl RouteClaim {
    /// Conditions beyond the path.
    pub(crate) fn conditions(&self) -> &[Condition] {
        match &self.rule {
            ClaimedRule::Ingress { conditions, .. } | ClaimedRule::Gateway { conditions, .. } => {
                conditions
            }
        }
    }

    /// Its precedence among regular-expression rules of one path (see
    /// [`ClaimedRule::Gateway`]).
    pub(crate) fn method_precedence(&self) -> (usize, usize) {
        match &self.rule {
            ClaimedRule::Gateway {
                method_precedence, ..
            } => *method_precedence,
            ClaimedRule::Ingress { .. } => (0, 0),
        }
    }

    /// The backends it forwards to.
    pub(crate) fn backends(&self) -> &[Arc<Backend>] {
        match &self.rule {
            ClaimedRule::Ingress { backend, .. } => std::slice::from_ref(backend),
            ClaimedRule::Gateway { backends, .. } => backends,
        }
    }

    /// Its backend of this id.
    pub(crate) fn backend(&self, id: &BackendId) -> Option<&Arc<Backend>> {
        self.backends().iter().find(|backend| backend.id == *id)
    }

    /// The redirect code when plain HTTP goes to HTTPS on a host with TLS.
    pub(crate) fn https_redirect(&self) -> Option<u16> {
        match &self.rule {
            ClaimedRule::Ingress { https_redirect, .. } => *https_redirect,
            ClaimedRule::Gateway { .. } => None,
        }
    }

    /// What the path does as a rule of a chain.
    pub(crate) fn action(&self) -> model::RuleAction {
        match &self.rule {
            ClaimedRule::Ingress {
                action: Some(action),
                ..
            } => (**action).clone(),
            ClaimedRule::Ingress { backend, .. } => model::RuleAction {
                backends: vec![model::RuleBackend::plain(backend.id.clone(), 1)],
                ..model::RuleAction::default()
            },
            ClaimedRule::Gateway { action, .. } => (**action).clone(),
        }
    }

    /// Whether the path maps to one backend and changes nothing, as most Ingress paths
    /// do: what a route map can say by itself.
    pub(crate) fn is_plain(&self) -> bool {
        match &self.rule {
            ClaimedRule::Ingress {
                conditions, action, ..
            } => conditions.is_empty() && action.is_none(),
            ClaimedRule::Gateway {
                conditions,
                action,
                backends,
                ..
            } => conditions.is_empty() && backends.len() == 1 && action.forwards_only(),
        }
    }
}
