//! gateway-api.md "What is served": the classes, listeners and hosts a route is served on.

use crate::gateway_fixtures::{EDGE, OUR_CLASS};
use crate::summary::Show;
use crate::support::{Case, check, with_ports_8080_and_8443};

#[test]
fn classes_and_listeners() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md: 'GatewayClass: those with controllerName: portcullis.dev/gateway-controller'; 'HTTP on port 80 (the HTTP frontend)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.test / Prefix [http] -> default_web_80"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: '(v1, and v1beta1 where the kind exists there)'",
                "
                apiVersion: gateway.networking.k8s.io/v1beta1
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.test / Prefix [http] -> default_web_80"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: a Gateway of a GatewayClass of another controller is not served, nor its routes reported",
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
                  parentRefs: [{name: foreign}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[],
            ),
            Case::new(
                "gateway-api.md: 'HTTPS with TLS mode Terminate on port 443 (the HTTPS frontend)'; 'An HTTPS listener's first certificateRefs Secret is served by SNI for the route's hosts'",
                "
                kind: Secret
                metadata: {name: first}
                type: kubernetes.io/tls
                ---
                kind: Secret
                metadata: {name: second}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: https, protocol: HTTPS, port: 443, tls: {mode: Terminate, certificateRefs: [{name: first}, {name: second}]}}
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
                    "tls a.test default/first",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'and either on any other port (a frontend of its own, bound on that port ...)'",
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
                  - {name: plain, protocol: HTTP, port: 8080, hostname: plain.test}
                  - {name: secure, protocol: HTTPS, port: 8443, hostname: secure.test, tls: {certificateRefs: [{name: cert}]}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route plain.test / Prefix [http:8080] -> default_web_80",
                    "route secure.test / Prefix [https:8443] -> default_web_80",
                    "tls secure.test default/cert",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'HTTP on port 80 (the HTTP frontend, --http-port), HTTPS ... on port 443 (the HTTPS frontend, --https-port)': with --http-port 8080 --https-port 8443, listeners on 80 and 8080 are the HTTP frontend's, on 443 and 8443 the HTTPS one's",
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
                  - {name: eighty, protocol: HTTP, port: 80, hostname: eighty.test}
                  - {name: flag, protocol: HTTP, port: 8080, hostname: flag.test}
                  - {name: secure, protocol: HTTPS, port: 443, hostname: secure.test, tls: {certificateRefs: [{name: cert}]}}
                  - {name: secureflag, protocol: HTTPS, port: 8443, hostname: secureflag.test, tls: {certificateRefs: [{name: cert}]}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route eighty.test / Prefix [http] -> default_web_80",
                    "route flag.test / Prefix [http] -> default_web_80",
                    "route secure.test / Prefix [https] -> default_web_80",
                    "route secureflag.test / Prefix [https] -> default_web_80",
                    "tls secure.test default/cert",
                    "tls secureflag.test default/cert",
                ],
            )
            .given(OUR_CLASS)
            .with(with_ports_8080_and_8443),
            Case::new(
                "gateway-api.md Not served yet: 'HTTP on port 443 and HTTPS on port 80 (the other protocol's frontend ...)' and 'protocols other than HTTP and HTTPS': no route attaches there",
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
                  - {name: plain443, protocol: HTTP, port: 443}
                  - {name: tls80, protocol: HTTPS, port: 80, tls: {certificateRefs: [{name: cert}]}}
                  - {name: tcp, protocol: TCP, port: 9000}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: no listener of Gateway default/edge accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: an HTTPS listener in TLS mode Passthrough is not Accepted: no route attaches there",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: passthrough, protocol: HTTPS, port: 443, tls: {mode: Passthrough}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: no listener of Gateway default/edge accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'Several Gateways of our class share these frontends, a port's listeners included'",
                "
                kind: Gateway
                metadata: {name: one}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80}, {name: alt, protocol: HTTP, port: 8080}]
                ---
                kind: Gateway
                metadata: {name: two}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80}, {name: alt, protocol: HTTP, port: 8080}]
                ---
                kind: HTTPRoute
                metadata: {name: a}
                spec:
                  parentRefs: [{name: one}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: b}
                spec:
                  parentRefs: [{name: two}]
                  hostnames: [b.test]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "route a.test / Prefix [http,http:8080] -> default_web_80",
                    "route b.test / Prefix [http,http:8080] -> default_api_80",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'Ingresses and HTTPRoutes can be mixed'",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: HTTPRoute
                metadata: {name: b}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [b.test]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route b.test / Prefix [http] -> default_api_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "security.md, 'the oldest claim of a host and path wins': a younger HTTPRoute of another namespace on an Ingress's host and path is taken out and reported, whatever its conditions (a method would otherwise put it first and take every request it matches)",
                "
                kind: Gateway
                metadata: {name: shared, namespace: infra}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
                ---
                kind: Ingress
                metadata: {name: site, creationTimestamp: '2020-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: HTTPRoute
                metadata: {name: hijack, namespace: evil, creationTimestamp: '2025-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: shared, namespace: infra}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /}, method: GET}]
                    backendRefs: [{name: app, port: 80}]
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "diagnostic HTTPRoute evil/hijack: spec.rules[0].backendRefs[0]: service evil/app not found; its share of the traffic is answered with 500",
                    "diagnostic HTTPRoute evil/hijack: spec.rules[0].matches[0]: host a.test path '/' is already routed by Ingress default/site, which is older; this path is ignored",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "an HTTPRoute of the Ingress's own namespace keeps the Gateway API's precedence on the Ingress's path: its conditions are tried first",
                "
                kind: Gateway
                metadata: {name: shared, namespace: infra}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
                ---
                kind: Ingress
                metadata: {name: site, creationTimestamp: '2020-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: HTTPRoute
                metadata: {name: canary, creationTimestamp: '2025-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: shared, namespace: infra}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /}, method: GET}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route a.test / Prefix #1 if method GET, via [http] -> default_api_80",
                    "route a.test / Prefix #2 -> default_web_80",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn allowed_routes() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md: 'allowedRoutes namespaces Same (default)': a route of another namespace is not attached, and reported",
                "
                kind: HTTPRoute
                metadata: {name: same}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [same.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: outsider, namespace: team}
                spec:
                  parentRefs: [{name: edge, namespace: default}]
                  hostnames: [team.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route same.test / Prefix [http] -> default_web_80",
                    "diagnostic HTTPRoute team/outsider: spec.parentRefs[0]: no listener of Gateway default/edge accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                    // Its references are resolved for status all the same.
                    "diagnostic HTTPRoute team/outsider: spec.rules[0].backendRefs[0]: service team/web not found; its share of the traffic is answered with 500",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: 'allowedRoutes namespaces ... All'",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
                ---
                kind: Service
                metadata: {name: app, namespace: team}
                spec: {ports: [{port: 80}]}
                ---
                kind: HTTPRoute
                metadata: {name: outsider, namespace: team}
                spec:
                  parentRefs: [{name: edge, namespace: default}]
                  hostnames: [team.test]
                  rules: [{backendRefs: [{name: app, port: 80}]}]
                ",
                &["route team.test / Prefix [http] -> team_app_80"],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'allowedRoutes namespaces ... Selector (matchLabels ...)': only namespaces with the labels",
                "
                kind: Namespace
                metadata: {name: team, labels: {access: granted}}
                ---
                kind: Namespace
                metadata: {name: other}
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - name: http
                    protocol: HTTP
                    port: 80
                    allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {access: granted}}}}
                ---
                kind: Service
                metadata: {name: app, namespace: team}
                spec: {ports: [{port: 80}]}
                ---
                kind: Service
                metadata: {name: app, namespace: other}
                spec: {ports: [{port: 80}]}
                ---
                kind: HTTPRoute
                metadata: {name: r, namespace: team}
                spec:
                  parentRefs: [{name: edge, namespace: default}]
                  hostnames: [team.test]
                  rules: [{backendRefs: [{name: app, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: r, namespace: other}
                spec:
                  parentRefs: [{name: edge, namespace: default}]
                  hostnames: [other.test]
                  rules: [{backendRefs: [{name: app, port: 80}]}]
                ",
                &[
                    "route team.test / Prefix [http] -> team_app_80",
                    "diagnostic HTTPRoute other/r: spec.parentRefs[0]: no listener of Gateway default/edge accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'allowedRoutes namespaces ... Selector (... matchExpressions)': In, NotIn, Exists, DoesNotExist",
                "
                kind: Namespace
                metadata: {name: team, labels: {env: prod}}
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - name: in
                    protocol: HTTP
                    port: 80
                    hostname: in.test
                    allowedRoutes: {namespaces: {from: Selector, selector: {matchExpressions: [{key: env, operator: In, values: [prod, qa]}]}}}
                  - name: notin
                    protocol: HTTP
                    port: 80
                    hostname: notin.test
                    allowedRoutes: {namespaces: {from: Selector, selector: {matchExpressions: [{key: env, operator: NotIn, values: [prod]}]}}}
                  - name: exists
                    protocol: HTTP
                    port: 80
                    hostname: exists.test
                    allowedRoutes: {namespaces: {from: Selector, selector: {matchExpressions: [{key: env, operator: Exists}]}}}
                  - name: absent
                    protocol: HTTP
                    port: 80
                    hostname: absent.test
                    allowedRoutes: {namespaces: {from: Selector, selector: {matchExpressions: [{key: env, operator: DoesNotExist}]}}}
                ---
                kind: Service
                metadata: {name: app, namespace: team}
                spec: {ports: [{port: 80}]}
                ---
                kind: HTTPRoute
                metadata: {name: r, namespace: team}
                spec:
                  parentRefs: [{name: edge, namespace: default}]
                  rules: [{backendRefs: [{name: app, port: 80}]}]
                ",
                &[
                    "route exists.test / Prefix [http] -> team_app_80",
                    "route in.test / Prefix [http] -> team_app_80",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'allowedRoutes ... and kinds': a listener taking only other kinds does not take an HTTPRoute",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: grpc, protocol: HTTP, port: 80, hostname: grpc.test, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}
                  - {name: http, protocol: HTTP, port: 80, hostname: http.test, allowedRoutes: {kinds: [{kind: HTTPRoute}]}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route http.test / Prefix [http] -> default_web_80"],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn parent_refs() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md: 'parentRefs (with sectionName ...)': only the named listener",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: a, protocol: HTTP, port: 80, hostname: a.test}
                  - {name: b, protocol: HTTP, port: 80, hostname: b.test}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge, sectionName: a}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.test / Prefix [http] -> default_web_80"],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'parentRefs (with ... port)': only the listeners on that port",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: http, protocol: HTTP, port: 80}
                  - {name: alt, protocol: HTTP, port: 8080}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge, port: 8080}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.test / Prefix [http:8080] -> default_web_80"],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: a parentRef without sectionName or port attaches to every listener that accepts the route",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: http, protocol: HTTP, port: 80}
                  - {name: alt, protocol: HTTP, port: 8080}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.test / Prefix [http,http:8080] -> default_web_80"],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: 'NoMatchingParent': a sectionName or port no listener has is reported, and nothing attached",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge, sectionName: nope}, {name: edge, port: 8080}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: Gateway default/edge has no listener with this sectionName and port",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[1]: Gateway default/edge has no listener with this sectionName and port",
                ],
            )
            .given(EDGE),
        ],
    );
}

