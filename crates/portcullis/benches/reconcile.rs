//! Reconciliation benchmarks on synthetic clusters: a full reconciliation (snapshot to
//! rendered files in memory), `render`'s one pass (the same, recording nothing for a next
//! change), both also for a cluster routed by HTTPRoutes instead of Ingresses (groups
//! ending in `_gateway_api`), and single changes (one endpoint, one Ingress, one global
//! key) from snapshot to plan with warm caches. 1k and 10k services by default; set
//! `PORTCULLIS_BENCH_SIZES=1000,10000,100000` for more.

// Benchmark setup fails loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use convert::ConvertOptions;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use index::{Index, Snapshot, SourceEvent};
use model::TlsCert;
use plan::AppliedFiles;
use portcullis::pipeline::Reconciler;
use resources::Object;
use test_support::SyntheticCluster;

/// The allocator the binary uses, set as the binary sets it, so the figures are the
/// binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn options() -> ConvertOptions {
    ConvertOptions {
        ingress_class: "portcullis".into(),
        controller_class: convert::class::CONTROLLER_NAME.into(),
        gateway_controller: convert::gateway::GATEWAY_CONTROLLER.into(),
        watch_ingress_without_class: true,
        global_configmap: Some(("ns-0".into(), "global".into())),
        tcp_services_configmap: None,
        default_ssl_certificate: None,
        fallback_certificate: TlsCert {
            pem_bundle: "FALLBACK\n".into(),
        },
        bind_address: IpAddr::from([127, 0, 0, 1]),
        http_port: 80,
        https_port: 443,
        backend_shards: 16,
        reserved_ports: Vec::new(),
        busy_ports: std::collections::BTreeSet::new(),
    }
}

fn sizes() -> Vec<usize> {
    std::env::var("PORTCULLIS_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000])
}

fn decode(yaml: &str) -> Vec<Object> {
    let decoded = resources::decode_manifest(yaml, false);
    assert!(decoded.errors.is_empty(), "{:?}", decoded.errors);
    decoded.objects
}

fn configmap(timeout: &str) -> Object {
    decode(&format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ns-0}}\ndata: {{timeout-server: {timeout}}}\n")).remove(0)
}

struct Fixture {
    index: Index,
    /// Variants of single objects: (original, changed).
    endpoint: (Object, Object),
    ingress: (Object, Object),
    global: (Object, Object),
}

fn cluster(services: usize, gateway_api: bool) -> SyntheticCluster {
    let mut cluster = SyntheticCluster::new(services, 7);
    cluster.certificate = Some(test_support::self_signed("bench", &["*.example.test"]));
    cluster.gateway_api = gateway_api;
    cluster
}

/// The index of `cluster` and its global ConfigMap, listed.
fn listed(cluster: &SyntheticCluster, global: &Object) -> Index {
    let services = cluster.services;
    let mut index = Index::new();
    index.handle(SourceEvent::Init(index::ListScope::Everything));
    for chunk in (0..services).step_by(1000) {
        for object in decode(&cluster.manifests(chunk..(chunk + 1000).min(services))) {
            index.handle(SourceEvent::InitApply(object));
        }
    }
    for object in decode(&cluster.namespace_manifests()) {
        index.handle(SourceEvent::InitApply(object));
    }
    index.handle(SourceEvent::InitApply(global.clone()));
    index.handle(SourceEvent::InitDone);
    index
}

fn fixture(services: usize) -> Fixture {
    let cluster = cluster(services, false);
    let global = (configmap("50s"), configmap("51s"));
    let index = listed(&cluster, &global.0);
    let one = decode(&cluster.manifests(3..4));
    let find = |kind: &str| {
        one.iter()
            .find(|o| o.kind().name() == kind)
            .cloned()
            .unwrap()
    };
    let slice = find("EndpointSlice");
    let changed_slice = decode(
        &cluster
            .manifests(3..4)
            .replace("- addresses: [10.", "- addresses: [10.1"),
    )
    .into_iter()
    .find(|o| o.kind().name() == "EndpointSlice")
    .unwrap();
    let ingress = find("Ingress");
    let changed_ingress = decode(
        &cluster
            .manifests(3..4)
            .replace("path: /api,", "path: /api2,"),
    )
    .into_iter()
    .find(|o| o.kind().name() == "Ingress")
    .unwrap();
    Fixture {
        index,
        endpoint: (slice, changed_slice),
        ingress: (ingress, changed_ingress),
        global,
    }
}

/// Snapshot to plan, for snapshots that alternate between two values of one object.
fn bench_change(
    c: &mut Criterion,
    group: &str,
    services: usize,
    index: &mut Index,
    pair: &(Object, Object),
) {
    index.handle(SourceEvent::Apply(pair.1.clone()));
    let changed: Arc<Snapshot> = index.snapshot();
    index.handle(SourceEvent::Apply(pair.0.clone()));
    let original: Arc<Snapshot> = index.snapshot();
    let mut reconciler = Reconciler::new(options());
    let refused = BTreeMap::new();
    let first = reconciler.reconcile(&original, &refused).unwrap();
    let mut applied: AppliedFiles = first
        .rendered
        .files
        .iter()
        .map(|(p, f)| (p.clone(), f.hash))
        .collect();
    // What one such change writes to disk.
    let once = reconciler.reconcile(&changed, &refused).unwrap();
    let written = plan::plan(&applied, &once.rendered);
    let bytes: usize = written.writes.iter().map(|(_, f)| f.len()).sum();
    let files: Vec<&str> = written.writes.iter().map(|(p, _)| p.as_str()).collect();
    eprintln!("{group}/{services}: writes {bytes} bytes in {files:?}");
    let back = reconciler.reconcile(&original, &refused).unwrap();
    assert_eq!(plan::plan(&applied, &back.rendered).writes.len(), 0);
    let mut flip = false;
    c.benchmark_group(group)
        .sample_size(20)
        .measurement_time(Duration::from_secs(5))
        .bench_function(BenchmarkId::from_parameter(services), |b| {
            b.iter(|| {
                flip = !flip;
                let snapshot = if flip { &changed } else { &original };
                let reconciled = reconciler.reconcile(snapshot, &refused).unwrap();
                let plan = plan::plan(&applied, &reconciled.rendered);
                for (path, file) in &plan.writes {
                    applied.insert(path.clone(), file.hash);
                }
                plan.writes.len()
            });
        });
}

