//! Conversion of Ingresses into the model: classes, endpoints, conflicts.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::IpAddr;

use convert::{ConvertOptions, convert};
use index::{Index, SourceEvent};
use model::{BackendId, HostKey, PathKind, PathMatch, ProxyModel, Server, TlsCert};

fn options() -> ConvertOptions {
    ConvertOptions {
        ingress_class: "portcullis".into(),
        controller_class: convert::class::CONTROLLER_NAME.into(),
        gateway_controller: convert::gateway::GATEWAY_CONTROLLER.into(),
        watch_ingress_without_class: false,
        global_configmap: None,
        tcp_services_configmap: None,
        default_ssl_certificate: None,
        fallback_certificate: TlsCert::default(),
        bind_address: IpAddr::from([127, 0, 0, 1]),
        http_port: 80,
        https_port: 443,
        backend_shards: 1,
        reserved_ports: Vec::new(),
        busy_ports: std::collections::BTreeSet::new(),
    }
}

fn model_of(yaml: &str, options: &ConvertOptions) -> (ProxyModel, Vec<String>) {
    let decoded = resources::decode_manifest(yaml, false);
    assert!(decoded.errors.is_empty(), "{:?}", decoded.errors);
    let mut index = Index::new();
    for object in decoded.objects {
        index.handle(SourceEvent::Apply(object));
    }
    let conversion = convert(&index.snapshot(), options);
    (
        conversion.model,
        conversion
            .diagnostics
            .iter()
            .map(ToString::to_string)
            .collect(),
    )
}

const SERVICE: &str =
    "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n";

/// An Ingress for host `<name>.test`; `metadata` adds lines under `metadata:`, `spec`
/// under `spec:`.
fn ingress(name: &str, metadata: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n{metadata}spec:\n{spec}  rules:\n  - host: {name}.test\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}\n"
    )
}

fn served_hosts(model: &ProxyModel) -> Vec<String> {
    model
        .hosts
        .keys()
        .map(|key| key.map_key().into_owned())
        .collect()
}

#[test]
fn ingress_classes_select_what_is_ours() {
    let classes = "---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: mine}\nspec: {controller: portcullis.dev/ingress-controller}\n---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: nginx}\nspec: {controller: k8s.io/ingress-nginx}\n";
    let objects = [
        SERVICE.to_owned(),
        classes.to_owned(),
        ingress("byclass", "", "  ingressClassName: mine\n"),
        ingress("otherclass", "", "  ingressClassName: nginx\n"),
        ingress("flagname", "", "  ingressClassName: portcullis\n"),
        ingress("unknownclass", "", "  ingressClassName: nobody\n"),
        ingress(
            "legacy",
            "  annotations: {kubernetes.io/ingress.class: portcullis}\n",
            "",
        ),
        ingress(
            "legacyother",
            "  annotations: {kubernetes.io/ingress.class: nginx}\n",
            "",
        ),
        ingress("noclass", "", ""),
    ]
    .concat();
    let (model, _) = model_of(&objects, &options());
    assert_eq!(
        served_hosts(&model),
        ["byclass.test", "flagname.test", "legacy.test"]
    );

    let without_class = ConvertOptions {
        watch_ingress_without_class: true,
        ..options()
    };
    let (model, _) = model_of(&objects, &without_class);
    assert_eq!(
        served_hosts(&model),
        [
            "byclass.test",
            "flagname.test",
            "legacy.test",
            "noclass.test"
        ]
    );

    let default_class = objects.replace(
        "metadata: {name: mine}",
        "metadata: {name: mine, annotations: {ingressclass.kubernetes.io/is-default-class: \"true\"}}",
    );
    let (model, _) = model_of(&default_class, &options());
    assert_eq!(
        served_hosts(&model),
        [
            "byclass.test",
            "flagname.test",
            "legacy.test",
            "noclass.test"
        ]
    );
}

