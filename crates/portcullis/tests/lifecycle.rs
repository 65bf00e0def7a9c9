//! The running controller: file changes applied live, bad input contained, HAProxy
//! supervised, a clean stop.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use test_support::{
    EchoServer, Portcullis, backend, http_get, self_signed, self_signed_ed25519, tls_secret,
};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn ingress(name: &str, host: &str, service: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n"
    )
}

fn serves(portcullis: &Portcullis, host: &str, server: &str) -> bool {
    http_get(portcullis.http_port, host, "/").is_ok_and(|r| r.server().as_deref() == Some(server))
}

fn status(portcullis: &Portcullis, host: &str) -> u16 {
    http_get(portcullis.http_port, host, "/").map_or(0, |r| r.status)
}

fn setup(dir: &Path, servers: &[&EchoServer]) -> std::path::PathBuf {
    let manifests = dir.join("manifests");
    std::fs::create_dir_all(manifests.join("nested")).unwrap();
    let mut services = String::new();
    for (index, server) in servers.iter().enumerate() {
        services += &backend(
            "default",
            &format!("svc{index}"),
            80,
            None,
            &[(server.port, true)],
        );
    }
    std::fs::write(manifests.join("services.yaml"), services).unwrap();
    manifests
}

/// Two echo servers, answering as `a` and `b`.
fn echo_servers_a_and_b() -> (EchoServer, EchoServer) {
    (
        EchoServer::start("a").unwrap(),
        EchoServer::start("b").unwrap(),
    )
}

/// Writes `<name>.yaml`: an Ingress routing host `<name>.test` to `service`.
fn add_ingress(manifests: &Path, name: &str, service: &str) {
    let text = ingress(name, &format!("{name}.test"), service);
    std::fs::write(manifests.join(format!("{name}.yaml")), text).unwrap();
}

