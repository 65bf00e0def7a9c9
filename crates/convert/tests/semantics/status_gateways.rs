//! gateway-api.md "Status" of GatewayClasses, Gateways and listeners, every reason.

use crate::gateway_fixtures::{EDGE, OUR_CLASS};
use crate::summary::Show;
use crate::support::{Case, check, with_admin_port_10254};

/// A second deployment's `--gateway-controller`.
fn internal_gateway_controller(options: &mut convert::ConvertOptions) {
    options.gateway_controller = "portcullis.dev/gateway-controller/internal".into();
}

#[test]
fn classes_and_gateways() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "gateway-api.md Status: 'GatewayClass Accepted; Gateway Accepted and Programmed, each listener's Accepted, ResolvedRefs, Programmed, attachedRoutes and supportedKinds; HTTPRoute per-parent Accepted and ResolvedRefs'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener http: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(EDGE),
            Case::new(
                "README --gateway-controller: a GatewayClass is ours when its controllerName is --gateway-controller; another deployment's class and its Gateways get no status from this one",
                "
                kind: GatewayClass
                metadata: {name: internal}
                spec: {controllerName: portcullis.dev/gateway-controller/internal}
                ---
                kind: GatewayClass
                metadata: {name: portcullis}
                spec: {controllerName: portcullis.dev/gateway-controller}
                ---
                kind: Gateway
                metadata: {name: inside}
                spec:
                  gatewayClassName: internal
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                ",
                &[
                    "status GatewayClass internal: Accepted=True",
                    "status Gateway default/inside: Accepted=True Programmed=True",
                    "status Gateway default/inside listener http: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                ],
            )
            .with(internal_gateway_controller),
            Case::new(
                "Gateway API GatewayClass parametersRef: a class whose parameters portcullis cannot read is not accepted (InvalidParameters), and its Gateways are not served",
                "
                kind: GatewayClass
                metadata: {name: portcullis}
                spec:
                  controllerName: portcullis.dev/gateway-controller
                  parametersRef: {group: example.com, kind: Settings, name: tuned}
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=False(InvalidParameters)",
                ],
            ),
            Case::new(
                "conformance GatewayInvalidParametersRef: a Gateway whose infrastructure.parametersRef cannot be read is not accepted (InvalidParameters) and serves nothing",
                "
                kind: GatewayClass
                metadata: {name: portcullis}
                spec: {controllerName: portcullis.dev/gateway-controller}
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                  infrastructure:
                    parametersRef: {group: invalid.io, kind: InvalidParameters, name: invalid}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: Gateway default/edge is not accepted (infrastructure.parametersRef names InvalidParameters invalid (invalid.io), a kind of parameters portcullis does not read; the Gateway is not served), so none of its listeners accepts this route",
                    "status Gateway default/edge: Accepted=False(InvalidParameters) Programmed=False(Invalid)",
                    "status HTTPRoute default/r parent default/edge: Accepted=False(NoMatchingParent) ResolvedRefs=True",
                ],
            ),
            Case::new(
                "gateway-api.md Status: '... with observedGeneration'",
                "
                kind: GatewayClass
                metadata: {name: portcullis, generation: 2}
                spec: {controllerName: portcullis.dev/gateway-controller}
                ---
                kind: Gateway
                metadata: {name: edge, generation: 3}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                ---
                kind: HTTPRoute
                metadata: {name: r, generation: 7}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True generation 2",
                    "status Gateway default/edge: Accepted=True Programmed=True generation 3",
                    "status Gateway default/edge listener http: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts) generation 3",
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=True generation 7",
                ],
            ),
            Case::new(
                "gateway-api.md Status: 'Programmed ... AddressNotAssigned when spec.addresses asks for addresses'",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  addresses: [{type: IPAddress, value: 192.0.2.7}]
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=False(AddressNotAssigned)",
                    "status Gateway default/edge listener http: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: only GatewayClasses of our controller, their Gateways and the routes attached to them get status",
                "
                kind: GatewayClass
                metadata: {name: other}
                spec: {controllerName: example.com/another-controller}
                ---
                kind: Gateway
                metadata: {name: foreign}
                spec:
                  gatewayClassName: other
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: foreign}, {name: nowhere}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["status (none)"],
            ),
            Case::new(
                "Gateway Accepted=False(ListenersNotValid) and Programmed=False(Invalid) when no listener can be served",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: udp, protocol: UDP, port: 9000}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=False(ListenersNotValid) Programmed=False(Invalid)",
                    "status Gateway default/edge listener udp: routes 0, kinds [], Accepted=False(UnsupportedProtocol) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn listener_reasons() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "gateway-api.md Not served: 'UDP listeners (UnsupportedProtocol): HAProxy proxies TCP only'; the Gateway stays Accepted while one listener is valid",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: http, protocol: HTTP, port: 80}
                  - {name: udp, protocol: UDP, port: 9000}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener http: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener udp: routes 0, kinds [], Accepted=False(UnsupportedProtocol) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Not served yet: 'HTTP on port 443 and HTTPS on port 80 (the other protocol's frontend; status PortUnavailable)'; nor the admin endpoint's port",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: http, protocol: HTTP, port: 80}
                  - {name: plain443, protocol: HTTP, port: 443}
                  - {name: tls80, protocol: HTTPS, port: 80, tls: {certificateRefs: [{name: cert}]}}
                  - {name: admin, protocol: HTTP, port: 10254}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener admin: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(PortUnavailable) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener http: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener plain443: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(PortUnavailable) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener tls80: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                ],
            )
            .given(OUR_CLASS)
            .with(with_admin_port_10254),
            Case::new(
                "gateway-api.md Status: two listeners of one Gateway on a port of their own with different protocols: ProtocolConflict, neither served",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: http, protocol: HTTP, port: 80}
                  - {name: plain, protocol: HTTP, port: 9000}
                  - {name: secure, protocol: HTTPS, port: 9000, tls: {certificateRefs: [{name: cert}]}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener http: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener plain: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                    "status Gateway default/edge listener secure: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance GatewayInvalidFrontendClientCertificateValidation: a listener whose client-certificate CA cannot be used is Accepted=False(NoValidCACertificate), its ResolvedRefs naming why (InvalidCACertificateRef, InvalidCACertificateKind)",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}
                  - {name: https-kind, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: cert}]}}
                  tls:
                    frontend:
                      default:
                        validation: {caCertificateRefs: [{kind: ConfigMap, group: '', name: missing}]}
                      perPort:
                      - port: 8443
                        tls:
                          validation: {caCertificateRefs: [{kind: Service, group: '', name: web}]}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=False(ListenersNotValid) Programmed=False(Invalid)",
                    "status Gateway default/edge listener https: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(NoValidCACertificate) ResolvedRefs=False(InvalidCACertificateRef) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener https-kind: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(NoValidCACertificate) ResolvedRefs=False(InvalidCACertificateKind) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: a listener with the port, protocol and hostname of an earlier listener of its Gateway: HostnameConflict, only the first is served",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: first, protocol: HTTP, port: 80, hostname: app.test}
                  - {name: second, protocol: HTTP, port: 80, hostname: APP.test}
                  - {name: other, protocol: HTTP, port: 80, hostname: other.test}
                ---
                kind: HTTPRoute
                metadata: {name: app}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener first: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener other: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener second: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(HostnameConflict) ResolvedRefs=True Programmed=False(HostnameConflict) Conflicted=True(HostnameConflict)",
                    "status HTTPRoute default/app parent default/edge: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: two listeners of two Gateways of ours on one port of their own with different protocols (one port is one frontend): the older Gateway's is served, the newer's conflicts",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: one}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: plain, protocol: HTTP, port: 9000}]
                ---
                kind: Gateway
                metadata: {name: two}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: secure, protocol: HTTPS, port: 9000, tls: {certificateRefs: [{name: cert}]}}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/one: Accepted=True Programmed=True",
                    "status Gateway default/one listener plain: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/two: Accepted=False(ListenersNotValid) Programmed=False(Invalid)",
                    "status Gateway default/two listener secure: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: an HTTPS listener in TLS mode Passthrough is not Accepted (UnsupportedValue): passthrough is a TLS listener's",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: http, protocol: HTTP, port: 80}
                  - {name: passthrough, protocol: HTTPS, port: 443, tls: {mode: Passthrough, certificateRefs: [{name: cert}]}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener http: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener passthrough: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(UnsupportedValue) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: listener 'ResolvedRefs (InvalidCertificateRef ...)': no certificateRef, a missing Secret, a malformed one, or not a Secret",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Secret
                metadata: {name: bad}
                type: kubernetes.io/tls
                stringData: {tls.crt: not a certificate, tls.key: not a key}
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: good, protocol: HTTPS, port: 443, hostname: good.test, tls: {certificateRefs: [{name: cert}]}}
                  - {name: none, protocol: HTTPS, port: 443, hostname: none.test}
                  - {name: missing, protocol: HTTPS, port: 443, hostname: missing.test, tls: {certificateRefs: [{name: missing}]}}
                  - {name: malformed, protocol: HTTPS, port: 443, hostname: malformed.test, tls: {certificateRefs: [{name: bad}]}}
                  - {name: kind, protocol: HTTPS, port: 443, hostname: kind.test, tls: {certificateRefs: [{kind: ConfigMap, name: cert}]}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener good: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener kind: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=False(InvalidCertificateRef) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener malformed: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=False(InvalidCertificateRef) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener missing: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=False(InvalidCertificateRef) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener none: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=False(InvalidCertificateRef) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: listener 'ResolvedRefs (... RefNotPermitted)': a Secret of another namespace without a ReferenceGrant from the Gateway",
                "
                kind: Secret
                metadata: {name: granted, namespace: vault}
                type: kubernetes.io/tls
                ---
                kind: Secret
                metadata: {name: private, namespace: vault}
                type: kubernetes.io/tls
                ---
                kind: ReferenceGrant
                metadata: {name: gateways-to-certs, namespace: vault}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
                  to: [{group: '', kind: Secret, name: granted}]
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: granted, protocol: HTTPS, port: 443, hostname: a.test, tls: {certificateRefs: [{name: granted, namespace: vault}]}}
                  - {name: private, protocol: HTTPS, port: 443, hostname: b.test, tls: {certificateRefs: [{name: private, namespace: vault}]}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener granted: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener private: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=False(RefNotPermitted) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn route_kinds() {
    check(
        Show::STATUS,
        &[Case::new(
            "gateway-api.md Status: a listener asking for route kinds it cannot serve has ResolvedRefs=False(InvalidRouteKinds) and lists only the kinds it serves; it is programmed while it serves one; one asking for GRPCRoute only serves GRPCRoutes",
            "
            kind: Gateway
            metadata: {name: edge}
            spec:
              gatewayClassName: portcullis
              listeners:
              - {name: grpc, protocol: HTTP, port: 80, hostname: grpc.test, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}
              - {name: both, protocol: HTTP, port: 80, hostname: both.test, allowedRoutes: {kinds: [{kind: HTTPRoute}, {kind: FooRoute}]}}
              - {name: http, protocol: HTTP, port: 80, hostname: http.test, allowedRoutes: {kinds: [{kind: HTTPRoute}]}}
            ",
            &[
                "status GatewayClass portcullis: Accepted=True",
                "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                "status Gateway default/edge listener both: routes 0, kinds [HTTPRoute], Accepted=True ResolvedRefs=False(InvalidRouteKinds) Programmed=True Conflicted=False(NoConflicts)",
                "status Gateway default/edge listener grpc: routes 0, kinds [GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                "status Gateway default/edge listener http: routes 0, kinds [HTTPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
            ],
        )
        .given(OUR_CLASS)],
    );
}

#[test]
fn attached_routes() {
    check(
        Show::STATUS,
        &[Case::new(
            "gateway-api.md Status: 'attachedRoutes': per listener, the routes attached to it; a route refused by every listener counts nowhere",
            "
            kind: Gateway
            metadata: {name: edge}
            spec:
              gatewayClassName: portcullis
              listeners:
              - {name: a, protocol: HTTP, port: 80, hostname: a.test}
              - {name: b, protocol: HTTP, port: 80, hostname: b.test}
              - {name: c, protocol: HTTP, port: 80, hostname: '*.c.test'}
            ---
            kind: HTTPRoute
            metadata: {name: only-a}
            spec:
              parentRefs: [{name: edge}]
              hostnames: [a.test]
              rules: [{matches: [{path: {value: /only-a}}], backendRefs: [{name: web, port: 80}]}]
            ---
            kind: HTTPRoute
            metadata: {name: everywhere}
            spec:
              parentRefs: [{name: edge}]
              rules: [{backendRefs: [{name: web, port: 80}]}]
            ---
            kind: HTTPRoute
            metadata: {name: section-b}
            spec:
              parentRefs: [{name: edge, sectionName: b}]
              rules: [{matches: [{path: {value: /section-b}}], backendRefs: [{name: web, port: 80}]}]
            ---
            kind: HTTPRoute
            metadata: {name: elsewhere}
            spec:
              parentRefs: [{name: edge}]
              hostnames: [x.other.test]
              rules: [{backendRefs: [{name: web, port: 80}]}]
            ",
            &[
                "status GatewayClass portcullis: Accepted=True",
                "status Gateway default/edge: Accepted=True Programmed=True",
                "status Gateway default/edge listener a: routes 2, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                "status Gateway default/edge listener b: routes 2, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                "status Gateway default/edge listener c: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                "status HTTPRoute default/elsewhere parent default/edge: Accepted=False(NoMatchingListenerHostname) ResolvedRefs=True",
                "status HTTPRoute default/everywhere parent default/edge: Accepted=True ResolvedRefs=True",
                "status HTTPRoute default/only-a parent default/edge: Accepted=True ResolvedRefs=True",
                "status HTTPRoute default/section-b parent default/edge#b: Accepted=True ResolvedRefs=True",
                "diagnostic HTTPRoute default/elsewhere: spec.parentRefs[0]: no hostname of this route matches a listener of Gateway default/edge; it is not attached there",
            ],
        )
        .given(OUR_CLASS)],
    );
}
