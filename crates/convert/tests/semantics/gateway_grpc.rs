//! gateway-api.md "GRPCRoute": method and header matches as the paths and conditions a
//! gRPC call (`POST /<service>/<method>`) is routed by, their precedence, HTTP/2
//! backends, 503 for no valid backend, filters, status, and the HTTPRoute it may not
//! share a hostname with. Cases marked "conformance" port the upstream Gateway API
//! conformance tests of the same name (their objects and expectations, renamed to the
//! Services every case has).

use crate::gateway_fixtures::{EDGE, OUR_CLASS};
use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn method_matches() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "conformance GRPCExactMethodMatching: service and method, Exact, is the exact path /<service>/<method>; conformance GRPCRouteNamedRule: named rules are served as any",
                "
                kind: GRPCRoute
                metadata: {name: exact-matching}
                spec:
                  parentRefs: [{name: edge}]
                  rules:
                  - name: echo
                    matches: [{method: {service: gateway_api_conformance.grpc_echo.grpcecho.GrpcEcho, method: Echo}}]
                    backendRefs: [{name: web, port: 80}]
                  - name: echo-two
                    matches: [{method: {service: gateway_api_conformance.grpc_echo.grpcecho.GrpcEcho, method: EchoTwo}}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route (any host) /gateway_api_conformance.grpc_echo.grpcecho.GrpcEcho/Echo Exact [http] -> default_web_80_grpc",
                    "route (any host) /gateway_api_conformance.grpc_echo.grpcecho.GrpcEcho/EchoTwo Exact [http] -> default_api_80_grpc",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md GRPCRoute: a service alone matches every method of it (the prefix /<service>), a method alone that method of any service, an empty match every call; exact before regular expressions",
                "
                kind: GRPCRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules:
                  - matches: [{method: {service: pkg.Echo}}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{method: {method: Health}}]
                    backendRefs: [{name: api, port: 80}]
                  - backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route grpc.test / Prefix [http] #1 if path ~ ^/[^/]+/Health$ -> default_api_80_grpc",
                    "route grpc.test / Prefix [http] #2 -> default_api_80_grpc",
                    "route grpc.test /pkg.Echo Prefix [http] -> default_web_80_grpc",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md GRPCRoute: RegularExpression matches the whole service and the whole method, an empty one any name; the one with the longer service, then the longer method, is tried first, then the one with more header matches",
                "
                kind: GRPCRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules:
                  - matches: [{method: {type: RegularExpression, method: 'Get.*'}, headers: [{name: x-a, value: '1'}, {name: x-b, value: '2'}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{method: {type: RegularExpression, service: 'pkg\\..*', method: 'Get.*'}}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{method: {type: RegularExpression, service: 'pkg\\.v1\\..*'}}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route grpc.test / Prefix [http] #1 if path ~ ^/(?:pkg\\.v1\\..*)/(?:[^/]+)$ -> default_api_80_grpc",
                    "route grpc.test / Prefix [http] #2 if path ~ ^/(?:pkg\\..*)/(?:Get.*)$ -> default_web_80_grpc",
                    "route grpc.test / Prefix [http] #3 if path ~ ^/(?:[^/]+)/(?:Get.*)$, header x-a = 1, header x-b = 2 -> default_web_80_grpc",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md GRPCRoute: a method match needs a service or a method; names are checked (an Exact service is dot-separated identifiers, a method an identifier, a pattern PCRE2); a bad match is reported and left out, the others of the rule kept",
                "
                kind: GRPCRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules:
                  - matches:
                    - {method: {type: Exact}}
                    - {method: {service: 'pkg/Echo'}}
                    - {method: {service: pkg.Echo, method: 'Say Hi'}}
                    - {method: {type: RegularExpression, service: '(unclosed'}}
                    - {method: {service: pkg.Echo, method: Say}}
                    backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route grpc.test /pkg.Echo/Say Exact [http] -> default_web_80_grpc",
                    "diagnostic GRPCRoute default/r: spec.rules[0].matches[0].method: a method match needs a service, a method or both; the match is skipped",
                    "diagnostic GRPCRoute default/r: spec.rules[0].matches[1].method.service: 'pkg/Echo' is not a gRPC service name (names of letters, digits and '_' joined by '.'); the match is skipped",
                    "diagnostic GRPCRoute default/r: spec.rules[0].matches[2].method.method: 'Say Hi' is not a gRPC method name (letters, digits and '_', not starting with a digit); the match is skipped",
                    "diagnostic GRPCRoute default/r: spec.rules[0].matches[3].method.service: '(unclosed' is not a valid PCRE2 regular expression: PCRE2: error compiling pattern at offset 9: missing closing parenthesis; the match is skipped",
                ],
            )
            .given(EDGE),
        ],
    );
}

