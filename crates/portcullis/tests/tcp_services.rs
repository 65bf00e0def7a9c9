//! TCP services through a real HAProxy: the `tcp-services` ConfigMap and Ingresses with
//! `tcp-service-port`, each port a frontend of its own. One controller serves every case
//! here: a plain port whose endpoints change live under a held connection, a port
//! terminating TLS that chooses backends by SNI (each name with its certificate), and a
//! port another frontend holds, refused and reported.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use test_support::{
    EchoServer, KeepAliveClient, Portcullis, backend, free_port, https_get, self_signed,
    tls_secret, write_manifest,
};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn tcp_configmap(entries: &[(u16, String)]) -> String {
    let mut text =
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: tcp, namespace: ops}\ndata:\n"
            .to_owned();
    for (port, value) in entries {
        text += &format!("  \"{port}\": \"{value}\"\n");
    }
    text
}

/// The echo server that answered, over a new connection to `port`.
fn answered_by(port: u16) -> String {
    let mut client = KeepAliveClient::new(port);
    match client.get("any.test", "/") {
        Ok(response) => response.server().unwrap_or_else(|| response.body.clone()),
        Err(err) => format!("error: {err}"),
    }
}

#[test]
fn tcp_services_carry_bytes_change_endpoints_live_and_choose_by_terminated_sni() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let (first, second) = (
        EchoServer::start("db-1").unwrap(),
        EchoServer::start("db-2").unwrap(),
    );
    let (alpha, beta, rest) = (
        EchoServer::start("alpha").unwrap(),
        EchoServer::start("beta").unwrap(),
        EchoServer::start("rest").unwrap(),
    );
    let (plain_port, tls_port, clash_port) = (free_port(), free_port(), free_port());
    write_manifest(
        &manifests,
        "db.yaml",
        &backend("data", "db", 5432, None, &[(first.port, true)]),
    )
    .unwrap();
    let mut objects = String::new();
    for (name, server) in [("alpha", &alpha), ("beta", &beta), ("rest", &rest)] {
        objects += &backend("apps", name, 7000, None, &[(server.port, true)]);
    }
    let (alpha_cert, alpha_key) = self_signed("alpha.tcp.test", &["alpha.tcp.test"]);
    let (beta_cert, beta_key) = self_signed("beta.tcp.test", &["beta.tcp.test"]);
    objects += &tls_secret("apps", "alpha-tls", &alpha_cert, &alpha_key);
    objects += &tls_secret("apps", "beta-tls", &beta_cert, &beta_key);
    objects += &format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: apps\n  namespace: apps\n  annotations: {{haproxy-ingress.github.io/tcp-service-port: \"{tls_port}\"}}\nspec:\n  tls:\n  - {{hosts: [alpha.tcp.test], secretName: alpha-tls}}\n  - {{hosts: [beta.tcp.test], secretName: beta-tls}}\n  rules:\n  - host: alpha.tcp.test\n    http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: alpha, port: {{number: 7000}}}}}}}}]}}\n  - host: beta.tcp.test\n    http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: beta, port: {{number: 7000}}}}}}}}]}}\n  - http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: rest, port: {{number: 7000}}}}}}}}]}}\n"
    );
    write_manifest(&manifests, "apps.yaml", &objects).unwrap();
    // The ConfigMap's port, and a second entry on the HTTP frontend's port; the
    // controller's HTTP port is known only once it started, so the clash comes later.
    write_manifest(
        &manifests,
        "tcp.yaml",
        &tcp_configmap(&[(plain_port, "data/db:5432".to_owned())]),
    )
    .unwrap();
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &[
            "--tcp-services-configmap",
            "ops/tcp",
            "--reload-interval",
            "200ms",
        ],
    )
    .unwrap();

    // The plain port carries the bytes of one connection to the Service's endpoint.
    let mut held = KeepAliveClient::new(plain_port);
    let reply = held.get("db.test", "/first").unwrap();
    assert_eq!(reply.server().as_deref(), Some("db-1"), "{}", reply.body);
    let config = std::fs::read_to_string(dir.path().join("state/haproxy.cfg")).unwrap();
    assert!(
        config.contains(&format!("frontend tcp_{plain_port}")),
        "{config}"
    );

    // A second endpoint is added live: new connections reach it, the held one is still
    // served, and HAProxy was not reloaded.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    write_manifest(
        &manifests,
        "db.yaml",
        &backend(
            "data",
            "db",
            5432,
            None,
            &[(first.port, true), (second.port, true)],
        ),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            (0..4).any(|_| answered_by(plain_port) == "db-2")
        })
        .unwrap();
    let again = held.get("db.test", "/again").unwrap();
    assert_eq!(again.server().as_deref(), Some("db-1"), "{}", again.body);
    assert_eq!(
        held.retried_on_closed_idle_connection, 0,
        "the held connection was kept"
    );
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "an endpoint change of a TCP service is applied without a reload"
    );

    // The TLS port: HAProxy terminates with each name's certificate and chooses its
    // backend; a name no rule has goes to the rule without a host.
    for (sni, certificate, server) in [
        ("alpha.tcp.test", "alpha.tcp.test", "alpha"),
        ("beta.tcp.test", "beta.tcp.test", "beta"),
        ("other.tcp.test", "alpha.tcp.test", "rest"),
    ] {
        let reply = https_get(tls_port, sni, sni, "/").unwrap();
        assert_eq!(
            (
                reply.certificate_cn.as_str(),
                reply.response.server().as_deref()
            ),
            (certificate, Some(server)),
            "SNI {sni}"
        );
    }

    // A ConfigMap entry on the HTTP frontend's port is refused and reported; the other
    // entry keeps being served.
    write_manifest(
        &manifests,
        "tcp.yaml",
        &tcp_configmap(&[
            (plain_port, "data/db:5432".to_owned()),
            (portcullis.http_port, "data/db:5432".to_owned()),
            (clash_port, "data/missing:5432".to_owned()),
        ]),
    )
    .unwrap();
    let http_port = portcullis.http_port;
    portcullis
        .wait_until(Duration::from_secs(20), |p| {
            p.log()
                .contains(&format!("port {http_port} is one of HAProxy's HTTP ports"))
        })
        .unwrap();
    // The entry whose Service does not exist refuses its connections: the port is
    // bound, and closed on the client without an answer.
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            std::fs::read_to_string(dir.path().join("state/haproxy.cfg"))
                .is_ok_and(|c| c.contains(&format!("frontend tcp_{clash_port}")))
        })
        .unwrap();
    assert!(answered_by(clash_port).starts_with("error"));
    assert!(["db-1", "db-2"].contains(&answered_by(plain_port).as_str()));
    let config = std::fs::read_to_string(dir.path().join("state/haproxy.cfg")).unwrap();
    assert!(
        !config.contains(&format!("frontend tcp_{http_port}")),
        "{config}"
    );
}

