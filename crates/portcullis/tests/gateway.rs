//! Gateway API routing through a real HAProxy: Gateways of our GatewayClass, their HTTP
//! and HTTPS listeners, HTTPRoutes attached by parentRef, hostname intersection,
//! allowedRoutes, path matches, ReferenceGrants; and what is not served yet is reported.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use test_support::{EchoServer, Portcullis, answer, backend, https_get, self_signed, tls_secret};

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
  - name: alt
    protocol: HTTP
    port: ALT_PORT
  - name: kinds
    protocol: HTTP
    port: 80
    hostname: kinds.test
    allowedRoutes: {kinds: [{kind: GRPCRoute}]}
  - name: vaulted
    protocol: HTTPS
    port: 443
    hostname: vaulted.test
    tls: {certificateRefs: [{name: vault-tls, namespace: vault}]}
  - name: securealt
    protocol: HTTPS
    port: SECURE_PORT
    hostname: "*.secure.test"
    tls: {mode: Terminate, certificateRefs: [{name: secure-tls}]}
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
  parentRefs: [{name: web, sectionName: https}, {name: web, sectionName: securealt}]
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
  - matches: [{path: {type: PathPrefix, value: /}}]
    filters: [{type: RequestMirror, requestMirror: {backendRef: {name: api, port: 80}}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /plain}}]
    backendRefs: [{name: app, port: 80}]
"#;

const WILD_ROUTE: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: ["*.wild.test"]
  rules: [{backendRefs: [{name: other, port: 80}]}]
"#;

const MORE_ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: kinds, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: kinds}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: by-port, namespace: default}
spec:
  parentRefs: [{name: web, port: ALT_PORT}]
  hostnames: [byport.test]
  rules: [{backendRefs: [{name: other, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: vaulted, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: vaulted}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /elsewhere}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {scheme: http, hostname: app.test, path: {type: ReplaceFullPath, replaceFullPath: /landing}, statusCode: 302}
  - backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: gateways-may-use-certificates, namespace: vault}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
  to: [{group: "", kind: Secret, name: vault-tls}]
"#;

const DUAL_ROUTES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dual-http, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [dual.secure.test]
  rules: [{backendRefs: [{name: other, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dual-https, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https}]
  hostnames: [dual.secure.test]
  rules: [{backendRefs: [{name: api, port: 80}]}]
"#;

const ALT_ROUTE: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: alt, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: alt}]
  hostnames: [alt.test, "*.alt.test"]
  rules:
  - matches: [{path: {type: Exact, value: /exact}}]
    backendRefs: [{name: other, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: x-other, value: "1"}]}]
    backendRefs: [{name: other, port: 80}]
  - backendRefs: [{name: app, port: 80}]
"#;

const GRANT: &str = r#"
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: team-may-use-other, namespace: default}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team}]
  to: [{group: "", kind: Service, name: other}]
"#;

