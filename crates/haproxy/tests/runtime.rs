//! The runtime API against a real HAProxy: exact transcripts for model changes, and the
//! I3 differential test (after live updates, HAProxy equals a fresh load of the files).

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use haproxy::{Haproxy, LaunchOptions, RuntimeApi, StateDir};
use model::{
    Backend, BackendId, CertId, HaproxyDuration, Host, HostKey, Origin, PathKind, PathMatch,
    ProxyModel, Route, Server, TlsCert,
};
use plan::{AppliedFiles, Backends, LiveState, RuntimeCommand, ServerRef};
use proptest::prelude::*;
use render::render;
use test_support::{free_port, self_signed};

const BACKENDS: [&str; 3] = ["app", "api", "img"];
const HOSTS: [&str; 4] = ["a.test", "b.test", "c.test", "d.test"];

fn id(service: &str) -> BackendId {
    BackendId {
        namespace: "web".into(),
        service: service.into(),
        port: "80".into(),
        mode: model::BackendMode::Http,
    }
}

fn origin() -> Origin {
    Origin {
        kind: "Ingress",
        namespace: "web".into(),
        name: "site".into(),
    }
}

fn certificate(name: &str) -> TlsCert {
    let (cert, key) = self_signed(name, &[name]);
    TlsCert {
        pem_bundle: cert + &key,
    }
}

const CERTIFICATES: [&str; 2] = ["a-tls", "b-tls"];

fn tls_id(index: usize) -> CertId {
    CertId {
        namespace: "web".into(),
        name: CERTIFICATES[index].into(),
    }
}

/// Two contents for each of the two certificates.
fn certificate_variants() -> [[TlsCert; 2]; 2] {
    [
        [certificate("a.test"), certificate("a.test")],
        [certificate("b.test"), certificate("b.test")],
    ]
}

/// What varies between models in these tests: servers per backend (last octet of
/// 10.0.0.x), the backend each host routes `/` to, the certificate each host is served
/// with, and which content each certificate has.
#[derive(Debug, Clone)]
struct Shape {
    servers: [Vec<u8>; 3],
    routes: [Option<usize>; 4],
    tls: [Option<usize>; 4],
    contents: [usize; 2],
    /// Seventy more hosts: more map changes than key edits are used for.
    bulk: bool,
    /// The entries of `guarded.test`'s allow list: 0: one block; 1: 1500 blocks and an
    /// exception; 2: two blocks of both families; `None`: no such host.
    allow: Option<usize>,
    /// TLS passthrough names `p0.pass.test`... and the backend each passes through to
    /// (`None`: no such name), with `always.pass.test` and a passthrough backend per
    /// service always there, so the HTTPS port always reads SNI first and only the
    /// passthrough map changes; `None`: no passthrough at all.
    passthrough: Option<[Option<usize>; 3]>,
}

/// The passthrough backend of a service: the same servers in `mode tcp`, always there.
fn passthrough_backend(service: &str) -> Backend {
    Backend {
        id: id(service),
        servers: vec![Server::at(IpAddr::from([10, 0, 1, 1]), 8443)],
        server_options: Default::default(),
        settings: std::sync::Arc::new(model::BackendSettings::plain(
            HaproxyDuration::parse("5s").unwrap(),
            HaproxyDuration::parse("50s").unwrap(),
        )),
        origins: vec![origin()],
    }
    .for_passthrough()
}

/// The allow list of `guarded.test`.
fn allow_rule(variant: usize) -> model::AddressRule {
    let cidr = |text: &str| model::Cidr::parse(text).unwrap();
    let (ranges, exceptions) = match variant {
        0 => (vec![cidr("10.0.0.0/8")], Vec::new()),
        1 => (
            (0..1500)
                .map(|i| cidr(&format!("10.{}.{}.0/24", i / 256, i % 256)))
                .collect(),
            vec![cidr("10.1.0.0/16")],
        ),
        _ => (
            vec![cidr("192.168.0.0/16"), cidr("2001:db8::/32")],
            Vec::new(),
        ),
    };
    model::AddressRule::new(
        model::ListName::of("allowlist-source-range", "Ingress web/guarded"),
        ranges,
        exceptions,
    )
}

