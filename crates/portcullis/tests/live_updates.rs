//! The running controller keeps HAProxy current without reloading it: endpoint and route
//! changes go out over the runtime API, and traffic never fails while they, and the
//! reloads that structural changes need, happen.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use test_support::{EchoServer, HoldingBackend, KeepAliveClient, Portcullis, backend, http_get};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn ingress(name: &str, host: &str, service: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n"
    )
}

/// A Service whose EndpointSlice lists the given echo servers as ready endpoints (none:
/// scaled to zero).
fn service(name: &str, endpoints: &[&EchoServer]) -> String {
    if endpoints.is_empty() {
        return backend("default", name, 80, None, &[]);
    }
    let ports: Vec<(u16, bool)> = endpoints.iter().map(|e| (e.port, true)).collect();
    backend("default", name, 80, None, &ports)
}

/// Which echo server answers `host`, or the status when none does.
fn answer(port: u16, host: &str) -> String {
    test_support::answer(port, host, "/")
}

fn write(dir: &Path, file: &str, text: &str) {
    test_support::write_manifest(dir, file, text).unwrap();
}

/// The `app` Service, served by `servers`, and its Ingress for `app.test`.
fn app(servers: &[&EchoServer]) -> String {
    service("app", servers) + &ingress("app", "app.test", "app")
}

/// Waits until `app.test` is answered by `server`.
fn wait_for_app(portcullis: &mut Portcullis, server: &str) {
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            answer(p.http_port, "app.test") == server
        })
        .unwrap();
}

/// An empty manifest directory below `dir`.
fn manifest_dir(dir: &Path) -> std::path::PathBuf {
    let manifests = dir.join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    manifests
}

/// Echo backends named `e0`, `e1`, ...
fn echo_servers(count: usize) -> Vec<EchoServer> {
    (0..count)
        .map(|i| EchoServer::start(&format!("e{i}")).unwrap())
        .collect()
}

/// Waits until a counter sample reads 1.
fn wait_for_count(portcullis: &mut Portcullis, sample: &str) {
    portcullis
        .wait_until(Duration::from_secs(10), |p| p.metric(sample) == Some(1.0))
        .unwrap();
}

#[test]
fn a_hundred_endpoint_changes_and_a_hundred_route_changes_cause_no_reload() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = manifest_dir(dir.path());
    let echoes = echo_servers(4);
    // Round r: service i is served by echo (r + i) % 5, where 4 means scaled to zero;
    // route j points at service (r + 2j) % 5. Every round changes all ten.
    let endpoint_of = |round: usize, service: usize| {
        let k = (round + service) % 5;
        (k < 4).then_some(k)
    };
    let target_of = |round: usize, route: usize| (round + 2 * route) % 5;
    let services_text = |round: usize| -> String {
        (0..5)
            .map(|i| {
                let endpoints: Vec<&EchoServer> = endpoint_of(round, i)
                    .map(|k| vec![&echoes[k]])
                    .unwrap_or_default();
                service(&format!("svc{i}"), &endpoints)
                    + &ingress(
                        &format!("site{i}"),
                        &format!("s{i}.test"),
                        &format!("svc{i}"),
                    )
            })
            .collect()
    };
    let routes_text = |round: usize| -> String {
        (0..5)
            .map(|j| {
                ingress(
                    &format!("route{j}"),
                    &format!("r{j}.test"),
                    &format!("svc{}", target_of(round, j)),
                )
            })
            .collect()
    };
    write(&manifests, "services.yaml", &services_text(0));
    write(&manifests, "routes.yaml", &routes_text(0));
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let port = portcullis.http_port;
    let expected = |round: usize, service: usize| {
        endpoint_of(round, service).map_or_else(|| "503".to_owned(), |k| format!("e{k}"))
    };
    let serves_round = |p: &Portcullis, round: usize| {
        (0..5).all(|i| answer(p.http_port, &format!("s{i}.test")) == expected(round, i))
            && (0..5).all(|j| {
                answer(p.http_port, &format!("r{j}.test")) == expected(round, target_of(round, j))
            })
    };
    portcullis
        .wait_until(Duration::from_secs(10), |p| serves_round(p, 0))
        .unwrap();
    let starts = portcullis.metric("portcullis_haproxy_starts_total");
    for round in 1..=20 {
        write(&manifests, "services.yaml", &services_text(round));
        write(&manifests, "routes.yaml", &routes_text(round));
        portcullis
            .wait_until(Duration::from_secs(10), |p| serves_round(p, round))
            .unwrap_or_else(|err| {
                let got: Vec<String> = (0..5)
                    .map(|i| answer(port, &format!("s{i}.test")))
                    .chain((0..5).map(|j| answer(port, &format!("r{j}.test"))))
                    .collect();
                panic!("round {round}: {err}; answers {got:?}")
            });
    }
    // 20 rounds × 5 endpoint changes and 5 route changes, all applied live.
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        0.0,
        "{}",
        portcullis.log()
    );
    assert_eq!(portcullis.metric("portcullis_haproxy_starts_total"), starts);
    let runtime_updates = portcullis.metric("portcullis_updates_total{mode=\"runtime\"}");
    assert!(
        runtime_updates.unwrap_or(0.0) >= 20.0,
        "{runtime_updates:?} runtime updates:\n{}",
        portcullis.log()
    );
    assert_eq!(
        portcullis.metric("portcullis_runtime_failures_total"),
        Some(0.0)
    );
    assert_eq!(portcullis.metric("portcullis_haproxy_in_sync"), Some(1.0));
    assert_eq!(portcullis.admin("/syncz").unwrap().status, 200);
}