fn write(dir: &Path, file: &str, text: &str) {
    test_support::write_manifest(dir, file, text).unwrap();
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
    let (alt_port, secure_port) = (test_support::free_port(), test_support::free_port());
    let gateway = GATEWAY
        .replace("ALT_PORT", &alt_port.to_string())
        .replace("SECURE_PORT", &secure_port.to_string());
    objects += &gateway;
    objects += ROUTES;
    objects += ALT_ROUTE;
    objects += WILD_ROUTE;
    objects += DUAL_ROUTES;
    objects += &MORE_ROUTES.replace("ALT_PORT", &alt_port.to_string());
    let (vault_cert, vault_key) = self_signed("vault certificate", &["vaulted.test"]);
    objects += &tls_secret("vault", "vault-tls", &vault_cert, &vault_key);
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
        ("unsupported.test", "/plainly", "404"),
        // A Gateway API wildcard covers any number of labels.
        ("a.wild.test", "/", "other"),
        ("a.b.wild.test", "/", "other"),
        ("a.b.c.d.wild.test", "/", "other"),
        ("wild.test", "/", "404"),
    ];
    for (host, path, expected) in cases {
        assert_eq!(
            answer(port, host, path),
            expected,
            "{host}{path}\n{}",
            p.log()
        );
    }

    // A listener on another port: a frontend of its own, with the same precedence.
    let alt_cases = [
        ("alt.test", "/", "app"),
        ("alt.test", "/exact", "other"),
        ("alt.test", "/exact/more", "app"),
        ("alt.test", "/api", "api"),
        ("alt.test", "/api/v1", "api"),
        ("alt.test", "/apix", "app"),
        ("one.alt.test", "/api", "api"),
        ("one.two.alt.test", "/api", "api"),
        ("app.test", "/", "404"),
    ];
    for (host, path, expected) in alt_cases {
        assert_eq!(
            answer(alt_port, host, path),
            expected,
            "port {alt_port} {host}{path}\n{}",
            p.log()
        );
    }
    let header = test_support::http_request(
        alt_port,
        "GET /x HTTP/1.1\r\nHost: alt.test\r\nx-other: 1\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(header.server().as_deref(), Some("other"));
    assert_eq!(
        answer(port, "alt.test", "/"),
        "404",
        "not on the port-80 listener"
    );

    // The admin endpoint serves the same status as `portcullis status`.
    let served = p.admin("/status").unwrap();
    assert_eq!(served.status, 200);
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&served.body).unwrap();
    let team = status_of(&documents, "HTTPRoute", "team", "team");
    assert_eq!(
        condition(&team["parents"][0]["conditions"], "ResolvedRefs"),
        pair("False", "RefNotPermitted")
    );

    // HTTPS: the listener's certificate by SNI, the route behind it.
    let secure = https_get(p.https_port, "shop.secure.test", "shop.secure.test", "/").unwrap();
    assert_eq!(secure.certificate_cn, "secure wildcard");
    assert_eq!(secure.response.server().as_deref(), Some("app"));
    // A listener whose allowedRoutes kinds leave HTTPRoute out; a parentRef by port.
    assert_eq!(answer(port, "kinds.test", "/"), "404");
    assert_eq!(answer(alt_port, "byport.test", "/"), "other");
    assert_eq!(answer(port, "byport.test", "/"), "404");
    // A certificate in another namespace, allowed by a ReferenceGrant; a redirect that
    // replaces the scheme, the host and the whole path.
    let vaulted = https_get(p.https_port, "vaulted.test", "vaulted.test", "/").unwrap();
    assert_eq!(vaulted.certificate_cn, "vault certificate");
    assert_eq!(vaulted.response.server().as_deref(), Some("api"));
    let moved = https_get(
        p.https_port,
        "vaulted.test",
        "vaulted.test",
        "/elsewhere/x?q=1",
    )
    .unwrap();
    assert_eq!(moved.response.status, 302);
    assert_eq!(
        moved.response.headers["location"],
        "http://app.test/landing"
    );

    // Two routes for one host and path, on different listeners: each keeps to its own.
    assert_eq!(answer(port, "dual.secure.test", "/"), "other");
    let dual = https_get(p.https_port, "dual.secure.test", "dual.secure.test", "/").unwrap();
    assert_eq!(dual.response.server().as_deref(), Some("api"));

    // The same route on an HTTPS listener of another port.
    let other_port = https_get(secure_port, "shop.secure.test", "shop.secure.test", "/").unwrap();
    assert_eq!(other_port.certificate_cn, "secure wildcard");
    assert_eq!(other_port.response.server().as_deref(), Some("app"));

    // Cross-namespace backend: refused without a ReferenceGrant (500, as the
    // specification asks of a rule without a valid backend), served with one.
    assert_eq!(answer(port, "team.test", "/"), "500", "{}", p.log());
    let log = p.log();
    assert!(
        log.contains("HTTPRoute team/team: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace default allows this route to use Service other; its share of the traffic is answered with 500"),
        "{log}"
    );
    assert!(log.contains("HTTPRoute default/unsupported: spec.rules[0].filters[0]: filter type RequestMirror is not supported"), "{log}");
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
    let foreign = gateway.replace(
        "gatewayClassName: portcullis",
        "gatewayClassName: someone-else",
    );
    let objects = objects.replace(&gateway, &foreign);
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