#[test]
fn endpoints_come_from_ready_slice_endpoints_or_else_from_endpoints() {
    let objects = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{name: http, port: 80}, {name: admin, port: 81}]\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nports: [{name: http, port: 8080}, {name: admin, port: 8081}]\nendpoints:\n- {addresses: [10.0.0.2]}\n- {addresses: [10.0.0.1], conditions: {ready: true}}\n- {addresses: [10.0.0.9], conditions: {ready: false}}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-2, labels: {kubernetes.io/service-name: web}}\naddressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints:\n- {addresses: [10.0.0.1, 10.0.0.3]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: legacy}\nspec:\n  ports: [{port: 80}]\n---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: legacy}\nsubsets:\n- addresses: [{ip: 10.1.0.1}]\n  notReadyAddresses: [{ip: 10.1.0.2}]\n  ports: [{port: 7000}]\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: app}\nspec:\n  rules:\n  - host: app.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}\n      - {path: /admin, pathType: Prefix, backend: {service: {name: web, port: {number: 81}}}}\n      - {path: /old, pathType: Prefix, backend: {service: {name: legacy, port: {number: 80}}}}\n      - {path: /again, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n";
    let (model, diagnostics) = model_of(
        objects,
        &ConvertOptions {
            watch_ingress_without_class: true,
            ..options()
        },
    );
    assert_eq!(diagnostics, Vec::<String>::new());
    let servers = |service: &str, port: &str| -> Vec<String> {
        let id = BackendId {
            namespace: "default".into(),
            service: service.into(),
            port: port.into(),
            mode: model::BackendMode::Http,
        };
        model.backends[&id]
            .servers
            .iter()
            .map(|s: &Server| format!("{}:{}", s.address, s.port))
            .collect()
    };
    // An endpoint is its first address: 10.0.0.3, a second one, is none.
    assert_eq!(servers("web", "http"), ["10.0.0.1:8080", "10.0.0.2:8080"]);
    // A service port named by number or by name is one backend, called by its name.
    assert_eq!(servers("web", "admin"), ["10.0.0.1:8081", "10.0.0.2:8081"]);
    assert_eq!(
        model.backends.len(),
        3,
        "web/http (by name and by number), web/admin, legacy/80"
    );
    assert_eq!(servers("legacy", "80"), ["10.1.0.1:7000"]);
    let routes = &model.hosts[&HostKey::Exact("app.test".into())].routes;
    assert!(routes.contains_key(&PathMatch {
        path: "".into(),
        kind: PathKind::Prefix
    }));
}

#[test]
fn conflicting_backend_settings_keep_the_oldest_and_report_the_newer() {
    let objects = format!(
        "{SERVICE}{}{}",
        ingress(
            "new",
            "  creationTimestamp: \"2024-06-01T00:00:00Z\"\n  annotations: {portcullis.dev/balance-algorithm: source}\n",
            ""
        ),
        ingress(
            "old",
            "  creationTimestamp: \"2024-01-01T00:00:00Z\"\n  annotations: {portcullis.dev/balance-algorithm: leastconn}\n",
            ""
        ),
    );
    let (model, diagnostics) = model_of(
        &objects,
        &ConvertOptions {
            watch_ingress_without_class: true,
            ..options()
        },
    );
    let backend = model.backends.values().next().unwrap();
    assert_eq!(backend.settings.balance, model::Balance::LeastConn);
    assert_eq!(backend.origins.len(), 2);
    assert_eq!(
        diagnostics,
        [
            "Ingress default/new: spec.rules[0].http.paths[0].backend: backend default/web:80: 'balance-algorithm' is 'source' here and 'leastconn' on Ingress default/old, which is older; this value is not used"
        ]
    );
}

#[test]
fn automatic_shard_count_keeps_about_a_hundred_backends_per_file() {
    let cases = [
        (0, 1),
        (99, 1),
        (250, 2),
        (10_000, 128),
        (100_000, 1024),
        (10_000_000, 1024),
    ];
    for (backends, shards) in cases {
        assert_eq!(
            convert::automatic_shards(backends),
            shards,
            "{backends} backends"
        );
    }
}

