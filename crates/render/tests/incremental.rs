//! A render cache that follows a model through changes gives exactly what a fresh render
//! of each version gives, including when the map and shard layouts change size.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::IpAddr;

use model::{
    Backend, BackendId, Balance, CertId, HaproxyDuration, Host, HostKey, Origin, PathKind,
    PathMatch, ProxyModel, Route, Server, TlsCert,
};
use render::{RenderCache, render};

fn id(number: usize) -> BackendId {
    BackendId {
        namespace: "ns".into(),
        service: format!("svc{number}").into(),
        port: "80".into(),
        mode: model::BackendMode::Http,
    }
}

fn origin() -> Origin {
    Origin {
        kind: "Ingress",
        namespace: "ns".into(),
        name: "site".into(),
    }
}

fn add_service(model: &mut ProxyModel, number: usize, servers: u8) {
    let backend = Backend {
        id: id(number),
        servers: (1..=servers)
            .map(|last| Server::at(IpAddr::from([10, 0, (number % 250) as u8, last]), 8080))
            .collect(),
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
    let route = |path: &str, kind| {
        (
            PathMatch {
                path: path.into(),
                kind,
            },
            Route {
                frontends: model::Frontends::BOTH,
                target: model::RouteTarget::Backend(id(number)),
                https_redirect: number.is_multiple_of(3).then_some(308),
                origin: origin(),
            },
        )
    };
    let cert = number.is_multiple_of(3).then(|| CertId {
        namespace: "ns".into(),
        name: "tls".into(),
    });
    let host = Host {
        routes: model::Routes::from([route("", PathKind::Prefix), route("/api", PathKind::Exact)]),
        cert,
        ..Host::default()
    };
    model
        .hosts
        .insert(HostKey::Exact(format!("svc{number}.test").into()), host);
}

fn base(services: usize) -> ProxyModel {
    let mut model = ProxyModel::default();
    model.global.backend_shards = 8;
    model.certs.insert(
        CertId {
            namespace: "ns".into(),
            name: "tls".into(),
        },
        TlsCert {
            pem_bundle: "CERT\n".into(),
        },
    );
    for number in 0..services {
        add_service(&mut model, number, 2);
    }
    model
}

#[test]
fn following_changes_equals_rendering_afresh() {
    let mut model = base(300);
    let mut cache = RenderCache::default();
    let mut check = |model: &ProxyModel, step: &str| {
        let incremental = cache.render(model);
        let fresh = render(model);
        for (path, file) in &fresh.files {
            assert_eq!(
                incremental.files.get(path).map(|f| f.text().into_owned()),
                Some(file.text().into_owned()),
                "{step}: {path}"
            );
        }
        assert_eq!(incremental, fresh, "{step}");
    };
    check(&model, "first render");
    add_service(&mut model, 1000, 1);
    check(&model, "a host and a backend added");
    add_service(&mut model, 7, 3);
    check(&model, "a host's backend changed");
    model.hosts.remove(&HostKey::Exact("svc8.test".into()));
    model.backends.remove(&id(8));
    check(&model, "a host and its backend removed");
    if let Some(host) = model.hosts.get_mut(&HostKey::Exact("svc9.test".into())) {
        host.cert = Some(CertId {
            namespace: "ns".into(),
            name: "tls".into(),
        });
    }
    check(&model, "a host gained a certificate");
    for number in 300..700 {
        add_service(&mut model, number, 1);
    }
    check(&model, "more map buckets");
    model.global.backends.timeout_server = HaproxyDuration::parse("5m").unwrap();
    check(&model, "the backends' defaults changed, no backend did");
    model.global.backends.timeout_server = HaproxyDuration::parse("50s").unwrap();
    model.global.backends.balance = Balance::RoundRobin;
    check(&model, "the backends' defaults changed back, and again");
    model.global.backend_shards = 3;
    check(&model, "fewer shards");
    for number in 0..650 {
        model
            .hosts
            .remove(&HostKey::Exact(format!("svc{number}.test").into()));
    }
    check(&model, "fewer map buckets");
}

#[test]
fn a_host_change_rewrites_one_bucket_of_each_map_it_touches() {
    let mut model = base(1000);
    let mut cache = RenderCache::default();
    let before = cache.render(&model);
    add_service(&mut model, 5, 3);
    if let Some(host) = model.hosts.get_mut(&HostKey::Exact("svc5.test".into())) {
        host.routes.remove(&PathMatch {
            path: "/api".into(),
            kind: PathKind::Exact,
        });
    }
    let after = cache.render(&model);
    for map in ["maps/http-exact.map", "maps/https-exact.map"] {
        let (old, new) = (before.files[map].chunks(), after.files[map].chunks());
        assert_eq!(old.len(), 16, "1000 hosts in 16 buckets");
        let changed = old
            .iter()
            .zip(new)
            .filter(|(a, b)| !std::sync::Arc::ptr_eq(a, b))
            .count();
        assert_eq!(changed, 1, "{map}");
    }
    assert_eq!(
        before.files["maps/hosts.map"],
        after.files["maps/hosts.map"]
    );
}
