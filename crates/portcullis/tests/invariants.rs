//! I1 (disk = render(model)) and I2 (incremental = full), without HAProxy: the controller's
//! reconciliation core and state directory, driven by event batches. The named tests are
//! the sequences that leave a stale backend shard behind in haproxy-ingress.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::OnceLock;

use convert::ConvertOptions;
use haproxy::StateDir;
use index::{Index, SourceEvent};
use model::{BackendId, TlsCert};
use plan::AppliedFiles;
use portcullis::pipeline::Reconciler;
use proptest::prelude::*;
use resources::{Object, ObjectRef};

fn options(shards: u32) -> ConvertOptions {
    ConvertOptions {
        ingress_class: "portcullis".into(),
        controller_class: convert::class::CONTROLLER_NAME.into(),
        gateway_controller: convert::gateway::GATEWAY_CONTROLLER.into(),
        watch_ingress_without_class: true,
        global_configmap: Some(("ops".into(), "global".into())),
        tcp_services_configmap: Some(("ops".into(), "tcp".into())),
        default_ssl_certificate: None,
        fallback_certificate: TlsCert {
            pem_bundle: "FALLBACK CERTIFICATE\n".into(),
        },
        bind_address: IpAddr::from([127, 0, 0, 1]),
        http_port: 8080,
        https_port: 8443,
        backend_shards: shards,
        reserved_ports: Vec::new(),
        busy_ports: std::collections::BTreeSet::new(),
    }
}

fn decode(yaml: &str) -> Vec<Object> {
    let decoded = resources::decode_manifest(yaml, false);
    assert!(decoded.errors.is_empty(), "{:?}", decoded.errors);
    decoded.objects
}

/// Two versions of the `tls` Secrets' certificate.
/// The client-certificate CA of the `client-ca` Secrets, in two versions.
fn client_ca(version: u8) -> &'static str {
    static CAS: OnceLock<[String; 2]> = OnceLock::new();
    let cas = CAS.get_or_init(|| {
        [
            test_support::client_pki("invariants-ca", "client").ca_pem,
            test_support::client_pki("invariants-ca-2", "client").ca_pem,
        ]
    });
    &cas[usize::from(version % 2)]
}

fn certificate(version: u8) -> &'static (String, String) {
    static CERTS: OnceLock<[(String, String); 2]> = OnceLock::new();
    let certs = CERTS.get_or_init(|| {
        [
            test_support::self_signed("invariants", &["*.test"]),
            test_support::self_signed("invariants-2", &["*.test"]),
        ]
    });
    &certs[usize::from(version % 2)]
}

/// What one service of the generated cluster looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    endpoints: u8,
    /// 0: none; 1: its own host with Secret `tls`; 2: `*.wild.test` with `tls`; 3: its own
    /// host with a Secret that does not exist.
    tls: u8,
    path_variant: u8,
    ours: bool,
    /// 0: `svc<n>.test`; 1: `shared.test` (claimed by several); 2: `svc<n>.wild.test`.
    host: u8,
    /// Routes to `svc0` (a backend several Ingresses share) when in its namespace.
    shared_backend: bool,
    /// Asks for `leastconn`: a shared backend configured two ways.
    leastconn: bool,
    /// Sets `spec.defaultBackend` (claimed by several).
    default_backend: bool,
    /// Blue-green keys: 0 none; 1 a balance; 2 a balance in pod mode and a header
    /// selector; 3 a header and a cookie selector.
    blue_green: u8,
    /// Each endpoint's pod: bit `e` puts endpoint `e`'s pod in group blue (else green);
    /// bit 3 leaves the first endpoint's pod out.
    pod_labels: u8,
    /// Servers found by name: 0 no; 1 `use-resolver: local` (declared only while the
    /// global ConfigMap exists); 2 an ExternalName Service.
    dns: u8,
    /// 0: no access keys; 1: an allow list; 2: another allow list (same keys, other
    /// entries), a deny list, a source header and request limits; 3: an allow list with a
    /// bad entry.
    access: u8,
    /// 0: none; 1: Basic with the `users` Secret; 2: an external service with a sign-in
    /// URL; 3: Basic with a Secret that does not exist (fails closed).
    auth: u8,
    /// 0: nothing; 1: CORS for listed origins; 2: client certificates checked against
    /// Secret `client-ca`; 3: client certificates against a Secret that does not exist.
    client_policy: u8,
    /// 0: none; 1: `ssl-passthrough`; 2: and `ssl-passthrough-http-port` 80, the port
    /// the passthrough backend uses too (one backend asked for in two modes).
    passthrough: u8,
    /// The Ingress as a TCP service instead: 0 no; 1 on port 9000, which several share;
    /// 2 on a port of its own, behind a PROXY-protocol proxy.
    tcp: u8,
}

impl Default for Shape {
    fn default() -> Self {
        Self {
            endpoints: 2,
            tls: 0,
            path_variant: 0,
            ours: true,
            host: 0,
            shared_backend: false,
            leastconn: false,
            default_backend: false,
            blue_green: 0,
            pod_labels: 0,
            dns: 0,
            access: 0,
            auth: 0,
            client_policy: 0,
            passthrough: 0,
            tcp: 0,
        }
    }
}

/// An HTTPRoute or a GRPCRoute for one service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RouteShape {
    /// A GRPCRoute (which may not share a hostname with an HTTPRoute on a listener).
    grpc: bool,
    /// 0: `svc<n>.test`; 1: `shared.test`; 2: no hostname (the listener's).
    host: u8,
    /// 0: PathPrefix `/`; 1: Exact `/app`; 2: PathPrefix `/app/v2`. For a GRPCRoute:
    /// 0: no match; 1: service and method; 2: a service pattern.
    path_variant: u8,
    /// Adds a header condition.
    header: bool,
    /// Splits traffic with `svc0` (in namespace alpha; beta needs the ReferenceGrant).
    split: bool,
    /// Adds a request header filter.
    filter: bool,
    /// 0: no sectionName; 1: `http`; 2: `https`; 3: `alt` (port 8080).
    section: u8,
}

/// The Gateway side: whether the GatewayClass is ours, the listeners' `allowedRoutes`
/// and hostname, whether beta's routes may use alpha's services, and which ListenerSets
/// the Gateway admits (0: `allowedListeners` unset; 1: `Same`; 2: `All`; 3: `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct GatewayShape {
    class_ours: bool,
    all_namespaces: bool,
    wildcard_hostname: bool,
    grant: bool,
    listener_sets: u8,
}

