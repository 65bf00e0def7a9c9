//! Access control through a real HAProxy, from the client's side: allow and deny lists
//! (from 127.0.0.1 and 127.0.0.2, which Linux routes to the loopback, and from a trusted
//! header), a list of thousands of entries, a list changed live without a reload, a list
//! with a bad entry refusing everyone, per-client request rate and connection limits, and
//! the WAF keys reported as not supported.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use test_support::{EchoServer, HoldingBackend, Portcullis, Response, backend, exchange};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");
const SECOND_CLIENT: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// An Ingress of one host routing `/` to `service`, with annotations under
/// haproxy-ingress's prefix.
fn ingress(name: &str, host: &str, service: &str, annotations: &[(&str, &str)]) -> String {
    let annotations: String = annotations
        .iter()
        .map(|(key, value)| format!("    haproxy-ingress.github.io/{key}: {value:?}\n"))
        .collect();
    let annotations = if annotations.is_empty() {
        "    {}\n".to_owned()
    } else {
        annotations
    };
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations:\n{annotations}spec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n"
    )
}

/// `GET /` for `host` from `source`, with extra header lines.
fn get_from(source: Ipv4Addr, port: u16, host: &str, headers: &str) -> Response {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((source, 0)).into()).unwrap();
    socket
        .connect(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())
        .unwrap();
    exchange(
        TcpStream::from(socket),
        format!("GET / HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n").as_bytes(),
    )
    .unwrap()
}

fn status(source: Ipv4Addr, port: u16, host: &str) -> u16 {
    get_from(source, port, host, "").status
}

/// `count` blocks `10.x.y.0/24`.
fn many_blocks(count: usize) -> String {
    (0..count)
        .map(|i| format!("10.{}.{}.0/24", i / 256, i % 256))
        .collect::<Vec<_>>()
        .join(",")
}

fn write(dir: &Path, name: &str, text: &str) {
    test_support::write_manifest(dir, name, text).unwrap();
}

/// The Ingress of `big.test`: 2000 blocks and the second client, then the first one too.
fn big_ingress(round: usize) -> String {
    let extra = if round == 0 { "" } else { ",127.0.0.1" };
    ingress(
        "big",
        "big.test",
        "web",
        &[(
            "allowlist-source-range",
            &format!("{},127.0.0.2{extra}", many_blocks(2000)),
        )],
    )
}

/// The allow list of `allow.test` in round `round`: the second client, then the first
/// one too.
fn allow_ingress(round: usize) -> String {
    let list = if round == 0 {
        "127.0.0.2/32, 2001:db8::/32".to_owned()
    } else {
        "127.0.0.2/32, 2001:db8::/32, 127.0.0.1".to_owned()
    };
    ingress(
        "allow",
        "allow.test",
        "web",
        &[("allowlist-source-range", &list)],
    )
}

