//! Golden tests of rendered files. The base model's files are compared whole; each other
//! test shows only what it changes relative to the base.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

use model::{
    Backend, BackendId, Balance, CertId, HaproxyDuration, Host, HostKey, Origin, PathKind,
    PathMatch, ProxyModel, Route, Server, TlsCert,
};
use render::{RenderedConfig, render, shard_of};

fn id(service: &str, port: &str) -> BackendId {
    BackendId {
        namespace: "web".into(),
        service: service.into(),
        port: port.into(),
        mode: model::BackendMode::Http,
    }
}

fn origin(name: &str) -> Origin {
    Origin {
        kind: "Ingress",
        namespace: "web".into(),
        name: name.into(),
    }
}

fn server(last: u8, port: u16) -> Server {
    Server::at(IpAddr::from([10, 0, 0, last]), port)
}

fn backend(service: &str, port: &str, servers: Vec<Server>) -> Backend {
    Backend {
        id: id(service, port),
        servers,
        server_options: Default::default(),
        settings: std::sync::Arc::new(model::BackendSettings::plain(
            HaproxyDuration::parse("5s").unwrap(),
            HaproxyDuration::parse("50s").unwrap(),
        )),
        origins: vec![origin("site")],
    }
}

fn route(service: &str, port: &str, https_redirect: Option<u16>) -> Route {
    Route {
        frontends: model::Frontends::BOTH,
        target: model::RouteTarget::Backend(id(service, port)),
        https_redirect,
        origin: origin("site"),
    }
}

fn path(path: &str, kind: PathKind) -> PathMatch {
    PathMatch {
        path: path.into(),
        kind,
    }
}

/// Two hosts (one with TLS), a wildcard and a catch-all rule, three backends.
fn base_model() -> ProxyModel {
    let mut model = ProxyModel::default();
    model.global.bind_address = IpAddr::from([127, 0, 0, 1]);
    model.global.http_port = 8080;
    model.global.https_port = 8443;
    model.default_cert = TlsCert {
        pem_bundle: "DEFAULT CERT AND KEY\n".into(),
    };
    for b in [
        backend(
            "app",
            "80",
            vec![server(2, 8080), server(1, 8080)]
                .into_iter()
                .rev()
                .collect(),
        ),
        backend("api", "http", vec![server(3, 9000)]),
        backend("static", "80", vec![]),
    ] {
        model.backends.insert(b.id.clone(), std::sync::Arc::new(b));
    }
    let shop_cert = CertId {
        namespace: "web".into(),
        name: "shop-tls".into(),
    };
    model.certs.insert(
        shop_cert.clone(),
        TlsCert {
            pem_bundle: "SHOP CERT AND KEY\n".into(),
        },
    );
    let shop = Host {
        routes: model::Routes::from([
            (path("", PathKind::Prefix), route("app", "80", Some(308))),
            (
                path("/api", PathKind::Prefix),
                route("api", "http", Some(308)),
            ),
            (path("/api", PathKind::Exact), route("app", "80", Some(308))),
            (
                path("/robots.txt", PathKind::Exact),
                route("static", "80", Some(308)),
            ),
            (
                path("/img", PathKind::Begin),
                route("static", "80", Some(308)),
            ),
        ]),
        cert: Some(shop_cert),
        ..Host::default()
    };
    model
        .hosts
        .insert(HostKey::Exact("shop.example.com".into()), shop);
    let wildcard = Host {
        routes: model::Routes::from([(path("/", PathKind::Exact), route("app", "80", None))]),
        cert: None,
        ..Host::default()
    };
    model
        .hosts
        .insert(HostKey::Wildcard("apps.example.com".into()), wildcard);
    let any = Host {
        routes: model::Routes::from([(
            path("/health", PathKind::Prefix),
            route("api", "http", None),
        )]),
        cert: None,
        ..Host::default()
    };
    model.hosts.insert(HostKey::CatchAll, any);
    model
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Compares `actual` with the golden file `name`; `UPDATE_GOLDEN=1` rewrites it.
fn assert_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {name}; run with UPDATE_GOLDEN=1"));
    assert_eq!(actual, expected, "golden file {name} differs");
}

fn text(rendered: &RenderedConfig, file: &str) -> String {
    rendered.files[file].text().into_owned()
}

/// Lines removed (`-`) and added (`+`) relative to the base rendering of the same file.
fn changes(base: &str, new: &str) -> String {
    let old: Vec<&str> = base.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let mut out = String::new();
    for line in &old {
        if !new_lines.contains(line) {
            out += &format!("- {line}\n");
        }
    }
    for line in &new_lines {
        if !old.contains(line) {
            out += &format!("+ {line}\n");
        }
    }
    out
}

#[test]
fn base_model_renders_every_file() {
    let rendered = render(&base_model());
    let names: Vec<&str> = rendered.files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "backends/shard-000.cfg",
            "certs/crt-list.txt",
            "certs/default.pem",
            "certs/web_shop-tls.pem",
            "haproxy.cfg",
            "maps/hosts.map",
            "maps/http-exact.map",
            "maps/http-prefix.map",
            "maps/https-exact.map",
            "maps/https-prefix.map",
            "maps/regex-hosts.map",
        ]
    );
    for (name, file) in &rendered.files {
        let golden_name = format!("base/{}", name.replace('/', "__"));
        assert_golden(&golden_name, &file.text());
    }
    assert!(
        rendered.files["certs/default.pem"].private
            && rendered.files["certs/web_shop-tls.pem"].private
    );
    assert!(!rendered.files["haproxy.cfg"].private);
    assert_eq!(render(&base_model()), rendered, "deterministic");
}

#[test]
fn global_settings_change_only_their_lines() {
    let base = text(&render(&base_model()), "haproxy.cfg");
    let mut model = base_model();
    model.global.max_connections = 5000;
    model.global.timeouts.client = HaproxyDuration::parse("30s").unwrap();
    model.global.https_port = 443;
    model.global.bind_address = "::1".parse().unwrap();
    model.default_backend = Some(id("api", "http"));
    assert_golden(
        "global-settings.diff",
        &changes(&base, &text(&render(&model), "haproxy.cfg")),
    );
}

