//! Containment (invariant I5) through a real HAProxy: a victim tenant and hostile objects
//! beside it. The victim is served as written (backend and certificate), its later
//! changes land, a restart with the attackers present serves it, and every attacker is
//! reported: by `portcullis check` where conversion can tell, and at run time.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use test_support::{
    EchoServer, Portcullis, answer, backend, https_get, self_signed, self_signed_ed25519,
    tls_secret,
};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn ingress(
    namespace: &str,
    name: &str,
    annotations: &str,
    host: &str,
    tls_secret: Option<&str>,
    paths: &[(&str, &str)],
    service: &str,
) -> String {
    let tls = tls_secret
        .map(|secret| format!("  tls:\n  - {{hosts: [\"{host}\"], secretName: {secret}}}\n"))
        .unwrap_or_default();
    let mut text = format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: {namespace}\n  annotations: {{{annotations}}}\nspec:\n{tls}  rules:\n  - host: \"{host}\"\n    http:\n      paths:\n"
    );
    for (path, kind) in paths {
        text += &format!(
            "      - {{path: {}, pathType: {kind}, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n",
            serde_json::to_string(path).unwrap()
        );
    }
    text
}

fn route(name: &str, host: &str, matches: &str) -> String {
    format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: evil}}\nspec:\n  parentRefs: [{{name: gw}}]\n  hostnames: [{host}]\n  rules:\n  - matches: [{matches}]\n    backendRefs: [{{name: app, port: 80}}]\n"
    )
}

/// The victim's objects: `prod/web` behind `victim.test` with its own certificate.
fn victim(web: &EchoServer, cert: &(String, String), extra_paths: &[(&str, &str)]) -> String {
    let mut paths = vec![("/", "Prefix"), ("/admin", "Prefix")];
    paths.extend_from_slice(extra_paths);
    backend("prod", "web", 80, None, &[(web.port, true)])
        + &tls_secret("prod", "tls", &cert.0, &cert.1)
        + &ingress(
            "prod",
            "site",
            "",
            "victim.test",
            Some("tls"),
            &paths,
            "web",
        )
}

/// One object per way of hurting other tenants that the containment issue lists.
fn attackers(evil: &EchoServer) -> String {
    let (cert, _) = self_signed_ed25519("preprod.test", &["preprod.test"]);
    let (_, other_key) = self_signed_ed25519("other", &["other.test"]);
    let (ciphers_cert, ciphers_key) = self_signed_ed25519("ciphers.test", &["ciphers.test"]);
    let hijack = format!("/{}victim.test#/admin", "x".repeat(16_383));
    let headers: Vec<String> = (0..17)
        .map(|i| format!("{{name: h{i}, value: v}}"))
        .collect();
    backend("evil", "app", 80, None, &[(evil.port, true)])
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n"
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: evil}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {name: http, protocol: HTTP, port: 80}\n"
        + &ingress("evil", "hijack", "", "evil.test", None, &[(&hijack, "ImplementationSpecific")], "app")
        + &ingress("evil", "slow", "portcullis.dev/timeout-server: 25d", "slow.test", None, &[("/", "Prefix")], "app")
        + &ingress("evil", "payload", "", "payload.test", None, &[("/x<<", "Exact")], "app")
        + &route("flag-u", "flags.test", "{headers: [{name: x, value: \"-u\"}]}")
        + &route("flag-f", "flags.test", "{queryParams: [{name: x, value: \"-f\"}]}")
        + &route("regex", "regex.test", "{path: {type: RegularExpression, value: \"/(a\"}}")
        + &route("many", "many.test", &format!("{{headers: [{}]}}", headers.join(", ")))
        // Two Gateways wanting one port of their own with two protocols: one port is one
        // frontend, so neither listener is served (nothing is bound there).
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: clash-a, namespace: evil}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {name: plain, protocol: HTTP, port: 39123}\n"
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: clash-b, namespace: evil}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {name: secure, protocol: HTTPS, port: 39123, tls: {certificateRefs: [{name: tls}]}}\n"
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: clash, namespace: evil}\nspec:\n  parentRefs: [{name: clash-a}, {name: clash-b}]\n  hostnames: [clash.test]\n  rules: [{backendRefs: [{name: app, port: 80}]}]\n"
        // A Secret whose file name holds the victim's (`preprod_tls.pem` ends in
        // `prod_tls.pem`), with a key that does not match, of a kind portcullis does not
        // compare with its certificate (Ed25519): HAProxy refuses it.
        + &backend("preprod", "web", 80, None, &[(evil.port, true)])
        + &tls_secret("preprod", "tls", &cert, &other_key)
        + &ingress("preprod", "site", "", "preprod.test", Some("tls"), &[("/", "Prefix")], "web")
        // A cipher list OpenSSL selects nothing from, on the frontend every host shares
        // (HAProxy names only its `bind` line), and a host pattern with a numbered
        // reference, which HAProxy compiles without captures.
        + &tls_secret("evil", "tls", &ciphers_cert, &ciphers_key)
        + &ingress("evil", "ciphers", "portcullis.dev/ssl-ciphers: RC4", "ciphers.test", Some("tls"), &[("/", "Prefix")], "app")
        + &ingress("evil", "backref", "portcullis.dev/server-alias-regex: '(a)\\1[.]evil[.]test'", "backref.test", None, &[("/", "Prefix")], "app")
        + "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: escape, namespace: \"../../..\"}\nspec:\n  rules:\n  - host: escape.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}\n"
}

