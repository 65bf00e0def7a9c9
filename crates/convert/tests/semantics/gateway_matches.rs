//! gateway-api.md matches and "Precedence": the order of the rules on one host and path.

use crate::gateway_fixtures::{EDGE, OUR_CLASS};
use crate::summary::Show;
use crate::support::{Case, check};

#[test]
fn matches() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md: 'matches on path (Exact, PathPrefix ...)'; a rule without matches is PathPrefix /",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: Exact, value: /exact}}, {path: {type: PathPrefix, value: /api/}}]
                    backendRefs: [{name: api, port: 80}]
                  - backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] -> default_web_80",
                    "route a.test /api Prefix [http] -> default_api_80",
                    "route a.test /exact Exact [http] -> default_api_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: 'matches on path (... RegularExpression) ... (patterns are PCRE ...)'; 'a RegularExpression path is tried where no longer path of the host matches ..., before the other rules on /'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs: [{name: web, port: 80}]
                  - matches: [{path: {type: RegularExpression, value: '^/v[0-9]+/'}}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] #1 if path ~ ^/v[0-9]+/ -> default_api_80",
                    "route a.test / Prefix [http] #2 -> default_web_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: 'headers and query parameters (Exact, RegularExpression ...) and method'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches:
                    - method: POST
                      headers: [{name: X-Env, value: canary}, {name: X-Version, type: RegularExpression, value: '^2\\.'}]
                      queryParams: [{name: debug, value: '1'}, {name: Lang, type: RegularExpression, value: '^(en|fr)$'}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] #1 if method POST, header x-env = canary, header x-version ~ ^2\\., query debug = 1, query Lang ~ ^(en|fr)$ -> default_api_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: '(patterns are PCRE, as HAProxy reads them)': a pattern PCRE refuses is reported and its match skipped",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: RegularExpression, value: '^/(unclosed'}}, {path: {type: PathPrefix, value: /ok}}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route a.test /ok Prefix [http] -> default_api_80",
                    "diagnostic HTTPRoute default/r: spec.rules[0].matches[0].path: '^/(unclosed' is not a valid PCRE2 regular expression: PCRE2: error compiling pattern at offset 11: missing closing parenthesis; the match is skipped",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md HTTPRouteNamedRouteRule: rule names are validated (a SectionName, unique in the route) and reported, the rules served all the same",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - name: first
                    matches: [{path: {type: PathPrefix, value: /a}}]
                    backendRefs: [{name: api, port: 80}]
                  - name: first
                    matches: [{path: {type: PathPrefix, value: /b}}]
                    backendRefs: [{name: api, port: 80}]
                  - name: Bad_Name!
                    matches: [{path: {type: PathPrefix, value: /c}}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &[
                    "route a.test /a Prefix [http] -> default_api_80",
                    "route a.test /b Prefix [http] -> default_api_80",
                    "route a.test /c Prefix [http] -> default_api_80",
                    "diagnostic HTTPRoute default/r: spec.rules[1].name: another rule of the route is named 'first' already",
                    "diagnostic HTTPRoute default/r: spec.rules[2].name: 'Bad_Name!' is not a valid rule name (lowercase letters, digits, '-' and '.', at most 253)",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: of header (or query) matches with equivalent names, only the first is considered, as the specification says",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches:
                    - headers: [{name: x-dup, value: one}, {name: X-Dup, value: two}]
                      queryParams: [{name: q, value: a}, {name: q, value: b}, {name: Q, value: c}]
                    backendRefs: [{name: api, port: 80}]
                ",
                &["route a.test / Prefix [http] #1 if header x-dup = one, query q = a, query Q = c -> default_api_80"],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md: an Exact or PathPrefix path takes every RFC 3986 path character the specification allows; a prefix replaced by a filter keeps to letters, digits and `/-_.~`",
                r#"
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: "/v1/users:batch@x;y=z,(a)*!$&'+"}}, {path: {type: Exact, value: "/%20"}}]
                    backendRefs: [{name: api, port: 80}]
                  - matches: [{path: {type: PathPrefix, value: "/a,b"}}, {path: {type: PathPrefix, value: /plain}}]
                    filters:
                    - type: URLRewrite
                      urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}}
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{path: {type: PathPrefix, value: "/a b"}}]
                    backendRefs: [{name: web, port: 80}]
                "#,
                &[
                    "route a.test /%20 Exact [http] -> default_api_80",
                    "route a.test /plain Prefix [http] -> rewrite prefix /plain => /new; default_web_80",
                    "route a.test /v1/users:batch@x;y=z,(a)*!$&'+ Prefix [http] -> default_api_80",
                    "diagnostic HTTPRoute default/r: spec.rules[1].filters[0]: ReplacePrefixMatch: the match's path '/a,b' must start with '/' and hold only letters, digits, '/', '-', '_', '.', '~'; the requests this match takes are answered with 500",
                    "route a.test /a,b Prefix [http] -> 500",
                    "diagnostic HTTPRoute default/r: spec.rules[2].matches[0].path: path '/a b' contains ' ', which must be percent-encoded; the match is skipped",
                ],
            )
            .given(EDGE),
        ],
    );
}

