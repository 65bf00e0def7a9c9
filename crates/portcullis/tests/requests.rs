//! Requests on Ingress, seen through a real HAProxy by the client and by the backend:
//! the HTTPS redirect and its ACME exception, rewrite-target, app-root, redirect-to,
//! header keys, HSTS and path-type regex.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use test_support::{
    EchoServer, Portcullis, backend, http_get, https_get, self_signed, tls_handshake, tls_secret,
};

/// An Ingress of one host and one path to `service`, with annotations and, when `tls`,
/// the host in `spec.tls` with the `site-tls` Secret.
fn ingress(
    name: &str,
    annotations: &str,
    host: &str,
    path: &str,
    path_type: &str,
    service: &str,
    tls: bool,
) -> String {
    let tls = if tls {
        format!("  tls: [{{hosts: [\"{host}\"], secretName: site-tls}}]\n")
    } else {
        String::new()
    };
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations:\n{annotations}spec:\n{tls}  rules:\n  - host: \"{host}\"\n    http:\n      paths:\n      - {{path: \"{path}\", pathType: {path_type}, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n"
    )
}

/// Annotations, one `key: value` a line, under haproxy-ingress's prefix.
fn annotations(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(key, value)| format!("    haproxy-ingress.github.io/{key}: {value:?}\n"))
        .collect()
}

/// The Ingress of `alpn.test`, a TLS host with TLS options of its own.
fn alpn_ingress(pairs: &[(&str, &str)]) -> String {
    let annotations = match pairs {
        [] => "    {}\n".to_owned(),
        pairs => annotations(pairs),
    };
    ingress(
        "alpn",
        &annotations,
        "alpn.test",
        "/",
        "Prefix",
        "web",
        true,
    )
}

/// The Ingress of `main.test`, with a `server-alias-regex`.
fn alias_regex_ingress(pattern: &str) -> String {
    ingress(
        "alias-regex",
        &annotations(&[("server-alias-regex", pattern)]),
        "main.test",
        "/",
        "Prefix",
        "web",
        false,
    )
}

struct Setup {
    _dir: tempfile::TempDir,
    _web: EchoServer,
    _solver: EchoServer,
    portcullis: Portcullis,
}