#[test]
fn allow_and_deny_lists_refuse_with_403_and_a_changed_list_goes_live() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let mut objects = backend("default", "web", 80, None, &[(web.port, true)]);
    objects += &ingress(
        "deny",
        "deny.test",
        "web",
        &[("denylist-source-range", "127.0.0.2, 192.0.2.0/24")],
    );
    objects += &ingress(
        "header",
        "header.test",
        "web",
        &[
            ("allowlist-source-range", "10.1.0.0/16, !10.1.9.0/24"),
            ("allowlist-source-header", "X-Client-Address"),
        ],
    );
    objects += &ingress(
        "realip",
        "realip.test",
        "web",
        &[
            ("whitelist-source-range", "10.1.0.0/16"),
            ("allowlist-source-header", "X-Real-IP"),
        ],
    );
    objects += &ingress(
        "bad",
        "bad.test",
        "web",
        &[("allowlist-source-range", "127.0.0.0/8, 127.0.0.300")],
    );
    objects += &ingress("open", "open.test", "web", &[("waf", "modsecurity")]);
    // The second client is a trusted proxy: its X-Real-IP is kept.
    objects += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {forwardfor-trusted-cidrs: 127.0.0.2}\n";
    write(&manifests, "objects.yaml", &objects);
    write(&manifests, "allow.yaml", &allow_ingress(0));
    write(&manifests, "big.yaml", &big_ingress(0));
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            status(SECOND_CLIENT, p.http_port, "allow.test") == 200
        })
        .unwrap();
    let port = portcullis.http_port;
    let local = Ipv4Addr::LOCALHOST;

    // Allow list: only the second client.
    assert_eq!(status(local, port, "allow.test"), 403);
    assert_eq!(status(SECOND_CLIENT, port, "allow.test"), 200);
    // Deny list: everyone but the second client.
    assert_eq!(status(local, port, "deny.test"), 200);
    assert_eq!(status(SECOND_CLIENT, port, "deny.test"), 403);
    // A header names the client; its exception is refused, and so is a request without
    // it (the connection's address is not allowed).
    let with = |address: &str| {
        get_from(
            local,
            port,
            "header.test",
            &format!("X-Client-Address: {address}\r\n"),
        )
        .status
    };
    assert_eq!(with("10.1.2.3"), 200);
    assert_eq!(with("10.1.9.9"), 403, "an exception of the allow list");
    assert_eq!(with("10.2.0.1"), 403);
    assert_eq!(with("not-an-address"), 403);
    assert_eq!(status(local, port, "header.test"), 403);
    // X-Real-IP is set by HAProxy itself for an untrusted client: it cannot be forged.
    let forged = get_from(local, port, "realip.test", "X-Real-IP: 10.1.2.3\r\n");
    assert_eq!(forged.status, 403);
    // A trusted proxy's X-Real-IP is the client's address.
    let proxied = get_from(
        SECOND_CLIENT,
        port,
        "realip.test",
        "X-Real-IP: 10.1.2.3\r\n",
    );
    assert_eq!(proxied.status, 200);
    assert_eq!(status(SECOND_CLIENT, port, "realip.test"), 403);
    // 2001 entries, in a file.
    assert_eq!(status(local, port, "big.test"), 403);
    assert_eq!(status(SECOND_CLIENT, port, "big.test"), 200);
    // A list with a bad entry refuses everyone rather than serving unprotected.
    assert_eq!(status(local, port, "bad.test"), 403);
    assert_eq!(status(SECOND_CLIENT, port, "bad.test"), 403);
    assert_eq!(status(local, port, "open.test"), 200);
    let log = portcullis.log();
    for expected in [
        "'waf' is not supported",
        "'whitelist-source-range' is deprecated: use 'allowlist-source-range'",
        "allowlist-source-range]: invalid value: '127.0.0.300' is not an IP address",
    ] {
        assert!(log.contains(expected), "{expected}:\n{log}");
    }

    // The list changes: HAProxy takes it over the runtime API, without a reload.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    let starts = portcullis.metric("portcullis_haproxy_starts_total");
    write(&manifests, "allow.yaml", &allow_ingress(1));
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            status(local, p.http_port, "allow.test") == 200
        })
        .unwrap();
    assert_eq!(status(SECOND_CLIENT, port, "allow.test"), 200);
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "{}",
        portcullis.log()
    );
    assert_eq!(portcullis.metric("portcullis_haproxy_starts_total"), starts);
    assert_eq!(
        portcullis.metric("portcullis_runtime_failures_total"),
        Some(0.0)
    );
    // A list of 2001 entries changes (sent as `add acl` commands, many to a line).
    write(&manifests, "big.yaml", &big_ingress(1));
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            status(local, p.http_port, "big.test") == 200
        })
        .unwrap();
    assert_eq!(status(SECOND_CLIENT, port, "big.test"), 200);
    assert_eq!(status(local, port, "allow.test"), 200);
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);
    // And back.
    write(&manifests, "allow.yaml", &allow_ingress(0));
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            status(local, p.http_port, "allow.test") == 403
        })
        .unwrap();
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), reloads);
}

