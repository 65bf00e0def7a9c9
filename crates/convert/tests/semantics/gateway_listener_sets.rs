//! gateway-api.md "ListenerSet": listeners added to a Gateway that admits them, served
//! as the Gateway's own, with routes attached to them by a ListenerSet parentRef. The
//! upstream conformance cases (`conformance/tests/listenerset-*`) as conversion and
//! status tables.

use crate::gateway_fixtures::OUR_CLASS;
use crate::summary::Show;
use crate::support::{Case, check};

/// A Gateway `edge` that admits ListenerSets of its own namespace, with one listener
/// `gw` (HTTP, port 80, `gw.test`, routes from every namespace).
const ADMITTING: &str = "
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: portcullis
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: gw, protocol: HTTP, port: 80, hostname: gw.test, allowedRoutes: {namespaces: {from: All}}}]
";

/// The status lines of [`ADMITTING`]'s class and Gateway when nothing attaches to `gw`
/// and no ListenerSet is accepted.
const ADMITTING_ALONE: &[&str] = &[
    "status GatewayClass portcullis: Accepted=True",
    "status Gateway default/edge: Accepted=True Programmed=True",
    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
];

#[test]
fn a_gateway_admits_the_listener_sets_its_allowed_listeners_name() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance ListenerSetDefaultNotAllowed: a Gateway without allowedListeners admits no ListenerSet (NotAllowed), and a route attached to one is not accepted",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: gw, protocol: HTTP, port: 80, hostname: gw.test}]
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: ls.test}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra: Accepted=False(NotAllowed) Programmed=False(NotAllowed)",
                    "status HTTPRoute default/r parent ListenerSet default/extra: Accepted=False(NotAllowedByListeners) ResolvedRefs=True",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: ListenerSet default/extra is not attached to Gateway default/edge: the Gateway's allowedListeners do not admit it, so none of its listeners accepts this route",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance ListenerSetAllowedNamespaceNone: allowedListeners from None admits none",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: None}}
                  listeners: [{name: gw, protocol: HTTP, port: 80, hostname: gw.test}]
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge, kind: Gateway, group: gateway.networking.k8s.io}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: ls.test}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra: Accepted=False(NotAllowed) Programmed=False(NotAllowed)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance ListenerSetAllowedNamespaceSame: from Same admits the Gateway's namespace only (the ListenerSet's parentRef names the Gateway's namespace)",
                "
                kind: Namespace
                metadata: {name: other}
                ---
                kind: ListenerSet
                metadata: {name: same}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: same.test}]
                ---
                kind: ListenerSet
                metadata: {name: elsewhere, namespace: other}
                spec:
                  parentRef: {name: edge, namespace: default}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: elsewhere.test}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/same: Accepted=True Programmed=True",
                    "status ListenerSet default/same listener ls: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet other/elsewhere: Accepted=False(NotAllowed) Programmed=False(NotAllowed)",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "conformance ListenerSetAllowedNamespaceSelector: from Selector admits the namespaces whose labels it selects",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: Selector, selector: {matchLabels: {allowed: ns}}}}
                  listeners: [{name: gw, protocol: HTTP, port: 80, hostname: gw.test}]
                ---
                kind: Namespace
                metadata: {name: chosen, labels: {allowed: ns}}
                ---
                kind: Namespace
                metadata: {name: unchosen}
                ---
                kind: ListenerSet
                metadata: {name: in, namespace: chosen}
                spec:
                  parentRef: {name: edge, namespace: default}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: in.test}]
                ---
                kind: ListenerSet
                metadata: {name: out, namespace: unchosen}
                spec:
                  parentRef: {name: edge, namespace: default}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: out.test}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet chosen/in: Accepted=True Programmed=True",
                    "status ListenerSet chosen/in listener ls: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet unchosen/out: Accepted=False(NotAllowed) Programmed=False(NotAllowed)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md ListenerSet: from All admits every namespace; a ListenerSet naming a Gateway that is not ours, or none, gets no status",
                "
                kind: GatewayClass
                metadata: {name: other}
                spec: {controllerName: example.com/another-controller}
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: All}}
                  listeners: [{name: gw, protocol: HTTP, port: 80, hostname: gw.test}]
                ---
                kind: Gateway
                metadata: {name: foreign}
                spec:
                  gatewayClassName: other
                  allowedListeners: {namespaces: {from: All}}
                  listeners: [{name: gw, protocol: HTTP, port: 80}]
                ---
                kind: ListenerSet
                metadata: {name: anywhere, namespace: team}
                spec:
                  parentRef: {name: edge, namespace: default}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: team.test}]
                ---
                kind: ListenerSet
                metadata: {name: theirs}
                spec:
                  parentRef: {name: foreign}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: theirs.test}]
                ---
                kind: ListenerSet
                metadata: {name: orphan}
                spec:
                  parentRef: {name: nowhere}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: orphan.test}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet team/anywhere: Accepted=True Programmed=True",
                    "status ListenerSet team/anywhere listener ls: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}

