//! Typed objects and their identities.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::Metadata;
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Namespace, Secret};
use k8s_openapi::api::networking::v1::IngressClass;

use crate::{
    BackendTlsPolicy, EndpointSlice, Gateway, GatewayClass, GrpcRoute, HttpRoute, Ingress,
    ListenerSet, LogSafe, MetaRef, Pod, ReferenceGrant, Service, TcpRoute, TlsRoute, UdpRoute,
};

/// The key of a ConfigMap that holds a CA bundle (a BackendTLSPolicy's
/// `caCertificateRefs`).
pub const CA_CONFIG_MAP_KEY: &str = "ca.crt";

/// The kinds portcullis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// core/v1 Namespace.
    Namespace,
    /// core/v1 Service.
    Service,
    /// discovery.k8s.io/v1 EndpointSlice.
    EndpointSlice,
    /// core/v1 Endpoints.
    Endpoints,
    /// core/v1 Secret.
    Secret,
    /// core/v1 ConfigMap.
    ConfigMap,
    /// networking.k8s.io/v1 IngressClass.
    IngressClass,
    /// networking.k8s.io/v1 Ingress.
    Ingress,
    /// gateway.networking.k8s.io GatewayClass.
    GatewayClass,
    /// gateway.networking.k8s.io Gateway.
    Gateway,
    /// gateway.networking.k8s.io HTTPRoute.
    HttpRoute,
    /// gateway.networking.k8s.io GRPCRoute.
    GrpcRoute,
    /// gateway.networking.k8s.io ReferenceGrant.
    ReferenceGrant,
    /// core/v1 Pod: only its name, namespace and labels are kept (blue-green groups).
    Pod,
    /// gateway.networking.k8s.io TLSRoute.
    TlsRoute,
    /// gateway.networking.k8s.io TCPRoute.
    TcpRoute,
    /// gateway.networking.k8s.io UDPRoute: read only to be reported as not served.
    UdpRoute,
    /// gateway.networking.k8s.io BackendTLSPolicy.
    BackendTlsPolicy,
    /// gateway.networking.k8s.io ListenerSet: listeners added to a Gateway.
    ListenerSet,
}

impl Kind {
    /// Every kind, in a fixed order (used for metrics).
    pub const ALL: [Kind; 19] = [
        Kind::Namespace,
        Kind::Service,
        Kind::EndpointSlice,
        Kind::Endpoints,
        Kind::Secret,
        Kind::ConfigMap,
        Kind::IngressClass,
        Kind::Ingress,
        Kind::GatewayClass,
        Kind::Gateway,
        Kind::HttpRoute,
        Kind::GrpcRoute,
        Kind::ReferenceGrant,
        Kind::Pod,
        Kind::TlsRoute,
        Kind::TcpRoute,
        Kind::UdpRoute,
        Kind::BackendTlsPolicy,
        Kind::ListenerSet,
    ];

