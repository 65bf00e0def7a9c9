//! gateway-api.md "TCP and TLS-terminated routes": TCPRoutes on TCP listeners, TLSRoutes
//! on TLS listeners in Terminate mode, and UDPRoutes (reported). The upstream
//! conformance cases (`conformance/tests/tcproute-*`, `tlsroute-terminate-*`,
//! `udproute-*`) as conversion and status tables.

use crate::gateway_fixtures::OUR_CLASS;
use crate::summary::Show;
use crate::support::{Case, check};

/// A Gateway `edge` with TCP listeners `one` (9300) and `two` (9301), routes of its own
/// namespace.
const TCP_GATEWAY: &str = "
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: portcullis
  listeners:
  - {name: one, protocol: TCP, port: 9300}
  - {name: two, protocol: TCP, port: 9301}
";

#[test]
fn tcp_routes_send_a_listener_s_connections_to_their_backends() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "conformance TCPRouteWeightedRouting: backendRefs share the connections by weight, a weight of 0 takes none",
                "
                kind: TCPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge, sectionName: one}]
                  rules: [{backendRefs: [{name: web, port: 80, weight: 70}, {name: api, port: 80, weight: 30}, {name: web, port: 80, weight: 0}]}]
                ",
                &[
                    "backend default_api_80_tcp mode tcp servers 10.0.0.2:8080",
                    "backend default_web_80_tcp mode tcp servers 10.0.0.1:8080",
                    "tcp 9300",
                    "tcp 9300 (any host) -> default_web_80_tcp*70 default_api_80_tcp*30",
                ],
            )
            .given(TCP_GATEWAY),
            Case::new(
                "conformance TCPRouteParentRefAttachAll: a parentRef without sectionName or port attaches to every TCP listener",
                "
                kind: TCPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "backend default_web_80_tcp mode tcp servers 10.0.0.1:8080",
                    "tcp 9300",
                    "tcp 9300 (any host) -> default_web_80_tcp*1",
                    "tcp 9301",
                    "tcp 9301 (any host) -> default_web_80_tcp*1",
                ],
            )
            .given(TCP_GATEWAY),
            Case::new(
                "conformance TCPRouteMultipleRoutesAttachment: of two routes on one listener the oldest is served; the other is reported",
                "
                kind: TCPRoute
                metadata: {name: first, creationTimestamp: '2026-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge, sectionName: one}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: TCPRoute
                metadata: {name: second, creationTimestamp: '2026-01-02T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge, sectionName: one}]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "backend default_web_80_tcp mode tcp servers 10.0.0.1:8080",
                    "diagnostic TCPRoute default/second: spec.parentRefs[0]: TCP port 9300 is already served by TCPRoute default/first, which is older; this one is ignored",
                    "tcp 9300",
                    "tcp 9300 (any host) -> default_web_80_tcp*1",
                ],
            )
            .given(TCP_GATEWAY),
            Case::new(
                "conformance TCPRouteInvalidBackendRefNonexistent: a backend that does not exist has its connections refused",
                "
                kind: TCPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge, sectionName: one}]
                  rules: [{backendRefs: [{name: nosuch, port: 80}]}]
                ",
                &[
                    "diagnostic TCPRoute default/r: spec.rules[0].backendRefs[0]: service default/nosuch not found; its share of the connections is refused",
                    "tcp 9300",
                    "tcp 9300 (any host) -> refused*1",
                ],
            )
            .given(TCP_GATEWAY),
        ],
    );
}