/// The victim's page over HTTPS: which backend answered, and the certificate served.
fn victim_page(portcullis: &Portcullis, path: &str) -> (Option<String>, String) {
    match https_get(portcullis.https_port, "victim.test", "victim.test", path) {
        Ok(reply) => (reply.response.server(), reply.certificate_cn),
        Err(err) => (None, err.to_string()),
    }
}

fn assert_victim_served(portcullis: &Portcullis) {
    for path in ["/", "/admin", "/admin/users"] {
        assert_eq!(
            victim_page(portcullis, path),
            (Some("victim".to_owned()), "victim.test".to_owned()),
            "{path}"
        );
    }
}

fn check_output(manifests: &Path, extra: &[&std::ffi::OsStr]) -> (bool, String) {
    let output = std::process::Command::new(BIN)
        .args(["check", "--manifests"])
        .arg(manifests)
        .args(extra)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

/// `check` finds a global ConfigMap port taken by the admin endpoint as `run` does.
#[test]
fn check_finds_a_configmap_port_the_admin_endpoint_takes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("global.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {healthz-port: \"10254\"}\n",
    )
    .unwrap();
    let configmap = ["--configmap".as_ref(), "ops/global".as_ref()];
    let (ok, report) = check_output(dir.path(), &configmap);
    assert!(!ok, "{report}");
    assert!(
        report.contains("ConfigMap ops/global: data.healthz-port: port 10254 is taken by the admin endpoint; healthz-port is not opened"),
        "{report}"
    );
    let elsewhere = [
        &configmap[..],
        &["--admin-bind".as_ref(), "127.0.0.1:10300".as_ref()],
    ]
    .concat();
    let (ok, report) = check_output(dir.path(), &elsewhere);
    assert!(ok, "{report}");
    // The admin endpoint on a frontend's port: said by check, and run refuses to start.
    let on_http = [
        &configmap[..],
        &["--admin-bind".as_ref(), "127.0.0.1:10300".as_ref()],
        &["--http-port".as_ref(), "10300".as_ref()],
    ]
    .concat();
    let (ok, report) = check_output(dir.path(), &on_http);
    assert!(!ok, "{report}");
    assert!(
        report.contains("--admin-bind 127.0.0.1:10300 takes the port of --http-port (10300), where HAProxy's frontend listens"),
        "{report}"
    );
    let run = std::process::Command::new(BIN)
        .args(["run", "--manifests"])
        .arg(dir.path())
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .args(["--admin-bind", "127.0.0.1:10300", "--https-port", "10300"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("takes the port of --https-port (10300)"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn hostile_objects_hurt_no_other_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("victim").unwrap();
    let evil = EchoServer::start("attacker").unwrap();
    let cert = self_signed("victim.test", &["victim.test"]);
    std::fs::write(manifests.join("victim.yaml"), victim(&web, &cert, &[])).unwrap();
    std::fs::write(manifests.join("attackers.yaml"), attackers(&evil)).unwrap();

    // `check` names every attacker conversion can judge; the victim is not named.
    let (ok, report) = check_output(&manifests, &[]);
    assert!(!ok, "{report}");
    for attacker in [
        "Ingress evil/hijack",
        "Ingress evil/slow",
        "Ingress evil/payload",
        "HTTPRoute evil/regex",
        "HTTPRoute evil/many",
        "Ingress evil/backref: metadata.annotations[portcullis.dev/server-alias-regex]",
        // The newer of two Gateways on one port of their own with other protocols.
        "HTTPRoute evil/clash: spec.parentRefs[1]: no listener of Gateway evil/clash-b accepts",
        // Listeners' problems, otherwise only in the Gateways' status.
        "Gateway evil/clash-b: listener secure: ",
        "../../..",
    ] {
        assert!(
            report.contains(attacker),
            "{attacker} not reported:\n{report}"
        );
    }
    assert!(
        !report.contains("prod/site") || report.contains("preprod/site"),
        "{report}"
    );
    assert!(
        !report.lines().any(|l| l.contains(" prod/")),
        "the victim is reported:\n{report}"
    );
    // With HAProxy to judge, `check` also names what only HAProxy and OpenSSL refuse:
    // the cipher list, and the Secret whose key does not match its certificate.
    let haproxy = haproxy_binary();
    let (ok, judged) = check_output(&manifests, &["--haproxy-bin".as_ref(), haproxy.as_os_str()]);
    assert!(!ok, "{judged}");
    assert!(
        judged.contains("Ingress evil/ciphers: (whole object): HAProxy refused the configuration this object renders to, so it is left out until it changes: Proxy 'https': unable to set SSL cipher list to 'RC4' for bind '0.0.0.0:443' at [haproxy.cfg:"),
        "{judged}"
    );
    assert!(
        judged.contains("Secret preprod/tls: HAProxy refuses its certificate, and its hosts are served with the default one: parsing [haproxy.cfg:"),
        "{judged}"
    );
    assert!(
        !judged
            .lines()
            .any(|l| l.contains(" prod/") || l.starts_with("HAProxy refuses")),
        "the victim is named, or a refusal no object explains:\n{judged}"
    );

    let state = dir.path().join("state");
    let mut portcullis = Portcullis::start(BIN, &manifests, &state, &[]).unwrap();
    assert_victim_served(&portcullis);
    // The clashing listeners' port has one frontend, the older Gateway's (checked in the
    // configuration: a connection test would see whatever else on this machine holds
    // the port, which would leave it out).
    let config = std::fs::read_to_string(state.join("haproxy.cfg")).unwrap();
    let held_by_another_process = portcullis
        .log()
        .contains("another process holds ports the configuration would bind");
    assert_eq!(
        config.matches("bind 127.0.0.1:39123").count(),
        usize::from(!held_by_another_process),
        "{config}"
    );
    assert!(
        !report.contains("Gateway evil/clash-a: listener plain: "),
        "{report}"
    );
    // No attacker route took the victim's place, and the refused ones serve nothing.
    assert_eq!(answer(portcullis.http_port, "victim.test", "/admin"), "302");
    for host in [
        "evil.test",
        "payload.test",
        "flags.test",
        "regex.test",
        "many.test",
        "clash.test",
    ] {
        assert_eq!(answer(portcullis.http_port, host, "/"), "404", "{host}");
    }
    // A value that looks like one of HAProxy's flags is only a value: matched literally.
    assert_eq!(
        answer(portcullis.http_port, "flags.test", "/?x=-f"),
        "attacker"
    );
    let flagged = test_support::http_request(
        portcullis.http_port,
        "GET / HTTP/1.1\r\nHost: flags.test\r\nx: -u\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(flagged.server().as_deref(), Some("attacker"));
    // An out-of-range timeout falls back to the default and the rest of the object serves.
    assert_eq!(answer(portcullis.http_port, "slow.test", "/"), "attacker");
    // HAProxy refused only the preprod certificate, named exactly: its host falls back
    // to the default certificate, and the victim keeps its own.
    let preprod = https_get(portcullis.https_port, "preprod.test", "preprod.test", "/").unwrap();
    assert_eq!(preprod.certificate_cn, "portcullis default certificate");
    assert!(
        portcullis.log().contains("Secret preprod/tls"),
        "{}",
        portcullis.log()
    );
    // The host whose cipher list HAProxy refused is left out, named by the value.
    assert!(
        portcullis.log().contains("Ingress evil/ciphers"),
        "{}",
        portcullis.log()
    );
    assert_eq!(answer(portcullis.http_port, "ciphers.test", "/"), "404");
    assert!(!state.join("../../..").join("certs").exists());
    assert!(
        portcullis
            .metric("portcullis_configuration_errors")
            .unwrap_or(0.0)
            >= 7.0
    );

    // A later change of the victim lands while the attackers stay.
    std::fs::write(
        manifests.join("victim.yaml"),
        victim(&web, &cert, &[("/new", "Exact")]),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            victim_page(p, "/new").0.as_deref() == Some("victim")
        })
        .unwrap();

    // Gateway listeners on ports HAProxy already holds for something else.
    let gateway = format!(
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: ports, namespace: evil}}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {{name: admin, protocol: HTTP, port: {admin}}}\n  - {{name: configured, protocol: HTTP, port: {http}}}\n  - {{name: wrong, protocol: HTTPS, port: {http}, tls: {{certificateRefs: [{{name: tls}}]}}}}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: on-ports, namespace: evil}}\nspec:\n  parentRefs: [{{name: ports}}]\n  hostnames: [ports.test]\n  rules: [{{backendRefs: [{{name: app, port: 80}}]}}]\n",
        admin = portcullis.admin_port,
        http = portcullis.http_port,
    );
    std::fs::write(manifests.join("ports.yaml"), gateway).unwrap();
    // The listener on the configured HTTP port is the HTTP frontend's, not a second one.
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            answer(p.http_port, "ports.test", "/") == "attacker"
        })
        .unwrap();
    assert_eq!(portcullis.admin("/readyz").unwrap().status, 200);
    assert_victim_served(&portcullis);

    // A restart with every attacker present serves the victim.
    assert!(portcullis.stop().unwrap(), "clean exit");
    let portcullis = Portcullis::start(BIN, &manifests, &state, &[]).unwrap();
    assert_victim_served(&portcullis);
    assert_eq!(
        victim_page(&portcullis, "/new").0.as_deref(),
        Some("victim")
    );
    // (The restarted controller has ports of its own: the Gateway's listeners now name
    // other ports, which get frontends of their own.)
    assert_eq!(portcullis.admin("/syncz").unwrap().status, 200);
}