#[test]
fn a_service_annotation_beats_the_ingress_which_beats_the_configmap_for_routes_too() {
    let mut options = options();
    options.global_configmap = Some(("default".into(), "portcullis".into()));
    let yaml = format!(
        "{}{}{}{}",
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: portcullis}\ndata: {balance-algorithm: first, timeout-server: 9s, timeout-connect: 4s}\n",
        "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations: {ingress.kubernetes.io/balance-algorithm: leastconn, haproxy-ingress.github.io/ssl-redirect: \"false\", ingress.kubernetes.io/no-such-key: x}\nspec:\n  ports: [{port: 80}]\n",
        ingress(
            "app",
            "  annotations: {portcullis.dev/balance-algorithm: source, portcullis.dev/timeout-server: 7s}\n",
            "  ingressClassName: portcullis\n  tls: [{hosts: [app.test]}]\n",
        ),
        "---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: portcullis}\nspec: {controllerName: portcullis.dev/gateway-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\nspec:\n  gatewayClassName: portcullis\n  listeners: [{name: web, protocol: HTTP, port: 80}]\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: api\n  annotations: {haproxy-ingress.github.io/timeout-connect: 2s}\nspec:\n  ports: [{port: 80}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: api}\nspec:\n  parentRefs: [{name: gw}]\n  hostnames: [api.test]\n  rules: [{backendRefs: [{name: api, port: 80}]}]\n",
    );
    let (model, diagnostics) = model_of(&yaml, &options);
    let web = &model.backends[&BackendId {
        namespace: "default".into(),
        service: "web".into(),
        port: "80".into(),
        mode: model::BackendMode::Http,
    }];
    // The Service's (under the third prefix) beats the Ingress's, which beats the
    // ConfigMap's; where neither annotates, the Ingress's, then the ConfigMap's, apply.
    assert_eq!(web.settings.balance, model::Balance::LeastConn);
    assert_eq!(web.settings.timeout_server.as_str(), "7s");
    assert_eq!(web.settings.timeout_connect.as_str(), "4s");
    // A path key from the Service: no HTTPS redirect although the host has TLS.
    let host = &model.hosts[&HostKey::Exact("app.test".into())];
    let route = host.routes.values().next().unwrap();
    assert_eq!(route.https_redirect, None);
    // An HTTPRoute's backend takes its Service's keys over the ConfigMap's.
    let api = &model.backends[&BackendId {
        namespace: "default".into(),
        service: "api".into(),
        port: "80".into(),
        mode: model::BackendMode::Http,
    }];
    assert_eq!(api.settings.timeout_connect.as_str(), "2s");
    assert_eq!(api.settings.balance, model::Balance::First);
    assert_eq!(
        diagnostics,
        [
            "Service default/web: metadata.annotations[ingress.kubernetes.io/no-such-key]: unknown configuration key 'no-such-key'"
        ]
    );
}

#[test]
fn backend_check_interval_is_read_where_health_check_interval_is_not_set() {
    let interval = |annotations: &str| {
        let yaml = format!(
            "{SERVICE}{}",
            ingress(
                "web",
                &format!("  annotations: {{{annotations}}}\n"),
                "  ingressClassName: portcullis\n"
            )
        );
        let (model, diagnostics) = model_of(&yaml, &options());
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let id = BackendId {
            namespace: "default".into(),
            service: "web".into(),
            port: "80".into(),
            mode: model::BackendMode::Http,
        };
        model.backends[&id]
            .server_options
            .health
            .as_ref()
            .map(|h| h.interval.to_string())
    };
    assert_eq!(interval(""), Some("2s".to_owned()));
    assert_eq!(
        interval("ingress.kubernetes.io/backend-check-interval: 7s"),
        Some("7s".to_owned())
    );
    assert_eq!(
        interval(
            "ingress.kubernetes.io/backend-check-interval: 7s, haproxy-ingress.github.io/health-check-interval: 3s"
        ),
        Some("3s".to_owned())
    );
}