#[test]
fn listener_set_listeners_yield_to_earlier_listeners_of_their_gateway() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance ListenerSetProtocolConflict: a ListenerSet's listener on a port an earlier listener (the Gateway's, or an older ListenerSet's) uses with another protocol is Conflicted and not served; the earlier one stays served; a ListenerSet with no valid listener is not accepted",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: Same}}
                  listeners:
                  - {name: gw, protocol: HTTP, port: 9080, hostname: gw.test}
                ---
                kind: ListenerSet
                metadata: {name: first, creationTimestamp: '2026-01-01T00:00:00Z'}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: one, protocol: HTTP, port: 9080, hostname: one.test}
                  - {name: clash, protocol: TCP, port: 9080}
                  - {name: own-port, protocol: HTTP, port: 9081}
                ---
                kind: ListenerSet
                metadata: {name: second, creationTimestamp: '2026-01-02T00:00:00Z'}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: clash, protocol: TCP, port: 9080}
                  - {name: own-port-clash, protocol: TCP, port: 9081}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/first: Accepted=True(ListenersNotValid) Programmed=True",
                    "status ListenerSet default/first listener one: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/first listener clash: routes 0, kinds [TCPRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                    "status ListenerSet default/first listener own-port: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/second: Accepted=False(ListenersNotValid) Programmed=False(ListenersNotValid)",
                    "status ListenerSet default/second listener clash: routes 0, kinds [TCPRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                    "status ListenerSet default/second listener own-port-clash: routes 0, kinds [TCPRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance ListenerSetProtocolConflict: on the HTTP frontend's port a TCP listener of a ListenerSet conflicts with the Gateway's HTTP listener there",
                "
                kind: ListenerSet
                metadata: {name: tcp}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: clash, protocol: TCP, port: 80}]
                ",
                &[
                    "status ListenerSet default/tcp: Accepted=False(ListenersNotValid) Programmed=False(ListenersNotValid)",
                    "status ListenerSet default/tcp listener clash: routes 0, kinds [TCPRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                ],
            )
            .given(ADMITTING)
            .expecting_too(ADMITTING_ALONE),
            Case::new(
                "conformance ListenerSetHostnameConflict: a ListenerSet's listener with the port, protocol and hostname of an earlier one (the Gateway's, or an older ListenerSet's, ties broken by namespace and name) is Conflicted; names need not be unique across them",
                "
                kind: ListenerSet
                metadata: {name: a-first}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: gw, protocol: HTTP, port: 80, hostname: gw.test}
                  - {name: mine, protocol: HTTP, port: 80, hostname: shared.test}
                ---
                kind: ListenerSet
                metadata: {name: b-second}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: mine, protocol: HTTP, port: 80, hostname: SHARED.test}
                ",
                &[
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status ListenerSet default/a-first: Accepted=True(ListenersNotValid) Programmed=True",
                    "status ListenerSet default/a-first listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(HostnameConflict) ResolvedRefs=True Programmed=False(HostnameConflict) Conflicted=True(HostnameConflict)",
                    "status ListenerSet default/a-first listener mine: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/b-second: Accepted=False(ListenersNotValid) Programmed=False(ListenersNotValid)",
                    "status ListenerSet default/b-second listener mine: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(HostnameConflict) ResolvedRefs=True Programmed=False(HostnameConflict) Conflicted=True(HostnameConflict)",
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "gateway-api.md ListenerSet: the HTTPS frontend's port serves HTTPS listeners and TLS passthrough side by side, whichever declares them: no conflict there",
                "
                kind: Secret
                metadata: {name: cert}
                type: kubernetes.io/tls
                ---
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: Same}}
                  listeners:
                  - {name: https, protocol: HTTPS, port: 443, hostname: gw.test, tls: {certificateRefs: [{name: cert}]}}
                  - {name: pass, protocol: TLS, port: 443, hostname: gw-pass.test, tls: {mode: Passthrough}}
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: pass, protocol: TLS, port: 443, hostname: ls-pass.test, tls: {mode: Passthrough}}
                  - {name: https, protocol: HTTPS, port: 443, hostname: ls.test, tls: {certificateRefs: [{name: cert}]}}
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener https: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener pass: routes 0, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra: Accepted=True Programmed=True",
                    "status ListenerSet default/extra listener pass: routes 0, kinds [TLSRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra listener https: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md Status: on a port of its own, the older Gateway's listener (a ListenerSet's merged into it) is served, and a newer Gateway's of another protocol conflicts: one Gateway's owner cannot take another's port away",
                "
                kind: Gateway
                metadata: {name: other}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: tcp, protocol: TCP, port: 9090}]
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: web, protocol: HTTP, port: 9090}]
                ",
                &[
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/other: Accepted=False(ListenersNotValid) Programmed=False(Invalid)",
                    "status Gateway default/other listener tcp: routes 0, kinds [TCPRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                    "status ListenerSet default/extra: Accepted=True Programmed=True",
                    "status ListenerSet default/extra listener web: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status GatewayClass portcullis: Accepted=True",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "gateway-api.md Status: the same, the other Gateway older: its listener is served, the ListenerSet's conflicts",
                "
                kind: Gateway
                metadata: {name: other, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: tcp, protocol: TCP, port: 9090}]
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: web, protocol: HTTP, port: 9090}]
                ",
                &[
                    "status Gateway default/other: Accepted=True Programmed=True",
                    "status Gateway default/other listener tcp: routes 0, kinds [TCPRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra: Accepted=False(ListenersNotValid) Programmed=False(ListenersNotValid)",
                    "status ListenerSet default/extra listener web: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=False(ProtocolConflict) ResolvedRefs=True Programmed=False(ProtocolConflict) Conflicted=True(ProtocolConflict)",
                ],
            )
            .given(ADMITTING)
            .expecting_too(ADMITTING_ALONE),
        ],
    );
}