#[test]
fn forwarded_headers_are_the_proxys_not_the_clients() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let objects = backend("default", "web", 80, None, &[(web.port, true)])
        + &ingress(
            "default",
            "site",
            "",
            "app.test",
            None,
            &[("/", "Prefix")],
            "web",
        );
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let request = "GET / HTTP/1.1\r\nHost: app.test\r\nX-Forwarded-For: 6.6.6.6\r\nX-Real-IP: 6.6.6.6\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: bank.test\r\nX-Forwarded-Port: 1\r\nForwarded: for=6.6.6.6\r\nConnection: close\r\n\r\n";
    let reply = test_support::http_request(portcullis.http_port, request).unwrap();
    let echo = reply.echo().unwrap();
    let header = |name: &str| echo["headers"][name].as_str().map(str::to_owned);
    assert_eq!(
        header("x-forwarded-for").as_deref(),
        Some("127.0.0.1"),
        "{echo}"
    );
    assert_eq!(
        header("x-original-forwarded-for").as_deref(),
        Some("6.6.6.6"),
        "{echo}"
    );
    assert_eq!(header("x-real-ip").as_deref(), Some("127.0.0.1"), "{echo}");
    assert_eq!(
        header("x-forwarded-proto").as_deref(),
        Some("http"),
        "{echo}"
    );
    assert_eq!(
        header("x-forwarded-host").as_deref(),
        Some("app.test"),
        "{echo}"
    );
    assert_eq!(
        header("x-forwarded-port"),
        Some(portcullis.http_port.to_string()),
        "{echo}"
    );
    assert_eq!(header("forwarded"), None, "{echo}");

    // A trusted proxy in front keeps what it said.
    std::fs::write(
        manifests.join("global.yaml"),
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {forwardfor-trusted-cidrs: \"127.0.0.0/8\"}\n",
    )
    .unwrap();
    drop(portcullis);
    let portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state2"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    let reply = test_support::http_request(portcullis.http_port, request).unwrap();
    let echo = reply.echo().unwrap();
    let header = |name: &str| echo["headers"][name].as_str().map(str::to_owned);
    // Its X-Forwarded-For is kept (HAProxy appends the address in a line of its own, the
    // last one the echo backend shows), not moved aside.
    assert_eq!(header("x-original-forwarded-for"), None, "{echo}");
    assert_eq!(header("x-real-ip").as_deref(), Some("6.6.6.6"), "{echo}");
    assert_eq!(
        header("x-forwarded-proto").as_deref(),
        Some("https"),
        "{echo}"
    );
    assert_eq!(
        header("x-forwarded-host").as_deref(),
        Some("bank.test"),
        "{echo}"
    );
    assert_eq!(
        header("forwarded").as_deref(),
        Some("for=6.6.6.6"),
        "{echo}"
    );
}