const RULES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: Version, value: two}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}, method: POST}]
    backendRefs: [{name: other, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}, queryParams: [{name: debug, value: "1"}]}]
    backendRefs: [{name: other, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: Exact, value: /exact}, headers: [{name: x-letters, type: RegularExpression, value: "^a+$"}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /env}, headers: [{name: env, value: canary}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: RegularExpression, value: "^/items/[0-9]+$"}}]
    backendRefs: [{name: other, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: newer, namespace: default, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /env}, headers: [{name: env, value: canary}]}]
    backendRefs: [{name: other, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: z-last, namespace: default, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /tie}, headers: [{name: tie, value: "1"}]}]
    backendRefs: [{name: other, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a-first, namespace: default, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /tie}, headers: [{name: tie, value: "1"}]}]
    backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: filters, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [filters.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: x-set, value: "one 100%"}]
        add: [{name: x-add, value: two}]
        remove: [x-remove]
    - type: ResponseHeaderModifier
      responseHeaderModifier:
        set: [{name: x-resp, value: "yes"}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /redirect}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {scheme: https, hostname: example.org, statusCode: 301}
  - matches: [{path: {type: PathPrefix, value: /moved}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}, port: 8080, statusCode: 308}
  - matches: [{path: {type: PathPrefix, value: /rewrite}}]
    filters:
    - type: URLRewrite
      urlRewrite: {hostname: rewritten.test, path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /full}}]
    filters:
    - type: URLRewrite
      urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /replaced}}
    backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: split, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [split.test]
  rules:
  - backendRefs:
    - name: app
      port: 80
      weight: 3
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-backend, value: app}]}}]
    - name: api
      port: 80
      weight: 1
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-backend, value: api}]}}]
    - {name: other, port: 80, weight: 0}
  - matches: [{path: {type: PathPrefix, value: /half-broken}}]
    backendRefs: [{name: app, port: 80}, {name: missing, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /broken}}]
    backendRefs: [{name: missing, port: 80}]
"#;

/// Method, target, headers, and the backend expected to answer.
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

fn request(
    port: u16,
    method: &str,
    host: &str,
    target: &str,
    headers: &[(&str, &str)],
) -> test_support::Response {
    let extra: String = headers
        .iter()
        .map(|(n, v)| format!("{n}: {v}\r\n"))
        .collect();
    test_support::http_request(
        port,
        &format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"),
    )
    .unwrap()
}

fn served_by(response: &test_support::Response) -> String {
    response
        .server()
        .unwrap_or_else(|| response.status.to_string())
}