#[test]
fn external_name_services_are_resolved_by_name_and_bad_names_are_reported() {
    let external = |name: &str, ports: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: web}}\nspec:\n  type: ExternalName\n  externalName: {name}\n{ports}"
        ) + &ingress("web", "", "  ingressClassName: portcullis\n")
    };
    let id = |port: &str| BackendId {
        namespace: "default".into(),
        service: "web".into(),
        port: port.into(),
        mode: model::BackendMode::Http,
    };
    let (model, diagnostics) = model_of(
        &external("db.example.com.", "  ports: [{port: 80}]\n"),
        &options(),
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let backend = &model.backends[&id("80")];
    assert!(backend.servers.is_empty());
    let named = backend.settings.named.as_ref().unwrap();
    assert_eq!(
        (named.host.to_string(), named.port),
        ("db.example.com".to_owned(), 80)
    );
    assert_eq!(named.resolution, model::Resolution::AtLoad);
    // Without ports, the route's port number.
    let (model, _) = model_of(&external("db.example.com", ""), &options());
    assert_eq!(
        model.backends[&id("80")]
            .settings
            .named
            .as_ref()
            .unwrap()
            .port,
        80
    );
    // A name HAProxy could not take is reported and its path left out.
    let (model, diagnostics) = model_of(
        &external("'bad name'", "  ports: [{port: 80}]\n"),
        &options(),
    );
    assert!(model.backends.is_empty());
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains("has an invalid externalName")),
        "{diagnostics:?}"
    );
}

#[test]
fn blue_green_follows_only_pods_of_the_endpoints_namespace() {
    let yaml = format!(
        "{SERVICE}---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: web-1, labels: {{kubernetes.io/service-name: web}}}}\naddressType: IPv4\nports: [{{port: 8080}}]\nendpoints:\n- {{addresses: [10.0.0.1], targetRef: {{kind: Pod, name: own}}}}\n- {{addresses: [10.0.0.2], targetRef: {{kind: Pod, name: other, namespace: elsewhere}}}}\n- {{addresses: [10.0.0.3], targetRef: {{kind: Pod, name: gone}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: own, labels: {{group: blue}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: other, namespace: elsewhere, labels: {{group: blue}}}}\n{}",
        ingress(
            "web",
            "  annotations: {haproxy-ingress.github.io/blue-green-balance: 'group=blue=5', haproxy-ingress.github.io/blue-green-mode: pod}\n",
            "  ingressClassName: portcullis\n"
        )
    );
    let (model, diagnostics) = model_of(&yaml, &options());
    let id = BackendId {
        namespace: "default".into(),
        service: "web".into(),
        port: "80".into(),
        mode: model::BackendMode::Http,
    };
    let weights: Vec<Option<u16>> = model.backends[&id]
        .servers
        .iter()
        .map(|s| s.weight.map(model::ServerWeight::get))
        .collect();
    assert_eq!(weights, [Some(5), Some(0), Some(0)]);
    assert_eq!(
        diagnostics,
        [
            "Service default/web: endpoints[10.0.0.2:8080]: the endpoint's targetRef names no pod of its namespace: it gets blue-green weight 0 and no group",
            "Service default/web: endpoints[10.0.0.3:8080]: Pod default/gone not found: the endpoint gets blue-green weight 0 and no group",
        ]
    );
}

/// The source access of the route of `host` at `/`.
fn access_of(model: &ProxyModel, host: &str) -> model::SourceAccess {
    let route = model.hosts[&HostKey::Exact(host.into())]
        .routes
        .get(&PathMatch {
            path: "".into(),
            kind: PathKind::Prefix,
        })
        .unwrap();
    match &route.target {
        model::RouteTarget::Rules(rules) => rules[0]
            .action
            .access
            .as_deref()
            .cloned()
            .unwrap_or_default(),
        model::RouteTarget::Backend(_) => model::SourceAccess::default(),
    }
}