fn model(shape: &Shape, certificates: &[[TlsCert; 2]; 2], default_cert: &TlsCert) -> ProxyModel {
    let mut model = ProxyModel::default();
    model.global.bind_address = IpAddr::from([127, 0, 0, 1]);
    model.global.http_port = free_port();
    model.global.https_port = free_port();
    model.default_cert = default_cert.clone();
    for (service, servers) in BACKENDS.iter().zip(&shape.servers) {
        let mut servers: Vec<Server> = servers
            .iter()
            .map(|last| Server::at(IpAddr::from([10, 0, 0, *last]), 8080))
            .collect();
        servers.sort();
        servers.dedup();
        let backend = Backend {
            id: id(service),
            servers,
            server_options: Default::default(),
            settings: std::sync::Arc::new(model::BackendSettings::plain(
                HaproxyDuration::parse("5s").unwrap(),
                HaproxyDuration::parse("50s").unwrap(),
            )),
            origins: vec![origin()],
        };
        model
            .backends
            .insert(backend.id.clone(), std::sync::Arc::new(backend));
    }
    for ((host, route), tls) in HOSTS.iter().zip(&shape.routes).zip(&shape.tls) {
        if route.is_none() && tls.is_none() {
            continue;
        }
        let routes = route
            .iter()
            .map(|backend| {
                (
                    PathMatch {
                        path: "".into(),
                        kind: PathKind::Prefix,
                    },
                    Route {
                        frontends: model::Frontends::BOTH,
                        target: model::RouteTarget::Backend(id(BACKENDS[*backend])),
                        https_redirect: None,
                        origin: origin(),
                    },
                )
            })
            .collect();
        let cert = tls.map(tls_id);
        if let Some(index) = tls {
            model.certs.insert(
                tls_id(*index),
                certificates[*index][shape.contents[*index]].clone(),
            );
        }
        model.hosts.insert(
            HostKey::Exact((*host).into()),
            Host {
                routes,
                cert,
                ..Host::default()
            },
        );
    }
    // A path with an allow list whose entries change from model to model.
    if let Some(allow) = shape.allow {
        let guarded = model::GatewayRule {
            conditions: Vec::new(),
            action: model::RuleAction {
                backends: vec![model::RuleBackend::plain(id("app"), 1)],
                access: model::SourceAccess {
                    allow: Some(allow_rule(allow)),
                    ..model::SourceAccess::default()
                }
                .unless_open(),
                ..model::RuleAction::default()
            },
            origin: origin(),

            https_redirect: None,
        };
        model.hosts.insert(
            HostKey::Exact("guarded.test".into()),
            Host {
                routes: model::Routes::from([(
                    PathMatch {
                        path: "".into(),
                        kind: PathKind::Prefix,
                    },
                    Route {
                        frontends: model::Frontends::BOTH,
                        target: model::RouteTarget::Rules(Arc::from([guarded])),
                        https_redirect: None,
                        origin: origin(),
                    },
                )]),
                ..Host::default()
            },
        );
    }
    let services = if shape.passthrough.is_some() {
        &BACKENDS[..]
    } else {
        &[]
    };
    for service in services {
        let backend = passthrough_backend(service);
        model
            .backends
            .insert(backend.id.clone(), std::sync::Arc::new(backend));
    }
    let names = shape.passthrough.iter().flat_map(|names| {
        std::iter::once(("always.pass.test".to_owned(), Some(0))).chain(
            names
                .iter()
                .enumerate()
                .map(|(index, backend)| (format!("p{index}.pass.test"), *backend)),
        )
    });
    for (name, backend) in names {
        let Some(backend) = backend else { continue };
        model.passthrough.insert(
            HostKey::Exact(name.into()),
            model::Passthrough {
                backend: Some(passthrough_backend(BACKENDS[backend]).id),
                origin: origin(),
                access: None,
            },
        );
    }
    if shape.bulk {
        for index in 0..70 {
            let routes = BTreeMap::from([(
                PathMatch {
                    path: "".into(),
                    kind: PathKind::Prefix,
                },
                Route {
                    frontends: model::Frontends::BOTH,
                    target: model::RouteTarget::Backend(id("app")),
                    https_redirect: None,
                    origin: origin(),
                },
            )]);
            model.hosts.insert(
                HostKey::Exact(format!("bulk{index}.test").into()),
                Host {
                    routes: routes.into_iter().collect(),
                    cert: None,
                    ..Host::default()
                },
            );
        }
    }
    model
}

