//! BackendTLSPolicy through a real HAProxy, the upstream conformance cases that observe
//! traffic (BackendTLSPolicy, its SAN validation, InvalidCACertificateRef, the CA
//! ConfigMap's reconciliation): a backend that terminates TLS with a certificate a CA
//! signed is reached over TLS with the policy's hostname as SNI; a certificate that does
//! not verify (another CA, another name) or a CA that cannot be read is answered 503.

use std::time::Duration;

use test_support::{
    Portcullis, TlsEchoServer, answer, backend, ca_configmap, http_get, server_pki,
};

use crate::status::{condition, pair, status_of};
use crate::write;

const WAIT: Duration = Duration::from_secs(20);

const GATEWAY: &str = "
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners: [{name: http, protocol: HTTP, port: 80}]
";

/// The Services the route sends `/<name>` to, each on the one TLS backend.
const CASES: [&str; 7] = [
    "good",
    "host-mismatch",
    "cert-mismatch",
    "san",
    "missing-ca",
    "reconcile",
    "scaled",
];

/// A BackendTLSPolicy for Service `service` (its port `btls`).
fn policy(service: &str, ca: &str, hostname: &str, extra: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {{name: {service}, namespace: default}}\nspec:\n  targetRefs: [{{group: '', kind: Service, name: {service}, sectionName: btls}}]\n  validation:\n    caCertificateRefs: [{{group: '', kind: ConfigMap, name: {ca}}}]\n    hostname: {hostname}\n{extra}"
    )
}

fn route() -> String {
    let rules: String = CASES
        .iter()
        .map(|name| {
            format!(
                "  - matches: [{{path: {{type: Exact, value: /{name}}}}}]\n    backendRefs: [{{name: {name}, port: 443}}]\n"
            )
        })
        .collect();
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: r, namespace: default}}\nspec:\n  parentRefs: [{{name: edge}}]\n  hostnames: [abc.example.com]\n  rules:\n{rules}"
    )
}

/// `(Accepted, ResolvedRefs)` of a policy, each as `(status, reason)`, from `/status`.
fn policy_conditions(p: &Portcullis, name: &str) -> Vec<(String, String)> {
    let served = p.admin("/status").unwrap();
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&served.body).unwrap();
    let status = status_of(&documents, "BackendTLSPolicy", "default", name);
    let ancestor = &status["ancestors"][0];
    assert_eq!(ancestor["ancestorRef"]["name"], "edge", "{status}");
    assert_eq!(
        ancestor["controllerName"], "portcullis.dev/gateway-controller",
        "{status}"
    );
    let conditions = &ancestor["conditions"];
    vec![
        condition(conditions, "Accepted"),
        condition(conditions, "ResolvedRefs"),
    ]
}