    /// The Kubernetes kind name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Namespace => "Namespace",
            Kind::Service => "Service",
            Kind::EndpointSlice => "EndpointSlice",
            Kind::Endpoints => "Endpoints",
            Kind::Secret => "Secret",
            Kind::ConfigMap => "ConfigMap",
            Kind::IngressClass => "IngressClass",
            Kind::Ingress => "Ingress",
            Kind::GatewayClass => "GatewayClass",
            Kind::Gateway => "Gateway",
            Kind::HttpRoute => "HTTPRoute",
            Kind::GrpcRoute => "GRPCRoute",
            Kind::ReferenceGrant => "ReferenceGrant",
            Kind::Pod => "Pod",
            Kind::TlsRoute => "TLSRoute",
            Kind::TcpRoute => "TCPRoute",
            Kind::UdpRoute => "UDPRoute",
            Kind::BackendTlsPolicy => "BackendTLSPolicy",
            Kind::ListenerSet => "ListenerSet",
        }
    }

    /// Whether some stage reads objects' labels of this kind: a Namespace's (Gateway
    /// listeners admit routes by them), a Pod's (blue-green groups) and an
    /// EndpointSlice's (its Service's name, which the slice keeps as `service_name`,
    /// dropping the map). Every other kind's label map is dropped before an object is
    /// stored (a map of one label costs a 544-byte tree node).
    pub fn labels_are_read(self) -> bool {
        matches!(self, Kind::Namespace | Kind::Pod | Kind::EndpointSlice)
    }

    /// Whether some stage reads objects' annotations of this kind: an Ingress's and a
    /// Service's (their configuration keys) and an IngressClass's (the default class).
    /// Every other kind's annotations are dropped before an object is stored: an
    /// EndpointSlice's controller stamps each slice with the time of its last change,
    /// cert-manager names its issuer and certificate on each Secret it writes, and a map
    /// of one annotation is a tree node of ~544 bytes.
    pub fn annotations_are_read(self) -> bool {
        matches!(self, Kind::Ingress | Kind::Service | Kind::IngressClass)
    }

    /// Cluster-scoped kinds have no namespace.
    pub fn is_namespaced(self) -> bool {
        !matches!(
            self,
            Kind::Namespace | Kind::IngressClass | Kind::GatewayClass
        )
    }
}

/// Identity of an object: kind, namespace (empty when cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    /// Kind.
    pub kind: Kind,
    /// Namespace, or empty for cluster-scoped kinds.
    pub namespace: crate::Name,
    /// Name.
    pub name: crate::Name,
}

impl ObjectRef {
    /// Builds a reference.
    pub fn new(
        kind: Kind,
        namespace: impl Into<crate::Name>,
        name: impl Into<crate::Name>,
    ) -> Self {
        Self {
            kind,
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A reference may come from a field of another object, whose value nobody checked.
        let (namespace, name) = (LogSafe(&self.namespace), LogSafe(&self.name));
        if self.namespace.is_empty() {
            write!(f, "{} {name}", self.kind.name())
        } else {
            write!(f, "{} {namespace}/{name}", self.kind.name())
        }
    }
}

/// A route parentRef's group, kind, namespace and name, whichever route kind holds it.
/// One entry of a route's `spec.parentRefs`, whatever the route's kind (each kind has its
/// own generated type for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParentRef<'a> {
    /// `group`, if given.
    pub group: Option<&'a str>,
    /// `kind`, if given.
    pub kind: Option<&'a str>,
    /// `namespace`, if given.
    pub namespace: Option<&'a str>,
    /// `name`.
    pub name: &'a str,
    /// `sectionName`, if given.
    pub section_name: Option<&'a str>,
    /// `port`, if given.
    pub port: Option<i32>,
}

/// The Gateway API's group, the default of a parentRef's `group`.
const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

impl ParentRef<'_> {
    /// Whether it names a Gateway (the defaults of `group` and `kind`).
    pub fn is_gateway(&self) -> bool {
        self.served_kind() == Some(Kind::Gateway)
    }

    /// The kind of parent it names when portcullis serves that kind of parent: a Gateway
    /// (the defaults of `group` and `kind`) or a ListenerSet.
    pub fn served_kind(&self) -> Option<Kind> {
        if self.group.unwrap_or(GATEWAY_GROUP) != GATEWAY_GROUP {
            return None;
        }
        match self.kind.unwrap_or("Gateway") {
            "Gateway" => Some(Kind::Gateway),
            "ListenerSet" => Some(Kind::ListenerSet),
            _ => None,
        }
    }
}