#[test]
fn the_backends_defaults_follow_the_configmap_and_sections_write_what_differs() {
    let base = render(&base_model());
    let mut model = base_model();
    // The ConfigMap's values; every backend of the base model balances round-robin.
    model.global.backends.balance = Balance::RoundRobin;
    model.global.backends.timeout_server = HaproxyDuration::parse("2m").unwrap();
    model.global.backends.check_interval = HaproxyDuration::parse("5s").unwrap();
    let api = std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap());
    // An annotation giving the keys' own default: no longer the backends' default.
    api.settings_mut().timeout_server = HaproxyDuration::parse("50s").unwrap();
    api.server_options = std::sync::Arc::new(model::ServerOptions {
        health: Some(model::HealthCheck {
            interval: HaproxyDuration::parse("5s").unwrap(),
            rise: None,
            fall: None,
            port: None,
            addr: None,
            uri: None,
        }),
        ..Default::default()
    });
    let app = std::sync::Arc::make_mut(model.backends.get_mut(&id("app", "80")).unwrap());
    app.settings_mut().timeout_server = HaproxyDuration::parse("2m").unwrap();
    let rendered = render(&model);
    let main = text(&rendered, "haproxy.cfg");
    // The frontends' `defaults` section is the base model's; the backends' one follows.
    let (frontends, backends) = main.split_once("\n# The backends").unwrap();
    let base_main = text(&base, "haproxy.cfg");
    let (base_frontends, _) = base_main.split_once("\n# The backends").unwrap();
    assert_eq!(frontends, base_frontends);
    let shown = format!(
        "# The backends{backends}{}",
        text(&rendered, "backends/shard-000.cfg")
    );
    assert_golden("backend-defaults.txt", &shown);
}

#[test]
fn backend_settings_render_in_its_section() {
    let base = text(&render(&base_model()), "backends/shard-000.cfg");
    let mut model = base_model();
    let api = std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap());
    api.settings_mut().balance = Balance::LeastConn;
    api.settings_mut().timeout_server = HaproxyDuration::parse("2m").unwrap();
    api.servers
        .push(Server::at("fd00::5".parse().unwrap(), 9000));
    // A page of its own: named from the shard file's directory, written beside the
    // global ones.
    api.settings_mut().error_pages.insert(
        503,
        model::ErrorPage::parse(503, "content-type: text/plain\n\napi is down\n").unwrap(),
    );
    let rendered = render(&model);
    let mut shown = changes(&base, &text(&rendered, "backends/shard-000.cfg"));
    for (path, file) in rendered
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("errors/"))
    {
        shown += &format!("== {path}\n{}", file.text());
    }
    assert_golden("backend-settings.diff", &shown);
}

#[test]
fn blue_green_weights_and_group_selection_render_in_the_backend() {
    let base = text(&render(&base_model()), "backends/shard-000.cfg");
    let mut model = base_model();
    let app = std::sync::Arc::make_mut(model.backends.get_mut(&id("app", "80")).unwrap());
    let word = |text: &str| model::Word::parse(text).unwrap();
    for (server, (weight, group)) in app.servers.iter_mut().zip([(1, "blue"), (3, "green")]) {
        let group = Some(group);
        server.weight = Some(model::ServerWeight::clamped(weight));
        server.group = group.map(word);
    }
    app.servers.push(model::Server {
        weight: Some(model::ServerWeight::clamped(0)),
        ..server(3, 8080)
    });
    app.settings_mut().selector = Some(model::GroupSelector {
        header: Some(word("X-Server")),
        cookie: Some(word("SetServer")),
    });
    let rendered = text(&render(&model), "backends/shard-000.cfg");
    assert_golden("blue-green.diff", &changes(&base, &rendered));
    let app = &model.backends[&id("app", "80")];
    assert_eq!(
        render::server_options(app, &app.servers[1]),
        " weight 3",
        "a server added live gets its weight as one in the file"
    );
}

#[test]
fn resolvers_and_servers_found_by_name_render_in_their_sections() {
    let base_config = text(&render(&base_model()), "haproxy.cfg");
    let base_shard = text(&render(&base_model()), "backends/shard-000.cfg");
    let mut model = base_model();
    model.global.resolvers.sections = vec![model::Resolver {
        name: model::Word::parse("kubernetes").unwrap(),
        nameservers: vec![
            "10.96.0.10:53".parse().unwrap(),
            "[fd00::a]:5353".parse().unwrap(),
        ],
    }];
    let named = |host: &str, port, resolution| model::NamedServers {
        host: model::DnsName::parse(host).unwrap(),
        port,
        resolution,
    };
    let app = std::sync::Arc::make_mut(model.backends.get_mut(&id("app", "80")).unwrap());
    app.servers.clear();
    app.settings_mut().named = Some(named(
        "app.web.svc.cluster.local",
        8080,
        model::Resolution::Resolver {
            name: model::Word::parse("kubernetes").unwrap(),
            slots: 2,
        },
    ));
    let api = std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap());
    api.servers.clear();
    api.settings_mut().named = Some(named("db.example.com", 5432, model::Resolution::AtLoad));
    let rendered = render(&model);
    let diff = changes(&base_config, &text(&rendered, "haproxy.cfg"))
        + &changes(&base_shard, &text(&rendered, "backends/shard-000.cfg"));
    assert_golden("dns.diff", &diff);
}

#[test]
fn shards_hold_each_backend_once_by_stable_hash() {
    let mut model = base_model();
    model.global.backend_shards = 4;
    let rendered = render(&model);
    let mut placement = String::new();
    for shard in 0..4 {
        let name = format!("backends/shard-{shard:03}.cfg");
        let content = text(&rendered, &name);
        assert!(content.starts_with(&format!("# portcullis backend shard {shard} of 4\n")));
        for line in content.lines().filter(|l| l.starts_with("backend ")) {
            placement += &format!("{name}: {line}\n");
        }
    }
    assert_golden("shards-4.txt", &placement);
    // The hash is part of the on-disk format: these values must never change.
    assert_golden(
        "shard-hash.txt",
        &format!(
            "web_app_80 % 16 = {}\nweb_api_http % 16 = {}\nweb_static_80 % 1000 = {}\n",
            shard_of(&id("app", "80"), 16),
            shard_of(&id("api", "http"), 16),
            shard_of(&id("static", "80"), 1000)
        ),
    );
    let wide = {
        let mut m = base_model();
        m.global.backend_shards = 1500;
        render(&m)
    };
    assert!(
        wide.files.contains_key("backends/shard-1499.cfg")
            && wide.files.contains_key("backends/shard-0000.cfg")
    );
}

