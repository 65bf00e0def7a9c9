//! TLS passthrough through a real HAProxy: names passed through reach a backend that
//! terminates TLS itself, while every other name on the same port is terminated by
//! HAProxy and routed by HTTP rules; names come and go live.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use test_support::{
    EchoServer, Portcullis, TlsEchoServer, backend, http_get, https_get, self_signed, tls_secret,
    write_manifest,
};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// An Ingress of `hosts` to Service `service` port `port`, with annotations.
fn ingress(name: &str, annotations: &str, hosts: &[&str], service: &str, port: u16) -> String {
    let mut text = format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations: {{{annotations}}}\nspec:\n  rules:\n"
    );
    for host in hosts {
        text += &format!(
            "  - host: \"{host}\"\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: {port}}}}}}}}}\n"
        );
    }
    text
}

const PASSTHROUGH: &str = "haproxy-ingress.github.io/ssl-passthrough: \"true\"";

struct Setup {
    dir: tempfile::TempDir,
    _secure: TlsEchoServer,
    _web: EchoServer,
    portcullis: Portcullis,
}

impl Setup {
    fn manifests(&self) -> std::path::PathBuf {
        self.dir.path().join("manifests")
    }
}

/// `secure` (port 443) terminates TLS itself as "secure backend"; `web` (port 80) is a
/// plain echo; `www.terminated.test` is an HTTPS host HAProxy terminates.
fn start(passthrough_objects: &str) -> Setup {
    start_with(passthrough_objects, &[])
}

/// As [`start`], with more command-line flags.
fn start_with(passthrough_objects: &str, flags: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let secure = TlsEchoServer::start("secure", "secure backend").unwrap();
    let web = EchoServer::start("web").unwrap();
    let (cert, key) = self_signed("www.terminated.test", &["www.terminated.test"]);
    let mut objects = backend("default", "secure", 443, None, &[(secure.port, true)]);
    objects += &backend("default", "web", 80, None, &[(web.port, true)]);
    objects += &tls_secret("default", "www-tls", &cert, &key);
    objects += "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: www}\nspec:\n  tls:\n  - {hosts: [www.terminated.test], secretName: www-tls}\n  rules:\n  - host: www.terminated.test\n    http:\n      paths:\n      - {path: /app, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n";
    write_manifest(&manifests, "site.yaml", &objects).unwrap();
    write_manifest(&manifests, "passthrough.yaml", passthrough_objects).unwrap();
    let portcullis = Portcullis::start(BIN, &manifests, &dir.path().join("state"), flags).unwrap();
    Setup {
        dir,
        _secure: secure,
        _web: web,
        portcullis,
    }
}

/// The certificate's common name and the answering backend for `sni`, or the error.
fn through(port: u16, sni: &str) -> String {
    match https_get(port, sni, sni, "/app/x") {
        Ok(reply) => format!(
            "{} / {}",
            reply.certificate_cn,
            reply
                .response
                .server()
                .unwrap_or_else(|| reply.response.status.to_string())
        ),
        Err(err) => format!("error: {err}"),
    }
}