/// A Gateway listener on a port another process holds would stop HAProxy from starting:
/// it is left out (status `PortUnavailable`) while everything else is served, and served
/// once the port is free.
#[test]
fn a_listener_port_another_process_holds_is_left_out_until_it_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("victim").unwrap();
    let app = EchoServer::start("gateway-app").unwrap();
    let cert = self_signed("victim.test", &["victim.test"]);
    let port = test_support::free_port();
    let holder = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::fs::write(manifests.join("victim.yaml"), victim(&web, &cert, &[])).unwrap();
    std::fs::write(
        manifests.join("gateway.yaml"),
        backend("team", "app", 80, None, &[(app.port, true)])
            + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n"
            + &format!("---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: gw, namespace: team}}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {{name: own, protocol: HTTP, port: {port}}}\n")
            + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: app, namespace: team}\nspec:\n  parentRefs: [{name: gw}]\n  hostnames: [app.test]\n  rules: [{backendRefs: [{name: app, port: 80}]}]\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    let mut portcullis = Portcullis::start(BIN, &manifests, &state, &[]).unwrap();
    assert_victim_served(&portcullis);
    let status = portcullis.admin("/status").unwrap().body;
    assert!(
        status.contains(&format!("port {port} is in use by another process")),
        "{status}"
    );

    drop(holder);
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            answer(port, "app.test", "/") == "gateway-app"
        })
        .unwrap_or_else(|_| panic!("the freed port is never served:\n{}", portcullis.log()));
    assert_victim_served(&portcullis);
}