#[test]
fn redirect_codes_and_removed_tls_change_only_the_http_maps() {
    let base = render(&base_model());
    let mut model = base_model();
    let shop = model
        .hosts
        .get_mut(&HostKey::Exact("shop.example.com".into()))
        .unwrap();
    for route in shop.routes.values_mut() {
        route.https_redirect = if matches!(&route.target, model::RouteTarget::Backend(id) if &*id.service == "static")
        {
            None
        } else {
            Some(301)
        };
    }
    let rendered = render(&model);
    let changed: Vec<&String> = rendered
        .files
        .keys()
        .filter(|f| rendered.files[*f] != base.files[*f])
        .collect();
    assert_eq!(changed, ["maps/http-exact.map", "maps/http-prefix.map"]);
    let diff = changes(
        &text(&base, "maps/http-exact.map"),
        &text(&rendered, "maps/http-exact.map"),
    ) + &changes(
        &text(&base, "maps/http-prefix.map"),
        &text(&rendered, "maps/http-prefix.map"),
    );
    assert_golden("redirects.diff", &diff);
}

#[test]
fn server_options_render_on_every_server_line_and_backend_tls_files_beside_them() {
    use model::{
        BackendTls, CheckUri, DnsName, HealthCheck, Protocol, SecretPem, Sni, TlsVerify, Word,
    };
    let base = text(&render(&base_model()), "backends/shard-000.cfg");
    let mut model = base_model();
    let duration = |t: &str| Some(HaproxyDuration::parse(t).unwrap());
    let secret = |name: &str| CertId {
        namespace: "web".into(),
        name: name.into(),
    };
    let api = std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap());
    api.settings_mut().balance = Balance::UrlParam {
        name: Word::parse("user").unwrap(),
        check_post: false,
    };
    std::sync::Arc::make_mut(&mut api.server_options).protocol = Protocol::Http2;
    std::sync::Arc::make_mut(&mut api.server_options).tls = Some(BackendTls {
        verify: TlsVerify::Required {
            ca: SecretPem {
                secret: secret("api-ca"),
                pem: "CA PEM\n".into(),
            },
            hostname: Some(DnsName::parse("api.internal").unwrap()),
        },
        sni: Some(Sni::Fixed(DnsName::parse("api.internal").unwrap())),
        client_cert: Some(SecretPem {
            secret: secret("api-client"),
            pem: "CLIENT PEM\n".into(),
        }),
    });
    std::sync::Arc::make_mut(&mut api.server_options).maxconn = Some(100);
    std::sync::Arc::make_mut(&mut api.server_options).maxqueue = Some(10);
    std::sync::Arc::make_mut(&mut api.server_options).slowstart = duration("30s");
    std::sync::Arc::make_mut(&mut api.server_options).health = Some(HealthCheck {
        interval: HaproxyDuration::parse("2s").unwrap(),
        rise: Some(1),
        fall: Some(2),
        port: Some(9901),
        addr: Some("fd00::9".parse().unwrap()),
        uri: Some(CheckUri::parse("/healthz").unwrap()),
    });
    api.settings_mut().timeouts.queue = duration("5s");
    api.settings_mut().timeouts.tunnel = duration("1h");
    api.settings_mut().timeouts.server_fin = duration("50s");
    let app = std::sync::Arc::make_mut(model.backends.get_mut(&id("app", "80")).unwrap());
    std::sync::Arc::make_mut(&mut app.server_options).tls = Some(BackendTls {
        verify: TlsVerify::None,
        sni: Some(Sni::FromHost),
        client_cert: None,
    });
    std::sync::Arc::make_mut(&mut app.server_options).health = Some(HealthCheck {
        interval: HaproxyDuration::parse("2s").unwrap(),
        rise: None,
        fall: None,
        port: None,
        addr: None,
        uri: None,
    });
    let rendered = render(&model);
    let tls_files: Vec<String> = rendered
        .files
        .iter()
        .filter(|(path, _)| path.starts_with("backend-tls/"))
        .map(|(path, file)| format!("{path} private={} {:?}\n", file.private, file.text()))
        .collect();
    assert_golden(
        "server-options.diff",
        &(changes(&base, &text(&rendered, "backends/shard-000.cfg")) + &tls_files.concat()),
    );
    // A server added live carries the same words as one in the file: its section's
    // `default-server` options, then its own.
    let api = &model.backends[&id("api", "http")];
    let shard = text(&rendered, "backends/shard-000.cfg");
    let section = shard
        .split("\nbackend ")
        .find(|section| section.starts_with("web_api_http\n"))
        .unwrap();
    let shared = section
        .lines()
        .find_map(|l| l.strip_prefix("    default-server"))
        .unwrap();
    // A hashing backend's server carries the id `add server` gives it too.
    let pinned = format!(
        "    server 10.0.0.3_9000 10.0.0.3:9000 id {}",
        render::server_id("10.0.0.3_9000")
    );
    let own = section
        .lines()
        .find_map(|l| l.strip_prefix(pinned.as_str()))
        .unwrap();
    let added = api
        .servers
        .iter()
        .find(|s| s.name() == "10.0.0.3_9000")
        .unwrap();
    assert_eq!(
        format!("{shared}{own}"),
        render::server_options(api, added),
        "{section}"
    );
    assert!(render::checks_servers(api));
    // The files go when no backend names them any more.
    let mut cache = render::RenderCache::default();
    cache.render(&model);
    let plain = cache.render(&base_model());
    assert!(!plain.files.keys().any(|p| p.starts_with("backend-tls/")));
}

#[test]
fn backend_tls_policies_render_sni_verification_and_their_own_ca_file() {
    use model::{BackendTls, DnsName, SecretPem, Sni, TlsVerify};
    let base = text(&render(&base_model()), "backends/shard-000.cfg");
    let mut model = base_model();
    let name = |n: &str| DnsName::parse(n).unwrap();
    // A policy whose CA bundle is a ConfigMap's; its file is named after the policy, apart
    // from a Secret of the same name's.
    std::sync::Arc::make_mut(
        &mut std::sync::Arc::make_mut(model.backends.get_mut(&id("app", "80")).unwrap())
            .server_options,
    )
    .tls = Some(BackendTls {
        verify: TlsVerify::Policy {
            ca: Some(SecretPem {
                secret: CertId {
                    namespace: "web".into(),
                    name: "app-tls".into(),
                },
                pem: "POLICY CA PEM\n".into(),
            }),
            hostname: name("san.app.internal"),
        },
        sni: Some(Sni::Fixed(name("app.internal"))),
        client_cert: None,
    });
    // A policy trusting the system's CAs.
    std::sync::Arc::make_mut(
        &mut std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap())
            .server_options,
    )
    .tls = Some(BackendTls {
        verify: TlsVerify::Policy {
            ca: None,
            hostname: name("api.example.com"),
        },
        sni: Some(Sni::Fixed(name("api.example.com"))),
        client_cert: None,
    });
    let rendered = render(&model);
    let tls_files: Vec<String> = rendered
        .files
        .iter()
        .filter(|(path, _)| path.starts_with("backend-tls/"))
        .map(|(path, file)| format!("{path} private={} {:?}\n", file.private, file.text()))
        .collect();
    assert_golden(
        "backend-tls-policy.diff",
        &(changes(&base, &text(&rendered, "backends/shard-000.cfg")) + &tls_files.concat()),
    );
}

