//! Every read of the snapshot goes through the recorder: for each memoized result and
//! each object its lookups do not cover, taking that object away must leave the result
//! as it was. A converter that read an object without recording it would see the object
//! go and give another result, and this test would name the two.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use index::{Index, Snapshot, SourceEvent};
use model::{CertId, TlsCert};
use resources::{Kind, Object, ObjectRef};
use rustc_hash::FxHashSet;

use super::{Job, Memo, convert_one, jobs, lookups_touched, still_excluded};
use crate::keys::GlobalConfig;
use crate::lookup::{Context, Dependency, Recorder};
use crate::options::ConvertOptions;
use crate::{ConvertCache, gateway, tls};

/// Objects of every kind a conversion reads, beside the bundled examples: a class-less
/// Ingress (which reads every IngressClass), a legacy-annotated one, a route in another
/// namespace admitted by a namespace selector, a cross-namespace backend and certificate
/// under ReferenceGrants, a Service with an Endpoints object instead of slices, and a
/// blue-green backend whose weights and groups come from its endpoints' Pods, and
/// ListenerSets (one admitted by a namespace selector, one not) with routes through them,
/// a Gateway whose client-certificate CA is a ConfigMap's, and an Ingress of an
/// IngressClass whose parameters are a ConfigMap's keys.
const EXTRA: &str = r#"
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: with-parameters}
spec:
  controller: portcullis.dev/ingress-controller
  parameters: {kind: ConfigMap, name: class-keys}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: class-keys, namespace: demo}
data: {balance-algorithm: leastconn, timeout-server: 9s}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: of-a-class, namespace: team}
spec:
  ingressClassName: with-parameters
  rules:
  - host: classy.example.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: classy, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: classy, namespace: team}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {gateway-access: "yes"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: certs}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: no-class, namespace: team}
spec:
  rules:
  - host: noclass.example.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: legacy, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: legacy
  namespace: team
  annotations: {kubernetes.io/ingress.class: portcullis, portcullis.dev/timeout-server: 7s}
spec:
  tls: [{hosts: [legacy.example.test], secretName: legacy-tls}]
  rules:
  - host: legacy.example.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: legacy, port: {name: http}}}}
---
apiVersion: v1
kind: Service
metadata: {name: legacy, namespace: team}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: legacy, namespace: team}
subsets:
- addresses: [{ip: 10.9.0.1}]
  ports: [{name: http, port: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: clients-ca, namespace: demo}
data: {ca.crt: not a certificate, app.yaml: unread}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mtls, namespace: demo}
spec:
  gatewayClassName: portcullis
  tls:
    frontend:
      default:
        validation:
          caCertificateRefs: [{group: "", kind: ConfigMap, name: clients-ca}]
  listeners:
  - name: secure
    protocol: HTTPS
    port: 443
    hostname: mtls.example.test
    tls: {certificateRefs: [{name: www-tls}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shared, namespace: demo}
spec:
  gatewayClassName: portcullis
  allowedListeners:
    namespaces:
      from: Selector
      selector: {matchLabels: {gateway-access: "yes"}}
  listeners:
  - name: web
    protocol: HTTP
    port: 80
    allowedRoutes:
      namespaces:
        from: Selector
        selector: {matchLabels: {gateway-access: "yes"}}
  - name: secure
    protocol: HTTPS
    port: 443
    hostname: "*.team.example.test"
    tls:
      certificateRefs: [{name: wildcard, namespace: certs}]
    allowedRoutes:
      namespaces: {from: All}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: team-route, namespace: team}
spec:
  parentRefs: [{name: shared, namespace: demo}]
  hostnames: [app.team.example.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x-env, value: blue}]}]
    backendRefs: [{name: web, namespace: demo, port: 80}]
  - backendRefs: [{name: legacy, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: team-to-web, namespace: demo}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team}]
  to: [{group: "", kind: Service}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: canary
  namespace: team
  annotations:
    kubernetes.io/ingress.class: portcullis
    haproxy-ingress.github.io/blue-green-balance: group=blue=1,group=green=3
    haproxy-ingress.github.io/blue-green-header: X-Server:group
spec:
  rules:
  - host: canary.example.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: canary, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: canary, namespace: team}
