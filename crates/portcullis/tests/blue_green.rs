//! Blue-green deployments on Ingress through a real HAProxy: the traffic split follows
//! the groups' weights, a header or a cookie chooses a group, and a weight change goes
//! live without a reload.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use test_support::{EchoServer, Portcullis, http_request};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// Requests counted for each split.
const REQUESTS: usize = 200;

/// The Service `app`, one EndpointSlice per echo server with the endpoint's pod as its
/// `targetRef`, and the pods with their `group` label.
fn workload(blue: &EchoServer, green: &EchoServer, green_group: &str) -> String {
    let mut text = "---\napiVersion: v1\nkind: Service\nmetadata: {name: app, namespace: default}\nspec:\n  ports: [{port: 80}]\n".to_owned();
    for (pod, port, group) in [
        ("app-blue", blue.port, "blue"),
        ("app-green", green.port, green_group),
    ] {
        text += &format!(
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: {pod}\n  namespace: default\n  labels: {{kubernetes.io/service-name: app}}\naddressType: IPv4\nports: [{{port: {port}}}]\nendpoints:\n- addresses: [127.0.0.1]\n  targetRef: {{kind: Pod, name: {pod}, namespace: default}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {pod}, namespace: default, labels: {{app: app, group: {group}}}}}\nspec:\n  containers: [{{name: app, image: app}}]\n"
        );
    }
    text
}

fn ingress(balance: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: app\n  annotations:\n    haproxy-ingress.github.io/balance-algorithm: roundrobin\n    haproxy-ingress.github.io/blue-green-balance: \"{balance}\"\n    haproxy-ingress.github.io/blue-green-mode: deploy\n    haproxy-ingress.github.io/blue-green-header: X-Server:group\n    haproxy-ingress.github.io/blue-green-cookie: SetServer:group\nspec:\n  rules:\n  - host: app.test\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: app, port: {{number: 80}}}}}}}}\n"
    )
}

/// Which echo server answers a request carrying the extra header lines.
fn answer_with(port: u16, extra: &str) -> String {
    let request = format!("GET / HTTP/1.1\r\nHost: app.test\r\n{extra}Connection: close\r\n\r\n");
    match http_request(port, &request) {
        Ok(r) if r.status == 200 => r.server().unwrap_or_default(),
        Ok(r) => r.status.to_string(),
        Err(err) => format!("error: {err}"),
    }
}

/// How many of `REQUESTS` plain requests `blue` answered (the others must be `green`).
fn blue_share(port: u16) -> usize {
    let mut blue = 0;
    for _ in 0..REQUESTS {
        match answer_with(port, "").as_str() {
            "blue" => blue += 1,
            "green" => {}
            other => panic!("unexpected answer {other}"),
        }
    }
    blue
}

fn write(portcullis: &Portcullis, file: &str, text: &str) {
    test_support::write_manifest(&portcullis.manifests, file, text).unwrap();
}

#[test]
fn weights_split_traffic_a_header_or_cookie_chooses_a_group_and_weights_change_live() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let (blue, green) = (
        EchoServer::start("blue").unwrap(),
        EchoServer::start("green").unwrap(),
    );
    test_support::write_manifest(
        &manifests,
        "workload.yaml",
        &workload(&blue, &green, "green"),
    )
    .unwrap();
    test_support::write_manifest(
        &manifests,
        "ingress.yaml",
        &ingress("group=blue=1,group=green=3"),
    )
    .unwrap();
    let mut portcullis =
        Portcullis::start(BIN, &manifests, &dir.path().join("state"), &[]).unwrap();
    let port = portcullis.http_port;
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            answer_with(p.http_port, "") != "404"
        })
        .unwrap();
    let shard =
        std::fs::read_to_string(portcullis.state_dir.join("backends/shard-000.cfg")).unwrap();
    assert!(
        shard.contains(" weight 1") && shard.contains(" weight 3"),
        "{shard}"
    );

    // 1:3 by weight: a quarter of the requests go to blue.
    let blue_count = blue_share(port);
    eprintln!("weights 1:3: blue answered {blue_count} of {REQUESTS}");
    assert!(
        (REQUESTS / 4 - 10..=REQUESTS / 4 + 10).contains(&blue_count),
        "blue answered {blue_count} of {REQUESTS}"
    );

    // A header or a cookie naming a group always reaches it; the header comes first.
    for (extra, expected) in [
        ("X-Server: blue\r\n", "blue"),
        ("X-Server: green\r\n", "green"),
        ("Cookie: SetServer=blue\r\n", "blue"),
        ("Cookie: other=1; SetServer=green\r\n", "green"),
        ("X-Server: green\r\nCookie: SetServer=blue\r\n", "green"),
        ("X-Server: purple\r\nCookie: SetServer=blue\r\n", "blue"),
    ] {
        for _ in 0..10 {
            assert_eq!(answer_with(port, extra), expected, "{extra:?}");
        }
    }

    // Equal weights: the split follows, live.
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    write(
        &portcullis,
        "ingress.yaml",
        &ingress("group=blue=1,group=green=1"),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            std::fs::read_to_string(p.state_dir.join("backends/shard-000.cfg"))
                .is_ok_and(|s| !s.contains(" weight 3"))
        })
        .unwrap();
    // The files are written before the runtime commands go out.
    std::thread::sleep(Duration::from_millis(500));
    let blue_count = blue_share(port);
    eprintln!("weights 1:1: blue answered {blue_count} of {REQUESTS}");
    assert!(
        (REQUESTS / 2 - 10..=REQUESTS / 2 + 10).contains(&blue_count),
        "blue answered {blue_count} of {REQUESTS} with equal weights"
    );
    assert_eq!(
        portcullis.metric_total("portcullis_reloads_total"),
        reloads,
        "a weight change is a runtime update:\n{}",
        portcullis.log()
    );

    // The green pod relabelled out of every group: its endpoint gets weight 0 (and no
    // group, which the section's use-server lines name: that one reloads).
    write(
        &portcullis,
        "workload.yaml",
        &workload(&blue, &green, "retired"),
    );
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            (0..20).all(|_| answer_with(p.http_port, "") == "blue")
        })
        .unwrap();
    assert_eq!(answer_with(port, "X-Server: green\r\n"), "blue");
}
