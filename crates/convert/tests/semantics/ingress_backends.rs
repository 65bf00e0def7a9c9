//! routing.md "Backends": one service port each, its servers the ready endpoints.

use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn backends_and_servers() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "routing.md Backends: 'A backend is one service port (<namespace>_<service>_<port>, the port as the Ingress names it, number ...)'",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                ],
            ),
            Case::new(
                "routing.md Backends: '(... the port as the Ingress names it, ... name)'; servers from 'the slice port whose name equals the service port's name'",
                "
                kind: Service
                metadata: {name: shop}
                spec: {ports: [{name: http, port: 80}, {name: admin, port: 81}]}
                ---
                kind: EndpointSlice
                metadata: {name: shop-1, labels: {kubernetes.io/service-name: shop}}
                addressType: IPv4
                ports: [{name: http, port: 8080}, {name: admin, port: 9090}]
                endpoints: [{addresses: [10.0.1.1]}]
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: shop, port: {name: http}}}}
                      - {path: /admin, pathType: Prefix, backend: {service: {name: shop, port: {name: admin}}}}
                ",
                &[
                    "route a.test / Prefix -> default_shop_http",
                    "route a.test /admin Prefix -> default_shop_admin",
                    "backend default_shop_admin servers 10.0.1.1:9090",
                    "backend default_shop_http servers 10.0.1.1:8080",
                ],
            ),
            Case::new(
                "routing.md Backends: 'Its servers are the ready endpoints (an absent ready counts as ready) of every EndpointSlice labelled for the service'",
                "
                kind: Service
                metadata: {name: shop}
                spec: {ports: [{port: 80}]}
                ---
                kind: EndpointSlice
                metadata: {name: shop-1, labels: {kubernetes.io/service-name: shop}}
                addressType: IPv4
                ports: [{port: 8080}]
                endpoints:
                - {addresses: [10.0.1.1]}
                - {addresses: [10.0.1.2], conditions: {ready: true}}
                - {addresses: [10.0.1.3], conditions: {ready: false}}
                ---
                kind: EndpointSlice
                metadata: {name: shop-2, labels: {kubernetes.io/service-name: shop}}
                addressType: IPv4
                ports: [{port: 8080}]
                endpoints: [{addresses: [10.0.1.4]}]
                ---
                kind: EndpointSlice
                metadata: {name: unlabelled}
                addressType: IPv4
                ports: [{port: 8080}]
                endpoints: [{addresses: [10.0.1.5]}]
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: shop, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_shop_80",
                    "backend default_shop_80 servers 10.0.1.1:8080 10.0.1.2:8080 10.0.1.4:8080",
                ],
            ),
            Case::new(
                "routing.md Backends: an endpoint is its first address (the API gives the others no meaning, and kube-proxy reads the first only)",
                "
                kind: Service
                metadata: {name: shop}
                spec: {ports: [{port: 80}]}
                ---
                kind: EndpointSlice
                metadata: {name: shop-1, labels: {kubernetes.io/service-name: shop}}
                addressType: IPv4
                ports: [{port: 8080}]
                endpoints:
                - {addresses: [10.0.1.1, 10.0.1.9]}
                - {addresses: [10.0.1.2]}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: shop, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_shop_80",
                    "backend default_shop_80 servers 10.0.1.1:8080 10.0.1.2:8080",
                ],
            ),
            Case::new(
                "routing.md Backends: 'An endpoint address HAProxy cannot use as a server's ... is reported on its slice and left out'",
                "
                kind: Service
                metadata: {name: shop}
                spec: {ports: [{port: 80}]}
                ---
                kind: EndpointSlice
                metadata: {name: shop-1, labels: {kubernetes.io/service-name: shop}}
                addressType: IPv4
                ports: [{port: 8080}]
                endpoints:
                - {addresses: [10.0.1.1]}
                - {addresses: [0.0.0.0]}
                - {addresses: [localhost]}
                - {addresses: [255.255.255.255]}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: shop, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_shop_80",
                    "backend default_shop_80 servers 10.0.1.1:8080",
                    "diagnostic EndpointSlice default/shop-1: endpoints[1].addresses[0]: '0.0.0.0' is the unspecified address, which HAProxy cannot use as a server's; the endpoint is left out",
                    "diagnostic EndpointSlice default/shop-1: endpoints[3].addresses[0]: '255.255.255.255' is the broadcast address, which HAProxy cannot use as a server's; the endpoint is left out",
                    "diagnostic EndpointSlice default/shop-1: endpoints[2].addresses[0]: 'localhost' is not an IP address, which HAProxy cannot use as a server's; the endpoint is left out",
                ],
            ),
            Case::new(
                "routing.md Backends: 'without any EndpointSlice, the Service's Endpoints object is used' (its ready addresses)",
                "
                kind: Service
                metadata: {name: legacy}
                spec: {ports: [{port: 80}]}
                ---
                kind: Endpoints
                metadata: {name: legacy}
                subsets:
                - addresses: [{ip: 10.0.2.1}]
                  notReadyAddresses: [{ip: 10.0.2.2}]
                  ports: [{port: 7000}]
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: legacy, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_legacy_80",
                    "backend default_legacy_80 servers 10.0.2.1:7000",
                ],
            ),
            Case::new(
                "routing.md Backends: the Endpoints object is used only 'without any EndpointSlice'",
                "
                kind: Endpoints
                metadata: {name: web}
                subsets:
                - addresses: [{ip: 10.0.2.1}]
                  ports: [{port: 7000}]
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                ],
            ),
            Case::new(
                "routing.md 3: 'A backend with no ready endpoint answers 503': it is served, with no server",
                "
                kind: Service
                metadata: {name: down}
                spec: {ports: [{port: 80}]}
                ---
                kind: EndpointSlice
                metadata: {name: down-1, labels: {kubernetes.io/service-name: down}}
                addressType: IPv4
                ports: [{port: 8080}]
                endpoints: [{addresses: [10.0.3.1], conditions: {ready: false}}]
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: down, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_down_80",
                    "backend default_down_80 servers (none)",
                ],
            ),
            Case::new(
                "routing.md Backends: 'A missing service or port is reported and the path skipped'",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                      - {path: /gone, pathType: Prefix, backend: {service: {name: nosuch, port: {number: 80}}}}
                      - {path: /port, pathType: Prefix, backend: {service: {name: web, port: {number: 81}}}}
                      - {path: /named, pathType: Prefix, backend: {service: {name: web, port: {name: grpc}}}}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "backend default_web_80 servers 10.0.0.1:8080",
                    "diagnostic Ingress default/a: spec.rules[0].http.paths[1].backend: service default/nosuch not found; the path is skipped",
                    "diagnostic Ingress default/a: spec.rules[0].http.paths[2].backend: service default/web has no port 81; the path is skipped",
                    "diagnostic Ingress default/a: spec.rules[0].http.paths[3].backend: service default/web has no port named 'grpc'; the path is skipped",
                ],
            ),
        ],
    );
}

