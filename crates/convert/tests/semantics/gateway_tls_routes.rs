//! gateway-api.md "TLS passthrough": TLSRoutes on TLS listeners in Passthrough mode, the
//! upstream conformance cases (`conformance/tests/tlsroute-*`) as conversion and status
//! tables; Ingress `ssl-passthrough` beside them.

use crate::gateway_fixtures::OUR_CLASS;
use crate::summary::Show;
use crate::support::{Case, check};

/// A Gateway `edge` with one TLS listener `tls` in Passthrough mode on port 443, with
/// `hostname` (empty: none) and routes of its own namespace.
macro_rules! passthrough_gateway {
    ($hostname:literal) => {
        concat!(
            "
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: portcullis
  listeners:
  - {name: tls, protocol: TLS, port: 443, ",
            $hostname,
            " tls: {mode: Passthrough}}
"
        )
    };
}

#[test]
fn tls_routes_pass_their_names_through_to_their_backend() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "conformance TLSRouteSimpleSameNamespace: a TLSRoute's hostname on a TLS Passthrough listener goes to its backend, in mode tcp",
                "
                kind: TLSRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [abc.example.com]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "passthrough abc.example.com -> default_web_80_passthrough",
                    "backend default_web_80_passthrough mode tcp servers 10.0.0.1:8080",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("hostname: \"*.example.com\",")
            )),
        ],
    );
}

#[test]
fn hostnames_intersect_with_the_listeners_as_for_http_routes() {
    let routes = "
        kind: TLSRoute
        metadata: {name: a-exact}
        spec:
          parentRefs: [{name: edge}]
          hostnames: [abc.example.com]
          rules: [{backendRefs: [{name: web, port: 80}]}]
        ---
        kind: TLSRoute
        metadata: {name: b-wildcard}
        spec:
          parentRefs: [{name: edge}]
          hostnames: [\"*.example.com\"]
          rules: [{backendRefs: [{name: api, port: 80}]}]
        ---
        kind: TLSRoute
        metadata: {name: c-broad}
        spec:
          parentRefs: [{name: edge}]
          hostnames: [\"*.com\"]
          rules: [{backendRefs: [{name: api, port: 80}]}]
        ";
    check(
        Show::ROUTES,
        &[
            Case::new(
                "conformance TLSRouteHostnameIntersection, exact listener hostname: only the listener's name is served, by each route that covers it",
                routes,
                &[
                    "passthrough abc.example.com -> default_web_80_passthrough",
                    "diagnostic TLSRoute default/b-wildcard: spec.parentRefs[0]: TLS passthrough for abc.example.com is already configured by TLSRoute default/a-exact, which is older; this one is ignored",
                    "diagnostic TLSRoute default/c-broad: spec.parentRefs[0]: TLS passthrough for abc.example.com is already configured by TLSRoute default/a-exact, which is older; this one is ignored",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("hostname: abc.example.com,")
            )),
            Case::new(
                "conformance TLSRouteHostnameIntersection, more specific wildcard listener: '*.com' narrows to the listener's '*.example.com', which covers one or more labels",
                routes,
                &[
                    "passthrough abc.example.com -> default_web_80_passthrough",
                    "passthrough **.example.com -> default_api_80_passthrough",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("hostname: \"*.example.com\",")
            )),
            Case::new(
                "conformance TLSRouteHostnameIntersection, less specific wildcard listener '*.com': each route keeps its own names",
                routes,
                &[
                    "passthrough abc.example.com -> default_web_80_passthrough",
                    "passthrough **.example.com -> default_api_80_passthrough",
                    "passthrough **.com -> default_api_80_passthrough",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("hostname: \"*.com\",")
            )),
            Case::new(
                "conformance TLSRouteHostnameIntersection, listener without hostname: the routes' names as they are",
                routes,
                &[
                    "passthrough abc.example.com -> default_web_80_passthrough",
                    "passthrough **.example.com -> default_api_80_passthrough",
                    "passthrough **.com -> default_api_80_passthrough",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("")
            )),
        ],
    );
}

#[test]
fn tls_route_status() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance TLSRouteSimpleSameNamespace: the route is Accepted with its references resolved, the listener takes TLSRoutes",
                "
                kind: TLSRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [abc.example.com]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener tls: routes 1, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status TLSRoute default/r parent default/edge: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("hostname: \"*.example.com\",")
            )),
            Case::new(
                "conformance TLSRouteInvalidNoMatchingListenerHostname: no route hostname intersects the listener's",
                "
                kind: TLSRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [abc.example.net]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener tls: routes 0, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status TLSRoute default/r parent default/edge: Accepted=False(NoMatchingListenerHostname) ResolvedRefs=True",
                    "diagnostic TLSRoute default/r: spec.parentRefs[0]: no hostname of this route matches a listener of Gateway default/edge; it is not attached there",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("hostname: \"*.example.com\",")
            )),
            Case::new(
                "conformance TLSRouteInvalidBackendRefNonexistent, TLSRouteInvalidBackendRefUnknownKind, TLSRouteInvalidReferenceGrant: ResolvedRefs False; the names' connections are refused",
                "
                kind: TLSRoute
                metadata: {name: missing}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [missing.example.com]
                  rules: [{backendRefs: [{name: nosuch, port: 443}]}]
                ---
                kind: TLSRoute
                metadata: {name: kind}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [kind.example.com]
                  rules: [{backendRefs: [{group: unknown.example.com, kind: Unknown, name: web, port: 80}]}]
                ---
                kind: TLSRoute
                metadata: {name: grant}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grant.example.com]
                  rules: [{backendRefs: [{name: web, namespace: other, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener tls: routes 3, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status TLSRoute default/grant parent default/edge: Accepted=True ResolvedRefs=False(RefNotPermitted)",
                    "status TLSRoute default/kind parent default/edge: Accepted=True ResolvedRefs=False(InvalidKind)",
                    "status TLSRoute default/missing parent default/edge: Accepted=True ResolvedRefs=False(BackendNotFound)",
                    "diagnostic TLSRoute default/grant: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace other allows this route to use Service web; its connections are refused",
                    "diagnostic TLSRoute default/kind: spec.rules[0].backendRefs[0]: backendRef web of kind unknown.example.com/Unknown is not supported: only Service backends are; its connections are refused",
                    "diagnostic TLSRoute default/missing: spec.rules[0].backendRefs[0]: service default/nosuch not found; its connections are refused",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("hostname: \"*.example.com\",")
            )),
            Case::new(
                "conformance TLSRouteInvalidNoMatchingListener: HTTP and HTTPS listeners take no TLSRoute; an unknown sectionName matches no parent",
                "
                kind: Gateway
                metadata: {name: plain}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80}]
                ---
                kind: Gateway
                metadata: {name: secure}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}]
                ---
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: TLSRoute
                metadata: {name: on-http}
                spec:
                  parentRefs: [{name: plain}]
                  hostnames: [tls.example.com]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: TLSRoute
                metadata: {name: on-https}
                spec:
                  parentRefs: [{name: secure}]
                  hostnames: [tls.example.com]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: TLSRoute
                metadata: {name: no-section}
                spec:
                  parentRefs: [{name: edge, sectionName: nonexistent-listener}]
                  hostnames: [tls.example.com]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener tls: routes 0, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/plain: Accepted=True Programmed=True",
                    "status Gateway default/plain listener http: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/secure: Accepted=True Programmed=True",
                    "status Gateway default/secure listener https: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status TLSRoute default/no-section parent default/edge#nonexistent-listener: Accepted=False(NoMatchingParent) ResolvedRefs=True",
                    "status TLSRoute default/on-http parent default/plain: Accepted=False(NotAllowedByListeners) ResolvedRefs=True",
                    "status TLSRoute default/on-https parent default/secure: Accepted=False(NotAllowedByListeners) ResolvedRefs=True",
                    "diagnostic TLSRoute default/no-section: spec.parentRefs[0]: Gateway default/edge has no listener with this sectionName and port",
                    "diagnostic TLSRoute default/on-http: spec.parentRefs[0]: no TLS listener of Gateway default/plain accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                    "diagnostic TLSRoute default/on-https: spec.parentRefs[0]: no TLS listener of Gateway default/secure accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(concat!(
                "kind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\n",
                passthrough_gateway!("")
            )),
        ],
    );
}

