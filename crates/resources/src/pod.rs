//! Pods as they are stored: their metadata alone. A Pod is read only for its labels
//! (blue-green groups), and the generated type is 2,416 bytes before any of its text;
//! a cluster holds more Pods than anything else but endpoints.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::MetaRef;

/// A Pod: its name, namespace and labels (decoding skips the rest unbuilt).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Pod {
    /// What is read of the metadata.
    pub metadata: PodMeta,
}

/// What is read of a Pod's metadata: not even its annotations, which on a cluster's
/// Pods are often many and large.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PodMeta {
    /// The name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
}

impl<'a> From<&'a PodMeta> for MetaRef<'a> {
    fn from(meta: &'a PodMeta) -> Self {
        MetaRef {
            name: meta.name.as_deref(),
            namespace: meta.namespace.as_deref(),
            labels: meta.labels.as_ref(),
            ..MetaRef::default()
        }
    }
}

/// A Pod as Kubernetes mode watches it: its metadata (the spec and status of each listed
/// Pod are skipped unbuilt), converted as it arrives.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WatchedPod {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
}

impl From<WatchedPod> for Pod {
    fn from(watched: WatchedPod) -> Self {
        let ObjectMeta {
            name,
            namespace,
            labels,
            ..
        } = watched.metadata;
        Pod {
            metadata: PodMeta {
                name,
                namespace,
                labels,
            },
        }
    }
}

crate::resource_impl::namespaced_resource!(
    WatchedPod, group: "", version: "v1", kind: "Pod", plural: "pods"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_pod_keeps_its_name_namespace_and_labels() {
        let listed = r#"{
          "apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "web-0", "namespace": "shop", "uid": "0d4a",
            "labels": {"group": "blue"}, "ownerReferences": [{"apiVersion": "apps/v1",
              "kind": "ReplicaSet", "name": "web-7d", "uid": "1"}]},
          "spec": {"containers": [{"name": "web", "image": "web:1"}], "nodeName": "node-1"},
          "status": {"phase": "Running", "podIP": "10.1.2.3"}
        }"#;
        let watched: WatchedPod = serde_json::from_str(listed).expect("decodes");
        let pod = Pod::from(watched);
        let decoded = crate::decode_manifest(listed, true);
        assert_eq!(decoded.errors, vec![]);
        let [crate::Object::Pod(from_manifest)] = decoded.objects.as_slice() else {
            panic!("one Pod expected: {decoded:?}");
        };
        assert_eq!(**from_manifest, pod);
        assert_eq!(pod.metadata.name.as_deref(), Some("web-0"));
        assert_eq!(pod.metadata.namespace.as_deref(), Some("shop"));
        let labels = pod.metadata.labels.as_ref().expect("labels");
        assert_eq!(labels.get("group").map(String::as_str), Some("blue"));
        assert!(std::mem::size_of::<Pod>() <= 112);
    }
}
