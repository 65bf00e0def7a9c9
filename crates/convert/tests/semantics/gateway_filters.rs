//! gateway-api.md "Filters": what each filter of a rule becomes, and which are left out.

use crate::gateway_fixtures::EDGE;
use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn filters() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md Filters: 'RequestHeaderModifier and ResponseHeaderModifier (set, add, remove)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - filters:
                    - type: RequestHeaderModifier
                      requestHeaderModifier:
                        set: [{name: X-Set, value: one}]
                        add: [{name: X-Add, value: two}]
                        remove: [X-Remove]
                    - type: ResponseHeaderModifier
                      responseHeaderModifier:
                        set: [{name: X-Frame-Options, value: DENY}]
                        remove: [Server]
                    backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] -> request set X-Set: one; request add X-Add: two; request remove X-Remove; response set X-Frame-Options: DENY; response remove Server; default_web_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Filters: 'RequestRedirect (scheme, hostname, port, path ReplaceFullPath ..., 301, 302, 303, 307 or 308 ...)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: Exact, value: /old}}]
                    filters:
                    - type: RequestRedirect
                      requestRedirect:
                        scheme: https
                        hostname: b.test
                        port: 8443
                        path: {type: ReplaceFullPath, replaceFullPath: /new}
                        statusCode: 301
                ",
                &["route a.test /old Exact [http] -> redirect 301 scheme https host b.test port 8443 path /new"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Filters: 'RequestRedirect (... path ... ReplacePrefixMatch ...; without a path the path and query are kept)'; statusCode defaults to 302",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /docs/}}]
                    filters:
                    - {type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /manual}}}
                  - matches: [{path: {type: PathPrefix, value: /plain}}]
                    filters:
                    - {type: RequestRedirect, requestRedirect: {scheme: https}}
                ",
                &[
                    "route a.test /docs Prefix [http] -> redirect 302 prefix /docs => /manual",
                    "route a.test /plain Prefix [http] -> redirect 302 scheme https",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Filters: 'RequestRedirect (... 301, 302, 303, 307 or 308 ...)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {value: /see-other}}]
                    filters: [{type: RequestRedirect, requestRedirect: {statusCode: 303}}]
                  - matches: [{path: {value: /temporary}}]
                    filters: [{type: RequestRedirect, requestRedirect: {statusCode: 307}}]
                  - matches: [{path: {value: /permanent}}]
                    filters: [{type: RequestRedirect, requestRedirect: {statusCode: 308}}]
                ",
                &[
                    "route a.test /permanent Prefix [http] -> redirect 308",
                    "route a.test /see-other Prefix [http] -> redirect 303",
                    "route a.test /temporary Prefix [http] -> redirect 307",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Filters: 'URLRewrite (hostname, path)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /v1}}]
                    filters:
                    - type: URLRewrite
                      urlRewrite: {hostname: internal.test, path: {type: ReplacePrefixMatch, replacePrefixMatch: /api/v1}}
                    backendRefs: [{name: api, port: 80}]
                  - matches: [{path: {type: Exact, value: /status}}]
                    filters:
                    - {type: URLRewrite, urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /healthz}}}
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route a.test /status Exact [http] -> rewrite path /healthz; default_api_80",
                    "route a.test /v1 Prefix [http] -> rewrite host internal.test; rewrite prefix /v1 => /api/v1; default_api_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Not served yet: 'RequestMirror (its rule served without the copy) and ExtensionRef (answered with 500, as an invalid filter is) filters', reported",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /mirrored}}]
                    filters:
                    - {type: RequestMirror, requestMirror: {backendRef: {name: api, port: 80}}}
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{path: {type: PathPrefix, value: /extended}}]
                    filters:
                    - {type: ExtensionRef, extensionRef: {group: example.com, kind: Thing, name: x}}
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{path: {type: PathPrefix, value: /cors}}]
                    filters: [{type: CORS, cors: {allowOrigins: ['https://a.test', 'a b']}}]
                    backendRefs: [{name: web, port: 80}]
                  - backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] -> default_web_80",
                    "route a.test /cors Prefix [http] -> 500",
                    "route a.test /extended Prefix [http] -> 500",
                    "route a.test /mirrored Prefix [http] -> default_web_80",
                    "diagnostic HTTPRoute default/r: spec.rules[0].filters[0]: filter type RequestMirror is not supported; the requests this rule takes are served without their copy",
                    "diagnostic HTTPRoute default/r: spec.rules[1].filters[0]: filter type ExtensionRef is not supported; the requests this match takes are answered with 500",
                    "diagnostic HTTPRoute default/r: spec.rules[2].filters[0]: allowOrigins: 'a b' is not an origin such as https://app.example or https://app.example:8443; the requests this match takes are answered with 500",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Filters: 'CORS (allowOrigins, with `*` wildcards in hosts; allowMethods, allowHeaders, exposeHeaders, allowCredentials, maxAge ...)'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - filters:
                    - type: CORS
                      cors:
                        allowOrigins: ['https://app.test', 'https://*.trusted.test']
                        allowMethods: [GET, PUT]
                        allowHeaders: [Content-Type]
                        exposeHeaders: [X-Total]
                        allowCredentials: true
                        maxAge: 60
                    backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] -> cors https://app.test ^https://.*\\.trusted\\.test$ methods GET,PUT headers Content-Type expose X-Total credentials true max-age 60; default_web_80",
                ],
            )
            .given(EDGE),
        ],
    );
}
