//! EndpointSlices (`discovery.k8s.io/v1`) as they are stored: only the fields some stage
//! reads. Endpoints are the most numerous things a cluster holds, and the generated type
//! keeps every field of each (352 bytes an endpoint before any of its text: node, zone,
//! hints, hostname, the whole target reference); this one keeps an endpoint's
//! addresses, conditions and the pod it names (40 bytes), and the slice's
//! [`StoredMeta`]. A manifest decodes straight into it, so the generated type is never
//! built; Kubernetes mode watches [`WatchedEndpointSlice`] (the generated metadata
//! kube-rs needs) and converts each.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::{Kind, StoredMeta};

pub use k8s_openapi::api::discovery::v1::{EndpointConditions, EndpointPort};

/// The label that ties an EndpointSlice to its Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// An EndpointSlice: a share of a Service's endpoints.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(from = "ListedEndpointSlice<StoredMeta>")]
pub struct EndpointSlice {
    /// What is read of the metadata, without labels: the only one read is kept as
    /// `service_name` (a map of one label costs a 544-byte tree node, in every slice).
    pub metadata: StoredMeta,
    /// The Service it belongs to: its `kubernetes.io/service-name` label.
    pub service_name: Option<String>,
    /// `IPv4`, `IPv6` or `FQDN`.
    pub address_type: String,
    /// The endpoints.
    pub endpoints: Option<Vec<Endpoint>>,
    /// The ports every endpoint of the slice serves.
    pub ports: Option<Vec<EndpointPort>>,
}

/// An EndpointSlice as it is written and listed, with metadata `M`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedEndpointSlice<M> {
    /// The metadata.
    pub metadata: M,
    /// `IPv4`, `IPv6` or `FQDN`.
    pub address_type: String,
    /// The endpoints.
    #[serde(default)]
    pub endpoints: Option<Vec<Endpoint>>,
    /// The ports.
    #[serde(default)]
    pub ports: Option<Vec<EndpointPort>>,
}

/// An EndpointSlice as Kubernetes mode watches it, converted as it arrives.
pub type WatchedEndpointSlice = ListedEndpointSlice<ObjectMeta>;

impl From<ListedEndpointSlice<StoredMeta>> for EndpointSlice {
    fn from(listed: ListedEndpointSlice<StoredMeta>) -> Self {
        let ListedEndpointSlice {
            mut metadata,
            address_type,
            endpoints,
            ports,
        } = listed;
        let service_name = metadata
            .labels
            .take()
            .and_then(|mut labels| labels.remove(SERVICE_NAME_LABEL));
        // No stage reads a slice's annotations; its controller stamps each slice with one.
        metadata.annotations = None;
        EndpointSlice {
            metadata,
            service_name,
            address_type,
            endpoints,
            ports,
        }
    }
}

impl From<WatchedEndpointSlice> for EndpointSlice {
    fn from(watched: WatchedEndpointSlice) -> Self {
        let ListedEndpointSlice {
            metadata,
            address_type,
            mut endpoints,
            mut ports,
        } = watched;
        for endpoint in endpoints.iter_mut().flatten() {
            endpoint.addresses.shrink_to_fit();
        }
        crate::fit::fit_list(&mut endpoints);
        crate::fit::fit_list(&mut ports);
        ListedEndpointSlice {
            metadata: StoredMeta::of(Kind::EndpointSlice, metadata),
            address_type,
            endpoints,
            ports,
        }
        .into()
    }
}

/// One endpoint: its addresses, whether it is ready, and the pod behind it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// The endpoint's addresses (one, in practice).
    pub addresses: Vec<String>,
    /// Readiness; an absent `ready` means ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<EndpointConditions>,
    /// What the endpoint is (a Pod, for blue-green groups). Boxed: most slices written by
    /// hand have none, and a cluster's have one each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<Box<TargetRef>>,
}

/// The part of an endpoint's `targetRef` that is read: which object it names.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TargetRef {
    /// The kind (`Pod`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

