//! Ingress v1 routing semantics, checked with real requests through a real HAProxy.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use test_support::{EchoServer, Portcullis, backend, http_get, http_request};

fn ingress(name: &str, created: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: default, creationTimestamp: \"{created}\"}}\nspec:\n{spec}"
    )
}

fn path(path: &str, kind: &str, service: &str) -> String {
    format!(
        "      - {{path: {path}, pathType: {kind}, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n"
    )
}

struct Backends {
    _servers: Vec<EchoServer>,
}

/// Starts one echo backend per name and writes a Service + EndpointSlice for each.
fn echo_services(manifest: &mut String, names: &[&str]) -> Backends {
    let mut servers = Vec::new();
    for name in names {
        let server = EchoServer::start(name).unwrap();
        manifest.push_str(&backend(
            "default",
            &format!("svc-{name}"),
            80,
            None,
            &[(server.port, true)],
        ));
        servers.push(server);
    }
    Backends { _servers: servers }
}

#[test]
fn hosts_paths_and_precedence_follow_the_ingress_specification() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let mut objects = String::new();
    let _backends = echo_services(
        &mut objects,
        &[
            "exact", "prefix", "foo", "foobar", "impl", "wild", "any", "other",
        ],
    );

    // A named port, a service whose only endpoint is not ready, one spread over two
    // slices, and one whose slice port name does not match the service port's name.
    let named = EchoServer::start("named").unwrap();
    objects.push_str(&backend(
        "default",
        "svc-named",
        8080,
        Some("http"),
        &[(named.port, true)],
    ));
    let down = EchoServer::start("down").unwrap();
    objects.push_str(&backend(
        "default",
        "svc-down",
        80,
        None,
        &[(down.port, false)],
    ));
    let (m1, m2) = (
        EchoServer::start("m1").unwrap(),
        EchoServer::start("m2").unwrap(),
    );
    objects.push_str(&backend(
        "default",
        "svc-multi",
        80,
        None,
        &[(m1.port, true), (m2.port, true)],
    ));
    let mismatch = EchoServer::start("mismatch").unwrap();
    objects.push_str(&backend("default", "svc-mismatch", 80, Some("web"), &[]));
    objects.push_str(&format!("---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: svc-mismatch-x, labels: {{kubernetes.io/service-name: svc-mismatch}}}}\naddressType: IPv4\nports:\n- {{name: other, port: {}}}\nendpoints:\n- addresses: [127.0.0.1]\n", mismatch.port));

    let mut r1 = String::from("  rules:\n  - host: foo.com\n    http:\n      paths:\n");
    r1 += &path("/exact", "Exact", "svc-exact");
    r1 += &path("/foo", "Prefix", "svc-foo");
    r1 += &path("/foo/bar/", "Prefix", "svc-foobar");
    r1 += &path("/foo", "Exact", "svc-exact");
    r1 += &path("/", "Prefix", "svc-prefix");
    r1 += &path("/img", "ImplementationSpecific", "svc-impl");
    r1 += "  - host: \"*.wild.com\"\n    http:\n      paths:\n";
    r1 += &path("/", "Prefix", "svc-wild");
    r1 += "  - host: named.com\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: svc-named, port: {name: http}}}}\n";
    r1 += "  - host: down.com\n    http:\n      paths:\n";
    r1 += &path("/", "Prefix", "svc-down");
    r1 += "  - host: multi.com\n    http:\n      paths:\n";
    r1 += &path("/", "Prefix", "svc-multi");
    r1 += "  - host: mismatch.com\n    http:\n      paths:\n";
    r1 += &path("/", "Prefix", "svc-mismatch");
    r1 += "  - http:\n      paths:\n";
    r1 += &path("/any", "Prefix", "svc-any");
    objects.push_str(&ingress("r1", "2024-01-01T00:00:00Z", &r1));

    // A newer Ingress on the same host: merged, and its conflicting path loses.
    let mut r2 = String::from("  rules:\n  - host: foo.com\n    http:\n      paths:\n");
    r2 += &path("/merged", "Prefix", "svc-impl");
    r2 += &path("/exact", "Exact", "svc-other");
    objects.push_str(&ingress("r2", "2024-02-01T00:00:00Z", &r2));
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();

    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    let port = portcullis.http_port;
    let cases: &[(&str, &str, &str)] = &[
        ("foo.com", "/exact", "exact"),
        ("FOO.com:8080", "/exact", "exact"),
        ("foo.com", "/exact/", "prefix"),
        ("foo.com", "/foo", "exact"),
        ("foo.com", "/foo/", "foo"),
        ("foo.com", "/foo/baz", "foo"),
        ("foo.com", "/foobar", "prefix"),
        ("foo.com", "/foo/bar", "foobar"),
        ("foo.com", "/foo/bar/", "foobar"),
        ("foo.com", "/foo/bar/baz", "foobar"),
        ("foo.com", "/foo/barbaz", "foo"),
        ("foo.com", "/img", "impl"),
        ("foo.com", "/imgs/x.png", "impl"),
        ("foo.com", "/merged/x", "impl"),
        ("foo.com", "/any", "prefix"),
        ("foo.com", "/?q=1", "prefix"),
        ("a.wild.com", "/x", "wild"),
        ("A.Wild.COM", "/", "wild"),
        ("a.b.wild.com", "/any", "any"),
        ("wild.com", "/any/thing", "any"),
        ("named.com", "/", "named"),
        ("elsewhere.org", "/any", "any"),
    ];
    for (host, path, expected) in cases {
        let response = http_get(port, host, path).unwrap();
        assert_eq!(response.status, 200, "{host}{path}: {response:?}");
        assert_eq!(
            response.server().as_deref(),
            Some(*expected),
            "{host}{path}"
        );
        let (expected_path, query) = path.split_once('?').unwrap_or((path, ""));
        assert_eq!(
            response.seen("path").as_deref(),
            Some(expected_path),
            "{host}{path}"
        );
        assert_eq!(
            response.seen("query").as_deref(),
            Some(query),
            "{host}{path}"
        );
        assert_eq!(
            response.seen("host").as_deref(),
            Some(*host),
            "{host}{path}"
        );
    }
    for (host, path, status) in [
        ("elsewhere.org", "/anything", 404),
        ("wild.com", "/x", 404),
        // A wildcard stands for one DNS label, not an empty one or other characters.
        (".wild.com", "/x", 404),
        ("a@b.wild.com", "/x", 404),
        ("*.wild.com", "/x", 400),
        ("down.com", "/", 503),
        ("mismatch.com", "/", 503),
    ] {
        assert_eq!(
            http_get(port, host, path).unwrap().status,
            status,
            "{host}{path}"
        );
    }
    // Without a Host header, only the rules without a host apply.
    let response = http_request(port, "GET /any HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(response.server().as_deref(), Some("any"));

    let seen: BTreeSet<String> = (0..6)
        .filter_map(|_| http_get(port, "multi.com", "/").unwrap().server())
        .collect();
    assert_eq!(
        seen,
        BTreeSet::from(["m1".to_owned(), "m2".to_owned()]),
        "both slices serve"
    );

    assert!(
        portcullis.log().contains("Ingress default/r2: spec.rules[0].http.paths[1]: host foo.com path '/exact' is already routed by Ingress default/r1, which is older; this path is ignored"),
        "{}",
        portcullis.log()
    );
}