fn start() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let solver = EchoServer::start("solver").unwrap();
    let hosts = [
        "acme.test",
        "hsts.test",
        "nohsts.test",
        "alpn.test",
        "www.alpn.test",
    ];
    let (cert, key) = self_signed("site", &hosts);
    let mut objects = backend("default", "web", 80, None, &[(web.port, true)]);
    objects += &backend("default", "solver", 80, None, &[(solver.port, true)]);
    objects += &tls_secret("default", "site-tls", &cert, &key);
    objects += &ingress(
        "acme-site",
        "    {}\n",
        "acme.test",
        "/",
        "Prefix",
        "web",
        true,
    );
    objects += &ingress(
        "acme-solver",
        "    {}\n",
        "acme.test",
        "/.well-known/acme-challenge/token1",
        "Exact",
        "solver",
        false,
    );
    objects += &ingress(
        "rewrite",
        &annotations(&[("rewrite-target", "/y")]),
        "rw.test",
        "/abc",
        "Prefix",
        "web",
        false,
    );
    // A path holding regex metacharacters and a quote is rewritten as written.
    objects += &ingress(
        "rewrite-odd",
        &annotations(&[("rewrite-target", "/y")]),
        "rewrite-odd.test",
        "/c++(v1)$'s",
        "Prefix",
        "web",
        false,
    );
    // ImplementationSpecific paths begin-match character-wise: `/img` takes `/imgs` too.
    for (name, target) in [("rewrite-begin", "/y"), ("rewrite-begin-slash", "/y/")] {
        objects += &ingress(
            name,
            &annotations(&[("rewrite-target", target)]),
            &format!("{name}.test"),
            "/img",
            "ImplementationSpecific",
            "web",
            false,
        );
    }
    objects += &ingress(
        "app-root",
        &annotations(&[("app-root", "/app")]),
        "root.test",
        "/",
        "Prefix",
        "web",
        false,
    );
    objects += &ingress(
        "redirect-to",
        &annotations(&[("redirect-to", "https://www.new.test/login")]),
        "old.test",
        "/",
        "Prefix",
        "web",
        false,
    );
    objects += &ingress(
        "redirect-from",
        &annotations(&[
            ("redirect-from", "app.test"),
            ("redirect-from-regex", "^app[0-9]+\\.test$"),
        ]),
        "www.app.test",
        "/",
        "Prefix",
        "web",
        false,
    );
    objects += &ingress(
        "redirect-from-wildcard",
        &annotations(&[("redirect-from", "*.legacy.test")]),
        "new.test",
        "/",
        "Prefix",
        "web",
        false,
    );
    objects += &ingress(
        "headers",
        &annotations(&[
            (
                "request-set-headers",
                "X-Env: prod\nX-Svc: %[service].%[namespace]",
            ),
            ("request-del-headers", "X-Drop"),
            ("response-set-headers", "X-Frame-Options: DENY"),
            ("response-del-headers", "Server, X-Echo-Server"),
        ]),
        "hdr.test",
        "/",
        "Prefix",
        "web",
        false,
    );
    objects += &ingress(
        "hsts",
        &annotations(&[("hsts-max-age", "60"), ("hsts-include-subdomains", "true")]),
        "hsts.test",
        "/",
        "Prefix",
        "web",
        true,
    );
    objects += &ingress(
        "nohsts",
        &annotations(&[("hsts", "false")]),
        "nohsts.test",
        "/",
        "Prefix",
        "web",
        true,
    );
    objects += &ingress(
        "regex",
        &annotations(&[("path-type", "regex")]),
        "re.test",
        "/app[0-9]+$",
        "ImplementationSpecific",
        "web",
        false,
    );
    // An older Ingress's regex path and a younger one's `/` on one host: the regex is
    // tried first, the `/` serves the rest.
    objects += &ingress(
        "re-shared-a",
        &annotations(&[("path-type", "regex")]),
        "re-shared.test",
        "/app[0-9]+$",
        "ImplementationSpecific",
        "web",
        false,
    );
    objects += &ingress(
        "re-shared-b",
        "    {}\n",
        "re-shared.test",
        "/",
        "Prefix",
        "solver",
        false,
    );
    for path_type in ["begin", "prefix", "exact"] {
        objects += &ingress(
            &format!("path-type-{path_type}"),
            &annotations(&[("path-type", path_type)]),
            &format!("{path_type}.test"),
            "/img",
            "ImplementationSpecific",
            "web",
            false,
        );
    }
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    std::fs::write(
        manifests.join("alias-regex.yaml"),
        alias_regex_ingress("^(www|web)[0-9]*\\.main\\.test$"),
    )
    .unwrap();
    let alpn = alpn_ingress(&[
        ("tls-alpn", "http/1.1"),
        ("ssl-options-host", "ssl-max-ver TLSv1.2"),
        ("server-alias", "www.alpn.test"),
    ]);
    std::fs::write(manifests.join("alpn.yaml"), alpn).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &[],
    )
    .unwrap();
    Setup {
        _dir: dir,
        _web: web,
        _solver: solver,
        portcullis,
    }
}

fn location(response: &test_support::Response) -> Option<&str> {
    response.headers.get("location").map(String::as_str)
}

fn seen_header(response: &test_support::Response, name: &str) -> Option<String> {
    let echo = response.echo()?;
    echo.get("headers")?.get(name)?.as_str().map(str::to_owned)
}