spec:
  ports: [{port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: canary-1, namespace: team, labels: {kubernetes.io/service-name: canary}}
addressType: IPv4
ports: [{port: 8080}]
endpoints:
- {addresses: [10.9.1.1], targetRef: {kind: Pod, name: canary-blue, namespace: team}}
- {addresses: [10.9.1.2], targetRef: {kind: Pod, name: canary-green}}
- {addresses: [10.9.1.3]}
---
apiVersion: v1
kind: Pod
metadata: {name: canary-blue, namespace: team, labels: {group: blue}}
spec: {containers: [{name: app, image: app}]}
---
apiVersion: v1
kind: Pod
metadata: {name: canary-green, namespace: team, labels: {group: green}}
---
apiVersion: v1
kind: Pod
metadata: {name: unrelated, namespace: team, labels: {group: green}}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: gateways-to-certs, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: demo}]
  to: [{group: "", kind: Secret}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team-listeners, namespace: team}
spec:
  parentRef: {name: shared, namespace: demo}
  listeners:
  - name: web
    protocol: HTTP
    port: 80
    hostname: sets.team.example.test
  - name: secure
    protocol: HTTPS
    port: 443
    hostname: secure.sets.example.test
    tls:
      certificateRefs: [{name: wildcard, namespace: certs}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: listener-sets-to-certs, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: ListenerSet, namespace: team}]
  to: [{group: "", kind: Secret}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: set-route, namespace: team}
spec:
  parentRefs: [{kind: ListenerSet, name: team-listeners}]
  rules:
  - backendRefs: [{name: legacy, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: set-grpc, namespace: team, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  parentRefs: [{kind: ListenerSet, name: team-listeners, sectionName: web}]
  rules:
  - backendRefs: [{name: legacy, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: not-admitted, namespace: certs}
spec:
  parentRef: {name: shared, namespace: demo}
  listeners:
  - {name: web, protocol: HTTP, port: 80, hostname: certs.example.test}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: via-not-admitted, namespace: certs}
spec:
  parentRefs: [{kind: ListenerSet, name: not-admitted}]
  rules:
  - backendRefs: [{name: legacy, namespace: team, port: 80}]
---
# TLS from another namespace than the hosts': for demo's www.example.test and
# *.apps.example.test (ignored while demo routes them; taking demo's Ingress away puts it
# in force), and a wildcard covering team's own host below it and demo's hosts (it
# redirects team's route only).
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: foreign-tls
  namespace: team
  creationTimestamp: "2020-01-01T00:00:00Z"
  annotations: {kubernetes.io/ingress.class: portcullis}
spec:
  tls:
  - {hosts: [www.example.test, "*.apps.example.test", "*.example.test"], secretName: team-tls}
  rules:
  - host: team.example.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: canary, port: {number: 80}}}}
"#;

/// Options for a conversion in a test.
pub(crate) fn options() -> ConvertOptions {
    ConvertOptions {
        ingress_class: "portcullis".into(),
        controller_class: crate::class::CONTROLLER_NAME.into(),
        gateway_controller: crate::gateway::GATEWAY_CONTROLLER.into(),
        watch_ingress_without_class: false,
        global_configmap: Some(("demo".into(), "portcullis".into())),
        tcp_services_configmap: None,
        default_ssl_certificate: None,
        fallback_certificate: TlsCert::default(),
        bind_address: IpAddr::from([127, 0, 0, 1]),
        http_port: 8080,
        https_port: 8443,
        backend_shards: 1,
        reserved_ports: Vec::new(),
        busy_ports: std::collections::BTreeSet::new(),
    }
}

fn fixture() -> Vec<Object> {
    let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/manifests");
    let mut files: Vec<_> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    let mut texts: Vec<String> = files
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    texts.push(EXTRA.to_owned());
    let mut objects = Vec::new();
    for text in texts {
        let decoded = resources::decode_manifest(&text, false);
        assert!(decoded.errors.is_empty(), "{:?}", decoded.errors);
        objects.extend(decoded.objects);
    }
    objects
}

fn snapshot_of(objects: &[Object], without: Option<&ObjectRef>) -> std::sync::Arc<Snapshot> {
    let mut index = Index::new();
    for object in objects {
        if Some(&object.object_ref()) != without {
            index.handle(SourceEvent::Apply(object.clone()));
        }
    }
    index.snapshot()
}