#[test]
fn default_backend_answers_what_no_rule_claims_and_oldest_default_wins() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let mut objects = String::new();
    let _backends = echo_services(&mut objects, &["site", "fallback", "late"]);
    let mut site = String::from(
        "  defaultBackend: {service: {name: svc-fallback, port: {number: 80}}}\n  rules:\n  - host: site.com\n    http:\n      paths:\n",
    );
    site += &path("/app", "Prefix", "svc-site");
    objects.push_str(&ingress("site", "2024-01-01T00:00:00Z", &site));
    objects.push_str(&ingress(
        "late",
        "2024-03-01T00:00:00Z",
        "  defaultBackend: {service: {name: svc-late, port: {number: 80}}}\n",
    ));
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();

    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    for (host, path, expected) in [
        ("site.com", "/app/x", "site"),
        ("site.com", "/other", "fallback"),
        ("nowhere.net", "/", "fallback"),
    ] {
        let response = http_get(portcullis.http_port, host, path).unwrap();
        assert_eq!(response.server().as_deref(), Some(expected), "{host}{path}");
        assert_eq!(response.seen("path").as_deref(), Some(path));
    }
    assert!(portcullis.log().contains("Ingress default/late: spec.defaultBackend: the default backend is already set by Ingress default/site, which is older; this one is ignored"));
}

/// `GET path` for `host` with extra header lines: who answered.
fn answered_with(port: u16, host: &str, path: &str, headers: &str) -> String {
    let reply = http_request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n"),
    )
    .unwrap();
    reply.server().unwrap_or_else(|| reply.status.to_string())
}