fn haproxy_binary() -> std::path::PathBuf {
    [
        "/usr/sbin/haproxy",
        "/usr/local/sbin/haproxy",
        "/usr/bin/haproxy",
    ]
    .iter()
    .map(std::path::PathBuf::from)
    .find(|p| p.is_file())
    .expect("haproxy is installed")
}

/// Writes the model's files into `dir`.
fn write(state: &StateDir, applied: &mut AppliedFiles, model: &ProxyModel) {
    let plan = plan::plan(applied, &render(model));
    state.apply(&plan, applied).unwrap();
}

async fn start(dir: &Path, model: &ProxyModel) -> (Haproxy, StateDir, AppliedFiles) {
    let mut state = StateDir::open(dir).unwrap();
    let sockets = state.prepare_sockets().unwrap();
    let mut applied = AppliedFiles::new();
    write(&state, &mut applied, model);
    let haproxy = Haproxy::start(&LaunchOptions {
        binary: haproxy_binary(),
        state_dir: state.root().to_path_buf(),
        sockets,
        share_stdout: false,
    })
    .await
    .unwrap();
    (haproxy, state, applied)
}

fn backends(model: &ProxyModel) -> Backends {
    model.backends.clone()
}

fn runtime(state: &StateDir) -> RuntimeApi {
    RuntimeApi::new(state.sockets().unwrap().admin())
}

/// `show servers state`, reduced to what a fresh load must reproduce: backend, server,
/// address, port, operational and administrative state, weights. Sorted.
async fn servers_state(api: &RuntimeApi) -> Vec<String> {
    let text = api.query("show servers state").await.unwrap();
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && l.split_whitespace().count() > 20)
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // be_name srv_name srv_addr srv_op_state srv_admin_state srv_uweight
            // srv_iweight srv_port
            format!(
                "{} {} {} {} {} {} {} {}",
                f[1], f[3], f[4], f[5], f[6], f[7], f[8], f[18]
            )
        })
        .collect();
    rows.sort();
    rows
}

/// Every map's entries (without their addresses), sorted, by map file.
async fn maps(api: &RuntimeApi) -> BTreeMap<String, Vec<String>> {
    let mut maps = BTreeMap::new();
    for map in [
        "maps/hosts.map",
        "maps/http-exact.map",
        "maps/http-prefix.map",
        "maps/https-exact.map",
        "maps/https-prefix.map",
        "maps/passthrough.map",
    ] {
        let text = api.query(&format!("show map {map}")).await.unwrap();
        let mut entries: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_once(' ').map(|(_, entry)| entry.to_owned()))
            .collect();
        entries.sort();
        maps.insert(map.to_owned(), entries);
    }
    maps
}

/// The entries of the allow list's two files (without their addresses), sorted.
async fn acls(api: &RuntimeApi) -> BTreeMap<String, Vec<String>> {
    let rule = allow_rule(0);
    let mut acls = BTreeMap::new();
    for file in [
        render::layout::address_list_file(&rule.name),
        render::layout::address_exceptions_file(&rule.name),
    ] {
        let text = api.query(&format!("show acl {file}")).await.unwrap();
        let mut entries: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_once(' ').map(|(_, entry)| entry.to_owned()))
            .collect();
        entries.sort();
        acls.insert(file, entries);
    }
    acls
}