#[test]
fn access_logs_render_their_target_framing_and_format() {
    let base = text(&render(&base_model()), "haproxy.cfg");
    let mut syslog = base_model();
    syslog.global.logging = model::Logging {
        target: model::LogTarget::Syslog("10.0.0.9:1514".parse().unwrap()),
        syslog_format: model::SyslogFormat::Rfc3164,
        max_length: 4096,
        tag: model::LogTag::parse("edge").unwrap(),
        http_format: model::HttpLogFormat::Custom(
            model::LogFormat::parse("%ci [%tr] %ft %b/%s %ST %{+Q}r").unwrap(),
        ),
        sni_format: model::TcpLogFormat::Off,
        tcp_format: model::TcpLogFormat::Default,
        dont_log_null: false,
    };
    assert_golden(
        "logs-syslog.diff",
        &changes(&base, &text(&render(&syslog), "haproxy.cfg")),
    );
    let mut json = base_model();
    json.global.logging.http_format = model::HttpLogFormat::Json;
    assert_golden(
        "logs-json.diff",
        &changes(&base, &text(&render(&json), "haproxy.cfg")),
    );
    let mut off = base_model();
    off.global.logging.target = model::LogTarget::Off;
    assert_golden(
        "logs-off.diff",
        &changes(&base, &text(&render(&off), "haproxy.cfg")),
    );
}

#[test]
fn stats_page_exporter_and_health_check_get_frontends_of_their_own_and_threads_are_set() {
    let base = text(&render(&base_model()), "haproxy.cfg");
    let mut model = base_model();
    model.global.observers = model::Observers {
        stats: Some(model::StatsPage {
            port: 1936,
            auth: Some(model::StatsAuth::parse("admin:s3cr#t").unwrap()),
            cert: None,
            accept_proxy: true,
        }),
        prometheus_port: Some(9101),
        healthz_port: Some(10253),
    };
    model.global.process = model::Process {
        threads: Some(4),
        max_reloads: 3,
    };
    assert_golden(
        "observers.diff",
        &changes(&base, &text(&render(&model), "haproxy.cfg")),
    );
    // No limit: no line.
    model.global.process.max_reloads = 0;
    assert!(!text(&render(&model), "haproxy.cfg").contains("mworker-max-reloads"));
}

#[test]
fn stats_certificate_and_dh_parameters_are_files_of_their_own() {
    let base = text(&render(&base_model()), "haproxy.cfg");
    let mut model = base_model();
    model.global.observers.stats = Some(model::StatsPage {
        port: 1936,
        auth: None,
        cert: Some(model::TlsCert {
            pem_bundle: "-----BEGIN CERTIFICATE-----\n(stats)\n".into(),
        }),
        accept_proxy: false,
    });
    model.global.https.dh_params = Some(model::DhParams {
        pem: "-----BEGIN DH PARAMETERS-----\n(dh)\n".into(),
    });
    let rendered = render(&model);
    let mut shown = changes(&base, &text(&rendered, "haproxy.cfg"));
    for (path, file) in rendered
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("global-tls/"))
    {
        shown += &format!("== {path} (private: {})\n{}", file.private, file.text());
    }
    assert_golden("global-tls.diff", &shown);
    // Neither is a certificate of the SNI list, which changes live.
    assert_eq!(
        text(&rendered, "certs/crt-list.txt"),
        text(&render(&base_model()), "certs/crt-list.txt")
    );
}

#[test]
fn error_pages_server_header_and_body_limit_render_where_haproxy_answers() {
    let base = render(&base_model());
    let mut model = base_model();
    let responses = &mut model.global.responses;
    for (code, page) in [
        (404, "content-type: text/html\n\n<h1>nothing here</h1>"),
        (
            503,
            "content-type: text/plain\nretry-after: 30\n\nback soon",
        ),
    ] {
        responses
            .error_pages
            .insert(code, model::ErrorPage::parse(code, page).unwrap());
    }
    responses.server_header = Some(model::ServerHeader::parse("edge/1.0").unwrap());
    responses.max_body_size = Some(10 << 20);
    let rendered = render(&model);
    let mut shown = changes(&text(&base, "haproxy.cfg"), &text(&rendered, "haproxy.cfg"));
    for (name, file) in rendered
        .files
        .iter()
        .filter(|(name, _)| name.starts_with("errors/"))
    {
        shown += &format!("== {name}\n{}\n", file.text());
    }
    assert_golden("responses.diff", &shown);

    let mut plain = base_model();
    plain.global.responses = model::Responses::default();
    assert_golden(
        "responses-off.diff",
        &changes(
            &text(&base, "haproxy.cfg"),
            &text(&render(&plain), "haproxy.cfg"),
        ),
    );
}

#[test]
fn a_changed_error_page_changes_the_main_configuration_and_replaces_its_file() {
    let mut model = base_model();
    let page = |body: &str| model::ErrorPage::parse(503, &format!("\n{body}")).unwrap();
    model.global.responses.error_pages.insert(503, page("one"));
    let mut cache = render::RenderCache::default();
    let first = cache.render(&model);
    model.global.responses.error_pages.insert(503, page("two"));
    let second = cache.render(&model);
    assert_ne!(first.files["haproxy.cfg"], second.files["haproxy.cfg"]);
    let pages = |rendered: &RenderedConfig| -> Vec<String> {
        rendered
            .files
            .keys()
            .filter(|name| name.starts_with("errors/"))
            .cloned()
            .collect()
    };
    assert_eq!(pages(&first).len(), 1);
    assert_eq!(pages(&second).len(), 1);
    assert_ne!(pages(&first), pages(&second));
    assert_eq!(second, render(&model), "incremental = full");
}

