//! gateway-api.md "BackendTLSPolicy": which policy a route's Service port takes, what
//! its servers are spoken to with, and the policy's status (the upstream conformance
//! cases' conditions: BackendTLSPolicy, ConflictResolution, InvalidCACertificateRef,
//! InvalidKind, SANValidation).

use crate::gateway_fixtures::EDGE;
use crate::summary::Show;
use crate::support::{Case, check};

/// Service `default/secure` with two named ports (`https-1` 443, `https-2` 8443), and an
/// HTTPRoute `r` on [`EDGE`] sending `/one` to the first and `/two` to the second.
const SECURE: &str = "
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
metadata: {name: secure}
spec: {ports: [{name: https-1, port: 443}, {name: https-2, port: 8443}]}
---
kind: EndpointSlice
metadata: {name: secure-1, labels: {kubernetes.io/service-name: secure}}
addressType: IPv4
ports: [{name: https-1, port: 9443}, {name: https-2, port: 9444}]
endpoints: [{addresses: [10.0.0.9]}]
---
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: edge}]
  rules:
  - matches: [{path: {type: Exact, value: /one}}]
    backendRefs: [{name: secure, port: 443}]
  - matches: [{path: {type: Exact, value: /two}}]
    backendRefs: [{name: secure, port: 8443}]
---
kind: ConfigMap
metadata: {name: ca}
";

/// The backends of [`SECURE`] without a policy, and the route's status.
const ROUTE_ACCEPTED: &str =
    "status HTTPRoute default/r parent default/edge: Accepted=True ResolvedRefs=True";

