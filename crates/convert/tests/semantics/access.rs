//! security.md "Source allow and deny lists": per path on Ingress, per rule on HTTPRoute.

use crate::summary::Show;
use crate::support::{Case, check};

/// [`crate::gateway_fixtures::EDGE`], Service `guarded` (its annotations allow
/// 10.0.0.0/8 but 10.1.0.0/16, and deny 10.2.0.0/16) and Service `other` (another allow
/// list).
const EDGE_AND_SERVICES: &str = "
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: portcullis
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
kind: Service
metadata:
  name: guarded
  annotations: {portcullis.dev/allowlist-source-range: '10.0.0.0/8, !10.1.0.0/16', portcullis.dev/denylist-source-range: '10.2.0.0/16'}
spec: {ports: [{port: 80}]}
---
kind: Service
metadata:
  name: other
  annotations: {portcullis.dev/allowlist-source-range: '192.168.0.0/16'}
spec: {ports: [{port: 80}]}
";

#[test]
fn source_lists_apply_per_path_and_per_rule() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "security.md: lists per path of an Ingress, a source header with them",
                "
                kind: Ingress
                metadata:
                  name: site
                  annotations: {portcullis.dev/allowlist-source-range: '10.0.0.0/8', portcullis.dev/allowlist-source-header: X-Real-IP}
                spec:
                  rules:
                  - host: a.test
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                ",
                &["route a.test / Prefix -> allow [10.0.0.0/8]; client from X-Real-IP; default_web_80"],
            ),
            Case::new(
                "security.md: an HTTPRoute rule takes its Service's lists",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs: [{name: guarded, port: 80}]
                ",
                &["route a.test / Prefix [http] -> allow [10.0.0.0/8 !10.1.0.0/16]; deny [10.2.0.0/16]; default_guarded_80"],
            )
            .given(EDGE_AND_SERVICES),
            Case::new(
                "security.md: backends whose Services ask for different lists refuse everyone",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs: [{name: guarded, port: 80}, {name: other, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] -> refuse all; default_guarded_80 weight 1, default_other_80 weight 1",
                    "diagnostic HTTPRoute default/r: spec.rules[0].backendRefs: the backends' Services set different source allow or deny lists; every client of the rule is refused (403)",
                ],
            )
            .given(EDGE_AND_SERVICES),
        ],
    );
}