/// Every value portcullis renders is validated, so a real refusal needs a stricter
/// HAProxy: this one is the real haproxy, except that it refuses the backend of Service
/// `default/svc1` (when checking and when starting alike). It appends its first argument
/// (`-c` for a check, `-W` for a start) to `invocations` in `dir`.
fn strict_haproxy(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("strict-haproxy");
    let invocations = dir.join("invocations");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$1\" >> {invocations}\nfor backends; do :; done\nline=$(grep -n '^backend default_svc1_80' \"$backends\"/*.cfg | head -1)\nif [ -n \"$line\" ]; then echo \"[ALERT]    (1) : config : parsing [$backends/shard-000.cfg:${{line%%:*}}] : backend refused\" >&2; exit 1; fi\nexec haproxy \"$@\"\n",
            invocations = invocations.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// What [`strict_haproxy`] was asked to do so far, in order.
fn invocations(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("invocations"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Writes the services for `servers`, then one Ingress per `(name, service)` for host
/// `<name>.test` in `<name>.yaml`, and starts portcullis on them.
fn started(
    dir: &Path,
    servers: &[&EchoServer],
    ingresses: &[(&str, &str)],
    flags: &[&str],
) -> (std::path::PathBuf, Portcullis) {
    let manifests = setup(dir, servers);
    for (name, service) in ingresses {
        add_ingress(&manifests, name, service);
    }
    let portcullis = Portcullis::start(BIN, &manifests, &dir.join("state"), flags).unwrap();
    (manifests, portcullis)
}

#[test]
fn created_edited_renamed_and_deleted_files_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = echo_servers_a_and_b();
    let (manifests, mut portcullis) = started(dir.path(), &[&a, &b], &[("one", "svc0")], &[]);
    assert!(serves(&portcullis, "one.test", "a"));
    let wait = Duration::from_secs(5);

    std::fs::write(
        manifests.join("nested/two.yml"),
        ingress("two", "two.test", "svc1"),
    )
    .unwrap();
    portcullis
        .wait_until(wait, |p| serves(p, "two.test", "b"))
        .unwrap();

    add_ingress(&manifests, "one", "svc1");
    portcullis
        .wait_until(wait, |p| serves(p, "one.test", "b"))
        .unwrap();

    std::fs::rename(
        manifests.join("nested/two.yml"),
        manifests.join("two.json.bak"),
    )
    .unwrap();
    portcullis
        .wait_until(wait, |p| status(p, "two.test") == 404)
        .unwrap();

    std::fs::remove_file(manifests.join("one.yaml")).unwrap();
    portcullis
        .wait_until(wait, |p| status(p, "one.test") == 404)
        .unwrap();
    assert_eq!(
        portcullis.metric("portcullis_haproxy_starts_total"),
        Some(1.0),
        "changes reload, never restart"
    );
}

/// Links made while running are followed from then on, to a directory or to a file
/// elsewhere, and a manifest directory replaced by another is watched anew.
#[test]
fn links_made_while_running_and_a_replaced_directory_are_followed() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = echo_servers_a_and_b();
    let (manifests, mut portcullis) = started(dir.path(), &[&a, &b], &[("one", "svc0")], &[]);
    let wait = Duration::from_secs(5);
    let (elsewhere, alone) = (dir.path().join("elsewhere"), dir.path().join("alone"));
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(&alone).unwrap();
    let write = |path: &Path, name: &str, service: &str| {
        std::fs::write(path, ingress(name, &format!("{name}.test"), service)).unwrap();
    };
    write(&elsewhere.join("three.yaml"), "three", "svc0");
    write(&alone.join("four.yaml"), "four", "svc0");
    symlink(&elsewhere, manifests.join("linked")).unwrap();
    symlink(alone.join("four.yaml"), manifests.join("four.yaml")).unwrap();
    portcullis
        .wait_until(wait, |p| {
            serves(p, "three.test", "a") && serves(p, "four.test", "a")
        })
        .unwrap();
    write(&elsewhere.join("three.yaml"), "three", "svc1");
    write(&alone.join("four.yaml"), "four", "svc1");
    portcullis
        .wait_until(wait, |p| {
            serves(p, "three.test", "b") && serves(p, "four.test", "b")
        })
        .unwrap();

    // The directory moved away and another put in its place.
    let replacement = dir.path().join("replacement");
    std::fs::create_dir_all(&replacement).unwrap();
    std::fs::copy(
        manifests.join("services.yaml"),
        replacement.join("services.yaml"),
    )
    .unwrap();
    write(&replacement.join("one.yaml"), "one", "svc1");
    std::fs::rename(&manifests, dir.path().join("old")).unwrap();
    std::fs::rename(&replacement, &manifests).unwrap();
    portcullis
        .wait_until(wait, |p| {
            serves(p, "one.test", "b") && status(p, "three.test") == 404
        })
        .unwrap();
    write(&manifests.join("one.yaml"), "one", "svc0");
    portcullis
        .wait_until(wait, |p| serves(p, "one.test", "a"))
        .unwrap();

    // Removed and made again in place (the file system may give it the same inode).
    let services = std::fs::read(manifests.join("services.yaml")).unwrap();
    std::fs::remove_dir_all(&manifests).unwrap();
    std::fs::create_dir(&manifests).unwrap();
    std::fs::write(manifests.join("services.yaml"), services).unwrap();
    write(&manifests.join("one.yaml"), "one", "svc1");
    portcullis
        .wait_until(wait, |p| serves(p, "one.test", "b"))
        .unwrap();
    write(&manifests.join("one.yaml"), "one", "svc0");
    portcullis
        .wait_until(wait, |p| serves(p, "one.test", "a"))
        .unwrap();
}

#[test]
fn a_burst_of_route_writes_costs_one_reconciliation_and_no_reload() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (manifests, mut portcullis) = started(dir.path(), &[&a], &[("one", "svc0")], &[]);
    let applied = |p: &Portcullis| {
        p.metric("portcullis_reconciliations_total{outcome=\"applied\"}")
            .unwrap_or(0.0)
    };
    assert_eq!(applied(&portcullis), 1.0);
    for index in 0..20 {
        std::fs::write(
            manifests.join(format!("burst-{index}.yaml")),
            ingress(&format!("i{index}"), &format!("h{index}.test"), "svc0"),
        )
        .unwrap();
    }
    portcullis
        .wait_until(Duration::from_secs(5), |p| {
            (0..20).all(|i| serves(p, &format!("h{i}.test"), "a"))
        })
        .unwrap();
    // The new worker may serve a moment before the controller has counted its work.
    portcullis
        .wait_until(Duration::from_secs(5), |p| applied(p) >= 2.0)
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(applied(&portcullis), 2.0);
    // Routes to a backend HAProxy has already are map updates over the runtime API.
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        0.0,
        "{}",
        portcullis.log()
    );
    assert_eq!(
        portcullis.metric("portcullis_updates_total{mode=\"runtime\"}"),
        Some(1.0)
    );
}

