//! What operators see of the traffic, through a real HAProxy: an access log line per
//! request on standard output or at a syslog server, HAProxy's Prometheus exporter and
//! stats page, custom error pages, the body limit, the `Server` header, and a dashboard
//! whose every metric exists. One portcullis serves every scenario.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::net::UdpSocket;
use std::path::Path;
use std::time::Duration;

use test_support::{
    EchoServer, HoldingBackend, Portcullis, backend, free_port, http_get, http_request,
};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

fn ingress(name: &str, host: &str, service: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  rules:\n  - host: {host}\n    http:\n      paths:\n      - {{path: /, pathType: Prefix, backend: {{service: {{name: {service}, port: {{number: 80}}}}}}}}\n"
    )
}

/// The global ConfigMap with `extra` lines of data (each indented by two spaces).
/// An Ingress like [`ingress`], with one `haproxy-ingress.github.io/` annotation.
fn annotated_ingress(name: &str, host: &str, service: &str, key: &str, value: &str) -> String {
    ingress(name, host, service).replace(
        "namespace: default}",
        &format!(
            "namespace: default, annotations: {{haproxy-ingress.github.io/{key}: '{value}'}}}}"
        ),
    )
}

fn configmap(observers: &Observers, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: global, namespace: ops}}\ndata:\n  timeout-stop: 2s\n  prometheus-port: \"{}\"\n  stats-port: \"{}\"\n  healthz-port: \"{}\"\n  nbthread: \"3\"\n  stats-auth: \"admin:s3cr#t\"\n  proxy-body-size: 1k\n  http-response-404: |\n    content-type: text/plain\n\n    no such site\n  http-response-503: |\n    content-type: text/plain\n    retry-after: 5\n\n    back soon\n{extra}",
        observers.prometheus, observers.stats, observers.healthz
    )
}

/// A backend that names itself in a `Server` header, answering one request per
/// connection.
fn start_named_backend() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buffer = [0_u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut buffer);
            let _ = std::io::Write::write_all(
                &mut stream,
                b"HTTP/1.1 200 OK\r\nserver: backend/1\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
            );
        }
    });
    port
}

struct Observers {
    prometheus: u16,
    stats: u16,
    healthz: u16,
}

fn write(dir: &Path, file: &str, text: &str) {
    test_support::write_manifest(dir, file, text).unwrap();
}

/// The text of a GET on one of HAProxy's observer ports, with optional basic credentials.
fn observer_get(port: u16, path: &str, basic: Option<&str>) -> test_support::Response {
    let authorization = basic
        .map(|credentials| format!("Authorization: Basic {credentials}\r\n"))
        .unwrap_or_default();
    http_request(
        port,
        &format!(
            "GET {path} HTTP/1.1\r\nHost: observer\r\n{authorization}Connection: close\r\n\r\n"
        ),
    )
    .unwrap()
}

/// The value of an exporter sample such as `haproxy_frontend_http_requests_total{proxy="http"}`.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// The metric names a PromQL expression reads: `haproxy_*` and `portcullis_*` words.
fn metric_names(expression: &str) -> BTreeSet<String> {
    expression
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("haproxy_") || word.starts_with("portcullis_"))
        .map(str::to_owned)
        .collect()
}