#[test]
fn tls_listener_status() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance TLSRouteListenerPassthroughSupportedKinds: TCPRoute is an invalid kind, TLSRoute a supported one (the listener is served, so the Gateway is accepted, with ListenersNotValid for the refused kind)",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: tls, protocol: TLS, port: 443, tls: {mode: Passthrough}, allowedRoutes: {kinds: [{kind: TCPRoute}, {kind: TLSRoute}]}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener tls: routes 0, kinds [TLSRoute], Accepted=True ResolvedRefs=False(InvalidRouteKinds) Programmed=True Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance TLSRouteListenerTerminateSupportedKinds, TLSRouteListenerMixedTerminationNotSupported: a TLS Terminate listener on a port of its own is served and takes TLSRoutes; Terminate and Passthrough on one port of their own conflict",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: terminate}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: tls-terminate, protocol: TLS, port: 9443, hostname: terminate.example.com, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
                ---
                kind: Gateway
                metadata: {name: mixed}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: tls-terminate, protocol: TLS, port: 8443, hostname: terminate.example.com, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
                  - {name: tls-passthrough, protocol: TLS, port: 8443, hostname: passthrough.example.com, tls: {mode: Passthrough}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/mixed: Accepted=False(ListenersNotValid) Programmed=False(Invalid)",
                    "status Gateway default/mixed listener tls-passthrough: routes 0, kinds [TLSRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                    "status Gateway default/mixed listener tls-terminate: routes 0, kinds [TLSRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                    "status Gateway default/terminate: Accepted=True Programmed=True",
                    "status Gateway default/terminate listener tls-terminate: routes 0, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md TLS passthrough: a TLS listener in Passthrough mode is served on the HTTPS frontend's port only, beside HTTPS listeners there",
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
                  - {name: https, protocol: HTTPS, port: 443, hostname: www.example.com, tls: {certificateRefs: [{name: cert}]}}
                  - {name: tls, protocol: TLS, port: 443, hostname: db.example.com, tls: {mode: Passthrough}}
                  - {name: elsewhere, protocol: TLS, port: 9443, tls: {mode: Passthrough}}
                  - {name: plain, protocol: TLS, port: 80, tls: {mode: Passthrough}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True(ListenersNotValid) Programmed=True",
                    "status Gateway default/edge listener elsewhere: routes 0, kinds [TLSRoute], Accepted=False(UnsupportedValue) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener https: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener plain: routes 0, kinds [TLSRoute], Accepted=False(PortUnavailable) ResolvedRefs=True Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener tls: routes 0, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn ingress_ssl_passthrough() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "configuration.md ssl-passthrough: the path '/' of each host passes through, plain HTTP is redirected to HTTPS; other paths and a rule without a host are reported",
                "
                kind: Ingress
                metadata:
                  name: db
                  annotations: {haproxy-ingress.github.io/ssl-passthrough: \"true\"}
                spec:
                  rules:
                  - host: db.example.com
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
                  - http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                ",
                &[
                    "passthrough db.example.com -> default_web_80_passthrough",
                    "route db.example.com / Prefix [http] (https redirect 302) -> default_web_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                    "backend default_web_80_passthrough mode tcp servers 10.0.0.1:8080",
                    "diagnostic Ingress default/db: spec.rules[0].http.paths[1]: with ssl-passthrough only the path '/' is served (HAProxy sees no path in a TLS connection it does not decrypt); '/api' is skipped",
                    "diagnostic Ingress default/db: spec.rules[1].host: ssl-passthrough needs a host name (the TLS SNI is matched against it); the rule is skipped",
                ],
            ),
            Case::new(
                "gateway-api.md TLS passthrough: a host an older object already serves is not passed through by a younger one (it would take all its HTTPS traffic); an older passthrough keeps its host (a passthrough host has TLS: plain HTTP to it is redirected, as for any Ingress TLS host)",
                "
                kind: Ingress
                metadata: {name: a-site}
                spec:
                  rules:
                  - host: site.example.com
                    http:
                      paths:
                      - {path: /app, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                ---
                kind: Ingress
                metadata:
                  name: b-takeover
                  annotations: {haproxy-ingress.github.io/ssl-passthrough: \"true\"}
                spec:
                  rules:
                  - host: site.example.com
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
                  - host: db.example.com
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
                ---
                kind: Ingress
                metadata: {name: c-late}
                spec:
                  rules:
                  - host: db.example.com
                    http:
                      paths:
                      - {path: /late, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                ",
                &[
                    "route site.example.com /app Prefix (https redirect 302) -> default_web_80",
                    "route site.example.com / Prefix [http] (https redirect 302) -> default_api_80",
                    "route db.example.com / Prefix [http] (https redirect 302) -> default_api_80",
                    "route db.example.com /late Prefix (https redirect 302) -> default_web_80",
                    "passthrough db.example.com -> default_api_80_passthrough",
                    "backend default_api_80 servers 10.0.0.2:8080",
                    "backend default_api_80_passthrough mode tcp servers 10.0.0.2:8080",
                    "backend default_web_80 servers 10.0.0.1:8080",
                    "diagnostic Ingress default/b-takeover: spec.rules[0].http.paths[0]: host site.example.com is already served by Ingress default/a-site, which is older; TLS passthrough for it is ignored",
                ],
            ),
            Case::new(
                "configuration.md ssl-passthrough-http-port: plain HTTP goes to that port of the Service",
                "
                kind: Ingress
                metadata:
                  name: db
                  annotations: {haproxy-ingress.github.io/ssl-passthrough: \"true\", haproxy-ingress.github.io/ssl-passthrough-http-port: \"8080\"}
                spec:
                  rules:
                  - host: db.example.com
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: both, port: {number: 443}}}}
                ---
                kind: Service
                metadata: {name: both}
                spec: {ports: [{port: 443, name: https}, {port: 8080, name: http}]}
                ---
                kind: EndpointSlice
                metadata: {name: both-1, labels: {kubernetes.io/service-name: both}}
                addressType: IPv4
                ports: [{port: 9443, name: https}, {port: 9080, name: http}]
                endpoints: [{addresses: [10.0.0.3]}]
                ",
                &[
                    "passthrough db.example.com -> default_both_https_passthrough",
                    "route db.example.com / Prefix [http] -> default_both_http",
                    "backend default_both_http servers 10.0.0.3:9080",
                    "backend default_both_https_passthrough mode tcp servers 10.0.0.3:9443",
                ],
            ),
        ],
    );
}