/// Whether a lookup sees the object (as the cache decides what a change makes stale).
fn covers(lookups: &[Dependency], object: &Object) -> bool {
    let change = index::Change {
        object_ref: object.object_ref(),
        before: Some(object.clone()),
        after: None,
    };
    lookups_touched(&change)
        .iter()
        .any(|key| lookups.contains(key))
}

/// One memoized result computed afresh on a snapshot: its value, printed, and its
/// lookups.
fn compute(
    memo: &Memo,
    snapshot: &Snapshot,
    options: &ConvertOptions,
) -> (String, Vec<Dependency>) {
    let job = match memo {
        Memo::Object(object) => Some(Job::new(object.clone(), None)),
        _ => None,
    };
    compute_with(memo, job.as_ref(), snapshot, options)
}

/// [`compute`], converting an object through `job` (which may hold the object, handed
/// over, in place of the snapshot).
fn compute_with(
    memo: &Memo,
    job: Option<&Job>,
    snapshot: &Snapshot,
    options: &ConvertOptions,
) -> (String, Vec<Dependency>) {
    let configmap = ObjectRef::new(Kind::ConfigMap, "demo", "portcullis");
    let data = match snapshot.get(&configmap) {
        Some(Object::ConfigMap(map)) => map.data.clone(),
        _ => None,
    };
    let global = GlobalConfig::new(data.as_ref(), Some(&configmap), &mut Vec::new());
    let ports = options.listener_ports();
    let port_protocols = crate::gateway::listener::PortProtocols::of_our_gateways(snapshot, &ports);
    let context = Context {
        snapshot,
        options,
        listener_ports: &ports,
        port_protocols: &port_protocols,
        global: &global,
        configmap: Some(&configmap),
        recording: true,
    };
    match (memo, job) {
        (Memo::Object(_), Some(job)) => {
            let (_, contribution, lookups) = convert_one(job, context, &FxHashSet::default());
            (format!("{contribution:?}"), lookups)
        }
        (Memo::Object(object), None) => panic!("no job converts {object:?}"),
        (Memo::Certificate(id), _) => {
            let mut recorder = Recorder::new(context);
            let result = tls::load_certificate(&mut recorder, id);
            (format!("{result:?}"), recorder.dependencies)
        }
        (Memo::Status, _) => {
            // The routes' outcomes are the status's other input: taken from a full
            // conversion of the whole fixture, they stay fixed here.
            let converted = converted_fixture(options);
            let mut recorder = Recorder::new(context);
            let report = gateway::status::report(&mut recorder, &converted.merger.route_outcomes());
            (format!("{report:?}"), recorder.dependencies)
        }
    }
}

fn converted_fixture(options: &ConvertOptions) -> ConvertCache {
    let mut cache = ConvertCache::default();
    cache.convert(&snapshot_of(&fixture(), None), options);
    cache
}

