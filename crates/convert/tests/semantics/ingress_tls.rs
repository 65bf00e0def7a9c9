//! routing.md "TLS": certificates by SNI, conflicts, missing Secrets, the HTTPS redirect.

use crate::summary::Show;
use crate::support::{Case, check, with_global_configmap};

#[test]
fn certificates() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "a tls.key as `openssl ecparam -genkey` writes it (the curve's EC PARAMETERS block, then the key) is served, as HAProxy loads it",
                "
                kind: Secret
                metadata: {name: ecp}
                type: kubernetes.io/tls
                stringData:
                  tls.crt: |
                    -----BEGIN CERTIFICATE-----
                    MIIBhTCCASugAwIBAgIUFvmwdwg3RObptDwr+29DFEVFnp0wCgYIKoZIzj0EAwIw
                    GDEWMBQGA1UEAwwNZWNwLmV2aWwudGVzdDAeFw0yNjEyMDcxOTMwMTVaFw0yNzAx
                    MDYxOTMwMTVaMBgxFjAUBgNVBAMMDWVjcC5ldmlsLnRlc3QwWTATBgcqhkjOPQIB
                    BggqhkjOPQMBBwNCAAR4DDQjOw5rnVlOsvqxc4JUT9BC6K/570SrD+lJpRnudBaV
                    oRkqSHPa7RT3sshQwhSv43lBz5B4gWzt+J6Jp2WUo1MwUTAdBgNVHQ4EFgQUBIpP
                    qITjecCP4bRhrOkc5RLFZBQwHwYDVR0jBBgwFoAUBIpPqITjecCP4bRhrOkc5RLF
                    ZBQwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEAlNR66s9jw9Lg
                    JJsJbB4va8tPlXeUEuCo/u8DItctd8ACIDrFCbUhh6Zwxoezv5RPnY9vKHVXy2re
                    dcx7+jfKz4re
                    -----END CERTIFICATE-----
                  tls.key: |
                    -----BEGIN EC PARAMETERS-----
                    BggqhkjOPQMBBw==
                    -----END EC PARAMETERS-----
                    -----BEGIN EC PRIVATE KEY-----
                    MHcCAQEEIPOzkcEiB1OlG17NytBDrh37R+qJZ+pD9Tv1JWoylxv7oAoGCCqGSM49
                    AwEHoUQDQgAEeAw0IzsOa51ZTrL6sXOCVE/QQuiv+e9Eqw/pSaUZ7nQWlaEZKkhz
                    2u0U97LIUMIUr+N5Qc+QeIFs7fieiadllA==
                    -----END EC PRIVATE KEY-----
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: [a.test], secretName: ecp}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &["route a.test / Prefix (https redirect 302) -> default_web_80", "tls a.test default/ecp"],
            ),
            Case::new(
                "routing.md TLS: 'spec.tls hosts get their Secret's certificate by SNI'; 'Plain-HTTP requests to a host with TLS are redirected ... (302 unless ...)'",
                "
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                  - host: b.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "tls a.test default/a-tls",
                    "route b.test / Prefix -> default_web_80",
                ],
            ),
            Case::new(
                "configuration.md: a host's TLS handshake keys on an Ingress that lists no host under spec.tls are reported, having no effect; a host key on a Service is reported and ignored",
                "
                kind: Service
                metadata:
                  name: web
                  annotations: {haproxy-ingress.github.io/app-root: /app}
                spec: {ports: [{port: 80}]}
                ---
                kind: Ingress
                metadata:
                  name: a
                  annotations: {haproxy-ingress.github.io/tls-alpn: http/1.1}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "diagnostic Ingress default/a: metadata.annotations: ssl-ciphers, ssl-cipher-suites, tls-alpn and ssl-options-host are taken from the Ingress that lists the host under spec.tls, and this one lists none; they have no effect here",
                    "diagnostic Service default/web: metadata.annotations[haproxy-ingress.github.io/app-root]: 'app-root' is a host key: set it on the Ingress of the host (a Service's annotations set backend and path keys); it is ignored here",
                ],
            ),
            Case::new(
                "routing.md TLS: 'a wildcard TLS host covers one label': b.a.test has TLS (and is redirected), c.b.a.test has not",
                "
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: ['*.a.test'], secretName: a-tls}]
                  rules:
                  - host: b.a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                  - host: c.b.a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "tls *.a.test default/a-tls",
                    "route b.a.test / Prefix (https redirect 302) -> default_web_80",
                    "route c.b.a.test / Prefix -> default_web_80",
                ],
            ),
            Case::new(
                "routing.md TLS: 'A missing ... Secret is reported and its hosts get the default certificate' (the host still has TLS)",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: [a.test], secretName: missing}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "diagnostic Ingress default/a: spec.tls: secret default/missing not found; the default certificate is served for its hosts",
                ],
            ),
            Case::new(
                "routing.md TLS: 'A ... malformed Secret is reported and its hosts get the default certificate'",
                "
                kind: Secret
                metadata: {name: bad}
                type: kubernetes.io/tls
                stringData: {tls.crt: not a certificate, tls.key: not a key}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: [a.test], secretName: bad}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "diagnostic Ingress default/a: spec.tls: secret default/bad: tls.crt must hold only CERTIFICATE blocks; the default certificate is served for its hosts",
                ],
            ),
            Case::new(
                "routing.md: 'When two declare ... the same TLS host with different secrets ... the oldest wins and the other is reported on the losing object'",
                "
                kind: Secret
                metadata: {name: old-tls}
                type: kubernetes.io/tls
                ---
                kind: Secret
                metadata: {name: new-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: new, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  tls: [{hosts: [a.test], secretName: new-tls}]
                ---
                kind: Ingress
                metadata: {name: old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  tls: [{hosts: [a.test], secretName: old-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "tls a.test default/old-tls",
                    "diagnostic Ingress default/new: spec.tls[0].hosts[0]: TLS for host a.test is already configured by Ingress default/old, which is older; this entry is ignored",
                ],
            ),
            Case::new(
                "routing.md: only 'the same TLS host with different secrets' conflicts: two Ingresses naming the same Secret are not reported",
                "
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: new, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "route a.test /api Prefix (https redirect 302) -> default_api_80",
                    "tls a.test default/a-tls",
                ],
            ),
            Case::new(
                "security.md: no object may 'change another tenant's routing or certificate': an Ingress's TLS for a host another namespace routes is ignored, older or newer, and reported",
                "
                kind: Secret
                metadata: {name: evil-tls, namespace: evil}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: older, namespace: evil, creationTimestamp: '2020-01-01T00:00:00Z'}
                spec:
                  tls: [{hosts: [a.test], secretName: evil-tls}]
                  rules: [{host: evil.test}]
                ---
                kind: Ingress
                metadata: {name: newer, namespace: evil, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  tls: [{hosts: [a.test], secretName: evil-tls}]
                ---
                kind: Ingress
                metadata: {name: site, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "diagnostic Ingress evil/newer: spec.tls[0].hosts[0]: TLS for host a.test is ignored: the host is routed by Ingress default/site, of another namespace",
                    "diagnostic Ingress evil/older: spec.tls[0].hosts[0]: TLS for host a.test is ignored: the host is routed by Ingress default/site, of another namespace",
                ],
            ),
            Case::new(
                "security.md: no object may 'change another tenant's routing': a wildcard TLS host redirects the routes of its own namespace to HTTPS, not another's",
                "
                kind: Secret
                metadata: {name: evil-tls, namespace: evil}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: wildcard, namespace: evil, creationTimestamp: '2020-01-01T00:00:00Z'}
                spec:
                  tls: [{hosts: ['*.a.test'], secretName: evil-tls}]
                  defaultBackend: {service: {name: web, port: {number: 80}}}
                ---
                kind: Ingress
                metadata: {name: site, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: good.a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route good.a.test / Prefix -> default_web_80",
                    "tls *.a.test evil/evil-tls",
                    "diagnostic Ingress evil/wildcard: spec.defaultBackend: service evil/web not found; the path is skipped",
                ],
            ),
            Case::new(
                "routing.md TLS: 'spec.tls hosts get their Secret's certificate by SNI': from an Ingress of the namespace that routes the host, whichever Ingress routes it",
                "
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: certificates, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                ---
                kind: Ingress
                metadata: {name: site, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "tls a.test default/a-tls",
                ],
            ),
        ],
    );
}