/// A decoded object. Shared, because snapshots hold the same objects many times over.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    /// Namespace.
    Namespace(Arc<Namespace>),
    /// Service.
    Service(Arc<Service>),
    /// EndpointSlice.
    EndpointSlice(Arc<EndpointSlice>),
    /// Endpoints.
    Endpoints(Arc<Endpoints>),
    /// Secret.
    Secret(Arc<Secret>),
    /// ConfigMap.
    ConfigMap(Arc<ConfigMap>),
    /// IngressClass.
    IngressClass(Arc<IngressClass>),
    /// Ingress.
    Ingress(Arc<Ingress>),
    /// GatewayClass.
    GatewayClass(Arc<GatewayClass>),
    /// Gateway.
    Gateway(Arc<Gateway>),
    /// HTTPRoute.
    HttpRoute(Arc<HttpRoute>),
    /// GRPCRoute.
    GrpcRoute(Arc<GrpcRoute>),
    /// ReferenceGrant.
    ReferenceGrant(Arc<ReferenceGrant>),
    /// Pod: its name, namespace and labels.
    Pod(Arc<Pod>),
    /// TLSRoute.
    TlsRoute(Arc<TlsRoute>),
    /// TCPRoute.
    TcpRoute(Arc<TcpRoute>),
    /// UDPRoute.
    UdpRoute(Arc<UdpRoute>),
    /// BackendTLSPolicy.
    BackendTlsPolicy(Arc<BackendTlsPolicy>),
    /// ListenerSet.
    ListenerSet(Arc<ListenerSet>),
}