#[test]
fn every_read_of_the_snapshot_is_recorded() {
    let objects = fixture();
    let options = options();
    let full = snapshot_of(&objects, None);
    let mut memos: Vec<Memo> = objects
        .iter()
        .map(Object::object_ref)
        .filter(|object| matches!(object.kind, Kind::Ingress | Kind::HttpRoute))
        .map(Memo::Object)
        .collect();
    memos.extend(
        objects
            .iter()
            .filter(|object| matches!(object, Object::Secret(_)))
            .map(|secret| {
                let secret = secret.object_ref();
                Memo::Certificate(CertId {
                    namespace: secret.namespace.to_string(),
                    name: secret.name.to_string(),
                })
            }),
    );
    memos.push(Memo::Status);
    let conversion = crate::convert(&full, &options);
    assert!(
        conversion.model.hosts.len() >= 5 && !conversion.gateway_status.is_empty(),
        "the fixture must exercise Ingresses, routes and status: {conversion:?}"
    );
    assert!(
        conversion
            .model
            .hosts
            .contains_key(&model::HostKey::Exact("secure.sets.example.test".into())),
        "the fixture must serve a route through a ListenerSet: {:?}",
        conversion.model.hosts.keys().collect::<Vec<_>>()
    );
    assert!(
        format!("{:?}", conversion.gateway_status).contains("ConfigMap demo/clients-ca: ca.crt"),
        "the fixture must read a Gateway's frontend CA from a ConfigMap: {:?}",
        conversion.gateway_status
    );
    let mut checked = 0;
    for memo in &memos {
        let (value, lookups) = compute(memo, &full, &options);
        assert!(!lookups.is_empty(), "{memo:?} recorded nothing");
        // A cache that records nothing hands each Ingress (and each HTTPRoute, when
        // there is no GRPCRoute) to its own conversion, taken out of the snapshot: only
        // that conversion (and a GRPCRoute's, for an HTTPRoute) may read it.
        let own = match memo {
            Memo::Object(object) => Some(object),
            _ => None,
        };
        let grpc_route = own.is_some_and(|object| object.kind == Kind::GrpcRoute);
        let handed = |kind: &Kind| {
            super::HANDED_TO_CONVERSION.contains(kind) || (*kind == Kind::HttpRoute && !grpc_route)
        };
        let reads_a_handed_object = |lookup: &Dependency| match lookup {
            Dependency::Object(object) => handed(&object.kind) && Some(object) != own,
            Dependency::Listing(kind, _)
            | Dependency::Kind(kind)
            | Dependency::Children(kind, _) => handed(kind),
            _ => false,
        };
        assert!(
            !lookups.iter().any(reads_a_handed_object),
            "{memo:?} reads an Ingress or HTTPRoute not its own: {lookups:?}"
        );
        for object in &objects {
            if covers(&lookups, object) {
                continue;
            }
            let without = snapshot_of(&objects, Some(&object.object_ref()));
            let (changed, _) = compute(memo, &without, &options);
            assert_eq!(
                value,
                changed,
                "{memo:?} changed when {} went away, but its lookups do not cover it",
                object.object_ref()
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} pairs checked");
}

#[test]
fn taking_any_one_object_away_converts_again_what_equals_a_full_conversion() {
    let objects = fixture();
    let options = options();
    for object in &objects {
        let mut cache = ConvertCache::default();
        cache.convert(&snapshot_of(&objects, None), &options);
        let without = snapshot_of(&objects, Some(&object.object_ref()));
        let incremental = cache.convert(&without, &options);
        let full = crate::convert(&without, &options);
        assert_eq!(incremental, full, "{}", object.object_ref());
    }
}

/// A one-shot cache records nothing, so it must not reuse anything either: each of its
/// conversions equals a memoizing cache's first.
#[test]
fn a_one_shot_cache_converts_every_snapshot_in_full() {
    let objects = fixture();
    let options = options();
    let whole = snapshot_of(&objects, None);
    let mut once = ConvertCache::one_shot();
    assert_eq!(
        once.convert(&whole, &options),
        ConvertCache::default().convert(&whole, &options)
    );
    for object in &objects {
        let without = snapshot_of(&objects, Some(&object.object_ref()));
        let converted = once.convert(&without, &options);
        let full = ConvertCache::default().convert(&without, &options);
        assert_eq!(converted, full, "{}", object.object_ref());
    }
}

/// A snapshot given up is shed of what only conversion reads before the merge settles;
/// the conversion is the same as of one lent (the examples have Ingresses, HTTPRoutes,
/// Gateways, TLS Secrets and Services of each).
#[test]
fn a_given_snapshot_converts_as_a_lent_one() {
    let objects = fixture();
    // What is shed, and what the merge still reads, are both in the examples.
    for kind in [
        Kind::Service,
        Kind::EndpointSlice,
        Kind::Ingress,
        Kind::Secret,
        Kind::Gateway,
    ] {
        assert!(objects.iter().any(|o| o.kind() == kind), "{kind:?}");
    }
    let options = options();
    let whole = snapshot_of(&objects, None);
    let given = Snapshot::clone(&whole);
    assert_eq!(
        ConvertCache::one_shot().convert_given(given, &options),
        ConvertCache::default().convert(&whole, &options)
    );
    // Without its GRPCRoute, the HTTPRoutes are handed to their conversions too.
    let http_only: Vec<Object> = objects
        .iter()
        .filter(|o| o.kind() != Kind::GrpcRoute)
        .cloned()
        .collect();
    let routes = snapshot_of(&http_only, None);
    assert!(routes.count(Kind::HttpRoute) >= 2 && routes.count(Kind::GrpcRoute) == 0);
    assert_eq!(
        super::handed_to_conversion(&routes),
        [Kind::Ingress, Kind::HttpRoute]
    );
    assert_eq!(
        ConvertCache::one_shot().convert_given(Snapshot::clone(&routes), &options),
        ConvertCache::default().convert(&routes, &options)
    );
    // A memoizing cache keeps the snapshot it is given whole, for its next change.
    let mut cache = ConvertCache::default();
    let first = cache.convert_given(Snapshot::clone(&whole), &options);
    assert_eq!(first, crate::convert(&whole, &options));
    let without = snapshot_of(&objects, Some(&objects[0].object_ref()));
    assert_eq!(
        cache.convert(&without, &options),
        crate::convert(&without, &options)
    );
}

/// An Ingress handed to its conversion (a cache that records nothing takes the
/// Ingresses out of the snapshot it is given) converts as one looked up, and its
/// conversion frees it: a cold pass does not hold the cluster's Ingresses beside what
/// they became, through the merge.
#[test]
fn a_handed_ingress_converts_as_one_looked_up_and_its_conversion_frees_it() {
    let objects = fixture();
    let options = options();
    let whole = snapshot_of(&objects, None);
    let mut without = Snapshot::clone(&whole);
    let handed = without.shed(&[Kind::Ingress]).into_objects();
    let ingresses: Vec<ObjectRef> = handed.iter().map(|(object, _)| object.clone()).collect();
    assert!(ingresses.len() >= 2, "{ingresses:?}");
    let freed: Vec<std::sync::Weak<resources::Ingress>> = handed
        .iter()
        .filter_map(|(_, object)| match object {
            Object::Ingress(ingress) => Some(std::sync::Arc::downgrade(ingress)),
            _ => None,
        })
        .collect();
    // Every object is converted, only the Ingresses from their jobs.
    let stale: BTreeSet<ObjectRef> = objects.iter().map(Object::object_ref).collect();
    let jobs = jobs(stale, handed);
    assert_eq!(jobs.len(), objects.len());
    drop(objects);
    for job in &jobs {
        let memo = Memo::Object(job.object.clone());
        // What it looked up differs by the object itself, which a handed one is not: a
        // cache that records lookups is never handed any.
        let looked_up = compute(&memo, &whole, &options).0;
        assert_eq!(
            compute_with(&memo, Some(job), &without, &options).0,
            looked_up
        );
    }
    drop(whole);
    assert!(freed.iter().all(|ingress| ingress.strong_count() == 0));
    // Each job converts once: a second conversion finds the object gone.
    let first = jobs.iter().find(|job| job.object == ingresses[0]);
    let again = compute_with(
        &Memo::Object(ingresses[0].clone()),
        first,
        &without,
        &options,
    );
    assert_eq!(again.0, "None");
}

#[test]
fn a_pod_label_change_converts_again_only_the_backends_of_its_endpoints() {
    let objects = fixture();
    let options = options();
    let servers = |conversion: &crate::Conversion| -> Vec<(String, Option<u16>, Option<String>)> {
        let id = model::BackendId {
            namespace: "team".into(),
            service: "canary".into(),
            port: "80".into(),
            mode: model::BackendMode::Http,
        };
        conversion.model.backends[&id]
            .servers
            .iter()
            .map(|s| {
                (
                    s.address.to_string(),
                    s.weight.map(model::ServerWeight::get),
                    s.group.as_ref().map(ToString::to_string),
                )
            })
            .collect()
    };
    let mut cache = ConvertCache::default();
    let before = snapshot_of(&objects, None);
    let first = cache.convert(&before, &options);
    let entry = |address: &str, weight, group: Option<&str>| {
        (address.to_owned(), Some(weight), group.map(str::to_owned))
    };
    assert_eq!(
        servers(&first),
        [
            entry("10.9.1.1", 1, Some("blue")),
            entry("10.9.1.2", 3, Some("green")),
            entry("10.9.1.3", 0, None),
        ]
    );
    assert!(
        first.diagnostics.iter().any(|d| d.to_string()
            == "Service team/canary: endpoints[10.9.1.3:8080]: the endpoint's targetRef names no pod of its namespace: it gets blue-green weight 0 and no group"),
        "{:?}",
        first.diagnostics
    );

    let relabelled = resources::decode_manifest(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: canary-green, namespace: team, labels: {group: blue}}\n",
        false,
    )
    .objects;
    let mut index = Index::new();
    for object in objects.iter().chain(&relabelled) {
        index.handle(SourceEvent::Apply(object.clone()));
    }
    let after = index.snapshot();
    let stale = cache.stale(&after.changes_since(&before));
    assert_eq!(
        stale.objects.into_iter().collect::<Vec<_>>(),
        [ObjectRef::new(Kind::Ingress, "team", "canary")]
    );
    let second = cache.convert(&after, &options);
    assert_eq!(second, crate::convert(&after, &options));
    assert_eq!(
        servers(&second),
        [
            entry("10.9.1.1", 1, Some("blue")),
            entry("10.9.1.2", 1, Some("blue")),
            entry("10.9.1.3", 0, None),
        ]
    );
}

#[test]
fn pods_are_stored_with_their_name_and_labels_only() {
    let decoded = resources::decode_manifest(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team, labels: {group: blue}, annotations: {a: b}, uid: x}\nspec: {containers: [{name: app, image: app}]}\nstatus: {podIP: 10.0.0.1}\n",
        false,
    );
    let [Object::Pod(pod)] = decoded.objects.as_slice() else {
        panic!("{decoded:?}");
    };
    let labels = BTreeMap::from([("group".to_owned(), "blue".to_owned())]);
    assert_eq!(pod.metadata.labels.as_ref(), Some(&labels));
    // Neither its annotations nor its uid.
    assert_eq!(
        decoded.objects[0].metadata(),
        resources::MetaRef {
            name: Some("p"),
            namespace: Some("team"),
            labels: Some(&labels),
            ..resources::MetaRef::default()
        }
    );
}