/// Times `routine` in the group `name`, one iteration at a time (so every size is
/// measured alike), freeing what each iteration returns outside the timing; then prints
/// the minor page faults an iteration took. On this project's shared machine the time
/// drifts by ±15% between hours and the faults do not: they show a change in the memory
/// a start touches for the first time when the time cannot.
fn bench_cold_pass<O>(c: &mut Criterion, name: &str, services: usize, routine: impl Fn() -> O) {
    let (mut faults, mut counted) = (0_u64, 0_u64);
    c.benchmark_group(name)
        .sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .bench_function(BenchmarkId::from_parameter(services), |b| {
            b.iter_custom(|iterations| {
                let mut timed = Duration::ZERO;
                for _ in 0..iterations {
                    let before = minor_faults();
                    let start = Instant::now();
                    let output = std::hint::black_box(routine());
                    timed += start.elapsed();
                    if let (Some(before), Some(after)) = (before, minor_faults()) {
                        faults += after.saturating_sub(before);
                        counted += 1;
                    }
                    drop(output);
                }
                timed
            });
        });
    if let Some(per_iteration) = faults.checked_div(counted) {
        eprintln!("{name}/{services}: {per_iteration} minor page faults an iteration");
    }
}

/// The minor page faults this process has taken (`/proc/self/stat`'s tenth field), or
/// `None` where the system does not say.
fn minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command's name, in parentheses, may hold spaces: fields are counted after it,
    // from the third (the state).
    let after_name = stat.get(stat.rfind(')')? + 2..)?;
    after_name.split(' ').nth(7)?.parse().ok()
}

/// A full reconciliation and `render`'s one pass of `snapshot`, in groups named
/// `full_reconciliation{suffix}` and `one_pass{suffix}`.
fn bench_cold(c: &mut Criterion, suffix: &str, services: usize, snapshot: &Snapshot) {
    // Every service is served: a route that attached nowhere would be measured as nothing.
    let served = convert::convert(snapshot, &options()).model.hosts.len();
    assert_eq!(served, services, "hosts served{suffix}");
    // The reconciler is returned, freed outside the timing: a start keeps it for the
    // changes that follow.
    bench_cold_pass(c, &format!("full_reconciliation{suffix}"), services, || {
        let mut reconciler = Reconciler::new(options());
        let reconciled = reconciler.reconcile(snapshot, &BTreeMap::new()).unwrap();
        (reconciler, reconciled)
    });
    // `render`'s pass, a conversion that records nothing for a next change, about as
    // `render` runs it: what it leaves to the process's end is freed outside the timing,
    // and so is the merge's bookkeeping, which `render` frees on a thread beside its
    // render.
    bench_cold_pass(c, &format!("one_pass{suffix}"), services, || {
        let given = index::Snapshot::clone(snapshot);
        let mut cache = convert::ConvertCache::one_shot();
        let conversion = cache.convert_given(given, &options());
        let mut renderer = render::RenderCache::default();
        let rendered = renderer.render(&conversion.model);
        (cache, conversion, renderer, rendered)
    });
}

fn benches(c: &mut Criterion) {
    portcullis::allocator::return_freed_memory_promptly();
    for services in sizes() {
        let mut fixture = fixture(services);
        bench_cold(c, "", services, &fixture.index.snapshot());
        let routed = listed(&cluster(services, true), &fixture.global.0);
        bench_cold(c, "_gateway_api", services, &routed.snapshot());
        drop(routed);
        let endpoint = fixture.endpoint.clone();
        bench_change(
            c,
            "one_endpoint_changed",
            services,
            &mut fixture.index,
            &endpoint,
        );
        let ingress = fixture.ingress.clone();
        bench_change(
            c,
            "one_ingress_changed",
            services,
            &mut fixture.index,
            &ingress,
        );
        let global = fixture.global.clone();
        bench_change(
            c,
            "one_global_key_changed",
            services,
            &mut fixture.index,
            &global,
        );
        c.benchmark_group("apply_and_snapshot")
            .sample_size(20)
            .bench_function(BenchmarkId::from_parameter(services), |b| {
                let mut flip = false;
                b.iter(|| {
                    flip = !flip;
                    let object = if flip {
                        &fixture.endpoint.1
                    } else {
                        &fixture.endpoint.0
                    };
                    fixture.index.handle(SourceEvent::Apply(object.clone()));
                    fixture.index.snapshot()
                });
            });
    }
}

criterion_group!(reconcile, benches);
criterion_main!(reconcile);