/// The cluster: services by number, the global ConfigMap's `timeout-server`, which
/// certificate the `tls` Secrets hold, HTTPRoutes by service, and the Gateway.
#[derive(Debug, Clone, Default)]
struct Cluster {
    services: BTreeMap<u8, Shape>,
    timeout_server: Option<u8>,
    secret_version: u8,
    routes: BTreeMap<u8, RouteShape>,
    /// TLSRoutes by service: 0 `svc<n>.pass.test`, 1 `shared.test`, 2 `*.pass.test`.
    tls_routes: BTreeMap<u8, u8>,
    /// TCPRoutes by service: 0 alone on listener `tcp`; 1 split 3:1 with `svc0` there;
    /// 2 a TLSRoute on the Terminate listener `term` instead.
    tcp_routes: BTreeMap<u8, u8>,
    /// The `tcp-services` ConfigMap: none, or entries for services 0 to 3 (1: plain; 2:
    /// PROXY both ways, no checks; 3: TLS with Secret `tls` and a client CA).
    tcp_configmap: Option<u8>,
    /// BackendTLSPolicies by service: 0 the ConfigMap `ca` (whose content follows the
    /// Secrets' version); 1 two policies on its port, the older applying; 2 a CA that
    /// does not exist (traffic refused); 3 the system's CAs and one subjectAltName.
    policies: BTreeMap<u8, u8>,
    /// ListenerSets `ls<n>` of the Gateway by number (the namespace as a service's), the
    /// older the lower: 0 HTTP `ls.test` on 80 (which every such set shares: the oldest
    /// keeps it) and HTTPS `ls<n>.secure.test`; 1 HTTP on port 8090 of its own; 2 TCP on
    /// 8090 (yielding to an older set's HTTP there); 3 HTTP `ls<n>.alt.test` on the HTTP
    /// frontend's port and TLS passthrough `ls<n>.pass.test`.
    listener_sets: BTreeMap<u8, u8>,
    /// HTTPRoutes `lsroute<s>` for service `s` attached to ListenerSet `ls<n>`, by service.
    set_routes: BTreeMap<u8, u8>,
    gateway: GatewayShape,
}

