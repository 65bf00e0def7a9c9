//! Matches, precedence, filters and weights.

use std::time::Duration;

use test_support::{EchoServer, backend, self_signed, tls_secret};

use crate::manifests::GATEWAY;
use crate::write;

const RULES: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}, headers: [{name: Version, value: two}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}, method: POST}]
    backendRefs: [{name: other, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}, queryParams: [{name: debug, value: "1"}]}]
    backendRefs: [{name: other, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: Exact, value: /exact}, headers: [{name: x-letters, type: RegularExpression, value: "^a+$"}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /env}, headers: [{name: env, value: canary}]}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: RegularExpression, value: "^/items/[0-9]+$"}}]
    backendRefs: [{name: other, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: newer, namespace: default, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /env}, headers: [{name: env, value: canary}]}]
    backendRefs: [{name: other, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: z-last, namespace: default, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /tie}, headers: [{name: tie, value: "1"}]}]
    backendRefs: [{name: other, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a-first, namespace: default, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [match.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /tie}, headers: [{name: tie, value: "1"}]}]
    backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: filters, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [filters.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: x-set, value: "one 100%"}]
        add: [{name: x-add, value: two}]
        remove: [x-remove]
    - type: ResponseHeaderModifier
      responseHeaderModifier:
        set: [{name: x-resp, value: "yes"}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /redirect}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {scheme: https, hostname: example.org, statusCode: 301}
  - matches: [{path: {type: PathPrefix, value: /moved}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}, port: 8080, statusCode: 308}
  - matches: [{path: {type: PathPrefix, value: /rewrite}}]
    filters:
    - type: URLRewrite
      urlRewrite: {hostname: rewritten.test, path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /full}}]
    filters:
    - type: URLRewrite
      urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /replaced}}
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /strip/}}]
    filters:
    - type: URLRewrite
      urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: ""}}
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /unprefix}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {hostname: elsewhere.test, path: {type: ReplacePrefixMatch, replacePrefixMatch: ""}, statusCode: 302}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: any-host, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /any-host-moved}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {port: 8080, statusCode: 302}
  - matches: [{path: {type: PathPrefix, value: "/odd:@;(x)*$&'"}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /any-host-extended}}]
    filters: [{type: ExtensionRef, extensionRef: {group: example.com, kind: Auth, name: x}}]
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /any-host-mirrored}}]
    filters: [{type: RequestMirror, requestMirror: {backendRef: {name: other, port: 80}}}]
    backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: split, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [split.test]
  rules:
  - backendRefs:
    - name: app
      port: 80
      weight: 3
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-backend, value: app}]}}]
    - name: api
      port: 80
      weight: 1
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-backend, value: api}]}}]
    - {name: other, port: 80, weight: 0}
    - {name: other, port: 80, weight: -5}
  - matches: [{path: {type: PathPrefix, value: /half-broken}}]
    backendRefs: [{name: app, port: 80}, {name: missing, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /broken}}]
    backendRefs: [{name: missing, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /per-backend}}]
    backendRefs:
    - name: app
      port: 80
      weight: 1
      filters: [{type: URLRewrite, urlRewrite: {hostname: chosen.test, path: {type: ReplacePrefixMatch, replacePrefixMatch: /app}}}]
    - name: api
      port: 80
      weight: 1
      filters: [{type: RequestRedirect, requestRedirect: {hostname: elsewhere.test, path: {type: ReplacePrefixMatch, replacePrefixMatch: /moved}, statusCode: 307}}]
"#;

/// Rules with timeouts, in front of a backend that takes its time.
const TIMEOUTS: &str = r#"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: timeouts, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [timeouts.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /hasty}}]
    timeouts: {request: 500ms}
    backendRefs: [{name: slow, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /patient}}]
    timeouts: {request: 10s, backendRequest: 5s}
    backendRefs: [{name: slow, port: 80}]
"#;

/// A server on 127.0.0.1 that answers `slow` after `delay`; returns its port.
fn slow_server(delay: Duration) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                std::thread::sleep(delay);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nslow",
                );
            });
        }
    });
    port
}

/// Method, target, headers, and the backend expected to answer.
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

fn request(
    port: u16,
    method: &str,
    host: &str,
    target: &str,
    headers: &[(&str, &str)],
) -> test_support::Response {
    let extra: String = headers
        .iter()
        .map(|(n, v)| format!("{n}: {v}\r\n"))
        .collect();
    test_support::http_request(
        port,
        &format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"),
    )
    .unwrap()
}

fn served_by(response: &test_support::Response) -> String {
    response
        .server()
        .unwrap_or_else(|| response.status.to_string())
}

