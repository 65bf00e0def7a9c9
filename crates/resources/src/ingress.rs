//! Ingresses (`networking.k8s.io/v1`) as they are stored: the generated spec and status,
//! with [`StoredMeta`] for the metadata. A manifest decodes straight into it; Kubernetes
//! mode watches the generated type ([`WatchedIngress`]) and converts each.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::{IngressSpec, IngressStatus, Kind, StoredMeta};

/// An Ingress as the generated type lists and watches it.
pub type WatchedIngress = k8s_openapi::api::networking::v1::Ingress;

/// An Ingress.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Ingress {
    /// What is read of the metadata.
    pub metadata: StoredMeta,
    /// The spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<IngressSpec>,
    /// The status: the addresses published for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<IngressStatus>,
}

impl From<WatchedIngress> for Ingress {
    fn from(watched: WatchedIngress) -> Self {
        let mut spec = watched.spec;
        if let Some(spec) = &mut spec {
            for rule in spec.rules.iter_mut().flatten() {
                if let Some(http) = &mut rule.http {
                    http.paths.shrink_to_fit();
                }
            }
            for tls in spec.tls.iter_mut().flatten() {
                crate::fit::fit_list(&mut tls.hosts);
            }
            crate::fit::fit_list(&mut spec.rules);
            crate::fit::fit_list(&mut spec.tls);
        }
        // What a published Ingress's status lists (portcullis writes it, and the watch
        // brings it back).
        let mut status = watched.status;
        if let Some(balancer) = status.as_mut().and_then(|s| s.load_balancer.as_mut()) {
            crate::fit::fit_list(&mut balancer.ingress);
        }
        Ingress {
            metadata: StoredMeta::of(Kind::Ingress, watched.metadata),
            spec,
            status,
        }
    }
}

impl Ingress {
    /// The generated type, as the status writer compares and patches it: the identity,
    /// the version read and the status, without the spec (a status patch never carries
    /// one).
    pub fn for_status(&self) -> WatchedIngress {
        let StoredMeta {
            name,
            namespace,
            uid,
            resource_version,
            generation,
            ..
        } = &self.metadata;
        WatchedIngress {
            metadata: ObjectMeta {
                name: name.clone(),
                namespace: namespace.clone(),
                uid: uid.clone(),
                resource_version: resource_version.clone(),
                generation: *generation,
                ..ObjectMeta::default()
            },
            spec: None,
            status: self.status.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watched Ingress is kept for as long as it exists: its lists hold no spare room.
    #[test]
    fn a_watched_ingress_is_stored_without_spare_room() {
        let listed = r#"{"metadata": {"name": "web", "namespace": "shop"},
          "spec": {"tls": [{"hosts": ["web.example"], "secretName": "web"}],
            "rules": [{"host": "web.example", "http": {"paths": [
              {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
              {"path": "/api", "pathType": "Prefix", "backend": {"service": {"name": "api", "port": {"number": 80}}}}]}}]},
          "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}}"#;
        let watched: WatchedIngress = serde_json::from_str(listed).expect("decodes");
        let grown = watched.spec.as_ref().and_then(|s| s.rules.as_ref());
        assert!(grown.map_or(0, Vec::capacity) > 1);
        let stored = Ingress::from(watched);
        let spec = stored.spec.expect("spec");
        let rules = spec.rules.expect("rules");
        assert_eq!((rules.len(), rules.capacity()), (1, 1));
        let paths = &rules[0].http.as_ref().expect("http").paths;
        assert_eq!((paths.len(), paths.capacity()), (2, 2));
        let tls = spec.tls.expect("tls");
        assert_eq!((tls.len(), tls.capacity()), (1, 1));
        let hosts = tls[0].hosts.as_ref().expect("hosts");
        assert_eq!((hosts.len(), hosts.capacity()), (1, 1));
        let balancer = stored.status.and_then(|s| s.load_balancer);
        let published = balancer
            .and_then(|b| b.ingress)
            .expect("published addresses");
        assert_eq!((published.len(), published.capacity()), (1, 1));
    }

    /// An Ingress as the API server lists it keeps the same spec and status either way,
    /// and the metadata that decoding a manifest keeps.
    #[test]
    fn a_watched_ingress_becomes_what_its_manifest_decodes_to() {
        let listed = r#"{
          "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
          "metadata": {"name": "web", "namespace": "shop", "uid": "0d4a", "resourceVersion": "7",
            "generation": 2, "labels": {"app": "web"},
            "annotations": {"haproxy-ingress.github.io/timeout-server": "30s",
              "kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
          "spec": {"ingressClassName": "haproxy",
            "rules": [{"host": "web.example", "http": {"paths": [{"path": "/", "pathType": "Prefix",
              "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]},
          "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}
        }"#;
        let watched: WatchedIngress = serde_json::from_str(listed).expect("decodes");
        let stored = Ingress::from(watched.clone());
        let decoded = crate::decode_manifest(listed, true);
        assert_eq!(decoded.errors, vec![]);
        let [crate::Object::Ingress(from_manifest)] = decoded.objects.as_slice() else {
            panic!("one Ingress expected: {decoded:?}");
        };
        assert_eq!(**from_manifest, stored);
        assert_eq!(stored.spec, watched.spec);
        assert_eq!(stored.status, watched.status);
        assert_eq!(stored.metadata.labels, None);
        let for_status = stored.for_status();
        assert_eq!(for_status.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(for_status.metadata.name.as_deref(), Some("web"));
        assert_eq!(for_status.status, watched.status);
    }
}