impl Cluster {
    fn namespace(service: u8) -> &'static str {
        if service.is_multiple_of(2) {
            "alpha"
        } else {
            "beta"
        }
    }

    fn objects(&self) -> BTreeMap<ObjectRef, Object> {
        let mut yaml = String::from(
            "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: other}\nspec: {controller: example.com/other}\n",
        );
        for namespace in ["alpha", "beta"] {
            let (cert, key) = certificate(self.secret_version);
            yaml += &test_support::tls_secret(namespace, "tls", cert, key);
            yaml +=
                &test_support::ca_secret(namespace, "client-ca", client_ca(self.secret_version));
            // The users change with the certificates' version: a Secret change.
            let users = if self.secret_version.is_multiple_of(2) {
                "alice:$6$salt$hash\n    bob:$apr1$x$y"
            } else {
                "alice:$5$salt$hash\n    carol::plain"
            };
            yaml += &format!(
                "---\napiVersion: v1\nkind: Secret\nmetadata: {{name: users, namespace: {namespace}}}\nstringData:\n  auth: |\n    {users}\n"
            );
        }
        if let Some(timeout) = self.timeout_server {
            yaml += &format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata: {{timeout-server: {timeout}s, dns-resolvers: 'local=10.96.0.10:53', dns-hold-valid: {timeout}s, redirect-from-code: '30{timeout}', ssl-dh-param: alpha/tls}}\n"
            );
        }
        if let Some(variant) = self.tcp_configmap {
            let options = match variant % 4 {
                0 | 1 => "",
                2 => ":PROXY:PROXY-V1::-",
                _ => "::::alpha/tls:1s:alpha/client-ca",
            };
            yaml += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: tcp, namespace: ops}\ndata:\n";
            for number in 0u8..4 {
                let namespace = Self::namespace(number);
                yaml += &format!(
                    "  '{}': '{namespace}/svc{number}:80{options}'\n",
                    9200 + u16::from(number)
                );
            }
            // One entry on the HTTP frontend's port: refused, whatever else changes.
            yaml += "  '8080': 'alpha/svc0:80'\n";
        }
        for (number, shape) in &self.services {
            let namespace = Self::namespace(*number);
            let name = format!("svc{number}");
            let external = if shape.dns % 3 == 2 {
                format!("  type: ExternalName\n  externalName: {name}.example.test\n")
            } else {
                String::new()
            };
            yaml += &format!(
                "---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n{external}  ports: [{{port: 80}}]\n"
            );
            yaml += &format!(
                "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: {name}-a, namespace: {namespace}, labels: {{kubernetes.io/service-name: {name}}}}}\naddressType: IPv4\nports: [{{port: 8080}}]\nendpoints:\n"
            );
            if shape.endpoints == 0 {
                yaml += "- {addresses: [10.9.9.9], conditions: {ready: false}}\n";
            }
            for endpoint in 0..shape.endpoints {
                yaml += &format!(
                    "- {{addresses: [10.0.{number}.{}], targetRef: {{kind: Pod, name: {name}-p{endpoint}}}}}\n",
                    endpoint + 1
                );
            }
            for endpoint in 0..shape.endpoints {
                if endpoint == 0 && shape.pod_labels & 8 != 0 {
                    continue;
                }
                let group = if (shape.pod_labels >> endpoint) & 1 == 1 {
                    "blue"
                } else {
                    "green"
                };
                yaml += &format!(
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}-p{endpoint}, namespace: {namespace}, labels: {{group: {group}}}}}\n"
                );
            }
            let class = if shape.ours {
                ""
            } else {
                "  ingressClassName: other\n"
            };
            let host = match shape.host % 3 {
                0 => format!("{name}.test"),
                1 => "shared.test".to_owned(),
                _ => format!("{name}.wild.test"),
            };
            let tls = match shape.tls % 4 {
                0 => String::new(),
                1 => format!("  tls:\n  - {{hosts: [{host}], secretName: tls}}\n"),
                2 => "  tls:\n  - {hosts: ['*.wild.test'], secretName: tls}\n".to_owned(),
                _ => format!("  tls:\n  - {{hosts: [{host}], secretName: missing}}\n"),
            };
            let target = if shape.shared_backend && namespace == "alpha" {
                "svc0".to_owned()
            } else {
                name.clone()
            };
            // Sticky sessions with cookies named after the servers: per-server options.
            // ... and hosts redirected to the Ingress's, and a host pattern routed as it.
            let redirects_and_patterns = format!(
                "portcullis.dev/redirect-from: from-{name}.test, portcullis.dev/redirect-from-regex: '^old-{name}\\.test$', portcullis.dev/server-alias-regex: '^(www|m)\\.{name}\\.test$', portcullis.dev/proxy-body-size: 1k, portcullis.dev/http-response-503: '503 Busy'"
            );
            let mut pairs: Vec<&str> = Vec::new();
            if shape.leastconn {
                pairs.extend([
                    "portcullis.dev/balance-algorithm: leastconn",
                    "portcullis.dev/affinity: cookie",
                    "portcullis.dev/session-cookie-dynamic: 'false'",
                    redirects_and_patterns.as_str(),
                ]);
            }
            match shape.access % 4 {
                0 => {}
                1 => {
                    pairs.push("portcullis.dev/allowlist-source-range: '10.0.0.0/8, !10.1.0.0/16'")
                }
                2 => pairs.extend([
                    "portcullis.dev/allowlist-source-range: '10.0.0.0/8, 2001:db8::/32'",
                    "portcullis.dev/denylist-source-range: '10.2.0.0/16'",
                    "portcullis.dev/allowlist-source-header: X-Real-IP",
                    "portcullis.dev/limit-rps: '10'",
                    "portcullis.dev/limit-whitelist: '10.3.0.0/16'",
                ]),
                _ => pairs
                    .push("haproxy-ingress.github.io/whitelist-source-range: '10.0.0.0/8, nope'"),
            }
            match shape.client_policy % 4 {
                1 => pairs.push("portcullis.dev/cors-enable: 'true', portcullis.dev/cors-allow-origin: 'https://app.test', portcullis.dev/cors-allow-origin-regex: '^https://[a-z]+[.]test$'"),
                2 => pairs.push("portcullis.dev/auth-tls-secret: client-ca, portcullis.dev/auth-tls-cert-header: 'true'"),
                3 => pairs.push("portcullis.dev/auth-tls-secret: missing-ca, portcullis.dev/auth-tls-verify-client: optional"),
                _ => {}
            }
            match shape.blue_green % 4 {
                0 => {}
                1 => pairs.push(
                    "haproxy-ingress.github.io/blue-green-balance: 'group=blue=1,group=green=3'",
                ),
                2 => pairs.extend([
                    "haproxy-ingress.github.io/blue-green-deploy: 'group=blue=2,group=green=1'",
                    "haproxy-ingress.github.io/blue-green-mode: pod",
                    "haproxy-ingress.github.io/blue-green-header: 'X-Server:group'",
                ]),
                _ => pairs.extend([
                    "haproxy-ingress.github.io/blue-green-header: 'X-Server:group'",
                    "haproxy-ingress.github.io/blue-green-cookie: 'SetServer:group'",
                ]),
            }
            if shape.dns % 3 == 1 {
                pairs.push("haproxy-ingress.github.io/use-resolver: local");
            }
            pairs.push(match shape.passthrough % 3 {
                0 => "",
                1 => "portcullis.dev/ssl-passthrough: 'true'",
                _ => "portcullis.dev/ssl-passthrough: 'true', portcullis.dev/ssl-passthrough-http-port: '80'",
            });
            let own_tcp_port = format!(
                "portcullis.dev/tcp-service-port: '{}', portcullis.dev/tcp-service-proxy-protocol: 'true'",
                9100 + u16::from(*number)
            );
            pairs.push(match shape.tcp % 3 {
                0 => "",
                1 => "portcullis.dev/tcp-service-port: '9000'",
                _ => own_tcp_port.as_str(),
            });
            pairs.push(match shape.auth % 4 {
                0 => "",
                1 => "portcullis.dev/auth-secret: users, portcullis.dev/auth-realm: Staff",
                2 => "portcullis.dev/auth-url: 'http://10.0.0.9:4180/oauth2/auth', portcullis.dev/auth-signin: 'https://auth.test/start?rd=%[path]'",
                _ => "portcullis.dev/auth-secret: missing",
            });
            pairs.retain(|p| !p.is_empty());
            let annotations = if pairs.is_empty() {
                String::new()
            } else {
                format!("  annotations: {{{}}}\n", pairs.join(", "))
            };
            let default_backend = if shape.default_backend {
                format!("  defaultBackend: {{service: {{name: {name}, port: {{number: 80}}}}}}\n")
            } else {
                String::new()
            };
            let path = ["/", "/app", "/app/v2"][usize::from(shape.path_variant % 3)];
            let kind =
                ["Prefix", "Exact", "ImplementationSpecific"][usize::from(shape.path_variant % 3)];
            yaml += &format!(
                "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: {namespace}\n{annotations}spec:\n{class}{tls}{default_backend}  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: {path}, pathType: {kind}, backend: {{service: {{name: {target}, port: {{number: 80}}}}}}}}\n"
            );
        }
        yaml += &self.gateway_objects();
        decode(&yaml)
            .into_iter()
            .map(|o| (o.object_ref(), o))
            .collect()
    }

    fn gateway_objects(&self) -> String {
        let gateway = self.gateway;
        let controller = if gateway.class_ours {
            "portcullis.dev/gateway-controller"
        } else {
            "example.com/other"
        };
        let from = if gateway.all_namespaces {
            "All"
        } else {
            "Same"
        };
        let hostname = if gateway.wildcard_hostname {
            "\n    hostname: '*.test'"
        } else {
            ""
        };
        let allowed_listeners = match gateway.listener_sets % 4 {
            0 => "",
            1 => "\n  allowedListeners: {namespaces: {from: Same}}",
            2 => "\n  allowedListeners: {namespaces: {from: All}}",
            _ => "\n  allowedListeners: {namespaces: {from: None}}",
        };
        let mut yaml = format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {{name: gw}}\nspec: {{controllerName: {controller}}}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: gw, namespace: alpha}}\nspec:\n  gatewayClassName: gw{allowed_listeners}\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: 80{hostname}\n    allowedRoutes: {{namespaces: {{from: {from}}}}}\n  - name: https\n    protocol: HTTPS\n    port: 443{hostname}\n    allowedRoutes: {{namespaces: {{from: {from}}}}}\n    tls: {{certificateRefs: [{{name: tls}}]}}\n  - name: alt\n    protocol: HTTP\n    port: 8080{hostname}\n    allowedRoutes: {{namespaces: {{from: {from}}}}}\n  - name: tls\n    protocol: TLS\n    port: 443{hostname}\n    allowedRoutes: {{namespaces: {{from: {from}}}}}\n    tls: {{mode: Passthrough}}\n  - name: tcp\n    protocol: TCP\n    port: 9400\n    allowedRoutes: {{namespaces: {{from: {from}}}}}\n  - name: term\n    protocol: TLS\n    port: 9443{hostname}\n    allowedRoutes: {{namespaces: {{from: {from}}}}}\n    tls: {{mode: Terminate, certificateRefs: [{{name: tls}}]}}\n"
        );
        for (number, variant) in &self.tcp_routes {
            let namespace = Self::namespace(*number);
            yaml += &match variant % 3 {
                0 => format!(
                    "---\napiVersion: gateway.networking.k8s.io/v1\nkind: TCPRoute\nmetadata: {{name: tcp{number}, namespace: {namespace}}}\nspec:\n  parentRefs: [{{name: gw, namespace: alpha, sectionName: tcp}}]\n  rules:\n  - backendRefs: [{{name: svc{number}, port: 80}}]\n"
                ),
                1 => format!(
                    "---\napiVersion: gateway.networking.k8s.io/v1alpha2\nkind: TCPRoute\nmetadata: {{name: tcp{number}, namespace: {namespace}}}\nspec:\n  parentRefs: [{{name: gw, namespace: alpha, sectionName: tcp}}]\n  rules:\n  - backendRefs: [{{name: svc{number}, port: 80, weight: 3}}, {{name: svc0, namespace: alpha, port: 80}}]\n"
                ),
                _ => format!(
                    "---\napiVersion: gateway.networking.k8s.io/v1\nkind: TLSRoute\nmetadata: {{name: tcp{number}, namespace: {namespace}}}\nspec:\n  parentRefs: [{{name: gw, namespace: alpha, sectionName: term}}]\n  hostnames: [svc{number}.term.test]\n  rules:\n  - backendRefs: [{{name: svc{number}, port: 80, weight: 2}}, {{name: nosuch, port: 80}}]\n"
                ),
            };
        }
        for (number, host) in &self.tls_routes {
            let namespace = Self::namespace(*number);
            let hostname = match host % 3 {
                0 => format!("svc{number}.pass.test"),
                1 => "shared.test".to_owned(),
                _ => "'*.pass.test'".to_owned(),
            };
            yaml += &format!(
                "---\napiVersion: gateway.networking.k8s.io/v1\nkind: TLSRoute\nmetadata: {{name: tls{number}, namespace: {namespace}}}\nspec:\n  parentRefs: [{{name: gw, namespace: alpha, sectionName: tls}}]\n  hostnames: [{hostname}]\n  rules:\n  - backendRefs: [{{name: svc{number}, port: 80}}]\n"
            );
        }
        for namespace in ["alpha", "beta"] {
            yaml += &test_support::ca_configmap(namespace, "ca", client_ca(self.secret_version));
        }
        for (number, variant) in &self.policies {
            let namespace = Self::namespace(*number);
            let policy = |name: &str, created: &str, validation: &str| {
                format!(
                    "---\napiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {{name: {name}, namespace: {namespace}, creationTimestamp: '{created}'}}\nspec:\n  targetRefs: [{{group: '', kind: Service, name: svc{number}}}]\n  validation: {{{validation}}}\n"
                )
            };
            let ca = |name: &str, host: &str| {
                format!(
                    "caCertificateRefs: [{{group: '', kind: ConfigMap, name: {name}}}], hostname: {host}"
                )
            };
            yaml += &match variant % 4 {
                0 => policy(
                    &format!("p{number}"),
                    "2024-01-01T00:00:00Z",
                    &ca("ca", "svc.internal"),
                ),
                1 => {
                    policy(
                        &format!("p{number}"),
                        "2024-01-02T00:00:00Z",
                        &ca("ca", "newer.internal"),
                    ) + &policy(
                        &format!("q{number}"),
                        "2024-01-01T00:00:00Z",
                        &ca("ca", "older.internal"),
                    )
                }
                2 => policy(
                    &format!("p{number}"),
                    "2024-01-01T00:00:00Z",
                    &ca("nosuch", "svc.internal"),
                ),
                _ => policy(
                    &format!("p{number}"),
                    "2024-01-01T00:00:00Z",
                    "wellKnownCACertificates: System, hostname: svc.internal, subjectAltNames: [{type: Hostname, hostname: san.internal}]",
                ),
            };
        }
        if gateway.grant {
            yaml += "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: beta-routes, namespace: alpha}\nspec:\n  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: beta}, {group: gateway.networking.k8s.io, kind: GRPCRoute, namespace: beta}, {group: gateway.networking.k8s.io, kind: TCPRoute, namespace: beta}]\n  to: [{group: '', kind: Service}]\n";
        }
        yaml += &self.listener_set_objects();
        for (number, route) in &self.routes {
            let namespace = Self::namespace(*number);
            let hostnames = match route.host % 3 {
                0 => format!("  hostnames: [svc{number}.test]\n"),
                1 => "  hostnames: [shared.test]\n".to_owned(),
                _ => String::new(),
            };
            let section = match route.section % 4 {
                0 => "",
                1 => ", sectionName: http",
                2 => ", sectionName: https",
                _ => ", sectionName: alt",
            };
            let (kind, path) = [
                ("PathPrefix", "/"),
                ("Exact", "/app"),
                ("PathPrefix", "/app/v2"),
            ][usize::from(route.path_variant % 3)];
            let header = if route.header {
                "headers: [{name: x-canary, value: '1'}]"
            } else {
                ""
            };
            let (route_kind, matched) = if route.grpc {
                let method = [
                    "",
                    "method: {service: shop.Cart, method: Add}",
                    "method: {type: RegularExpression, service: 'shop\\..*'}",
                ][usize::from(route.path_variant % 3)];
                let parts: Vec<&str> = [method, header]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect();
                ("GRPCRoute", parts.join(", "))
            } else {
                let path = format!("path: {{type: {kind}, value: {path}}}");
                let parts: Vec<&str> = [path.as_str(), header]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect();
                ("HTTPRoute", parts.join(", "))
            };
            let filter = if route.filter {
                format!(
                    "\n    filters: [{{type: RequestHeaderModifier, requestHeaderModifier: {{set: [{{name: x-route, value: r{number}}}]}}}}]"
                )
            } else {
                String::new()
            };
            let split = if route.split {
                ", {name: svc0, namespace: alpha, port: 80, weight: 2}"
            } else {
                ""
            };
            yaml += &format!(
                "---\napiVersion: gateway.networking.k8s.io/v1\nkind: {route_kind}\nmetadata: {{name: route{number}, namespace: {namespace}}}\nspec:\n  parentRefs: [{{name: gw, namespace: alpha{section}}}]\n{hostnames}  rules:\n  - matches: [{{{matched}}}]{filter}\n    backendRefs: [{{name: svc{number}, port: 80}}{split}]\n"
            );
        }
        yaml
    }
}

