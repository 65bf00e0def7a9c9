//! Access control through a real HAProxy: client certificates (mTLS) per host on the
//! shared HTTPS frontend, and CORS answered and decorated by HAProxy.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use test_support::{
    EchoServer, Portcullis, backend, ca_secret, client_pki, http_request, https_request,
    self_signed, tls_secret,
};

fn ingress(name: &str, annotations: &str, host: &str, tls: bool) -> String {
    let tls = if tls {
        format!("  tls:\n  - {{hosts: [\"{host}\"], secretName: site-tls}}\n")
    } else {
        String::new()
    };
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations: {{{annotations}}}\nspec:\n{tls}  rules:\n  - host: \"{host}\"\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
    )
}

struct Setup {
    dir: tempfile::TempDir,
    _web: EchoServer,
    portcullis: Portcullis,
}

fn start(objects: String) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let web = EchoServer::start("web").unwrap();
    let mut all = backend("default", "web", 80, None, &[(web.port, true)]);
    all += &objects;
    std::fs::write(manifests.join("all.yaml"), all).unwrap();
    let portcullis = Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    Setup {
        dir,
        _web: web,
        portcullis,
    }
}

#[test]
fn client_certificates_are_required_per_host_and_passed_to_the_backend() {
    let trusted = client_pki("trusted-ca", "client-one");
    let stranger = client_pki("stranger-ca", "intruder");
    let (cert, key) = self_signed(
        "site",
        &[
            "mtls.com",
            "optional.com",
            "strict.com",
            "open.com",
            "broken.com",
            "misspelt.com",
            "leafca.com",
            "paged.com",
        ],
    );
    let mut objects = tls_secret("default", "site-tls", &cert, &key);
    objects += &ca_secret("default", "client-ca", &trusted.ca_pem);
    objects += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: global, namespace: ops}\ndata:\n  auth-tls-cert-header: \"true\"\n  http-response-496: |\n    content-type: text/plain\n\n    show your certificate\n";
    objects += &ingress(
        "mtls",
        "haproxy-ingress.github.io/auth-tls-secret: client-ca",
        "mtls.com",
        true,
    );
    objects += &ingress(
        "optional",
        "portcullis.dev/auth-tls-secret: client-ca, portcullis.dev/auth-tls-verify-client: optional",
        "optional.com",
        true,
    );
    objects += &ingress(
        "strict",
        "portcullis.dev/auth-tls-secret: client-ca, portcullis.dev/auth-tls-strict: \"true\"",
        "strict.com",
        true,
    );
    objects += &ingress(
        "broken",
        "portcullis.dev/auth-tls-secret: nosuch",
        "broken.com",
        true,
    );
    // Not a Secret name: refused as an unusable Secret is, not served unauthenticated.
    objects += &ingress(
        "misspelt",
        "portcullis.dev/auth-tls-secret: ../client-ca",
        "misspelt.com",
        true,
    );
    let (leaf, _) = self_signed("just-a-leaf", &["leaf.example"]);
    objects += &ca_secret("default", "not-a-ca", &leaf);
    objects += &ingress(
        "leafca",
        "portcullis.dev/auth-tls-secret: not-a-ca",
        "leafca.com",
        true,
    );
    objects += &ingress(
        "paged",
        "portcullis.dev/auth-tls-secret: client-ca, portcullis.dev/auth-tls-error-page: 'https://login.example.com/certificate'",
        "paged.com",
        true,
    );
    objects += &ingress("open", "", "open.com", true);
    objects += &ingress("plain", "", "plain.com", false);
    let setup = start(objects);
    let port = setup.portcullis.https_port;
    let valid = Some((
        trusted.client_der.as_slice(),
        trusted.client_key_der.as_slice(),
    ));
    let wrong = Some((
        stranger.client_der.as_slice(),
        stranger.client_key_der.as_slice(),
    ));
    let get = |host: &str, client| {
        https_request(port, host, host, "/x", client)
            .unwrap()
            .response
    };

    let ok = get("mtls.com", valid);
    assert_eq!(ok.status, 200, "{ok:?}");
    let headers = &ok.echo().unwrap()["headers"];
    assert_eq!(headers["x-ssl-client-cn"], "client-one");
    assert_eq!(headers["x-ssl-client-verify"], "0");
    assert!(
        headers["x-ssl-client-dn"]
            .as_str()
            .unwrap()
            .contains("CN=client-one")
    );
    let sha1 = headers["x-ssl-client-sha1"].as_str().unwrap();
    assert!(
        sha1.len() == 40
            && sha1
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    );
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(headers["x-ssl-client-cert"].as_str().unwrap())
            .unwrap(),
        trusted.client_der
    );

    let missing = get("mtls.com", None);
    assert_eq!(missing.status, 496, "{missing:?}");
    assert_eq!(missing.body.trim(), "show your certificate");
    assert_eq!(get("mtls.com", wrong).status, 495);

    assert_eq!(get("optional.com", None).status, 200);
    assert_eq!(get("optional.com", valid).status, 200);
    assert_eq!(get("optional.com", wrong).status, 495);

    assert_eq!(get("strict.com", valid).status, 200);
    assert!(
        https_request(port, "strict.com", "strict.com", "/", None).is_err(),
        "strict: no certificate, no handshake"
    );

    assert_eq!(
        get("broken.com", valid).status,
        496,
        "an unusable CA fails closed"
    );
    assert_eq!(
        get("leafca.com", valid).status,
        496,
        "so does a CA bundle that is not a CA"
    );
    assert_eq!(
        get("misspelt.com", valid).status,
        496,
        "so does a value that is not a Secret name"
    );

    let paged = get("paged.com", None);
    assert_eq!(paged.status, 302);
    assert_eq!(
        paged.headers.get("location").map(String::as_str),
        Some("https://login.example.com/certificate")
    );
    assert_eq!(get("paged.com", wrong).status, 302);
    assert_eq!(get("paged.com", valid).status, 200);

    let open = get("open.com", None);
    assert_eq!(open.status, 200, "a host without auth-tls is unaffected");
    // A client cannot forge the identity headers, nor reach an mTLS host through the SNI
    // of an open one.
    let forged = http_request(
        setup.portcullis.http_port,
        "GET / HTTP/1.1\r\nHost: plain.com\r\nX-SSL-Client-CN: admin\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(forged.status, 200);
    assert!(
        forged.echo().unwrap()["headers"]
            .get("x-ssl-client-cn")
            .is_none()
    );
    let misdirected = https_request(port, "open.com", "mtls.com", "/", valid).unwrap();
    assert_eq!(misdirected.response.status, 421);

    let log = setup.portcullis.log();
    assert!(
        log.contains("Ingress default/broken: metadata.annotations[portcullis.dev/auth-tls-secret]: secret default/nosuch not found; requests to the Ingress's TLS hosts are answered 496 until it is fixed"),
        "{log}"
    );
    assert!(
        log.contains("Ingress default/misspelt: metadata.annotations[portcullis.dev/auth-tls-secret]: invalid value: "),
        "{log}"
    );
    assert!(
        log.contains("requests to the Ingress's TLS hosts are answered 496 (and connections to a TCP service port it sets refused) until it is fixed"),
        "{log}"
    );
    assert!(
        log.contains("Ingress default/leafca: metadata.annotations[portcullis.dev/auth-tls-secret]: secret default/not-a-ca: ca.crt holds a certificate that is not a CA (CN=just-a-leaf)"),
        "{log}"
    );
}