#[test]
fn ingress_request_keys_seen_by_client_and_backend() {
    let setup = start();
    let (http, https) = (setup.portcullis.http_port, setup.portcullis.https_port);
    let log = setup.portcullis.log();
    assert!(!log.contains("diagnostic"), "{log}");

    // ssl-redirect-code defaults to 302, as in haproxy-ingress; the ACME path is spared.
    let redirect = http_get(http, "acme.test", "/page?x=1").unwrap();
    assert_eq!(redirect.status, 302);
    assert_eq!(
        location(&redirect),
        Some(format!("https://acme.test:{https}/page?x=1").as_str())
    );
    let challenge = http_get(http, "acme.test", "/.well-known/acme-challenge/token1").unwrap();
    assert_eq!(
        (challenge.status, challenge.server().as_deref()),
        (200, Some("solver")),
        "{challenge:?}"
    );
    assert_eq!(
        challenge.headers.get("strict-transport-security"),
        None,
        "no HSTS over plain HTTP"
    );
    let other = http_get(http, "acme.test", "/.well-known/acme-challenge/other").unwrap();
    assert_eq!(
        (other.status, other.server().as_deref()),
        (200, Some("web")),
        "an exempt path goes where HTTPS would"
    );

    // Per-host TLS options from the certificate list, in a real handshake; other hosts
    // keep the frontend's.
    let offered = ["h2", "http/1.1"];
    let per_host = tls_handshake(https, "alpn.test", &offered).unwrap();
    assert_eq!(
        (per_host.version.as_str(), per_host.alpn.as_deref()),
        ("TLSv1.2", Some("http/1.1")),
        "tls-alpn and ssl-options-host of alpn.test; crt-list: {:?}",
        std::fs::read_to_string(setup.portcullis.state_dir.join("certs/crt-list.txt"))
    );
    let alias = tls_handshake(https, "www.alpn.test", &offered).unwrap();
    assert_eq!(
        (alias.version.as_str(), alias.alpn.as_deref()),
        ("TLSv1.2", Some("http/1.1")),
        "server-alias shares its host's certificate-list options"
    );
    let aliased = https_get(https, "www.alpn.test", "WWW.alpn.test:443", "/x").unwrap();
    assert_eq!(
        (
            aliased.response.status,
            aliased.response.server().as_deref()
        ),
        (200, Some("web"))
    );
    let redirected = http_get(http, "www.alpn.test", "/x").unwrap();
    assert_eq!(
        (redirected.status, location(&redirected)),
        (
            302,
            Some(format!("https://www.alpn.test:{https}/x").as_str())
        ),
        "the alias has its host's TLS, so its HTTPS redirect"
    );
    let frontend = tls_handshake(https, "acme.test", &offered).unwrap();
    assert_eq!(
        (frontend.version.as_str(), frontend.alpn.as_deref()),
        ("TLSv1.3", Some("h2"))
    );

    // HSTS: on HTTPS responses by default, per path settings, off.
    let secure = https_get(https, "acme.test", "acme.test", "/")
        .unwrap()
        .response;
    assert_eq!(
        secure
            .headers
            .get("strict-transport-security")
            .map(String::as_str),
        Some("max-age=15768000")
    );
    let custom = https_get(https, "hsts.test", "hsts.test", "/")
        .unwrap()
        .response;
    assert_eq!(
        custom
            .headers
            .get("strict-transport-security")
            .map(String::as_str),
        Some("max-age=60; includeSubDomains")
    );
    let off = https_get(https, "nohsts.test", "nohsts.test", "/")
        .unwrap()
        .response;
    assert_eq!(
        (off.status, off.headers.get("strict-transport-security")),
        (200, None)
    );

    // rewrite-target: the matched prefix is replaced, the rest and the query kept.
    for (path, rewritten) in [("/abc", "/y"), ("/abc/", "/y/"), ("/abc/x?q=1", "/y/x")] {
        let response = http_get(http, "rw.test", path).unwrap();
        assert_eq!(response.seen("path").as_deref(), Some(rewritten), "{path}");
    }
    for (host, path, rewritten) in [
        ("rewrite-begin.test", "/img", "/y"),
        ("rewrite-begin.test", "/img/x", "/y/x"),
        ("rewrite-begin.test", "/imgs?q=1", "/ys"),
        ("rewrite-begin-slash.test", "/img", "/y/"),
        ("rewrite-begin-slash.test", "/img/x", "/y/x"),
        ("rewrite-begin-slash.test", "/imgs", "/y/s"),
        ("rewrite-odd.test", "/c++(v1)$'s/x", "/y/x"),
        ("rewrite-odd.test", "/c++(v1)$'s", "/y"),
    ] {
        let response = http_get(http, host, path).unwrap();
        assert_eq!(
            response.seen("path").as_deref(),
            Some(rewritten),
            "{host}{path}"
        );
    }
    assert_eq!(
        http_get(http, "rw.test", "/abc/x?q=1")
            .unwrap()
            .seen("query")
            .as_deref(),
        Some("q=1")
    );

    // app-root: only `/` itself is redirected.
    let root = http_get(http, "root.test", "/").unwrap();
    assert_eq!(
        (root.status, location(&root)),
        (302, Some("http://root.test/app"))
    );
    // The port the client asked for is kept (a NodePort, say); the scheme's own is not
    // written.
    let on_port = http_get(http, &format!("root.test:{http}"), "/").unwrap();
    assert_eq!(
        location(&on_port),
        Some(format!("http://root.test:{http}/app").as_str())
    );
    let on_default = http_get(http, "root.test:80", "/").unwrap();
    assert_eq!(location(&on_default), Some("http://root.test/app"));
    // Only a port is kept: anything else after the colon is not written.
    for odd in [
        "root.test:@evil.test",
        "root.test:80@evil.test",
        "root.test:",
    ] {
        let odd_root = http_get(http, odd, "/").unwrap();
        assert_eq!(location(&odd_root), Some("http://root.test/app"), "{odd}");
    }
    // A final dot names the same host.
    let dotted = http_get(http, "Root.Test.", "/").unwrap();
    assert_eq!(
        (dotted.status, location(&dotted)),
        (302, Some("http://root.test/app"))
    );
    // A Host that names no single host is refused: HAProxy would route it by its last
    // value while the backend read its first.
    for many in ["rw.test, root.test", "rw.test,root.test"] {
        assert_eq!(http_get(http, many, "/").unwrap().status, 400, "{many}");
    }
    for length in [2_000, 10_000] {
        let status = http_get(http, &"a".repeat(length), "/").unwrap().status;
        assert_eq!(status, 400, "a Host of {length} bytes");
    }
    let hostless = test_support::http_request(http, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(hostless.unwrap().status, 400, "HTTP/1.1 without Host");
    let secure_root = https_get(https, "root.test", &format!("root.test:{https}"), "/").unwrap();
    assert_eq!(
        secure_root
            .response
            .headers
            .get("location")
            .map(String::as_str),
        Some(format!("https://root.test:{https}/app").as_str())
    );
    assert_eq!(
        http_get(http, "root.test", "/other")
            .unwrap()
            .seen("path")
            .as_deref(),
        Some("/other")
    );

    // redirect-to: the URL as given, whatever the path.
    let moved = http_get(http, "old.test", "/any/path?x=1").unwrap();
    assert_eq!(
        (moved.status, location(&moved)),
        (302, Some("https://www.new.test/login"))
    );

    // redirect-from: the source host goes to the Ingress's host, path and query kept;
    // the Ingress's host itself is served.
    let from = http_get(http, "app.test", "/a/b?c=1").unwrap();
    assert_eq!(
        (from.status, location(&from)),
        (302, Some("http://www.app.test/a/b?c=1"))
    );
    let from_port = http_get(http, &format!("app.test:{http}"), "/a").unwrap();
    assert_eq!(
        location(&from_port),
        Some(format!("http://www.app.test:{http}/a").as_str())
    );
    let from_any = http_get(http, "old.legacy.test", "/").unwrap();
    assert_eq!(
        (from_any.status, location(&from_any)),
        (302, Some("http://new.test/"))
    );
    assert_eq!(
        http_get(http, "www.app.test", "/a")
            .unwrap()
            .server()
            .as_deref(),
        Some("web")
    );

    // Header keys: the backend sees the request headers, the client the response ones.
    let request =
        "GET / HTTP/1.1\r\nHost: hdr.test\r\nX-Env: dev\r\nX-Drop: 1\r\nConnection: close\r\n\r\n";
    let response = test_support::http_request(http, request).unwrap();
    assert_eq!(seen_header(&response, "x-env").as_deref(), Some("prod"));
    assert_eq!(
        seen_header(&response, "x-svc").as_deref(),
        Some("web.default")
    );
    assert_eq!(seen_header(&response, "x-drop"), None);
    assert_eq!(
        response.headers.get("x-frame-options").map(String::as_str),
        Some("DENY")
    );
    // A removed `Server` is not added back; the other hosts' responses carry ours.
    assert_eq!(response.headers.get("server"), None);
    assert_eq!(response.headers.get("x-echo-server"), None);
    let other = http_get(http, "rw.test", "/abc").unwrap();
    assert_eq!(
        other.headers.get("server").map(String::as_str),
        Some("portcullis")
    );

    // Per-host TLS options change live, in the certificate list, without a reload:
    // an entry with options is replaced by one without, and back.
    let mut portcullis = setup.portcullis;
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    let expect_handshake = |portcullis: &mut Portcullis, version: &str, alpn: &str| {
        portcullis
            .wait_until(std::time::Duration::from_secs(10), |p| {
                tls_handshake(p.https_port, "alpn.test", &offered).is_ok_and(|agreed| {
                    agreed.version == version && agreed.alpn.as_deref() == Some(alpn)
                })
            })
            .unwrap_or_else(|err| panic!("{version} {alpn}: {err}"));
    };
    let manifests = portcullis.manifests.clone();
    test_support::write_manifest(&manifests, "alpn.yaml", &alpn_ingress(&[])).unwrap();
    expect_handshake(&mut portcullis, "TLSv1.3", "h2");
    let alpn = alpn_ingress(&[
        ("tls-alpn", "http/1.1"),
        ("ssl-options-host", "ssl-max-ver TLSv1.2"),
    ]);
    test_support::write_manifest(&manifests, "alpn.yaml", &alpn).unwrap();
    expect_handshake(&mut portcullis, "TLSv1.2", "http/1.1");
    let alpn = alpn_ingress(&[("ssl-options-host", "ssl-max-ver TLSv1.2")]);
    test_support::write_manifest(&manifests, "alpn.yaml", &alpn).unwrap();
    expect_handshake(&mut portcullis, "TLSv1.2", "h2");
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "{}",
        portcullis.log()
    );

    // A changed host pattern goes live: the pattern map is replaced, backslashes kept.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    test_support::write_manifest(
        &manifests,
        "alias-regex.yaml",
        &alias_regex_ingress("^api\\.main\\.(test|example)$"),
    )
    .unwrap();
    portcullis
        .wait_until(std::time::Duration::from_secs(10), |p| {
            http_get(p.http_port, "api.main.example", "/").is_ok_and(|r| r.status == 200)
        })
        .unwrap();
    assert_eq!(http_get(http, "www.main.test", "/").unwrap().status, 404);
    assert_eq!(http_get(http, "apixmain.test", "/").unwrap().status, 404);
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "{}",
        portcullis.log()
    );

    // path-type regex, anchored at the start of the path.
    assert_eq!(
        http_get(http, "re.test", "/app15")
            .unwrap()
            .server()
            .as_deref(),
        Some("web")
    );
    assert_eq!(http_get(http, "re.test", "/app15/x").unwrap().status, 404);
    assert_eq!(http_get(http, "re.test", "/app").unwrap().status, 404);
    for (path, served_by) in [("/app15", "web"), ("/app", "solver"), ("/", "solver")] {
        let reply = http_get(http, "re-shared.test", path).unwrap();
        assert_eq!(reply.server().as_deref(), Some(served_by), "{path}");
    }

    // path-type on ImplementationSpecific paths: begins with, element-wise, whole path.
    for (host, path, served) in [
        ("begin.test", "/img", true),
        ("begin.test", "/imgs", true),
        ("begin.test", "/im", false),
        ("prefix.test", "/img", true),
        ("prefix.test", "/img/a", true),
        ("prefix.test", "/imgs", false),
        ("exact.test", "/img", true),
        ("exact.test", "/img/", false),
        ("exact.test", "/img/a", false),
    ] {
        let status = http_get(http, host, path).unwrap().status;
        assert_eq!(status == 200, served, "{host}{path}: {status}");
    }
}