impl Cluster {
    /// The ListenerSets and the routes attached to them.
    fn listener_set_objects(&self) -> String {
        let mut yaml = String::new();
        for (number, variant) in &self.listener_sets {
            let namespace = Self::namespace(*number);
            let listeners = match variant % 4 {
                0 => format!(
                    "  - {{name: web, protocol: HTTP, port: 80, hostname: ls.test, allowedRoutes: {{namespaces: {{from: All}}}}}}\n  - {{name: secure, protocol: HTTPS, port: 443, hostname: ls{number}.secure.test, allowedRoutes: {{namespaces: {{from: All}}}}, tls: {{certificateRefs: [{{name: tls}}]}}}}\n"
                ),
                1 => "  - {name: web, protocol: HTTP, port: 8090, allowedRoutes: {namespaces: {from: All}}}\n".to_owned(),
                2 => "  - {name: web, protocol: TCP, port: 8090, allowedRoutes: {namespaces: {from: All}}}\n".to_owned(),
                _ => format!(
                    "  - {{name: web, protocol: HTTP, port: 8080, hostname: ls{number}.alt.test, allowedRoutes: {{namespaces: {{from: All}}}}}}\n  - {{name: pass, protocol: TLS, port: 443, hostname: ls{number}.pass.test, tls: {{mode: Passthrough}}}}\n"
                ),
            };
            yaml += &format!(
                "---\napiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {{name: ls{number}, namespace: {namespace}, creationTimestamp: '2024-01-0{}T00:00:00Z'}}\nspec:\n  parentRef: {{name: gw, namespace: alpha}}\n  listeners:\n{listeners}",
                number + 1
            );
        }
        for (service, set) in &self.set_routes {
            let namespace = Self::namespace(*service);
            let set_namespace = Self::namespace(*set);
            yaml += &format!(
                "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: lsroute{service}, namespace: {namespace}}}\nspec:\n  parentRefs: [{{kind: ListenerSet, name: ls{set}, namespace: {set_namespace}}}]\n  rules:\n  - matches: [{{path: {{type: PathPrefix, value: /ls}}}}]\n    backendRefs: [{{name: svc{service}, port: 80}}]\n"
            );
        }
        yaml
    }
}