#[test]
fn bad_input_is_reported_and_everything_else_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (manifests, mut portcullis) = started(dir.path(), &[&a], &[("good", "svc0")], &[]);

    std::fs::write(
        manifests.join("broken.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata: {name: [oops\n",
    )
    .unwrap();
    std::fs::write(
        manifests.join("missing-service.yaml"),
        ingress("nosvc", "nosvc.test", "nowhere"),
    )
    .unwrap();
    let bad_port = ingress("noport", "noport.test", "svc0").replace("number: 80", "number: 81");
    std::fs::write(manifests.join("missing-port.yaml"), bad_port).unwrap();
    let injection = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: inject\n  annotations:\n    portcullis.dev/timeout-server: \"5s\\n    server evil 10.0.0.1:80\"\nspec:\n  rules:\n  - host: inject.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: svc0, port: {number: 80}}}}\n";
    std::fs::write(manifests.join("inject.yaml"), injection).unwrap();
    add_ingress(&manifests, "later", "svc0");
    portcullis
        .wait_until(Duration::from_secs(5), |p| serves(p, "later.test", "a"))
        .unwrap();

    assert!(serves(&portcullis, "good.test", "a"));
    assert!(
        serves(&portcullis, "inject.test", "a"),
        "the invalid annotation falls back to the default"
    );
    assert_eq!(status(&portcullis, "nosvc.test"), 404);
    assert_eq!(status(&portcullis, "noport.test"), 404);
    let log = portcullis.log();
    for expected in [
        "broken.yaml: document 1 (line 1): invalid YAML",
        "Ingress default/nosvc: spec.rules[0].http.paths[0].backend: service default/nowhere not found; the path is skipped",
        "Ingress default/noport: spec.rules[0].http.paths[0].backend: service default/svc0 has no port 81; the path is skipped",
        "Ingress default/inject: metadata.annotations[portcullis.dev/timeout-server]: invalid value: '5s\\n    server evil 10.0.0.1:80' has unknown unit",
    ] {
        assert!(log.contains(expected), "missing {expected:?} in\n{log}");
    }
    assert_eq!(
        portcullis.metric("portcullis_configuration_errors"),
        Some(4.0)
    );
    let shards = std::fs::read_to_string(dir.path().join("state/backends/shard-000.cfg")).unwrap();
    assert!(!shards.contains("evil"), "{shards}");
}

#[test]
fn a_certificate_haproxy_cannot_load_is_left_out_and_the_rest_goes_live() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (manifests, mut portcullis) = started(dir.path(), &[&a], &[], &[]);
    // Each part is valid PEM, but the key does not belong to the certificate: Ed25519
    // keys, a kind portcullis does not compare with its certificate.
    let (cert, _) = self_signed_ed25519("mismatch.test", &["mismatch.test"]);
    let (_, other_key) = self_signed_ed25519("other", &["other"]);
    let mut objects = tls_secret("default", "mismatch", &cert, &other_key);
    objects += "---\n";
    objects += &ingress("secure", "mismatch.test", "svc0").replace(
        "spec:\n",
        "spec:\n  tls:\n  - {hosts: [mismatch.test], secretName: mismatch}\n",
    );
    std::fs::write(manifests.join("mismatch.yaml"), objects).unwrap();
    add_ingress(&manifests, "other", "svc0");
    portcullis
        .wait_until(Duration::from_secs(5), |p| serves(p, "other.test", "a"))
        .unwrap();
    let reply =
        test_support::https_get(portcullis.https_port, "mismatch.test", "mismatch.test", "/")
            .unwrap();
    assert_eq!(reply.certificate_cn, "portcullis default certificate");
    assert_eq!(reply.response.server().as_deref(), Some("a"));
    assert!(
        portcullis.log().contains(
            "Secret default/mismatch: data: haproxy cannot load this certificate and key"
        ),
        "{}",
        portcullis.log()
    );
    assert_eq!(
        portcullis.metric("portcullis_configs_rejected_total"),
        Some(1.0)
    );
}

