//! gateway-api.md "Status" of HTTPRoutes: per parent Accepted and ResolvedRefs, every reason.

use crate::gateway_fixtures::{EDGE, OUR_CLASS};
use crate::summary::Show;
use crate::support::{Case, check};

/// The status of [`EDGE`] when no route attaches to it.
const EDGE_WITHOUT_ROUTES: &[&str] = &[
    "status GatewayClass portcullis: Accepted=True",
    "status Gateway default/edge: Accepted=True Programmed=True",
    "status Gateway default/edge listener http: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
];

/// The status of [`EDGE`] with one route attached.
const EDGE_WITH_ONE_ROUTE: &[&str] = &[
    "status GatewayClass portcullis: Accepted=True",
    "status Gateway default/edge: Accepted=True Programmed=True",
    "status Gateway default/edge listener http: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
];

/// The status of [`EDGE`] with three routes attached.
const EDGE_WITH_THREE_ROUTES: &[&str] = &[
    "status GatewayClass portcullis: Accepted=True",
    "status Gateway default/edge: Accepted=True Programmed=True",
    "status Gateway default/edge listener http: routes 3, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
];

#[test]
fn accepted() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "gateway-api.md Status: HTTPRoute per-parent Accepted (NoMatchingParent): no listener has the sectionName or port",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge, sectionName: nope}, {name: edge, port: 8080}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge#nope: Accepted=False(NoMatchingParent) ResolvedRefs=True",
                    "status HTTPRoute default/r parent default/edge:8080: Accepted=False(NoMatchingParent) ResolvedRefs=True",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: Gateway default/edge has no listener with this sectionName and port",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[1]: Gateway default/edge has no listener with this sectionName and port",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITHOUT_ROUTES),
            Case::new(
                "gateway-api.md Status: HTTPRoute per-parent Accepted (NotAllowedByListeners): allowedRoutes refuses the route's namespace",
                "
                kind: Service
                metadata: {name: web, namespace: team}
                spec: {ports: [{port: 80}]}
                ---
                kind: HTTPRoute
                metadata: {name: r, namespace: team}
                spec:
                  parentRefs: [{name: edge, namespace: default}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status HTTPRoute team/r parent default/edge: Accepted=False(NotAllowedByListeners) ResolvedRefs=True",
                    "diagnostic HTTPRoute team/r: spec.parentRefs[0]: no listener of Gateway default/edge accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITHOUT_ROUTES),
            Case::new(
                "gateway-api.md Status: ResolvedRefs does not depend on Accepted: a route attached nowhere still reports a backend that does not exist (BackendNotFound)",
                "
                kind: HTTPRoute
                metadata: {name: r, namespace: team}
                spec:
                  parentRefs: [{name: edge, namespace: default}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status HTTPRoute team/r parent default/edge: Accepted=False(NotAllowedByListeners) ResolvedRefs=False(BackendNotFound)",
                    "diagnostic HTTPRoute team/r: spec.rules[0].backendRefs[0]: service team/web not found; its share of the traffic is answered with 500",
                    "diagnostic HTTPRoute team/r: spec.parentRefs[0]: no listener of Gateway default/edge accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITHOUT_ROUTES),
            Case::new(
                "gateway-api.md Status: HTTPRoute per-parent Accepted (NoMatchingListenerHostname)",
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
                  hostnames: [b.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge: Accepted=False(NoMatchingListenerHostname) ResolvedRefs=True",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: no hostname of this route matches a listener of Gateway default/edge; it is not attached there",
                ],
            )
            .given(OUR_CLASS)
            .expecting_too(EDGE_WITHOUT_ROUTES),
            Case::new(
                "gateway-api.md Status: Accepted is per parent: one parentRef attached, another refused",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge, sectionName: http}, {name: edge, sectionName: nope}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge#http: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/r parent default/edge#nope: Accepted=False(NoMatchingParent) ResolvedRefs=True",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[1]: Gateway default/edge has no listener with this sectionName and port",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITH_ONE_ROUTE),
        ],
    );
}

#[test]
fn resolved_refs() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "gateway-api.md Status: ResolvedRefs (BackendNotFound): no such Service, no such port, or no port given",
                "
                kind: HTTPRoute
                metadata: {name: no-service}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: nosuch, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: no-port}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [b.test]
                  rules: [{backendRefs: [{name: web, port: 81}]}]
                ---
                kind: HTTPRoute
                metadata: {name: port-missing}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [c.test]
                  rules: [{backendRefs: [{name: web}]}]
                ",
                &[
                    "status HTTPRoute default/no-port parent default/edge: Accepted=True ResolvedRefs=False(BackendNotFound)",
                    "status HTTPRoute default/no-service parent default/edge: Accepted=True ResolvedRefs=False(BackendNotFound)",
                    "status HTTPRoute default/port-missing parent default/edge: Accepted=True ResolvedRefs=False(BackendNotFound)",
                    "diagnostic HTTPRoute default/no-port: spec.rules[0].backendRefs[0]: service default/web has no port 81; its share of the traffic is answered with 500",
                    "diagnostic HTTPRoute default/no-service: spec.rules[0].backendRefs[0]: service default/nosuch not found; its share of the traffic is answered with 500",
                    "diagnostic HTTPRoute default/port-missing: spec.rules[0].backendRefs[0]: a Service backendRef needs a port; its share of the traffic is answered with 500",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITH_THREE_ROUTES),
            Case::new(
                "gateway-api.md Status: PartiallyInvalid (UnsupportedValue), its message starting with 'Dropped Rule' as the specification asks: a match left out, or answered with 500, for an invalid part (gateway_matches and gateway_filters show the routes)",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: RegularExpression, value: '^/(unclosed'}}, {path: {type: PathPrefix, value: /ok}}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{path: {type: PathPrefix, value: /ext}}]
                    filters: [{type: ExtensionRef, extensionRef: {group: example.com, kind: Thing, name: x}}]
                    backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=True PartiallyInvalid=True(UnsupportedValue)",
                    "diagnostic HTTPRoute default/r: spec.rules[0].matches[0].path: '^/(unclosed' is not a valid PCRE2 regular expression: PCRE2: error compiling pattern at offset 11: missing closing parenthesis; the match is skipped",
                    "diagnostic HTTPRoute default/r: spec.rules[1].filters[0]: filter type ExtensionRef is not supported; the requests this match takes are answered with 500",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITH_ONE_ROUTE),
            Case::new(
                "gateway-api.md Status: PartiallyInvalid too where a backendRef's share is answered with 500 for an invalid part (a filter there that is not supported)",
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
                      filters: [{type: RequestMirror, requestMirror: {backendRef: {name: api, port: 80}}}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=True PartiallyInvalid=True(UnsupportedValue)",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[0].filters[0]: filter type RequestMirror is not supported on a backendRef; this backend's share of the traffic is answered with 500",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITH_ONE_ROUTE),
            Case::new(
                "gateway-api.md Status: ResolvedRefs (InvalidKind): a backendRef that is not a Service",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{kind: ConfigMap, name: web, port: 80}]}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=False(InvalidKind)",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[0]: backendRef web of kind core/ConfigMap is not supported: only Service backends are; its share of the traffic is answered with 500",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITH_ONE_ROUTE),
            Case::new(
                "gateway-api.md Status: ResolvedRefs (RefNotPermitted): a Service of another namespace without a ReferenceGrant",
                "
                kind: Service
                metadata: {name: db, namespace: data}
                spec: {ports: [{port: 80}]}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: db, namespace: data, port: 80}]}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=False(RefNotPermitted)",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace data allows this route to use Service db; its share of the traffic is answered with 500",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITH_ONE_ROUTE),
            Case::new(
                "gateway_status.rs: ResolvedRefs gives the route's first unresolved reference",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /kind}}]
                    backendRefs: [{kind: ConfigMap, name: web, port: 80}]
                  - backendRefs: [{name: nosuch, port: 80}]
                ",
                &[
                    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=False(InvalidKind)",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs[0]: backendRef web of kind core/ConfigMap is not supported: only Service backends are; its share of the traffic is answered with 500",
                    "diagnostic HTTPRoute default/r: spec.rules[1].backendRefs[0]: service default/nosuch not found; its share of the traffic is answered with 500",
                ],
            )
            .given(EDGE)
            .expecting_too(EDGE_WITH_ONE_ROUTE),
        ],
    );
}