#[test]
fn backend_settings() {
    check(
        Show::BACKENDS,
        &[
            Case::new(
                "routing.md: 'When two declare ... different settings for the same backend ... the oldest wins and the other is reported on the losing object'",
                "
                kind: Ingress
                metadata:
                  name: new
                  creationTimestamp: '2024-06-01T00:00:00Z'
                  annotations: {portcullis.dev/balance-algorithm: source}
                spec:
                  rules:
                  - host: new.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: old
                  creationTimestamp: '2024-01-01T00:00:00Z'
                  annotations: {portcullis.dev/balance-algorithm: leastconn}
                spec:
                  rules:
                  - host: old.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route new.test / Prefix -> default_web_80",
                    "route old.test / Prefix -> default_web_80",
                    "backend default_web_80 balance leastconn servers 10.0.0.1:8080",
                    "diagnostic Ingress default/new: spec.rules[0].http.paths[0].backend: backend default/web:80: 'balance-algorithm' is 'source' here and 'leastconn' on Ingress default/old, which is older; this value is not used",
                ],
            ),
            Case::new(
                "haproxy-ingress keys.md, Scope: a backend key conflicts only where Ingresses set it to different values: one that an older Ingress leaves unset comes from the newer one that sets it",
                "
                kind: Ingress
                metadata:
                  name: new
                  creationTimestamp: '2024-06-01T00:00:00Z'
                  annotations: {portcullis.dev/balance-algorithm: source}
                spec:
                  rules:
                  - host: new.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: old
                  creationTimestamp: '2024-01-01T00:00:00Z'
                spec:
                  rules:
                  - host: old.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route new.test / Prefix -> default_web_80",
                    "route old.test / Prefix -> default_web_80",
                    "backend default_web_80 balance source servers 10.0.0.1:8080",
                ],
            ),
            Case::new(
                "each backend key from the oldest Ingress that sets it: the Ingress that sets every key so merged gives the backend, whatever its age",
                "
                kind: Ingress
                metadata:
                  name: newest
                  creationTimestamp: '2024-09-01T00:00:00Z'
                  annotations: {portcullis.dev/balance-algorithm: leastconn, portcullis.dev/backend-protocol: h2}
                spec:
                  rules:
                  - host: newest.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: middle
                  creationTimestamp: '2024-06-01T00:00:00Z'
                spec:
                  defaultBackend: {service: {name: web, port: {number: 80}}}
                ---
                kind: Ingress
                metadata:
                  name: oldest
                  creationTimestamp: '2024-01-01T00:00:00Z'
                  annotations: {portcullis.dev/balance-algorithm: leastconn}
                spec:
                  rules:
                  - host: oldest.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route newest.test / Prefix -> default_web_80",
                    "route oldest.test / Prefix -> default_web_80",
                    "default -> default_web_80",
                    "backend default_web_80 balance leastconn h2 servers 10.0.0.1:8080",
                ],
            ),
            Case::new(
                "keys set apart: the oldest Ingress that sets any gives the backend (a newer one's keys never replace an older one's), even where the oldest of all sets none",
                "
                kind: Ingress
                metadata:
                  name: c-newest
                  creationTimestamp: '2024-09-01T00:00:00Z'
                  annotations: {portcullis.dev/backend-protocol: h2, portcullis.dev/timeout-server: 7s}
                spec:
                  rules:
                  - host: c.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: b-middle
                  creationTimestamp: '2024-06-01T00:00:00Z'
                  annotations: {portcullis.dev/balance-algorithm: leastconn}
                spec:
                  rules:
                  - host: b.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: a-oldest
                  creationTimestamp: '2024-01-01T00:00:00Z'
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route b.test / Prefix -> default_web_80",
                    "route c.test / Prefix -> default_web_80",
                    "backend default_web_80 balance leastconn servers 10.0.0.1:8080",
                    "diagnostic Ingress default/c-newest: spec.rules[0].http.paths[0].backend: backend default/web:80: its keys backend-protocol, timeout-server are not applied: the objects that use the backend set its keys apart, and no one of them sets them all, so those of Ingress default/b-middle apply; set them together on one object or on the Service",
                ],
            ),
            Case::new(
                "keys that Ingresses set apart, which no one of them sets all of, are not combined: the oldest's apply, and the others' left-out keys are reported",
                "
                kind: Ingress
                metadata:
                  name: new
                  creationTimestamp: '2024-06-01T00:00:00Z'
                  annotations: {portcullis.dev/backend-protocol: h2}
                spec:
                  rules:
                  - host: new.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: old
                  creationTimestamp: '2024-01-01T00:00:00Z'
                  annotations: {portcullis.dev/balance-algorithm: leastconn}
                spec:
                  rules:
                  - host: old.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route new.test / Prefix -> default_web_80",
                    "route old.test / Prefix -> default_web_80",
                    "backend default_web_80 balance leastconn servers 10.0.0.1:8080",
                    "diagnostic Ingress default/new: spec.rules[0].http.paths[0].backend: backend default/web:80: its keys backend-protocol are not applied: the objects that use the backend set its keys apart, and no one of them sets them all, so those of Ingress default/old apply; set them together on one object or on the Service",
                ],
            ),
            Case::new(
                "routing.md: only 'different settings' conflict: one backend used alike by two Ingresses is not reported",
                "
                kind: Ingress
                metadata: {name: a, annotations: {portcullis.dev/balance-algorithm: leastconn}}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b, annotations: {portcullis.dev/balance-algorithm: leastconn}}
                spec:
                  defaultBackend: {service: {name: web, port: {number: 80}}}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "default -> default_web_80",
                    "backend default_web_80 balance leastconn servers 10.0.0.1:8080",
                ],
            ),
        ],
    );
}

#[test]
fn a_backend_key_s_problem_is_said_on_the_object_that_sets_it() {
    check(
        Show::BACKENDS,
        &[Case::new(
            "configuration.md secure-crt-secret: a Secret of another namespace is reported, on the Ingress whose annotation names it (its owner's `kubectl describe` shows it)",
            "
            kind: Ingress
            metadata:
              name: tls-to-backend
              annotations:
                haproxy-ingress.github.io/secure-backends: 'true'
                haproxy-ingress.github.io/secure-crt-secret: other/client
            spec:
              rules:
              - host: a.test
                http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
            ",
            &[
                "backend default_web_80 servers (none)",
                "diagnostic Ingress default/tls-to-backend: metadata.annotations[haproxy-ingress.github.io/secure-crt-secret]: secret other/client is not in the backend's namespace default; the backend gets no servers until it can present it",
                "route a.test / Prefix -> default_web_80",
            ],
        )],
    );
}
