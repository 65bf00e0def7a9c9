//! What portcullis asks of the API server, as RBAC sees it: the deployment's roles grant
//! exactly this (checked by a test), and the fake-API-server tests check that the
//! controller asks for nothing else.

/// Where a permission must be granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// In every watched namespace (a ClusterRole).
    Cluster,
    /// In the controller's own namespace only (a Role): the Lease and the global ConfigMap.
    OwnNamespace,
}

/// One RBAC rule: API group, resource (with `/subresource`), verbs, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// API group; empty for the core group.
    pub group: &'static str,
    /// Resource, e.g. `ingresses/status`.
    pub resource: &'static str,
    /// Verbs, sorted.
    pub verbs: &'static [&'static str],
    /// Where.
    pub grant: Grant,
}

const fn access(
    group: &'static str,
    resource: &'static str,
    verbs: &'static [&'static str],
    grant: Grant,
) -> Access {
    Access {
        group,
        resource,
        verbs,
        grant,
    }
}

const READ: &[&str] = &["list", "watch"];
const GATEWAY: &str = "gateway.networking.k8s.io";

/// Everything the controller does on the API server.
pub const API_ACCESS: &[Access] = &[
    access("", "services", &["get", "list", "watch"], Grant::Cluster),
    access("", "secrets", READ, Grant::Cluster),
    access("discovery.k8s.io", "endpointslices", READ, Grant::Cluster),
    access("networking.k8s.io", "ingresses", READ, Grant::Cluster),
    access("networking.k8s.io", "ingressclasses", READ, Grant::Cluster),
    access(
        "networking.k8s.io",
        "ingresses/status",
        &["patch"],
        Grant::Cluster,
    ),
    access("", "namespaces", READ, Grant::Cluster),
    // Pods' labels put endpoints into blue-green groups.
    access("", "pods", READ, Grant::Cluster),
    access(GATEWAY, "gatewayclasses", READ, Grant::Cluster),
    access(GATEWAY, "gateways", READ, Grant::Cluster),
    access(GATEWAY, "httproutes", READ, Grant::Cluster),
    access(GATEWAY, "grpcroutes", READ, Grant::Cluster),
    access(GATEWAY, "tlsroutes", READ, Grant::Cluster),
    access(GATEWAY, "tcproutes", READ, Grant::Cluster),
    access(GATEWAY, "udproutes", READ, Grant::Cluster),
    access(GATEWAY, "listenersets", READ, Grant::Cluster),
    access(GATEWAY, "referencegrants", READ, Grant::Cluster),
    access(GATEWAY, "backendtlspolicies", READ, Grant::Cluster),
    // BackendTLSPolicies name ConfigMaps for their CA certificates (`ca.crt`).
    access("", "configmaps", READ, Grant::Cluster),
    access(GATEWAY, "gatewayclasses/status", &["patch"], Grant::Cluster),
    access(GATEWAY, "gateways/status", &["patch"], Grant::Cluster),
    access(GATEWAY, "httproutes/status", &["patch"], Grant::Cluster),
    access(GATEWAY, "grpcroutes/status", &["patch"], Grant::Cluster),
    access(GATEWAY, "tlsroutes/status", &["patch"], Grant::Cluster),
    access(GATEWAY, "tcproutes/status", &["patch"], Grant::Cluster),
    access(GATEWAY, "udproutes/status", &["patch"], Grant::Cluster),
    access(GATEWAY, "listenersets/status", &["patch"], Grant::Cluster),
    access(
        GATEWAY,
        "backendtlspolicies/status",
        &["patch"],
        Grant::Cluster,
    ),
    access(
        "events.k8s.io",
        "events",
        &["create", "patch"],
        Grant::Cluster,
    ),
    access("", "configmaps", READ, Grant::OwnNamespace),
    access(
        "coordination.k8s.io",
        "leases",
        &["create", "get", "update"],
        Grant::OwnNamespace,
    ),
];