#[test]
fn policies_reach_tls_backends_verified_and_refuse_what_does_not_verify() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let pki = server_pki("backend CA", &["abc.example.com", "san.example.com"]);
    let stranger = server_pki("another CA", &["abc.example.com"]);
    let tls_backend = TlsEchoServer::start_signed("tls-backend", &pki).unwrap();

    let mut objects = GATEWAY.to_owned();
    for name in CASES.iter().filter(|name| **name != "scaled") {
        objects += &backend(
            "default",
            name,
            443,
            Some("btls"),
            &[(tls_backend.port, true)],
        );
    }
    objects += &route();
    objects += &ca_configmap("default", "ca", &pki.ca_pem);
    objects += &ca_configmap("default", "stranger-ca", &stranger.ca_pem);
    objects += &policy("good", "ca", "abc.example.com", "");
    objects += &policy("host-mismatch", "ca", "mismatch.example.com", "");
    objects += &policy("cert-mismatch", "stranger-ca", "abc.example.com", "");
    objects += &policy(
        "san",
        "ca",
        "abc.example.com",
        "    subjectAltNames: [{type: Hostname, hostname: san.example.com}]\n",
    );
    objects += &policy("missing-ca", "nosuch", "abc.example.com", "");
    objects += &policy("reconcile", "late", "abc.example.com", "");
    objects += &policy("scaled", "ca", "abc.example.com", "");
    write(&manifests, "all.yaml", &objects);
    // A Service without endpoints yet: its TLS server comes later, added live.
    write(
        &manifests,
        "scaled.yaml",
        &backend("default", "scaled", 443, Some("btls"), &[]),
    );
    let mut p = crate::start(dir.path(), &manifests);
    let port = p.http_port;

    // Reached over TLS, verified, with the policy's hostname as SNI.
    let good = http_get(port, "abc.example.com", "/good").unwrap();
    assert_eq!(good.status, 200, "{}\n{}", good.body, p.log());
    let echo = good.echo().unwrap();
    assert_eq!(echo["server"], "tls-backend");
    assert_eq!(echo["sni"], "abc.example.com", "{echo}");
    // One Hostname subjectAltName is the name verified; the hostname stays the SNI.
    let san = http_get(port, "abc.example.com", "/san").unwrap();
    assert_eq!(san.status, 200, "{}\n{}", san.body, p.log());
    assert_eq!(san.echo().unwrap()["sni"], "abc.example.com");
    // A certificate for another name, one another CA signed, or a CA that cannot be
    // read: refused, never served unverified.
    for refused in [
        "/host-mismatch",
        "/cert-mismatch",
        "/missing-ca",
        "/reconcile",
    ] {
        assert_eq!(
            answer(port, "abc.example.com", refused),
            "503",
            "{refused}\n{}",
            p.log()
        );
    }
    let accepted = vec![pair("True", "Accepted"), pair("True", "ResolvedRefs")];
    for name in ["good", "host-mismatch", "cert-mismatch", "san"] {
        assert_eq!(policy_conditions(&p, name), accepted, "{name}");
    }
    let no_ca = vec![
        pair("False", "NoValidCACertificate"),
        pair("False", "InvalidCACertificateRef"),
    ];
    assert_eq!(policy_conditions(&p, "missing-ca"), no_ca);
    assert_eq!(policy_conditions(&p, "reconcile"), no_ca);

    // The CA ConfigMap appears: the policy is accepted and the backend reached; its
    // ca.crt emptied: refused again (conformance: "Changing the content of a ConfigMap
    // used by BackendTLSPolicy as CA certificate should be reconciled").
    write(
        &manifests,
        "late.yaml",
        &ca_configmap("default", "late", &pki.ca_pem),
    );
    p.wait_until(WAIT, |_| {
        answer(port, "abc.example.com", "/reconcile") == "tls-backend"
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", p.log()));
    assert_eq!(policy_conditions(&p, "reconcile"), accepted);
    write(
        &manifests,
        "late.yaml",
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: late, namespace: default}\ndata: {ca.crt: ''}\n",
    );
    p.wait_until(WAIT, |_| {
        answer(port, "abc.example.com", "/reconcile") == "503"
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", p.log()));
    assert_eq!(policy_conditions(&p, "reconcile"), no_ca);
    // The other backends were not disturbed.
    assert_eq!(answer(port, "abc.example.com", "/good"), "tls-backend");

    // A server added to a policy's backend is verified like one loaded from the file.
    assert_eq!(answer(port, "abc.example.com", "/scaled"), "503");
    write(
        &manifests,
        "scaled.yaml",
        &backend(
            "default",
            "scaled",
            443,
            Some("btls"),
            &[(tls_backend.port, true)],
        ),
    );
    p.wait_until(WAIT, |_| {
        answer(port, "abc.example.com", "/scaled") == "tls-backend"
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", p.log()));
    let scaled = http_get(port, "abc.example.com", "/scaled").unwrap();
    assert_eq!(scaled.echo().unwrap()["sni"], "abc.example.com");
}
