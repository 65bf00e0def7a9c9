//! routing.md "Merging and conflicts" and rule 3: the oldest wins, the others are reported.

use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn ingresses_sharing_a_host() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "routing.md: 'Ingresses sharing a host are merged'",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route a.test /api Prefix -> default_api_80",
                ],
            ),
            Case::new(
                "routing.md: 'When two declare the same host, path and type ... the oldest wins and the other is reported on the losing object' (creation time first)",
                "
                kind: Ingress
                metadata: {name: a-new, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b-old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_api_80",
                    "diagnostic Ingress default/a-new: spec.rules[0].http.paths[0]: host a.test path '/' is already routed by Ingress default/b-old, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "routing.md: an object without a creation time (written by hand) counts as newer than every object with one: it never outranks a claim known to be old",
                "
                kind: Ingress
                metadata: {name: a-undated}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b-dated, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_api_80",
                    "diagnostic Ingress default/a-undated: spec.rules[0].http.paths[0]: host a.test path '/' is already routed by Ingress default/b-dated, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "routing.md: a path one Ingress routes twice (Prefix /img and /img/ are one path) is served by its first and the second reported, as between two Ingresses",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /img, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}, {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}, {path: /img/, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}, {path: /img, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                  - host: a.test
                    http: {paths: [{path: /api, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}, {path: /api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test /api Exact -> default_web_80",
                    "route a.test /api Prefix -> default_api_80",
                    "route a.test /img Prefix -> default_web_80",
                    "diagnostic Ingress default/a: spec.rules[0].http.paths[2]: host a.test path '/img/' is already routed by spec.rules[0].http.paths[0] of this Ingress; this path is ignored",
                    "diagnostic Ingress default/a: spec.rules[0].http.paths[3]: host a.test path '/img' is already routed by spec.rules[0].http.paths[0] of this Ingress; this path is ignored",
                    "diagnostic Ingress default/a: spec.rules[1].http.paths[1]: host a.test path '/api' is already routed by spec.rules[0].http.paths[1] of this Ingress; this path is ignored",
                ],
            ),
            Case::new(
                "configuration.md app-root: a host the Ingress routes no path / of has nothing to redirect, and says so; another host's / is redirected",
                "
                kind: Ingress
                metadata: {name: a, annotations: {portcullis.dev/app-root: /app}}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /app, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                  - host: b.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test /app Prefix -> default_web_80",
                    "route b.test / Prefix #1 if path ~ ^/$ -> redirect 302 path /app",
                    "route b.test / Prefix #2 -> default_web_80",
                    "diagnostic Ingress default/a: metadata.annotations[portcullis.dev/app-root]: the Ingress routes no path / of host a.test to redirect (app-root redirects the / of the paths of the Ingress that sets it); nothing is redirected there",
                ],
            ),
            Case::new(
                "configuration.md app-root: set in the global ConfigMap, it is said of no Ingress that routes no path /",
                "
                kind: ConfigMap
                metadata: {name: portcullis, namespace: default}
                data: {app-root: /app}
                ---
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &["route a.test /api Prefix -> default_web_80"],
            )
            .with(crate::support::with_global_configmap),
            Case::new(
                "routing.md: the oldest Ingress owns a host and path whatever conditions a younger one's rule carries: a younger app-root does not take the root page over",
                "
                kind: Ingress
                metadata: {name: a-new, creationTimestamp: '2024-06-01T00:00:00Z', annotations: {portcullis.dev/app-root: /login}}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b-old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_api_80",
                    "diagnostic Ingress default/a-new: spec.rules[0].http.paths[0]: host a.test path '/' is already routed by Ingress default/b-old, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "routing.md: 'Ingresses are taken oldest first (creation time, then namespace and name)': same time, the first name wins",
                "
                kind: Ingress
                metadata: {name: b, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: a, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_api_80",
                    "diagnostic Ingress default/b: spec.rules[0].http.paths[0]: host a.test path '/' is already routed by Ingress default/a, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "routing.md: 'Ingresses are taken oldest first (creation time, then namespace and name)': same time, the first namespace wins before the name",
                "
                kind: Service
                metadata: {name: web, namespace: one}
                spec: {ports: [{port: 80}]}
                ---
                kind: Service
                metadata: {name: web, namespace: two}
                spec: {ports: [{port: 80}]}
                ---
                kind: Ingress
                metadata: {name: a, namespace: two, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: z, namespace: one, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> one_web_80",
                    "diagnostic Ingress two/a: spec.rules[0].http.paths[0]: host a.test path '/' is already routed by Ingress one/z, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "routing.md: the conflict is on host, path and type together: the same path on another host is no conflict",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b}
                spec:
                  rules:
                  - host: b.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route b.test / Prefix -> default_api_80",
                ],
            ),
        ],
    );
}

