//! The only crate that names cluster types: the objects portcullis reads, their
//! identities, and decoding of YAML/JSON manifests into them.

#![forbid(unsafe_code)]

mod decode;
mod endpoint_slice;
mod fast_yaml;
mod fit;
mod ingress;
mod l4_routes;
mod listener_set;
mod log_safe;
mod meta;
mod name;
mod names;
pub use names::is_dns1123_subdomain;
mod node;
mod object;
mod pod;
mod resource_impl;
mod service;
mod status_only;

pub use decode::{
    DecodeError, DecodeFailure, Decoded, DocumentCache, decode_manifest, decode_manifest_reusing,
    decode_manifest_with_serde_saphyr, drop_unread_metadata, read_for_parents,
};
pub use endpoint_slice::{
    Endpoint, EndpointConditions, EndpointSlice, ListedEndpointSlice, SERVICE_NAME_LABEL,
    TargetRef, WatchedEndpointSlice,
};
pub use fit::FitToLength;
pub use ingress::{Ingress, WatchedIngress};
pub use k8s_openapi::ByteString;
pub use k8s_openapi::api::core::v1::{
    ConfigMap, EndpointAddress, EndpointSubset, Endpoints, Namespace, ObjectReference, Secret,
};
pub use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, IngressBackend, IngressClass,
    IngressClassParametersReference, IngressClassSpec, IngressRule, IngressServiceBackend,
    IngressSpec, IngressStatus, IngressTLS, ServiceBackendPort,
};
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
pub use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
pub use k8s_openapi::jiff;
pub use listener_set::as_gateway_listener;
pub use log_safe::LogSafe;
pub use meta::{MetaRef, StoredMeta};
pub use name::Name;
pub use object::{CA_CONFIG_MAP_KEY, Kind, Object, ObjectRef, ParentRef};
pub use pod::{Pod, PodMeta, WatchedPod};
pub use service::{Service, ServicePort, ServiceSpec, ServiceStatus, WatchedService};

/// kubectl's copy of the whole object as last applied: no stage reads it, and it doubles
/// an object's size, so it is dropped from every object before it is stored.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The fields of an object's metadata that no stage reads and that own memory: they are
/// dropped from every object before it is stored (the cluster watcher clears the same
/// fields of the typed objects).
pub const METADATA_UNREAD: [&str; 5] = [
    "managedFields",
    "ownerReferences",
    "finalizers",
    "generateName",
    "selfLink",
];

/// The annotation portcullis puts on a route whose `spec` does not fit the types it knows
/// (a value a newer version of the API allows: a filter type, a match type), read for its
/// `parentRefs` alone, with why: its status then says so to its parents
/// (`Accepted=False`, `UnsupportedValue`), and it is not served. Never read from an
/// object: a route's own annotations are dropped before it is stored.
pub const UNREADABLE_SPEC_ANNOTATION: &str = "portcullis.dev/unreadable-spec";

/// At most this much of why a route was read for its parents alone is kept: it quotes
/// the object, and becomes an annotation and a status condition's message.
const UNREADABLE_WHY_BYTES: usize = 1024;

/// `why` cut to [`UNREADABLE_WHY_BYTES`] at a character boundary.
pub fn shortened(why: &str) -> &str {
    let mut end = why.len().min(UNREADABLE_WHY_BYTES);
    while !why.is_char_boundary(end) {
        end -= 1;
    }
    &why[..end]
}

/// Why a route was read for its parents alone (see [`UNREADABLE_SPEC_ANNOTATION`]).
pub fn unreadable_spec(
    metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<&str> {
    metadata
        .annotations
        .as_ref()?
        .get(UNREADABLE_SPEC_ANNOTATION)
        .map(String::as_str)
}

/// The keys of a Secret's `data` and `stringData` that any stage reads: a certificate
/// (`tls.crt`, `tls.key`), a CA and its revocations (`ca.crt`, `ca.crl`), an htpasswd
/// list (`auth`) and DH parameters (`dhparam.pem`). Every other key is dropped before a
/// Secret is stored: a controller that lists every Secret of its namespaces would
/// otherwise hold image-pull credentials and applications' data it never uses (and a key
/// it never reads cannot make a Secret unreadable). A stage that reads a new key adds it
/// here.
pub const SECRET_KEYS_READ: [&str; 6] = [
    "auth",
    "ca.crl",
    "ca.crt",
    "dhparam.pem",
    "tls.crt",
    "tls.key",
];

/// The Gateway API types (`gateway.networking.k8s.io/v1`), GRPCRoute's and ListenerSet's
/// included.
pub mod gateway {
    pub use gateway_api::gatewayclasses::*;
    pub use gateway_api::gateways::*;
    pub use gateway_api::grpcroutes::*;
    pub use gateway_api::httproutes::*;
    pub use gateway_api::listenersets::*;
    pub use gateway_api::referencegrants::*;
    pub use gateway_api::tlsroutes::*;
}
/// The BackendTLSPolicy types (`gateway.networking.k8s.io/v1`): their generated names
/// would clash with the routes' in one module.
pub mod backend_tls_policy {
    pub use gateway_api::backendtlspolicies::*;
}
pub use backend_tls_policy::BackendTlsPolicy;
pub use gateway::{
    Gateway, GatewayClass, GrpcRoute, HttpRoute, ListenerSet, ReferenceGrant, TlsRoute,
};
pub use l4_routes::{
    L4BackendRef, L4ParentRef, L4RouteRule, L4RouteSpec, L4RouteStatus, L4RouteStatusParents,
    TcpRoute, UdpRoute,
};