#[test]
fn a_certificate_haproxy_cannot_load_at_the_first_start_is_left_out_and_the_rest_starts() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let manifests = setup(dir.path(), &[&a]);
    let (cert, _) = self_signed_ed25519("mismatch.test", &["mismatch.test"]);
    let (_, other_key) = self_signed_ed25519("other", &["other"]);
    let mut objects = tls_secret("default", "mismatch", &cert, &other_key);
    objects += "---\n";
    objects += &ingress("secure", "mismatch.test", "svc0").replace(
        "spec:\n",
        "spec:\n  tls:\n  - {hosts: [mismatch.test], secretName: mismatch}\n",
    );
    std::fs::write(manifests.join("mismatch.yaml"), objects).unwrap();
    let portcullis = Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let reply =
        test_support::https_get(portcullis.https_port, "mismatch.test", "mismatch.test", "/")
            .unwrap();
    assert_eq!(reply.certificate_cn, "portcullis default certificate");
    assert_eq!(reply.response.server().as_deref(), Some("a"));
    let log = portcullis.log();
    assert!(
        log.contains("haproxy did not start on the configuration; checking it"),
        "{log}"
    );
    assert!(
        log.contains("Secret default/mismatch: data: haproxy cannot load this certificate and key"),
        "{log}"
    );
    assert_eq!(
        portcullis.metric("portcullis_haproxy_starts_total"),
        Some(1.0)
    );
}

#[test]
fn a_configuration_haproxy_rejects_never_goes_live_and_names_its_objects() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let manifests = setup(dir.path(), &[&a]);
    let checker = strict_haproxy(dir.path());
    add_ingress(&manifests, "good", "svc0");
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--haproxy-bin", checker.to_str().unwrap()],
    )
    .unwrap();
    let before = std::fs::read(dir.path().join("state/backends/shard-000.cfg")).unwrap();

    let b = EchoServer::start("b").unwrap();
    let mut objects = backend("default", "svc1", 80, None, &[(b.port, true)]);
    objects += "---\n";
    objects += &ingress("refused", "refused.test", "svc1");
    std::fs::write(manifests.join("refused.yaml"), objects).unwrap();
    portcullis
        .wait_until(Duration::from_secs(5), |p| {
            p.metric("portcullis_configs_rejected_total") == Some(1.0)
        })
        .unwrap();
    assert!(
        portcullis
            .log()
            .contains("objects=[\"Ingress default/refused\"]"),
        "{}",
        portcullis.log()
    );
    assert_eq!(
        std::fs::read(dir.path().join("state/backends/shard-000.cfg")).unwrap(),
        before,
        "live files untouched"
    );
    assert_eq!(status(&portcullis, "refused.test"), 404);
    assert!(serves(&portcullis, "good.test", "a"));

    std::fs::remove_file(manifests.join("refused.yaml")).unwrap();
    add_ingress(&manifests, "fine", "svc0");
    portcullis
        .wait_until(Duration::from_secs(5), |p| serves(p, "fine.test", "a"))
        .unwrap();
}

#[test]
fn the_first_start_is_haproxy_s_own_check_and_a_change_is_checked_before_it_loads() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = echo_servers_a_and_b();
    let haproxy = strict_haproxy(dir.path());
    let (manifests, mut portcullis) = started(
        dir.path(),
        &[&a],
        &[("one", "svc0")],
        &["--haproxy-bin", haproxy.to_str().unwrap()],
    );
    assert!(serves(&portcullis, "one.test", "a"));
    assert_eq!(
        invocations(dir.path()),
        ["-W"],
        "nothing is live and nothing was served before: the start checks the configuration"
    );

    // A new backend needs a reload, checked first (svc2 is not the one refused).
    let mut objects = backend("default", "svc2", 80, None, &[(b.port, true)]);
    objects += "---\n";
    objects += &ingress("two", "two.test", "svc2");
    std::fs::write(manifests.join("two.yaml"), objects).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| serves(p, "two.test", "b"))
        .unwrap();
    assert_eq!(invocations(dir.path()), ["-W", "-c"]);

    // Started again on a state directory it served from, it checks before it writes: the
    // files there are the last good configuration.
    assert!(portcullis.stop().unwrap());
    let mut again = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--haproxy-bin", haproxy.to_str().unwrap()],
    )
    .unwrap();
    assert!(serves(&again, "two.test", "b"));
    assert_eq!(
        invocations(dir.path()),
        ["-W", "-c", "-c", "-W"],
        "the test's new ports change the configuration, and the last one is on disk: checked first"
    );
    add_ingress(&manifests, "three", "svc2");
    again
        .wait_until(Duration::from_secs(10), |p| serves(p, "three.test", "b"))
        .unwrap();
}

