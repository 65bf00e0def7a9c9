//! Listeners, attachment, hostnames, paths, TLS and ReferenceGrants.

use std::time::Duration;

use test_support::{EchoServer, answer, backend, https_get, self_signed, tls_secret};

use crate::manifests::{
    ALT_ROUTE, ANY_NAME_GATEWAY, DUAL_ROUTES, GATEWAY, GRANT, MORE_ROUTES, ROUTES, WILD_ROUTE,
};
use crate::status::{condition, pair, status_of};
use crate::write;

#[test]
fn http_routes_attach_to_our_gateways_listeners_and_route_by_host_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let servers: Vec<EchoServer> = ["app", "api", "other"]
        .iter()
        .map(|name| EchoServer::start(name).unwrap())
        .collect();
    let mut objects = String::new();
    for server in &servers {
        objects += &backend(
            "default",
            server_name(server, &servers),
            80,
            None,
            &[(server.port, true)],
        );
    }
    let (cert, key) = self_signed("secure wildcard", &["*.secure.test"]);
    objects += &tls_secret("default", "secure-tls", &cert, &key);
    let (alt_port, secure_port) = (test_support::free_port(), test_support::free_port());
    let gateway = GATEWAY
        .replace("ALT_PORT", &alt_port.to_string())
        .replace("SECURE_PORT", &secure_port.to_string());
    objects += &gateway;
    objects += ROUTES;
    objects += ALT_ROUTE;
    objects += WILD_ROUTE;
    objects += DUAL_ROUTES;
    objects += &MORE_ROUTES.replace("ALT_PORT", &alt_port.to_string());
    let (vault_cert, vault_key) = self_signed("vault certificate", &["vaulted.test"]);
    objects += &tls_secret("vault", "vault-tls", &vault_cert, &vault_key);
    let (any_cert, any_key) = self_signed("any-name certificate", &["any.test"]);
    objects += &tls_secret("default", "any-tls", &any_cert, &any_key);
    objects += ANY_NAME_GATEWAY;
    write(&manifests, "all.yaml", &objects);
    let mut p = crate::start(dir.path(), &manifests);
    let port = p.http_port;

    // Path matches, as the route's rules say.
    let cases = [
        ("app.test", "/api", "api"),
        ("app.test", "/api/users", "api"),
        ("app.test", "/apix", "app"),
        ("app.test", "/exact", "other"),
        ("app.test", "/exact/more", "app"),
        ("app.test", "/", "app"),
        ("APP.test:80", "/api", "api"),
        // A route on our class's Gateway only.
        ("foreign.test", "/", "404"),
        // An HTTPS-only listener's route is not served on plain HTTP.
        ("shop.secure.test", "/", "404"),
        // No intersection with the listener hostname.
        ("shop.elsewhere.test", "/", "404"),
        // The listener's allowedRoutes is Same: the team namespace is not admitted.
        ("internal.test", "/", "404"),
        // A rule with a mirror is served without the copy, the rest of the route too.
        ("unsupported.test", "/", "api"),
        ("unsupported.test", "/plain", "app"),
        ("unsupported.test", "/plainly", "api"),
        // A Gateway API wildcard covers any number of labels.
        ("a.wild.test", "/", "other"),
        ("a.b.wild.test", "/", "other"),
        ("a.b.c.d.wild.test", "/", "other"),
        ("wild.test", "/", "404"),
    ];
    for (host, path, expected) in cases {
        assert_eq!(
            answer(port, host, path),
            expected,
            "{host}{path}\n{}",
            p.log()
        );
    }

    // A listener on another port: a frontend of its own, with the same precedence.
    let alt_cases = [
        ("alt.test", "/", "app"),
        ("alt.test", "/exact", "other"),
        ("alt.test", "/exact/more", "app"),
        ("alt.test", "/api", "api"),
        ("alt.test", "/api/v1", "api"),
        ("alt.test", "/apix", "app"),
        ("one.alt.test", "/api", "api"),
        ("one.two.alt.test", "/api", "api"),
        ("a.b.c.d.e.alt.test", "/api", "404"),
        ("app.test", "/", "404"),
    ];
    for (host, path, expected) in alt_cases {
        assert_eq!(
            answer(alt_port, host, path),
            expected,
            "port {alt_port} {host}{path}\n{}",
            p.log()
        );
    }
    let header = test_support::http_request(
        alt_port,
        "GET /x HTTP/1.1\r\nHost: alt.test\r\nx-other: 1\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(header.server().as_deref(), Some("other"));
    assert_eq!(
        answer(port, "alt.test", "/"),
        "404",
        "not on the port-80 listener"
    );

    // The admin endpoint serves the same status as `portcullis status`.
    let served = p.admin("/status").unwrap();
    assert_eq!(served.status, 200);
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&served.body).unwrap();
    let team = status_of(&documents, "HTTPRoute", "team", "team");
    assert_eq!(
        condition(&team["parents"][0]["conditions"], "ResolvedRefs"),
        pair("False", "RefNotPermitted")
    );

    // HTTPS: the listener's certificate by SNI, the route behind it.
    let secure = https_get(p.https_port, "shop.secure.test", "shop.secure.test", "/").unwrap();
    assert_eq!(secure.certificate_cn, "secure wildcard");
    assert_eq!(secure.response.server().as_deref(), Some("app"));
    // A listener whose allowedRoutes kinds leave HTTPRoute out; a parentRef by port.
    assert_eq!(answer(port, "kinds.test", "/"), "404");
    assert_eq!(answer(alt_port, "byport.test", "/"), "other");
    // A redirect with neither scheme nor port keeps the listener's port.
    let moved = test_support::http_get(alt_port, "byport.test", "/moved/x?q=1").unwrap();
    assert_eq!(moved.status, 301);
    assert_eq!(
        moved.headers["location"],
        format!("http://app.test:{alt_port}/moved/x?q=1")
    );
    assert_eq!(answer(port, "byport.test", "/"), "404");
    // A certificate in another namespace, allowed by a ReferenceGrant; a redirect that
    // replaces the scheme, the host and the whole path.
    let vaulted = https_get(p.https_port, "vaulted.test", "vaulted.test", "/").unwrap();
    assert_eq!(vaulted.certificate_cn, "vault certificate");
    assert_eq!(vaulted.response.server().as_deref(), Some("api"));
    let moved = https_get(
        p.https_port,
        "vaulted.test",
        "vaulted.test",
        "/elsewhere/x?q=1",
    )
    .unwrap();
    assert_eq!(moved.response.status, 302);
    assert_eq!(
        moved.response.headers["location"],
        "http://app.test/landing"
    );

    // A hostname-less HTTPS listener matches every name: its certificate is served
    // for a name no host claims (and the request answered 404), not the fallback.
    let unknown = https_get(p.https_port, "unknown.test", "unknown.test", "/").unwrap();
    assert_eq!(unknown.certificate_cn, "any-name certificate");
    assert_eq!(unknown.response.status, 404);
    let secure = https_get(p.https_port, "shop.secure.test", "shop.secure.test", "/").unwrap();
    assert_eq!(secure.certificate_cn, "secure wildcard");

    // Two routes for one host and path, on different listeners: each keeps to its own.
    assert_eq!(answer(port, "dual.secure.test", "/"), "other");
    let dual = https_get(p.https_port, "dual.secure.test", "dual.secure.test", "/").unwrap();
    assert_eq!(dual.response.server().as_deref(), Some("api"));

    // The same route on an HTTPS listener of another port.
    let other_port = https_get(secure_port, "shop.secure.test", "shop.secure.test", "/").unwrap();
    assert_eq!(other_port.certificate_cn, "secure wildcard");
    assert_eq!(other_port.response.server().as_deref(), Some("app"));

    // Cross-namespace backend: refused without a ReferenceGrant (500, as the
    // specification asks of a rule without a valid backend), served with one.
    assert_eq!(answer(port, "team.test", "/"), "500", "{}", p.log());
    let log = p.log();
    assert!(
        log.contains("HTTPRoute team/team: spec.rules[0].backendRefs[0]: no ReferenceGrant in namespace default allows this route to use Service other; its share of the traffic is answered with 500"),
        "{log}"
    );
    assert!(log.contains("HTTPRoute default/unsupported: spec.rules[0].filters[0]: filter type RequestMirror is not supported"), "{log}");
    assert!(log.contains("HTTPRoute team/listeners: spec.parentRefs[0]: no listener of Gateway default/web accepts this route"), "{log}");
    write(&manifests, "grant.yaml", GRANT);
    p.wait_until(Duration::from_secs(10), |p| {
        answer(p.http_port, "team.test", "/") == "other"
    })
    .unwrap();
    // The Selector listener admits the team namespace by its label (the route takes the
    // listener's hostname); the Same listener does not.
    assert_eq!(answer(port, "labelled.test", "/"), "other");
    assert_eq!(answer(port, "internal.test", "/"), "404");

    // The Gateway's class changes hands: its routes go away.
    let foreign = gateway.replace(
        "gatewayClassName: portcullis",
        "gatewayClassName: someone-else",
    );
    let objects = objects.replace(&gateway, &foreign);
    write(&manifests, "all.yaml", &objects);
    // Both hosts are asked in one wait: this change reaches HAProxy in more than one step
    // (the Gateway's own ports need a reload, which may follow the runtime updates, and
    // the old worker takes new connections until it stops listening), so one host's 404
    // does not yet mean the other's.
    p.wait_until(Duration::from_secs(10), |p| {
        answer(p.http_port, "app.test", "/") == "404"
            && answer(p.http_port, "team.test", "/") == "404"
    })
    .unwrap();
    assert_eq!(answer(port, "team.test", "/"), "404");
}