/// Sends one command to the worker's runtime API, as an operator would with socat.
fn runtime_command(state: &Path, command: &str) -> String {
    use std::io::{Read, Write};
    let mut socket = std::os::unix::net::UnixStream::connect(state.join("run/admin.sock")).unwrap();
    socket.write_all(format!("{command}\n").as_bytes()).unwrap();
    let mut reply = String::new();
    socket.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn a_passthrough_name_reaches_a_backend_terminating_tls_while_other_names_are_terminated_on_the_same_port()
 {
    let setup = start(&ingress(
        "secure",
        PASSTHROUGH,
        &["a.passthrough.test"],
        "secure",
        443,
    ));
    let (http, https) = (setup.portcullis.http_port, setup.portcullis.https_port);
    // The backend's own certificate: HAProxy did not terminate the connection.
    assert_eq!(
        through(https, "a.passthrough.test"),
        "secure backend / secure"
    );
    // Another name on the same port: HAProxy's certificate, and its HTTP routing.
    assert_eq!(
        through(https, "www.terminated.test"),
        "www.terminated.test / web"
    );
    let reply = https_get(
        https,
        "www.terminated.test",
        "www.terminated.test",
        "/other",
    )
    .unwrap();
    assert_eq!(
        reply.response.status, 404,
        "routed by HTTP rules: {reply:?}"
    );
    // The terminated path still sees the real client, through the PROXY protocol hop.
    let reply = https_get(https, "www.terminated.test", "www.terminated.test", "/app").unwrap();
    let echo = reply.response.echo().unwrap();
    assert_eq!(echo["headers"]["x-forwarded-for"], "127.0.0.1", "{echo}");
    assert_eq!(
        echo["headers"]["x-forwarded-port"],
        https.to_string(),
        "{echo}"
    );
    // Unknown names are terminated with the default certificate.
    assert_eq!(
        through(https, "unknown.test"),
        "portcullis default certificate / 404"
    );
    // Plain HTTP to a passthrough host is redirected to HTTPS.
    let redirect = http_get(http, "a.passthrough.test", "/x?y=1").unwrap();
    assert_eq!(redirect.status, 302);
    assert_eq!(
        redirect.headers.get("location").map(String::as_str),
        Some(format!("https://a.passthrough.test:{https}/x?y=1").as_str())
    );
}

#[test]
fn passthrough_names_are_added_and_removed_live_without_a_reload() {
    let one = ingress(
        "secure",
        PASSTHROUGH,
        &["a.passthrough.test"],
        "secure",
        443,
    );
    let mut setup = start(&one);
    let https = setup.portcullis.https_port;
    assert_eq!(
        through(https, "a.passthrough.test"),
        "secure backend / secure"
    );
    assert_eq!(
        through(https, "b.passthrough.test"),
        "portcullis default certificate / 404"
    );
    let reloads = setup.portcullis.metric_total("portcullis_reloads_total");
    let two = ingress(
        "secure",
        PASSTHROUGH,
        &["a.passthrough.test", "b.passthrough.test"],
        "secure",
        443,
    );
    write_manifest(&setup.manifests(), "passthrough.yaml", &two).unwrap();
    setup
        .portcullis
        .wait_until(Duration::from_secs(10), |p| {
            through(p.https_port, "b.passthrough.test") == "secure backend / secure"
        })
        .unwrap();
    let state = setup.portcullis.state_dir.clone();
    let live = runtime_command(&state, "show map maps/passthrough.map");
    assert!(
        live.contains("b.passthrough.test default_secure_443_passthrough"),
        "{live}"
    );
    write_manifest(&setup.manifests(), "passthrough.yaml", &one).unwrap();
    setup
        .portcullis
        .wait_until(Duration::from_secs(10), |p| {
            through(p.https_port, "b.passthrough.test") == "portcullis default certificate / 404"
        })
        .unwrap();
    let live = runtime_command(&state, "show map maps/passthrough.map");
    assert!(!live.contains("b.passthrough.test"), "{live}");
    assert_eq!(
        through(https, "a.passthrough.test"),
        "secure backend / secure"
    );
    assert_eq!(
        setup.portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "{}",
        setup.portcullis.log()
    );
}

#[test]
fn https_log_format_logs_each_connection_of_the_sni_frontend() {
    let objects = ingress(
        "secure",
        PASSTHROUGH,
        &["a.passthrough.test"],
        "secure",
        443,
    ) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {https-log-format: json}\n";
    let mut setup = start_with(&objects, &["--configmap", "ops/global"]);
    let https = setup.portcullis.https_port;
    assert_eq!(
        through(https, "a.passthrough.test"),
        "secure backend / secure"
    );
    let terminated = through(https, "www.terminated.test");
    assert!(terminated.ends_with("/ web"), "{terminated}");
    let passed = r#""frontend":"https_sni","backend":"default_secure_443_passthrough","server":"#;
    let handed_on = r#""frontend":"https_sni","backend":"_https_terminate""#;
    let sni = r#""sni":"a.passthrough.test""#;
    // HAProxy's access log goes to standard output; a connection's line is written when
    // it closes, which a loaded machine (the whole suite on two cores) can delay.
    let wait = setup.portcullis.wait_until(Duration::from_secs(30), |p| {
        let log = p.stdout();
        log.lines().any(|l| l.contains(passed) && l.contains(sni))
            && log.lines().any(|l| l.contains(handed_on))
    });
    assert!(wait.is_ok(), "{}", setup.portcullis.stdout());

    // Without the key the SNI frontend does not log (haproxy-ingress's default); the
    // HTTPS frontend still logs the requests it terminates.
    let quiet = start(&ingress(
        "secure",
        PASSTHROUGH,
        &["a.passthrough.test"],
        "secure",
        443,
    ));
    let https = quiet.portcullis.https_port;
    assert_eq!(
        through(https, "a.passthrough.test"),
        "secure backend / secure"
    );
    assert!(through(https, "www.terminated.test").ends_with("/ web"));
    std::thread::sleep(Duration::from_millis(300));
    let log = quiet.portcullis.stdout();
    assert!(log.contains("/app/x"), "{log}");
    assert!(!log.contains("https_sni"), "{log}");
}

#[test]
fn ssl_passthrough_http_port_sends_plain_http_to_the_services_http_port() {
    let objects = ingress(
        "secure",
        &format!("{PASSTHROUGH}, haproxy-ingress.github.io/ssl-passthrough-http-port: \"80\""),
        &["a.passthrough.test"],
        "secure",
        443,
    );
    // `secure` gets a plain-HTTP port 80, served by the plain echo.
    let setup = start(&objects);
    let web_port = setup._web.port;
    let both = format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: secure, namespace: default}}\nspec:\n  ports:\n  - {{port: 443, name: https}}\n  - {{port: 80, name: http}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: secure-0\n  namespace: default\n  labels: {{kubernetes.io/service-name: secure}}\naddressType: IPv4\nports:\n- {{name: https, port: {}}}\n- {{name: http, port: {web_port}}}\nendpoints:\n- addresses: [127.0.0.1]\n  conditions: {{ready: true}}\n",
        setup._secure.port
    );
    write_manifest(&setup.manifests(), "secure-service.yaml", &both).unwrap();
    // The first file's single-port Service is replaced by this one.
    let site = std::fs::read_to_string(setup.manifests().join("site.yaml")).unwrap();
    let site: String = site
        .split("---\n")
        .filter(|doc| !doc.contains("name: secure"))
        .map(|doc| format!("---\n{doc}"))
        .collect();
    write_manifest(&setup.manifests(), "site.yaml", &site).unwrap();
    let manifests = setup.manifests();
    let mut portcullis = setup.portcullis;
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            http_get(p.http_port, "a.passthrough.test", "/plain")
                .ok()
                .and_then(|r| r.server())
                .as_deref()
                == Some("web")
        })
        .unwrap_or_else(|err| panic!("{err}: {}", portcullis.log()));
    assert_eq!(
        through(portcullis.https_port, "a.passthrough.test"),
        "secure backend / secure"
    );

    // An allow list on a passthrough host applies to its plain-HTTP route as to any
    // path, and to its TLS connections by their source address; authentication, which
    // cannot be applied to them, refuses them.
    let guarded = |name: &str, host: &str, keys: &str| {
        ingress(
            name,
            &format!(
                "{PASSTHROUGH}, haproxy-ingress.github.io/ssl-passthrough-http-port: \"80\", {keys}"
            ),
            &[host],
            "secure",
            443,
        )
    };
    let objects = guarded(
        "guarded",
        "b.passthrough.test",
        "haproxy-ingress.github.io/allowlist-source-range: 10.0.0.0/8",
    ) + &guarded(
        "welcome",
        "c.passthrough.test",
        "haproxy-ingress.github.io/allowlist-source-range: 127.0.0.0/8, haproxy-ingress.github.io/limit-connections: \"5\"",
    ) + &guarded(
        "denied",
        "d.passthrough.test",
        "haproxy-ingress.github.io/denylist-source-range: 127.0.0.1/32",
    ) + &guarded(
        "authed",
        "e.passthrough.test",
        "haproxy-ingress.github.io/auth-url: http://127.0.0.1:9/auth",
    );
    write_manifest(&manifests, "guarded.yaml", &objects).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            http_get(p.http_port, "b.passthrough.test", "/plain").is_ok_and(|r| r.status == 403)
        })
        .unwrap_or_else(|err| panic!("{err}: {}", portcullis.log()));
    let https = portcullis.https_port;
    for (sni, served) in [
        ("a.passthrough.test", true),
        ("b.passthrough.test", false),
        ("c.passthrough.test", true),
        ("d.passthrough.test", false),
        ("e.passthrough.test", false),
    ] {
        let answer = through(https, sni);
        assert_eq!(
            answer == "secure backend / secure",
            served,
            "{sni}: {answer}\n{}",
            portcullis.log()
        );
        if !served {
            assert!(answer.starts_with("error: "), "{sni}: {answer}");
        }
    }
    assert_eq!(
        http_get(portcullis.http_port, "c.passthrough.test", "/plain")
            .unwrap()
            .server()
            .as_deref(),
        Some("web")
    );
    let log = portcullis.log();
    assert!(
        log.contains("Ingress default/authed: spec.rules[0].http.paths[0]: authentication cannot be applied to TLS connections passed through untouched"),
        "{log}"
    );
    assert!(
        log.contains("Ingress default/welcome: spec.rules[0].http.paths[0]: limit-connections, limit-rps and limit-whitelist count HTTP requests"),
        "{log}"
    );
}

