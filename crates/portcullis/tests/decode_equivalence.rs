//! The manifest decoder gives exactly what decoding with serde-saphyr alone gave: the same
//! objects, errors and ignored kinds, on synthetic clusters, the example and deployment
//! manifests and the fuzzer's corpus.

use std::path::Path;

use resources::{Decoded, decode_manifest, decode_manifest_with_serde_saphyr};
use test_support::SyntheticCluster;

fn assert_same(name: &str, text: &str, json: bool) {
    let decoded = decode_manifest(text, json);
    let reference = decode_manifest_with_serde_saphyr(text, json);
    let summary = |d: &Decoded| (d.objects.len(), d.errors.len(), d.ignored.len());
    assert_eq!(summary(&decoded), summary(&reference), "{name}");
    assert!(
        decoded.objects == reference.objects,
        "{name}: objects differ"
    );
    assert_eq!(decoded.errors, reference.errors, "{name}");
    assert_eq!(decoded.ignored, reference.ignored, "{name}");
}

#[test]
fn synthetic_clusters_decode_as_with_serde_saphyr() {
    for seed in [1, 7] {
        let mut cluster = SyntheticCluster::new(2000, seed);
        cluster.certificate = Some(test_support::self_signed(
            "synthetic wildcard",
            &["*.example.test"],
        ));
        assert_same("namespaces", &cluster.namespace_manifests(), false);
        let services = cluster.manifests(0..2000);
        assert_same("services", &services, false);
        assert!(decode_manifest(&services, false).objects.len() == 6000);
        cluster.gateway_api = true;
        assert_same("gateway", &cluster.namespace_manifests(), false);
        let routed = cluster.manifests(0..2000);
        assert_same("services with routes", &routed, false);
        let objects = decode_manifest(&routed, false).objects;
        let routes = objects
            .iter()
            .filter(|o| matches!(o, resources::Object::HttpRoute(_)))
            .count();
        assert_eq!((objects.len(), routes), (6000, 2000));
    }
}

#[test]
fn repository_manifests_decode_as_with_serde_saphyr() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut compared = 0;
    for directory in ["examples/manifests", "deploy", "fuzz/corpus/pipeline"] {
        let Ok(entries) = std::fs::read_dir(root.join(directory)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let json = path.extension().is_some_and(|e| e == "json");
            assert_same(&path.display().to_string(), &text, json);
            compared += 1;
        }
    }
    assert!(compared >= 10, "only {compared} files found");
}

/// Pods as a cluster holds them (spec and status whole, in both shapes) decode the same
/// both ways, are stored with their name, namespace and labels, and every endpoint's
/// `targetRef` names one of them.
#[test]
fn synthetic_pods_decode_as_with_serde_saphyr_and_back_every_endpoint() {
    for saved_by_kubectl in [false, true] {
        let mut cluster = SyntheticCluster::new(100, 3);
        cluster.with_pods = true;
        cluster.saved_by_kubectl = saved_by_kubectl;
        let services = cluster.manifests(0..100);
        assert_same("services with pods", &services, false);
        let objects = decode_manifest(&services, false).objects;
        let pods: std::collections::BTreeMap<(String, String), &resources::Pod> = objects
            .iter()
            .filter_map(|object| match object {
                resources::Object::Pod(pod) => Some((
                    (
                        pod.metadata.namespace.clone().unwrap_or_default(),
                        pod.metadata.name.clone().unwrap_or_default(),
                    ),
                    pod.as_ref(),
                )),
                _ => None,
            })
            .collect();
        let mut endpoints = 0;
        for object in &objects {
            let resources::Object::EndpointSlice(slice) = object else {
                continue;
            };
            for endpoint in slice.endpoints.iter().flatten() {
                let target = endpoint.target_ref.as_deref().expect("a targetRef");
                let key = (
                    target.namespace.clone().unwrap_or_default(),
                    target.name.clone().unwrap_or_default(),
                );
                let pod = pods.get(&key).expect("the Pod it names");
                let labels = pod.metadata.labels.as_ref().expect("labels");
                assert_eq!(labels.get("app"), slice.service_name.as_ref());
                endpoints += 1;
            }
        }
        assert_eq!(endpoints, pods.len(), "one Pod an endpoint");
        assert!(endpoints >= 200, "{endpoints}");
    }
}