/// Every metric name exposed in a text exposition.
fn exposed_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| line.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn operators_see_logs_metrics_stats_and_custom_errors() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(&manifests).unwrap();
    let echo = EchoServer::start("app").unwrap();
    let held = HoldingBackend::start().unwrap();
    let named = start_named_backend();
    let observers = Observers {
        prometheus: free_port(),
        stats: free_port(),
        healthz: free_port(),
    };
    write(&manifests, "config.yaml", &configmap(&observers, ""));
    write(
        &manifests,
        "app.yaml",
        &(backend("default", "app", 80, None, &[(echo.port, true)])
            + &ingress("app", "app.test", "app")
            + &backend("default", "down", 80, None, &[])
            + &ingress("down", "down.test", "down")
            + &backend("default", "held", 80, None, &[(held.port, true)])
            + &ingress("held", "held.test", "held")
            + &backend("default", "named", 80, None, &[(named, true)])
            + &ingress("named", "named.test", "named")
            + &backend("default", "down2", 80, None, &[]).replace(
                "metadata: {name: down2, namespace: default}",
                "metadata: {name: down2, namespace: default, annotations: {haproxy-ingress.github.io/http-response-503: \"content-type: text/plain\\n\\nour own 503\\n\"}}",
            )
            + &ingress("down2", "down2.test", "down2")
            + &annotated_ingress("small", "small.test", "app", "proxy-body-size", "10")
            + &annotated_ingress("big", "big.test", "app", "proxy-body-size", "unlimited")),
    );
    let mut portcullis = Portcullis::start(
        BIN,
        &manifests,
        &dir.path().join("state"),
        &["--configmap", "ops/global", "--log-format", "json"],
    )
    .unwrap();
    let port = portcullis.http_port;

    // The controller's own log: JSON objects on standard error.
    let log = portcullis.log();
    assert!(log.lines().count() > 2, "{log}");
    for line in log.lines() {
        let entry: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"));
        assert!(
            entry["level"].is_string() && entry["timestamp"].is_string(),
            "{line}"
        );
    }

    // Standard output: one HAProxy log line per request, scrapes of the exporter not logged.
    let served = http_get(port, "app.test", "/stdout-probe").unwrap();
    assert_eq!(served.server().as_deref(), Some("app"));
    let _ = observer_get(observers.prometheus, "/metrics", None);
    portcullis
        .wait_until(Duration::from_secs(10), |p| {
            p.stdout().contains("\"GET /stdout-probe HTTP/1.1\"")
        })
        .unwrap();
    let stdout = portcullis.stdout();
    let line = stdout
        .lines()
        .find(|line| line.contains("/stdout-probe"))
        .unwrap();
    assert!(
        line.contains(" 200 ") && line.contains("default_app_80"),
        "{line}"
    );
    assert!(
        !stdout.contains("/metrics"),
        "exporter scrapes are logged:\n{stdout}"
    );
    assert!(
        !portcullis.log().contains("/stdout-probe"),
        "access logs on stderr"
    );

    // The Server header on a backend's response without one, and on HAProxy's own.
    assert_eq!(
        served.headers.get("server").map(String::as_str),
        Some("portcullis")
    );

    // Custom error pages: nothing routed (404), a backend without a server (503).
    let missing = http_get(port, "nowhere.test", "/").unwrap();
    assert_eq!(
        (missing.status, missing.body.as_str()),
        (404, "no such site\n")
    );
    assert_eq!(
        missing.headers.get("server").map(String::as_str),
        Some("portcullis")
    );
    let down = http_get(port, "down.test", "/").unwrap();
    assert_eq!((down.status, down.body.as_str()), (503, "back soon\n"));
    assert_eq!(
        down.headers.get("retry-after").map(String::as_str),
        Some("5")
    );
    // A Service's own page for its backend; the others keep the global one.
    let own = http_get(port, "down2.test", "/").unwrap();
    assert_eq!((own.status, own.body.as_str()), (503, "our own 503\n"));
    assert_eq!(own.headers.get("retry-after"), None);

    // The body limit: 1k passes, more is refused before reaching the backend; a path's
    // own limit (an Ingress annotation) replaces it, `unlimited` lifts it.
    let post_to = |host: &str, length: usize| {
        http_request(
            port,
            &format!(
                "POST /upload HTTP/1.1\r\nHost: {host}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n{}",
                "x".repeat(length)
            ),
        )
        .unwrap()
        .status
    };
    let post = |length: usize| post_to("app.test", length);
    assert_eq!(post(1024), 200);
    assert_eq!(post(1025), 413);
    assert_eq!(post_to("small.test", 10), 200);
    assert_eq!(post_to("small.test", 11), 413);
    assert_eq!(post_to("big.test", 4096), 200);

    // The exporter's counters move with traffic.
    let requests =
        |text: &str| sample(text, "haproxy_frontend_http_requests_total{proxy=\"http\"}");
    let before = requests(&observer_get(observers.prometheus, "/metrics", None).body).unwrap();
    for _ in 0..5 {
        http_get(port, "app.test", "/").unwrap();
    }
    let exported = observer_get(observers.prometheus, "/metrics", None).body;
    assert!(
        requests(&exported).unwrap() >= before + 5.0,
        "{before} -> {exported}"
    );
    assert_eq!(observer_get(observers.prometheus, "/", None).status, 404);

    // HAProxy's own health check, for a load balancer, and its thread count.
    let healthz = observer_get(observers.healthz, "/healthz", None);
    assert_eq!((healthz.status, healthz.body.as_str()), (200, "ok"));
    assert_eq!(observer_get(observers.healthz, "/", None).status, 404);
    let mut socket = std::os::unix::net::UnixStream::connect(
        portcullis.state_dir.join("run").join("admin.sock"),
    )
    .unwrap();
    std::io::Write::write_all(&mut socket, b"show info\n").unwrap();
    let mut info = String::new();
    std::io::Read::read_to_string(&mut socket, &mut info).unwrap();
    assert!(info.lines().any(|line| line == "Nbthread: 3"), "{info}");

    // The stats page, behind its credentials (admin:s3cr#t).
    assert_eq!(observer_get(observers.stats, "/", None).status, 401);
    assert_eq!(
        observer_get(observers.stats, "/", Some("YWRtaW46d3Jvbmc=")).status,
        401
    );
    let page = observer_get(observers.stats, "/", Some("YWRtaW46czNjciN0"));
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Statistics Report"), "{}", page.body);
    let csv = observer_get(observers.stats, "/;csv", Some("YWRtaW46czNjciN0")).body;
    assert!(
        csv.lines().any(|line| line.starts_with("default_app_80,")),
        "{csv}"
    );

    // Every metric the dashboard queries exists.
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../deploy/grafana-dashboard.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let queried: BTreeSet<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|panel| panel["targets"].as_array().unwrap())
        .flat_map(|target| metric_names(target["expr"].as_str().unwrap()))
        .collect();
    assert!(queried.len() >= 10, "{queried:?}");
    let mut exposed = exposed_names(&exported);
    exposed.extend(exposed_names(&portcullis.admin("/metrics").unwrap().body));
    let missing: Vec<&String> = queried.difference(&exposed).collect();
    assert!(
        missing.is_empty(),
        "the dashboard queries metrics nobody exports: {missing:?}"
    );

    // A syslog server instead, with JSON lines: one datagram per request.
    let syslog = UdpSocket::bind("127.0.0.1:0").unwrap();
    syslog
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let syslog_port = syslog.local_addr().unwrap().port();
    // A request a backend holds, which the coming reload leaves to the old worker.
    let (held_done, held_result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let outcome = http_get(port, "held.test", "/").map(|r| r.status);
        let _ = held_done.send((outcome, std::time::Instant::now()));
    });
    assert!(held.wait_for_request(Duration::from_secs(10)));
    let reloads = portcullis.metric_total("portcullis_reloads_total");
    write(
        &manifests,
        "config.yaml",
        &configmap(
            &observers,
            &format!(
                "  syslog-endpoint: \"127.0.0.1:{syslog_port}\"\n  syslog-tag: edge\n  http-log-format: json\n"
            ),
        ),
    );
    portcullis
        .wait_until(Duration::from_secs(20), |p| {
            p.metric_total("portcullis_reloads_total") > reloads
        })
        .unwrap();
    let reloaded = std::time::Instant::now();
    // The reloaded worker logs; requests keep coming until its first line arrives.
    let mut buffer = [0u8; 4096];
    let datagram = (0..50)
        .find_map(|_| {
            http_get(port, "app.test", "/syslog-probe").unwrap();
            let (length, _) = syslog.recv_from(&mut buffer).ok()?;
            let text = String::from_utf8_lossy(&buffer[..length]).into_owned();
            text.contains("/syslog-probe").then_some(text)
        })
        .unwrap();
    // RFC 5424: <priority>1 time host tag pid - - message; local0.info is priority 134.
    assert!(datagram.starts_with("<134>1 "), "{datagram}");
    let fields: Vec<&str> = datagram.splitn(8, ' ').collect();
    assert_eq!(fields[3], "edge", "{datagram}");
    let message: serde_json::Value = serde_json::from_str(fields[7].trim_end()).unwrap();
    assert_eq!(message["host"], "app.test", "{datagram}");
    assert_eq!(message["path"], "/syslog-probe");
    assert_eq!(message["status"], 200);
    assert_eq!(message["backend"], "default_app_80");
    assert!(!portcullis.stdout().contains("/syslog-probe"));

    // timeout-stop: 2s: the old worker cuts what it still holds 2 s after the reload; the
    // backend never answered.
    let (outcome, ended) = held_result.recv_timeout(Duration::from_secs(15)).unwrap();
    // The client's own read timeout (10 s) is no cut.
    let cut = match &outcome {
        Ok(status) => *status == 502,
        Err(err) => !matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    };
    assert!(cut, "the held request ended with {outcome:?}");
    let after = ended.saturating_duration_since(reloaded);
    assert!(
        after >= Duration::from_millis(1500) && after < Duration::from_secs(6),
        "cut {after:?} after the reload"
    );

    // What no route takes is redirected instead of answered 404 (its custom page too).
    write(
        &manifests,
        "config.yaml",
        &configmap(
            &observers,
            "  default-backend-redirect: https://landing.example:8443/welcome\n  default-backend-redirect-code: \"308\"\n",
        ),
    );
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            http_get(port, "nowhere.test", "/x?y=1").unwrap().status == 308
        })
        .unwrap();
    let redirected = http_get(port, "nowhere.test", "/x?y=1").unwrap();
    assert_eq!(
        redirected.headers.get("location").map(String::as_str),
        Some("https://landing.example:8443/welcome")
    );
    assert_eq!(
        http_get(port, "app.test", "/").unwrap().server().as_deref(),
        Some("app")
    );
    // A default backend takes what no route does, before the redirect.
    write(
        &manifests,
        "default.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: fallback, namespace: default}\nspec:\n  defaultBackend: {service: {name: app, port: {number: 80}}}\n",
    );
    portcullis
        .wait_until(Duration::from_secs(20), |_| {
            http_get(port, "nowhere.test", "/x")
                .unwrap()
                .server()
                .as_deref()
                == Some("app")
        })
        .unwrap();
}
