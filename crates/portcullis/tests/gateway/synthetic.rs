//! The synthetic Gateway API cluster the benchmarks measure attaches every route to both
//! listeners and routes each of its paths, as its Ingress twin does.

use std::process::Command;

use test_support::SyntheticCluster;

use crate::status::{attached_routes, condition, pair, status_documents, status_of};
use crate::write;

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

#[test]
fn the_synthetic_gateway_cluster_attaches_and_routes_every_service() {
    let services = 3;
    let mut cluster = SyntheticCluster::new(services, 1);
    cluster.gateway_api = true;
    cluster.certificate = Some(test_support::self_signed("synthetic", &["*.example.test"]));
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    write(
        &manifests,
        "namespaces.yaml",
        &cluster.namespace_manifests(),
    );
    write(&manifests, "services.yaml", &cluster.manifests(0..services));

    let documents = status_documents(&manifests);
    let gateway = status_of(&documents, "Gateway", "ns-0", "edge");
    assert_eq!(
        attached_routes(gateway),
        [("http".to_owned(), 3), ("https".to_owned(), 3)]
    );
    for index in 0..services {
        let route = status_of(
            &documents,
            "HTTPRoute",
            &cluster.namespace(index),
            &format!("svc-{index}"),
        );
        let conditions = &route["parents"][0]["conditions"];
        assert_eq!(condition(conditions, "Accepted"), pair("True", "Accepted"));
        assert_eq!(
            condition(conditions, "ResolvedRefs"),
            pair("True", "ResolvedRefs")
        );
    }

    let out = dir.path().join("out");
    let rendered = Command::new(BIN)
        .args(["render", "--bind-address", "127.0.0.1", "--manifests"])
        .arg(&manifests)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    let paths = "\
svc-0.ns-0.example.test#/ ns-0_svc-0_http
svc-0.ns-0.example.test#/api/ ns-0_svc-0_http
svc-1.ns-1.example.test#/ ns-1_svc-1_http
svc-1.ns-1.example.test#/api/ ns-1_svc-1_http
svc-2.ns-2.example.test#/ ns-2_svc-2_http
svc-2.ns-2.example.test#/api/ ns-2_svc-2_http
";
    for map in ["http-prefix.map", "https-prefix.map"] {
        let written = std::fs::read_to_string(out.join("maps").join(map)).unwrap();
        assert_eq!(written, paths, "{map}");
    }
}