#[test]
fn process_timeouts_render_in_global_and_defaults() {
    let base = text(&render(&base_model()), "haproxy.cfg");
    let mut model = base_model();
    model.global.timeout_stop = HaproxyDuration::parse("1h").unwrap();
    model.global.timeouts.client_fin = HaproxyDuration::parse("10s").unwrap();
    assert_golden(
        "process-timeouts.diff",
        &changes(&base, &text(&render(&model), "haproxy.cfg")),
    );
    model.global.timeout_stop = HaproxyDuration::parse("0").unwrap();
    assert!(!text(&render(&model), "haproxy.cfg").contains("hard-stop-after"));
}

#[test]
fn cookie_affinity_and_proxy_protocol_render_in_backends_and_frontends() {
    use model::{
        AcceptProxy, Cidr, CookieAffinity, CookieDomain, CookieKey, CookieKeyword, CookieStrategy,
        CookieValue, HealthCheck, SendProxy, Word,
    };
    let base = render(&base_model());
    let mut model = base_model();
    let api = std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap());
    std::sync::Arc::make_mut(&mut api.server_options).cookie = Some(
        CookieAffinity::new(
            Word::parse("INGRESSCOOKIE").unwrap(),
            CookieStrategy::Insert,
            vec![
                CookieKeyword::Indirect,
                CookieKeyword::NoCache,
                CookieKeyword::HttpOnly,
                CookieKeyword::Preserve,
                CookieKeyword::Attr(model::CookieAttr::same_site_none()),
                CookieKeyword::Secure,
                CookieKeyword::Domain(CookieDomain::parse("example.com").unwrap()),
            ],
            CookieValue::Dynamic(CookieKey::parse("s3cret $key#").unwrap()),
        )
        .unwrap(),
    );
    std::sync::Arc::make_mut(&mut api.server_options).send_proxy = Some(SendProxy::V2SslCn);
    std::sync::Arc::make_mut(&mut api.server_options).health = Some(HealthCheck {
        interval: HaproxyDuration::parse("2s").unwrap(),
        rise: None,
        fall: None,
        port: None,
        addr: None,
        uri: None,
    });
    let app = std::sync::Arc::make_mut(model.backends.get_mut(&id("app", "80")).unwrap());
    std::sync::Arc::make_mut(&mut app.server_options).cookie = Some(
        CookieAffinity::new(
            Word::parse("sid").unwrap(),
            CookieStrategy::Prefix,
            Vec::new(),
            CookieValue::ServerName,
        )
        .unwrap(),
    );
    std::sync::Arc::make_mut(&mut app.server_options).send_proxy = Some(SendProxy::V1);
    model.global.accept_proxy = AcceptProxy::From(vec![
        Cidr::parse("10.0.0.0/8").unwrap(),
        Cidr::parse("2001:db8::/32").unwrap(),
    ]);
    let rendered = render(&model);
    let mut diff = changes(
        &text(&base, "backends/shard-000.cfg"),
        &text(&rendered, "backends/shard-000.cfg"),
    );
    diff += &changes(&text(&base, "haproxy.cfg"), &text(&rendered, "haproxy.cfg"));
    model.global.accept_proxy = AcceptProxy::Everyone;
    diff += &changes(
        &text(&base, "haproxy.cfg"),
        &text(&render(&model), "haproxy.cfg"),
    );
    assert_golden("affinity-proxy-protocol.diff", &diff);
    // Cookies named after the server are on its line: `add server` cannot take them.
    let app = &model.backends[&id("app", "80")];
    assert!(!render::adds_servers_live(app));
    assert!(!render::derives_server_cookies(app));
    let api = &model.backends[&id("api", "http")];
    assert!(render::adds_servers_live(api) && render::derives_server_cookies(api));
}

#[test]
fn ingress_path_rules_and_host_tls_options() {
    let base = render(&base_model());
    let mut model = base_model();
    let shop = model
        .hosts
        .get_mut(&HostKey::Exact("shop.example.com".into()))
        .unwrap();
    // `/img` with rewrite-target, header keys (one empty value), `hsts: false` and a
    // body limit of its own.
    let rewrite_and_headers = model::GatewayRule {
        conditions: Vec::new(),
        action: model::RuleAction {
            request_headers: model::HeaderEdits::new(model::HeaderLists {
                set: vec![
                    ("X-Env".into(), "prod".into()),
                    ("X-Empty".into(), String::new()),
                ],
                add: Vec::new(),
                remove: vec!["X-Drop".into()],
            }),
            rewrite: Some(Box::new(model::Rewrite {
                hostname: None,
                path: Some(model::PathChange::Prefix {
                    matched: "/img".into(),
                    replacement: "/static".into(),
                }),
            })),
            backends: vec![model::RuleBackend::plain(id("static", "80"), 1)],
            hsts: model::HstsRule::Off,
            body_limit: model::BodyLimit::Bytes(1024),
            ..model::RuleAction::default()
        },
        origin: origin("shop"),

        https_redirect: None,
    };
    shop.routes.insert(
        path("/img", PathKind::Begin),
        Route {
            target: model::RouteTarget::Rules(std::sync::Arc::from([rewrite_and_headers])),
            ..route("static", "80", Some(308))
        },
    );
    // tls-alpn and ssl-options-host on a host with a certificate, and on one without.
    let word = |w: &str| model::TlsWord::parse(w).unwrap();
    shop.tls = std::sync::Arc::new(model::TlsOptions {
        alpn: Some(word("http/1.1")),
        options: vec![word("ssl-max-ver"), word("TLSv1.2")],
        ..model::TlsOptions::default()
    });
    model
        .hosts
        .get_mut(&HostKey::Wildcard("apps.example.com".into()))
        .unwrap()
        .tls = std::sync::Arc::new(model::TlsOptions {
        ciphers: Some(word("ECDHE-ECDSA-AES128-GCM-SHA256")),
        cipher_suites: Some(word("TLS_AES_128_GCM_SHA256")),
        ..model::TlsOptions::default()
    });
    // A host pattern (server-alias-regex) with a certificate: in the pattern map, keyed
    // by its hash in the route maps, and in no certificate list line.
    let shop = model.hosts[&HostKey::Exact("shop.example.com".into())].clone();
    model.hosts.insert(
        HostKey::Regex("^(www|m)\\.shop\\.example\\.com$".into()),
        shop,
    );
    let rendered = render(&model);
    let mut diff = String::new();
    for file in [
        "haproxy.cfg",
        "certs/crt-list.txt",
        "maps/https-prefix.map",
        "maps/regex-hosts.map",
    ] {
        diff += &format!("## {file}\n");
        diff += &changes(&text(&base, file), &text(&rendered, file));
    }
    assert_golden("ingress-rules-and-tls.diff", &diff);
}