/// A canary by header (`http-header-match`, `-regex`): a younger Ingress of the
/// namespace on the same host and path takes the requests whose headers all match; the
/// older one takes the rest, and its longer paths win over the canary's shorter one.
#[test]
fn a_canary_by_header_takes_the_requests_its_headers_match() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let mut objects = String::new();
    let _backends = echo_services(&mut objects, &["stable", "canary", "api"]);
    objects += &ingress(
        "stable",
        "2024-01-01T00:00:00Z",
        &format!(
            "  rules:\n  - host: app.test\n    http:\n      paths:\n{}{}",
            path("/", "Prefix", "svc-stable"),
            path("/api", "Prefix", "svc-api")
        ),
    );
    objects += &ingress(
        "canary",
        "2024-06-01T00:00:00Z",
        &format!(
            "  rules:\n  - host: app.test\n    http:\n      paths:\n{}",
            path("/", "Prefix", "svc-canary")
        ),
    )
    .replace(
        "creationTimestamp: \"2024-06-01T00:00:00Z\"}",
        "creationTimestamp: \"2024-06-01T00:00:00Z\", annotations: {haproxy-ingress.github.io/http-header-match: \"X-Canary: always\", haproxy-ingress.github.io/http-header-match-regex: \"X-User: ^(ann|bob)$\"}}",
    );
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    let port = portcullis.http_port;
    for (path, headers, expected) in [
        ("/", "", "stable"),
        ("/", "X-Canary: always\r\nX-User: ann\r\n", "canary"),
        ("/page", "x-canary: always\r\nx-user: bob\r\n", "canary"),
        // Every match must hold; the value is compared exactly, the pattern unanchored
        // only as written.
        ("/", "X-Canary: always\r\n", "stable"),
        ("/", "X-Canary: Always\r\nX-User: ann\r\n", "stable"),
        ("/", "X-Canary: always\r\nX-User: anna\r\n", "stable"),
        // The longer path of the older Ingress wins over the canary's shorter one.
        ("/api/x", "X-Canary: always\r\nX-User: ann\r\n", "api"),
    ] {
        assert_eq!(
            answered_with(port, "app.test", path, headers),
            expected,
            "{path} {headers:?}\n{}",
            portcullis.log()
        );
    }
}

/// A canary by header leaves the older Ingress its own HTTPS redirect and default
/// backend: each rule of a shared path redirects plain HTTP as its own Ingress asks, a
/// path's rules that take nothing fall through to the host's shorter paths with their
/// redirect, and what no rule takes goes to the default backend, not a 404.
#[test]
fn a_canary_by_header_leaves_the_older_ingress_its_redirect_and_default_backend() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let mut objects = String::new();
    let _backends = echo_services(&mut objects, &["stable", "canary", "fallback"]);
    let other = EchoServer::start("other").unwrap();
    let (cert, key) = test_support::self_signed("app.test", &["app.test", "site.test"]);
    objects += &test_support::tls_secret("default", "app-tls", &cert, &key);
    objects += &ingress(
        "stable",
        "2024-01-01T00:00:00Z",
        &format!(
            "  tls: [{{hosts: [app.test], secretName: app-tls}}]\n  rules:\n  - host: app.test\n    http:\n      paths:\n{}",
            path("/", "Prefix", "svc-stable")
        ),
    );
    let annotated = |name: &str, created: &str, annotations: &str, spec: String| {
        ingress(name, created, &spec).replace(
            &format!("creationTimestamp: \"{created}\"}}"),
            &format!("creationTimestamp: \"{created}\", annotations: {{{annotations}}}}}"),
        )
    };
    // The canary asks for no redirect; the stable one, by default, for one.
    objects += &annotated(
        "canary",
        "2024-06-01T00:00:00Z",
        "haproxy-ingress.github.io/http-header-match: \"X-Canary: always\", haproxy-ingress.github.io/ssl-redirect: \"false\"",
        format!(
            "  rules:\n  - host: app.test\n    http:\n      paths:\n{}",
            path("/", "Prefix", "svc-canary")
        ),
    );
    // Another namespace's header-matched path under the host changes nothing for the
    // requests it does not match.
    objects += &annotated(
        "sub",
        "2024-07-01T00:00:00Z",
        "haproxy-ingress.github.io/http-header-match: \"X-Other: yes\", haproxy-ingress.github.io/ssl-redirect: \"false\"",
        format!(
            "  rules:\n  - host: app.test\n    http:\n      paths:\n{}",
            path("/sub", "Prefix", "svc-other")
        ),
    )
    .replace("namespace: default", "namespace: team");
    objects += &backend("team", "svc-other", 80, None, &[(other.port, true)]);
    // A host only a header-matched path routes: the rest goes to the default backend.
    objects += &ingress(
        "fallback",
        "2024-01-01T00:00:00Z",
        "  defaultBackend: {service: {name: svc-fallback, port: {number: 80}}}\n",
    );
    objects += &annotated(
        "only",
        "2024-06-01T00:00:00Z",
        "haproxy-ingress.github.io/http-header-match: \"X-Canary: always\"",
        format!(
            "  rules:\n  - host: only.test\n    http:\n      paths:\n{}",
            path("/", "Prefix", "svc-canary")
        ),
    );
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    let port = portcullis.http_port;
    for (host, path, headers, expected) in [
        ("app.test", "/", "", "302"),
        ("app.test", "/", "X-Canary: always\r\n", "canary"),
        ("app.test", "/sub/x", "", "302"),
        ("app.test", "/sub/x", "X-Other: yes\r\n", "other"),
        ("only.test", "/", "", "fallback"),
        ("only.test", "/", "X-Canary: always\r\n", "canary"),
    ] {
        assert_eq!(
            answered_with(port, host, path, headers),
            expected,
            "{host}{path} {headers:?}\n{}",
            portcullis.log()
        );
    }
}