/// A controller without HAProxy: index, memoizing reconciler, state directory.
struct Live {
    index: Index,
    reconciler: Reconciler,
    state: StateDir,
    applied: AppliedFiles,
    objects: BTreeMap<ObjectRef, Object>,
}

impl Live {
    /// Starts over `dir` as a restarted controller would: scans what is on disk.
    fn start(dir: &Path, shards: u32, cluster: &Cluster) -> Self {
        let state = StateDir::open(dir).unwrap();
        let applied = state.scan().unwrap();
        let mut live = Live {
            index: Index::new(),
            reconciler: Reconciler::new(options(shards)),
            state,
            applied,
            objects: BTreeMap::new(),
        };
        let objects = cluster.objects();
        live.index
            .handle(SourceEvent::Init(index::ListScope::Everything));
        for object in objects.values() {
            live.index.handle(SourceEvent::InitApply(object.clone()));
        }
        live.index.handle(SourceEvent::InitDone);
        live.objects = objects;
        live.sync().unwrap();
        live
    }

    /// Applies the difference to `cluster` as one batch of events, then syncs.
    fn change_to(&mut self, cluster: &Cluster) -> Result<(), haproxy::StateDirError> {
        let objects = cluster.objects();
        for gone in self.objects.keys().filter(|r| !objects.contains_key(*r)) {
            self.index.handle(SourceEvent::Delete(gone.clone()));
        }
        for (object_ref, object) in &objects {
            if self.objects.get(object_ref) != Some(object) {
                self.index.handle(SourceEvent::Apply(object.clone()));
            }
        }
        self.objects = objects;
        self.sync()
    }

    fn sync(&mut self) -> Result<(), haproxy::StateDirError> {
        let reconciled = self
            .reconciler
            .reconcile(&self.index.snapshot(), &BTreeMap::new())
            .unwrap();
        let plan = plan::plan(&self.applied, &reconciled.rendered);
        self.state.apply(&plan, &mut self.applied)
    }
}

/// What a fresh, full reconciliation of `cluster` renders, file by file.
fn full_render(cluster: &Cluster, shards: u32) -> BTreeMap<String, Vec<u8>> {
    let mut index = Index::new();
    index.handle(SourceEvent::Init(index::ListScope::Everything));
    for object in cluster.objects().into_values() {
        index.handle(SourceEvent::InitApply(object));
    }
    index.handle(SourceEvent::InitDone);
    let reconciled = Reconciler::new(options(shards))
        .reconcile(&index.snapshot(), &BTreeMap::new())
        .unwrap();
    reconciled
        .rendered
        .files
        .into_iter()
        .map(|(path, file)| (path, file.text().as_bytes().to_vec()))
        .collect()
}

fn assert_disk_is_full_render(dir: &Path, cluster: &Cluster, shards: u32) {
    let on_disk = test_support::managed_files(dir);
    let expected = full_render(cluster, shards);
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&on_disk), names(&expected), "the same files");
    for (path, bytes) in &expected {
        assert!(
            on_disk[path] == *bytes,
            "{path} differs from a full render:\n{}",
            String::from_utf8_lossy(&on_disk[path])
        );
    }
}

fn section(service: u8) -> String {
    BackendId {
        namespace: Cluster::namespace(service).into(),
        service: format!("svc{service}").into(),
        port: "80".into(),
        mode: model::BackendMode::Http,
    }
    .section_name()
}

fn cluster_of(services: impl IntoIterator<Item = u8>) -> Cluster {
    Cluster {
        services: services
            .into_iter()
            .map(|s| (s, Shape::default()))
            .collect(),
        ..Cluster::default()
    }
}

#[test]
fn a_last_backend_of_a_shard_removed_with_a_global_change() {
    const SHARDS: u32 = 4;
    // Pick a service alone in its shard, and others elsewhere.
    let shard = |s: u8| {
        render::shard_of(
            &BackendId {
                namespace: Cluster::namespace(s).into(),
                service: format!("svc{s}").into(),
                port: "80".into(),
                mode: model::BackendMode::Http,
            },
            SHARDS,
        )
    };
    let lonely = 0;
    let others: Vec<u8> = (1..60)
        .filter(|s| shard(*s) != shard(lonely))
        .take(6)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let before = cluster_of(std::iter::once(lonely).chain(others.iter().copied()));
    let mut live = Live::start(dir.path(), SHARDS, &before);
    let shard_file = dir
        .path()
        .join(render::shard_file_name(shard(lonely), SHARDS));
    assert!(
        std::fs::read_to_string(&shard_file)
            .unwrap()
            .contains(&section(lonely))
    );

    let mut after = cluster_of(others.iter().copied());
    after.timeout_server = Some(30);
    live.change_to(&after).unwrap();
    assert_disk_is_full_render(dir.path(), &after, SHARDS);
    assert_eq!(
        std::fs::read_to_string(&shard_file).unwrap(),
        format!("# portcullis backend shard {} of 4\n", shard(lonely))
    );
}

#[test]
fn b_last_backend_overall_removed_during_a_full_reconciliation() {
    let dir = tempfile::tempdir().unwrap();
    let before = cluster_of([3]);
    drop(Live::start(dir.path(), 2, &before));
    // A full reconciliation: empty caches, over the files the previous one left.
    let after = Cluster {
        timeout_server: Some(9),
        ..Cluster::default()
    };
    drop(Live::start(dir.path(), 2, &after));
    assert_disk_is_full_render(dir.path(), &after, 2);
    let shards = test_support::managed_files(dir.path())
        .into_iter()
        .filter(|(p, _)| p.starts_with("backends/"));
    for (path, bytes) in shards {
        assert!(
            !String::from_utf8(bytes).unwrap().contains("\nbackend "),
            "{path} still holds a backend"
        );
    }
}