crate::resource_impl::namespaced_resource!(
    WatchedEndpointSlice, group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice", plural: "endpointslices"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// An EndpointSlice as the API server lists it: everything not read is left out, and
    /// what is read is exactly what the generated type reads.
    #[test]
    fn keeps_what_is_read_of_a_listed_slice() {
        let listed = r#"{
          "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
          "metadata": {"name": "web-x7k2p", "namespace": "shop", "generateName": "web-",
            "labels": {"kubernetes.io/service-name": "web"},
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": "2026-01-01T00:00:00Z"}},
          "addressType": "IPv4",
          "endpoints": [
            {"addresses": ["10.1.2.3"], "conditions": {"ready": true, "serving": true, "terminating": false},
             "nodeName": "node-1", "zone": "zone-a", "hostname": "web-0",
             "hints": {"forZones": [{"name": "zone-a"}]},
             "targetRef": {"kind": "Pod", "name": "web-0", "namespace": "shop", "uid": "0d4a", "resourceVersion": "7"}},
            {"addresses": ["10.1.2.4"]}
          ],
          "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]
        }"#;
        let compact: EndpointSlice = serde_json::from_str(listed).expect("decodes");
        let watched: WatchedEndpointSlice = serde_json::from_str(listed).expect("decodes");
        assert_eq!(compact, EndpointSlice::from(watched));
        let mut full: k8s_openapi::api::discovery::v1::EndpointSlice =
            serde_json::from_str(listed).expect("decodes");
        let mut labels = full.metadata.labels.take().unwrap_or_default();
        assert_eq!(compact.service_name, labels.remove(SERVICE_NAME_LABEL));
        assert_eq!(compact.service_name.as_deref(), Some("web"));
        assert_eq!(compact.metadata.annotations, None);
        let decoded = crate::decode_manifest(listed, true);
        assert_eq!(
            decoded.objects,
            [crate::Object::EndpointSlice(compact.clone().into())]
        );
        assert_eq!(
            compact.metadata,
            StoredMeta::of(Kind::EndpointSlice, full.metadata)
        );
        assert_eq!(compact.address_type, full.address_type);
        assert_eq!(compact.ports, full.ports);
        let endpoints = compact.endpoints.expect("endpoints");
        let full_endpoints = full.endpoints.expect("endpoints");
        assert_eq!(endpoints.len(), 2);
        for (endpoint, full) in endpoints.iter().zip(&full_endpoints) {
            assert_eq!(endpoint.addresses, full.addresses);
            assert_eq!(endpoint.conditions, full.conditions);
            let full_ref = full.target_ref.as_ref();
            assert_eq!(
                endpoint.target_ref.as_deref(),
                full_ref
                    .map(|r| TargetRef {
                        kind: r.kind.clone(),
                        name: r.name.clone(),
                        namespace: r.namespace.clone(),
                    })
                    .as_ref()
            );
        }
        // What a cluster's many endpoints cost each, before their text.
        assert!(std::mem::size_of::<Endpoint>() <= 40);
    }

    /// A watched slice is kept for as long as it exists: its lists hold no spare room.
    #[test]
    fn a_watched_slice_is_stored_without_spare_room() {
        let listed = r#"{"metadata": {"name": "web-1", "namespace": "shop"}, "addressType": "IPv4",
          "endpoints": [{"addresses": ["10.1.2.3"]}, {"addresses": ["10.1.2.4"]}, {"addresses": ["10.1.2.5"]}],
          "ports": [{"name": "http", "port": 8080}]}"#;
        let watched: WatchedEndpointSlice = serde_json::from_str(listed).expect("decodes");
        // What serde leaves: the room the lists grew into.
        let grown = watched.endpoints.as_ref().map_or(0, Vec::capacity);
        assert!(grown > 3, "{grown}");
        let stored = EndpointSlice::from(watched);
        let endpoints = stored.endpoints.expect("endpoints");
        assert_eq!((endpoints.len(), endpoints.capacity()), (3, 3));
        for endpoint in &endpoints {
            assert_eq!(endpoint.addresses.capacity(), 1);
        }
        let ports = stored.ports.expect("ports");
        assert_eq!((ports.len(), ports.capacity()), (1, 1));
    }

    #[test]
    fn a_slice_without_its_address_type_is_refused() {
        let error = serde_json::from_str::<EndpointSlice>(r#"{"metadata": {"name": "a"}}"#)
            .expect_err("addressType is required");
        assert!(error.to_string().contains("addressType"), "{error}");
    }
}