/// Ingresses enough for a merge from nothing to be streamed, fighting over a few hosts,
/// paths and TLS names with each other and with the fixture: which claim wins, and every
/// conflict reported, must not depend on the order claims arrive in.
fn contested_ingresses(count: usize, hosts: usize) -> String {
    let mut text = String::from(
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: contest}\n\
         spec:\n  ports: [{name: http, port: 80, targetPort: 8080}]\n---\n\
         apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n\
         metadata: {name: web-1, namespace: contest, labels: {kubernetes.io/service-name: web}}\n\
         addressType: IPv4\nports: [{name: http, port: 8080}]\n\
         endpoints: [{addresses: [10.1.0.1]}]\n",
    );
    for i in 0..count {
        let tls = if i % 5 == 0 {
            format!(
                "  tls: [{{hosts: [h{}.contest.test], secretName: cert-{}}}]\n",
                i % 40,
                i % 3
            )
        } else {
            String::new()
        };
        let default_backend = if i % 97 == 0 {
            "  defaultBackend: {service: {name: web, port: {number: 80}}}\n"
        } else {
            ""
        };
        let service = if i % 11 == 0 { "missing" } else { "web" };
        text.push_str(&format!(
            "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\n\
             metadata: {{name: i-{i:04}, namespace: contest, \
             creationTimestamp: '2024-01-01T00:{:02}:00Z'}}\n\
             spec:\n  ingressClassName: portcullis\n{tls}{default_backend}\
             \x20 rules:\n  - host: h{}.contest.test\n    http:\n      paths:\n\
             \x20     - {{path: /p{}, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n",
            i % 60,
            i % hosts,
            i % 7,
        ));
    }
    text
}