#[test]
fn redirect_to_https() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "routing.md TLS: '(302 unless ssl-redirect-code, a global key, says otherwise ...)'",
                r#"
                kind: ConfigMap
                metadata: {name: portcullis}
                data: {ssl-redirect-code: "301"}
                ---
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                "#,
                &[
                    "route a.test / Prefix (https redirect 301) -> default_web_80",
                    "tls a.test default/a-tls",
                ],
            )
            .with(with_global_configmap),
            Case::new(
                "routing.md TLS: 'ssl-redirect: \"false\" turns it off'",
                r#"
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: a, annotations: {portcullis.dev/ssl-redirect: "false"}}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                "#,
                &[
                    "route a.test / Prefix -> default_web_80",
                    "tls a.test default/a-tls",
                ],
            ),
            Case::new(
                "routing.md: 'Ingresses sharing a host are merged': a host's TLS, declared by one Ingress, redirects the paths another Ingress declares",
                "
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: certificates}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                ---
                kind: Ingress
                metadata: {name: paths}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "tls a.test default/a-tls",
                ],
            ),
            Case::new(
                "README keys: ssl-redirect has path scope: an Ingress turning it off keeps its own paths plain, another Ingress's paths on the same TLS host are still redirected",
                r#"
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b, annotations: {portcullis.dev/ssl-redirect: "false"}}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                "#,
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "route a.test /api Prefix -> default_api_80",
                    "tls a.test default/a-tls",
                ],
            ),
            Case::new(
                "configuration.md ssl-redirect-code: a global key, as in haproxy-ingress: set on an Ingress, under any prefix, it is reported and the ConfigMap's value applies",
                r#"
                kind: ConfigMap
                metadata: {name: portcullis}
                data: {ssl-redirect-code: "302"}
                ---
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  tls: [{hosts: [a.test, b.test, c.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b, annotations: {haproxy-ingress.github.io/ssl-redirect-code: "307"}}
                spec:
                  rules:
                  - host: b.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: c
                  annotations: {haproxy-ingress.github.io/ssl-redirect-code: "307", portcullis.dev/ssl-redirect-code: "303"}
                spec:
                  rules:
                  - host: c.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                "#,
                &[
                    "diagnostic Ingress default/b: metadata.annotations[haproxy-ingress.github.io/ssl-redirect-code]: 'ssl-redirect-code' is a global key: set it in the global ConfigMap",
                    "diagnostic Ingress default/c: metadata.annotations[haproxy-ingress.github.io/ssl-redirect-code]: 'ssl-redirect-code' is a global key: set it in the global ConfigMap",
                    "diagnostic Ingress default/c: metadata.annotations[portcullis.dev/ssl-redirect-code]: 'ssl-redirect-code' is a global key: set it in the global ConfigMap",
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "route b.test / Prefix (https redirect 302) -> default_web_80",
                    "route c.test / Prefix (https redirect 302) -> default_web_80",
                    "tls a.test default/a-tls",
                    "tls b.test default/a-tls",
                    "tls c.test default/a-tls",
                ],
            )
            .with(with_global_configmap),
            Case::new(
                "README keys: 'An invalid value is reported (object, key, value, reason) and the default is used'",
                r#"
                kind: Secret
                metadata: {name: a-tls}
                type: kubernetes.io/tls
                ---
                kind: Ingress
                metadata: {name: a, annotations: {portcullis.dev/ssl-redirect: "perhaps"}}
                spec:
                  tls: [{hosts: [a.test], secretName: a-tls}]
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                "#,
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "tls a.test default/a-tls",
                    "diagnostic Ingress default/a: metadata.annotations[portcullis.dev/ssl-redirect]: invalid value: 'perhaps' is not true or false; the global value is used",
                ],
            ),
        ],
    );
}