#[test]
fn listener_set_certificates_are_resolved_from_the_listener_set() {
    check(
        Show::STATUS,
        &[Case::new(
            "conformance ListenerSetReferenceGrant: a ListenerSet's certificateRef to another namespace needs a ReferenceGrant from ListenerSets of its namespace; one the Gateway has does not count (RefNotPermitted)",
            "
            kind: Gateway
            metadata: {name: edge}
            spec:
              gatewayClassName: portcullis
              allowedListeners: {namespaces: {from: All}}
              listeners:
              - {name: gw, protocol: HTTPS, port: 443, hostname: gw.test, tls: {certificateRefs: [{name: cert, namespace: certs}]}}
            ---
            kind: Secret
            metadata: {name: cert, namespace: certs}
            type: kubernetes.io/tls
            ---
            kind: ReferenceGrant
            metadata: {name: for-gateways, namespace: certs}
            spec:
              from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
              to: [{group: '', kind: Secret}]
            ---
            kind: ReferenceGrant
            metadata: {name: for-listener-sets, namespace: certs}
            spec:
              from: [{group: gateway.networking.k8s.io, kind: ListenerSet, namespace: default}]
              to: [{group: '', kind: Secret}]
            ---
            kind: ListenerSet
            metadata: {name: granted}
            spec:
              parentRef: {name: edge}
              listeners:
              - {name: tls, protocol: HTTPS, port: 443, hostname: granted.test, tls: {certificateRefs: [{name: cert, namespace: certs}]}}
            ---
            kind: ListenerSet
            metadata: {name: ungranted, namespace: team}
            spec:
              parentRef: {name: edge, namespace: default}
              listeners:
              - {name: tls, protocol: HTTPS, port: 443, hostname: ungranted.test, tls: {certificateRefs: [{name: cert, namespace: certs}]}}
            ---
            kind: Secret
            metadata: {name: own, namespace: team}
            type: kubernetes.io/tls
            ---
            kind: ListenerSet
            metadata: {name: local, namespace: team}
            spec:
              parentRef: {name: edge, namespace: default}
              listeners:
              - {name: tls, protocol: HTTPS, port: 443, hostname: local.test, tls: {certificateRefs: [{name: own}]}}
            ",
            &[
                "status GatewayClass portcullis: Accepted=True",
                "status Gateway default/edge: Accepted=True Programmed=True, listener sets 2",
                "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                "status ListenerSet default/granted: Accepted=True Programmed=True",
                "status ListenerSet default/granted listener tls: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                "status ListenerSet team/ungranted: Accepted=False(ListenersNotValid) Programmed=False(ListenersNotValid)",
                "status ListenerSet team/ungranted listener tls: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=False(RefNotPermitted) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                "status ListenerSet team/local: Accepted=True Programmed=True",
                "status ListenerSet team/local listener tls: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
            ],
        )
        .given(OUR_CLASS)],
    );
}