#[test]
fn client_certificates_and_cors_render_in_frontends_certificate_list_and_files() {
    let base = render(&base_model());
    let mut model = base_model();
    let ca = |name: &str| model::ClientCa {
        secret: CertId {
            namespace: "web".into(),
            name: name.into(),
        },
        source: model::CaSource::Secret,
        ca: format!("{name} CA\n"),
        crl: None,
    };
    let shop = model
        .hosts
        .get_mut(&HostKey::Exact("shop.example.com".into()))
        .unwrap();
    std::sync::Arc::make_mut(&mut shop.tls).client_auth = Some(model::ClientAuth {
        ca: Some(model::ClientCa {
            crl: Some("REVOKED\n".into()),
            ..ca("shop-ca")
        }),
        verify: model::ClientVerify::On,
        strict: false,
        error_page: None,
    });
    // `/api` with CORS for a list of origins and a regex.
    let cors = model::GatewayRule {
        conditions: Vec::new(),
        action: model::RuleAction {
            backends: vec![model::RuleBackend::plain(id("api", "http"), 1)],
            cors: Some(Box::new(model::Cors {
                origins: model::CorsOrigins::Listed {
                    exact: vec!["https://app.example".into()],
                    regex: vec!["^https://[a-z]+[.]example$".into()],
                },
                allow_methods: vec!["GET".into(), "POST".into()],
                allow_headers: vec!["Content-Type".into()],
                allow_credentials: true,
                expose_headers: vec!["X-Total".into()],
                max_age: 600,
            })),
            ..model::RuleAction::default()
        },
        origin: origin("shop"),

        https_redirect: None,
    };
    shop.routes.insert(
        path("/api", PathKind::Prefix),
        Route {
            target: model::RouteTarget::Rules(std::sync::Arc::from([cors])),
            ..route("api", "http", Some(308))
        },
    );
    let wildcard = model
        .hosts
        .get_mut(&HostKey::Wildcard("apps.example.com".into()))
        .unwrap();
    std::sync::Arc::make_mut(&mut wildcard.tls).client_auth = Some(model::ClientAuth {
        ca: Some(ca("apps-ca")),
        verify: model::ClientVerify::Optional,
        strict: true,
        error_page: Some("https://login.example.com/certificate".into()),
    });
    std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap())
        .settings_mut()
        .client_cert_header = true;
    let rendered = render(&model);
    let mut diff = String::new();
    for file in ["haproxy.cfg", "certs/crt-list.txt"] {
        diff += &format!("## {file}\n");
        diff += &changes(&text(&base, file), &text(&rendered, file));
    }
    let shard = format!(
        "backends/shard-{:03}.cfg",
        shard_of(&id("api", "http"), model.global.backend_shards)
    );
    diff += &format!("## {shard}\n");
    diff += &changes(&text(&base, &shard), &text(&rendered, &shard));
    for file in [
        "client-ca/ca_web_apps-ca.pem",
        "client-ca/ca_web_shop-ca.pem",
        "client-ca/crl_web_shop-ca.pem",
    ] {
        diff += &format!("## {file}\n{}", text(&rendered, file));
    }
    assert_golden("client-certificates-and-cors.diff", &diff);
}

#[test]
fn access_lists_render_as_rule_lines_with_their_files_and_limits_in_the_backend() {
    let base = render(&base_model());
    let mut model = base_model();
    let cidr = |t: &str| model::Cidr::parse(t).unwrap();
    let rule = |key: &str, ranges: &[&str], exceptions: &[&str]| {
        model::AddressRule::new(
            model::ListName::of(key, "Ingress shop/web"),
            ranges.iter().map(|t| cidr(t)).collect(),
            exceptions.iter().map(|t| cidr(t)).collect(),
        )
    };
    let shop = model
        .hosts
        .get_mut(&HostKey::Exact("shop.example.com".into()))
        .unwrap();
    let access = |access: model::SourceAccess, target: &str| model::GatewayRule {
        conditions: Vec::new(),
        action: model::RuleAction {
            backends: vec![model::RuleBackend::plain(id(target, "80"), 1)],
            access: access.unless_open(),
            ..model::RuleAction::default()
        },
        origin: origin("shop"),

        https_redirect: None,
    };
    let lists = model::SourceAccess {
        allow: Some(rule(
            "allowlist-source-range",
            &["10.0.0.0/8", "2001:db8::/32"],
            &["10.1.0.0/16"],
        )),
        deny: Some(rule("denylist-source-range", &["10.2.0.0/16"], &[])),
        source_header: Some(model::HeaderName::parse("X-Real-IP").unwrap()),
        refuse_all: false,
    };
    let refused = model::SourceAccess {
        refuse_all: true,
        ..model::SourceAccess::default()
    };
    for (at, access_rule) in [
        ("/admin", access(lists, "static")),
        ("/closed", access(refused, "static")),
    ] {
        shop.routes.insert(
            path(at, PathKind::Prefix),
            Route {
                target: model::RouteTarget::Rules(std::sync::Arc::from([access_rule])),
                ..route("static", "80", None)
            },
        );
    }
    let api = std::sync::Arc::make_mut(model.backends.get_mut(&id("api", "http")).unwrap());
    api.settings_mut().client_limits = model::ClientLimits {
        rps: Some(10),
        connections: Some(5),
        exempt: vec![cidr("192.168.0.0/16"), cidr("::1")],
        rps_status: model::DenyStatus::new(503).unwrap(),
        ..model::ClientLimits::default()
    };
    let rendered = render(&model);
    let mut diff = String::new();
    for file in ["haproxy.cfg", "backends/shard-000.cfg"] {
        diff += &format!("## {file}\n");
        diff += &changes(&text(&base, file), &text(&rendered, file));
    }
    for (name, file) in rendered
        .files
        .iter()
        .filter(|(n, _)| n.starts_with("acls/"))
    {
        diff += &format!("## {name}\n{}", file.text());
    }
    assert_golden("access.diff", &diff);
}