#[test]
fn request_rate_and_connection_limits_answer_429_per_client() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let held = HoldingBackend::start().unwrap();
    let mut objects = backend("default", "web", 80, None, &[(web.port, true)]);
    objects += &backend("default", "slow", 80, None, &[(held.port, true)]);
    objects += &ingress(
        "rps",
        "rps.test",
        "web",
        &[("limit-rps", "5"), ("limit-whitelist", "127.0.0.2")],
    );
    objects += &ingress(
        "conn",
        "conn.test",
        "slow",
        &[
            ("limit-connections", "1"),
            ("limit-conn-status-code", "503"),
        ],
    );
    write(&manifests, "objects.yaml", &objects);
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            status(SECOND_CLIENT, p.http_port, "rps.test") == 200
        })
        .unwrap();
    let port = portcullis.http_port;
    let local = Ipv4Addr::LOCALHOST;

    // A burst: the first five of a second pass, the rest get 429; the exempted client
    // is never limited.
    let mut burst = Vec::new();
    let started = Instant::now();
    for _ in 0..12 {
        burst.push(status(local, port, "rps.test"));
    }
    assert!(started.elapsed() < Duration::from_secs(1), "a slow burst");
    let passed = burst.iter().filter(|s| **s == 200).count();
    assert!((1..=5).contains(&passed), "{burst:?}");
    assert_eq!(burst.last(), Some(&429), "{burst:?}");
    assert!(burst.iter().all(|s| *s == 200 || *s == 429), "{burst:?}");
    for _ in 0..12 {
        assert_eq!(status(SECOND_CLIENT, port, "rps.test"), 200);
    }
    // Refused requests count too: once the client stops, the next seconds pass again.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(status(local, port, "rps.test"), 200);

    // One request in progress: a second one from the same client is refused with the
    // status asked for.
    let first = std::thread::spawn(move || status(local, port, "conn.test"));
    assert!(held.wait_for_request(Duration::from_secs(10)));
    assert_eq!(status(local, port, "conn.test"), 503);
    held.release();
    assert_eq!(first.join().unwrap(), 200);
}

/// A path's allow-list applies to the same path written otherwise (`//private`,
/// `/./private`, `/x/../private`, `/%70rivate`) once `normalize-paths` is on; before, such
/// a path was matched as written and reached the open `/`.
#[test]
fn with_normalized_paths_no_spelling_of_a_path_steps_around_its_allow_list() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let route = |name: &str, path: &str, annotations: &str| {
        format!(
            "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations: {{{annotations}}}\nspec:\n  rules:\n  - host: paths.test\n    http:\n      paths:\n      - {{path: {path}, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
        )
    };
    let objects = backend("default", "web", 80, None, &[(web.port, true)])
        + &route("open", "/", "")
        + &route(
            "private",
            "/private",
            "haproxy-ingress.github.io/allowlist-source-range: 10.0.0.0/8",
        );
    write(&manifests, "site.yaml", &objects);
    let configmap = |on: bool| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: portcullis, namespace: ops}}\ndata: {{normalize-paths: \"{on}\"}}\n"
        )
    };
    write(&manifests, "configmap.yaml", &configmap(false));
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/portcullis"],
    )
    .unwrap();
    let port = portcullis.http_port;
    let get = |path: &str| test_support::http_get(port, "paths.test", path).unwrap();
    assert_eq!(get("/private").status, 403);
    assert_eq!(get("//private").status, 200, "matched as written");

    write(&manifests, "configmap.yaml", &configmap(true));
    portcullis
        .wait_until(Duration::from_secs(10), |_| get("//private").status == 403)
        .unwrap();
    for path in [
        "/private",
        "/./private",
        "/x/../private",
        "/%70rivate",
        "/../private/a",
    ] {
        assert_eq!(get(path).status, 403, "{path}");
    }
    let public = get("/a/..//public/./b");
    assert_eq!(public.status, 200);
    assert_eq!(public.seen("path").as_deref(), Some("/public/b"));
}