/// What the clients saw.
#[derive(Debug, Default)]
struct Tally {
    ok: u64,
    failures: Vec<String>,
    retried_idle: u64,
}

#[test]
fn traffic_never_fails_while_endpoints_churn_routes_change_and_haproxy_reloads() {
    const REQUESTS_PER_CLIENT: usize = 5_000;
    let dir = tempfile::tempdir().unwrap();
    let manifests = manifest_dir(dir.path());
    let echoes = echo_servers(4);
    // Round r: `load` is served by echoes r % 4 and (r + 1) % 4 (never none); `side`
    // moves to host side-r.test; every third round adds a Service, which needs a reload.
    let load_text = |round: usize| {
        service("load", &[&echoes[round % 4], &echoes[(round + 1) % 4]])
            + &ingress("load", "load.test", "load")
    };
    let side_text = |round: usize| {
        service("side", &[&echoes[0]]) + &ingress("side", &format!("side-{round}.test"), "side")
    };
    write(&manifests, "load.yaml", &load_text(0));
    write(&manifests, "side.yaml", &side_text(0));
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let port = portcullis.http_port;
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            answer(p.http_port, "load.test").starts_with('e')
        })
        .unwrap();

    let finished = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let clients: Vec<_> = (0..4)
        .map(|index| {
            let finished = finished.clone();
            std::thread::spawn(move || {
                let mut tally = Tally::default();
                let mut keep_alive = (index % 2 == 0).then(|| KeepAliveClient::new(port));
                for _ in 0..REQUESTS_PER_CLIENT {
                    let result = match &mut keep_alive {
                        Some(client) => client.get("load.test", "/"),
                        None => http_get(port, "load.test", "/"),
                    };
                    match result {
                        Ok(r) if r.status == 200 => tally.ok += 1,
                        Ok(r) => tally.failures.push(format!("status {}", r.status)),
                        Err(err) => tally.failures.push(err.to_string()),
                    }
                }
                tally.retried_idle = keep_alive.map_or(0, |c| c.retried_on_closed_idle_connection);
                finished.fetch_add(1, Ordering::SeqCst);
                tally
            })
        })
        .collect();

    let mut round = 0;
    let mut added_services = 0;
    while finished.load(Ordering::SeqCst) < 4 {
        round += 1;
        write(&manifests, "load.yaml", &load_text(round));
        write(&manifests, "side.yaml", &side_text(round));
        if round % 3 == 0 {
            added_services += 1;
            write(
                &manifests,
                &format!("extra-{round}.yaml"),
                &(service(&format!("extra{round}"), &[&echoes[1]])
                    + &ingress(
                        &format!("extra{round}"),
                        &format!("extra{round}.test"),
                        &format!("extra{round}"),
                    )),
            );
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let tallies: Vec<Tally> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let elapsed = started.elapsed();
    let ok: u64 = tallies.iter().map(|t| t.ok).sum();
    let failures: Vec<&String> = tallies.iter().flat_map(|t| &t.failures).collect();
    let retried: u64 = tallies.iter().map(|t| t.retried_idle).sum();
    // Let the last changes land before reading the counters.
    let last_extra = format!("extra{}.test", round - round % 3);
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            added_services == 0 || answer(p.http_port, &last_extra) == "e1"
        })
        .unwrap();
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    let runtime = portcullis
        .metric("portcullis_updates_total{mode=\"runtime\"}")
        .unwrap_or(0.0);
    let commands = portcullis
        .metric("portcullis_runtime_commands_total")
        .unwrap_or(0.0);
    eprintln!(
        "load: {ok} requests ok, {} failed, in {elapsed:?}; {round} change rounds, {added_services} new services; {reloads} reloads, {runtime} runtime updates ({commands} runtime API requests); {retried} keep-alive requests re-sent after an old worker closed the idle connection",
        failures.len()
    );
    assert_eq!(failures, Vec::<&String>::new(), "{ok} succeeded");
    assert_eq!(ok, 4 * REQUESTS_PER_CLIENT as u64);
    assert!(round >= 3, "the clients finished before any churn");
    let rounds = f64::from(u32::try_from(round).unwrap());
    assert!(reloads >= 1.0, "a new Service must reload HAProxy");
    assert!(
        reloads < f64::from(added_services) || added_services == 1,
        "reloads are coalesced: {reloads} for {added_services} new services"
    );
    // Each round replaces one of `load`'s endpoints (add, ready, maint, del), live even
    // while a reload is due. Rounds that land within one quiet period are applied
    // together (on a loaded machine, often two), so at least one request per round.
    assert!(
        commands >= rounds,
        "endpoint changes went out live: {commands} requests in {round} rounds"
    );
}