#[test]
fn cors_preflights_are_answered_and_allowed_origins_decorated() {
    let mut objects = ingress(
        "listed",
        "portcullis.dev/cors-enable: \"true\", portcullis.dev/cors-allow-origin: \"https://app.example\", portcullis.dev/cors-allow-origin-regex: \"^https://[a-z]+[.]trusted[.]example$\", portcullis.dev/cors-expose-headers: X-Total, portcullis.dev/cors-max-age: \"600\"",
        "api.com",
        false,
    );
    objects += &ingress(
        "any",
        "portcullis.dev/cors-enable: \"true\", portcullis.dev/cors-allow-credentials: \"false\"",
        "public.com",
        false,
    );
    objects += &ingress(
        "limited",
        "portcullis.dev/cors-enable: \"true\", portcullis.dev/cors-allow-origin: \"https://app.example\", portcullis.dev/proxy-body-size: \"10\"",
        "limited.com",
        false,
    );
    // A response that varies by another header already: Origin is added beside it.
    objects += &ingress(
        "varied",
        "portcullis.dev/cors-enable: \"true\", portcullis.dev/cors-allow-origin: \"https://app.example\", portcullis.dev/response-set-headers: \"Vary: X-Originating-IP\"",
        "varied.com",
        false,
    );
    let setup = start(objects);
    let port = setup.portcullis.http_port;
    let preflight = |host: &str, origin: &str| {
        http_request(
            port,
            &format!("OPTIONS /items HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: PUT\r\nConnection: close\r\n\r\n"),
        )
        .unwrap()
    };
    let get = |host: &str, origin: &str| {
        http_request(
            port,
            &format!("GET /items HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nConnection: close\r\n\r\n"),
        )
        .unwrap()
    };
    let header =
        |response: &test_support::Response, name: &str| response.headers.get(name).cloned();

    let allowed = preflight("api.com", "https://app.example");
    assert_eq!(allowed.status, 204, "{allowed:?}");
    assert_eq!(
        header(&allowed, "access-control-allow-origin").as_deref(),
        Some("https://app.example")
    );
    assert_eq!(
        header(&allowed, "access-control-allow-methods").as_deref(),
        Some("GET, PUT, POST, DELETE, PATCH, OPTIONS")
    );
    assert_eq!(
        header(&allowed, "access-control-max-age").as_deref(),
        Some("600")
    );
    assert_eq!(
        header(&allowed, "access-control-allow-credentials").as_deref(),
        Some("true")
    );
    assert!(
        header(&allowed, "access-control-allow-headers")
            .unwrap()
            .contains("Authorization")
    );
    assert_eq!(header(&allowed, "vary").as_deref(), Some("Origin"));
    assert_eq!(
        header(&allowed, "access-control-expose-headers").as_deref(),
        Some("X-Total")
    );

    let refused = preflight("api.com", "https://evil.example");
    assert_eq!(refused.status, 204);
    assert!(
        refused
            .headers
            .keys()
            .all(|name| !name.starts_with("access-control-")),
        "{refused:?}"
    );

    let regex = preflight("api.com", "https://web.trusted.example");
    assert_eq!(
        header(&regex, "access-control-allow-origin").as_deref(),
        Some("https://web.trusted.example")
    );
    assert!(
        header(
            &preflight("api.com", "https://web.trusted.example.evil"),
            "access-control-allow-origin"
        )
        .is_none()
    );

    let decorated = get("api.com", "https://app.example");
    assert_eq!(decorated.status, 200);
    assert_eq!(
        decorated.server().as_deref(),
        Some("web"),
        "actual requests reach the backend"
    );
    assert_eq!(
        header(&decorated, "access-control-allow-origin").as_deref(),
        Some("https://app.example")
    );
    assert_eq!(
        header(&decorated, "access-control-expose-headers").as_deref(),
        Some("X-Total")
    );
    assert_eq!(header(&decorated, "vary").as_deref(), Some("Origin"));
    let plain = get("api.com", "https://evil.example");
    assert_eq!(plain.status, 200);
    assert!(
        plain
            .headers
            .keys()
            .all(|name| !name.starts_with("access-control-"))
    );

    let public = get("public.com", "https://anyone.example");
    assert_eq!(
        header(&public, "access-control-allow-origin").as_deref(),
        Some("*")
    );
    assert!(header(&public, "access-control-allow-credentials").is_none());

    // An answer HAProxy makes itself (here a body over the limit) is decorated too: a
    // browser would otherwise show the page a CORS error instead of it.
    let too_large = http_request(
        port,
        "POST /items HTTP/1.1\r\nHost: limited.com\r\nOrigin: https://app.example\r\nContent-Length: 100\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(too_large.status, 413, "{too_large:?}");
    assert_eq!(
        header(&too_large, "access-control-allow-origin").as_deref(),
        Some("https://app.example")
    );
    assert_eq!(header(&too_large, "vary").as_deref(), Some("Origin"));
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::io::Write::write_all(
        &mut stream,
        b"GET /items HTTP/1.1\r\nHost: varied.com\r\nOrigin: https://app.example\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut raw = String::new();
    std::io::Read::read_to_string(&mut stream, &mut raw).unwrap();
    let head = raw.split("\r\n\r\n").next().unwrap_or_default();
    let vary: Vec<&str> = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| name.eq_ignore_ascii_case("vary"))
        .map(|(_, value)| value.trim())
        .collect();
    assert_eq!(vary, ["X-Originating-IP", "Origin"], "{head}");
}

#[test]
fn a_gateway_s_frontend_validation_asks_its_https_listeners_for_client_certificates() {
    let trusted = client_pki("gateway-ca", "gateway-client");
    let stranger = client_pki("stranger-ca", "intruder");
    let (cert, key) = self_signed("site", &["*.gw.test", "*.cm.test", "*.bad.test"]);
    let mut objects = tls_secret("default", "site-tls", &cert, &key);
    objects += &ca_secret("default", "client-ca", &trusted.ca_pem);
    // A ConfigMap of the same name holds another CA: the two are separate bundles.
    let indented: String = stranger
        .ca_pem
        .lines()
        .map(|line| format!("    {line}\n"))
        .collect();
    objects += &format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: client-ca, namespace: default}}\ndata:\n  ca.crt: |\n{indented}"
    );
    // Listeners on ports of their own: an HTTPS one validates as the one on 443 does; a
    // plain-HTTP one serves its hosts (the validation is the HTTPS listeners').
    let alt_port = test_support::free_port();
    let tls_port = test_support::free_port();
    let gateway = |name: &str, host: &str, reference: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  gatewayClassName: portcullis\n  tls:\n    frontend:\n      default:\n        validation:\n          caCertificateRefs: [{reference}]\n  listeners:\n  - name: https\n    protocol: HTTPS\n    port: 443\n    hostname: \"{host}\"\n    tls: {{certificateRefs: [{{name: site-tls}}]}}\n  - name: alt\n    protocol: HTTP\n    port: {alt_port}\n    hostname: \"{host}\"\n  - name: tlsalt\n    protocol: HTTPS\n    port: {tls_port}\n    hostname: \"{host}\"\n    tls: {{certificateRefs: [{{name: site-tls}}]}}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  parentRefs: [{{name: {name}}}]\n  rules:\n  - backendRefs: [{{name: web, port: 80}}]\n"
        )
    };
    objects += "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n";
    objects += &gateway(
        "validated",
        "*.gw.test",
        "{group: \"\", kind: Secret, name: client-ca}",
    );
    objects += &gateway(
        "configmapped",
        "*.cm.test",
        "{group: \"\", kind: ConfigMap, name: client-ca}",
    );
    objects += &gateway(
        "unsupported",
        "*.bad.test",
        "{group: \"\", kind: Service, name: client-ca}",
    );
    let setup = start(objects);
    let port = setup.portcullis.https_port;
    let valid = Some((
        trusted.client_der.as_slice(),
        trusted.client_key_der.as_slice(),
    ));
    let wrong = Some((
        stranger.client_der.as_slice(),
        stranger.client_key_der.as_slice(),
    ));

    let ok = https_request(port, "a.gw.test", "a.gw.test", "/", valid)
        .unwrap()
        .response;
    assert_eq!(ok.status, 200, "{ok:?}");
    assert_eq!(
        ok.echo().unwrap()["headers"]["x-ssl-client-cn"],
        "gateway-client"
    );
    assert!(
        https_request(port, "a.gw.test", "a.gw.test", "/", None).is_err(),
        "AllowValidOnly: no certificate, no connection"
    );
    assert_eq!(
        https_request(port, "a.gw.test", "a.gw.test", "/", wrong)
            .unwrap()
            .response
            .status,
        495
    );
    // The ConfigMap's CA (Core support) is the stranger's.
    let from_configmap = https_request(port, "a.cm.test", "a.cm.test", "/", wrong)
        .unwrap()
        .response;
    assert_eq!(from_configmap.status, 200, "{from_configmap:?}");
    assert_eq!(
        from_configmap.echo().unwrap()["headers"]["x-ssl-client-cn"],
        "intruder"
    );
    assert_eq!(
        https_request(port, "a.cm.test", "a.cm.test", "/", valid)
            .unwrap()
            .response
            .status,
        495
    );
    assert_eq!(
        https_request(port, "a.bad.test", "a.bad.test", "/", valid)
            .unwrap()
            .response
            .status,
        496,
        "a CA that cannot be used refuses the listener's hosts"
    );
    let alt = test_support::http_get(alt_port, "a.gw.test", "/").unwrap();
    assert_eq!(alt.status, 200, "{alt:?}");
    let on_tls_port = |client| {
        https_request(tls_port, "a.gw.test", "a.gw.test", "/", client)
            .map(|reply| reply.response.status)
            .unwrap_or(0)
    };
    assert_eq!(on_tls_port(valid), 200);
    assert_eq!(on_tls_port(wrong), 495);
    assert_eq!(on_tls_port(None), 0, "no certificate, no connection");
    let status = setup.portcullis.admin("/status").unwrap().body;
    for reason in ["InvalidCACertificateKind", "NoValidCACertificate"] {
        assert!(status.contains(reason), "{reason}: {status}");
    }
    assert!(
        status.contains("caCertificateRefs of kind Service are not supported"),
        "{status}"
    );
}