/// A port of the global ConfigMap's own (the health check's here) that another process
/// holds would stop HAProxy from starting: it is reported and left closed while the rest
/// is served, and opened once it is free.
#[test]
fn a_configmap_port_another_process_holds_is_left_closed_until_it_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("victim").unwrap();
    let cert = self_signed("victim.test", &["victim.test"]);
    let port = test_support::free_port();
    let holder = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::fs::write(
        manifests.join("victim.yaml"),
        victim(&web, &cert, &[])
            + &format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata: {{healthz-port: \"{port}\"}}\n"),
    )
    .unwrap();
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    assert_victim_served(&portcullis);
    let log = portcullis.log();
    assert!(
        log.contains(&format!("ConfigMap ops/global: data.healthz-port: port {port} is in use by another process on this machine; healthz-port is not opened until it is free")),
        "{log}"
    );

    drop(holder);
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            test_support::http_get(port, "any", "/healthz").is_ok_and(|r| r.status == 200)
        })
        .unwrap_or_else(|_| panic!("the freed port is never opened:\n{}", portcullis.log()));
    assert_victim_served(&portcullis);
}

/// A manifest directory holding what would block, exhaust or loop a naive reader: the
/// victim is served, each entry is reported, and a later change of the victim lands.
#[test]
fn a_hostile_manifest_directory_hurts_no_tenant() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("victim").unwrap();
    let cert = self_signed("victim.test", &["victim.test"]);
    std::fs::write(manifests.join("victim.yaml"), victim(&web, &cert, &[])).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(manifests.join("blocker.yaml"))
        .status()
        .unwrap();
    assert!(fifo.success());
    symlink("/dev/zero", manifests.join("zero.yaml")).unwrap();
    let looped = manifests.join("loop");
    std::fs::create_dir(&looped).unwrap();
    symlink("..", looped.join("up1")).unwrap();
    symlink("..", looped.join("up2")).unwrap();
    std::fs::write(
        manifests.join("huge.yaml"),
        format!("# {}\n", "x".repeat(128 * 1024)),
    )
    .unwrap();
    let state = dir.path().join("state");
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &state, &["--max-manifest-bytes", "65536"]).unwrap();
    assert_victim_served(&portcullis);
    let log = portcullis.log();
    for reported in [
        "blocker.yaml: not a regular file (a FIFO)",
        "zero.yaml: not a regular file (a character device)",
        "symbolic-link loop",
        "huge.yaml: larger than 65536 bytes",
    ] {
        assert!(log.contains(reported), "{reported} not reported:\n{log}");
    }

    // The victim's change (new servers) lands as usual.
    let moved = EchoServer::start("victim-moved").unwrap();
    std::fs::write(manifests.join("victim.yaml"), victim(&moved, &cert, &[])).unwrap();
    portcullis
        .wait_until(Duration::from_secs(20), |p| {
            victim_page(p, "/").0.as_deref() == Some("victim-moved")
        })
        .unwrap_or_else(|_| panic!("the victim's change never lands:\n{}", portcullis.log()));
}