/// `GET path` for `host` from `source`, with extra header lines: the status and who
/// answered.
fn answer_from(source: Ipv4Addr, port: u16, host: &str, path: &str, headers: &str) -> String {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((source, 0)).into()).unwrap();
    socket
        .connect(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())
        .unwrap();
    let response = exchange(
        TcpStream::from(socket),
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    response
        .server()
        .unwrap_or_else(|| response.status.to_string())
}

#[test]
fn a_default_backend_is_protected_by_its_ingress_s_allow_list_and_authentication() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    // One Ingress guards `/admin` and sends everything else to the same Service through its
    // default backend: the default backend's requests get the Ingress's keys too.
    let guarded = |annotations: &str| {
        format!(
            "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: shop\n  annotations: {{{annotations}}}\nspec:\n  defaultBackend: {{service: {{name: web, port: {{number: 80}}}}}}\n  rules:\n  - host: shop.test\n    http:\n      paths:\n      - {{path: /admin, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
        )
    };
    let mut objects = backend("default", "web", 80, None, &[(web.port, true)]);
    objects += "---\napiVersion: v1\nkind: Secret\nmetadata: {name: users, namespace: default}\nstringData:\n  auth: |\n    carol::plain-pass\n";
    write(&manifests, "objects.yaml", &objects);
    write(
        &manifests,
        "shop.yaml",
        &guarded("haproxy-ingress.github.io/allowlist-source-range: 127.0.0.2/32"),
    );
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let port = portcullis.http_port;
    let first = Ipv4Addr::LOCALHOST;
    for (host, path) in [
        ("shop.test", "/admin"),
        ("shop.test", "/other"),
        ("unknown.test", "/"),
    ] {
        assert_eq!(
            answer_from(first, port, host, path, ""),
            "403",
            "{host}{path}"
        );
        assert_eq!(
            answer_from(SECOND_CLIENT, port, host, path, ""),
            "web",
            "{host}{path}"
        );
    }

    write(
        &manifests,
        "shop.yaml",
        &guarded("haproxy-ingress.github.io/auth-secret: users"),
    );
    let credentials = "Authorization: Basic Y2Fyb2w6cGxhaW4tcGFzcw==\r\n";
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            answer_from(first, p.http_port, "unknown.test", "/", "") == "401"
        })
        .unwrap();
    for (host, path) in [("shop.test", "/other"), ("unknown.test", "/x")] {
        assert_eq!(
            answer_from(first, port, host, path, ""),
            "401",
            "{host}{path}"
        );
        assert_eq!(
            answer_from(first, port, host, path, credentials),
            "web",
            "{host}{path}"
        );
    }
}

/// `GET /a` for `host` from `source` on `port`, with an X-Forwarded-Proto when given.
fn fronted(source: Ipv4Addr, port: u16, host: &str, forwarded_proto: Option<&str>) -> Response {
    let header = forwarded_proto
        .map(|proto| format!("X-Forwarded-Proto: {proto}\r\n"))
        .unwrap_or_default();
    get_from(source, port, host, &header)
}

/// The status, the backend that answered, the X-Forwarded-Proto and -Port it saw, and
/// whether the answer has an HSTS header.
fn fronted_answer(
    source: Ipv4Addr,
    port: u16,
    host: &str,
    forwarded_proto: Option<&str>,
) -> (u16, Option<String>, Option<String>, Option<String>, bool) {
    let response = fronted(source, port, host, forwarded_proto);
    let seen = |header: &str| {
        response
            .echo()
            .and_then(|echo| echo["headers"][header].as_str().map(str::to_owned))
    };
    (
        response.status,
        response.server(),
        seen("x-forwarded-proto"),
        seen("x-forwarded-port"),
        response.headers.contains_key("strict-transport-security"),
    )
}