#[test]
fn hostname_intersection() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md: hostnames: neither the listener nor the route has one: every host",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route (any host) / Prefix [http] -> default_web_80"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: hostnames: only the listener has one: the listener's",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, hostname: a.test}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.test / Prefix [http] -> default_web_80"],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'hostnames intersected with the listener's ... (the more specific of the two; a wildcard covers any number of labels)': listener *.example.test",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, hostname: '*.example.test'}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.example.test, b.c.example.test, '*.d.example.test', example.test, other.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route a.example.test / Prefix [http] -> default_web_80",
                    "route b.c.example.test / Prefix [http] -> default_web_80",
                    "route **.d.example.test / Prefix [http] -> default_web_80",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md: 'hostnames intersected ... (the more specific of the two ...)': route *.example.test under listener a.example.test gives a.example.test",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, hostname: a.example.test}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: ['*.example.test']
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route a.example.test / Prefix [http] -> default_web_80"],
            )
            .given(OUR_CLASS),
            Case::new(
                "routing.md 1: 'a Gateway API wildcard *.<rest>, which covers one to four labels': a route wildcard is a Gateway wildcard entry, not an Ingress one",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: ['*.example.test']
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &["route **.example.test / Prefix [http] -> default_web_80"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Status: 'NoMatchingListenerHostname': no route hostname intersects the listener's",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: http, protocol: HTTP, port: 80, hostname: '*.example.test'}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [example.test, a.other.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: no hostname of this route matches a listener of Gateway default/edge; it is not attached there",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}