#[test]
fn listener_set_listeners_take_the_routes_they_allow() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance ListenerSetAllowedRoutesNamespaces: a ListenerSet listener's allowedRoutes are its own: Same is the ListenerSet's namespace, Selector reads the route's namespace's labels",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: All}}
                  listeners: [{name: gw, protocol: HTTP, port: 80, hostname: gw.test}]
                ---
                kind: Namespace
                metadata: {name: chosen, labels: {allowed: ns}}
                ---
                kind: Namespace
                metadata: {name: team}
                ---
                kind: ListenerSet
                metadata: {name: extra, namespace: team}
                spec:
                  parentRef: {name: edge, namespace: default}
                  listeners:
                  - {name: all, protocol: HTTP, port: 80, hostname: all.test, allowedRoutes: {namespaces: {from: All}}}
                  - {name: same, protocol: HTTP, port: 80, hostname: same.test}
                  - {name: selected, protocol: HTTP, port: 80, hostname: selected.test, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {allowed: ns}}}}}
                ---
                kind: HTTPRoute
                metadata: {name: in-set-namespace, namespace: team}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  rules: [{matches: [{path: {type: PathPrefix, value: /team}}], backendRefs: [{name: web, namespace: default, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: in-gateway-namespace}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra, namespace: team, sectionName: same}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: selected, namespace: chosen}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra, namespace: team}]
                  rules: [{backendRefs: [{name: web, namespace: default, port: 80}]}]
                ---
                kind: ReferenceGrant
                metadata: {name: to-web}
                spec:
                  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team}, {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: chosen}]
                  to: [{group: '', kind: Service}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet team/extra: Accepted=True Programmed=True",
                    "status ListenerSet team/extra listener all: routes 2, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet team/extra listener same: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet team/extra listener selected: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status HTTPRoute team/in-set-namespace parent ListenerSet team/extra: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute chosen/selected parent ListenerSet team/extra: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/in-gateway-namespace parent ListenerSet team/extra#same: Accepted=False(NotAllowedByListeners) ResolvedRefs=True",
                    "diagnostic HTTPRoute default/in-gateway-namespace: spec.parentRefs[0]: no listener of ListenerSet team/extra accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance ListenerSetAllowedRoutesSupportedKinds: a ListenerSet's TLS listener that asks for HTTPRoutes has ResolvedRefs=False(InvalidRouteKinds)",
                "
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: tls-only, protocol: TLS, port: 443, hostname: tls.test, tls: {mode: Passthrough}, allowedRoutes: {kinds: [{kind: HTTPRoute}]}}
                ",
                &[
                    "status ListenerSet default/extra: Accepted=False(ListenersNotValid) Programmed=False(ListenersNotValid)",
                    "status ListenerSet default/extra listener tls-only: routes 0, kinds [], Accepted=True ResolvedRefs=False(InvalidRouteKinds) Programmed=False(Invalid) Conflicted=False(NoConflicts)",
                ],
            )
            .given(ADMITTING)
            .expecting_too(ADMITTING_ALONE),
        ],
    );
}