#[test]
fn a_failed_reload_is_retried_and_reported_while_the_previous_configuration_serves() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = manifest_dir(dir.path());
    let echo = EchoServer::start("e0").unwrap();
    let configmap = |data: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata:\n  {data}\n"
        )
    };
    write(&manifests, "app.yaml", &app(&[&echo]));
    write(
        &manifests,
        "global.yaml",
        &configmap("max-connections: \"1000\""),
    );
    // A reload fails where `haproxy -c` passed when the new master cannot load what it
    // is given (a port another process takes in between, say): HAProxy runs through a
    // wrapper that gives every master one more file, which the test fills with what no
    // HAProxy loads (the old worker keeps serving meanwhile). Checks pass through.
    let extra = dir.path().join("extra.cfg");
    std::fs::write(&extra, "").unwrap();
    let wrapper = dir.path().join("haproxy-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/bash\ncase \" $* \" in *\" -c \"*|*\" {extra} \"*) exec -a \"$0\" {haproxy} \"$@\";; esac\nexec -a \"$0\" {haproxy} \"$@\" -f {extra}\n",
            haproxy = haproxy_path().display(),
            extra = extra.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let wrapper_arg = wrapper.display().to_string();
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &[
            "--configmap",
            "ops/global",
            "--reload-interval",
            "200ms",
            "--haproxy-bin",
            &wrapper_arg,
        ],
    )
    .unwrap();
    wait_for_app(&mut portcullis, "e0");
    assert_eq!(portcullis.admin("/syncz").unwrap().status, 200);

    std::fs::write(&extra, "no such section\n").unwrap();
    write(
        &manifests,
        "global.yaml",
        &configmap("max-connections: \"2000\""),
    );
    portcullis
        .wait_until(Duration::from_secs(15), |p| {
            p.metric("portcullis_failing_reloads").unwrap_or(0.0) >= 2.0
        })
        .unwrap();
    let syncz = portcullis.admin("/syncz").unwrap();
    assert_eq!(syncz.status, 503);
    assert!(syncz.body.starts_with("reload failing"), "{}", syncz.body);
    assert_eq!(portcullis.metric("portcullis_haproxy_in_sync"), Some(0.0));
    assert!(
        portcullis
            .metric("portcullis_reload_failures_total")
            .unwrap_or(0.0)
            >= 2.0
    );
    assert_eq!(
        portcullis.admin("/readyz").unwrap().status,
        200,
        "the old worker serves"
    );
    // Endpoint changes still go out live meanwhile.
    let other = EchoServer::start("e1").unwrap();
    write(&manifests, "app.yaml", &app(&[&other]));
    wait_for_app(&mut portcullis, "e1");

    // Once the masters can start again, the retried reload succeeds.
    std::fs::write(&extra, "").unwrap();
    write(
        &manifests,
        "global.yaml",
        &configmap("max-connections: \"3000\""),
    );
    portcullis
        .wait_until(Duration::from_secs(30), |p| {
            p.admin("/syncz").is_ok_and(|r| r.status == 200)
        })
        .unwrap();
    assert_eq!(portcullis.metric("portcullis_failing_reloads"), Some(0.0));
    assert_eq!(portcullis.metric("portcullis_haproxy_in_sync"), Some(1.0));
    assert_eq!(
        portcullis.metric("portcullis_reloads_total{reason=\"main_config\"}"),
        Some(1.0)
    );
    // The servers changed live while the reload was due were not sent again.
    assert_eq!(
        portcullis.metric("portcullis_runtime_failures_total"),
        Some(0.0),
        "{}",
        portcullis.log()
    );
    assert_eq!(answer(portcullis.http_port, "app.test"), "e1");
}