#[test]
fn source_lists_are_named_after_their_setter_and_a_bad_one_refuses_everyone() {
    let guarded = "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: guarded\n  annotations: {portcullis.dev/denylist-source-range: '10.9.0.0/16'}\nspec:\n  ports: [{port: 80}]\n";
    let on_guarded = |name: &str, annotations: &str| {
        format!(
            "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  annotations: {{{annotations}}}\nspec:\n  ingressClassName: portcullis\n  rules:\n  - host: {name}.test\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: guarded, port: {{number: 80}}}}}}}}\n"
        )
    };
    let objects = [
        SERVICE.to_owned(),
        guarded.to_owned(),
        ingress(
            "allow",
            "  annotations: {portcullis.dev/allowlist-source-range: '10.0.0.0/8, !10.1.0.0/16, 10.0.0.0/8', portcullis.dev/allowlist-source-header: X-Real-IP}\n",
            "  ingressClassName: portcullis\n",
        ),
        ingress(
            "legacy",
            "  annotations: {ingress.kubernetes.io/whitelist-source-range: '192.168.0.0/16'}\n",
            "  ingressClassName: portcullis\n",
        ),
        ingress(
            "bad",
            "  annotations: {portcullis.dev/allowlist-source-range: '10.0.0.0/8, 10.0.0.256'}\n",
            "  ingressClassName: portcullis\n",
        ),
        ingress(
            "headeronly",
            "  annotations: {portcullis.dev/allowlist-source-header: X-Real-IP}\n",
            "  ingressClassName: portcullis\n",
        ),
        on_guarded("service", "portcullis.dev/allowlist-source-range: '10.0.0.0/8'"),
    ]
    .concat();
    let (model, diagnostics) = model_of(&objects, &options());
    let cidr = |t: &str| model::Cidr::parse(t).unwrap();

    let allow = access_of(&model, "allow.test");
    let rule = allow.allow.as_ref().unwrap();
    assert_eq!(
        rule.name,
        model::ListName::of("allowlist-source-range", "Ingress default/allow")
    );
    assert_eq!(&*rule.ranges, [cidr("10.0.0.0/8")], "deduplicated");
    assert_eq!(&*rule.exceptions, [cidr("10.1.0.0/16")]);
    assert_eq!(allow.deny, None);
    assert_eq!(
        allow.source_header.map(|h| h.to_string()).as_deref(),
        Some("X-Real-IP")
    );

    let legacy = access_of(&model, "legacy.test");
    assert_eq!(&*legacy.allow.unwrap().ranges, [cidr("192.168.0.0/16")]);

    let bad = access_of(&model, "bad.test");
    assert!(bad.refuse_all && bad.allow.is_none(), "{bad:?}");

    // A source header alone refuses nobody: the path only forwards.
    assert!(access_of(&model, "headeronly.test").is_open());

    // The Ingress's allow list and the Service's deny list, each named after its setter.
    let both = access_of(&model, "service.test");
    assert_eq!(
        both.deny.unwrap().name,
        model::ListName::of("denylist-source-range", "Service default/guarded")
    );
    assert_eq!(
        both.allow.unwrap().name,
        model::ListName::of("allowlist-source-range", "Ingress default/service")
    );

    let reports: Vec<&String> = diagnostics
        .iter()
        .filter(|d| d.contains("source-range"))
        .collect();
    assert_eq!(
        reports,
        [
            "Ingress default/bad: metadata.annotations[portcullis.dev/allowlist-source-range]: invalid value: '10.0.0.256' is not an IP address (1 of 2 entries invalid); every client of the paths it applies to is refused (403) until it is fixed",
            "Ingress default/legacy: metadata.annotations[ingress.kubernetes.io/whitelist-source-range]: 'whitelist-source-range' is deprecated: use 'allowlist-source-range' (this one is ignored when that one is set)",
        ]
    );
}

/// The rule action of a host's only route.
fn auth_of(model: &ProxyModel, host: &str) -> Option<std::sync::Arc<model::PathAuth>> {
    let host = &model.hosts[&HostKey::Exact(format!("{host}.test").into())];
    match &host.routes.values().next().unwrap().target {
        model::RouteTarget::Rules(rules) => rules[0].action.auth.clone(),
        model::RouteTarget::Backend(_) => None,
    }
}

