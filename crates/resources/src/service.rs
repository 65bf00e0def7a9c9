//! Services (`v1`) as they are stored: only the fields some stage reads. The generated
//! type keeps all of a Service's spec (416 bytes before any of its text, plus the cluster
//! addresses, families, selector and policies the API server fills in); this one keeps
//! the type, ports, cluster IP, external name and external IPs, and the status (a
//! published Service's load balancer), with [`StoredMeta`]. A manifest decodes straight
//! into it; Kubernetes mode watches [`WatchedService`] (the same fields with the
//! generated metadata kube-rs needs) and converts each.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::{Kind, StoredMeta};

pub use k8s_openapi::api::core::v1::{ServicePort, ServiceStatus};

/// A Service.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Service {
    /// What is read of the metadata.
    pub metadata: StoredMeta,
    /// What is read of the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ServiceSpec>,
    /// The status: a LoadBalancer Service's addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ServiceStatus>,
}

/// The part of a Service's spec that is read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// `ClusterIP` (the default), `NodePort`, `LoadBalancer` or `ExternalName`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// The ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<ServicePort>>,
    /// The cluster address (`None` as text for a headless Service): an auth-url's
    /// Service is reached there.
    #[serde(default, rename = "clusterIP", skip_serializing_if = "Option::is_none")]
    pub cluster_ip: Option<String>,
    /// The name an `ExternalName` Service stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_name: Option<String>,
    /// Addresses published for the Ingresses when the Service has no load balancer.
    #[serde(
        default,
        rename = "externalIPs",
        skip_serializing_if = "Option::is_none"
    )]
    pub external_ips: Option<Vec<String>>,
}

/// A Service as Kubernetes mode watches it: [`Service`]'s fields with the generated
/// metadata, converted as it arrives.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WatchedService {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// What is read of the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ServiceSpec>,
    /// The status: a LoadBalancer Service's addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ServiceStatus>,
}

impl From<WatchedService> for Service {
    fn from(watched: WatchedService) -> Self {
        let mut spec = watched.spec;
        if let Some(spec) = &mut spec {
            crate::fit::fit_list(&mut spec.ports);
            crate::fit::fit_list(&mut spec.external_ips);
        }
        // A load balancer's addresses, in a published Service's status.
        let mut status = watched.status;
        if let Some(balancer) = status.as_mut().and_then(|s| s.load_balancer.as_mut()) {
            crate::fit::fit_list(&mut balancer.ingress);
        }
        Service {
            metadata: StoredMeta::of(Kind::Service, watched.metadata),
            spec,
            status,
        }
    }
}

crate::resource_impl::namespaced_resource!(
    WatchedService, group: "", version: "v1", kind: "Service", plural: "services"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// A watched Service is kept for as long as it exists: its lists hold no spare room.
    #[test]
    fn a_watched_service_is_stored_without_spare_room() {
        let listed = r#"{"metadata": {"name": "web", "namespace": "shop"},
          "spec": {"ports": [{"name": "http", "port": 80}], "externalIPs": ["203.0.113.9"]},
          "status": {"loadBalancer": {"ingress": [{"ip": "198.51.100.7"}]}}}"#;
        let watched: WatchedService = serde_json::from_str(listed).expect("decodes");
        let spec = watched.spec.as_ref().expect("spec");
        assert!(spec.ports.as_ref().map_or(0, Vec::capacity) > 1);
        let stored = Service::from(watched);
        let spec = stored.spec.expect("spec");
        let (ports, external) = (spec.ports.expect("ports"), spec.external_ips.expect("IPs"));
        assert_eq!((ports.len(), ports.capacity()), (1, 1));
        assert_eq!((external.len(), external.capacity()), (1, 1));
        let balancer = stored.status.and_then(|s| s.load_balancer);
        let addresses = balancer
            .and_then(|b| b.ingress)
            .expect("load balancer addresses");
        assert_eq!((addresses.len(), addresses.capacity()), (1, 1));
    }

    /// A Service as the API server lists it: what is read is exactly what the generated
    /// type reads.
    #[test]
    fn keeps_what_is_read_of_a_listed_service() {
        let listed = r#"{
          "apiVersion": "v1", "kind": "Service",
          "metadata": {"name": "web", "namespace": "shop", "uid": "0d4a", "resourceVersion": "7",
            "annotations": {"example.com/a": "b"}},
          "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.7", "clusterIPs": ["10.96.0.7"],
            "externalIPs": ["198.51.100.7"], "externalName": "ignored.example",
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "selector": {"app": "web"},
            "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP",
              "appProtocol": "kubernetes.io/h2c", "nodePort": 30080}]},
          "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}
        }"#;
        let compact: Service = serde_json::from_str(listed).expect("decodes");
        let watched: WatchedService = serde_json::from_str(listed).expect("decodes");
        let full: k8s_openapi::api::core::v1::Service =
            serde_json::from_str(listed).expect("decodes");
        assert_eq!(watched.metadata, full.metadata);
        assert_eq!(compact, Service::from(watched));
        assert_eq!(
            compact.metadata,
            StoredMeta::of(Kind::Service, full.metadata)
        );
        assert_eq!(compact.status, full.status);
        let (spec, full) = (compact.spec.expect("spec"), full.spec.expect("spec"));
        assert_eq!(
            spec,
            ServiceSpec {
                type_: full.type_,
                ports: full.ports,
                cluster_ip: full.cluster_ip,
                external_name: full.external_name,
                external_ips: full.external_ips,
            }
        );
        assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.7"));
        assert_eq!(spec.external_ips, Some(vec!["198.51.100.7".to_owned()]));
    }
}