#[test]
fn path_authentication() {
    let base = render(&base_model());
    let mut model = base_model();
    let word = |text: &str| model::QuotedWord::new(text).unwrap();
    let userlist = std::sync::Arc::new(model::Userlist {
        namespace: "web".into(),
        secret: "users".into(),
        users: vec![
            model::UserEntry {
                name: word("alice"),
                password: model::Password::Hash(word("$6$salt$hash")),
            },
            model::UserEntry {
                name: word("carol"),
                password: model::Password::Plain(word("plain pass")),
            },
        ],
    });
    let service = std::sync::Arc::new(model::AuthService {
        url: word("http://10.0.0.9:4180/oauth2/auth"),
        method: word("GET"),
        headers_request: word("*"),
        headers_succeed: word("x-auth-request-user,x-auth-request-email"),
        headers_fail: word("-"),
        signin: Some(word(
            "https://auth.example.com/oauth2/start?rd=%[hdr(host)]%[path]",
        )),
        attempt_timeout_ms: 500,
    });
    let rule = |auth: model::PathAuth, name: &str| model::GatewayRule {
        conditions: Vec::new(),
        action: model::RuleAction {
            backends: vec![model::RuleBackend::plain(id("app", "80"), 1)],
            auth: Some(std::sync::Arc::new(auth)),
            ..model::RuleAction::default()
        },
        origin: origin(name),

        https_redirect: None,
    };
    let shop = model
        .hosts
        .get_mut(&HostKey::Exact("shop.example.com".into()))
        .unwrap();
    for (at, auth, name) in [
        (
            "/staff",
            model::PathAuth {
                basic: Some(model::BasicAuth::Users {
                    userlist: userlist.clone(),
                    realm: word("Staff only"),
                }),
                external: None,
            },
            "basic",
        ),
        (
            "/sso",
            model::PathAuth {
                basic: None,
                external: Some(model::ExternalAuth::Service(service)),
            },
            "sso",
        ),
        (
            "/closed",
            model::PathAuth {
                basic: Some(model::BasicAuth::Unusable),
                external: Some(model::ExternalAuth::Unusable),
            },
            "closed",
        ),
    ] {
        shop.routes.insert(
            path(at, PathKind::Prefix),
            Route {
                target: model::RouteTarget::Rules(std::sync::Arc::from([rule(auth, name)])),
                ..route("app", "80", None)
            },
        );
    }
    let rendered = render(&model);
    let diff = changes(&text(&base, "haproxy.cfg"), &text(&rendered, "haproxy.cfg"));
    assert_golden("auth.diff", &diff);
    assert!(
        !base.files.contains_key("lua/auth-request.lua"),
        "the Lua action is written only when a path asks a service"
    );
    assert_eq!(
        rendered.files["lua/auth-request.lua"].text(),
        render::AUTH_LUA,
        "the shipped Lua action is written as it is embedded"
    );
}

#[test]
fn tls_passthrough_reads_sni_on_the_https_port_and_hands_other_names_to_the_https_frontend() {
    let base = render(&base_model());
    let mut model = base_model();
    model.global.accept_proxy = model::AcceptProxy::Everyone;
    let base_with_proxy = render(&model);
    let database = backend("db", "443", vec![server(7, 5432)]).for_passthrough();
    let database_id = database.id.clone();
    model
        .backends
        .insert(database.id.clone(), std::sync::Arc::new(database));
    let passthrough = |backend: Option<BackendId>| model::Passthrough {
        backend,
        origin: origin("db"),
        access: None,
    };
    model.passthrough.insert(
        HostKey::Exact("a.passthrough.test".into()),
        passthrough(Some(database_id.clone())),
    );
    model.passthrough.insert(
        HostKey::Suffix("db.passthrough.test".into()),
        passthrough(Some(database_id.clone())),
    );
    model.passthrough.insert(
        HostKey::Wildcard("broken.passthrough.test".into()),
        passthrough(None),
    );
    // An HTTPS host under a passthrough wildcard stays terminated: the more specific name.
    let mut terminated = model.hosts[&HostKey::Exact("shop.example.com".into())].clone();
    terminated.cert = None;
    model
        .hosts
        .insert(HostKey::Exact("www.db.passthrough.test".into()), terminated);
    let rendered = render(&model);
    let shard = rendered
        .files
        .iter()
        .find(|(name, file)| {
            name.starts_with("backends/") && file.text().contains("backend web_db_443")
        })
        .map(|(_, file)| file.text().into_owned())
        .unwrap();
    let section = &shard[shard.find("\nbackend web_db_443_passthrough").unwrap()..];
    assert_golden(
        "passthrough.diff",
        &format!(
            "{}\n# maps/passthrough.map\n{}\n# the passthrough backend\n{}",
            changes(
                &text(&base_with_proxy, "haproxy.cfg"),
                &text(&rendered, "haproxy.cfg")
            ),
            text(&rendered, "maps/passthrough.map"),
            section.split("\n\n").next().unwrap_or(section).trim_start()
        ),
    );
    // Without passthrough names nothing of it is rendered: no extra hop, no map.
    model.passthrough.clear();
    model.global.accept_proxy = model::AcceptProxy::Nobody;
    let none = render(&model);
    assert_eq!(text(&none, "haproxy.cfg"), text(&base, "haproxy.cfg"));
    assert!(!none.files.contains_key("maps/passthrough.map"));
}