#[test]
fn authentication_keys_build_userlists_and_fail_closed() {
    let mut options = options();
    options.watch_ingress_without_class = true;
    let annotated = |pairs: &str| format!("  annotations: {{{pairs}}}\n");
    let yaml = format!(
        "{SERVICE}{}{}{}{}{}{}{}{}",
        "---\napiVersion: v1\nkind: Secret\nmetadata: {name: users}\nstringData:\n  auth: \"alice:$6$s$h\\nbob:$apr1$a$b\\n\"\n",
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: oauth}\nspec:\n  clusterIP: 10.96.0.7\n  ports: [{port: 4180}]\n",
        ingress(
            "basic",
            &annotated(
                "haproxy-ingress.github.io/auth-secret: users, haproxy-ingress.github.io/auth-realm: Staff"
            ),
            ""
        ),
        ingress(
            "foreign",
            &annotated("haproxy-ingress.github.io/auth-secret: other/users"),
            ""
        ),
        ingress(
            "sso",
            &annotated(
                "haproxy-ingress.github.io/auth-url: 'svc://oauth:4180/oauth2/auth', haproxy-ingress.github.io/auth-timeout: 1s, haproxy-ingress.github.io/auth-signin: 'https://a.test/start', haproxy-ingress.github.io/auth-headers-fail: X-A"
            ),
            ""
        ),
        ingress(
            "badurl",
            &annotated("haproxy-ingress.github.io/auth-url: 'ftp://x/'"),
            ""
        ),
        ingress("plain", "", ""),
        ingress(
            "badsecret",
            &annotated("haproxy-ingress.github.io/auth-secret: Bad_Name"),
            ""
        ),
    );
    let (model, diagnostics) = model_of(&yaml, &options);
    let basic = auth_of(&model, "basic").unwrap();
    let Some(model::BasicAuth::Users { userlist, realm }) = &basic.basic else {
        panic!("{basic:?}");
    };
    assert_eq!(realm.as_str(), "Staff");
    let users: Vec<&str> = userlist.users.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(users, ["alice"]);
    assert_eq!(
        auth_of(&model, "foreign").unwrap().basic,
        Some(model::BasicAuth::Unusable)
    );
    let sso = auth_of(&model, "sso").unwrap();
    let Some(model::ExternalAuth::Service(service)) = &sso.external else {
        panic!("{sso:?}");
    };
    assert_eq!(service.url.as_str(), "http://10.96.0.7:4180/oauth2/auth");
    assert_eq!(service.attempt_timeout_ms, 250);
    assert_eq!(service.method.as_str(), "GET");
    // An auth-url that cannot be read closes the path: it is never served open.
    assert_eq!(
        auth_of(&model, "badurl").unwrap().external,
        Some(model::ExternalAuth::Unusable)
    );
    assert_eq!(auth_of(&model, "plain"), None);
    assert_eq!(
        auth_of(&model, "badsecret").unwrap().basic,
        Some(model::BasicAuth::Unusable)
    );
    assert_eq!(
        diagnostics,
        [
            "Ingress default/badsecret: metadata.annotations[haproxy-ingress.github.io/auth-secret]: invalid value: 'Bad_Name' is not a Secret name, or namespace/name; the paths it applies to answer 403 to every request until it is fixed",
            "Ingress default/badurl: metadata.annotations[haproxy-ingress.github.io/auth-url]: invalid value: 'ftp://x/' is not an http://, https:// or svc:// URL; the paths it applies to answer 403 to every request until it is fixed",
            "Ingress default/basic: metadata.annotations[haproxy-ingress.github.io/auth-secret]: secret default/users, line 2: user 'bob': an Apache MD5 ($apr1$) hash, which HAProxy's C library cannot check; hash the password with `htpasswd -B` (bcrypt) or `mkpasswd -m sha-512`; the line is left out",
            "Ingress default/foreign: metadata.annotations[haproxy-ingress.github.io/auth-secret]: secret other/users is not in the Ingress's namespace default; the path answers 403 to every request",
            "Ingress default/sso: metadata.annotations[haproxy-ingress.github.io/auth-headers-fail]: not used with auth-signin: a refused client is redirected",
        ]
    );
}
