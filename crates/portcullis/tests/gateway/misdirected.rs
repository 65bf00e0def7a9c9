//! Listener isolation on the HTTPS frontend: a request belongs to the most specific
//! listener whose hostname matches it, and one whose `Host` belongs to another listener
//! than its TLS SNI is answered 421 Misdirected Request (the cases of the upstream
//! conformance test HTTPRouteHTTPSListenerDetectMisdirectedRequests).

use test_support::{EchoServer, backend, https_get, self_signed, tls_secret};

use crate::write;

const GATEWAY_CLASS: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
"#;

const GATEWAY_AND_ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: same-namespace-with-https-listener, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: listener-cert}]}}
  - {name: https-with-hostname, protocol: HTTPS, port: 443, hostname: second-example.org, tls: {certificateRefs: [{name: listener-cert}]}}
  - {name: https-with-wildcard-hostname, protocol: HTTPS, port: 443, hostname: "*.wildcard.org", tls: {certificateRefs: [{name: listener-cert}]}}
  - {name: https-with-hostname-matching-wildcard, protocol: HTTPS, port: 443, hostname: fourth-example.wildcard.org, tls: {certificateRefs: [{name: listener-cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-1, namespace: default}
spec:
  parentRefs: [{name: same-namespace-with-https-listener}]
  hostnames: [example.org]
  rules: [{matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}], backendRefs: [{name: v1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-2, namespace: default}
spec:
  parentRefs: [{name: same-namespace-with-https-listener, sectionName: https-with-hostname}]
  rules: [{matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}], backendRefs: [{name: v2, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-3, namespace: default}
spec:
  parentRefs: [{name: same-namespace-with-https-listener, sectionName: https-with-wildcard-hostname}]
  hostnames: [third-example.wildcard.org, fourth-example.wildcard.org]
  rules: [{matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}], backendRefs: [{name: v3, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-4, namespace: default}
spec:
  parentRefs: [{name: same-namespace-with-https-listener, sectionName: https-with-hostname-matching-wildcard}]
  hostnames: [third-example.wildcard.org, fourth-example.wildcard.org]
  rules: [{matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}], backendRefs: [{name: v1, port: 80}]}]
"#;

#[test]
fn a_host_of_another_listener_than_the_sni_is_misdirected_and_each_host_keeps_to_its_most_specific_listener()
 {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let servers: Vec<EchoServer> = ["v1", "v2", "v3"]
        .iter()
        .map(|name| EchoServer::start(name).unwrap())
        .collect();
    let mut objects = String::from(GATEWAY_CLASS);
    for (server, name) in servers.iter().zip(["v1", "v2", "v3"]) {
        objects += &backend("default", name, 80, None, &[(server.port, true)]);
    }
    let (cert, key) = self_signed(
        "listener certificate",
        &["example.org", "second-example.org", "*.wildcard.org"],
    );
    objects += &tls_secret("default", "listener-cert", &cert, &key);
    objects += GATEWAY_AND_ROUTES;
    write(&manifests, "all.yaml", &objects);
    let p = crate::start(dir.path(), &manifests);

    // (SNI, Host, the backend or the status expected)
    let cases = [
        ("example.org", "example.org", "v1"),
        ("example.org", "second-example.org", "421"),
        ("example.org", "unknown-example.org", "404"),
        ("second-example.org", "second-example.org", "v2"),
        ("second-example.org", "example.org", "421"),
        ("second-example.org", "unknown-example.org", "421"),
        (
            "third-example.wildcard.org",
            "third-example.wildcard.org",
            "v3",
        ),
        (
            "third-example.wildcard.org",
            "fourth-example.wildcard.org",
            "421",
        ),
        ("third-example.wildcard.org", "second-example.org", "421"),
        ("third-example.wildcard.org", "unknown-example.org", "421"),
        // The route of the wildcard listener names fourth-example too, but that host
        // belongs to the more specific listener and its route.
        (
            "fourth-example.wildcard.org",
            "fourth-example.wildcard.org",
            "v1",
        ),
        (
            "fourth-example.wildcard.org",
            "fifth-example.wildcard.org",
            "421",
        ),
        ("unknown-example.org", "example.org", "v1"),
        ("unknown-example.org", "unknown-example.org", "404"),
    ];
    for (sni, host, expected) in cases {
        let response = https_get(p.https_port, sni, host, "/detect-misdirected-requests")
            .unwrap()
            .response;
        let served = response
            .server()
            .unwrap_or_else(|| response.status.to_string());
        assert_eq!(served, expected, "SNI {sni}, Host {host}\n{}", p.log());
    }
}
