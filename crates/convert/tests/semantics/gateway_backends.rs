//! gateway-api.md "backendRefs": weights, the 500 share, ReferenceGrants, rule timeouts.

use crate::gateway_fixtures::{EDGE, OUR_CLASS};
use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn weights_and_invalid_backends() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md backendRefs: 'Services by port, weighted'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs: [{name: web, port: 80, weight: 3}, {name: api, port: 80, weight: 1}]
                ",
                &["route a.test / Prefix [http] -> default_web_80 weight 3, default_api_80 weight 1"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md backendRefs: '(weight 0 gets nothing)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs: [{name: web, port: 80, weight: 0}, {name: api, port: 80}]
                ",
                &["route a.test / Prefix [http] -> default_api_80"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md backendRefs: 'each with its own RequestHeaderModifier and ResponseHeaderModifier applied when it is chosen'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs:
                    - name: web
                      port: 80
                      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Pool, value: blue}]}}]
                    - name: api
                      port: 80
                      filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: X-Pool, value: green}]}}]
                ",
                &[
                    "route a.test / Prefix [http] -> default_web_80 weight 1 (request set X-Pool: blue), default_api_80 weight 1 (response add X-Pool: green)",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md backendRefs: 'an invalid backend's share of the traffic ... is answered with 500'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs: [{name: web, port: 80, weight: 3}, {name: nosuch, port: 80, weight: 1}]
                ",
                &[
                    "route a.test / Prefix [http] -> default_web_80 weight 3, 500 weight 1",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[1]: service default/nosuch not found; its share of the traffic is answered with 500",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md backendRefs: '... and a rule with no valid backend, is answered with 500' (none at all, or none valid)",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /none}}]
                  - matches: [{path: {type: PathPrefix, value: /invalid}}]
                    backendRefs: [{name: web, port: 81}]
                ",
                &[
                    "route a.test /invalid Prefix [http] -> 500",
                    "route a.test /none Prefix [http] -> 500",
                    "diagnostic HTTPRoute default/r: spec.rules[1].backendRefs[0]: service default/web has no port 81; its share of the traffic is answered with 500",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Not served yet: 'RequestMirror ... filters (... on a backendRef, its share is answered with 500)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs:
                    - {name: web, port: 80}
                    - name: api
                      port: 80
                      filters: [{type: RequestMirror, requestMirror: {backendRef: {name: web, port: 80}}}]
                ",
                &[
                    "route a.test / Prefix [http] -> default_web_80 weight 1, 500 weight 1",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[1].filters[0]: filter type RequestMirror is not supported on a backendRef; this backend's share of the traffic is answered with 500",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Rule timeouts: backendRequest, else request, is how long the backend may take to answer; an invalid one is reported and the backend's own timeouts apply",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - timeouts: {request: 10s}
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{path: {value: /both}}]
                    timeouts: {request: 10s, backendRequest: 1m30s}
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{path: {value: /bad}}]
                    timeouts: {request: soon}
                    backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "diagnostic HTTPRoute default/r: spec.rules[2].timeouts.request: 'soon' is not a duration such as 1h30m, 10s or 500ms; the backend's own timeouts apply",
                    "route a.test / Prefix [http] -> server timeout 10000ms; default_web_80",
                    "route a.test /bad Prefix [http] -> default_web_80",
                    "route a.test /both Prefix [http] -> server timeout 90000ms; default_web_80",
                ],
            )
            .given(EDGE),
        ],
    );
}

#[test]
fn backends_of_routes() {
    check(
        Show::BACKENDS,
        &[Case::new(
            "routing.md Backends applies to routes too: a backend is one service port, its servers the ready endpoints",
            "
            kind: HTTPRoute
            metadata: {name: r}
            spec:
              parentRefs: [{name: edge}]
              hostnames: [a.test]
              rules: [{backendRefs: [{name: web, port: 80}]}]
            ",
            &[
                "route a.test / Prefix [http] -> default_web_80",
                "backend default_web_80 servers 10.0.0.1:8080",
            ],
        )
        .given(EDGE)],
    );
}

/// A Service in namespace `data`, and a route in `default` that uses it.
const CROSS_NAMESPACE_ROUTE: &str = "
kind: Service
metadata: {name: db, namespace: data}
spec: {ports: [{port: 80}]}
---
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: edge}]
  hostnames: [a.test]
  rules: [{backendRefs: [{name: db, namespace: data, port: 80}]}]
---
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: portcullis
  listeners: [{name: http, protocol: HTTP, port: 80}]
";

#[test]
fn reference_grants_for_services() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md backendRefs: 'cross-namespace only with a ReferenceGrant from HTTPRoute to Service': without one, the share is 500 and reported",
                "",
                &[
                    "route a.test / Prefix [http] -> 500",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace data allows this route to use Service db; its share of the traffic is answered with 500",
                ],
            )
            .given(CROSS_NAMESPACE_ROUTE),
            Case::new(
                "gateway-api.md backendRefs: 'cross-namespace only with a ReferenceGrant from HTTPRoute to Service': with one (in the Service's namespace)",
                "
                kind: ReferenceGrant
                metadata: {name: routes-to-db, namespace: data}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
                  to: [{group: '', kind: Service}]
                ",
                &["route a.test / Prefix [http] -> data_db_80"],
            )
            .given(CROSS_NAMESPACE_ROUTE),
            Case::new(
                "ReferenceGrant: a grant naming another Service, or from another namespace, or for another kind, does not allow it",
                "
                kind: ReferenceGrant
                metadata: {name: other-service, namespace: data}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
                  to: [{group: '', kind: Service, name: cache}]
                ---
                kind: ReferenceGrant
                metadata: {name: other-namespace, namespace: data}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team}]
                  to: [{group: '', kind: Service}]
                ---
                kind: ReferenceGrant
                metadata: {name: gateways-only, namespace: data}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
                  to: [{group: '', kind: Service}]
                ---
                kind: ReferenceGrant
                metadata: {name: wrong-place, namespace: default}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
                  to: [{group: '', kind: Service}]
                ",
                &[
                    "route a.test / Prefix [http] -> 500",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace data allows this route to use Service db; its share of the traffic is answered with 500",
                ],
            )
            .given(CROSS_NAMESPACE_ROUTE),
        ],
    );
}

#[test]
fn reference_grants_for_certificates() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md: 'An HTTPS listener's first certificateRefs Secret ... (cross-namespace only with a ReferenceGrant from the Gateway)': without one, the route's hosts get the default certificate",
                "
                kind: Secret
                metadata: {name: edge-tls, namespace: vault}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: edge-tls, namespace: vault}]}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.test / Prefix [https] -> default_web_80"],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: '(cross-namespace only with a ReferenceGrant from the Gateway)': with one, the Secret is served",
                "
                kind: Secret
                metadata: {name: edge-tls, namespace: vault}
                type: kubernetes.io/tls
                ---
                kind: ReferenceGrant
                metadata: {name: gateways-to-certs, namespace: vault}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
                  to: [{group: '', kind: Secret, name: edge-tls}]
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: edge-tls, namespace: vault}]}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route a.test / Prefix [https] -> default_web_80",
                    "tls a.test vault/edge-tls",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "routing.md TLS applies to listeners too: a missing listener Secret is reported and the route's hosts get the default certificate",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: missing}]}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route a.test / Prefix [https] -> default_web_80",
                    "diagnostic HTTPRoute default/r: spec.tls: secret default/missing not found; the default certificate is served for its hosts",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}