#[test]
fn a_tls_route_passes_its_names_through_a_gateway_tls_listener() {
    let gateway = "---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: portcullis}
spec: {controllerName: portcullis.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: default}
spec:
  gatewayClassName: portcullis
  listeners:
  - {name: tls, protocol: TLS, port: 443, tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: secure, namespace: default}
spec:
  parentRefs: [{name: edge}]
  hostnames: [\"*.passthrough.test\"]
  rules: [{backendRefs: [{name: secure, port: 443}]}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: broken, namespace: default}
spec:
  parentRefs: [{name: edge}]
  hostnames: [refused.test]
  rules: [{backendRefs: [{name: nosuch, port: 443}]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: default}
spec:
  tls:
  - {hosts: [shop.passthrough.test], secretName: www-tls}
  rules:
  - host: shop.passthrough.test
    http:
      paths:
      - {path: /app, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
";
    let setup = start(gateway);
    let https = setup.portcullis.https_port;
    // A Gateway API wildcard covers one or more labels.
    for sni in ["a.passthrough.test", "a.b.passthrough.test"] {
        assert_eq!(through(https, sni), "secure backend / secure", "{sni}");
    }
    assert_eq!(
        through(https, "passthrough.test"),
        "portcullis default certificate / 404",
        "the wildcard does not cover its own suffix"
    );
    assert_eq!(
        through(https, "www.terminated.test"),
        "www.terminated.test / web"
    );
    // An HTTPS host under the wildcard is the more specific name: HAProxy terminates it.
    assert_eq!(
        through(https, "shop.passthrough.test"),
        "www.terminated.test / web"
    );
    // An invalid backend: the connections are refused, not terminated by HAProxy.
    let refused = through(https, "refused.test");
    assert!(refused.starts_with("error:"), "{refused}");
    let log = setup.portcullis.log();
    assert!(
        log.contains("TLSRoute default/broken: spec.rules[0].backendRefs[0]: service default/nosuch not found; its connections are refused"),
        "{log}"
    );

    // Once nothing is served over HTTPS, a name no route has is refused (as the Gateway
    // API asks), not answered with the default certificate and a 404.
    let mut setup = setup;
    let manifests = setup.manifests();
    let site = std::fs::read_to_string(manifests.join("site.yaml")).unwrap();
    let without_https = site
        .split("---\napiVersion: networking.k8s.io/v1\nkind: Ingress")
        .next()
        .unwrap();
    write_manifest(&manifests, "site.yaml", without_https).unwrap();
    let passthrough_only = gateway
        .split("---\napiVersion: networking.k8s.io/v1\nkind: Ingress")
        .next()
        .unwrap();
    write_manifest(&manifests, "passthrough.yaml", passthrough_only).unwrap();
    setup
        .portcullis
        .wait_until(Duration::from_secs(30), |p| {
            through(p.https_port, "passthrough.test").starts_with("error:")
        })
        .unwrap_or_else(|err| panic!("{err}: {}", setup.portcullis.log()));
    assert!(through(https, "unknown.test").starts_with("error:"));
    assert_eq!(
        through(https, "a.passthrough.test"),
        "secure backend / secure"
    );
    // An HTTPS host again: the other names are terminated again.
    write_manifest(&manifests, "site.yaml", &site).unwrap();
    setup
        .portcullis
        .wait_until(Duration::from_secs(30), |p| {
            through(p.https_port, "www.terminated.test") == "www.terminated.test / web"
        })
        .unwrap_or_else(|err| panic!("{err}: {}", setup.portcullis.log()));
    assert_eq!(
        through(https, "unknown.test"),
        "portcullis default certificate / 404"
    );
}