#[test]
fn gateway_tcp_routes_split_by_weight_and_tls_routes_are_terminated_on_a_tls_listener() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let servers: Vec<EchoServer> = ["heavy", "light", "never", "alpha", "light-2"]
        .iter()
        .map(|name| EchoServer::start(name).unwrap())
        .collect();
    let (tcp_port, tls_port) = (free_port(), free_port());
    // The Services and their endpoints, `light`'s on the server given.
    let services = |light: &EchoServer| {
        let mut objects = String::new();
        for (name, server) in ["heavy", "light", "never", "alpha"].iter().zip(&servers) {
            let server = if *name == "light" { light } else { server };
            objects += &backend("default", name, 7000, None, &[(server.port, true)]);
        }
        objects
    };
    write_manifest(&manifests, "services.yaml", &services(&servers[1])).unwrap();
    let mut objects = String::new();
    let (cert, key) = self_signed("gateway listener", &["*.tls.test"]);
    objects += &tls_secret("default", "listener-tls", &cert, &key);
    objects += &format!(
        "---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {{name: portcullis}}
spec: {{controllerName: portcullis.dev/gateway-controller}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {{name: edge, namespace: default}}
spec:
  gatewayClassName: portcullis
  listeners:
  - {{name: tcp, protocol: TCP, port: {tcp_port}}}
  - {{name: tls, protocol: TLS, port: {tls_port}, hostname: '*.tls.test', tls: {{mode: Terminate, certificateRefs: [{{name: listener-tls}}]}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {{name: split, namespace: default}}
spec:
  parentRefs: [{{name: edge, sectionName: tcp}}]
  rules: [{{backendRefs: [{{name: heavy, port: 7000, weight: 3}}, {{name: light, port: 7000, weight: 1}}, {{name: never, port: 7000, weight: 0}}]}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {{name: alpha, namespace: default}}
spec:
  parentRefs: [{{name: edge, sectionName: tls}}]
  hostnames: [alpha.tls.test]
  rules: [{{backendRefs: [{{name: alpha, port: 7000}}]}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {{name: dns, namespace: default}}
spec:
  parentRefs: [{{name: edge}}]
  rules: [{{backendRefs: [{{name: alpha, port: 53}}]}}]
"
    );
    write_manifest(&manifests, "gateway.yaml", &objects).unwrap();
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();

    // Connections are split 3:1; a weight of 0 takes none. Of 200 connections the light
    // backend takes 50 on average (standard deviation 6.1): the bounds are four deviations
    // away, so the check fails by chance about once in 15,000 runs.
    let mut counts = std::collections::BTreeMap::<String, u32>::new();
    for _ in 0..200 {
        *counts.entry(answered_by(tcp_port)).or_default() += 1;
    }
    let (heavy, light) = (
        counts.get("heavy").copied().unwrap_or(0),
        counts.get("light").copied().unwrap_or(0),
    );
    assert_eq!(heavy + light, 200, "{counts:?}");
    assert!((26..=75).contains(&light), "about 3:1: {counts:?}");

    // A connection held open through the listener while `light`'s endpoint is replaced:
    // new connections reach the new endpoint, the held one is still served by the
    // server it had, and HAProxy is not reloaded.
    let mut held = KeepAliveClient::new(tcp_port);
    let first = held.get("any.test", "/held").unwrap().server();
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    write_manifest(&manifests, "services.yaml", &services(&servers[4])).unwrap();
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            (0..8).any(|_| answered_by(tcp_port) == "light-2")
        })
        .unwrap();
    let again = held.get("any.test", "/held").unwrap();
    assert_eq!(again.server(), first, "{}", again.body);
    assert_eq!(
        held.retried_on_closed_idle_connection, 0,
        "the held connection was kept"
    );
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "an endpoint change behind a TCP listener is applied without a reload"
    );

    // The TLS listener terminates with its own certificate; the route's name reaches its
    // backend, a name of the listener no route has is refused.
    let reply = https_get(tls_port, "alpha.tls.test", "alpha.tls.test", "/").unwrap();
    assert_eq!(
        (
            reply.certificate_cn.as_str(),
            reply.response.server().as_deref()
        ),
        ("gateway listener", Some("alpha"))
    );
    assert!(https_get(tls_port, "beta.tls.test", "beta.tls.test", "/").is_err());

    // The UDPRoute is reported, never silently dropped.
    assert!(
        portcullis.log().contains("UDPRoutes are not served"),
        "{}",
        portcullis.log()
    );
}