#[test]
fn routes_attach_to_the_listeners_of_the_parent_they_name() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "conformance ListenerSetHTTPRouting: a route attaches to the listeners of the parent it names, each parentRef on its own; one naming the Gateway does not attach to its ListenerSets' listeners",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: All}}
                  listeners:
                  - {name: gw-1, protocol: HTTP, port: 80, hostname: gw-1.test}
                  - {name: gw-2, protocol: HTTP, port: 80, hostname: gw-2.test}
                ---
                kind: ListenerSet
                metadata: {name: set-1}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: l-1, protocol: HTTP, port: 80, hostname: set-1-l-1.test}
                  - {name: l-2, protocol: HTTP, port: 80, hostname: set-1-l-2.test}
                ---
                kind: ListenerSet
                metadata: {name: set-2}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: l-1, protocol: HTTP, port: 80, hostname: set-2-l-1.test}
                ---
                kind: HTTPRoute
                metadata: {name: everywhere}
                spec:
                  parentRefs: [{name: edge}, {kind: ListenerSet, name: set-1}, {kind: ListenerSet, name: set-2}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: gateway-only}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{matches: [{path: {type: PathPrefix, value: /gateway}}], backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: set-1-section}
                spec:
                  parentRefs: [{kind: ListenerSet, group: gateway.networking.k8s.io, name: set-1, sectionName: l-1}]
                  rules: [{matches: [{path: {type: PathPrefix, value: /section}}], backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 2",
                    "status Gateway default/edge listener gw-1: routes 2, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status Gateway default/edge listener gw-2: routes 2, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/set-1: Accepted=True Programmed=True",
                    "status ListenerSet default/set-1 listener l-1: routes 2, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/set-1 listener l-2: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/set-2: Accepted=True Programmed=True",
                    "status ListenerSet default/set-2 listener l-1: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status HTTPRoute default/everywhere parent default/edge: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/everywhere parent ListenerSet default/set-1: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/everywhere parent ListenerSet default/set-2: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/gateway-only parent default/edge: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/set-1-section parent ListenerSet default/set-1#l-1: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "conformance ListenerSetGatewayParentSectionNameNotFound, ListenerSetDualParentRefIndependence: a Gateway parentRef cannot name a ListenerSet's listener (NoMatchingParent) while the ListenerSet parentRef of the same route is accepted",
                "
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: ls-only, protocol: HTTP, port: 80, hostname: ls.test}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs:
                  - {name: edge, sectionName: ls-only}
                  - {kind: ListenerSet, name: extra, sectionName: ls-only}
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra: Accepted=True Programmed=True",
                    "status ListenerSet default/extra listener ls-only: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status HTTPRoute default/r parent default/edge#ls-only: Accepted=False(NoMatchingParent) ResolvedRefs=True",
                    "status HTTPRoute default/r parent ListenerSet default/extra#ls-only: Accepted=True ResolvedRefs=True",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: Gateway default/edge has no listener with this sectionName and port",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "gateway-api.md GRPCRoute on a ListenerSet's listener: an HTTPRoute and an older GRPCRoute with a hostname in common there: the younger is Accepted=False(HostnameConflict)",
                "
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: ls, protocol: HTTP, port: 80}]
                ---
                kind: GRPCRoute
                metadata: {name: older, creationTimestamp: '2026-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  hostnames: [shared.test]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: younger, creationTimestamp: '2026-01-02T00:00:00Z'}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  hostnames: [shared.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra: Accepted=True Programmed=True",
                    "status ListenerSet default/extra listener ls: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status GRPCRoute default/older parent ListenerSet default/extra: Accepted=True ResolvedRefs=True",
                    "status HTTPRoute default/younger parent ListenerSet default/extra: Accepted=False(HostnameConflict) ResolvedRefs=True",
                    "diagnostic HTTPRoute default/younger: spec.parentRefs[0]: a hostname of this route is also one of GRPCRoute default/older, which is older and attached to listener ls of ListenerSet default/extra; an HTTPRoute and a GRPCRoute may not share a hostname on a listener, so this route is not attached there",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "gateway-api.md ListenerSet: a parentRef to a ListenerSet's listener that does not exist is NoMatchingParent, naming the ListenerSet",
                "
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: ls, protocol: HTTP, port: 80, hostname: ls.test}]
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra, sectionName: gw}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "status GatewayClass portcullis: Accepted=True",
                    "status Gateway default/edge: Accepted=True Programmed=True, listener sets 1",
                    "status Gateway default/edge listener gw: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status ListenerSet default/extra: Accepted=True Programmed=True",
                    "status ListenerSet default/extra listener ls: routes 0, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
                    "status HTTPRoute default/r parent ListenerSet default/extra#gw: Accepted=False(NoMatchingParent) ResolvedRefs=True",
                    "diagnostic HTTPRoute default/r: spec.parentRefs[0]: ListenerSet default/extra has no listener with this sectionName and port",
                ],
            )
            .given(ADMITTING),
        ],
    );
}