#[test]
fn a_merge_from_nothing_is_the_same_streamed_as_claimed_after_every_conversion() {
    // Two threads at least, whatever the machine: the streamed path needs a pool.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global();
    let mut objects = fixture();
    // Over 400 hosts and seven paths: more keys than a merge resolves on one thread, so
    // their resolution is streamed too; the TLS and the first paths are still contested.
    let decoded = resources::decode_manifest(&contested_ingresses(3000, 400), false);
    assert!(decoded.errors.is_empty(), "{:?}", decoded.errors);
    objects.extend(decoded.objects);
    let snapshot = snapshot_of(&objects, None);
    let converted = snapshot.count(Kind::Ingress) + snapshot.count(Kind::HttpRoute);
    assert!(
        super::pipelined(converted),
        "the streamed path is not taken"
    );
    let options = options();
    // On one of the pool's threads the conversions are all done before any is claimed.
    let claimed_after = rayon::scope(|_| {
        assert!(!super::pipelined(converted));
        ConvertCache::default().convert(&snapshot, &options)
    });
    assert!(
        claimed_after.diagnostics.len() > 100,
        "too few conflicts: {:?}",
        claimed_after.diagnostics
    );
    assert!(claimed_after.model.hosts.len() >= 400);
    let routes: usize = (claimed_after.model.hosts.values())
        .map(|host| host.routes.len())
        .sum();
    assert!(
        routes >= crate::merge::PARALLEL_FROM,
        "{routes} routes are resolved on one thread"
    );
    for _ in 0..5 {
        assert_eq!(
            ConvertCache::default().convert(&snapshot, &options),
            claimed_after
        );
        assert_eq!(
            ConvertCache::one_shot().convert(&snapshot, &options),
            claimed_after
        );
        // What `render` runs: each Ingress handed to its conversion on the pool.
        assert_eq!(
            ConvertCache::one_shot().convert_given(Snapshot::clone(&snapshot), &options),
            claimed_after
        );
    }
    // And both equal an incremental build-up, one object at a time over the last ones.
    let mut cache = ConvertCache::default();
    let (first, last) = objects.split_at(objects.len() - 20);
    cache.convert(&snapshot_of(first, None), &options);
    let mut so_far = first.to_vec();
    for object in last {
        so_far.push(object.clone());
        cache.convert(&snapshot_of(&so_far, None), &options);
    }
    assert_eq!(cache.convert(&snapshot, &options), claimed_after);
}

