//! TCPRoute and UDPRoute (`gateway.networking.k8s.io/v1`, standard since Gateway API
//! v1.6). The `gateway-api` crate has them only as the experimental channel's
//! `v1alpha2`, which a cluster with the standard v1.6 definitions does not serve; these
//! are the v1 types, written out (the two kinds share one shape). Implementing
//! `k8s_openapi::Resource` makes them watchable like the generated kinds.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};

/// A route's reference to its parent (a Gateway, or one listener of it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L4ParentRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
}

/// A Service (or other backend) the connections go to, with its share.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L4BackendRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

/// One rule: the backends that share the connections.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L4RouteRule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub backend_refs: Vec<L4BackendRef>,
}

/// The spec of a TCPRoute or a UDPRoute.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L4RouteSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_refs: Option<Vec<L4ParentRef>>,
    #[serde(default)]
    pub rules: Vec<L4RouteRule>,
}

/// One controller's status of the route for one parent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L4RouteStatusParents {
    pub parent_ref: L4ParentRef,
    pub controller_name: String,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// The route's status: one entry per parent and controller.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L4RouteStatus {
    #[serde(default)]
    pub parents: Vec<L4RouteStatusParents>,
}

macro_rules! l4_route {
    ($name:ident, $kind:literal, $plural:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            pub metadata: ObjectMeta,
            pub spec: L4RouteSpec,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub status: Option<L4RouteStatus>,
        }

        crate::resource_impl::namespaced_resource!(
            $name,
            group: "gateway.networking.k8s.io",
            version: "v1",
            kind: $kind,
            plural: $plural
        );
    };
}

l4_route!(
    TcpRoute,
    "TCPRoute",
    "tcproutes",
    "A TCPRoute: a TCP listener's connections, sent to backends."
);
l4_route!(
    UdpRoute,
    "UDPRoute",
    "udproutes",
    "A UDPRoute: read only to report that HAProxy cannot serve it."
);