#[test]
fn matches_precedence_filters_and_weights_follow_the_specification() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let names = ["app", "api", "other"];
    let servers: Vec<EchoServer> = names
        .iter()
        .map(|n| EchoServer::start(n).unwrap())
        .collect();
    let mut objects = String::new();
    for (name, server) in names.iter().zip(&servers) {
        objects += &backend("default", name, 80, None, &[(server.port, true)]);
    }
    let (cert, key) = self_signed("secure wildcard", &["*.secure.test"]);
    objects += &tls_secret("default", "secure-tls", &cert, &key);
    objects += &GATEWAY
        .replace("ALT_PORT", &test_support::free_port().to_string())
        .replace("SECURE_PORT", &test_support::free_port().to_string());
    objects += RULES;
    write(&manifests, "all.yaml", &objects);
    let p = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    let port = p.http_port;
    let log = p.log();

    // Precedence as the specification lists it: the longest path (an exact one before a
    // prefix), then a method match, then the most header matches, then the most query
    // matches, then the oldest route, then namespace/name order, then rule order.
    let cases: [Case; 12] = [
        ("GET", "/", &[], "app"),
        ("GET", "/", &[("version", "two")], "api"),
        ("POST", "/", &[], "other"),
        ("POST", "/", &[("version", "two")], "other"),
        ("GET", "/?debug=1", &[], "other"),
        ("GET", "/?debug=1", &[("version", "two")], "api"),
        // A longer path whose condition fails falls back to the shorter path's rules.
        ("GET", "/exact", &[("x-letters", "aaa")], "api"),
        ("GET", "/exact", &[("x-letters", "b")], "app"),
        // The same match in an older and a newer route: the older route wins.
        ("GET", "/env", &[("env", "canary")], "api"),
        // Created at the same time: the first in namespace/name order wins.
        ("GET", "/tie", &[("tie", "1")], "api"),
        // A regular expression, where no longer path matches.
        ("GET", "/items/42", &[], "other"),
        ("GET", "/items/x", &[], "app"),
    ];
    for (method, target, headers, expected) in cases {
        let response = request(port, method, "match.test", target, headers);
        assert_eq!(
            served_by(&response),
            expected,
            "{method} {target} {headers:?}\n{log}"
        );
    }
    assert!(log.contains("HTTPRoute default/newer: spec.rules[0].matches[0]: host match.test path '/env' is already routed by HTTPRoute default/matching, which is older"), "{log}");

    // Request and response header modifiers.
    let response = request(
        port,
        "GET",
        "filters.test",
        "/headers",
        &[("x-remove", "gone"), ("x-add", "one")],
    );
    assert_eq!(served_by(&response), "app");
    let seen = response.echo().unwrap()["headers"].clone();
    assert_eq!(seen["x-set"], "one 100%");
    assert_eq!(seen["x-add"], "two", "{seen}");
    assert!(seen.get("x-remove").is_none(), "{seen}");
    assert_eq!(
        response.headers.get("x-resp").map(String::as_str),
        Some("yes")
    );

    // Redirects: the scheme and host replaced (the path and query kept), or the prefix.
    let response = request(port, "GET", "filters.test", "/redirect/x?q=1", &[]);
    assert_eq!(response.status, 301);
    assert_eq!(
        response.headers["location"],
        "https://example.org/redirect/x?q=1"
    );
    let response = request(port, "GET", "filters.test", "/moved/page", &[]);
    assert_eq!(response.status, 308);
    assert_eq!(
        response.headers["location"],
        "http://filters.test:8080/new/page"
    );

    // Rewrites before forwarding.
    for (target, path) in [
        ("/rewrite/x", "/v2/x"),
        ("/rewrite", "/v2"),
        ("/full/deep/path", "/replaced"),
    ] {
        let response = request(port, "GET", "filters.test", target, &[]);
        assert_eq!(response.seen("path").as_deref(), Some(path), "{target}");
    }
    let response = request(port, "GET", "filters.test", "/rewrite/x", &[]);
    assert_eq!(
        response.echo().unwrap()["headers"]["host"],
        "rewritten.test"
    );

    // Weights: 3 to 1, and weight 0 gets nothing.
    // Each backendRef's own filter applies when it is the one chosen.
    let mut counts = std::collections::BTreeMap::new();
    for _ in 0..400 {
        let response = request(port, "GET", "split.test", "/", &[]);
        let server = served_by(&response);
        let marked = response.echo().unwrap()["headers"]["x-backend"].clone();
        assert_eq!(marked, server.as_str(), "{}", response.body);
        *counts.entry(server).or_insert(0) += 1;
    }
    let app = counts.get("app").copied().unwrap_or(0);
    let api = counts.get("api").copied().unwrap_or(0);
    assert_eq!(app + api, 400, "{counts:?}");
    assert!(
        (255..=345).contains(&app),
        "expected 300 ± 45 of 400 for weight 3 of 4: {counts:?}"
    );

    // No valid backend: 500; half the weight invalid: about half the requests get 500.
    assert_eq!(
        request(port, "GET", "split.test", "/broken", &[]).status,
        500
    );
    let failed = (0..200)
        .filter(|_| request(port, "GET", "split.test", "/half-broken", &[]).status == 500)
        .count();
    assert!(
        (70..=130).contains(&failed),
        "expected 100 ± 30 of 200: {failed}"
    );
}