#[test]
fn a_rotated_client_ca_goes_live_without_a_reload() {
    let first = client_pki("first-ca", "first-client");
    let second = client_pki("second-ca", "second-client");
    let (cert, key) = self_signed("site", &["mtls.com"]);
    let mut objects = tls_secret("default", "site-tls", &cert, &key);
    objects += &ingress(
        "mtls",
        "portcullis.dev/auth-tls-secret: client-ca",
        "mtls.com",
        true,
    );
    objects += &ca_secret("default", "client-ca", &first.ca_pem);
    let mut setup = start(objects);
    let port = setup.portcullis.https_port;
    let status = |pki: &test_support::ClientPki| {
        https_request(
            port,
            "mtls.com",
            "mtls.com",
            "/",
            Some((pki.client_der.as_slice(), pki.client_key_der.as_slice())),
        )
        .map(|reply| reply.response.status)
        .unwrap_or(0)
    };
    assert_eq!(status(&first), 200);
    assert_eq!(status(&second), 495);
    let reloads = setup.portcullis.metric_total("portcullis_reloads_total");

    // The Secret's ca.crt changes; the Ingress and its host stay as they are.
    let all = std::fs::read_to_string(setup.dir.path().join("manifests/all.yaml")).unwrap();
    let rotated = all.replace(
        &ca_secret("default", "client-ca", &first.ca_pem),
        &ca_secret("default", "client-ca", &second.ca_pem),
    );
    test_support::write_manifest(&setup.dir.path().join("manifests"), "all.yaml", &rotated)
        .unwrap();
    setup
        .portcullis
        .wait_until(std::time::Duration::from_secs(10), |_| {
            status(&second) == 200
        })
        .unwrap();
    assert_eq!(status(&first), 495);
    assert_eq!(
        setup.portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "a new CA content goes out over the runtime API"
    );

    // A revocation list appears (a reload: a new file), then the client is refused.
    let current = std::fs::read_to_string(setup.dir.path().join("manifests/all.yaml")).unwrap();
    let revoked = current.replace(
        &ca_secret("default", "client-ca", &second.ca_pem),
        &test_support::ca_crl_secret(
            "default",
            "client-ca",
            &second.ca_pem,
            &second.revoking_crl_pem,
        ),
    );
    assert_ne!(current, revoked);
    test_support::write_manifest(&setup.dir.path().join("manifests"), "all.yaml", &revoked)
        .unwrap();
    setup
        .portcullis
        .wait_until(std::time::Duration::from_secs(10), |_| {
            status(&second) == 495
        })
        .unwrap();
    // The new worker may answer before the controller has counted its reload.
    let ca_reloads = |p: &test_support::Portcullis| {
        p.metric("portcullis_reloads_total{reason=\"client_certificate_authorities\"}")
    };
    setup
        .portcullis
        .wait_until(std::time::Duration::from_secs(10), |p| {
            ca_reloads(p) == Some(1.0)
        })
        .unwrap_or_else(|_| {
            panic!(
                "one reload for the new CRL: {:?}",
                ca_reloads(&setup.portcullis)
            )
        });
    assert_eq!(
        setup.portcullis.metric("portcullis_runtime_failures_total"),
        Some(0.0)
    );
}