#[test]
fn a_configuration_haproxy_refuses_to_start_on_is_checked_and_the_rest_goes_live() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = echo_servers_a_and_b();
    let haproxy = strict_haproxy(dir.path());
    let manifests = setup(dir.path(), &[&a, &b]);
    add_ingress(&manifests, "good", "svc0");
    add_ingress(&manifests, "refused", "svc1");
    let portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--haproxy-bin", haproxy.to_str().unwrap()],
    )
    .unwrap();
    assert!(serves(&portcullis, "good.test", "a"));
    assert_eq!(status(&portcullis, "refused.test"), 404);
    assert!(
        portcullis
            .log()
            .contains("objects=[\"Ingress default/refused\"]"),
        "{}",
        portcullis.log()
    );
    assert_eq!(
        invocations(dir.path()),
        ["-W", "-c", "-c", "-W"],
        "refused start, the check that names the Ingress, the check without it, the start"
    );
    assert_eq!(
        portcullis.metric("portcullis_configs_rejected_total"),
        Some(1.0)
    );
    let shards = std::fs::read_dir(dir.path().join("state/backends"))
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(shards.contains("backend default_svc0_80"));
    assert!(!shards.contains("backend default_svc1_80"), "{shards}");
}

#[test]
fn a_restart_checks_the_files_on_disk_before_haproxy_starts_on_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = echo_servers_a_and_b();
    let (_manifests, mut first) = started(
        dir.path(),
        &[&a, &b],
        &[("good", "svc0"), ("refused", "svc1")],
        &[],
    );
    assert!(serves(&first, "refused.test", "b"));
    assert!(first.stop().unwrap());

    // The same objects and ports, so the files on disk are exactly what is rendered; but
    // this HAProxy (as a newer version might) refuses what the last one accepted.
    let haproxy = strict_haproxy(dir.path());
    let again =
        Portcullis::restart(BIN, &first, &["--haproxy-bin", haproxy.to_str().unwrap()]).unwrap();
    assert!(serves(&again, "good.test", "a"));
    assert_eq!(status(&again, "refused.test"), 404);
    assert_eq!(
        invocations(dir.path()),
        ["-c", "-c", "-W"],
        "the unchanged files checked, then the narrowed ones, then the start"
    );
}

#[test]
fn a_flood_of_haproxy_warnings_is_relayed_up_to_a_budget_and_the_rest_counted() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    // As when thousands of servers fail their first health checks at once.
    let haproxy = dir.path().join("noisy-haproxy");
    std::fs::write(
        &haproxy,
        "#!/bin/sh\nif [ \"$1\" = -W ]; then\n  i=0; while [ $i -lt 250 ]; do echo \"[WARNING]  (1) : Server b/s$i is DOWN, reason: Layer4 timeout\" >&2; i=$((i+1)); done\nfi\nexec haproxy \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &haproxy,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (_manifests, mut portcullis) = started(
        dir.path(),
        &[&a],
        &[("one", "svc0")],
        &["--haproxy-bin", haproxy.to_str().unwrap()],
    );
    portcullis
        .wait_until(Duration::from_secs(5), |p| {
            p.log().contains("these were counted, not relayed")
        })
        .unwrap();
    let log = portcullis.log();
    let relayed = log
        .lines()
        .filter(|l| l.contains("is DOWN, reason"))
        .count();
    assert_eq!(relayed, haproxy::RELAYED_LINES_PER_SECOND as usize, "{log}");
    // HAProxy's own warnings, if any, come after the flood and are held back with it.
    let held_back: u64 = log
        .lines()
        .filter_map(|l| {
            l.split("warnings=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(held_back >= 150, "{log}");
    assert!(serves(&portcullis, "one.test", "a"));
}

#[test]
fn haproxy_is_restarted_when_it_dies_and_stopped_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (_manifests, mut portcullis) = started(dir.path(), &[&a], &[("one", "svc0")], &[]);
    let first = portcullis.haproxy_pid().unwrap();
    test_support::kill_hard(first).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            p.metric("portcullis_haproxy_starts_total") == Some(2.0)
        })
        .unwrap();
    assert!(portcullis.haproxy_pid().is_some_and(|new| new != first));
    assert!(serves(&portcullis, "one.test", "a"));

    let master = portcullis.haproxy_pid().unwrap();
    assert!(portcullis.stop().unwrap(), "clean exit");
    assert!(
        !Path::new(&format!("/proc/{master}")).exists(),
        "haproxy stopped with portcullis"
    );
}