/// The HAProxy the controller would run: `haproxy` from PATH, else Debian's.
fn haproxy_path() -> std::path::PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| "/usr/sbin/haproxy".into())
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
fn a_runtime_command_that_fails_falls_back_to_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = manifest_dir(dir.path());
    let (a, b) = (
        EchoServer::start("a").unwrap(),
        EchoServer::start("b").unwrap(),
    );
    write(&manifests, "app.yaml", &app(&[&a, &b]));
    let state = dir.path().join("state");
    let mut portcullis = Portcullis::start(BIN, &manifests, &state, &[]).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            ["a", "b"].contains(&answer(p.http_port, "app.test").as_str())
        })
        .unwrap();
    // Someone removes server `b` behind the controller's back: HAProxy no longer matches
    // what the controller believes it runs.
    let server = format!("default_app_80/127.0.0.1_{}", b.port);
    assert_eq!(
        runtime_command(&state, &format!("set server {server} state maint")).trim(),
        ""
    );
    assert_eq!(
        runtime_command(&state, &format!("del server {server}")).trim(),
        "Server deleted."
    );
    // Removing `b` from the manifests now fails live ("No such server."): HAProxy reloads
    // from the files instead, and is back in step.
    write(&manifests, "app.yaml", &app(&[&a]));
    wait_for_count(
        &mut portcullis,
        "portcullis_reloads_total{reason=\"runtime_api_failed\"}",
    );
    assert_eq!(
        portcullis.metric("portcullis_runtime_failures_total"),
        Some(1.0)
    );
    assert!(
        portcullis.log().contains("answered \"No such server.\""),
        "{}",
        portcullis.log()
    );
    portcullis
        .wait_until(Duration::from_secs(5), |p| {
            p.admin("/syncz").is_ok_and(|r| r.status == 200)
        })
        .unwrap();
    // Live updates work again on the reloaded worker.
    write(&manifests, "app.yaml", &app(&[&b]));
    wait_for_app(&mut portcullis, "b");
    assert_eq!(portcullis.metric_total("portcullis_reloads_total"), 1.0);
}