#[test]
fn an_httproute_cors_filter_is_answered_by_haproxy() {
    let objects = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: edge, namespace: default}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {name: http, protocol: HTTP, port: 80}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: api, namespace: default}\nspec:\n  parentRefs: [{name: edge}]\n  hostnames: [api.test]\n  rules:\n  - filters:\n    - type: CORS\n      cors:\n        allowOrigins: ['https://*.app.test']\n        allowMethods: [GET, PUT]\n        allowHeaders: ['*']\n        allowCredentials: true\n    backendRefs: [{name: web, port: 80}]\n".to_owned();
    let setup = start(objects);
    let port = setup.portcullis.http_port;
    let preflight = |origin: &str| {
        http_request(
            port,
            &format!("OPTIONS /items HTTP/1.1\r\nHost: api.test\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: PUT\r\nAccess-Control-Request-Headers: X-Token\r\nConnection: close\r\n\r\n"),
        )
        .unwrap()
    };
    let allowed = preflight("https://web.app.test");
    assert_eq!(allowed.status, 204, "{allowed:?}");
    let header = |name: &str| allowed.headers.get(name).cloned();
    assert_eq!(
        header("access-control-allow-origin").as_deref(),
        Some("https://web.app.test")
    );
    assert_eq!(
        header("access-control-allow-methods").as_deref(),
        Some("GET, PUT")
    );
    assert_eq!(
        header("access-control-allow-headers").as_deref(),
        Some("X-Token"),
        "with credentials a `*` list echoes what the preflight asks for"
    );
    assert_eq!(header("access-control-max-age").as_deref(), Some("5"));
    let refused = preflight("https://web.app.test.evil");
    assert!(!refused.headers.contains_key("access-control-allow-origin"));
}