impl Object {
    /// The object's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Object::Namespace(_) => Kind::Namespace,
            Object::Service(_) => Kind::Service,
            Object::EndpointSlice(_) => Kind::EndpointSlice,
            Object::Endpoints(_) => Kind::Endpoints,
            Object::Secret(_) => Kind::Secret,
            Object::ConfigMap(_) => Kind::ConfigMap,
            Object::IngressClass(_) => Kind::IngressClass,
            Object::Ingress(_) => Kind::Ingress,
            Object::GatewayClass(_) => Kind::GatewayClass,
            Object::Gateway(_) => Kind::Gateway,
            Object::HttpRoute(_) => Kind::HttpRoute,
            Object::GrpcRoute(_) => Kind::GrpcRoute,
            Object::ReferenceGrant(_) => Kind::ReferenceGrant,
            Object::Pod(_) => Kind::Pod,
            Object::TlsRoute(_) => Kind::TlsRoute,
            Object::TcpRoute(_) => Kind::TcpRoute,
            Object::UdpRoute(_) => Kind::UdpRoute,
            Object::BackendTlsPolicy(_) => Kind::BackendTlsPolicy,
            Object::ListenerSet(_) => Kind::ListenerSet,
        }
    }

    /// The object's metadata.
    pub fn metadata(&self) -> MetaRef<'_> {
        match self {
            Object::Namespace(o) => o.metadata().into(),
            Object::Service(o) => (&o.metadata).into(),
            Object::EndpointSlice(o) => (&o.metadata).into(),
            Object::Endpoints(o) => o.metadata().into(),
            Object::Secret(o) => o.metadata().into(),
            Object::ConfigMap(o) => o.metadata().into(),
            Object::IngressClass(o) => o.metadata().into(),
            Object::Ingress(o) => (&o.metadata).into(),
            Object::GatewayClass(o) => (&o.metadata).into(),
            Object::Gateway(o) => (&o.metadata).into(),
            Object::HttpRoute(o) => (&o.metadata).into(),
            Object::GrpcRoute(o) => (&o.metadata).into(),
            Object::ReferenceGrant(o) => (&o.metadata).into(),
            Object::Pod(o) => (&o.metadata).into(),
            Object::TlsRoute(o) => (&o.metadata).into(),
            Object::TcpRoute(o) => (&o.metadata).into(),
            Object::UdpRoute(o) => (&o.metadata).into(),
            Object::BackendTlsPolicy(o) => (&o.metadata).into(),
            Object::ListenerSet(o) => (&o.metadata).into(),
        }
    }

    /// A Secret as it is stored: only the keys of [`crate::SECRET_KEYS_READ`] kept in its
    /// `data` and `stringData`.
    pub fn secret(mut secret: Secret) -> Object {
        let read = |key: &String| crate::SECRET_KEYS_READ.contains(&key.as_str());
        if let Some(data) = secret.data.as_mut() {
            data.retain(|key, _| read(key));
        }
        if let Some(data) = secret.string_data.as_mut() {
            data.retain(|key, _| read(key));
        }
        Object::Secret(Arc::new(secret))
    }

    /// A ConfigMap read only for the CA it may hold: its `ca.crt`, nothing else of its
    /// data, kept (a BackendTLSPolicy's CA).
    pub fn ca_config_map(mut map: ConfigMap) -> Object {
        if let Some(data) = map.data.as_mut() {
            data.retain(|key, _| key == CA_CONFIG_MAP_KEY);
        }
        map.binary_data = None;
        Object::ConfigMap(Arc::new(map))
    }

    /// A route's `spec.parentRefs` (every route kind); empty for other kinds.
    pub fn parent_refs(&self) -> Vec<ParentRef<'_>> {
        macro_rules! refs {
            ($route:expr) => {
                $route
                    .spec
                    .parent_refs
                    .iter()
                    .flatten()
                    .map(|p| ParentRef {
                        group: p.group.as_deref(),
                        kind: p.kind.as_deref(),
                        namespace: p.namespace.as_deref(),
                        name: p.name.as_str(),
                        section_name: p.section_name.as_deref(),
                        port: p.port,
                    })
                    .collect()
            };
        }
        match self {
            Object::HttpRoute(route) => refs!(route),
            Object::GrpcRoute(route) => refs!(route),
            Object::TlsRoute(route) => refs!(route),
            Object::TcpRoute(route) => refs!(route),
            Object::UdpRoute(route) => refs!(route),
            // Most objects are not routes: nothing is allocated for them.
            _ => Vec::new(),
        }
    }

    /// The parents a route names in its `parentRefs` that portcullis serves (Gateways and
    /// ListenerSets), and the Gateway a ListenerSet names in its `parentRef`; empty for
    /// other kinds. Each parent once, in the order first named.
    pub fn parents(&self) -> Vec<ObjectRef> {
        let has_parents = matches!(
            self,
            Object::HttpRoute(_)
                | Object::GrpcRoute(_)
                | Object::TlsRoute(_)
                | Object::TcpRoute(_)
                | Object::UdpRoute(_)
                | Object::ListenerSet(_)
        );
        if !has_parents {
            // Decided by the kind alone: storing the objects of a whole cluster reads
            // none of the others' memory for it.
            return Vec::new();
        }
        let own = self.metadata().namespace.unwrap_or_default();
        if let Object::ListenerSet(set) = self {
            let parent = &set.spec.parent_ref;
            let is_gateway = parent.group.as_deref().unwrap_or(GATEWAY_GROUP) == GATEWAY_GROUP
                && parent.kind.as_deref().unwrap_or("Gateway") == "Gateway";
            if !is_gateway {
                return Vec::new();
            }
            let namespace = parent.namespace.as_deref().unwrap_or(own);
            return vec![ObjectRef::new(
                Kind::Gateway,
                namespace,
                parent.name.as_str(),
            )];
        }
        let mut parents: Vec<ObjectRef> = Vec::new();
        for parent in self.parent_refs() {
            let Some(kind) = parent.served_kind() else {
                continue;
            };
            let parent = ObjectRef::new(kind, parent.namespace.unwrap_or(own), parent.name);
            if !parents.contains(&parent) {
                parents.push(parent);
            }
        }
        parents
    }

    /// The object's identity. Decoding guarantees a name, and a namespace for namespaced kinds.
    pub fn object_ref(&self) -> ObjectRef {
        let meta = self.metadata();
        ObjectRef {
            kind: self.kind(),
            namespace: meta.namespace.unwrap_or_default().into(),
            name: meta.name.unwrap_or_default().into(),
        }
    }
}