/// A controller killed outright leaves its HAProxy serving; the one restarted on the
/// state directory takes over from it (the orphan finishes its connections and stops),
/// a second one on the same directory is refused, and an HAProxy whose master socket
/// vanished is replaced rather than left serving what it ran.
#[test]
fn one_controller_and_one_haproxy_serve_a_state_directory_whatever_was_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = echo_servers_a_and_b();
    let c = EchoServer::start("c").unwrap();
    let (manifests, mut first) = started(dir.path(), &[&a, &b, &c], &[("one", "svc0")], &[]);
    let orphan = first.kill_controller_only().unwrap().unwrap();
    add_ingress(&manifests, "one", "svc1");
    let mut second = Portcullis::restart(BIN, &first, &[]).unwrap();
    second
        .wait_until(Duration::from_secs(10), |_| {
            !test_support::process_runs(orphan)
        })
        .unwrap();
    for _ in 0..20 {
        assert!(serves(&second, "one.test", "b"), "{}", second.log());
    }
    assert!(
        second
            .log()
            .contains("left running by an earlier portcullis")
    );

    // A second controller of the same state directory stops at once, naming the first.
    let state = second.state_dir.to_string_lossy().into_owned();
    let refused = std::process::Command::new(BIN)
        .args(["run", "--manifests"])
        .arg(&manifests)
        .args(["--state-dir", &state, "--admin-bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("the state directory is in use by process "),
        "{stderr}"
    );
    assert!(serves(&second, "one.test", "b"));

    // Its runtime API socket removed, every change would reload: another HAProxy takes
    // its place, and the socket is there again.
    let master = second.haproxy_pid().unwrap();
    std::fs::remove_file(second.state_dir.join("run/admin.sock")).unwrap();
    add_ingress(&manifests, "one", "svc0");
    second
        .wait_until(Duration::from_secs(20), |p| {
            !test_support::process_runs(master)
                && p.state_dir.join("run/admin.sock").exists()
                && (0..10).all(|_| serves(p, "one.test", "a"))
        })
        .unwrap();
    assert_eq!(second.metric("portcullis_haproxy_starts_total"), Some(2.0));

    // Its sockets removed (their whole directory), HAProxy cannot be reloaded: another
    // takes its place.
    let master = second.haproxy_pid().unwrap();
    std::fs::remove_dir_all(second.state_dir.join("run")).unwrap();
    add_ingress(&manifests, "one", "svc2");
    second
        .wait_until(Duration::from_secs(40), |p| {
            !test_support::process_runs(master) && (0..10).all(|_| serves(p, "one.test", "c"))
        })
        .unwrap();
    assert_eq!(second.metric("portcullis_haproxy_starts_total"), Some(3.0));
}

#[test]
fn readyz_waits_for_a_live_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = setup(dir.path(), &[]);
    let admin = test_support::free_port();
    let mut child = std::process::Command::new(BIN)
        .args([
            "run",
            "--haproxy-bin",
            "/bin/false",
            "--http-port",
            "1",
            "--admin-bind",
            &format!("127.0.0.1:{admin}"),
        ])
        .arg("--manifests")
        .arg(&manifests)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut health = None;
    for _ in 0..100 {
        health = http_get(admin, "127.0.0.1", "/healthz").ok();
        if health.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(health.map(|r| r.status), Some(200));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(http_get(admin, "127.0.0.1", "/readyz").unwrap().status, 503);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_reconciliation_whose_check_could_not_run_is_retried_without_a_new_event() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let manifests = setup(dir.path(), &[&a]);
    add_ingress(&manifests, "one", "svc0");
    // `haproxy -c` cannot run until the binary appears.
    let haproxy = dir.path().join("bin/haproxy");
    let source = ["--manifests".to_owned(), manifests.display().to_string()];
    let mut portcullis = Portcullis::spawn(
        BIN,
        &source,
        &dir.path().join("state"),
        &["--haproxy-bin", haproxy.to_str().unwrap()],
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            p.metric("portcullis_reconciliations_total{outcome=\"failed\"}") >= Some(2.0)
        })
        .unwrap();
    assert!(portcullis.log().contains("cannot check the configuration"));
    std::fs::create_dir_all(dir.path().join("bin")).unwrap();
    let installed = [
        "/usr/sbin/haproxy",
        "/usr/local/sbin/haproxy",
        "/usr/bin/haproxy",
    ]
    .into_iter()
    .find(|path| Path::new(path).is_file())
    .expect("haproxy is installed");
    std::os::unix::fs::symlink(installed, &haproxy).unwrap();
    // No object changes: only the retry can bring the configuration live.
    portcullis
        .wait_until_ready(Duration::from_secs(15))
        .unwrap();
    assert!(serves(&portcullis, "one.test", "a"));
    assert!(portcullis.stop().unwrap());
}