#[test]
fn c_a_lower_shard_count_leaves_no_orphan_shard_file() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = cluster_of(0..20);
    drop(Live::start(dir.path(), 8, &cluster));
    assert_eq!(
        std::fs::read_dir(dir.path().join("backends"))
            .unwrap()
            .count(),
        8
    );
    drop(Live::start(dir.path(), 3, &cluster));
    assert_disk_is_full_render(dir.path(), &cluster, 3);
    assert_eq!(
        std::fs::read_dir(dir.path().join("backends"))
            .unwrap()
            .count(),
        3
    );
}

#[test]
fn d_a_restart_over_stale_files_from_an_older_run() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = cluster_of(0..6);
    drop(Live::start(dir.path(), 2, &cluster));
    std::fs::write(
        dir.path().join("backends/shard-009.cfg"),
        "backend old_svc_80\n    server s 10.0.0.1:80\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("backends/shard-000.cfg"),
        "# edited by hand\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("maps/old-frontend.map"), "a b\n").unwrap();
    std::fs::write(dir.path().join("certs/gone_tls.pem"), "x\n").unwrap();
    std::fs::write(dir.path().join("haproxy.cfg"), "global\n").unwrap();
    drop(Live::start(dir.path(), 2, &cluster));
    assert_disk_is_full_render(dir.path(), &cluster, 2);
}

#[test]
fn e_a_write_error_mid_sync_then_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let before = cluster_of(0..4);
    let mut live = Live::start(dir.path(), 2, &before);
    let blocked = Blocked::new(&dir.path().join("maps/https-prefix.map"));
    let after = cluster_of([0, 1, 2, 3, 4, 5]);
    let error = live.change_to(&after).unwrap_err();
    assert!(error.to_string().contains("/maps"), "{error}");
    // The temporaries of the files not renamed are gone with the failure.
    for managed in ["maps", "backends"] {
        for entry in std::fs::read_dir(dir.path().join(managed)).unwrap() {
            let name = entry.unwrap().file_name();
            assert!(
                !name.to_string_lossy().starts_with(".tmp"),
                "{managed}/{name:?} left behind"
            );
        }
    }
    // Nothing is recorded as applied that is not on disk with that content.
    let on_disk = live.state.scan().unwrap();
    for (path, hash) in &live.applied {
        if path != "maps/https-prefix.map" {
            assert_eq!(
                on_disk.get(path),
                Some(hash),
                "{path} recorded as applied but not written"
            );
        }
    }
    assert_ne!(
        live.applied.get("maps/https-prefix.map"),
        full_render(&after, 2)
            .get("maps/https-prefix.map")
            .map(|b| xxhash(b))
            .as_ref()
    );
    drop(blocked);
    live.sync().unwrap();
    assert_disk_is_full_render(dir.path(), &after, 2);
}

/// Replacing the file fails while this lives. A read-only directory stops anyone but
/// root; root is stopped by the immutable attribute. (A directory in the file's place no
/// longer would: the sweep removes it before writing.) Dropping it undoes the block, so a
/// failed assertion leaves nothing the temporary directory cannot remove.
struct Blocked {
    file: std::path::PathBuf,
    immutable: bool,
}

impl Blocked {
    fn new(file: &Path) -> Self {
        let dir = file.parent().unwrap();
        read_only(dir, true);
        let probe = dir.join("probe");
        let immutable = std::fs::write(&probe, "").is_ok();
        let _ = std::fs::remove_file(&probe);
        if immutable {
            read_only(dir, false);
            assert!(
                chattr("+i", file),
                "as root this test needs `chattr +i` (CAP_LINUX_IMMUTABLE, a file system with the attribute)"
            );
        }
        Self {
            file: file.to_path_buf(),
            immutable,
        }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        if self.immutable {
            chattr("-i", &self.file);
        } else if let Some(dir) = self.file.parent() {
            read_only(dir, false);
        }
    }
}

fn read_only(dir: &Path, read_only: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mode = if read_only { 0o555 } else { 0o755 };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chattr(flag: &str, file: &Path) -> bool {
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(file)
        .status()
        .is_ok_and(|s| s.success())
}

fn xxhash(bytes: &[u8]) -> u64 {
    render::RenderedFile::new(String::from_utf8_lossy(bytes).into_owned(), false).hash
}

/// One change to the cluster.
#[derive(Debug, Clone)]
enum Change {
    Add(u8, Shape),
    Remove(u8),
    Scale(u8, u8),
    Tls(u8, u8),
    Path(u8, u8),
    Class(u8, bool),
    Global(Option<u8>),
    Host(u8, u8),
    SharedBackend(u8, bool),
    LeastConn(u8, bool),
    DefaultBackend(u8, bool),
    Access(u8, u8),
    Auth(u8, u8),
    ClientPolicy(u8, u8),
    SecretVersion(u8),
    BlueGreen(u8, u8),
    Dns(u8, u8),
    PodLabels(u8, u8),
    Route(u8, Option<RouteShape>),
    Gateway(GatewayShape),
    Passthrough(u8, u8),
    TlsRoute(u8, Option<u8>),
    Tcp(u8, u8),
    TcpRoute(u8, Option<u8>),
    TcpConfigMap(Option<u8>),
    Policy(u8, Option<u8>),
    ListenerSet(u8, Option<u8>),
    SetRoute(u8, Option<u8>),
}

/// Any shape a service may have.
fn shape() -> impl Strategy<Value = Shape> {
    (
        (0u8..4, 0u8..4, 0u8..3, any::<bool>()),
        (0u8..3, any::<bool>(), any::<bool>(), any::<bool>()),
        (
            (0u8..4, 0u8..4, 0u8..16, 0u8..3, 0u8..4, 0u8..4),
            proptest::sample::select(vec![0u8, 0, 1, 2]),
        ),
        proptest::sample::select(vec![0u8, 0, 0, 1, 2]),
    )
        .prop_map(
            |(
                (endpoints, tls, path_variant, ours),
                (host, shared_backend, leastconn, default_backend),
                ((access, blue_green, pod_labels, dns, auth, client_policy), passthrough),
                tcp,
            )| {
                Shape {
                    endpoints,
                    tls,
                    path_variant,
                    ours: ours || endpoints > 0,
                    host,
                    shared_backend,
                    leastconn,
                    default_backend,
                    blue_green,
                    pod_labels,
                    dns,
                    access,
                    auth,
                    client_policy,
                    passthrough,
                    tcp,
                }
            },
        )
}

fn route_shape() -> impl Strategy<Value = RouteShape> {
    (
        any::<bool>(),
        0u8..3,
        0u8..3,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0u8..3,
    )
        .prop_map(
            |(grpc, host, path_variant, header, split, filter, section)| RouteShape {
                grpc,
                host,
                path_variant,
                header,
                split,
                filter,
                section,
            },
        )
}

fn gateway_shape() -> impl Strategy<Value = GatewayShape> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::sample::select(vec![0u8, 1, 1, 2, 2, 3]),
    )
        .prop_map(
            |(class_ours, all_namespaces, wildcard_hostname, grant, listener_sets)| GatewayShape {
                class_ours: class_ours || grant,
                all_namespaces,
                wildcard_hostname,
                grant,
                listener_sets,
            },
        )
}