fn server_name<'a>(server: &EchoServer, all: &'a [EchoServer]) -> &'a str {
    let index = all.iter().position(|s| s.port == server.port).unwrap();
    ["app", "api", "other"][index]
}

/// An Ingress's `defaultBackend` (any namespace may set it) answers what no Ingress rule
/// matches, never a Gateway API hostname's: there, what no rule matches is a 404.
#[test]
fn a_gateway_hostname_answers_404_where_no_rule_matches_not_the_ingress_default_backend() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let (store, fallback, site) = (
        EchoServer::start("store").unwrap(),
        EchoServer::start("fallback").unwrap(),
        EchoServer::start("site").unwrap(),
    );
    let route = |name: &str, host: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  parentRefs: [{{name: web, namespace: infra}}]\n  hostnames: [{host}]\n  rules:\n  - matches: [{{path: {{type: PathPrefix, value: /app}}}}]\n    backendRefs: [{{name: store, port: 80}}]\n"
        )
    };
    let objects = backend("shop", "store", 80, None, &[(store.port, true)])
        + &backend("other", "fallback", 80, None, &[(fallback.port, true)])
        + &backend("other", "site", 80, None, &[(site.port, true)])
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n"
        + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: web, namespace: infra}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}\n"
        + &route("store", "store.test")
        + "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: site, namespace: other}\nspec:\n  defaultBackend: {service: {name: fallback, port: {number: 80}}}\n  rules:\n  - host: site.test\n    http:\n      paths:\n      - {path: /site, pathType: Prefix, backend: {service: {name: site, port: {number: 80}}}}\n";
    write(&manifests, "all.yaml", &objects);
    let mut p = crate::start(dir.path(), &manifests);
    let port = p.http_port;
    for (host, path, expected) in [
        ("store.test", "/app", "store"),
        ("store.test", "/app/cart", "store"),
        ("store.test", "/", "404"),
        ("store.test", "/other", "404"),
        ("site.test", "/site", "site"),
        ("site.test", "/", "fallback"),
        ("unknown.test", "/", "fallback"),
    ] {
        assert_eq!(answer(port, host, path), expected, "{host}{path}");
    }

    // A hostname that comes later, live, is kept from the default backend the same way.
    let reloads = p.metric_total("portcullis_reloads_total");
    write(&manifests, "late.yaml", &route("late", "late.test"));
    p.wait_until(Duration::from_secs(10), |p| {
        answer(p.http_port, "late.test", "/app") == "store"
    })
    .unwrap();
    assert_eq!(answer(port, "late.test", "/elsewhere"), "404");
    assert_eq!(p.metric_total("portcullis_reloads_total"), reloads);
}