#[test]
fn a_global_configmap_edit_is_applied_live() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let manifests = setup(dir.path(), &[&a]);
    let (cert, key) = self_signed("tls.test", &["tls.test"]);
    let secure = ingress("secure", "tls.test", "svc0").replace(
        "spec:\n",
        "spec:\n  tls:\n  - {hosts: [tls.test], secretName: tls}\n",
    );
    std::fs::write(
        manifests.join("tls.yaml"),
        format!("{}---\n{secure}", tls_secret("default", "tls", &cert, &key)),
    )
    .unwrap();
    let configmap = |redirect: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata: {{ssl-redirect: \"{redirect}\", ssl-redirect-code: \"302\"}}\n"
        )
    };
    std::fs::write(manifests.join("global.yaml"), configmap("true")).unwrap();
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global"],
    )
    .unwrap();
    assert_eq!(status(&portcullis, "tls.test"), 302);
    std::fs::write(manifests.join("global.yaml"), configmap("false")).unwrap();
    portcullis
        .wait_until(Duration::from_secs(5), |p| status(p, "tls.test") == 200)
        .unwrap();
    std::fs::write(manifests.join("global.yaml"), configmap("sometimes")).unwrap();
    portcullis
        .wait_until(Duration::from_secs(5), |p| status(p, "tls.test") == 302)
        .unwrap();
    assert!(portcullis.log().contains("ConfigMap ops/global: data.ssl-redirect: invalid value: 'sometimes' is not true or false; the default 'true' is used"));
}

#[test]
fn reloads_refuse_no_connection() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (manifests, mut portcullis) = started(
        dir.path(),
        &[&a],
        &[("one", "svc0")],
        &["--reload-interval", "200ms"],
    );
    let port = portcullis.http_port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    // A bounded client: at most 20,000 requests, each on a new connection.
    let client = std::thread::spawn(move || {
        let (mut ok, mut failed) = (0u32, Vec::new());
        for _ in 0..20_000 {
            if flag.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            match http_get(port, "one.test", "/") {
                Ok(r) if r.status == 200 => ok += 1,
                other => failed.push(format!("{other:?}")),
            }
        }
        (ok, failed)
    });
    for round in 0..5 {
        // A new Service is a new backend section: HAProxy must reload.
        let service = format!("extra{round}");
        std::fs::write(
            manifests.join(format!("extra-{round}.yaml")),
            backend("default", &service, 80, None, &[(a.port, true)])
                + "---\n"
                + &ingress(&format!("x{round}"), &format!("x{round}.test"), &service),
        )
        .unwrap();
        portcullis
            .wait_until(Duration::from_secs(5), |p| {
                serves(p, &format!("x{round}.test"), "a")
            })
            .unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (ok, failed) = client.join().unwrap();
    // The new worker may serve a moment before the controller has counted the reload.
    let reloads =
        |p: &Portcullis| p.metric("portcullis_reloads_total{reason=\"backend_sections\"}");
    portcullis
        .wait_until(Duration::from_secs(5), |p| reloads(p) == Some(5.0))
        .unwrap();
    assert!(ok > 50, "only {ok} requests completed");
    assert_eq!(failed, Vec::<String>::new(), "{ok} succeeded");
}

#[test]
fn a_refusal_no_object_explains_holds_until_its_cause_is_taken_away() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (manifests, mut portcullis) = started(
        dir.path(),
        &[&a],
        &[("one", "svc0")],
        &["--configmap", "default/global"],
    );
    assert!(serves(&portcullis, "one.test", "a"));
    let refused = |p: &Portcullis| {
        (
            p.admin("/syncz").map_or(0, |r| r.status),
            p.metric("portcullis_configuration_refused"),
        )
    };
    assert_eq!(refused(&portcullis), (200, Some(0.0)));
    // The global ConfigMap's cipher list selects nothing: HAProxy refuses the frontend
    // every host shares, and no object of a tenant is behind it.
    let global = |data: &str| {
        format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: default}}\ndata: {{{data}}}\n"
        )
    };
    std::fs::write(manifests.join("global.yaml"), global("ssl-ciphers: RC4")).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| refused(p) == (503, Some(1.0)))
        .unwrap_or_else(|_| panic!("{:?}\n{}", refused(&portcullis), portcullis.log()));
    assert!(
        serves(&portcullis, "one.test", "a"),
        "the last good one serves"
    );
    // The ConfigMap is named, with HAProxy's words.
    let log = portcullis.log();
    assert!(
        log.contains("ConfigMap default/global: data: HAProxy refuses a line no Ingress, route or Secret gives")
            && log.contains("unable to set SSL cipher list to 'RC4'"),
        "{log}"
    );
    // Taken away, the objects give the files HAProxy runs: nothing to write, and the
    // refusal no longer holds.
    std::fs::write(manifests.join("global.yaml"), global("")).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| refused(p) == (200, Some(0.0)))
        .unwrap_or_else(|_| panic!("{:?}\n{}", refused(&portcullis), portcullis.log()));
}