#[test]
fn tcp_services_get_a_frontend_per_port_choosing_by_terminated_sni() {
    let base = render(&base_model());
    let mut model = base_model();
    let tcp = |service: &str, port: &str, last: u8| {
        let mut backend = backend(service, port, vec![server(last, 5432)]).for_tcp();
        std::sync::Arc::make_mut(&mut backend.server_options).send_proxy =
            Some(model::SendProxy::V2);
        backend
    };
    let (db, blue, green) = (
        tcp("db", "5432", 7),
        tcp("blue", "9000", 8),
        tcp("green", "9000", 9),
    );
    for b in [&db, &blue, &green] {
        model
            .backends
            .insert(b.id.clone(), std::sync::Arc::new(b.clone()));
    }
    let db_cert = CertId {
        namespace: "web".into(),
        name: "db-tls".into(),
    };
    model.certs.insert(
        db_cert.clone(),
        TlsCert {
            pem_bundle: "DB CERT AND KEY\n".into(),
        },
    );
    let route = |backends: Vec<(Option<BackendId>, u32)>| model::TcpRoute {
        backends,
        origin: origin("tcp"),
    };
    // A plain port: one backend, clients behind a proxy.
    model.tcp_services.insert(
        5432,
        model::TcpService {
            routes: BTreeMap::from([(HostKey::CatchAll, route(vec![(Some(db.id.clone()), 1)]))]),
            tls: None,
            accept_proxy: true,
            log_format: None,
            origin: origin("tcp"),
        },
    );
    // A terminating port: names by SNI, one split 3:1, a broken one refused, no
    // catch-all (other names refused), the shop's certificate the default one.
    model.tcp_services.insert(
        9443,
        model::TcpService {
            routes: BTreeMap::from([
                (
                    HostKey::Exact("db.example.com".into()),
                    route(vec![(Some(db.id.clone()), 1)]),
                ),
                (
                    HostKey::Suffix("apps.example.com".into()),
                    route(vec![
                        (Some(blue.id.clone()), 3),
                        (Some(green.id.clone()), 1),
                    ]),
                ),
                (
                    HostKey::Wildcard("broken.example.com".into()),
                    route(vec![]),
                ),
            ]),
            tls: Some(model::TcpTls {
                certs: vec![
                    CertId {
                        namespace: "web".into(),
                        name: "shop-tls".into(),
                    },
                    db_cert,
                ],
                client_ca: None,
            }),
            accept_proxy: false,
            log_format: Some(model::TcpLogFormat::Json),
            origin: origin("tcp"),
        },
    );
    // A plain port split between a backend and one that does not resolve (its share
    // refused).
    model.tcp_services.insert(
        7000,
        model::TcpService {
            routes: BTreeMap::from([(
                HostKey::CatchAll,
                route(vec![(Some(blue.id.clone()), 2), (None, 1)]),
            )]),
            tls: None,
            accept_proxy: false,
            log_format: Some(model::TcpLogFormat::Off),
            origin: origin("tcp"),
        },
    );
    let rendered = render(&model);
    let shard = rendered
        .files
        .iter()
        .find(|(name, file)| {
            name.starts_with("backends/") && file.text().contains("backend web_db_5432_tcp")
        })
        .map(|(_, file)| file.text().into_owned())
        .unwrap();
    let section = &shard[shard.find("\nbackend web_db_5432_tcp").unwrap()..];
    assert_golden(
        "tcp-services.diff",
        &format!(
            "{}\n# the TCP backend\n{}",
            changes(&text(&base, "haproxy.cfg"), &text(&rendered, "haproxy.cfg")),
            section.split("\n\n").next().unwrap_or(section).trim_start()
        ),
    );
    assert_eq!(
        rendered.own_ports,
        std::collections::BTreeSet::from([5432, 7000, 9443])
    );
}

/// The certificate list of `hosts` names under one certificate, plus the base model's.
fn crt_list_with_hosts(names: &[String]) -> String {
    let mut model = base_model();
    let shop = model.hosts[&HostKey::Exact("shop.example.com".into())].clone();
    for name in names {
        model
            .hosts
            .insert(HostKey::Exact(name.as_str().into()), shop.clone());
    }
    text(&render(&model), "certs/crt-list.txt")
}

#[test]
fn names_sharing_a_certificate_share_lines_and_one_more_name_changes_one_line() {
    let names: Vec<String> = (0..600).map(|i| format!("svc-{i}.example.com")).collect();
    let list = crt_list_with_hosts(&names);
    let lines: Vec<&str> = list.lines().collect();
    // 601 names (with shop.example.com) at about 128 a line: 4 lines, a power of two.
    assert_eq!(lines.len(), 4, "{list}");
    let mut listed: Vec<&str> = Vec::new();
    for line in &lines {
        let mut words = line.split(' ');
        assert_eq!(words.next(), Some("certs/web_shop-tls.pem"));
        listed.extend(words);
    }
    listed.sort_unstable();
    let mut expected: Vec<&str> = names.iter().map(String::as_str).collect();
    expected.push("shop.example.com");
    expected.sort_unstable();
    assert_eq!(listed, expected, "every name exactly once");

    let mut more = names.clone();
    more.push("one-more.example.com".to_owned());
    let after = crt_list_with_hosts(&more);
    let before: std::collections::BTreeSet<&str> = list.lines().collect();
    let now: std::collections::BTreeSet<&str> = after.lines().collect();
    assert_eq!(before.difference(&now).count(), 1, "one line replaced");
    assert_eq!(now.difference(&before).count(), 1, "by one line");
    assert!(
        now.difference(&before)
            .all(|line| line.split(' ').any(|name| name == "one-more.example.com"))
    );
}

#[test]
fn a_certificate_list_line_stays_within_one_runtime_api_payload() {
    // Long names: a line's names continue on the next line past 8 KiB.
    let names: Vec<String> = (0..100)
        .map(|i| format!("{}-{i}.example.com", "x".repeat(200)))
        .collect();
    let list = crt_list_with_hosts(&names);
    assert!(list.lines().count() >= 3, "{list}");
    for line in list.lines() {
        assert!(line.len() <= 8 * 1024, "a line of {} bytes", line.len());
        assert!(
            line.split(' ').count() >= 2,
            "a line names at least one host"
        );
    }
    assert_eq!(
        list.split(' ')
            .filter(|w| w.contains("example.com"))
            .count(),
        101
    );
}

#[test]
fn a_default_backend_s_rule_serves_the_main_frontends_only() {
    let mut model = base_model();
    model.default_backend = Some(id("app", "80"));
    model.default_rule = Some(std::sync::Arc::new(model::GatewayRule {
        conditions: Vec::new(),
        action: model::RuleAction {
            request_headers: model::HeaderEdits::new(model::HeaderLists {
                set: vec![("X-Default".into(), "yes".into())],
                add: Vec::new(),
                remove: Vec::new(),
            }),
            backends: vec![model::RuleBackend::plain(id("app", "80"), 1)],
            ..model::RuleAction::default()
        },
        origin: origin("site"),

        https_redirect: None,
    }));
    // A Gateway listener on a port of its own: what its routes do not take is 404, never
    // an Ingress's default backend.
    let mut listener = route("app", "80", None);
    listener.frontends = model::Frontends::port(8081);
    model.hosts.insert(
        HostKey::Exact("gw.example.com".into()),
        model::Host {
            routes: [(path("/", PathKind::Prefix), listener)]
                .into_iter()
                .collect(),
            cert: None,
            tls: Default::default(),
        },
    );
    let config = text(&render(&model), "haproxy.cfg");
    let sections: Vec<&str> = config.split("\nfrontend ").collect();
    let section = |name: &str| {
        sections
            .iter()
            .find(|s| s.starts_with(name))
            .unwrap_or_else(|| panic!("no frontend {name}:\n{config}"))
    };
    for main in ["http\n", "https\n"] {
        assert!(
            section(main).contains("str(_gw_default)"),
            "{}",
            section(main)
        );
    }
    assert!(
        !section("port_8081").contains("_gw_default"),
        "{}",
        section("port_8081")
    );
}
