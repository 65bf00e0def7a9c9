//! Object metadata as the most numerous kinds store it, and one borrowed view of any
//! kind's metadata.
//!
//! The generated `ObjectMeta` is 360 bytes before any of its text, most of it fields no
//! stage reads (field managers, owners, finalizers, deletion times). A cluster's
//! Services, EndpointSlices, Ingresses and Pods are counted in tens of thousands, so they
//! keep [`StoredMeta`] instead: only what some stage reads. Decoding a manifest builds it
//! directly; Kubernetes mode watches a type with the generated metadata (kube-rs needs
//! one to resume a watch) and converts each object as it arrives.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

use crate::Kind;

/// An object's metadata as stored: what some stage reads, nothing else.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMeta {
    /// The name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The namespace (none for a cluster-scoped kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The identity events name the object by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The version a status is written against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// The spec's generation, which statuses report as observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// When the object was created: the older of two conflicting objects wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// The annotations (kubectl's last-applied copy left out), kept only for a kind whose
    /// annotations some stage reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// The labels, kept only for a kind whose labels some stage reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
}

impl StoredMeta {
    /// What a `kind`'s object keeps of the metadata it was listed with: the fields read,
    /// less kubectl's last-applied copy and, where no stage reads them, the labels and
    /// the annotations (what decoding a manifest leaves out too).
    pub fn of(kind: Kind, mut listed: ObjectMeta) -> Self {
        crate::drop_unread_metadata(kind, &mut listed);
        let ObjectMeta {
            name,
            namespace,
            uid,
            resource_version,
            generation,
            creation_timestamp,
            annotations,
            labels,
            ..
        } = listed;
        Self {
            name,
            namespace,
            uid,
            resource_version,
            generation,
            creation_timestamp,
            annotations,
            labels,
        }
    }
}

/// The metadata any stored object has, borrowed: what [`crate::Object::metadata`] lends,
/// whichever of the two shapes the object keeps.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MetaRef<'a> {
    /// The name.
    pub name: Option<&'a str>,
    /// The namespace.
    pub namespace: Option<&'a str>,
    /// The identity events name the object by.
    pub uid: Option<&'a str>,
    /// The spec's generation.
    pub generation: Option<i64>,
    /// When the object was created.
    pub creation_timestamp: Option<&'a Time>,
    /// The annotations.
    pub annotations: Option<&'a BTreeMap<String, String>>,
    /// The labels, where kept.
    pub labels: Option<&'a BTreeMap<String, String>>,
}

/// Both shapes lend the same fields, by the same names.
macro_rules! lend_metadata {
    ($shape:ty) => {
        impl<'a> From<&'a $shape> for MetaRef<'a> {
            fn from(meta: &'a $shape) -> Self {
                Self {
                    name: meta.name.as_deref(),
                    namespace: meta.namespace.as_deref(),
                    uid: meta.uid.as_deref(),
                    generation: meta.generation,
                    creation_timestamp: meta.creation_timestamp.as_ref(),
                    annotations: meta.annotations.as_ref(),
                    labels: meta.labels.as_ref(),
                }
            }
        }
    };
}

lend_metadata!(StoredMeta);
lend_metadata!(ObjectMeta);

#[cfg(test)]
mod tests {
    use super::*;

    /// What a listed object keeps is what decoding its manifest keeps, and every field
    /// some stage reads survives.
    #[test]
    fn a_listed_objects_metadata_keeps_what_decoding_keeps() {
        let full = serde_json::json!({
            "name": "web", "namespace": "shop", "uid": "d3b0", "resourceVersion": "7",
            "generation": 3, "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"app": "web"},
            "annotations": {crate::LAST_APPLIED_ANNOTATION: "{}", "example.com/kept": "yes"},
            "managedFields": [{"manager": "kubectl"}],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "o", "uid": "1"}],
            "finalizers": ["a/b"], "generateName": "we", "selfLink": "/api/v1/x",
        });
        for (kind, api_version) in [
            (Kind::Service, "v1"),
            (Kind::Ingress, "networking.k8s.io/v1"),
        ] {
            let listed: ObjectMeta = serde_json::from_value(full.clone()).expect("metadata");
            let stored = StoredMeta::of(kind, listed);
            let text = format!(
                "apiVersion: {api_version}\nkind: {}\nmetadata: {full}\n",
                kind.name()
            );
            let decoded = crate::decode_manifest(&text, false);
            assert_eq!(decoded.errors, vec![], "{kind:?}");
            let [object] = decoded.objects.as_slice() else {
                panic!("one object expected: {decoded:?}");
            };
            assert_eq!(object.metadata(), MetaRef::from(&stored), "{kind:?}");
            assert_eq!(stored.uid.as_deref(), Some("d3b0"));
            assert_eq!(stored.resource_version.as_deref(), Some("7"));
            assert_eq!(stored.generation, Some(3));
            assert!(stored.creation_timestamp.is_some());
            let annotations = stored.annotations.as_ref().expect("annotations");
            assert_eq!(annotations.keys().collect::<Vec<_>>(), ["example.com/kept"]);
            assert_eq!(stored.labels, None, "no stage reads a {kind:?}'s labels");
        }
    }

    /// The point of the type: about half the generated one, in every stored object.
    #[test]
    fn stored_metadata_is_about_half_the_generated_type() {
        assert_eq!(std::mem::size_of::<ObjectMeta>(), 360);
        assert!(std::mem::size_of::<StoredMeta>() <= 200);
    }
}