/// A listener on a port of its own is served as soon as its Gateway is: the port is
/// bound and answers 404 before any route attaches, and after the last one goes; it is
/// closed with the listener.
#[test]
fn a_listener_port_of_its_own_is_bound_before_a_route_attaches_and_after_the_last_goes() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir(&manifests).unwrap();
    let app = EchoServer::start("app").unwrap();
    let (plain_port, tls_port) = (test_support::free_port(), test_support::free_port());
    let gateway = |listeners: &str| {
        format!(
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {{name: portcullis}}\nspec: {{controllerName: portcullis.dev/gateway-controller}}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: web, namespace: default}}\nspec:\n  gatewayClassName: portcullis\n  listeners:\n{listeners}"
        )
    };
    let (cert, key) = self_signed("own port", &["own.test"]);
    let both = format!(
        "  - {{name: plain, protocol: HTTP, port: {plain_port}}}\n  - {{name: secure, protocol: HTTPS, port: {tls_port}, tls: {{certificateRefs: [{{name: own-tls}}]}}}}\n"
    );
    write(
        &manifests,
        "objects.yaml",
        &(backend("default", "app", 80, None, &[(app.port, true)])
            + &tls_secret("default", "own-tls", &cert, &key)),
    );
    write(&manifests, "gateway.yaml", &gateway(&both));
    let mut p = crate::start(dir.path(), &manifests);
    assert_eq!(answer(plain_port, "own.test", "/"), "404", "{}", p.log());
    // (The certificate of a host is served once a route names the host.)
    let secure = https_get(tls_port, "own.test", "own.test", "/").unwrap();
    assert_eq!(secure.response.status, 404);

    let route = "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: own, namespace: default}\nspec:\n  parentRefs: [{name: web}]\n  hostnames: [own.test]\n  rules:\n  - backendRefs: [{name: app, port: 80}]\n";
    write(&manifests, "route.yaml", route);
    p.wait_until(Duration::from_secs(10), |_| {
        answer(plain_port, "own.test", "/") == "app"
    })
    .unwrap();
    let secure = https_get(tls_port, "own.test", "own.test", "/").unwrap();
    assert_eq!(
        (
            secure.response.server().as_deref(),
            secure.certificate_cn.as_str()
        ),
        (Some("app"), "own port")
    );

    std::fs::remove_file(manifests.join("route.yaml")).unwrap();
    p.wait_until(Duration::from_secs(10), |_| {
        answer(plain_port, "own.test", "/") == "404"
    })
    .unwrap();

    // The listener goes, and its port with it.
    write(
        &manifests,
        "gateway.yaml",
        &gateway(&format!(
            "  - {{name: secure, protocol: HTTPS, port: {tls_port}, tls: {{certificateRefs: [{{name: own-tls}}]}}}}\n"
        )),
    );
    p.wait_until(Duration::from_secs(10), |_| {
        std::net::TcpStream::connect(("127.0.0.1", plain_port)).is_err()
    })
    .unwrap();
    assert_eq!(
        https_get(tls_port, "own.test", "own.test", "/")
            .unwrap()
            .response
            .status,
        404
    );
}