#[test]
fn multiple_gateways() {
    check(
        Show::ROUTES,
        &[Case::new(
            "conformance GRPCRouteMultipleGateways, on Gateways of ports of their own: a route shared by both Gateways is served on both; each Gateway's dedicated route for the same method keeps to its own frontend",
            "
            kind: Gateway
            metadata: {name: same-namespace}
            spec:
              gatewayClassName: portcullis
              listeners: [{name: http, protocol: HTTP, port: 8081}]
            ---
            kind: Gateway
            metadata: {name: all-namespaces}
            spec:
              gatewayClassName: portcullis
              listeners: [{name: http, protocol: HTTP, port: 8082, allowedRoutes: {namespaces: {from: All}}}]
            ---
            kind: GRPCRoute
            metadata: {name: multiple-gateways-shared-route}
            spec:
              parentRefs: [{name: same-namespace}, {name: all-namespaces}]
              rules:
              - matches: [{method: {service: gateway_api_conformance.echo_basic.grpcecho.GrpcEcho, method: Echo}}]
                backendRefs: [{name: web, port: 80}]
            ---
            kind: GRPCRoute
            metadata: {name: same-namespace-dedicated-route}
            spec:
              parentRefs: [{name: same-namespace}]
              rules:
              - matches: [{method: {service: gateway_api_conformance.echo_basic.grpcecho.GrpcEcho, method: EchoTwo}}]
                backendRefs: [{name: api, port: 80}]
            ---
            kind: GRPCRoute
            metadata: {name: all-namespaces-dedicated-route}
            spec:
              parentRefs: [{name: all-namespaces}]
              rules:
              - matches: [{method: {service: gateway_api_conformance.echo_basic.grpcecho.GrpcEcho, method: EchoTwo}}]
                backendRefs: [{name: web, port: 80}]
            ",
            &[
                "route (any host) /gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo Exact [http:8081,http:8082] -> default_web_80_grpc",
                "route (any host) /gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/EchoTwo Exact [http:8081,http:8082] #1 if via [http:8082] -> default_web_80_grpc",
                "route (any host) /gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/EchoTwo Exact [http:8081,http:8082] #2 if via [http:8081] -> default_api_80_grpc",
            ],
        )
        .given(OUR_CLASS)],
    );
}

