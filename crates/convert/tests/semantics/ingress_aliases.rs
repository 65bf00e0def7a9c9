//! routing.md "Host aliases": `server-alias` routes another name as the Ingress's host.

use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn server_alias() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "routing.md Host aliases: 'server-alias ... routed as the host's, with its paths, certificate and HTTPS redirect'",
                "
        kind: Secret
        metadata: {name: a-tls}
        type: kubernetes.io/tls
        ---
        kind: Ingress
        metadata:
          name: a
          annotations: {haproxy-ingress.github.io/server-alias: 'www.a.test'}
        spec:
          tls: [{hosts: [a.test], secretName: a-tls}]
          rules:
          - host: a.test
            http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}, {path: /api, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}]}
        ",
                &[
                    "route a.test / Prefix (https redirect 302) -> default_web_80",
                    "route a.test /api Exact (https redirect 302) -> default_api_80",
                    "route www.a.test / Prefix (https redirect 302) -> default_web_80",
                    "route www.a.test /api Exact (https redirect 302) -> default_api_80",
                    "tls a.test default/a-tls",
                    "tls www.a.test default/a-tls",
                ],
            ),
            Case::new(
                "routing.md Host aliases: 'A wildcard alias covers one label'",
                "
        kind: Ingress
        metadata:
          name: a
          annotations: {haproxy-ingress.github.io/server-alias: '*.a.test'}
        spec:
          rules:
          - host: a.test
            http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}, {path: /api, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}]}
        ",
                &[
                    "route *.a.test / Prefix -> default_web_80",
                    "route *.a.test /api Exact -> default_api_80",
                    "route a.test / Prefix -> default_web_80",
                    "route a.test /api Exact -> default_api_80",
                ],
            ),
            Case::new(
                "routing.md Host aliases: 'only an Ingress with one host may have one; otherwise it is reported and ignored'",
                "
        kind: Ingress
        metadata:
          name: a
          annotations: {haproxy-ingress.github.io/server-alias: 'c.test'}
        spec:
          rules:
          - host: a.test
            http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}, {path: /api, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}]}
          - host: b.test
            http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}, {path: /api, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}]}
        ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route a.test /api Exact -> default_api_80",
                    "route b.test / Prefix -> default_web_80",
                    "route b.test /api Exact -> default_api_80",
                    "diagnostic Ingress default/a: metadata.annotations[haproxy-ingress.github.io/server-alias]: server-alias needs an Ingress with exactly one host, this one has 2; the key is ignored",
                ],
            ),
            Case::new(
                "routing.md Host aliases: 'an older Ingress that routes the alias's name and path keeps it, and the conflict is reported'",
                "
        kind: Ingress
        metadata: {name: old, creationTimestamp: '2024-01-01T00:00:00Z'}
        spec:
          rules:
          - host: www.a.test
            http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
        ---
        kind: Ingress
        metadata:
          name: new
          creationTimestamp: '2024-06-01T00:00:00Z'
          annotations: {haproxy-ingress.github.io/server-alias: 'www.a.test'}
        spec:
          rules:
          - host: a.test
            http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}, {path: /api, pathType: Exact, backend: {service: {name: api, port: {number: 80}}}}]}
        ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route a.test /api Exact -> default_api_80",
                    "route www.a.test / Prefix -> default_api_80",
                    "route www.a.test /api Exact -> default_api_80",
                    "diagnostic Ingress default/new: spec.rules[0].http.paths[0]: host www.a.test path '/' is already routed by Ingress default/old, which is older; this path is ignored",
                ],
            ),
            Case::new(
                "routing.md Host aliases: 'server-alias-regex ... names matching the pattern are routed as the host's'; and 'redirect-from ... redirect to the Ingress's host'",
                "
        kind: Ingress
        metadata:
          name: a
          annotations:
            haproxy-ingress.github.io/server-alias-regex: '^(www|web)\\.a\\.test$'
            haproxy-ingress.github.io/redirect-from: 'old.a.test'
            haproxy-ingress.github.io/redirect-from-regex: '^legacy[0-9]+\\.a\\.test$'
        spec:
          rules:
          - host: a.test
            http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
        ",
                &[
                    "route a.test / Prefix -> default_web_80",
                    "route old.a.test / Prefix -> redirect 302 host a.test",
                    "route ~^(www|web)\\.a\\.test$ / Prefix -> default_web_80",
                    "route ~^legacy[0-9]+\\.a\\.test$ / Prefix -> redirect 302 host a.test",
                ],
            ),
        ],
    );
}