/// The fingerprint HAProxy reports for each certificate file it has, and the entries of
/// the certificate list (sorted, without line numbers).
async fn certificates(api: &RuntimeApi) -> (BTreeMap<String, String>, Vec<String>) {
    let mut fingerprints = BTreeMap::new();
    let listing = api.query("show ssl cert").await.unwrap();
    for file in listing.lines().filter(|l| !l.starts_with('#')) {
        let text = api.query(&format!("show ssl cert {file}")).await.unwrap();
        let fingerprint = text
            .lines()
            .find(|l| l.starts_with("SHA1 FingerPrint:"))
            .unwrap_or_else(|| panic!("no fingerprint in {text:?}"))
            .to_owned();
        fingerprints.insert(file.to_owned(), fingerprint);
    }
    let list = api
        .query("show ssl crt-list certs/crt-list.txt")
        .await
        .unwrap();
    let mut entries: Vec<String> = list
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_owned())
        .collect();
    entries.sort();
    (fingerprints, entries)
}

fn request_lines(transcript: &[haproxy::Exchange]) -> Vec<(String, String)> {
    transcript
        .iter()
        .map(|e| {
            (
                e.request.lines().next().unwrap_or_default().to_owned(),
                e.reply.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn servers_routes_and_a_certificate_change_live_with_the_exact_commands() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certificate_variants();
    let default_cert = certificate("default");
    let before = Shape {
        servers: [vec![1, 2], vec![3], vec![]],
        routes: [Some(0), None, None, None],
        tls: [Some(0), None, None, None],
        contents: [0, 0],
        bulk: false,
        allow: None,
        passthrough: Some([Some(0), None, None]),
    };
    // p0.pass.test moves to another backend, p1.pass.test comes: map edits.
    let after = Shape {
        servers: [vec![2, 4], vec![3], vec![]],
        routes: [Some(0), Some(1), None, None],
        tls: [Some(0), None, None, None],
        contents: [1, 0],
        bulk: false,
        allow: None,
        passthrough: Some([Some(1), Some(2), None]),
    };
    let first = model(&before, &certs, &default_cert);
    let (mut haproxy, state, mut applied) = start(dir.path(), &first).await;
    let mut second = model(&after, &certs, &default_cert);
    second.global = first.global.clone();

    let live = LiveState::loaded(backends(&first), &render(&first));
    let rendered = render(&second);
    let update = plan::live_update(&live, &backends(&second), &rendered);
    assert!(update.reload.is_empty(), "{:?}", update.reload);
    let server = |name: &str| ServerRef {
        backend: "web_app_80".into(),
        server: name.into(),
    };
    let file = |path: &str| std::sync::Arc::from(rendered.files[path].text().as_bytes());
    assert_eq!(
        update.commands,
        [
            RuntimeCommand::AddServer {
                server: server("10.0.0.4_8080"),
                address: "10.0.0.4:8080".parse().unwrap(),
                options: String::new(),
                id: render::server_id("10.0.0.4_8080"),
                checked: false,
                derives_cookie: false,
            },
            RuntimeCommand::RemoveServer(server("10.0.0.1_8080")),
            RuntimeCommand::EditMap {
                map: "maps/hosts.map".into(),
                add: vec![("b.test".into(), "b.test".into())],
                set: vec![],
                delete: vec![],
            },
            RuntimeCommand::EditMap {
                map: "maps/http-prefix.map".into(),
                add: vec![("b.test#/".into(), "web_api_80".into())],
                set: vec![],
                delete: vec![],
            },
            RuntimeCommand::EditMap {
                map: "maps/https-prefix.map".into(),
                add: vec![("b.test#/".into(), "web_api_80".into())],
                set: vec![],
                delete: vec![],
            },
            RuntimeCommand::EditMap {
                map: "maps/passthrough.map".into(),
                add: vec![("p1.pass.test".into(), "web_img_80_passthrough".into())],
                set: vec![("p0.pass.test".into(), "web_api_80_passthrough".into())],
                delete: vec![],
            },
            RuntimeCommand::UpdateCertificate {
                file: "certs/web_a-tls.pem".into(),
                content: file("certs/web_a-tls.pem"),
            },
        ]
    );

    write(&state, &mut applied, &second);
    let api = runtime(&state);
    let done = api.apply(&update.commands).await.unwrap();
    let owned = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        request_lines(&done.transcript),
        owned(&[
            (
                "add server web_app_80/10.0.0.4_8080 10.0.0.4:8080 pool-max-conn -1 pool-purge-delay 5s id 596691",
                "New server registered."
            ),
            ("set server web_app_80/10.0.0.4_8080 state ready", ""),
            ("set server web_app_80/10.0.0.1_8080 state maint", ""),
            ("del server web_app_80/10.0.0.1_8080", "Server deleted."),
            ("add map maps/hosts.map b.test b.test", ""),
            ("add map maps/http-prefix.map b.test#/ web_api_80", ""),
            ("add map maps/https-prefix.map b.test#/ web_api_80", ""),
            (
                "add map maps/passthrough.map p1.pass.test web_img_80_passthrough",
                ""
            ),
            (
                "set map maps/passthrough.map p0.pass.test web_api_80_passthrough",
                ""
            ),
            (
                "set ssl cert certs/web_a-tls.pem <<",
                "Transaction created for certificate certs/web_a-tls.pem!"
            ),
            (
                "commit ssl cert certs/web_a-tls.pem",
                "Committing certs/web_a-tls.pem.\nSuccess!"
            ),
        ])
    );
    assert_eq!(done.deleted, [server("10.0.0.1_8080")]);
    assert_eq!(
        maps(&api).await["maps/hosts.map"],
        ["a.test a.test", "b.test b.test"]
    );
    assert_eq!(
        maps(&api).await["maps/passthrough.map"],
        [
            "always.pass.test web_app_80_passthrough",
            "p0.pass.test web_api_80_passthrough",
            "p1.pass.test web_img_80_passthrough"
        ]
    );

    // b.test gets its own certificate, a.test loses its one.
    let third_shape = Shape {
        tls: [None, Some(1), None, None],
        ..after
    };
    let mut third = model(&third_shape, &certs, &default_cert);
    third.global = first.global.clone();
    let live = update.next;
    let update = plan::live_update(&live, &backends(&third), &render(&third));
    assert!(update.reload.is_empty(), "{:?}", update.reload);
    write(&state, &mut applied, &third);
    let done = api.apply(&update.commands).await.unwrap();
    assert_eq!(
        request_lines(&done.transcript),
        owned(&[
            (
                "new ssl cert certs/web_b-tls.pem",
                "New empty certificate store 'certs/web_b-tls.pem'!"
            ),
            (
                "set ssl cert certs/web_b-tls.pem <<",
                "Transaction created for certificate certs/web_b-tls.pem!"
            ),
            (
                "commit ssl cert certs/web_b-tls.pem",
                "Committing certs/web_b-tls.pem\nSuccess!"
            ),
            (
                "add ssl crt-list certs/crt-list.txt <<",
                "Inserting certificate 'certs/web_b-tls.pem' in crt-list 'certs/crt-list.txt'.\nSuccess!"
            ),
            (
                "show ssl crt-list -n certs/crt-list.txt",
                "# certs/crt-list.txt\ncerts/web_a-tls.pem:1 a.test\ncerts/web_b-tls.pem:2 b.test"
            ),
            (
                "del ssl crt-list certs/crt-list.txt certs/web_a-tls.pem:1",
                "Entry 'certs/web_a-tls.pem' deleted in crtlist 'certs/crt-list.txt'!"
            ),
            (
                "del ssl cert certs/web_a-tls.pem",
                "Certificate 'certs/web_a-tls.pem' deleted!"
            ),
        ])
    );
    assert_eq!(
        certificates(&api).await.1,
        ["b.test"],
        "the list serves b.test only"
    );

    // Seventy new hosts: each map is replaced in one versioned transaction.
    let fourth_shape = Shape {
        bulk: true,
        ..third_shape
    };
    let mut fourth = model(&fourth_shape, &certs, &default_cert);
    fourth.global = first.global.clone();
    let live = update.next;
    let rendered = render(&fourth);
    let update = plan::live_update(&live, &backends(&fourth), &rendered);
    write(&state, &mut applied, &fourth);
    let done = api.apply(&update.commands).await.unwrap();
    let mut expected = Vec::new();
    for map in [
        "maps/hosts.map",
        "maps/http-prefix.map",
        "maps/https-prefix.map",
    ] {
        expected.push((
            format!("prepare map {map}"),
            "New version created: 1".to_owned(),
        ));
        expected.push((format!("add map @1 {map} <<"), String::new()));
        expected.push((format!("commit map @1 {map}"), String::new()));
    }
    assert_eq!(request_lines(&done.transcript), expected);
    // The payload is the rendered file itself.
    assert_eq!(
        done.transcript[1].request,
        format!(
            "add map @1 maps/hosts.map <<\n{}",
            rendered.files["maps/hosts.map"].text()
        )
    );
    assert_eq!(maps(&api).await["maps/hosts.map"].len(), 72);
    haproxy.stop(std::time::Duration::from_secs(2)).await;
}

#[tokio::test]
async fn an_unexpected_reply_stops_the_batch_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certificate_variants();
    let shape = Shape {
        servers: [vec![1], vec![], vec![]],
        routes: [Some(0), None, None, None],
        tls: [Some(0), None, None, None],
        contents: [0, 0],
        bulk: false,
        allow: None,
        passthrough: None,
    };
    let default_cert = certificate("default");
    let (mut haproxy, state, _) = start(dir.path(), &model(&shape, &certs, &default_cert)).await;
    let api = runtime(&state);
    let missing = ServerRef {
        backend: "web_app_80".into(),
        server: "10.0.0.9_8080".into(),
    };
    let err = api
        .apply(&[
            RuntimeCommand::RemoveServer(missing),
            RuntimeCommand::AddServer {
                server: ServerRef {
                    backend: "web_app_80".into(),
                    server: "10.0.0.5_8080".into(),
                },
                address: "10.0.0.5:8080".parse().unwrap(),
                options: String::new(),
                id: render::server_id("10.0.0.5_8080"),
                checked: false,
                derives_cookie: false,
            },
        ])
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "runtime API: `set server web_app_80/10.0.0.9_8080 state maint` answered \"No such server.\""
    );
    // Nothing after the failure was sent.
    assert_eq!(
        servers_state(&api).await,
        ["web_app_80 10.0.0.1_8080 10.0.0.1 2 0 1 1 8080"]
    );
    let broken = api
        .apply(&[RuntimeCommand::UpdateCertificate {
            file: "certs/web_a-tls.pem".into(),
            content: Arc::from(b"not a certificate\n".as_slice()),
        }])
        .await
        .unwrap_err();
    assert!(
        broken
            .to_string()
            .contains("set ssl cert certs/web_a-tls.pem"),
        "{broken}"
    );
    // Content with an empty line would end the payload early: it is never sent.
    let smuggled = api
        .apply(&[RuntimeCommand::UpdateCertificate {
            file: "certs/web_a-tls.pem".into(),
            content: Arc::from(
                b"-----BEGIN X-----\n\ndel server web_app_80/10.0.0.1_8080\n".as_slice(),
            ),
        }])
        .await
        .unwrap_err();
    assert!(smuggled.to_string().contains("not sent"), "{smuggled}");
    assert_eq!(
        servers_state(&api).await,
        ["web_app_80 10.0.0.1_8080 10.0.0.1 2 0 1 1 8080"]
    );
    // The failed transaction was aborted: a valid update goes through afterwards.
    let fresh = certificate("a.test");
    api.apply(&[RuntimeCommand::UpdateCertificate {
        file: "certs/web_a-tls.pem".into(),
        content: Arc::from(fresh.pem_bundle.as_bytes()),
    }])
    .await
    .unwrap();
    haproxy.stop(std::time::Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_server_with_a_request_in_flight_is_deleted_once_it_is_done() {
    // Its connection is kept alive: once the request is done it waits idle in the
    // server's pool, which HAProxy 2.6 closes only after several purge delays.
    let held = test_support::HoldingBackend::start_keeping_alive().unwrap();
    let backend_port = held.port;
    let dir = tempfile::tempdir().unwrap();
    let certs = certificate_variants();
    let shape = Shape {
        servers: [vec![], vec![], vec![]],
        routes: [Some(0), None, None, None],
        tls: [None; 4],
        contents: [0, 0],
        bulk: false,
        allow: None,
        passthrough: None,
    };
    let mut model = model(&shape, &certs, &certificate("default"));
    let slow = Server::at(IpAddr::from([127, 0, 0, 1]), backend_port);
    std::sync::Arc::make_mut(model.backends.get_mut(&id("app")).unwrap())
        .servers
        .push(slow.clone());
    let (mut haproxy, state, _) = start(dir.path(), &model).await;
    let http_port = model.global.http_port;
    let client = std::thread::spawn(move || test_support::http_get(http_port, "a.test", "/"));
    let api = runtime(&state);
    let server = ServerRef {
        backend: "web_app_80".into(),
        server: slow.name(),
    };
    // Wait until HAProxy holds the request on that server.
    let mut in_flight = false;
    for _ in 0..100 {
        let text = api.query("show servers conn web_app_80").await.unwrap();
        if text
            .lines()
            .any(|l| l.starts_with("web_app_80/") && l.split_whitespace().nth(6) == Some("1"))
        {
            in_flight = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(in_flight, "the request never reached the backend");
    let first = api
        .apply(&[RuntimeCommand::RemoveServer(server.clone())])
        .await
        .unwrap();
    assert_eq!(first.deleted, Vec::<ServerRef>::new());
    assert_eq!(
        first.transcript[1].reply,
        "Server still has connections attached to it, cannot remove it."
    );
    held.release();
    let response = tokio::task::spawn_blocking(move || client.join().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status, 200, "the request in flight completed");
    // Deleted at the first try: its idle connection is closed by moving its port.
    let retried = api
        .delete_servers(std::slice::from_ref(&server))
        .await
        .unwrap();
    assert_eq!(retried.deleted, std::slice::from_ref(&server));
    let lines = request_lines(&retried.transcript);
    let port = slow.port;
    let expected: Vec<(String, String)> = vec![
        (
            format!("del server {server}"),
            "Server still has connections attached to it, cannot remove it.".into(),
        ),
        ("show stat web_app_80 4 -1".into(), lines[1].1.clone()),
        (
            format!("set server {server} addr 127.0.0.1 port {}", port + 1),
            format!(
                "no need to change the addr, port changed from '{port}' to '{}' by 'stats socket command'",
                port + 1
            ),
        ),
        (
            format!("set server {server} addr 127.0.0.1 port {port}"),
            format!(
                "no need to change the addr, port changed from '{}' to '{port}' by 'stats socket command'",
                port + 1
            ),
        ),
        (format!("del server {server}"), "Server deleted.".into()),
    ];
    assert_eq!(lines, expected);
    assert_eq!(servers_state(&api).await, Vec::<String>::new());
    haproxy.stop(std::time::Duration::from_secs(2)).await;
}

fn shape_strategy() -> impl Strategy<Value = Shape> {
    (
        [
            proptest::collection::vec(1u8..7, 0..4),
            proptest::collection::vec(1u8..7, 0..4),
            proptest::collection::vec(1u8..7, 0..4),
        ],
        [
            proptest::option::of(0usize..3),
            proptest::option::of(0usize..3),
            proptest::option::of(0usize..3),
            proptest::option::of(0usize..3),
        ],
        [
            proptest::option::of(0usize..2),
            proptest::option::of(0usize..2),
            proptest::option::of(0usize..2),
            proptest::option::of(0usize..2),
        ],
        [0usize..2, 0usize..2],
        proptest::bool::weighted(0.2),
        0usize..3,
        [
            proptest::option::of(0usize..3),
            proptest::option::of(0usize..3),
            proptest::option::of(0usize..3),
        ],
    )
        .prop_map(
            |(servers, routes, tls, contents, bulk, allow, passthrough)| Shape {
                allow: Some(allow),
                passthrough: Some(passthrough),
                servers,
                routes,
                tls,
                contents,
                bulk,
            },
        )
}

/// Applies each model of the sequence live to one HAProxy, then compares it with a
/// second HAProxy freshly started on the files.
async fn live_equals_fresh(shapes: Vec<Shape>) {
    let certs = certificate_variants();
    let default_cert = certificate("default");
    let live_dir = tempfile::tempdir().unwrap();
    let fresh_dir = tempfile::tempdir().unwrap();
    let first = model(&shapes[0], &certs, &default_cert);
    let (mut live_haproxy, state, mut applied) = start(live_dir.path(), &first).await;
    let api = runtime(&state);
    let mut live = LiveState::loaded(backends(&first), &render(&first));
    let mut last = first.clone();
    for shape in &shapes[1..] {
        let mut next = model(shape, &certs, &default_cert);
        next.global = first.global.clone();
        let rendered = render(&next);
        let update = plan::live_update(&live, &backends(&next), &rendered);
        assert!(update.reload.is_empty(), "{:?}", update.reload);
        write(&state, &mut applied, &next);
        let done = api.apply(&update.commands).await.unwrap();
        live = update.next;
        for server in &done.deleted {
            live.draining.remove(server);
        }
        assert!(live.draining.is_empty(), "no connections, nothing drains");
        last = next;
    }
    // The second HAProxy listens elsewhere; its servers, maps and certificates come from
    // the same files.
    let mut fresh_model = last.clone();
    fresh_model.global.http_port = free_port();
    fresh_model.global.https_port = free_port();
    let (mut fresh_haproxy, fresh_state, _) = start(fresh_dir.path(), &fresh_model).await;
    let fresh_api = runtime(&fresh_state);
    assert_eq!(servers_state(&api).await, servers_state(&fresh_api).await);
    assert_eq!(maps(&api).await, maps(&fresh_api).await);
    let live_acls = acls(&api).await;
    assert_eq!(live_acls, acls(&fresh_api).await);
    let rule = allow_rule(shapes.last().and_then(|s| s.allow).unwrap_or(0));
    assert_eq!(
        live_acls[&render::layout::address_list_file(&rule.name)].len(),
        rule.ranges.len()
    );
    assert_eq!(certificates(&api).await, certificates(&fresh_api).await);
    for host in HOSTS {
        // A loaded machine may drop a handshake: each is tried up to three times.
        let served = move |port: u16| {
            (0..3)
                .find_map(|_| test_support::https_get(port, host, host, "/").ok())
                .map(|r| r.certificate_cn)
                .unwrap_or_else(|| panic!("no TLS handshake with port {port} for {host}"))
        };
        let (live_port, fresh_port) = (last.global.https_port, fresh_model.global.https_port);
        let (live_cn, fresh_cn) =
            tokio::task::spawn_blocking(move || (served(live_port), served(fresh_port)))
                .await
                .unwrap();
        assert_eq!(live_cn, fresh_cn, "certificate served for {host}");
    }
    live_haproxy.stop(std::time::Duration::from_secs(2)).await;
    fresh_haproxy.stop(std::time::Duration::from_secs(2)).await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// I3: after any sequence of live updates, HAProxy runs what a fresh load of the files
    /// gives.
    #[test]
    fn live_updates_leave_haproxy_equal_to_a_fresh_load(
        shapes in proptest::collection::vec(shape_strategy(), 2..25)
    ) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(live_equals_fresh(shapes));
    }
}