#[test]
fn header_matches_and_filters() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "conformance GRPCRouteHeaderMatching: headers are ANDed within a match and the matches ORed; more header matches first, then rule order",
                "
                kind: GRPCRoute
                metadata: {name: grpc-header-matching}
                spec:
                  parentRefs: [{name: edge}]
                  rules:
                  - matches: [{headers: [{name: version, value: one}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{headers: [{name: version, value: two}]}]
                    backendRefs: [{name: api, port: 80}]
                  - matches: [{headers: [{name: version, value: two}, {name: color, value: orange}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{headers: [{name: color, value: blue}]}, {headers: [{name: color, value: green}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{headers: [{name: color, value: red}]}, {headers: [{name: color, value: yellow}]}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route (any host) / Prefix [http] #1 if header version = two, header color = orange -> default_web_80_grpc",
                    "route (any host) / Prefix [http] #2 if header version = one -> default_web_80_grpc",
                    "route (any host) / Prefix [http] #3 if header version = two -> default_api_80_grpc",
                    "route (any host) / Prefix [http] #4 if header color = blue -> default_web_80_grpc",
                    "route (any host) / Prefix [http] #5 if header color = green -> default_web_80_grpc",
                    "route (any host) / Prefix [http] #6 if header color = red -> default_api_80_grpc",
                    "route (any host) / Prefix [http] #7 if header color = yellow -> default_api_80_grpc",
                ],
            )
            .given(EDGE),
            Case::new(
                "conformance GRPCRouteRequestHeaderModifier; gateway-api.md GRPCRoute: the core filters RequestHeaderModifier and ResponseHeaderModifier, on a rule and on a backendRef",
                "
                kind: GRPCRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules:
                  - matches: [{method: {service: pkg.Echo, method: Say}}]
                    filters:
                    - type: RequestHeaderModifier
                      requestHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}], add: [{name: X-Header-Add, value: header-val-1}], remove: [X-Header-Remove]}
                    - type: ResponseHeaderModifier
                      responseHeaderModifier: {set: [{name: X-Served-By, value: portcullis}]}
                    backendRefs:
                    - name: web
                      port: 80
                      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Backend, value: web}]}}]
                ",
                &[
                    "route grpc.test /pkg.Echo/Say Exact [http] -> request set X-Header-Set: set-overwrites-values; request add X-Header-Add: header-val-1; request remove X-Header-Remove; response set X-Served-By: portcullis; default_web_80_grpc (request set X-Backend: web)",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md GRPCRoute: RequestMirror (extended) is not supported: reported, and the rule served without the copy (on a backendRef, its share answered 503)",
                "
                kind: GRPCRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules:
                  - matches: [{method: {service: pkg.Echo}}]
                    filters: [{type: RequestMirror, requestMirror: {backendRef: {name: api, port: 80}}}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{method: {service: pkg.Other}}]
                    backendRefs:
                    - name: web
                      port: 80
                      filters: [{type: RequestMirror, requestMirror: {backendRef: {name: api, port: 80}}}]
                ",
                &[
                    "route grpc.test /pkg.Echo Prefix [http] -> default_web_80_grpc",
                    "route grpc.test /pkg.Other Prefix [http] -> 503",
                    "diagnostic GRPCRoute default/r: spec.rules[0].filters[0]: filter type RequestMirror is not supported; the requests this rule takes are served without their copy",
                    "diagnostic GRPCRoute default/r: spec.rules[1].backendRefs[0].filters[0]: filter type RequestMirror is not supported on a backendRef; this backend's share of the traffic is answered with 503",
                ],
            )
            .given(EDGE),
        ],
    );
}

#[test]
fn backends() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "gateway-api.md GRPCRoute: backends are spoken to over HTTP/2 in clear text (h2c); TLS (h2 by ALPN) where the Service port's appProtocol or backend-protocol asks for it",
                "
                kind: Service
                metadata: {name: secure}
                spec: {ports: [{port: 443, appProtocol: https}]}
                ---
                kind: Service
                metadata: {name: keyed, annotations: {portcullis.dev/backend-protocol: grpcs}}
                spec: {ports: [{port: 443}]}
                ---
                kind: GRPCRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules:
                  - matches: [{method: {service: pkg.A}}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{method: {service: pkg.B}}]
                    backendRefs: [{name: secure, port: 443}]
                  - matches: [{method: {service: pkg.C}}]
                    backendRefs: [{name: keyed, port: 443}]
                ",
                &[
                    "route grpc.test /pkg.A Prefix [http] -> default_web_80_grpc",
                    "route grpc.test /pkg.B Prefix [http] -> default_secure_443_grpc",
                    "route grpc.test /pkg.C Prefix [http] -> default_keyed_443",
                    "backend default_web_80_grpc h2 servers 10.0.0.1:8080",
                    "backend default_secure_443_grpc h2-ssl servers (none)",
                    "backend default_keyed_443 h2-ssl servers (none)",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md GRPCRoute: a Service port an HTTPRoute and a GRPCRoute both use is two backends: the GRPCRoute's servers spoken to in HTTP/2, the HTTPRoute's in HTTP/1, whichever is older",
                "
                kind: HTTPRoute
                metadata: {name: site, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [www.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: calls, creationTimestamp: '2024-02-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route grpc.test / Prefix [http] -> default_web_80_grpc",
                    "route www.test / Prefix [http] -> default_web_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                    "backend default_web_80_grpc h2 servers 10.0.0.1:8080",
                ],
            )
            .given(EDGE),
            Case::new(
                "conformance GRPCRouteAllBackendsWeightZero: every backend of weight 0 answers UNAVAILABLE (503); conformance GRPCRouteWeight: weights split the calls; an invalid backend's share is 503",
                "
                kind: GRPCRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules:
                  - matches: [{method: {service: pkg.Zero}}]
                    backendRefs: [{name: web, port: 80, weight: 0}, {name: api, port: 80, weight: 0}]
                  - matches: [{method: {service: pkg.Split}}]
                    backendRefs: [{name: web, port: 80, weight: 70}, {name: api, port: 80, weight: 30}]
                  - matches: [{method: {service: pkg.Missing}}]
                    backendRefs: [{name: web, port: 80}, {name: gone, port: 80}]
                ",
                &[
                    "route grpc.test /pkg.Missing Prefix [http] -> default_web_80_grpc weight 1, 503 weight 1",
                    "route grpc.test /pkg.Split Prefix [http] -> default_web_80_grpc weight 70, default_api_80_grpc weight 30",
                    "route grpc.test /pkg.Zero Prefix [http] -> 503",
                    "backend default_api_80_grpc h2 servers 10.0.0.2:8080",
                    "backend default_web_80_grpc h2 servers 10.0.0.1:8080",
                    "diagnostic GRPCRoute default/r: spec.rules[2].backendRefs[1]: service default/gone not found; its share of the traffic is answered with 503",
                ],
            )
            .given(EDGE),
        ],
    );
}