#[test]
fn tcp_and_udp_route_status() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance TCPRouteMultipleRoutesAttachment: both routes are Accepted, the listener counts two and takes TCPRoutes",
                "
                kind: TCPRoute
                metadata: {name: first}
                spec:
                  parentRefs: [{name: edge, sectionName: one}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: TCPRoute
                metadata: {name: second}
                spec:
                  parentRefs: [{name: edge, sectionName: one}]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "diagnostic TCPRoute default/second: spec.parentRefs[0]: TCP port 9300 is already served by TCPRoute default/first, which is older; this one is ignored",
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener one: routes 2, kinds [TCPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener two: routes 0, kinds [TCPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status TCPRoute default/first parent default/edge#one: Accepted=True ResolvedRefs=True",
                    "status TCPRoute default/second parent default/edge#one: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(TCP_GATEWAY),
            Case::new(
                "conformance TCPRouteInvalidBackendRefNonexistent, TCPRouteInvalidCrossNamespaceBackendRef: Accepted, ResolvedRefs False (BackendNotFound, RefNotPermitted)",
                "
                kind: TCPRoute
                metadata: {name: missing}
                spec:
                  parentRefs: [{name: edge, sectionName: one}]
                  rules: [{backendRefs: [{name: nosuch, port: 80}]}]
                ---
                kind: TCPRoute
                metadata: {name: elsewhere}
                spec:
                  parentRefs: [{name: edge, sectionName: two}]
                  rules: [{backendRefs: [{name: web, namespace: other, port: 80}]}]
                ",
                &[
                    "diagnostic TCPRoute default/elsewhere: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace other allows this route to use Service web; its share of the connections is refused",
                    "diagnostic TCPRoute default/missing: spec.rules[0].backendRefs[0]: service default/nosuch not found; its share of the connections is refused",
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener one: routes 1, kinds [TCPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener two: routes 1, kinds [TCPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status TCPRoute default/elsewhere parent default/edge#two: Accepted=True ResolvedRefs=False(RefNotPermitted)",
                    "status TCPRoute default/missing parent default/edge#one: Accepted=True ResolvedRefs=False(BackendNotFound)",
                ],
            )
            .given(TCP_GATEWAY),
            Case::new(
                "conformance TCPRouteInvalidNonTCPListener, UDPRouteNotAllowedByListeners: a route on a listener that does not take its kind is not attached; a UDPRoute never is (HAProxy proxies TCP only), nor a UDP listener served",
                "
                kind: Gateway
                metadata: {name: web}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: only-http, protocol: HTTP, port: 5300, allowedRoutes: {kinds: [{kind: HTTPRoute}]}}
                  - {name: udp, protocol: UDP, port: 5301}
                ---
                kind: TCPRoute
                metadata: {name: tcp}
                spec:
                  parentRefs: [{name: web, sectionName: only-http}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: UDPRoute
                metadata: {name: udp}
                spec:
                  parentRefs: [{name: web}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: UDPRoute
                metadata: {name: udp-nowhere}
                spec:
                  parentRefs: [{name: web}]
                  rules: [{backendRefs: [{name: nowhere, port: 53}]}]
                ",
                &[
                    "diagnostic TCPRoute default/tcp: spec.parentRefs[0]: no TCP listener of Gateway default/web accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                    "diagnostic UDPRoute default/udp: spec: UDPRoutes are not served: HAProxy proxies TCP only; the route is not attached",
                    "diagnostic UDPRoute default/udp-nowhere: spec: UDPRoutes are not served: HAProxy proxies TCP only; the route is not attached",
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/web: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/web listener only-http: routes 0, kinds [HTTPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/web listener udp: routes 0, kinds [], Accepted=False(UnsupportedProtocol) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status TCPRoute default/tcp parent default/web#only-http: Accepted=False(NotAllowedByListeners) ResolvedRefs=True",
                    "status UDPRoute default/udp parent default/web: Accepted=False(NotAllowedByListeners) ResolvedRefs=True",
                    "status UDPRoute default/udp-nowhere parent default/web: Accepted=False(NotAllowedByListeners) ResolvedRefs=False(BackendNotFound)",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn tls_routes_on_terminate_listeners_are_terminated_and_chosen_by_sni() {
    check(
        Show::BACKENDS,
        &[Case::new(
            "conformance TLSRouteTerminateSimpleSameNamespace: HAProxy terminates with the listener's certificate and sends the bytes to the route's backend by SNI",
            "
            kind: Secret
            metadata: {name: tls-cert}
            type: kubernetes.io/tls
            ---
            kind: Gateway
            metadata: {name: edge}
            spec:
              gatewayClassName: portcullis
              listeners:
              - {name: tls, protocol: TLS, port: 8443, hostname: '*.example.com', tls: {mode: Terminate, certificateRefs: [{name: tls-cert}]}}
            ---
            kind: TLSRoute
            metadata: {name: r}
            spec:
              parentRefs: [{name: edge}]
              hostnames: [tls.example.com]
              rules: [{backendRefs: [{name: web, port: 80, weight: 3}, {name: api, port: 80}]}]
            ",
            &[
                "backend default_api_80_tcp mode tcp servers 10.0.0.2:8080",
                "backend default_web_80_tcp mode tcp servers 10.0.0.1:8080",
                "tcp 8443 tls [default/tls-cert]",
                "tcp 8443 tls.example.com -> default_web_80_tcp*3 default_api_80_tcp*1",
            ],
        )
        .given(OUR_CLASS)],
    );
}

#[test]
fn a_backend_tls_policy_re_encrypts_a_terminated_tls_route_s_connections() {
    check(
        Show::BACKENDS,
        &[Case::new(
            "gateway-api.md BackendTLSPolicy (TLSRoute spec: 'When a TLSRoute is attached to a listener in Terminate mode, a BackendTLSPolicy can be used to enable re-encryption'): the TCP backend speaks TLS to its servers, verified as the policy says",
            "
            kind: Secret
            metadata: {name: tls-cert}
            type: kubernetes.io/tls
            ---
            kind: ConfigMap
            metadata: {name: ca}
            ---
            kind: Gateway
            metadata: {name: edge}
            spec:
              gatewayClassName: portcullis
              listeners:
              - {name: tls, protocol: TLS, port: 8443, tls: {mode: Terminate, certificateRefs: [{name: tls-cert}]}}
            ---
            kind: TLSRoute
            metadata: {name: r}
            spec:
              parentRefs: [{name: edge}]
              hostnames: [tls.example.com]
              rules: [{backendRefs: [{name: web, port: 80}]}]
            ---
            kind: BackendTLSPolicy
            metadata: {name: p}
            spec:
              targetRefs: [{group: '', kind: Service, name: web}]
              validation:
                caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}]
                hostname: web.internal
            ",
            &[
                "backend default_web_80_tcp mode tcp h1-ssl verify default/p host web.internal sni web.internal servers 10.0.0.1:8080",
                "tcp 8443 tls [default/tls-cert]",
                "tcp 8443 tls.example.com -> default_web_80_tcp*1",
            ],
        )
        .given(OUR_CLASS)],
    );
}