#[test]
fn matches_precedence_filters_and_weights_follow_the_specification() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let names = ["app", "api", "other"];
    let servers: Vec<EchoServer> = names
        .iter()
        .map(|n| EchoServer::start(n).unwrap())
        .collect();
    let mut objects = String::new();
    for (name, server) in names.iter().zip(&servers) {
        objects += &backend("default", name, 80, None, &[(server.port, true)]);
    }
    let slow_port = slow_server(Duration::from_millis(1500));
    objects += &backend("default", "slow", 80, None, &[(slow_port, true)]);
    let (cert, key) = self_signed("secure wildcard", &["*.secure.test"]);
    objects += &tls_secret("default", "secure-tls", &cert, &key);
    objects += &GATEWAY
        .replace("ALT_PORT", &test_support::free_port().to_string())
        .replace("SECURE_PORT", &test_support::free_port().to_string());
    objects += RULES;
    objects += TIMEOUTS;
    write(&manifests, "all.yaml", &objects);
    let p = crate::start(dir.path(), &manifests);
    let port = p.http_port;
    let log = p.log();

    // Precedence as the specification lists it: the longest path (an exact one before a
    // prefix), then a method match, then the most header matches, then the most query
    // matches, then the oldest route, then namespace/name order, then rule order.
    let cases: [Case; 12] = [
        ("GET", "/", &[], "app"),
        ("GET", "/", &[("version", "two")], "api"),
        ("POST", "/", &[], "other"),
        ("POST", "/", &[("version", "two")], "other"),
        ("GET", "/?debug=1", &[], "other"),
        ("GET", "/?debug=1", &[("version", "two")], "api"),
        // A longer path whose condition fails falls back to the shorter path's rules.
        ("GET", "/exact", &[("x-letters", "aaa")], "api"),
        ("GET", "/exact", &[("x-letters", "b")], "app"),
        // The same match in an older and a newer route: the older route wins.
        ("GET", "/env", &[("env", "canary")], "api"),
        // Created at the same time: the first in namespace/name order wins.
        ("GET", "/tie", &[("tie", "1")], "api"),
        // A regular expression, where no longer path matches.
        ("GET", "/items/42", &[], "other"),
        ("GET", "/items/x", &[], "app"),
    ];
    for (method, target, headers, expected) in cases {
        let response = request(port, method, "match.test", target, headers);
        assert_eq!(
            served_by(&response),
            expected,
            "{method} {target} {headers:?}\n{log}"
        );
    }
    assert!(log.contains("HTTPRoute default/newer: spec.rules[0].matches[0]: host match.test path '/env' is already routed by HTTPRoute default/matching, which is older"), "{log}");

    // Request and response header modifiers.
    let response = request(
        port,
        "GET",
        "filters.test",
        "/headers",
        &[("x-remove", "gone"), ("x-add", "one")],
    );
    assert_eq!(served_by(&response), "app");
    let seen = response.echo().unwrap()["headers"].clone();
    assert_eq!(seen["x-set"], "one 100%");
    assert_eq!(seen["x-add"], "two", "{seen}");
    assert!(seen.get("x-remove").is_none(), "{seen}");
    assert_eq!(
        response.headers.get("x-resp").map(String::as_str),
        Some("yes")
    );

    // Redirects: the scheme and host replaced (the path and query kept), or the prefix.
    let response = request(port, "GET", "filters.test", "/redirect/x?q=1", &[]);
    assert_eq!(response.status, 301);
    assert_eq!(
        response.headers["location"],
        "https://example.org/redirect/x?q=1"
    );
    let response = request(port, "GET", "filters.test", "/moved/page?q=1", &[]);
    assert_eq!(response.status, 308);
    assert_eq!(
        response.headers["location"],
        "http://filters.test:8080/new/page?q=1"
    );

    for (target, location) in [
        ("/unprefix/page?q=1", "http://elsewhere.test/page?q=1"),
        ("/unprefix?q=1", "http://elsewhere.test/?q=1"),
    ] {
        let response = request(port, "GET", "filters.test", target, &[]);
        assert_eq!(response.status, 302, "{target}");
        assert_eq!(response.headers["location"], location, "{target}");
    }
    // A path of the characters RFC 3986 allows, quote included, is matched as written.
    for (target, expected) in [
        ("/odd:@;(x)*$&'", "api"),
        ("/odd:@;(x)*$&'/deeper", "api"),
        ("/odd:@;(x)*$&", "404"),
        // A filter that cannot be served is never skipped: answered with 500, never
        // forwarded without it; a mirror's rule is served without the copy.
        ("/any-host-extended/x", "500"),
        ("/any-host-mirrored/x", "api"),
    ] {
        let response = request(port, "GET", "any.test", target, &[]);
        assert_eq!(served_by(&response), expected, "{target}");
    }
    // A redirect that keeps the host keeps an IPv6 literal whole, brackets included.
    for (host, location) in [
        ("[::1]:81", "http://[::1]:8080/any-host-moved"),
        ("[FE80::1]", "http://[fe80::1]:8080/any-host-moved"),
        ("Any.Test:81", "http://any.test:8080/any-host-moved"),
    ] {
        let response = request(port, "GET", host, "/any-host-moved", &[]);
        assert_eq!(response.status, 302, "{host}");
        assert_eq!(response.headers["location"], location, "{host}");
    }

    // Rewrites before forwarding.
    for (target, path) in [
        ("/rewrite/x", "/v2/x"),
        ("/rewrite", "/v2"),
        ("/full/deep/path", "/replaced"),
        // An empty replacement takes the prefix away.
        ("/strip/bar", "/bar"),
        ("/strip/", "/"),
        ("/strip", "/"),
    ] {
        let response = request(port, "GET", "filters.test", target, &[]);
        assert_eq!(response.seen("path").as_deref(), Some(path), "{target}");
    }
    let response = request(port, "GET", "filters.test", "/rewrite/x", &[]);
    assert_eq!(
        response.echo().unwrap()["headers"]["host"],
        "rewritten.test"
    );

    // Weights: 3 to 1, and weight 0 gets nothing; a negative one is reported and gets
    // nothing either. Each backendRef's own filter applies when it is the one chosen.
    assert!(
        log.contains("HTTPRoute default/split: spec.rules[0].backendRefs[3].weight: -5 is below 0, the specification's limit; the backendRef is skipped, as one of weight 0 is"),
        "{log}"
    );
    let mut counts = std::collections::BTreeMap::new();
    for _ in 0..400 {
        let response = request(port, "GET", "split.test", "/", &[]);
        let server = served_by(&response);
        let marked = response.echo().unwrap()["headers"]["x-backend"].clone();
        assert_eq!(marked, server.as_str(), "{}", response.body);
        *counts.entry(server).or_insert(0) += 1;
    }
    let app = counts.get("app").copied().unwrap_or(0);
    let api = counts.get("api").copied().unwrap_or(0);
    assert_eq!(app + api, 400, "{counts:?}");
    assert!(
        (255..=345).contains(&app),
        "expected 300 ± 45 of 400 for weight 3 of 4: {counts:?}"
    );

    // Rule timeouts: a backend slower than the rule's request timeout is answered 504,
    // within the time; a patient rule waits for it.
    let started = std::time::Instant::now();
    assert_eq!(
        request(port, "GET", "timeouts.test", "/hasty", &[]).status,
        504,
        "{log}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(1200),
        "{:?}",
        started.elapsed()
    );
    let patient = request(port, "GET", "timeouts.test", "/patient", &[]);
    assert_eq!((patient.status, patient.body.as_str()), (200, "slow"));

    // No valid backend: 500; half the weight invalid: about half the requests get 500.
    assert_eq!(
        request(port, "GET", "split.test", "/broken", &[]).status,
        500
    );
    let failed = (0..200)
        .filter(|_| request(port, "GET", "split.test", "/half-broken", &[]).status == 500)
        .count();
    assert!(
        (70..=130).contains(&failed),
        "expected 100 ± 30 of 200: {failed}"
    );

    // A backendRef's own rewrite and redirect apply when it is the one chosen, its
    // `ReplacePrefixMatch` replacing the prefix this match matched.
    let (mut rewritten, mut redirected) = (0, 0);
    for _ in 0..100 {
        let response = request(port, "GET", "split.test", "/per-backend/x?q=1", &[]);
        if response.status == 307 {
            assert_eq!(
                response.headers["location"],
                "http://elsewhere.test/moved/x?q=1"
            );
            redirected += 1;
        } else {
            assert_eq!(served_by(&response), "app", "{}", response.body);
            assert_eq!(response.seen("path").as_deref(), Some("/app/x"));
            assert_eq!(response.echo().unwrap()["headers"]["host"], "chosen.test");
            rewritten += 1;
        }
    }
    assert!(
        (25..=75).contains(&rewritten) && rewritten + redirected == 100,
        "expected 50 ± 25 of 100 rewritten: {rewritten} rewritten, {redirected} redirected"
    );
}
