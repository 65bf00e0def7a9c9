//! Gateway API routing through a real HAProxy: Gateways of our GatewayClass, their HTTP
//! and HTTPS listeners, HTTPRoutes attached by parentRef, hostname intersection,
//! allowedRoutes, path matches, ReferenceGrants; and what is not served yet is reported.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use test_support::{EchoServer, Portcullis, backend, http_get, https_get, self_signed, tls_secret};

const GATEWAY: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: someone-else}
spec: {controllerName: example.com/another-controller}
---
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {access: granted}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners:
  - name: http
    protocol: HTTP
    port: 80
    allowedRoutes: {namespaces: {from: All}}
  - name: https
    protocol: HTTPS
    port: 443
    hostname: "*.secure.test"
    tls: {mode: Terminate, certificateRefs: [{name: secure-tls}]}
  - name: internal
    protocol: HTTP
    port: 80
    hostname: internal.test
  - name: labelled
    protocol: HTTP
    port: 80
    hostname: labelled.test
    allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {access: granted}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: foreign, namespace: default}
spec:
  gatewayClassName: someone-else
  listeners:
  - {name: http, protocol: HTTP, port: 80}
"#;

const ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [app.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: Exact, value: /exact}}]
    backendRefs: [{name: other, port: 80}]
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata: {name: secure, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https}]
  hostnames: [shop.secure.test, shop.elsewhere.test]
  rules:
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ignored, namespace: default}
spec:
  parentRefs: [{name: foreign}]
  hostnames: [foreign.test]
  rules:
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: team, namespace: team}
spec:
  parentRefs:
  - {name: web, namespace: default, sectionName: http}
  hostnames: [team.test]
  rules:
  - backendRefs: [{name: other, namespace: default, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: listeners, namespace: team}
spec:
  parentRefs:
  - {name: web, namespace: default, sectionName: internal}
  - {name: web, namespace: default, sectionName: labelled}
  rules:
  - backendRefs: [{name: other, namespace: default, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: unsupported, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [unsupported.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: x-canary, value: "1"}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /plain}}]
    backendRefs: [{name: app, port: 80}]
"#;

const GRANT: &str = r#"
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: team-may-use-other, namespace: default}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team}]
  to: [{group: "", kind: Service, name: other}]
"#;

/// Who answers: the echo server's name, or the status code.
fn answer(port: u16, host: &str, path: &str) -> String {
    match http_get(port, host, path) {
        Ok(r) if r.status == 200 => r.server().unwrap_or_default(),
        Ok(r) => r.status.to_string(),
        Err(err) => format!("error: {err}"),
    }
}

fn write(dir: &Path, file: &str, text: &str) {
    let temporary = dir.join(format!(".{file}.tmp"));
    std::fs::write(&temporary, text).unwrap();
    std::fs::rename(&temporary, dir.join(file)).unwrap();
}

#[test]
fn http_routes_attach_to_our_gateways_listeners_and_route_by_host_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let servers: Vec<EchoServer> = ["app", "api", "other"]
        .iter()
        .map(|name| EchoServer::start(name).unwrap())
        .collect();
    let mut objects = String::new();
    for server in &servers {
        objects += &backend(
            "default",
            server_name(server, &servers),
            80,
            None,
            &[(server.port, true)],
        );
    }
    let (cert, key) = self_signed("secure wildcard", &["*.secure.test"]);
    objects += &tls_secret("default", "secure-tls", &cert, &key);
    objects += GATEWAY;
    objects += ROUTES;
    write(&manifests, "all.yaml", &objects);
    let mut p = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    let port = p.http_port;

    // Path matches, as the route's rules say.
    let cases = [
        ("app.test", "/api", "api"),
        ("app.test", "/api/users", "api"),
        ("app.test", "/apix", "app"),
        ("app.test", "/exact", "other"),
        ("app.test", "/exact/more", "app"),
        ("app.test", "/", "app"),
        ("APP.test:80", "/api", "api"),
        // A route on our class's Gateway only.
        ("foreign.test", "/", "404"),
        // An HTTPS-only listener's route is not served on plain HTTP.
        ("shop.secure.test", "/", "404"),
        // No intersection with the listener hostname.
        ("shop.elsewhere.test", "/", "404"),
        // The listener's allowedRoutes is Same: the team namespace is not admitted.
        ("internal.test", "/", "404"),
        // Unsupported matches are left out, the rest of the route is served.
        ("unsupported.test", "/", "404"),
        ("unsupported.test", "/plain", "app"),
    ];
    for (host, path, expected) in cases {
        assert_eq!(
            answer(port, host, path),
            expected,
            "{host}{path}\n{}",
            p.log()
        );
    }

    // HTTPS: the listener's certificate by SNI, the route behind it.
    let secure = https_get(p.https_port, "shop.secure.test", "shop.secure.test", "/").unwrap();
    assert_eq!(secure.certificate_cn, "secure wildcard");
    assert_eq!(secure.response.server().as_deref(), Some("app"));

    // Cross-namespace backend: refused without a ReferenceGrant, served with one.
    assert_eq!(answer(port, "team.test", "/"), "404", "{}", p.log());
    let log = p.log();
    assert!(
        log.contains("HTTPRoute team/team: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace default allows this route to use Service other"),
        "{log}"
    );
    assert!(log.contains("HTTPRoute default/unsupported: spec.rules[0].matches[0]: header, query-parameter, method and regular-expression matches are not supported yet"), "{log}");
    assert!(log.contains("HTTPRoute team/listeners: spec.parentRefs[0]: no listener of Gateway default/web accepts this route"), "{log}");
    write(&manifests, "grant.yaml", GRANT);
    p.wait_until(Duration::from_secs(10), |p| {
        answer(p.http_port, "team.test", "/") == "other"
    })
    .unwrap();
    // The Selector listener admits the team namespace by its label (the route takes the
    // listener's hostname); the Same listener does not.
    assert_eq!(answer(port, "labelled.test", "/"), "other");
    assert_eq!(answer(port, "internal.test", "/"), "404");

    // The Gateway's class changes hands: its routes go away.
    let foreign = GATEWAY.replace(
        "gatewayClassName: portcullis",
        "gatewayClassName: someone-else",
    );
    let objects = objects.replace(GATEWAY, &foreign);
    write(&manifests, "all.yaml", &objects);
    p.wait_until(Duration::from_secs(10), |p| {
        answer(p.http_port, "app.test", "/") == "404"
    })
    .unwrap();
    assert_eq!(answer(port, "team.test", "/"), "404");
}

fn server_name<'a>(server: &EchoServer, all: &'a [EchoServer]) -> &'a str {
    let index = all.iter().position(|s| s.port == server.port).unwrap();
    ["app", "api", "other"][index]
}