fn change() -> impl Strategy<Value = Change> {
    let service = 0u8..8;
    prop_oneof![
        (service.clone(), shape()).prop_map(|(s, shape)| Change::Add(s, shape)),
        service.clone().prop_map(Change::Remove),
        (service.clone(), 0u8..4).prop_map(|(s, n)| Change::Scale(s, n)),
        (service.clone(), 0u8..4).prop_map(|(s, t)| Change::Tls(s, t)),
        (service.clone(), 0u8..3).prop_map(|(s, p)| Change::Path(s, p)),
        (service.clone(), any::<bool>()).prop_map(|(s, o)| Change::Class(s, o)),
        proptest::option::of(1u8..4).prop_map(Change::Global),
        (service.clone(), 0u8..3).prop_map(|(s, h)| Change::Host(s, h)),
        (service.clone(), any::<bool>()).prop_map(|(s, b)| Change::SharedBackend(s, b)),
        (service.clone(), any::<bool>()).prop_map(|(s, b)| Change::LeastConn(s, b)),
        (service.clone(), any::<bool>()).prop_map(|(s, b)| Change::DefaultBackend(s, b)),
        (service.clone(), 0u8..4).prop_map(|(s, a)| Change::Access(s, a)),
        (service.clone(), 0u8..4).prop_map(|(s, a)| Change::Auth(s, a)),
        (service, 0u8..4).prop_map(|(s, p)| Change::ClientPolicy(s, p)),
        (0u8..2).prop_map(Change::SecretVersion),
        (0u8..8, 0u8..4).prop_map(|(s, b)| Change::BlueGreen(s, b)),
        (0u8..8, 0u8..3).prop_map(|(s, d)| Change::Dns(s, d)),
        (0u8..8, 0u8..16).prop_map(|(s, l)| Change::PodLabels(s, l)),
        (0u8..8, proptest::option::weighted(0.7, route_shape()))
            .prop_map(|(s, r)| Change::Route(s, r)),
        gateway_shape().prop_map(Change::Gateway),
        (0u8..8, 0u8..3).prop_map(|(s, p)| Change::Passthrough(s, p)),
        (0u8..8, proptest::option::weighted(0.7, 0u8..3)).prop_map(|(s, h)| Change::TlsRoute(s, h)),
        (0u8..8, 0u8..3).prop_map(|(s, t)| Change::Tcp(s, t)),
        (0u8..8, proptest::option::weighted(0.7, 0u8..3)).prop_map(|(s, v)| Change::TcpRoute(s, v)),
        proptest::option::of(0u8..4).prop_map(Change::TcpConfigMap),
        (0u8..8, proptest::option::weighted(0.7, 0u8..4)).prop_map(|(s, p)| Change::Policy(s, p)),
        (0u8..4, proptest::option::weighted(0.7, 0u8..4))
            .prop_map(|(n, v)| Change::ListenerSet(n, v)),
        (0u8..8, proptest::option::weighted(0.7, 0u8..4)).prop_map(|(s, n)| Change::SetRoute(s, n)),
    ]
}

/// A batch of changes, and whether the controller restarts (with this shard count) first.
fn batch() -> impl Strategy<Value = (Vec<Change>, Option<u32>)> {
    (
        proptest::collection::vec(change(), 1..6),
        proptest::option::weighted(0.15, 1u32..5),
    )
}

