//! ListenerSets through a real HAProxy: an admitted ListenerSet's listeners are served as
//! the Gateway's own (an HTTP listener on a port of its own, an HTTPS listener with its
//! own certificate, a hostname on the shared HTTP port), each route on the listeners of
//! the parent it names; a ListenerSet its Gateway does not admit serves nothing until
//! the Gateway admits it (the conformance tests ListenerSetHTTPRouting,
//! ListenerSetDefaultNotAllowed and ListenerSetAllowedNamespaceSame, with traffic).

use std::time::Duration;

use test_support::{EchoServer, answer, backend, https_get, self_signed, tls_secret};

use crate::status::{attached_routes, condition, pair, status_of};
use crate::write;

const WAIT: Duration = Duration::from_secs(20);

/// `edge` admits the ListenerSets of its namespace, `closed` none (`allowedListeners`
/// unset) until the test opens it. `SET_PORT` and `CLOSED_PORT` are ports of their own.
const OBJECTS: &str = r#"
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
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: gw.test}
  - {name: https, protocol: HTTPS, port: 443, hostname: gw.secure.test, tls: {certificateRefs: [{name: gateway-tls}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: default}
spec:
  parentRef: {name: edge}
  listeners:
  - {name: own-port, protocol: HTTP, port: SET_PORT}
  - {name: named, protocol: HTTP, port: 80, hostname: set.test}
  - {name: secure, protocol: HTTPS, port: 443, hostname: set.secure.test, tls: {certificateRefs: [{name: set-tls}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: refused, namespace: default}
spec:
  parentRef: {name: closed}
  listeners:
  - {name: own-port, protocol: HTTP, port: CLOSED_PORT}
  - {name: named, protocol: HTTP, port: 80, hostname: refused.test}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gateway-route, namespace: default}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: gw, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: set-route, namespace: default}
spec:
  parentRefs: [{kind: ListenerSet, group: gateway.networking.k8s.io, name: extra}]
  rules: [{backendRefs: [{name: set, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: refused-route, namespace: default}
spec:
  parentRefs: [{kind: ListenerSet, name: refused}]
  rules: [{backendRefs: [{name: refused, port: 80}]}]
"#;

/// The Gateway that admits no ListenerSet, then (rewritten) every one of its namespace.
const CLOSED: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: closed, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: closed.test}
"#;

#[test]
fn an_admitted_listener_set_is_served_as_its_gateway_s_listeners_and_a_refused_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let servers: Vec<EchoServer> = ["gw", "set", "refused"]
        .iter()
        .map(|name| EchoServer::start(name).unwrap())
        .collect();
    let mut objects = String::new();
    for (server, name) in servers.iter().zip(["gw", "set", "refused"]) {
        objects += &backend("default", name, 80, None, &[(server.port, true)]);
    }
    let (gateway_cert, gateway_key) = self_signed("gateway certificate", &["gw.secure.test"]);
    objects += &tls_secret("default", "gateway-tls", &gateway_cert, &gateway_key);
    let (set_cert, set_key) = self_signed("listener set certificate", &["set.secure.test"]);
    objects += &tls_secret("default", "set-tls", &set_cert, &set_key);
    let (set_port, closed_port) = (test_support::free_port(), test_support::free_port());
    objects += &OBJECTS
        .replace("SET_PORT", &set_port.to_string())
        .replace("CLOSED_PORT", &closed_port.to_string());
    write(&manifests, "all.yaml", &objects);
    write(&manifests, "closed.yaml", CLOSED);
    let mut p = crate::start(dir.path(), &manifests);
    let port = p.http_port;

    // (port, Host, who answers): each route on the listeners of the parent it names.
    let cases = [
        (port, "gw.test", "gw"),
        (port, "set.test", "set"),
        // The ListenerSet's listener on a port of its own, hostname-less.
        (set_port, "anything.test", "set"),
        (set_port, "gw.test", "set"),
        // Not admitted: its hostname is not served, its port not opened.
        (port, "refused.test", "404"),
    ];
    for (at, host, expected) in cases {
        assert_eq!(
            answer(at, host, "/"),
            expected,
            "port {at} {host}\n{}",
            p.log()
        );
    }
    assert!(
        answer(closed_port, "refused.test", "/").starts_with("error"),
        "nothing listens on the refused ListenerSet's port\n{}",
        p.log()
    );

    // Each HTTPS listener serves its own certificate, the ListenerSet's from the
    // ListenerSet's Secret.
    let set = https_get(p.https_port, "set.secure.test", "set.secure.test", "/").unwrap();
    assert_eq!(set.certificate_cn, "listener set certificate");
    assert_eq!(set.response.server().as_deref(), Some("set"));
    let gateway = https_get(p.https_port, "gw.secure.test", "gw.secure.test", "/").unwrap();
    assert_eq!(gateway.certificate_cn, "gateway certificate");
    assert_eq!(gateway.response.server().as_deref(), Some("gw"));

    // Status, as the admin endpoint serves it.
    let served = p.admin("/status").unwrap();
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&served.body).unwrap();
    let edge = status_of(&documents, "Gateway", "default", "edge");
    assert_eq!(edge["attachedListenerSets"], 1);
    let extra = status_of(&documents, "ListenerSet", "default", "extra");
    assert_eq!(
        condition(&extra["conditions"], "Programmed"),
        pair("True", "Programmed")
    );
    assert_eq!(
        attached_routes(extra),
        [
            ("own-port".to_owned(), 1),
            ("named".to_owned(), 1),
            ("secure".to_owned(), 1)
        ]
    );
    let refused = status_of(&documents, "ListenerSet", "default", "refused");
    assert_eq!(
        condition(&refused["conditions"], "Accepted"),
        pair("False", "NotAllowed")
    );
    let route = status_of(&documents, "HTTPRoute", "default", "refused-route");
    assert_eq!(route["parents"][0]["parentRef"]["kind"], "ListenerSet");
    assert_eq!(
        condition(&route["parents"][0]["conditions"], "Accepted"),
        pair("False", "NotAllowedByListeners")
    );

    // The closed Gateway admits its namespace's ListenerSets: the refused one is served,
    // on the shared port and on a port of its own, without restarting anything.
    write(
        &manifests,
        "closed.yaml",
        &CLOSED.replace(
            "  listeners:",
            "  allowedListeners: {namespaces: {from: Same}}\n  listeners:",
        ),
    );
    p.wait_until(WAIT, |_| answer(port, "refused.test", "/") == "refused")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer(closed_port, "refused.test", "/"), "refused");
    assert_eq!(answer(port, "set.test", "/"), "set", "{}", p.log());
}