#[test]
fn an_object_left_out_for_what_its_class_gave_it_is_served_again_once_that_is_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (manifests, mut portcullis) = started(
        dir.path(),
        &[&a],
        &[("one", "svc0")],
        &["--configmap", "default/global"],
    );
    assert!(serves(&portcullis, "one.test", "a"));
    let (cert, key) = test_support::self_signed("classy.test", &["classy.test"]);
    let classy = test_support::tls_secret("default", "classy", &cert, &key)
        + "---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: tuned}\nspec:\n  controller: portcullis.dev/ingress-controller\n  parameters: {kind: ConfigMap, name: class-keys}\n"
        + "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: classy}\nspec:\n  ingressClassName: tuned\n  tls: [{hosts: [classy.test], secretName: classy}]\n  rules:\n  - host: classy.test\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: svc0, port: {number: 80}}}}\n";
    let class_keys = |ciphers: &str| {
        format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: class-keys, namespace: default}}\ndata: {{ssl-ciphers: '{ciphers}'}}\n"
        )
    };
    std::fs::write(manifests.join("classy.yaml"), classy).unwrap();
    // A cipher list HAProxy refuses, from the class: the Ingress is left out.
    std::fs::write(manifests.join("class-keys.yaml"), class_keys("RC4")).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            p.log().contains("Ingress default/classy")
                && p.metric("portcullis_configs_rejected_total") == Some(1.0)
        })
        .unwrap_or_else(|_| panic!("{}", portcullis.log()));
    assert_eq!(status(&portcullis, "classy.test"), 404);
    assert!(serves(&portcullis, "one.test", "a"));
    // The class's keys fixed, the Ingress (unchanged itself) is tried again, and served.
    std::fs::write(
        manifests.join("class-keys.yaml"),
        class_keys("ECDHE+AESGCM"),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| status(p, "classy.test") == 302)
        .unwrap_or_else(|_| panic!("{}", portcullis.log()));
}

#[test]
fn a_cipher_list_haproxy_refuses_set_on_a_live_host_is_traced_and_the_rest_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let a = EchoServer::start("a").unwrap();
    let (manifests, mut portcullis) = started(dir.path(), &[&a], &[("one", "svc0")], &[]);
    let (cert, key) = test_support::self_signed("secure.test", &["secure.test"]);
    let secure = |annotations: &str| {
        tls_secret("default", "secure", &cert, &key)
            + &format!(
                "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: secure, annotations: {{{annotations}}}}}\nspec:\n  tls: [{{hosts: [secure.test], secretName: secure}}]\n  rules:\n  - host: secure.test\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: svc0, port: {{number: 80}}}}}}}}\n"
            )
    };
    std::fs::write(manifests.join("secure.yaml"), secure("")).unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| status(p, "secure.test") == 302)
        .unwrap();
    // The live host's certificate-list line gets ciphers HAProxy refuses: checked first,
    // traced by the value, and the Ingress left out; the others' changes go on.
    std::fs::write(
        manifests.join("secure.yaml"),
        secure("portcullis.dev/ssl-ciphers: RC4"),
    )
    .unwrap();
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            p.log().contains("Ingress default/secure") && status(p, "secure.test") == 404
        })
        .unwrap_or_else(|_| panic!("{}", portcullis.log()));
    add_ingress(&manifests, "two", "svc0");
    portcullis
        .wait_until(Duration::from_secs(10), |p| serves(p, "two.test", "a"))
        .unwrap_or_else(|_| panic!("{}", portcullis.log()));
    assert_eq!(portcullis.metric("portcullis_failing_reloads"), Some(0.0));
}