fn apply(cluster: &mut Cluster, change: &Change) {
    let mut edit = |s: u8, f: &dyn Fn(&mut Shape)| {
        if let Some(shape) = cluster.services.get_mut(&s) {
            f(shape);
        }
    };
    match *change {
        Change::Add(s, shape) => {
            cluster.services.entry(s).or_insert(shape);
        }
        Change::Remove(s) => {
            cluster.services.remove(&s);
        }
        Change::Scale(s, n) => edit(s, &|shape| shape.endpoints = n),
        Change::Tls(s, t) => edit(s, &|shape| shape.tls = t),
        Change::Path(s, p) => edit(s, &|shape| shape.path_variant = p),
        Change::Class(s, o) => edit(s, &|shape| shape.ours = o),
        Change::Global(timeout) => cluster.timeout_server = timeout,
        Change::Host(s, h) => edit(s, &|shape| shape.host = h),
        Change::SharedBackend(s, b) => edit(s, &|shape| shape.shared_backend = b),
        Change::LeastConn(s, b) => edit(s, &|shape| shape.leastconn = b),
        Change::DefaultBackend(s, b) => edit(s, &|shape| shape.default_backend = b),
        Change::Access(s, a) => edit(s, &|shape| shape.access = a),
        Change::Auth(s, a) => edit(s, &|shape| shape.auth = a),
        Change::ClientPolicy(s, p) => edit(s, &|shape| shape.client_policy = p),
        Change::SecretVersion(v) => cluster.secret_version = v,
        Change::BlueGreen(s, b) => edit(s, &|shape| shape.blue_green = b),
        Change::Dns(s, d) => edit(s, &|shape| shape.dns = d),
        Change::PodLabels(s, l) => edit(s, &|shape| shape.pod_labels = l),
        Change::Route(s, Some(route)) => {
            cluster.routes.insert(s, route);
        }
        Change::Route(s, None) => {
            cluster.routes.remove(&s);
        }
        Change::Gateway(gateway) => cluster.gateway = gateway,
        Change::Passthrough(s, p) => edit(s, &|shape| shape.passthrough = p),
        Change::TlsRoute(s, Some(host)) => {
            cluster.tls_routes.insert(s, host);
        }
        Change::TlsRoute(s, None) => {
            cluster.tls_routes.remove(&s);
        }
        Change::Tcp(s, t) => edit(s, &|shape| shape.tcp = t),
        Change::TcpRoute(s, Some(variant)) => {
            cluster.tcp_routes.insert(s, variant);
        }
        Change::TcpRoute(s, None) => {
            cluster.tcp_routes.remove(&s);
        }
        Change::TcpConfigMap(variant) => cluster.tcp_configmap = variant,
        Change::Policy(s, Some(variant)) => {
            cluster.policies.insert(s, variant);
        }
        Change::Policy(s, None) => {
            cluster.policies.remove(&s);
        }
        Change::ListenerSet(n, Some(variant)) => {
            cluster.listener_sets.insert(n, variant);
        }
        Change::ListenerSet(n, None) => {
            cluster.listener_sets.remove(&n);
        }
        Change::SetRoute(s, Some(set)) => {
            cluster.set_routes.insert(s, set);
        }
        Change::SetRoute(s, None) => {
            cluster.set_routes.remove(&s);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// After every batch, the state directory is byte-identical to a fresh full render of
    /// the objects, with no extra file, and the incremental model equals the full one.
    #[test]
    fn incremental_equals_full_after_every_batch(
        initial in proptest::collection::btree_map(0u8..8, shape(), 0..6),
        initial_routes in proptest::collection::btree_map(0u8..8, route_shape(), 0..4),
        initial_tls_routes in proptest::collection::btree_map(0u8..8, 0u8..3, 0..3),
        initial_tcp_routes in proptest::collection::btree_map(0u8..8, 0u8..3, 0..3),
        tcp_configmap in proptest::option::of(0u8..4),
        initial_policies in proptest::collection::btree_map(0u8..8, 0u8..4, 0..3),
        initial_sets in proptest::collection::btree_map(0u8..4, 0u8..4, 0..3),
        initial_set_routes in proptest::collection::btree_map(0u8..8, 0u8..4, 0..3),
        gateway in gateway_shape(),
        shards in 0u32..5,
        batches in proptest::collection::vec(batch(), 1..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut cluster = Cluster { services: initial, routes: initial_routes, tls_routes: initial_tls_routes, tcp_routes: initial_tcp_routes, tcp_configmap, policies: initial_policies, listener_sets: initial_sets, set_routes: initial_set_routes, gateway, ..Cluster::default() };
        let mut shards = shards;
        let mut live = Live::start(dir.path(), shards, &cluster);
        for (changes, restart) in &batches {
            if let Some(new_shards) = restart {
                shards = *new_shards;
                live = Live::start(dir.path(), shards, &cluster);
            }
            for change in changes {
                apply(&mut cluster, change);
            }
            live.change_to(&cluster).unwrap();
            assert_disk_is_full_render(dir.path(), &cluster, shards);
            let full = Reconciler::new(options(shards)).reconcile(&live.index.snapshot(), &BTreeMap::new()).unwrap();
            let incremental = live.reconciler.reconcile(&live.index.snapshot(), &BTreeMap::new()).unwrap();
            prop_assert_eq!(&incremental, &full);
            // `render`'s one pass (a conversion that records nothing, given the snapshot,
            // which it sheds of what only conversion reads) gives the same.
            let given = index::Snapshot::clone(&live.index.snapshot());
            let once = convert::convert_given(given, &options(shards));
            prop_assert_eq!(&render::render(&once.model), &full.rendered);
            prop_assert_eq!(&once, &full.conversion);
        }
    }
}

/// The case the property test shrank to on 2026-12-01, kept as a fixed regression: a
/// GRPCRoute replaced by an HTTPRoute of the same name in one batch (their claims shared
/// positions, since the merge order had no kind), beside a TLSRoute and an HTTPRoute.
#[test]
fn a_grpc_route_replaced_by_an_http_route_of_its_name_renders_as_a_full_render() {
    let route = |grpc: bool, host: u8| RouteShape {
        grpc,
        host,
        path_variant: 0,
        header: false,
        split: false,
        filter: false,
        section: 0,
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = Cluster {
        services: BTreeMap::from([(
            0,
            Shape {
                endpoints: 0,
                ours: true,
                ..Shape::default()
            },
        )]),
        routes: BTreeMap::from([(2, route(true, 2))]),
        tls_routes: BTreeMap::from([(0, 0)]),
        gateway: GatewayShape {
            class_ours: true,
            all_namespaces: false,
            wildcard_hostname: false,
            grant: false,
            listener_sets: 0,
        },
        ..Cluster::default()
    };
    let mut live = Live::start(dir.path(), 0, &cluster);
    for change in [
        Change::Route(1, Some(route(false, 0))),
        Change::Route(2, Some(route(false, 2))),
    ] {
        apply(&mut cluster, &change);
        live.change_to(&cluster).unwrap();
        assert_disk_is_full_render(dir.path(), &cluster, 0);
        let full = Reconciler::new(options(0))
            .reconcile(&live.index.snapshot(), &BTreeMap::new())
            .unwrap();
        let incremental = live
            .reconciler
            .reconcile(&live.index.snapshot(), &BTreeMap::new())
            .unwrap();
        assert_eq!(incremental, full);
    }
}

/// The generator's ListenerSets are served when their Gateway admits them (so the
/// property test exercises them), and every change to them or to the Gateway's
/// `allowedListeners` renders as a full render.
#[test]
fn listener_sets_admitted_then_refused_render_as_a_full_render() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = |listener_sets| GatewayShape {
        class_ours: true,
        all_namespaces: true,
        wildcard_hostname: false,
        grant: false,
        listener_sets,
    };
    let mut cluster = Cluster {
        services: (0..4).map(|s| (s, Shape::default())).collect(),
        listener_sets: BTreeMap::from([(0, 0), (1, 1), (2, 2), (3, 3)]),
        set_routes: BTreeMap::from([(0, 0), (1, 1), (2, 2), (3, 3)]),
        gateway: gateway(2),
        ..Cluster::default()
    };
    let mut live = Live::start(dir.path(), 0, &cluster);
    let hosts = |live: &mut Live| -> Vec<String> {
        let reconciled = live
            .reconciler
            .reconcile(&live.index.snapshot(), &BTreeMap::new())
            .unwrap();
        reconciled
            .conversion
            .model
            .hosts
            .iter()
            .filter(|(_, host)| !host.routes.is_empty())
            .map(|(key, _)| format!("{key:?}"))
            .filter(|key| key.contains("ls"))
            .collect()
    };
    assert_eq!(
        hosts(&mut live),
        [
            "CatchAll".to_owned(),
            "Exact(\"ls.test\")".to_owned(),
            "Exact(\"ls0.secure.test\")".to_owned(),
            "Exact(\"ls3.alt.test\")".to_owned(),
        ]
        .into_iter()
        .filter(|key| key.contains("ls"))
        .collect::<Vec<_>>()
    );
    for change in [
        Change::ListenerSet(1, None),
        Change::SetRoute(0, Some(3)),
        Change::Gateway(gateway(1)),
        Change::Gateway(gateway(0)),
    ] {
        apply(&mut cluster, &change);
        live.change_to(&cluster).unwrap();
        assert_disk_is_full_render(dir.path(), &cluster, 0);
        let full = Reconciler::new(options(0))
            .reconcile(&live.index.snapshot(), &BTreeMap::new())
            .unwrap();
        let incremental = live
            .reconciler
            .reconcile(&live.index.snapshot(), &BTreeMap::new())
            .unwrap();
        assert_eq!(incremental, full, "{change:?}");
    }
    assert!(hosts(&mut live).is_empty(), "nothing is admitted any more");
}