const STATUS_CASES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: default, generation: 3}
spec:
  gatewayClassName: portcullis
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.example.com"}
  - {name: tcp, protocol: TCP, port: 9000}
  - {name: alt, protocol: HTTP, port: 443}
  - name: secure
    protocol: HTTPS
    port: 443
    tls: {certificateRefs: [{name: cert, namespace: vault}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ok, namespace: default, generation: 7}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  hostnames: [a.example.com]
  rules: [{backendRefs: [{name: ok, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wrong-host, namespace: default}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  hostnames: [a.example.org]
  rules: [{backendRefs: [{name: ok, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: no-section, namespace: default}
spec:
  parentRefs: [{name: edge, sectionName: nope}]
  rules: [{backendRefs: [{name: ok, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: missing-backend, namespace: default}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  rules: [{backendRefs: [{name: nowhere, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad-kind, namespace: default}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  rules: [{backendRefs: [{kind: ConfigMap, name: ok, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cross, namespace: default}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  rules: [{backendRefs: [{name: ok, namespace: vault, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: outsider, namespace: elsewhere}
spec:
  parentRefs: [{name: edge, namespace: default, sectionName: http}]
  rules: [{backendRefs: [{name: ok, port: 80}]}]
"#;

/// The `status` of one object in `portcullis status` output.
fn status_of<'a>(
    documents: &'a [serde_json::Value],
    kind: &str,
    namespace: &str,
    name: &str,
) -> &'a serde_json::Value {
    documents
        .iter()
        .find(|d| {
            d["kind"] == kind
                && d["metadata"]["name"] == name
                && d["metadata"]["namespace"].as_str().unwrap_or_default() == namespace
        })
        .map(|d| &d["status"])
        .unwrap_or_else(|| panic!("no status for {kind} {namespace}/{name}: {documents:#?}"))
}

/// `(status, reason)` of a condition.
fn condition(conditions: &serde_json::Value, kind: &str) -> (String, String) {
    let found = conditions
        .as_array()
        .and_then(|list| list.iter().find(|c| c["type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} condition in {conditions}"));
    (
        found["status"].as_str().unwrap_or_default().to_owned(),
        found["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

fn pair(status: &str, reason: &str) -> (String, String) {
    (status.to_owned(), reason.to_owned())
}

#[test]
fn status_reports_every_condition_and_reason_of_the_specification() {
    let dir = tempfile::tempdir().unwrap();
    let objects = backend("default", "ok", 80, None, &[]) + STATUS_CASES;
    write(dir.path(), "all.yaml", &objects);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["status", "--manifests"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();

    let class = status_of(&documents, "GatewayClass", "", "portcullis");
    assert_eq!(
        condition(&class["conditions"], "Accepted"),
        pair("True", "Accepted")
    );

    let gateway = status_of(&documents, "Gateway", "default", "edge");
    assert_eq!(
        condition(&gateway["conditions"], "Accepted"),
        pair("True", "Accepted")
    );
    assert_eq!(
        condition(&gateway["conditions"], "Programmed"),
        pair("True", "Programmed")
    );
    assert_eq!(gateway["conditions"][0]["observedGeneration"], 3);
    let listener = |name: &str| {
        gateway["listeners"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        listener("http")["attachedRoutes"],
        4,
        "ok, missing-backend, bad-kind, cross"
    );
    assert_eq!(
        condition(&listener("http")["conditions"], "Programmed"),
        pair("True", "Programmed")
    );
    assert_eq!(
        condition(&listener("tcp")["conditions"], "Accepted"),
        pair("False", "UnsupportedProtocol")
    );
    assert_eq!(
        condition(&listener("alt")["conditions"], "Accepted"),
        pair("False", "PortUnavailable")
    );
    assert_eq!(
        condition(&listener("secure")["conditions"], "ResolvedRefs"),
        pair("False", "RefNotPermitted")
    );
    assert_eq!(
        condition(&listener("secure")["conditions"], "Programmed"),
        pair("False", "Invalid")
    );

    let route = |name: &str| {
        let namespace = if name == "outsider" {
            "elsewhere"
        } else {
            "default"
        };
        status_of(&documents, "HTTPRoute", namespace, name)["parents"][0].clone()
    };
    let ok = route("ok");
    assert_eq!(ok["controllerName"], "portcullis.dev/gateway-controller");
    assert_eq!(ok["parentRef"]["name"], "edge");
    assert_eq!(ok["parentRef"]["sectionName"], "http");
    assert_eq!(ok["conditions"][0]["observedGeneration"], 7);
    let cases = [
        ("ok", "Accepted", "True", "Accepted"),
        ("ok", "ResolvedRefs", "True", "ResolvedRefs"),
        (
            "wrong-host",
            "Accepted",
            "False",
            "NoMatchingListenerHostname",
        ),
        ("no-section", "Accepted", "False", "NoMatchingParent"),
        ("outsider", "Accepted", "False", "NotAllowedByListeners"),
        ("missing-backend", "Accepted", "True", "Accepted"),
        (
            "missing-backend",
            "ResolvedRefs",
            "False",
            "BackendNotFound",
        ),
        ("bad-kind", "ResolvedRefs", "False", "InvalidKind"),
        ("cross", "ResolvedRefs", "False", "RefNotPermitted"),
    ];
    for (name, kind, status, reason) in cases {
        assert_eq!(
            condition(&route(name)["conditions"], kind),
            pair(status, reason),
            "{name} {kind}"
        );
    }
}
