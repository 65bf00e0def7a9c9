//! TLS: certificates by SNI, the default certificate, HTTPS redirects, broken secrets.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use test_support::{EchoServer, Portcullis, backend, http_get, https_get, self_signed, tls_secret};

fn tls_ingress(name: &str, annotations: &str, host: &str, secret: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations: {{{annotations}}}\nspec:\n  tls:\n  - {{hosts: [\"{host}\"], secretName: {secret}}}\n  rules:\n  - host: \"{host}\"\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
    )
}

struct Setup {
    _dir: tempfile::TempDir,
    _web: EchoServer,
    portcullis: Portcullis,
}

fn start(extra_objects: &str, flags: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let (foo_cert, foo_key) = self_signed("foo.com", &["foo.com"]);
    let (wild_cert, wild_key) = self_signed("wildcard", &["*.wild.com"]);
    let mut objects = backend("default", "web", 80, None, &[(web.port, true)]);
    objects += &tls_secret("default", "foo-tls", &foo_cert, &foo_key);
    objects += &tls_secret("default", "wild-tls", &wild_cert, &wild_key);
    objects += "---\napiVersion: v1\nkind: Secret\nmetadata: {name: bad-tls}\ntype: kubernetes.io/tls\nstringData: {tls.crt: not a certificate, tls.key: not a key}\n";
    objects += &tls_ingress("foo", "", "foo.com", "foo-tls");
    objects += &tls_ingress("wild", "", "*.wild.com", "wild-tls");
    objects += &tls_ingress("broken", "", "broken.com", "bad-tls");
    objects += &tls_ingress("missing", "", "missing.com", "nosuch");
    objects += &tls_ingress(
        "noredirect",
        "portcullis.dev/ssl-redirect: \"false\"",
        "noredirect.com",
        "foo-tls",
    );
    objects += &tls_ingress(
        "code301",
        "haproxy-ingress.github.io/ssl-redirect-code: \"301\"",
        "code301.com",
        "foo-tls",
    );
    objects += "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: plain}\nspec:\n  rules:\n  - host: plain.com\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n";
    objects += extra_objects;
    std::fs::write(manifests.join("all.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        flags,
    )
    .unwrap();
    Setup {
        _dir: dir,
        _web: web,
        portcullis,
    }
}

#[test]
fn certificates_are_chosen_by_sni_and_unknown_names_get_the_default() {
    let setup = start("", &[]);
    let port = setup.portcullis.https_port;
    for (sni, host, cn) in [
        ("foo.com", "foo.com", "foo.com"),
        ("a.wild.com", "a.wild.com", "wildcard"),
        ("unknown.com", "foo.com", "portcullis default certificate"),
        ("broken.com", "broken.com", "portcullis default certificate"),
        (
            "missing.com",
            "missing.com",
            "portcullis default certificate",
        ),
    ] {
        let reply = https_get(port, sni, host, "/secure/page?x=1").unwrap();
        assert_eq!(reply.certificate_cn, cn, "SNI {sni}");
        assert_eq!(
            reply.response.status, 200,
            "SNI {sni}: {:?}",
            reply.response
        );
        assert_eq!(reply.response.server().as_deref(), Some("web"));
        assert_eq!(reply.response.seen("path").as_deref(), Some("/secure/page"));
    }
    let log = setup.portcullis.log();
    assert!(log.contains("Ingress default/missing: spec.tls: secret default/nosuch not found; the default certificate is served for its hosts"), "{log}");
    assert!(log.contains("Ingress default/broken: spec.tls: secret default/bad-tls: tls.crt must hold only CERTIFICATE blocks; the default certificate is served for its hosts"), "{log}");
}

#[test]
fn plain_http_to_a_tls_host_redirects_to_https_unless_turned_off() {
    let setup = start("", &[]);
    let (http, https) = (setup.portcullis.http_port, setup.portcullis.https_port);
    let redirect = http_get(http, "foo.com", "/a/b?x=1").unwrap();
    assert_eq!(redirect.status, 302);
    assert_eq!(
        redirect.headers.get("location").map(String::as_str),
        Some(format!("https://foo.com:{https}/a/b?x=1").as_str())
    );
    let with_port = http_get(http, &format!("FOO.com:{http}"), "/").unwrap();
    assert_eq!(
        with_port.headers.get("location").map(String::as_str),
        Some(format!("https://foo.com:{https}/").as_str())
    );
    assert_eq!(
        http_get(http, "x.wild.com", "/").unwrap().status,
        302,
        "a wildcard TLS host redirects"
    );
    assert_eq!(
        http_get(http, "code301.com", "/").unwrap().status,
        302,
        "ssl-redirect-code is a global key: an annotation is reported and ignored"
    );
    for host in ["noredirect.com", "plain.com"] {
        let response = http_get(http, host, "/x").unwrap();
        assert_eq!(
            (response.status, response.server().as_deref()),
            (200, Some("web")),
            "{host}"
        );
    }
}

#[test]
fn redirects_can_be_turned_off_globally_and_the_default_certificate_chosen() {
    let (cert, key) = self_signed("custom default", &["default.example"]);
    let configmap = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata: {ssl-redirect: \"false\"}\n";
    let objects = format!(
        "{configmap}{}",
        tls_secret("ops", "default-cert", &cert, &key)
    );
    let setup = start(
        &objects,
        &[
            "--configmap",
            "ops/global",
            "--default-ssl-certificate",
            "ops/default-cert",
        ],
    );
    let reply = https_get(setup.portcullis.https_port, "unknown.com", "foo.com", "/").unwrap();
    assert_eq!(reply.certificate_cn, "custom default");
    assert_eq!(
        http_get(setup.portcullis.http_port, "foo.com", "/")
            .unwrap()
            .status,
        200
    );
    // The annotation still wins over the ConfigMap.
    assert_eq!(
        http_get(setup.portcullis.http_port, "code301.com", "/")
            .unwrap()
            .status,
        200
    );
}