#[test]
fn status() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance GRPCRouteListenerHostnameMatching: each GRPCRoute attaches to its listener by sectionName, its hosts the listener's",
                "
                kind: Gateway
                metadata: {name: hosts}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: listener-1, port: 80, protocol: HTTP, hostname: bar.com}
                  - {name: listener-2, port: 80, protocol: HTTP, hostname: foo.bar.com}
                  - {name: listener-3, port: 80, protocol: HTTP, hostname: '*.bar.com'}
                  - {name: listener-4, port: 80, protocol: HTTP, hostname: '*.foo.com'}
                ---
                kind: GRPCRoute
                metadata: {name: backend-v1}
                spec:
                  parentRefs: [{name: hosts, sectionName: listener-1}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: backend-v2}
                spec:
                  parentRefs: [{name: hosts, sectionName: listener-2}]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: backend-v3}
                spec:
                  parentRefs: [{name: hosts, sectionName: listener-3}, {name: hosts, sectionName: listener-4}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/hosts: Accepted=True Programmed=True",
                    "status Gateway default/hosts listener listener-1: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/hosts listener listener-2: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/hosts listener listener-3: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/hosts listener listener-4: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status GRPCRoute default/backend-v1 parent default/hosts#listener-1: Accepted=True ResolvedRefs=True",
                    "status GRPCRoute default/backend-v2 parent default/hosts#listener-2: Accepted=True ResolvedRefs=True",
                    "status GRPCRoute default/backend-v3 parent default/hosts#listener-3: Accepted=True ResolvedRefs=True",
                    "status GRPCRoute default/backend-v3 parent default/hosts#listener-4: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance GRPCRouteMultipleRoutesAttachmentSameHostnameIntersection: routes whose wildcard hostnames intersect their listener's are accepted; a listener whose kinds leave GRPCRoute out does not take one (NotAllowedByListeners); a missing Service is ResolvedRefs=False(BackendNotFound)",
                "
                kind: Gateway
                metadata: {name: exact}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: listener-exact-hostname, protocol: HTTP, port: 80, hostname: abc.example.com, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}]
                ---
                kind: Gateway
                metadata: {name: wildcard}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: listener-wc-hostname, protocol: HTTP, port: 80, hostname: '*.example.com', allowedRoutes: {kinds: [{kind: GRPCRoute}]}}]
                ---
                kind: Gateway
                metadata: {name: http-only}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, hostname: other.test, allowedRoutes: {kinds: [{kind: HTTPRoute}]}}]
                ---
                kind: GRPCRoute
                metadata: {name: wc-older}
                spec:
                  parentRefs: [{name: exact}]
                  hostnames: ['*.example.com']
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: less-specific-older}
                spec:
                  parentRefs: [{name: wildcard}]
                  hostnames: ['*.com']
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: refused}
                spec:
                  parentRefs: [{name: http-only}]
                  rules: [{backendRefs: [{name: gone, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/exact: Accepted=True Programmed=True",
                    "status Gateway default/exact listener listener-exact-hostname: routes 1, kinds [GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/http-only: Accepted=True Programmed=True",
                    "status Gateway default/http-only listener http: routes 0, kinds [HTTPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/wildcard: Accepted=True Programmed=True",
                    "status Gateway default/wildcard listener listener-wc-hostname: routes 1, kinds [GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status GRPCRoute default/less-specific-older parent default/wildcard: Accepted=True ResolvedRefs=True",
                    "status GRPCRoute default/refused parent default/http-only: Accepted=False(NotAllowedByListeners) ResolvedRefs=False(BackendNotFound)",
                    "status GRPCRoute default/wc-older parent default/exact: Accepted=True ResolvedRefs=True",
                    "diagnostic GRPCRoute default/refused: spec.parentRefs[0]: no listener of Gateway default/http-only accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                    "diagnostic GRPCRoute default/refused: spec.rules[0].backendRefs[0]: service default/gone not found; its share of the traffic is answered with 503",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn hostnames_shared_with_an_http_route() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "gateway-api.md GRPCRoute: an HTTPRoute and a GRPCRoute with a hostname in common on one listener: the older is accepted, the younger Accepted=False(HostnameConflict) there; hostnames apart, both are accepted",
                "
                kind: HTTPRoute
                metadata: {name: web, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [shared.test, web.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: grpc, creationTimestamp: '2024-02-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: ['*.shared.test', shared.test]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: apart, creationTimestamp: '2024-02-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: younger, creationTimestamp: '2024-03-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: ['*.test']
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status Gateway default/edge listener http: routes 2, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status GRPCRoute default/apart parent default/edge: Accepted=True ResolvedRefs=True",
                    "status GRPCRoute default/grpc parent default/edge: Accepted=False(HostnameConflict) ResolvedRefs=True",
                    "status HTTPRoute default/web parent default/edge: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/younger parent default/edge: Accepted=False(HostnameConflict) ResolvedRefs=True",
                    "diagnostic GRPCRoute default/grpc: spec.parentRefs[0]: a hostname of this route is also one of HTTPRoute default/web, which is older and attached to listener http of Gateway default/edge; an HTTPRoute and a GRPCRoute may not share a hostname on a listener, so this route is not attached there",
                    "diagnostic HTTPRoute default/younger: spec.parentRefs[0]: a hostname of this route is also one of GRPCRoute default/apart, which is older and attached to listener http of Gateway default/edge; an HTTPRoute and a GRPCRoute may not share a hostname on a listener, so this route is not attached there",
                ],
            )
            .given(EDGE)
            .expecting_too(&[
                "status GatewayClass portcullis: Accepted=True",
                "status Gateway default/edge: Accepted=True Programmed=True",
            ]),
            Case::new(
                "gateway-api.md GRPCRoute: only the hosts an HTTPRoute has on the listener count: a host that a more specific listener claims (listener isolation) is not shared there",
                "
                kind: Gateway
                metadata: {name: isolated}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: any, protocol: HTTP, port: 80}
                  - {name: foo, protocol: HTTP, port: 80, hostname: foo.test}
                ---
                kind: HTTPRoute
                metadata: {name: web, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: isolated}]
                  hostnames: [foo.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: GRPCRoute
                metadata: {name: grpc, creationTimestamp: '2024-02-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: isolated, sectionName: any}]
                  hostnames: ['*.test']
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "status Gateway default/isolated: Accepted=True Programmed=True",
                    "status Gateway default/isolated listener any: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/isolated listener foo: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status GRPCRoute default/grpc parent default/isolated#any: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/web parent default/isolated: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(OUR_CLASS)
            .expecting_too(&["status GatewayClass portcullis: Accepted=True"]),
        ],
    );
}