#[test]
fn policies_make_the_servers_spoken_to_over_verified_tls() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "gateway-api.md BackendTLSPolicy: a policy naming a Service port (sectionName) makes its servers spoken to over TLS, verified against the ConfigMap's ca.crt for the hostname, which is also the SNI; the other port is untouched",
                "
                kind: BackendTLSPolicy
                metadata: {name: p}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation:
                    caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}]
                    hostname: abc.example.com
                ",
                &[
                    "route (any host) /one Exact [http] -> default_secure_https-1",
                    "route (any host) /two Exact [http] -> default_secure_https-2",
                    "backend default_secure_https-1 h1-ssl verify default/p host abc.example.com sni abc.example.com servers 10.0.0.9:9443",
                    "backend default_secure_https-2 servers 10.0.0.9:9444",
                ],
            )
            .given(SECURE),
            Case::new(
                "gateway-api.md BackendTLSPolicy: a policy naming the port takes precedence over one naming the whole Service (both are applied, each where it is the most specific)",
                "
                kind: BackendTLSPolicy
                metadata: {name: whole}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ---
                kind: BackendTLSPolicy
                metadata: {name: port}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: other.example.com}
                ",
                &[
                    "route (any host) /one Exact [http] -> default_secure_https-1",
                    "route (any host) /two Exact [http] -> default_secure_https-2",
                    "backend default_secure_https-1 h1-ssl verify default/port host other.example.com sni other.example.com servers 10.0.0.9:9443",
                    "backend default_secure_https-2 h1-ssl verify default/whole host abc.example.com sni abc.example.com servers 10.0.0.9:9444",
                ],
            )
            .given(SECURE),
            Case::new(
                "gateway-api.md BackendTLSPolicy: of two policies with the same target, the older applies (then the first by name)",
                "
                kind: BackendTLSPolicy
                metadata: {name: a-newer, creationTimestamp: '2024-01-02T00:00:00Z'}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ---
                kind: BackendTLSPolicy
                metadata: {name: b-older, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: other.example.com}
                ",
                &[
                    "route (any host) /one Exact [http] -> default_secure_https-1",
                    "route (any host) /two Exact [http] -> default_secure_https-2",
                    "backend default_secure_https-1 h1-ssl verify default/b-older host other.example.com sni other.example.com servers 10.0.0.9:9443",
                    "backend default_secure_https-2 h1-ssl verify default/b-older host other.example.com sni other.example.com servers 10.0.0.9:9444",
                ],
            )
            .given(SECURE),
            Case::new(
                "gateway-api.md BackendTLSPolicy: one subjectAltName of type Hostname is the name verified, the hostname stays the SNI; the system's CAs with wellKnownCACertificates: System",
                "
                kind: BackendTLSPolicy
                metadata: {name: p}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure}]
                  validation:
                    wellKnownCACertificates: System
                    hostname: abc.example.com
                    subjectAltNames: [{type: Hostname, hostname: san.example.com}]
                ",
                &[
                    "route (any host) /one Exact [http] -> default_secure_https-1",
                    "route (any host) /two Exact [http] -> default_secure_https-2",
                    "backend default_secure_https-1 h1-ssl verify @system-ca host san.example.com sni abc.example.com servers 10.0.0.9:9443",
                    "backend default_secure_https-2 h1-ssl verify @system-ca host san.example.com sni abc.example.com servers 10.0.0.9:9444",
                ],
            )
            .given(SECURE),
            Case::new(
                "gateway-api.md BackendTLSPolicy: a policy that cannot be honoured (no usable CA, a URI subjectAltName) withholds the servers: its traffic is answered 503, never sent unverified",
                "
                kind: BackendTLSPolicy
                metadata: {name: missing}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: nosuch}], hostname: abc.example.com}
                ---
                kind: BackendTLSPolicy
                metadata: {name: uri}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-2}]
                  validation:
                    caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}]
                    hostname: abc.example.com
                    subjectAltNames: [{type: URI, uri: 'spiffe://abc.example.com/id'}]
                ",
                &[
                    "route (any host) /one Exact [http] -> default_secure_https-1",
                    "route (any host) /two Exact [http] -> default_secure_https-2",
                    "backend default_secure_https-1 servers (none)",
                    "backend default_secure_https-2 servers (none)",
                ],
            )
            .given(SECURE),
            Case::new(
                "gateway-api.md BackendTLSPolicy: a GRPCRoute's backend speaks HTTP/2 over the policy's TLS (ALPN h2)",
                "
                kind: Service
                metadata: {name: grpc}
                spec: {ports: [{port: 443}]}
                ---
                kind: GRPCRoute
                metadata: {name: g}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [grpc.test]
                  rules: [{backendRefs: [{name: grpc, port: 443}]}]
                ---
                kind: ConfigMap
                metadata: {name: ca}
                ---
                kind: BackendTLSPolicy
                metadata: {name: p}
                spec:
                  targetRefs: [{group: '', kind: Service, name: grpc}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ",
                &[
                    "route grpc.test / Prefix [http] -> default_grpc_443_grpc",
                    "backend default_grpc_443_grpc h2-ssl verify default/p host abc.example.com sni abc.example.com servers (none)",
                ],
            )
            .given(EDGE),
        ],
    );
}

