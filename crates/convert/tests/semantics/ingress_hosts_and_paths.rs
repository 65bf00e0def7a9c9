//! docs/routing.md, rules 1 and 2: which host entry and which path a rule becomes.

use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn host_entries() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "routing.md 1: 'an exact host with rules' is a host entry of its own",
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
                "routing.md 1: '*.foo.com matches bar.foo.com, not foo.com and not a.bar.foo.com': an Ingress wildcard is a one-label entry",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: '*.a.test'
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &["route *.a.test / Prefix -> default_web_80"],
            ),
            Case::new(
                "routing.md 1: 'else the rules without a host' are the catch-all entry",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &["route (any host) / Prefix -> default_web_80"],
            ),
            Case::new(
                "routing.md 1: 'Once a host entry is chosen, only its paths are considered': the catch-all's paths are not copied into an exact host",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test /api Prefix -> default_api_80",
                    "route (any host) / Prefix -> default_web_80",
                ],
            ),
            Case::new(
                "routing.md 1: an exact host and the wildcard that covers it keep their own paths",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: '*.a.test'
                    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                  - host: b.a.test
                    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route b.a.test /api Prefix -> default_api_80",
                    "route *.a.test / Prefix -> default_web_80",
                ],
            ),
        ],
    );
}

#[test]
fn path_types() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "routing.md 2: 'Exact: the whole path, case-sensitive (/foo does not match /foo/)': /foo and /foo/ are two routes",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http:
                      paths:
                      - {path: /foo, pathType: Exact, backend: {service: {name: web, port: {number: 80}}}}
                      - {path: /foo/, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}
                      - {path: /Foo, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}
                ",
                &[
                    "route a.test /Foo Exact -> default_api_80",
                    "route a.test /foo Exact -> default_web_80",
                    "route a.test /foo/ Exact -> default_api_80",
                ],
            ),
            Case::new(
                "routing.md 2: 'Prefix: ... a trailing slash in the rule is ignored'",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /foo/, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ",
                &["route a.test /foo Prefix -> default_web_80"],
            ),
            Case::new(
                "routing.md 2: 'Prefix: ... a trailing slash in the rule is ignored': /foo and /foo/ in two Ingresses are the same path, so they conflict",
                "
                kind: Ingress
                metadata: {name: a, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /foo, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /foo/, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test /foo Prefix -> default_web_80",
                    "diagnostic Ingress default/b: spec.rules[0].http.paths[0]: host a.test path '/foo/' is already routed by Ingress default/a, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "routing.md 2: 'Prefix: ... / matches everything'",
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
                "routing.md 2: 'ImplementationSpecific: \"begins with\", character-wise': the path is kept as written, trailing slash included",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http:
                      paths:
                      - {path: /img, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
                      - {path: /doc/, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}
                ",
                &[
                    "route a.test /doc/ ImplementationSpecific -> default_api_80",
                    "route a.test /img ImplementationSpecific -> default_web_80",
                ],
            ),
        ],
    );
}

#[test]
fn path_precedence() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "routing.md 2: 'The longest matching path wins': a longer and a shorter prefix are both served, the request decides",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
                ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route a.test /api Prefix -> default_api_80",
                ],
            ),
            Case::new(
                "routing.md 2: 'on the same path Exact beats Prefix': the two types on one path do not conflict, even across Ingresses",
                "
                kind: Ingress
                metadata: {name: a, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /foo, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
                ---
                kind: Ingress
                metadata: {name: b, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  rules:
                  - host: a.test
                    http: {paths: [{path: /foo, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}]}
                ",
                &[
                    "route a.test /foo Exact -> default_api_80",
                    "route a.test /foo Prefix -> default_web_80",
                ],
            ),
            Case::new(
                "routing.md 2: 'a Prefix rule beats an ImplementationSpecific one whose path is the same plus /': both are served",
                "
                kind: Ingress
                metadata: {name: a}
                spec:
                  rules:
                  - host: a.test
                    http:
                      paths:
                      - {path: /foo, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
                      - {path: /foo/, pathType: ImplementationSpecific, backend: {service: {name: api, port: {number: 80}}}}
                ",
                &[
                    "route a.test /foo Prefix -> default_web_80",
                    "route a.test /foo/ ImplementationSpecific -> default_api_80",
                ],
            ),
        ],
    );
}