/// The haproxy executable the controller would find.
fn haproxy_binary() -> std::path::PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .chain([std::path::PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file())
        .expect("haproxy is installed")
}

#[test]
fn check_with_haproxy_says_what_haproxy_refuses_of_the_global_configmap() {
    let dir = tempfile::tempdir().unwrap();
    let web = EchoServer::start("web").unwrap();
    let cert = self_signed("web.test", &["web.test"]);
    std::fs::write(
        dir.path().join("objects.yaml"),
        victim(&web, &cert, &[])
            + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {ssl-ciphers: RC4}\n",
    )
    .unwrap();
    let configmap = ["--configmap".as_ref(), "ops/global".as_ref()];
    // Conversion alone finds nothing wrong: only OpenSSL knows RC4 selects nothing.
    let (ok, report) = check_output(dir.path(), &configmap);
    assert!(ok, "{report}");
    let haproxy = haproxy_binary();
    let judged = [
        &configmap[..],
        &["--haproxy-bin".as_ref(), haproxy.as_os_str()],
    ]
    .concat();
    let (ok, report) = check_output(dir.path(), &judged);
    assert!(!ok, "{report}");
    assert!(
        report.contains("ConfigMap ops/global: data: HAProxy refuses a line no Ingress, route or Secret gives, so one of the global settings (this ConfigMap's keys, or the command line) is likely the cause; the last good configuration stays live: ")
            && report.contains("unable to set SSL cipher list to 'RC4'"),
        "{report}"
    );
    assert!(
        !report.contains(&dir.path().display().to_string()),
        "{report}"
    );

    // Without the bad value, HAProxy accepts what the manifests give.
    std::fs::write(dir.path().join("objects.yaml"), victim(&web, &cert, &[])).unwrap();
    let (ok, report) = check_output(dir.path(), &judged);
    assert!(ok, "{report}");
}