/// A proxy in front that terminates TLS (`fronting-proxy-port`): its HTTPS requests are
/// served as HTTPS ones (no redirect loop, HSTS, X-Forwarded-Proto `https`), on the HTTP
/// port it shares (believed from trusted proxies alone, once some are named) or on a
/// port of its own; its plain requests, and everyone else's, are redirected as before.
#[test]
fn a_fronting_proxy_that_terminates_tls_gets_no_redirect_loop() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let (cert, key) = test_support::self_signed("secure.test", &["secure.test"]);
    let mut objects = backend("default", "web", 80, None, &[(web.port, true)]);
    objects += &test_support::tls_secret("default", "secure-tls", &cert, &key);
    objects += "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: secure}\nspec:\n  tls:\n  - {hosts: [secure.test], secretName: secure-tls}\n  rules:\n  - host: secure.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n";
    objects += &ingress("plain", "plain.test", "web", &[]);
    objects += &ingress("root", "root.test", "web", &[("app-root", "/app")]);
    // A Gateway with a plain-HTTP listener only, as behind a proxy that terminates TLS.
    objects += "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: web, namespace: default}\nspec:\n  gatewayClassName: portcullis\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: gw, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n  hostnames: [gw.test]\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: gw-app, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n  hostnames: [app.gw.test]\n  rules: [{matches: [{path: {type: PathPrefix, value: /app}}], backendRefs: [{name: web, port: 80}]}]\n";
    // The usual Gateway API pair: its HTTP listener redirects to HTTPS, whose listener
    // serves the application.
    objects += "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: pair, namespace: default}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {name: http, protocol: HTTP, port: 80, hostname: redir.test}\n  - {name: https, protocol: HTTPS, port: 443, hostname: redir.test, tls: {certificateRefs: [{name: secure-tls}]}}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: to-https, namespace: default}\nspec:\n  parentRefs: [{name: pair, sectionName: http}]\n  rules: [{filters: [{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 301}}]}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: app, namespace: default}\nspec:\n  parentRefs: [{name: pair, sectionName: https}]\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n";
    write(&manifests, "objects.yaml", &objects);
    let global = |data: &str| {
        format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata: {{{data}}}\n"
        )
    };
    write(&manifests, "global.yaml", &global(""));
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    let http = portcullis.http_port;
    let client = Ipv4Addr::LOCALHOST;
    let redirected = (302, None, None, None, false);
    let served_as_https = (
        200,
        Some("web".to_owned()),
        Some("https".to_owned()),
        Some("443".to_owned()),
        true,
    );
    // No fronting proxy: a client's X-Forwarded-Proto changes nothing.
    assert_eq!(
        fronted_answer(client, http, "secure.test", Some("https")),
        redirected
    );

    // The proxy shares the HTTP port.
    write(
        &manifests,
        "global.yaml",
        &global(&format!("fronting-proxy-port: \"{http}\"")),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            fronted(client, http, "secure.test", Some("https")).status == 200
        })
        .unwrap();
    assert_eq!(
        fronted_answer(client, http, "secure.test", Some("https")),
        served_as_https
    );
    assert_eq!(
        fronted_answer(client, http, "secure.test", Some("HTTPS")),
        served_as_https
    );
    // The nearest proxy's header is the last one.
    let last_says_http = get_from(
        client,
        http,
        "secure.test",
        "X-Forwarded-Proto: https\r\nX-Forwarded-Proto: http\r\n",
    );
    assert_eq!(last_says_http.status, 302);
    for plain in [Some("http"), None] {
        assert_eq!(
            fronted_answer(client, http, "secure.test", plain),
            redirected,
            "{plain:?}"
        );
    }
    let served_plain = |port: u16| {
        (
            200,
            Some("web".to_owned()),
            Some("http".to_owned()),
            Some(port.to_string()),
            false,
        )
    };
    assert_eq!(
        fronted_answer(client, http, "plain.test", None),
        served_plain(http)
    );
    // Redirects that keep the request's scheme keep the proxy's HTTPS.
    let root = get_from(client, http, "root.test", "X-Forwarded-Proto: https\r\n");
    assert_eq!(
        root.headers.get("location").map(String::as_str),
        Some("https://root.test/app"),
        "{root:?}"
    );
    let root = get_from(client, http, "root.test", "");
    assert_eq!(
        root.headers.get("location").map(String::as_str),
        Some("http://root.test/app")
    );
    // A Gateway's HTTP listener redirects, its HTTPS listener serves the proxy's HTTPS.
    assert_eq!(
        fronted(client, http, "redir.test", None).status,
        301,
        "{}",
        portcullis.log()
    );
    let pair = fronted_answer(client, http, "redir.test", Some("https"));
    assert_eq!(
        (pair.0, pair.1.as_deref(), pair.2.as_deref()),
        (200, Some("web"), Some("https"))
    );
    // What only a plain-HTTP listener routes is served to the proxy's HTTPS requests.
    let gateway = fronted_answer(client, http, "gw.test", Some("https"));
    assert_eq!(
        (gateway.0, gateway.1.as_deref(), gateway.2.as_deref()),
        (200, Some("web"), Some("https"))
    );
    let location = fronted(client, http, "secure.test", None);
    assert_eq!(
        location.headers.get("location").map(String::as_str),
        Some(format!("https://secure.test:{}/", portcullis.https_port).as_str())
    );

    // Once trusted proxies are named, only they are believed on the shared port.
    write(
        &manifests,
        "global.yaml",
        &global(&format!(
            "fronting-proxy-port: \"{http}\", forwardfor-trusted-cidrs: 127.0.0.2"
        )),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            fronted(client, http, "secure.test", Some("https")).status == 302
        })
        .unwrap();
    assert_eq!(
        fronted_answer(SECOND_CLIENT, http, "secure.test", Some("https")),
        served_as_https
    );

    // A port of its own: every client there is the proxy; the HTTP port is plain again.
    let own = test_support::free_port();
    write(
        &manifests,
        "global.yaml",
        &global(&format!(
            "fronting-proxy-port: \"{own}\", forwardfor-trusted-cidrs: 127.0.0.2"
        )),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, own)).is_ok()
                && fronted(client, own, "secure.test", Some("https")).status == 200
        })
        .unwrap();
    assert_eq!(
        fronted_answer(client, own, "secure.test", Some("https")),
        served_as_https
    );
    assert_eq!(
        fronted_answer(client, own, "secure.test", Some("http")),
        redirected
    );
    assert_eq!(
        fronted_answer(client, own, "plain.test", None),
        served_plain(own)
    );
    // The proxy's plain requests are sent back to the proxy's HTTPS port, not HAProxy's.
    assert_eq!(
        fronted(client, own, "secure.test", Some("http"))
            .headers
            .get("location")
            .map(String::as_str),
        Some("https://secure.test/")
    );
    assert_eq!(
        fronted_answer(SECOND_CLIENT, http, "secure.test", Some("https")),
        redirected
    );

    // Without reading the header, every request on the proxy's port is an HTTPS one.
    write(
        &manifests,
        "global.yaml",
        &global(&format!(
            "fronting-proxy-port: \"{own}\", use-forwarded-proto: \"false\""
        )),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            fronted(client, own, "secure.test", None).status == 200
        })
        .unwrap();
    for proto in [None, Some("http")] {
        assert_eq!(
            fronted_answer(client, own, "secure.test", proto),
            served_as_https,
            "{proto:?}"
        );
    }

    // A port another listener holds is reported and not opened.
    write(
        &manifests,
        "global.yaml",
        &global(&format!(
            "fronting-proxy-port: \"{}\"",
            portcullis.https_port
        )),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            p.log().contains("data.fronting-proxy-port")
        })
        .unwrap();
    assert!(
        portcullis.log().contains(&format!(
            "port {} is taken by the HTTPS frontend (--https-port); fronting-proxy-port is not opened",
            portcullis.https_port
        )),
        "{}",
        portcullis.log()
    );
    assert_eq!(
        fronted_answer(client, http, "secure.test", Some("https")),
        redirected
    );

    // What no route takes is redirected; a Gateway hostname's unmatched path is a 404.
    write(
        &manifests,
        "global.yaml",
        &global("default-backend-redirect: https://landing.example/"),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |_| {
            fronted(client, http, "nowhere.test", None).status == 302
        })
        .unwrap();
    assert_eq!(
        fronted(client, http, "app.gw.test", None).status,
        404,
        "a Gateway hostname's path no rule matches"
    );
}