#[test]
fn precedence_on_one_path() {
    check(
        Show::ROUTES,
        &[
            Case::new(
                "gateway-api.md Precedence: 'on one path, a method match first, then more header matches, then more query matches, ... then rule order'",
                "
                kind: HTTPRoute
                metadata: {name: r}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - backendRefs: [{name: web, port: 80}]
                  - matches: [{queryParams: [{name: q, value: '1'}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{headers: [{name: h1, value: '1'}], queryParams: [{name: q, value: '1'}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{headers: [{name: h1, value: '1'}, {name: h2, value: '2'}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{method: GET}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{headers: [{name: h3, value: '3'}]}]
                    backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] #1 if method GET -> default_web_80",
                    "route a.test / Prefix [http] #2 if header h1 = 1, header h2 = 2 -> default_web_80",
                    "route a.test / Prefix [http] #3 if header h1 = 1, query q = 1 -> default_web_80",
                    "route a.test / Prefix [http] #4 if header h3 = 3 -> default_web_80",
                    "route a.test / Prefix [http] #5 if query q = 1 -> default_web_80",
                    "route a.test / Prefix [http] #6 -> default_web_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Precedence: '... then the older route (creation time, then namespace and name), then rule order'",
                "
                kind: HTTPRoute
                metadata: {name: a-new, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{headers: [{name: x, value: new}]}]
                    backendRefs: [{name: api, port: 80}]
                ---
                kind: HTTPRoute
                metadata: {name: b-old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{headers: [{name: x, value: old-one}]}]
                    backendRefs: [{name: web, port: 80}]
                  - matches: [{headers: [{name: x, value: old-two}]}]
                    backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] #1 if header x = old-one -> default_web_80",
                    "route a.test / Prefix [http] #2 if header x = old-two -> default_web_80",
                    "route a.test / Prefix [http] #3 if header x = new -> default_api_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Precedence: more conditions come before an older route's fewer",
                "
                kind: HTTPRoute
                metadata: {name: new, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{headers: [{name: x, value: '1'}]}]
                    backendRefs: [{name: api, port: 80}]
                ---
                kind: HTTPRoute
                metadata: {name: old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ",
                &[
                    "route a.test / Prefix [http] #1 if header x = 1 -> default_api_80",
                    "route a.test / Prefix [http] #2 -> default_web_80",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Precedence: 'The same match in two routes: the older wins and the newer is reported'",
                "
                kind: HTTPRoute
                metadata: {name: new, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x, value: '1'}]}]
                    backendRefs: [{name: api, port: 80}]
                  - matches: [{path: {type: PathPrefix, value: /}}]
                    backendRefs: [{name: api, port: 80}]
                ---
                kind: HTTPRoute
                metadata: {name: old, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [a.test]
                  rules:
                  - matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x, value: '1'}]}]
                    backendRefs: [{name: web, port: 80}]
                  - backendRefs: [{name: web, port: 80}]
                ",
                &[
                    "route a.test / Prefix [http] -> default_web_80",
                    "route a.test /api Prefix [http] #1 if header x = 1 -> default_web_80",
                    "diagnostic HTTPRoute default/new: spec.rules[0].matches[0]: host a.test path '/api' is already routed by HTTPRoute default/old, which is older; this path is ignored",
                    "diagnostic HTTPRoute default/new: spec.rules[1].matches[0]: host a.test path '/' is already routed by HTTPRoute default/old, which is older; this path is ignored",
                ],
            )
            .given(EDGE),
            Case::new(
                "gateway-api.md Precedence: 'Routes attached to different listeners that share a host and path each keep to their own listener's frontend'",
                "
                kind: Gateway
                metadata: {name: edge}
                spec:
                  gatewayClassName: portcullis
                  listeners:
                  - {name: http, protocol: HTTP, port: 80}
                  - {name: alt, protocol: HTTP, port: 8080}
                ---
                kind: HTTPRoute
                metadata: {name: a, creationTimestamp: '2024-01-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge, sectionName: http}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: web, port: 80}]}]
                ---
                kind: HTTPRoute
                metadata: {name: b, creationTimestamp: '2024-06-01T00:00:00Z'}
                spec:
                  parentRefs: [{name: edge, sectionName: alt}]
                  hostnames: [a.test]
                  rules: [{backendRefs: [{name: api, port: 80}]}]
                ",
                &[
                    "route a.test / Prefix [http,http:8080] #1 if via [http] -> default_web_80",
                    "route a.test / Prefix [http,http:8080] #2 if via [http:8080] -> default_api_80",
                ],
            )
            .given(OUR_CLASS),
        ],
    );
}