/// Writing status (ours, most often) changes an object's status and version only: that
/// converts nothing again, not the object nor what looked it up (every route attached to
/// a Gateway), and the result is still a full conversion's. A change to its spec does.
#[test]
fn a_status_write_converts_nothing_again() {
    let objects = fixture();
    let options = options();
    let find = |kind: Kind, name: &str| {
        objects
            .iter()
            .find(|o| o.kind() == kind && o.object_ref().name.as_str() == name)
            .cloned()
            .unwrap()
    };
    let (Object::Gateway(gateway), Object::HttpRoute(route), Object::Ingress(ingress)) = (
        find(Kind::Gateway, "shared"),
        find(Kind::HttpRoute, "team-route"),
        find(Kind::Ingress, "legacy"),
    ) else {
        panic!("the fixture's Gateway, HTTPRoute and Ingress");
    };
    let mut gateway = (*gateway).clone();
    gateway.metadata.resource_version = Some("100".into());
    gateway.status = Some(resources::gateway::GatewayStatus {
        listeners: Some(Vec::new()),
        ..Default::default()
    });
    let mut route = (*route).clone();
    route.metadata.resource_version = Some("101".into());
    route.status = Some(resources::gateway::HttpRouteStatus {
        parents: Vec::new(),
    });
    let mut ingress = (*ingress).clone();
    ingress.metadata.resource_version = Some("102".into());
    ingress.status = Some(resources::IngressStatus {
        load_balancer: Some(Default::default()),
    });
    let written = [
        Object::Gateway(gateway.clone().into()),
        Object::HttpRoute(route.into()),
        Object::Ingress(ingress.into()),
    ];

    let mut cache = ConvertCache::default();
    let before = snapshot_of(&objects, None);
    let first = cache.convert(&before, &options);
    let mut index = Index::new();
    for object in objects.iter().chain(&written) {
        index.handle(SourceEvent::Apply(object.clone()));
    }
    let after = index.snapshot();
    let changes = after.changes_since(&before);
    assert_eq!(changes.len(), 3, "{changes:?}");
    let stale = cache.stale(&changes);
    assert!(
        stale.objects.is_empty() && stale.certificates.is_empty() && !stale.status,
        "{stale:?}"
    );
    let second = cache.convert(&after, &options);
    assert_eq!(second, crate::convert(&after, &options));
    assert_eq!(second, first);
    // A route HAProxy refused stays left out through a status write.
    let route_ref = ObjectRef::new(Kind::HttpRoute, "team", "team-route");
    let refused = crate::Exclusions::from([(
        route_ref.clone(),
        crate::Excluded {
            object: find(Kind::HttpRoute, "team-route"),
            reason: "refused".to_owned(),
        },
    )]);
    assert!(still_excluded(&after, &refused, &mut Vec::new()).contains(&route_ref));

    // Its spec changed: the Gateway and every route attached to it convert again.
    gateway.spec.gateway_class_name = "other".into();
    index.handle(SourceEvent::Apply(Object::Gateway(gateway.into())));
    let respecified = index.snapshot();
    let stale = cache.stale(&respecified.changes_since(&after));
    assert!(
        stale
            .objects
            .contains(&ObjectRef::new(Kind::HttpRoute, "team", "team-route")),
        "{stale:?}"
    );
}