#[test]
fn listener_set_listeners_are_served_as_the_gateway_s_own() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "conformance ListenerSetHTTPRouting (traffic): each route is served on the hosts of the listeners of the parents it names, and nowhere else",
                "
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: ls, protocol: HTTP, port: 80, hostname: ls.test}
                  - {name: own-port, protocol: HTTP, port: 8090}
                ---
                kind: HTTPRoute
                metadata: {name: gateway-route}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{matches: [{path: {type: PathPrefix, value: /gateway}}], backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: set-route}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  rules: [{matches: [{path: {type: PathPrefix, value: /set}}], backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "route gw.test /gateway Prefix [http] -> default_web_80",
                    "route ls.test /set Prefix [http] -> default_api_80",
                    "route (any host) /set Prefix [http:8090] -> default_api_80",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "conformance ListenerSetDefaultNotAllowed (traffic): a ListenerSet its Gateway does not admit serves nothing, not even on a port of its own",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners: [{name: gw, protocol: HTTP, port: 80, hostname: gw.test}]
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: own-port, protocol: HTTP, port: 8090}]
                ---
                kind: HTTPRoute
                metadata: {name: set-route}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "diagnostic HTTPRoute default/set-route: spec.parentRefs[0]: ListenerSet default/extra is not attached to Gateway default/edge: the Gateway's allowedListeners do not admit it, so none of its listeners accepts this route",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md ListenerSet: an HTTPS listener of a ListenerSet serves its own certificate for its hostname",
                "
                kind: Secret
                metadata: {name: set-cert}
                type: kubernetes.io/tls
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: tls, protocol: HTTPS, port: 443, hostname: secure.test, tls: {certificateRefs: [{name: set-cert}]}}
                ---
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route secure.test / Prefix [https] -> default_web_80",
                    "tls secure.test default/set-cert",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "gateway-api.md ListenerSet: listener isolation spans the merged listeners: a host a ListenerSet's listener names is not served by a route of the Gateway's hostname-less listener on that port",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  allowedListeners: {namespaces: {from: Same}}
                  listeners: [{name: any, protocol: HTTP, port: 80}]
                ---
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: mine, protocol: HTTP, port: 80, hostname: mine.test}]
                ---
                kind: HTTPRoute
                metadata: {name: broad}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [mine.test, other.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: narrow}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "route other.test / Prefix [http] -> default_web_80",
                    "route mine.test / Prefix [http] -> default_api_80",
                ],
            )
            .given(OUR_CLASS),
            Case::new(
                "gateway-api.md ListenerSet: a TLS listener of a ListenerSet passes its TLSRoutes' names through; a TCP listener of one on a port of its own serves its TCPRoute",
                "
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners:
                  - {name: pass, protocol: TLS, port: 443, hostname: pass.test, tls: {mode: Passthrough}}
                  - {name: tcp, protocol: TCP, port: 9300}
                ---
                kind: TLSRoute
                metadata: {name: tls}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra, sectionName: pass}]
                  hostnames: [pass.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: TCPRoute
                metadata: {name: tcp}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra, sectionName: tcp}]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "passthrough pass.test -> default_web_80_passthrough",
                    "tcp 9300",
                    "tcp 9300 (any host) -> default_api_80_tcp*1",
                ],
            )
            .given(ADMITTING),
            Case::new(
                "gateway-api.md ListenerSet: a conflicted listener of a ListenerSet takes no route; the earlier listener it yields to keeps serving",
                "
                kind: ListenerSet
                metadata: {name: extra}
                spec:
                  parentRef: {name: edge}
                  listeners: [{name: same-host, protocol: HTTP, port: 80, hostname: gw.test}]
                ---
                kind: HTTPRoute
                metadata: {name: gateway-route}
                spec:
                  parentRefs: [{name: edge}]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: set-route}
                spec:
                  parentRefs: [{kind: ListenerSet, name: extra}]
                  rules: [{matches: [{path: {type: PathPrefix, value: /set}}], backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "route gw.test / Prefix [http] -> default_web_80",
                    "diagnostic HTTPRoute default/set-route: spec.parentRefs[0]: no listener of ListenerSet default/extra accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                ],
            )
            .given(ADMITTING),
        ],
    );
}