#[test]
fn policy_status() {
    check(
        Show::STATUS,
        &[
            Case::new(
                "gateway-api.md BackendTLSPolicy status: Accepted and ResolvedRefs for each Gateway of ours whose routes use a targeted port (conformance BackendTLSPolicy); a policy no route of ours uses has no status",
                "
                kind: BackendTLSPolicy
                metadata: {name: p, generation: 3}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ---
                kind: BackendTLSPolicy
                metadata: {name: unused}
                spec:
                  targetRefs: [{group: '', kind: Service, name: web}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ",
                &[
                    ROUTE_ACCEPTED,
                    "status BackendTLSPolicy default/p ancestor default/edge: Accepted=True ResolvedRefs=True generation 3",
                ],
            )
            .given(SECURE)
            .expecting_too(EDGE_STATUS),
            Case::new(
                "gateway-api.md BackendTLSPolicy status: the policy an older one overrides is Accepted=False(Conflicted), with or without sectionName; one naming the port and one naming the whole Service do not conflict (conformance BackendTLSPolicyConflictResolution)",
                "
                kind: BackendTLSPolicy
                metadata: {name: first, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ---
                kind: BackendTLSPolicy
                metadata: {name: second, creationTimestamp: '2024-01-02T00:00:00Z'}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ---
                kind: BackendTLSPolicy
                metadata: {name: whole, creationTimestamp: '2024-01-03T00:00:00Z'}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}], hostname: abc.example.com}
                ",
                &[
                    ROUTE_ACCEPTED,
                    "status BackendTLSPolicy default/first ancestor default/edge: Accepted=True ResolvedRefs=True",
                    "status BackendTLSPolicy default/second ancestor default/edge: Accepted=False(Conflicted) ResolvedRefs=True",
                    "status BackendTLSPolicy default/whole ancestor default/edge: Accepted=True ResolvedRefs=True",
                ],
            )
            .given(SECURE)
            .expecting_too(EDGE_STATUS),
            Case::new(
                "gateway-api.md BackendTLSPolicy status: a CA reference to a missing ConfigMap, or one without ca.crt, is ResolvedRefs=False(InvalidCACertificateRef), and with no usable CA Accepted=False(NoValidCACertificate) (conformance BackendTLSPolicyInvalidCACertificateRef)",
                "
                kind: BackendTLSPolicy
                metadata: {name: nonexistent}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: nosuch}], hostname: abc.example.com}
                ---
                kind: ConfigMap
                metadata: {name: malformed}
                data: {}
                ---
                kind: BackendTLSPolicy
                metadata: {name: malformed}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-2}]
                  validation: {caCertificateRefs: [{group: '', kind: ConfigMap, name: malformed}], hostname: abc.example.com}
                ",
                &[
                    ROUTE_ACCEPTED,
                    "status BackendTLSPolicy default/malformed ancestor default/edge: Accepted=False(NoValidCACertificate) ResolvedRefs=False(InvalidCACertificateRef)",
                    "status BackendTLSPolicy default/nonexistent ancestor default/edge: Accepted=False(NoValidCACertificate) ResolvedRefs=False(InvalidCACertificateRef)",
                ],
            )
            .given(SECURE)
            .expecting_too(EDGE_STATUS),
            Case::new(
                "gateway-api.md BackendTLSPolicy status: a CA reference of another kind is ResolvedRefs=False(InvalidKind) (conformance BackendTLSPolicyInvalidKind); a URI subjectAltName, or an unknown wellKnownCACertificates, is Accepted=False(Invalid)",
                "
                kind: BackendTLSPolicy
                metadata: {name: kind}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-1}]
                  validation: {caCertificateRefs: [{group: invalid.io, kind: InvalidKind, name: x}], hostname: abc.example.com}
                ---
                kind: BackendTLSPolicy
                metadata: {name: uri}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure, sectionName: https-2}]
                  validation:
                    caCertificateRefs: [{group: '', kind: ConfigMap, name: ca}]
                    hostname: abc.example.com
                    subjectAltNames: [{type: URI, uri: 'spiffe://abc.example.com/id'}]
                ---
                kind: BackendTLSPolicy
                metadata: {name: well-known}
                spec:
                  targetRefs: [{group: '', kind: Service, name: secure}]
                  validation: {wellKnownCACertificates: example.com/mine, hostname: abc.example.com}
                ",
                &[
                    ROUTE_ACCEPTED,
                    "status BackendTLSPolicy default/kind ancestor default/edge: Accepted=False(NoValidCACertificate) ResolvedRefs=False(InvalidKind)",
                    "status BackendTLSPolicy default/uri ancestor default/edge: Accepted=False(Invalid) ResolvedRefs=True",
                    "status BackendTLSPolicy default/well-known ancestor default/edge: Accepted=False(Invalid) ResolvedRefs=True",
                ],
            )
            .given(SECURE)
            .expecting_too(EDGE_STATUS),
        ],
    );
}

/// [`EDGE`]'s status with the route of [`SECURE`] attached.
const EDGE_STATUS: &[&str] = &[
    "status GatewayClass portcullis: Accepted=True",
    "status Gateway default/edge: Accepted=True Programmed=True",
    "status Gateway default/edge listener http: routes 1, kinds [HTTPRoute,GRPCRoute], Accepted=True ResolvedRefs=True Programmed=True Conflicted=False(NoConflicts)",
];

#[test]
fn the_edge_fixture_is_the_secure_fixture_s_gateway() {
    // SECURE repeats EDGE's objects (a fixture is one string): they must not drift apart.
    assert!(SECURE.contains(EDGE.trim()), "{SECURE}");
}
