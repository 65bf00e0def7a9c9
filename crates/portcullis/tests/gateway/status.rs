//! Status, from `portcullis status`.

use test_support::backend;

use crate::write;

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
  - {name: udp, protocol: UDP, port: 9000}
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

/// `portcullis status --manifests dir`'s documents.
pub fn status_documents(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["status", "--manifests"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    serde_saphyr::from_multiple(&text).unwrap()
}

/// Each listener's name and `attachedRoutes` in a Gateway's or ListenerSet's status.
pub fn attached_routes(status: &serde_json::Value) -> Vec<(String, u64)> {
    status["listeners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_owned(),
                l["attachedRoutes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The `status` of one object in `portcullis status` output.
pub fn status_of<'a>(
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
pub fn condition(conditions: &serde_json::Value, kind: &str) -> (String, String) {
    let found = conditions
        .as_array()
        .and_then(|list| list.iter().find(|c| c["type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} condition in {conditions}"));
    (
        found["status"].as_str().unwrap_or_default().to_owned(),
        found["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

pub fn pair(status: &str, reason: &str) -> (String, String) {
    (status.to_owned(), reason.to_owned())
}

#[test]
fn status_reports_every_condition_and_reason_of_the_specification() {
    let dir = tempfile::tempdir().unwrap();
    let objects = backend("default", "ok", 80, None, &[]) + STATUS_CASES;
    write(dir.path(), "all.yaml", &objects);
    let documents = status_documents(dir.path());

    let class = status_of(&documents, "GatewayClass", "", "portcullis");
    assert_eq!(
        condition(&class["conditions"], "Accepted"),
        pair("True", "Accepted")
    );

    // Accepted, with some of its listeners refused (the specification's reason for it,
    // as the conformance test GatewayInvalidListenersUnsupportedProtocol asks).
    let gateway = status_of(&documents, "Gateway", "default", "edge");
    assert_eq!(
        condition(&gateway["conditions"], "Accepted"),
        pair("True", "ListenersNotValid")
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
        condition(&listener("udp")["conditions"], "Accepted"),
        pair("False", "UnsupportedProtocol")
    );
    // Plain HTTP on the HTTPS frontend's port, beside an HTTPS listener there.
    assert_eq!(
        condition(&listener("alt")["conditions"], "Accepted"),
        pair("False", "ProtocolConflict")
    );
    assert_eq!(
        condition(&listener("alt")["conditions"], "Conflicted"),
        pair("True", "ProtocolConflict")
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

#[test]
fn a_route_served_without_its_mirror_or_holding_an_unknown_value_says_so_in_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let objects = backend("default", "ok", 80, None, &[])
        + r#"
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
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mirrored, namespace: default}
spec:
  parentRefs: [{name: edge}]
  rules:
  - filters: [{type: RequestMirror, requestMirror: {backendRef: {name: ok, port: 80}}}]
    backendRefs: [{name: ok, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: plain, namespace: default}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: ok, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: future, namespace: default, generation: 4}
spec:
  parentRefs: [{name: edge}]
  rules:
  - filters: [{type: ExternalAuth, externalAuth: {}}]
    backendRefs: [{name: ok, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: forged, namespace: default, annotations: {portcullis.dev/unreadable-spec: forged}}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: ok, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: future-calls, namespace: default, creationTimestamp: '2024-01-01T00:00:00Z'}
spec:
  parentRefs: [{name: edge}]
  hostnames: [grpc.test]
  rules:
  - filters: [{type: ExternalAuth, externalAuth: {}}]
    backendRefs: [{name: ok, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: default, creationTimestamp: '2024-06-01T00:00:00Z'}
spec:
  parentRefs: [{name: edge}]
  hostnames: [web.test]
  rules: [{backendRefs: [{name: ok, port: 80}]}]
"#;
    write(dir.path(), "all.yaml", &objects);
    let documents = status_documents(dir.path());
    let accepted = |name: &str| {
        let parent = &status_of(&documents, "HTTPRoute", "default", name)["parents"][0];
        let conditions = parent["conditions"].as_array().unwrap();
        let found = conditions.iter().find(|c| c["type"] == "Accepted").unwrap();
        (
            found["status"].as_str().unwrap().to_owned(),
            found["message"].as_str().unwrap().to_owned(),
        )
    };
    assert_eq!(
        accepted("mirrored"),
        (
            "True".to_owned(),
            "attached; served without the filters portcullis does not support (a request mirror): spec.rules[0].filters[0]".to_owned()
        )
    );
    assert_eq!(
        accepted("plain"),
        ("True".to_owned(), "attached".to_owned())
    );
    // portcullis's own mark, written by a user, is no mark.
    assert_eq!(
        accepted("forged"),
        ("True".to_owned(), "attached".to_owned())
    );

    // A value of a newer API version (a filter type): the route is read for its parents
    // alone, and told `Accepted=False` with `UnsupportedValue`, as the specification asks.
    let future = &status_of(&documents, "HTTPRoute", "default", "future")["parents"][0];
    assert_eq!(
        condition(&future["conditions"], "Accepted"),
        pair("False", "UnsupportedValue")
    );
    assert_eq!(future["conditions"][0]["observedGeneration"], 4);
    let message = future["conditions"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("unknown variant `ExternalAuth`")
            && message.ends_with("it is not served until it is fixed"),
        "{message}"
    );
    // An older GRPCRoute read for its parents alone holds no hostname: it takes none
    // from a newer HTTPRoute.
    let grpc = &status_of(&documents, "GRPCRoute", "default", "future-calls")["parents"][0];
    assert_eq!(
        condition(&grpc["conditions"], "Accepted"),
        pair("False", "UnsupportedValue")
    );
    assert_eq!(accepted("web"), ("True".to_owned(), "attached".to_owned()));
    let gateway = status_of(&documents, "Gateway", "default", "edge");
    assert_eq!(
        gateway["listeners"][0]["attachedRoutes"], 4,
        "mirrored, plain, forged and web"
    );
}

#[test]
fn check_names_a_gateway_s_unread_parameters_and_backend_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateways.yaml"),
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: tuned, namespace: infra}\nspec:\n  gatewayClassName: portcullis\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n  infrastructure:\n    parametersRef: {group: invalid.io, kind: InvalidParameters, name: invalid}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: mutual, namespace: infra}\nspec:\n  gatewayClassName: portcullis\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n  tls:\n    backend:\n      clientCertificateRef: {name: client}\n",
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["check", "--manifests"])
        .arg(dir.path())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{printed}");
    for line in [
        "Gateway infra/tuned: spec.infrastructure.parametersRef: infrastructure.parametersRef names InvalidParameters invalid (invalid.io), a kind of parameters portcullis does not read; the Gateway is not served",
        "Gateway infra/mutual: spec.tls.backend.clientCertificateRef: not supported: backends see no client certificate from this Gateway's routes",
    ] {
        assert!(printed.lines().any(|l| l == line), "{line}\n{printed}");
    }
}