#[test]
fn a_removed_server_busy_with_a_keep_alive_request_is_deleted_once_it_is_done_without_a_reload() {
    // The backend keeps its connection alive: once the request is done, it waits idle
    // in the server's pool, which HAProxy 2.6 alone would keep some 14 s.
    let held = HoldingBackend::start_keeping_alive().unwrap();
    let slow_port = held.port;
    let dir = tempfile::tempdir().unwrap();
    let manifests = manifest_dir(dir.path());
    let echo = EchoServer::start("e0").unwrap();
    let with_ports = |ports: &[u16]| {
        let endpoints: Vec<(u16, bool)> = ports.iter().map(|p| (*p, true)).collect();
        backend("default", "app", 80, None, &endpoints) + &ingress("app", "app.test", "app")
    };
    write(&manifests, "app.yaml", &with_ports(&[slow_port]));
    let state = dir.path().join("state");
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &state, &["--reload-interval", "1s"]).unwrap();
    let port = portcullis.http_port;
    let request = std::thread::spawn(move || http_get(port, "app.test", "/"));
    // Once the slow backend holds the request, its server is replaced.
    assert!(
        held.wait_for_request(Duration::from_secs(10)),
        "the request reaches the slow backend"
    );
    write(&manifests, "app.yaml", &with_ports(&[echo.port]));
    // Asking before the change is live would queue behind the held request.
    wait_for_count(
        &mut portcullis,
        "portcullis_updates_total{mode=\"runtime\"}",
    );
    assert_eq!(answer(port, "app.test"), "e0");
    // Past one reload interval the request is still in flight: the server waits in
    // maintenance, and nothing reloads.
    std::thread::sleep(Duration::from_millis(1500));
    let slow_server = format!("127.0.0.1_{slow_port}");
    assert!(
        runtime_command(&state, "show servers state default_app_80").contains(&slow_server),
        "the busy server is still there"
    );
    held.release();
    let response = request.join().unwrap().unwrap();
    assert_eq!((response.status, response.body.as_str()), (200, "held"));
    // Its retries delete it within seconds, idle connection and all.
    portcullis
        .wait_until(Duration::from_secs(8), |_| {
            !runtime_command(&state, "show servers state default_app_80").contains(&slow_server)
        })
        .unwrap_or_else(|err| panic!("{err}: {}", portcullis.log()));
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        0.0,
        "nothing reloaded"
    );
    assert_eq!(answer(port, "app.test"), "e0");
    portcullis
        .wait_until(Duration::from_secs(5), |p| {
            p.admin("/syncz").is_ok_and(|r| r.status == 200)
        })
        .unwrap();
}

#[test]
fn servers_added_live_share_the_traffic_of_the_default_random_balance() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = manifest_dir(dir.path());
    let echoes = echo_servers(4);
    write(&manifests, "app.yaml", &app(&[&echoes[0]]));
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    wait_for_app(&mut portcullis, "e0");
    // Three endpoints replace the one, all added live, one after the other.
    write(
        &manifests,
        "app.yaml",
        &app(&[&echoes[1], &echoes[2], &echoes[3]]),
    );
    wait_for_app(&mut portcullis, "e1");
    let mut served: std::collections::BTreeMap<String, usize> = Default::default();
    for _ in 0..300 {
        *served
            .entry(answer(portcullis.http_port, "app.test"))
            .or_default() += 1;
    }
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        0.0,
        "the servers were added live"
    );
    for name in ["e1", "e2", "e3"] {
        let share = served.get(name).copied().unwrap_or(0);
        assert!(share >= 30, "{name} served {share} of 300: {served:?}");
    }
}