#[test]
fn default_backend() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "routing.md 3: 'No match: the default backend (spec.defaultBackend ...)'",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  defaultBackend: {service: {name: web, port: {number: 80}}}
                ",
                &["default -> default_web_80"],
            ),
            Case::new(
                "routing.md 3: 'else 404': without a defaultBackend there is none",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &["route a.test / Prefix -> default_web_80"],
            ),
            Case::new(
                "routing.md 3: '(spec.defaultBackend of the oldest Ingress that has one)'; 'When two declare ... a default backend, the oldest wins and the other is reported'",
                "
                kind: Ingress
                metadata: {name: a-new, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  defaultBackend: {service: {name: web, port: {number: 80}}}
                ---
                kind: Ingress
                metadata: {name: b-old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  defaultBackend: {service: {name: api, port: {number: 80}}}
                ---
                kind: Ingress
                metadata: {name: c-oldest, creationTimestamp: '2023-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: c.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route c.test / Prefix -> default_web_80",
                    "default -> default_api_80",
                    "diagnostic Ingress default/a-new: spec.defaultBackend: the default backend is already set by Ingress default/b-old, which is older; this one is ignored",
                ],
            ),
        ],
    );
}

#[test]
fn root_paths_of_every_type_are_one_path() {
    check(
        Show::ROUTES,
        &[Case::new(
            "routing.md: 'ImplementationSpecific `/` is the same path as Prefix `/`': the oldest wins it and the other is reported",
            "
            kind: Ingress
            metadata: {name: prefix-new, creationTimestamp: '2024-06-01T00:00:00Z'}
            spec:
              rules:
              - host: a.test
                http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
            ---
            kind: Ingress
            metadata: {name: begin-old, creationTimestamp: '2024-01-01T00:00:00Z'}
            spec:
              rules:
              - host: a.test
                http: {paths: [{path: /, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}]}
            ",
            &[
                "route a.test / Prefix -> default_api_80",
                "diagnostic Ingress default/prefix-new: spec.rules[0].http.paths[0]: host a.test path '/' is already routed by Ingress default/begin-old, which is older; this path is ignored",
            ],
        )],
    );
}

#[test]
fn a_canary_by_header_shares_the_path_of_an_older_ingress_of_its_namespace() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "configuration.md http-header-match: the younger Ingress of the namespace takes the requests its headers match, the older one the rest",
                "
                kind: Ingress
                metadata: {name: main, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: canary
                  creationTimestamp: '2024-06-01T00:00:00Z'
                  annotations:
                    haproxy-ingress.github.io/http-header-match: |
                      X-Canary: always
                      X-Env staging
                    haproxy-ingress.github.io/http-header-match-regex: 'X-User: ^(ann|bob)$'
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test / Prefix #1 if header x-canary = always, header x-env = staging, header x-user ~ ^(ann|bob)$ -> default_api_80",
                    "route a.test / Prefix #2 -> default_web_80",
                ],
            ),
            Case::new(
                "configuration.md http-header-match: an Ingress of another namespace cannot take a path's requests by matching headers",
                "
                kind: Ingress
                metadata: {name: main, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata:
                  name: intruder
                  namespace: other
                  creationTimestamp: '2024-06-01T00:00:00Z'
                  annotations: {haproxy-ingress.github.io/http-header-match: 'X-Canary: always'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: theirs, port: {number: 80}}}}]}
                ---
                kind: Service
                metadata: {name: theirs, namespace: other}
                spec: {ports: [{port: 80}]}
                ---
                kind: EndpointSlice
                metadata: {name: theirs-1, namespace: other, labels: {kubernetes.io/service-name: theirs}}
                addressType: IPv4
                ports: [{port: 8080}]
                endpoints: [{addresses: [10.0.0.3]}]
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "diagnostic Ingress other/intruder: spec.rules[0].http.paths[0]: host a.test path '/' is already routed by Ingress default/main, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "configuration.md http-header-match: a value that cannot be read is reported, and its paths are left out (served without the match, they would take what it keeps away)",
                "
                kind: Ingress
                metadata:
                  name: bad
                  annotations:
                    haproxy-ingress.github.io/http-header-match: 'X-Canary'
                    haproxy-ingress.github.io/http-header-match-regex: 'X-User: (unclosed'
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "diagnostic Ingress default/bad: metadata.annotations[haproxy-ingress.github.io/http-header-match-regex]: invalid value: line 1: '(unclosed' is not a valid PCRE2 regular expression: PCRE2: error compiling pattern at offset 9: missing closing parenthesis; the paths it applies to are left out until it is fixed (served without the match, they would take requests it keeps away)",
                    "diagnostic Ingress default/bad: metadata.annotations[haproxy-ingress.github.io/http-header-match]: invalid value: line 1: 'X-Canary' has no value; the paths it applies to are left out until it is fixed (served without the match, they would take requests it keeps away)",
                ],
            ),
        ],
    );
}
